"""Element structures of `jaxtape.data`: nesting, host conversion, specs.

Layer L4. As in tf.data, tuples and dicts are structure and a list is one
value (an array); a Dataset inside an element (after `window`) is a leaf.
"""

from __future__ import annotations

from typing import Any, cast

import jax
import numpy as np

from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor, TensorShape, TensorSpec
from jaxtape._src.data.ragged_elements import HostRagged
from jaxtape._src.data.sparse_elements import HostSparse
from jaxtape._src.data.type_specs import SparseTensorSpec
from jaxtape._src.state.variable import Variable
from jaxtape._src.structured import strings
from jaxtape._src.structured.ragged import RaggedTensor
from jaxtape._src.structured.sparse import SparseTensor

_HOST_COMPOSITE = (HostRagged, HostSparse)  # element components that are not arrays


class _DatasetBase:
    """The base of `Dataset`: lets these helpers treat datasets as leaves."""


# -- nested structures ----------------------------------------------------------------
# As in tf.data, tuples and dicts are structure; a list is one value (an array).
def _map_structure(fn, s):
    if isinstance(s, tuple) and hasattr(s, "_fields"):
        return type(s)(*[_map_structure(fn, v) for v in s])
    if isinstance(s, tuple):
        return tuple(_map_structure(fn, v) for v in s)
    if isinstance(s, dict):
        return {k: _map_structure(fn, v) for k, v in s.items()}
    return fn(s)


def _leaves(s) -> list:
    out = []
    _map_structure(out.append, s)
    return out


def _zip_structures(fn, structures):
    first = structures[0]
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return type(first)(
            *[
                _zip_structures(fn, [s[i] for s in structures])
                for i in range(len(first))
            ]
        )
    if isinstance(first, tuple):
        return tuple(
            _zip_structures(fn, [s[i] for s in structures]) for i in range(len(first))
        )
    if isinstance(first, dict):
        return {k: _zip_structures(fn, [s[k] for s in structures]) for k in first}
    return fn(structures)


def _to_numpy(x) -> Any:
    """A host array by TF's conversion rules (Python float -> float32, ...);
    a RaggedTensor as a `HostRagged`, a SparseTensor as a `HostSparse`."""
    if type(x) is Tensor:
        return np.asarray(x._value)
    if isinstance(x, Variable):
        return np.asarray(x.read_value()._value)
    if isinstance(x, np.ndarray) or isinstance(x, _HOST_COMPOSITE):
        return x
    if isinstance(x, RaggedTensor):
        return HostRagged.from_ragged(x)
    if isinstance(x, SparseTensor):
        return HostSparse.from_sparse(x)
    if isinstance(x, (str, bytes)) or (
        isinstance(x, list) and isinstance(_first_leaf(x), (str, bytes))
    ):
        return _string_array(x)
    return np.asarray(to_value(x))


def _first_leaf(x):
    while isinstance(x, (list, tuple)) and x:
        x = x[0]
    return x


def _string_array(x) -> np.ndarray:
    """Strings (kept as NumPy; elements come out as StringTensors) by TF's rules:
    rectangular, and not mixed with numbers."""
    try:
        out = np.asarray(x)
    except ValueError:
        raise ValueError(
            "Can't convert non-rectangular Python sequence to Tensor. Every row of "
            "a nested list needs the same length; pad the rows first."
        ) from None
    flat = np.ravel(np.asarray(x, dtype=object))
    if out.dtype.kind not in "SU" or not all(isinstance(v, (str, bytes)) for v in flat):
        raise ValueError(
            "Can't convert Python sequence with mixed types to Tensor: strings and "
            f"other values in {x!r:.60}. Keep strings and numbers in separate "
            "components (a tuple or dict)."
        )
    if any(v[-1:] in (b"\x00", "\x00") for v in flat):
        # NumPy's fixed-width strings drop trailing NULs (serialized protos end
        # in them): keep such strings as Python objects instead.
        return np.asarray(x, dtype=object)
    return out


def _to_tensor(x):
    if isinstance(x, _DatasetBase):
        return x
    if isinstance(x, _HOST_COMPOSITE):
        return x.to_jaxtape()
    if isinstance(x, (str, bytes)) or (
        isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "USO"
    ):
        return strings.convert(x)  # strings: a host StringTensor
    return Tensor(jax.numpy.asarray(x))


def _from_user(value):
    """User data as a structure of host arrays (by TF's conversion rules)."""
    return _map_structure(_to_numpy, value)


def _kept(x):
    # A map function's results stay where they are (no copy back to the host).
    if isinstance(x, _DatasetBase):
        return x
    if type(x) is Tensor:
        return x._value
    if isinstance(x, Variable):
        return x.read_value()._value
    if isinstance(x, SparseTensor):  # its spec will not hold this value's shape
        return HostSparse.from_sparse(x, known=False)
    return x if isinstance(x, jax.Array) else _to_numpy(x)


