"""`jaxtape.strings` (TF's `tf.strings`) and `jaxtape.as_string`: host string ops.

Layer L2 (`structured/`): imports `core`, `ops` and the other `structured`
modules. Strings live on the host (`strings.StringTensor`, NumPy object arrays
of `bytes`), so every op here is NumPy/Python code run at once, also while
`jaxtape.function` traces (the strings are static values there); a numeric
argument that is only known at run time (a traced tensor) raises
NotImplementedError naming the op. Results that TF gives as ragged
(`split`, `bytes_split`, `unicode_decode`, `unicode_split`, `ngrams` of a
ragged input) are `jaxtape.RaggedTensor`s. Hashes match TF's bit for bit:
`to_hash_bucket_fast` is FarmHash's Fingerprint64, `to_hash_bucket_strong`
SipHash-2-4, `to_hash_bucket` TF's legacy Hash64 (a MurmurHash2 variant).

Differences from TensorFlow:
  Encodings are UTF-8, UTF-16-BE and UTF-32-BE (TF takes any ICU encoding;
  others raise NotImplementedError). Regular expressions run on Python's
  `re` with RE2's ASCII `\\w \\d \\s \\b`; RE2-only or Python-only syntax
  (`\\p{..}`, `\\C`, `\\Q..\\E`, back-references, look-arounds) raises
  NotImplementedError, and `(?i)` folds ASCII letters only. `substr` of a
  RaggedTensor takes scalar `pos`/`len`; `reduce_join` of one joins all of
  it or each row of a rank-2 one (other axes raise NotImplementedError).
  A tf.strings op given a numeric tensor raises InvalidArgumentError where
  TF raises its conversion ValueError for some of them (`split`).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from typing import Any

import jax.core
import numpy as np

from jaxtape._src.core import checks, dtypes, errors
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import misc_ops
from jaxtape._src.ops.creation_ops import convert_to_tensor
from jaxtape._src.structured.farmhash import fingerprint64
from jaxtape._src.structured.ragged import RaggedTensor
from jaxtape._src.structured.strings import StringTensor, as_strings, is_string
from jaxtape._src.structured.unicode_scripts import script_of

_OBJECT = np.dtype(object)
_M64 = (1 << 64) - 1


# -- helpers -------------------------------------------------------------------------
def _host(x, op_name: str) -> np.ndarray:
    """A numeric argument's value on the host (NotImplementedError if traced)."""
    v = to_value(x)
    if isinstance(v, jax.core.Tracer):
        raise NotImplementedError(
            f"jaxtape.strings.{op_name} of a traced tensor inside jaxtape.function: "
            "strings live on the host, so jaxtape needs the value while tracing. "
            "Call it outside the function, or pass the value as an argument."
        )
    return checks.host(v)


def _strings_of(x, op_name: str) -> np.ndarray:
    """A string argument as an object array of bytes (TF's errors otherwise)."""
    if isinstance(x, Tensor) and not isinstance(x, StringTensor):
        raise errors.invalid_argument(
            f"cannot compute {op_name} as input #0(zero-based) was expected to be "
            f"a string tensor but is a {x.dtype.name} tensor. Format numbers with "
            "`jaxtape.strings.as_string`.",
            op_name,
        )
    return as_strings(x)._v


def _objects(values, shape) -> np.ndarray:
    out = np.empty(len(values), _OBJECT)
    out[:] = values if values else []
    return out.reshape(shape)


def _map(x, fn: Callable[[bytes], Any], op_name: str, dtype=None):
    """`fn` on every string of `x` (a RaggedTensor keeps its rows): a
    StringTensor of the results, or a numeric tensor of `dtype`."""
    if isinstance(x, RaggedTensor):
        return x.with_flat_values(_map(x.flat_values, fn, op_name, dtype))
    v = _strings_of(x, op_name)
    results = [fn(s) for s in v.ravel().tolist()]
    if dtype is None:
        return StringTensor(_objects(results, v.shape))
    return convert_to_tensor(np.asarray(results, dtype).reshape(v.shape))


def _values(items: list, dtype):
    if dtype is None:
        return StringTensor(_objects(items, (len(items),)))
    return convert_to_tensor(np.asarray(items, dtype).reshape(len(items)))


def _ragged_result(lists: list, shape: tuple, dtype=None):
    """One list per element of an input of `shape` (row-major): a 1-D tensor
    for a scalar input, else a RaggedTensor with one more (ragged) dimension,
    as TF's ragged string ops give."""
    if not shape:
        return _values(lists[0], dtype)
    flat = [v for row in lists for v in row]
    splits = np.cumsum([0] + [len(row) for row in lists], dtype=np.int64)
    out: Any = RaggedTensor.from_row_splits(
        _values(flat, dtype), convert_to_tensor(splits), validate=False
    )
    for d in reversed(shape[1:]):
        out = RaggedTensor.from_uniform_row_length(out, d)
    return out


