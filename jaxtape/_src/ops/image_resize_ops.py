"""Resizing in `tf.image`: `resize` (eight methods, antialiasing, aspect
ratio) and `resize_with_pad`. Layer L1.

TF's kernels exactly (half-pixel centers): each method is a pair of
per-axis weights computed on the host in float32 by TF's formulas
(`ResizeBilinear`, `ResizeBicubic`'s 1024-entry coefficient table,
`ResizeArea`'s box weights, `ScaleAndTranslate`'s kernels for lanczos,
gaussian, mitchellcubic and the antialiased methods). An axis of 64 pixels
or more sums its few taps per output with gathers (TF's cost); small inputs
and wide antialiased kernels use the dense weight matrix with an `einsum`.
Nearest is a gather that keeps the dtype. Gradients are the transposes, as
TF's `*Grad` kernels.
"""

from __future__ import annotations

import enum
import functools
import math

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.ops.image_ops import (
    _HIGHEST,
    _assert,
    _check_3_or_4,
    _check_at_least_3d,
    _dims_of,
    _fused,
    _image,
    _is_tensor,
    _static_int,
    pad_to_bounding_box,
)


# -- resize -------------------------------------------------------------------------
class ResizeMethod(str, enum.Enum):
    """The names of `resize`'s methods (TF's `tf.image.ResizeMethod`)."""

    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"

    def __str__(self) -> str:
        return self.value


_F = np.float32


def _bilinear_weights(n_in: int, n_out: int) -> np.ndarray:
    """TF's `compute_interpolation_weights` with half-pixel centers."""
    scale = _F(n_in) / _F(n_out)
    x = (np.arange(n_out, dtype=_F) + _F(0.5)) * scale - _F(0.5)
    x_floor = np.floor(x)
    lerp = (x - x_floor).astype(_F)
    lower = np.maximum(x_floor, 0).astype(np.int64)
    upper = np.minimum(np.ceil(x), n_in - 1).astype(np.int64)
    w = np.zeros((n_out, n_in), _F)
    rows = np.arange(n_out)
    np.add.at(w, (rows, lower), _F(1) - lerp)
    np.add.at(w, (rows, upper), lerp)
    return w


