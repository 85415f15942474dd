"""Keras 3's mixing, erasing, blurring and geometric augmentations: MixUp,
CutMix, RandomErasing, RandomGaussianBlur, RandomShear, RandomPerspective,
RandomElasticTransform and ContrastLimitedAdaptiveHistogramEqualization.
Layer L5.

They extend `image`'s `_RandomImageLayer` (seed stream, the `training`
switch, rank checks) through `_AugmentLayer`, which adds Keras's dict inputs
(`{"images": ..., "labels": ...}`). A layer's call is one jitted op that cuts
all its random numbers from one uniform draw of the key (`_units`: each
separate draw would cost its own compile time) and applies Keras's transform
(a single image is batched and unbatched; `channels_first` is moved last and
back). The composite layers AugMix, RandAugment and
RandomColorJitter live in `augment_policies`.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core.dispatch import op
from jaxtape._src.keras.layers.preprocessing import bounding_boxes as bbox
from jaxtape._src.keras.layers.preprocessing.image import (
    _FILL_MODES,
    _affine,
    _factor_pair,
    _RandomImageLayer,
)
from jaxtape._src.keras.layers.preprocessing.image_data import (
    _box_format,
    _call_on_dict,
    _check_image_rank,
)
from jaxtape._src.keras.layers.preprocessing.image_more import _nhwc, _to_range
from jaxtape._src.keras.ops import image_more as kimage
from jaxtape._src.ops import math_ops

__all__ = [
    "ContrastLimitedAdaptiveHistogramEqualization",
    "CutMix",
    "MixUp",
    "RandomElasticTransform",
    "RandomErasing",
    "RandomGaussianBlur",
    "RandomPerspective",
    "RandomShear",
]

_INTERPOLATIONS = ("nearest", "bilinear")
_affine_body = _affine.__wrapped__  # the body of `image`'s affine transform op


def _cut(u, *shapes):
    """The flat array `u` cut into arrays of `shapes`, in order."""
    out, i = [], 0
    for shape in shapes:
        size = math.prod(shape)
        out.append(u[i : i + size].reshape(shape))
        i += size
    return out


def _units(key, *shapes):
    """Uniform [0, 1) arrays of `shapes`, cut from ONE draw of `key`: each
    random-bits computation costs a few tenths of a second of XLA compile
    time, so every op here draws once and shapes the numbers itself."""
    total = sum(math.prod(s) for s in shapes)
    u = jax.random.uniform(jax.random.wrap_key_data(key), (total,), jnp.float32)
    return _cut(u, *shapes)


def _between(u, low, high):
    return low + (high - low) * u


def _applied(u1, u2, factor):
    """Keras's per-image coin: `uniform(0, 1) < uniform(*factor)`."""
    return u2 < _between(u1, factor[0], factor[1])


_PROPOSALS = 12


def _gamma_units(shape):
    """How many uniforms `_log_gamma` takes for samples of `shape`."""
    return (3 * _PROPOSALS + 1) * math.prod(shape)


def _log_gamma(u, alpha, shape):
    """`log Gamma(alpha)` samples from the uniforms `u`, by Marsaglia and
    Tsang's method with a fixed number of proposals (each accepted with
    probability >= 0.95; no while loop, so it compiles in a fraction of
    `jax.random.gamma`'s time); `alpha < 1` is boosted as
    `Gamma(alpha + 1) * U ** (1 / alpha)`."""
    many = (_PROPOSALS, *shape)
    u1, u2, acc, boost = _cut(u, many, many, many, shape)
    alpha = jnp.asarray(alpha, jnp.float32)
    a = jnp.where(alpha < 1.0, alpha + 1.0, alpha)
    d = a - 1.0 / 3.0
    c = 1.0 / jnp.sqrt(9.0 * d)
    z = kimage.box_muller(u1, u2)
    v = (1.0 + c * z) ** 3
    log_v = jnp.log(jnp.where(v > 0, v, 1.0))
    ok = (v > 0) & (jnp.log1p(-acc) < 0.5 * z * z + d - d * v + d * log_v)
    first = jnp.argmax(ok, axis=0)
    log_g = jnp.log(d) + jnp.take_along_axis(log_v, first[None], axis=0)[0]
    return jnp.where(alpha < 1.0, log_g + jnp.log1p(-boost) / alpha, log_g)


def _beta(u, alpha, shape):
    """`Beta(alpha, alpha)` as `G1 / (G1 + G2)` (in log space) from the
    `2 * _gamma_units(shape)` uniforms `u`."""
    g1, g2 = _cut(u, (_gamma_units(shape),), (_gamma_units(shape),))
    return jax.nn.sigmoid(_log_gamma(g1, alpha, shape) - _log_gamma(g2, alpha, shape))


