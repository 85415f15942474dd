"""`tf.sparse`'s ops on `SparseTensor`s (reductions, products, set-like ops,
slicing, shape changes, counting). Layer L2 (`structured/`): imports `core`
and `ops`.

Values always pass through dispatched ops (gathers, segment sums, jnp
bodies), so gradients with respect to them record on a `GradientTape`.
The index bookkeeping runs in one of two ways:

- where the result's size is fixed by the static dense shape (`to_dense`,
  `reduce_sum`, `sparse_dense_matmul`, `softmax`, `reshape`, `concat`,
  `transpose`), in jnp inside the op: these work inside `jaxtape.function`;
- where the number of result entries depends on the data (`add` of two
  SparseTensors, `maximum`, `retain`, `slice`, `split`, `fill_empty_rows`,
  `from_dense`, `output_is_sparse=True`, `bincount`, `reset_shape()`),
  in NumPy on the host, as TF's kernels size their outputs: inside
  `jaxtape.function` these raise `NotImplementedError` unless the indices
  they read are concrete.

Differences from TensorFlow (all ops here): where TF defines no gradient
(`reduce_max`, `output_is_sparse=True` reductions, `maximum`, `minimum`,
`split`: TF raises), jaxtape's is the gradient of the computation. `concat`'s
values carry no gradient, as TF's (None eagerly; zeros from a compiled
`jaxtape.function`). Where TF's kernels merge inputs they assume sorted,
jaxtape sorts, so unsorted inputs give sorted results.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse

from jaxtape._src.core import checks, dtypes, errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops.array_ops import gather
from jaxtape._src.ops.creation_ops import convert_to_tensor
from jaxtape._src.ops.math_extra_ops import (
    segment_mean as _dense_segment_mean,
)
from jaxtape._src.ops.math_extra_ops import (
    segment_sum as _dense_segment_sum,
)
from jaxtape._src.ops.math_extra_ops import (
    unsorted_segment_mean,
    unsorted_segment_sqrt_n,
    unsorted_segment_sum,
)
from jaxtape._src.ops.misc_ops import IndexedSlices
from jaxtape._src.structured.sparse import (
    _INT64,
    SparseTensor,
    host_array,
    is_sparse,
    linear,
    sparse_arg,
    unlinear,
)


def _values_dtype(sp: SparseTensor) -> np.dtype:
    return np.dtype(sp._values._value.dtype)


def _same_dtype(a: SparseTensor, b, op_name: str) -> None:
    da = _values_dtype(a)
    db = _values_dtype(b) if is_sparse(b) else np.dtype(b._value.dtype)
    if da != db:
        raise errors.invalid_argument(
            f"cannot compute {op_name} as input #1(zero-based) was expected to be a "
            f"{da.name} tensor but is a {db.name} tensor. Cast one of them with "
            "`jaxtape.cast`.",
            op_name,
        )


def _same_shape(a: SparseTensor, b_shape, op_name: str) -> None:
    if tuple(a._shape) != tuple(b_shape):
        raise errors.invalid_argument(
            f"Operands' shapes do not match: got {list(a._shape)} and {list(b_shape)}.",
            op_name,
        )


def _host_indices(sp: SparseTensor, op_name: str) -> np.ndarray:
    return host_array(sp._indices, op_name, "the SparseTensor's indices")


def _take(x, positions: np.ndarray):
    """`x[positions]` as a recorded gather (int64 positions)."""
    return gather(x, convert_to_tensor(np.asarray(positions, _INT64)))


# -- reductions ----------------------------------------------------------------------
def _axes(axis, rank: int, op_name: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(rank))
    raw = np.ravel(host_array(axis, op_name, "axis")).astype(int).tolist()
    for a in raw:
        if not -rank <= a < rank:
            raise errors.invalid_argument(
                f"Invalid reduction dimension {a}, for input with {rank} dimensions.",
                op_name,
            )
    return tuple(sorted({a % rank for a in raw}))


def _group_body(values, ids, n, kind):
    if kind == "sum":
        return jax.ops.segment_sum(values, ids, n)
    out = jax.ops.segment_max(values, ids, n)
    count = jax.ops.segment_sum(jnp.ones(ids.shape, np.int32), ids, n)
    return jnp.where(count > 0, out, jnp.zeros((), values.dtype))


@op("SparseReduce", inputs=("indices", "values"))
def _reduce(indices, values, shape, axes, keepdims, kind):
    kept = [d for d in range(len(shape)) if d not in axes]
    kept_shape = tuple(shape[d] for d in kept)
    ids = linear(jnp.asarray(indices)[:, kept], kept_shape)
    out = _group_body(values, ids, max(math.prod(kept_shape), 0), kind)
    if keepdims:
        return out.reshape(tuple(1 if d in axes else s for d, s in enumerate(shape)))
    return out.reshape(kept_shape)


@op("SparseSegmentReduce", inputs=("values", "ids"))
def _group(values, ids, n, kind):
    return _group_body(values, ids, n, kind)


def _reduce_op(kind: str):
    op_name = "SparseReduceSum" if kind == "sum" else "SparseReduceMax"

    def reduce(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
        del name
        sp = sparse_arg(sp_input)
        shape = sp._shape
        axes = _axes(axis, len(shape), op_name)
        keep = bool(keepdims)
        if not output_is_sparse:
            return _reduce(sp._indices, sp._values, shape, axes, keep, kind)
        idx = _host_indices(sp, f"reduce_{kind}(output_is_sparse=True)")
        kept = [d for d in range(len(shape)) if d not in axes]
        kept_shape = tuple(shape[d] for d in kept)
        keys, ids = np.unique(linear(idx[:, kept], kept_shape), return_inverse=True)
        values = _group(
            sp._values, convert_to_tensor(ids.astype(_INT64)), len(keys), kind
        )
        rows = unlinear(keys.astype(_INT64), kept_shape)
        if keep:
            full = np.zeros((len(keys), len(shape)), _INT64)
            full[:, kept] = rows
            out_shape = tuple(1 if d in axes else s for d, s in enumerate(shape))
            return SparseTensor(convert_to_tensor(full), values, out_shape)
        return SparseTensor(convert_to_tensor(rows), values, kept_shape)

    reduce.__name__ = reduce.__qualname__ = f"reduce_{kind}"
    missing = "" if kind == "sum" else " (a group with no values is 0)"
    reduce.__doc__ = (
        f"The {kind} of the present values along `axis` (None: all), as TF's "
        f"`{op_name}`{missing}. "
        "`output_is_sparse=True` gives a SparseTensor with one entry per group "
        "that has values (read on the host)."
    )
    return reduce


reduce_sum = _reduce_op("sum")
reduce_max = _reduce_op("max")


# -- products ------------------------------------------------------------------
def _check_sdmm(xp, indices, values, b, shape, adjoint_a, adjoint_b):
    for col, label in enumerate("km" if adjoint_a else "mk"):
        v = indices[:, col]
        checks.require(
            xp,
            (v < 0) | (v >= shape[col]),
            "SparseTensorDenseMatMul",
            label
            + " ({}) from index[{},"
            + str(col)
            + f"] out of bounds (>={shape[col]})",
            lambda xp, p, v=v: v[p],
            lambda xp, p: p,
        )


@op(
    "SparseTensorDenseMatMul",
    inputs=("indices", "values", "b"),
    check=_check_sdmm,
)
def _sdmm(indices, values, b, shape, adjoint_a, adjoint_b):
    rows, cols = indices[:, 0], indices[:, 1]
    n_rows, n_cols = shape
    if adjoint_a:
        rows, cols, n_rows, n_cols = cols, rows, n_cols, n_rows
        values = jnp.conj(values)
    if adjoint_b:
        b = jnp.conj(jnp.swapaxes(b, -1, -2))
    a = jsparse.BCOO((values, jnp.stack([rows, cols], axis=1)), shape=(n_rows, n_cols))
    return a @ b


def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """`sp_a @ b` for a rank-2 SparseTensor and a dense matrix (or the reverse).

    Differentiable with respect to the sparse values and the dense matrix (a
    `jax.experimental.sparse.BCOO` product), as TF's.
    """
    del name
    if not is_sparse(sp_a) and is_sparse(b):
        # a @ B = (B^T @ a^T)^T, as TF computes it.
        from jaxtape._src.ops.array_ops import transpose as dense_transpose

        out = sparse_dense_matmul(b, sp_a, not adjoint_b, not adjoint_a)
        return dense_transpose(out, conjugate=True)
    sp = sparse_arg(sp_a, "sp_a")
    dense = convert_to_tensor(b)
    if len(sp._shape) != 2 or len(dense.shape) != 2:
        raise errors.invalid_argument(
            f"Tensor 'a_shape' and 'b' must be matrices; got shapes {list(sp._shape)} "
            f"and {list(dense.shape)}.",
            "SparseTensorDenseMatMul",
        )
    _same_dtype(sp, dense, "SparseTensorDenseMatMul")
    inner_a = sp._shape[0 if adjoint_a else 1]
    inner_b = dense.shape[1 if adjoint_b else 0]
    if inner_a != inner_b:
        raise errors.invalid_argument(
            "Cannot multiply A and B because inner dimension does not match: "
            f"{inner_a} vs. {inner_b}.  Did you forget a transpose?  Dimensions of A: "
            f"[{sp._shape[0]}, {sp._shape[1]}).  Dimensions of B: {list(dense.shape)}",
            "SparseTensorDenseMatMul",
        )
    return _sdmm(
        sp._indices, sp._values, dense, sp._shape, bool(adjoint_a), bool(adjoint_b)
    )


@op("SampledAddmm", inputs=("indices", "values", "mat1", "mat2"))
def _sampled_addmm(indices, values, mat1, mat2, beta, alpha):
    dots = jnp.sum(mat1[indices[:, 0], :] * mat2[:, indices[:, 1]].T, axis=-1)
    return alpha * dots + beta * values


def sampled_addmm(
    indices,
    values,
    dense_shape,
    mat1,
    mat2,
    beta=1.0,
    alpha=1.0,
    output_type=np.float32,
):
    """`alpha * (mat1 @ mat2)` at `indices` plus `beta * values`; returns
    `(indices, values, dense_shape)` as TF's. `output_type` is ignored, as TF
    ignores it.

    Differences from TensorFlow:
      Batched inputs (rank > 2) raise `NotImplementedError`.
    """
    del output_type  # (TF's implementation does not use it either)
    idx = convert_to_tensor(indices)
    vals = convert_to_tensor(values)
    shape = convert_to_tensor(dense_shape)
    m1, m2 = convert_to_tensor(mat1), convert_to_tensor(mat2)
    if len(m1.shape) != 2 or len(m2.shape) != 2 or len(idx.shape) != 2:
        raise NotImplementedError(
            "jaxtape.sparse.sampled_addmm supports rank-2 matrices only; got mat1 "
            f"{list(m1.shape)}, mat2 {list(m2.shape)}. Loop over the batch."
        )
    want = [m1.shape[0], m2.shape[1]]
    given = np.ravel(host_array(shape, "sampled_addmm", "dense_shape")).tolist()
    if given != want:
        raise ValueError(
            f"Dense shape: {given} does not match output shape: {want}. "
            "dense_shape must be [rows of mat1, columns of mat2]."
        )
    return idx, _sampled_addmm(idx, vals, m1, m2, float(beta), float(alpha)), shape


@op("SparseSoftmax", inputs=("indices", "values"))
def _softmax(indices, values, shape):
    outer = tuple(shape[:-1])
    ids = linear(jnp.asarray(indices)[:, :-1], outer)
    n = max(math.prod(outer), 1)
    top = jax.ops.segment_max(values, ids, n)[ids]
    e = jnp.exp(values - jax.lax.stop_gradient(top))
    return e / jax.ops.segment_sum(e, ids, n)[ids]


def softmax(sp_input, name=None) -> SparseTensor:
    """Softmax over each innermost row's present values (missing ones count as
    -inf, as TF's `SparseSoftmax`); the indices are unchanged."""
    del name
    sp = sparse_arg(sp_input)
    if len(sp._shape) < 2:
        raise errors.invalid_argument(
            f"Input should have rank >= 2, but received shape: {list(sp._shape)}",
            "SparseSoftmax",
        )
    return SparseTensor(
        sp._indices, _softmax(sp._indices, sp._values, sp._shape), sp._shape
    )


