"""The type aliases of jaxtape's public signatures (`x: TensorLike`, `axis: AxisLike`).

Layer L0: names no upper layer (their classes appear here as protocols: any
object with `__array__` is a `TensorLike`, which covers Variables). Aliases
only: nothing checks a type at run time, on hot paths or elsewhere; the
classes below are read by type checkers (pyright, on `jaxtape/`), not by
`isinstance`.

Where a public op body (`dispatch.op`) leaves its tensor inputs unannotated,
that is on purpose: the caller passes a `TensorLike`, the body receives a
`jax.Array` (or a weakly typed Python scalar), and one annotation cannot say
both. The op's static parameters (`axis`, `keepdims`, `dtype`, `name`) and its
result (a `Tensor`, `dispatch.op`'s typing) are annotated.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, SupportsIndex, TypeAlias, TypeVar

import jax
import numpy as np

if TYPE_CHECKING:
    from jaxtape._src.core.dtypes import DType
    from jaxtape._src.core.tensor import Tensor, TensorShape

_T = TypeVar("_T")


class SupportsArray(Protocol):
    """An object NumPy can convert (`__array__`): NumPy and JAX arrays, Variables."""

    def __array__(self) -> np.ndarray: ...


Scalar: TypeAlias = "bool | int | float | complex | np.generic"
"""A Python or NumPy scalar (Python ones convert by TF's rules: float -> float32)."""

_Array: TypeAlias = "jax.Array | np.ndarray | SupportsArray | Scalar"
TensorLike: TypeAlias = "Tensor | TensorShape | _Array | Sequence[TensorLike]"
"""Anything an op converts to a tensor: a Tensor, a Variable, a NumPy or JAX
array, a Python or NumPy number, a fully known TensorShape, or a (nested) list
of these (TF's autopacking: `[n, 1]` with `n` a scalar Tensor)."""

DTypeLike: TypeAlias = "DType | np.dtype | type | str"
"""A dtype as TF takes one: `jaxtape.float32`, `np.float32`, `np.dtype('float32')`,
`'float32'` (None, where a parameter allows it, is spelled `DTypeLike | None`)."""

_Dims: TypeAlias = "Sequence[SupportsIndex | None]"
ShapeLike: TypeAlias = "TensorShape | Tensor | SupportsIndex | _Dims"
"""A shape: a TensorShape, a list or tuple of dimensions (ints, scalar Tensors,
or None for an unknown dimension where a shape may be partial), one int for a
1-D shape, or a 1-D integer Tensor."""

AxisLike: TypeAlias = "SupportsIndex | Sequence[SupportsIndex] | Tensor"
"""One axis or several: an int, a list or tuple of ints, or an integer Tensor
(negative axes count from the end). `None` for "all axes" is `AxisLike | None`."""

Nested: TypeAlias = "_T | Sequence[Nested[_T]] | Mapping[Any, Nested[_T]]"
"""A nested structure of `_T`s: `_T` itself, or lists, tuples and dicts of
structures (TF's `nest`): `tape.gradient(loss, {'w': w, 'b': [b1, b2]})`."""

StrPath: TypeAlias = "str | os.PathLike[str]"
"""A file or directory path: a string or a `pathlib.Path`."""

# -- Keras arguments: a name, a config dict, or the object itself ------------------
InitializerLike: TypeAlias = str | Mapping[str, Any] | Callable[..., Any]
"""An initializer: a name (`'glorot_uniform'`), a config dict, an `Initializer`
(called as `init(shape, dtype)`), or any such callable."""

ActivationLike: TypeAlias = str | Callable[..., Any] | None
"""An activation: a name (`'relu'`), a callable (`jaxtape.nn.relu`), or None
(linear)."""

RegularizerLike: TypeAlias = str | Mapping[str, Any] | Callable[..., Any] | None
"""A weight regularizer: a name (`'l2'`), a config dict, a `Regularizer` (called
on the weight, returns a scalar), or None."""

ConstraintLike: TypeAlias = Callable[..., Any] | None
"""A weight constraint: a callable applied to the weight after each update."""

LossLike: TypeAlias = str | Mapping[str, Any] | Callable[..., Any]
"""A loss: a name (`'mse'`), a config dict, a `Loss`, or `fn(y_true, y_pred)`."""

MetricLike: TypeAlias = str | Mapping[str, Any] | Callable[..., Any]
"""A metric: a name (`'accuracy'`), a config dict, a `Metric`, or a function."""


class OptimizerProtocol(Protocol):
    """What `Model.compile` needs of an optimizer (any `jaxtape.keras.optimizers`
    optimizer)."""

    def apply_gradients(self, grads_and_vars: Any) -> Any:
        """Applies `(gradient, variable)` pairs."""
        ...


OptimizerLike: TypeAlias = str | Mapping[str, Any] | OptimizerProtocol
"""An optimizer: a name (`'adam'`), a config dict, or an optimizer object."""

LearningRateLike: TypeAlias = "float | Tensor | SupportsArray | Callable[..., Any]"
"""A learning rate: a number, a scalar Tensor or Variable, a
`LearningRateSchedule` (called with the step), or a zero-argument callable."""
