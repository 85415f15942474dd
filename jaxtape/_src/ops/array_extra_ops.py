"""More of TF's top-level array ops (`unique`, `searchsorted`, `roll`,
`space_to_batch`, `dynamic_partition`, `strided_slice`...) as pure jnp bodies
behind `dispatch.op`. Layer L1.

Ops whose output shape depends on values (`unique`, `dynamic_partition`)
read them on the host in the public function (TF's eager kernels do too) and
pass the sizes to the body as static params.
"""

from __future__ import annotations

import collections
import time

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.core import checks, errors
from jaxtape._src.core.dispatch import (
    StringInput,
    _tf_name,
    op,
    string_tensor,
    to_value,
)
from jaxtape._src.core.tensor import Tensor, TensorShape
from jaxtape._src.ops.array_ops import (
    _check_nd_args,
    _check_tensor_scatter,
    _nd_key,
    _shape,
    getitem,
    stack,
)
from jaxtape._src.ops.math_extra_ops import _host
from jaxtape._src.ops.math_ops import K_REAL, _check


def _dtype(dtype):
    from jaxtape._src.core import dtypes

    return np.dtype(dtypes.np_dtype(dtypes.as_dtype(dtype)))


def _index_dtype(out_type, op_name):
    dt = _dtype(out_type)
    if dt not in (np.int32, np.int64):
        raise errors.invalid_argument(
            f"Value for attr 'out_idx' of {_tf_name(dt)} is not in the list of "
            "allowed values: int32, int64.",
            op_name,
        )
    return dt


# -- unique -----------------------------------------------------------------------
UniqueOutput = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCountsOutput = collections.namedtuple(
    "UniqueWithCounts", ["y", "idx", "count"]
)


@op("Unique", inputs=("x",), differentiable=False)
def _unique(x, order, inverse, idx_dtype):
    return jnp.take(x, jnp.asarray(order, np.int64)), jnp.asarray(inverse, idx_dtype)


def _unique_host(x, op_name):
    try:
        v = to_value(x)
    except StringInput:  # strings (a host StringTensor): their bytes are the keys
        v = np.asarray(string_tensor(x))
    if np.ndim(v) != 1:
        raise errors.invalid_argument(
            f"unique expects a 1D vector; got shape {list(np.shape(v))}.", op_name
        )
    h = v if v.dtype.kind == "O" else _host(v, op_name, "the values")
    if h.dtype.kind == "f":  # NaNs are all distinct, -0.0 == 0.0, as TF's hash
        keys = [("nan", i) if k != k else (k + 0.0) for i, k in enumerate(h.tolist())]
    else:
        keys = h.tolist()
    first: dict = {}
    inverse = np.empty(len(keys), np.int64)
    counts: list[int] = []
    for i, k in enumerate(keys):
        j = first.setdefault(k, len(first))
        if j == len(counts):
            counts.append(0)
        counts[j] += 1
        inverse[i] = j
    return inverse, np.asarray(counts, np.int64)


def _order(inverse, n_unique):
    order = np.full(n_unique, -1, np.int64)
    for i in range(len(inverse) - 1, -1, -1):
        order[inverse[i]] = i
    return order


def unique(x, out_idx=np.int32, name=None):
    """The unique values of the vector `x` in order of first appearance, and
    for each entry of `x` its index in them: `(y, idx)`. No gradient (TF has
    none registered)."""
    dt = _index_dtype(out_idx, "Unique")
    inverse, counts = _unique_host(x, "Unique")
    order = _order(inverse, len(counts))
    return UniqueOutput(*_unique(x, tuple(order.tolist()), tuple(inverse.tolist()), dt))


def unique_with_counts(x, out_idx=np.int32, name=None):
    """`unique`, and how many times each unique value occurs: `(y, idx, count)`."""
    dt = _index_dtype(out_idx, "UniqueWithCounts")
    inverse, counts = _unique_host(x, "UniqueWithCounts")
    order = _order(inverse, len(counts))
    y, idx = _unique(x, tuple(order.tolist()), tuple(inverse.tolist()), dt)
    return UniqueWithCountsOutput(y, idx, Tensor(jnp.asarray(counts, dt)))


# -- searching and counting ---------------------------------------------------------
@op("SearchSorted", inputs=("sorted_sequence", "values"), differentiable=False)
def _searchsorted(sorted_sequence, values, side, out_type):
    lead = sorted_sequence.shape[:-1]
    s = sorted_sequence.reshape((-1, sorted_sequence.shape[-1]))
    v = values.reshape((s.shape[0], -1))
    # counts, as TF's binary search (a NaN value goes first: no comparison holds)
    if side == "left":
        out = jnp.sum(s[:, None, :] < v[:, :, None], axis=-1)
    else:
        out = jnp.sum(s[:, None, :] <= v[:, :, None], axis=-1)
    return out.reshape(lead + values.shape[-1:]).astype(out_type)


