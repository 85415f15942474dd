"""`Optional` (TF's `tf.experimental.Optional`) and `OptionalSpec`: a value
that may be absent, e.g. what `Iterator.get_next_as_optional()` returns.

Layer L4 (data/). An Optional holds a bool flag and, when present, a nested
structure of Tensors / SparseTensors / RaggedTensors. It is a JAX pytree (the
flag and the value are its children, the element spec its static part), so it
can be passed into `jaxtape.function` and branched on with `jaxtape.cond`.
"""

from __future__ import annotations

from typing import Any

import jax

from jaxtape._src.core import errors
from jaxtape._src.core.tensor import Tensor, TensorSpec
from jaxtape._src.core.type_spec import TypeSpec
from jaxtape._src.data.structure import _map_structure
from jaxtape._src.data.type_specs import SparseTensorSpec
from jaxtape._src.ops.creation_ops import convert_to_tensor
from jaxtape._src.structured.ragged import RaggedTensor, RaggedTensorSpec
from jaxtape._src.structured.sparse import SparseTensor


class Optional:
    """A value that may be absent (TF's `tf.experimental.Optional`).

    >>> opt = jaxtape.experimental.Optional.from_value(jaxtape.constant(3))
    >>> bool(opt.has_value()), int(opt.get_value())
    (True, 3)

    Differences from TensorFlow: inside `jaxtape.function`, `get_value()` of an
    Optional made by `empty` raises when traced (TF raises when it runs).
    """

    def __init__(self, has_value, value, element_spec):
        self._has_value = has_value
        self._value = value
        self._element_spec = element_spec

    @staticmethod
    def from_value(value) -> Optional:
        """An Optional holding `value` (a nested structure of tensors)."""
        value = _map_structure(_as_value, value)
        spec = _map_structure(_spec_of_value, value)
        return Optional(Tensor(jax.numpy.asarray(True)), value, spec)

    @staticmethod
    def empty(element_spec) -> Optional:
        """An Optional without a value, of type `element_spec`."""
        return Optional(Tensor(jax.numpy.asarray(False)), None, element_spec)

    def has_value(self, name=None) -> Tensor:
        """A scalar bool Tensor: whether this Optional holds a value."""
        del name  # accepted for TF compatibility
        return self._has_value

    def get_value(self, name=None):
        """The value; `InvalidArgumentError` if there is none (as TF)."""
        del name  # accepted for TF compatibility
        if self._value is None:
            raise errors.InvalidArgumentError(
                None,
                None,
                "The given optional does not have a value. Check "
                "`optional.has_value()` first (e.g. with `jaxtape.cond`).",
            )
        return self._value

    @property
    def element_spec(self):
        """The structure of TypeSpecs of the value."""
        return self._element_spec

    @property
    def _type_spec(self) -> OptionalSpec:
        return OptionalSpec(self._element_spec)


def _as_value(x) -> Any:
    if isinstance(x, (Tensor, SparseTensor, RaggedTensor)):
        return x
    return convert_to_tensor(x)


def _spec_of_value(x) -> TypeSpec:
    if isinstance(x, SparseTensor):
        return SparseTensorSpec.from_value(x)
    if isinstance(x, RaggedTensor):
        return RaggedTensorSpec.from_value(x)
    return TensorSpec(x.shape, x.dtype)


jax.tree_util.register_pytree_node(
    Optional,
    lambda o: ((o._has_value, o._value), o._element_spec),
    lambda spec, parts: Optional(parts[0], parts[1], spec),
)


class OptionalSpec(TypeSpec):
    """The type of an `Optional`: the spec of its value.

    >>> jaxtape.OptionalSpec(jaxtape.TensorSpec([], jaxtape.int32))
    OptionalSpec(TensorSpec(shape=(), dtype=jaxtape.int32, name=None),)
    """

    __slots__ = ("_element_spec",)

    def __init__(self, element_spec):
        self._element_spec = element_spec

    @property
    def value_type(self) -> type:
        return Optional

    def _serialize(self) -> tuple:
        return (self._element_spec,)

    @classmethod
    def from_value(cls, value) -> OptionalSpec:
        return cls(value.element_spec)


def get_next_as_optional(iterator) -> Optional:
    """The iterator's next element as an Optional, empty at the end (TF's
    `tf.data.experimental.get_next_as_optional`)."""
    try:
        element = next(iterator)
    except StopIteration:
        return Optional.empty(iterator.element_spec)
    value = _map_structure(_as_value, element)
    return Optional(Tensor(jax.numpy.asarray(True)), value, iterator.element_spec)
