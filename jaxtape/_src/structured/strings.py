"""`StringTensor`: TF's `tf.string` tensors, host arrays of byte strings.

Layer L2 (`structured/`): imports `core` and `ops`. A StringTensor is a `Tensor`
whose value is a NumPy object array of Python `bytes` (TF stores `str` as
UTF-8), on the host: XLA has no strings. It registers with the dispatcher
(`dispatch.register_strings`), so a string input to any op (a StringTensor,
`str`/`bytes`, a list of them, a NumPy string array) reaches `_dispatch_strings`:

- the ops TF runs on strings that only move elements (reshape, gather,
  concat, transpose, slicing, `where`, tile, roll, repeat, scatter updates,
  ...) run as they are on int32 *codes* (each string's position), and the
  codes map back to strings, so their argument checks and errors are the
  numeric op's own;
- `equal`/`not_equal`/`unique` run on canonical codes (one per distinct
  string); `add` concatenates (`np` object add); `fill`, `pad`,
  `zeros_like` (empty strings) are host code; `shape`/`size`/`rank` read
  the codes;
- any other op raises TF's `InvalidArgumentError` ("Value for attr 'T' of
  string is not in the list of allowed values"), `cast` TF's
  `UnimplementedError`, `searchsorted` TF's `NotFoundError`; a Python number
  next to strings is TF's conversion TypeError.

Strings carry no gradient: on a tape they are constants. Inside
`jaxtape.function` they are static values (each distinct value traces once);
an op that would need a traced number in a string result raises
NotImplementedError.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.core
import numpy as np

from jaxtape._src.core import context, dispatch, dtypes, errors
from jaxtape._src.core.device import device_name
from jaxtape._src.core.dispatch import OpInfo, StringInput
from jaxtape._src.core.tensor import Tensor, _eager_only
from jaxtape._src.ops import math_ops

_OBJECT = np.dtype(object)
_CODE = np.dtype(np.int32)


class StringTensor(Tensor):
    """A tensor of byte strings (dtype `jaxtape.string`), TF's string `tf.Tensor`.

    Made by `jaxtape.constant("text")`, `convert_to_tensor`, `jaxtape.strings`
    ops and `jaxtape.data` string elements. `numpy()` gives an object array of
    `bytes` (`bytes` for a scalar), as TF's.

    >>> jaxtape.constant(["a", "b"])
    <jaxtape.Tensor: shape=(2,), dtype=string, numpy=array([b'a', b'b'], dtype=object)>

    Differences from TensorFlow: the value lives on the host only (`device`
    is always the CPU), so string ops never run inside a compiled program.
    """

    __slots__ = ()
    _v: Any  # an object ndarray of bytes

    def __init__(self, value: np.ndarray) -> None:
        self._v = value

    @property
    def _value(self) -> Any:
        return self._v

    value = property(lambda self: self._v, doc="The object array of bytes.")

    @property
    def device(self) -> str:
        return device_name(jax.devices("cpu")[0])

    @_eager_only
    def numpy(self) -> Any:
        """The strings as a NumPy object array of `bytes` (`bytes` for rank 0)."""
        out = self._v.copy()
        return out[()] if out.ndim == 0 else out

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return self._v if dtype is None else self._v.astype(dtype)

    def __jax_array__(self) -> Any:
        raise TypeError(
            "A string tensor (dtype string) has no jax.Array: strings live on the "
            "host. Map them to numbers first (`jaxtape.strings.to_number`, "
            "`jaxtape.strings.to_hash_bucket_fast`, a `StringLookup` layer)."
        )

    def __bool__(self) -> bool:
        return bool(self._v)

    # `==`/`!=` element-wise, as a Tensor's; False/True for a value that is no
    # tensor-like at all (None, a sentinel object), so containers compare.
    def __eq__(self, other: object) -> Any:
        if not isinstance(other, _COMPARABLE):
            return False
        return Tensor.__eq__(self, other)

    def __ne__(self, other: object) -> Any:
        if not isinstance(other, _COMPARABLE):
            return True
        return Tensor.__ne__(self, other)

    __hash__ = Tensor.__hash__

    def __iter__(self) -> Any:
        # (on the host: each row at once, not a dispatched slice per row)
        if not self._v.shape:
            raise TypeError("Cannot iterate over a scalar tensor.")
        for i in range(self._v.shape[0]):
            yield StringTensor(self._v[i : i + 1].reshape(self._v.shape[1:]))

    def __radd__(self, other: Any) -> Any:
        # (Tensor's `__radd__` runs `self + other`: string `+` does not commute)
        return math_ops._add(other, self)

    def __float__(self) -> float:
        raise TypeError("float() argument must be a number, not a string tensor")

    def __int__(self) -> int:
        raise TypeError("int() argument must be a number, not a string tensor")


_COMPARABLE = (Tensor, str, bytes, list, tuple, np.ndarray, np.generic, int, float)


# -- conversion ----------------------------------------------------------------------
def _encode(x):
    """`x` with every string as `bytes` (UTF-8 for `str`), lists as lists."""
    t = type(x)
    if t is bytes:
        return x
    if t is str:
        return x.encode("utf-8")
    if t is list or t is tuple:
        return [_encode(v) for v in x]
    if isinstance(x, str):  # np.str_
        return str(x).encode("utf-8")
    if isinstance(x, bytes):  # np.bytes_
        return bytes(x)
    if isinstance(x, StringTensor):
        return x._v.tolist()
    return _NotString(x)


class _NotString:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _bytes_array(value: Any) -> np.ndarray:
    """TF's conversion of a string value: an object array of bytes.

    Raises TF's errors: a number among strings is a mixed sequence
    (ValueError), ragged nesting a non-rectangular one (ValueError), and a
    value with no string at all cannot be a string tensor (TypeError).
    """
    if isinstance(value, StringTensor):
        return value._v
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "S":
            return _object_array(value.ravel().tolist(), value.shape)
        if value.dtype.kind == "U":
            return _object_array(
                [s.encode("utf-8") for s in value.ravel().tolist()], value.shape
            )
        if value.dtype.kind != "O":
            raise _cannot_convert(value)
        value = value.tolist()
    enc = _encode(value)
    if type(enc) is _NotString:
        raise _cannot_convert(value)
    out = np.empty(0, _OBJECT)
    if type(enc) is list:
        shape = _rect_shape(enc, value)
        out = _object_array(_flat(enc), shape)
    else:
        out = np.empty((), _OBJECT)
        out[()] = enc
    return out


def _rect_shape(enc: list, value) -> tuple:
    """The shape of a nested list of bytes, or TF's errors."""
    leaves: list = []
    shapes: set = set()

    def walk(x, depth_shape):
        if type(x) is list:
            for v in x:
                walk(v, (*depth_shape, len(x)))
            if not x:
                shapes.add((*depth_shape, 0))
        else:
            leaves.append(x)
            shapes.add(depth_shape)

    walk(enc, ())
    if any(type(v) is _NotString for v in leaves):
        if all(type(v) is _NotString for v in leaves):
            raise _cannot_convert(value)
        raise ValueError(
            "Can't convert Python sequence with mixed types to Tensor. "
            f"Received: {dispatch._short(value)}"
        )
    if len(shapes) > 1:
        raise ValueError(
            "Can't convert non-rectangular Python sequence to Tensor. Every row of "
            "a nested list needs the same length; pad the rows, or use "
            f"`jaxtape.ragged.constant`. Received: {dispatch._short(value)}"
        )
    return shapes.pop() if shapes else (0,)


