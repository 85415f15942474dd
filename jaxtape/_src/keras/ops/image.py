"""Keras 3's `keras.ops.image`: resizing, padding, cropping, grayscale.

Images are `(height, width, channels)` or batched `(batch, height, width,
channels)` (channels-last unless `data_format` says otherwise), as Keras's.
`resize` uses half-pixel centers without antialiasing by default, as TF's
`tf.image.resize`.

Layer L5 (keras); imports `core` and this package.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.keras.ops import core as kcore
from jaxtape._src.keras.ops import dtypes as kd
from jaxtape._src.keras.ops import numpy as knp
from jaxtape._src.keras.ops._base import body, tensor
from jaxtape._src.keras.ops.nn import _data_format
from jaxtape._src.ops import image_color_ops, image_resize_ops


def _images(images, data_format):
    x = tensor(images)
    if np.ndim(x) not in (3, 4):
        raise ValueError(
            "Invalid images rank: expected rank 3 (single image) or rank 4 (batch "
            f"of images). Received input with shape: images.shape={np.shape(x)}"
        )
    return x, _data_format(data_format) == "channels_last"


def _hw_axes(x, channels_last):
    nd = np.ndim(x)
    return (nd - 3, nd - 2) if channels_last else (nd - 2, nd - 1)


@body("rgb_to_grayscale")
def _rgb_to_grayscale(x, *, axis, dtype, compute):
    w = jnp.asarray([0.2989, 0.5870, 0.1140], compute)
    y = jnp.tensordot(jnp.moveaxis(x.astype(compute), axis, -1), w, axes=1)
    return jnp.expand_dims(y, axis).astype(dtype)


def rgb_to_grayscale(images, data_format=None):
    """Keras 3's `keras.ops.image.rgb_to_grayscale` (ITU-R 601 weights)."""
    x, last = _images(images, data_format)
    axis = -1 if last else -3
    c = np.shape(x)[axis]
    if c not in (1, 3):
        raise ValueError(
            "Invalid channel size: expected 3 (RGB) or 1 (Grayscale). Received "
            f"input with shape: images.shape={np.shape(x)}"
        )
    if c == 1:
        return knp.copy(x)
    d = knp._name(x)
    return _rgb_to_grayscale(
        x, axis=axis % np.ndim(x), dtype=d, compute=kd.result_type(d, float)
    )


@body("resize")
def _resize(x, *, size, axes, method, antialias, dtype):
    # Keras's TF backend resizes with `tf.image.resize`: TF's kernels.
    out = image_resize_ops.resize_along(x.astype(dtype), size, method, antialias, axes)
    return out.astype(dtype)


_METHODS = {m: m for m in ("bilinear", "nearest", "bicubic", "lanczos3", "lanczos5")}


def resize(
    images,
    size,
    interpolation="bilinear",
    antialias=False,
    crop_to_aspect_ratio=False,
    pad_to_aspect_ratio=False,
    fill_mode="constant",
    fill_value=0.0,
    data_format=None,
):
    """Keras 3's `keras.ops.image.resize` to `size = (height, width)`.

    Differences from Keras: `crop_to_aspect_ratio` and `pad_to_aspect_ratio`
    raise `NotImplementedError`; "nearest" picks half-pixel-centered neighbours
    (JAX's rule), which can differ from TF's on ties.
    """
    if crop_to_aspect_ratio or pad_to_aspect_ratio:
        raise NotImplementedError(
            "resize: `crop_to_aspect_ratio`/`pad_to_aspect_ratio` are not supported."
        )
    if fill_mode != "constant":
        raise ValueError(
            "Invalid value for argument `fill_mode`. Only `'constant'` is "
            f"supported. Received: fill_mode={fill_mode}"
        )
    del fill_value  # only used with pad_to_aspect_ratio
    if interpolation not in _METHODS:
        raise ValueError(
            "Invalid value for argument `interpolation`. Expected of one "
            f"{set(_METHODS)}. Received: interpolation={interpolation}"
        )
    size = tuple(int(s) for s in knp.static(size))
    if len(size) != 2:
        raise ValueError(
            f"Expected `size` to be a tuple of 2 integers. Received: size={size}"
        )
    x, last = _images(images, data_format)
    d = knp._name(x)
    compute = d if "float" in d else "float32"
    out = _resize(
        x,
        size=size,
        axes=_hw_axes(x, last),
        method=_METHODS[interpolation],
        antialias=bool(antialias),
        dtype=compute,
    )
    if compute == d or interpolation == "nearest":
        return out if compute == d else knp.cast(out, d)
    # Keras: TF's float result goes back to the images' dtype, integers rounded
    return kcore.saturate_cast(knp.round(out) if "int" in d else out, d)


