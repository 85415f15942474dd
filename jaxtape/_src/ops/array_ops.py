"""Shape, indexing and combining ops (TF's `array_ops`) as pure jnp bodies. Layer L1."""

from __future__ import annotations

import collections
import math
import numbers
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.core import checks, context, dtypes, errors
from jaxtape._src.core.dispatch import _tf_name, op, to_value
from jaxtape._src.core.tensor import Tensor, TensorShape
from jaxtape._src.ops.math_ops import _axis

if TYPE_CHECKING:
    from jaxtape._src.core.typing import AxisLike, TensorLike


def _shape(shape, op_name=None):
    """A static shape argument (int, list, tuple, array, TensorShape, Tensor) as a
    tuple of ints, refused as TF refuses it: None or a partly known shape is a
    ValueError, float sizes an `InvalidArgumentError` (`op_name`'s)."""
    if type(shape) is int:
        return (shape,)
    if isinstance(shape, (tuple, list)):
        try:
            return tuple(map(operator.index, shape))  # the common case
        except TypeError:
            pass
    if isinstance(shape, TensorShape) and None in shape:
        raise ValueError(
            f"Cannot convert a partially known TensorShape {shape} to a Tensor. "
            "Give every dimension a size (use -1 in `reshape` for one unknown)."
        )
    arr = np.asarray(to_value(shape))
    if arr.dtype.kind not in "iu" and arr.size:
        raise errors.invalid_argument(
            f"Value for attr 'Tshape' of {_tf_name(arr.dtype)} is not in the list of "
            f"allowed values: int32, int64. A shape is a list of integers; received "
            f"{shape!r}.",
            op_name,
        )
    if arr.ndim > 1:
        raise errors.invalid_argument(
            f"A shape must be a vector (1-D), got shape {list(arr.shape)}: {shape!r}.",
            op_name,
        )
    return tuple(int(d) for d in arr.reshape(-1))


def _dims(shape, op_name, int32=False):
    """A shape of sizes >= 0 (TF's `Dimension -1 must be >= 0`).

    `int32`: convert Python values as TF's `zeros`/`ones` do (with dtype int32,
    so a float size is a TypeError rather than an `InvalidArgumentError`).
    """
    if int32 and type(shape) is not int and not isinstance(shape, Tensor):
        if type(shape) is float or (
            type(shape) in (list, tuple) and float in set(map(type, shape))
        ):
            to_value(shape, np.int32)  # raises TF's "Cannot convert ..." TypeError
    dims = _shape(shape, op_name)
    for d in dims:
        if d < 0:
            raise errors.invalid_argument(
                f"Dimension {d} must be >= 0. Received shape: {list(dims)}", op_name
            )
    return dims


@op("Reshape", inputs=("tensor",))
def reshape(tensor, shape, name=None):
    """Reshapes `tensor` to `shape` (one dimension may be -1).

    A shape that does not fit raises TF's `InvalidArgumentError`.
    """
    shape = _shape(shape, "Reshape")
    if -1 in shape and np.size(tensor) == 0:
        shape = _infer_empty(np.shape(tensor), shape)  # (jnp would divide by 0)
    try:
        return jnp.reshape(tensor, shape)
    except (TypeError, ValueError):
        raise _reshape_error(np.size(tensor), shape) from None


