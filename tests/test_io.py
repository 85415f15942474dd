"""`jaxtape.io` and `jaxtape.train`'s Example protos against TF 2.21.

One parity table: each row runs the same inputs through `tf` and `jaxtape`
and compares the results (dtype, shape and values of tensors; indices,
values and shapes of SparseTensors; RaggedTensors as lists), or the class
of the exception. Serialized protos come from TF's own message classes.
"""

from __future__ import annotations

import gzip
import inspect
import io
import zlib

import numpy as np
import pytest

import jaxtape

_RNG = np.random.default_rng(0)
IMG = _RNG.integers(0, 256, (6, 8, 3), dtype=np.uint8)
SMOOTH = np.clip(
    np.add.outer(np.arange(16) * 9, np.arange(16) * 5)[..., None] + [0, 40, 80], 0, 255
).astype(np.uint8)


def _feature(train, v):
    if isinstance(v[0], float):
        return train.Feature(float_list=train.FloatList(value=v))
    if isinstance(v[0], int):
        return train.Feature(int64_list=train.Int64List(value=v))
    return train.Feature(bytes_list=train.BytesList(value=v))


def _example(train, **features):
    feature = {k: _feature(train, v) for k, v in features.items()}
    return train.Example(features=train.Features(feature=feature))


def _sequence(train, context, lists):
    return train.SequenceExample(
        context=train.Features(
            feature={k: _feature(train, v) for k, v in context.items()}
        ),
        feature_lists=train.FeatureLists(
            feature_list={
                k: train.FeatureList(feature=[_feature(train, x) for x in v])
                for k, v in lists.items()
            }
        ),
    )


@pytest.fixture(scope="module")
def data(tf):
    """Inputs shared by the rows: serialized protos (TF's bytes), images."""
    from PIL import Image

    t = tf.train
    ex_a = _example(t, f=[1.0, 2.0], i=[3], s=[b"x", b"y"], v=[1, 2, 3, 4, 5],
                    l=[2, 3], sp=[0, 1, 5], ix=[3, 1], val=[1.5, 2.5])  # fmt: skip
    ex_b = _example(t, f=[4.0, 5.0], s=[b"z"], v=[6, 7], l=[1, 1], sp=[0, 2])
    lists = {"t": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "v": [[1], [2, 3]],
             "s": [[b"a"], [b"b", b"c"]]}  # fmt: skip
    seq_a = _sequence(t, {"c": [1]}, lists)
    seq_b = _sequence(
        t, {"c": [2]}, {"t": [[7.0, 8.0]], "v": [[4, 5, 6]], "s": [[b"d"]]}
    )

    def saved(array, fmt, **kw):
        buffer = io.BytesIO()
        Image.fromarray(array).save(buffer, fmt, **kw)
        return buffer.getvalue()

    frames = [Image.fromarray(_RNG.integers(0, 255, (4, 6, 3), dtype=np.uint8))
              .convert("P") for _ in range(3)]  # fmt: skip
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:])
    return {
        "ex": [ex_a.SerializeToString(), ex_b.SerializeToString()],
        "seq": [seq_a.SerializeToString(), seq_b.SerializeToString()],
        "png": saved(IMG, "PNG"),
        "png_rgba": saved(np.concatenate([IMG, IMG[..., :1]], -1), "PNG"),
        "png_gray": saved(IMG[..., 0], "PNG"),
        "png16": tf.io.encode_png(
            _RNG.integers(0, 65535, (3, 4, 1), dtype=np.uint16)
        ).numpy(),
        "jpeg": saved(SMOOTH, "JPEG", quality=90),
        "gif": buffer.getvalue(),
        "gif1": saved(IMG, "GIF"),
        "bmp": saved(IMG, "BMP"),
        "webp": saved(IMG, "WEBP", lossless=True),
    }


def _plain(x):
    """A comparable form of a result of either library."""
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    kind = type(x).__name__
    if kind in ("SparseTensor", "SparseTensorValue"):
        return ("sparse", _plain(x.indices), _plain(x.values), _plain(x.dense_shape))
    if kind == "RaggedTensor":
        return ("ragged", x.to_list(), x.row_splits.dtype.name)
    if hasattr(x, "numpy") and hasattr(x, "dtype"):
        value = np.asarray(x.numpy())
        return ("tensor", x.dtype.name, value.shape, value.tolist())
    return x


