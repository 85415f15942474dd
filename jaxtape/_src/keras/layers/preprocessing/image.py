"""Keras's image preprocessing layers: Resizing, CenterCrop and the random
augmentations (RandomFlip, RandomRotation, RandomZoom, RandomTranslation,
RandomCrop, RandomContrast, RandomBrightness). Layer L5.

Images are `(H, W, C)` or `(N, H, W, C)` (`channels_first` moves C first).
Resizing is `jax.image.resize`; rotations, zooms and translations are
Keras's affine transforms on `jax.scipy.ndimage.map_coordinates` (its
`fill_mode`s are Keras's). The random layers draw from a `SeedStream`
(reproducible from `seed`, fresh on every compiled call) in training and
are the identity with `training=False`; called alone (training None)
they augment, as Keras 3's `call(data, training=True)`. Keras's dict
inputs go through `image_data`: boxes (`bounding_box_format`) and
segmentation masks follow the images' draws (`bounding_boxes` holds the
box transforms).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp

from jaxtape._src.core.dispatch import op
from jaxtape._src.keras.layers.arguments import standardize_data_format
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.layers.preprocessing import bounding_boxes as bbox
from jaxtape._src.keras.layers.preprocessing.image_data import (
    _batch_of,
    _box_config,
    _box_format,
    _call_on_dict,
    _check_image_rank,
    _hw_axes,
    _size_of,
    _with_boxes,
)
from jaxtape._src.keras.layers.seed_generator import SeedStream
from jaxtape._src.ops import image_resize_ops, math_ops

__all__ = [
    "CenterCrop",
    "RandomBrightness",
    "RandomContrast",
    "RandomCrop",
    "RandomFlip",
    "RandomRotation",
    "RandomTranslation",
    "RandomZoom",
    "Resizing",
]

_RESIZE_METHODS = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic", "area")
_FILL_MODES = ("reflect", "wrap", "constant", "nearest")


# -- pure image bodies -----------------------------------------------------------------
def _crop_box(h, w, th, tw):
    """Keras's `crop_to_aspect_ratio` box: the largest centred `th:tw` window."""
    ch = max(min(h, int(float(w * th) / tw)), 1)
    cw = max(min(w, int(float(h * tw) / th)), 1)
    return int(float(h - ch) / 2), int(float(w - cw) / 2), ch, cw


def _slice_hw(x, top, left, h, w, channels_first):
    ha, wa = _hw_axes(x.ndim, channels_first)
    x = jax.lax.slice_in_dim(x, top, top + h, axis=ha)
    return jax.lax.slice_in_dim(x, left, left + w, axis=wa)


def _resize_body(x, size, method, antialias, crop, pad, fill_value, channels_first):
    """Keras's `ops.image.resize` (its TF backend): optional centred crop or
    pad to the target aspect ratio, then TF's `tf.image.resize` kernels."""
    ha, wa = _hw_axes(x.ndim, channels_first)
    h, w = x.shape[ha], x.shape[wa]
    th, tw = size
    if crop:
        top, left, ch, cw = _crop_box(h, w, th, tw)
        x = _slice_hw(x, top, left, ch, cw, channels_first)
    elif pad:
        ph = max(h, int(float(w * th) / tw))
        pw = max(w, int(float(h * tw) / th))
        top, left = int(float(ph - h) / 2), int(float(pw - w) / 2)
        widths = [(0, 0)] * x.ndim
        widths[ha], widths[wa] = (top, top), (left, left)
        x = jnp.pad(x, widths, constant_values=fill_value)
    out = image_resize_ops.resize_along(x, (th, tw), method, antialias, (ha, wa))
    return out.astype(x.dtype)


@op("ResizeImages", inputs=("x",), jit=True)
def _resize(x, size, method, antialias, crop, pad, fill_value, channels_first):
    return _resize_body(
        x, size, method, antialias, crop, pad, fill_value, channels_first
    )


