"""`jaxtape.ragged` (TF's `tf.ragged`) and the RaggedTensor methods that change
its structure: `constant`, `from_tensor`/`to_tensor`/`to_sparse`, indexing,
reductions, `map_flat_values`, `range`, `stack`, `boolean_mask`, the segment-id
conversions. Layer L2 (`structured/`): imports `core`, `ops`, `structured`.

Sizes that depend on the data (the longest row, which rows an index picks)
are read on the host, as `sparse_ops` does; value movement goes through
dispatched gathers and scatters, so gradients reach the values.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import checks, dtypes, errors
from jaxtape._src.core.dispatch import op
from jaxtape._src.core.tensor import Tensor, TensorShape
from jaxtape._src.ops import array_ops, math_ops, nondiff
from jaxtape._src.ops.creation_ops import constant as _dense_constant
from jaxtape._src.ops.creation_ops import convert_to_tensor
from jaxtape._src.structured.ragged import (
    RaggedTensor,
    _check_same_splits,
    _dim0,
    _is_traced,
    _nrows,
    _nvals,
    _splits_arg,
    _splits_dtype,
    _value_rowids,
    rows_of,
)
from jaxtape._src.structured.sparse import SparseTensor, host_array

_INT64 = np.dtype(np.int64)


def _ragged(values, splits, uniform=None) -> RaggedTensor:
    """A RaggedTensor from trusted parts (no validation)."""
    if not isinstance(splits, Tensor):
        splits = convert_to_tensor(splits)
    return RaggedTensor(values, splits, internal=True, uniform=uniform)


def _host_lengths(rt: RaggedTensor, who: str) -> np.ndarray:
    s = host_array(rt.row_splits, who, "the longest row")
    return np.diff(s)


# -- constant ------------------------------------------------------------------------
def constant(
    pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None,
    row_splits_dtype=dtypes.int64,
):  # fmt: skip
    """A RaggedTensor of a nested Python list, TF's `tf.ragged.constant`.

    `ragged_rank` defaults to the nesting depth of the scalars minus 1 minus
    `len(inner_shape)`; a depth-1 list gives a plain Tensor, as in TF.
    """
    del name
    split_dt = _splits_dtype(row_splits_dtype)
    if isinstance(pylist, RaggedTensor):
        raise TypeError("pylist may not be a RaggedTensor or RaggedTensorValue.")
    if not isinstance(pylist, (list, tuple)) and np.ndim(pylist) == 0:
        if ragged_rank is not None and ragged_rank != 0:
            raise ValueError(
                f"Invalid pylist={pylist!r}: incompatible with "
                f"ragged_rank={ragged_rank}"
            )
        if inner_shape:
            raise ValueError(
                f"Invalid pylist={pylist!r}: incompatible with "
                f"dim(inner_shape)={len(inner_shape)}"
            )
        return _dense_constant(pylist, dtype)
    if ragged_rank is not None and ragged_rank < 0:
        raise ValueError(f"Invalid ragged_rank={ragged_rank!r}: must be nonnegative")
    scalar_depth, max_depth = _depths(pylist)
    if scalar_depth is not None:
        if max_depth > scalar_depth:
            raise ValueError(
                f"Invalid pylist={pylist!r}: empty list nesting is greater than "
                "scalar value nesting"
            )
        if ragged_rank is not None and max_depth < ragged_rank:
            raise ValueError(
                f"Invalid pylist={pylist}, max depth smaller than "
                f"ragged_rank={ragged_rank}"
            )
    if inner_shape is not None and ragged_rank is not None:
        want = ragged_rank + len(inner_shape) + 1
        if (scalar_depth is not None and want != scalar_depth) or (
            scalar_depth is None and want < max_depth
        ):
            raise ValueError(
                f"Invalid pylist={pylist!r}: incompatible with ragged_rank="
                f"{ragged_rank} and dim(inner_shape)={len(inner_shape)}"
            )
    if ragged_rank == 0 or (
        ragged_rank is None
        and (
            max_depth < 2
            or (inner_shape is not None and max_depth - len(inner_shape) < 2)
        )
    ):
        return _dense_constant(pylist, dtype, inner_shape)
    if inner_shape is None:
        inner_shape = () if ragged_rank is None else _inner_shape(pylist, ragged_rank)
    inner_shape = tuple(inner_shape)
    if ragged_rank is None:
        depth = max_depth if scalar_depth is None else scalar_depth - len(inner_shape)
        ragged_rank = max(1, depth - 1)
    nested_splits = []
    values: list = list(pylist)
    for _ in range(ragged_rank):
        splits, flat = [0], []
        for row in values:
            splits.append(splits[-1] + len(row))
            flat.extend(row)
        nested_splits.append(splits)
        values = flat
    out: Any = _dense_constant(values, dtype, (len(values),) + inner_shape)
    for splits in reversed(nested_splits):
        out = _ragged(out, np.asarray(splits, split_dt))
    return out


def _depths(pylist) -> tuple[int | None, int]:
    """(nesting depth of the scalars or None, deepest nesting), TF's check."""
    if isinstance(pylist, (list, tuple)) or np.ndim(pylist) != 0:
        scalar_depth, max_depth = None, 1
        for child in pylist:
            child_scalar, child_max = _depths(child)
            if child_scalar is not None:
                if scalar_depth is not None and scalar_depth != child_scalar + 1:
                    raise ValueError(
                        "all scalar values must have the same nesting depth"
                    )
                scalar_depth = child_scalar + 1
            max_depth = max(max_depth, child_max + 1)
        return scalar_depth, max_depth
    return 0, 0


