"""Keras 3's `keras.ops.nn` (also `keras.ops.*`): activations, softmax,
one-hot, losses, normalization, convolution and pooling.

Formulas and defaults are Keras's (TensorFlow backend): `gelu` approximates
by default, `leaky_relu`'s slope is 0.2, probabilities are clipped to
`[epsilon, 1 - epsilon]` in the cross-entropies, and data is channels-last
unless `data_format` says otherwise. Bodies are pure jnp functions behind the
dispatcher.

Layer L5 (keras); imports `core` and this package.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax

from jaxtape._src.core import config
from jaxtape._src.keras.ops import dtypes as kd
from jaxtape._src.keras.ops import numpy as knp
from jaxtape._src.keras.ops._base import body, dtype_arg, float_of, name_public, tensor
from jaxtape._src.ops import kinks


def _float(x):
    x = tensor(x)
    d = float_of(knp._name(x))
    return x, d


# -- activations --
def _hard_sigmoid(x):
    return kinks.relu6(x + 3.0) / 6.0  # (Keras's TF form, TF's gradient)


def _sparse_plus(x):
    return jnp.where(x <= -1, 0.0, jnp.where(x >= 1, x, 0.25 * (x + 1) ** 2)).astype(
        x.dtype
    )


def _sparse_sigmoid(x):
    return jnp.where(x <= -1, 0.0, jnp.where(x >= 1, 1.0, 0.5 * (x + 1))).astype(
        x.dtype
    )


def _activation(name, fn, keep_dtype=False):
    @body(name)
    def _op(x, *, dtype):
        return fn(x.astype(dtype))

    _op.__name__ = f"_{name}"

    def public(x):
        x, d = _float(x)
        if keep_dtype:
            d = knp._name(x)
        return _op(x, dtype=d)

    return name_public(public, name, f"Keras 3's `keras.ops.{name}` activation.")


relu = _activation("relu", jax.nn.relu, keep_dtype=True)
relu6 = _activation("relu6", jax.nn.relu6, keep_dtype=True)
sigmoid = _activation("sigmoid", jax.nn.sigmoid)
softplus = _activation("softplus", jax.nn.softplus)
softsign = _activation("softsign", jax.nn.soft_sign)
silu = _activation("silu", jax.nn.silu)
swish = silu
log_sigmoid = _activation("log_sigmoid", jax.nn.log_sigmoid)
hard_sigmoid = _activation("hard_sigmoid", _hard_sigmoid)
hard_silu = _activation("hard_silu", lambda x: x * _hard_sigmoid(x))
hard_swish = hard_silu
selu = _activation("selu", kinks.selu)
tanh_shrink = _activation("tanh_shrink", lambda x: x - jnp.tanh(x))
hard_tanh = _activation("hard_tanh", lambda x: kinks.clip(x, -1.0, 1.0))
sparse_plus = _activation("sparse_plus", _sparse_plus)
sparse_sigmoid = _activation("sparse_sigmoid", _sparse_sigmoid)


@body("parametric_activation")
def _param_act(x, *, kind, a, b, dtype):
    x = x.astype(dtype)
    # (Keras's TF forms, so that the gradients at the kinks are TF's.)
    if kind == "leaky_relu":
        return kinks.leaky_relu(x, a)
    if kind == "elu":
        res = jax.nn.elu(x)
        return res if a == 1.0 else jnp.where(x > 0, res, a * res)
    if kind == "celu":
        return kinks.maximum(x, 0.0) + a * jnp.expm1(kinks.minimum(x, 0.0) / a)
    if kind == "gelu":
        return jax.nn.gelu(x, approximate=a)
    if kind == "hard_shrink":
        return jnp.where(kinks.abs(x) > a, x, jnp.zeros_like(x))
    if kind == "soft_shrink":
        return jnp.where(x > a, x - a, jnp.where(x < -a, x + a, jnp.zeros_like(x)))
    if kind == "threshold":
        return jnp.where(x > a, x, jnp.asarray(b, x.dtype))
    if kind == "squareplus":
        return (x + jnp.sqrt(jnp.square(x) + a)) / 2
    raise ValueError(kind)


def _param(kind, x, a, b=None):
    x, d = _float(x)
    return _param_act(x, kind=kind, a=a, b=b, dtype=d)


def leaky_relu(x, negative_slope=0.2):
    """Keras 3's `keras.ops.leaky_relu`: `x` if `x >= 0` else `negative_slope * x`."""
    return _param("leaky_relu", x, float(negative_slope))


def elu(x, alpha=1.0):
    """Keras 3's `keras.ops.elu`: `x` if `x > 0` else `alpha * (exp(x) - 1)`."""
    return _param("elu", x, float(alpha))


