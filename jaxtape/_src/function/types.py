"""TF's `tf.types.experimental`: the abstract types of functions and tensors,
with jaxtape's classes registered as their implementations. Layer L3.

`isinstance(jaxtape.function(f), tf.types.experimental.PolymorphicFunction)`
holds, as it does for a `tf.function`; `TensorLike` is the alias of what an
op takes.
"""

from __future__ import annotations

import abc
from typing import Union

import numpy as np

from jaxtape._src.core.tensor import Tensor
from jaxtape._src.function.concrete import ConcreteFunction as _ConcreteFunction
from jaxtape._src.function.function import Function as _Function


class Callable(abc.ABC):  # noqa: N801 - TF's name
    """Base of TF's callable function types (`tf.types.experimental.Callable`)."""

    @abc.abstractmethod
    def __call__(self, *args, **kwargs): ...


class ConcreteFunction(Callable):
    """A function traced for one input signature (what
    `jaxtape.function(f).get_concrete_function(...)` returns)."""


class GenericFunction(Callable):
    """A function traced per input signature (`jaxtape.function`'s result)."""


class PolymorphicFunction(GenericFunction):
    """TF 2's name for `GenericFunction` (`tf.function`'s result)."""


# TF's `tf.types.experimental.TensorLike`: what ops take (a typing Union, as TF's).
TensorLike = Union[  # noqa: UP007 - a typing.Union object, as TF's
    Tensor, int, float, bool, str, bytes, complex, tuple, list, np.ndarray, np.generic
]

ConcreteFunction.register(_ConcreteFunction)
PolymorphicFunction.register(_Function)
