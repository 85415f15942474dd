"""Colour of `tf.image`: colour-space conversions, brightness/contrast/gamma/
hue/saturation adjustments, standardization and the image-quality metrics
(PSNR, SSIM, MS-SSIM). Layer L1.

Where TF's Python composes other ops (`adjust_brightness`, `adjust_gamma`,
`rgb_to_grayscale`, the YIQ/YUV conversions, `psnr`) this module composes
jaxtape's; where TF calls a kernel (`AdjustContrastv2`, `AdjustHue`,
`AdjustSaturation`, `RGBToHSV`, `HSVToRGB`) a pure jnp body follows the
kernel's arithmetic. Integer images go through `convert_image_dtype` as in TF.

Differences from TensorFlow (all ops here): `adjust_contrast`,
`adjust_hue`, `adjust_saturation` and `hsv_to_rgb` have gradients (TF
registers none, or a None gradient); float16 images work in the adjust ops
(TF has no CPU kernel for them).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.core import dtypes, errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import array_ops, math_ops
from jaxtape._src.ops.creation_ops import convert_to_tensor
from jaxtape._src.ops.image_ops import (
    _check_at_least_3d,
    _dims_of,
    _fused,
    _image,
    _np_dtype,
    _tf_shape,
    convert_image_dtype,
)

_HALF_OR_FLOAT = (np.dtype(np.float16), np.dtype(np.float32))


def _to_float(image: Tensor) -> Tensor:
    """TF's `flt_image`: float16/float32 as they are, others converted."""
    if _np_dtype(image) in _HALF_OR_FLOAT:
        return image
    return convert_image_dtype(image, dtypes.float32)


# -- grayscale ----------------------------------------------------------------------
def rgb_to_grayscale(images, name=None):
    """Luma `0.2989 R + 0.5870 G + 0.1140 B`, keeping a last axis of size 1 and
    the input dtype (integers through `convert_image_dtype`).

    >>> jaxtape.image.rgb_to_grayscale(jaxtape.constant([[[255, 0, 0]]], jaxtape.uint8))
    <jaxtape.Tensor: shape=(1, 1, 1), dtype=uint8, numpy=array([[[76]]], dtype=uint8)>
    """
    images = _image(images)
    orig = images.dtype
    flt = convert_image_dtype(images, dtypes.float32)
    weights = convert_to_tensor(np.asarray([0.2989, 0.5870, 0.1140], np.float32))
    gray = math_ops.tensordot(flt, weights, [[-1], [-1]])
    return convert_image_dtype(array_ops.expand_dims(gray, -1), orig)


def grayscale_to_rgb(images, name=None):
    """Repeats a grayscale image's single channel three times."""
    images = _image(images)
    shape = _dims_of(images)
    if len(shape) < 2:
        raise ValueError(
            f"A grayscale image (shape {_tf_shape(shape)}) must be at least "
            "two-dimensional."
        )
    if shape[-1] != 1:
        raise ValueError("Last dimension of a grayscale image should be size 1.")
    return array_ops.tile(images, [1] * (len(shape) - 1) + [3])


# -- HSV ----------------------------------------------------------------------------
def _check_rgb_float(images: Tensor, op_name: str) -> None:
    dt = _np_dtype(images)
    if dt.kind != "f" and dt != jnp.bfloat16:
        raise errors.invalid_argument(
            f"Value for attr 'T' of {dt.name} is not in the list of allowed values: "
            "half, bfloat16, float, double. Convert the image first with "
            "`jaxtape.image.convert_image_dtype`.",
            op_name,
        )
    shape = _dims_of(images)
    if not shape or shape[-1] != 3:
        raise errors.FailedPreconditionError(
            None,
            op_name,
            f"input must have 3 channels but input only has "
            f"{shape[-1] if shape else 0} channels. [Op:{op_name}]",
        )