def searchsorted(sorted_sequence, values, side="left", out_type=np.int32, name=None):
    """For each of `values` (innermost dim), where it would go in the sorted
    innermost dim of `sorted_sequence` (`side` 'left' or 'right'); leading
    dims are batch dims."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be either 'right' or 'left'. Saw: {side}.")
    s, v = to_value(sorted_sequence), to_value(values)
    if np.ndim(s) < 1 or np.ndim(v) < 1 or np.shape(s)[:-1] != np.shape(v)[:-1]:
        raise errors.invalid_argument(
            f"Leading dim_size of both tensors must match; got sorted_sequence "
            f"shape {list(np.shape(s))} and values shape {list(np.shape(v))} (rank "
            ">= 1, same leading dims).",
            "UpperBound" if side == "right" else "LowerBound",
        )
    if np.dtype(s.dtype) != np.dtype(v.dtype):
        raise errors.invalid_argument(
            f"sorted_sequence ({_tf_name(s.dtype)}) and values ({_tf_name(v.dtype)}) "
            "must have the same dtype.",
            "LowerBound",
        )
    return _searchsorted(
        sorted_sequence, values, side, _index_dtype(out_type, "LowerBound")
    )


@op("HistogramFixedWidth", inputs=("values", "value_range"), differentiable=False)
def _histogram_bins(values, value_range, nbins, dtype):
    wide = np.float64 if np.dtype(values.dtype).kind in "iu" else values.dtype
    values, value_range = values.astype(wide), value_range.astype(wide)
    lo, hi = value_range[0], value_range[1]
    idx = jnp.floor((values - lo) / (hi - lo) * nbins)
    return jnp.clip(idx, 0, nbins - 1).astype(dtype)


def _hist_args(values, value_range, nbins, op_name):
    v, r = to_value(values), to_value(value_range)
    _check(op_name, K_REAL, v)
    if np.shape(r) != (2,):
        raise errors.invalid_argument(
            f"value_range should be a vector of 2 elements; got shape "
            f"{list(np.shape(r))}.",
            op_name,
        )
    nbins = int(to_value(nbins))
    if nbins <= 0:
        raise errors.invalid_argument(
            f"nbins should be a positive number, but got '{nbins}'", op_name
        )
    return nbins


def histogram_fixed_width_bins(
    values, value_range, nbins=100, dtype=np.int32, name=None
):
    """The bin index of each of `values` among `nbins` equal bins over
    `value_range` (values outside go to the first or last bin)."""
    nbins = _hist_args(values, value_range, nbins, "HistogramFixedWidth")
    return _histogram_bins(values, value_range, nbins, _dtype(dtype))


@op("HistogramFixedWidth", inputs=("values", "value_range"), differentiable=False)
def _histogram(values, value_range, nbins, dtype):
    bins = _histogram_bins.__wrapped__(values, value_range, nbins, np.int32)
    return jnp.zeros((nbins,), dtype).at[jnp.ravel(bins)].add(1)


def histogram_fixed_width(values, value_range, nbins=100, dtype=np.int32, name=None):
    """Counts `values` in `nbins` equal bins over `value_range` (values outside
    count in the first or last bin)."""
    nbins = _hist_args(values, value_range, nbins, "HistogramFixedWidth")
    return _histogram(values, value_range, nbins, _dtype(dtype))


@op("SequenceMask", inputs=("lengths",), differentiable=False)
def _sequence_mask(lengths, maxlen, dtype):
    mask = jnp.arange(maxlen, dtype=lengths.dtype) < lengths[..., None]
    return mask.astype(dtype)


def sequence_mask(lengths, maxlen=None, dtype=np.bool_, name=None):
    """`mask[..., j] = j < lengths[...]`, `maxlen` columns (the largest length
    by default)."""
    v = to_value(lengths)
    if np.dtype(v.dtype).kind not in "iu":
        raise errors.invalid_argument(
            f"lengths must be integers; got {_tf_name(v.dtype)}.", "SequenceMask"
        )
    if maxlen is None:
        h = _host(v, "sequence_mask", "the largest length (no `maxlen` given)")
        maxlen = int(h.max()) if h.size else 0
    else:
        m = to_value(maxlen)
        if np.ndim(m) != 0:
            raise ValueError(
                f"Argument `maxlen` must be scalar for sequence_mask, received "
                f"`maxlen` = {maxlen} with shape {list(np.shape(m))} instead"
            )
        maxlen = int(m)
    return _sequence_mask(lengths, max(maxlen, 0), _dtype(dtype))


# -- moving and reshaping -----------------------------------------------------------
@op("Roll", inputs=("input",))
def _roll(input, shift, axis):  # noqa: A002
    return jnp.roll(input, shift, axis)


@op("Roll", inputs=("input", "shift"))
def _roll_traced(input, shift, axis):  # noqa: A002
    return jnp.roll(input, jnp.reshape(shift, (-1,)), axis)


def roll(input, shift, axis, name=None):  # noqa: A002
    """Rolls `input` by `shift` along `axis` (each may be a list; a shift of
    an axis named twice adds up)."""
    x = to_value(input)
    shift_value = to_value(shift)
    if isinstance(shift_value, jax.core.Tracer):  # a shift known at run time
        return _roll_traced(input, shift, _roll_axes(axis, np.ndim(x), shift_value))
    shifts = np.atleast_1d(np.asarray(shift_value))
    axes = _roll_axes(axis, np.ndim(x), shifts)
    return _roll(input, tuple(int(s) for s in shifts), axes)


def _roll_axes(axis, nd, shifts) -> tuple:
    axes = np.atleast_1d(np.asarray(to_value(axis)))
    if np.dtype(shifts.dtype).kind not in "iu" or axes.dtype.kind not in "iu":
        raise errors.invalid_argument("shift and axis must be integers.", "Roll")
    if np.size(shifts) != axes.size:
        raise errors.invalid_argument(
            f"shift and axis must have the same size; got {np.size(shifts)} and "
            f"{axes.size}.",
            "Roll",
        )
    for a in axes:
        if not -nd <= a < nd:
            raise errors.invalid_argument(
                f"axis {a} is out of range for a tensor of rank {nd}.", "Roll"
            )
    return tuple(int(a) % nd for a in axes)


def meshgrid(*args, **kwargs):
    """N-D coordinate grids from vectors; `indexing='xy'` (default) or 'ij'."""
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Key word arguments {list(kwargs)} are not supported.")
    if indexing not in ("xy", "ij"):
        raise ValueError("indexing parameter must be either 'xy' or 'ij'")
    if not args:
        return []
    return list(_meshgrid(args, indexing))


@op("Meshgrid", inputs="args")
def _meshgrid(args, indexing):
    return tuple(jnp.meshgrid(*[jnp.ravel(a) for a in args], indexing=indexing))


@op("Bitcast", inputs=("input",), differentiable=False)
def _bitcast(input, type):  # noqa: A002
    return lax.bitcast_convert_type(input, type)


def bitcast(input, type, name=None):  # noqa: A002
    """Reinterprets the bits of `input` as `type` (a wider type takes the last
    dim's entries, a narrower one adds a last dim), no copy semantics."""
    x = to_value(input)
    src, dst = np.dtype(x.dtype), _dtype(type)
    if src == np.bool_ or dst == np.bool_:
        raise errors.invalid_argument(
            "bitcast does not take bool tensors; cast them first.", "Bitcast"
        )
    if src.itemsize < dst.itemsize:
        ratio = dst.itemsize // src.itemsize
        if not np.ndim(x) or np.shape(x)[-1] != ratio:
            raise errors.invalid_argument(
                f"Cannot bitcast from {_tf_name(src)} to {_tf_name(dst)}: the last "
                f"dimension must be {ratio}; shape {list(np.shape(x))}.",
                "Bitcast",
            )
    return _bitcast(input, dst)


@op("Slice", inputs=("input_",))
def _slice(input_, begin, size):
    return lax.slice(input_, begin, tuple(b + s for b, s in zip(begin, size)))


def _check_dynamic_slice(xp, input_, begin, size):
    """TF's check of a run-time `begin`: each block inside `input_`."""
    shape = np.shape(input_)
    b = checks.host(begin) if xp is np else begin
    last = np.asarray(shape, b.dtype) - np.asarray(size, b.dtype)  # (strict dtypes)
    bad = (b < 0) | (b > last)
    checks.require(
        xp,
        bad,
        "Slice",
        "Expected begin[{}] = {} in [0, dim - size] for the sizes "
        f"{[int(s) for s in size]} of a tensor of shape {list(shape)}",
        lambda xp, p: p,
        lambda xp, p: b[p],
    )


@op("Slice", inputs=("input_", "begin"), check=_check_dynamic_slice)
def _dynamic_slice(input_, begin, size):
    return lax.dynamic_slice(input_, [begin[i] for i in range(len(size))], size)


def slice(input_, begin, size, name=None):  # noqa: A001
    """The `size` block of `input_` starting at `begin` (a size of -1 takes the
    rest of that dimension). Inside `jaxtape.function` `begin` may be known
    only at run time (a loop's counter); the sizes must then be given."""
    shape = np.shape(input_ if isinstance(input_, Tensor) else to_value(input_))
    begin_value = to_value(begin)
    if isinstance(begin_value, jax.core.Tracer):
        return _slice_at_run_time(input_, begin, size, shape)
    begin, size = _shape(begin, "Slice"), _shape(size, "Slice")
    if len(begin) != len(shape) or len(size) != len(shape):
        raise errors.invalid_argument(
            f"Expected begin and size arguments to be 1-D tensors of size "
            f"{len(shape)}, but got shapes [{len(begin)}] and [{len(size)}] instead.",
            "Slice",
        )
    size = tuple(d - b if s == -1 else s for b, s, d in zip(begin, size, shape))
    for i, (b, s, d) in enumerate(zip(begin, size, shape)):
        if b < 0 or s < 0 or b + s > d:
            raise errors.invalid_argument(
                f"Expected begin[{i}] in [0, {d}] and size[{i}] in [0, {d - b}], but "
                f"got {b} and {s}",
                "Slice",
            )
    return _slice(input_, begin, size)


def _slice_at_run_time(input_, begin, size, shape):
    size = _shape(size, "Slice")
    if np.shape(to_value(begin)) != (len(shape),) or len(size) != len(shape):
        raise errors.invalid_argument(
            f"Expected begin and size arguments to be 1-D tensors of size "
            f"{len(shape)}, but got shapes {list(np.shape(to_value(begin)))} and "
            f"[{len(size)}] instead.",
            "Slice",
        )
    if any(s == -1 for s in size):
        raise NotImplementedError(
            "slice with a `begin` known only at run time and a size of -1: the "
            "block's size would be known only at run time, and XLA's are fixed. "
            f"Give every size (input shape {list(shape)})."
        )
    for i, (s, d) in enumerate(zip(size, shape)):
        if not 0 <= s <= d:
            raise errors.invalid_argument(
                f"Expected size[{i}] in [0, {d}], but got {s}", "Slice"
            )
    return _dynamic_slice(input_, begin, size)


def strided_slice(
    input_,
    begin,
    end,
    strides=None,
    begin_mask=0,
    end_mask=0,
    ellipsis_mask=0,
    new_axis_mask=0,
    shrink_axis_mask=0,
    var=None,
    name=None,
):
    """`input_[begin:end:strides]` with TF's masks, as Python's slicing."""
    if var is not None:
        raise NotImplementedError(
            "strided_slice's `var` (a sliced assign) is not supported."
        )
    begin, end = _shape(begin, "StridedSlice"), _shape(end, "StridedSlice")
    strides = (1,) * len(begin) if strides is None else _shape(strides, "StridedSlice")
    if not len(begin) == len(end) == len(strides):
        raise ValueError(
            "begin, end and strides must have the same length; got "
            f"{len(begin)}, {len(end)} and {len(strides)}."
        )
    key: list = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if ellipsis_mask & bit:
            key.append(Ellipsis)
        elif new_axis_mask & bit:
            key.append(None)
        elif shrink_axis_mask & bit:
            key.append(b)
        else:
            if s == 0:
                raise errors.invalid_argument(
                    f"strides[{i}] must be non-zero", "StridedSlice"
                )
            key.append(
                builtins_slice(
                    None if begin_mask & bit else b, None if end_mask & bit else e, s
                )
            )
    return getitem(input_, tuple(key))


import builtins as _builtins  # noqa: E402

builtins_slice = _builtins.slice


@op("ReverseSequence", inputs=("input", "seq_lengths"))
def _reverse_sequence(input, seq_lengths, seq_axis, batch_axis):  # noqa: A002
    n = input.shape[seq_axis]
    pos = jnp.arange(n)
    lens = seq_lengths.astype(np.int64)
    # for batch b, position p < len[b] reads from len[b] - 1 - p
    src = jnp.where(
        pos[None, :] < lens[:, None], lens[:, None] - 1 - pos[None, :], pos[None, :]
    )
    # src has shape [batch, n]; bring it to input's layout
    shape = [1] * input.ndim
    shape[batch_axis] = input.shape[batch_axis]
    shape[seq_axis] = n
    order = sorted([batch_axis, seq_axis])
    src = src if order == [batch_axis, seq_axis] else src.T
    src = jnp.broadcast_to(src.reshape(shape), input.shape)
    return jnp.take_along_axis(input, src, axis=seq_axis)


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None):  # noqa: A002
    """Reverses the first `seq_lengths[b]` entries along `seq_axis` of each
    batch entry `b` (along `batch_axis`)."""
    x, lens = to_value(input), to_value(seq_lengths)
    nd = np.ndim(x)
    seq_axis = int(seq_axis) if seq_axis is not None else 1
    batch_axis = int(batch_axis) if batch_axis is not None else 0
    seq_axis %= max(nd, 1)
    batch_axis %= max(nd, 1)
    if seq_axis == batch_axis:
        raise errors.invalid_argument(
            f"batch_axis == seq_axis == {seq_axis}: they must differ.",
            "ReverseSequence",
        )
    if np.shape(lens) != (np.shape(x)[batch_axis],):
        raise errors.invalid_argument(
            f"Length of seq_lengths != input.dims({batch_axis}), "
            f"({np.size(lens)} vs. {np.shape(x)[batch_axis]})",
            "ReverseSequence",
        )
    h = _host(lens, "reverse_sequence", "seq_lengths")
    if h.size and (h.min() < 0 or h.max() > np.shape(x)[seq_axis]):
        raise errors.invalid_argument(
            f"seq_lengths must be in [0, {np.shape(x)[seq_axis]}]; got {h.tolist()}.",
            "ReverseSequence",
        )
    return _reverse_sequence(input, seq_lengths, seq_axis, batch_axis)