def _ragged_map(x, fn: Callable[[bytes], list], op_name: str, dtype=None):
    """`fn(string) -> list` on every string: ragged results (see `_ragged_result`);
    a RaggedTensor input keeps its rows and gains a ragged dimension."""
    if isinstance(x, RaggedTensor):
        inner = _ragged_map(x.flat_values, fn, op_name, dtype)
        if not isinstance(inner, RaggedTensor):  # (flat values are never scalar)
            return inner
        return RaggedTensor.from_nested_row_splits(inner, x.nested_row_splits)
    v = _strings_of(x, op_name)
    return _ragged_result([fn(s) for s in v.ravel().tolist()], v.shape, dtype)


def _is_ragged(x) -> bool:
    return isinstance(x, RaggedTensor)


# -- case, whitespace, length -----------------------------------------------------
def lower(input, encoding="", name=None):  # noqa: A002 - TF's name
    """Lower-cases each string: ASCII letters only (TF's default encoding ''),
    every letter with `encoding='utf-8'`."""
    del name
    return _map(input, _case_fn(encoding, "lower", "StringLower"), "StringLower")


def upper(input, encoding="", name=None):  # noqa: A002
    """Upper-cases each string (ASCII only unless `encoding='utf-8'`), as TF's."""
    del name
    return _map(input, _case_fn(encoding, "upper", "StringUpper"), "StringUpper")


def _case_fn(encoding: str, method: str, op_name: str):
    if encoding == "":
        return getattr(bytes, method)
    if encoding.lower().replace("-", "") != "utf8":
        raise errors.invalid_argument(f"Invalid encoding: {encoding}", op_name)
    return lambda s: getattr(s.decode("utf-8", "surrogateescape"), method)().encode(
        "utf-8", "surrogateescape"
    )


def strip(input, name=None):  # noqa: A002
    """Strips leading and trailing ASCII whitespace, as TF's `StringStrip`."""
    del name
    return _map(input, bytes.strip, "StringStrip")


def length(input, unit="BYTE", name=None):  # noqa: A002
    """Each string's length in bytes (`unit='BYTE'`) or in UTF-8 characters
    (`'UTF8_CHAR'`: bytes that do not continue a character), int32."""
    del name
    count = _unit_len(unit, "StringLength")
    return _map(input, count, "StringLength", np.int32)


def _unit_len(unit: str, op_name: str):
    if unit == "BYTE":
        return len
    if unit == "UTF8_CHAR":
        return _utf8_len
    raise ValueError(f"unit must be one of 'BYTE', 'UTF8_CHAR'; got {unit!r}")


def _utf8_len(s: bytes) -> int:
    return sum(1 for b in s if b & 0xC0 != 0x80)


def _utf8_starts(s: bytes) -> list[int]:
    return [i for i, b in enumerate(s) if b & 0xC0 != 0x80]


def substr(input, pos, len, unit="BYTE", name=None):  # noqa: A002
    """`len` bytes (or UTF-8 characters) of each string from `pos` (from the
    end when negative); `pos` past either end is TF's InvalidArgumentError.
    `pos` and `len` broadcast against `input`."""
    del name
    _unit_len(unit, "Substr")
    if isinstance(input, RaggedTensor):
        if np.ndim(pos) or np.ndim(len):
            raise NotImplementedError(
                "jaxtape.strings.substr of a RaggedTensor takes a scalar `pos` "
                "and `len` (TF also takes ragged ones of the input's shape)."
            )
        return input.with_flat_values(substr(input.flat_values, pos, len, unit))
    v = _strings_of(input, "Substr")
    p, n = _host(pos, "substr"), _host(len, "substr")
    if p.shape != n.shape:
        raise ValueError(
            f"pos and len must have the same shape; got {list(p.shape)} and "
            f"{list(n.shape)}."
        )
    try:
        shape = np.broadcast_shapes(v.shape, p.shape)
    except ValueError:
        raise errors.invalid_argument(
            f"Incompatible shapes: {list(v.shape)} vs. {list(p.shape)}", "Substr"
        ) from None
    vs, ps, ns = (np.broadcast_to(a, shape).ravel().tolist() for a in (v, p, n))
    out = [
        _substr_one(s, int(a), int(b), unit, i)
        for i, (s, a, b) in enumerate(zip(vs, ps, ns))
    ]
    return StringTensor(_objects(out, shape))


def _substr_one(s: bytes, pos: int, n: int, unit: str, index: int) -> bytes:
    if unit == "BYTE":
        size = builtin_len(s)
        if pos > size or pos < -size:
            raise errors.invalid_argument(
                f"pos {pos} out of range for string b'{s.decode('latin-1')}' at "
                f"index {index}",
                "Substr",
            )
        start = pos + size if pos < 0 else pos
        return s[start : start + max(n, 0)]
    starts = _utf8_starts(s) + [builtin_len(s)]
    size = builtin_len(starts) - 1
    if pos > size or pos < -size:
        raise errors.invalid_argument(
            f"pos {pos} out of range for string at index {index}", "Substr"
        )
    start = pos + size if pos < 0 else pos
    stop = min(start + max(n, 0), size)
    return s[starts[start] : starts[stop]]