def _spec_of(element):
    def spec(a):
        if isinstance(a, _DatasetBase):
            return DatasetSpec(cast(Any, a).element_spec)
        if isinstance(a, _HOST_COMPOSITE):
            return a.spec()
        a = np.asarray(a)
        dtype = _dtype(a)
        return TensorSpec(a.shape, dtype)

    return _map_structure(spec, element)


class DatasetSpec:
    """The type of a Dataset-valued element (TF's `tf.data.DatasetSpec`)."""

    def __init__(self, element_spec, dataset_shape=()):
        self._element_spec = element_spec
        self._dataset_shape = TensorShape(dataset_shape)

    element_spec = property(lambda self: self._element_spec)

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, DatasetSpec)
            and self._element_spec == other._element_spec
            and self._dataset_shape == other._dataset_shape
        )

    def __hash__(self) -> int:
        return hash(("DatasetSpec", repr(self._element_spec)))

    def __repr__(self) -> str:
        shape = list(self._dataset_shape)
        return f"DatasetSpec({self._element_spec!r}, TensorShape({shape}))"


def _dtype(a: np.ndarray):
    if a.dtype.kind in "USO":
        return np.dtype(object)  # `jaxtape.string`
    return a.dtype


def _np_dtype(dtype):
    from jaxtape._src.core import dtypes

    return dtypes.np_dtype(dtype)


def _host_or_device_tensor(x):
    if isinstance(x, _DatasetBase):
        return x
    if isinstance(x, jax.Array):
        return Tensor(x)
    return _to_tensor(x)


def _numpy_leaf(x):
    if isinstance(x, _DatasetBase):
        raise TypeError(
            "Dataset.as_numpy_iterator() is not supported for datasets that produce "
            "values of type DatasetSpec (e.g. after `window`); iterate it with "
            "`for` or `flat_map` the inner datasets first."
        )
    if isinstance(x, _HOST_COMPOSITE):
        return x.numpy()
    if isinstance(x, (str, bytes)) or (
        isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "USO"
    ):
        return strings.convert(x).numpy()  # bytes, as TF's
    out = np.asarray(x)
    return out[()] if out.ndim == 0 else out  # a scalar: a NumPy scalar, as TF's


def _common_spec(specs):
    """The most specific spec compatible with both (TF's rule for concatenate)."""
    a, b = specs
    if isinstance(a, DatasetSpec) or isinstance(b, DatasetSpec):
        if a != b:
            raise TypeError("incompatible dataset specs")
        return a
    if type(a) is not type(b) or a.shape.rank != b.shape.rank:
        raise TypeError("incompatible specs")
    if isinstance(a, TensorSpec):  # (names dropped)
        if a.dtype != b.dtype:
            raise TypeError("incompatible specs")
        return TensorSpec(a.shape.most_specific_compatible_shape(b.shape), a.dtype)
    try:
        return a.most_specific_compatible_type(b)
    except ValueError:
        raise TypeError("incompatible specs") from None


def _checked_state(initial, new, method: str):
    """`new` state must have the initial state's structure and dtypes (as TF)."""
    try:
        pairs = _leaves(_zip_structures(list, [initial, new]))
    except (KeyError, IndexError, TypeError):
        raise TypeError(
            f"The {method} function must return a state with the structure of the "
            f"initial state {_spec_of(initial)}."
        ) from None
    want = [str(np.asarray(a).dtype) for a, _ in pairs]
    got = [str(np.asarray(b).dtype) for _, b in pairs]
    if got != want:
        raise TypeError(
            "The element types for the new state must match the initial state. "
            f"Expected {want}; got {got}."
        )
    return new


class _TypeOnly:
    """A `from_generator` component given by `output_types` alone (no shape)."""

    def __init__(self, dtype):
        self.dtype = dtype


def _conform(pair):
    """A generator's value as the declared dtype and shape (TF's checks)."""
    spec, value = pair
    if isinstance(spec, SparseTensorSpec):
        got = _to_numpy(value)
        got_spec = got.spec() if isinstance(got, HostSparse) else type(value).__name__
        if not spec.is_compatible_with(got_spec):
            raise TypeError(
                f"`generator` yielded an element of {got_spec!r} where an element "
                f"of {spec!r} was expected."
            )
        return got
    dtype = _np_dtype(spec.dtype)
    try:
        array = np.asarray(_to_numpy(value)).astype(dtype)
    except (TypeError, ValueError):
        raise TypeError(
            "`generator` yielded an element that could not be converted to the "
            f"expected type. The expected type was {dtype}, but the yielded element "
            f"was {value!r}."
        ) from None
    if isinstance(spec, TensorSpec) and not spec.shape.is_compatible_with(
        TensorShape(array.shape)
    ):
        raise TypeError(
            f"`generator` yielded an element of shape {array.shape} where an element "
            f"of shape {tuple(spec.shape)} was expected."
        )
    return array