@op("AugmentSplitKeys", inputs=("key",), differentiable=False, jit=True)
def _split_keys(key, num):
    """`num` independent raw keys `(num, 2)` from one."""
    return jax.random.key_data(jax.random.split(jax.random.wrap_key_data(key), num))


class _AugmentLayer(_RandomImageLayer):
    """Keras 3's `BaseImagePreprocessingLayer` call (images, or the dict
    `_RandomImageLayer` takes: `_augment_with_state` gives what
    `_augment_labels`, `_augment_boxes` and `_augment_masks` need);
    identity at `training=False` unless `_infer` says otherwise."""

    def _augment(self, x, key):
        return self._augment_with_state(x, key)[0]

    def _augment_with_state(self, x, key) -> tuple[Any, Any]:
        return self._augment_images(x, key), None

    def _augment_images(self, x, key):
        raise NotImplementedError


def _transformed_boxes(layer, bounding_boxes, transform, x):
    """Boxes through the images' `(n, 8)` transforms (`bbox`'s hull of the
    mapped corners, clipped)."""
    ha, wa = (x.ndim - 2, x.ndim - 1) if layer._cf else (x.ndim - 3, x.ndim - 2)
    boxes, labels = bbox.transform_layer_boxes(
        bounding_boxes["boxes"],
        bounding_boxes["labels"],
        transform,
        int(x.shape[ha]),
        int(x.shape[wa]),
        _box_format(layer),
    )
    return {**bounding_boxes, "boxes": boxes, "labels": labels}


def _value_range_list(value_range):
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
        raise ValueError(
            "The `value_range` argument should be a list of two numbers. "
            f"Received: value_range={value_range}"
        )
    return (float(value_range[0]), float(value_range[1]))


# -- MixUp / CutMix --------------------------------------------------------------------
@op("MixLabels", inputs=("labels", "perm", "weight"), jit=True)
def _mix_labels(labels, perm, weight):
    """Keras's `w * labels + (1 - w) * labels[perm]` (one weight per row)."""
    dtype = labels.dtype if jnp.issubdtype(labels.dtype, jnp.floating) else jnp.float32
    labels = labels.astype(dtype)
    w = weight.astype(dtype).reshape((-1,) + (1,) * (labels.ndim - 1))
    return w * labels + (1.0 - w) * labels[perm]


class _MixLayer(_AugmentLayer):
    """MixUp and CutMix: a batch mixed with a permutation of itself; labels
    mixed by the same weights (single images pass through)."""

    def _augment_with_state(self, x, key):
        if x.ndim == 3:
            return x, None
        return self._mix(x, key)

    def _mix(self, x, key):
        raise NotImplementedError

    def _augment_labels(self, labels, state):
        if state is None:
            return labels
        return _mix_labels(labels, *state[:2])

    def _augment_masks(self, masks, state):
        if state is None:
            return masks
        return self._mix_masks(masks, state)

    def _mix_masks(self, masks, state):
        raise NotImplementedError


@op("MixUpBoxes", inputs=("boxes", "labels", "perm"), differentiable=False,
    jit=True)  # fmt: skip
def _concat_partner_boxes(boxes, labels, perm):
    return (
        jnp.concatenate([boxes, boxes[perm]], axis=1),
        jnp.concatenate([labels, labels[perm]], axis=1),
    )


@op("MixUp", inputs=("x", "key"), jit=True)
def _mix_up(x, key, alpha):
    """Keras's draws (a permutation, `Beta(alpha, alpha)` weights) and
    `w * x + (1 - w) * x[perm]`; returns the images, permutation, weights."""
    n = x.shape[0]
    up, ub = _units(key, (n,), (2 * _gamma_units((n,)),))
    perm = jnp.argsort(up).astype(jnp.int32)
    weight = _beta(ub, alpha, (n,))
    w = weight.astype(x.dtype).reshape((-1, 1, 1, 1))
    return w * x + (1.0 - w) * x[perm], perm, weight


