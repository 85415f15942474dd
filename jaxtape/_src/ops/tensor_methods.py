"""Installs TF's operator overloads on `Tensor` (and provides them for Variable).

Layer L1: `core.tensor` cannot import ops, so ops attach the operators here,
as TF's `math_ops` does with `_OverrideBinaryOperatorHelper`.
"""

from __future__ import annotations

from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import array_ops, math_ops, nondiff


def _binary(fn):
    return lambda self, other: fn(self, other)


def _reflected(fn):
    return lambda self, other: fn(other, self)


def _eq(self, other):
    if other is None:
        return False
    try:
        return nondiff.equal(self, other)
    except (TypeError, ValueError):
        return False


def _ne(self, other):
    if other is None:
        return True
    try:
        return nondiff.not_equal(self, other)
    except (TypeError, ValueError):
        return True


def _iter(self):
    if not self.shape:
        raise TypeError("Cannot iterate over a scalar tensor.")
    for i in range(self.shape[0]):
        yield self[i]


OPERATORS = {
    "__add__": _binary(math_ops.add),
    "__radd__": _reflected(math_ops.add),
    "__sub__": _binary(math_ops.subtract),
    "__rsub__": _reflected(math_ops.subtract),
    "__mul__": _binary(math_ops.multiply),
    "__rmul__": _reflected(math_ops.multiply),
    "__truediv__": _binary(math_ops.truediv),
    "__rtruediv__": _reflected(math_ops.truediv),
    "__floordiv__": _binary(math_ops.floordiv),
    "__rfloordiv__": _reflected(math_ops.floordiv),
    "__mod__": _binary(math_ops.floormod),
    "__rmod__": _reflected(math_ops.floormod),
    "__pow__": _binary(math_ops.pow),
    "__rpow__": _reflected(math_ops.pow),
    "__matmul__": _binary(math_ops.matmul),
    "__rmatmul__": _reflected(math_ops.matmul),
    "__neg__": lambda self: math_ops.negative(self),
    "__pos__": lambda self: self,
    "__abs__": lambda self: math_ops.abs(self),
    "__invert__": lambda self: (
        nondiff.logical_not(self) if self.dtype.is_bool else nondiff.invert(self)
    ),
    "__and__": _binary(nondiff.logical_and),
    "__rand__": _reflected(nondiff.logical_and),
    "__or__": _binary(nondiff.logical_or),
    "__ror__": _reflected(nondiff.logical_or),
    "__xor__": _binary(nondiff.logical_xor),
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
