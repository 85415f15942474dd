"""`tf.io`'s file, tensor-serialization and encoding ops.

`read_file`/`write_file`/`matching_files`, `serialize_tensor`/`parse_tensor`
(TF's `TensorProto` bytes), `decode_raw`, `decode_base64`/`encode_base64`
(web-safe alphabet), `decode_compressed`, `decode_csv`, `decode_json_example`
and the `SparseTensor` serializations. All run on the host as TF's CPU
kernels do (see `host`), with TF's errors.

Layer L4 (`io`): imports `core`, `ops`, `structured`.
"""

from __future__ import annotations

import base64
import binascii
import glob
import gzip
import os
import zlib

import numpy as np

from jaxtape._src.core import dtypes, errors
from jaxtape._src.io import host
from jaxtape._src.io.example_proto import Example, UnpackedExample
from jaxtape._src.io.gfile import _local, _os_error
from jaxtape._src.structured.sparse import SparseTensor


def _invalid(message: str, op_name: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, f"{message} [Op:{op_name}]")


# -- files ----------------------------------------------------------------------
def read_file(filename, name=None):
    """The contents of the file `filename` as one string (TF's
    `tf.io.read_file`): `NotFoundError` when missing,
    `FailedPreconditionError` for a directory."""
    del name
    path = _local(os.fsdecode(host.scalar_bytes(filename, "filename", "ReadFile")))
    if os.path.isdir(path):
        raise errors.FailedPreconditionError(None, None, f"{path}; Is a directory")
    try:
        with open(path, "rb") as f:
            return host.strings_out(f.read())
    except OSError as e:
        raise _os_error(e, path) from None


def write_file(filename, contents, name=None):
    """Writes `contents` to `filename`, creating missing parent directories
    (TF's `tf.io.write_file`)."""
    del name
    path = _local(os.fsdecode(host.scalar_bytes(filename, "filename", "WriteFile")))
    data = host.scalar_bytes(contents, "contents", "WriteFile")
    parent = os.path.dirname(path)
    try:
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        raise _os_error(e, path) from None


def matching_files(pattern, name=None):
    """The files matching a glob `pattern` or a 1-D list of them (TF's
    `tf.io.matching_files`), sorted as TF sorts them; an empty result when
    none match."""
    del name
    patterns = host.byte_strings(pattern, "pattern")
    if patterns.ndim > 1:
        raise _invalid("Pattern must be a scalar or a vector", "MatchingFiles")
    found: list[bytes] = []
    for p in patterns.reshape(-1).tolist():
        found.extend(os.fsencode(m) for m in glob.glob(_local(os.fsdecode(p))))
    return host.strings_out(sorted(found))


# -- TensorProto ----------------------------------------------------------------
_DT = {  # NumPy dtype name -> TF's DataType enum (types.proto)
    "float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6,
    "object": 7, "complex64": 8, "int64": 9, "bool": 10, "bfloat16": 14,
    "uint16": 17, "complex128": 18, "float16": 19, "uint32": 22, "uint64": 23,
}  # fmt: skip
_NP_OF_DT = {v: k for k, v in _DT.items()}


def _tensor_proto_class():
    from tensorboardX.proto import tensor_pb2  # lazy: tensorboardX ~0.3 s

    return tensor_pb2.TensorProto  # type: ignore[attr-defined]


def _tf_dtype_name(dt: int) -> str:
    names = {1: "float", 2: "double", 7: "string", 19: "half"}
    np_name = _NP_OF_DT.get(dt)
    return names.get(dt, np_name or f"DataType({dt})")


def _to_proto_bytes(array: np.ndarray) -> bytes:
    proto = _tensor_proto_class()()
    proto.dtype = _DT[array.dtype.name]
    proto.tensor_shape.SetInParent()
    for d in array.shape:
        proto.tensor_shape.dim.add(size=d)
    if array.dtype.kind == "O":
        proto.string_val.extend(array.reshape(-1).tolist())
    elif array.size:
        proto.tensor_content = (
            np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
        )
    return proto.SerializeToString()