@op("UnravelIndex", inputs=("indices",), differentiable=False)
def _unravel_index(indices, dims):
    return jnp.stack(jnp.unravel_index(indices, dims)).astype(indices.dtype)


def unravel_index(indices, dims, name=None):
    """The coordinates in an array of shape `dims` of flat `indices` (a
    `[len(dims)] + indices.shape` tensor)."""
    d = _shape(dims, "UnravelIndex")
    v = to_value(indices)
    h = _host(v, "unravel_index", "indices")
    n = int(np.prod(d))
    if h.size and (h.min() < 0 or h.max() >= n):
        raise errors.invalid_argument(
            f"index out of bounds for array of size {n}: flat indices must be in "
            f"[0, {n}).",
            "UnravelIndex",
        )
    return _unravel_index(indices, d)


# -- scatter ------------------------------------------------------------------------
def _tensor_scatter(op_name, method):
    @op(op_name, same_dtype=(0, 2), check=_check_tensor_scatter(op_name))
    def body(tensor, indices, updates, name=None):
        _check_nd_args(op_name, indices, tensor.shape, updates, tensor.dtype)
        if tensor.dtype == np.bool_:
            raise errors.NotFoundError(
                None,
                op_name,
                f"Could not find device for node: {op_name}[T=bool]: TensorFlow "
                "has no bool kernel. Cast to int32 first.",
            )
        ref = tensor.at[_nd_key(indices)]
        if method == "sub":
            return ref.add(-updates, mode="drop")
        return getattr(ref, method)(updates, mode="drop")

    return body


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """Copies `tensor` with `updates` subtracted at `indices`."""
    return _scatter_sub(tensor, indices, updates)


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """Copies `tensor` with the element-wise max of it and `updates` at `indices`."""
    return _scatter_max(tensor, indices, updates)


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """Copies `tensor` with the element-wise min of it and `updates` at `indices`."""
    return _scatter_min(tensor, indices, updates)