@op("AffineTransform", inputs=("x", "transform"), jit=True)
def _affine(x, transform, interpolation, fill_mode, fill_value, channels_first):
    """Keras's `ops.image.affine_transform`: each output pixel `(y, x)`
    samples the input at `(b0 x + b1 y + b2, a0 x + a1 y + a2)` (TF's
    8-number projective transforms, the last two 0), by `map_coordinates`
    (order 0 or 1) with `fill_mode`."""
    single = x.ndim == 3
    if single:
        x = x[None]
    if channels_first:
        x = jnp.transpose(x, (0, 2, 3, 1))
    n, h, w, c = x.shape
    t = jnp.broadcast_to(transform, (n, 8)).astype(jnp.float32)
    yy, xx = jnp.meshgrid(
        jnp.arange(h, dtype=jnp.float32),
        jnp.arange(w, dtype=jnp.float32),
        indexing="ij",
    )
    src_x = t[:, 0, None, None] * xx + t[:, 1, None, None] * yy + t[:, 2, None, None]
    src_y = t[:, 3, None, None] * xx + t[:, 4, None, None] * yy + t[:, 5, None, None]
    order = 0 if interpolation == "nearest" else 1
    if fill_mode == "wrap":  # TF's wrap (period `len`, folded by `len - 1`)
        src_y, src_x = _tf_wrap(src_y, h), _tf_wrap(src_x, w)
        fill_mode = "nearest"

    def one(image, sy, sx):
        def channel(ch):
            return jax.scipy.ndimage.map_coordinates(
                ch, [sy, sx], order=order, mode=fill_mode, cval=fill_value
            )

        return jax.vmap(channel, in_axes=-1, out_axes=-1)(image)

    out = jax.vmap(one)(x.astype(jnp.float32), src_y, src_x).astype(x.dtype)
    if channels_first:
        out = jnp.transpose(out, (0, 3, 1, 2))
    return out[0] if single else out


def _tf_wrap(coord, size):
    """TF's `MapCoordinate<FILL_WRAP>` (ImageProjectiveTransformV3), which
    differs from scipy's and JAX's `wrap`, then clamped to the image."""
    if size <= 1:
        return jnp.zeros_like(coord)
    sz = size - 1
    low = coord + size * (jnp.trunc(-coord / sz) + 1)
    high = coord - size * jnp.trunc(coord / sz)
    out = jnp.where(coord < 0, low, jnp.where(coord > sz, high, coord))
    return jnp.clip(out, 0, sz)