def celu(x, alpha=1.0):
    """Keras 3's `keras.ops.celu`: `max(x, 0) + min(0, alpha * (exp(x/alpha) - 1))`."""
    return _param("celu", x, float(alpha))


def gelu(x, approximate=True):
    """Keras 3's `keras.ops.gelu` (the tanh approximation by default)."""
    return _param("gelu", x, bool(approximate))


def hard_shrink(x, threshold=0.5):
    """Keras 3's `keras.ops.hard_shrink`: `x` where `|x| > threshold`, else 0."""
    return _param("hard_shrink", x, float(threshold))


def soft_shrink(x, threshold=0.5):
    """Keras 3's `keras.ops.soft_shrink`: `x` shrunk towards 0 by `threshold`."""
    return _param("soft_shrink", x, float(threshold))


def threshold(x, threshold, default_value):
    """Keras 3's `keras.ops.threshold`: `x` where `x > threshold`, else
    `default_value`."""
    return _param("threshold", x, float(threshold), float(default_value))


def squareplus(x, b=4):
    """Keras 3's `keras.ops.squareplus`: `(x + sqrt(x**2 + b)) / 2`."""
    return _param("squareplus", x, float(b))


@body("glu")
def _glu(x, *, axis, dtype):
    a, b = jnp.split(x.astype(dtype), 2, axis=axis)
    return a * jax.nn.sigmoid(b)


def glu(x, axis=-1):
    """Keras 3's `keras.ops.glu`: `a * sigmoid(b)` of `x`'s two halves."""
    x, d = _float(x)
    if np.shape(x)[axis] % 2:
        raise ValueError(
            "axis size must be divisible by 2. "
            f"Received: x.shape={np.shape(x)} with axis={axis}"
        )
    return _glu(x, axis=int(axis), dtype=d)


@body("softmax")
def _softmax(x, *, axis, log, dtype):
    x = x.astype(dtype)
    return jax.nn.log_softmax(x, axis=axis) if log else jax.nn.softmax(x, axis=axis)


def softmax(x, axis=-1):
    """Keras 3's `keras.ops.softmax` along `axis` (an int or a tuple)."""
    x, d = _float(x)
    return _softmax(x, axis=knp._axis(axis), log=False, dtype=d)


def log_softmax(x, axis=-1):
    """Keras 3's `keras.ops.log_softmax` along `axis`."""
    x, d = _float(x)
    return _softmax(x, axis=knp._axis(axis), log=True, dtype=d)


@body("sparsemax")
def _sparsemax(x, *, axis, dtype):
    # Keras's formula, kept for parity: its threshold sums the cumulative sums
    # over the support (the textbook sparsemax takes the one at k).
    x = x.astype(dtype)
    z = -jnp.sort(-x, axis=axis)
    cums = jnp.cumsum(z, axis=axis)
    shape = [1] * x.ndim
    shape[axis] = -1
    r = jnp.arange(1, x.shape[axis] + 1, dtype=dtype).reshape(shape)
    support = z - (cums - 1) / r > 0
    k = jnp.sum(support, axis=axis, keepdims=True, dtype=dtype)
    safe = jnp.where(support, cums, jnp.zeros_like(cums))
    tau = (jnp.sum(safe, axis=axis, keepdims=True) - 1) / k
    return kinks.maximum(x - tau, jnp.zeros_like(x))  # (TF's gradient at x == tau)


def sparsemax(x, axis=-1):
    """Keras 3's `keras.ops.sparsemax`, Keras's formula exactly.

    Differences from the textbook sparsemax (and the same in Keras): the
    threshold sums all cumulative sums in the support, so rows need not sum
    to 1.
    """
    x, d = _float(x)
    return _sparsemax(x, axis=int(axis), dtype=d)


# -- one-hot --
@body("one_hot", differentiable=False)
def _one_hot(x, *, num_classes, axis, dtype):
    return jax.nn.one_hot(x, num_classes, axis=axis, dtype=dtype)


def one_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    """Keras 3's `keras.ops.one_hot` (float32 by default; negative indices give
    zeros)."""
    if sparse:
        raise NotImplementedError("one_hot: `sparse=True` is not supported.")
    d = kd.jnp_dtype(dtype_arg(dtype, "float32"))
    return _one_hot(
        knp._int_indices(x), num_classes=int(num_classes), axis=int(axis), dtype=d
    )


