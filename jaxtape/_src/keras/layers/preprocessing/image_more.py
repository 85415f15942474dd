"""Keras 3's colour and histogram augmentations (RandomGrayscale, RandomInvert,
Solarization, AutoContrast, Equalization, RandomPosterization,
RandomColorDegeneration, RandomSharpness, RandomHue, RandomSaturation), the
legacy RandomHeight/RandomWidth, MaxNumBoundingBoxes and Pipeline. Layer L5.

They extend `image`'s `_RandomImageLayer` (seed stream, the `training`
switch, rank checks): each layer draws its per-image factors in one
non-differentiable op from the key (`_draws`), then applies Keras's
transform in one jitted op on `(N, H, W, C)` images (`channels_first` is
moved last and back; a single image is batched and unbatched). On
Keras's dict inputs the colour layers pass boxes and masks through.
"""

from __future__ import annotations

import inspect
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import config
from jaxtape._src.core.dispatch import op
from jaxtape._src.keras import serialization
from jaxtape._src.keras.layers.arguments import standardize_data_format
from jaxtape._src.keras.layers.base import Layer, get_keras_mask
from jaxtape._src.keras.layers.preprocessing import bounding_boxes as bbox
from jaxtape._src.keras.layers.preprocessing.image import (
    _RESIZE_METHODS,
    _factor_pair,
    _RandomImageLayer,
    _resize,
)
from jaxtape._src.keras.layers.preprocessing.image_data import (
    _box_config,
    _call_on_dict,
    _with_boxes,
)
from jaxtape._src.keras.ops import image as kimage

__all__ = [
    "AutoContrast",
    "Equalization",
    "MaxNumBoundingBoxes",
    "Pipeline",
    "RandomColorDegeneration",
    "RandomGrayscale",
    "RandomHeight",
    "RandomHue",
    "RandomInvert",
    "RandomPosterization",
    "RandomSaturation",
    "RandomSharpness",
    "RandomWidth",
    "Solarization",
]


# -- pure helpers ----------------------------------------------------------------------
def _nhwc(x, channels_first):
    """`x` as a batch of channels-last images, and the function that undoes it."""
    single = x.ndim == 3
    y = x[None] if single else x
    if channels_first:
        y = jnp.transpose(y, (0, 2, 3, 1))

    def restore(out):
        if channels_first:
            out = jnp.transpose(out, (0, 3, 1, 2))
        return out[0] if single else out

    return y, restore


def _gray(x):
    """`keras.ops.image.rgb_to_grayscale` on channels-last images (its body)."""
    if x.shape[-1] == 1:
        return x
    return inspect.unwrap(kimage._rgb_to_grayscale)(
        x, axis=x.ndim - 1, dtype=x.dtype, compute=x.dtype
    )


def _hsv(x, inverse):
    """`keras.ops.image.rgb_to_hsv` / `hsv_to_rgb` (its body), channels last."""
    return inspect.unwrap(kimage._rgb_to_hsv)(x, axis=x.ndim - 1, inverse=inverse)


def _to_range(x, source, target):
    """Keras's `_transform_value_range` (a no-op for equal ranges)."""
    if source[0] == target[0] and source[1] == target[1]:
        return x
    x = (x - source[0]) / (source[1] - source[0])
    return x * (target[1] - target[0]) + target[0]


@op("AugmentDraws", inputs=("key",), differentiable=False)
def _draws(key, n, ranges):
    """One uniform draw per image for each `(low, high)` of `ranges`, from
    independent keys: shape `(len(ranges), n)`."""
    keys = jax.random.split(jax.random.wrap_key_data(key), len(ranges))
    return jnp.stack(
        [
            jax.random.uniform(k, (n,), jnp.float32, lo, hi)
            for k, (lo, hi) in zip(keys, ranges, strict=True)
        ]
    )


def _value_range(value_range, sort=True):
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
        raise ValueError(
            "The `value_range` argument should be a list of two numbers. "
            f"Received: value_range={value_range}"
        )
    vr = [float(v) for v in value_range]
    return tuple(sorted(vr)) if sort else tuple(vr)


