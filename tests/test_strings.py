"""String tensors (`jaxtape.string`) and `jaxtape.strings` against real TF.

One parity table: each row runs `fn(m)` with `m` TF and jaxtape and compares
the results (dtype, shape and values of tensors; a RaggedTensor's dtype and
rows; for an error, the exception type). `compiled` rows run the jaxtape side
inside `jaxtape.function`. Then the behaviours TF cannot be a table row for:
printing, `numpy()` types, trace counting, tapes, `tf.data` and Keras layers.
"""

from __future__ import annotations

import inspect
import math
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import jaxtape

TEXT = ["héllo wörld", "", "a  b\tc", "ABC déf"]
GRID = [["a", "b", "c"], ["d", "e", "f"]]
RAGGED = [["ab", "c"], [], ["déf"]]


class Row(NamedTuple):
    fn: Callable[[Any], Any]
    compiled: bool = False


def row(fn, compiled=False) -> Row:
    return Row(fn, compiled)


def _rt(m, rows):
    return m.ragged.constant(rows)


ROWS: dict[str, Row] = {
    # -- creation and conversion ------------------------------------------------------
    "constant_str": row(lambda m: m.constant("héllo")),
    "constant_bytes_list": row(lambda m: m.constant([b"a", b"\xff"])),
    "constant_numpy_unicode": row(lambda m: m.constant(np.array(["x", "yé"]))),
    "constant_numpy_object": row(lambda m: m.constant(np.array([b"x"], object))),
    "constant_shape": row(lambda m: m.constant("a", shape=[2, 2])),
    "constant_dtype_string": row(lambda m: m.constant(["a"], dtype=m.string)),
    "constant_mixed_types": row(lambda m: m.constant(["a", 1])),
    "constant_ragged_list": row(lambda m: m.constant([["a"], ["b", "c"]])),
    "constant_number_as_string": row(lambda m: m.constant(1, dtype=m.string)),
    "constant_string_as_int": row(lambda m: m.constant("1", dtype=m.int32)),
    "convert_to_tensor": row(lambda m: m.convert_to_tensor(["a", "b"])),
    "convert_string_tensor_to_float": row(
        lambda m: m.convert_to_tensor(m.constant("a"), dtype=m.float32)
    ),
    "zeros_string": row(lambda m: m.zeros([2], m.string)),
    "ones_string": row(lambda m: m.ones([2], m.string)),
    "fill": row(lambda m: m.fill([2, 1], "x")),
    "zeros_like": row(lambda m: m.zeros_like(m.constant(["a", "b"]))),
    "ones_like": row(lambda m: m.ones_like(m.constant(["a", "b"]))),
    "identity": row(lambda m: m.identity("a")),
    "cast_to_int": row(lambda m: m.cast(m.constant(["1"]), m.int32)),
    # -- generic ops on strings -------------------------------------------------------
    "reshape": row(lambda m: m.reshape(m.constant(GRID), [3, 2])),
    "expand_dims": row(lambda m: m.expand_dims(m.constant(GRID), 1)),
    "squeeze": row(lambda m: m.squeeze(m.constant([["a"], ["b"]]))),
    "concat": row(lambda m: m.concat([m.constant(GRID), [["x", "y", "z"]]], 0)),
    "stack": row(lambda m: m.stack([m.constant(["a", "b"]), ["c", "d"]], axis=1)),
    "unstack": row(lambda m: m.unstack(m.constant(GRID), axis=1)),
    "split": row(lambda m: m.split(m.constant(GRID), [1, 2], axis=1)),
    "gather": row(lambda m: m.gather(m.constant(GRID), [1, 0, 1])),
    "gather_axis_batch_dims": row(
        lambda m: m.gather(m.constant(GRID), [[2, 0], [1, 1]], axis=1, batch_dims=1)
    ),
    "gather_out_of_range": row(lambda m: m.gather(m.constant(["a"]), [3])),
    "gather_nd": row(lambda m: m.gather_nd(m.constant(GRID), [[0, 2], [1, 0]])),
    "boolean_mask": row(lambda m: m.boolean_mask(m.constant(GRID), [False, True])),
    "where": row(lambda m: m.where([[True, False, True]] * 2, m.constant(GRID), "-")),
    "tile": row(lambda m: m.tile(m.constant([["a", "b"]]), [2, 2])),
    "transpose": row(lambda m: m.transpose(m.constant(GRID))),
    "reverse": row(lambda m: m.reverse(m.constant(GRID), [1])),
    "slice": row(lambda m: m.slice(m.constant(GRID), [0, 1], [2, 2])),
    "strided_slice": row(
        lambda m: m.strided_slice(m.constant(GRID), [0, 0], [2, 3], [1, 2])
    ),
    "getitem": row(lambda m: m.constant(GRID)[1, ::-1]),
    "getitem_scalar": row(lambda m: m.constant(GRID)[0, 1]),
    "getitem_tensor_index": row(lambda m: m.constant(GRID)[m.constant(1)]),
    "shape_size_rank": row(
        lambda m: (m.shape(m.constant(GRID)), m.size(m.constant(GRID)), m.rank("a"))
    ),
    "broadcast_to": row(lambda m: m.broadcast_to(m.constant(["a", "b"]), [2, 2])),
    "pad_roll_repeat": row(
        lambda m: (
            m.pad(m.constant(GRID), [[1, 0], [0, 1]]),
            m.pad(m.constant(GRID), [[0, 0], [1, 1]], constant_values="z"),
            m.pad(m.constant(GRID), [[0, 0], [1, 1]], mode="REFLECT"),
            m.roll(m.constant(GRID), 1, axis=1),
            m.repeat(m.constant(GRID), 2, axis=0),
            m.reverse_sequence(m.constant(GRID), [1, 3], seq_axis=1, batch_axis=0),
        )
    ),
    "scatter_update_matrix_transpose": row(
        lambda m: (
            m.tensor_scatter_nd_update(m.constant(GRID), [[0, 1]], ["q"]),
            m.linalg.matrix_transpose(m.constant(GRID)),
        )
    ),
    "searchsorted_not_found": row(
        lambda m: m.searchsorted(m.constant(["a", "c"]), m.constant(["b"]))
    ),
    "equal": row(lambda m: m.equal(m.constant(GRID), "e")),
    "not_equal_operator": row(lambda m: m.constant(GRID) != m.constant([["a"], ["e"]])),
    "equal_number": row(lambda m: m.equal(m.constant(["a"]), 1)),
    "add_concatenates": row(lambda m: m.add(m.constant(GRID), ["1", "2", "3"])),
    "add_operator": row(lambda m: "<" + m.constant(["a", "b"]) + ">"),
    "add_unbroadcastable": row(lambda m: m.constant(["a", "b"]) + ["x", "y", "z"]),
    "float_equals_python_string": row(lambda m: m.constant([1.5]) == "a"),
    "float_plus_python_string": row(lambda m: m.constant([1.5]) + "a"),
    "string_plus_float": row(lambda m: m.constant(["a"]) + m.constant([1.5])),
    "string_equals_float": row(lambda m: m.constant(["a"]) == m.constant([1.5])),
    "string_times_number": row(lambda m: m.constant(["a"]) * 2),
    "concat_string_and_float": row(
        lambda m: m.concat([m.constant(["a"]), m.constant([1.5])], 0)
    ),
    "where_string_and_float": row(
        lambda m: m.where([True], m.constant(["a"]), m.constant([1.5]))
    ),
    "equal_unbroadcastable": row(lambda m: m.constant(["a", "b"]) == ["a", "b", "c"]),
    "unique": row(lambda m: m.unique(m.constant(["b", "a", "b", "c"]))),
    "sort_refused": row(lambda m: m.sort(m.constant(["b", "a"]))),
    "reduce_sum_refused": row(lambda m: m.reduce_sum(m.constant(["a"]))),
    "abs_refused": row(lambda m: m.abs(m.constant(["a"]))),
    "less_refused": row(lambda m: m.constant(["a"]) < m.constant(["b"])),
    "maximum_refused": row(lambda m: m.maximum(m.constant(["a"]), "b")),
    # -- tf.strings: case, whitespace, length, substr ---------------------------------
    "lower": row(lambda m: m.strings.lower(TEXT)),
    "lower_utf8": row(lambda m: m.strings.lower(TEXT, encoding="utf-8")),
    "upper": row(lambda m: m.strings.upper(TEXT)),
    "upper_utf8_ragged": row(lambda m: m.strings.upper(_rt(m, [["é"], []]), "utf-8")),
    "strip": row(lambda m: m.strings.strip([" a b \t\n", "\x0bx ", ""])),
    "length": row(lambda m: m.strings.length(TEXT)),
    "length_utf8": row(lambda m: m.strings.length(TEXT, unit="UTF8_CHAR")),
    "substr": row(lambda m: m.strings.substr(TEXT[:1] * 2, [0, 2], [3, 20])),
    "substr_negative_pos": row(lambda m: m.strings.substr("hello", -3, 2)),
    "substr_utf8": row(lambda m: m.strings.substr(TEXT[0], 1, 3, unit="UTF8_CHAR")),
    "substr_out_of_range": row(lambda m: m.strings.substr(["hi"], 3, 1)),
    # -- joining ----------------------------------------------------------------------
    "join": row(lambda m: m.strings.join([["a", "b"], "c", ["d", "é"]], separator="-")),
    "join_shapes_differ": row(lambda m: m.strings.join([["a", "b"], ["c"] * 3])),
    "reduce_join_all": row(lambda m: m.strings.reduce_join(GRID)),
    "reduce_join_axis": row(
        lambda m: m.strings.reduce_join(GRID, axis=1, separator=",")
    ),
    "reduce_join_keepdims": row(
        lambda m: m.strings.reduce_join(GRID, axis=-2, keepdims=True, separator=".")
    ),
    "reduce_join_empty": row(
        lambda m: m.strings.reduce_join(m.zeros([2, 0], m.string), 1)
    ),
    "unsorted_segment_join": row(
        lambda m: m.strings.unsorted_segment_join(["a", "b", "c"], [1, 0, 1], 3, ":")
    ),
    "unsorted_segment_join_2d": row(
        lambda m: m.strings.unsorted_segment_join(GRID, [1, 1], 2, "+")
    ),
    "unsorted_segment_join_bad_id": row(
        lambda m: m.strings.unsorted_segment_join(["a"], [4], 2)
    ),
    # -- splitting --------------------------------------------------------------------
    "split_whitespace": row(lambda m: m.strings.split(TEXT)),
    "split_sep": row(lambda m: m.strings.split(["a,b,,c", ""], sep=",")),
    "split_maxsplit": row(lambda m: m.strings.split(["a b c d"], maxsplit=2)),
    "split_scalar": row(lambda m: m.strings.split("a b")),
    "split_2d": row(lambda m: m.strings.split([["a b", "c"], ["", "d e f"]])),
    "split_ragged": row(lambda m: m.strings.split(_rt(m, [["a b"], []]))),
    "bytes_split": row(lambda m: m.strings.bytes_split(["ab", "", "é"])),
    "bytes_split_scalar": row(lambda m: m.strings.bytes_split("abc")),
    "ngrams": row(lambda m: m.strings.ngrams(["a", "b", "c", "d"], 2)),
    "ngrams_padded": row(
        lambda m: m.strings.ngrams(["a", "b", "c"], 3, "_", ("L", "R"), 1)
    ),
    "ngrams_pad_default_width": row(
        lambda m: m.strings.ngrams(["a", "b"], 3, pad_values="P")
    ),
    "ngrams_widths": row(lambda m: m.strings.ngrams(["a", "b", "c"], (1, 2))),
    "ngrams_2d": row(lambda m: m.strings.ngrams(GRID, 2)),
    "ngrams_ragged": row(
        lambda m: m.strings.ngrams(_rt(m, [["a", "b", "c"], ["d"]]), 2)
    ),
    "ngrams_preserve_short": row(
        lambda m: m.strings.ngrams(
            _rt(m, [["a", "b", "c"], ["d"], []]), 3, preserve_short_sequences=True
        )
    ),
    # -- regular expressions ----------------------------------------------------------
    "regex_full_match": row(lambda m: m.strings.regex_full_match(TEXT, r"h.llo \w+")),
    "regex_replace_groups": row(
        lambda m: m.strings.regex_replace(["aaa bab"], "a(b)?", r"<\1>")
    ),
    "regex_replace_whole": row(
        lambda m: m.strings.regex_replace(TEXT, "[lö]", r"[\0]")
    ),
    "regex_replace_first": row(
        lambda m: m.strings.regex_replace(["aaa"], "a", "x", replace_global=False)
    ),
    "regex_replace_empty_match": row(
        lambda m: m.strings.regex_replace(["abc"], "x*", "-")
    ),
    "regex_bad_pattern": row(lambda m: m.strings.regex_full_match(["a"], "(")),
    # -- numbers ----------------------------------------------------------------------
    "as_string_float": row(
        lambda m: m.strings.as_string([3.5, 1e10, 1 / 3, -0.0, np.inf, np.nan])
    ),
    "as_string_int_bool": row(
        lambda m: (m.as_string([1, -2]), m.as_string([True, False]))
    ),
    "as_string_options": row(
        lambda m: (
            m.strings.as_string([3.14159], precision=2),
            m.strings.as_string([3.14159], scientific=True),
            m.strings.as_string([3.14159, 1e8], shortest=True),
            m.strings.as_string([3, 45], width=5, fill="0"),
            m.strings.as_string(np.array([1 + 2j], np.complex64)),
            m.strings.as_string(np.array([7], np.uint8), width=3),
        )
    ),
    "as_string_bad_fill": row(lambda m: m.strings.as_string([1], width=3, fill="ab")),
    "as_string_scientific_and_shortest": row(
        lambda m: m.strings.as_string([1.0], scientific=True, shortest=True)
    ),
    "to_number": row(
        lambda m: m.strings.to_number(["1.5", "-2", " 3", "1e3", "inf", "nan", "0x10"])
    ),
    "to_number_types": row(
        lambda m: (
            m.strings.to_number(["12", "-3"], m.int32),
            m.strings.to_number(["9999999999"], m.int64),
            m.strings.to_number(["0.1"], m.float64),
        )
    ),
    "to_number_bad_text": row(lambda m: m.strings.to_number(["abc"])),
    "to_number_float_as_int": row(lambda m: m.strings.to_number(["1.5"], m.int32)),
    "to_number_int32_overflow": row(
        lambda m: m.strings.to_number(["9999999999"], m.int32)
    ),
    "to_number_bad_out_type": row(lambda m: m.strings.to_number(["1"], m.int8)),
    # -- hashing (TF's exact values) --------------------------------------------------
    "to_hash_bucket_fast": row(
        lambda m: m.strings.to_hash_bucket_fast(TEXT + ["x" * 70], 1000)
    ),
    "to_hash_bucket_strong": row(
        lambda m: m.strings.to_hash_bucket_strong(TEXT + ["y" * 17], 977, [17, 2**40])
    ),
    "to_hash_bucket": row(lambda m: m.strings.to_hash_bucket(TEXT + ["z" * 13], 2**31)),
    # -- format -----------------------------------------------------------------------
    "format": row(lambda m: m.strings.format("x={} y={}", (1, m.constant([1.5, 2.0])))),
    "format_strings": row(lambda m: m.strings.format("{}", m.constant(["a", "b"]))),
    "format_summarized": row(
        lambda m: m.strings.format("{} and {}", [m.range(10), m.constant("s")])
    ),
    "format_matrix": row(
        lambda m: m.strings.format("v: {}", m.reshape(m.range(12), [3, 4]), summarize=1)
    ),
    "format_bool_float64": row(
        lambda m: m.strings.format(
            "{} {}", [m.constant([True, False]), np.array([0.1])]
        )
    ),
    "format_placeholder": row(
        lambda m: m.strings.format("a %% b", [3], placeholder="%%")
    ),
    "format_wrong_count": row(lambda m: m.strings.format("{} {}", [1])),
    # -- Unicode ----------------------------------------------------------------------
    "unicode_decode": row(lambda m: m.strings.unicode_decode(TEXT, "UTF-8")),
    "unicode_decode_scalar": row(lambda m: m.strings.unicode_decode("hé", "UTF-8")),
    "unicode_decode_invalid": row(
        lambda m: [
            m.strings.unicode_decode([b"a\xffb\xe2\x82"], "UTF-8", errors=e)
            for e in ("replace", "ignore")
        ]
    ),
    "unicode_decode_strict": row(
        lambda m: m.strings.unicode_decode([b"a\xff"], "UTF-8", errors="strict")
    ),
    "unicode_decode_controls": row(
        lambda m: m.strings.unicode_decode(
            ["a\x01b"], "UTF-8", replacement_char=63, replace_control_characters=True
        )
    ),
    "unicode_decode_utf16": row(
        lambda m: m.strings.unicode_decode(["hé€".encode("utf-16-be")], "UTF-16-BE")
    ),
    "unicode_decode_with_offsets": row(
        lambda m: m.strings.unicode_decode_with_offsets([b"h\xc3\xa9\xffz"], "UTF-8")
    ),
    "unicode_encode": row(
        lambda m: m.strings.unicode_encode(
            _rt(m, [[104, 233], [], [0x110000]]), "UTF-8"
        )
    ),
    "unicode_encode_dense": row(
        lambda m: m.strings.unicode_encode(
            np.array([[104, 8364]], np.int32), "UTF-16-BE"
        )
    ),
    "unicode_encode_vector": row(
        lambda m: m.strings.unicode_encode([104, 233], "UTF-8")
    ),
    "unicode_split": row(lambda m: m.strings.unicode_split(TEXT, "UTF-8")),
    "unicode_split_with_offsets": row(
        lambda m: m.strings.unicode_split_with_offsets(["hé€"], "UTF-8")
    ),
    "unicode_transcode": row(
        lambda m: m.strings.unicode_transcode([b"h\xc3\xa9\xff"], "UTF-8", "UTF-16-BE")
    ),
    "unicode_script": row(
        lambda m: m.strings.unicode_script(
            np.array(
                [72, 0x416, 0x4E2D, 32, 0x301, -1, 0x627, 0x3042, 0xAC00], np.int32
            )
        )
    ),
    "unicode_script_every_7th_code_point": row(
        lambda m: m.strings.unicode_script(np.arange(-3, 0x110005, 7, dtype=np.int32))
    ),
    # -- empty string tensors ------------------------------------------------------
    "empty_constant_ops": row(
        lambda m: (
            m.constant([], m.string),
            m.strings.length(m.constant([], m.string)),
            m.strings.upper(m.zeros([2, 0], m.string)),
            m.strings.reduce_join(m.constant([], m.string)),
            m.strings.join([m.constant([], m.string), m.constant([], m.string)]),
            m.concat([m.constant([], m.string), ["a"]], 0),
        )
    ),
    "empty_split_decode": row(
        lambda m: (
            m.strings.split(m.constant([], m.string)),
            m.strings.unicode_decode(m.constant(["", ""]), "UTF-8"),
            m.strings.bytes_split(m.constant([""])),
        )
    ),
    # -- RaggedTensor inputs ------------------------------------------------------
    "ragged_substr": row(lambda m: m.strings.substr(_rt(m, RAGGED), 0, 1)),
    "ragged_reduce_join_rows": row(
        lambda m: m.strings.reduce_join(_rt(m, RAGGED), axis=1, separator="+")
    ),
    "ragged_reduce_join_all": row(lambda m: m.strings.reduce_join(_rt(m, RAGGED))),
    "ragged_join": row(
        lambda m: m.strings.join([_rt(m, RAGGED), _rt(m, RAGGED)], separator="-")
    ),
    "ragged_length_regex": row(
        lambda m: (
            m.strings.length(_rt(m, RAGGED), unit="UTF8_CHAR"),
            m.strings.regex_replace(_rt(m, RAGGED), "b", "X"),
        )
    ),
    "ragged_to_number_as_string": row(
        lambda m: (
            m.strings.to_number(_rt(m, [["1"], ["2", "3"]])),
            m.strings.as_string(_rt(m, [[1], [2, 3]])),
        )
    ),
    "ragged_equal_concat": row(
        lambda m: (_rt(m, RAGGED) == "c", m.concat([_rt(m, RAGGED)] * 2, 0))
    ),
    "ragged_unicode_decode_script": row(
        lambda m: m.strings.unicode_script(
            m.strings.unicode_decode(_rt(m, RAGGED), "UTF-8")
        )
    ),
    # -- inside jaxtape.function (strings are static values) --------------------------
    "compiled_split": row(lambda m: m.strings.split(TEXT), compiled=True),
    "compiled_length_arith": row(
        lambda m: (
            m.strings.length(TEXT) * 2
            + m.strings.to_number(["1", "2", "3", "4"], m.int32)
        ),
        compiled=True,
    ),
    "compiled_hash": row(
        lambda m: m.strings.to_hash_bucket_fast(TEXT, 10), compiled=True
    ),
    "compiled_gather_add": row(
        lambda m: m.gather(m.constant(TEXT), [3, 0]) + "!", compiled=True
    ),
    "compiled_format": row(
        lambda m: m.strings.format("{}", m.constant(["q"])), compiled=True
    ),
}