class MixUp(_MixLayer):
    """Blends each image of a batch with another one of the batch in training
    (Keras's `MixUp`): weights `Beta(alpha, alpha)` per image; call it on
    `{"images": ..., "labels": ...}` to mix one-hot labels by the same weights.

    Differences from Keras: the random numbers differ (jax.random); a
    single image is returned unchanged (Keras mixes it with itself); the
    partner's box labels are appended along the box axis, like its boxes
    (Keras's along the batch axis).
    """

    def __init__(self, alpha=0.2, data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.alpha = alpha

    def _mix(self, x, key):
        out, perm, weight = _mix_up(x, key, float(self.alpha))
        return out, (perm, weight, key)

    def _mix_masks(self, masks, state):
        """Keras's: masks blended by the images' weights and permutation."""
        masks = math_ops.cast(masks, self._dtype.name)
        return _mix_up(masks, state[2], float(self.alpha))[0]  # the same draws

    def _augment_boxes(self, bounding_boxes, state, x):
        """Keras's: each image's boxes followed by its partner's (the box
        axis doubles; labels likewise, along the box axis)."""
        if state is None:
            return bounding_boxes
        boxes, labels = _concat_partner_boxes(
            bounding_boxes["boxes"], bounding_boxes["labels"], state[0]
        )
        return {**bounding_boxes, "boxes": boxes, "labels": labels}

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


def _box_mask(h, w, box):
    """`(n, h, w)`: pixels with `x0 <= x < x1` and `y0 <= y < y1` (Keras's)."""
    x0, x1, y0, y1 = (b[:, None, None] for b in box)
    gy, gx = jnp.meshgrid(
        jnp.arange(h, dtype=jnp.float32),
        jnp.arange(w, dtype=jnp.float32),
        indexing="ij",
    )
    return (gx >= x0) & (gx < x1) & (gy >= y0) & (gy < y1)


def _crop_bounds(u, length, ratio):
    """Keras's `_compute_crop_bounds`: a window of `ratio * length` at the
    offset `u * (length - window)`."""
    crop = ratio * length
    start = u * (length - crop)
    return start, start + crop


@op("CutMix", inputs=("x", "key"), jit=True)
def _cut_mix(x, key, low, high, channels_first):
    """Keras's draws (box side `sqrt(1 - Beta(a, a))`, `a` uniform in
    `[low, high]`, a permutation) and the pasted boxes; returns the images,
    permutation and label weights (1 - the box area)."""
    y, restore = _nhwc(x, channels_first)
    n, h, w, _ = y.shape
    ua, ub, ux, uy, up = _units(key, (), (2 * _gamma_units((n,)),), (n,), (n,), (n,))
    alpha = _between(ua, low, high) + 1e-6
    ratio = jnp.sqrt(1.0 - _beta(ub, alpha, (n,)))
    x0, x1 = _crop_bounds(ux, w, ratio)
    y0, y1 = _crop_bounds(uy, h, ratio)
    weight = 1.0 - (x1 - x0) * (y1 - y0) / (w * h)
    perm = jnp.argsort(up).astype(jnp.int32)
    mask = _box_mask(h, w, (x0, x1, y0, y1))[..., None]
    return restore(jnp.where(mask, y[perm], y)), perm, weight


class CutMix(_MixLayer):
    """Pastes a box of another image of the batch into each image in training
    (Keras's `CutMix`): box side `sqrt(1 - λ)` of the image, `λ ~ Beta(a,
    a)` with `a` uniform in `factor`; labels mixed by the pasted area.

    Differences from Keras: the random numbers differ (jax.random).
    """

    def __init__(self, factor=1.0, seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor_pair(self, factor, (0, 1))

    def _mix(self, x, key):
        low, high = (float(f) for f in self.factor)
        out, perm, weight = _cut_mix(x, key, low, high, self._cf)
        return out, (perm, weight, key)

    def _mix_masks(self, masks, state):
        """Keras's: the images' boxes pasted into the masks too."""
        low, high = (float(f) for f in self.factor)
        return _cut_mix(masks, state[2], low, high, self._cf)[0]  # the same draws

    def _augment_boxes(self, bounding_boxes, state, x):
        raise NotImplementedError(
            "CutMix does not transform 'bounding_boxes' (Keras's raises "
            "NotImplementedError too)."
        )

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


# -- RandomErasing ---------------------------------------------------------------------
@op("RandomErasing", inputs=("x", "key"), jit=True)
def _erase(x, key, scale, factor, fill, value_range, channels_first):
    """Keras's draws (box sides `sqrt(u)`, `u` in `scale`; the coin from
    `factor`) and the erased boxes: `fill` a number, three (one per channel)
    or None (Gaussian noise times `value_range[1]`), clipped to the range."""
    y, restore = _nhwc(x, channels_first)
    n, h, w, _ = y.shape
    noise = y.shape if fill is None else (0,)
    us, ux, uy, u1, u2, un1, un2 = _units(
        key, (n, 2), (n,), (n,), (n,), (n,), noise, noise
    )
    ratio = jnp.sqrt(_between(us, scale[0], scale[1]))
    x0, x1 = _crop_bounds(ux, w, ratio[:, 0])
    y0, y1 = _crop_bounds(uy, h, ratio[:, 1])
    apply = _applied(u1, u2, factor)[:, None, None]
    mask = _box_mask(h, w, (x0, x1, y0, y1)) & apply
    if fill is None:
        f = kimage.box_muller(un1, un2) * value_range[1]
    else:
        f = jnp.broadcast_to(jnp.asarray(fill, jnp.float32), y.shape)
    f = jnp.clip(f, value_range[0], value_range[1]).astype(x.dtype)
    return restore(jnp.where(mask[..., None], f, y))


class RandomErasing(_AugmentLayer):
    """Erases a random box of each image in training (Keras's
    `RandomErasing`): each image with a probability drawn from `factor`; the
    box sides are `sqrt(u)` of the image sides, `u` uniform in `scale`; the
    box is filled with `fill_value` (a number or one per RGB channel) or, by
    default, Gaussian noise times `value_range[1]`, clipped to `value_range`.

    Differences from Keras: the random numbers differ (jax.random); a list
    `fill_value` is per channel also with `channels_first`.
    """

    _GEOMETRIC = False  # boxes and masks pass through, as Keras

    def __init__(self, factor=1.0, scale=(0.02, 0.33), fill_value=None,
                 value_range=(0, 255), seed=None, data_format=None,
                 **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor_pair(self, factor, (0, 1))
        self.scale = _named_pair(scale, "scale")
        self.fill_value = fill_value
        self.value_range = value_range

    def _fill(self):
        """Keras's check of `fill_value` (at call time, as Keras)."""
        fv = self.fill_value
        if fv is None:
            return None
        text = (
            "The `fill_value` argument should be a number (or a list of three numbers) "
        )
        if isinstance(fv, (tuple, list)):
            if len(fv) != 3:
                raise ValueError(text)
            return tuple(float(v) for v in fv)
        if isinstance(fv, (int, float)):
            return float(fv)
        raise ValueError(text)

    def _augment_images(self, x, key):
        scale = tuple(float(f) for f in self.scale)
        factor = tuple(float(f) for f in self.factor)
        vr = _value_range_list(self.value_range)
        return _erase(x, key, scale, factor, self._fill(), vr, self._cf)

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "scale": self.scale,
            "fill_value": self.fill_value,
            "value_range": self.value_range,
        }


def _named_pair(factor, name, bounds=(0, 1)):
    """Keras's `_set_factor_by_name` (its message says `factor=`)."""
    text = (
        f"The `{name}` argument should be a number (or a list of two numbers) in "
        f"the range [{bounds[0]}, {bounds[1]}]. Received: factor={factor}"
    )
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise ValueError(text)
        return tuple(sorted(factor))
    if isinstance(factor, (int, float)):
        if factor < bounds[0] or factor > bounds[1]:
            raise ValueError(text)
        return (max(-abs(factor), bounds[0]), abs(factor))
    raise ValueError(text)


# -- RandomGaussianBlur ----------------------------------------------------------------
def _gaussian_kernel(size, sigma, dtype):
    """Keras's TF `gaussian_blur` kernel for a (traced) `sigma` pair."""

    def one(k, s):
        t = jnp.arange(k, dtype=dtype) - (k - 1) / 2
        g = jnp.exp(-0.5 * (t / s) ** 2)
        return g / jnp.sum(g)

    k0, k1 = size
    return jnp.outer(one(k1, sigma[1]), one(k0, sigma[0])).reshape(k0, k1)


@op("RandomGaussianBlur", inputs=("x", "key"), jit=True)
def _random_blur(x, key, factor, sigma_range, kernel_size, value_range,
                 channels_first):  # fmt: skip
    """Keras's draws (the coin from `factor`, one `(sigma_y, sigma_x)` in
    `sigma_range` for the batch) and the blur, clipped to `value_range`."""
    y, restore = _nhwc(x, channels_first)
    n, c = y.shape[0], y.shape[-1]
    u1, u2, us = _units(key, (n,), (n,), (2,))
    apply = _applied(u1, u2, factor)
    sigma = _between(us, *sigma_range) + 1e-6
    k = _gaussian_kernel(kernel_size, sigma.astype(y.dtype), y.dtype)
    blurred = jax.lax.conv_general_dilated(
        y,
        jnp.tile(k[:, :, None, None], (1, 1, 1, c)),
        (1, 1),
        "SAME",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=c,
        precision=jax.lax.Precision.HIGHEST,
    )
    out = jnp.where(apply[:, None, None, None], blurred, y)
    return restore(jnp.clip(out, value_range[0], value_range[1]))


class RandomGaussianBlur(_AugmentLayer):
    """Blurs images with a Gaussian kernel in training (Keras's
    `RandomGaussianBlur`): each image with a probability drawn from
    `factor`; one `(sigma_y, sigma_x)` drawn from `sigma` for the batch;
    `kernel_size` odd; results clipped to `value_range`.

    Differences from Keras: the random numbers differ (jax.random).
    """

    _GEOMETRIC = False  # boxes and masks pass through, as Keras

    def __init__(self, factor=1.0, kernel_size=3, sigma=1.0, value_range=(0, 255),
                 data_format=None, seed=None, **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor_pair(self, factor, (0, 1))
        self.kernel_size = _kernel_size(kernel_size)
        self.sigma = _named_pair(sigma, "sigma")
        self.value_range = value_range

    def _augment_images(self, x, key):
        factor = tuple(float(f) for f in self.factor)
        sigma = tuple(float(f) for f in self.sigma)
        vr = _value_range_list(self.value_range)
        ks = tuple(int(k) for k in self.kernel_size)
        return _random_blur(x, key, factor, sigma, ks, vr, self._cf)

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "kernel_size": self.kernel_size,
            "sigma": self.sigma,
            "value_range": self.value_range,
        }


def _kernel_size(size, name="kernel_size"):
    text = f"{name} must be an odd number. Received: {name}={size}"
    if isinstance(size, (tuple, list)):
        if len(size) != 2:
            raise ValueError(
                f"The `{name}` argument should be a number (or a list of two "
                f"numbers) Received: {name}={size}"
            )
        if size[0] % 2 == 0 or size[1] % 2 == 0:
            raise ValueError(text)
        return (size[0], size[1])
    if isinstance(size, (int, float)):
        if size % 2 == 0:
            raise ValueError(text)
        return (size, size)
    raise ValueError(text)


# -- RandomShear -----------------------------------------------------------------------
@op("RandomShear", inputs=("x", "key"), jit=True)
def _random_shear(x, key, x_range, y_range, interpolation, fill_mode, fill_value,
                  channels_first):  # fmt: skip
    """Keras's shear matrices `[1, sx, 0, sy, 1, 0, 0, 0]` (both factors
    negated together for half the images), applied by `affine_transform`."""
    n = 1 if x.ndim == 3 else x.shape[0]
    ui, uy, ux = _units(key, (n,), (n,), (n,))
    sign = jnp.where(ui > 0.5, -1.0, 1.0)
    sy = _between(uy, *y_range) * sign
    sx = _between(ux, *x_range) * sign
    one, zero = jnp.ones_like(sx), jnp.zeros_like(sx)
    t = jnp.stack([one, sx, zero, sy, one, zero, zero, zero], axis=1)
    out = _affine_body(x, t, interpolation, fill_mode, fill_value, channels_first)
    return out, t


class RandomShear(_AugmentLayer):
    """Shears images at random in training (Keras's `RandomShear`): `x_factor`
    and `y_factor` in [0, 1] (a number `f` is `(-f, f)`), the sign flipped at
    random; filled by `fill_mode` (reflect, wrap, constant, nearest).

    Differences from Keras: the random numbers differ (jax.random); boxes
    become the hull of their corners mapped by the inverse shear, in pixels
    (Keras's shift them by a formula in relative coordinates).
    """

    _TEXT = (
        "The `factor` argument should be a number (or a list of two numbers) in "
        "the range [0, 1.0]. "
    )

    def __init__(self, x_factor=0.0, y_factor=0.0, interpolation="bilinear",
                 fill_mode="reflect", fill_value=0.0, data_format=None, seed=None,
                 **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.x_factor = self._shear_factor(x_factor, "x_factor")
        self.y_factor = self._shear_factor(y_factor, "y_factor")
        if fill_mode not in _FILL_MODES:
            raise NotImplementedError(
                f"Unknown `fill_mode` {fill_mode}. Expected of one {_FILL_MODES}."
            )
        if interpolation not in _INTERPOLATIONS:
            raise NotImplementedError(
                f"Unknown `interpolation` {interpolation}. Expected of one "
                f"{_INTERPOLATIONS}."
            )
        self.fill_mode, self.fill_value = fill_mode, fill_value
        self.interpolation = interpolation

    def _shear_factor(self, factor, name):
        def check(v):
            if v > 1.0 or v < 0.0:
                raise ValueError(self._TEXT + f"Received: input_number={v}")

        if isinstance(factor, (tuple, list)):
            if len(factor) != 2:
                raise ValueError(self._TEXT + f"Received: {name}={factor}")
            if factor[0] == -factor[1] and 0.0 < factor[1] <= 1.0:
                # Keras's config holds the resolved `(-f, f)`, which Keras's own
                # from_config refuses; jaxtape loads it.
                return (float(factor[0]), float(factor[1]))
            check(factor[0])
            check(factor[1])
            return tuple(sorted(factor))
        if isinstance(factor, (int, float)):
            check(factor)
            return (-abs(factor), abs(factor))
        raise ValueError(self._TEXT + f"Received: {name}={factor}")

    def _augment_with_state(self, x, key):
        return self._shear(x, key, self.interpolation)

    def _shear(self, x, key, interpolation):
        xr = tuple(float(f) for f in self.x_factor)
        yr = tuple(float(f) for f in self.y_factor)
        return _random_shear(x, key, xr, yr, interpolation, self.fill_mode,
                             float(self.fill_value), self._cf)  # fmt: skip

    def _augment_masks(self, masks, state):
        transform = state
        return _affine(masks, transform, "nearest", self.fill_mode,
                       float(self.fill_value), self._cf)  # fmt: skip

    def _augment_boxes(self, bounding_boxes, state, x):
        transform = state
        return _transformed_boxes(self, bounding_boxes, transform, x)

    def get_config(self):
        return {
            **super().get_config(),
            "x_factor": self.x_factor,
            "y_factor": self.y_factor,
            "fill_mode": self.fill_mode,
            "interpolation": self.interpolation,
            "fill_value": self.fill_value,
        }


# -- RandomPerspective -----------------------------------------------------------------
@op("RandomPerspective", inputs=("x", "key"), jit=True)
def _random_perspective(x, key, factor, scale, order, fill_value, channels_first):
    """Keras's: corners `(0, 0), (w-1, 0), (0, h-1), (w-1, h-1)` moved by
    `corner * offset` (offsets uniform in `±scale / 2`), the image warped by
    `perspective_transform` (when the coin from `factor` says so)."""
    y, restore = _nhwc(x, channels_first)
    n, h, w, _ = y.shape
    u1, u2, uo = _units(key, (n,), (n,), (n, 4, 2))
    apply = _applied(u1, u2, factor)
    offsets = _between(uo, -0.5 * scale, 0.5 * scale)
    start = jnp.asarray(
        [[0.0, 0.0], [w - 1.0, 0.0], [0.0, h - 1.0], [w - 1.0, h - 1.0]], jnp.float32
    )
    start = jnp.broadcast_to(start, (n, 4, 2))
    end = start + start * offsets
    transform = kimage._homography(start, end)
    warped: Any = kimage.projective(y, transform, order, fill_value)
    identity = jnp.asarray([1.0, 0, 0, 0, 1.0, 0, 0, 0], transform.dtype)
    applied = jnp.where(apply[:, None], transform, identity)
    return restore(jnp.where(apply[:, None, None, None], warped, y)), applied


class RandomPerspective(_AugmentLayer):
    """Warps images by a random perspective in training (Keras's
    `RandomPerspective`): each image with a probability drawn from `factor`,
    its corners moved by up to `scale / 2` of their coordinates; constant
    `fill_value` outside.

    Differences from Keras: the random numbers differ (jax.random).
    """

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear",
                 fill_value=0.0, seed=None, data_format=None, **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor_pair(self, factor, (0, 1))
        if scale < 0.0 or scale > 1.0:
            raise ValueError(
                "The `scale` argument should be a number in the range [0,1]. "
                f"Received: scale={scale}"
            )
        if interpolation not in _INTERPOLATIONS:
            raise NotImplementedError(
                f"Unknown `interpolation` {interpolation}. Expected of one "
                f"{_INTERPOLATIONS}."
            )
        self.scale, self.fill_value = scale, fill_value
        self.interpolation = interpolation

    def _augment_with_state(self, x, key):
        out, transform = self._warp(x, key, _INTERPOLATIONS.index(self.interpolation))
        return out, (transform, key)

    def _warp(self, x, key, order):
        factor = tuple(float(f) for f in self.factor)
        return _random_perspective(x, key, factor, float(self.scale), order,
                                   float(self.fill_value), self._cf)  # fmt: skip

    def _augment_masks(self, masks, state):
        return self._warp(masks, state[1], 0)[0]  # the images' key: their draws

    def _augment_boxes(self, bounding_boxes, state, x):
        return _transformed_boxes(self, bounding_boxes, state[0], x)

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "scale": self.scale,
            "interpolation": self.interpolation,
            "fill_value": self.fill_value,
        }


# -- RandomElasticTransform ------------------------------------------------------------
@op("RandomElasticTransform", inputs=("x", "key"), jit=True)
def _random_elastic(x, key, factor, scale, ksize, order, fill_mode, fill_value,
                    value_range, channels_first):  # fmt: skip
    """Keras's: `alpha = 0.1 f max(h, w)`, `sigma = 0.05 f min(h, w)` for a
    distortion `f` drawn from `scale`, then `elastic_transform` (when the
    coin from `factor` says so), then clipped."""
    y, restore = _nhwc(x, channels_first)
    n, h, w, _ = y.shape
    u1, u2, ud, uf1, uf2 = _units(key, (n,), (n,), (), (n, h, w), (n, h, w))
    apply = _applied(u1, u2, factor)
    distortion = _between(ud, *scale)
    alpha = max(h, w) * 0.1 * distortion
    sigma = min(h, w) * 0.05 * distortion
    noise = kimage.box_muller(uf1, uf2)
    warped = kimage.elastic(y, noise, alpha, sigma, ksize=ksize, order=order,
                            fill_mode=fill_mode, fill_value=fill_value)  # fmt: skip
    out = jnp.where(apply[:, None, None, None], warped, y)
    return restore(jnp.clip(out, value_range[0], value_range[1]))


class RandomElasticTransform(_AugmentLayer):
    """Elastic deformation in training (Keras's `RandomElasticTransform`):
    each image with a probability drawn from `factor`; a distortion `f`
    drawn from `scale` sets `alpha = 0.1 f max(H, W)` and `sigma = 0.05 f
    min(H, W)` of `keras.ops.image.elastic_transform`; clipped to
    `value_range`. `scale` or `factor` with upper bound 0 is the identity.

    Differences from Keras: the random numbers differ (jax.random);
    out-of-image reads follow SciPy's `fill_mode` rules.
    """

    _SUPPORTED_FILL_MODES = {"constant", "nearest", "wrap", "mirror", "reflect"}

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear",
                 fill_mode="reflect", fill_value=0.0, value_range=(0, 255),
                 seed=None, data_format=None, **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = _factor_pair(self, factor, (0, 1))
        self.scale = _named_pair(scale, "scale")
        if interpolation not in _INTERPOLATIONS:
            raise NotImplementedError(
                f"Unknown `interpolation` {interpolation}. Expected of one "
                f"{_INTERPOLATIONS}."
            )
        if fill_mode not in self._SUPPORTED_FILL_MODES:
            raise NotImplementedError(
                f"Unknown `fill_mode` {fill_mode}. Expected of one "
                f"{self._SUPPORTED_FILL_MODES}."
            )
        self.interpolation, self.fill_mode = interpolation, fill_mode
        self.fill_value, self.value_range = fill_value, value_range

    def _augment_with_state(self, x, key):
        return self._warp(x, key, self.interpolation), key

    def _augment_masks(self, masks, state):
        """Keras's: the masks warped by the same field, nearest."""
        return self._warp(masks, state, "nearest")

    def _warp(self, x, key, interpolation):
        if self.scale[1] == 0 or self.factor[1] == 0:
            return x
        ha, wa = (x.ndim - 2, x.ndim - 1) if self._cf else (x.ndim - 3, x.ndim - 2)
        h, w = int(x.shape[ha]), int(x.shape[wa])
        factor = tuple(float(f) for f in self.factor)
        scale = tuple(float(f) for f in self.scale)
        ksize = kimage.elastic_kernel_size(min(h, w) * 0.05 * float(self.scale[1]))
        return _random_elastic(
            x, key, factor, scale, ksize,
            _INTERPOLATIONS.index(interpolation), self.fill_mode,
            float(self.fill_value), _value_range_list(self.value_range), self._cf,
        )  # fmt: skip

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "scale": self.scale,
            "interpolation": self.interpolation,
            "fill_mode": self.fill_mode,
            "fill_value": self.fill_value,
            "value_range": self.value_range,
        }


# -- ContrastLimitedAdaptiveHistogramEqualization --------------------------------------
def _clahe_batch(images, clip_limit, grid):
    """Keras's `_clahe` on `(N, H, W, C)` values in [0, 255]: clipped
    256-bin histograms per tile, their CDFs bilinearly interpolated between
    tile centres (edge tiles repeated)."""
    n, height, width, c = images.shape
    gh, gw = grid
    th, tw = -(-height // gh), -(-width // gw)
    ph, pw = th * gh - height, tw * gw - width
    if ph or pw:
        images = jnp.pad(images, ((0, 0), (0, ph), (0, pw), (0, 0)), mode="symmetric")
    tiles = images.reshape(n, gh, th, gw, tw, c).transpose(0, 1, 3, 5, 2, 4)
    tiles = jnp.clip(tiles.reshape(n, gh, gw, c, th * tw).astype(jnp.int32), 0, 255)
    hists = jnp.sum(jax.nn.one_hot(tiles, 256, dtype=jnp.float32), axis=-2)
    if clip_limit > 0:
        limit = jnp.float32(clip_limit * (th * tw) / 256.0)
        clipped = jnp.clip(hists, 0, limit)
        hists = clipped + jnp.sum(hists - clipped, axis=-1, keepdims=True) / 256.0
    cdf = jnp.cumsum(hists, axis=-1)
    cdf_min = jnp.min(cdf, axis=-1, keepdims=True)
    den = jnp.float32(th * tw) - cdf_min
    den = jnp.where(den == 0, 1.0, den)
    cdf = jnp.clip((cdf - cdf_min) * 255.0 / den, 0, 255)
    cdf = jnp.concatenate([cdf[:, :1], cdf, cdf[:, -1:]], axis=1)
    cdf = jnp.concatenate([cdf[:, :, :1], cdf, cdf[:, :, -1:]], axis=2)

    def grid_of(size, tile, cells):
        g = (jnp.arange(size, dtype=jnp.float32) - tile / 2.0) / tile + 1.0
        lo = jnp.floor(g)
        wgt = g - lo
        lo_i = jnp.clip(lo, 0, cells + 1).astype(jnp.int32)
        hi_i = jnp.clip(lo + 1.0, 0, cells + 1).astype(jnp.int32)
        return lo_i, hi_i, wgt

    y0, y1, wy = grid_of(th * gh, th, gh)
    x0, x1, wx = grid_of(tw * gw, tw, gw)
    pixels = jnp.clip(images, 0, 255).astype(jnp.int32)
    b = jnp.arange(n)[:, None, None, None]
    ch = jnp.arange(c)[None, None, None, :]
    Y0, Y1 = y0[None, :, None, None], y1[None, :, None, None]  # noqa: N806
    X0, X1 = x0[None, None, :, None], x1[None, None, :, None]  # noqa: N806
    wy, wx = wy[None, :, None, None], wx[None, None, :, None]
    top = cdf[b, Y0, X0, ch, pixels] * (1.0 - wx) + cdf[b, Y0, X1, ch, pixels] * wx
    bottom = cdf[b, Y1, X0, ch, pixels] * (1.0 - wx) + cdf[b, Y1, X1, ch, pixels] * wx
    out = top * (1.0 - wy) + bottom * wy
    return out[:, :height, :width, :]


@op("CLAHE", inputs=("x",), jit=True)
def _clahe(x, value_range, clip_limit, grid, channels_first):
    y, restore = _nhwc(x, channels_first)
    full = (0.0, 255.0)
    if value_range != full:
        y = _to_range(y.astype(jnp.float32), value_range, full)
    out = _clahe_batch(y, clip_limit, grid)
    if value_range != full:
        out = _to_range(out, full, value_range)
    return restore(out.astype(x.dtype))


class ContrastLimitedAdaptiveHistogramEqualization(_AugmentLayer):
    """Contrast-limited adaptive histogram equalization (Keras's
    `ContrastLimitedAdaptiveHistogramEqualization`): per channel, one clipped
    (`clip_limit`) histogram per tile of a `tile_grid_size` grid, mapped
    through CDFs interpolated between tiles; in training and inference
    alike. Integer images keep their dtype.

    Differences from Keras: None known.
    """

    def __init__(self, value_range=(0, 255), clip_limit=4.0, tile_grid_size=(8, 8),
                 data_format=None, **kwargs):  # fmt: skip
        super().__init__(data_format=data_format, **kwargs)
        self.value_range = value_range
        self.clip_limit = clip_limit
        self.tile_grid_size = tile_grid_size

    def call(self, inputs, training=True):
        del training  # applied in inference too, as Keras
        if isinstance(inputs, dict):
            return _call_on_dict(
                self,
                inputs,
                lambda x: (self._equalize(x), None),
                self._no_boxes,
                self._no_masks,
                cast=False,
            )
        return self._equalize(inputs)

    def _no_boxes(self, bounding_boxes, state, x):
        raise self._not_transformed("bounding_boxes")  # (Keras's raises too)

    def _no_masks(self, masks, state):
        raise self._not_transformed("segmentation_masks")

    def _equalize(self, images):
        x = images
        if jnp.issubdtype(np.dtype(x.dtype.name), np.floating):
            x = math_ops.cast(x, self._dtype.name)
        _check_image_rank(self, x)
        return _clahe(
            x,
            _value_range_list(self.value_range),
            float(self.clip_limit),
            tuple(int(g) for g in self.tile_grid_size),
            self._cf,
        )

    def get_config(self):
        cfg = super().get_config()
        del cfg["seed"]
        return {
            **cfg,
            "value_range": self.value_range,
            "clip_limit": self.clip_limit,
            "tile_grid_size": self.tile_grid_size,
        }