def _per_image(v, x):
    """Per-image values `(n,)` broadcast against `(n, H, W, C)`."""
    return v.astype(x.dtype).reshape((-1, 1, 1, 1))


class _ColorLayer(_RandomImageLayer):
    """A random colour layer: `_ranges` are the `(low, high)` of its draws,
    `_apply(x, draws)` Keras's transform (in training)."""

    _GEOMETRIC = False  # boxes and masks pass through, as Keras

    _ranges: tuple = ()

    def _augment(self, x, key):
        draws = _draws(key, 1 if x.ndim == 3 else int(x.shape[0]), self._ranges)
        return self._apply(x, draws)

    def _apply(self, x, draws):
        raise NotImplementedError


# -- RandomGrayscale -------------------------------------------------------------------
@op("RandomGrayscale", inputs=("x", "draws"), jit=True)
def _random_grayscale(x, draws, factor, channels_first):
    y, restore = _nhwc(x, channels_first)
    apply = (draws[0] < factor).reshape((-1, 1, 1, 1))
    return restore(jnp.where(apply, _gray(y), y))


class RandomGrayscale(_ColorLayer):
    """Turns each image grey with probability `factor` in training (Keras's
    `RandomGrayscale`: ITU-R 601 luma broadcast over the channels).

    Differences from Keras: the random numbers differ (jax.random).
    """

    def __init__(self, factor=0.5, data_format=None, seed=None, **kwargs):
        if factor < 0 or factor > 1:
            raise ValueError(
                f"`factor` should be between 0 and 1. Received: factor={factor}"
            )
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = factor
        self._ranges = ((0.0, 1.0),)

    def _apply(self, x, draws):
        cf = self.data_format == "channels_first"
        return _random_grayscale(x, draws, float(self.factor), cf)

    def get_config(self):
        cfg = super().get_config()
        del cfg["seed"]  # (Keras's RandomGrayscale config has no seed)
        return {**cfg, "factor": self.factor}


# -- RandomInvert ----------------------------------------------------------------------
@op("RandomInvert", inputs=("x", "draws"), jit=True)
def _random_invert(x, draws, high):
    apply = draws[1] < draws[0]  # threshold below the drawn probability
    shape = (-1,) + (1,) * (x.ndim - 1) if x.ndim == 4 else ()
    return jnp.where(apply.reshape(shape), high - x, x)


class RandomInvert(_ColorLayer):
    """Inverts images (`value_range[1] - x`) in training (Keras's
    `RandomInvert`): each image with a probability drawn from `factor`
    (`1.0` is `(0, 1)`; `(1.0, 1.0)` inverts every image).

    Differences from Keras: the random numbers differ (jax.random).
    """

    def __init__(self, factor=1.0, value_range=(0, 255), seed=None, data_format=None,
                 **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor_pair(self, factor, (0, 1))
        self.value_range = value_range
        self._ranges = (self.factor, (0.0, 1.0))

    def _apply(self, x, draws):
        return _random_invert(x, draws, float(self.value_range[1]))

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "value_range": self.value_range,
        }


# -- Solarization ----------------------------------------------------------------------
def _unit_factor(factor, name):
    """Solarization's `_set_factor`: a number `f` is `(0, f)`; values in [0, 1]."""
    text = (
        "The `addition_factor` and `threshold_factor` arguments should be a "
        f"number (or a list of two numbers) in the range [0, 1]. Received: {name}="
        f"{factor}"
    )
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or any(f > 1.0 or f < 0 for f in factor):
            raise ValueError(text)
        return tuple(sorted(factor))
    if isinstance(factor, (int, float)):
        if factor > 1.0 or factor < 0:
            raise ValueError(text)
        return (0, factor)
    raise ValueError(text)


@op("Solarization", inputs=("x", "draws"), jit=True)
def _solarize(x, draws, value_range):
    additions, thresholds = _per_image(draws[0], x), _per_image(draws[1], x)
    if x.ndim == 3:
        additions, thresholds = additions[0], thresholds[0]
    y = _to_range(x, value_range, (0.0, 255.0))
    y = jnp.clip(y + additions, 0, 255)
    y = jnp.where(y < thresholds, y, 255 - y)
    return _to_range(y, (0.0, 255.0), value_range).astype(x.dtype)


