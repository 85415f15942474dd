"""`keras.utils` image files and arrays with Pillow: `load_img`, `img_to_array`,
`array_to_img`, `save_img`. Layer L5.

Each mirrors Keras 3's function of the same name (modes, scaling, resizing,
errors). Pillow is a jaxtape dependency; it is imported on first use, and a
missing Pillow raises ImportError with the install command.
"""

from __future__ import annotations

import io
import pathlib
import warnings

import numpy as np

from jaxtape._src.keras.data_adapter import to_numpy


def _pil_image():
    try:
        from PIL import Image  # lazy: 16 ms
    except ImportError as e:  # pragma: no cover - pillow is a dependency
        raise ImportError(
            "Could not import PIL.Image. The keras.utils image functions need "
            "Pillow: `pip install pillow`."
        ) from e
    return Image


def _interpolations(image) -> dict:
    r = image.Resampling
    return {
        "nearest": r.NEAREST,
        "bilinear": r.BILINEAR,
        "bicubic": r.BICUBIC,
        "hamming": r.HAMMING,
        "box": r.BOX,
        "lanczos": r.LANCZOS,
    }


def _data_format(data_format):
    data_format = data_format or "channels_last"
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(
            'The `data_format` argument must be one of {"channels_first", '
            f'"channels_last"}}. Received: data_format={data_format}'
        )
    return data_format


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A rank-3 array (height, width, channels) as a PIL image (Keras's
    `array_to_img`): 3 channels RGB, 4 RGBA, 1 L (or I past 255); `scale`
    maps the values to [0, 255] first."""
    image = _pil_image()
    x = np.asarray(to_numpy(x), dtype=dtype or "float32")
    if x.ndim != 3:
        raise ValueError(
            "Expected image array to have rank 3 (single image). "
            f"Got array with shape: {x.shape}"
        )
    if _data_format(data_format) == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        x_max = np.max(x)
        if x_max != 0:
            x /= x_max
        x *= 255
    channels = x.shape[2]
    if channels == 4:
        return image.fromarray(x.astype("uint8"), "RGBA")
    if channels == 3:
        return image.fromarray(x.astype("uint8"), "RGB")
    if channels == 1:
        if np.max(x) > 255:
            return image.fromarray(x[:, :, 0].astype("int32"), "I")
        return image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {channels}")


def img_to_array(img, data_format=None, dtype=None):
    """A PIL image as a float32 array (height, width, channels), as Keras's
    `img_to_array` (channels first with `data_format='channels_first'`)."""
    data_format = _data_format(data_format)
    x = np.asarray(img, dtype=dtype or "float32")
    if x.ndim == 3:
        if data_format == "channels_first":
            x = x.transpose(2, 0, 1)
    elif x.ndim == 2:
        shape = (1, *x.shape) if data_format == "channels_first" else (*x.shape, 1)
        x = x.reshape(shape)
    else:
        raise ValueError(f"Unsupported image shape: {x.shape}")
    return x


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Writes an image array to `path` (Keras's `save_img`): the format from
    the file's suffix unless `file_format`; RGBA to JPEG becomes RGB with a
    warning, as Keras. `kwargs` go to `PIL.Image.save`."""
    if file_format is None and isinstance(path, (str, pathlib.Path)):
        file_format = pathlib.Path(path).suffix[1:].lower()
    if file_format and file_format.lower() == "jpg":
        file_format = "jpeg"
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and file_format == "jpeg":
        warnings.warn(
            "The JPEG format does not support RGBA images, converting to RGB.",
            stacklevel=2,
        )
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


def load_img(
    path, color_mode="rgb", target_size=None, interpolation="nearest",
    keep_aspect_ratio=False,
):  # fmt: skip
    """Reads an image file as a PIL image (Keras's `load_img`): converted to
    `color_mode` ('grayscale', 'rgb', 'rgba') and resized to `target_size`
    `(height, width)` with `interpolation` (center-cropped to the target's
    aspect ratio first with `keep_aspect_ratio`)."""
    image = _pil_image()
    if isinstance(path, io.BytesIO):
        img = image.open(path)
    elif isinstance(path, (pathlib.Path, bytes, str)):
        if isinstance(path, pathlib.Path):
            path = str(path.resolve())
        with open(path, "rb") as f:
            img = image.open(io.BytesIO(f.read()))
    else:
        raise TypeError(f"path should be path-like or io.BytesIO, not {type(path)}")
    if color_mode == "grayscale":
        if img.mode not in ("L", "I;16", "I"):
            img = img.convert("L")
    elif color_mode in ("rgba", "rgb"):
        if img.mode != color_mode.upper():
            img = img.convert(color_mode.upper())
    else:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    if target_size is None:
        return img
    size = (target_size[1], target_size[0])
    if img.size == size:
        return img
    methods = _interpolations(image)
    if interpolation not in methods:
        raise ValueError(
            f"Invalid interpolation method {interpolation} specified. Supported "
            f"methods are {', '.join(methods)}"
        )
    if not keep_aspect_ratio:
        return img.resize(size, methods[interpolation])
    width, height = img.size
    crop_h = min(height, (width * size[1]) // size[0])
    crop_w = min(width, (height * size[0]) // size[1])
    top, left = (height - crop_h) // 2, (width - crop_w) // 2
    box = (left, top, left + crop_w, top + crop_h)
    return img.resize(size, methods[interpolation], box=box)