_scatter_sub = _tensor_scatter("TensorScatterSub", "sub")
# Variable.scatter_mul/scatter_div (TF has no tensor_scatter_nd_* for them).
scatter_nd_mul = _tensor_scatter("ResourceScatterMul", "multiply")
scatter_nd_div = _tensor_scatter("ResourceScatterDiv", "divide")
_scatter_max = _tensor_scatter("TensorScatterMax", "max")
_scatter_min = _tensor_scatter("TensorScatterMin", "min")


# -- partition and stitch -----------------------------------------------------------
@op("DynamicPartition", inputs=("data",))
def _dynamic_partition(data, positions):
    return tuple(
        jnp.take(data, jnp.asarray(p, np.int64), axis=0)
        if p
        else jnp.zeros((0,) + data.shape[1:], data.dtype)
        for p in positions
    )


def dynamic_partition(data, partitions, num_partitions, name=None):
    """Splits `data` into `num_partitions` tensors by `partitions` (an int32
    tensor of the leading shape of `data`, values in `[0, num_partitions)`)."""
    d, p = to_value(data), to_value(partitions)
    if np.dtype(p.dtype) != np.int32:
        raise errors.invalid_argument(
            f"partitions must be int32; got {_tf_name(p.dtype)}.", "DynamicPartition"
        )
    if np.shape(d)[: np.ndim(p)] != np.shape(p):
        raise errors.invalid_argument(
            f"data.shape must start with partitions.shape, got data.shape = "
            f"{list(np.shape(d))}, partitions.shape = {list(np.shape(p))}",
            "DynamicPartition",
        )
    num = int(num_partitions)
    if num < 1:
        raise ValueError(f"num_partitions must be at least 1; got {num}.")
    h = _host(p, "dynamic_partition", "partitions").reshape(-1)
    if h.size and (h.min() < 0 or h.max() >= num):
        bad = h[(h < 0) | (h >= num)][0]
        raise errors.invalid_argument(
            f"partitions has value {bad} which is outside [0, {num}).",
            "DynamicPartition",
        )
    lead = int(np.prod(np.shape(p)))
    flat_data = Tensor(jnp.asarray(d)) if not isinstance(data, Tensor) else data
    from jaxtape._src.ops.array_ops import reshape

    flat = reshape(flat_data, (lead,) + tuple(np.shape(d)[np.ndim(p) :]))
    positions = tuple(tuple(np.nonzero(h == i)[0].tolist()) for i in range(num))
    return list(_dynamic_partition(flat, positions))