def _inner_shape(pylist, ragged_rank: int) -> tuple:
    """TF's default inner shape: the leftmost elements' shape, checked on all."""

    def shape_of(item):
        if not isinstance(item, (list, tuple)) and np.ndim(item) == 0:
            return ()
        if len(item):
            return (len(item),) + shape_of(item[0])
        return (0,)

    def check(item, shape):
        nested = isinstance(item, (list, tuple)) or np.ndim(item) != 0
        if nested != bool(shape) or (nested and shape[0] != len(item)):
            raise ValueError("inner values have inconsistent shape")
        for child in item if nested else ():
            check(child, shape[1:])

    flat = pylist
    for dim in range(ragged_rank):
        if not all(isinstance(v, (list, tuple)) or np.ndim(v) != 0 for v in flat):
            raise ValueError(
                f"pylist has scalar values depth {dim + 1}, but ragged_rank="
                f"{ragged_rank} requires scalar value depth greater than {ragged_rank}"
            )
        flat = [x for v in flat for x in v]
    shape = shape_of(flat)
    check(flat, shape)
    return shape[1:]


# -- dense <-> ragged ----------------------------------------------------------------
def from_tensor(tensor, lengths, padding, ragged_rank, row_splits_dtype):
    """`RaggedTensor.from_tensor` (see there)."""
    t = convert_to_tensor(tensor)
    split_dt = _splits_dtype(row_splits_dtype)
    shape = tuple(t.shape)
    if not isinstance(ragged_rank, int) or not 0 < ragged_rank < len(shape):
        raise ValueError(
            f"ragged_rank must be greater than 0 and less than rank(tensor) "
            f"({len(shape)}). Received: ragged_rank={ragged_rank}"
        )
    if lengths is not None and padding is not None:
        raise ValueError("Specify argument `lengths` or `padding`, but not both.")
    if lengths is None and padding is None:
        r = ragged_rank
        out: Any = array_ops.reshape(t, (-1,) + shape[r + 1 :])
        for k in range(r, 0, -1):
            n = int(np.prod(shape[:k]))
            out = _ragged(out, np.arange(n + 1, dtype=split_dt) * shape[k], shape[k])
        return out
    if ragged_rank != 1:
        raise NotImplementedError(
            "RaggedTensor.from_tensor: `lengths` and `padding` need ragged_rank=1 in "
            "jaxtape. Build deeper RaggedTensors with `from_nested_row_lengths`."
        )
    n, m = shape[0], shape[1]
    if lengths is not None:
        lens = host_array(lengths, "from_tensor", "lengths").astype(np.int64)
        if lens.shape != (n,):
            raise ValueError(f"lengths must have shape [{n}]. Received: {lens.shape}")
        lens = np.clip(lens, 0, m)
    else:
        host = host_array(t, "from_tensor", "padding")
        pad = host_array(
            convert_to_tensor(padding, dtype=t.dtype), "from_tensor", "padding"
        )
        is_pad = np.equal(host, pad)
        if is_pad.ndim > 2:
            is_pad = is_pad.reshape(n, m, -1).all(axis=2)
        keep = ~is_pad
        keep = np.asarray(keep).reshape(n, m)
        last = np.where(keep.any(axis=1), m - np.argmax(keep[:, ::-1], axis=1), 0)
        lens = last.astype(np.int64)
    idx = np.concatenate([np.arange(k) + i * m for i, k in enumerate(lens)] or [[]])
    flat = array_ops.reshape(t, (n * m,) + shape[2:])
    values = array_ops.gather(flat, idx.astype(np.int64))
    splits = np.concatenate([[0], np.cumsum(lens)]).astype(split_dt)
    return _ragged(values, splits)