# -- deterministic layers --------------------------------------------------------------
class Resizing(Layer):
    """Resizes images to `(height, width)` (Keras's `Resizing`, on
    `jax.image.resize`): `interpolation` one of bilinear, nearest, bicubic,
    lanczos3, lanczos5; `crop_to_aspect_ratio` / `pad_to_aspect_ratio`
    keep the aspect ratio.

    Differences from Keras: None known.
    """

    def __init__(
        self,
        height,
        width,
        interpolation="bilinear",
        crop_to_aspect_ratio=False,
        pad_to_aspect_ratio=False,
        fill_mode="constant",
        fill_value=0.0,
        antialias=False,
        data_format=None,
        bounding_box_format=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.bounding_box_format = bounding_box_format
        if interpolation not in _RESIZE_METHODS:
            raise ValueError(
                "Invalid value for argument `interpolation`. Expected of one "
                f"{_RESIZE_METHODS}. Received: interpolation={interpolation}"
            )
        if fill_mode != "constant":
            raise ValueError(
                "Invalid value for argument `fill_mode`. Only `'constant'` is "
                f"supported. Received: fill_mode={fill_mode}"
            )
        if pad_to_aspect_ratio and crop_to_aspect_ratio:
            raise ValueError(
                "Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be "
                "`True`."
            )
        self.height, self.width = int(height), int(width)
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = crop_to_aspect_ratio
        self.pad_to_aspect_ratio = pad_to_aspect_ratio
        self.fill_mode, self.fill_value = fill_mode, fill_value
        self.antialias = antialias
        self.data_format = standardize_data_format(data_format)

    def call(self, inputs):
        if isinstance(inputs, dict):
            return _call_on_dict(
                self,
                inputs,
                lambda x: (self._resize(x, self.interpolation), None),
                self._resize_boxes,
                lambda m, _: self._resize(m, "nearest"),
            )
        x = math_ops.cast(inputs, self._dtype.name)
        _check_image_rank(self, x)
        return self._resize(x, self.interpolation)

    def _resize(self, x, interpolation):
        return _resize(
            x,
            (self.height, self.width),
            interpolation,
            bool(self.antialias),
            bool(self.crop_to_aspect_ratio),
            bool(self.pad_to_aspect_ratio),
            float(self.fill_value),
            self.data_format == "channels_first",
        )

    def _resize_boxes(self, bounding_boxes, state, x):
        del state
        size = _size_of(x, self.data_format == "channels_first")
        mode = (
            "pad"
            if self.pad_to_aspect_ratio
            else "crop"
            if self.crop_to_aspect_ratio
            else "stretch"
        )
        out = bbox.resize_layer_boxes(
            bounding_boxes["boxes"],
            bounding_boxes["labels"],
            size,
            (self.height, self.width),
            mode,
            _box_format(self),
        )
        return _with_boxes(bounding_boxes, out)

    def get_config(self):
        return {
            **super().get_config(),
            "height": self.height,
            "width": self.width,
            "interpolation": self.interpolation,
            "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
            "pad_to_aspect_ratio": self.pad_to_aspect_ratio,
            "fill_mode": self.fill_mode,
            "fill_value": self.fill_value,
            "antialias": self.antialias,
            "data_format": self.data_format,
            **_box_config(self),
        }


class CenterCrop(Layer):
    """Crops the centre `(height, width)` of images (Keras's `CenterCrop`);
    an image smaller than that is cropped to the aspect ratio and resized
    (bilinear), as Keras's `smart_resize`.

    Differences from Keras: None known.
    """

    def __init__(self, height, width, data_format=None, bounding_box_format=None,
                 **kwargs):  # fmt: skip
        super().__init__(**kwargs)
        self.height, self.width = int(height), int(width)
        self.data_format = standardize_data_format(data_format)
        self.bounding_box_format = bounding_box_format

    def call(self, inputs):
        if isinstance(inputs, dict):
            return _call_on_dict(
                self,
                inputs,
                lambda x: (self._center_crop(x), None),
                self._crop_boxes,
                lambda m, _: self._center_crop(math_ops.cast(m, self._dtype.name)),
            )
        x = math_ops.cast(inputs, self._dtype.name)
        _check_image_rank(self, x)
        return self._center_crop(x)

    def _crop_boxes(self, bounding_boxes, state, x):
        del state
        size = _size_of(x, self.data_format == "channels_first")
        out = bbox.center_crop_layer_boxes(
            bounding_boxes["boxes"],
            bounding_boxes["labels"],
            size,
            (self.height, self.width),
            _box_format(self),
        )
        return _with_boxes(bounding_boxes, out)

    def _center_crop(self, x):
        cf = self.data_format == "channels_first"
        ha, wa = _hw_axes(x.ndim, cf)
        shape: Any = x.shape
        h, w = shape[ha], shape[wa]
        if h >= self.height and w >= self.width:
            top, left = (h - self.height) // 2, (w - self.width) // 2
            return _crop(x, top, left, self.height, self.width, cf)
        return _resize(
            x, (self.height, self.width), "bilinear", False, True, False, 0.0, cf
        )

    def get_config(self):
        return {
            **super().get_config(),
            "height": self.height,
            "width": self.width,
            "data_format": self.data_format,
            **_box_config(self),
        }


@op("CropImages", inputs=("x",))
def _crop(x, top, left, height, width, channels_first):
    return _slice_hw(x, top, left, height, width, channels_first)


# -- random layers ---------------------------------------------------------------------
def _factor_pair(layer, factor, bounds, name="factor"):
    """Keras's `_set_factor`: a number `f` is `(max(-|f|, low), |f|)`, a pair
    is sorted; values outside `bounds` raise its ValueError."""
    text = (
        f"The `{name}` argument should be a number (or a list of two numbers) in "
        f"the range [{bounds[0]}, {bounds[1]}]. Received: {name}={factor}"
    )
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise ValueError(text)
        lower, upper = sorted(factor)  # (as given: ints stay ints, as Keras's)
    elif isinstance(factor, (int, float)):
        if factor < bounds[0] or factor > bounds[1]:
            raise ValueError(text)
        f = abs(factor)
        lower, upper = max(-f, bounds[0]), f
    else:
        raise ValueError(text)
    return lower, upper


class _RandomImageLayer(Layer):
    """The random augmentations' shared parts: the seed stream, the
    `training` switch (identity at inference), rank checks, config, and
    Keras's dict inputs (`images`, `labels`, `bounding_boxes`,
    `segmentation_masks`): a geometric layer transforms boxes and masks
    with the images' draws (`_augment_with_state`, `_augment_boxes`,
    `_augment_masks`); a colour layer (`_GEOMETRIC = False`) passes them
    through; at inference all pass through."""

    _GEOMETRIC = True

    def __init__(self, seed=None, data_format=None, bounding_box_format=None,
                 **kwargs):  # fmt: skip
        super().__init__(**kwargs)
        self.seed = seed
        self.data_format = standardize_data_format(data_format)
        self.bounding_box_format = bounding_box_format
        self._seed_stream = SeedStream(seed)

    def call(self, inputs, training=True):
        if isinstance(inputs, dict):
            return self._call_dict(inputs, training)
        x = math_ops.cast(inputs, self._dtype.name)
        _check_image_rank(self, x)
        # Keras 3's `call(data, training=True)`: called alone, a random layer
        # augments; inside `predict`/`evaluate` (training False) it does not.
        if training is None:
            training = True
        if not training:
            return self._infer(x)
        return self._augment(x, self._seed_stream.next())

    def _call_dict(self, inputs, training):
        if training is None:
            training = True
        if not training:
            return _call_on_dict(
                self,
                inputs,
                lambda x: (self._infer(x), None),
                lambda bb, state, x: bb,
                lambda m, state: m,
            )
        key = self._seed_stream.next()
        return _call_on_dict(
            self,
            inputs,
            lambda x: self._augment_with_state(x, key),
            self._augment_boxes,
            self._augment_masks,
            self._augment_labels,
        )

    def _infer(self, x):
        return x

    def _augment(self, x, key):
        raise NotImplementedError

    def _augment_with_state(self, x, key) -> tuple[Any, Any]:
        """The augmented images and what boxes, masks and labels need."""
        return self._augment(x, key), key

    def _not_transformed(self, what):
        return NotImplementedError(
            f"{type(self).__name__} in jaxtape does not transform {what!r} yet; "
            "pass only 'images' and 'labels'."
        )

    def _augment_boxes(self, bounding_boxes, state, x):
        if self._GEOMETRIC:
            raise self._not_transformed("bounding_boxes")
        return bounding_boxes

    def _augment_masks(self, masks, state):
        if self._GEOMETRIC:
            raise self._not_transformed("segmentation_masks")
        return masks

    def _augment_labels(self, labels, state):
        del state
        return labels

    @property
    def _cf(self):
        return self.data_format == "channels_first"

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {
            **super().get_config(),
            "seed": self.seed,
            "data_format": self.data_format,
            **_box_config(self),
        }


@op("RandomFlip", inputs=("x", "key"), differentiable=True, jit=True)
def _random_flip(x, key, horizontal, vertical, channels_first):
    """One uniform draw per image: `<= 0.5` flips it (both ways in
    `horizontal_and_vertical`, as Keras)."""
    n = 1 if x.ndim == 3 else x.shape[0]
    u = jax.random.uniform(jax.random.wrap_key_data(key), (n,))
    flip = (u <= 0.5).reshape((n,) + (1,) * 3)
    if x.ndim == 3:
        flip = flip[0]
    ha, wa = _hw_axes(x.ndim, channels_first)
    out = x
    if horizontal:
        out = jnp.where(flip, jnp.flip(out, wa), out)
    if vertical:
        out = jnp.where(flip, jnp.flip(out, ha), out)
    return out


class RandomFlip(_RandomImageLayer):
    """Flips images at random in training (Keras's `RandomFlip`): `mode`
    `'horizontal'`, `'vertical'` or `'horizontal_and_vertical'` (the
    default), each image with probability 1/2.

    Differences from Keras: the random numbers differ (jax.random).
    """

    _convert_input_args = False  # (Keras's: dict labels keep their dtype)

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None,
                 **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if mode not in ("horizontal", "vertical", "horizontal_and_vertical"):
            raise ValueError(
                f"RandomFlip layer {self.name} received an unknown mode argument {mode}"
            )
        self.mode = mode

    def _augment(self, x, key):
        return _random_flip(
            x,
            key,
            "horizontal" in self.mode,
            "vertical" in self.mode,
            self.data_format == "channels_first",
        )

    def _augment_boxes(self, bounding_boxes, state, x):
        key = state
        h, w = _size_of(x, self._cf)
        out = bbox.flip_layer_boxes(
            bounding_boxes["boxes"],
            bounding_boxes["labels"],
            _flip_draws(key, _batch_of(x)),
            h,
            w,
            "horizontal" in self.mode,
            "vertical" in self.mode,
            _box_format(self),
        )
        return _with_boxes(bounding_boxes, out)

    def _augment_masks(self, masks, state):
        key = state
        return self._augment(masks, key)  # the same key: the same flips

    def get_config(self):
        return {**super().get_config(), "mode": self.mode}


@op("RandomFlipDraws", inputs=("key",), differentiable=False)
def _flip_draws(key, n):
    """`_random_flip`'s per-image decisions (the same draw of the same key)."""
    return jax.random.uniform(jax.random.wrap_key_data(key), (n,)) <= 0.5


class _AffineLayer(_RandomImageLayer):
    """Random rotation, zoom or translation: a transform per image, drawn
    from the key, applied by `_affine`."""

    def __init__(self, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if fill_mode not in _FILL_MODES:
            raise NotImplementedError(
                f"Unknown `fill_mode` {fill_mode}. Expected of one {_FILL_MODES}."
            )
        if interpolation not in ("nearest", "bilinear"):
            raise NotImplementedError(
                f"Unknown `interpolation` {interpolation}. Expected of one "
                "('nearest', 'bilinear')."
            )
        self.fill_mode, self.interpolation = fill_mode, interpolation
        self.fill_value = float(fill_value)

    def _augment(self, x, key):
        return self._augment_with_state(x, key)[0]

    def _augment_with_state(self, x, key):
        h, w = _size_of(x, self._cf)
        transform = self._transforms(key, _batch_of(x), h, w)
        return self._warp(x, transform, self.interpolation), transform

    def _warp(self, x, transform, interpolation):
        return _affine(
            x, transform, interpolation, self.fill_mode, self.fill_value, self._cf
        )

    def _augment_masks(self, masks, state):
        transform = state
        return self._warp(masks, transform, "nearest")

    def _augment_boxes(self, bounding_boxes, state, x):
        transform = state
        h, w = _size_of(x, self._cf)
        out = bbox.transform_layer_boxes(
            bounding_boxes["boxes"],
            bounding_boxes["labels"],
            transform,
            h,
            w,
            _box_format(self),
        )
        return _with_boxes(bounding_boxes, out)

    def _transforms(self, key, n, h, w):
        raise NotImplementedError

    def get_config(self):
        return {
            **super().get_config(),
            "fill_mode": self.fill_mode,
            "interpolation": self.interpolation,
            "fill_value": self.fill_value,
        }


def _uniform(key, shape, low, high):
    return jax.random.uniform(
        jax.random.wrap_key_data(key), shape, jnp.float32, low, high
    )


@op("RotationTransforms", inputs=("key",), differentiable=False)
def _rotation_transforms(key, n, h, w, lower, upper):
    """Keras's rotation matrices about the image centre, angles uniform in
    `[lower, upper] * 360` degrees."""
    angle = _uniform(key, (n,), lower * 360.0, upper * 360.0) * (math.pi / 180.0)
    cx, cy = 0.5 * (w - 1), 0.5 * (h - 1)
    cos, sin = jnp.cos(angle), jnp.sin(angle)
    a0, a1, b0, b1 = cos, -sin, sin, cos
    a2 = cx - cx * a0 - cy * a1
    b2 = cy - cx * b0 - cy * b1
    zeros = jnp.zeros_like(angle)
    return jnp.stack([a0, a1, a2, b0, b1, b2, zeros, zeros], axis=1)


class RandomRotation(_AffineLayer):
    """Rotates images by a random angle in training (Keras's
    `RandomRotation`): `factor` is a fraction of a full turn (`0.1` is up
    to ±36°, `(-0.1, 0.2)` a range); `fill_mode` reflect (default),
    wrap, nearest, mirror or constant (`fill_value`); `interpolation`
    bilinear or nearest.

    Differences from Keras: the random numbers differ (jax.random); boxes in
    a format other than xyxy are converted before the rotation (Keras's
    rotate them as if they were xyxy).
    """

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear",
                 seed=None, fill_value=0.0, data_format=None, **kwargs):  # fmt: skip
        super().__init__(
            fill_mode, interpolation, seed, fill_value, data_format, **kwargs
        )
        self.factor = _factor_pair(self, factor, (-1, 1))

    def _transforms(self, key, n, h, w):
        return _rotation_transforms(key, n, h, w, *self.factor)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}  # (Keras's pair)