def _outcome(fn, m, data):
    try:
        return _plain(fn(m, data))
    except Exception as e:  # noqa: BLE001 - the class is the result
        return ("raises", type(e).__name__)


def _close(a, b, atol):
    """`a == b`, with numbers within `atol` (JPEG rows)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], atol) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y, atol) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= max(atol, 1e-6 * abs(b))
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
        return abs(a - b) <= atol
    return a == b


F32 = "float32"


def _fn(m, body):
    """`body` inside the library's compiled function."""
    return m.function(body)()


ROWS = {
    # -- Example parsing ---------------------------------------------------------
    "parse_fixed": lambda m, d: m.io.parse_example(d["ex"], {
        "f": m.io.FixedLenFeature([2], m.float32),
        "i": m.io.FixedLenFeature([], m.int64, default_value=7),
        "s": m.io.FixedLenFeature([1], m.string, default_value=["?"]),
        "s0": m.io.FixedLenFeature([], m.string, default_value="?")}),
    "parse_fixed_missing": lambda m, d: m.io.parse_example(
        d["ex"], {"i": m.io.FixedLenFeature([], m.int64)}),
    "parse_fixed_count": lambda m, d: m.io.parse_example(
        d["ex"], {"f": m.io.FixedLenFeature([3], m.float32)}),
    "parse_fixed_type": lambda m, d: m.io.parse_example(
        d["ex"], {"f": m.io.FixedLenFeature([2], m.int64)}),
    "parse_fixed_int32": lambda m, d: m.io.parse_example(
        d["ex"], {"f": m.io.FixedLenFeature([2], m.int32)}),
    "parse_fixed_unknown_dim": lambda m, d: m.io.parse_example(
        d["ex"], {"f": m.io.FixedLenFeature([None], m.float32)}),
    "parse_default_shape": lambda m, d: m.io.parse_example(
        d["ex"], {"g": m.io.FixedLenFeature([2], m.float32, default_value=1.0)}),
    "parse_var_len": lambda m, d: m.io.parse_example(d["ex"], {
        "s": m.io.VarLenFeature(m.string), "i": m.io.VarLenFeature(m.int64),
        "zz": m.io.VarLenFeature(m.float32)}),
    "parse_sequence_feature": lambda m, d: m.io.parse_example(d["ex"], {
        "f": m.io.FixedLenSequenceFeature([], m.float32, allow_missing=True),
        "v": m.io.FixedLenSequenceFeature([], m.int64, allow_missing=True,
                                          default_value=-1)}),
    "parse_sequence_feature_not_missing": lambda m, d: m.io.parse_example(
        d["ex"], {"f": m.io.FixedLenSequenceFeature([], m.float32)}),
    "parse_ragged": lambda m, d: m.io.parse_example(d["ex"], {
        "s": m.io.RaggedFeature(m.string),
        "f": m.io.RaggedFeature(m.float32, row_splits_dtype=m.int64),
        "zz": m.io.RaggedFeature(m.float32)}),
    "parse_ragged_partitions": lambda m, d: m.io.parse_example(d["ex"], {
        "lengths": m.io.RaggedFeature(m.int64, value_key="v",
                                      partitions=[m.io.RaggedFeature.RowLengths("l")]),
        "splits": m.io.RaggedFeature(m.int64, value_key="v",
                                     partitions=[m.io.RaggedFeature.RowSplits("sp")])}),
    "parse_ragged_uniform": lambda m, d: m.io.parse_example(d["ex"][:1], {
        "u": m.io.RaggedFeature(m.int64, value_key="v", partitions=[
            m.io.RaggedFeature.UniformRowLength(5)])}),
    "parse_sparse_feature": lambda m, d: m.io.parse_example(d["ex"][:1], {
        "sp": m.io.SparseFeature("ix", "val", m.float32, 5)}),
    "parse_names_in_errors": lambda m, d: m.io.parse_example(
        d["ex"], {"i": m.io.FixedLenFeature([], m.int64)}, example_names=["a", "b"]),
    "parse_empty_features": lambda m, d: m.io.parse_example(d["ex"], {}),
    "parse_empty_batch": lambda m, d: m.io.parse_example(
        m.constant([], m.string), {"f": m.io.FixedLenFeature([2], m.float32),
                                   "s": m.io.VarLenFeature(m.string)}),
    "parse_scalar_input": lambda m, d: m.io.parse_example(
        d["ex"][0], {"f": m.io.FixedLenFeature([2], m.float32)}),
    "parse_single": lambda m, d: m.io.parse_single_example(d["ex"][0], {
        "s": m.io.VarLenFeature(m.string), "f": m.io.FixedLenFeature([2, 1], F32),
        "r": m.io.RaggedFeature(m.int64, value_key="v", partitions=[
            m.io.RaggedFeature.RowLengths("l")]),
        "u": m.io.RaggedFeature(m.int64, value_key="v", partitions=[
            m.io.RaggedFeature.UniformRowLength(5)]),
        "sp": m.io.SparseFeature("ix", "val", m.float32, 5)}),
    "parse_single_vector": lambda m, d: m.io.parse_single_example(
        d["ex"], {"s": m.io.VarLenFeature(m.string)}),
    "parse_in_function": lambda m, d: _fn(m, lambda: m.io.parse_single_example(
        d["ex"][1], {"f": m.io.FixedLenFeature([2], m.float32)})["f"] * 2.0),
    "parse_function_argument": lambda m, d: m.function(
        lambda s: m.io.parse_example(s, {"f": m.io.FixedLenFeature([2], F32)})["f"]
        * 2.0)(m.constant(d["ex"])),
    "decode_raw_function_argument": lambda m, d: m.function(
        lambda s: m.io.decode_raw(s, m.uint8) + 1)(m.constant([b"ab", b"cd"])),
    # -- SequenceExample parsing -------------------------------------------------
    "parse_sequence": lambda m, d: m.io.parse_sequence_example(
        d["seq"], {"c": m.io.FixedLenFeature([], m.int64)},
        {"t": m.io.FixedLenSequenceFeature([2], m.float32),
         "v": m.io.VarLenFeature(m.int64), "s": m.io.RaggedFeature(m.string)}),
    "parse_sequence_missing": lambda m, d: m.io.parse_sequence_example(
        d["seq"], None, {"zz": m.io.FixedLenSequenceFeature([2], m.float32)}),
    "parse_sequence_allow_missing": lambda m, d: m.io.parse_sequence_example(
        d["seq"], None, {"zz": m.io.FixedLenSequenceFeature(
            [2], m.float32, allow_missing=True)}),
    "parse_sequence_default": lambda m, d: m.io.parse_sequence_example(
        d["seq"], None, {"t": m.io.FixedLenSequenceFeature(
            [2], m.float32, default_value=-1.0)}),
    "parse_sequence_count": lambda m, d: m.io.parse_single_sequence_example(
        d["seq"][0], None, {"v": m.io.FixedLenSequenceFeature([1], m.int64)}),
    "parse_keys_intersect": lambda m, d: m.io.parse_example(d["ex"], {
        "c": m.io.FixedLenFeature([], m.int64, default_value=0),
        "cr": m.io.RaggedFeature(m.int64, value_key="c")}),
    "parse_sequence_nothing": lambda m, d: m.io.parse_single_sequence_example(
        d["seq"][0]),
    "parse_single_sequence": lambda m, d: m.io.parse_single_sequence_example(
        d["seq"][0], {"c": m.io.FixedLenFeature([], m.int64),
                      "s": m.io.RaggedFeature(m.int64, value_key="zz")},
        {"t": m.io.FixedLenSequenceFeature([2], m.float32),
         "v": m.io.VarLenFeature(m.int64), "s": m.io.RaggedFeature(m.string)}),
    # -- tensors, raw bytes, encodings -------------------------------------------
    "serialize_tensor": lambda m, d: [m.io.serialize_tensor(x) for x in (
        np.arange(6, dtype=np.int32).reshape(2, 3), np.float32(1.5), [b"a", b"bc"],
        np.array([True, False]), np.array([1 + 2j], np.complex64),
        np.zeros((0, 2), np.float64), np.array([1, 2], np.uint8))],
    "parse_tensor": lambda m, d: [m.io.parse_tensor(m.io.serialize_tensor(x), t)
        for x, t in ((np.arange(3.0), m.float64), ([[b"a"], [b"b"]], m.string),
                     (np.array([7], np.int64), m.int64))],
    "parse_tensor_typed_fields": lambda m, d: m.io.parse_tensor(
        d["proto_full"], m.float32) if "proto_full" in d else None,
    "parse_tensor_wrong_dtype": lambda m, d: m.io.parse_tensor(
        m.io.serialize_tensor(np.arange(3.0)), m.float32),
    "parse_tensor_garbage": lambda m, d: m.io.parse_tensor(b"\xff\xff", m.float32),
    "parse_tensor_vector": lambda m, d: m.io.parse_tensor(
        [m.io.serialize_tensor(1.0)], m.float32),
    "parse_tensor_in_function": lambda m, d: _fn(m, lambda: m.io.parse_tensor(
        m.io.serialize_tensor(np.arange(4.0, dtype=np.float32)), m.float32) + 1.0),
    "decode_raw": lambda m, d: [
        m.io.decode_raw(b"\x01\x00\x02\x00", m.int16),
        m.io.decode_raw(b"\x01\x00\x02\x00", m.int16, little_endian=False),
        m.io.decode_raw([b"\x01\x00\x02\x00", b"\x03\x00\x04\x00"], m.uint16),
        m.io.decode_raw([b"\x01\x00\x02\x00", b"\x03\x00"], m.int16, fixed_length=6),
        m.io.decode_raw(b"\x01\x00", m.bool), m.io.decode_raw(b"abc", m.uint8),
        m.io.decode_raw(np.array([[b"\x00\x00\x80?"]], object), m.float32)],
    "decode_raw_string_tensor": lambda m, d: m.io.decode_raw(
        m.constant([b"ab", b"cd"]), m.uint8),
    "decode_raw_uneven": lambda m, d: m.io.decode_raw(
        [b"\x01\x00\x02\x00", b"\x03\x00"], m.int16),
    "decode_raw_not_multiple": lambda m, d: m.io.decode_raw(b"\x01\x00\x02", m.int16),
    "decode_raw_fixed_not_multiple": lambda m, d: m.io.decode_raw(
        [b"\x01\x00"], m.int16, fixed_length=3),
    "decode_raw_string_type": lambda m, d: m.io.decode_raw(b"abc", m.string),
    "decode_raw_in_function": lambda m, d: _fn(
        m, lambda: m.io.decode_raw(b"\x00\x00\x80?\x00\x00\x00@", m.float32) * 2.0),
    "base64": lambda m, d: [
        m.io.encode_base64(b"\xfb\xff\x00ab"), m.io.encode_base64(b"\xfbab", pad=True),
        m.io.encode_base64([[b"a", b"bb"]]), m.io.decode_base64(b"-_8AYWI"),
        m.io.decode_base64([b"-_8AYWI=", b""])],
    "base64_standard_alphabet": lambda m, d: m.io.decode_base64(b"+/8AYWI="),
    "base64_bad_length": lambda m, d: m.io.decode_base64(b"a"),
    "decode_compressed": lambda m, d: [
        m.io.decode_compressed(gzip.compress(b"hello"), "GZIP"),
        m.io.decode_compressed([zlib.compress(b"hi"), zlib.compress(b"")], "ZLIB"),
        m.io.decode_compressed(b"plain")],
    "decode_compressed_corrupt": lambda m, d: m.io.decode_compressed(b"xx", "ZLIB"),
    "decode_compressed_bad_type": lambda m, d: m.io.decode_compressed(b"x", "BZ2"),
    "decode_csv": lambda m, d: m.io.decode_csv(
        ["1,2.5,a,7", '3,,"b,""c""",'], [[0], [9.0], ["z"], np.array([5], np.int64)]),
    "decode_csv_options": lambda m, d: [
        m.io.decode_csv(["1;NA;3"], [[0], [7], [0]], field_delim=";", na_value="NA"),
        m.io.decode_csv(["1,2,3"], [[0], [0]], select_cols=[0, 2]),
        m.io.decode_csv([["1,2"], ["3,4"]], [[7], [0.0]]),
        m.io.decode_csv("1e3,x", [[0.0], [""]]),
        m.io.decode_csv(['a"b,1'], [[""], [0]], use_quote_delim=False)],
    "decode_csv_required": lambda m, d: m.io.decode_csv(
        ["1,,a"], [[0], m.constant([], m.float32), ["z"]]),
    "decode_csv_count": lambda m, d: m.io.decode_csv(["1,2"], [[0], [0], [0]]),
    "decode_csv_bad_int": lambda m, d: m.io.decode_csv(["1.5"], [[0]]),
    "decode_csv_dtype_default": lambda m, d: m.io.decode_csv(["1"], [m.int64]),
    "decode_json_example": lambda m, d: m.io.decode_json_example(
        ['{"features": {"feature": {"a": {"int64List": {"value": ["1", "-2"]}}}}}',
         '{"features": {"feature": {"b": {"floatList": {"value": [1.5]}}}}}']),
    "decode_json_example_invalid": lambda m, d: m.io.decode_json_example("{x"),
    "serialize_sparse": lambda m, d: [
        m.io.serialize_sparse(m.sparse.SparseTensor([[0, 1]], [2.0], [2, 3])),
        m.io.serialize_many_sparse(
            m.sparse.SparseTensor([[0, 1], [1, 0]], [2.0, 3.0], [2, 3]))],
    "deserialize_many_sparse": lambda m, d: m.io.deserialize_many_sparse(
        m.io.serialize_many_sparse(m.sparse.SparseTensor(
            [[0, 1, 0], [1, 0, 2]], np.array([2, 3], np.int64), [2, 3, 4])), m.int64),
    # -- images ------------------------------------------------------------------
    "decode_png": lambda m, d: [
        m.io.decode_png(d["png"]), m.io.decode_png(d["png"], channels=4),
        m.io.decode_png(d["png_rgba"]), m.io.decode_png(d["png_gray"]),
        m.io.decode_png(d["png_gray"], channels=3),
        m.io.decode_png(d["png"], dtype=m.uint16),
        m.io.decode_png(d["png16"], dtype=m.uint16),
        m.io.decode_png(d["png16"])],
    "decode_png_gray_conversion": lambda m, d: m.io.decode_png(d["png"], channels=1),
    "decode_png_channels": lambda m, d: m.io.decode_png(d["png"], channels=2),
    "decode_png_garbage": lambda m, d: m.io.decode_png(b"not an image"),
    "decode_png_vector": lambda m, d: m.io.decode_png([d["png"]]),
    "decode_png_in_function": lambda m, d: _fn(
        m, lambda: m.cast(m.io.decode_png(d["png"]), m.float32) / 255.0),
    "decode_image": lambda m, d: [
        m.io.decode_image(d["png"]), m.io.decode_image(d["png"], dtype=m.float32),
        m.io.decode_image(d["gif"]),
        m.io.decode_image(d["gif"], expand_animations=False),
        m.io.decode_image(d["bmp"]), m.io.decode_image(d["webp"]),
        m.io.decode_image(d["png16"], dtype=m.float32)],
    "decode_image_gif_channels": lambda m, d: m.io.decode_image(d["gif"], channels=1),
    "decode_image_unknown": lambda m, d: m.io.decode_image(b"abcdefgh"),
    "decode_gif": lambda m, d: [m.io.decode_gif(d["gif"]), m.io.decode_gif(d["png"])],
    "decode_bmp": lambda m, d: [m.io.decode_bmp(d["bmp"]),
                                m.io.decode_bmp(d["bmp"], channels=4)],
    "decode_bmp_channels": lambda m, d: m.io.decode_bmp(d["bmp"], channels=1),
    "decode_webp": lambda m, d: [m.io.decode_webp(d["webp"]),
                                 m.io.decode_webp(d["webp"], channels=4)],
    "decode_jpeg": lambda m, d: [
        m.io.decode_jpeg(d["jpeg"]), m.io.decode_jpeg(d["jpeg"], channels=1),
        m.io.decode_jpeg(d["jpeg"], ratio=2), m.io.decode_image(d["jpeg"]),
        m.io.decode_and_crop_jpeg(d["jpeg"], [1, 2, 5, 7])],
    "decode_jpeg_channels": lambda m, d: m.io.decode_jpeg(d["jpeg"], channels=4),
    # TF 2.21: decode_png/jpeg/gif read each other's formats (and WebP) but
    # not BMP; decode_bmp only BMP; per-format channel rules
    "decode_any_format": lambda m, d: [
        m.io.decode_png(d["jpeg"]), m.io.decode_jpeg(d["gif1"]),
        m.io.decode_png(d["webp"]), m.io.decode_webp(d["png"]),
        m.io.decode_gif(d["jpeg"])],
    "decode_wrong_op_bmp": lambda m, d: m.io.decode_jpeg(d["bmp"]),
    "decode_animated_gif_wrong_op": lambda m, d: m.io.decode_png(d["gif"]),
    "decode_bmp_of_png": lambda m, d: m.io.decode_bmp(d["png"]),
    "decode_crop_of_png": lambda m, d: m.io.decode_and_crop_jpeg(
        d["png"], [0, 0, 1, 1]),
    "decode_image_jpeg_channels": lambda m, d: m.io.decode_image(d["jpeg"], channels=4),
    "decode_image_bmp_channels": lambda m, d: m.io.decode_image(d["bmp"], channels=1),
    "decode_webp_channels": lambda m, d: m.io.decode_webp(d["webp"], channels=4),
    "decode_jpeg_crop_outside": lambda m, d: m.io.decode_and_crop_jpeg(
        d["jpeg"], [1, 2, 30, 4]),
    "jpeg_shape": lambda m, d: [
        m.io.extract_jpeg_shape(d["jpeg"]),
        m.io.extract_jpeg_shape(d["jpeg"], output_type=m.int64),
        m.io.is_jpeg(d["jpeg"]), m.io.is_jpeg(d["png"])],
    "jpeg_shape_of_png": lambda m, d: m.io.extract_jpeg_shape(d["png"]),
    "encode_png_round_trip": lambda m, d: [
        m.io.decode_png(m.io.encode_png(IMG)),
        m.io.decode_png(m.io.encode_png(IMG[..., :1], compression=9)),
        m.io.decode_png(m.io.encode_png(np.dstack([IMG, IMG[..., :1]]))),
        m.io.decode_png(m.io.encode_png(IMG.astype(np.uint16) * 257), dtype=m.uint16)],
    "encode_png_float": lambda m, d: m.io.encode_png(IMG.astype(np.float32)),
    "encode_png_rank2": lambda m, d: m.io.encode_png(IMG[..., 0]),
    "encode_jpeg_round_trip": lambda m, d: [
        m.io.decode_jpeg(m.io.encode_jpeg(SMOOTH)),
        m.io.decode_jpeg(m.io.encode_jpeg(SMOOTH, quality=60, progressive=True,
                                          chroma_downsampling=False)),
        m.io.decode_jpeg(m.io.encode_jpeg(SMOOTH[..., :1], format="grayscale"))],
    "encode_jpeg_channels": lambda m, d: m.io.encode_jpeg(IMG[..., :2]),
    "encode_jpeg_format_mismatch": lambda m, d: m.io.encode_jpeg(
        IMG[..., :1], format="rgb"),
}  # fmt: skip

