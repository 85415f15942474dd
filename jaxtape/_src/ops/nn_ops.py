"""Neural-network ops (TF's `tf.nn`): activations, losses, conv, pooling. Layer L1.

Dropout needs the stateful RNG and lives in `state/random_ops.py`.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.core import checks, errors
from jaxtape._src.core.dispatch import op
from jaxtape._src.ops import kinks
from jaxtape._src.ops.math_ops import (
    K_FLOAT,
    K_INEXACT,
    K_NUMBER,
    K_REAL,
    K_SQUARED_DIFFERENCE,
    _axis,
    _check,
    reduce_mean,
)

if TYPE_CHECKING:
    from jaxtape._src.core.tensor import Tensor
    from jaxtape._src.core.typing import TensorLike

_reduce_mean = reduce_mean.__wrapped__  # the pure body, for use inside bodies


@op("Relu", jit=True)  # (jax.nn.relu's custom_jvp costs ~90 µs per eager call)
def relu(features, name=None):
    """Computes `max(features, 0)` (real numbers; not bools or complex, as TF)."""
    _check("Relu", K_REAL, features)
    return jax.nn.relu(features)


@op("Relu6")
def relu6(features, name=None):
    """Computes `min(max(features, 0), 6)`."""
    _check("Relu6", K_REAL, features)
    if np.dtype(features.dtype).kind in "iu":
        return jnp.clip(features, 0, 6)
    return kinks.relu6(features)  # TF's gradient: 0 at 0 and 6


@op("Elu")
def elu(features, name=None):
    """Computes `x` if `x > 0` else `exp(x) - 1`."""
    _check("Elu", K_FLOAT, features)
    return jax.nn.elu(features)


@op("Selu")
def selu(features, name=None):
    """Scaled exponential linear unit, with TF's constants."""
    _check("Selu", K_FLOAT, features)
    return kinks.selu(features)  # TF's gradient at 0: the linear side's


@op("Gelu", jit=True)
def gelu(features, approximate=False, name=None):
    """Gaussian error linear unit; exact (erf) by default, as in TF."""
    if features.dtype not in K_FLOAT.dtypes:
        raise ValueError(
            "`features.dtype` must be a floating point tensor. Received: "
            f"features.dtype={np.dtype(features.dtype).name}. Cast it first, e.g. "
            "`jaxtape.cast(x, jaxtape.float32)`."
        )
    x = features
    if approximate:  # TF's formula, in the features' dtype
        c = np.sqrt(2 / np.pi).astype(x.dtype)
        return 0.5 * x * (1 + jnp.tanh(c * (x + np.asarray(0.044715, x.dtype) * x**3)))
    return 0.5 * x * (1 + lax.erf(x / np.sqrt(2).astype(x.dtype)))


@op("LeakyRelu", inputs=("features",), jit=True)
def _leaky_relu(features, alpha):
    _check("LeakyRelu", K_REAL, features)
    if np.dtype(features.dtype).kind in "iu":
        features = features.astype(np.float32)
    alpha = np.float32(alpha).astype(features.dtype)
    return jnp.where(features > 0, features, features * alpha)


def leaky_relu(features, alpha=0.2, name=None):
    """Computes `x` if `x > 0` else `alpha * x` (alpha 0.2, TF's default).

    As TF: integer features are cast to float32 first, and `alpha` is a
    float32 attribute of the kernel (so float64 features use float32(0.2)).
    """
    return _leaky_relu(features, float(alpha))


@op("Silu")
def silu(features, beta=1.0, name=None):
    """Computes `x * sigmoid(beta * x)` (swish)."""
    _check("Sigmoid", K_INEXACT, features)
    return features * jax.nn.sigmoid(beta * features)


@op("Softsign", jit=True)
def softsign(features, name=None):
    """Computes `x / (|x| + 1)`."""
    _check("Softsign", K_FLOAT, features)
    return features / (jnp.abs(features) + 1)


@op(
    "Softmax", inputs=("logits",), jit=True
)  # (jax.nn.softmax's custom_jvp: ~40 µs per eager call)
def _softmax(logits, axis):
    return jax.nn.softmax(logits, axis=_softmax_axis(logits, axis, "Softmax"))


def softmax(logits, axis=None, name=None):
    """Softmax along `axis` (the last by default) of float `logits`, as in TF.

    Differences from TensorFlow:
      In a row holding NaN or +inf, the finite logits give NaN (XLA's
      `exp(x - max) / sum`); TF's CPU kernel gives 0 for them. Such rows are
      NaN in both.
    """
    return _softmax(logits, _static_axis(axis))