def _tensor_input(tensor, op_name: str) -> np.ndarray:
    if host.is_strings(tensor):
        return host.byte_strings(tensor, "tensor")
    return host.host_numbers(tensor, op_name)


def serialize_tensor(tensor, name=None):
    """`tensor` as the bytes of TF's `TensorProto` (TF's
    `tf.io.serialize_tensor`): byte-identical to TF's output."""
    del name
    array = _tensor_input(tensor, "SerializeTensor")
    if array.dtype.name not in _DT:
        raise _invalid(
            f"Cannot serialize a tensor of dtype {array.dtype}", "SerializeTensor"
        )
    return host.strings_out(_to_proto_bytes(array))


def _typed_values(proto, np_dtype: np.dtype) -> np.ndarray:
    """The values a TensorProto holds in its typed fields (no tensor_content)."""
    kind = np_dtype.name
    if kind == "object":
        values = list(proto.string_val)
        out = np.empty(len(values), object)
        out[:] = values
        return out
    if kind in ("float16", "bfloat16"):
        return np.asarray(list(proto.half_val), np.uint16).view(np_dtype)
    if kind in ("complex64", "complex128"):
        pairs = proto.scomplex_val if kind == "complex64" else proto.dcomplex_val
        flat = np.asarray(list(pairs), np_dtype.type(0).real.dtype)
        return (flat[0::2] + 1j * flat[1::2]).astype(np_dtype)
    field = {
        "float32": "float_val",
        "float64": "double_val",
        "int64": "int64_val",
        "bool": "bool_val",
        "uint32": "uint32_val",
        "uint64": "uint64_val",
    }.get(kind, "int_val")
    return np.asarray(list(getattr(proto, field, [])), np_dtype)


def _from_proto_bytes(data: bytes, out_type, op_name: str) -> np.ndarray:
    from google.protobuf.message import DecodeError  # lazy: with tensorboardX

    proto = _tensor_proto_class()()
    try:
        proto.ParseFromString(data)
    except DecodeError:
        encoded = base64.b64encode(data).decode()
        raise _invalid(
            f"Could not parse `serialized` as TensorProto, base64: {encoded}", op_name
        ) from None
    want = dtypes.as_dtype(out_type)
    want_np = np.dtype(want.as_numpy_dtype)
    if proto.dtype != _DT.get(want_np.name):
        raise _invalid(
            f"Type mismatch between parsed tensor ({_tf_dtype_name(proto.dtype)}) "
            f"and dtype ({_tf_dtype_name(_DT.get(want_np.name, 0))})",
            op_name,
        )
    shape = tuple(d.size for d in proto.tensor_shape.dim)
    size = int(np.prod(shape, dtype=np.int64))
    if proto.tensor_content:
        values = np.frombuffer(proto.tensor_content, want_np.newbyteorder("<"))
        values = values.astype(want_np)
    else:
        values = _typed_values(proto, want_np)
    if values.size not in (size, 1) and not (values.size == 0 and size == 0):
        raise _invalid(
            f"Could not parse `serialized` as TensorProto: "
            f"{values.size} values for shape {list(shape)}",
            op_name,
        )
    if values.size == 1 and size != 1:  # TF repeats a single given value
        values = np.full(size, values[0], want_np)
    elif values.size == 0 and size:
        values = np.zeros(size, want_np) if want_np.kind != "O" else np.full(size, b"")
    return values.reshape(shape)


def parse_tensor(serialized, out_type, name=None):
    """The tensor in a serialized `TensorProto` (TF's `tf.io.parse_tensor`):
    `InvalidArgumentError` when `out_type` is not the stored dtype."""
    del name
    array = host.byte_strings(serialized, "serialized")
    if array.ndim:
        raise _invalid(
            f"Expected `serialized` to be a scalar, got shape: {list(array.shape)}",
            "ParseTensor",
        )
    values = _from_proto_bytes(bytes(array[()]), out_type, "ParseTensor")
    if values.dtype.kind == "O":
        return host.strings_out(values)
    return host.numbers_out(values)