def _plain(x) -> Any:
    """An output as comparable data: kind, dtype, shape/rows, values."""
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if type(x).__name__ == "RaggedTensor":
        return ("ragged", x.dtype.name, _lists(x.to_list()))
    if hasattr(x, "numpy"):
        v = x.numpy()
        v = v.tolist() if isinstance(v, np.ndarray) else v
        return ("tensor", x.dtype.name, tuple(x.shape), _lists(v))
    return x


def _lists(v):
    if isinstance(v, list):
        return [_lists(e) for e in v]
    if isinstance(v, (float, np.floating)) and math.isnan(v):
        return "nan"
    return v.item() if isinstance(v, np.generic) else v


def _run(fn, m):
    try:
        return False, _plain(fn(m))
    except Exception as e:  # the error's type is compared
        return True, e


@pytest.mark.parametrize("name", list(ROWS))
def test_string_ops_match_tensorflow(name, tf):
    r = ROWS[name]
    want_raised, want = _run(r.fn, tf)
    ours = r.fn
    if r.compiled:
        ours = lambda m: jaxtape.function(lambda: r.fn(m))()  # noqa: E731
    got_raised, got = _run(ours, jaxtape)
    if want_raised:
        assert got_raised, f"TF raised {type(want).__name__}: {want}; got {got}"
        assert type(got).__name__ == type(want).__name__, (got, want)
        return
    if got_raised:
        raise got
    assert got == want