@op("DynamicStitch", inputs="data")
def _dynamic_stitch(data, where, n, inner):
    dtype = data[0].dtype
    out = jnp.zeros((n,) + inner, dtype)
    delta = jnp.zeros((n,) + inner, dtype)
    for d, idx in zip(data, where):
        if idx:
            flat = d.reshape((len(idx),) + inner)
            at = jnp.asarray(idx, np.int64)
            out = out.at[at].set(lax.stop_gradient(flat))
            # TF's gradient: each input gathers the gradient at its indices,
            # overwritten ones too (a zero-valued term carries it)
            if np.dtype(dtype).kind in "fc":
                delta = delta.at[at].add(flat - lax.stop_gradient(flat))
    return out + delta if np.dtype(dtype).kind in "fc" else out


def dynamic_stitch(indices, data, name=None):
    """Interleaves the tensors of `data` into one: `merged[indices[m][i]] =
    data[m][i]` (later ones win where indices repeat)."""
    indices, data = list(indices), list(data)
    if len(indices) != len(data) or not data:
        raise ValueError(
            "dynamic_stitch needs as many `indices` as `data` tensors (at least one)."
        )
    hosts = [_host(i, "dynamic_stitch", "indices") for i in indices]
    vals = [to_value(d) for d in data]
    inner = None
    for h, v in zip(hosts, vals):
        if np.shape(v)[: h.ndim] != h.shape:
            raise errors.invalid_argument(
                f"data.shape {list(np.shape(v))} must start with indices.shape "
                f"{list(h.shape)}.",
                "DynamicStitch",
            )
        this = tuple(np.shape(v)[h.ndim :])
        if inner is None:
            inner = this
        elif this != inner:
            raise errors.invalid_argument(
                "All data tensors must have the same inner shape.", "DynamicStitch"
            )
    n = max((int(h.max()) + 1 for h in hosts if h.size), default=0)
    where = tuple(tuple(h.reshape(-1).tolist()) for h in hosts)
    return _dynamic_stitch(data, where, n, inner)