# -- set-like ops on two SparseTensors ------------------------------------------
def _union(a: SparseTensor, b: SparseTensor, op_name: str):
    """Sorted union keys and, for each, its position in `a` and in `b` (or -1)."""
    ka = linear(_host_indices(a, op_name), a._shape)
    kb = linear(_host_indices(b, op_name), b._shape)
    keys = np.union1d(ka, kb)
    ia = np.full(keys.shape, -1, _INT64)
    ib = np.full(keys.shape, -1, _INT64)
    ia[np.searchsorted(keys, ka)] = np.arange(len(ka))
    ib[np.searchsorted(keys, kb)] = np.arange(len(kb))
    return keys, ia, ib


@op("SparseSparseBinary", inputs=("a", "b", "ia", "ib"))
def _pick(a, b, ia, ib, kind):
    zero = jnp.zeros((), a.dtype)
    va = jnp.where(ia >= 0, a[jnp.maximum(ia, 0)] if a.shape[0] else zero, zero)
    vb = jnp.where(ib >= 0, b[jnp.maximum(ib, 0)] if b.shape[0] else zero, zero)
    if kind == "add":
        return va + vb
    return jnp.maximum(va, vb) if kind == "maximum" else jnp.minimum(va, vb)


def _sparse_sparse(a, b, kind: str, op_name: str):
    _same_dtype(a, b, op_name)
    _same_shape(a, b._shape, op_name)
    keys, ia, ib = _union(a, b, op_name)
    values = _pick(
        a._values, b._values, convert_to_tensor(ia), convert_to_tensor(ib), kind
    )
    return keys, ia, ib, values


