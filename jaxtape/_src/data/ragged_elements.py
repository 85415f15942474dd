"""Ragged components of `jaxtape.data` elements: `HostRagged`, and TF's rules
for slicing, batching and specs of RaggedTensors in a pipeline.

Layer L4 (data/). Inside a pipeline a RaggedTensor is a `HostRagged`: NumPy
flat values cut by NumPy row splits (outermost first). A row of a ragged_rank
1 tensor has ragged_rank 0 (no splits): TF's `RaggedTensorSpec(..., 0)`,
iterated as a plain Tensor, batched into a RaggedTensor again.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from jaxtape._src.core import dtypes
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor, TensorShape, TensorSpec
from jaxtape._src.data import sparse_elements
from jaxtape._src.data.sparse_elements import HostSparse
from jaxtape._src.data.type_specs import SparseTensorSpec
from jaxtape._src.structured.ragged import RaggedTensor, RaggedTensorSpec

_INT64 = np.dtype(np.int64)


class HostRagged:
    """A ragged component on the host: `values` cut by `splits` (outermost first)."""

    __slots__ = ("values", "splits", "splits_dtype")

    def __init__(self, values, splits: tuple, splits_dtype=_INT64):
        self.values = values
        self.splits = tuple(splits)
        self.splits_dtype = np.dtype(splits_dtype)

    @classmethod
    def from_ragged(cls, rt: RaggedTensor) -> HostRagged:
        splits = tuple(np.asarray(to_value(s)) for s in rt.nested_row_splits)
        values = np.asarray(to_value(rt.flat_values))
        return cls(values, splits, splits[0].dtype)

    @classmethod
    def from_dense(cls, a: np.ndarray, ragged_rank: int, splits_dtype) -> HostRagged:
        """A dense array as a ragged one of `ragged_rank` (uniform rows)."""
        a = np.asarray(a)
        splits, rows = [], a.shape[0]
        for k in range(ragged_rank):
            width = a.shape[k + 1]
            splits.append((np.arange(rows + 1) * width).astype(splits_dtype))
            rows *= width
        values = a.reshape((rows,) + a.shape[ragged_rank + 1 :])
        return cls(values, tuple(splits), splits_dtype)

    @property
    def ragged_rank(self) -> int:
        return len(self.splits)

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def shape(self) -> tuple:
        if not self.splits:
            return tuple(self.values.shape)
        nrows = len(self.splits[0]) - 1
        return (nrows,) + (None,) * self.ragged_rank + tuple(self.values.shape[1:])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, key):
        n = self.shape[0]
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            if step != 1:
                raise NotImplementedError("HostRagged slices need step 1")
            values, splits = _rows(self.values, self.splits, start, max(stop, start))
            return HostRagged(values, splits, self.splits_dtype)
        i = int(key) + (n if key < 0 else 0)
        if not self.splits:
            return HostRagged(self.values[i], (), self.splits_dtype)
        s = self.splits[0]
        values, splits = _rows(self.values, self.splits[1:], s[i], s[i + 1])
        return HostRagged(values, splits, self.splits_dtype)

    def to_jaxtape(self) -> Any:
        """A Tensor (ragged_rank 0) or a RaggedTensor, as TF's iterator gives."""
        values = Tensor(jax.numpy.asarray(self.values))
        if not self.splits:
            return values
        splits = [Tensor(jax.numpy.asarray(s)) for s in self.splits]
        return RaggedTensor.from_nested_row_splits(values, splits, validate=False)

    def numpy(self):
        """TF's `as_numpy_iterator` form (`RaggedTensor.numpy()`)."""
        if not self.splits:
            return np.asarray(self.values)
        return self.to_jaxtape().numpy()

    def spec(self) -> RaggedTensorSpec:
        shape = list(self.shape)
        if not self.splits:
            shape[0] = None  # (a row of a ragged tensor: its length varies)
        return RaggedTensorSpec(
            shape, self.dtype, self.ragged_rank, dtypes.as_dtype(self.splits_dtype)
        )


def _rows(values, splits: tuple, a: int, b: int):
    """Rows `a:b` of `values` cut by `splits`: their values and rebased splits."""
    if not splits:
        return values[a:b], ()
    s = splits[0][a : b + 1]
    inner, rest = _rows(values, splits[1:], int(s[0]), int(s[-1]))
    return inner, (s - s[0],) + rest