@op("LogSoftmax", inputs=("logits",), jit=True)
def _log_softmax(logits, axis):
    return jax.nn.log_softmax(logits, axis=_softmax_axis(logits, axis, "LogSoftmax"))


def log_softmax(logits, axis=None, name=None):
    """Log-softmax along `axis` (the last by default) of float `logits`, as in TF."""
    return _log_softmax(logits, _static_axis(axis))


def _static_axis(axis):
    """A hashable axis for a compiled op (TF takes `axis=1.0` too)."""
    if axis is None or type(axis) is int:
        return axis
    if type(axis) is float and axis.is_integer():
        return int(axis)
    return _axis(axis)


def _softmax_axis(logits, axis, op_name):
    """TF's checks of (log_)softmax: float logits, an axis inside their rank."""
    dtype = np.dtype(logits.dtype)
    if dtype.kind not in "fV":
        raise errors.invalid_argument(
            f"Value for attr 'T' of {dtype.name} is not in the list of allowed "
            "values: half, bfloat16, float, double. Cast the logits first, e.g. "
            "`jaxtape.cast(logits, jaxtape.float32)`.",
            op_name,
        )
    axis = -1 if axis is None else axis
    nd = np.ndim(logits)
    if nd == 0 and op_name == "Softmax":  # (TF's kernel: dims must be in [1, 5])
        raise errors.AbortedError(
            None,
            op_name,
            f"Input dims must be <= 5 and >=1: {op_name} of a scalar. Pass at "
            "least a vector of logits.",
        )
    if type(axis) is not int or not -nd <= axis < nd:
        raise errors.invalid_argument(
            f"`dim` must be in the range [{-nd}, {nd}) where {nd} is the number of "
            f"dimensions in the input. Received: dim={axis}"
        )
    return axis


def sigmoid_cross_entropy_with_logits(
    labels: TensorLike | None = None,
    logits: TensorLike | None = None,
    name: str | None = None,
) -> Tensor:
    """`max(x, 0) - x * z + log(1 + exp(-|x|))` element-wise, TF's stable form."""
    if labels is None or logits is None:  # (None defaults: TF's signature)
        raise ValueError(
            "Both `labels` and `logits` must be provided for "
            f"sigmoid_cross_entropy_with_logits. Received: labels={labels!r} and "
            f"logits={logits!r}"
        )
    return _sigmoid_xent(labels, logits)


@op(
    "SigmoidCrossEntropyWithLogits",
    inputs=("labels", "logits"),
    same_dtype=True,
    jit=True,
)
def _sigmoid_xent(labels, logits):
    _check("Log1p", K_FLOAT, logits)
    if labels.shape != logits.shape:
        raise ValueError(
            f"logits and labels must have the same shape; received logits shape "
            f"{logits.shape} and labels shape {labels.shape}."
        )
    cond = logits >= 0  # TF's exact form, so the gradient at 0 matches too
    relu_logits = jnp.where(cond, logits, jnp.zeros_like(logits))
    neg_abs_logits = jnp.where(cond, -logits, logits)
    return relu_logits - logits * labels + jnp.log1p(jnp.exp(neg_abs_logits))


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def softmax_xent_tf(labels, logits, axis=-1):
    """`-sum(labels * log_softmax(logits))` with TF's fused-kernel gradient.

    TF's SoftmaxCrossEntropyWithLogits differentiates as if each row of
    `labels` summed to 1: d/dlogits = softmax(logits) - labels (the exact
    gradient is softmax * sum(labels) - labels). Keras losses on TF inherit
    this, so jaxtape does too (it matters for unnormalised labels, such as
    seed 002's `np.random.random` labels).
    """
    return -jnp.sum(labels * jax.nn.log_softmax(logits, axis=axis), axis=axis)


def _xent_fwd(labels, logits, axis):
    log_p = jax.nn.log_softmax(logits, axis=axis)
    return -jnp.sum(labels * log_p, axis=axis), (labels, log_p)


def _xent_bwd(axis, res, g):
    labels, log_p = res
    g = jnp.expand_dims(g, axis)
    return (-log_p * g).astype(labels.dtype), (jnp.exp(log_p) - labels) * g