builtin_len = len


# -- joining -------------------------------------------------------------------------
def join(inputs, separator="", name=None):
    """Joins the strings of `inputs` (a list of tensors of one shape, or scalars)
    element-wise with `separator`, as TF's `StringJoin`."""
    del name
    inputs = list(inputs)
    rts = [x for x in inputs if isinstance(x, RaggedTensor)]
    if rts:  # the flat values joined, in the rows of the (same-shaped) inputs
        for other in rts[1:]:
            _same_rows(rts[0], other, "StringJoin")
        flat = [x.flat_values if isinstance(x, RaggedTensor) else x for x in inputs]
        return rts[0].with_flat_values(join(flat, separator))
    arrays = [_strings_of(x, "StringJoin") for x in inputs]
    shapes = {a.shape for a in arrays if a.ndim}
    if builtin_len(shapes) > 1:
        a, b = sorted(shapes, key=str)[:2]
        raise errors.invalid_argument(
            f"Input shapes do not match: {list(a)} vs. {list(b)}", "StringJoin"
        )
    shape = shapes.pop() if shapes else ()
    sep = _bytes(separator)
    flat = [np.broadcast_to(a, shape).ravel().tolist() for a in arrays]
    out = [sep.join(parts) for parts in zip(*flat)] if flat else []
    if not flat:
        out = [b""] * int(np.prod(shape, dtype=np.int64))
    return StringTensor(_objects(out, shape))


def _same_rows(a: RaggedTensor, b: RaggedTensor, op_name: str) -> None:
    splits_a = [_host(x, op_name) for x in a.nested_row_splits]
    splits_b = [_host(x, op_name) for x in b.nested_row_splits]
    if builtin_len(splits_a) != builtin_len(splits_b) or any(
        not np.array_equal(x, y) for x, y in zip(splits_a, splits_b)
    ):
        raise errors.invalid_argument(
            "Inputs must have identical ragged splits", op_name
        )


def _bytes(s) -> bytes:
    if isinstance(s, StringTensor):
        return s._v[()]
    return s.encode("utf-8") if isinstance(s, str) else bytes(s)


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """Joins strings across `axis` (all axes for None) with `separator`."""
    del name
    if isinstance(inputs, RaggedTensor):
        return _reduce_join_ragged(inputs, axis, keepdims, separator)
    v = _strings_of(inputs, "ReduceJoin")
    nd = v.ndim
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = tuple(int(a) for a in np.atleast_1d(_host(axis, "reduce_join")))
        for a in axes:
            if not -nd <= a < max(nd, 1):
                raise errors.invalid_argument(
                    f"Invalid reduction dimension {a} for input with {nd} dimensions.",
                    "ReduceJoin",
                )
        axes = tuple(sorted({a % max(nd, 1) for a in axes}))
    keep = [d for d in range(nd) if d not in axes]
    moved = np.transpose(v, keep + list(axes)) if nd else v
    lead = tuple(v.shape[d] for d in keep)
    width = int(np.prod([v.shape[a] for a in axes], dtype=np.int64))
    rows = moved.reshape((-1, width)).tolist() if width else [[]] * int(np.prod(lead))
    sep = _bytes(separator)
    out = _objects([sep.join(r) for r in rows], lead)
    if keepdims:
        out = out.reshape(tuple(1 if d in axes else v.shape[d] for d in range(nd)))
    return StringTensor(out)


def _reduce_join_ragged(rt: RaggedTensor, axis, keepdims, separator):
    """`reduce_join` of a RaggedTensor: over everything, or within each row of
    the innermost ragged dimension (a RaggedTensor of rank 2)."""
    sep = _bytes(separator)
    if axis is None and not keepdims:
        flat = _strings_of(rt.flat_values, "ReduceJoin").ravel().tolist()
        return StringTensor(_objects([sep.join(flat)], ()))
    values = rt.values
    if (
        axis is None
        or isinstance(values, RaggedTensor)
        or values.ndim != 1
        or int(axis) not in (1, -1)
    ):
        raise NotImplementedError(
            "jaxtape.strings.reduce_join of a RaggedTensor joins all of it, or each "
            "row of a rank-2 RaggedTensor (axis=1); got "
            f"axis={axis!r}, keepdims={keepdims!r} for shape {rt.shape}."
        )
    rows = rt.to_list()
    out = _objects([sep.join(r) for r in rows], (builtin_len(rows),))
    return StringTensor(out.reshape(-1, 1) if keepdims else out)


