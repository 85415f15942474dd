"""Tensor creation: `constant`, `convert_to_tensor`, `ones`, `range`, ... Layer L1.

Created tensors are data: they are never tracked by a tape until watched.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import context, device, dtypes, errors
from jaxtape._src.core.dispatch import (
    StringInput,
    registered_conversion,
    string_tensor,
    to_value,
)
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops.array_ops import _dims, _shape


def constant(value, dtype=None, shape=None, name=None) -> Tensor:
    """Creates a constant tensor from a tensor-like value (TF's `tf.constant`).

    Python floats give float32, ints int32, NumPy arrays keep their dtype (and
    are cast to `dtype`, as are Variables; a Tensor of another dtype is a
    TypeError, as in TF). With `shape`, a scalar is broadcast and other values
    are reshaped (the element counts must match).

    >>> jaxtape.constant([1, 2]).dtype
    jaxtape.int32
    """
    np_dt = dtypes.np_dtype(dtype)
    if type(value) is Tensor:
        arr = value._value
        if np_dt is not None and arr.dtype != np_dt:
            raise TypeError(
                f"Expected tensor {np.asarray(arr)} with dtype "
                f"jaxtape.{dtypes.of_array(np_dt).name}, but got dtype "
                f"jaxtape.{value.dtype.name}. Cast it with `jaxtape.cast`."
            )
    elif isinstance(value, context.hooks.variable_type or ()):
        arr = to_value(value)
        if np_dt is not None and arr.dtype != np_dt:
            arr = arr.astype(np_dt)
    elif isinstance(value, Tensor):  # a StringTensor
        out = string_tensor(value, dtype)
        return out if shape is None else constant(out._v.tolist(), dtype, shape)
    else:
        try:
            arr = to_value(value, np_dt)
        except StringInput:  # strings: a host StringTensor (`structured/strings`)
            out = string_tensor(value, dtype)
            if shape is not None:
                out = type(out)(np.array(_constant_shape(out._v, value, shape)))
            return out
    if shape is not None:
        arr = _constant_shape(arr, value, shape)
    return Tensor(device.to_device(arr))


def _constant_shape(arr, value, shape):
    shape = _shape(shape)
    for d in shape:
        if d < 0:
            raise ValueError(f"Dimension {d} must be >= 0. Received: shape={shape}")
    if np.size(arr) == 1:
        return np.broadcast_to(arr, shape)
    if np.size(arr) != math.prod(shape):
        raise TypeError(
            f"Eager execution of tf.constant with unsupported shape. Tensor "
            f"{np.asarray(arr)} (converted from {value!r}) has {np.size(arr)} "
            f"elements, but got `shape` {shape} with {math.prod(shape)} elements). "
            "Give a scalar (broadcast to `shape`) or exactly that many values."
        )
    return np.reshape(arr, shape)


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None) -> Tensor:
    """Converts a tensor-like value to a Tensor; a Tensor of the right dtype passes.

    Variables are read (the read is recorded on active tapes).
    """
    np_dt = dtypes.np_dtype(dtype)
    if type(value) is Tensor:
        if np_dt is not None and value._value.dtype != np_dt:
            to_value(value, np_dt)  # raises TF's conversion error
        return value
    hooks = context.hooks
    if hooks.variable_type is not None and isinstance(value, hooks.variable_type):
        read = value.read_value()
        if np_dt is not None and read._value.dtype != np_dt:
            to_value(read, np_dt)
        return read
    if isinstance(value, Tensor):  # a StringTensor
        return string_tensor(value, dtype)
    # A registered conversion's own Tensor (an IndexedSlices' dense sum): as
    # TF's, recorded on the tapes, so gradients flow through it.
    converted = registered_conversion(value, np_dt)
    if type(converted) is Tensor:
        return converted
    if (
        np_dt is None
        and dtype_hint is not None
        and dtypes.default_for_python(value) is not None
    ):
        try:
            return Tensor(
                device.to_device(to_value(value, dtypes.np_dtype(dtype_hint)))
            )
        except (TypeError, ValueError):
            pass
    try:
        return Tensor(device.to_device(to_value(value, np_dt)))
    except StringInput:  # strings: a host StringTensor (`structured/strings`)
        return string_tensor(value, dtype)


def _float_dtype(dtype):
    return dtypes.np_dtype(dtype) or np.dtype(np.float32)


def zeros(shape, dtype=dtypes.float32, name=None, layout=None) -> Tensor:
    """A tensor of zeros of the given shape and dtype (float32 by default)."""
    dims = _dims(shape, "Fill", int32=True)
    if _float_dtype(dtype).kind == "O":  # `jaxtape.string`: empty strings, as TF
        return string_tensor(np.full(dims, b"", object))
    return Tensor(device.to_device(np.zeros(dims, _float_dtype(dtype))))


def ones(shape, dtype=dtypes.float32, name=None, layout=None) -> Tensor:
    """A tensor of ones of the given shape and dtype (float32 by default)."""
    dims = _dims(shape, "Fill", int32=True)
    if _float_dtype(dtype).kind == "O":  # `jaxtape.string`: TF's TypeError
        string_tensor(1, dtype)
    return Tensor(device.to_device(np.ones(dims, _float_dtype(dtype))))


def eye(
    num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None
) -> Tensor:
    """An identity matrix (or a batch of them)."""
    rows = num_rows
    cols = num_rows if num_columns is None else num_columns
    if not all(isinstance(n, (int, np.integer)) for n in (rows, cols)):
        raise TypeError(
            "Arguments `num_rows` and `num_columns` must be positive integer values. "
            f"Received: num_rows={rows}, num_columns={cols}"
        )
    _dims((rows, cols), "Fill")
    m = np.eye(int(rows), int(cols), dtype=_float_dtype(dtype))
    if batch_shape is not None:
        m = np.broadcast_to(m, _dims(batch_shape, "Fill") + m.shape)
    return Tensor(device.to_device(m))


def range(start, limit=None, delta=1, dtype=None, name="range") -> Tensor:  # noqa: A001
    """A 1-D tensor `[start, start + delta, ...)` up to `limit` (TF's `tf.range`).

    The dtype is inferred from the arguments as in TF (int32 for Python ints,
    float32 if any is a float), unless given.
    """
    if limit is None:
        start, limit = 0, start
    if dtype is not None:  # Python numbers convert to `dtype` (0.5 to int32 raises)
        for v in (start, limit, delta):
            if type(v) in (int, float, bool, complex):
                to_value(v, dtypes.np_dtype(dtype))
    vals = [np.asarray(to_value(v)) for v in (start, limit, delta)]
    if dtype is None:  # TF's rule: the widest of int32 < int64 < float32 < float64
        order = [np.dtype(t) for t in ("int32", "int64", "float32", "float64")]
        rank = [order.index(v.dtype) if v.dtype in order else 3 for v in vals]
        np_dt = order[max(rank)]
    else:
        np_dt = dtypes.np_dtype(dtype)
    s, lim, d = (v.item() for v in vals)
    if d == 0:
        raise errors.invalid_argument(
            f"Requires delta != 0: {d}. Pass a non-zero step.", "Range"
        )
    if (d > 0 and s > lim) or (d < 0 and s < lim):
        rel, sign = ("<=", ">") if d > 0 else (">=", "<")
        raise errors.invalid_argument(
            f"Requires start {rel} limit when delta {sign} 0: {s}/{lim}. Swap "
            "start and limit, or flip the sign of delta.",
            "Range",
        )
    return Tensor(device.to_device(_range_values(s, lim, d, np.dtype(np_dt))))


def _range_values(start, limit, delta, dtype):
    """TF's Range kernel: the size from `ceil(|(limit - start) / delta|)` and
    the values `start + i * delta`, both computed in `dtype` (float32
    arithmetic gives `range(0., .3, .1)` 3 values, float64 would count 4)."""
    if dtype.kind in "iu":
        size = -(-abs(limit - start) // abs(delta))
        return np.arange(start, start + size * delta, delta, dtype=dtype)[:size]
    a, b, d = (np.asarray(v, dtype) for v in (start, limit, delta))
    with np.errstate(all="ignore"):
        size = int(np.ceil(np.abs((b - a) / d)))
    with np.errstate(all="ignore"):
        return a + np.arange(size).astype(dtype) * d


def linspace(start, stop, num, name=None, axis=0) -> Tensor:
    """`num` evenly spaced values from `start` to `stop` inclusive (TF's `linspace`).

    As in TF, `stop` is converted to `start`'s dtype, and integer ends give
    float64 values.
    """
    a = to_value(start)
    b = to_value(stop, np.asarray(a).dtype)
    np_dt = np.result_type(np.asarray(a).dtype)
    if np_dt.kind in "iu":
        np_dt = np.dtype(np.float64)
    if type(num) is float or np.asarray(to_value(num)).dtype.kind not in "iu":
        raise TypeError(
            "Argument `tensor` (name: num) must be of type integer. Received "
            f"`tensor` = {num!r}"
        )
    num = int(to_value(num))
    if num < 0:
        raise errors.invalid_argument(
            f"Requires num >= 0, got {num}: the number of values to generate.",
            "LinSpace",
        )
    return Tensor(
        device.to_device(
            jnp.linspace(
                jnp.asarray(a, np_dt),
                jnp.asarray(b, np_dt),
                num,
                axis=axis,
                dtype=np_dt,
            )
        )
    )


lin_space = linspace