@op("SparseTensorDenseAdd", inputs=("indices", "values", "dense"))
def _dense_add(indices, values, dense, shape):
    cols = tuple(indices[:, k] for k in range(len(shape)))
    return dense.at[cols].add(values, mode="drop") if cols else dense + values.sum()


def add(a, b, threshold=0):
    """`a + b` for SparseTensors, or a SparseTensor and a dense tensor (dense result).

    For two SparseTensors, the result holds the union of their entries;
    entries present in both whose sum has magnitude below `threshold` are
    dropped, as TF's `SparseAdd`. Differentiable with respect to both.
    """
    if not is_sparse(a) and not is_sparse(b):
        raise TypeError(
            "At least one input should be SparseTensor; do you mean to use "
            "jaxtape.add()?"
        )
    if is_sparse(a) and is_sparse(b):
        keys, ia, ib, values = _sparse_sparse(a, b, "add", "SparseAdd")
        thresh = float(to_value(threshold))
        if thresh > 0:
            both = (ia >= 0) & (ib >= 0)
            sums = np.abs(host_array(values, "add", "`threshold`"))
            keep = np.flatnonzero(~both | (sums >= thresh))
            if len(keep) != len(keys):
                keys, values = keys[keep], _take(values, keep)
        return SparseTensor(
            convert_to_tensor(unlinear(keys.astype(_INT64), a._shape)), values, a._shape
        )
    sp, dense = (a, b) if is_sparse(a) else (b, a)
    dense = convert_to_tensor(dense, dtype=_values_dtype(sp))
    _same_shape(sp, tuple(dense.shape), "SparseTensorDenseAdd")
    return _dense_add(sp._indices, sp._values, dense, sp._shape)