def _hsv(r, g, b):
    """TF's `RGBToHSV` kernel arithmetic."""
    v = jnp.maximum(jnp.maximum(r, g), b)
    rng = v - jnp.minimum(jnp.minimum(r, g), b)
    s = jnp.where(v > 0, rng / jnp.where(v > 0, v, 1), 0)
    norm = 1 / (6 * jnp.where(rng > 0, rng, 1))
    h = jnp.where(
        r == v,
        norm * (g - b),
        jnp.where(g == v, norm * (b - r) + 2 / 6, norm * (r - g) + 4 / 6),
    )
    h = jnp.where(rng > 0, h, 0)
    h = jnp.where(h < 0, h + 1, h)
    return h, s, v


@op("RGBToHSV", inputs=("images",))
@_fused(1)
def _rgb_to_hsv(images):
    h, s, v = _hsv(images[..., 0], images[..., 1], images[..., 2])
    return jnp.stack([h, s, v], axis=-1).astype(images.dtype)


def rgb_to_hsv(images, name=None):
    """RGB (floats in [0, 1]) to HSV, all channels in [0, 1]."""
    images = _image(images)
    _check_rgb_float(images, "RGBToHSV")
    return _rgb_to_hsv(images)


def _rgb(h, s, v):
    """TF's `HSVToRGB` kernel arithmetic."""
    dh = h * 6
    dr = jnp.clip(jnp.abs(dh - 3) - 1, 0, 1)
    dg = jnp.clip(-jnp.abs(dh - 2) + 2, 0, 1)
    db = jnp.clip(-jnp.abs(dh - 4) + 2, 0, 1)
    one_s = 1 - s
    return (one_s + s * dr) * v, (one_s + s * dg) * v, (one_s + s * db) * v


@op("HSVToRGB", inputs=("images",))
@_fused(1)
def _hsv_to_rgb(images):
    r, g, b = _rgb(images[..., 0], images[..., 1], images[..., 2])
    return jnp.stack([r, g, b], axis=-1).astype(images.dtype)


def hsv_to_rgb(images, name=None):
    """HSV (all channels in [0, 1]) to RGB."""
    images = _image(images)
    _check_rgb_float(images, "HSVToRGB")
    return _hsv_to_rgb(images)


# -- YIQ / YUV ----------------------------------------------------------------------
_RGB_TO_YIQ = [
    [0.299, 0.59590059, 0.2115],
    [0.587, -0.27455667, -0.52273617],
    [0.114, -0.32134392, 0.31119955],
]
_YIQ_TO_RGB = [
    [1, 1, 1],
    [0.95598634, -0.27201283, -1.10674021],
    [0.6208248, -0.64720424, 1.70423049],
]
_RGB_TO_YUV = [
    [0.299, -0.14714119, 0.61497538],
    [0.587, -0.28886916, -0.51496512],
    [0.114, 0.43601035, -0.10001026],
]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def _colour_matrix(images, kernel):
    images = _image(images)
    dt = _np_dtype(images)
    if dt.kind not in "fc" and dt != jnp.bfloat16:
        raise TypeError(
            f"Cannot convert {kernel} to EagerTensor of dtype {dt.name}: the "
            "colour matrix needs a float image. Convert it first with "
            "`jaxtape.image.convert_image_dtype`."
        )
    k = convert_to_tensor(np.asarray(kernel, dt))
    return math_ops.tensordot(images, k, [[len(_dims_of(images)) - 1], [0]])


def rgb_to_yiq(images):
    """RGB to YIQ (a 3x3 matrix on the last axis)."""
    return _colour_matrix(images, _RGB_TO_YIQ)


def yiq_to_rgb(images):
    """YIQ to RGB (a 3x3 matrix on the last axis)."""
    return _colour_matrix(images, _YIQ_TO_RGB)


def rgb_to_yuv(images):
    """RGB to YUV (a 3x3 matrix on the last axis)."""
    return _colour_matrix(images, _RGB_TO_YUV)


def yuv_to_rgb(images):
    """YUV to RGB (a 3x3 matrix on the last axis)."""
    return _colour_matrix(images, _YUV_TO_RGB)