def unsorted_segment_join(inputs, segment_ids, num_segments, separator="", name=None):
    """Joins the strings of each segment in order (TF's `UnsortedSegmentJoin`);
    an empty segment gives an empty string."""
    del name
    v = _strings_of(inputs, "UnsortedSegmentJoin")
    ids = _host(segment_ids, "unsorted_segment_join").astype(np.int64)
    n = int(_host(num_segments, "unsorted_segment_join"))
    if v.shape[: ids.ndim] != ids.shape:
        raise errors.invalid_argument(
            f"data.shape = {list(v.shape)} does not start with segment_ids.shape "
            f"= {list(ids.shape)}",
            "UnsortedSegmentJoin",
        )
    if ids.size and (ids.min() < 0 or ids.max() >= n):
        raise errors.invalid_argument(
            "segment_ids are not allowed to exceed num_segments or to have "
            "negative values.",
            "UnsortedSegmentJoin",
        )
    inner = v.shape[ids.ndim :]
    width = int(np.prod(inner, dtype=np.int64))
    rows = v.reshape((ids.size, width))
    parts: list[list[list[bytes]]] = [[[] for _ in range(width)] for _ in range(n)]
    for i, seg in enumerate(ids.ravel().tolist()):
        for j, s in enumerate(rows[i].tolist()):
            parts[seg][j].append(s)
    sep = _bytes(separator)
    flat = [sep.join(p) for seg in parts for p in seg]
    return StringTensor(_objects(flat, (n, *inner)))


# -- splitting ---------------------------------------------------------------------
def split(input, sep=None, maxsplit=-1, name=None):  # noqa: A002
    """Splits each string at `sep` (runs of ASCII whitespace when None): a
    RaggedTensor with one more dimension (a vector for a scalar input)."""
    del name
    s = None if sep is None or _bytes(sep) == b"" else _bytes(sep)
    limit = -1 if maxsplit is None else int(maxsplit)
    return _ragged_map(input, lambda x: x.split(s, limit), "StringSplitV2")


def bytes_split(input, name=None):  # noqa: A002
    """Each string as a list of one-byte strings (ragged), as TF's."""
    del name
    return _ragged_map(
        input, lambda x: [x[i : i + 1] for i in range(builtin_len(x))], "BytesSplit"
    )


def ngrams(
    data,
    ngram_width,
    separator=" ",
    pad_values=None,
    padding_width=None,
    preserve_short_sequences=False,
    name=None,
):
    """The n-grams of each row (the last axis) of `data`, joined by `separator`,
    as TF's `StringNGrams`: optional padding, several widths, short sequences
    kept whole with `preserve_short_sequences`. Dense in, dense out; ragged in,
    ragged out."""
    del name
    widths = (
        [int(ngram_width)]
        if np.ndim(ngram_width) == 0
        else [int(w) for w in ngram_width]
    )
    for w in widths:
        if w < 1:
            raise errors.invalid_argument(
                f"ngram_width must be > 0, got: {w}", "StringNGrams"
            )
    if isinstance(pad_values, (list, tuple)):
        if builtin_len(pad_values) != 2:
            raise ValueError("pad_values must be a string, tuple or list.")
        left, right = (_bytes(p) for p in pad_values)
    elif pad_values is not None:
        left = right = _bytes(pad_values)
    else:
        left = right = b""
    if padding_width is not None and padding_width < 1:
        raise ValueError("padding_width must be greater than 0.")
    if padding_width is not None and pad_values is None:
        raise ValueError("pad_values must be provided if padding_width is set.")
    pad = (
        0
        if pad_values is None
        else (-1 if padding_width is None else int(padding_width))
    )
    sep = _bytes(separator)

    def row_ngrams(row: list) -> list:
        out: list = []
        for w in widths:
            out += _ngrams_of(row, w, pad, left, right, sep)
        if preserve_short_sequences and not out and row:
            out = _ngrams_of(
                row, builtin_len(row) + 2 * max(pad, 0), pad, left, right, sep
            )
        return out

    if isinstance(data, RaggedTensor):
        if data.ragged_rank != 1 or isinstance(data.values, RaggedTensor):
            inner = ngrams(
                data.values,
                widths,
                separator,
                pad_values,
                padding_width,
                preserve_short_sequences,
            )
            return data.with_values(inner)
        rows = data.to_list()
        lists = [row_ngrams(r) for r in rows]
        return _ragged_result(lists, (builtin_len(lists),))
    v = _strings_of(data, "StringNGrams")
    if v.ndim == 0:
        raise ValueError("Data must have rank>0")
    rows = (
        v.reshape((-1, v.shape[-1])).tolist()
        if v.shape[-1]
        else [[]] * int(np.prod(v.shape[:-1], dtype=np.int64))
    )
    lists = [row_ngrams(r) for r in rows]
    count = builtin_len(lists[0]) if lists else 0
    return StringTensor(
        _objects([g for row in lists for g in row], v.shape[:-1] + (count,))
    )


def _ngrams_of(row, width, pad, left, right, sep) -> list:
    p = width - 1 if pad < 0 else min(pad, width - 1)
    padded = [left] * p + list(row) + [right] * p
    n = max(0, builtin_len(padded) - width + 1)
    return [sep.join(padded[i : i + width]) for i in range(n)]


