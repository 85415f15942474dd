"""Shape, indexing and combining ops (TF's `array_ops`) as pure jnp bodies. Layer L1."""

from __future__ import annotations

import collections

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.core import dtypes
from jaxtape._src.core.dispatch import op
from jaxtape._src.ops.math_ops import _axis


def _shape(shape):
    """A static shape argument (list, tuple, array, TensorShape) as a tuple of ints."""
    if isinstance(shape, int):
        return (shape,)
    return (
        tuple(-1 if d is None else int(d) for d in np.asarray(shape).reshape(-1))
        if not isinstance(shape, tuple)
        else tuple(-1 if d is None else int(d) for d in shape)
    )


@op("Reshape", inputs=("tensor",))
def reshape(tensor, shape, name=None):
    """Reshapes `tensor` to `shape` (one dimension may be -1)."""
    shape = _shape(shape)
    if -1 not in shape and int(np.prod(shape)) != np.size(tensor):
        raise ValueError(
            f"Cannot reshape a tensor with {np.size(tensor)} elements to shape "
            f"{list(shape)} ({int(np.prod(shape))} elements). The element counts must "
            "match; use -1 for one dimension to infer it."
        )
    return jnp.reshape(tensor, shape)


@op("Transpose")
def transpose(a, perm=None, conjugate=False, name=None):
    """Permutes the dimensions of `a` (reverses them by default)."""
    out = jnp.transpose(a, None if perm is None else _shape(perm))
    return jnp.conj(out) if conjugate else out


@op("Squeeze")
def squeeze(input, axis=None, name=None):  # noqa: A002
    """Removes dimensions of size 1 (only those in `axis`, when given)."""
    return jnp.squeeze(input, axis=_axis(axis))


@op("ExpandDims", inputs=("input",))
def expand_dims(input, axis, name=None):  # noqa: A002
    """Inserts a dimension of size 1 at `axis`."""
    return jnp.expand_dims(input, _axis(axis))


@op("BroadcastTo", inputs=("input",))
def broadcast_to(input, shape, name=None):  # noqa: A002
    """Broadcasts `input` to `shape`."""
    return jnp.broadcast_to(input, _shape(shape))


@op("ConcatV2", inputs="values", same_dtype=True)
def concat(values, axis, name=None):
    """Concatenates a list of tensors along `axis`."""
    return jnp.concatenate(values, axis=_axis(axis))


@op("Pack", inputs="values", same_dtype=True)
def stack(values, axis=0, name=None):
    """Stacks a list of rank-R tensors into one rank-(R+1) tensor."""
    return jnp.stack(values, axis=_axis(axis))


@op("Unpack")
def unstack(value, num=None, axis=0, name=None):
    """Unpacks `value` along `axis` into a list of tensors."""
    axis = _axis(axis)
    n = value.shape[axis]
    if num is not None and num != n:
        raise ValueError(
            f"unstack: num={num} does not match dimension {axis} of size {n}."
        )
    return [lax.index_in_dim(value, i, axis, keepdims=False) for i in range(n)]


@op("Split", inputs=("value",))
def split(value, num_or_size_splits, axis=0, num=None, name=None):
    """Splits `value` into equal parts (an int) or parts of the given sizes (a list)."""
    axis = _axis(axis)
    if isinstance(num_or_size_splits, int):
        if value.shape[axis] % num_or_size_splits:
            raise ValueError(
                f"Dimension {axis} of size {value.shape[axis]} is not evenly "
                f"divisible by {num_or_size_splits}. Pass a list of sizes instead."
            )
        return jnp.split(value, num_or_size_splits, axis=axis)
    sizes = list(_shape(num_or_size_splits))
    if -1 in sizes:
        sizes[sizes.index(-1)] = value.shape[axis] - (sum(sizes) + 1)
    return jnp.split(value, np.cumsum(sizes)[:-1].tolist(), axis=axis)


@op("Tile", inputs=("input",))
def tile(input, multiples, name=None):  # noqa: A002
    """Repeats `input` `multiples[i]` times along dimension i."""
    return jnp.tile(input, _shape(multiples))


@op("Repeat", inputs=("input",))
def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """Repeats elements of `input` (like `np.repeat`)."""
    return jnp.repeat(input, repeats, axis=_axis(axis))