def _flat(x) -> list:
    if type(x) is list:
        out: list = []
        for v in x:
            out.extend(_flat(v))
        return out
    return [x]


def _object_array(flat: Sequence, shape: tuple) -> np.ndarray:
    out = np.empty(len(flat), _OBJECT)
    out[:] = list(flat) if flat else []
    return out.reshape(shape)


def _cannot_convert(value) -> TypeError:
    return TypeError(
        f"Cannot convert {dispatch._short(value)} to EagerTensor of dtype string. "
        "Format numbers as strings with `jaxtape.strings.as_string`."
    )


def convert(value: Any, dtype: Any = None) -> StringTensor:
    """`constant`/`convert_to_tensor` of a string value (or of dtype string)."""
    if dtype is not None and dtypes.as_dtype(dtype) != dtypes.string:
        dt = dtypes.as_dtype(dtype)
        if isinstance(value, StringTensor):
            raise ValueError(
                f"Tensor conversion requested dtype {dt.name} for Tensor with dtype "
                f"string: {value!r}. Parse strings with `jaxtape.strings.to_number`."
            )
        raise TypeError(
            f"Cannot convert {dispatch._short(value)} to EagerTensor of dtype "
            f"{dispatch._tf_name(dt.as_numpy_dtype)}. Parse strings with "
            "`jaxtape.strings.to_number`."
        )
    if isinstance(value, StringTensor):
        return value
    if isinstance(value, Tensor) or isinstance(
        value, context.hooks.variable_type or ()
    ):
        raise _cannot_convert(value)
    return StringTensor(_bytes_array(value))


