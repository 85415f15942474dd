"""`IteratorSpec` (TF's `tf.data.IteratorSpec`): the type of a dataset iterator.

Layer L4 (data/).
"""

from __future__ import annotations

from jaxtape._src.core.type_spec import TypeSpec
from jaxtape._src.data.dataset import DatasetIterator


class IteratorSpec(TypeSpec):
    """The type of an iterator over elements of `element_spec`.

    >>> jaxtape.data.IteratorSpec(jaxtape.TensorSpec([], jaxtape.int64))
    IteratorSpec(TensorSpec(shape=(), dtype=jaxtape.int64, name=None),)
    """

    __slots__ = ("_element_spec",)

    def __init__(self, element_spec):
        self._element_spec = element_spec

    @property
    def value_type(self) -> type:
        return DatasetIterator

    def _serialize(self) -> tuple:
        return (self._element_spec,)

    @classmethod
    def from_value(cls, value) -> IteratorSpec:
        return cls(value.element_spec)