# -- space to batch -----------------------------------------------------------------
@op("SpaceToBatchND", inputs=("input",))
def _space_to_batch(input, block_shape, paddings):  # noqa: A002
    m = len(block_shape)
    pad = [(0, 0)] + list(paddings) + [(0, 0)] * (input.ndim - 1 - m)
    x = jnp.pad(input, pad)
    b = x.shape[0]
    spatial = x.shape[1 : 1 + m]
    rest = x.shape[1 + m :]
    shape = [b]
    for s, k in zip(spatial, block_shape):
        shape += [s // k, k]
    x = x.reshape(shape + list(rest))
    # -> [k1, k2, ..., b, s1/k1, s2/k2, ..., rest]
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
    perm += list(range(1 + 2 * m, x.ndim))
    x = x.transpose(perm)
    return x.reshape(
        (b * int(np.prod(block_shape)),)
        + tuple(s // k for s, k in zip(spatial, block_shape))
        + rest
    )


@op("BatchToSpaceND", inputs=("input",))
def _batch_to_space(input, block_shape, crops):  # noqa: A002
    m = len(block_shape)
    prod = int(np.prod(block_shape))
    b = input.shape[0] // prod
    spatial = input.shape[1 : 1 + m]
    rest = input.shape[1 + m :]
    x = input.reshape(tuple(block_shape) + (b,) + spatial + rest)
    # -> [b, s1, k1, s2, k2, ..., rest]
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, x.ndim))
    x = x.transpose(perm)
    x = x.reshape((b,) + tuple(s * k for s, k in zip(spatial, block_shape)) + rest)
    idx = tuple(
        builtins_slice(lo, x.shape[1 + i] - hi) for i, (lo, hi) in enumerate(crops)
    )
    return x[(builtins_slice(None),) + idx]