# -- adjustments --------------------------------------------------------------------
def adjust_brightness(image, delta):
    """Adds `delta` to an image (as floats in [0, 1] for integer images)."""
    image = _image(image)
    orig = image.dtype
    flt = _to_float(image)
    adjusted = math_ops.add(flt, math_ops.cast(delta, flt.dtype))
    return convert_image_dtype(adjusted, orig, saturate=True)


@op("AdjustContrastv2", inputs=("images", "contrast_factor"))
@_fused(2)
def _adjust_contrast(images, contrast_factor):
    x = images.astype(jnp.float32)
    mean = jnp.mean(x, axis=(-3, -2), keepdims=True)
    factor = contrast_factor.astype(jnp.float32)
    return ((x - mean) * factor + mean).astype(images.dtype)


def adjust_contrast(images, contrast_factor):
    """`(x - mean) * contrast_factor + mean`, per image and channel."""
    images = _image(images)
    orig = images.dtype
    flt = _to_float(images)
    if len(_dims_of(flt)) < 3:
        raise errors.invalid_argument(
            f"input must be at least 3-D, got shape{list(_dims_of(flt))}",
            "AdjustContrastv2",
        )
    factor = math_ops.cast(contrast_factor, dtypes.float32)
    if len(_dims_of(factor)) != 0:
        raise errors.invalid_argument(
            f"contrast_factor must be scalar: {_tf_shape(_dims_of(factor))}",
            "AdjustContrastv2",
        )
    return convert_image_dtype(_adjust_contrast(flt, factor), orig, saturate=True)


def adjust_gamma(image, gamma=1, gain=1):
    """`gain * image ** gamma` (as floats in [0, 1] for integer images)."""
    image = _image(image)
    orig = image.dtype
    flt = _to_float(image)
    g = to_value(gamma)
    try:
        negative = bool(np.any(np.asarray(g) < 0))
    except Exception:  # noqa: BLE001 - traced: TF's check runs later; skipped
        negative = False
    if negative:
        if isinstance(gamma, Tensor):
            raise errors.invalid_argument(
                "Gamma should be a non-negative real number.", "Assert"
            )
        raise ValueError("Gamma should be a non-negative real number.")
    adjusted = math_ops.multiply(gain, math_ops.pow(flt, gamma))
    return convert_image_dtype(adjusted, orig, saturate=True)


def _hue_shift(r, g, b, delta):
    """TF's `AdjustHue` kernel: hue in [0, 6) between the min and max channel."""
    r_lt_g = r < g
    # (v_max, v_mid, v_min, category) for each ordering, as TF's branches.
    cases = [
        (r_lt_g & (b < r), (g, r, b, 1)),
        (r_lt_g & (b > g), (b, g, r, 3)),
        (r_lt_g, (g, b, r, 2)),
        (~r_lt_g & (b < g), (r, g, b, 0)),
        (~r_lt_g & (b > r), (b, r, g, 4)),
    ]
    v_max, v_mid, v_min, cat = r, b, g, jnp.full_like(r, 5)
    for cond, (a, m, n, c) in reversed(cases):
        v_max = jnp.where(cond, a, v_max)
        v_mid = jnp.where(cond, m, v_mid)
        v_min = jnp.where(cond, n, v_min)
        cat = jnp.where(cond, c, cat)
    span = v_max - v_min
    ratio = (v_mid - v_min) / jnp.where(span == 0, 1, span)
    even = jnp.mod(cat, 2) == 0
    h = jnp.where(span == 0, 0, cat + jnp.where(even, ratio, 1 - ratio))
    h = jnp.mod(h + delta * 6, 6)
    h = jnp.where(h >= 6, 0, h)
    cat = jnp.floor(h)
    ratio = h - cat
    ratio = jnp.where(jnp.mod(cat, 2) == 0, ratio, 1 - ratio)
    mid = v_min + ratio * span
    table = [
        (v_max, mid, v_min),
        (mid, v_max, v_min),
        (v_min, v_max, mid),
        (v_min, mid, v_max),
        (mid, v_min, v_max),
    ]
    out_r, out_g, out_b = v_max, v_min, mid  # category 5
    for c, (tr, tg, tb) in reversed(list(enumerate(table))):
        hit = cat == c
        out_r = jnp.where(hit, tr, out_r)
        out_g = jnp.where(hit, tg, out_g)
        out_b = jnp.where(hit, tb, out_b)
    return out_r, out_g, out_b