# JPEG decoding (Pillow's libjpeg vs TF's): a few levels per pixel.
TOLERANCE = {
    "decode_jpeg": 4,
    "decode_any_format": 4,
    "encode_jpeg_round_trip": 8,  # and encoders: Pillow's vs TF's
    # grayscale from colour: Pillow's weights vs libpng's
    "decode_png_gray_conversion": 1,
    # uint8 -> float: 1/255 scaling rounds differently by an ulp
    "decode_image": 0,
    "decode_png_in_function": 0,
}
# Rows that need a later feature; each says why.
SKIP = {"parse_tensor_typed_fields"}


@pytest.mark.parametrize("row", sorted(set(ROWS) - SKIP))
def test_io_matches_tf(row, tf, data):
    want = _outcome(ROWS[row], tf, data)
    got = _outcome(ROWS[row], jaxtape, data)
    if row in TOLERANCE:
        assert _close(got, want, TOLERANCE[row]), (got, want)
    else:
        assert got == want


def test_parse_tensor_reads_typed_fields(tf):
    """TensorProtos with values in typed fields (`make_tensor_proto`'s form
    for a filled tensor) parse as in TF."""
    values = (np.full([2, 2], 3.0, np.float32), np.array([1, 2], np.float16),
              np.array([True, False]), np.array([1 + 2j], np.complex64))  # fmt: skip
    for value in values:
        proto = tf.make_tensor_proto(value).SerializeToString()
        dtype = tf.as_dtype(value.dtype).name
        want = tf.io.parse_tensor(proto, dtype)
        got = jaxtape.io.parse_tensor(proto, dtype)
        assert _plain(got) == _plain(want)