def _infer_empty(in_shape, shape):
    """TF's -1 for an empty tensor: where the requested shape has a 0, the
    zero sizes of both shapes are left out of the division (`zeros([2, 0])`
    to `[0, -1]` is (0, 2), `zeros([0])` to `[-1, 0]` is (1, 0)). Several
    -1s or negative sizes are left for the error."""
    if shape.count(-1) != 1 or any(d < -1 for d in shape):
        return shape
    if 0 in shape:
        n = math.prod(d for d in in_shape if d > 0)
        known = math.prod(d for d in shape if d > 0)
    else:
        n, known = 0, math.prod(d for d in shape if d != -1)
    return tuple(n // known if d == -1 else d for d in shape)


def _reshape_error(n, shape):
    unknown = [i for i, d in enumerate(shape) if d == -1]
    known = math.prod(d for d in shape if d != -1)
    bad = [(i, d) for i, d in enumerate(shape) if d < -1]
    if bad:
        text = f"Size {bad[0][0]} must be non-negative, not {bad[0][1]}"
    elif len(unknown) > 1:
        text = f"Only one input size may be -1, not both {unknown[0]} and {unknown[1]}"
    elif unknown:
        text = (
            f"Input to reshape is a tensor with {n} values, but the requested shape "
            f"requires a multiple of {known}"
        )
    else:
        text = (
            f"Input to reshape is a tensor with {n} values, but the requested shape "
            f"has {known}"
        )
    return _static_shape_error(
        f"{text}. Requested shape: {list(shape)}. The element counts must match; use "
        "-1 for one dimension to infer it.",
        "Reshape",
    )


def _static_shape_error(text: str, op_name: str) -> Exception:
    """A shape error found from static shapes: TF's `InvalidArgumentError`
    eagerly, its `ValueError` while a function traces (TF's shape inference
    raises it while building the graph)."""
    if context.state.function_depth:
        return ValueError(f"{text} [Op:{op_name}]")
    return errors.invalid_argument(text, op_name)


@op("Transpose")
def transpose(a, perm=None, conjugate=False, name=None):
    """Permutes the dimensions of `a` (reverses them by default)."""
    if perm is not None:
        if perm is not None and np.ndim(perm) == 0 and type(perm) is not tuple:
            raise errors.invalid_argument(
                f"perm must be rank 1, got shape []: perm={perm!r}. Pass a list.",
                "Transpose",
            )
        perm = _shape(perm, "Transpose")
        nd = np.ndim(a)
        perm = tuple(p + nd if -nd <= p < 0 else p for p in perm)  # as TF
        if sorted(perm) != list(range(nd)):
            raise errors.invalid_argument(
                f"perm {list(perm)} is not a permutation of the {np.ndim(a)} "
                f"dimensions of a tensor of shape {list(np.shape(a))}: it must list "
                f"each of 0..{np.ndim(a) - 1} once.",
                "Transpose",
            )
    out = jnp.transpose(a, perm)
    return jnp.conj(out) if conjugate else out


@op("Squeeze")
def squeeze(input, axis=None, name=None):  # noqa: A002
    """Removes dimensions of size 1 (only those in `axis`, when given)."""
    axis = _axis(axis)
    if axis is not None:
        shape, nd = np.shape(input), np.ndim(input)
        for a in (axis,) if isinstance(axis, int) else axis:
            if not -nd <= a < nd:
                raise errors.invalid_argument(
                    f"Tried to squeeze dim index {a} for tensor with {nd} dimensions.",
                    "Squeeze",
                )
            if shape[a] != 1:
                raise errors.invalid_argument(
                    f"Can not squeeze dim[{a}], expected a dimension of 1, got "
                    f"{shape[a]}. Only size-1 dimensions can be squeezed.",
                    "Squeeze",
                )
        axis = tuple(
            sorted({a % nd for a in ((axis,) if isinstance(axis, int) else axis)})
        )
    return jnp.squeeze(input, axis=axis)


@op("ExpandDims", inputs=("input",))
def expand_dims(input, axis, name=None):  # noqa: A002
    """Inserts a dimension of size 1 at `axis` (in [-rank-1, rank])."""
    axis = _axis(axis)
    if type(axis) is tuple and len(axis) == 1:  # TF takes a one-element list
        (axis,) = axis
    nd = np.ndim(input)
    if not isinstance(axis, int) or not -nd - 1 <= axis <= nd:
        raise errors.invalid_argument(
            f"Tried to expand dim index {axis} for tensor with {nd} dimensions. An "
            f"axis must be in [{-nd - 1}, {nd}].",
            "ExpandDims",
        )
    return jnp.expand_dims(input, axis)


@op("BroadcastTo", inputs=("input",))
def broadcast_to(input, shape, name=None):  # noqa: A002
    """Broadcasts `input` to `shape`."""
    if shape is not None and np.ndim(shape) == 0 and type(shape) is not tuple:
        raise errors.invalid_argument(
            f"shape must be a vector of {{int32,int64}}, got shape []: {shape!r}.",
            "BroadcastTo",
        )
    shape = _dims(shape, "BroadcastTo")
    try:
        return jnp.broadcast_to(input, shape)
    except (TypeError, ValueError):
        raise errors.invalid_argument(
            f"Incompatible shapes: {list(np.shape(input))} vs. {list(shape)}. Each "
            "input dimension must equal the target one or be 1.",
            "BroadcastTo",
        ) from None


@op("ConcatV2", inputs="values", same_dtype=True)
def _concat(values, axis: int):
    try:
        return jnp.concatenate(values, axis=axis)
    except (TypeError, ValueError):
        raise _concat_error(values, axis) from None


def concat(
    values: Sequence[TensorLike], axis: AxisLike, name: str | None = None
) -> Tensor:
    """Concatenates a list of tensors along `axis`."""
    values = list(values)
    if axis is None:
        raise ValueError(
            "Attempt to convert a value (None) with an unsupported type "
            "(<class 'NoneType'>) to a Tensor. `concat` needs an integer `axis`."
        )
    a = _axis(axis)
    if isinstance(a, tuple):  # TF takes a one-element list, as a scalar
        if len(a) != 1:
            raise errors.invalid_argument(
                "axis tensor should be a scalar integer, but got shape "
                f"[{len(a)}]: axis={axis!r}. Pass one axis.",
                "ConcatV2",
            )
        (a,) = a
    if not values:
        raise _concat_error(values, a)
    return _concat(values, a)


def _concat_error(values, axis):
    shapes = [list(np.shape(v)) for v in values]
    nd = len(shapes[0]) if shapes else 0
    if not shapes:
        text = "ConcatOp needs at least one input: got an empty list"
    elif not -nd <= axis < nd:
        text = (
            "ConcatOp : Expected concatenating dimensions in the range "
            f"[{-nd}, {nd}), but got {axis}"
        )
    else:
        i, other = next(
            ((i, s) for i, s in enumerate(shapes) if len(s) != nd), (None, None)
        )
        if i is not None:
            text = (
                "ConcatOp : Ranks of all input tensors should match: shape[0] = "
                f"{shapes[0]} vs. shape[{i}] = {other}"
            )
        else:
            a = axis % nd
            i, d = next(
                (i, d)
                for i, s in enumerate(shapes)
                for d in range(nd)
                if d != a and s[d] != shapes[0][d]
            )
            text = (
                f"ConcatOp : Dimension {d} in both shapes must be equal: shape[0] = "
                f"{shapes[0]} vs. shape[{i}] = {shapes[i]}"
            )
    return errors.invalid_argument(
        f"{text}. All inputs must have the same shape except along `axis`.",
        "ConcatV2",
    )


@op("Pack", inputs="values", same_dtype=True)
def _stack(values, axis=0):
    axis = _axis(axis)
    shapes = [np.shape(v) for v in values]
    for i, s in enumerate(shapes[1:], 1):
        if s != shapes[0]:
            raise errors.invalid_argument(
                f"Shapes of all inputs must match: values[0].shape = "
                f"{list(shapes[0])} != values[{i}].shape = {list(s)}",
                "Pack",
            )
    nd = len(shapes[0]) + 1 if shapes else 1
    if type(axis) is not int or not -nd <= axis < nd:
        raise ValueError(f"Argument `axis` = {axis} not in range [{-nd}, {nd})")
    return jnp.stack(values, axis=axis)


def stack(values, axis=0, name=None):
    """Stacks a list of rank-R tensors into one rank-(R+1) tensor.

    An empty list gives an empty float32 vector, as TF (where axis is 0).
    """
    values = list(values)
    if not values:
        axis = _axis(axis)
        if axis not in (0, -1):
            raise ValueError(f"Argument `axis` = {axis} not in range [-1, 1)")
        return Tensor(jnp.zeros((0,), np.float32))
    return _stack(values, axis)


@op("Unpack")
def unstack(value, num=None, axis=0, name=None):
    """Unpacks `value` along `axis` into a list of tensors."""
    axis = _axis(axis)
    nd = np.ndim(value)
    if type(axis) is not int or not -nd <= axis < nd:
        raise ValueError(
            f"Argument `axis` = {axis} not in range [{-nd}, {nd}). "
            f"The tensor has shape {list(np.shape(value))}."
        )
    n = value.shape[axis]
    if num is not None and num != n:
        raise errors.invalid_argument(
            f"Input shape axis {axis} must equal {num}, got shape {list(value.shape)}.",
            "Unpack",
        )
    return [lax.index_in_dim(value, i, axis, keepdims=False) for i in range(n)]


@op("Split", inputs=("value",))
def split(value, num_or_size_splits, axis=0, num=None, name=None):
    """Splits `value` into equal parts (an int) or parts of the given sizes (a list)."""
    axis = _axis(axis)
    nd = np.ndim(value)
    if type(axis) is not int or not -nd <= axis < nd:
        raise errors.invalid_argument(
            f"-input rank(-{nd}) <= split_dim < input rank ({nd}), but got {axis}",
            "Split",
        )
    size = value.shape[axis]
    if isinstance(num_or_size_splits, numbers.Integral):
        num_or_size_splits = int(num_or_size_splits)
    elif np.ndim(num_or_size_splits) == 0:
        raise ValueError(
            "Rank-0 tensors are not supported as the num_or_size_splits argument to "
            f"split. Argument provided: {num_or_size_splits!r}. Pass a Python int "
            "or a list of sizes."
        )
    if isinstance(num_or_size_splits, int):
        if num_or_size_splits < 1:
            raise errors.invalid_argument(
                f"Value for attr 'num_split' of {num_or_size_splits} must be at least "
                "minimum 1",
                "Split",
            )
        if size % num_or_size_splits:
            raise _static_shape_error(
                "Number of ways to split should evenly divide the split dimension, "
                f"but got split_dim {axis} (size = {size}) and num_split "
                f"{num_or_size_splits}. Pass a list of sizes instead.",
                "Split",
            )
        return jnp.split(value, num_or_size_splits, axis=axis)
    sizes = list(_shape(num_or_size_splits, "SplitV"))
    if sizes.count(-1) > 1:
        raise errors.invalid_argument(
            "There can only be one -1 in the input.", "SplitV"
        )
    known = sum(d for d in sizes if d != -1)
    if -1 in sizes and known <= size:
        sizes[sizes.index(-1)] = size - known
    if sum(sizes) != size or min(sizes, default=0) < 0:
        raise _static_shape_error(
            "Determined shape must either match input shape along split_dim exactly "
            "if fully specified, or be less than the size of the input along "
            f"split_dim if not fully specified.  Got: {known}. The sizes "
            f"{list(num_or_size_splits)} must add up to {size}.",
            "SplitV",
        )
    return jnp.split(value, np.cumsum(sizes)[:-1].tolist(), axis=axis)


@op("Tile", inputs=("input",))
def tile(input, multiples, name=None):  # noqa: A002
    """Repeats `input` `multiples[i]` times along dimension i."""
    if (
        multiples is not None
        and np.ndim(multiples) == 0
        and type(multiples) is not tuple
    ):
        raise errors.invalid_argument(
            f"Expected multiples to be 1-D, but got shape []: {multiples!r}.", "Tile"
        )
    multiples = _shape(multiples, "Tile")
    if len(multiples) != np.ndim(input):
        raise errors.invalid_argument(
            "Expected multiples argument to be a vector of length "
            f"{np.ndim(input)} but got length {len(multiples)}: one multiple per "
            "dimension of the input.",
            "Tile",
        )
    for i, k in enumerate(multiples):
        if k < 0:
            raise errors.invalid_argument(
                f"Expected multiples[{i}] >= 0, but got {k}", "Tile"
            )
    return jnp.tile(input, multiples)


@op("Repeat", inputs=("input",))
def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """Repeats elements of `input` (like `np.repeat`)."""
    counts = np.asarray(to_value(repeats) if type(repeats) is not Tensor else repeats)
    if counts.dtype.kind not in "iu":
        raise TypeError(
            "Argument `tensor` (name: repeats) must be of type integer. Received "
            f"`tensor` = {repeats!r}."
        )
    if counts.size and counts.min() < 0:
        raise errors.invalid_argument(
            f"Expected multiples[1] >= 0, but got {int(counts.min())}", "Tile"
        )
    given, axis = axis, _axis(axis)
    if not (axis is None or isinstance(axis, int)):
        raise TypeError(
            f"Argument `axis` must be an int. Received `axis` = {given!r} of type "
            f"{type(given).__name__}"
        )
    nd = max(np.ndim(input), 1) if axis is None else np.ndim(input)
    if axis is not None and not -nd <= axis < nd:
        raise ValueError(f"axis={axis} out of bounds: expected {-nd}<=axis<{nd}")
    size = np.size(input) if axis is None else np.shape(input)[axis]
    if counts.ndim and counts.size not in (1, size):
        raise ValueError(
            f"Dimensions {size} and {counts.size} are not compatible: give one "
            "repeat count, or one per element along `axis`."
        )
    return jnp.repeat(input, counts, axis=axis)


@op("PadV2", inputs=("tensor",))
def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Pads `tensor` by `paddings` ([[before, after], ...] per dimension)."""
    pads = _paddings(tensor, paddings)
    if not pads:
        return jnp.asarray(tensor)
    mode = mode.upper()
    if mode == "CONSTANT":
        return jnp.pad(tensor, pads, constant_values=constant_values)
    if mode in ("REFLECT", "SYMMETRIC"):
        reflect = mode == "REFLECT"
        for (before, after), size in zip(pads, np.shape(tensor)):
            if max(before, after) > size - reflect:
                raise errors.invalid_argument(
                    f"paddings must be {'less than' if reflect else 'no greater than'}"
                    f" the dimension size: {before}, {after} "
                    f"{'not less than' if reflect else 'greater than'} {size}",
                    "MirrorPad",
                )
        return jnp.pad(tensor, pads, mode=mode.lower())
    raise ValueError(
        'Value of argument `mode` expected to be one of "CONSTANT", "REFLECT", or '
        f'"SYMMETRIC". Received `mode` = {mode}'
    )


def _paddings(tensor, paddings):
    arr = np.asarray(to_value(paddings) if type(paddings) is not Tensor else paddings)
    if arr.dtype.kind not in "iu" and arr.size:
        raise errors.invalid_argument(
            f"Value for attr 'Tpaddings' of {_tf_name(arr.dtype)} is not in the list "
            f"of allowed values: int32, int64. Received paddings={paddings!r}.",
            "Pad",
        )
    nd = np.ndim(tensor)
    if arr.size == 0 and nd == 0:
        return ()  # a scalar takes no paddings
    if arr.shape != (nd, 2):
        raise errors.invalid_argument(
            f"The first dimension of paddings must be the rank of inputs"
            f"{list(arr.shape)} {list(np.shape(tensor))}: paddings needs one "
            "[before, after] pair per dimension.",
            "Pad",
        )
    if arr.size and arr.min() < 0:
        i, j = np.argwhere(arr < 0)[0]
        raise errors.invalid_argument(
            f"Paddings must be non-negative: {arr[i, 0]} {arr[i, 1]}", "Pad"
        )
    return tuple(tuple(int(v) for v in p) for p in arr)


@op("Reverse", inputs=("tensor",))
def reverse(tensor, axis, name=None):
    """Reverses the given dimensions (`axis`: a list of them, as TF's ReverseV2)."""
    axis = _axis(axis)
    if axis is None:
        raise ValueError(
            "Attempt to convert a value (None) with an unsupported type "
            "(<class 'NoneType'>) to a Tensor. Pass the axes to reverse as a list."
        )
    if isinstance(axis, int):
        raise errors.invalid_argument(
            f"'dims' must be 1-dimension, not 0: axis={axis}. Pass a list, e.g. "
            f"[{axis}].",
            "ReverseV2",
        )
    nd = np.ndim(tensor)
    for i, a in enumerate(axis):
        if not -nd <= a < nd:
            raise errors.invalid_argument(
                f"'axis'[{i}] = {a} is out of valid range [{-nd}, {nd}).", "ReverseV2"
            )
    seen = set()
    for a in axis:
        if a % nd in seen:
            raise errors.invalid_argument(
                f"axis {a % nd} specified more than once.", "ReverseV2"
            )
        seen.add(a % nd)
    return jnp.flip(tensor, axis)


_INDEX_DTYPES = frozenset(np.dtype(t) for t in ("int16", "int32", "int64"))


def _check_indices(op_name, indices, allowed=_INDEX_DTYPES):
    """TF's `Tindices` check: an index tensor is int16/int32/int64 (int32/int64
    for the `*_nd` ops); floats, bools and unsigned ints are refused."""
    dtype = np.dtype(indices.dtype)
    if dtype not in allowed:
        names = ", ".join(sorted(d.name for d in allowed))
        raise errors.invalid_argument(
            f"Value for attr 'Tindices' of {_tf_name(dtype)} is not in the list of "
            f"allowed values: {names}. Cast the indices first, e.g. "
            "`jaxtape.cast(indices, jaxtape.int32)`.",
            op_name,
        )


_ND_INDEX_DTYPES = frozenset(np.dtype(t) for t in ("int16", "int32", "int64"))


def _check_gather(xp, params, indices, axis, batch_dims):
    """TF's GatherV2 check: every index in [0, n) (negative ones too are errors)."""
    if np.dtype(indices.dtype).kind not in "iu":
        return  # the op refuses the dtype
    idx = checks.host(indices) if xp is np else indices
    n = params.shape[axis]
    checks.require(
        xp,
        (idx < 0) | (idx >= n),
        "GatherV2",
        f"indices{checks.index_text(idx.ndim) if idx.ndim else ''} = {{}} "
        f"is not in [0, {n})",
        *checks.position(idx.shape),
        lambda xp, p: xp.ravel(idx)[p],
    )


@op("GatherV2", inputs=("params", "indices"), check=_check_gather)
def _gather(params, indices, axis, batch_dims):
    _check_indices("GatherV2", indices)
    n = params.shape[axis]
    idx = jnp.asarray(indices)
    # In range after the check; with run-time checks off, an index out of range
    # (negative ones included) gives zeros, as TF's gather on GPU does.
    idx = jnp.where(idx < 0, n, idx)
    take = _take_batched if batch_dims else _take
    return take(params, idx, axis, batch_dims)


def _take(params, idx, axis, batch_dims):
    return jnp.take(params, idx, axis=axis, mode="fill", fill_value=0)


def _take_batched(params, idx, axis, batch_dims):
    """TF's `batch_dims`: the leading `batch_dims` dimensions of `params` and
    `indices` are paired, one gather per batch entry."""
    fn = _take
    for _ in range(batch_dims):
        fn = _vmapped(fn)
    return fn(params, idx, axis - batch_dims, 0)


def _vmapped(fn):
    import jax

    return jax.vmap(fn, in_axes=(0, 0, None, None))


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Gathers slices of `params` at `indices` along `axis`.

    With `batch_dims`, the leading `batch_dims` dimensions of `params` and
    `indices` are batch dimensions (one gather per batch entry), as in TF.
    Indices are int16, int32 or int64; an index outside `[0, n)` raises TF's
    `InvalidArgumentError`.

    As TF's, the gradient of `params` gathered along axis 0 (without
    `batch_dims`) is an `IndexedSlices` when `params` is used only that way.
    """
    nd = np.ndim(params)
    axis = batch_dims if axis is None else _axis(axis)
    ind = np.ndim(indices)
    batch_dims = int(batch_dims)
    if batch_dims < 0:
        batch_dims += ind
    if type(axis) is not int or not -nd <= axis < nd:
        raise errors.invalid_argument(
            f"Shape must be at least rank {axis + 1 if type(axis) is int else '?'} "
            f"but is rank {nd}: axis {axis} is out of range for params of shape "
            f"{list(np.shape(params))}.",
            "GatherV2",
        )
    axis %= nd
    if batch_dims and not (0 <= batch_dims <= min(ind, axis)):
        raise errors.invalid_argument(
            f"batch_dims ({batch_dims}) must be in [0, {min(ind, axis)}]: at most "
            "the rank of `indices` and at most `axis`.",
            "GatherV2",
        )
    if np.shape(params)[:batch_dims] != np.shape(indices)[:batch_dims]:
        raise errors.invalid_argument(
            f"params.shape[:{batch_dims}] = {list(np.shape(params)[:batch_dims])} "
            f"must equal indices.shape[:{batch_dims}] = "
            f"{list(np.shape(indices)[:batch_dims])} (the batch dimensions).",
            "GatherV2",
        )
    out = _gather(params, indices, axis, batch_dims)
    if axis == 0 and not batch_dims:
        for tape in context.state.tapes:  # (whole rows: IndexedSlices gradients)
            tape.note_row_gather(out)
    return out


def _check_nd(xp, indices, shape, op, what):
    """TF's check of `*_nd` index tuples: each one inside `shape`."""
    if np.dtype(indices.dtype).kind not in "iu" or (
        np.ndim(indices) and np.shape(indices)[-1] > len(shape)
    ):
        return  # the op refuses the dtype or the tuple length
    idx = checks.host(indices) if xp is np else indices
    k = idx.shape[-1] if idx.ndim else 0
    # In the indices' dtype (explicit: strict promotion); a dimension beyond
    # that dtype's range cannot be overrun by it.
    top = np.iinfo(idx.dtype).max
    limits = np.asarray([d if d <= top else top for d in shape[:k]], idx.dtype)
    within = np.asarray([d > top for d in shape[:k]])
    bad = xp.any((idx < 0) | ((idx >= limits) & ~within), axis=-1)
    dims = ",".join(str(d) for d in shape)
    checks.require(
        xp,
        bad,
        op,
        f"indices{checks.index_text(idx.ndim - 1)} = ["
        + ", ".join(["{}"] * k)
        + f"] does not index into {what} [{dims}]",
        *checks.position(idx.shape[:-1]),
        *[(lambda xp, p, j=j: xp.reshape(idx, (-1, k))[p, j]) for j in range(k)],
    )


def _nd_key(indices):
    """The index tuples in the last dim of `indices`, as a jnp indexing key."""
    return tuple(jnp.moveaxis(jnp.asarray(indices), -1, 0))


def _check_nd_args(op_name, indices, shape, updates=None, dtype=None):
    """TF's static checks of the `*_nd` ops: index dtype and tuple length, the
    updates' shape (`indices.shape[:-1] + shape[k:]`) and dtype."""
    _check_indices(op_name, indices, _ND_INDEX_DTYPES)
    ishape = tuple(np.shape(indices))
    k = ishape[-1] if ishape else 0
    if k > len(shape):
        raise errors.invalid_argument(
            f"index innermost dimension length must be <= params rank; saw: {k} vs. "
            f"{len(shape)}",
            op_name,
        )
    if updates is None:
        return
    want = ishape[:-1] + tuple(shape[k:])
    if tuple(np.shape(updates)) != want:
        raise errors.invalid_argument(
            f"Dimensions [0,{len(ishape) - 1}) of indices[shape={list(ishape)}] "
            f"must match dimensions of updates[shape={list(np.shape(updates))}]: "
            f"updates must have shape {list(want)} for a tensor of shape "
            f"{list(shape)}.",
            op_name,
        )
    if dtype is not None and np.dtype(updates.dtype) != np.dtype(dtype):
        raise errors.invalid_argument(
            f"cannot compute {op_name} as input #2(zero-based) was expected to be a "
            f"{_tf_name(dtype)} tensor but is a {_tf_name(updates.dtype)} tensor. "
            "Cast the updates to the tensor's dtype first.",
            op_name,
        )


@op(
    "GatherNd",
    check=lambda xp, params, indices, batch_dims: _check_nd(
        xp, indices, params.shape, "GatherNd", "param shape"
    ),
)
def gather_nd(params, indices, batch_dims=0, name=None):
    """Gathers slices of `params` with the index tuples in the last dim of `indices`.

    An index tuple outside `params` raises TF's `InvalidArgumentError`.
    """
    if batch_dims:
        raise NotImplementedError("gather_nd with batch_dims > 0 is not supported yet.")
    _check_nd_args("GatherNd", indices, np.shape(params))
    return params.at[_nd_key(indices)].get(mode="fill", fill_value=0)


@op(
    "ScatterNd",
    inputs=("indices", "updates"),
    check=lambda xp, indices, updates, shape: _check_nd(
        xp, indices, _shape(shape), "ScatterNd", "shape"
    ),
)
def scatter_nd(indices, updates, shape, name=None):
    """Scatters `updates` into zeros of `shape` at `indices` (adding duplicates;
    OR-ing them for bools)."""
    shape = _shape(shape)
    _check_nd_args("ScatterNd", indices, shape, updates)
    out = jnp.zeros(shape, updates.dtype)
    if updates.dtype == np.bool_:
        return out.at[_nd_key(indices)].max(updates, mode="drop")
    return out.at[_nd_key(indices)].add(updates, mode="drop")


def _check_tensor_scatter(op_name):
    return lambda xp, tensor, indices, updates: _check_nd(
        xp, indices, tensor.shape, op_name, "shape"
    )


@op(
    "TensorScatterUpdate",
    same_dtype=(0, 2),
    check=_check_tensor_scatter("TensorScatterUpdate"),
)
def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """Copies `tensor` with the slices at `indices` replaced by `updates`."""
    _check_nd_args("TensorScatterUpdate", indices, tensor.shape, updates, tensor.dtype)
    return tensor.at[_nd_key(indices)].set(updates, mode="drop")


@op(
    "TensorScatterAdd",
    same_dtype=(0, 2),
    check=_check_tensor_scatter("TensorScatterAdd"),
)
def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """Copies `tensor` with `updates` added at `indices`."""
    _check_nd_args("TensorScatterAdd", indices, tensor.shape, updates, tensor.dtype)
    if tensor.dtype == np.bool_:
        raise errors.NotFoundError(
            None,
            "TensorScatterAdd",
            "Could not find device for node: TensorScatterAdd[T=bool]: TensorFlow "
            "has no bool kernel. Use `tensor_scatter_nd_update`, or cast to int32.",
        )
    return tensor.at[_nd_key(indices)].add(updates, mode="drop")


def where(condition, x=None, y=None, name=None):
    """Selects from `x` where `condition` is true, else `y`; with only `condition`,
    the coordinates of true elements (as an int64 [n, rank] tensor), as in TF."""
    if x is None and y is None:
        cond = _host_mask(
            condition,
            "where",
            "the condition",
            "Use the three-argument `jaxtape.where(condition, x, y)` (same shape), "
            "or call it outside the function.",
        )
        if cond.ndim == 0:
            raise errors.invalid_argument(
                "WhereOp : Unhandled input dimensions: 0. The condition of a "
                "one-argument `where` needs rank >= 1; wrap a scalar in a list.",
                "Where",
            )
        return Tensor(jnp.asarray(np.argwhere(cond), np.int64))
    if x is None or y is None:
        raise ValueError("where: give both `x` and `y`, or neither.")
    return _where_xy(condition, x, y)


@op("SelectV2", same_dtype=(1, 2))
def _select(condition, x, y):
    if np.dtype(jnp.result_type(condition)).kind != "b":
        raise errors.invalid_argument(
            "cannot compute SelectV2 as input #0(zero-based) was expected to be a "
            f"bool tensor but is a {_tf_name(jnp.result_type(condition))} tensor. "
            "Compare first, e.g. `jaxtape.where(mask > 0, x, y)`.",
            "SelectV2",
        )
    try:
        return jnp.where(condition, x, y)
    except (TypeError, ValueError):
        raise errors.invalid_argument(
            f"condition {list(np.shape(condition))}, then {list(np.shape(x))}, and "
            f"else {list(np.shape(y))} must be broadcastable.",
            "SelectV2",
        ) from None


def _where_xy(condition, x, y):
    from jaxtape._src.core.dispatch import CompositeInput, to_value
    from jaxtape._src.core.tensor import Tensor

    try:
        cond = condition if type(condition) is Tensor else to_value(condition)
    except CompositeInput:  # a RaggedTensor: `_select` hands it to its handler
        cond = condition
    return _select(cond, x, y)


@op("OneHot", inputs=("indices",), differentiable=False)
def one_hot(
    indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None
):
    """A one-hot tensor: `on_value` at `indices`, `off_value` elsewhere.

    The dtype is `dtype`, else that of `on_value` or `off_value`, else float32
    (TF's rule); `indices` must be uint8, int8, int32 or int64.
    """
    kind = np.dtype(jnp.result_type(indices))
    if kind.name not in ("uint8", "int8", "int32", "int64"):
        raise errors.invalid_argument(
            f"Value for attr 'TI' of {_tf_name(kind)} is not in the list of allowed "
            "values: uint8, int8, int32, int64. Indices are integers; cast them "
            "with `jaxtape.cast(indices, jaxtape.int32)`.",
            "OneHot",
        )
    if type(depth) is float:
        to_value(depth, np.int32)  # TF's "Cannot convert 3.5 ..." TypeError
    depth = int(depth)
    if depth < 0:
        raise errors.invalid_argument(
            f"depth must be non-negative, got: {depth}", "OneHot"
        )
    rank = np.ndim(indices) + 1
    if axis is not None and axis != -1 and not 0 <= axis < rank:
        raise errors.invalid_argument(
            f"Expected axis to be -1 or between [0, {rank}).  But received: {axis}",
            "OneHot",
        )
    dt = dtypes.np_dtype(dtype)
    if dt == np.bool_ and on_value is None and off_value is None:
        to_value(1, dt)  # TF's "Cannot convert 1 to EagerTensor of dtype bool"
    on, off = (_one_hot_value(v, dt) for v in (on_value, off_value))
    for what, v in (("on_value", on), ("off_value", off)):
        if v is not None and dt is not None and v.dtype != dt:
            raise TypeError(
                f"dtype {_tf_name(v.dtype)} of {what} does not match dtype "
                f"parameter {_tf_name(dt)}. Pass {what} of that dtype."
            )
    if on is not None and off is not None and on.dtype != off.dtype:
        raise TypeError(
            f"dtype {_tf_name(on.dtype)} of on_value does not match dtype "
            f"{_tf_name(off.dtype)} of off_value. Give both the same dtype."
        )
    if dt is None:
        given = on if on is not None else off
        dt = np.dtype(np.float32) if given is None else given.dtype
    on = jnp.asarray(1 if on is None else on, dt)
    off = jnp.asarray(0 if off is None else off, dt)
    idx = jnp.asarray(indices)
    wide = np.promote_types(idx.dtype, np.int32)  # explicit (strict promotion)
    hot = idx.astype(wide)[..., None] == jnp.arange(depth, dtype=wide)
    out = jnp.where(hot, on, off)
    if axis is not None and axis != -1:
        out = jnp.moveaxis(out, -1, axis)
    return out


def _one_hot_value(value, dtype):
    """`on_value`/`off_value` as an array (TF's conversion; None stays None)."""
    if value is None:
        return None
    if dtype is not None and type(value) in (int, float, bool, complex):
        return to_value(value, dtype)  # a Python number takes `dtype`, as in TF
    return to_value(value)


TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


@op("TopKV2")
def top_k(input, k=1, sorted=True, name=None):  # noqa: A002
    """The `k` largest entries of the last dimension and their indices.

    Ties give the lower index first, as TF.

    Differences from TensorFlow:
      A NaN counts as larger than +inf, as in `lax.top_k`; TF's kernel places
      NaNs by comparisons that are all false, which is no order.
    """
    if type(k) is float:
        to_value(k, np.int32)  # TF's "Cannot convert 2.5 ..." TypeError
    k = int(k)
    if input.dtype == np.bool_:
        raise errors.invalid_argument(
            "Value for attr 'T' of bool is not in the list of allowed values: real "
            "numbers. Cast first, e.g. `jaxtape.cast(input, jaxtape.int32)`.",
            "TopKV2",
        )
    shape = np.shape(input)
    if not shape:
        raise errors.invalid_argument("input must be >= 1-D, got shape []", "TopKV2")
    if k < 0:
        raise errors.invalid_argument(f"Need k >= 0, got {k}", "TopKV2")
    if shape[-1] < k:
        raise errors.invalid_argument(
            f"input must have at least k columns. Had {shape[-1]}, needed {k}",
            "TopKV2",
        )
    values, indices = lax.top_k(input, k)
    return TopKV2(values, indices.astype(np.int32))


@op("Sort")
def sort(values, axis=-1, direction="ASCENDING", name=None):
    """Sorts `values` along `axis`.

    Differences from TensorFlow:
      NaNs sort last (after +inf), as in NumPy; TF's order of NaNs depends
      on its top-k kernel's comparisons and is not a sort order.
    """
    if values.dtype == np.bool_ or np.dtype(values.dtype).kind == "c":
        raise errors.invalid_argument(
            f"Value for attr 'T' of {_tf_name(values.dtype)} is not in the list of "
            "allowed values: real numbers. Cast first, e.g. `jaxtape.cast(values, "
            "jaxtape.int32)`.",
            "TopKV2",
        )
    axis = _axis(axis)
    nd = np.ndim(values)
    if type(axis) is not int or not -nd <= axis < nd:
        raise errors.invalid_argument(
            f"axis {axis} is out of range for a tensor of rank {nd}: it must be in "
            f"[{-nd}, {nd}).",
            "Sort",
        )
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


def _host_mask(mask, op_name: str, what: str, advice: str) -> np.ndarray:
    """A mask's values on the host: they decide an output's shape, which a
    compiled program cannot leave open (TF's graphs can)."""
    try:
        return checks.host(to_value(mask))
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError):
        raise NotImplementedError(
            f"{op_name}: {what}'s values decide the output's shape, and inside "
            "jaxtape.function they are not known until the compiled program runs "
            f"(XLA needs static shapes). {advice}"
        ) from None


