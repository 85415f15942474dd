"""Ops whose outputs carry no gradient (TF's `NotDifferentiable`): never recorded.

Comparisons, logical ops, argmax/argmin, rounding, shape queries. A gradient that
flows only through these is `None`, as in TensorFlow. Layer L1.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import dtypes
from jaxtape._src.core.dispatch import op
from jaxtape._src.ops.math_ops import _axis


@op("Equal", same_dtype=True, differentiable=False)
def equal(x, y, name=None):
    """Returns the truth value of `x == y` element-wise."""
    return jnp.equal(x, y)


@op("NotEqual", same_dtype=True, differentiable=False)
def not_equal(x, y, name=None):
    """Returns the truth value of `x != y` element-wise."""
    return jnp.not_equal(x, y)


@op("Less", same_dtype=True, differentiable=False)
def less(x, y, name=None):
    """Returns the truth value of `x < y` element-wise."""
    return jnp.less(x, y)


@op("LessEqual", same_dtype=True, differentiable=False)
def less_equal(x, y, name=None):
    """Returns the truth value of `x <= y` element-wise."""
    return jnp.less_equal(x, y)


@op("Greater", same_dtype=True, differentiable=False)
def greater(x, y, name=None):
    """Returns the truth value of `x > y` element-wise."""
    return jnp.greater(x, y)


@op("GreaterEqual", same_dtype=True, differentiable=False)
def greater_equal(x, y, name=None):
    """Returns the truth value of `x >= y` element-wise."""
    return jnp.greater_equal(x, y)


@op("LogicalAnd", same_dtype=True, differentiable=False)
def logical_and(x, y, name=None):
    """Returns `x AND y` element-wise."""
    return jnp.logical_and(x, y)


@op("LogicalOr", same_dtype=True, differentiable=False)
def logical_or(x, y, name=None):
    """Returns `x OR y` element-wise."""
    return jnp.logical_or(x, y)


@op("LogicalXor", same_dtype=True, differentiable=False)
def logical_xor(x, y, name=None):
    """Returns `x XOR y` element-wise."""
    return jnp.logical_xor(x, y)


@op("LogicalNot", differentiable=False)
def logical_not(x, name=None):
    """Returns `NOT x` element-wise."""
    return jnp.logical_not(x)


@op("BitwiseAnd", same_dtype=True, differentiable=False)
def bitwise_and(x, y, name=None):
    """Bitwise AND of integer tensors."""
    return jnp.bitwise_and(x, y)


@op("BitwiseOr", same_dtype=True, differentiable=False)
def bitwise_or(x, y, name=None):
    """Bitwise OR of integer tensors."""
    return jnp.bitwise_or(x, y)


@op("BitwiseXor", same_dtype=True, differentiable=False)
def bitwise_xor(x, y, name=None):
    """Bitwise XOR of integer tensors."""
    return jnp.bitwise_xor(x, y)


@op("Invert", differentiable=False)
def invert(x, name=None):
    """Bitwise NOT of an integer tensor."""
    return jnp.invert(x)


@op("ReduceAny", differentiable=False)
def reduce_any(input_tensor, axis=None, keepdims=False, name=None):
    """Computes logical OR across dimensions."""
    return jnp.any(input_tensor, axis=_axis(axis), keepdims=keepdims)


@op("ReduceAll", differentiable=False)
def reduce_all(input_tensor, axis=None, keepdims=False, name=None):
    """Computes logical AND across dimensions."""
    return jnp.all(input_tensor, axis=_axis(axis), keepdims=keepdims)


@op("ArgMax", differentiable=False)
def argmax(input, axis=None, output_type=dtypes.int64, name=None):  # noqa: A002
    """Index of the largest value along `axis` (default 0, as in TF)."""
    axis = 0 if axis is None else _axis(axis)
    return jnp.argmax(input, axis=axis).astype(dtypes.np_dtype(output_type))


@op("ArgMin", differentiable=False)
def argmin(input, axis=None, output_type=dtypes.int64, name=None):  # noqa: A002
    """Index of the smallest value along `axis` (default 0, as in TF)."""
    axis = 0 if axis is None else _axis(axis)
    return jnp.argmin(input, axis=axis).astype(dtypes.np_dtype(output_type))


@op("Round", differentiable=False)
def round(x, name=None):  # noqa: A001
    """Rounds half to even element-wise (banker's rounding, as TF)."""
    return jnp.round(x)


@op("Floor", differentiable=False)
def floor(x, name=None):
    """Largest integer not greater than `x`, element-wise."""
    return jnp.floor(x)


@op("Ceil", differentiable=False)
def ceil(x, name=None):
    """Smallest integer not less than `x`, element-wise."""
    return jnp.ceil(x)


@op("IsNan", differentiable=False)
def is_nan(x, name=None):
    """Returns which elements of `x` are NaN."""
    return jnp.isnan(x)


@op("IsInf", differentiable=False)
def is_inf(x, name=None):
    """Returns which elements of `x` are +-inf."""
    return jnp.isinf(x)


@op("IsFinite", differentiable=False)
def is_finite(x, name=None):
    """Returns which elements of `x` are finite."""
    return jnp.isfinite(x)


@op("ArgSort", differentiable=False)
def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """Indices that sort `values` along `axis`."""
    _check_direction(direction)
    if direction == "DESCENDING":
        values = ~values if values.dtype == jnp.bool_ else -values
    return jnp.argsort(values, axis=axis, stable=True).astype(np.int32)


def _check_direction(direction):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(
            f"direction must be 'ASCENDING' or 'DESCENDING'. Received: "
            f"direction={direction!r}"
        )


@op("Shape", differentiable=False)
def shape(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The shape of a tensor, as a 1-D integer tensor (TF's `tf.shape`)."""
    return jnp.asarray(np.asarray(np.shape(input)), dtypes.np_dtype(out_type))


@op("Size", differentiable=False)
def size(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The number of elements of a tensor, as a scalar integer tensor."""
    return jnp.asarray(np.size(input), dtypes.np_dtype(out_type))


@op("Rank", differentiable=False)
def rank(input, name=None):  # noqa: A002
    """The rank of a tensor, as a scalar int32 tensor."""
    return jnp.asarray(np.ndim(input), np.int32)


@op("ZerosLike", differentiable=False)
def zeros_like(input, dtype=None, name=None):  # noqa: A002
    """A tensor of zeros with the shape (and dtype, unless given) of `input`."""
    return jnp.zeros(np.shape(input), dtypes.np_dtype(dtype) or input.dtype)


@op("OnesLike", differentiable=False)
def ones_like(input, dtype=None, name=None):  # noqa: A002
    """A tensor of ones with the shape (and dtype, unless given) of `input`."""
    return jnp.ones(np.shape(input), dtypes.np_dtype(dtype) or input.dtype)


@op("StopGradient", differentiable=False)
def stop_gradient(input, name=None):  # noqa: A002
    """Returns `input` unchanged; no gradient flows through it (TF's stop_gradient)."""
    return jnp.asarray(input)