@functools.cache
def _keys_table() -> np.ndarray:
    """TF's `InitCoeffsTable(-0.5)`: Keys' cubic at 1025 points per unit."""
    a = -0.5
    x = np.arange(1025, dtype=np.float64) / 1024
    x = x.astype(_F).astype(np.float64)
    t = np.empty((1025, 2), _F)
    t[:, 0] = ((a + 2) * x - (a + 3)) * x * x + 1
    x1 = x + 1.0
    t[:, 1] = ((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a
    return t


def _bicubic_weights(n_in: int, n_out: int) -> np.ndarray:
    """TF's `ResizeBicubic` (half-pixel centers): Keys' cubic from the table,
    out-of-image taps dropped and the rest renormalized."""
    table = _keys_table()
    scale = _F(n_in) / _F(n_out)
    w = np.zeros((n_out, n_in), _F)
    for o in range(n_out):
        loc_f = (_F(o) + _F(0.5)) * scale - _F(0.5)
        loc = int(np.floor(loc_f))
        delta = _F(loc_f - _F(loc))
        off = int(np.rint(delta * _F(1024)))
        taps = [
            table[off, 1],
            table[off, 0],
            table[1024 - off, 0],
            table[1024 - off, 1],
        ]
        idx = [loc - 1, loc, loc + 1, loc + 2]
        ws = [t if 0 <= i < n_in else _F(0) for t, i in zip(taps, idx)]
        total = _F(sum(ws, _F(0)))
        if abs(total) >= 1000 * np.finfo(_F).tiny:
            ws = [_F(v * (_F(1) / total)) for v in ws]
        for i, v in zip(idx, ws):
            if 0 <= i < n_in:
                w[o, i] += v
    return w


def _area_weights(n_in: int, n_out: int) -> np.ndarray:
    """TF's `ResizeArea`: each output averages the input cells its box covers."""
    scale = _F(n_in) / _F(n_out)
    w = np.zeros((n_out, n_in), _F)
    for o in range(n_out):
        lo, hi = _F(o) * scale, _F(o + 1) * scale
        for i in range(int(np.floor(lo)), int(np.ceil(hi))):
            if i < lo:
                s = scale if i + 1 > hi else _F(i + 1) - lo
            else:
                s = hi - _F(i) if i + 1 > hi else _F(1)
            w[o, min(i, n_in - 1)] += s
    return (w / scale).astype(_F)


def _lanczos(radius):
    def kernel(x):
        x = np.abs(x)
        px = _F(3.14159265359) * x
        safe = np.where(x <= 1e-3, _F(1), x)
        v = (
            radius
            * np.sin(px)
            * np.sin(px / radius)
            / (_F(3.14159265359) ** 2 * safe**2)
        )
        return np.where(x > radius, 0, np.where(x <= 1e-3, 1, v)).astype(_F)

    return kernel, float(radius)


def _gaussian(x):
    x = np.abs(x)
    sigma = 1.5 / 3.0
    return np.where(x >= 1.5, 0, np.exp(-x * x / (2.0 * sigma * sigma))).astype(_F)


def _triangle(x):
    x = np.abs(x)
    return np.where(x < 1, 1 - x, 0).astype(_F)


def _keys_cubic(x):
    x = np.abs(x)
    far = ((_F(-0.5) * x + _F(2.5)) * x - _F(4)) * x + _F(2)
    near = ((_F(1.5) * x - _F(2.5)) * x) * x + _F(1)
    return np.where(x >= 2, 0, np.where(x >= 1, far, near)).astype(_F)


def _mitchell_cubic(x):
    x = np.abs(x)
    far = (((_F(-7 / 18)) * x + _F(2)) * x - _F(10 / 3)) * x + _F(16 / 9)
    near = (((_F(7 / 6)) * x - _F(2)) * x) * x + _F(8 / 9)
    return np.where(x >= 2, 0, np.where(x >= 1, far, near)).astype(_F)


_KERNELS = {
    "lanczos3": _lanczos(3),
    "lanczos5": _lanczos(5),
    "gaussian": (_gaussian, 1.5),
    "bilinear": (_triangle, 1.0),  # (antialiased: TF's 'triangle')
    "bicubic": (_keys_cubic, 2.0),  # (antialiased: TF's 'keyscubic')
    "mitchellcubic": (_mitchell_cubic, 2.0),
}


def _scale_translate_weights(n_in, n_out, method, antialias) -> np.ndarray:
    """TF's `ScaleAndTranslate` spans (`ComputeSpansCore`), translation 0."""
    kernel, radius = _KERNELS[method]
    scale = _F(n_out) / _F(n_in)
    inv_scale = _F(1.0 / float(scale))
    kscale = max(inv_scale, _F(1)) if antialias else _F(1)
    w = np.zeros((n_out, n_in), _F)
    for o in range(n_out):
        sample = (_F(o) + _F(0.5)) * inv_scale
        if sample < 0 or sample > n_in:
            continue
        start = math.ceil(sample - _F(radius) * kscale - _F(0.5))
        end = math.floor(sample + _F(radius) * kscale - _F(0.5))
        start = min(max(start, 0), n_in - 1)
        end = min(max(end, 0), n_in - 1) + 1
        src = np.arange(start, end, dtype=_F)
        ws = kernel(np.abs((src + _F(0.5) - sample) * (_F(1) / kscale)))
        total = _F(np.sum(ws, dtype=_F))
        if abs(total) >= 1000 * np.finfo(_F).tiny:
            ws = ws * (_F(1) / total)
        w[o, start:end] = ws
    return w


@functools.lru_cache(maxsize=256)
def _weights(method: str, antialias: bool, n_in: int, n_out: int) -> np.ndarray:
    if method == "bilinear" and not antialias:
        return _bilinear_weights(n_in, n_out)
    if method == "bicubic" and not antialias:
        return _bicubic_weights(n_in, n_out)
    if method == "area":
        return _area_weights(n_in, n_out)
    return _scale_translate_weights(n_in, n_out, method, antialias)


def _nearest_index(n_in: int, n_out: int) -> np.ndarray:
    scale = _F(n_in) / _F(n_out)
    x = np.floor((np.arange(n_out, dtype=_F) + _F(0.5)) * scale)
    return np.clip(x.astype(np.int64), 0, n_in - 1).astype(np.int32)


_MAX_TAPS = 64  # banded (one gather per tap) while the taps are few, else dense


@functools.lru_cache(maxsize=256)
def _taps(method: str, antialias: bool, n_in: int, n_out: int):
    """The weights of one axis as `(starts, weights)`: output `o` is
    `sum_k weights[o, k] * x[starts[o] + k]` (the kernel's few taps, as TF's
    kernels sum them), or `(None, dense)` for wide kernels."""
    dense = _weights(method, antialias, n_in, n_out)
    nz = dense != 0
    if not nz.any():
        return None, dense
    rows = nz.any(axis=1)
    first = np.where(rows, nz.argmax(axis=1), 0)
    last = np.where(rows, n_in - 1 - nz[:, ::-1].argmax(axis=1), 0)
    span = int(np.max(last - first + 1))
    if n_in < 64 or span > min(_MAX_TAPS, n_in // 4):  # (small: dense is cheap)
        return None, dense
    starts = np.minimum(first, n_in - span).astype(np.int32)
    idx = starts[:, None] + np.arange(span)
    return starts, np.take_along_axis(dense, idx, axis=1)


def _apply_taps(x, starts, weights, axis):
    out = None
    shape = [1] * x.ndim
    shape[axis] = weights.shape[0]
    for k in range(weights.shape[1]):
        term = jnp.take(x, starts + k, axis=axis) * weights[:, k].reshape(shape)
        out = term if out is None else out + term
    return out


@op("ResizeBilinear", inputs=("images", "starts_h", "wh", "starts_w", "ww"))
@_fused(5)
def _resize_banded(images, starts_h, wh, starts_w, ww):
    # The weights are inputs, not constants: one program per shape serves
    # every method with as many taps.
    x = _apply_taps(images.astype(jnp.float32), starts_h, wh, images.ndim - 3)
    return _apply_taps(x, starts_w, ww, images.ndim - 2)


@op("ScaleAndTranslate", inputs=("images", "wh", "ww"))
@_fused(3)
def _resize_dense(images, wh, ww):
    x = images.astype(jnp.float32)
    x = jnp.einsum("oh,...hwc->...owc", wh, x, precision=_HIGHEST)
    return jnp.einsum("pw,...owc->...opc", ww, x, precision=_HIGHEST)


@op("ResizeNearestNeighbor", inputs=("images", "rows", "cols"))
@_fused(3)
def _resize_nearest(images, rows, cols):
    return jnp.take(jnp.take(images, rows, axis=-3), cols, axis=-2)


def _resize(images, size, method, antialias):
    h, w = _dims_of(images)[-3:-1]
    if method == "nearest":
        return _resize_nearest(
            images, _nearest_index(h, size[0]), _nearest_index(w, size[1])
        )
    sh, wh = _taps(method, antialias, h, size[0])
    sw, ww = _taps(method, antialias, w, size[1])
    if sh is None or sw is None:
        return _resize_dense(
            images,
            _weights(method, antialias, h, size[0]),
            _weights(method, antialias, w, size[1]),
        )
    return _resize_banded(images, sh, wh, sw, ww)


def resize_along(x, size, method: str, antialias: bool, axes):
    """`x` resized on its two `axes` (height, width) to `size` with TF's
    `tf.image.resize` kernels, as a pure function for other ops' bodies
    (Keras's resize on its TF backend); float32 out, "nearest" keeps the dtype.
    """
    if method == "nearest":
        for axis, n_out in zip(axes, size):
            x = jnp.take(x, _nearest_index(x.shape[axis], n_out), axis=axis)
        return x
    x = x.astype(jnp.float32)
    for axis, n_out in zip(axes, size):
        w = jnp.asarray(_weights(method, antialias, x.shape[axis], n_out))
        x = jnp.moveaxis(
            jnp.tensordot(w, x, axes=((1,), (axis,)), precision=_HIGHEST), 0, axis
        )
    return x


_METHODS = frozenset(m.value for m in ResizeMethod)


def _resize_size(size) -> tuple[int, int]:
    bad = ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    try:
        arr = np.asarray(to_value(size))
    except (TypeError, ValueError):
        raise ValueError("'size' must be a 1-D int32 Tensor") from None
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and arr.size and np.all(arr == np.round(arr)):
            raise ValueError("'size' must be a 1-D int32 Tensor")
        raise ValueError("'size' must be a 1-D int32 Tensor")
    if arr.shape != (2,):
        raise bad
    return int(arr[0]), int(arr[1])


def resize(
    images,
    size,
    method=ResizeMethod.BILINEAR,
    preserve_aspect_ratio=False,
    antialias=False,
    name=None,
):
    """Resizes images to `size` (`[new_height, new_width]`), as TF's `resize`.

    Methods: bilinear, nearest, bicubic, area, lanczos3, lanczos5, gaussian,
    mitchellcubic, all with TF's half-pixel sampling and TF's values (to
    float32 rounding). The result is float32 except for `nearest`, which
    keeps the input dtype. `antialias=True` widens the kernel when
    downsampling (TF's `ScaleAndTranslate`); `preserve_aspect_ratio=True`
    fits the image inside `size`.

    >>> x = jaxtape.reshape(jaxtape.range(4.0), [2, 2, 1])
    >>> jaxtape.image.resize(x, [3, 3])[..., 0]
    <jaxtape.Tensor: shape=(3, 3), dtype=float32, numpy=
    array([[0. , 0.5, 1. ],
           [1. , 1.5, 2. ],
           [2. , 2.5, 3. ]], dtype=float32)>

    Differences from TensorFlow:
      `area` has a gradient (TF registers none for `ResizeArea`). `size`
      must be known while tracing inside `jaxtape.function`.
    """
    images = _image(images)
    shape = _dims_of(images)
    if len(shape) not in (3, 4):
        raise ValueError("'images' must have either 3 or 4 dimensions.")
    new_h, new_w = _resize_size(size)
    method = str(method.value if isinstance(method, ResizeMethod) else method)
    if method not in _METHODS:
        raise ValueError(f"Resize method is not implemented: {method}")
    h, w = shape[-3], shape[-2]
    if preserve_aspect_ratio:
        factor = min(_F(new_h) / _F(h), _F(new_w) / _F(w))
        new_h = int(np.round(factor * _F(h)))
        new_w = int(np.round(factor * _F(w)))
    for d in (new_h, new_w):
        if d < 0:  # (TF's shape inference of `size`)
            raise ValueError(f"Dimension {d} must be >= 0")
    if new_h <= 0 or new_w <= 0:
        raise errors.invalid_argument(
            f"output dimensions must be positive; got size [{new_h}, {new_w}].",
            "ResizeBilinear",
        )
    if h == 0 or w == 0:
        raise errors.invalid_argument(
            f"input image must be of non-zero size; got shape {list(shape)}.",
            "ResizeBilinear",
        )
    return _resize(images, (new_h, new_w), method, bool(antialias))


def resize_with_pad(
    image, target_height, target_width, method=ResizeMethod.BILINEAR, antialias=False
):
    """Resizes an image to fit (`target_height`, `target_width`) keeping its
    aspect ratio, then pads it with zeros to that size (TF's algorithm)."""
    image = _image(image)
    rank = _check_3_or_4(image)
    _check_at_least_3d(image)
    th = _static_int(target_height, "target_height")
    tw = _static_int(target_width, "target_width")
    _assert(tw > 0, _is_tensor(target_width), "target_width must be > 0.")
    _assert(th > 0, _is_tensor(target_height), "target_height must be > 0.")
    height, width = _dims_of(image)[rank - 3 : rank - 1]
    ratio = max(_F(width) / _F(tw), _F(height) / _F(th))
    rh_f, rw_f = _F(height) / ratio, _F(width) / ratio
    rh, rw = int(np.floor(rh_f)), int(np.floor(rw_f))
    ph = max(0, int(np.floor((_F(th) - rh_f) / _F(2))))
    pw = max(0, int(np.floor((_F(tw) - rw_f) / _F(2))))
    resized = resize(image, [rh, rw], method, antialias=antialias)
    return pad_to_bounding_box(resized, ph, pw, th, tw)
