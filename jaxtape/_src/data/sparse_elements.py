"""Sparse components of `jaxtape.data` elements: `HostSparse`, and TF's rules
for slicing, batching and specs of SparseTensors in a pipeline.

Layer L4 (data/). Inside a pipeline a SparseTensor is a `HostSparse`: NumPy
int64 `indices` `[N, rank]`, NumPy `values` `[N]` and a static dense shape,
the counterpart of `ragged_elements.HostRagged`. As in TF: a slice along
dimension 0 keeps the entries of that row (dense shape `shape[1:]`);
batching stacks entries under a new leading index, the dense shape being the
largest of each dimension; `as_numpy_iterator` gives the dense array.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from jaxtape._src.core import errors
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.data.type_specs import SparseTensorSpec
from jaxtape._src.structured.sparse import SparseTensor

_INT64 = np.dtype(np.int64)


class HostSparse:
    """A sparse component on the host.

    `known` is False for values a `map` function returned: the spec read off
    such a value has unknown dimensions (TF's traced shape of e.g. a
    `VarLenFeature` is `[None]`; here the first element is all there is).
    """

    __slots__ = ("indices", "values", "dense_shape", "known")

    def __init__(self, indices, values, dense_shape, known: bool = True):
        self.indices = indices
        self.values = values
        self.dense_shape = tuple(int(d) for d in dense_shape)
        self.known = known

    @classmethod
    def from_sparse(cls, sp: SparseTensor, known: bool = True) -> HostSparse:
        indices = np.asarray(to_value(sp.indices), _INT64)
        values = np.asarray(to_value(sp.values))
        return cls(indices, values, tuple(sp.shape), known)

    @property
    def dtype(self):
        return np.asarray(self.values).dtype

    @property
    def shape(self) -> tuple:
        return self.dense_shape

    @property
    def ndim(self) -> int:
        return len(self.dense_shape)

    def __getitem__(self, key) -> HostSparse:
        """Row `key` (its entries, without the first index) or rows `a:b`."""
        indices, values = np.asarray(self.indices), np.asarray(self.values)
        n = self.dense_shape[0]
        first = indices[:, 0]
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            if step != 1:
                raise NotImplementedError("HostSparse slices need step 1")
            stop = max(stop, start)
            keep = (first >= start) & (first < stop)
            rows = indices[keep].copy()
            rows[:, 0] -= start
            shape = (stop - start, *self.dense_shape[1:])
            return HostSparse(rows, values[keep], shape, self.known)
        i = int(key) + (n if key < 0 else 0)
        keep = first == i
        return HostSparse(
            indices[keep][:, 1:], values[keep], self.dense_shape[1:], self.known
        )

    def to_jaxtape(self) -> SparseTensor:
        """The jaxtape SparseTensor that iteration yields."""
        return SparseTensor(self.indices, self.values, self.dense_shape)

    def numpy(self) -> np.ndarray:
        """TF's `as_numpy_iterator` form of a SparseTensor: the dense array."""
        values = np.asarray(self.values)
        out = np.zeros(self.dense_shape, values.dtype)
        out[tuple(np.asarray(self.indices).T)] = values
        return out

    def spec(self) -> SparseTensorSpec:
        shape = self.dense_shape if self.known else [None] * self.ndim
        return SparseTensorSpec(shape, self.dtype)


jax.tree_util.register_pytree_node(
    HostSparse,
    lambda h: ((h.indices, h.values), (h.dense_shape, h.known)),
    lambda aux, parts: HostSparse(parts[0], parts[1], aux[0], aux[1]),
)


def stack(parts: list) -> HostSparse:
    """TF's batching of SparseTensors: entries under a new leading index, the
    dense shape the largest of each dimension (ranks must agree)."""
    ranks = {p.ndim for p in parts}
    if len(ranks) != 1:
        raise errors.InvalidArgumentError(
            None,
            None,
            "Cannot batch SparseTensors of different ranks "
            f"({sorted(ranks)}); give every element the same rank.",
        )
    shape = tuple(np.max([p.dense_shape for p in parts], axis=0).tolist())
    indices = [
        np.concatenate(
            [np.full((len(p.values), 1), i, _INT64), np.asarray(p.indices, _INT64)],
            axis=1,
        )
        for i, p in enumerate(parts)
    ]
    values = np.concatenate([np.asarray(p.values) for p in parts])
    known = all(p.known for p in parts)
    return HostSparse(np.concatenate(indices), values, (len(parts), *shape), known)


# -- specs -----------------------------------------------------------------------------
def slice_spec(a: HostSparse) -> SparseTensorSpec:
    return SparseTensorSpec(a.dense_shape[1:], a.dtype)


def batched_spec(s: SparseTensorSpec, lead) -> SparseTensorSpec:
    """A batch's dense shape: unknown where the elements' may differ."""
    return SparseTensorSpec([lead, *s.shape] if s.shape.rank is not None else None,
                            s.dtype)  # fmt: skip


def unbatched_spec(s: SparseTensorSpec) -> Any:
    if s.shape.rank is None:
        return SparseTensorSpec(None, s.dtype)
    return SparseTensorSpec(list(s.shape)[1:], s.dtype)