@op("ZoomTransforms", inputs=("key",), differentiable=False)
def _zoom_transforms(key, n, h, w, h_range, w_range):
    """Keras's zoom matrices: zoom `1 + u` per axis (`w_range` None: the
    height's zoom for both), about the centre."""
    k1, k2 = jax.random.split(jax.random.wrap_key_data(key))
    hz = jax.random.uniform(k1, (n,), jnp.float32, 1.0 + h_range[0], 1.0 + h_range[1])
    if w_range is None:
        wz = hz
    else:
        wz = jax.random.uniform(
            k2, (n,), jnp.float32, 1.0 + w_range[0], 1.0 + w_range[1]
        )
    zeros = jnp.zeros_like(hz)
    x_off = (w - 1.0) / 2.0 * (1.0 - wz)
    y_off = (h - 1.0) / 2.0 * (1.0 - hz)
    return jnp.stack([wz, zeros, x_off, zeros, hz, y_off, zeros, zeros], axis=1)


class RandomZoom(_AffineLayer):
    """Zooms images at random in training (Keras's `RandomZoom`):
    `height_factor` (and `width_factor`; None keeps the aspect ratio) as
    fractions, negative zooms in (`-0.2`: up to 20% larger), positive
    out; a number `f` is `(-f, f)`.

    Differences from Keras: the random numbers differ (jax.random).
    """

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0,
                 data_format=None, **kwargs):  # fmt: skip
        super().__init__(
            fill_mode, interpolation, seed, fill_value, data_format, **kwargs
        )
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_lower, self.height_upper = _factor_pair(
            self, height_factor, (-1, float("inf")), "height_factor"
        )
        self._w_range = None
        if width_factor is not None:
            self.width_lower, self.width_upper = _factor_pair(
                self, width_factor, (-1, float("inf")), "width_factor"
            )
            self._w_range = (self.width_lower, self.width_upper)

    def _transforms(self, key, n, h, w):
        return _zoom_transforms(
            key, n, h, w, (self.height_lower, self.height_upper), self._w_range
        )

    def get_config(self):
        return {
            **super().get_config(),
            "height_factor": self.height_factor,
            "width_factor": self.width_factor,
        }