class Solarization(_ColorLayer):
    """Solarizes images in training (Keras's `Solarization`): adds a drawn
    `addition` (uniform in `[low, high * 255]` of `addition_factor`), then
    inverts the pixels at or above a drawn threshold (likewise from
    `threshold_factor`), on the 0-255 scale of `value_range`. The default
    factors (0, 0) invert every pixel.

    Differences from Keras: the random numbers differ (jax.random).
    """

    def __init__(self, addition_factor=0.0, threshold_factor=0.0,
                 value_range=(0, 255), seed=None, **kwargs):  # fmt: skip
        super().__init__(seed=seed, **kwargs)
        self.addition_factor = _unit_factor(addition_factor, "addition_factor")
        self.threshold_factor = _unit_factor(threshold_factor, "threshold_factor")
        self.value_range = list(_value_range(value_range))
        self._ranges = tuple(
            (float(f[0]), float(f[1]) * 255.0)
            for f in (self.addition_factor, self.threshold_factor)
        )

    def _apply(self, x, draws):
        return _solarize(x, draws, tuple(self.value_range))

    def get_config(self):
        return {
            **super().get_config(),
            "value_range": self.value_range,
            "addition_factor": self.addition_factor,
            "threshold_factor": self.threshold_factor,
        }


# -- AutoContrast ----------------------------------------------------------------------
@op("AutoContrast", inputs=("x",), jit=True)
def _auto_contrast(x, value_range):
    """Keras's: each image stretched to the full range over axes (1, 2) of
    the batch (height and width channels-last); flat images unchanged."""
    y = x[None] if x.ndim == 3 else x
    z = _to_range(y, value_range, (0.0, 255.0))
    low = jnp.min(z, axis=(1, 2), keepdims=True)
    high = jnp.max(z, axis=(1, 2), keepdims=True)
    scale = 255.0 / (high - low)
    z = jnp.clip(z * scale + (-low * scale), 0.0, 255.0)
    z = _to_range(z, (0.0, 255.0), value_range)
    out = jnp.where(jnp.isnan(z), y, z).astype(x.dtype)
    return out[0] if x.ndim == 3 else out


class AutoContrast(_RandomImageLayer):
    """Stretches each image's values to the full `value_range` (Keras's
    `AutoContrast`), per channel; in training and inference alike.

    Differences from Keras: None known (with `channels_first` Keras, and
    so jaxtape, reduces over axes 1 and 2: channels and height).
    """

    _GEOMETRIC = False  # boxes and masks pass through, as Keras

    def __init__(self, value_range=(0, 255), **kwargs):
        super().__init__(**kwargs)
        self.value_range = list(_value_range(value_range))

    def _infer(self, x):
        return _auto_contrast(x, tuple(self.value_range))

    def _augment(self, x, key):
        del key
        return self._infer(x)

    def get_config(self):
        cfg = super().get_config()
        del cfg["seed"]
        return {**cfg, "value_range": self.value_range}


# -- Equalization ----------------------------------------------------------------------
def _round_half_even_div(num, den):
    """`round(num / den)` (half to even) of non-negative integers, exactly."""
    q, r = num // den, num % den
    up = (2 * r > den) | ((2 * r == den) & (q % 2 == 1))
    return q + up.astype(q.dtype)


def _equalize_channel(c, bins):
    """Keras's `_equalize_channel` on one channel of the whole batch (0-255)."""
    idx = jnp.clip((c * (bins - 1) / 255.0).astype(jnp.int32), 0, bins - 1)
    hist = jnp.bincount(idx.reshape(-1), length=bins)
    cdf = jnp.cumsum(hist)
    cdf_min = cdf[jnp.argmax(cdf > 0)]
    den = cdf[-1] - cdf_min
    den = jnp.where(den == 0, 1, den)
    lut = jnp.clip(_round_half_even_div((cdf - cdf_min) * 255, den), 0, 255)
    lut_idx = jnp.clip((c / 255.0) * (bins - 1), 0, bins - 1).astype(jnp.int32)
    equalized = lut[lut_idx].astype(c.dtype)
    return jnp.where(jnp.count_nonzero(hist) <= 1, c, equalized)