def boolean_mask(tensor, mask, axis=None, name=None):
    """Keeps the entries of `tensor` where `mask` is true (a data-dependent shape)."""
    m = _host_mask(
        mask,
        "boolean_mask",
        "the mask",
        "Inside the function keep the shape with `jaxtape.where(mask, tensor, 0)` "
        "(and a masked reduction), or apply boolean_mask outside the function.",
    )
    axis = 0 if axis is None else _axis(axis)
    if not isinstance(axis, int):
        raise TypeError(
            f"boolean_mask's `axis` must be an int (or None for 0). Received: "
            f"axis={axis!r}"
        )
    if m.ndim == 0:
        raise ValueError("mask cannot be scalar. Pass a mask with one entry per row.")
    shape = tuple(np.shape(tensor))
    part = shape[axis : axis + m.ndim]
    if part != m.shape:
        raise ValueError(
            f"Shapes {part} and {m.shape} are incompatible: the mask's shape must "
            f"match dimensions {axis}..{axis + m.ndim - 1} of the tensor {shape}."
        )
    return _boolean_mask(tensor, _Hashable(m), axis)


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
    return tensor[_thaw_key(key, ())]


def _check_dynamic_index(xp, tensor, *rest):
    """TF's StridedSlice check for scalar-Tensor indices: `-n <= i < n`."""
    *indices, key = rest
    for k in key:
        if type(k) is _Dynamic:
            i = checks.host(indices[k.position]) if xp is np else indices[k.position]
            n = tensor.shape[k.dim]
            checks.require(
                xp,
                (i < -n) | (i >= n),
                "StridedSlice",
                "slice index {} of dimension " + f"{k.dim} out of bounds.",
                lambda xp, p, i=i, n=n: xp.where(i < 0, i + n, i),
            )