def pad_images(
    images,
    top_padding=None,
    left_padding=None,
    bottom_padding=None,
    right_padding=None,
    target_height=None,
    target_width=None,
    data_format=None,
):
    """Keras 3's `keras.ops.image.pad_images`: zero padding to a target size."""
    x, last = _images(images, data_format)
    ha, wa = _hw_axes(x, last)
    h, w = np.shape(x)[ha], np.shape(x)[wa]
    top, bottom = _split_pad(top_padding, bottom_padding, target_height, h, "top")
    left, right = _split_pad(left_padding, right_padding, target_width, w, "left")
    width = [(0, 0)] * np.ndim(x)
    width[ha], width[wa] = (top, bottom), (left, right)
    return knp.pad(x, tuple(width))


def _split_pad(first, second, target, size, name, crop=False):
    given = [v for v in (first, second, target) if v is not None]
    if len(given) != 2:
        raise ValueError(
            f"Must specify exactly two of {name}_padding, the opposite padding and "
            f"the target size. Received: {first}, {second}, {target}"
        )
    sign = -1 if crop else 1  # padding: first + size + second = target
    if first is None:
        first = sign * (target - size) - second
    if second is None:
        second = sign * (target - size) - first
    if first < 0 or second < 0:
        raise ValueError(
            f"Paddings must be >= 0. Received: paddings=({first}, {second})"
        )
    return int(first), int(second)


def crop_images(
    images,
    top_cropping=None,
    left_cropping=None,
    bottom_cropping=None,
    right_cropping=None,
    target_height=None,
    target_width=None,
    data_format=None,
):
    """Keras 3's `keras.ops.image.crop_images`: crops to a target size."""
    x, last = _images(images, data_format)
    ha, wa = _hw_axes(x, last)
    h, w = np.shape(x)[ha], np.shape(x)[wa]
    top, bottom = _split_pad(
        top_cropping, bottom_cropping, target_height, h, "top", crop=True
    )
    left, right = _split_pad(
        left_cropping, right_cropping, target_width, w, "left", crop=True
    )
    th, tw = h - top - bottom, w - left - right
    key = [slice(None)] * np.ndim(x)
    key[ha], key[wa] = slice(top, top + th), slice(left, left + tw)
    return knp.get_item(x, tuple(key))


@body("rgb_to_hsv")
def _rgb_to_hsv(x, *, axis, inverse):
    x = jnp.moveaxis(x, axis, -1)
    a, b, c = x[..., 0], x[..., 1], x[..., 2]
    zero = jnp.zeros_like(a)
    if not inverse:  # TF's kernel: V = max, S = range / V, H by the max channel
        v = jnp.maximum(jnp.maximum(a, b), c)
        rng = v - jnp.minimum(jnp.minimum(a, b), c)
        s = jnp.where(v > 0, rng / jnp.where(v > 0, v, 1), zero)
        safe = jnp.where(rng > 0, rng, 1)
        h = jnp.where(
            v == a,
            (b - c) / safe,
            jnp.where(v == b, 2 + (c - a) / safe, 4 + (a - b) / safe),
        )
        h = jnp.where(rng > 0, h / 6, zero)
        h = jnp.where(h < 0, h + 1, h)
        out = [h, s, v]
    else:  # TF's `HSVToRGB` kernel (Keras's TF backend): hue 1.0 is red
        out = list(image_color_ops._rgb(a, b, c))
    return jnp.moveaxis(jnp.stack(out, axis=-1), -1, axis)


def _hsv(images, data_format, inverse):
    x, last = _images(images, data_format)
    d = knp._name(x)
    if "float" not in d:
        raise ValueError(
            f"Invalid images dtype: expected float dtype. Received: images.dtype={d}"
        )
    axis = (np.ndim(x) - 1) if last else (np.ndim(x) - 3)
    if np.shape(x)[axis] != 3:
        raise ValueError(
            "Invalid channel size: expected 3. Received input with shape: "
            f"images.shape={np.shape(x)}"
        )
    return _rgb_to_hsv(x, axis=axis, inverse=inverse)


def rgb_to_hsv(images, data_format=None):
    """Keras 3's `keras.ops.image.rgb_to_hsv` (TF's formula; values in [0, 1])."""
    return _hsv(images, data_format, False)


def hsv_to_rgb(images, data_format=None):
    """Keras 3's `keras.ops.image.hsv_to_rgb` (TF's formula)."""
    return _hsv(images, data_format, True)


