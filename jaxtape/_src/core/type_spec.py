"""`TypeSpec` (TF's `tf.TypeSpec`): the base of every spec class.

Layer L0 (imports nothing from jaxtape). A spec describes a value's type
without its data. Each subclass gives `_serialize()`, a tuple of its
constructor arguments (TensorShapes, dtypes, plain values, nested specs);
equality, hashing, `repr`, `is_compatible_with`, `is_subtype_of` and
`most_specific_compatible_type` are read off it by TF's generic rules:
shapes compare by compatibility (or generalize to `None` dimensions), nested
specs recursively, everything else must be equal.
"""

from __future__ import annotations

from typing import Any


class TypeSpec:
    """The type of a value (a Tensor, SparseTensor, RaggedTensor, Optional, ...).

    Subclasses define `value_type` and `_serialize()`.

    >>> jaxtape.TensorSpec([2]).is_compatible_with(jaxtape.TensorSpec([None]))
    True

    Differences from TensorFlow: no `_to_components`/`_from_components` or
    proto methods (jaxtape values are JAX pytrees instead).
    """

    __slots__ = ()

    @property
    def value_type(self) -> type:
        """The Python type of the values this spec describes."""
        raise NotImplementedError(f"{type(self).__name__}.value_type")

    def _serialize(self) -> tuple:
        raise NotImplementedError(f"{type(self).__name__}._serialize")

    @classmethod
    def _deserialize(cls, serialization: tuple) -> TypeSpec:
        return cls(*serialization)

    def _spec_of_value(self, value) -> TypeSpec | None:
        """The spec of `value` for `is_compatible_with` (None: not a value)."""
        from_value = getattr(type(self), "from_value", None)
        if isinstance(value, self.value_type) and from_value is not None:
            return from_value(value)
        return None

    def is_compatible_with(self, spec_or_value) -> bool:
        """True if `spec_or_value` could be described by this spec (TF's rule)."""
        other = spec_or_value
        if not isinstance(other, TypeSpec):
            other = self._spec_of_value(other)
            if other is None:
                return False
        if type(self) is not type(other):
            return False
        return _compatible(self._serialize(), other._serialize())

    def is_subtype_of(self, other) -> bool:
        """True if every value of this spec is also a value of `other`."""
        if type(self) is not type(other):
            return False
        return _subtype(self._serialize(), other._serialize())

    def most_specific_compatible_type(self, other) -> TypeSpec:
        """The most specific spec compatible with both (ValueError if none);
        TF's deprecated name for `most_specific_common_supertype([other])`."""
        result = self.most_specific_common_supertype([other])
        if result is None:
            raise ValueError(
                f"No TypeSpec is compatible with both {self!r} and {other!r}"
            )
        return result

    def most_specific_common_supertype(self, others) -> TypeSpec | None:
        """The most specific spec that `self` and all `others` are subtypes of
        (shapes generalized to their common dimensions), or None (TF's rule)."""
        merged = self._serialize()
        try:
            for other in others:
                if type(self) is not type(other):
                    return None
                merged = _generalize(merged, other._serialize())
        except _Incompatible:
            return None
        return self._deserialize(merged)

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self._serialize() == other._serialize()

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((type(self).__name__, _hashable(self._serialize())))

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self._serialize()!r}"


class _Incompatible(Exception):
    pass


def _is_shape(x) -> bool:
    return hasattr(x, "most_specific_compatible_shape")


def _compatible(a, b) -> bool:
    if _is_shape(a) and _is_shape(b):
        return a.is_compatible_with(b)
    if isinstance(a, TypeSpec) and isinstance(b, TypeSpec):
        return a.is_compatible_with(b)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_compatible(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_compatible(a[k], b[k]) for k in a)
    return a == b


def _subtype(a, b) -> bool:
    if _is_shape(a) and _is_shape(b):
        if b.rank is None:
            return True
        if a.rank is None or len(a) != len(b):
            return False
        return all(y is None or x == y for x, y in zip(a, b))
    if isinstance(a, TypeSpec) and isinstance(b, TypeSpec):
        return a.is_subtype_of(b)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_subtype(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_subtype(a[k], b[k]) for k in a)
    return a == b


def _generalize(a, b) -> Any:
    """Shapes generalized to their common dimensions; all else must be equal."""
    if _is_shape(a) and _is_shape(b):
        return a.most_specific_compatible_shape(b)
    if isinstance(a, TypeSpec) and isinstance(b, TypeSpec):
        try:
            return a.most_specific_compatible_type(b)
        except ValueError:
            raise _Incompatible from None
    same_kind = type(a) is type(b)
    if same_kind and isinstance(a, tuple) and hasattr(a, "_fields"):
        return type(a)(*[_generalize(x, y) for x, y in zip(a, b)])
    if same_kind and isinstance(a, (tuple, list)) and len(a) == len(b):
        return type(a)(_generalize(x, y) for x, y in zip(a, b))
    if same_kind and isinstance(a, dict) and a.keys() == b.keys():
        return {k: _generalize(a[k], b[k]) for k in a}
    if a != b:
        raise _Incompatible
    return a


def _hashable(x) -> Any:
    if _is_shape(x):
        return ("shape", None if x.rank is None else tuple(x))
    if isinstance(x, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return tuple(_hashable(v) for v in x)
    return x