def _extremum(kind: str):
    op_name = "SparseSparseMaximum" if kind == "maximum" else "SparseSparseMinimum"

    def extremum(sp_a, sp_b, name=None) -> SparseTensor:
        del name
        a, b = sparse_arg(sp_a, "sp_a"), sparse_arg(sp_b, "sp_b")
        keys, _, _, values = _sparse_sparse(a, b, kind, op_name)
        return SparseTensor(
            convert_to_tensor(unlinear(keys.astype(_INT64), a._shape)), values, a._shape
        )

    extremum.__name__ = extremum.__qualname__ = kind
    extremum.__doc__ = (
        f"The element-wise {kind} of two SparseTensors of one shape: the union "
        "of their entries, a missing entry counting as 0 (TF's "
        f"`{op_name}`)."
    )
    return extremum


maximum = _extremum("maximum")
minimum = _extremum("minimum")


# -- picking entries -------------------------------------------------------------------
def _subset(
    sp: SparseTensor, keep: np.ndarray, indices: np.ndarray, shape
) -> SparseTensor:
    return SparseTensor(
        convert_to_tensor(indices.astype(_INT64)), _take(sp._values, keep), shape
    )


def retain(sp_input, to_retain) -> SparseTensor:
    """The entries where the bool vector `to_retain` (`[N]`) is True."""
    sp = sparse_arg(sp_input)
    mask = np.asarray(host_array(to_retain, "retain", "`to_retain`"), bool)
    n = sp._indices.shape[0]
    if mask.ndim != 1 or mask.shape[0] != n:
        raise ValueError(
            f"Dimensions {n} and {mask.shape[0] if mask.ndim else mask.shape} are not "
            "compatible: `to_retain` needs one bool per value."
        )
    keep = np.flatnonzero(mask)
    idx = _host_indices(sp, "retain")
    return _subset(sp, keep, idx[keep], sp._shape)


def _vector(x, rank: int, what: str, op_name: str) -> np.ndarray:
    v = np.ravel(host_array(x, op_name, what)).astype(np.int64)
    if v.shape[0] != rank:
        raise errors.invalid_argument(
            f"Expected {what} to be a vector of length {rank} (the rank); got "
            f"{v.tolist()}.",
            op_name,
        )
    return v


def _slice(sp: SparseTensor, start: np.ndarray, size: np.ndarray) -> SparseTensor:
    shape = np.asarray(sp._shape, np.int64)
    end = np.minimum(start + size, shape)
    out_shape = tuple(int(d) for d in np.maximum(end - start, 0))
    idx = _host_indices(sp, "slice")
    inside = (
        np.all((idx >= start) & (idx < end), axis=1)
        if len(shape)
        else np.ones(idx.shape[0], bool)
    )
    keep = np.flatnonzero(inside)
    return _subset(sp, keep, idx[keep] - start, out_shape)