_SCALE_METHODS = (
    "linear",
    "bilinear",
    "trilinear",
    "cubic",
    "bicubic",
    "tricubic",
    "lanczos3",
    "lanczos5",
)


@body("scale_and_translate")
def _scale_and_translate(x, scale, translation, *, shape, dims, method, antialias):
    return jax.image.scale_and_translate(
        x, shape, dims, scale, translation, method, antialias
    )


def scale_and_translate(
    images, output_shape, scale, translation, spatial_dims, method, antialias=True
):
    """Keras 3's `keras.ops.image.scale_and_translate` (JAX's resampling)."""
    if method not in _SCALE_METHODS:
        raise ValueError(
            "Invalid value for argument `method`. Expected of one "
            f"{_SCALE_METHODS}. Received: method={method}"
        )
    x = tensor(images)
    d = knp._name(x)
    return _scale_and_translate(
        x,
        tensor(scale, d),
        tensor(translation, d),
        shape=tuple(int(s) for s in knp.static(output_shape)),
        dims=tuple(int(s) for s in knp.static(spatial_dims)),
        method=method,
        antialias=bool(antialias),
    )


_FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


@body("map_coordinates")
def _map_coordinates(x, coords, *, order, fill_mode, fill_value):
    return jax.scipy.ndimage.map_coordinates(
        x, list(coords), order, fill_mode, fill_value
    )


def map_coordinates(inputs, coordinates, order, fill_mode="constant", fill_value=0):
    """Keras 3's `keras.ops.image.map_coordinates`: `inputs` sampled at
    `coordinates` (order 0 or 1).

    Differences from Keras on TF: "reflect" and "mirror" follow SciPy's (and
    Keras's JAX backend's) rules; Keras's TF backend mirrors negative
    coordinates one element off, and its "mirror" can index out of range.
    """
    x, c = tensor(inputs), tensor(coordinates)
    if np.ndim(c) < 2:
        raise ValueError(
            "Invalid coordinates rank: expected at least rank 2. Received input "
            f"with shape: {np.shape(c)}"
        )
    if np.shape(c)[0] != np.ndim(x):
        raise ValueError(
            "First dim of `coordinates` must be the same as the rank of `inputs`. "
            f"Received inputs with shape: {np.shape(x)} and coordinate leading dim "
            f"of {np.shape(c)[0]}"
        )
    if fill_mode not in _FILL_MODES:
        raise ValueError(
            "Invalid value for argument `fill_mode`. Expected one of "
            f"{set(_FILL_MODES)}. Received: fill_mode={fill_mode}"
        )
    if order not in (0, 1):
        raise ValueError(
            f"Invalid value for argument `order`. Expected one of [0, 1]. "
            f"Received: order={order}"
        )
    d = knp._name(x)
    compute = d if "float" in d else "float32"
    return _map_coordinates(
        knp.cast(x, compute),
        knp.cast(c, compute),
        order=int(order),
        fill_mode=fill_mode,
        fill_value=float(fill_value),
    )