@op("Equalization", inputs=("x",), jit=True)
def _equalize(x, value_range, bins, channels_first):
    y, restore = _nhwc(x, channels_first)
    y = _to_range(y, value_range, (0.0, 255.0))
    chans = [_equalize_channel(y[..., i], bins) for i in range(y.shape[-1])]
    out = _to_range(jnp.stack(chans, axis=-1), (0.0, 255.0), value_range)
    return restore(out.astype(x.dtype))


class Equalization(_RandomImageLayer):
    """Histogram equalization in training (Keras's `Equalization`): one
    `bins`-bin histogram per channel over the whole batch, mapped through
    its cumulative distribution; identity with `training=False`, as Keras.

    Differences from Keras: None known.
    """

    _GEOMETRIC = False  # boxes and masks pass through, as Keras

    def __init__(self, value_range=(0, 255), bins=256, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.bins = bins
        self.value_range = list(_value_range(value_range))

    def _augment(self, x, key):
        del key
        cf = self.data_format == "channels_first"
        return _equalize(x, tuple(self.value_range), int(self.bins), cf)

    def get_config(self):
        cfg = super().get_config()
        del cfg["seed"]
        return {**cfg, "bins": self.bins, "value_range": self.value_range}


# -- RandomPosterization ---------------------------------------------------------------
@op("PosterizationDraws", inputs=("key",), differentiable=False)
def _posterization_bits(key, n, low, high):
    """Keras's bits per image: `low` when fixed, else `randint(low, high)`."""
    if low == high:
        return jnp.full((n,), low, jnp.uint8)
    k = jax.random.wrap_key_data(key)
    return jax.random.randint(k, (n,), low, high).astype(jnp.uint8)


@op("RandomPosterization", inputs=("x", "bits"), jit=True)
def _posterize(x, bits, value_range):
    shift = (jnp.uint8(8) - bits).reshape((-1, 1, 1, 1))
    if x.ndim == 3:
        shift = shift[0]
    y = _to_range(x, value_range, (0.0, 255.0)).astype(jnp.uint8)
    y = jnp.left_shift(jnp.right_shift(y, shift), shift).astype(x.dtype)
    return _to_range(y, (0.0, 255.0), value_range).astype(x.dtype)


class RandomPosterization(_RandomImageLayer):
    """Keeps the `bits` highest bits of each 8-bit channel value in training
    (Keras's `RandomPosterization`): `factor` in [1, 8] (a number `f` is
    `(1, f)`, drawn by `randint`, upper bound excluded; a pair `(b, b)`
    fixes it).

    Differences from Keras: the random numbers differ (jax.random).
    """

    _GEOMETRIC = False  # boxes and masks pass through, as Keras

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None,
                 **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor_pair(self, factor, (1, 8))
        self.value_range = list(_value_range(value_range))

    def _augment(self, x, key):
        n = 1 if x.ndim == 3 else int(x.shape[0])
        bits = _posterization_bits(key, n, int(self.factor[0]), int(self.factor[1]))
        return _posterize(x, bits, tuple(self.value_range))

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "value_range": self.value_range,
        }


# -- RandomColorDegeneration -----------------------------------------------------------
@op("RandomColorDegeneration", inputs=("x", "draws"), jit=True)
def _degenerate(x, draws, value_range, channels_first):
    y, restore = _nhwc(x, channels_first)
    f = _per_image(draws[0], y)
    y = jnp.clip(y + f * (_gray(y) - y), value_range[0], value_range[1])
    return restore(y)


