"""Tensor creation: `constant`, `convert_to_tensor`, `ones`, `range`, ... Layer L1.

Created tensors are data: they are never tracked by a tape until watched.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import context, device, dtypes
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops.array_ops import _shape


def constant(value, dtype=None, shape=None, name=None) -> Tensor:
    """Creates a constant tensor from a tensor-like value (TF's `tf.constant`).

    Python floats give float32, ints int32, NumPy arrays keep their dtype. With
    `shape`, a scalar is broadcast and other values are reshaped.

    >>> jaxtape.constant([1, 2]).dtype
    jaxtape.int32
    """
    np_dt = dtypes.np_dtype(dtype)
    if type(value) is Tensor or isinstance(value, context.hooks.variable_type or ()):
        arr = to_value(value)
        if np_dt is not None and arr.dtype != np_dt:
            arr = arr.astype(np_dt)
    else:
        arr = to_value(value, np_dt)
    if shape is not None:
        shape = _shape(shape)
        arr = (
            np.broadcast_to(arr, shape) if np.size(arr) == 1 else np.reshape(arr, shape)
        )
    return Tensor(device.to_device(arr))


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
    return Tensor(device.to_device(to_value(value, np_dt)))


def _float_dtype(dtype):
    return dtypes.np_dtype(dtype) or np.dtype(np.float32)


def zeros(shape, dtype=dtypes.float32, name=None, layout=None) -> Tensor:
    """A tensor of zeros of the given shape and dtype (float32 by default)."""
    return Tensor(device.to_device(np.zeros(_shape(shape), _float_dtype(dtype))))


def ones(shape, dtype=dtypes.float32, name=None, layout=None) -> Tensor:
    """A tensor of ones of the given shape and dtype (float32 by default)."""
    return Tensor(device.to_device(np.ones(_shape(shape), _float_dtype(dtype))))


def eye(
    num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None
) -> Tensor:
    """An identity matrix (or a batch of them)."""
    m = np.eye(
        int(num_rows),
        None if num_columns is None else int(num_columns),
        dtype=_float_dtype(dtype),
    )
    if batch_shape is not None:
        m = np.broadcast_to(m, _shape(batch_shape) + m.shape)
    return Tensor(device.to_device(m))


def range(start, limit=None, delta=1, dtype=None, name="range") -> Tensor:  # noqa: A001
    """A 1-D tensor `[start, start + delta, ...)` up to `limit` (TF's `tf.range`).

    The dtype is inferred from the arguments as in TF (int32 for Python ints,
    float32 if any is a float), unless given.
    """
    if limit is None:
        start, limit = 0, start
    vals = [np.asarray(to_value(v)) for v in (start, limit, delta)]
    if dtype is None:  # TF's rule: the widest of int32 < int64 < float32 < float64
        order = [np.dtype(t) for t in ("int32", "int64", "float32", "float64")]
        rank = [order.index(v.dtype) if v.dtype in order else 3 for v in vals]
        np_dt = order[max(rank)]
    else:
        np_dt = dtypes.np_dtype(dtype)
    s, lim, d = (v.item() for v in vals)
    return Tensor(device.to_device(np.arange(s, lim, d, dtype=np_dt)))


def linspace(start, stop, num, name=None, axis=0) -> Tensor:
    """`num` evenly spaced values from `start` to `stop` inclusive (TF's `linspace`)."""
    a, b = to_value(start), to_value(stop)
    np_dt = np.result_type(np.asarray(a).dtype)
    if np_dt.kind in "iu":
        np_dt = np.dtype(np.float32)
    return Tensor(
        device.to_device(
            jnp.linspace(
                jnp.asarray(a, np_dt),
                jnp.asarray(b, np_dt),
                int(num),
                axis=axis,
                dtype=np_dt,
            )
        )
    )


lin_space = linspace