def slice(sp_input, start, size, name=None) -> SparseTensor:  # noqa: A001
    """The entries in `[start, start + size)` (clipped to the shape), shifted to
    start at 0; the dense shape is the clipped size, as TF's `SparseSlice`."""
    del name
    sp = sparse_arg(sp_input)
    rank = len(sp._shape)
    start_v = _vector(start, rank, "start", "SparseSlice")
    size_v = _vector(size, rank, "size", "SparseSlice")
    if np.any(start_v < 0) or np.any(size_v < 0):
        raise errors.invalid_argument(
            f"start and size must be non-negative; got {start_v.tolist()} and "
            f"{size_v.tolist()}.",
            "SparseSlice",
        )
    return _slice(sp, start_v, size_v)


def split(sp_input=None, num_split=None, axis=None, name=None) -> list[SparseTensor]:
    """Splits `sp_input` along `axis` into `num_split` pieces; the first
    `size % num_split` pieces are one longer, as TF's `SparseSplit`."""
    del name
    if sp_input is None or num_split is None or axis is None:
        raise ValueError("sp_input, num_split and axis are required arguments.")
    sp = sparse_arg(sp_input)
    rank = len(sp._shape)
    ax = int(to_value(axis))
    if not -rank <= ax < rank:
        raise errors.invalid_argument(
            f"Split dim should be in range [{-rank}, {rank}); got {ax}.", "SparseSplit"
        )
    ax %= rank
    n = int(num_split)
    dim = sp._shape[ax]
    if n < 1 or n > max(dim, 1):
        raise errors.invalid_argument(
            f"SparseSplit: num_split ({n}) must be in [1, {dim}] (the size of the "
            "split dimension).",
            "SparseSplit",
        )
    base, extra = divmod(dim, n)
    out, begin = [], 0
    for i in range(n):
        size = base + (1 if i < extra else 0)
        start = np.zeros(rank, np.int64)
        length = np.asarray(sp._shape, np.int64)
        start[ax], length[ax] = begin, size
        out.append(_slice(sp, start, length))
        begin += size
    return out


@op("SparseFillEmptyRows", inputs=("values", "default_value", "source"))
def _fill_values(values, default_value, source):
    picked = values[jnp.maximum(source, 0)] if values.shape[0] else default_value
    return jnp.where(source >= 0, picked, default_value)


def fill_empty_rows(sp_input, default_value, name=None):
    """Adds `default_value` at `[row, 0, ..., 0]` of each row with no entries.

    Returns `(sp_output, empty_row_indicator)`: the filled SparseTensor (rows
    in order, each row's entries in input order) and a bool `[rows]` vector.
    Differentiable with respect to the values and `default_value`.
    """
    del name
    sp = sparse_arg(sp_input)
    if not sp._shape:
        raise errors.invalid_argument(
            "dense_shape must be a vector of length >= 1.", "SparseFillEmptyRows"
        )
    from jaxtape._src.structured.sparse import _values_dtype_scalar

    default = _values_dtype_scalar(sp, default_value, "default_value")
    idx = _host_indices(sp, "fill_empty_rows")
    rows = sp._shape[0]
    empty = np.ones(rows, bool)
    empty[idx[:, 0][(idx[:, 0] >= 0) & (idx[:, 0] < rows)]] = False
    new_rows = np.flatnonzero(empty)
    extra = np.zeros((len(new_rows), len(sp._shape)), _INT64)
    extra[:, 0] = new_rows
    all_idx = np.concatenate([idx, extra])
    source = np.concatenate([np.arange(len(idx)), np.full(len(new_rows), -1)])
    order = np.argsort(all_idx[:, 0], kind="stable")
    values = _fill_values(
        sp._values, default, convert_to_tensor(source[order].astype(_INT64))
    )
    filled = SparseTensor(all_idx[order], values, sp._shape)
    return filled, convert_to_tensor(empty)


def mask(a, mask_indices, name=None) -> IndexedSlices:
    """The rows of IndexedSlices `a` whose index is not in `mask_indices`."""
    del name
    idx = host_array(a.indices, "mask", "`a.indices`")
    drop = host_array(mask_indices, "mask", "`mask_indices`")
    keep = np.flatnonzero(~np.isin(idx, drop))
    return IndexedSlices(_take(a.values, keep), _take(a.indices, keep), a.dense_shape)


# -- shapes ----------------------------------------------------------------------------
@op("SparseReshape", inputs=("indices",), differentiable=False)
def _reshape_indices(indices, old, new):
    return unlinear(linear(jnp.asarray(indices), old), new)