@op("AdjustHue", inputs=("images", "delta"))
@_fused(2)
def _adjust_hue(images, delta):
    x = images.astype(jnp.float32)
    r, g, b = _hue_shift(x[..., 0], x[..., 1], x[..., 2], delta.astype(jnp.float32))
    return jnp.stack([r, g, b], axis=-1).astype(images.dtype)


def _check_rgb(images: Tensor, op_name: str) -> None:
    shape = _dims_of(images)
    if len(shape) < 3:
        raise errors.invalid_argument(
            f"input must be at least 3-D, got shape{list(shape)}", op_name
        )
    if shape[-1] != 3:
        raise errors.invalid_argument(
            f"input must have 3 channels but instead has {shape[-1]} channels.",
            op_name,
        )


def adjust_hue(image, delta, name=None):
    """Rotates the hue of an RGB image by `delta` (in [-1, 1], a full turn)."""
    d = to_value(delta)
    try:
        out_of_range = float(d) < -1 or float(d) > 1
    except Exception:  # noqa: BLE001 - traced: TF checks eagerly only
        out_of_range = False
    if out_of_range:
        raise ValueError("delta must be in the interval [-1, 1]")
    image = _image(image)
    orig = image.dtype
    flt = _to_float(image)
    _check_rgb(flt, "AdjustHue")
    out = _adjust_hue(flt, math_ops.cast(delta, dtypes.float32))
    return convert_image_dtype(out, orig)


@op("AdjustSaturation", inputs=("images", "scale"))
@_fused(2)
def _adjust_saturation(images, scale):
    x = images.astype(jnp.float32)
    h, s, v = _hsv(x[..., 0], x[..., 1], x[..., 2])
    s = jnp.clip(s * scale.astype(jnp.float32), 0.0, 1.0)
    r, g, b = _rgb_from_hsv_adjust(h, s, v)
    return jnp.stack([r, g, b], axis=-1).astype(images.dtype)


def _rgb_from_hsv_adjust(h, s, v):
    """TF's `AdjustSaturation` `hsv_to_rgb` (a sector table, not `HSVToRGB`)."""
    c = s * v
    m = v - c
    dh = h * 6
    cat = jnp.floor(dh)  # (h in [0, 1): categories 0..5)
    fmodu = jnp.mod(dh, 2.0)
    x = c * (1 - jnp.abs(fmodu - 1))
    zero = jnp.zeros_like(c)
    table = [(c, x, zero), (x, c, zero), (zero, c, x), (zero, x, c), (x, zero, c)]
    rr, gg, bb = c, zero, x  # category 5
    for k, (tr, tg, tb) in reversed(list(enumerate(table))):
        hit = cat == k
        rr = jnp.where(hit, tr, rr)
        gg = jnp.where(hit, tg, gg)
        bb = jnp.where(hit, tb, bb)
    return rr + m, gg + m, bb + m


def adjust_saturation(image, saturation_factor, name=None):
    """Scales the saturation of an RGB image by `saturation_factor` (clipped
    to [0, 1] in HSV)."""
    image = _image(image)
    orig = image.dtype
    flt = _to_float(image)
    _check_rgb(flt, "AdjustSaturation")
    out = _adjust_saturation(flt, math_ops.cast(saturation_factor, dtypes.float32))
    return convert_image_dtype(out, orig)


# -- standardization ----------------------------------------------------------------
@op("PerImageStandardization", inputs=("image",))
@_fused(1)
def _standardize(image):
    n = image.shape[-1] * image.shape[-2] * image.shape[-3]
    mean = jnp.mean(image, axis=(-1, -2, -3), keepdims=True)
    var = jnp.mean(jnp.square(image - mean), axis=(-1, -2, -3), keepdims=True)
    # (TF's sqrt gradient is 0 where the incoming one is: a constant image)
    std = jnp.where(var > 0, jnp.sqrt(jnp.where(var > 0, var, 1)), 0)
    adjusted = jnp.maximum(std, lax.rsqrt(jnp.float32(n)))
    return (image - mean) / adjusted