# -- regular expressions --------------------------------------------------------------
def regex_full_match(input, pattern, name=None):  # noqa: A002
    """Whether each string matches the RE2 `pattern` entirely (a bool tensor)."""
    del name
    rx = _regex(pattern, "RegexFullMatch")
    return _map(
        input, lambda s: rx.fullmatch(_text(s)) is not None, "RegexFullMatch", np.bool_
    )


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    """Replaces matches of the RE2 `pattern` with `rewrite` (`\\1`..`\\9` groups,
    `\\0` the whole match), every match or (replace_global=False) the first."""
    del name
    rx = _regex(pattern, "RegexReplace")
    template = _rewrite(_bytes(rewrite).decode("utf-8", "surrogateescape"))
    count = 0 if replace_global else 1

    def one(s: bytes) -> bytes:
        out = rx.sub(template, _text(s), count=count)
        return out.encode("utf-8", "surrogateescape")

    return _map(input, one, "RegexReplace")


def _text(s: bytes) -> str:
    # RE2 matches UTF-8 text character by character; bytes that are not
    # UTF-8 pass through unchanged (as lone surrogates while matching).
    return s.decode("utf-8", "surrogateescape")


_RE2_ONLY = re.compile(r"\\[pPCQE]|\(\?P=|\\[1-9]|\(\?<?[=!]|\\[zZ]")


def _regex(pattern, op_name: str) -> re.Pattern:
    text = _bytes(pattern).decode("utf-8", "surrogateescape")
    found = _RE2_ONLY.search(text)
    if found:
        raise NotImplementedError(
            f"jaxtape.strings regex pattern {text!r} uses {found.group()!r}, where "
            "RE2 (TF's engine) and Python's `re` differ (Unicode classes, \\C, "
            "\\Q..\\E, back-references, look-arounds). Rewrite the pattern."
        )
    try:
        return re.compile(text, re.ASCII)  # (RE2's \w, \d, \s, \b are ASCII)
    except re.error as e:
        raise errors.invalid_argument(
            f"Invalid pattern: {text}, error: {e}", op_name
        ) from None


def _rewrite(rewrite: str):
    """RE2's rewrite string as a function of a match (`\\0`-`\\9`, `\\\\`)."""
    pieces: list = []
    i = 0
    while i < builtin_len(rewrite):
        c = rewrite[i]
        if c == "\\":
            nxt = rewrite[i + 1 : i + 2]
            if nxt.isdigit():
                pieces.append(int(nxt))
            elif nxt == "\\":
                pieces.append("\\")
            else:
                raise errors.invalid_argument(
                    f"Invalid rewrite pattern: {rewrite}", "RegexReplace"
                )
            i += 2
            continue
        pieces.append(c)
        i += 1

    def apply(m: re.Match) -> str:
        return "".join(p if type(p) is str else (m.group(p) or "") for p in pieces)

    return apply


# -- numbers and strings --------------------------------------------------------------
def as_string(
    input,  # noqa: A002
    precision=-1,
    scientific=False,
    shortest=False,
    width=-1,
    fill="",
    name=None,
):
    """Formats each number as a string with C's printf rules, as TF's `AsString`:
    floats `%f` (6 decimals) unless `precision`/`scientific` (`%e`)/`shortest`
    (`%g`), bools `true`/`false`, complex `(re,im)`, `width` padded with `fill`
    (one of ' ', '0', '+', '-', '#')."""
    del name
    if is_string(input):
        return as_strings(input)
    if isinstance(input, RaggedTensor):
        return input.with_flat_values(
            as_string(input.flat_values, precision, scientific, shortest, width, fill)
        )
    v = _host(input, "as_string")
    dt = dtypes.as_dtype(v.dtype)
    if scientific and shortest:
        raise errors.invalid_argument(
            "Cannot select both scientific and shortest notation", "AsString"
        )
    if builtin_len(fill) > 1:
        raise errors.invalid_argument(
            "Fill string must be one or fewer characters", "AsString"
        )
    if fill and fill not in " +-0#":
        raise errors.invalid_argument(
            f'Fill argument not supported: "{fill}"', "AsString"
        )
    is_float = dt.is_floating or dt.is_complex
    if not is_float and (scientific or shortest or precision > -1):
        what = "scientific" if scientific else "shortest" if shortest else "precision"
        raise errors.invalid_argument(
            f"Cannot select {what} notation for datatype: {dt.name}"
            if what != "precision"
            else f"precision not supported for datatype {dt.name}",
            "AsString",
        )
    spec = "%" + fill + (str(width) if width > -1 else "")
    if is_float:
        spec += f".{precision}" if precision > -1 else ""
        spec += "e" if scientific else "g" if shortest else "f"
    if dt.is_bool:
        out = [(spec + "s") % ("true" if b else "false") for b in v.ravel().tolist()]
    elif dt.is_complex:
        out = [f"({spec % z.real},{spec % z.imag})" for z in v.ravel().tolist()]
    elif is_float:
        out = [spec % float(x) for x in v.ravel().tolist()]
    else:
        out = [(spec + "d") % int(x) for x in v.ravel().tolist()]
    return StringTensor(_objects([s.encode() for s in out], v.shape))