@op("StridedSlice", inputs="values", check=_check_dynamic_index)
def _getitem_dynamic(values, key):
    tensor, *indices = values
    return tensor[_thaw_key(key, indices)]


class _Dynamic(NamedTuple):
    """A scalar-Tensor index in a frozen key: input `position`, indexing `dim`."""

    position: int
    dim: int


def _freeze_key(key, shape):
    """Turns an indexing key into a hashable static parameter and the scalar
    Tensors that index dynamically (their places marked by `_Dynamic`)."""
    from jaxtape._src.core.tensor import Tensor

    if not isinstance(key, tuple):
        key = (key,)
    out, dynamic = [], []
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
        elif isinstance(k, (bool, np.bool_)):
            out.append(_Hashable(np.asarray(k)))
        elif isinstance(k, (int, np.integer)):
            out.append(int(k))
        elif type(k) is Tensor or isinstance(k, (np.ndarray, list, _variable_type())):
            dtype = np.dtype(k.dtype.as_numpy_dtype) if _is_tensor(k) else None
            if dtype is not None and dtype.kind not in "iub":
                raise _bad_index(k)
            if dtype is not None and not k.shape and dtype.kind in "iu":
                out.append(_Dynamic(len(dynamic), -1))  # its dim is set below
                dynamic.append(k)
                continue
            arr = np.asarray(k._value if type(k) is Tensor else k)
            if arr.dtype.kind not in "iub" and arr.size:
                raise _bad_index(k)
            out.append(_Hashable(arr))
        else:
            raise _bad_index(k)
    return _with_dims(out, shape), dynamic