@op("RaggedTensorToTensor", inputs=("values", "row_splits", "default_value"), jit=True)
def _to_dense(values, row_splits, default_value, shape):
    n = values.shape[0]
    pos = jnp.arange(n, dtype=row_splits.dtype)
    rows = rows_of(row_splits, n)
    cols = pos - row_splits[rows] if n else pos
    inner = shape[2:]
    vals = values[(slice(None),) + tuple(slice(0, d) for d in inner)]
    out = jnp.broadcast_to(jnp.asarray(default_value, values.dtype), shape)
    at = (rows, cols) + tuple(slice(0, d) for d in vals.shape[1:])
    return out.at[at].set(vals, mode="drop")


def to_tensor(rt: RaggedTensor, default_value=None, shape=None) -> Tensor:
    """`RaggedTensor.to_tensor` (see there)."""
    rank = rt.ndim
    if shape is not None:
        want = list(TensorShape(shape)) if not isinstance(shape, Tensor) else None
        if want is None:
            want = [int(d) for d in host_array(shape, "to_tensor", "shape")]
        want = [None if d is None or d < 0 else int(d) for d in want]
        if len(want) != rank:
            raise ValueError(
                f"shape {want} must have rank {rank} (the RaggedTensor's)."
            )
    else:
        want = [None] * rank
    vals = rt.values
    if isinstance(vals, RaggedTensor):
        vals = to_tensor(vals, default_value, [None] + want[2:])
    dt = rt.dtype
    if default_value is None:
        default: Any = np.zeros((), np.dtype(dt.as_numpy_dtype))
    else:
        default = convert_to_tensor(default_value, dtype=dt)
    nrows = want[0] if want[0] is not None else _nrows(rt)
    width = want[1]
    if width is None:
        width = rt._uniform
    if width is None:
        lens = _host_lengths(rt, "to_tensor without a full `shape`")
        width = int(lens.max()) if lens.size else 0
    inner = [w if w is not None else d for w, d in zip(want[2:], vals.shape[1:])]
    return _to_dense(vals, rt.row_splits, default, (nrows, width, *inner))


def to_sparse(rt: RaggedTensor) -> SparseTensor:
    """`RaggedTensor.to_sparse`: indices `[row, column, *inner index]`."""
    flat = rt.flat_values
    inner = tuple(flat.shape[1:])
    n = _dim0(flat)
    # Each flat value's position: (value row, inner index...), then each ragged
    # level turns its value row into (row, column).
    idx = np.indices((n,) + inner).reshape(1 + len(inner), -1).T.astype(np.int64)
    dims = list(inner)
    levels = []
    level: Any = rt
    while isinstance(level, RaggedTensor):
        levels.append(level)
        level = level.values
    for lv in reversed(levels):
        s = host_array(lv.row_splits, "to_sparse", "the row splits").astype(np.int64)
        k = idx[:, 0]
        rows = np.searchsorted(s, k, side="right") - 1
        cols = k - s[rows] if k.size else k
        idx = np.concatenate([rows[:, None], cols[:, None], idx[:, 1:]], axis=1)
        lens = np.diff(s)
        dims = [int(lens.max()) if lens.size else 0] + dims
    dense_shape = [_nrows(rt)] + dims
    return SparseTensor(idx, array_ops.reshape(flat, [-1]), dense_shape)


# -- indexing ----------------------------------------------------------------------
def gather_rows(x, rows) -> Any:
    """The rows `rows` (host ints) of a Tensor or RaggedTensor, in that order."""
    rows = np.asarray(rows, np.int64).reshape(-1)
    if not isinstance(x, RaggedTensor):
        return array_ops.gather(x, rows)
    s = host_array(x.row_splits, "gather", "the row splits").astype(np.int64)
    lens = s[rows + 1] - s[rows]
    idx = np.concatenate([np.arange(int(s[r]), int(s[r + 1])) for r in rows] or [[]])
    dt = np.dtype(x.row_splits._value.dtype)
    splits = np.concatenate([[0], np.cumsum(lens)]).astype(dt)
    return _ragged(gather_rows(x.values, idx.astype(np.int64)), splits)


def getitem(rt: RaggedTensor, key) -> Any:
    """`rt[key]`: TF's ragged indexing for ints and slices.

    `rt[i]` is row `i`, `rt[i:j]` rows `i..j-1`, `rt[:, a:b]` cuts every row;
    an int on a ragged dimension (`rt[:, 0]`) is TF's ValueError.
    """
    if not isinstance(key, tuple):
        key = (key,)
    for k in key:
        if k is Ellipsis or k is None or not isinstance(k, (int, np.integer, slice)):
            raise NotImplementedError(
                "RaggedTensor indexing in jaxtape takes ints and slices only; got "
                f"{k!r}. Convert with `to_tensor()` for other indexing."
            )
    if len(key) > rt.ndim:
        raise errors.invalid_argument(
            f"Index out of range: {len(key)} indices for a RaggedTensor of rank "
            f"{rt.ndim}.",
            "StridedSlice",
        )
    return _getitem(rt, key)