def multi_hot(inputs, num_classes=None, axis=-1, dtype=None, sparse=False, **kwargs):
    """Keras 3's `keras.ops.multi_hot`: the union of one-hot rows (the last
    index axis is reduced; a 1-D input is one sample)."""
    if sparse:
        raise NotImplementedError("multi_hot: `sparse=True` is not supported.")
    if num_classes is None:
        num_classes = kwargs.pop("num_tokens", None)
    if kwargs:
        raise ValueError(f"Unexpected arguments: {sorted(kwargs)}")
    if num_classes is None:
        raise ValueError("Argument `num_classes` must be specified.")
    x = tensor(inputs)
    rank = np.ndim(x)
    reduction_axis = 1 if rank > 1 else 0
    oh = one_hot(x, num_classes, axis=axis, dtype=dtype)
    return knp.max(oh, axis=reduction_axis)


# -- losses --
@body("binary_crossentropy")
def _bce(target, output, *, from_logits, eps):
    if from_logits:  # TF's sigmoid_cross_entropy_with_logits, exactly
        cond = output >= 0
        relu_logits = jnp.where(cond, output, jnp.zeros_like(output))
        neg_abs_logits = jnp.where(cond, -output, output)
        return relu_logits - output * target + jnp.log1p(jnp.exp(neg_abs_logits))
    output = kinks.clip(output, eps, 1 - eps)
    return -(target * jnp.log(output) + (1 - target) * jnp.log(1 - output))


def _loss_inputs(target, output):
    output = tensor(output)
    d = knp._name(output)
    target = tensor(target, d)
    if knp._name(target) != d:
        target = knp.cast(target, d)
    if np.shape(target) != np.shape(output):
        raise ValueError(
            "Arguments `target` and `output` must have the same shape. "
            f"Received: target.shape={np.shape(target)}, "
            f"output.shape={np.shape(output)}"
        )
    return target, output


def binary_crossentropy(target, output, from_logits=False):
    """Keras 3's `keras.ops.binary_crossentropy`, element-wise (no reduction)."""
    target, output = _loss_inputs(target, output)
    return _bce(target, output, from_logits=bool(from_logits), eps=config.epsilon())


@body("categorical_crossentropy")
def _cce(target, output, *, from_logits, axis, eps):
    if from_logits:
        return -jnp.sum(target * jax.nn.log_softmax(output, axis=axis), axis=axis)
    output = output / jnp.sum(output, axis=axis, keepdims=True)
    output = jnp.clip(output, eps, 1 - eps)
    return -jnp.sum(target * jnp.log(output), axis=axis)


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Keras 3's `keras.ops.categorical_crossentropy` along `axis`."""
    target, output = _loss_inputs(target, output)
    if np.ndim(target) < 1:
        raise ValueError(
            "Arguments `target` and `output` must be at least rank 1. "
            f"Received: target.shape={np.shape(target)}, "
            f"output.shape={np.shape(output)}"
        )
    return _cce(
        target,
        output,
        from_logits=bool(from_logits),
        axis=int(axis),
        eps=config.epsilon(),
    )


@body("sparse_categorical_crossentropy")
def _scce(output, target, *, from_logits, axis, eps):
    if not from_logits:
        output = output / jnp.sum(output, axis=axis, keepdims=True)
        output = jnp.log(jnp.clip(output, eps, 1 - eps))
    logp = jax.nn.log_softmax(output, axis=axis)
    oh = jax.nn.one_hot(target, output.shape[axis], axis=axis, dtype=output.dtype)
    return -jnp.sum(oh * logp, axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Keras 3's `keras.ops.sparse_categorical_crossentropy`: integer targets."""
    output = tensor(output)
    target = knp._int_indices(target)
    if np.ndim(target) == np.ndim(output) and np.shape(target)[-1] == 1:
        target = knp.squeeze(target, -1)
    if np.shape(target) != np.shape(output)[:-1]:
        raise ValueError(
            "Arguments `target` and `output` must have the same shape up until"
            f" the last dimension: target.shape={np.shape(target)}, "
            f"output.shape={np.shape(output)}"
        )
    return _scce(
        output,
        target,
        from_logits=bool(from_logits),
        axis=int(axis),
        eps=config.epsilon(),
    )


# -- normalization --
@body("moments")
def _moments(x, *, axes, keepdims, dtype):
    x32 = x.astype(jnp.float32 if dtype in ("float16", "bfloat16") else dtype)
    mean = jnp.mean(x32, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(x32 - lax.stop_gradient(mean)), axis=axes, keepdims=True)
    if not keepdims:
        mean = jnp.squeeze(mean, axes)
        var = jnp.squeeze(var, axes)
    return [mean.astype(dtype), var.astype(dtype)]


def moments(x, axes, keepdims=False, synchronized=False):
    """Keras 3's `keras.ops.moments`: `(mean, variance)` over `axes`."""
    if synchronized:
        raise NotImplementedError("moments: `synchronized=True` is not supported.")
    x, d = _float(x)
    axes = knp._axis(axes)
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    return tuple(_moments(x, axes=axes, keepdims=bool(keepdims), dtype=d))


@body("batch_normalization")
def _batch_norm(x, mean, variance, offset, scale, *, axis, epsilon):
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]

    def b(v):
        return v.astype(x.dtype).reshape(shape)

    inv = lax.rsqrt(b(variance) + epsilon) * b(scale)
    return x * inv + (b(offset) - b(mean) * inv)


def batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):
    """Keras 3's `keras.ops.batch_normalization` with given statistics."""
    x, d = _float(x)
    n = np.shape(x)[axis]
    offset = np.zeros(n, kd.jnp_dtype(d)) if offset is None else tensor(offset, d)
    scale = np.ones(n, kd.jnp_dtype(d)) if scale is None else tensor(scale, d)
    return _batch_norm(
        knp.cast(x, d),
        tensor(mean, d),
        tensor(variance, d),
        offset,
        scale,
        axis=int(axis),
        epsilon=float(epsilon),
    )


@body("layer_normalization")
def _layer_norm(x, gamma, beta, *, axis, epsilon, dtype, compute):
    x = x.astype(compute)
    mean = jnp.mean(x, axis=axis, keepdims=True)
    var = jnp.var(x, axis=axis, keepdims=True)
    out = (x - mean) * lax.rsqrt(var + epsilon)
    shape = [1] * x.ndim
    for a in axis:
        shape[a] = x.shape[a]
    if gamma is not None:
        out = out * gamma.astype(compute).reshape(shape)
    if beta is not None:
        out = out + beta.astype(compute).reshape(shape)
    return out.astype(dtype)


def layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None, **kwargs):
    """Keras 3's `keras.ops.layer_normalization` (computed in at least float32)."""
    if kwargs.pop("rms_scaling", False):
        raise NotImplementedError(
            "layer_normalization: `rms_scaling` is deprecated "
            "and not supported; use `rms_normalization`."
        )
    if kwargs:
        raise ValueError(f"Unexpected arguments: {sorted(kwargs)}")
    x = tensor(x)
    d = knp._name(x)
    compute = kd.result_type(d, "float32")
    ax = knp._axis(axis)
    ax = tuple(sorted(a % np.ndim(x) for a in ((ax,) if isinstance(ax, int) else ax)))
    eps = config.epsilon() if epsilon is None else float(epsilon)
    return _layer_norm(
        x,
        None if gamma is None else tensor(gamma),
        None if beta is None else tensor(beta),
        axis=ax,
        epsilon=eps,
        dtype=d,
        compute=compute,
    )


@body("rms_normalization")
def _rms_norm(x, scale, *, axis, epsilon, dtype, compute):
    x = x.astype(compute)
    out = x * lax.rsqrt(jnp.mean(jnp.square(x), axis=axis, keepdims=True) + epsilon)
    if scale is not None:
        out = out * scale.astype(compute)
    return out.astype(dtype)


def rms_normalization(x, scale=None, axis=-1, epsilon=None):
    """Keras 3's `keras.ops.rms_normalization`: `x / rms(x) * scale`."""
    x = tensor(x)
    d = knp._name(x)
    eps = config.epsilon() if epsilon is None else float(epsilon)
    return _rms_norm(
        x,
        None if scale is None else tensor(scale),
        axis=knp._axis(axis),
        epsilon=eps,
        dtype=d,
        compute=kd.result_type(d, "float32"),
    )


@body("normalize")
def _normalize(x, *, axis, order, epsilon):
    if order == 2:
        return kinks.l2_normalize(x, axis, epsilon)
    norm = jnp.linalg.norm(x, ord=order, axis=axis, keepdims=True)
    return x / kinks.maximum(norm, epsilon)


def normalize(x, axis=-1, order=2, epsilon=None):
    """Keras 3's `keras.ops.normalize`: `x / max(norm(x), epsilon)`."""
    if not isinstance(order, int) or order < 1:
        raise ValueError(
            f"Argument `order` must be an int >= 1. Received: order={order}"
        )
    x = tensor(x)
    if np.ndim(x) == 0:
        x = knp.expand_dims(x, 0)
    eps = config.epsilon() if epsilon is None else float(epsilon)
    return _normalize(x, axis=knp._axis(axis), order=order, epsilon=eps)


@body("psnr")
def _psnr(x1, x2, *, max_val):
    mse = jnp.mean(jnp.square(x1 - x2))
    return 20 * jnp.log10(jnp.asarray(max_val, mse.dtype)) - 10 * jnp.log10(mse)