softmax_xent_tf.defvjp(_xent_fwd, _xent_bwd)


@op(
    "SoftmaxCrossEntropyWithLogits",
    inputs=("labels", "logits"),
    same_dtype=True,
    jit=True,
)
def _softmax_xent(labels, logits, axis):
    _check("SoftmaxCrossEntropyWithLogits", K_FLOAT, logits)
    nd = np.ndim(logits)
    if nd == 0 or not -nd <= axis < nd:
        raise errors.invalid_argument(
            f"logits must be at least 1-D with `axis` ({axis}) inside it, got shape "
            f"{list(np.shape(logits))}.",
            "SoftmaxCrossEntropyWithLogits",
        )
    try:  # TF broadcasts the labels to the logits' shape
        labels = jnp.broadcast_to(labels, logits.shape)
    except ValueError:
        raise errors.invalid_argument(
            f"logits and labels must be broadcastable: logits_size="
            f"{list(np.shape(logits))} labels_size={list(np.shape(labels))}",
            "SoftmaxCrossEntropyWithLogits",
        ) from None
    return softmax_xent_tf(labels, logits, axis)


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """Cross entropy between `labels` (a distribution) and `softmax(logits)`.

    As TF, `labels` broadcast to the shape of `logits`.

    Differences from TensorFlow: gradients flow into `labels` too, as in TF2.
    """
    return _softmax_xent(labels, logits, _axis(axis))


def check_labels(xp, labels, n_classes, ignore_class=None):
    """TF's SparseSoftmaxCrossEntropyWithLogits check: labels in [0, n_classes)."""
    if np.dtype(labels.dtype).kind not in "iu":
        return  # the op refuses the dtype
    labels = checks.host(labels) if xp is np else labels
    bad = (labels < 0) | (labels >= n_classes)
    if ignore_class is not None:
        bad = bad & (labels != ignore_class)
    checks.require(
        xp,
        bad,
        "SparseSoftmaxCrossEntropyWithLogits",
        "Received a label value of {} which is outside the valid range of "
        f"[0, {n_classes}).",
        lambda xp, p: xp.ravel(labels)[p],
    )