def _is_tensor(k) -> bool:
    from jaxtape._src.core.tensor import Tensor

    return type(k) is Tensor or isinstance(k, _variable_type())


def _variable_type():
    return context.hooks.variable_type or ()


def _bad_index(k):
    return TypeError(
        "Only integers, slices (`:`), ellipsis (`...`), jaxtape.newaxis (`None`) "
        f"and scalar jaxtape.int32/jaxtape.int64 tensors are valid indices, got {k!r}."
        " Cast a float index with `jaxtape.cast(i, jaxtape.int32)`; select with a "
        "boolean tensor or gather with an index tensor."
    )


def _with_dims(key, shape):
    """The frozen key with each `_Dynamic`'s dim filled in; checks static indices."""
    ndim, consumed = len(shape), 0
    for k in key:
        if isinstance(k, _Hashable) and k.array.dtype.kind == "b":
            consumed += max(k.array.ndim, 1)
        elif k is not None and k is not Ellipsis:
            consumed += 1
    out, dim = [], 0
    for k in key:
        if k is Ellipsis:
            dim += max(ndim - consumed, 0)
        elif type(k) is _Dynamic:
            k = _Dynamic(k.position, dim)
            dim += 1
        elif k is not None:
            if isinstance(k, _Hashable) and k.array.dtype.kind == "b":
                dim += max(k.array.ndim, 1)
                out.append(k)
                continue
            if dim >= ndim:
                raise errors.invalid_argument(
                    f"Index out of range using input dim {dim}; input has only "
                    f"{ndim} dims",
                    "StridedSlice",
                )
            _check_static_index(k, shape[dim], dim)
            dim += 1
        out.append(k)
    return tuple(out)