def _block_args(input, block_shape, pads, op_name, what):  # noqa: A002
    shape = np.shape(to_value(input))
    block = _shape(block_shape, op_name)
    pads_a = (
        np.asarray(to_value(pads), np.int64).reshape(-1, 2)
        if np.size(to_value(pads))
        else np.zeros((0, 2), np.int64)
    )
    m = len(block)
    if pads_a.shape != (m, 2):
        raise errors.invalid_argument(
            f"{what} should have shape [{m}, 2] (one pair per block dimension); got "
            f"{list(pads_a.shape)}.",
            op_name,
        )
    if len(shape) < 1 + m:
        raise errors.invalid_argument(
            f"input rank should be >= {1 + m} instead of {len(shape)}", op_name
        )
    if any(k < 1 for k in block) or (pads_a < 0).any():
        raise errors.invalid_argument(
            f"block_shape must be positive and {what} non-negative; got {list(block)} "
            f"and {pads_a.tolist()}.",
            op_name,
        )
    return shape, block, tuple((int(a), int(b)) for a, b in pads_a)


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002
    """Moves blocks of the (padded) spatial dims into the batch dim."""
    shape, block, pads = _block_args(
        input, block_shape, paddings, "SpaceToBatchND", "paddings"
    )
    for i, (k, (lo, hi)) in enumerate(zip(block, pads)):
        if (shape[1 + i] + lo + hi) % k:
            raise errors.invalid_argument(
                f"padded_shape[{i}]={shape[1 + i] + lo + hi} is not divisible by "
                f"block_shape[{i}]={k}",
                "SpaceToBatchND",
            )
    return _space_to_batch(input, block, pads)


space_to_batch = space_to_batch_nd


def batch_to_space(input, block_shape, crops, name=None):  # noqa: A002
    """Moves blocks of the batch dim back into the spatial dims, then crops
    them (the inverse of `space_to_batch`)."""
    shape, block, crops_ = _block_args(
        input, block_shape, crops, "BatchToSpaceND", "crops"
    )
    prod = int(np.prod(block))
    if shape[0] % prod:
        raise errors.invalid_argument(
            f"Input batch dimension ({shape[0]}) is not divisible by product of block "
            f"sizes ({prod})",
            "BatchToSpaceND",
        )
    for i, (k, (lo, hi)) in enumerate(zip(block, crops_)):
        if lo + hi > shape[1 + i] * k:
            raise errors.invalid_argument(
                f"Crops must be non-negative and at most the block's size; "
                f"crops[{i}] = {[lo, hi]}.",
                "BatchToSpaceND",
            )
    return _batch_to_space(input, block, crops_)


def required_space_to_batch_paddings(
    input_shape, block_shape, base_paddings=None, name=None
):
    """`(paddings, crops)` that make `input_shape` divisible by `block_shape`
    (after `base_paddings`), as TF's."""
    shape = np.asarray(_shape(input_shape))
    block = np.asarray(_shape(block_shape))
    base = (
        np.zeros((len(block), 2), np.int64)
        if base_paddings is None
        else np.asarray(to_value(base_paddings)).reshape(-1, 2)
    )
    start, end = base[:, 0], base[:, 1]
    full = shape + start + end
    extra = (block - full % block) % block
    pads = np.stack([start, end + extra], 1).astype(np.int32)
    crops = np.stack([np.zeros_like(extra), extra], 1).astype(np.int32)
    return Tensor(jnp.asarray(pads)), Tensor(jnp.asarray(crops))


# -- small utilities ----------------------------------------------------------------
def shape_n(input, out_type=None, name=None):  # noqa: A002
    """The shapes of a list of tensors, as int32 (or `out_type`) vectors."""
    from jaxtape._src.core import dtypes
    from jaxtape._src.ops.nondiff import shape

    out = dtypes.int32 if out_type is None else dtypes.as_dtype(out_type)
    return [shape(x, out_type=out) for x in input]


def identity_n(input, name=None):  # noqa: A002
    """Each tensor of the list `input`, unchanged (gradients pass through)."""
    from jaxtape._src.ops.math_ops import identity

    return [identity(x) for x in input]


def is_tensor(x):
    """True for a jaxtape Tensor or Variable (TF's `tf.is_tensor`)."""
    from jaxtape._src.core import context

    var = context.hooks.variable_type
    return isinstance(x, Tensor) or (var is not None and isinstance(x, var))


def get_static_value(tensor, partial=False):
    """The NumPy value of `tensor` when it is known now (eagerly, always);
    None for a traced value inside `jaxtape.function`."""
    if partial:
        raise NotImplementedError("get_static_value's `partial=True` is not supported.")
    if isinstance(tensor, (np.ndarray, np.generic)):
        return tensor
    try:
        return np.asarray(to_value(tensor))
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError):
        return None


def no_op(name=None):
    """Does nothing (TF's graph no-op; eagerly None)."""
    return None


def group(*inputs, **kwargs):
    """TF's control-dependency group: eagerly every input has run; returns None."""
    unknown = set(kwargs) - {"name"}
    if unknown:
        raise TypeError(f"Unknown keyword arguments: {sorted(unknown)}")
    return None