def reshape(sp_input, shape, name=None) -> SparseTensor:
    """The same entries in a tensor of `shape` (one -1 is inferred), row-major.

    The values are the input's (the same Tensor).
    """
    del name
    sp = sparse_arg(sp_input)
    want = [int(d) for d in np.ravel(host_array(shape, "reshape", "shape"))]
    total = math.prod(sp._shape)
    unknown = [i for i, d in enumerate(want) if d == -1]
    known = math.prod(d for d in want if d != -1)
    if len(unknown) > 1 or any(d < -1 for d in want):
        raise errors.invalid_argument(
            f"At most one output dimension may be -1 (and none below); got {want}.",
            "SparseReshape",
        )
    if unknown:
        if known == 0 or total % known:
            raise errors.invalid_argument(
                f"Input to reshape is a SparseTensor with {total} dense values, but "
                f"the requested shape requires a multiple of {known}. "
                f"input_shape={list(sp._shape)} output_shape={want}",
                "SparseReshape",
            )
        want[unknown[0]] = total // known
    if math.prod(want) != total:
        raise errors.invalid_argument(
            f"Input to reshape is a tensor with {total} dense values, but the "
            f"requested shape has {math.prod(want)}. input_shape={list(sp._shape)} "
            f"output_shape={want}",
            "SparseReshape",
        )
    new = tuple(want)
    return SparseTensor(_reshape_indices(sp._indices, sp._shape, new), sp._values, new)


@op("SparseExpandDims", inputs=("indices",), differentiable=False)
def _expand_indices(indices, axis):
    zeros = jnp.zeros((indices.shape[0], 1), indices.dtype)
    return jnp.concatenate([indices[:, :axis], zeros, indices[:, axis:]], axis=1)


def expand_dims(sp_input, axis=None, name=None) -> SparseTensor:
    """Inserts a dimension of size 1 at `axis` (default -1, the end)."""
    del name
    sp = sparse_arg(sp_input)
    rank = len(sp._shape)
    ax = -1 if axis is None else int(to_value(axis))
    if not -rank - 1 <= ax <= rank:
        raise errors.invalid_argument(
            f"Axis {ax} is out of range for a SparseTensor of rank {rank}: need "
            f"{-rank - 1} <= axis <= {rank}.",
            "SparseExpandDims",
        )
    ax = ax % (rank + 1)
    shape = sp._shape[:ax] + (1,) + sp._shape[ax:]
    return SparseTensor(_expand_indices(sp._indices, ax), sp._values, shape)


def reset_shape(sp_input, new_shape=None) -> SparseTensor:
    """The same entries with dense shape `new_shape` (each dimension at least the
    old one), or, for None, the tightest shape holding the indices."""
    sp = sparse_arg(sp_input)
    if new_shape is None:
        idx = _host_indices(sp, "reset_shape")
        shape = (
            tuple(int(d) + 1 for d in idx.max(axis=0))
            if idx.shape[0]
            else (0,) * len(sp._shape)
        )
        return SparseTensor(sp._indices, sp._values, shape)
    want = np.ravel(host_array(new_shape, "reset_shape", "new_shape")).astype(np.int64)
    old = np.asarray(sp._shape, np.int64)
    if want.shape != old.shape:
        raise ValueError(
            f"Shapes {list(want.shape)} and {list(old.shape)} are incompatible: "
            "new_shape must have the SparseTensor's rank."
        )
    if np.any(want < old):
        raise ValueError(
            "Requested new_shape should have dimension sizes >= sp_input.shape.  "
            f"Found new_shape ({want}), sp_input.shape ({old})."
        )
    return SparseTensor(sp._indices, sp._values, tuple(int(d) for d in want))


@op("SparseConcat", inputs="arrays", differentiable=False)  # (TF: NotDifferentiable)
def _concat(arrays, n, offsets, axis, shape):
    idx, vals = [], []
    for k in range(n):
        i = jnp.asarray(arrays[k])
        idx.append(i.at[:, axis].add(offsets[k]) if i.shape[0] else i)
        vals.append(arrays[n + k])
    indices = jnp.concatenate(idx)
    values = jnp.concatenate(vals)
    order = jnp.argsort(linear(indices, shape), stable=True)
    return indices[order], jax.lax.stop_gradient(values[order])