def test_example_protos_are_tfs(tf):
    """Same messages, same bytes: jaxtape's protos serialize as TF's and read
    TF's, both ways, for Example and SequenceExample."""
    for build in (
        lambda t: _example(t, a=[1.5, -2.0], b=[1, -3, 2**40], c=[b"x", b""]),
        lambda t: _sequence(t, {"c": [1]}, {"t": [[1.0], [2.0, 3.0]], "s": [[b"a"]]}),
    ):
        mine, theirs = build(jaxtape.train), build(tf.train)
        assert mine == type(mine).FromString(theirs.SerializeToString())
        assert theirs == type(theirs).FromString(mine.SerializeToString())
    for values in ([1.5, 2.5], [7, -1, 2**40], [b"x", b""]):  # one key: one order
        mine = _example(jaxtape.train, a=values).SerializeToString()
        assert mine == _example(tf.train, a=values).SerializeToString()
    names = ("BytesList", "FloatList", "Int64List", "Feature", "Features",
             "FeatureList", "FeatureLists", "Example", "SequenceExample")  # fmt: skip
    for name in names:
        ours = getattr(jaxtape.train, name).DESCRIPTOR
        assert ours.full_name == getattr(tf.train, name).DESCRIPTOR.full_name
        assert [(f.name, f.number, f.type) for f in ours.fields] == [
            (f.name, f.number, f.type)
            for f in getattr(tf.train, name).DESCRIPTOR.fields
        ]
    feature = _feature(jaxtape.train, [1, 2])
    assert feature.SerializeToString() == _feature(tf.train, [1, 2]).SerializeToString()


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_tfrecord_writer_files_read_in_tf(compression, tf, tmp_path):
    records = [b"alpha", b"", b"a longer record \x00\xff", "text"]
    mine, theirs = str(tmp_path / "mine"), str(tmp_path / "theirs")
    options = jaxtape.io.TFRecordOptions(compression, compression_level=5)
    with jaxtape.io.TFRecordWriter(mine, options) as writer:
        for r in records:
            writer.write(r)
        writer.flush()
    with tf.io.TFRecordWriter(theirs, compression) as writer:
        for r in records:
            writer.write(r)
    want = [r if isinstance(r, bytes) else r.encode() for r in records]
    read = tf.data.TFRecordDataset(mine, compression_type=compression)
    assert [r.numpy() for r in read] == want
    read = jaxtape.data.TFRecordDataset(theirs, compression)
    assert [r.numpy() for r in read] == want
    if compression is None:
        assert open(mine, "rb").read() == open(theirs, "rb").read()