def _same_pads(size, k, d, s):
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return out, (total // 2, total - total // 2)


@body("extract_patches")
def _extract_patches(x, *, k, s, d, padding):
    n, h, w, c = x.shape
    sizes = []
    pads = []
    for size, kk, ss, dd in zip((h, w), k, s, d):
        if padding == "same":
            out, pad = _same_pads(size, kk, dd, ss)
        else:
            out, pad = (size - (kk - 1) * dd - 1) // ss + 1, (0, 0)
        sizes.append(out)
        pads.append(pad)
    x = jnp.pad(x, ((0, 0), pads[0], pads[1], (0, 0)))
    rows = (np.arange(sizes[0]) * s[0])[:, None] + np.arange(k[0])[None, :] * d[0]
    cols = (np.arange(sizes[1]) * s[1])[:, None] + np.arange(k[1])[None, :] * d[1]
    p = x[:, rows[:, :, None, None], cols[None, None, :, :], :]  # N oh kh ow kw C
    p = jnp.transpose(p, (0, 1, 3, 2, 4, 5))
    return p.reshape(n, sizes[0], sizes[1], k[0] * k[1] * c)


def extract_patches(
    images, size, strides=None, dilation_rate=1, padding="valid", data_format=None
):
    """Keras 3's `keras.ops.image.extract_patches`: 2-D patches flattened into
    the channel axis (`(kh, kw, C)` order, as TF's `extract_patches`); a
    3-number `size` extracts 3-D patches (`extract_patches_3d`), as Keras's."""
    if not isinstance(size, int):
        if not isinstance(size, (tuple, list)):
            raise TypeError(
                "Invalid `size` argument. Expected an int or a tuple. "
                f"Received: size={size} of type {type(size).__name__}"
            )
        if len(size) not in (2, 3):
            raise ValueError(
                "Invalid `size` argument. Expected a tuple of length 2 or 3. "
                f"Received: size={size} with length {len(size)}"
            )
        if len(size) == 3:
            # cycle: image -> image_more -> image
            from jaxtape._src.keras.ops.image_more import extract_patches_3d

            return extract_patches_3d(
                images, size, strides, dilation_rate, padding, data_format
            )
    x, last = _images(images, data_format)
    from_tuple = knp.static(size)
    k = (from_tuple, from_tuple) if isinstance(from_tuple, int) else tuple(from_tuple)
    s = k if strides is None else knp.static(strides)
    s = (s, s) if isinstance(s, int) else tuple(s)
    dl = knp.static(dilation_rate)
    dl = (dl, dl) if isinstance(dl, int) else tuple(dl)
    pad = padding.lower()
    if pad not in ("valid", "same"):
        raise ValueError(
            f"`padding` must be 'valid' or 'same'. Received: padding={padding}"
        )
    unbatched = np.ndim(x) == 3
    if unbatched:
        x = knp.expand_dims(x, 0)
    if not last:
        x = knp.transpose(x, (0, 2, 3, 1))
    out = _extract_patches(x, k=k, s=s, d=dl, padding=pad)
    if not last:
        out = knp.transpose(out, (0, 3, 1, 2))
    return knp.squeeze(out, 0) if unbatched else out


@body("gaussian_blur")
def _gaussian_blur(x, *, kernel_size, sigma):
    def kernel1d(size, s):
        t = jnp.arange(size, dtype=x.dtype) - (size - 1) / 2
        k = jnp.exp(-0.5 * (t / s) ** 2)
        return k / jnp.sum(k)

    k0, k1 = kernel_size
    # Keras's kernel: outer(ky, kx) read in (k0, k1) order (a reshape).
    kernel = jnp.outer(kernel1d(k1, sigma[1]), kernel1d(k0, sigma[0])).reshape(k0, k1)
    c = x.shape[-1]
    kernel = jnp.tile(kernel[:, :, None, None], (1, 1, 1, c))
    return jax.lax.conv_general_dilated(
        x,
        kernel,
        (1, 1),
        "SAME",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=c,
    )


def gaussian_blur(images, kernel_size=(3, 3), sigma=(1.0, 1.0), data_format=None):
    """Keras 3's `keras.ops.image.gaussian_blur` (zero padding, 'same' size)."""
    x, last = _images(images, data_format)
    unbatched = np.ndim(x) == 3
    if unbatched:
        x = knp.expand_dims(x, 0)
    if not last:
        x = knp.transpose(x, (0, 2, 3, 1))
    out = _gaussian_blur(
        x,
        kernel_size=tuple(int(k) for k in knp.static(kernel_size)),
        sigma=tuple(float(s) for s in knp.static(sigma)),
    )
    if not last:
        out = knp.transpose(out, (0, 3, 1, 2))
    return knp.squeeze(out, 0) if unbatched else out


@body("sobel_edges")
def _sobel_edges(x):
    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
    c = x.shape[-1]
    kernels = np.stack([ky, ky.T], axis=-1)  # (3, 3, 2): d/dy, d/dx
    k = np.tile(kernels[:, :, None, :], (1, 1, c, 1)).astype(x.dtype)
    padded = jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), mode="reflect")
    out = jax.lax.conv_general_dilated(
        padded,
        jnp.asarray(k.reshape(3, 3, 1, c * 2)),
        (1, 1),
        "VALID",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=c,
    )
    return out.reshape(*out.shape[:-1][:3], c, 2)


def sobel_edges(images, data_format=None):
    """Keras 3's `keras.ops.image.sobel_edges`: `(..., C, 2)` vertical and
    horizontal Sobel responses (reflect padding, as TF's)."""
    x = tensor(images)
    if np.ndim(x) != 4:
        raise ValueError(
            f"Expected a batch of images (rank 4). Received: shape={np.shape(x)}"
        )
    last = _data_format(data_format) == "channels_last"
    if not last:
        x = knp.transpose(x, (0, 2, 3, 1))
    out = _sobel_edges(knp.cast(x, kd.result_type(knp._name(x), float)))
    return out if last else knp.transpose(out, (0, 3, 1, 2, 4))