def _check_static_index(k, n, dim):
    """TF's StridedSlice check for Python integers (and NumPy's for index arrays),
    at the call: an InvalidArgumentError eagerly, a ValueError while
    `jaxtape.function` traces, as TF's shape inference raises."""
    if isinstance(k, int):
        bad = k if not -n <= k < n else None
        if bad is None:
            return
        text = f"slice index {k + n if k < 0 else k} of dimension {dim} out of bounds."
    elif isinstance(k, _Hashable) and k.array.dtype.kind in "iu" and k.array.size:
        arr = k.array
        wrong = (arr < -n) | (arr >= n)
        if not wrong.any():
            return
        text = f"index {int(arr[wrong].reshape(-1)[0])} is out of bounds for "
        text += f"dimension {dim} with size {n}."
    else:
        return
    if context.state.function_depth:
        raise ValueError(text)
    raise errors.invalid_argument(text, "StridedSlice")


def _int_or_none(v):
    return None if v is None else int(v)


def _thaw_key(key, indices):
    out = []
    for k in key:
        if type(k) is _Dynamic:
            out.append(indices[k.position])
        elif isinstance(k, tuple):
            out.append(slice(k[1], k[2], k[3]))
        elif isinstance(k, _Hashable):
            out.append(k.array)
        else:
            out.append(k)
    return tuple(out)


