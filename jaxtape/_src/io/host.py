"""Host values for `tf.io` ops: byte strings in, strings and numbers out.

`tf.io` ops read files, protos and encodings: host work, as in TF (whose
kernels run on the CPU). Inputs that are strings arrive as `str`/`bytes`,
(nested) lists of them, NumPy string or object arrays, or string tensors;
they become NumPy object arrays of `bytes`. String results are
`StringTensor`s (dtype `jaxtape.string`), as TF's string tensors. Numbers come
in as Tensors (never traced ones: a traced input raises NotImplementedError
naming the op) and go out as Tensors.

Layer L4 (`io`): imports `core`, `ops` and `structured`.
"""

from __future__ import annotations

from typing import Any

import jax.core
import numpy as np

from jaxtape._src.core import dtypes
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.ops.creation_ops import constant
from jaxtape._src.structured.strings import StringTensor, convert, is_string

_OBJECT = np.dtype(object)


def _item(x, what: str) -> bytes:
    if isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode()
    if isinstance(x, np.bytes_):
        return bytes(x)
    raise TypeError(f"{what}: expected a string (bytes or str), got {x!r}.")


def byte_strings(x: Any, what: str) -> np.ndarray:
    """`x` as a NumPy object array of `bytes` (any shape); TypeError when
    `x` holds something other than strings."""
    if isinstance(x, StringTensor):
        return x.value
    if isinstance(x, (list, tuple)) and is_string(x):  # maybe of StringTensors
        return convert(x).value
    to_numpy = getattr(x, "numpy", None)
    if callable(to_numpy) and not isinstance(x, np.ndarray):
        x = to_numpy()  # a numeric Tensor or Variable: refused below
    if isinstance(x, (bytes, str, np.bytes_, np.str_)):
        out = np.empty((), _OBJECT)
        out[()] = _item(x.item() if isinstance(x, np.generic) else x, what)
        return out
    array = np.asarray(x, dtype=_OBJECT)
    flat = [_item(v, what) for v in array.reshape(-1).tolist()]
    out = np.empty(len(flat), _OBJECT)
    out[:] = flat
    return out.reshape(array.shape)


def scalar_bytes(x: Any, what: str, op_name: str) -> bytes:
    """The one string in a scalar string input; TF's InvalidArgumentError
    for any other rank."""
    from jaxtape._src.core import errors

    array = byte_strings(x, what)
    if array.ndim:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Input {what} tensor must be scalar, but had shape: "
            f"{list(array.shape)} [Op:{op_name}]",
        )
    return bytes(array[()])


def strings_out(array) -> StringTensor:
    """A string result as a StringTensor: an object array of bytes, or
    `bytes` (a scalar), or a list of bytes."""
    if isinstance(array, bytes):
        out = np.empty((), _OBJECT)
        out[()] = array
        return StringTensor(out)
    if not isinstance(array, np.ndarray) or array.dtype != _OBJECT:
        flat = list(array) if not isinstance(array, np.ndarray) else array.tolist()
        out = np.empty(len(flat), _OBJECT)
        out[:] = flat
        return StringTensor(out)
    return StringTensor(array)


def is_strings(x) -> bool:
    """Whether `x` is a string value (a StringTensor, str/bytes, ...)."""
    return is_string(x)


def host_numbers(x: Any, op_name: str) -> np.ndarray:
    """A numeric input as a NumPy array; a traced one raises."""
    value = to_value(x)
    if isinstance(value, jax.core.Tracer):
        raise NotImplementedError(
            f"{op_name} runs on the host: its input cannot be a traced value "
            "inside `jaxtape.function`. Call it outside the function (or on "
            "values known when tracing)."
        )
    return np.asarray(value)


def numbers_out(array: np.ndarray, dtype=None):
    """A numeric result as a Tensor (TF's dtype kept: int64 stays int64)."""
    array = np.asarray(array)
    return constant(array, dtype=dtypes.as_dtype(dtype or array.dtype))


def map_strings(fn, strings: np.ndarray) -> np.ndarray:
    """`fn` applied to each string of an object array (same shape)."""
    out = np.empty(strings.shape, _OBJECT)
    flat = out.reshape(-1)
    for i, s in enumerate(strings.reshape(-1).tolist()):
        flat[i] = fn(s)
    return out