_TO_NUMBER = {
    "float32": np.float32,
    "float64": np.float64,
    "int32": np.int32,
    "int64": np.int64,
    "uint32": np.uint32,
    "uint64": np.uint64,
}
_INT_TEXT = re.compile(rb"\s*[+-]?[0-9]+\s*")


def to_number(input, out_type=dtypes.float32, name=None):  # noqa: A002
    """Parses each string as a number of `out_type` (float32, float64, int32,
    int64, uint32 or uint64); text that does not parse, or an integer out of
    range, is TF's InvalidArgumentError."""
    del name
    dt = dtypes.as_dtype(out_type)
    np_type = _TO_NUMBER.get(dt.name)
    if np_type is None:
        raise errors.invalid_argument(
            f"Value for attr 'out_type' of {dt.name} is not in the list of allowed "
            "values: float, double, int32, int64, uint32, uint64",
            "StringToNumber",
        )
    parse = _parse_float if np.dtype(np_type).kind == "f" else _parse_int
    info = None if np.dtype(np_type).kind == "f" else np.iinfo(np_type)

    def one(s: bytes):
        value = parse(s)
        if value is None or (info is not None and not info.min <= value <= info.max):
            raise errors.invalid_argument(
                "StringToNumberOp could not correctly convert string: "
                f"{s.decode('utf-8', 'replace')}",
                "StringToNumber",
            )
        return value

    return _map(input, one, "StringToNumber", np_type)


def _parse_int(s: bytes):
    return int(s) if _INT_TEXT.fullmatch(s) else None


def _parse_float(s: bytes):
    text = s.strip().decode("ascii", "replace")
    if not text or "_" in text:
        return None
    try:
        return float(text)
    except ValueError:
        pass
    if not text.lstrip("+-").lower().startswith("0x"):
        return None
    try:  # C's strtod reads hexadecimal floats too
        return float.fromhex(text)
    except (ValueError, OverflowError):
        return None


# -- hashing ---------------------------------------------------------------------------
def to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002
    """`Fingerprint64(s) % num_buckets` (FarmHash, TF's values exactly), int64."""
    del name
    n = _buckets(num_buckets, "StringToHashBucketFast")
    return _map(
        input, lambda s: fingerprint64(s) % n, "StringToHashBucketFast", np.int64
    )


def to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002
    """`SipHash-2-4(key, s) % num_buckets`, TF's keyed hash (two uint64 keys)."""
    del name
    n = _buckets(num_buckets, "StringToHashBucketStrong")
    if builtin_len(key) != 2:
        raise errors.invalid_argument(
            f"Key must have 2 elements, got {builtin_len(key)}",
            "StringToHashBucketStrong",
        )
    k0, k1 = (int(k) & _M64 for k in key)
    return _map(
        input, lambda s: siphash(k0, k1, s) % n, "StringToHashBucketStrong", np.int64
    )


def to_hash_bucket(input, num_buckets, name=None):  # noqa: A002
    """`Hash64(s) % num_buckets`, TF's deprecated legacy hash (a MurmurHash2
    variant seeded 0xDECAFCAFFE). Prefer `to_hash_bucket_fast`."""
    del name
    n = _buckets(num_buckets, "StringToHashBucket")
    return _map(input, lambda s: _hash64(s) % n, "StringToHashBucket", np.int64)


def _buckets(num_buckets, op_name: str) -> int:
    n = int(num_buckets)
    if n < 1:
        raise errors.invalid_argument(
            f"Value for attr 'num_buckets' of {n} must be at least minimum 1", op_name
        )
    return n


def _hash64(data: bytes, seed: int = 0xDECAFCAFFE) -> int:
    """TF's `Hash64` (tensorflow/core/lib/hash/hash.cc)."""
    m, r = 0xC6A4A7935BD1E995, 47
    n = builtin_len(data)
    h = (seed ^ (n * m)) & _M64
    i = 0
    while n - i >= 8:
        k = int.from_bytes(data[i : i + 8], "little")
        k = (k * m) & _M64
        k ^= k >> r
        k = (k * m) & _M64
        h ^= k
        h = (h * m) & _M64
        i += 8
    rest = data[i:]
    if rest:
        for j in range(builtin_len(rest) - 1, -1, -1):
            h ^= rest[j] << (8 * j)
        h = (h * m) & _M64
    h ^= h >> r
    h = (h * m) & _M64
    h ^= h >> r
    return h


def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & _M64


def siphash(k0: int, k1: int, data: bytes) -> int:
    """SipHash-2-4 of `data` under the key `(k0, k1)`."""
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573

    def rounds(v0, v1, v2, v3, n):
        for _ in range(n):
            v0 = (v0 + v1) & _M64
            v1 = _rotl(v1, 13) ^ v0
            v0 = _rotl(v0, 32)
            v2 = (v2 + v3) & _M64
            v3 = _rotl(v3, 16) ^ v2
            v0 = (v0 + v3) & _M64
            v3 = _rotl(v3, 21) ^ v0
            v2 = (v2 + v1) & _M64
            v1 = _rotl(v1, 17) ^ v2
            v2 = _rotl(v2, 32)
        return v0, v1, v2, v3

    n = builtin_len(data)
    end = n - n % 8
    for i in range(0, end, 8):
        m = int.from_bytes(data[i : i + 8], "little")
        v3 ^= m
        v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
        v0 ^= m
    last = ((n & 0xFF) << 56) | int.from_bytes(data[end:], "little")
    v3 ^= last
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
    v0 ^= last
    v2 ^= 0xFF
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