class RandomColorDegeneration(_ColorLayer):
    """Blends each image towards its greyscale version by a drawn factor in
    training (Keras's `RandomColorDegeneration`; `factor` `f` is `(-f,
    f)`, 0 keeps the colour, 1 is grey), clipped to `value_range`.

    Differences from Keras: the random numbers differ (jax.random).
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None,
                 **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor_pair(self, factor, (-1, 1))
        self.value_range = list(_value_range(value_range))
        self._ranges = (self.factor,)

    def _apply(self, x, draws):
        cf = self.data_format == "channels_first"
        return _degenerate(x, draws, tuple(self.value_range), cf)

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "value_range": self.value_range,
        }


# -- RandomSharpness -------------------------------------------------------------------
@op("RandomSharpness", inputs=("x", "draws"), jit=True)
def _sharpen(x, draws, value_range, channels_first):
    """Keras's: blend with the 3x3 smoothing (`1/13` around `5/13`, zero
    padded) by `1 - 2 f`, clipped to `value_range`."""
    y, restore = _nhwc(x, channels_first)
    f = _per_image(draws[0] * 2, y)
    a, b = 1.0 / 13.0, 5.0 / 13.0
    c = y.shape[-1]
    k = jnp.asarray([[a, a, a], [a, b, a], [a, a, a]], y.dtype).reshape(3, 3, 1, 1)
    smooth = jax.lax.conv_general_dilated(
        y,
        jnp.tile(k, (1, 1, 1, c)),
        (1, 1),
        "SAME",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=c,
    )
    y = jnp.clip(y + (1.0 - f) * (smooth - y), value_range[0], value_range[1])
    return restore(y)


class RandomSharpness(_ColorLayer):
    """Sharpens or blurs images by a drawn factor in training (Keras's
    `RandomSharpness`: `factor` in [0, 1], a number `f` is `(0, f)`; 0.5
    keeps the image, 0 blurs, 1 sharpens), clipped to `value_range`.

    Differences from Keras: the random numbers differ (jax.random).
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None,
                 **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor_pair(self, factor, (0, 1))
        self.value_range = list(_value_range(value_range))
        self._ranges = (self.factor,)

    def _apply(self, x, draws):
        cf = self.data_format == "channels_first"
        return _sharpen(x, draws, tuple(self.value_range), cf)

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "value_range": self.value_range,
        }


# -- RandomHue / RandomSaturation ------------------------------------------------------
@op("RandomHue", inputs=("x", "draws"), jit=True)
def _shift_hue(x, draws, value_range, channels_first):
    """Keras's: hue shifted by `±f / 2` (the sign drawn), wrapped to [0, 1]."""
    y, restore = _nhwc(x, channels_first)
    shift = jnp.where(draws[0] > 0.5, -1.0, 1.0) * draws[1] * 0.5
    hsv = _hsv(_to_range(y, value_range, (0.0, 1.0)), inverse=False)
    h = hsv[..., 0] + shift.astype(y.dtype).reshape((-1, 1, 1))
    h = jnp.where(h > 1.0, h - 1.0, h)
    h = jnp.where(h < 0.0, h + 1.0, h)
    rgb = _hsv(jnp.stack([h, hsv[..., 1], hsv[..., 2]], axis=-1), inverse=True)
    out = _to_range(jnp.clip(rgb, 0, 1), (0.0, 1.0), value_range)
    return restore(out.astype(x.dtype))


