"""Ops whose outputs carry no gradient (TF's `NotDifferentiable`): never recorded.

Comparisons, logical ops, argmax/argmin, rounding, shape queries. A gradient that
flows only through these is `None`, as in TensorFlow. Layer L1.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import context, dtypes, errors
from jaxtape._src.core.dispatch import _tf_name, op, to_value
from jaxtape._src.ops.math_ops import (
    K_FLOAT,
    K_INTS,
    K_REAL,
    _axis,
    _check,
    _reduction_axes,
    _shape_error,
    _unsupported_dtype,
)


def _compare(op_name, fn, x, y):
    try:
        return fn(x, y)
    except (TypeError, ValueError) as e:
        raise _shape_error(op_name, x, y, e) from None


@op("Equal", same_dtype=True, differentiable=False)
def equal(x, y, name=None):
    """Returns the truth value of `x == y` element-wise."""
    return _compare("Equal", jnp.equal, x, y)


@op("NotEqual", same_dtype=True, differentiable=False)
def not_equal(x, y, name=None):
    """Returns the truth value of `x != y` element-wise."""
    return _compare("NotEqual", jnp.not_equal, x, y)


@op("Less", same_dtype=True, differentiable=False)
def less(x, y, name=None):
    """Returns the truth value of `x < y` element-wise."""
    _check("Less", K_REAL, x, y)
    return _compare("Less", jnp.less, x, y)


@op("LessEqual", same_dtype=True, differentiable=False)
def less_equal(x, y, name=None):
    """Returns the truth value of `x <= y` element-wise."""
    _check("LessEqual", K_REAL, x, y)
    return _compare("LessEqual", jnp.less_equal, x, y)


@op("Greater", same_dtype=True, differentiable=False)
def greater(x, y, name=None):
    """Returns the truth value of `x > y` element-wise."""
    _check("Greater", K_REAL, x, y)
    return _compare("Greater", jnp.greater, x, y)


@op("GreaterEqual", same_dtype=True, differentiable=False)
def greater_equal(x, y, name=None):
    """Returns the truth value of `x >= y` element-wise."""
    _check("GreaterEqual", K_REAL, x, y)
    return _compare("GreaterEqual", jnp.greater_equal, x, y)


def _logical(op_name, fn):
    """TF's logical ops: bool tensors only (a Python number must be a bool)."""

    def body(x, y):
        for v in (x, y):  # (a Python bool next to another dtype arrives as 0 or 1)
            if type(v) in (int, float, complex) and v not in (0, 1):
                to_value(v, np.bool_)  # TF's "Cannot convert 2 to ... bool" TypeError
        for i, v in enumerate((x, y)):
            dtype = getattr(v, "dtype", None)
            if dtype is not None and dtype != np.bool_:
                raise _not_bool(op_name, i, dtype)
        for v in (x, y):
            if type(v) in (int, float, complex):
                to_value(v, np.bool_)
        return _compare(op_name, fn, x, y)

    return body


def _not_bool(op_name, i, dtype):
    return errors.invalid_argument(
        f"cannot compute {op_name} as input #{i}(zero-based) was expected to be a "
        f"bool tensor but is a {_tf_name(dtype)} tensor. Compare first (`x > 0`) or "
        "cast with `jaxtape.cast(x, jaxtape.bool)`.",
        op_name,
    )


@op("LogicalAnd", same_dtype=True, differentiable=False)
def logical_and(x, y, name=None):
    """Returns `x AND y` element-wise (bool tensors only, as TF)."""
    return _logical_and(x, y)


@op("LogicalOr", same_dtype=True, differentiable=False)
def logical_or(x, y, name=None):
    """Returns `x OR y` element-wise (bool tensors only, as TF)."""
    return _logical_or(x, y)


@op("LogicalXor", same_dtype=True, differentiable=False)
def logical_xor(x, y, name=None):
    """Returns `x XOR y` element-wise (bool tensors only, as TF)."""
    return _logical_xor(x, y)