def test_tfrecord_writer_errors(tf, tmp_path):
    path = str(tmp_path / "r")
    for m in (tf, jaxtape):
        with pytest.raises(ValueError):
            m.io.TFRecordOptions("BZ2")
        with pytest.raises(m.errors.NotFoundError):
            m.io.TFRecordWriter(str(tmp_path / "no" / "dir"))
        writer = m.io.TFRecordWriter(path)
        writer.close()
        with pytest.raises(m.errors.FailedPreconditionError):
            writer.write(b"x")
        assert m.io.TFRecordOptions.get_compression_type_string("GZIP") == "GZIP"
        assert m.io.TFRecordOptions.get_compression_type_string(None) == ""


def test_files_match_tf(tf, tmp_path):
    results = []
    for m in (tf, jaxtape):
        root = tmp_path / m.__name__
        m.io.write_file(str(root / "sub" / "f.bin"), b"ab\x00")  # makes parents
        m.io.write_file(str(root / "g.txt"), "text")
        results.append([
            _plain(m.io.read_file(str(root / "sub" / "f.bin"))),
            _plain(m.io.read_file(m.constant(str(root / "g.txt")))),
            [p.decode().replace(str(root), "") for p in
             _plain(m.io.matching_files(str(root / "*")))[3]],
            _plain(m.io.matching_files(str(root / "zz*"))),
            _outcome(lambda m, d: m.io.read_file(str(root / "zz")), m, None),
            _outcome(lambda m, d: m.io.read_file(str(root)), m, None),
            _outcome(lambda m, d: m.io.read_file([str(root / "g.txt")]), m, None),
        ])  # fmt: skip
    assert results[1] == results[0]