def is_string(x) -> bool:
    """Whether `x` is a string value: a StringTensor, str/bytes, a NumPy string
    array, or a (nested) list whose first leaf is a string."""
    if isinstance(x, (StringTensor, str, bytes)):
        return True
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "SU" or (
            x.dtype.kind == "O" and x.size > 0 and isinstance(x.flat[0], (str, bytes))
        )
    while type(x) is list or type(x) is tuple:
        if not x:
            return False
        x = x[0]
    return isinstance(x, (str, bytes, StringTensor))


def as_strings(x) -> StringTensor:
    """`x` (a string value) as a StringTensor (TF's conversion errors otherwise)."""
    if isinstance(x, StringTensor):
        return x
    return convert(x)


def host_numbers(x, op_name: str) -> np.ndarray:
    """A numeric argument of a string op, as a concrete NumPy array."""
    from jaxtape._src.structured.sparse import host_array  # (a peer module)

    return host_array(x, op_name, "a numeric argument")


# -- the generic ops ------------------------------------------------------------------
def _string_positions(info: OpInfo, ins: tuple) -> list[bool]:
    """Which inputs are strings: all of `same_dtype`'s, else the string values."""
    same = info.same_dtype
    if same is True:
        return [a is not None for a in ins]
    out = [is_string(a) for a in ins]
    if same:
        for i in same:
            if i < len(ins) and ins[i] is not None:
                out[i] = True
    return out


def _encoded(info: OpInfo, ins: tuple, canonical: bool) -> tuple[tuple, np.ndarray]:
    """The inputs with strings as int32 codes, and the table from codes back to
    strings: each string's position, or (`canonical`, for comparisons) one
    code per distinct string."""
    where = _string_positions(info, ins)
    _check_kinds(info, ins, where)
    arrays = [as_strings(a)._v for a, s in zip(ins, where) if s]
    flat = np.concatenate([a.ravel() for a in arrays]) if arrays else np.empty(0)
    if canonical and flat.size:
        table, codes = np.unique(flat, return_inverse=True)
    else:
        table, codes = flat, np.arange(flat.size)
    out = []
    it = iter(arrays)
    offset = 0
    for a, s in zip(ins, where):
        if not s:
            out.append(a)
            continue
        arr = next(it)
        part = np.asarray(codes[offset : offset + arr.size], _CODE).reshape(arr.shape)
        offset += arr.size
        out.append(Tensor(jax.numpy.asarray(part)))
    return tuple(out), np.asarray(table, _OBJECT)


def _check_kinds(info: OpInfo, ins: tuple, where: list[bool]) -> None:
    """TF's errors for strings mixed with numbers in an op's same-dtype inputs:
    a numeric tensor next to a string tensor is InvalidArgumentError; a Python
    string next to a numeric tensor (`x == "a"`) cannot convert to its dtype."""
    picked = [(i, a) for i, (a, s) in enumerate(zip(ins, where)) if s]
    numeric = [(i, a) for i, a in picked if _is_numeric_tensor(a)]
    if not numeric:
        return
    if any(isinstance(a, StringTensor) for _, a in picked):
        i, a = numeric[0]
        raise _wrong_dtype(info, i, a)
    j, text = next((i, a) for i, a in picked if not _is_numeric_tensor(a))
    want = dispatch._tf_name(numeric[0][1].dtype.as_numpy_dtype)
    if info.name in ("AddV2", "Add"):  # (TF's `+` converts it to a string tensor)
        raise errors.invalid_argument(
            f"cannot compute {info.name} as input #{j}(zero-based) was expected to "
            f"be a {want} tensor but is a string tensor",
            info.name,
        )
    raise TypeError(
        f"Cannot convert {dispatch._short(text)} to EagerTensor of dtype {want}"
    )


