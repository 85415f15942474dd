"""Installs TF's operator overloads on `Tensor` (and provides them for Variable).

Layer L1: `core.tensor` cannot import ops, so ops attach the operators here,
as TF's `math_ops` does with `_OverrideBinaryOperatorHelper`.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import context, errors
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import array_ops, math_ops, nondiff


def _binary(fn, reflected=None):
    def operator(self, other):
        if type(other) is bool:
            other = _bool_operand(self, other)
        try:
            return fn(self, other)
        except (TypeError, ValueError):
            if reflected is not None and _defers(other, reflected):
                return NotImplemented
            raise

    return operator


def _defers(other, reflected: str) -> bool:
    """TF's `binary_op_wrapper`: when the op cannot take `other`, an object
    that implements the reflected operator (`SparseTensor.__rmul__`) gets the
    call (`NotImplemented` hands it over); numbers, arrays and Variables keep
    the op's error."""
    var = context.hooks.variable_type
    if isinstance(other, _PLAIN) or (var is not None and isinstance(other, var)):
        return False
    return hasattr(type(other), reflected)


_PLAIN = (Tensor, bool, int, float, complex, list, tuple, np.ndarray, np.generic)


def _reflected(fn):
    def operator(self, other):
        if type(other) is bool:
            other = _bool_operand(self, other)
        return fn(other, self)

    return operator


def _bool_operand(self, other: bool):
    """A Python bool next to a non-bool tensor, as the int TF converts it to.

    TF's operators convert `True` to the tensor's dtype (`x + True` is
    `x + 1`). JAX has no weakly typed bool: passed on as a bool it would be
    promoted (an error under strict dtype promotion, and a bool array in a
    compiled tape replay), where a Python int stays weak.
    """
    return other if self.dtype.is_bool else int(other)


def _add(self, other):
    # (the op itself, not the `add` wrapper: `x + y` is the hottest operator)
    if type(other) is bool:
        other = _bool_operand(self, other)
    try:
        return math_ops._add(self, other)
    except errors.EscapedTensorError:
        raise
    except (TypeError, ValueError) as e:
        if _defers(other, "__radd__"):
            return NotImplemented
        if not isinstance(e, TypeError):
            raise
        error = math_ops.add_number_error(self, other)  # TF's AddV2 error
        if error is None:
            raise
        raise error from None


def _radd(self, other):
    # `other + self`: TF converts `other` to self's dtype (`2 + x` works where
    # `tf.add(2, x)` converts the 2 on its own; `1.0 + int_tensor` is a
    # TypeError where `int_tensor + 1.0` is AddV2's InvalidArgumentError).
    # Addition commutes, so the op runs as `self + other`.
    if type(other) is bool:
        other = _bool_operand(self, other)
    return math_ops._add(self, other)


def _mul(self, other):
    # TF's `*` with a bool tensor on either side is a logical AND of both as
    # bools (`bool_tensor * 2.5` too); its `Mul` kernel refuses bools.
    if type(other) is bool:
        other = _bool_operand(self, other)
    try:
        return math_ops.multiply(self, other)
    except (errors.InvalidArgumentError, TypeError, ValueError):
        if _defers(other, "__rmul__"):
            return NotImplemented
        if not (self.dtype.is_bool or getattr(other, "dtype", None) == np.bool_):
            raise
        return nondiff.logical_and(_as_bool(self), _as_bool(other))


def _rmul(self, other):
    # `other * self` for a Python `other`: it converts to self's dtype, so a
    # bool tensor takes only a Python bool (TF: `2 * bool_tensor` raises).
    if type(other) is bool:
        other = _bool_operand(self, other)
    try:
        return math_ops.multiply(other, self)
    except (errors.InvalidArgumentError, TypeError):
        if not (self.dtype.is_bool and type(other) is bool):
            raise
        return nondiff.logical_and(other, self)


def _as_bool(x):
    if type(x) in (bool, int, float, complex):
        return bool(x)
    return math_ops.cast(x, np.bool_)


def _logical_or_bitwise(logical, bitwise, reflected=False):
    # TF's `&`, `|`, `^`: logical for bool tensors, bitwise for integers.
    def operator(self, other):
        fn = logical if self.dtype.is_bool else bitwise
        return fn(other, self) if reflected else fn(self, other)

    return operator


def _eq(self, other):
    # TF's `==`: False for None and for shapes that do not broadcast (a bool
    # scalar); TF's errors for another dtype or an unconvertible value.
    if other is None:
        return False
    try:
        return nondiff.equal(self, other)
    except errors.InvalidArgumentError:
        if _broadcasts(self, other):
            raise
        return Tensor(jnp.asarray(False))


def _ne(self, other):
    if other is None:
        return True
    try:
        return nondiff.not_equal(self, other)
    except errors.InvalidArgumentError:
        if _broadcasts(self, other):
            raise
        return Tensor(jnp.asarray(True))


def _broadcasts(a, b) -> bool:
    try:
        np.broadcast_shapes(tuple(np.shape(a)), tuple(np.shape(b)))
    except ValueError:
        return False
    return True


def _iter(self):
    if not self.shape:
        raise TypeError("Cannot iterate over a scalar tensor.")
    for i in range(self.shape[0]):
        yield self[i]


OPERATORS = {
    "__add__": _add,
    "__radd__": _radd,
    "__sub__": _binary(math_ops.subtract, "__rsub__"),
    "__rsub__": _reflected(math_ops.subtract),
    "__mul__": _mul,
    "__rmul__": _rmul,
    "__truediv__": _binary(math_ops.divide, "__rtruediv__"),
    "__rtruediv__": _reflected(math_ops.divide),
    "__floordiv__": _binary(math_ops.floordiv, "__rfloordiv__"),
    "__rfloordiv__": _reflected(math_ops.floordiv),
    "__mod__": _binary(math_ops.floormod, "__rmod__"),
    "__rmod__": _reflected(math_ops.floormod),
    "__pow__": _binary(math_ops.pow, "__rpow__"),
    "__rpow__": _reflected(math_ops.pow),
    "__matmul__": _binary(math_ops.matmul, "__rmatmul__"),
    "__rmatmul__": _reflected(math_ops.matmul),
    "__neg__": lambda self: math_ops.negative(self),
    "__pos__": lambda self: self,
    "__abs__": lambda self: math_ops.abs(self),
    "__invert__": lambda self: (
        nondiff.logical_not(self) if self.dtype.is_bool else nondiff.invert(self)
    ),
    "__and__": _logical_or_bitwise(nondiff.logical_and, nondiff.bitwise_and),
    "__rand__": _logical_or_bitwise(nondiff.logical_and, nondiff.bitwise_and, True),
    "__or__": _logical_or_bitwise(nondiff.logical_or, nondiff.bitwise_or),
    "__ror__": _logical_or_bitwise(nondiff.logical_or, nondiff.bitwise_or, True),
    "__xor__": _logical_or_bitwise(nondiff.logical_xor, nondiff.bitwise_xor),
    "__rxor__": _logical_or_bitwise(nondiff.logical_xor, nondiff.bitwise_xor, True),
    "__lt__": _binary(nondiff.less),
    "__le__": _binary(nondiff.less_equal),
    "__gt__": _binary(nondiff.greater),
    "__ge__": _binary(nondiff.greater_equal),
    "__eq__": _eq,
    "__ne__": _ne,
    "__getitem__": array_ops.getitem,
    "__iter__": _iter,
}


def install(cls) -> None:
    """Adds the operators to `cls` (Tensor; the state layer uses it for Variable)."""
    for name, fn in OPERATORS.items():
        setattr(cls, name, fn)


install(Tensor)
