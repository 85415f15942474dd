"""The rest of `tf.nn` on dense tensors: max pooling with argmax, morphological
dilation and erosion, fractional pooling, isotonic regression, the depthwise
convolution's gradients, `with_space_to_batch`, and the sampled losses
(`nce_loss`, `sampled_softmax_loss`, `compute_accidental_hits`). Pure jnp
bodies behind `dispatch.op`, or compositions of public ops. Layer L1; the
random draws come from the state layer through `context.hooks`.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.core import context, errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import array_extra_ops, array_ops, math_ops, nn_ops, nondiff
from jaxtape._src.ops.array_ops import _shape
from jaxtape._src.ops.nn_extra_ops import _depthwise, embedding_lookup
from jaxtape._src.ops.nn_ops import _conv_padding, _is_channels_first, _tuple


# -- windows ------------------------------------------------------------------------
def _windows(x, window, strides, rates, pads, fill):
    """`[kh * kw, n, out_h, out_w, c]`: each window offset's strided view of
    the padded NHWC `x` (offsets in row-major order, TF's scan order)."""
    (kh, kw), (sh, sw), (rh, rw) = window, strides, rates
    xp = jnp.pad(x, ((0, 0), pads[0], pads[1], (0, 0)), constant_values=fill)
    oh = (xp.shape[1] - (kh - 1) * rh - 1) // sh + 1
    ow = (xp.shape[2] - (kw - 1) * rw - 1) // sw + 1
    views = [
        xp[
            :,
            dy * rh : dy * rh + (oh - 1) * sh + 1 : sh,
            dx * rw : dx * rw + (ow - 1) * sw + 1 : sw,
        ]
        for dy in range(kh)
        for dx in range(kw)
    ]
    return jnp.stack(views, 0)


def _pick_first_max(stack):
    """The maximum over axis 0 and its (first) position: the gradient goes to
    that one entry, as TF's argmax-based gradients."""
    arg = jnp.argmax(stack, axis=0)
    return jnp.take_along_axis(stack, arg[None], axis=0)[0], arg


def _pads(size, window, strides, rates, padding, op_name):
    span = [(k - 1) * r + 1 for k, r in zip(window, rates)]
    pads = nn_ops._window_pads(size, span, strides, padding)
    for s, w, (lo, hi) in zip(size, span, pads):
        if s + lo + hi < w:
            raise errors.invalid_argument(
                f"Negative dimension size caused by subtracting {w} from {s}", op_name
            )
    return pads


def _lowest(dtype):
    dtype = np.dtype(dtype)
    return (
        -np.inf if dtype.kind == "f" or dtype == jnp.bfloat16 else np.iinfo(dtype).min
    )


# -- max_pool_with_argmax -----------------------------------------------------------
@op("MaxPoolWithArgmax", inputs=("input",), jit=True)
@functools.partial(jax.jit, static_argnums=(1, 2, 3, 4, 5))  # one compiled backward
def _max_pool_argmax(input, window, strides, pads, out_dtype, with_batch):  # noqa: A002
    n, h, w, c = input.shape
    flat = jnp.arange(h * w * c, dtype=jnp.int64).reshape(1, h, w, c)
    if with_batch:
        flat = (
            flat + (jnp.arange(n, dtype=jnp.int64) * (h * w * c))[:, None, None, None]
        )
    flat = jnp.broadcast_to(flat, input.shape)
    values = _windows(input, window, strides, (1, 1), pads, _lowest(input.dtype))
    where = _windows(flat, window, strides, (1, 1), pads, -1)
    # Padding never wins: mask it below every real value.
    valid = where >= 0
    best, arg = _pick_first_max(jnp.where(valid, values, _lowest(input.dtype)))
    index = jnp.take_along_axis(where, arg[None], axis=0)[0]
    return [best, lax.stop_gradient(index).astype(out_dtype)]


def max_pool_with_argmax(
    input,  # noqa: A002
    ksize,
    strides,
    padding,
    data_format="NHWC",
    output_dtype=np.int64,
    include_batch_in_index=False,
    name=None,
):
    """2-D max pooling that also returns each maximum's flattened position
    (TF's `tf.nn.max_pool_with_argmax`): `(y * width + x) * channels + c`,
    plus `b * height * width * channels` when `include_batch_in_index`. The
    gradient goes to the (first) maximum of each window, as TF's."""
    del name  # accepted for TF compatibility
    if data_format != "NHWC":
        raise ValueError(
            f"Data formats other than 'NHWC' are not yet supported. Received: "
            f"data_format={data_format!r}"
        )
    x = to_value(input)
    if np.ndim(x) != 4:
        raise errors.invalid_argument(
            f"input must be 4-dimensional; got shape {list(np.shape(x))}",
            "MaxPoolWithArgmax",
        )
    out_dtype = np.dtype(getattr(output_dtype, "as_numpy_dtype", output_dtype))
    if out_dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise TypeError(f"output_dtype must be int32 or int64; got {output_dtype}.")
    window, stride = _tuple(ksize, 2), _tuple(strides, 2)
    pad = _conv_padding(padding, 2)
    if not isinstance(pad, str):
        raise ValueError("max_pool_with_argmax: padding must be 'SAME' or 'VALID'.")
    pads = _pads(np.shape(x)[1:3], window, stride, (1, 1), pad, "MaxPoolWithArgmax")
    return tuple(
        _max_pool_argmax(
            input, window, stride, pads, out_dtype, bool(include_batch_in_index)
        )
    )


# -- morphology ---------------------------------------------------------------------
@op("Dilation2D", inputs=("input", "filters"), same_dtype=True, jit=True)
@functools.partial(jax.jit, static_argnums=(2, 3, 4))  # one compiled backward
def _dilation(input, filters, strides, rates, pads):  # noqa: A002
    kh, kw, c = filters.shape
    values = _windows(input, (kh, kw), strides, rates, pads, _lowest(input.dtype))
    shifted = values + filters.reshape(kh * kw, 1, 1, 1, c)
    return _pick_first_max(shifted)[0]


def _morph_args(input, filters, strides, padding, data_format, dilations, op_name):  # noqa: A002
    if data_format != "NHWC":
        raise ValueError(
            f"`data_format` must be 'NHWC'. Received: data_format={data_format}"
        )
    x, f = to_value(input), to_value(filters)
    if np.ndim(x) != 4 or np.ndim(f) != 3:
        raise errors.invalid_argument(
            f"input must be 4-dimensional and filter 3-dimensional; got shapes "
            f"{list(np.shape(x))} and {list(np.shape(f))}",
            op_name,
        )
    if np.shape(x)[3] != np.shape(f)[2]:
        raise errors.invalid_argument(
            f"input and filter must have the same depth: {np.shape(x)[3]} vs "
            f"{np.shape(f)[2]}",
            op_name,
        )
    stride = _tuple(strides, 2)
    rate = _tuple(dilations, 2)
    pad = padding.upper() if isinstance(padding, str) else padding
    if pad not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'SAME' or 'VALID'; got {padding!r}.")
    pads = _pads(np.shape(x)[1:3], np.shape(f)[:2], stride, rate, pad, op_name)
    return stride, rate, pads


def dilation2d(
    input,  # noqa: A002
    filters,
    strides,
    padding,
    data_format,
    dilations,
    name=None,
):
    """Grayscale morphological dilation (TF 2's `tf.nn.dilation2d`):
    `out[b, y, x, c] = max over (dy, dx) of input[b, y * stride + dy * rate,
    x * stride + dx * rate, c] + filters[dy, dx, c]`, padding never chosen.
    The gradient goes to the (first) maximum, as TF's."""
    del name  # accepted for TF compatibility
    stride, rate, pads = _morph_args(
        input, filters, strides, padding, data_format, dilations, "Dilation2D"
    )
    return _dilation(input, filters, stride, rate, pads)


def erosion2d(value, filters, strides, padding, data_format, dilations, name=None):
    """Grayscale morphological erosion (TF 2's `tf.nn.erosion2d`): TF's
    `-dilation2d(-value, reverse(filters, [0, 1]))`."""
    del name  # accepted for TF compatibility
    flipped = array_ops.reverse(filters, [0, 1])
    return math_ops.negative(
        dilation2d(
            math_ops.negative(value), flipped, strides, padding, data_format, dilations
        )
    )


# -- fractional pooling -------------------------------------------------------------
@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def _pooling_sequence(key, size, out, pseudo_random):
    """TF's `GeneratePoolingSequence`: `out + 1` cumulative cell boundaries
    from 0 to `size` (random cell sizes `size // out` or one more, or the
    pseudo-random `ceil(alpha * (i + u)) - ceil(alpha * u)` sequence)."""
    if pseudo_random:
        alpha = size / out
        u_max1 = (size + 1) / alpha - out
        u_max2 = (size + 1 + 1) / alpha - (out - 1)
        u = jax.random.uniform(key, (), jnp.float64) * min(u_max1, u_max2)
        i = jnp.arange(out + 1, dtype=jnp.float64)
        seq = jnp.ceil(alpha * (i + u)) - jnp.ceil(alpha * u)
        return seq.astype(jnp.int64).at[out].set(size)
    k = size // out
    extra = size - out * k
    bump = jnp.zeros((out,), jnp.int64).at[:extra].set(1)
    diff = k + jax.random.permutation(key, bump)
    return jnp.concatenate([jnp.zeros((1,), jnp.int64), jnp.cumsum(diff)])


def _cells(seq, size, overlapping):
    """`[out, size]` membership of each input position in each output cell."""
    pos = jnp.arange(size)[None, :]
    hi = seq[1:, None]
    upper = pos <= jnp.minimum(hi, size - 1) if overlapping else pos < hi
    return (pos >= seq[:-1, None]) & upper


@op("FractionalMaxPool", inputs=("value", "rows", "cols"), jit=True)
@functools.partial(jax.jit, static_argnums=(3,))  # one compiled backward
def _fractional_max(value, rows, cols, overlapping):
    low = _lowest(value.dtype)
    r = _cells(rows, value.shape[1], overlapping)  # [oh, h]
    c = _cells(cols, value.shape[2], overlapping)  # [ow, w]
    # Rows first, then columns (a rectangle's maximum is separable).
    by_row = jnp.where(r[None, :, :, None, None], value[:, None], low)
    m1 = _pick_first_max(jnp.moveaxis(by_row, 2, 0))[0]  # [n, oh, w, ch]
    by_col = jnp.where(c[None, None, :, :, None], m1[:, :, None], low)
    return _pick_first_max(jnp.moveaxis(by_col, 3, 0))[0]


@op("FractionalAvgPool", inputs=("value", "rows", "cols"), jit=True)
@functools.partial(jax.jit, static_argnums=(3,))  # one compiled backward
def _fractional_avg(value, rows, cols, overlapping):
    r = _cells(rows, value.shape[1], overlapping).astype(value.dtype)
    c = _cells(cols, value.shape[2], overlapping).astype(value.dtype)
    total = jnp.einsum("ih,nhwc,jw->nijc", r, value, c)
    count = jnp.sum(r, 1)[:, None] * jnp.sum(c, 1)[None, :]
    return total / count[None, :, :, None]


def _fractional(value, pooling_ratio, pseudo_random, overlapping, seed, op_name):
    x = to_value(value)
    if np.ndim(x) != 4:
        raise errors.invalid_argument(
            f"input must be 4-dimensional; got shape {list(np.shape(x))}", op_name
        )
    if np.ndim(pooling_ratio) == 0:  # TF's: a number pools height and width
        pooling_ratio = [1.0, float(pooling_ratio), float(pooling_ratio), 1.0]
    ratio = [float(r) for r in np.ravel(pooling_ratio)]
    if ratio[0] != 1.0 or ratio[-1] != 1.0:
        raise ValueError(
            "`pooling_ratio` should have first and last elements with value 1.0. "
            f"Received: pooling_ratio={pooling_ratio}"
        )
    if len(ratio) != 4:
        raise ValueError(
            f"`pooling_ratio` should have 4 elements. Received: "
            f"pooling_ratio={pooling_ratio}"
        )
    if min(ratio) < 1.0:
        raise errors.invalid_argument(
            f"pooling_ratio cannot be smaller than 1, got: {min(ratio)}", op_name
        )
    _, h, w, _ = np.shape(x)
    oh, ow = int(h / ratio[1]), int(w / ratio[2])
    if oh <= 0 or ow <= 0:
        raise errors.invalid_argument(
            f"The pooling_ratio {ratio} is too large for the input {list(np.shape(x))}",
            op_name,
        )
    if context.hooks.random_key is None:
        raise RuntimeError(f"{op_name} needs jaxtape's random state (import jaxtape).")
    key = context.hooks.random_key(None if not seed else int(seed))
    k_rows, k_cols = jax.random.split(key)
    rows = _pooling_sequence(k_rows, h, oh, bool(pseudo_random))
    cols = _pooling_sequence(k_cols, w, ow, bool(pseudo_random))
    return rows, cols


def fractional_max_pool(
    value, pooling_ratio, pseudo_random=False, overlapping=False, seed=0, name=None
):
    """Fractional max pooling (TF 2's `tf.nn.fractional_max_pool`):
    `(output, row_pooling_sequence, col_pooling_sequence)`. Each output cell
    pools the rows `[row_seq[i], row_seq[i + 1])` (`]` when `overlapping`)
    and likewise the columns; the sequences are drawn at random (TF's
    generator; `seed=0` draws from the global seed stream).

    Differences from TensorFlow: the random sequences differ from TF's
    stream (they agree whenever the sizes divide evenly); the gradient of a
    cell with tied maxima goes to the first maximum of the first column that
    has one, where TF's goes to the first in row-major order.
    """
    del name  # accepted for TF compatibility
    rows, cols = _fractional(
        value, pooling_ratio, pseudo_random, overlapping, seed, "FractionalMaxPool"
    )
    out = _fractional_max(value, rows, cols, bool(overlapping))
    return out, Tensor(rows), Tensor(cols)


def fractional_avg_pool(
    value, pooling_ratio, pseudo_random=False, overlapping=False, seed=0, name=None
):
    """Fractional average pooling (TF 2's `tf.nn.fractional_avg_pool`);
    returns and samples as `fractional_max_pool`."""
    del name  # accepted for TF compatibility
    rows, cols = _fractional(
        value, pooling_ratio, pseudo_random, overlapping, seed, "FractionalAvgPool"
    )
    out = _fractional_avg(value, rows, cols, bool(overlapping))
    return out, Tensor(rows), Tensor(cols)


# -- isotonic regression ------------------------------------------------------------
def _pava_segments(x):
    """TF's pool-adjacent-violators for a non-increasing fit of each row of
    `x`: blocks merge while the previous block's mean is strictly below the
    new one's. Returns each entry's block id (int32). Rows run side by side
    (one loop with per-row masks, not a vmap of loops)."""
    b, n = x.shape
    rows = jnp.arange(b)

    def push(i, state):
        sums, counts, top = state
        sums = sums.at[rows, top].set(x[:, i])
        counts = counts.at[rows, top].set(1)
        top = top + 1

        def violating(s):
            sums, counts, top = s
            prev, cur = jnp.maximum(top - 2, 0), jnp.maximum(top - 1, 0)
            mean_prev = sums[rows, prev] / jnp.maximum(counts[rows, prev], 1).astype(
                x.dtype
            )
            mean_cur = sums[rows, cur] / jnp.maximum(counts[rows, cur], 1).astype(
                x.dtype
            )
            return (top >= 2) & (mean_prev < mean_cur)

        def merge(s):
            sums, counts, top = s
            v = violating(s)
            prev, cur = jnp.maximum(top - 2, 0), jnp.maximum(top - 1, 0)
            add_s = jnp.where(v, sums[rows, cur], jnp.zeros_like(sums[:, 0]))
            add_c = jnp.where(v, counts[rows, cur], 0)
            sums = sums.at[rows, prev].add(add_s).at[rows, cur].add(-add_s)
            counts = counts.at[rows, prev].add(add_c).at[rows, cur].add(-add_c)
            return sums, counts, top - v.astype(top.dtype)

        return lax.while_loop(
            lambda s: jnp.any(violating(s)), merge, (sums, counts, top)
        )

    init = (
        jnp.zeros((b, n), x.dtype),
        jnp.zeros((b, n), jnp.int32),
        jnp.zeros((b,), jnp.int32),
    )
    _, counts, _ = lax.fori_loop(0, n, push, init)
    ends = jnp.cumsum(counts, axis=1, dtype=jnp.int32)
    pos = jnp.arange(n, dtype=jnp.int32)
    return jnp.sum(ends[:, None, :] <= pos[None, :, None], axis=2, dtype=jnp.int32)


@op("IsotonicRegression", inputs=("inputs",), jit=True)
@jax.jit  # one compiled backward
def _isotonic(inputs):
    # the non-increasing fit of each row: block means over TF's PAV blocks
    segments = _pava_segments(lax.stop_gradient(inputs))
    same = segments[:, :, None] == segments[:, None, :]  # [rows, i, j]
    weights = same.astype(inputs.dtype) / jnp.sum(same, 2, keepdims=True).astype(
        inputs.dtype
    )
    return [jnp.einsum("rij,rj->ri", weights, inputs), segments]


_ISO_DTYPES = {
    "float32": np.float32,
    "float16": np.float16,
    "bfloat16": jnp.bfloat16,
    "int8": np.float32,
    "int16": np.float32,
}


def isotonic_regression(inputs, decreasing=True, axis=-1):
    """The least-squares monotone fit along `axis` (TF's
    `tf.nn.isotonic_regression`): `(output, segments)`, `segments` int32 ids
    of the constant blocks (TF's pool-adjacent-violators blocks: equal
    neighbours are not merged). Float inputs keep their dtype, int8/int16
    give float32, other types float64. The gradient averages over each
    block, as TF's."""
    x = to_value(inputs)
    out_dtype = np.dtype(_ISO_DTYPES.get(np.dtype(x.dtype).name, np.float64))
    rank = np.ndim(x)
    if rank == 0:
        raise ValueError("isotonic_regression needs an input of rank >= 1.")
    ax = int(axis) % rank
    moved = (
        array_ops.transpose(inputs, _move_last(rank, ax)) if ax != rank - 1 else inputs
    )
    shape = np.shape(to_value(moved))
    flat = array_ops.reshape(moved, [-1, shape[-1]])
    flat = math_ops.cast(flat, out_dtype)
    if not decreasing:  # TF's: the non-increasing fit of the negation
        flat = math_ops.negative(flat)
    out, seg = _isotonic(flat)
    if not decreasing:
        out = math_ops.negative(out)
    out, seg = array_ops.reshape(out, shape), array_ops.reshape(seg, shape)
    if ax != rank - 1:
        back = list(np.argsort(_move_last(rank, ax)))
        out, seg = array_ops.transpose(out, back), array_ops.transpose(seg, back)
    return out, seg


def _move_last(rank, ax):
    return [i for i in range(rank) if i != ax] + [ax]


# -- depthwise convolution gradients ------------------------------------------------
def _depthwise_grad_args(strides, padding, data_format, dilations, op_name):
    first = _is_channels_first(data_format)
    stride = _tuple(strides, 2, first)
    rate = _tuple(dilations or 1, 2, first)
    return stride, _conv_padding(padding, 2, first), rate, data_format or "NHWC"


@op("DepthwiseConv2dNativeBackpropInput", inputs=("filter", "out_backprop"), jit=True)
@functools.partial(jax.jit, static_argnums=(2, 3, 4, 5, 6))  # one compiled backward
def _depthwise_input_grad(
    filter, out_backprop, input_sizes, strides, padding, rates, fmt
):  # noqa: A002
    zeros = jnp.zeros(input_sizes, out_backprop.dtype)
    _, vjp = jax.vjp(
        lambda x: _depthwise.__wrapped__(x, filter, strides, padding, rates, fmt), zeros
    )
    return vjp(out_backprop)[0]


@op("DepthwiseConv2dNativeBackpropFilter", inputs=("input", "out_backprop"), jit=True)
@functools.partial(jax.jit, static_argnums=(2, 3, 4, 5, 6))  # one compiled backward
def _depthwise_filter_grad(
    input, out_backprop, filter_sizes, strides, padding, rates, fmt
):  # noqa: A002
    zeros = jnp.zeros(filter_sizes, input.dtype)
    _, vjp = jax.vjp(
        lambda f: _depthwise.__wrapped__(input, f, strides, padding, rates, fmt), zeros
    )
    return vjp(out_backprop)[0]


def _check_backprop_shape(op_name, fn, sizes, other, out_backprop):
    want = jax.eval_shape(fn, jax.ShapeDtypeStruct(sizes, np.float32)).shape
    got = np.shape(to_value(out_backprop))
    if tuple(want) != tuple(got):
        raise errors.invalid_argument(
            f"{op_name}: out_backprop has shape {list(got)}, but the convolution "
            f"gives {list(want)}. Check the sizes, strides and padding.",
            op_name,
        )
    del other


def depthwise_conv2d_backprop_input(
    input_sizes,
    filter,  # noqa: A002
    out_backprop,
    strides,
    padding,
    data_format="NHWC",
    dilations=(1, 1, 1, 1),
    name=None,
):
    """The gradient of `depthwise_conv2d` with respect to its input, of shape
    `input_sizes` (TF's `tf.nn.depthwise_conv2d_backprop_input`)."""
    del name  # accepted for TF compatibility
    sizes = tuple(int(s) for s in _shape(input_sizes))
    stride, pad, rate, fmt = _depthwise_grad_args(
        strides, padding, data_format, dilations, "DepthwiseConv2dNativeBackpropInput"
    )
    f = to_value(filter)
    _check_backprop_shape(
        "DepthwiseConv2dNativeBackpropInput",
        lambda x: _depthwise.__wrapped__(
            x, f.astype(np.float32), stride, pad, rate, fmt
        ),
        sizes,
        f,
        out_backprop,
    )
    return _depthwise_input_grad(filter, out_backprop, sizes, stride, pad, rate, fmt)


def depthwise_conv2d_backprop_filter(
    input,  # noqa: A002
    filter_sizes,
    out_backprop,
    strides,
    padding,
    data_format="NHWC",
    dilations=(1, 1, 1, 1),
    name=None,
):
    """The gradient of `depthwise_conv2d` with respect to its filter, of shape
    `filter_sizes` (TF's `tf.nn.depthwise_conv2d_backprop_filter`)."""
    del name  # accepted for TF compatibility
    sizes = tuple(int(s) for s in _shape(filter_sizes))
    stride, pad, rate, fmt = _depthwise_grad_args(
        strides, padding, data_format, dilations, "DepthwiseConv2dNativeBackpropFilter"
    )
    x = to_value(input)
    _check_backprop_shape(
        "DepthwiseConv2dNativeBackpropFilter",
        lambda f: _depthwise.__wrapped__(
            jnp.zeros(np.shape(x), np.float32), f, stride, pad, rate, fmt
        ),
        sizes,
        x,
        out_backprop,
    )
    return _depthwise_filter_grad(input, out_backprop, sizes, stride, pad, rate, fmt)


# -- with_space_to_batch ------------------------------------------------------------
def _adjust(orig, fill, spatial_dims):
    """TF's `_with_space_to_batch_adjust`: rows for dims 1..max(spatial_dims),
    `orig`'s rows at the spatial dims and `fill` elsewhere."""
    orig = np.asarray(orig)
    out = np.full((spatial_dims[-1],) + orig.shape[1:], fill, orig.dtype)
    for i, d in enumerate(spatial_dims):
        out[d - 1] = orig[i]
    return out


def with_space_to_batch(
    input,  # noqa: A002
    dilation_rate,
    padding,
    op,  # noqa: A002
    filter_shape=None,
    spatial_dims=None,
    data_format=None,
):
    """Runs `op(converted, num_spatial_dims, padding)` on the space-to-batch
    form of `input`, turning a window op into its dilated ('atrous') form
    (TF's `tf.nn.with_space_to_batch`); with a dilation of 1 it is
    `op(input, num_spatial_dims, padding)`."""
    rate = np.asarray(to_value(dilation_rate)).astype(np.int64)
    if rate.ndim != 1:
        raise ValueError(
            f"`dilation_rate.shape.rank` must be 1. Received: dilation_rate={rate}"
        )
    nd = rate.shape[0]
    first = _is_channels_first(data_format)
    start = 2 if first else 1
    dims = (
        list(range(start, start + nd)) if spatial_dims is None else list(spatial_dims)
    )
    if dims != sorted(set(int(d) for d in dims)) or any(d < 1 for d in dims):
        raise ValueError(
            "`spatial_dims` must be a monotonically increasing sequence of positive "
            f"integers. Received: spatial_dims={dims}"
        )
    in_shape = np.shape(to_value(input))
    need = dims[-1] if first else dims[-1] + 1
    if len(in_shape) < need:
        raise ValueError(
            f"`input.shape.rank` must be at least {need}. Received: "
            f"input.shape={list(in_shape)} with rank {len(in_shape)}"
        )
    if np.any(rate < 1):
        raise ValueError(
            f"`dilation_rate` must be positive. Received: dilation_rate={rate}"
        )
    if np.all(rate == 1):
        return op(input, nd, padding)
    if isinstance(padding, str) and padding.upper() == "SAME":
        if filter_shape is None:
            raise ValueError(
                "`filter_shape` must be specified for `padding='SAME'`. Received: "
                f"filter_shape={filter_shape} and padding={padding}"
            )
        span = (np.asarray(_shape(filter_shape))[:nd] - 1) * rate
        base = np.stack([span // 2, span - span // 2], 1)
    elif isinstance(padding, str) and padding.upper() == "VALID":
        base = np.zeros((nd, 2), np.int64)
    elif not isinstance(padding, str):
        full = np.asarray(padding).reshape(nd + 2, 2)
        base = full[2:] if first else full[1:-1]
    else:
        raise ValueError(
            f"`padding` must be one of 'SAME' or 'VALID'. Received: padding={padding}"
        )
    pads, crops = array_extra_ops.required_space_to_batch_paddings(
        [in_shape[d] for d in dims], rate, base
    )
    block = _adjust(rate, 1, dims)
    pads = _adjust(pads.numpy(), 0, dims)
    crops = _adjust(crops.numpy(), 0, dims)
    converted = array_extra_ops.space_to_batch_nd(input, block, pads)
    result = op(converted, nd, "VALID")
    return array_extra_ops.batch_to_space(result, block, crops)


# -- sampled losses -----------------------------------------------------------------
def compute_accidental_hits(
    true_classes, sampled_candidates, num_true, seed=None, name=None
):
    """The sampled candidates that equal one of their row's true classes
    (TF's `tf.nn.compute_accidental_hits`): `(indices int32, ids int64,
    weights float32)`, one entry per hit (row, position in
    `sampled_candidates`, -FLT_MAX), in TF's order (row, then true class);
    a class sampled twice counts at its last position, as TF's. The count
    depends on the values: eager, or constant inputs inside
    `jaxtape.function`."""
    del seed, name  # accepted for TF compatibility (TF ignores seed too)
    tc = np.asarray(to_value(true_classes))
    sampled = np.asarray(to_value(sampled_candidates)).reshape(-1)
    if tc.ndim != 2 or tc.shape[1] != int(num_true):
        raise errors.invalid_argument(
            f"true_classes must be a matrix of shape [batch_size, num_true="
            f"{num_true}], got {list(tc.shape)}",
            "ComputeAccidentalHits",
        )
    position = {int(v): j for j, v in enumerate(sampled)}  # the last one, as TF
    rows, ids = [], []
    for i, row in enumerate(tc):
        for label in row:
            j = position.get(int(label))
            if j is not None:
                rows.append(i)
                ids.append(j)
    low = np.finfo(np.float32).min
    return (
        Tensor(jnp.asarray(np.asarray(rows, np.int32))),
        Tensor(jnp.asarray(np.asarray(ids, np.int64))),
        Tensor(jnp.full((len(rows),), low, jnp.float32)),
    )


@op("AccidentalHitsMask", inputs=("labels", "sampled"), differentiable=False, jit=True)
def _accidental_hits(labels, sampled, dtype):
    # -FLT_MAX where sampled[j] is one of row i's labels: compute_accidental_hits
    # as a dense [batch, num_sampled] term (a class sampled twice counts at its
    # last position, as TF's), so that it traces inside jaxtape.function.
    n = sampled.shape[0]
    later = jnp.triu(sampled[:, None] == sampled[None, :], k=1).any(axis=1)
    hit = (labels[:, :, None] == sampled[None, None, :]).any(axis=1) & ~later
    low = jnp.asarray(np.finfo(np.float32).min, dtype)
    return jnp.where(hit, low, jnp.zeros((), dtype)).reshape(labels.shape[0], n)


def _sampled_logits(
    weights,
    biases,
    labels,
    inputs,
    num_sampled,
    num_classes,
    num_true,
    sampled_values,
    subtract_log_q,
    remove_accidental_hits,
    seed,
):
    """TF's `_compute_sampled_logits` ('div' partitioning): the logits of the
    true and the sampled classes, and their labels `1 / num_true` and 0."""
    labels = math_ops.cast(labels, np.int64)
    flat = array_ops.reshape(labels, [-1])
    if sampled_values is None:
        sampler = context.hooks.log_uniform_candidate_sampler
        if sampler is None:
            raise RuntimeError(
                "sampling needs jaxtape's random state (import jaxtape)."
            )
        sampled_values = sampler(labels, num_true, num_sampled, True, num_classes, seed)
    sampled, true_count, sampled_count = (
        nondiff.stop_gradient(s) for s in sampled_values
    )
    sampled = math_ops.cast(sampled, np.int64)
    n_true = np.shape(to_value(flat))[0]
    all_w = embedding_lookup(weights, array_ops.concat([flat, sampled], 0))
    in_dtype = np.dtype(to_value(inputs).dtype)
    if np.dtype(to_value(all_w).dtype) != in_dtype:
        all_w = math_ops.cast(all_w, in_dtype)
    true_w, sampled_w = all_w[:n_true], all_w[n_true:]
    sampled_logits = math_ops.matmul(inputs, sampled_w, transpose_b=True)
    all_b = embedding_lookup(biases, array_ops.concat([flat, sampled], 0))
    if np.dtype(to_value(all_b).dtype) != in_dtype:
        all_b = math_ops.cast(all_b, in_dtype)
    true_b, sampled_b = all_b[:n_true], all_b[n_true:]
    dim = np.shape(to_value(true_w))[1]
    dots = math_ops.multiply(
        array_ops.expand_dims(inputs, 1),
        array_ops.reshape(true_w, [-1, int(num_true), dim]),
    )
    true_logits = math_ops.add(
        math_ops.reduce_sum(dots, -1), array_ops.reshape(true_b, [-1, int(num_true)])
    )
    sampled_logits = math_ops.add(sampled_logits, sampled_b)
    if remove_accidental_hits:
        sampled_logits = math_ops.add(
            sampled_logits, _accidental_hits(labels, sampled, in_dtype)
        )
    if subtract_log_q:
        true_logits = math_ops.subtract(
            true_logits, math_ops.cast(math_ops.log(true_count), in_dtype)
        )
        sampled_logits = math_ops.subtract(
            sampled_logits, math_ops.cast(math_ops.log(sampled_count), in_dtype)
        )
    logits = array_ops.concat([true_logits, sampled_logits], 1)
    out_labels = array_ops.concat(
        [
            math_ops.divide(nondiff.ones_like(true_logits), float(num_true)),
            nondiff.zeros_like(sampled_logits),
        ],
        1,
    )
    return logits, out_labels


def nce_loss(
    weights,
    biases,
    labels,
    inputs,
    num_sampled,
    num_classes,
    num_true=1,
    sampled_values=None,
    remove_accidental_hits=False,
    name="nce_loss",
):
    """The noise-contrastive estimation loss per example (TF 2's
    `tf.nn.nce_loss`): sigmoid cross-entropy of the true and the sampled
    classes' logits (log-uniform samples unless `sampled_values` is given),
    summed over them. `weights` `[num_classes, dim]` (or a list of 'div'
    shards), `biases` `[num_classes]`, `labels` int `[batch, num_true]`,
    `inputs` `[batch, dim]`.

    Differences from TensorFlow: with `remove_accidental_hits=True` the hits
    are found on the host (eager, or constant labels inside
    `jaxtape.function`); without `sampled_values` the draws differ from TF's.
    """
    del name  # accepted for TF compatibility
    logits, labels_ = _sampled_logits(
        weights,
        biases,
        labels,
        inputs,
        num_sampled,
        num_classes,
        num_true,
        sampled_values,
        True,
        remove_accidental_hits,
        None,
    )
    losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels_, logits=logits)
    return math_ops.reduce_sum(losses, 1)


def sampled_softmax_loss(
    weights,
    biases,
    labels,
    inputs,
    num_sampled,
    num_classes,
    num_true=1,
    sampled_values=None,
    remove_accidental_hits=True,
    seed=None,
    name="sampled_softmax_loss",
):
    """The sampled softmax loss per example (TF 2's
    `tf.nn.sampled_softmax_loss`): softmax cross-entropy over the true and
    the sampled classes' logits (log-uniform samples, corrected by their
    expected counts). Arguments as `nce_loss`.

    Differences from TensorFlow: as `nce_loss`'s.
    """
    del name  # accepted for TF compatibility
    logits, labels_ = _sampled_logits(
        weights,
        biases,
        labels,
        inputs,
        num_sampled,
        num_classes,
        num_true,
        sampled_values,
        True,
        remove_accidental_hits,
        seed,
    )
    return nn_ops.softmax_cross_entropy_with_logits(
        labels=nondiff.stop_gradient(labels_), logits=logits
    )