@op("PadV2", inputs=("tensor",))
def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Pads `tensor` by `paddings` ([[before, after], ...] per dimension)."""
    pads = tuple(tuple(int(v) for v in p) for p in np.asarray(paddings))
    mode = mode.upper()
    if mode == "CONSTANT":
        return jnp.pad(tensor, pads, constant_values=constant_values)
    if mode in ("REFLECT", "SYMMETRIC"):
        return jnp.pad(tensor, pads, mode=mode.lower())
    raise ValueError(
        f"Unknown padding mode {mode!r}; use CONSTANT, REFLECT or SYMMETRIC."
    )


@op("Reverse", inputs=("tensor",))
def reverse(tensor, axis, name=None):
    """Reverses the given dimensions."""
    return jnp.flip(tensor, _axis(axis))


@op("GatherV2", inputs=("params", "indices"), defer=False)  # checks indices
def _gather(params, indices, axis, batch_dims):
    if batch_dims:
        raise NotImplementedError("gather with batch_dims > 0 is not supported yet.")
    n = params.shape[axis]
    idx = jnp.asarray(indices)
    _check_indices(idx, n, "gather")
    return jnp.take(params, idx, axis=axis, mode="clip")


def _check_indices(idx, n, what):
    try:
        host = np.asarray(idx)
    except Exception:  # traced indices: XLA clips, as TF on GPU does
        return
    if host.size and (host.min() < -n or host.max() >= n):
        bad = host[(host < -n) | (host >= n)].reshape(-1)[0]
        from jaxtape._src.core import errors

        raise errors.invalid_argument(
            f"{what}: index {int(bad)} is not in [0, {n}).", "GatherV2"
        )


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Gathers slices of `params` at `indices` along `axis`.

    Differences from TensorFlow: the gradient is a dense tensor rather than
    `IndexedSlices` (the values are the same; use `jaxtape.convert_to_tensor`).
    """
    return _gather(params, indices, 0 if axis is None else _axis(axis), batch_dims)


@op("GatherNd")
def gather_nd(params, indices, batch_dims=0, name=None):
    """Gathers slices of `params` with the index tuples in the last dim of `indices`."""
    idx = jnp.asarray(indices)
    if batch_dims:
        raise NotImplementedError("gather_nd with batch_dims > 0 is not supported yet.")
    return params[tuple(jnp.moveaxis(idx, -1, 0))]


@op("ScatterNd", inputs=("indices", "updates"))
def scatter_nd(indices, updates, shape, name=None):
    """Scatters `updates` into zeros of `shape` at `indices` (adding duplicates)."""
    out = jnp.zeros(_shape(shape), updates.dtype)
    return out.at[tuple(jnp.moveaxis(jnp.asarray(indices), -1, 0))].add(updates)


@op("TensorScatterUpdate")
def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """Copies `tensor` with the slices at `indices` replaced by `updates`."""
    return tensor.at[tuple(jnp.moveaxis(jnp.asarray(indices), -1, 0))].set(updates)


@op("TensorScatterAdd")
def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """Copies `tensor` with `updates` added at `indices`."""
    return tensor.at[tuple(jnp.moveaxis(jnp.asarray(indices), -1, 0))].add(updates)


def where(condition, x=None, y=None, name=None):
    """Selects from `x` where `condition` is true, else `y`; with only `condition`,
    the coordinates of true elements (as an int64 [n, rank] tensor), as in TF."""
    from jaxtape._src.core.dispatch import to_value
    from jaxtape._src.core.tensor import Tensor

    if x is None and y is None:
        cond = np.asarray(to_value(condition))
        return Tensor(jnp.asarray(np.argwhere(cond), np.int64))
    if x is None or y is None:
        raise ValueError("where: give both `x` and `y`, or neither.")
    return _where_xy(condition, x, y)


@op("SelectV2", same_dtype=(1, 2))
def _select(condition, x, y):
    return jnp.where(condition, x, y)


def _where_xy(condition, x, y):
    from jaxtape._src.core.dispatch import to_value
    from jaxtape._src.core.tensor import Tensor

    cond = condition if type(condition) is Tensor else to_value(condition)
    return _select(cond, x, y)


@op("OneHot", inputs=("indices",), differentiable=False)
def one_hot(
    indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None
):
    """A one-hot tensor: `on_value` at `indices`, `off_value` elsewhere (float32)."""
    dt = dtypes.np_dtype(dtype) or np.dtype(np.float32)
    on = 1 if on_value is None else on_value
    off = 0 if off_value is None else off_value
    hot = jnp.asarray(indices)[..., None] == jnp.arange(int(depth))
    out = jnp.where(hot, jnp.asarray(on, dt), jnp.asarray(off, dt))
    if axis is not None and axis != -1:
        out = jnp.moveaxis(out, -1, axis)
    return out


TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


@op("TopKV2")
def top_k(input, k=1, sorted=True, name=None):  # noqa: A002
    """The `k` largest entries of the last dimension and their indices."""
    values, indices = lax.top_k(input, int(k))
    return TopKV2(values, indices.astype(np.int32))


@op("Sort")
def sort(values, axis=-1, direction="ASCENDING", name=None):
    """Sorts `values` along `axis`."""
    out = jnp.sort(values, axis=axis)
    if direction == "DESCENDING":
        return jnp.flip(out, axis)
    if direction != "ASCENDING":
        raise ValueError(
            "direction must be 'ASCENDING' or 'DESCENDING'. Received: "
            f"direction={direction!r}"
        )
    return out


@op("BooleanMask", inputs=("tensor",))
def _boolean_mask(tensor, mask_np, axis):
    idx = np.nonzero(np.asarray(mask_np).reshape(-1))[0]
    flat = jnp.reshape(
        tensor, tensor.shape[:axis] + (-1,) + tensor.shape[axis + np.ndim(mask_np) :]
    )
    return jnp.take(flat, idx, axis=axis)


def boolean_mask(tensor, mask, axis=None, name=None):
    """Keeps the entries of `tensor` where `mask` is true (a data-dependent shape)."""
    from jaxtape._src.core.dispatch import to_value

    m = np.asarray(to_value(mask))
    return _boolean_mask(tensor, _Hashable(m), 0 if axis is None else int(axis))


class _Hashable:
    """A host array made hashable by content, for use as a static op parameter."""

    __slots__ = ("array", "_key")

    def __init__(self, array):
        self.array = np.asarray(array)
        self._key = (self.array.shape, self.array.dtype.str, self.array.tobytes())

    def __array__(self, dtype=None, copy=None):
        return self.array if dtype is None else self.array.astype(dtype)

    def __eq__(self, other):
        return isinstance(other, _Hashable) and self._key == other._key

    def __hash__(self):
        return hash(self._key)


@op("StridedSlice", inputs=("tensor",))
def _getitem(tensor, key):
    return tensor[_thaw_key(key)]


def _freeze_key(key):
    """Turns an indexing key into a hashable static parameter."""
    from jaxtape._src.core.tensor import Tensor

    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if isinstance(k, slice):
            out.append(
                (
                    "slice",
                    _int_or_none(k.start),
                    _int_or_none(k.stop),
                    _int_or_none(k.step),
                )
            )
        elif k is None or k is Ellipsis:
            out.append(k)
        elif isinstance(k, (int, np.integer)):
            out.append(int(k))
        elif type(k) is Tensor or isinstance(k, (np.ndarray, list)):
            arr = np.asarray(k._value if type(k) is Tensor else k)
            out.append(
                int(arr) if arr.ndim == 0 and arr.dtype.kind in "iu" else _Hashable(arr)
            )
        else:
            raise TypeError(
                f"Only integers, slices (`:`), ellipsis (`...`), jaxtape.newaxis "
                f"(`None`) and integer or boolean tensors are valid indices; got {k!r}."
            )
    return tuple(out)


def _int_or_none(v):
    return None if v is None else int(v)


def _thaw_key(key):
    out = []
    for k in key:
        if isinstance(k, tuple):
            out.append(slice(k[1], k[2], k[3]))
        elif isinstance(k, _Hashable):
            out.append(k.array)
        else:
            out.append(k)
    return tuple(out)


def getitem(tensor, key):
    """`tensor[key]` with NumPy/TF slicing semantics (recorded on tapes)."""
    return _getitem(tensor, _freeze_key(key))


@op("Fill", inputs=("value",))
def _fill(value, dims):
    return jnp.full(dims, value, dtype=jnp.result_type(value))


def fill(dims, value, name=None):
    """A tensor of shape `dims` filled with `value`."""
    return _fill(value, _shape(dims))


@op("MatrixDiag")
def _diag(diagonal):
    return jnp.vectorize(jnp.diag, signature="(n)->(n,n)")(diagonal)


def diag(diagonal, name=None):
    """A (batched) diagonal matrix with the given diagonal."""
    return _diag(diagonal)