def _is_numeric_tensor(a) -> bool:
    return (
        isinstance(a, Tensor)
        and not isinstance(a, StringTensor)
        or isinstance(a, context.hooks.variable_type or ())
    )


def _wrong_dtype(info: OpInfo, i: int, a) -> errors.InvalidArgumentError:
    return errors.invalid_argument(
        f"cannot compute {info.name} as input #{i}(zero-based) was expected to be a "
        f"string tensor but is a {dispatch._tf_name(a.dtype.as_numpy_dtype)} tensor. "
        "Format numbers with `jaxtape.strings.as_string`, or parse the strings "
        "with `jaxtape.strings.to_number`.",
        info.name,
    )


def _decoded(out, table: np.ndarray, op_name: str):
    """Codes (a Tensor, or a list/tuple of them) back to StringTensors."""
    if isinstance(out, (list, tuple)):
        items = [_decoded(o, table, op_name) for o in out]
        return type(out)(*items) if hasattr(out, "_fields") else type(out)(items)
    value = out._value
    if isinstance(value, jax.core.Tracer):
        raise NotImplementedError(
            f"{op_name} on strings with a traced argument inside jaxtape.function: "
            "strings live on the host, so jaxtape needs the other arguments' "
            "values while tracing. Pass them as Python values, or call the op "
            "outside the function."
        )
    codes = np.asarray(value)
    out = np.empty(codes.shape, _OBJECT)
    if table.size:
        out[...] = table[codes]
    return StringTensor(out)


def _run_coded(info: OpInfo, ins: tuple, params: tuple, canonical: bool = False):
    with jax.ensure_compile_time_eval():  # (concrete codes inside a trace too)
        coded, table = _encoded(info, ins, canonical)
        return dispatch.dispatch(info, coded, params), table


def _moved(info: OpInfo, ins: tuple, params: tuple):
    """An op that only moves elements: run on codes, map back."""
    out, table = _run_coded(info, ins, params)
    return _decoded(out, table, info.name)


def _compared(info: OpInfo, ins: tuple, params: tuple):
    """equal / not_equal: on codes (equal strings have equal codes)."""
    out, _ = _run_coded(info, ins, params, canonical=True)
    return out


def _unique(info: OpInfo, ins: tuple, params: tuple):
    out, table = _run_coded(info, ins, params, canonical=True)
    y, *rest = out
    return (_decoded(y, table, info.name), *rest)


def _metadata(info: OpInfo, ins: tuple, params: tuple):
    """shape / size / rank: the op on the codes."""
    out, _ = _run_coded(info, ins, params)
    return out


def _add(info: OpInfo, ins: tuple, params: tuple) -> StringTensor:
    """TF's `add` of strings: element-wise concatenation, broadcasting."""
    _check_kinds(info, ins, [True] * len(ins))
    x, y = (as_strings(a)._v for a in ins)
    try:
        shape = np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise errors.invalid_argument(
            f"Incompatible shapes: {list(x.shape)} vs. {list(y.shape)}", info.name
        ) from None
    out = np.empty(shape, _OBJECT)
    out[...] = np.add(x, y, dtype=_OBJECT) if shape else x[()] + y[()]
    return StringTensor(out)


def _fill(info: OpInfo, ins: tuple, params: tuple) -> StringTensor:
    (value,) = ins
    (dims,) = params
    v = as_strings(value)._v
    if v.ndim:
        raise errors.invalid_argument(
            f"value must represent a scalar, got shape {list(v.shape)}", "Fill"
        )
    return StringTensor(np.full(tuple(dims), v[()], _OBJECT))


def _zeros_like(info: OpInfo, ins: tuple, params: tuple):
    (x,) = ins
    (dtype,) = params
    v = as_strings(x)._v
    if dtype is not None and dtypes.as_dtype(dtype) != dtypes.string:
        np_dt = dtypes.np_dtype(dtype)
        return Tensor(jax.numpy.zeros(v.shape, np_dt))
    return StringTensor(np.full(v.shape, b"", _OBJECT))