@op("TranslationTransforms", inputs=("key",), differentiable=False)
def _translation_transforms(key, n, h, w, h_range, w_range):
    """Keras's translation matrices: shifts of `u * height` and `u * width`."""
    k1, k2 = jax.random.split(jax.random.wrap_key_data(key))
    dy = jax.random.uniform(k1, (n,), jnp.float32, h_range[0], h_range[1]) * h
    dx = jax.random.uniform(k2, (n,), jnp.float32, w_range[0], w_range[1]) * w
    ones, zeros = jnp.ones_like(dx), jnp.zeros_like(dx)
    return jnp.stack([ones, zeros, -dx, zeros, ones, -dy, zeros, zeros], axis=1)


class RandomTranslation(_AffineLayer):
    """Shifts images at random in training (Keras's `RandomTranslation`):
    `height_factor` and `width_factor` are fractions of the size (a number
    `f` is `(-f, f)`).

    Differences from Keras: the random numbers differ (jax.random).
    """

    def __init__(self, height_factor, width_factor, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0,
                 data_format=None, **kwargs):  # fmt: skip
        super().__init__(
            fill_mode, interpolation, seed, fill_value, data_format, **kwargs
        )
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_lower, self.height_upper = _factor_pair(
            self, height_factor, (-1, 1), "height_factor"
        )
        self.width_lower, self.width_upper = _factor_pair(
            self, width_factor, (-1, 1), "width_factor"
        )

    def _transforms(self, key, n, h, w):
        return _translation_transforms(
            key,
            n,
            h,
            w,
            (self.height_lower, self.height_upper),
            (self.width_lower, self.width_upper),
        )

    def get_config(self):
        return {
            **super().get_config(),
            "height_factor": self.height_factor,
            "width_factor": self.width_factor,
        }