def psnr(x1, x2, max_val):
    """Keras 3's `keras.ops.psnr`: peak signal-to-noise ratio in dB."""
    x1, d = _float(x1)
    if np.shape(x1) != np.shape(tensor(x2)):
        raise ValueError(
            "Input shapes must be the same. Received: "
            f"x1.shape={np.shape(x1)}, x2.shape={np.shape(tensor(x2))}"
        )
    return _psnr(knp.cast(x1, d), knp.cast(x2, d), max_val=float(max_val))


@body("polar")
def _polar(r, t):
    return r * (jnp.cos(t) + 1j * jnp.sin(t))


def polar(abs_, angle):
    """Keras 3's `keras.ops.polar`: the complex number `abs_ * exp(i angle)`."""
    return _polar(tensor(abs_), tensor(angle))


# -- convolution and pooling --
def _data_format(data_format):
    df = data_format or config.image_data_format()
    if df not in ("channels_last", "channels_first"):
        raise ValueError(
            "The `data_format` argument must be one of {'channels_first', "
            f"'channels_last'}}. Received: data_format={data_format}"
        )
    return df


def _tuple(v, n, name):
    v = knp.static(v)
    if isinstance(v, int):
        return (v,) * n
    if len(v) != n:
        raise ValueError(f"`{name}` must have {n} values. Received: {name}={v}")
    return tuple(int(a) for a in v)


def _padding(padding):
    p = padding.lower()
    if p not in ("valid", "same"):
        raise ValueError(
            f"`padding` must be 'valid' or 'same'. Received: padding={padding}"
        )
    return p.upper()


def _dims(n, df):
    sp = "".join("DHW"[3 - n :])
    lhs = "N" + sp + "C" if df == "channels_last" else "NC" + sp
    return (lhs, sp + "IO", lhs)


@body("conv")
def _conv(x, k, *, strides, padding, dims, dilation, groups, dtype):
    return lax.conv_general_dilated(
        x.astype(dtype),
        k.astype(dtype),
        strides,
        padding,
        rhs_dilation=dilation,
        dimension_numbers=dims,
        feature_group_count=groups,
    )


def _conv_args(inputs, kernel, strides, padding, data_format, dilation_rate):
    x = tensor(inputs)
    k = tensor(kernel)
    n = np.ndim(x) - 2
    df = _data_format(data_format)
    d = kd.result_type(knp._name(x), knp._name(k))
    return (
        x,
        k,
        n,
        df,
        d,
        dict(
            strides=_tuple(strides, n, "strides"),
            padding=_padding(padding),
            dims=_dims(n, df),
            dilation=_tuple(dilation_rate, n, "dilation_rate"),
            dtype=d,
        ),
    )