# -- format ----------------------------------------------------------------------------
def format(template, inputs, placeholder="{}", summarize=3, name=None):  # noqa: A001
    """Fills each `placeholder` of `template` with a tensor printed as
    `jaxtape.print` prints it (strings quoted, at most `summarize` entries at
    each end of a dimension; -1 for all), as TF's `StringFormat`."""
    del name
    if isinstance(inputs, (list, tuple)):
        items = list(inputs)
    elif isinstance(inputs, (Tensor, RaggedTensor)):
        items = [inputs]
    else:  # (TF's error for a Python value that is not a list)
        raise TypeError(f"object of type '{type(inputs).__name__}' has no len()")
    parts = template.split(placeholder)
    if builtin_len(parts) - 1 != builtin_len(items):
        raise ValueError(
            f"The template expects {builtin_len(parts) - 1} tensors, but the inputs "
            f"only has {builtin_len(items)}. Please ensure the number of "
            "placeholders in template matches inputs length."
        )
    out = [parts[0]]
    for item, text in zip(items, parts[1:]):
        out.append(_summarize(item, summarize))
        out.append(text)
    return StringTensor(_objects(["".join(out).encode("utf-8")], ()))


def _summarize(x, summarize: int) -> str:
    """One tensor as `jaxtape.print` writes it (TF's `SummarizeValue`)."""
    if isinstance(x, StringTensor) or (not isinstance(x, Tensor) and is_string(x)):
        v = as_strings(x)._v
    else:
        v = _host(x, "format")
    return misc_ops._summarize_value(v, summarize)


# -- Unicode -----------------------------------------------------------------------
_ENCODINGS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}
_BAD_CHAR = 0xD800  # a lone surrogate: never decoded from valid text


def _codec(encoding: str, op_name: str) -> str:
    codec = _ENCODINGS.get(str(encoding).upper())
    if codec is None:
        raise NotImplementedError(
            f"jaxtape.strings supports the encodings {sorted(_ENCODINGS)} "
            f"(TF also accepts other ICU encodings); got {encoding!r}."
        )
    return codec


def _check_errors(errors_arg: str) -> None:
    if errors_arg not in ("strict", "replace", "ignore"):
        raise ValueError(
            f"errors must be one of 'strict', 'replace' or 'ignore'; got {errors_arg!r}"
        )


def _mark_bad(error: UnicodeError):
    if not isinstance(error, UnicodeDecodeError):
        raise error
    _bad_spans.append((error.start, error.end))
    return chr(_BAD_CHAR), error.end


_bad_spans: list = []
codecs.register_error("jaxtape_strings_mark", _mark_bad)


def _decode(
    s: bytes, codec: str, errors_arg: str, replacement: int, control: bool, op: str
) -> tuple[list[int], list[int]]:
    """TF's decoding: the code points of `s` and each one's byte offset."""
    del _bad_spans[:]
    text = s.decode(codec, "jaxtape_strings_mark")
    spans = iter(list(_bad_spans))
    points: list[int] = []
    offsets: list[int] = []
    pos = 0
    for ch in text:
        c = ord(ch)
        if c == _BAD_CHAR:
            start, end = next(spans)
            pos = start
            if errors_arg == "strict":
                raise errors.invalid_argument("Invalid formatting on input string", op)
            if errors_arg == "replace":
                points.append(replacement)
                offsets.append(pos)
            pos = end
            continue
        size = builtin_len(ch.encode(codec))
        if control and c < 0x20:
            c = replacement
        points.append(c)
        offsets.append(pos)
        pos += size
    return points, offsets


def _decoder(input_encoding, errors, replacement_char, replace_control_characters, op):
    codec = _codec(input_encoding, op)
    _check_errors(errors)
    return lambda s: _decode(
        s, codec, errors, int(replacement_char), bool(replace_control_characters), op
    )


def unicode_decode(
    input,  # noqa: A002
    input_encoding,
    errors="replace",  # noqa: F811 - TF's argument name
    replacement_char=65533,
    replace_control_characters=False,
    name=None,
):
    """Each string's Unicode code points (int32), ragged. Invalid bytes give
    `replacement_char` (errors='replace'), nothing ('ignore'), or TF's
    InvalidArgumentError ('strict')."""
    del name
    dec = _decoder(
        input_encoding,
        errors,
        replacement_char,
        replace_control_characters,
        "UnicodeDecode",
    )
    return _ragged_map(input, lambda s: dec(s)[0], "UnicodeDecode", np.int32)