@pytest.mark.parametrize("name", ["decode_jxl", "decode_proto", "encode_proto",
                                  "write_graph", "match_filenames_once"])  # fmt: skip
def test_unsupported_names_say_so(name, tf):
    fn = getattr(jaxtape.io, name)
    params = inspect.signature(getattr(tf.io, name)).parameters
    assert list(inspect.signature(fn).parameters) == list(params)
    required = [p for p in params.values() if p.default is inspect.Parameter.empty]
    with pytest.raises(NotImplementedError, match=name):
        fn(*([None] * len(required)))


def test_tfrecord_pipeline_parses_as_tf(tf, tmp_path):
    """TF's input idiom: TFRecordDataset -> map(parse_single_example) ->
    batch, and batch -> map(parse_example); records ending in NUL bytes.
    (No VarLenFeature here: jaxtape's Dataset.map takes no SparseTensor
    results yet.)"""
    path = str(tmp_path / "r.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(5):
            ex = _example(tf.train, x=[float(i), i + 0.5], y=[i], s=[b"a" * i])
            writer.write(ex.SerializeToString())
    results = []
    for m in (tf, jaxtape):
        spec = {"x": m.io.FixedLenFeature([2], m.float32),
                "y": m.io.FixedLenFeature([], m.int64),
                "s": m.io.FixedLenFeature([], m.string)}  # fmt: skip
        ds = m.data.TFRecordDataset(path)
        one = ds.map(lambda r, m=m, spec=spec: m.io.parse_single_example(r, spec))
        many = ds.batch(2).map(lambda r, m=m, spec=spec: m.io.parse_example(r, spec))
        results.append([_plain(e) for d in (one.batch(2), many) for e in d])
    assert results[1] == results[0]


def test_parsed_features_feed_a_gradient_tape(tf):
    """Parsed features are constants on a tape: the gradient of a loss over
    them reaches the variable as in TF."""
    serialized = _example(tf.train, f=[1.0, -2.0, 3.0]).SerializeToString()
    grads = []
    for m in (tf, jaxtape):
        w = m.Variable([0.5, 0.5, 0.5])
        spec = {"f": m.io.FixedLenFeature([3], m.float32)}
        with m.GradientTape() as tape:
            f = m.io.parse_single_example(serialized, spec)["f"]
            loss = m.reduce_sum(w * f * f)
        grads.append(tape.gradient(loss, w).numpy().tolist())
    assert grads[1] == grads[0]


# -- tf.image's JPEG quality ops (through the JPEG codec) -----------------------------
def _gradient_image():
    yy, xx = np.mgrid[0:16, 0:20]
    return np.stack([yy * 10, xx * 8, (yy + xx) * 5], -1).astype(np.uint8)


@pytest.mark.parametrize("quality", [10, 50, 95])
@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_adjust_jpeg_quality_matches_tf_within_jpeg_tolerance(tf, quality, dtype):
    img = _gradient_image()
    img = img if dtype == "uint8" else img.astype(np.float32) / 255
    want = tf.image.adjust_jpeg_quality(img, quality).numpy()
    got = jaxtape.image.adjust_jpeg_quality(img, quality).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    # (Pillow's libjpeg vs TF's: a few levels apart, as for encode_jpeg)
    tol = 6 if dtype == "uint8" else 6 / 255
    np.testing.assert_allclose(got.astype(float), want.astype(float), atol=tol)


def test_random_jpeg_quality_draws_and_checks_range_as_tf(tf):
    img = _gradient_image()
    a = jaxtape.image.stateless_random_jpeg_quality(img, 20, 80, seed=[1, 2])
    b = jaxtape.image.stateless_random_jpeg_quality(img, 20, 80, seed=[1, 2])
    np.testing.assert_array_equal(a.numpy(), b.numpy())  # same seed, same quality
    assert jaxtape.image.random_jpeg_quality(img, 20, 80).shape == img.shape
    for m in (tf, jaxtape):
        with pytest.raises(ValueError):
            m.image.random_jpeg_quality(img, 80, 20)
        with pytest.raises(m.errors.InvalidArgumentError):
            m.image.adjust_jpeg_quality(img, 120)