def test_string_tensors_print_and_convert_as_tf(tf):
    for value in (["a", "bé"], "x", [["a", "b"], ["c", "d"]]):
        want, got = tf.constant(value), jaxtape.constant(value)
        assert repr(got) == repr(want).replace("tf.Tensor", "jaxtape.Tensor")
        assert str(got) == str(want).replace("tf.Tensor", "jaxtape.Tensor")
        assert type(got.numpy()) is type(want.numpy())
        assert got.device == want.device
    s = jaxtape.constant(["a", "b"])
    assert isinstance(s, jaxtape.Tensor) and s.dtype == jaxtape.string
    assert (len(s), s.ndim, s.shape) == (2, 1, (2,))
    assert [t.numpy() for t in s] == [b"a", b"b"]
    assert s.numpy().dtype == object and bool(jaxtape.constant("a"))
    with pytest.raises(TypeError, match="unhashable"):
        hash(s)
    assert s.ref().deref() is s
    # (a non-tensor-like compares unequal, as container comparisons need)
    assert (s == object()) is False and (s != None) is True  # noqa: E711


def test_string_dtype_matches_tf(tf):
    for attr in ("name", "is_floating", "is_integer", "is_bool", "size"):
        assert getattr(jaxtape.string, attr) == getattr(tf.string, attr), attr
    assert jaxtape.string.as_numpy_dtype is tf.string.as_numpy_dtype
    assert jaxtape.as_dtype(np.object_) == jaxtape.string == "string"
    assert str(jaxtape.string) == str(tf.string)
    with pytest.raises(TypeError):
        jaxtape.string.min  # noqa: B018
    with pytest.raises(TypeError):
        jaxtape.as_dtype(bytes)