def concat(axis, sp_inputs, expand_nonconcat_dims=False, name=None) -> SparseTensor:
    """Concatenates SparseTensors along `axis` (result in row-major order).

    The other dimensions must match, unless `expand_nonconcat_dims`, which
    takes their maximum.
    """
    del name
    sps = [sparse_arg(s, "sp_inputs") for s in sp_inputs]
    if not sps:
        raise ValueError("sp_inputs must not be empty.")
    rank = len(sps[0]._shape)
    ax = int(to_value(axis))
    if not -rank <= ax < rank:
        raise errors.invalid_argument(
            f"Concat dimension must be in range [{-rank}, {rank}), got {ax}",
            "SparseConcat",
        )
    ax %= rank
    for i, s in enumerate(sps):
        if len(s._shape) != rank:
            raise errors.invalid_argument(
                f"Ranks of all input tensors must match: expected {rank} but got "
                f"{len(s._shape)} at position {i}",
                "SparseConcat",
            )
        _same_dtype(sps[0], s, "SparseConcat")
        if not expand_nonconcat_dims:
            for d in range(rank):
                if d != ax and s._shape[d] != sps[0]._shape[d]:
                    raise errors.invalid_argument(
                        f"Input shapes must match: expected {sps[0]._shape[d]} for "
                        f"dimension {d} but got {s._shape[d]} at position {i}",
                        "SparseConcat",
                    )
    sizes = [s._shape[ax] for s in sps]
    offsets = tuple(int(o) for o in np.cumsum([0] + sizes[:-1]))
    shape = tuple(
        sum(sizes) if d == ax else max(s._shape[d] for s in sps) for d in range(rank)
    )
    arrays = [s._indices for s in sps] + [s._values for s in sps]
    idx, vals = _concat(arrays, len(sps), offsets, ax, shape)
    return SparseTensor(idx, vals, shape)


def eye(num_rows, num_columns=None, dtype=np.float32, name=None) -> SparseTensor:
    """A `[num_rows, num_columns]` SparseTensor with ones on the diagonal."""
    del name
    rows = int(to_value(num_rows))
    cols = rows if num_columns is None else int(to_value(num_columns))
    n = min(rows, cols)
    idx = np.repeat(np.arange(n, dtype=_INT64)[:, None], 2, axis=1)
    values = np.ones(n, dtypes.np_dtype(dtype))
    return SparseTensor(convert_to_tensor(idx), convert_to_tensor(values), (rows, cols))


@op("SparseToIndicator", inputs=("indices", "values"), differentiable=False)
def _indicator(indices, values, shape):
    out = jnp.zeros(shape, bool)
    cols = tuple(indices[:, k] for k in range(len(shape) - 1)) + (values,)
    return out.at[cols].set(True, mode="drop")


def to_indicator(sp_input, vocab_size, name=None) -> Tensor:
    """A bool tensor `[..., vocab_size]`: True at each row's values (ids)."""
    del name
    sp = sparse_arg(sp_input)
    if _values_dtype(sp) not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise TypeError(
            f"sp_input.values must be int32 or int64; got {_values_dtype(sp).name}."
        )
    if not sp._shape:
        raise ValueError("to_indicator needs a SparseTensor of rank >= 1.")
    shape = sp._shape[:-1] + (int(to_value(vocab_size)),)
    return _indicator(sp._indices, sp._values, shape)


def map_values(op, *args, **kwargs):
    """`op` applied to the values of the SparseTensors among `args`/`kwargs`
    (which must share indices); returns a SparseTensor with those indices."""
    leaves, tree = jax.tree_util.tree_flatten(
        (args, kwargs), is_leaf=lambda x: is_sparse(x) or type(x) is Tensor
    )
    sps = [x for x in leaves if is_sparse(x)]
    if not sps:
        raise ValueError("No SparseTensor in argument list of map_values")
    first = sps[0]
    for other in sps[1:]:
        _assert_same_indices(first, other)
    plain = [x._values if is_sparse(x) else x for x in leaves]
    a, kw = jax.tree_util.tree_unflatten(tree, plain)
    return SparseTensor(first._indices, op(*a, **kw), first._shape)


def _assert_same_indices(a: SparseTensor, b: SparseTensor) -> None:
    if a._indices is b._indices:
        return
    same = tuple(a._indices.shape) == tuple(b._indices.shape)
    try:
        same = same and bool(
            np.array_equal(np.asarray(a._indices._value), np.asarray(b._indices._value))
        )
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError):
        return  # traced: TF's run-time assert has no place to go; trust the caller
    if not same:
        raise errors.InvalidArgumentError(
            None,
            None,
            "Mismatched indices! map_values needs SparseTensors with the same indices.",
        )