def _getitem(x, key: tuple):
    if not key:
        return x
    if not isinstance(x, RaggedTensor):
        return x[key]
    first, rest = key[0], key[1:]
    n = _nrows(x)
    if isinstance(first, slice):
        rows = range(n)[first]
        out = gather_rows(x, list(rows)) if rows != range(n) else x
        return _inner_getitem(out, rest) if rest else out
    i = int(first)
    if not -n <= i < n:
        raise IndexError(f"Row key {i} out of bounds (the RaggedTensor has {n} rows).")
    s = host_array(x.row_splits, "RaggedTensor indexing", "the row splits")
    i %= n
    row = gather_rows(x.values, np.arange(s[i], s[i + 1]))
    return _getitem(row, rest)


def _inner_getitem(rt: RaggedTensor, key: tuple):
    """`key[0]` applies within each row of `rt`, `key[1:]` further in."""
    first, rest = key[0], key[1:]
    if not isinstance(first, slice):
        raise ValueError("Cannot index into an inner ragged dimension.")
    if first.step not in (None, 1):
        raise NotImplementedError(
            "RaggedTensor indexing: a step on a ragged dimension is not supported "
            "by jaxtape."
        )
    s = host_array(rt.row_splits, "RaggedTensor indexing", "the row splits")
    s = s.astype(np.int64)
    parts = [np.arange(a, b)[first] for a, b in zip(s[:-1], s[1:])]
    idx = np.concatenate(parts or [np.zeros(0, np.int64)]).astype(np.int64)
    lens = [len(p) for p in parts]
    dt = np.dtype(rt.row_splits._value.dtype)
    splits = np.concatenate([[0], np.cumsum(lens)]).astype(dt)
    values = gather_rows(rt.values, idx)
    if rest:
        if isinstance(values, RaggedTensor):
            values = _inner_getitem(values, rest)
        else:
            values = values[(slice(None),) + rest]
    return _ragged(values, splits)


# -- reductions -----------------------------------------------------------------------
def _lowest(dt):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return False
    return np.finfo(dt).min if dt.kind in "fc" else np.iinfo(dt).min


def _highest(dt):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return True
    return np.finfo(dt).max if dt.kind in "fc" else np.iinfo(dt).max


@op("RaggedSegmentReduce", inputs=("data", "segment_ids"), jit=True)
def _segment_reduce(data, segment_ids, num_segments, kind):
    if kind == "sum":
        return jax.ops.segment_sum(data, segment_ids, num_segments)
    fn = jax.ops.segment_max if kind == "max" else jax.ops.segment_min
    out = fn(data, segment_ids, num_segments)
    ones = jnp.ones(segment_ids.shape, jnp.int32)
    count = jax.ops.segment_sum(ones, segment_ids, num_segments)
    count = count.reshape(count.shape + (1,) * (out.ndim - 1))
    fill = (_lowest if kind == "max" else _highest)(data.dtype)
    return jnp.where(count > 0, out, jnp.asarray(fill, data.dtype))


@op("RaggedSegmentProd", inputs=("data", "segment_ids", "positions"), jit=True)
def _segment_prod(data, segment_ids, positions, num_segments, width):
    """Per-segment products: the values laid out densely (`[num_segments,
    width]`, padded with 1) and multiplied along the rows, so that JAX's
    product gradient applies (`jax.ops.segment_prod` has none)."""
    dense = jnp.ones((num_segments, width) + data.shape[1:], data.dtype)
    return dense.at[segment_ids, positions].set(data, mode="drop").prod(axis=1)


@op("RaggedColumnIds", inputs=("row_splits",), differentiable=False, jit=True)
def _column_ids(row_splits, nvals):
    pos = jnp.arange(nvals, dtype=row_splits.dtype)
    return pos - row_splits[rows_of(row_splits, nvals)] if nvals else pos


_DENSE = {
    "sum": math_ops.reduce_sum,
    "prod": math_ops.reduce_prod,
    "max": math_ops.reduce_max,
    "min": math_ops.reduce_min,
}


def _reduce(kind: str, x, axis, keepdims: bool):
    if kind == "mean":
        return _mean(x, axis, keepdims)
    if not isinstance(x, RaggedTensor):
        return _DENSE[kind](x, axis=axis, keepdims=keepdims)
    rank = x.ndim
    if axis is None:
        out = _DENSE[kind](x.flat_values)
        return array_ops.reshape(out, [1] * rank) if keepdims else out
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    norm = []
    for a in axes:
        a = int(a)
        if not -rank <= a < rank:
            raise ValueError(f"axis={a} out of bounds: expected {-rank}<=axis<{rank}")
        norm.append(a % rank)
    out: Any = x
    for a in sorted(set(norm), reverse=True):
        out = _reduce_axis(kind, out, a, keepdims)
    return out