@op("RandomCrop", inputs=("x", "key"), jit=True)
def _random_crop(x, key, height, width, channels_first):
    """One random `(height, width)` window for the whole batch (Keras's)."""
    ha, wa = _hw_axes(x.ndim, channels_first)
    k1, k2 = jax.random.split(jax.random.wrap_key_data(key))
    top = jax.random.randint(k1, (), 0, x.shape[ha] - height + 1)
    left = jax.random.randint(k2, (), 0, x.shape[wa] - width + 1)
    start = [0] * x.ndim
    start[ha], start[wa] = top, left
    size = list(x.shape)
    size[ha], size[wa] = height, width
    return jax.lax.dynamic_slice(x, start, size)


@op("RandomCropOffsets", inputs=("key",), differentiable=False)
def _crop_offsets(key, h, w, height, width):
    """`_random_crop`'s window `(top, left)` (the same draws of the same key)."""
    k1, k2 = jax.random.split(jax.random.wrap_key_data(key))
    top = jax.random.randint(k1, (), 0, h - height + 1)
    left = jax.random.randint(k2, (), 0, w - width + 1)
    return jnp.stack([top, left])


class RandomCrop(_RandomImageLayer):
    """Crops a random `(height, width)` window in training (Keras's
    `RandomCrop`: one window for the batch; an image not larger than the
    target is centre-cropped to its aspect ratio and resized); with
    `training=False` it returns the input unchanged, as Keras 3.15 does
    (its docstring says it resizes).

    Differences from Keras: the random numbers differ (jax.random); boxes
    are shifted by the window's `(left, top)`, clipped to it, and scaled as
    the image when it is resized (Keras's subtract the top offset from x and
    the left from y, and do not clip or scale).
    """

    _convert_input_args = False  # (Keras's: dict labels keep their dtype)

    def __init__(self, height, width, seed=None, data_format=None, name=None,
                 **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, name=name, **kwargs)
        self.height, self.width = int(height), int(width)

    def _resize_to_target(self, x):
        cf = self.data_format == "channels_first"
        ha, wa = _hw_axes(x.ndim, cf)
        if (x.shape[ha], x.shape[wa]) == (self.height, self.width):
            return x
        size = (self.height, self.width)
        return _resize(x, size, "bilinear", False, False, False, 0.0, cf)

    def _augment(self, x, key):
        cf = self.data_format == "channels_first"
        ha, wa = _hw_axes(x.ndim, cf)
        h, w = x.shape[ha], x.shape[wa]
        if h > self.height and w > self.width:
            return _random_crop(x, key, self.height, self.width, cf)
        top, left, _, _ = _crop_box(h, w, self.height, self.width)
        x = _crop(
            x, top, left, min(self.height, h - top), min(self.width, w - left), cf
        )
        return self._resize_to_target(x)

    def _augment_masks(self, masks, state):
        key = state
        return self._augment(masks, key)  # the same key: the same window

    def _augment_boxes(self, bounding_boxes, state, x):
        key = state
        h, w = _size_of(x, self._cf)
        if h > self.height and w > self.width:
            offsets = _crop_offsets(key, h, w, self.height, self.width)
            scale = (1.0, 1.0)
        else:
            top, left, _, _ = _crop_box(h, w, self.height, self.width)
            ch, cw = min(self.height, h - top), min(self.width, w - left)
            offsets = jnp.asarray([top, left], jnp.int32)
            scale = (self.height / ch, self.width / cw)
        out = bbox.crop_layer_boxes(
            bounding_boxes["boxes"],
            bounding_boxes["labels"],
            offsets,
            (h, w),
            (self.height, self.width),
            scale,
            _box_format(self),
        )
        return _with_boxes(bounding_boxes, out)

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        ha, wa = _hw_axes(len(shape), self.data_format == "channels_first")
        shape[ha], shape[wa] = self.height, self.width
        return tuple(shape)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width}