def per_image_standardization(image):
    """`(x - mean) / max(stddev, 1/sqrt(num_pixels))` per image, as float32."""
    image = _image(image)
    _check_at_least_3d(image)
    return _standardize(math_ops.cast(image, dtypes.float32))


# -- quality metrics ----------------------------------------------------------------
def _check_compatible(a: Tensor, b: Tensor) -> None:
    s1, s2 = _dims_of(a), _dims_of(b)
    for s in (s1, s2):
        if len(s) < 3:
            raise ValueError(f"Shape {_tf_shape(s)} must have rank at least 3")
    if s1[-3:] != s2[-3:]:
        raise ValueError(f"Shapes {_tf_shape(s1)} and {_tf_shape(s2)} are incompatible")
    for d1, d2 in zip(reversed(s1[:-3]), reversed(s2[:-3])):
        if not (d1 == 1 or d2 == 1 or d1 == d2):
            raise ValueError(
                f"Two images are not compatible: {_tf_shape(s1)} and {_tf_shape(s2)}"
            )


def _as_float_images(a, b, max_val):
    a, b = _image(a), _image(b)
    _check_compatible(a, b)
    mv = convert_image_dtype(math_ops.cast(max_val, a.dtype), dtypes.float32)
    return (
        convert_image_dtype(a, dtypes.float32),
        convert_image_dtype(b, dtypes.float32),
        mv,
    )


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio per image, in dB, as float32."""
    for t in (_image(a), _image(b)):
        if len(_dims_of(t)) < 3:  # (TF's mean over [-3, -2, -1] fails first)
            raise errors.invalid_argument(
                f"Invalid reduction dimension (-3 for input with "
                f"{len(_dims_of(t))} dimension(s)",
                "Mean",
            )
    a, b, mv = _as_float_images(a, b, max_val)
    mse = math_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
    ten = convert_to_tensor(np.float32(10.0))
    top = math_ops.divide(math_ops.multiply(20.0, math_ops.log(mv)), math_ops.log(ten))
    return math_ops.subtract(
        top, math_ops.multiply(float(np.float32(10 / np.log(10))), math_ops.log(mse))
    )


def _gauss_kernel(size: int, sigma):
    coords = jnp.arange(size, dtype=jnp.float32) - jnp.float32(size - 1) / 2.0
    g = jnp.square(coords) * (-0.5 / jnp.square(sigma))
    g = (g[None, :] + g[:, None]).reshape(1, -1)
    return _softmax(g).reshape(size, size)


def _softmax(x):
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def _ssim_per_channel(x, y, max_val, size, sigma, k1, k2, index_map=False):
    """TF's `_ssim_per_channel`: Gaussian-weighted local statistics (VALID)."""
    kernel = _gauss_kernel(size, sigma)
    c = x.shape[-1]
    filt = jnp.tile(kernel[:, :, None, None], (1, 1, 1, c))

    def reducer(t):
        lead = t.shape[:-3]
        t4 = t.reshape((-1,) + t.shape[-3:])
        out = lax.conv_general_dilated(
            t4,
            filt,
            (1, 1),
            "VALID",
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
            feature_group_count=c,
            precision=lax.Precision.HIGHEST,
        )
        return out.reshape(lead + out.shape[1:])

    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    mean0, mean1 = reducer(x), reducer(y)
    num0 = mean0 * mean1 * 2.0
    den0 = jnp.square(mean0) + jnp.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(x * y) * 2.0
    den1 = reducer(jnp.square(x) + jnp.square(y))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    if index_map:
        return luminance * cs, cs
    return jnp.mean(luminance * cs, axis=(-3, -2)), jnp.mean(cs, axis=(-3, -2))