def _reduce_axis(kind: str, x, axis: int, keepdims: bool):
    if not isinstance(x, RaggedTensor):
        return _DENSE[kind](x, axis=axis, keepdims=keepdims)
    r = x.ragged_rank
    if axis > r:
        flat = x.flat_values
        return x.with_flat_values(_DENSE[kind](flat, axis=axis - r, keepdims=keepdims))
    if axis > 1:
        return x.with_values(_reduce_axis(kind, x.values, axis - 1, keepdims))
    if r > 1:
        raise NotImplementedError(
            f"Reducing axis {axis} of a RaggedTensor with ragged_rank {r} is not "
            "supported by jaxtape (only axis 0 or 1 of ragged_rank 1, or deeper axes)."
        )
    vals = x.values
    rows, cols = x.value_rowids(), _column_ids(x.row_splits, _nvals(vals))
    if axis == 1:
        ids, pos, num, width = rows, cols, _nrows(x), None
    else:
        ids, pos, num, width = cols, rows, None, _nrows(x)
    longest = x._uniform
    if longest is None and (num is None or kind == "prod"):
        if _is_traced(x) and kind == "prod" and axis == 1:
            longest = _nvals(vals)  # (a bound: the longest row is unknown)
        else:
            lens = _host_lengths(x, f"reduce_{kind}(axis={axis})")
            longest = int(lens.max()) if lens.size else 0
    num = longest if num is None else num
    if kind == "prod":
        out = _segment_prod(vals, ids, pos, num, longest if width is None else width)
    else:
        out = _segment_reduce(vals, ids, num, kind)
    return array_ops.expand_dims(out, axis) if keepdims else out


def _mean(x, axis, keepdims):
    if not isinstance(x, RaggedTensor):
        return math_ops.reduce_mean(x, axis=axis, keepdims=keepdims)
    flat = x.flat_values
    total = _reduce("sum", x, axis, keepdims)
    ones = x.with_flat_values(nondiff.ones_like(flat))
    count = _reduce("sum", ones, axis, keepdims)
    if isinstance(total, RaggedTensor) and isinstance(count, RaggedTensor):
        return total.with_flat_values(
            math_ops.truediv(total.flat_values, count.flat_values)
        )
    if isinstance(total, RaggedTensor) or isinstance(count, RaggedTensor):
        raise AssertionError("ragged_ops._mean: sum and count differ in kind")
    return math_ops.truediv(total, count)


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    """Sum over `axis` of a RaggedTensor (or a Tensor), as TF's ragged dispatch of
    `tf.reduce_sum`: over the ragged axis 1, one sum per row (0 for an empty row);
    over axis 0, one sum per column."""
    del name
    return _reduce("sum", input_tensor, axis, keepdims)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    """Product over `axis` (1 for an empty row), as TF's ragged `tf.reduce_prod`."""
    del name
    return _reduce("prod", input_tensor, axis, keepdims)


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    """Maximum over `axis`; an empty row gives the dtype's lowest value, as TF's."""
    del name
    return _reduce("max", input_tensor, axis, keepdims)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    """Minimum over `axis`; an empty row gives the dtype's highest value, as TF's."""
    del name
    return _reduce("min", input_tensor, axis, keepdims)


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    """Mean over `axis`: sum / count, as TF's ragged `tf.reduce_mean` (NaN for an
    empty row; integer inputs give float64, TF's `truediv`)."""
    del name
    return _reduce("mean", input_tensor, axis, keepdims)


# -- map_flat_values ------------------------------------------------------------------
def map_flat_values(op, *args, **kwargs):
    """`op` applied to the flat values of the RaggedTensors in `args`/`kwargs`,
    the result put back into their (shared) row structure, as TF's.

    >>> rt = jaxtape.ragged.constant([[1.0, -2.0], [3.0]])
    >>> jaxtape.ragged.map_flat_values(jaxtape.math.abs, rt)
    <jaxtape.RaggedTensor [[1.0, 2.0], [3.0]]>
    """
    found: list[RaggedTensor] = []

    def flat(x):
        if isinstance(x, RaggedTensor):
            found.append(x)
            return x.flat_values
        return x

    args, kwargs = _map_nested(flat, (args, kwargs))
    if not found:
        return op(*args, **kwargs)
    for other in found[1:]:
        _check_same_splits(found[0], other)
    out = op(*args, **kwargs)
    n = _dim0(found[0].flat_values)
    if not hasattr(out, "shape") or not len(out.shape) or out.shape[0] != n:
        raise ValueError(
            "tf.ragged.map_flat_values requires that the output of `op` have the "
            f"same outer-dimension size as flat_values ({n}); got shape "
            f"{getattr(out, 'shape', None)}."
        )
    return found[0].with_flat_values(out)