def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """Keras 3's `keras.ops.conv` (1-3 spatial dims; kernel
    `(*spatial, in_channels / groups, out_channels)`)."""
    x, k, n, df, d, kw = _conv_args(
        inputs, kernel, strides, padding, data_format, dilation_rate
    )
    in_ch = np.shape(x)[-1 if df == "channels_last" else 1]
    kin = np.shape(k)[-2]
    if in_ch % kin:
        raise ValueError(
            "The number of input channels must be evenly divisible by kernel's "
            f"in_channels. Received input channels {in_ch} and kernel in_channels "
            f"{kin}. "
        )
    return _conv(x, k, groups=in_ch // kin, **kw)


def depthwise_conv(
    inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1
):
    """Keras 3's `keras.ops.depthwise_conv` (kernel
    `(*spatial, in_channels, multiplier)`)."""
    x, k, n, df, d, kw = _conv_args(
        inputs, kernel, strides, padding, data_format, dilation_rate
    )
    shape = np.shape(k)
    k = knp.reshape(k, (*shape[:-2], 1, shape[-2] * shape[-1]))
    return _conv(x, k, groups=shape[-2], **kw)


def separable_conv(
    inputs,
    depthwise_kernel,
    pointwise_kernel,
    strides=1,
    padding="valid",
    data_format=None,
    dilation_rate=1,
):
    """Keras 3's `keras.ops.separable_conv`: depthwise, then a 1x1 conv."""
    y = depthwise_conv(
        inputs, depthwise_kernel, strides, padding, data_format, dilation_rate
    )
    return conv(y, pointwise_kernel, 1, "valid", data_format, 1)


@body("conv_transpose")
def _conv_transpose(x, k, *, strides, padding, dims, dilation, dtype):
    return lax.conv_transpose(
        x.astype(dtype),
        k.astype(dtype),
        strides,
        padding,
        rhs_dilation=dilation,
        dimension_numbers=dims,
        transpose_kernel=True,
    )


def conv_transpose(
    inputs,
    kernel,
    strides=1,
    padding="valid",
    output_padding=None,
    data_format=None,
    dilation_rate=1,
):
    """Keras 3's `keras.ops.conv_transpose` (kernel
    `(*spatial, out_channels, in_channels)`).

    Differences from Keras: `output_padding` raises `NotImplementedError`.
    """
    if output_padding is not None:
        raise NotImplementedError("conv_transpose: `output_padding` is not supported.")
    x, k, n, df, d, kw = _conv_args(
        inputs, kernel, strides, padding, data_format, dilation_rate
    )
    return _conv_transpose(x, k, **kw)


@body("pool")
def _pool(x, *, kind, window, strides, padding):
    dt = np.dtype(x.dtype)
    if kind == "max":
        init = -np.inf if dt.kind == "f" else np.iinfo(dt).min
        return lax.reduce_window(
            x, np.asarray(init, dt), lax.max, window, strides, padding
        )
    zero = np.asarray(0, dt)
    total = lax.reduce_window(x, zero, lax.add, window, strides, padding)
    ones = np.ones(x.shape, dt)  # counts only the elements inside the input
    count = lax.reduce_window(ones, zero, lax.add, window, strides, padding)
    return total / count


def _pool_call(kind, inputs, pool_size, strides, padding, data_format):
    x = tensor(inputs)
    n = np.ndim(x) - 2
    df = _data_format(data_format)
    size = _tuple(pool_size, n, "pool_size")
    st = size if strides is None else _tuple(strides, n, "strides")
    if df == "channels_last":
        window, stride = (1, *size, 1), (1, *st, 1)
    else:
        window, stride = (1, 1, *size), (1, 1, *st)
    return _pool(x, kind=kind, window=window, strides=stride, padding=_padding(padding))


def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """Keras 3's `keras.ops.max_pool` (strides default to `pool_size`)."""
    return _pool_call("max", inputs, pool_size, strides, padding, data_format)


def average_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """Keras 3's `keras.ops.average_pool` ('same' padding averages only the
    elements inside the input, as TF's)."""
    return _pool_call("avg", inputs, pool_size, strides, padding, data_format)


@body("depth_to_space")
def _depth_to_space(x, *, block, channels_last, inverse):
    if not channels_last:
        x = jnp.transpose(x, (0, 2, 3, 1))
    n, h, w, c = x.shape
    b = block
    if inverse:
        x = x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5)
        x = x.reshape(n, h // b, w // b, b * b * c)
    else:
        x = x.reshape(n, h, w, b, b, c // (b * b)).transpose(0, 1, 3, 2, 4, 5)
        x = x.reshape(n, h * b, w * b, c // (b * b))
    return x if channels_last else jnp.transpose(x, (0, 3, 1, 2))


def depth_to_space(x, block_size, data_format="channels_last"):
    """Keras 3's `keras.ops.depth_to_space` (4-D inputs)."""
    return _depth_to_space(
        tensor(x),
        block=int(block_size),
        channels_last=_data_format(data_format) == "channels_last",
        inverse=False,
    )


def space_to_depth(x, block_size, data_format="channels_last"):
    """Keras 3's `keras.ops.space_to_depth` (4-D inputs)."""
    return _depth_to_space(
        tensor(x),
        block=int(block_size),
        channels_last=_data_format(data_format) == "channels_last",
        inverse=True,
    )


@body("dot_product_attention")
def _attention(q, k, v, bias, mask, *, scale, is_causal, dtype):
    q, k, v = q.astype(dtype), k.astype(dtype), v.astype(dtype)
    logits = jnp.einsum("BTNH,BSNH->BNTS", q, k) * scale
    if bias is not None:
        logits = logits + bias.astype(dtype)
    big_neg = jnp.finfo(dtype).min
    if mask is not None:
        logits = jnp.where(mask.astype(bool), logits, big_neg)
    if is_causal:
        t, s = logits.shape[-2:]
        causal = jnp.tril(jnp.ones((t, s), bool))
        logits = jnp.where(causal, logits, big_neg)
    probs = jax.nn.softmax(logits.astype(jnp.float32), axis=-1).astype(dtype)
    return jnp.einsum("BNTS,BSNH->BTNH", probs, v)


def dot_product_attention(
    query,
    key,
    value,
    bias=None,
    mask=None,
    scale=None,
    is_causal=False,
    flash_attention=None,
    attn_logits_soft_cap=None,
):
    """Keras 3's `keras.ops.dot_product_attention` (`(B, T, N, H)` inputs).

    Differences from Keras: `flash_attention=True` and `attn_logits_soft_cap`
    raise `NotImplementedError`.
    """
    if flash_attention:
        raise NotImplementedError(
            "dot_product_attention: `flash_attention=True` is not supported."
        )
    if attn_logits_soft_cap is not None:
        raise NotImplementedError(
            "dot_product_attention: `attn_logits_soft_cap` is not supported."
        )
    q = tensor(query)
    d = kd.result_type(knp._name(q), knp._name(tensor(key)), knp._name(tensor(value)))
    h = np.shape(q)[-1]
    s = 1.0 / float(np.sqrt(h)) if scale is None else float(scale)
    return _attention(
        q,
        tensor(key),
        tensor(value),
        None if bias is None else tensor(bias),
        None if mask is None else tensor(mask),
        scale=s,
        is_causal=bool(is_causal),
        dtype=d,
    )


@body("adaptive_pool")
def _adaptive_pool(x, *, kind, out, axes):
    for a, o in zip(axes, out):
        n = x.shape[a]
        mask = np.zeros((o, n), bool)
        for i in range(o):  # PyTorch's windows: [floor(i n / o), ceil((i+1) n / o))
            mask[i, (i * n) // o : -(-((i + 1) * n) // o)] = True
        xm = jnp.moveaxis(x, a, -1)
        if kind == "avg":
            w = (mask / mask.sum(axis=1, keepdims=True)).T.astype(x.dtype)
            y = xm @ w
        else:
            low = jnp.asarray(
                -jnp.inf
                if jnp.issubdtype(x.dtype, jnp.floating)
                else jnp.iinfo(x.dtype).min,
                x.dtype,
            )
            win = jnp.where(mask, xm[..., None, :], low)
            if len(axes) == 3:  # TF's MaxPool3DGrad: each tied maximum, in full
                top = lax.stop_gradient(jnp.max(win, -1, keepdims=True))
                tied = jnp.where(win == top, win - lax.stop_gradient(win), 0)
                y = top[..., 0] + jnp.sum(tied, -1, dtype=win.dtype)
            else:  # TF's MaxPoolGrad: a tie's first maximum
                first = jnp.argmax(win, -1)[..., None]
                y = jnp.take_along_axis(win, first, -1)[..., 0]
        x = jnp.moveaxis(y, -1, a)
    return x


def _adaptive(kind, inputs, output_size, data_format):
    x = tensor(inputs)
    n = np.ndim(x) - 2
    if n not in (1, 2, 3):
        raise ValueError(
            f"adaptive pooling takes 3D, 4D or 5D inputs. Received: "
            f"inputs.shape={np.shape(x)}"
        )
    out = _tuple(output_size, n, "output_size")
    last = _data_format(data_format) == "channels_last"
    axes = tuple(range(1, n + 1)) if last else tuple(range(2, n + 2))
    return _adaptive_pool(x, kind=kind, out=out, axes=axes)


def adaptive_average_pool(inputs, output_size, data_format=None):
    """Keras 3's `keras.ops.adaptive_average_pool`: averages over PyTorch-style
    adaptive windows to `output_size`."""
    return _adaptive("avg", inputs, output_size, data_format)


def adaptive_max_pool(inputs, output_size, data_format=None):
    """Keras 3's `keras.ops.adaptive_max_pool`: maxima over PyTorch-style
    adaptive windows to `output_size`."""
    return _adaptive("max", inputs, output_size, data_format)


def _pair(v, name):
    return _tuple(v, 2, name)


def _patch_index(size, k, d, p, s):
    n = (size + 2 * p - d * (k - 1) - 1) // s + 1
    return n, (np.arange(n) * s)[:, None] + np.arange(k)[None, :] * d


@body("unfold")
def _unfold(x, *, k, d, p, s):
    n, c, h, w = x.shape
    x = jnp.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    nh, rows = _patch_index(h, k[0], d[0], p[0], s[0])
    nw, cols = _patch_index(w, k[1], d[1], p[1], s[1])
    patches = x[:, :, rows[:, :, None, None], cols[None, None, :, :]]
    patches = jnp.transpose(patches, (0, 1, 3, 5, 2, 4))  # N, C, kh, kw, nh, nw
    return patches.reshape(n, c * k[0] * k[1], nh * nw)


def unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """Keras 3's `keras.ops.unfold`: sliding `(C * kH * kW, L)` blocks of an
    NCHW batch (PyTorch's `unfold`)."""
    x = tensor(x)
    if np.ndim(x) != 4:
        raise ValueError(f"Input must be a 4D tensor. Received: x.shape={np.shape(x)}")
    return _unfold(
        x,
        k=_pair(kernel_size, "kernel_size"),
        d=_pair(dilation, "dilation"),
        p=_pair(padding, "padding"),
        s=_pair(stride, "stride"),
    )


@body("fold")
def _fold(x, *, out, k, d, p, s):
    n, ckk, _ = x.shape
    c = ckk // (k[0] * k[1])
    nh, rows = _patch_index(out[0], k[0], d[0], p[0], s[0])
    nw, cols = _patch_index(out[1], k[1], d[1], p[1], s[1])
    blocks = x.reshape(n, c, k[0], k[1], nh, nw).transpose(0, 1, 4, 2, 5, 3)
    canvas = jnp.zeros((n, c, out[0] + 2 * p[0], out[1] + 2 * p[1]), x.dtype)
    canvas = canvas.at[:, :, rows[:, :, None, None], cols[None, None, :, :]].add(blocks)
    return canvas[:, :, p[0] : p[0] + out[0], p[1] : p[1] + out[1]]


def fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Keras 3's `keras.ops.fold`: sums `unfold`'s blocks back into an NCHW
    batch of `output_size` (PyTorch's `fold`)."""
    x = tensor(x)
    if np.ndim(x) != 3:
        raise ValueError(f"Input must be a 3D tensor. Received: x.shape={np.shape(x)}")
    return _fold(
        x,
        out=_pair(output_size, "output_size"),
        k=_pair(kernel_size, "kernel_size"),
        d=_pair(dilation, "dilation"),
        p=_pair(padding, "padding"),
        s=_pair(stride, "stride"),
    )


@body("ctc_loss")
def _ctc_loss(target, output, target_length, output_length, *, mask_index):
    t_pad = (
        jnp.arange(target.shape[1], dtype=jnp.int32)[None, :] >= target_length[:, None]
    ).astype(output.dtype)
    o_pad = (
        jnp.arange(output.shape[1], dtype=jnp.int32)[None, :] >= output_length[:, None]
    ).astype(output.dtype)
    # (optax mixes its float64 one-hots into float32 logits: promote as NumPy.)
    with jax.numpy_dtype_promotion("standard"):
        loss = optax.ctc_loss(output, o_pad, target, t_pad, blank_id=mask_index)
    return loss.astype(output.dtype)


def ctc_loss(target, output, target_length, output_length, mask_index=0):
    """Keras 3's `keras.ops.ctc_loss`: per-sample CTC negative log-likelihood
    of `target` (batch, max_label) under `output` logits (batch, time, classes)."""
    out = tensor(output)
    d = kd.result_type(knp._name(out), "float32")
    return _ctc_loss(
        knp.cast(target, "int32"),
        knp.cast(out, d),
        knp.cast(target_length, "int32"),
        knp.cast(output_length, "int32"),
        mask_index=int(mask_index),
    )


@body("ctc_greedy_decode", differentiable=False)
def _ctc_greedy(x, lengths, *, merge_repeated, blank):
    b, t, _ = x.shape
    k = jnp.argmax(x, axis=-1).astype(jnp.int32)
    valid = jnp.arange(t, dtype=jnp.int32)[None, :] < lengths[:, None]
    prev = jnp.concatenate([jnp.full((b, 1), -1, jnp.int32), k[:, :-1]], axis=1)
    keep = valid & (k != blank)
    if merge_repeated:
        keep = keep & (k != prev)
    pos = jnp.where(keep, jnp.cumsum(keep, axis=1, dtype=jnp.int32) - 1, t)
    rows = jnp.broadcast_to(jnp.arange(b, dtype=jnp.int32)[:, None], (b, t))
    decoded = jnp.full((b, t), -1, jnp.int32).at[rows, pos].set(k, mode="drop")
    scores = -jnp.sum(jnp.where(valid, jnp.max(x, axis=-1), 0), axis=1)
    return [decoded[None], scores[:, None]]


def ctc_decode(
    inputs,
    sequence_lengths,
    strategy="greedy",
    beam_width=100,
    top_paths=1,
    merge_repeated=True,
    mask_index=0,
):
    """Keras 3's `keras.ops.ctc_decode`: `(decoded, scores)`, `decoded` of shape
    `(top_paths, batch, steps)` padded with -1 (TF's greedy decoder).

    Differences from Keras: `strategy="beam_search"` raises
    `NotImplementedError`.
    """
    if strategy == "beam_search":
        raise NotImplementedError(
            "ctc_decode: `strategy='beam_search'` is not supported; use 'greedy'."
        )
    if strategy != "greedy":
        raise ValueError(
            f"Invalid strategy {strategy}. Supported values are 'greedy' and "
            "'beam_search'."
        )
    del beam_width, top_paths  # beam search only
    x = tensor(inputs)
    x = knp.cast(x, kd.result_type(knp._name(x), "float32"))
    n = np.shape(x)[-1]
    blank = n - 1 if mask_index is None else int(mask_index) % n
    return tuple(
        _ctc_greedy(
            x,
            knp.cast(sequence_lengths, "int32"),
            merge_repeated=bool(merge_repeated),
            blank=blank,
        )
    )