# -- counting and segments -------------------------------------------------------------
def bincount(
    values,
    weights=None,
    axis=0,
    minlength=None,
    maxlength=None,
    binary_output=False,
    name=None,
) -> SparseTensor:
    """Counts each value (per row for `axis=-1`) into a SparseTensor holding the
    bins that occur, as TF's `SparseBincount`/`DenseBincount` with sparse output.

    `weights` (same structure as `values`) sums weights instead of counting.
    Computed on the host; not differentiable (TF's is not either).
    """
    del name
    if weights is not None and binary_output:
        raise ValueError(
            "Arguments `binary_output` and `weights` are mutually exclusive."
        )
    if is_sparse(values):
        vals = host_array(values._values, "bincount", "values")
        rows = (
            host_array(values._indices, "bincount", "indices")[:, 0]
            if values._shape
            else None
        )
        n_rows = values._shape[0] if values._shape else 1
        w = (
            None
            if weights is None
            else host_array(
                sparse_arg(weights, "weights")._values, "bincount", "weights"
            )
        )
    else:
        arr = host_array(values, "bincount", "values")
        if axis == -1 and arr.ndim == 2:
            rows = np.repeat(np.arange(arr.shape[0]), arr.shape[1])
            n_rows = arr.shape[0]
        else:
            rows, n_rows = None, 1
        vals = arr.ravel()
        w = (
            None
            if weights is None
            else host_array(weights, "bincount", "weights").ravel()
        )
    if vals.dtype.kind not in "iu":
        raise errors.invalid_argument(
            f"bincount's values must be integers; got {vals.dtype.name}.",
            "SparseBincount",
        )
    if vals.size and vals.min() < 0:
        raise errors.invalid_argument(
            f"Input arr must be non-negative! Got {vals.min()}.", "SparseBincount"
        )
    size = int(vals.max()) + 1 if vals.size else 0
    if minlength is not None:
        size = max(size, int(to_value(minlength)))
    if maxlength is not None:
        size = min(size, int(to_value(maxlength)))
    ok = vals < size
    per_row = axis == -1 and rows is not None
    keys = (rows[ok] * size + vals[ok]) if rows is not None and per_row else vals[ok]
    uniq, inv = np.unique(keys.astype(np.int64), return_inverse=True)
    if binary_output:
        out = np.ones(len(uniq), vals.dtype)
    elif w is None:
        out = np.bincount(inv, minlength=len(uniq)).astype(vals.dtype)
    else:
        out = np.zeros(len(uniq), w.dtype)
        np.add.at(out, inv, w[ok])
    if per_row:
        idx = np.stack([uniq // max(size, 1), uniq % max(size, 1)], axis=1)
        shape = (n_rows, size)
    else:
        idx, shape = uniq[:, None], (size,)
    return SparseTensor(
        convert_to_tensor(idx.astype(_INT64)), convert_to_tensor(out), shape
    )


def _sparse_segment(kind: str):
    def segment(
        data, indices, segment_ids, num_segments=None, name=None, sparse_gradient=False
    ):
        del name, sparse_gradient  # (jaxtape's gradients are always dense)
        rows = gather(convert_to_tensor(data), indices)
        if num_segments is not None:
            fn = {
                "sum": unsorted_segment_sum,
                "mean": unsorted_segment_mean,
                "sqrt_n": unsorted_segment_sqrt_n,
            }[kind]
            return fn(rows, segment_ids, num_segments)
        if kind == "sum":
            return _dense_segment_sum(rows, segment_ids)
        if kind == "mean":
            return _dense_segment_mean(rows, segment_ids)
        ids = host_array(segment_ids, "segment_sqrt_n", "segment_ids")
        return unsorted_segment_sqrt_n(
            rows, segment_ids, int(ids.max()) + 1 if ids.size else 0
        )

    segment.__name__ = segment.__qualname__ = f"segment_{kind}"
    segment.__doc__ = (
        f"The {kind} over segments of the rows `data[indices]` (TF's "
        f"`SparseSegment{kind.title().replace('_', '')}`): `segment_ids` sorted, or "
        "any order with `num_segments`. `sparse_gradient` is accepted; jaxtape's "
        "gradients are dense either way."
    )
    return segment


segment_sum = _sparse_segment("sum")
segment_mean = _sparse_segment("mean")
segment_sqrt_n = _sparse_segment("sqrt_n")


def cross(inputs, name=None, separator=None):
    """Not implemented: TF's result is a SparseTensor of strings."""
    raise NotImplementedError(
        "jaxtape.sparse.cross is not implemented: its result holds strings "
        "('1_X_3'), and jaxtape has no string tensors. Hash the features with "
        "integer ops instead."
    )


def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """Not implemented: needs TF's FingerprintCat64 string hashing."""
    raise NotImplementedError(
        "jaxtape.sparse.cross_hashed is not implemented: it hashes string forms "
        "of the features with TF's FarmHash fingerprint, which jaxtape does not "
        "reproduce. Combine integer features with your own hashing instead."
    )