def _map_nested(fn, x):
    """`fn` on each item of nested lists, tuples and dicts (TF's `nest.map`)."""
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_map_nested(fn, v) for v in x)
    if isinstance(x, dict):
        return {k: _map_nested(fn, v) for k, v in x.items()}
    return fn(x)


# -- ranges and segment ids -----------------------------------------------------------
_RANGE_DTYPES = [np.dtype(d) for d in ("int32", "int64", "float32", "float64")]


def ragged_range(
    starts, limits=None, deltas=1, dtype=None, name=None,
    row_splits_dtype=dtypes.int64,
):  # fmt: skip
    """Row `i` is `range(starts[i], limits[i], deltas[i])`; scalars broadcast.

    Without `limits`, rows run from 0 to `starts`, as TF's. Computed on the host.
    """
    del name
    split_dt = _splits_dtype(row_splits_dtype)
    if limits is None:
        starts, limits = 0, starts
    dt = dtypes.np_dtype(dtype)
    parts = [convert_to_tensor(v, dtype=dt) for v in (starts, limits, deltas)]
    if dt is None:
        kinds = [np.dtype(p._value.dtype) for p in parts]
        if any(k not in _RANGE_DTYPES for k in kinds):
            raise TypeError(
                f"ragged.range needs int32, int64, float32 or float64; got {kinds}"
            )
        dt = max(kinds, key=_RANGE_DTYPES.index)
        parts = [math_ops.cast(p, dt) for p in parts]
    s, lim, d = (host_array(p, "ragged.range", "the bounds") for p in parts)
    for v in (s, lim, d):
        if v.ndim > 1:
            raise ValueError(
                "starts, limits and deltas must be scalars or vectors; got rank "
                f"{v.ndim}"
            )
    if np.any(d == 0):
        raise errors.invalid_argument("Requires delta != 0", "RaggedRange")
    s, lim, d = np.broadcast_arrays(s, lim, d)
    s, lim, d = np.atleast_1d(s), np.atleast_1d(lim), np.atleast_1d(d)
    size = np.maximum(np.ceil((lim - s) / d), 0).astype(np.int64)
    values = np.concatenate(
        [a + np.arange(k) * b for a, b, k in zip(s, d, size)] or [np.zeros(0)]
    ).astype(dt)
    splits = np.concatenate([[0], np.cumsum(size)]).astype(split_dt)
    return _ragged(convert_to_tensor(values), splits)


def row_splits_to_segment_ids(splits, name=None, out_type=None) -> Tensor:
    """The row id of each value: `[0, 0, 1]` for splits `[0, 2, 3]`."""
    del name
    t = _splits_arg(splits, "splits")
    nvals = int(host_array(t, "row_splits_to_segment_ids", "splits[-1]")[-1])
    out = _value_rowids(t, nvals)
    if out_type is not None and dtypes.np_dtype(out_type) != np.dtype(
        out.dtype.as_numpy_dtype
    ):
        out = math_ops.cast(out, out_type)
    return out


@op("SegmentIdsToRowSplits", inputs=("segment_ids",), differentiable=False, jit=True)
def _ids_to_splits(segment_ids, num_segments, out_type):
    counts = jnp.bincount(segment_ids, length=num_segments).astype(out_type)
    return jnp.concatenate(
        [jnp.zeros([1], out_type), jnp.cumsum(counts, dtype=out_type)]
    )


def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None, name=None):
    """Row splits for rows of sizes `bincount(segment_ids)`: `[0, 2, 3, 3, 4]` for
    ids `[0, 0, 1, 3]`. `out_type` defaults to the ids' dtype for a Tensor, int64
    otherwise, as TF's. Without `num_segments`, `max(ids) + 1` is read on the host.
    """
    del name
    if out_type is None:
        out_type = segment_ids.dtype if type(segment_ids) is Tensor else dtypes.int64
    ids = _splits_arg(segment_ids, "segment_ids")
    if num_segments is None:
        host = host_array(ids, "segment_ids_to_row_splits", "max(segment_ids)")
        num = int(host.max()) + 1 if host.size else 0
    else:
        num = int(host_array(num_segments, "segment_ids_to_row_splits", "num_segments"))
    return _ids_to_splits(ids, num, dtypes.np_dtype(out_type))


# -- stacking and partitions ---------------------------------------------------------
def _as_ragged(x, ragged_rank: int) -> RaggedTensor:
    if isinstance(x, RaggedTensor):
        return x
    return from_tensor(x, None, None, ragged_rank, np.int64)