_logical_and = _logical("LogicalAnd", jnp.logical_and)
_logical_or = _logical("LogicalOr", jnp.logical_or)
_logical_xor = _logical("LogicalXor", jnp.logical_xor)


@op("LogicalNot", differentiable=False)
def logical_not(x, name=None):
    """Returns `NOT x` element-wise (a bool tensor, as TF)."""
    if x.dtype != np.bool_:
        raise _not_bool("LogicalNot", 0, x.dtype)
    return jnp.logical_not(x)


@op("BitwiseAnd", same_dtype=True, differentiable=False)
def bitwise_and(x, y, name=None):
    """Bitwise AND of integer tensors."""
    _check("BitwiseAnd", K_INTS, x, y)
    return _compare("BitwiseAnd", jnp.bitwise_and, x, y)


@op("BitwiseOr", same_dtype=True, differentiable=False)
def bitwise_or(x, y, name=None):
    """Bitwise OR of integer tensors."""
    _check("BitwiseOr", K_INTS, x, y)
    return _compare("BitwiseOr", jnp.bitwise_or, x, y)


@op("BitwiseXor", same_dtype=True, differentiable=False)
def bitwise_xor(x, y, name=None):
    """Bitwise XOR of integer tensors."""
    _check("BitwiseXor", K_INTS, x, y)
    return _compare("BitwiseXor", jnp.bitwise_xor, x, y)


@op("Invert", differentiable=False)
def invert(x, name=None):
    """Bitwise NOT of an integer tensor."""
    _check("Invert", K_INTS, x)
    return jnp.invert(x)


def _bool_reduction(op_name, x, axis):
    if x.dtype != np.bool_:
        raise _not_bool(op_name, 0, x.dtype)
    return _reduction_axes(x, axis, op_name)


@op("ReduceAny", differentiable=False)
def reduce_any(input_tensor, axis=None, keepdims=False, name=None):
    """Computes logical OR across dimensions (of a bool tensor, as TF)."""
    axis = _bool_reduction("Any", input_tensor, axis)
    return jnp.any(input_tensor, axis=axis, keepdims=keepdims)


@op("ReduceAll", differentiable=False)
def reduce_all(input_tensor, axis=None, keepdims=False, name=None):
    """Computes logical AND across dimensions (of a bool tensor, as TF)."""
    axis = _bool_reduction("All", input_tensor, axis)
    return jnp.all(input_tensor, axis=axis, keepdims=keepdims)


def _arg_axis(x, axis, op_name):
    """TF's ArgMax/ArgMin checks: an int axis in range, a non-empty reduction."""
    if axis is None:
        axis = 0
    elif type(axis) is not int:
        arr = np.asarray(axis)
        if arr.dtype.kind not in "iu" or (arr.ndim and op_name == "ArgMax"):
            raise TypeError(
                "axis must be int or Tensor with integer datatype. Received: "
                f"axis={axis!r}"
            )
        if arr.ndim:  # (TF's argmin passes a list on to its kernel, which refuses)
            raise errors.invalid_argument(
                f"dim must be a scalar, but received tensor of shape: "
                f"{list(arr.shape)}. Pass one axis as an int.",
                op_name,
            )
        axis = int(arr)
    if np.dtype(x.dtype).kind == "c":
        raise _unsupported_dtype(op_name, x, K_REAL.text + ", bool")
    shape = np.shape(x)
    nd = len(shape)
    if not -nd <= axis < nd or nd == 0:
        raise errors.invalid_argument(
            f"Expected dimension in the range [{-nd}, {nd}), but got {axis}", op_name
        )
    if shape[axis] == 0:
        raise errors.invalid_argument(
            f"Reduction axis {axis % nd} is empty in shape {list(shape)}", op_name
        )
    return axis