@op(
    "SparseSoftmaxCrossEntropyWithLogits",
    inputs=("logits", "labels"),
    check=lambda xp, logits, labels: check_labels(xp, labels, logits.shape[-1]),
    jit=True,
)
def _sparse_softmax_xent(logits, labels):
    if np.dtype(labels.dtype) not in (np.int32, np.int64):
        raise errors.invalid_argument(
            f"Value for attr 'Tlabels' of {np.dtype(labels.dtype).name} is not in the "
            "list of allowed values: int32, int64. Class labels are integers; cast "
            "them with `jaxtape.cast(labels, jaxtape.int32)`.",
            "SparseSoftmaxCrossEntropyWithLogits",
        )
    _check("SparseSoftmaxCrossEntropyWithLogits", K_FLOAT, logits)
    if labels.shape != logits.shape[:-1]:
        raise ValueError(
            f"labels shape must equal logits shape without the last dimension; "
            f"received labels {labels.shape} and logits {logits.shape}."
        )
    logp = jax.nn.log_softmax(logits, axis=-1)
    idx = jnp.asarray(labels).astype(jnp.int32)[..., None]
    return -jnp.take_along_axis(logp, idx, axis=-1)[..., 0]


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Cross entropy between integer class `labels` and `softmax(logits)`."""
    return _sparse_softmax_xent(logits, labels)


@op("L2Loss", jit=True)
def l2_loss(t, name=None):
    """Computes `sum(t ** 2) / 2` (of a float tensor, as TF)."""
    _check("L2Loss", K_FLOAT, t)
    return jnp.sum(jnp.square(t)) / 2


@op("BiasAdd", same_dtype=True, jit=True)
def bias_add(value, bias, data_format=None, name=None):
    """Adds a 1-D `bias` along the channel dimension of `value` (rank >= 2).

    As TF, a bias of another rank or size, or of another dtype, raises
    `InvalidArgumentError`.
    """
    _check("BiasAdd", K_NUMBER, value)
    first = data_format is not None and data_format.startswith("NC")
    if np.ndim(value) < 2 or np.ndim(bias) != 1:
        raise errors.invalid_argument(
            f"Biases must be 1D and the input at least 2D: got bias shape "
            f"{list(np.shape(bias))} and input shape {list(np.shape(value))}.",
            "BiasAdd",
        )
    channels = value.shape[1 if first else -1]
    if bias.shape[0] != channels:
        raise errors.invalid_argument(
            "Must provide as many biases as the last dimension of the input "
            f"tensor: {list(np.shape(bias))} vs. {list(np.shape(value))}",
            "BiasAdd",
        )
    if first:
        return value + jnp.reshape(bias, (-1,) + (1,) * (value.ndim - 2))
    return value + bias


@op("Moments", inputs=("x",), jit=True)
def _moments(x, axes, keepdims):
    # TF's algorithm: float16 in float32; integers get integer means (the
    # variance from TF's int32/int64-only `squared_difference`).
    _check("SquaredDifference", K_SQUARED_DIFFERENCE, x)
    y = x.astype(np.float32) if x.dtype == np.float16 else x
    mean = _reduce_mean(y, axes, True)
    d = y - lax.stop_gradient(mean)
    var = _reduce_mean(d * jnp.conj(d) if jnp.iscomplexobj(d) else d * d, axes, True)
    if not keepdims:
        mean, var = jnp.squeeze(mean, axes), jnp.squeeze(var, axes)
    return mean.astype(x.dtype), var.astype(x.dtype)


def moments(x, axes, shift=None, keepdims=False, name=None):
    """Mean and variance of `x` over `axes`; returns `(mean, variance)`.

    As TF: integer inputs give integer (truncated) moments, float16 is
    computed in float32.
    """
    axes = _axis(axes)
    return _moments(x, axes if isinstance(axes, tuple) else (axes,), bool(keepdims))


def _conv_padding(padding, ndim, channels_first=False):
    """'SAME'/'VALID', or TF's explicit `[[0, 0], [lo, hi], ..., [0, 0]]` as
    spatial `(lo, hi)` pairs (the batch and channel pairs dropped)."""
    if isinstance(padding, str):
        padding = padding.upper()
        if padding not in ("SAME", "VALID"):
            raise ValueError(f"padding must be 'SAME' or 'VALID'; got {padding!r}.")
        return padding
    pads = np.asarray(padding).reshape(-1, 2)
    if len(pads) != ndim + 2:
        raise ValueError(
            f"Explicit padding needs {ndim + 2} [before, after] pairs, one per "
            f"dimension of the input (batch and channels [0, 0]); got {padding!r}."
        )
    pads = pads[2:] if channels_first else pads[1:-1]
    return tuple((int(a), int(b)) for a, b in pads)


def _tuple(v, n, channels_first=False):
    """Strides/dilations/ksize: an int, `n` ints, or one per input dimension."""
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    v = tuple(int(x) for x in v)
    if len(v) == n + 2:
        return v[2:] if channels_first else v[1:-1]
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError(
            f"Expected 1, {n} or {n + 2} values (an int, one per spatial "
            f"dimension, or one per input dimension); got {list(v)}."
        )
    return v


def _is_channels_first(data_format):
    return data_format is not None and data_format.startswith("NC")


@op("Conv2D", inputs=("input", "filters"), jit=True)
def _conv(input, filters, strides, padding, dilations, data_format: str):  # noqa: A002
    nd = filters.ndim - 2
    if not 1 <= nd <= 3:
        raise ValueError(
            f"`num_spatial_dims` must be 1, 2, or 3. Received: num_spatial_dims={nd}."
            f" A convolution's filters are 3-D, 4-D or 5-D; got shape "
            f"{list(filters.shape)}."
        )
    spatial = "DHW"[-nd:]
    lhs = ("N" + spatial + "C") if data_format.endswith("C") else ("NC" + spatial)
    dn = lax.conv_dimension_numbers(
        input.shape, filters.shape, (lhs, spatial + "IO", lhs)
    )
    sizes = [input.shape[lhs.index(d)] for d in spatial]
    span = [(k - 1) * d + 1 for k, d in zip(filters.shape[:nd], dilations)]
    pads = _window_pads(sizes, span, strides, padding)
    _check_window_fits("Conv2D", input.shape, sizes, span, pads, padding)
    groups = input.shape[lhs.index("C")] // filters.shape[-2]
    return lax.conv_general_dilated(
        input,
        filters,
        strides,
        pads,
        rhs_dilation=dilations,
        dimension_numbers=dn,
        feature_group_count=groups,
    )


def conv2d(
    input,
    filters,
    strides,
    padding,
    data_format="NHWC",
    dilations=None,  # noqa: A002
    name=None,
):
    """2-D convolution, NHWC input and HWIO filters, as TF's `tf.nn.conv2d`.

    `strides`, `dilations` and explicit `padding` lists have one entry per
    input dimension, in `data_format`'s order (or one per spatial dimension).
    A VALID filter span larger than the input raises `InvalidArgumentError`
    (TF's eager kernels raise it or return an empty or garbled tensor).

    Differences from TensorFlow:
      Inside `jaxtape.function` that error is still `InvalidArgumentError`
      (TF's graph construction raises `ValueError`).
    """
    if np.ndim(filters) != 4 or np.ndim(input) != 4:
        raise ValueError(
            f"conv2d needs a 4-D input and 4-D filters; got shapes "
            f"{np.shape(input)} and {np.shape(filters)}."
        )
    first = _is_channels_first(data_format)
    return _conv(
        input,
        filters,
        _tuple(strides, 2, first),
        _conv_padding(padding, 2, first),
        _tuple(dilations or 1, 2, first),
        data_format,
    )


def conv1d(
    input,
    filters,
    stride,
    padding,
    data_format="NWC",
    dilations=None,  # noqa: A002
    name=None,
):
    """1-D convolution, NWC input and WIO filters."""
    first = _is_channels_first(data_format)
    return _conv(
        input,
        filters,
        _tuple(stride, 1, first),
        _conv_padding(padding, 1, first),
        _tuple(dilations or 1, 1, first),
        data_format,
    )


def convolution(
    input,
    filters,
    strides=None,
    padding="VALID",
    data_format=None,  # noqa: A002
    dilations=None,
    name=None,
):
    """N-D convolution dispatching on the rank of `filters`."""
    nd = np.ndim(filters) - 2
    first = _is_channels_first(data_format)
    return _conv(
        input,
        filters,
        _tuple(strides or 1, nd, first),
        _conv_padding(padding, nd, first),
        _tuple(dilations or 1, nd, first),
        data_format or "N" + "DHW"[-nd:] + "C",
    )


def _window_pads(spatial, window, strides, padding):
    """Per spatial dimension `(low, high)` padding; TF's SAME rule for strings.

    `window` is the effective window (a dilated filter's span). SAME pads
    `max((out - 1) * stride + window - size, 0)` in all, the smaller half
    before, as TF does (and `lax.padtype_to_pads`).
    """
    if isinstance(padding, str):
        return tuple(
            (int(lo), int(hi))
            for lo, hi in lax.padtype_to_pads(spatial, window, strides, padding)
        )
    return tuple(padding)


def _check_window_fits(op_name, shape, spatial, window, pads, padding):
    """TF's error for a window larger than the (padded) input: no empty output."""
    for i, (size, w, (lo, hi)) in enumerate(zip(spatial, window, pads)):
        if size + lo + hi < w:
            raise errors.invalid_argument(
                f"Negative dimension size caused by subtracting {w} from "
                f"{size + lo + hi}: the window (effective size {w}) does not fit "
                f"in spatial dimension {i} of the input of shape {tuple(shape)} "
                f"with padding {padding!r}. Use padding='SAME', a smaller window "
                "or a larger input.",
                op_name,
            )


def _lowest(dtype):
    """The identity of `max` as a NumPy scalar: -inf, or the smallest integer.

    A NumPy (concrete) value, never a `jnp` one: `lax.reduce_window` picks its
    differentiable max/sum primitives only for a concrete identity init value;
    a traced one (a `jnp` constant inside `jit`, the compiled backward or
    `jaxtape.function`) selects the generic primitive, which has no derivative.
    """
    if jnp.issubdtype(dtype, jnp.floating):
        return np.array(-np.inf, dtype)
    return np.array(np.iinfo(dtype).min, dtype)


def _whole_tiles(x, window, pads, fill):
    """`x` padded by `pads` and cropped so its spatial dims are whole windows.

    For non-overlapping windows (`window == strides`): the trailing rows that
    no window covers are cropped (a negative high pad), as TF's VALID drops them.
    """
    config = [(0, 0, 0)]
    for size, w, (lo, hi) in zip(x.shape[1:-1], window, pads):
        config.append((lo, hi - (size + lo + hi) % w, 0))
    config.append((0, 0, 0))
    if all(c == (0, 0, 0) for c in config):
        return x
    return lax.pad(x, fill, config)


def _tiles(x, window):
    """The `(n, o1, w1, o2, w2, ..., c)` view of `x` (spatial dims whole windows)."""
    shape = [x.shape[0]]
    for size, w in zip(x.shape[1:-1], window):
        shape += [size // w, w]
    return x.reshape(shape + [x.shape[-1]])


def _tile_axes(nd):
    return tuple(range(2, 2 * nd + 1, 2))


def _windows_last(x, window):
    """The `(n, o1, o2, ..., c, w1 * w2 * ...)` view: one window per last row."""
    nd = len(window)
    y = _tiles(x, window)
    outer = tuple(range(1, 2 * nd, 2))
    y = y.transpose((0, *outer, 2 * nd + 1, *_tile_axes(nd)))
    return y.reshape(y.shape[: nd + 2] + (-1,))


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _tile_max(x, window):
    """Max over non-overlapping windows that tile `x`'s spatial dims exactly.

    Reshape-then-max: XLA's CPU gradient of `reduce_window` max is ~4x slower.
    """
    return jnp.max(_tiles(x, window), axis=_tile_axes(len(window)))


@_tile_max.defjvp
def _tile_max_jvp(window, primals, tangents):
    # TF's MaxPoolGrad gives each window's gradient to its FIRST maximum (in
    # row-major window order); `jnp.max`'s rule would split it among ties,
    # which are common (ReLU zeros, saturated pixels).
    return _tile_max_jvp_body(primals[0], tangents[0], window)


@functools.partial(jax.jit, static_argnums=2)
def _tile_max_jvp_body(x, t, window):
    # One jitted unit: a tape's first (op-by-op) replay compiles it once, not
    # each of its primitives; inside a compiled program it is inlined.
    xs = _windows_last(x, window)
    first = jnp.argmax(xs, axis=-1)[..., None]
    pick = lax.broadcasted_iota(first.dtype, xs.shape, xs.ndim - 1) == first
    ts = _windows_last(t, window)
    tangent = jnp.sum(jnp.where(pick, ts, jnp.zeros((), ts.dtype)), axis=-1)
    return _tile_max(x, window), tangent


def _window_counts(spatial, window, strides, pads):
    """How many input elements each output's window covers (padding excluded)."""
    counts = np.ones((), np.int64)
    for size, w, s, (lo, hi) in zip(spatial, window, strides, pads):
        start = np.arange((size + lo + hi - w) // s + 1) * s - lo
        per_dim = np.minimum(start + w, size) - np.maximum(start, 0)
        counts = np.multiply.outer(counts, per_dim)
    return counts


@op("MaxPool", inputs=("input",), jit=True)
def _max_pool(input, ksize, strides, padding):  # noqa: A002
    x = input
    pads = _window_pads(x.shape[1:-1], ksize, strides, padding)
    _check_window_fits("MaxPool", x.shape, x.shape[1:-1], ksize, pads, padding)
    if len(ksize) == 3:
        return _max_pool_every_tie(x, ksize, strides, pads)
    if ksize == strides:
        return _tile_max(_whole_tiles(x, ksize, pads, _lowest(x.dtype)), ksize)
    # Overlapping (or gapped) windows: XLA's reduce_window; its gradient
    # (select_and_scatter) also routes to each window's first maximum.
    return lax.reduce_window(
        x,
        _lowest(x.dtype),
        lax.max,
        (1, *ksize, 1),
        (1, *strides, 1),
        ((0, 0), *pads, (0, 0)),
    )


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3))
def _max_pool_every_tie(x, ksize, strides, pads):
    """3-D max pooling with TF's `MaxPool3DGrad`: unlike 1-D and 2-D pooling
    (the first maximum), EVERY element equal to its window's maximum gets that
    window's whole gradient (an all-zero window, after a ReLU, passes it to
    all of its elements)."""
    return _reduce_window_max(x, ksize, strides, pads)


def _reduce_window_max(x, ksize, strides, pads):
    return lax.reduce_window(
        x,
        _lowest(x.dtype),
        lax.max,
        (1, *ksize, 1),
        (1, *strides, 1),
        ((0, 0), *pads, (0, 0)),
    )


def _max_pool_every_tie_fwd(x, ksize, strides, pads):
    out = _reduce_window_max(x, ksize, strides, pads)
    return out, (x, out)


def _max_pool_every_tie_bwd(ksize, strides, pads, res, g):
    x, out = res
    xpad = jnp.pad(x, ((0, 0), *pads, (0, 0)), constant_values=_lowest(x.dtype))
    grad = jnp.zeros_like(xpad)
    for offset in itertools.product(*[range(k) for k in ksize]):
        # The element at `offset` of every window, all windows at once.
        at = (
            slice(None),
            *(
                slice(o, o + (n - 1) * s + 1, s)
                for o, n, s in zip(offset, out.shape[1:-1], strides)
            ),
            slice(None),
        )
        grad = grad.at[at].add(jnp.where(xpad[at] == out, g, 0).astype(g.dtype))
    crop = tuple(slice(lo, lo + n) for (lo, _), n in zip(pads, x.shape[1:-1]))
    return (grad[(slice(None), *crop, slice(None))],)


_max_pool_every_tie.defvjp(_max_pool_every_tie_fwd, _max_pool_every_tie_bwd)


@op("AvgPool", inputs=("input",), jit=True)
def _avg_pool(input, ksize, strides, padding):  # noqa: A002
    x = input
    spatial = x.shape[1:-1]
    pads = _window_pads(spatial, ksize, strides, padding)
    _check_window_fits("AvgPool", x.shape, spatial, ksize, pads, padding)
    zero = np.zeros((), x.dtype)  # concrete: see `_lowest`
    if ksize == strides:
        tiles = _tiles(_whole_tiles(x, ksize, pads, zero), ksize)
        total = jnp.sum(tiles, axis=_tile_axes(len(ksize)))
    else:
        total = lax.reduce_window(
            x,
            zero,
            lax.add,
            (1, *ksize, 1),
            (1, *strides, 1),
            ((0, 0), *pads, (0, 0)),
        )
    if all(lo == hi == 0 for lo, hi in pads):  # every window is full
        return total / np.array(math.prod(ksize), x.dtype)
    # TF averages over the window's part inside the input (padding excluded).
    counts = _window_counts(spatial, ksize, strides, pads)
    return total / counts.astype(x.dtype)[None, ..., None]


def _pool_args(input, ksize, strides, padding, nd, data_format, average=False):  # noqa: A002
    if data_format not in (None, "NHWC", "NWC", "NDHWC"):
        raise ValueError(
            f"Only channels-last data_format is supported; got {data_format!r}."
        )
    if average and not isinstance(padding, str):  # TF's AvgPool has no explicit pads
        raise TypeError(
            f"Expected string for argument 'padding' not {padding!r}. Average "
            "pooling takes padding='SAME' or 'VALID'; pad explicitly with "
            "`jaxtape.pad` first (the average then counts the padding)."
        )
    ksize, pads = _tuple(ksize, nd), _conv_padding(padding, nd)
    if not isinstance(pads, str):  # TF: no window may lie wholly in the padding
        sides = [("Top", "Bottom"), ("Left", "Right")][-nd:] if nd <= 2 else None
        for i, (k, pair) in enumerate(zip(ksize, pads)):
            for side, p in zip(sides[i] if sides else ("Left", "Right"), pair):
                if p >= k:
                    raise errors.invalid_argument(
                        f"{side} padding {p} needs to be smaller than the window "
                        f"size {k}.",
                        "MaxPool",
                    )
    return ksize, _tuple(strides, nd), pads


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """2-D max pooling over NHWC input.

    The gradient of each window goes to its first maximum (row-major), as TF's
    `MaxPoolGrad`. A VALID window larger than the input raises
    `InvalidArgumentError`, also inside `jaxtape.function` (TF's graph
    construction raises `ValueError` there).
    """
    return _max_pool(input, *_pool_args(input, ksize, strides, padding, 2, data_format))


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """2-D average pooling over NHWC input (padding excluded from the average).

    `padding` is 'SAME' or 'VALID' (explicit paddings raise TF's `TypeError`).
    """
    args = _pool_args(input, ksize, strides, padding, 2, data_format, average=True)
    return _avg_pool(input, *args)


def max_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """N-D max pooling (rank taken from `input`)."""
    nd = np.ndim(input) - 2
    return _max_pool(
        input, *_pool_args(input, ksize, strides, padding, nd, data_format)
    )


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """N-D average pooling (rank taken from `input`)."""
    nd = np.ndim(input) - 2
    args = _pool_args(input, ksize, strides, padding, nd, data_format, average=True)
    return _avg_pool(input, *args)


max_pool1d = max_pool
avg_pool1d = avg_pool


# -- fused layer kernels (Keras's Dense, Conv, BatchNormalization, LayerNormalization)
# Each is ONE recorded op (one tape node, one XLA computation). `act` is the
# pure jnp body of a built-in activation, or None; the convolution and the
# moments are the bodies of `_conv` and `_moments` above, not copies.
@op("Dense", inputs=("x", "kernel", "bias"), jit=True)
def fused_dense(x, kernel, bias, act):
    """`act(x @ kernel + bias)`."""
    y = jnp.matmul(x, kernel)
    if bias is not None:
        y = y + bias
    return y if act is None else act(y)


@op("DenseNoBias", inputs=("x", "kernel"), jit=True)
def fused_dense_no_bias(x, kernel, act):
    """`act(x @ kernel)`."""
    y = jnp.matmul(x, kernel)
    return y if act is None else act(y)


def _conv_layout(nd, channels_first):
    spatial = "DHW"[-nd:]
    return ("NC" + spatial) if channels_first else ("N" + spatial + "C")


@op("Conv", inputs=("x", "kernel", "bias"), jit=True)
def fused_conv(x, kernel, bias, strides, padding, dilation, channels_first, act):
    """`act(conv(x, kernel) + bias)`; `padding` 'SAME', 'VALID' or `(lo, hi)`s."""
    nd = kernel.ndim - 2
    y = _conv.__wrapped__(
        x, kernel, strides, padding, dilation, _conv_layout(nd, channels_first)
    )
    y = y + (bias.reshape((-1,) + (1,) * nd) if channels_first else bias)
    return y if act is None else act(y)


@op("ConvNoBias", inputs=("x", "kernel"), jit=True)
def fused_conv_no_bias(x, kernel, strides, padding, dilation, channels_first, act):
    """`act(conv(x, kernel))`."""
    nd = kernel.ndim - 2
    y = _conv.__wrapped__(
        x, kernel, strides, padding, dilation, _conv_layout(nd, channels_first)
    )
    return y if act is None else act(y)


def _normalize(x, mean, var, gamma, beta, epsilon):
    """`(x - mean) / sqrt(var + epsilon)`, then the optional scale and offset."""
    y = (x - mean) * lax.rsqrt(var + epsilon)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y.astype(x.dtype)


@op("BatchNormTrain", inputs=("x", "gamma", "beta"), jit=True)
def fused_batch_norm_train(x, gamma, beta, axes, epsilon):
    """Normalizes with the batch moments over `axes`; returns them too (squeezed)."""
    mean, var = _moments.__wrapped__(x, axes, True)
    y = _normalize(x, mean, var, gamma, beta, epsilon)
    return y, jnp.squeeze(mean, axes), jnp.squeeze(var, axes)


@op("BatchNormTrainMasked", inputs=("x", "mask", "gamma", "beta"), jit=True)
def fused_batch_norm_train_masked(x, mask, gamma, beta, axes, epsilon):
    """Keras's masked batch moments (`BatchNormalization._moments` with a
    mask one rank below `x`: its unmasked positions only, their count plus
    Keras's epsilon 1e-7), then the normalization; returns them too."""
    keep = jnp.broadcast_to(jnp.expand_dims(mask, -1), x.shape).astype(bool)
    count = jnp.sum(keep.astype(x.dtype), axes, keepdims=True) + 1e-7
    mean = jnp.sum(jnp.where(keep, x, 0), axes, keepdims=True) / count
    d = jnp.where(keep, x - mean, 0)
    var = jnp.sum(jnp.square(d), axes, keepdims=True) / count
    y = _normalize(x, mean, var, gamma, beta, epsilon)
    return y, jnp.squeeze(mean, axes), jnp.squeeze(var, axes)


@op("BatchNormInfer", inputs=("x", "mean", "var", "gamma", "beta"), jit=True)
def fused_batch_norm_infer(x, mean, var, gamma, beta, epsilon):
    """Normalizes with given (moving) moments."""
    return _normalize(x, mean, var, gamma, beta, epsilon)


@op("LayerNorm", inputs=("x", "gamma", "beta"), jit=True)
def fused_layer_norm(x, gamma, beta, axes, epsilon):
    """Normalizes each sample with its moments over `axes`."""
    mean, var = _moments.__wrapped__(x, axes, True)
    return _normalize(x, mean, var, gamma, beta, epsilon)