class RandomHue(_ColorLayer):
    """Shifts the hue by a drawn amount in training (Keras's `RandomHue`:
    `factor` in [0, 1], a number `f` is `(0, f)`; the shift is `±u / 2` of
    the hue circle with a random sign, so `(1, 1)` rotates by half a turn).

    Differences from Keras: the random numbers differ (jax.random).
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None,
                 **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor_pair(self, factor, (0, 1))
        self.value_range = value_range
        self._ranges = ((0.0, 1.0), self.factor)

    def _apply(self, x, draws):
        cf = self.data_format == "channels_first"
        vr = _value_range(self.value_range, sort=False)
        return _shift_hue(x, draws, vr, cf)

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "value_range": self.value_range,
        }


@op("RandomSaturation", inputs=("x", "draws"), jit=True)
def _saturate(x, draws, value_range, channels_first, eps):
    """Keras's: saturation times `u / (1 - u + eps)`, clipped to
    `value_range` (HSV of the images as given, unscaled)."""
    y, restore = _nhwc(x, channels_first)
    f = (draws[0] / (1 - draws[0] + eps)).astype(y.dtype).reshape((-1, 1, 1))
    hsv = _hsv(y, inverse=False)
    s = jnp.clip(hsv[..., 1] * f, value_range[0], value_range[1])
    rgb = _hsv(jnp.stack([hsv[..., 0], s, hsv[..., 2]], axis=-1), inverse=True)
    return restore(rgb)


class RandomSaturation(_ColorLayer):
    """Scales the saturation by a drawn factor in training (Keras's
    `RandomSaturation`: `u` from `factor`, the scale `u / (1 - u)`, so 0.5
    keeps the image, 0 is grey, 1 fully saturated).

    Differences from Keras: the random numbers differ (jax.random).
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None,
                 **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor_pair(self, factor, (-1, 1))
        self.value_range = list(_value_range(value_range))
        self._ranges = (self.factor,)

    def _apply(self, x, draws):
        cf = self.data_format == "channels_first"
        vr = tuple(self.value_range)
        return _saturate(x, draws, vr, cf, float(config.epsilon()))

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "value_range": self.value_range,
        }


# -- RandomHeight / RandomWidth (Keras's legacy layers) --------------------------------
class _RandomSizeLayer(_RandomImageLayer):
    """Resizes one spatial axis by a drawn factor `1 + u` in training (one
    draw for the batch); the drawn size is a shape, so it is read on the
    host: inside `jaxtape.function` only a fixed factor `(f, f)` works."""

    _axis = -3
    _label = "height"

    def __init__(self, factor, interpolation="bilinear", seed=None, **kwargs):
        super().__init__(seed=seed, data_format="channels_last", **kwargs)
        self.factor = factor
        if isinstance(factor, (tuple, list)):
            lower, upper = factor[0], factor[1]
        else:
            lower, upper = -factor, factor
        if upper < lower:
            raise ValueError(
                "`factor` argument cannot have an upper bound lesser than the "
                f"lower bound. Received: factor={factor}"
            )
        if lower < -1.0 or upper < -1.0:
            raise ValueError(
                f"`factor` argument must have values larger than -1. Received: "
                f"factor={factor}"
            )
        if interpolation not in _RESIZE_METHODS:
            raise NotImplementedError(
                f"interpolation={interpolation!r} is not supported by jaxtape's "
                f"{type(self).__name__}; use one of {_RESIZE_METHODS}."
            )
        self.interpolation = interpolation
        self._range = (float(lower), float(upper))

    def _augment(self, x, key):
        lo, hi = self._range
        if lo == hi:
            factor = 1.0 + lo
        else:
            if isinstance(key, jax.core.Tracer):
                raise NotImplementedError(
                    f"{type(self).__name__} with a random factor gives a "
                    "data-dependent shape, which jaxtape.function cannot "
                    "compile; call it eagerly or give a fixed factor (f, f)."
                )
            draw = _draws(key, 1, ((1.0 + lo, 1.0 + hi),))
            factor = float(np.asarray(draw)[0, 0])
        shape: Any = x.shape
        size = [int(shape[-3]), int(shape[-2])]
        axis = 0 if self._axis == -3 else 1
        size[axis] = int(np.float32(factor) * np.float32(size[axis]))
        return _resize(x, tuple(size), self.interpolation, False, False, False, 0.0,
                       False)  # fmt: skip

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        shape[self._axis] = None
        return tuple(shape)

    def get_config(self):
        cfg = super().get_config()
        del cfg["data_format"]
        return {**cfg, "factor": self.factor, "interpolation": self.interpolation}


class RandomHeight(_RandomSizeLayer):
    """Resizes the height by a drawn factor in training (Keras's legacy
    `RandomHeight`: `factor` `f` is `(-f, f)`, the new height
    `int((1 + u) * height)`); identity at inference.

    Differences from Keras: the random numbers differ (jax.random); a
    random factor cannot run inside `jaxtape.function` (NotImplementedError).
    """

    _SAVED_MODULE = "keras._legacy.layers"

    _axis = -3


