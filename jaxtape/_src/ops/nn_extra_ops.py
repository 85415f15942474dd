"""More of `tf.nn`: transposed, 3-D, depthwise, separable and atrous
convolutions, 3-D pooling, normalization and loss helpers, as pure jnp bodies
behind `dispatch.op` (or compositions of public ops). Layer L1.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.core import distribution, errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.ops import array_ops, kinks, math_ops, nn_ops
from jaxtape._src.ops.array_ops import _shape
from jaxtape._src.ops.math_ops import _axis, _check
from jaxtape._src.ops.nn_ops import (
    _conv,
    _conv_padding,
    _is_channels_first,
    _tuple,
)


# -- convolutions -------------------------------------------------------------------
def conv3d(
    input,  # noqa: A002
    filters,
    strides,
    padding,
    data_format="NDHWC",
    dilations=None,
    name=None,
):
    """3-D convolution, NDHWC input and DHWIO filters (TF's `conv3d`)."""
    if np.ndim(to_value(filters)) != 5 or np.ndim(to_value(input)) != 5:
        raise ValueError(
            f"conv3d needs a 5-D input and 5-D filters; got shapes "
            f"{np.shape(to_value(input))} and {np.shape(to_value(filters))}."
        )
    return nn_ops.convolution(input, filters, strides, padding, data_format, dilations)


@op("Conv2DBackpropInput", inputs=("input", "filters"), jit=True)
def _conv_transpose(input, filters, output_shape, strides, padding, dilations, fmt):  # noqa: A002
    # The gradient of the convolution of an `output_shape` input with respect
    # to that input, applied to `input`: TF's definition (its filters are
    # [..., out_channels, in_channels], the forward conv's HWIO).
    def forward(x):
        return _conv.__wrapped__(x, filters, strides, padding, dilations, fmt)

    zeros = jnp.zeros(output_shape, input.dtype)
    want = jax.eval_shape(forward, zeros).shape
    if tuple(want) != tuple(input.shape):
        raise errors.invalid_argument(
            f"Conv2DCustomBackpropInput: input of shape {list(input.shape)} does not "
            f"match the convolution of output_shape {list(output_shape)} (which "
            f"gives {list(want)}). Check output_shape, strides and padding.",
            "Conv2DBackpropInput",
        )
    _, vjp = jax.vjp(forward, zeros)
    return vjp(input)[0]


def conv_transpose(
    input,  # noqa: A002
    filters,
    output_shape,
    strides,
    padding="SAME",
    data_format=None,
    dilations=None,
    name=None,
):
    """The transpose of `convolution` (the gradient of a convolution with
    respect to its input), for 1-, 2- and 3-D: filters are
    `[spatial..., out_channels, in_channels]`, `output_shape` the full shape
    of the result."""
    nd = np.ndim(to_value(filters)) - 2
    first = _is_channels_first(data_format)
    fmt = data_format or "N" + "DHW"[-nd:] + "C"
    shape = _shape(output_shape)
    if len(shape) != nd + 2:
        raise ValueError(
            f"output_shape must have {nd + 2} entries (batch, spatial..., channels); "
            f"got {list(shape)}."
        )
    return _conv_transpose(
        input,
        filters,
        shape,
        _tuple(strides, nd, first),
        _conv_padding(padding, nd, first),
        _tuple(dilations or 1, nd, first),
        fmt,
    )


def conv1d_transpose(
    input,  # noqa: A002
    filters,
    output_shape,
    strides,
    padding="SAME",
    data_format="NWC",
    dilations=None,
    name=None,
):
    """1-D `conv_transpose` (NWC; filters `[width, out_channels, in_channels]`)."""
    return conv_transpose(
        input, filters, output_shape, strides, padding, data_format, dilations
    )


def conv2d_transpose(
    input,  # noqa: A002
    filters,
    output_shape,
    strides,
    padding="SAME",
    data_format="NHWC",
    dilations=None,
    name=None,
):
    """2-D `conv_transpose` (NHWC; filters `[h, w, out_channels, in_channels]`)."""
    return conv_transpose(
        input, filters, output_shape, strides, padding, data_format, dilations
    )


def conv3d_transpose(
    input,  # noqa: A002
    filters,
    output_shape,
    strides,
    padding="SAME",
    data_format="NDHWC",
    dilations=None,
    name=None,
):
    """3-D `conv_transpose` (NDHWC; filters `[d, h, w, out, in]`)."""
    return conv_transpose(
        input, filters, output_shape, strides, padding, data_format, dilations
    )


def atrous_conv2d(value, filters, rate, padding, name=None):
    """2-D convolution with holes: `conv2d` with dilation `rate`."""
    return nn_ops.conv2d(value, filters, 1, padding, dilations=int(rate))


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """The transpose of `atrous_conv2d`."""
    return conv_transpose(value, filters, output_shape, 1, padding, None, int(rate))


def _depthwise_filter(filt):
    h, w, c, m = filt.shape
    return filt.reshape(h, w, 1, c * m)


@op("DepthwiseConv2dNative", inputs=("input", "filter"), jit=True)
def _depthwise(input, filter, strides, padding, dilations, fmt):  # noqa: A002
    return _conv.__wrapped__(
        input, _depthwise_filter(filter), strides, padding, dilations, fmt
    )


def depthwise_conv2d(
    input,  # noqa: A002
    filter,  # noqa: A002
    strides,
    padding,
    data_format=None,
    dilations=None,
    name=None,
):
    """Depthwise 2-D convolution: each input channel convolved with its own
    `channel_multiplier` filters (`filter`: `[h, w, in_channels, multiplier]`);
    output channel `c * multiplier + m`."""
    if np.ndim(to_value(filter)) != 4 or np.ndim(to_value(input)) != 4:
        raise ValueError("depthwise_conv2d needs a 4-D input and a 4-D filter.")
    first = _is_channels_first(data_format)
    return _depthwise(
        input,
        filter,
        _tuple(strides, 2, first),
        _conv_padding(padding, 2, first),
        _tuple(dilations or 1, 2, first),
        data_format or "NHWC",
    )


def separable_conv2d(
    input,  # noqa: A002
    depthwise_filter,
    pointwise_filter,
    strides,
    padding,
    data_format=None,
    dilations=None,
    name=None,
):
    """`depthwise_conv2d` followed by a 1x1 `conv2d` with `pointwise_filter`."""
    depth = depthwise_conv2d(
        input, depthwise_filter, strides, padding, data_format, dilations
    )
    return nn_ops.conv2d(depth, pointwise_filter, 1, "VALID", data_format or "NHWC")


# -- pooling ------------------------------------------------------------------------
def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """3-D max pooling (NDHWC)."""
    return nn_ops.max_pool(input, ksize, strides, padding, data_format)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """3-D average pooling (NDHWC)."""
    return nn_ops.avg_pool(input, ksize, strides, padding, data_format)


def pool(
    input,  # noqa: A002
    window_shape,
    pooling_type,
    strides=None,
    padding="VALID",
    data_format=None,
    dilations=None,
    name=None,
):
    """N-D max or average pooling (`pooling_type` 'MAX' or 'AVG')."""
    nd = np.ndim(to_value(input)) - 2
    if dilations is not None and any(d != 1 for d in _tuple(dilations, nd)):
        raise NotImplementedError("pool with dilations other than 1 is not supported.")
    strides = 1 if strides is None else strides
    kind = str(pooling_type).upper()
    if kind == "MAX":
        return nn_ops.max_pool(input, window_shape, strides, padding, data_format)
    if kind == "AVG":
        return nn_ops.avg_pool(input, window_shape, strides, padding, data_format)
    raise ValueError(f"Invalid pooling_type: {pooling_type!r}; use 'MAX' or 'AVG'.")


# -- normalization, losses, statistics ---------------------------------------------
def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """`scale * (x - mean) / sqrt(variance + epsilon) + offset` (TF's
    formula: `x * inv + (offset - mean * inv)`); offset/scale may be None."""
    inv = math_ops.rsqrt(math_ops.add(variance, variance_epsilon))
    if scale is not None:
        inv = math_ops.multiply(inv, scale)
    shift = math_ops.negative(math_ops.multiply(mean, inv))
    if offset is not None:
        shift = math_ops.add(shift, offset)
    return math_ops.add(math_ops.multiply(x, math_ops.cast(inv, x.dtype)), shift)


def batch_norm_with_global_normalization(
    input,  # noqa: A002
    mean,
    variance,
    beta,
    gamma,
    variance_epsilon,
    scale_after_normalization,
    name=None,
):
    """`batch_normalization` with `gamma` used only if `scale_after_normalization`."""
    return batch_normalization(
        input,
        mean,
        variance,
        beta,
        gamma if scale_after_normalization else None,
        variance_epsilon,
    )


@op("LRN", inputs=("input",), jit=True)
def _lrn(input, depth_radius, bias, alpha, beta):  # noqa: A002
    sq = jnp.square(input)
    c = input.shape[-1]
    pad = [(0, 0)] * (input.ndim - 1) + [(depth_radius, depth_radius)]
    padded = jnp.pad(sq, pad)
    window = sum(
        lax.slice_in_dim(padded, k, k + c, axis=-1) for k in range(2 * depth_radius + 1)
    )
    return input / (bias + alpha * window) ** beta


def local_response_normalization(
    input,  # noqa: A002
    depth_radius=5,
    bias=1.0,
    alpha=1.0,
    beta=0.5,
    name=None,
):
    """`input / (bias + alpha * sum(input**2 over the depth window)) ** beta`,
    the window `depth_radius` channels on each side (4-D float input)."""
    x = to_value(input)
    _check("LRN", math_ops.kernels("bfloat16, half, float"), x)
    if np.ndim(x) != 4:
        raise errors.invalid_argument(
            f"input must be 4-dimensional; got shape {list(np.shape(x))}.", "LRN"
        )
    return _lrn(input, int(depth_radius), float(bias), float(alpha), float(beta))


lrn = local_response_normalization


@op("WeightedCrossEntropyWithLogits", same_dtype=True, jit=True)
def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """`sigmoid_cross_entropy_with_logits` with the positive term weighted by
    `pos_weight`, in TF's stable form."""
    log_weight = 1 + (pos_weight - 1) * labels
    return (1 - labels) * logits + log_weight * (
        jnp.log1p(jnp.exp(-kinks.abs(logits))) + jax.nn.relu(-logits)
    )


@op("LogPoissonLoss", inputs=("targets", "log_input"), same_dtype=True, jit=True)
def _log_poisson_loss(targets, log_input, compute_full_loss):
    loss = jnp.exp(log_input) - log_input * targets
    if compute_full_loss:  # (unguarded, as TF's: a NaN gradient at targets 0)
        t = targets
        stirling = t * jnp.log(t) - t + 0.5 * jnp.log(2 * np.pi * t).astype(t.dtype)
        loss = loss + jnp.where(t > 1, stirling, jnp.zeros_like(stirling))
    return loss


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """The Poisson loss `exp(log_input) - log_input * targets` (with Stirling's
    approximation of `log(targets!)` added where `targets > 1` when
    `compute_full_loss`)."""
    t, li = to_value(targets), to_value(log_input)
    if np.shape(t) != np.shape(li):
        raise ValueError(
            f"log_input and targets must have the same shape ({list(np.shape(li))} "
            f"vs {list(np.shape(t))})"
        )
    return _log_poisson_loss(targets, log_input, bool(compute_full_loss))


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """The sum of the (weighted) per-example losses divided by the global batch
    size (by default the first dimension of `per_example_loss` times the
    number of replicas in sync, as TF's; RuntimeError in a strategy's
    cross-replica context then)."""
    loss = per_example_loss
    if sample_weight is not None:
        loss = math_ops.multiply(loss, sample_weight)
    total = math_ops.reduce_sum(loss)
    if global_batch_size is None:
        if distribution.in_cross_replica_context():
            raise RuntimeError(
                "You are calling `compute_average_loss` in cross replica context, "
                "while it was expected to be called in replica context."
            )
        shape = np.shape(to_value(per_example_loss))
        global_batch_size = (shape[0] if shape else 1) * (
            distribution.num_replicas_in_sync()
        )
    return math_ops.divide(total, math_ops.cast(global_batch_size, total.dtype))


def scale_regularization_loss(regularization_loss):
    """The sum of the regularization losses divided by the number of replicas
    in sync (TF's; RuntimeError in a strategy's cross-replica context)."""
    if distribution.in_cross_replica_context():
        raise RuntimeError(
            "You are calling `scale_regularization_loss` in cross replica context, "
            "while it was expected to be called in replica context."
        )
    if isinstance(regularization_loss, (list, tuple)):
        regularization_loss = math_ops.add_n(list(regularization_loss))
    total = math_ops.reduce_sum(regularization_loss)
    n = distribution.num_replicas_in_sync()
    return total if n == 1 else math_ops.divide(total, math_ops.cast(n, total.dtype))


def weighted_moments(x, axes, frequency_weights, keepdims=False, name=None):
    """The `frequency_weights`-weighted mean and variance of `x` over `axes`."""
    axes = _axis(axes)
    w = (
        math_ops.cast(frequency_weights, x.dtype)
        if hasattr(x, "dtype")
        else frequency_weights
    )
    wx = math_ops.multiply(w, x)
    sum_w = math_ops.reduce_sum(math_ops.add(w, math_ops.multiply(x, 0)), axes, True)
    mean = math_ops.divide(math_ops.reduce_sum(wx, axes, True), sum_w)
    dev = math_ops.squared_difference(x, mean)
    var = math_ops.divide(
        math_ops.reduce_sum(math_ops.multiply(w, dev), axes, True), sum_w
    )
    if not keepdims:
        mean = array_ops.squeeze(mean, axes)
        var = array_ops.squeeze(var, axes)
    return mean, var


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """Mean and variance from `sufficient_statistics`' sums."""
    divisor = math_ops.reciprocal(counts)
    shifted_mean = math_ops.multiply(mean_ss, divisor)
    mean = shifted_mean if shift is None else math_ops.add(shifted_mean, shift)
    variance = math_ops.subtract(
        math_ops.multiply(variance_ss, divisor), math_ops.square(shifted_mean)
    )
    return mean, variance


def sufficient_statistics(x, axes, shift=None, keepdims=False, name=None):
    """`(count, sum(x - shift), sum((x - shift)**2), shift)` over `axes`."""
    axes_t = _axis(axes)
    axes_t = (axes_t,) if isinstance(axes_t, int) else tuple(axes_t)
    shape = np.shape(to_value(x))
    count = float(np.prod([shape[a] for a in axes_t]))
    counts = math_ops.cast(count, x.dtype)
    d = x if shift is None else math_ops.subtract(x, shift)
    m_ss = math_ops.reduce_sum(d, axes_t, keepdims)
    v_ss = math_ops.reduce_sum(math_ops.square(d), axes_t, keepdims)
    if shift is not None and not hasattr(shift, "dtype"):
        shift = math_ops.cast(shift, x.dtype)
    return counts, m_ss, v_ss, shift


@op("DepthToSpace", inputs=("input",))
def _depth_to_space(input, block, channels_first):  # noqa: A002
    x = jnp.moveaxis(input, 1, -1) if channels_first else input
    n, h, w, c = x.shape
    out_c = c // (block * block)
    x = x.reshape(n, h, w, block, block, out_c).transpose(0, 1, 3, 2, 4, 5)
    x = x.reshape(n, h * block, w * block, out_c)
    return jnp.moveaxis(x, -1, 1) if channels_first else x


@op("SpaceToDepth", inputs=("input",))
def _space_to_depth(input, block, channels_first):  # noqa: A002
    x = jnp.moveaxis(input, 1, -1) if channels_first else input
    n, h, w, c = x.shape
    x = x.reshape(n, h // block, block, w // block, block, c).transpose(
        0, 1, 3, 2, 4, 5
    )
    x = x.reshape(n, h // block, w // block, block * block * c)
    return jnp.moveaxis(x, -1, 1) if channels_first else x


def _block_check(input, block_size, data_format, op_name, to_depth):  # noqa: A002
    shape = np.shape(to_value(input))
    block = int(block_size)
    if data_format not in ("NHWC", "NCHW"):
        raise NotImplementedError(
            f"{op_name}: data_format {data_format!r} is not supported."
        )
    if len(shape) != 4:
        raise errors.invalid_argument(
            f"input rank should be 4 instead of {len(shape)}", op_name
        )
    if block < 2:
        raise errors.invalid_argument(
            f"Value for attr 'block_size' of {block} must be at least 2", op_name
        )
    first = data_format == "NCHW"
    c = shape[1] if first else shape[3]
    h, w = (shape[2], shape[3]) if first else (shape[1], shape[2])
    if to_depth and (h % block or w % block):
        raise errors.invalid_argument(
            f"Image width {w} and height {h} should be divisible by block_size: "
            f"{block}",
            op_name,
        )
    if not to_depth and c % (block * block):
        raise errors.invalid_argument(
            f"Input depth dimension {c} should be divisible by: {block * block}",
            op_name,
        )
    return block, first


def depth_to_space(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """Moves blocks of depth into `block_size` x `block_size` spatial blocks."""
    block, first = _block_check(input, block_size, data_format, "DepthToSpace", False)
    return _depth_to_space(input, block, first)


def space_to_depth(input, block_size, data_format="NHWC", name=None):  # noqa: A002
    """Moves `block_size` x `block_size` spatial blocks into depth."""
    block, first = _block_check(input, block_size, data_format, "SpaceToDepth", True)
    return _space_to_depth(input, block, first)


def crelu(features, axis=-1, name=None):
    """`concat([relu(x), relu(-x)], axis)`."""
    return array_ops.concat(
        [nn_ops.relu(features), nn_ops.relu(math_ops.negative(features))], axis
    )


def embedding_lookup(params, ids, max_norm=None, name=None):
    """The rows of `params` at `ids` (a list of tensors is one table split in
    consecutive blocks, TF's 'div' strategy); rows whose L2 norm exceeds
    `max_norm` are scaled down to it."""
    if isinstance(params, (list, tuple)):
        params = params[0] if len(params) == 1 else array_ops.concat(list(params), 0)
    rows = array_ops.gather(params, ids)
    if max_norm is None:
        return rows
    return _clip_rows(rows, float(max_norm), np.ndim(to_value(ids)))


@op("EmbeddingClip", inputs=("rows",))
def _clip_rows(rows, max_norm, id_rank):
    axes = tuple(range(id_rank, rows.ndim))
    norm = jnp.sqrt(jnp.sum(jnp.square(rows), axes, keepdims=True))
    scale = jnp.where(norm > max_norm, max_norm / jnp.where(norm > 0, norm, 1), 1)
    return rows * scale.astype(rows.dtype)


def approx_max_k(
    operand,
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
    name=None,
):
    """The `k` largest entries along `reduction_dimension` and their indices
    (exact here: recall 1)."""
    return _approx_k(operand, int(k), int(reduction_dimension), True)


def approx_min_k(
    operand,
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
    name=None,
):
    """The `k` smallest entries along `reduction_dimension` and their indices
    (exact here: recall 1)."""
    return _approx_k(operand, int(k), int(reduction_dimension), False)


@op("ApproxTopK", inputs=("operand",))
def _approx_k(operand, k, dim, largest):
    x = jnp.moveaxis(operand, dim, -1)
    vals, idx = lax.top_k(x if largest else -x, k)
    vals = vals if largest else -vals
    return jnp.moveaxis(vals, -1, dim), jnp.moveaxis(idx.astype(np.int32), -1, dim)