@op("RandomContrast", inputs=("x", "key"), jit=True)
def _random_contrast(x, key, low, high, value_range, channels_first):
    """`(x - mean) * f + mean`, `f` uniform in `[low, high]` per image (the
    mean over height and width), clipped to `value_range`."""
    n = 1 if x.ndim == 3 else x.shape[0]
    f = _uniform(key, (n,), low, high).astype(x.dtype)
    f = f.reshape((n, 1, 1, 1))[0] if x.ndim == 3 else f.reshape((n, 1, 1, 1))
    ha, wa = _hw_axes(x.ndim, channels_first)
    mean = jnp.mean(x, axis=(ha, wa), keepdims=True)
    return jnp.clip((x - mean) * f + mean, value_range[0], value_range[1])


class RandomContrast(_RandomImageLayer):
    """Scales each image's contrast by a random factor in training
    (Keras's `RandomContrast`): the factor is uniform in `[1 - lower, 1 +
    upper]` of `factor` (Keras 3 reads a number `f` as `(0, f)`), and
    results are clipped to `value_range` (default `(0, 255)`).

    Differences from Keras: the random numbers differ (jax.random).
    """

    _GEOMETRIC = False  # boxes and masks pass through, as Keras

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.factor = _factor_pair(self, factor, (0, 1))
        self.value_range = tuple(value_range)

    def _augment(self, x, key):
        return _random_contrast(
            x,
            key,
            1.0 - self.factor[0],
            1.0 + self.factor[1],
            tuple(float(v) for v in self.value_range),
            self.data_format == "channels_first",
        )

    def get_config(self):
        # (Keras's: the factor as the `(lower, upper)` pair it resolved to)
        cfg = super().get_config()
        return {**cfg, "factor": self.factor, "value_range": list(self.value_range)}