class RandomWidth(_RandomSizeLayer):
    """Resizes the width by a drawn factor in training (Keras's legacy
    `RandomWidth`, as `RandomHeight` along the width).

    Differences from Keras: as `RandomHeight`.
    """

    _SAVED_MODULE = "keras._legacy.layers"

    _axis = -2


# -- MaxNumBoundingBoxes --------------------------------------------------------------
class MaxNumBoundingBoxes(Layer):
    """Gives every image exactly `max_number` boxes (Keras's
    `MaxNumBoundingBoxes`): on a dict input the `bounding_boxes` are cut to
    the first `max_number` and padded with `fill_value` (boxes and labels);
    images, labels and masks pass through. It needs `bounding_box_format`
    for boxes, as Keras.

    Its config leaves out `fill_value`, as Keras's does (a round trip resets
    it to -1 there too).
    """

    def __init__(self, max_number, fill_value=-1, bounding_box_format=None,
                 data_format=None, **kwargs):  # fmt: skip
        super().__init__(**kwargs)
        self.max_number = int(max_number)
        self.fill_value = int(fill_value)
        self.bounding_box_format = bounding_box_format
        self.data_format = standardize_data_format(data_format)

    def call(self, inputs, training=True):
        del training  # (the same in training and inference, as Keras)
        if not isinstance(inputs, dict):
            return inputs
        return _call_on_dict(
            self,
            inputs,
            lambda x: (x, None),
            self._pad_boxes,
            lambda m, _: m,
            cast=False,
        )

    def _pad_boxes(self, bounding_boxes, state, x):
        del state, x
        out = bbox.max_num_boxes(
            bounding_boxes["boxes"],
            bounding_boxes["labels"],
            self.max_number,
            self.fill_value,
        )
        return _with_boxes(bounding_boxes, out)

    def compute_output_shape(self, input_shape) -> Any:
        if isinstance(input_shape, dict) and "bounding_boxes" in input_shape:
            boxes_shape = input_shape["bounding_boxes"]
            extra_keys = set(boxes_shape) - {"boxes", "labels"}
            if extra_keys:
                raise KeyError(
                    "There are unsupported keys in `bounding_boxes`: "
                    f"{list(extra_keys)}. Only `boxes` and `labels` are supported."
                )
            out = dict(input_shape)
            shapes = {k: list(v) for k, v in boxes_shape.items()}
            shapes["boxes"][1] = self.max_number
            shapes["labels"][1] = self.max_number
            out["bounding_boxes"] = shapes
            return out
        return input_shape

    def get_config(self):
        return {
            **super().get_config(),
            "data_format": self.data_format,
            **_box_config(self),
            "max_number": self.max_number,
        }


# -- Pipeline --------------------------------------------------------------------------
class Pipeline(Layer):
    """Applies `layers` in turn (Keras's `Pipeline`), passing `training` (and
    `mask`) to the layers whose `call` takes them.

    Differences from Keras: None known.
    """

    def __init__(self, layers, name=None):
        super().__init__(name=name)
        self._pipeline_layers = list(layers)

    @property
    def layers(self):
        return self._pipeline_layers

    def call(self, inputs, training=True, mask=None):
        outputs = inputs
        for layer in self._pipeline_layers:
            kwargs = {}
            if mask is not None and "mask" in inspect.signature(layer.call).parameters:
                kwargs["mask"] = mask
            if training is not None:
                kwargs["training"] = training
            outputs = layer(inputs, **kwargs)
            inputs = outputs
            mask = get_keras_mask(outputs)
        return outputs

    def get_config(self):
        return {
            "layers": [serialization.serialize_layer(layer) for layer in self.layers],
            "name": self.name,
        }

    @classmethod
    def from_config(cls, config):
        layers = config.get("layers")
        if not isinstance(layers, (list, tuple)):
            raise ValueError(
                "`Pipeline` config must contain a `layers` key mapping to a "
                "list of serialized layers. Received config with "
                f"layers={layers}."
            )
        return cls(
            layers=[serialization.deserialize_layer(c) for c in layers],
            name=config.get("name"),
        )