def tuple_(tensors, control_inputs=None, name=None):
    """The tensors, as a list (TF's `tf.tuple`: eagerly, they have all run)."""
    return list(tensors)


tuple_.__name__ = tuple_.__qualname__ = "tuple"


def ensure_shape(x, shape, name=None):
    """`x`, checked to have a shape compatible with `shape` (None dims match
    anything), else TF's `InvalidArgumentError`."""
    from jaxtape._src.ops.math_ops import identity

    want = shape if isinstance(shape, TensorShape) else TensorShape(shape)
    have = tuple(np.shape(to_value(x)))
    dims = getattr(want, "dims", None)
    want_t = None if dims is None and getattr(want, "rank", 0) is None else list(want)
    if want_t is not None and (
        len(want_t) != len(have)
        or any(w is not None and w != h for w, h in zip(want_t, have))
    ):
        raise errors.invalid_argument(
            f"Shape of tensor x {list(have)} is not compatible with expected shape "
            f"{want_t}.",
            "EnsureShape",
        )
    return identity(x)


def broadcast_static_shape(shape_x, shape_y):
    """The broadcast of two static TensorShapes (ValueError if incompatible)."""
    sx, sy = list(TensorShape(shape_x)), list(TensorShape(shape_y))
    out = []
    for i in range(1, max(len(sx), len(sy)) + 1):
        a = sx[-i] if i <= len(sx) else 1
        b = sy[-i] if i <= len(sy) else 1
        if b == 1:
            out.append(a)
        elif a == 1:
            out.append(b)
        elif a is None or b is None or a == b:
            out.append(b if a is None else a)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: {sx} and {sy}")
    return TensorShape(out[::-1])


def broadcast_dynamic_shape(shape_x, shape_y):
    """The broadcast of two shape vectors, as a vector of their dtype."""
    x, y = to_value(shape_x), to_value(shape_y)
    try:
        out = np.broadcast_shapes(
            tuple(int(d) for d in np.asarray(x)),
            tuple(int(d) for d in np.asarray(y)),
        )
    except ValueError:
        raise errors.invalid_argument(
            f"Incompatible shapes: {np.asarray(x).tolist()} vs. "
            f"{np.asarray(y).tolist()}",
            "BroadcastArgs",
        ) from None
    return Tensor(jnp.asarray(out, np.dtype(x.dtype)))


def parallel_stack(values, name=None):
    """Stacks the tensors of `values` along a new first axis, inside
    `jaxtape.function` only (eagerly a RuntimeError, as TF's)."""
    from jaxtape._src.core import context

    if context.state.function_depth == 0:
        raise RuntimeError(
            "tf.parallel_stack() is not compatible with eager execution. Use "
            "`jaxtape.stack`, or call it inside a `jaxtape.function`."
        )
    return stack(values)


def timestamp(name=None):
    """The current time in seconds since the epoch, as a float64 scalar."""
    return Tensor(jnp.asarray(time.time(), np.float64))


def realdiv(x, y, name=None):
    """`x / y` for floats (TF's RealDiv)."""
    from jaxtape._src.ops.math_ops import _truediv

    return _truediv(x, y)


@op("TruncateDiv", same_dtype=True, differentiable=False)
def truncatediv(x, y, name=None):
    """`x / y` rounded towards zero for integers (C's division); `x / y` for
    floats."""
    _check("TruncateDiv", K_REAL, x, y)
    if np.dtype(jnp.result_type(x, y)).kind in "iu":
        return lax.div(*jnp.broadcast_arrays(x, y))
    return jnp.true_divide(x, y)


@op("TruncateMod", same_dtype=True)
def truncatemod(x, y, name=None):
    """The remainder of truncated division (C's `%`; `fmod` for floats)."""
    _check("TruncateMod", K_REAL, x, y)
    return lax.rem(*jnp.broadcast_arrays(x, y))


def inside_function():
    """True while `jaxtape.function` traces (TF's `tf.inside_function`)."""
    from jaxtape._src.core import context

    return context.state.function_depth > 0


def is_symbolic_tensor(tensor):
    """True for a Tensor holding a traced value (inside `jaxtape.function`),
    as TF's graph tensors; False for eager Tensors and anything else."""
    import jax.core

    return isinstance(tensor, Tensor) and isinstance(tensor._value, jax.core.Tracer)


def guarantee_const(input, name=None):  # noqa: A002
    """`input` unchanged (TF's hint that it is constant; a no-op here)."""
    from jaxtape._src.ops.math_ops import identity

    return identity(input)


def get_logger():
    """The `logging` logger jaxtape writes its warnings to (TF's `get_logger`)."""
    import logging

    return logging.getLogger("jaxtape")