def _arg_keys(x, sign):
    """Values for jnp's arg-reduction that pick what TF's CPU kernel picks.

    TF's kernel keeps the first index whose value beats the running best,
    starting from the dtype's lowest (for max) value: a NaN never wins, nor
    does a value no better than that start (-inf for max), and ties keep the
    first index. Mapping those values to -inf (+inf for min) makes jnp agree.
    """
    if np.dtype(x.dtype).kind != "f" and x.dtype != jnp.bfloat16:
        return x
    limit = jnp.finfo(x.dtype).min if sign > 0 else jnp.finfo(x.dtype).max
    beats = x > limit if sign > 0 else x < limit
    return jnp.where(beats, x, -sign * jnp.inf)


_ARGMAX_TYPES = tuple(np.dtype(t) for t in ("int16", "uint16", "int32", "int64"))


@op("ArgMax", differentiable=False)
def argmax(input, axis=None, output_type=dtypes.int64, name=None):  # noqa: A002
    """Index of the largest value along `axis` (default 0, as in TF).

    As TF's CPU kernel: NaNs are skipped, ties give the first index.
    """
    axis = _arg_axis(input, axis, "ArgMax")
    if dtypes.np_dtype(output_type) not in _ARGMAX_TYPES:
        raise errors.invalid_argument(
            f"Value for attr 'output_type' of {_tf_name(dtypes.np_dtype(output_type))} "
            "is not in the list of allowed values: int16, uint16, int32, int64.",
            "ArgMax",
        )
    keys = _arg_keys(input, 1)
    return jnp.argmax(keys, axis=axis).astype(dtypes.np_dtype(output_type))


@op("ArgMin", differentiable=False)
def argmin(input, axis=None, output_type=dtypes.int64, name=None):  # noqa: A002
    """Index of the smallest value along `axis` (default 0, as in TF).

    As TF's CPU kernel: NaNs are skipped, ties give the first index.
    """
    axis = _arg_axis(input, axis, "ArgMin")
    if dtypes.np_dtype(output_type) not in (np.int32, np.int64):  # (ArgMax: int16 too)
        raise errors.invalid_argument(
            f"Value for attr 'output_type' of {_tf_name(dtypes.np_dtype(output_type))} "
            "is not in the list of allowed values: int32, int64.",
            "ArgMin",
        )
    keys = _arg_keys(input, -1)
    return jnp.argmin(keys, axis=axis).astype(dtypes.np_dtype(output_type))


@op("Round", differentiable=False)
def round(x, name=None):  # noqa: A001
    """Rounds half to even element-wise (banker's rounding, as TF)."""
    kind = np.dtype(x.dtype).kind
    if kind == "c":
        raise errors.NotFoundError(
            None,
            "Round",
            f"Could not find device for node: Round[T={_tf_name(x.dtype)}]: "
            "TensorFlow has no complex Round kernel. Round the real and imaginary "
            "parts (`jaxtape.math.real`, `jaxtape.math.imag`).",
        )
    _check("Round", K_REAL, x)
    return jnp.round(x) if kind not in "iu" else x


@op("Floor", differentiable=False)
def floor(x, name=None):
    """Largest integer not greater than `x`, element-wise (floats, as TF)."""
    _check("Floor", K_FLOAT, x)
    return jnp.floor(x)


@op("Ceil", differentiable=False)
def ceil(x, name=None):
    """Smallest integer not less than `x`, element-wise (floats, as TF)."""
    _check("Ceil", K_FLOAT, x)
    return jnp.ceil(x)


@op("IsNan", differentiable=False)
def is_nan(x, name=None):
    """Returns which elements of `x` are NaN (floats only, as TF)."""
    _check("IsNan", K_FLOAT, x)
    return jnp.isnan(x)


@op("IsInf", differentiable=False)
def is_inf(x, name=None):
    """Returns which elements of `x` are +-inf (floats only, as TF)."""
    _check("IsInf", K_FLOAT, x)
    return jnp.isinf(x)


@op("IsFinite", differentiable=False)
def is_finite(x, name=None):
    """Returns which elements of `x` are finite (floats only, as TF)."""
    _check("IsFinite", K_FLOAT, x)
    return jnp.isfinite(x)