def getitem(tensor, key):
    """`tensor[key]` with TF's slicing semantics (recorded on tapes).

    An integer index out of range raises TF's `InvalidArgumentError` (XLA
    would clamp it). A scalar integer Tensor indexes dynamically, also a
    traced one inside `jaxtape.function`, checked at run time. Integer index
    arrays index as in NumPy (TF accepts only scalars; an extension).
    """
    shape = tuple(tensor.shape) if _is_tensor(tensor) else np.shape(tensor)
    frozen, dynamic = _freeze_key(key, shape)
    if dynamic:
        return _getitem_dynamic([tensor, *dynamic], frozen)
    return _getitem(tensor, frozen)


@op("Fill", inputs=("value",))
def _fill(value, dims):
    return jnp.full(dims, value, dtype=jnp.result_type(value))


def fill(dims, value, name=None):
    """A tensor of shape `dims` filled with the scalar `value`."""
    if type(value) is not Tensor and not isinstance(value, (np.ndarray, np.generic)):
        if value is None or isinstance(value, (list, tuple, dict)):
            value = to_value(value)  # TF's conversion errors (None, ...)
    if np.ndim(value):
        raise errors.invalid_argument(
            f"value must represent a scalar, got shape {list(np.shape(value))}",
            "Fill",
        )
    return _fill(value, _dims(dims, "Fill"))


@op("MatrixDiag")
def _diag(diagonal):
    return jnp.vectorize(jnp.diag, signature="(n)->(n,n)")(diagonal)


def diag(diagonal, name=None):
    """A (batched) diagonal matrix with the given diagonal (rank >= 1, as TF)."""
    if np.ndim(diagonal) < 1:
        raise errors.invalid_argument(
            "diagonal must be at least 1-dim, received shape: []. Pass a vector.",
            "MatrixDiagV3",
        )
    return _diag(diagonal)