def test_string_arguments_are_static_in_function_traces():
    traces = []

    @jaxtape.function
    def step(s, x):
        traces.append(None)
        return jaxtape.strings.length(s) + x, s + "!"

    a = step(jaxtape.constant(["ab", "c"]), jaxtape.constant(1))
    step(jaxtape.constant(["ab", "c"]), jaxtape.constant(5))  # same strings: no trace
    b = step(jaxtape.constant(["ab", "cd"]), jaxtape.constant(1))
    assert len(traces) == 2
    np.testing.assert_array_equal(a[0].numpy(), [3, 2])
    assert a[1].numpy().tolist() == [b"ab!", b"c!"]
    assert b[1].numpy().tolist() == [b"ab!", b"cd!"]


def test_traced_number_to_string_is_not_implemented():
    @jaxtape.function
    def fmt(x):
        return jaxtape.strings.as_string(x)

    with pytest.raises(NotImplementedError, match="as_string"):
        fmt(jaxtape.constant(1))

    @jaxtape.function
    def pick(i):
        return jaxtape.gather(jaxtape.constant(["a", "b"]), i)

    with pytest.raises(NotImplementedError, match="traced"):
        pick(jaxtape.constant([1]))


def test_strings_are_constants_on_a_tape():
    x = jaxtape.Variable(2.0)
    s = jaxtape.constant(["ab", "cde"])
    with jaxtape.GradientTape() as tape:
        n = jaxtape.cast(jaxtape.strings.length(s), jaxtape.float32)
        y = jaxtape.reduce_sum(n * x)
        t = jaxtape.strings.join([s, "x"])
    assert float(tape.gradient(y, x)) == 5.0
    assert t.numpy().tolist() == [b"abx", b"cdex"]


