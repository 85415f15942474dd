"""TF's TypeSpecs of composite values: `SparseTensorSpec`, `IndexedSlicesSpec`,
`TensorArraySpec`, `NoneTensorSpec` (`OptionalSpec` is in `optional`).

Layer L4 (data/): the types of `tf.data` elements; they import the value
classes from `structured/` and `ops/`. The shared rules (equality, hashing,
repr, compatibility, generalizing shapes) are `core.type_spec.TypeSpec`'s,
read off each class's `_serialize()` tuple, as in TF.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jaxtape._src.core import dtypes
from jaxtape._src.core.tensor import TensorShape
from jaxtape._src.core.type_spec import TypeSpec
from jaxtape._src.ops.misc_ops import IndexedSlices
from jaxtape._src.ops.tensor_array import TensorArray
from jaxtape._src.structured.sparse import SparseTensor

if TYPE_CHECKING:
    from jaxtape._src.core.typing import DTypeLike


class SparseTensorSpec(TypeSpec):
    """The type of a `SparseTensor`: its dense shape and values' dtype.

    >>> jaxtape.SparseTensorSpec([None, 3], jaxtape.int64)
    SparseTensorSpec(TensorShape([None, 3]), jaxtape.int64)
    """

    __slots__ = ("_shape", "_dtype")

    def __init__(self, shape=None, dtype: DTypeLike = dtypes.float32):
        self._shape = TensorShape(shape)
        self._dtype = dtypes.as_dtype(dtype)

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)

    @property
    def value_type(self) -> type:
        return SparseTensor

    def _serialize(self) -> tuple:
        return (self._shape, self._dtype)

    @classmethod
    def from_value(cls, value) -> SparseTensorSpec:
        """The spec of a SparseTensor (its full dense shape)."""
        return cls(value.shape, value.dtype)


class IndexedSlicesSpec(TypeSpec):
    """The type of an `IndexedSlices` (TF's constructor and repr; like TF's,
    it has no public `shape` or `dtype`)."""

    __slots__ = ("_shape", "_values_dtype", "_indices_dtype", "_dense_shape_dtype",
                 "_indices_shape")  # fmt: skip

    def __init__(self, shape=None, dtype=dtypes.float32, indices_dtype=dtypes.int64,
                 dense_shape_dtype=None, indices_shape=None):  # fmt: skip
        self._shape = TensorShape(shape)
        self._values_dtype = dtypes.as_dtype(dtype)
        self._indices_dtype = dtypes.as_dtype(indices_dtype)
        self._dense_shape_dtype = (
            None if dense_shape_dtype is None else dtypes.as_dtype(dense_shape_dtype)
        )
        self._indices_shape = TensorShape(
            [None] if indices_shape is None else indices_shape
        )
        if self._indices_shape.rank not in (None, 1):
            raise ValueError(
                f"Shape {self._indices_shape} must have rank 1: the indices of an "
                "IndexedSlices are a vector."
            )

    @property
    def value_type(self) -> type:
        return IndexedSlices

    def _serialize(self) -> tuple:
        return (self._shape, self._values_dtype, self._indices_dtype,
                self._dense_shape_dtype, self._indices_shape)  # fmt: skip


class TensorArraySpec(TypeSpec):
    """The type of a `TensorArray`: element shape and dtype, `dynamic_size`,
    `infer_shape`."""

    __slots__ = ("_element_shape", "_dtype", "_dynamic_size", "_infer_shape")

    def __init__(self, element_shape=None, dtype=dtypes.float32, dynamic_size=False,
                 infer_shape=True):  # fmt: skip
        self._element_shape = TensorShape(element_shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic_size = dynamic_size
        self._infer_shape = infer_shape

    @property
    def value_type(self) -> type:
        return TensorArray

    def _serialize(self) -> tuple:
        return (self._element_shape, self._dtype, self._dynamic_size,
                self._infer_shape)  # fmt: skip

    def is_compatible_with(self, spec_or_value) -> bool:
        """TF's rule: compatible element shapes and the same dtype and
        `dynamic_size` (`infer_shape` is not compared)."""
        other = spec_or_value
        if isinstance(other, TensorArray):
            other = TensorArraySpec.from_value(other)
        if not isinstance(other, TensorArraySpec):
            return False
        return (
            self._dtype == other._dtype
            and self._dynamic_size == other._dynamic_size
            and self._element_shape.is_compatible_with(other._element_shape)
        )

    def is_subtype_of(self, other) -> bool:
        """TF's rule: the same dtype and `dynamic_size` (shapes not compared)."""
        return (
            isinstance(other, TensorArraySpec)
            and self._dtype == other._dtype
            and self._dynamic_size == other._dynamic_size
        )

    def most_specific_common_supertype(self, others) -> TensorArraySpec | None:
        """TF 2.21's result: this spec's element shape (TF reads the others'
        shapes from a spent generator), `infer_shape` only if all infer; None
        unless dtypes and `dynamic_size` agree."""
        if not all(self.is_subtype_of(other) for other in others):
            return None
        infer = self._infer_shape and all(o._infer_shape for o in others)
        return TensorArraySpec(
            self._element_shape, self._dtype, self._dynamic_size, infer
        )

    @classmethod
    def from_value(cls, value) -> TensorArraySpec:
        if not isinstance(value, TensorArray):
            raise TypeError(
                f"Expected value to be a TensorArray, but saw: {type(value).__name__}"
            )
        return cls(value.element_shape, value.dtype, value.dynamic_size,
                   bool(getattr(value, "_infer", True)))  # fmt: skip


class NoneTensor:
    """The value a `NoneTensorSpec` describes: `None` inside a composite value."""

    @property
    def _type_spec(self) -> NoneTensorSpec:
        return NoneTensorSpec()


class NoneTensorSpec(TypeSpec):
    """The type of `None` inside a structure (TF's `NoneTensorSpec`)."""

    __slots__ = ()

    @property
    def value_type(self) -> type:
        return NoneTensor

    def _serialize(self) -> tuple:
        return ()

    @classmethod
    def from_value(cls, value) -> NoneTensorSpec:
        if value is not None and not isinstance(value, NoneTensor):
            raise ValueError(f"Expected None, got {value!r}")
        return cls()