@op("SSIM", inputs=("img1", "img2", "max_val"))
@_fused(3)
def _ssim(img1, img2, max_val, size, sigma, k1, k2, index_map):
    x, y = jnp.broadcast_arrays(img1, img2)
    val, _ = _ssim_per_channel(
        x, y, max_val, size, jnp.float32(sigma), k1, k2, index_map
    )
    return jnp.mean(val, axis=-1)


def _check_filter(a: Tensor, b: Tensor, size: int) -> None:
    for s in (_dims_of(a), _dims_of(b)):
        if s[-3] < size or s[-2] < size:
            raise errors.invalid_argument(
                f"assertion failed: [{list(s)}] [{size}]: the image must be at least "
                "filter_size in height and width.",
                "Assert",
            )


def ssim(
    img1,
    img2,
    max_val,
    filter_size=11,
    filter_sigma=1.5,
    k1=0.01,
    k2=0.03,
    return_index_map=False,
):
    """Structural similarity (SSIM) per image, averaged over channels, with
    TF's Gaussian window (`filter_size`, `filter_sigma`) and VALID borders."""
    a, b, mv = _as_float_images(img1, img2, max_val)
    size = int(filter_size)
    _check_filter(a, b, size)
    return _ssim(
        a,
        b,
        mv,
        size,
        float(filter_sigma),
        float(k1),
        float(k2),
        bool(return_index_map),
    )


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def _ms_pool(x):
    """TF's MS-SSIM downscale: SYMMETRIC pad to even, then 2x2 average."""
    h, w = x.shape[-3], x.shape[-2]
    pad = [(0, 0)] * (x.ndim - 3) + [(0, h % 2), (0, w % 2), (0, 0)]
    x = jnp.pad(x, pad, mode="symmetric")
    h2, w2 = x.shape[-3] // 2, x.shape[-2] // 2
    x = x.reshape(x.shape[:-3] + (h2, 2, w2, 2, x.shape[-1]))
    return jnp.mean(x, axis=(-4, -2))


@op("MSSSIM", inputs=("img1", "img2", "max_val"))
@_fused(3)
def _ssim_multiscale(img1, img2, max_val, powers, size, sigma, k1, k2):
    x, y = jnp.broadcast_arrays(img1, img2)
    sig = jnp.float32(sigma)
    mcs = []
    for k in range(len(powers) - 1):
        if k > 0:
            x, y = _ms_pool(x), _ms_pool(y)
        _, cs = _ssim_per_channel(x, y, max_val, size, sig, k1, k2)
        mcs.append(jnp.maximum(cs, 0))
    if len(powers) > 1:
        x, y = _ms_pool(x), _ms_pool(y)
    val, _ = _ssim_per_channel(x, y, max_val, size, sig, k1, k2)
    stack = jnp.stack([*mcs, jnp.maximum(val, 0)], axis=-1)
    ms = jnp.prod(stack ** jnp.asarray(powers, jnp.float32), axis=-1)
    return jnp.mean(ms, axis=-1)


def ssim_multiscale(
    img1,
    img2,
    max_val,
    power_factors=_MSSSIM_WEIGHTS,
    filter_size=11,
    filter_sigma=1.5,
    k1=0.01,
    k2=0.03,
):
    """Multi-scale SSIM (one scale per power factor; each halves the image)."""
    a, b, mv = _as_float_images(img1, img2, max_val)
    powers = tuple(float(p) for p in np.asarray(to_value(power_factors)).reshape(-1))
    size = int(filter_size)
    h, w = _dims_of(a)[-3:-1]
    for _ in range(len(powers) - 1):
        h, w = (h + h % 2) // 2, (w + w % 2) // 2
    if min(h, w) < size:
        raise errors.invalid_argument(
            f"assertion failed: the image is too small for {len(powers)} scales of "
            f"filter_size {size} (the smallest scale is {h}x{w}).",
            "Assert",
        )
    return _ssim_multiscale(
        a, b, mv, powers, size, float(filter_sigma), float(k1), float(k2)
    )