def test_datasets_of_strings_match_tf(tf, tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("first line\nsecond\n")

    def pipelines(m):
        d = m.data
        return {
            "slices": d.Dataset.from_tensor_slices(["a", "bé"]),
            "dict": d.Dataset.from_tensor_slices({"s": ["x", "y"], "t": ["", "z"]}),
            "batch_map": d.Dataset.from_tensor_slices(TEXT)
            .map(lambda s: m.strings.upper(s) + "!")
            .batch(3),
            "split_map": d.Dataset.from_tensor_slices(TEXT).map(
                lambda s: m.strings.length(m.strings.split(s))
            ),
            "text_lines": d.TextLineDataset(str(path)),
            "list_files": d.Dataset.list_files(str(tmp_path / "*.txt")),
            "from_string_tensor": d.Dataset.from_tensor_slices(m.constant(GRID)),
        }

    want, got = pipelines(tf), pipelines(jaxtape)
    for name in want:
        spec, want_spec = got[name].element_spec, _spec_like(want[name].element_spec)
        if isinstance(spec, dict):
            spec, want_spec = list(spec.values()), list(want_spec.values())
        else:
            spec, want_spec = [spec], [want_spec]
        # (compatible: a shape TF's graph leaves unknown is known here)
        assert all(w.is_compatible_with(g) for w, g in zip(want_spec, spec)), name
        w = list(want[name].as_numpy_iterator())
        g = list(got[name].as_numpy_iterator())
        assert repr(g) == repr(w), name
        assert [_plain(e) for e in got[name]] == [_plain(e) for e in want[name]], name


def _spec_like(spec):
    if isinstance(spec, dict):
        return {k: _spec_like(v) for k, v in spec.items()}
    return jaxtape.TensorSpec(tuple(spec.shape), spec.dtype.name)


def test_keras_text_layers_take_string_tensors(tf):
    corpus = ["the cat sat", "the dog", "a cat ran far"]

    def outputs(m):
        layers = m.keras.layers
        tv = layers.TextVectorization(max_tokens=8, output_sequence_length=4)
        tv.adapt(m.data.Dataset.from_tensor_slices(corpus).batch(2))
        lookup = layers.StringLookup()
        lookup.adapt(m.constant(GRID))
        inverse = layers.StringLookup(vocabulary=["a", "b"], invert=True)
        hashing = layers.Hashing(num_bins=7)
        return [
            tv(m.constant(["the cat flew", "dog"])),
            lookup(m.constant([["a", "z"]])),
            inverse(m.constant([2, 0, 1])),
            hashing(m.constant(TEXT)),
            [lookup(x) for x in m.data.Dataset.from_tensor_slices(["c", "q"])],
        ]

    assert _plain(outputs(jaxtape)) == _plain(outputs(tf))


def test_print_writes_strings_as_tf(tf, capfd):
    def show(m):
        s = m.constant([["a", "bé"], ["", "d"]])
        m.print("text:", s, m.constant("x"), {"k": s[0]}, output_stream=sys.stdout)

        @m.function
        def step(s, n):
            m.print(s, n, output_stream=sys.stdout)
            return n

        step(m.constant(["q"]), m.constant(2))
        sys.stdout.flush()
        return capfd.readouterr().out

    assert show(jaxtape) == show(tf)


def test_strings_names_and_arguments_are_tfs(tf):
    def params(fn):
        return [
            (p.name, repr(p.default)) for p in inspect.signature(fn).parameters.values()
        ]

    names = [n for n in dir(tf.strings) if not n.startswith("_")]
    assert len(names) == 26
    for n in names:
        want = [
            (k, d.replace("tf.", "jaxtape.")) for k, d in params(getattr(tf.strings, n))
        ]
        assert params(getattr(jaxtape.strings, n)) == want, n
    assert params(jaxtape.as_string) == params(tf.as_string)
    assert jaxtape.strings.as_string is jaxtape.as_string


def test_input_signature_with_string_spec(tf):
    def run(m):
        @m.function(input_signature=[m.TensorSpec([None], m.string)])
        def lengths(s):
            return m.strings.length(s)

        out = [lengths(m.constant(["ab", "c"])), lengths(["xyz"])]
        try:
            lengths(m.constant([["x"]]))
        except TypeError as e:
            out.append(type(e).__name__)
        return out

    assert _plain(run(jaxtape)) == _plain(run(tf))