def unicode_decode_with_offsets(
    input,  # noqa: A002
    input_encoding,
    errors="replace",
    replacement_char=65533,
    replace_control_characters=False,
    name=None,
):
    """`unicode_decode`, and each code point's starting byte offset (int64)."""
    del name
    dec = _decoder(
        input_encoding,
        errors,
        replacement_char,
        replace_control_characters,
        "UnicodeDecodeWithOffsets",
    )
    op = "UnicodeDecodeWithOffsets"
    return (
        _ragged_map(input, lambda s: dec(s)[0], op, np.int32),
        _ragged_map(input, lambda s: dec(s)[1], op, np.int64),
    )


def unicode_split(
    input,  # noqa: A002
    input_encoding,
    errors="replace",
    replacement_char=65533,
    name=None,
):
    """Each string's characters, each encoded in `input_encoding` (ragged)."""
    del name
    codec = _codec(input_encoding, "UnicodeSplit")
    dec = _decoder(input_encoding, errors, replacement_char, False, "UnicodeDecode")
    return _ragged_map(
        input,
        lambda s: [_encode_point(c, codec, "replace", 65533) for c in dec(s)[0]],
        "UnicodeSplit",
    )


def unicode_split_with_offsets(
    input,  # noqa: A002
    input_encoding,
    errors="replace",
    replacement_char=65533,
    name=None,
):
    """`unicode_split`, and each character's starting byte offset (int64)."""
    del name
    codec = _codec(input_encoding, "UnicodeSplit")
    dec = _decoder(input_encoding, errors, replacement_char, False, "UnicodeDecode")
    return (
        _ragged_map(
            input,
            lambda s: [_encode_point(c, codec, "replace", 65533) for c in dec(s)[0]],
            "UnicodeSplit",
        ),
        _ragged_map(input, lambda s: dec(s)[1], "UnicodeSplit", np.int64),
    )


def _encode_point(c: int, codec: str, errors_arg: str, replacement: int) -> bytes:
    if 0 <= c <= 0x10FFFF and not 0xD800 <= c <= 0xDFFF:
        return chr(c).encode(codec)
    if errors_arg == "strict":
        raise errors.invalid_argument(f"Invalid code point: {c}", "UnicodeEncode")
    if errors_arg == "ignore":
        return b""
    return chr(replacement).encode(codec)


def unicode_encode(
    input,  # noqa: A002
    output_encoding,
    errors="replace",
    replacement_char=65533,
    name=None,
):
    """Encodes code points (the last dimension, dense or ragged) as strings: one
    rank less than `input`. Invalid code points give `replacement_char`
    (errors='replace'), nothing ('ignore') or InvalidArgumentError ('strict')."""
    del name
    codec = _codec(output_encoding, "UnicodeEncode")
    _check_errors(errors)
    rep = int(replacement_char)

    def enc(points) -> bytes:
        return b"".join(_encode_point(int(c), codec, errors, rep) for c in points)

    if isinstance(input, RaggedTensor):
        if isinstance(input.values, RaggedTensor):
            return input.with_values(
                unicode_encode(input.values, output_encoding, errors, replacement_char)
            )
        rows = input.to_list()
        return StringTensor(_objects([enc(r) for r in rows], (builtin_len(rows),)))
    v = _host(input, "unicode_encode")
    if v.ndim == 0:
        raise ValueError("Rank of input must be at least 1.")
    rows = v.reshape((-1, v.shape[-1])).tolist()
    return StringTensor(_objects([enc(r) for r in rows], v.shape[:-1]))


def unicode_transcode(
    input,  # noqa: A002
    input_encoding,
    output_encoding,
    errors="replace",
    replacement_char=65533,
    replace_control_characters=False,
    name=None,
):
    """Re-encodes each string from `input_encoding` to `output_encoding`,
    invalid input handled by `errors` as in `unicode_decode`."""
    del name
    dec = _decoder(
        input_encoding,
        errors,
        replacement_char,
        replace_control_characters,
        "UnicodeTranscode",
    )
    codec = _codec(output_encoding, "UnicodeTranscode")
    return _map(
        input,
        lambda s: b"".join(
            _encode_point(c, codec, "replace", 65533) for c in dec(s)[0]
        ),
        "UnicodeTranscode",
    )


def unicode_script(input, name=None):  # noqa: A002
    """Each code point's ICU script code (`UScriptCode`: 25 Latin, 8 Cyrillic,
    17 Han, 0 Common, 1 Inherited...), -1 for an invalid code point."""
    del name
    if isinstance(input, RaggedTensor):
        return input.with_flat_values(unicode_script(input.flat_values))
    v = _host(input, "unicode_script")
    if v.dtype != np.int32:
        raise errors.invalid_argument(
            f"cannot compute UnicodeScript as input #0(zero-based) was expected to "
            f"be a int32 tensor but is a {dtypes.as_dtype(v.dtype).name} tensor",
            "UnicodeScript",
        )
    out = [script_of(int(c)) for c in v.ravel().tolist()]
    return convert_to_tensor(np.asarray(out, np.int32).reshape(v.shape))