def _pad(info: OpInfo, ins: tuple, params: tuple) -> StringTensor:
    """TF's `pad` of strings: empty strings (or `constant_values`) around."""
    (x,) = ins
    paddings, mode, constant = params
    v = as_strings(x)._v
    pads = np.asarray(paddings, np.int64).reshape(-1, 2)
    if pads.shape[0] != v.ndim or (pads < 0).any():
        raise errors.invalid_argument(
            f"paddings must be a non-negative [{v.ndim}, 2] matrix; got "
            f"{pads.tolist()} for shape {list(v.shape)}.",
            info.name,
        )
    mode = str(mode).upper()
    if mode != "CONSTANT":
        np_mode: Any = {"REFLECT": "reflect", "SYMMETRIC": "symmetric"}.get(mode)
        if np_mode is None:
            raise ValueError(
                f"Value of argument `mode` expected to be one of "
                f'"CONSTANT", "REFLECT", or "SYMMETRIC". Received '
                f"`mode` = {mode}"
            )
        return StringTensor(np.pad(v, pads.tolist(), mode=np_mode))
    fill = (
        b""
        if isinstance(constant, int) and constant == 0
        else as_strings(constant)._v[()]
    )
    out = np.full(tuple(np.add(v.shape, pads.sum(axis=1))), fill, _OBJECT)
    inner = tuple(slice(int(lo), int(lo) + n) for (lo, _), n in zip(pads, v.shape))
    out[inner] = v
    return StringTensor(out)


def _not_found(info: OpInfo, ins: tuple, params: tuple):
    raise errors.NotFoundError(
        None,
        info.name,
        f"Could not find device for node: {info.name}[T=DT_STRING]: TF has no "
        f"string kernel for {info.name}.",
    )


def _cast(info: OpInfo, ins: tuple, params: tuple):
    x = ins[0]
    if isinstance(x, StringTensor) or is_string(x):
        target = next(
            (p for p in params if isinstance(p, (dtypes.DType, np.dtype, type))), None
        )
        if target is not None and dtypes.as_dtype(target) == dtypes.string:
            return as_strings(x)
        name = "?" if target is None else dtypes.as_dtype(target).name
        raise errors.UnimplementedError(
            None,
            None,
            f"Cast string to {name} is not supported. Parse numbers with "
            "`jaxtape.strings.to_number`.",
        )
    return _refuse(info, ins, params)


def _refuse(info: OpInfo, ins: tuple, params: tuple):
    if info.same_dtype:  # a Python number next to strings: TF converts it first
        number = next((a for a in ins if type(a) in (int, float, bool)), None)
        if number is not None:
            raise _cannot_convert(number)
    raise errors.invalid_argument(
        f"Value for attr 'T' of string is not in the list of allowed values for "
        f"{info.name}: strings support moving, comparing (==, !=) and joining "
        "(+) only. Use `jaxtape.strings` ops, or map strings to numbers first "
        "(`jaxtape.strings.to_number`, `to_hash_bucket_fast`, `StringLookup`).",
        info.name,
    )


# By the TF op name jaxtape's op carries.
_HANDLERS: dict[str, Any] = dict.fromkeys(
    """Identity Reshape ExpandDims Squeeze ConcatV2 Pack Unpack Split GatherV2
    GatherNd BooleanMask SelectV2 Tile Transpose Reverse Slice StridedSlice
    BroadcastTo StopGradient Roll ReverseSequence Repeat TensorScatterUpdate
    MatrixTranspose""".split(),
    _moved,
)
_HANDLERS.update(
    Equal=_compared,
    NotEqual=_compared,
    Shape=_metadata,
    Size=_metadata,
    Rank=_metadata,
    Unique=_unique,
    AddV2=_add,
    Add=_add,
    Fill=_fill,
    ZerosLike=_zeros_like,
    Cast=_cast,
    PadV2=_pad,
    SearchSorted=_not_found,
)


def _dispatch_strings(info: OpInfo, ins: tuple, params: tuple):
    return _HANDLERS.get(info.name, _refuse)(info, ins, params)


dispatch.register_strings(StringTensor, _dispatch_strings, convert)

__all__ = ["StringInput", "StringTensor", "as_strings", "convert", "is_string"]