@op("ArgSort", differentiable=False)
def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """Indices that sort `values` along `axis` (ties in index order).

    Differences from TensorFlow:
      NaNs sort last (after +inf), as in NumPy; TF's order of NaNs depends
      on its top-k kernel's comparisons and is not a sort order.
    """
    _check_direction(direction)
    _check("TopKV2", K_REAL, values)
    axis = _sort_axis(values, axis)
    if direction == "ASCENDING":
        return jnp.argsort(values, axis=axis, stable=True).astype(np.int32)
    # Descending with ties in index order, without negating (-INT_MIN wraps,
    # unsigned ints wrap): a stable ascending sort of the reversed values,
    # read backwards, gives descending values with ties in index order.
    n = values.shape[axis]
    order = jnp.argsort(jnp.flip(values, axis), axis=axis, stable=True)
    return (n - 1 - jnp.flip(order, axis)).astype(np.int32)


def _sort_axis(values, axis):
    """TF's sort/argsort axis check (TF slices the shape: a StridedSlice error)."""
    axis = _axis(axis)
    nd = np.ndim(values)
    if type(axis) is not int or not -nd <= axis < nd:
        raise errors.invalid_argument(
            f"slice index {axis} of dimension 0 out of bounds: the axis of a tensor "
            f"of rank {nd} must be in [{-nd}, {nd}).",
            "StridedSlice",
        )
    return axis


def _check_direction(direction):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(
            f"direction must be 'ASCENDING' or 'DESCENDING'. Received: "
            f"direction={direction!r}"
        )


@op("Shape", differentiable=False)
def shape(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The shape of a tensor, as a 1-D int32 or int64 tensor (TF's `tf.shape`)."""
    out = dtypes.np_dtype(out_type)
    if out not in (np.int32, np.int64):
        raise errors.invalid_argument(
            f"Value for attr 'out_type' of {_tf_name(out)} is not in the list of "
            "allowed values: int32, int64. Pass `out_type=jaxtape.int64` or cast "
            "the result.",
            "Shape",
        )
    dims = np.shape(input)
    if not all(type(d) is int for d in dims):  # symbolic sizes (jaxtape.function)
        return jnp.asarray(dims, out)
    # A known shape is a concrete value even while jaxtape.function traces, so
    # that `jaxtape.zeros(jaxtape.shape(x))` works there as in TF.
    with jax.ensure_compile_time_eval():
        return context.mark_static(jnp.asarray(np.asarray(dims), out))


@op("Size", differentiable=False)
def size(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The number of elements of a tensor, as a scalar integer tensor."""
    n = np.size(input)
    if type(n) is not int:  # symbolic sizes (jaxtape.function)
        return jnp.asarray(n, dtypes.np_dtype(out_type))
    with jax.ensure_compile_time_eval():
        return context.mark_static(jnp.asarray(n, dtypes.np_dtype(out_type)))


@op("Rank", differentiable=False)
def rank(input, name=None):  # noqa: A002
    """The rank of a tensor, as a scalar int32 tensor."""
    with jax.ensure_compile_time_eval():
        return context.mark_static(jnp.asarray(np.ndim(input), np.int32))


@op("ZerosLike", differentiable=False)
def zeros_like(input, dtype=None, name=None):  # noqa: A002
    """A tensor of zeros with the shape (and dtype, unless given) of `input`."""
    if not hasattr(input, "dtype"):
        input = to_value(input)  # noqa: A001 - TF's conversion errors (None, ...)
    return jnp.zeros(np.shape(input), dtypes.np_dtype(dtype) or input.dtype)


@op("OnesLike", differentiable=False)
def ones_like(input, dtype=None, name=None):  # noqa: A002
    """A tensor of ones with the shape (and dtype, unless given) of `input`."""
    if not hasattr(input, "dtype"):
        input = to_value(input)  # noqa: A001 - TF's conversion errors (None, ...)
    return jnp.ones(np.shape(input), dtypes.np_dtype(dtype) or input.dtype)


@op("StopGradient", differentiable=False)
def stop_gradient(input, name=None):  # noqa: A002
    """Returns `input` unchanged; no gradient flows through it (TF's stop_gradient)."""
    return jnp.asarray(input)