def _concat_rows(items: list) -> Any:
    """The rows of `items` (all RaggedTensors or all Tensors) one after another."""
    if not isinstance(items[0], RaggedTensor):
        return array_ops.concat(items, 0)
    splits, offset = [items[0].row_splits], items[0].row_splits[-1]
    for rt in items[1:]:
        splits.append(math_ops.add(rt.row_splits[1:], offset))
        offset = math_ops.add(rt.row_splits[-1], offset)
    values = _concat_rows([rt.values for rt in items])
    return _ragged(values, array_ops.concat(splits, 0))


def stack(values, axis=0, name=None):
    """Stacks RaggedTensors (or Tensors) along `axis` 0 or 1 into a RaggedTensor
    of one more dimension, as TF's `tf.ragged.stack`."""
    del name
    if not isinstance(values, (list, tuple)) or not values:
        raise ValueError("values must be a non-empty list of Tensors or RaggedTensors.")
    items = [v if isinstance(v, RaggedTensor) else convert_to_tensor(v) for v in values]
    rank = items[0].ndim if isinstance(items[0], RaggedTensor) else len(items[0].shape)
    if any(
        (v.ndim if isinstance(v, RaggedTensor) else len(v.shape)) != rank for v in items
    ):
        raise ValueError(
            "all values passed to tf.ragged.stack must have the same rank."
        )
    axis = int(axis) + (rank + 1 if axis < 0 else 0)
    if not any(isinstance(v, RaggedTensor) for v in items):
        if axis != 0:
            return array_ops.stack(items, axis=axis)
        if rank == 1:
            lens = [_dim0(v) for v in items]
            # (TF's row splits here are int32, unlike everywhere else.)
            splits = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
            return _ragged(
                array_ops.concat(list(map(convert_to_tensor, items)), 0), splits
            )
    dts = {v.dtype for v in items}
    if len(dts) > 1:
        raise errors.invalid_argument(
            f"ragged.stack: all values need one dtype; got {sorted(map(str, dts))}."
        )
    r = max([v.ragged_rank for v in items if isinstance(v, RaggedTensor)] + [rank - 1])
    rts = [_as_ragged(v, min(r, rank - 1)) for v in items]
    if len({rt.ragged_rank for rt in rts}) > 1:
        raise NotImplementedError(
            "ragged.stack of different ragged ranks is not supported."
        )
    if len({np.dtype(rt.row_splits._value.dtype) for rt in rts}) > 1:
        raise ValueError("ragged.stack: the inputs' row_splits dtypes differ.")
    k = len(rts)
    dt = np.dtype(rts[0].row_splits._value.dtype)
    if axis == 0:
        counts = [_nrows(rt) for rt in rts]
        splits = np.concatenate([[0], np.cumsum(counts)]).astype(dt)
        return _ragged(_concat_rows(rts), splits)
    if axis == 1:
        n = _nrows(rts[0])
        if any(_nrows(rt) != n for rt in rts):
            raise errors.invalid_argument(
                "ragged.stack(axis=1): every input needs the same number of rows; got "
                f"{[_nrows(rt) for rt in rts]}."
            )
        perm = (np.arange(k)[None, :] * n + np.arange(n)[:, None]).reshape(-1)
        rows = gather_rows(_concat_rows(rts), perm)
        return _ragged(rows, np.arange(n + 1, dtype=dt) * k)
    raise NotImplementedError(
        f"ragged.stack(axis={axis}) is not supported by jaxtape (axis 0 or 1)."
    )


@op("StackDynamicPartitions", inputs=("partitions",), differentiable=False, jit=True)
def _partition_order(partitions, num_partitions):
    dt = partitions.dtype
    order = jnp.argsort(partitions, stable=True)
    counts = jnp.bincount(partitions, length=num_partitions).astype(dt)
    splits = jnp.concatenate([jnp.zeros([1], dt), jnp.cumsum(counts, dtype=dt)])
    return order, splits


def _check_partitions(xp, partitions, num_partitions):
    if partitions.shape[0]:
        checks.require(
            xp,
            (partitions < 0) | (partitions >= num_partitions),
            None,
            "partitions must be less than num_partitions and non-negative: "
            "partitions[{}] = {}" + f", num_partitions = {num_partitions}",
            lambda xp, p: p,
            lambda xp, p: partitions[p],
        )