@op("RandomBrightness", inputs=("x", "key"), jit=True)
def _random_brightness(x, key, low, high, value_range):
    """Adds `u * (max - min)` per image, `u` uniform in `[low, high]`, then
    clips to `value_range`."""
    n = 1 if x.ndim == 3 else x.shape[0]
    delta = _uniform(key, (n,), low, high) * (value_range[1] - value_range[0])
    delta = delta.astype(x.dtype).reshape((n, 1, 1, 1))
    if x.ndim == 3:
        delta = delta[0]
    return jnp.clip(x + delta, value_range[0], value_range[1])


class RandomBrightness(_RandomImageLayer):
    """Shifts each image's brightness at random in training (Keras's
    `RandomBrightness`): `factor` `f` is `(-f, f)` (or a pair), in units of
    the `value_range` width; results are clipped to `value_range`.

    Differences from Keras: the random numbers differ (jax.random).
    """

    _GEOMETRIC = False  # boxes and masks pass through, as Keras

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.factor = _factor_pair(self, factor, (-1, 1))
        if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
            raise ValueError(
                "The `value_range` argument should be a list of two numbers. "
                f"Received: value_range={value_range}"
            )
        self.value_range = tuple(sorted(value_range))

    def _augment(self, x, key):
        vr = tuple(float(v) for v in self.value_range)
        return _random_brightness(x, key, self.factor[0], self.factor[1], vr)

    def get_config(self):
        # (Keras's: the factor as the `(lower, upper)` pair it resolved to)
        cfg = super().get_config()
        return {**cfg, "factor": self.factor, "value_range": list(self.value_range)}