jax.tree_util.register_pytree_node(
    HostRagged,
    lambda h: ((h.values, *h.splits), h.splits_dtype),
    lambda dt, parts: HostRagged(parts[0], tuple(parts[1:]), dt),
)


def stack(parts: list) -> Any:
    """`batch`'s stacking: arrays stack; ragged components become one more
    ragged dimension (TF's batching of RaggedTensorSpec components)."""
    first = parts[0]
    if isinstance(first, HostSparse):
        return sparse_elements.stack(parts)
    if not isinstance(first, HostRagged):
        return np.stack(parts)
    dt = first.splits_dtype
    outer = np.cumsum([0] + [p.shape[0] for p in parts]).astype(dt)
    levels = []
    for k in range(first.ragged_rank):
        pieces, offset = [], 0
        for p in parts:
            s = np.asarray(p.splits[k])
            pieces.append(s[:-1] + offset)
            offset += int(s[-1])
        pieces.append(np.asarray([offset], dt))
        levels.append(np.concatenate(pieces).astype(dt))
    values = np.concatenate([np.asarray(p.values) for p in parts])
    return HostRagged(values, (outer, *levels), dt)


# -- specs -----------------------------------------------------------------------------
def slice_spec(a) -> Any:
    """The spec of one slice of a `from_tensor_slices` component."""
    if isinstance(a, HostSparse):
        return sparse_elements.slice_spec(a)
    if isinstance(a, HostRagged):
        return RaggedTensorSpec(
            list(a.shape[1:]),
            a.dtype,
            a.ragged_rank - 1,
            dtypes.as_dtype(a.splits_dtype),
        )
    return None


def batched_spec(s, lead) -> Any:
    if isinstance(s, SparseTensorSpec):
        return sparse_elements.batched_spec(s, lead)
    if isinstance(s, RaggedTensorSpec):
        return RaggedTensorSpec(
            [lead, *s.shape], s.dtype, s.ragged_rank + 1, s.row_splits_dtype
        )
    return TensorSpec([lead, *s.shape], s.dtype)


def unbatched_spec(s) -> Any:
    if isinstance(s, SparseTensorSpec):
        return sparse_elements.unbatched_spec(s)
    if isinstance(s, RaggedTensorSpec):
        return RaggedTensorSpec(
            list(s.shape[1:]), s.dtype, max(s.ragged_rank - 1, 0), s.row_splits_dtype
        )
    return TensorSpec(s.shape[1:], s.dtype)


def ragged_rank_for(spec, inferred: bool):
    """TF's `ragged_batch` rule: a component with an unknown dimension becomes
    ragged up to its last unknown one (None: it stays dense). A spec jaxtape
    inferred from a value (after `map`) has no unknown sizes to read, so every
    dimension of a rank >= 1 component counts as unknown."""
    if not isinstance(spec, TensorSpec) or spec.shape.rank in (None, 0):
        return None
    dims = list(spec.shape)
    if inferred:
        return len(dims) - 1
    unknown = [i for i, d in enumerate(dims) if d is None]
    return max(unknown) if unknown else None


def ragged_spec(spec, k, splits_dtype, inferred: bool) -> Any:
    if k is None:
        return spec
    shape = [None] * spec.shape.rank if inferred else list(spec.shape)
    return RaggedTensorSpec(
        TensorShape(shape), spec.dtype, k, dtypes.as_dtype(splits_dtype)
    )


def to_ragged(ds, row_splits_dtype) -> Any:
    """`ds` with each varying-shape component as a HostRagged (`ragged_batch`)."""
    from jaxtape._src.data.structure import _map_structure, _zip_structures

    dt = dtypes.np_dtype(row_splits_dtype)
    spec = ds.element_spec
    inferred = ds._inferred
    ranks = _map_structure(lambda s: ragged_rank_for(s, inferred), spec)
    source = ds._make

    def convert(pair):
        k, a = pair
        return a if k is None else HostRagged.from_dense(a, k, dt)

    def make():
        for element in source():
            yield _zip_structures(convert, [ranks, element])

    new_spec = _zip_structures(
        lambda pair: ragged_spec(pair[1], pair[0], dt, inferred), [ranks, spec]
    )
    return ds._derive(make, ds._cardinality, new_spec)