# -- raw bytes, base64, compression -----------------------------------------------
_RAW_TYPES = (
    "float16", "float32", "float64", "int32", "uint16", "uint8", "int16",
    "int8", "int64", "complex64", "complex128", "bool", "bfloat16",
)  # fmt: skip


def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """Reinterprets the bytes of each string as numbers of `out_type` (TF's
    `tf.io.decode_raw`): the result has one more axis than `input_bytes`.
    Strings must all have the same length (a multiple of the item size),
    or, with `fixed_length`, are cut or zero-padded to that many bytes."""
    del name
    want = dtypes.as_dtype(out_type)
    np_dtype = np.dtype(want.as_numpy_dtype)
    if np_dtype.name not in _RAW_TYPES:
        raise _invalid(
            f"Value for attr 'out_type' of {want.name} is not in the list of "
            "allowed values",
            "DecodeRaw",
        )
    strings = host.byte_strings(input_bytes, "input_bytes")
    item = np_dtype.itemsize
    flat = strings.reshape(-1).tolist()
    if fixed_length is not None:
        length = int(host.host_numbers(fixed_length, "DecodePaddedRaw"))
        if length % item:
            raise _invalid(
                f"fixed_length ({length}) must be a multiple of the "
                f"size of out_type ({item})",
                "DecodePaddedRaw",
            )
        flat = [s[:length].ljust(length, b"\0") for s in flat]
    elif flat:
        length = len(flat[0])
        if length % item:
            raise _invalid(
                f"Input to DecodeRaw has length {length} that is not a "
                f"multiple of {item}, the size of {want.name}",
                "DecodeRaw",
            )
        for i, s in enumerate(flat):
            if len(s) != length:
                raise _invalid(
                    "DecodeRaw requires input strings to all be the same size, but "
                    f"element {i} has size {length} != {len(s)}",
                    "DecodeRaw",
                )
    else:
        length = 0
    order = np_dtype.newbyteorder("<" if little_endian else ">")
    if np_dtype.kind == "b":
        order = np.dtype(np.uint8)
    values = np.frombuffer(b"".join(flat), order).astype(np_dtype)
    return host.numbers_out(values.reshape(strings.shape + (length // item,)), want)


def encode_base64(input, pad=False, name=None):  # noqa: A002 - TF's name
    """Web-safe base64 (`-` and `_`) of each string, unpadded unless `pad`
    (TF's `tf.io.encode_base64`)."""
    del name
    strings = host.byte_strings(input, "input")

    def one(s: bytes) -> bytes:
        out = base64.urlsafe_b64encode(s)
        return out if pad else out.rstrip(b"=")

    return host.strings_out(host.map_strings(one, strings))


def decode_base64(input, name=None):  # noqa: A002 - TF's name
    """Decodes web-safe base64 strings, padded or not (TF's
    `tf.io.decode_base64`); other characters raise InvalidArgumentError."""
    del name
    strings = host.byte_strings(input, "input")

    def one(s: bytes) -> bytes:
        body = s.rstrip(b"=")
        if len(body) % 4 == 1:
            raise _invalid("Base64 string length cannot be 1 modulo 4.", "DecodeBase64")
        if body.translate(None, _WEB_SAFE):
            raise _invalid("Invalid character found in base64.", "DecodeBase64")
        try:
            return base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4))
        except binascii.Error:
            raise _invalid(
                "Invalid character found in base64.", "DecodeBase64"
            ) from None

    return host.strings_out(host.map_strings(one, strings))


_WEB_SAFE = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def decode_compressed(bytes, compression_type="", name=None):  # noqa: A002
    """Decompresses each string (`""`, `"ZLIB"` or `"GZIP"`; TF's
    `tf.io.decode_compressed`); corrupt data raises `DataLossError`.

    Differences from TensorFlow: `"ZSTD"` raises NotImplementedError."""
    del name
    kind = (compression_type or "").upper()
    if kind == "ZSTD":
        raise NotImplementedError("decode_compressed: ZSTD is not supported.")
    if kind not in ("", "ZLIB", "GZIP"):
        raise _invalid(
            "Only ZLIB, ZSTD, GZIP or NONE are supported compressions",
            "DecodeCompressed",
        )
    strings = host.byte_strings(bytes, "bytes")

    def one(s):
        try:
            if kind == "GZIP":
                return gzip.decompress(s)
            return zlib.decompress(s) if kind == "ZLIB" else s
        except (OSError, zlib.error, EOFError) as e:
            raise errors.DataLossError(
                None, None, f"{e} [Op:DecodeCompressed]"
            ) from None

    return host.strings_out(host.map_strings(one, strings))


# -- CSV ------------------------------------------------------------------------
_CSV_TYPES = ("float32", "float64", "int32", "int64", "object")


def _csv_fields(line: str, delim: str, quotes: bool, row: int) -> list[str]:
    """One record split as TF's CSV kernel splits it."""
    fields, i, n = [], 0, len(line)
    while True:
        if quotes and i < n and line[i] == '"':
            out, i = [], i + 1
            while True:
                if i >= n:
                    raise _invalid(
                        f"Quoted field has to end with quote followed by "
                        f"delim or end in record {row}",
                        "DecodeCSV",
                    )
                if line[i] == '"':
                    if i + 1 < n and line[i + 1] == '"':
                        out.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                out.append(line[i])
                i += 1
            if i < n and line[i] != delim:
                raise _invalid(
                    f"Quoted field has to end with quote followed by "
                    f"delim or end in record {row}",
                    "DecodeCSV",
                )
            fields.append("".join(out))
        else:
            end = line.find(delim, i)
            end = n if end < 0 else end
            field = line[i:end]
            if quotes and '"' in field:
                raise _invalid(
                    f"Unquoted fields cannot have quotes inside in record {row}",
                    "DecodeCSV",
                )
            fields.append(field)
            i = end
        if i >= n:
            return fields
        i += 1  # past the delimiter
        if i == n:
            fields.append("")
            return fields


def _csv_default(value):
    """(NumPy dtype, default or None when the field is required)."""
    if isinstance(value, dtypes.DType):
        raise ValueError(
            f"Attempt to convert a value ({value}) with an unsupported type "
            f"({type(value)}) to a Tensor. decode_csv's record_defaults are "
            "tensors: `[0]`, `[0.0]`, `['']`, or an empty float tensor `[]` "
            "for a required field."
        )
    try:
        array = host.byte_strings(value, "record_defaults")
    except TypeError:
        array = host.host_numbers(value, "DecodeCSV")
    if array.ndim > 1 or array.size > 1:
        raise _invalid(
            "Shape of a default must be a length-0 or length-1 vector, or a scalar.",
            "DecodeCSV",
        )
    if array.dtype.name not in _CSV_TYPES:
        raise TypeError(
            f"decode_csv: record_defaults of dtype {array.dtype} are not "
            "supported (float32, float64, int32, int64 or string)."
        )
    return array.dtype, (array.reshape(-1)[0] if array.size else None)


def _csv_value(text: str, dtype, default, col: int, row: int, na_value: str):
    if text == "" or text == na_value:
        if default is None:
            raise _invalid(
                f"Field {col} is required but missing in record {row}!", "DecodeCSV"
            )
        return default
    if dtype.kind == "O":
        return text.encode()
    try:
        return int(text) if dtype.kind == "i" else float(text)
    except ValueError:
        raise _invalid(
            f"Field {col} in record {row} is not a valid "
            f"{dtypes.as_dtype(dtype).name}: {text}",
            "DecodeCSV",
        ) from None


def decode_csv(
    records,
    record_defaults,
    field_delim=",",
    use_quote_delim=True,
    na_value="",
    select_cols=None,
    name=None,
):
    """Splits CSV records into one tensor per column (TF's
    `tf.io.decode_csv`), typed by `record_defaults` (one 0- or 1-element
    tensor per column: its dtype, and its value for empty fields; an empty
    one makes the field required). Results have the shape of `records`."""
    del name
    lines = host.byte_strings(records, "records")
    defaults = [_csv_default(v) for v in record_defaults]
    select = None if select_cols is None else [int(c) for c in select_cols]
    if select is not None:
        if sorted(set(select)) != select:
            raise ValueError("select_cols is not strictly increasing.")
        if select and select[0] < 0:
            raise ValueError("select_cols contains negative values.")
        if len(select) != len(defaults):
            raise ValueError("Length of select_cols and record_defaults do not match.")
    columns: list[list] = [[] for _ in defaults]
    for row, line in enumerate(lines.reshape(-1).tolist()):
        fields = _csv_fields(line.decode(), field_delim, use_quote_delim, row)
        if select is not None:
            if len(fields) <= select[-1]:
                raise _invalid(
                    f"Expect {select[-1] + 1} fields but have "
                    f"{len(fields)} in record {row}",
                    "DecodeCSV",
                )
            fields = [fields[c] for c in select]
        if len(fields) != len(defaults):
            raise _invalid(
                f"Expect {len(defaults)} fields but have {len(fields)} in record {row}",
                "DecodeCSV",
            )
        for col, (text, (dtype, default)) in enumerate(zip(fields, defaults)):
            columns[col].append(_csv_value(text, dtype, default, col, row, na_value))
    out = []
    for values, (dtype, _) in zip(columns, defaults):
        if dtype.kind == "O":
            out.append(
                host.strings_out(
                    np.asarray(values + [None], object)[:-1].reshape(lines.shape)
                )
            )
        else:
            out.append(host.numbers_out(np.asarray(values, dtype).reshape(lines.shape)))
    return out


# -- JSON Example ---------------------------------------------------------------
def decode_json_example(json_examples, name=None):
    """Converts JSON-encoded `Example` protos to their binary form (TF's
    `tf.io.decode_json_example`); invalid JSON raises InvalidArgumentError."""
    from google.protobuf import json_format  # lazy: with the Example protos

    del name
    texts = host.byte_strings(json_examples, "json_examples")

    def one(text: bytes) -> bytes:
        try:
            example = json_format.Parse(text, Example())
            return UnpackedExample.FromString(
                example.SerializeToString()
            ).SerializeToString(deterministic=True)
        except json_format.ParseError as e:
            raise _invalid(
                f"Error while parsing JSON: {e}", "DecodeJSONExample"
            ) from None

    return host.strings_out(host.map_strings(one, texts))


# -- SparseTensor serialization -------------------------------------------------
def _sparse_parts(sp_input, op_name):
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(
            f"{op_name}: sp_input must be a SparseTensor, got "
            f"{type(sp_input).__name__}."
        )
    indices = host.host_numbers(sp_input.indices, op_name).astype(np.int64)
    values = _tensor_input(sp_input.values, op_name)
    shape = host.host_numbers(sp_input.dense_shape, op_name).astype(np.int64)
    return indices, values, shape


def _check_out_type(out_type):
    if dtypes.as_dtype(out_type).name != "string":
        raise NotImplementedError(
            f"out_type={out_type}: jaxtape serializes SparseTensors to strings "
            "only (TF's variant encoding is not supported)."
        )


def serialize_sparse(sp_input, out_type=None, name=None):
    """A `SparseTensor` as three serialized TensorProtos (indices, values,
    dense shape), TF's `tf.io.serialize_sparse`; byte-identical to TF's."""
    del name
    if out_type is not None:
        _check_out_type(out_type)
    parts = _sparse_parts(sp_input, "SerializeSparse")
    return host.strings_out([_to_proto_bytes(p) for p in parts])


def serialize_many_sparse(sp_input, out_type=None, name=None):
    """A rank-N `SparseTensor` as an `[N0, 3]` string array: row i is the
    `serialize_sparse` of its i-th minibatch entry (TF's
    `tf.io.serialize_many_sparse`)."""
    del name
    if out_type is not None:
        _check_out_type(out_type)
    indices, values, shape = _sparse_parts(sp_input, "SerializeManySparse")
    if shape.size < 2:
        raise _invalid("SparseTensor must have rank >= 2", "SerializeManySparse")
    rows = []
    for b in range(int(shape[0])):
        mask = indices[:, 0] == b
        rows.append(
            [
                _to_proto_bytes(indices[mask, 1:]),
                _to_proto_bytes(values[mask]),
                _to_proto_bytes(shape[1:]),
            ]
        )
    out = np.empty((len(rows), 3), object)
    for i, row in enumerate(rows):
        out[i, :] = row
    return host.strings_out(out)


def deserialize_many_sparse(serialized_sparse, dtype, rank=None, name=None):
    """The `SparseTensor` stacked from an `[N, 3]` array of serialized ones
    (TF's `tf.io.deserialize_many_sparse`): dense shape `[N]` + the largest
    shape of each dimension."""
    del name
    rows = host.byte_strings(serialized_sparse, "serialized_sparse")
    if rows.ndim != 2 or rows.shape[1] != 3:
        raise _invalid(
            "Serialized sparse should be a matrix with 3 columns, got "
            f"shape {list(rows.shape)}",
            "DeserializeManySparse",
        )
    op = "DeserializeManySparse"
    all_idx, all_vals, shapes = [], [], []
    for b, (i, v, s) in enumerate(rows.tolist()):
        idx = _from_proto_bytes(i, dtypes.int64, op)
        vals = _from_proto_bytes(v, dtype, op)
        shapes.append(_from_proto_bytes(s, dtypes.int64, op))
        all_idx.append(np.concatenate([np.full((len(idx), 1), b, np.int64), idx], 1))
        all_vals.append(vals)
    inner = np.max(np.stack(shapes), axis=0) if shapes else np.zeros(0, np.int64)
    if rank is not None and len(inner) + 1 != int(rank):
        raise _invalid(f"Expected rank {rank}, got {len(inner) + 1}", op)
    np_dtype = np.dtype(dtypes.as_dtype(dtype).as_numpy_dtype)
    values = np.concatenate(all_vals) if all_vals else np.zeros(0, np_dtype)
    indices = (
        np.concatenate(all_idx) if all_idx else np.zeros((0, len(inner) + 1), np.int64)
    )
    dense_shape = np.concatenate([[len(shapes)], inner]).astype(np.int64)
    out = host.strings_out(values) if values.dtype.kind == "O" else None
    out = out if out is not None else host.numbers_out(values)
    return SparseTensor(host.numbers_out(indices), out, dense_shape.tolist())


# -- names jaxtape does not support -------------------------------------------------
def decode_proto(
    bytes,
    message_type,
    field_names,
    output_types,  # noqa: A002
    descriptor_source="local://",
    message_format="binary",
    sanitize=False,
    name=None,
):
    """TF's `tf.io.decode_proto`: not supported (needs TF's proto registry)."""
    raise NotImplementedError(
        "tf.io.decode_proto is not supported by jaxtape: parse the bytes with "
        "the message's Python protobuf class (`Message.FromString`) instead."
    )


def encode_proto(
    sizes, values, field_names, message_type, descriptor_source="local://", name=None
):
    """TF's `tf.io.encode_proto`: not supported (needs TF's proto registry)."""
    raise NotImplementedError(
        "tf.io.encode_proto is not supported by jaxtape: build the message with "
        "its Python protobuf class and call `SerializeToString()` instead."
    )


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """TF's `tf.io.write_graph`: not supported (jaxtape has no GraphDef)."""
    raise NotImplementedError(
        "tf.io.write_graph is not supported by jaxtape: there are no TF graphs. "
        "Inspect a compiled function with `jax.jit(...).lower(...).as_text()`."
    )


def match_filenames_once(pattern, name=None):
    """TF's `tf.io.match_filenames_once` (a TF1 local variable of file
    names): not supported; use `matching_files`."""
    raise NotImplementedError(
        "tf.io.match_filenames_once is not supported by jaxtape (it makes a "
        "string Variable); call `jaxtape.io.matching_files(pattern)` instead."
    )