def stack_dynamic_partitions(data, partitions, num_partitions, name=None):
    """Row `p` holds the elements of `data` whose partition is `p`, in order.

    Traceable for a Tensor `data` (the sizes are static); a RaggedTensor
    `data` is gathered on the host.
    """
    del name
    part = convert_to_tensor(partitions)
    if np.dtype(part._value.dtype).kind not in "iu":
        raise TypeError(f"partitions must be integers; got {part.dtype!r}")
    num = int(host_array(num_partitions, "stack_dynamic_partitions", "num_partitions"))
    if len(part.shape) != 1:
        raise NotImplementedError(
            "stack_dynamic_partitions: partitions must be rank 1."
        )
    if isinstance(data, RaggedTensor):  # (TF: the data's row splits dtype)
        part = math_ops.cast(part, data.row_splits.dtype)
    elif np.dtype(part._value.dtype) not in (np.int32, np.int64):
        part = math_ops.cast(part, np.int64)
    checks.run(_check_partitions, [part._value], (num,))
    order, splits = _partition_order(part, num)
    if isinstance(data, RaggedTensor):
        values = gather_rows(
            data, host_array(order, "stack_dynamic_partitions", "order")
        )
    else:
        values = array_ops.gather(convert_to_tensor(data), order)
    return _ragged(values, splits)


def boolean_mask(data, mask, name=None):
    """The elements of `data` where `mask` is True, keeping the row structure.

    A rank-1 mask picks rows; a deeper (dense or ragged) mask removes values
    within rows, giving a RaggedTensor, as TF's `tf.ragged.boolean_mask`.
    """
    del name
    if not isinstance(mask, RaggedTensor):
        mask = convert_to_tensor(mask)
    if mask.dtype != dtypes.bool:
        raise ValueError(f"mask must have dtype bool; got {mask.dtype!r}")
    mrank = mask.ndim if isinstance(mask, RaggedTensor) else len(mask.shape)
    if mrank == 1:
        keep = np.flatnonzero(host_array(mask, "boolean_mask", "the mask"))
        if isinstance(data, RaggedTensor):
            return gather_rows(data, keep)
        return array_ops.gather(convert_to_tensor(data), keep.astype(np.int64))
    if not isinstance(data, RaggedTensor):
        data = convert_to_tensor(data)
        data = from_tensor(data, None, None, mrank - 1, np.int64)
    if not isinstance(mask, RaggedTensor):
        mask = from_tensor(mask, None, None, mrank - 1, np.int64)
    return _masked(data, mask)


def _masked(data: RaggedTensor, mask: RaggedTensor) -> RaggedTensor:
    if mask.ragged_rank > data.ragged_rank and data.ragged_rank:
        raise ValueError("mask has more ragged dimensions than data.")
    _check_same_splits(mask_prefix(data, mask.ragged_rank), mask)
    if isinstance(mask.values, RaggedTensor):
        return data.with_values(_masked(data.values, mask.values))
    m = host_array(mask.values, "boolean_mask", "the mask")
    rows = (
        np.searchsorted(
            np.asarray(host_array(mask.row_splits, "boolean_mask", "splits")),
            np.flatnonzero(m),
            side="right",
        )
        - 1
    )
    counts = np.bincount(rows, minlength=_nrows(mask))
    dt = np.dtype(data.row_splits._value.dtype)
    splits = np.concatenate([[0], np.cumsum(counts)]).astype(dt)
    return _ragged(gather_rows(data.values, np.flatnonzero(m)), splits)


def mask_prefix(data: RaggedTensor, ragged_rank: int) -> RaggedTensor:
    """`data` with only its outer `ragged_rank` row partitions (to compare)."""
    if ragged_rank == 1 or not isinstance(data.values, RaggedTensor):
        return _ragged(
            convert_to_tensor(np.zeros(_nvals(data.values))), data.row_splits
        )
    return _ragged(mask_prefix(data.values, ragged_rank - 1), data.row_splits)


def cross(inputs, name=None):
    """Not implemented: TF's result is a RaggedTensor of strings."""
    raise NotImplementedError(
        "jaxtape.ragged.cross is not implemented: its result holds strings "
        "('a_X_b'), and jaxtape has no string tensors. Combine integer features "
        "with your own hashing instead."
    )


def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """Not implemented: needs TF's FingerprintCat64 string hashing."""
    raise NotImplementedError(
        "jaxtape.ragged.cross_hashed is not implemented: it hashes string forms of "
        "the features with TF's FarmHash fingerprint, which jaxtape does not "
        "reproduce. Combine integer features with your own hashing instead."
    )


__all__ = [
    "boolean_mask",
    "constant",
    "cross",
    "cross_hashed",
    "map_flat_values",
    "ragged_range",
    "reduce_max",
    "reduce_mean",
    "reduce_min",
    "reduce_prod",
    "reduce_sum",
    "row_splits_to_segment_ids",
    "segment_ids_to_row_splits",
    "stack",
    "stack_dynamic_partitions",
]
