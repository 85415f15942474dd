"""Geometry of `tf.image`: flips, rotations, crops and pads, resizing, dtype
conversion, patches and image gradients, as pure jnp bodies behind
`dispatch.op` (or compositions of public ops where TF composes). Layer L1.

Images are `[height, width, channels]` or `[batch, height, width, channels]`
as in TF. Sizes, offsets and crop fractions are read on the host (static),
as TF's kernels size their outputs; inside `jaxtape.function` they must be
Python numbers or values known while tracing. Offsets of
`crop_to_bounding_box` and `pad_to_bounding_box` may also be traced.

Resizing follows TF's kernels exactly (half-pixel centers): each method is
a pair of per-axis weight matrices computed on the host in float32 by TF's
formulas (`ResizeBilinear`, `ResizeBicubic`'s 1024-entry coefficient table,
`ResizeArea`'s box weights, `ScaleAndTranslate`'s kernels for lanczos,
gaussian, mitchellcubic and the antialiased methods), applied with two
`einsum`s; nearest is a gather that keeps the dtype. Gradients are the
transposes, as TF's `*Grad` kernels.
"""

from __future__ import annotations

import enum
import functools
import inspect
import math

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.core import dtypes, errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import array_ops, math_ops
from jaxtape._src.ops.creation_ops import convert_to_tensor

_HIGHEST = lax.Precision.HIGHEST


# -- shared checks ------------------------------------------------------------------
def _image(image, name="image") -> Tensor:
    del name
    return convert_to_tensor(image)


def _dims_of(t: Tensor) -> tuple:
    return tuple(t.shape)


def _np_dtype(t: Tensor) -> np.dtype:
    return np.dtype(dtypes.np_dtype(t.dtype))


def _check_at_least_3d(t: Tensor, what="image") -> tuple:
    """TF's `_CheckAtLeast3DImage`: rank >= 3 and inner three dims > 0."""
    shape = _dims_of(t)
    if len(shape) < 3:
        raise ValueError(
            f"'{what}' (shape {_tf_shape(shape)}) must be at least three-dimensional."
        )
    if any(d == 0 for d in shape[-3:]):
        raise ValueError(
            f"inner 3 dims of '{what}.shape' must be > 0: {_tf_shape(shape)}"
        )
    return shape


def _check_3_or_4(t: Tensor, what="image") -> int:
    """Rank 3 (one image) or 4 (a batch), as TF's crop/pad/flip ops require."""
    shape = _dims_of(t)
    if len(shape) not in (3, 4):
        raise ValueError(
            f"'{what}' (shape {_tf_shape(shape)}) must have either 3 or 4 dimensions."
        )
    return len(shape)


def _fused(n_inputs: int):
    """Compiles an op body of many jnp calls as one program, eagerly and in a
    tape's replay (JAX differentiates a jitted call as a unit): its first
    `n_inputs` parameters are arrays, the rest static params."""

    def decorate(body):
        n = len(inspect.signature(body).parameters)
        jitted = jax.jit(body, static_argnums=tuple(range(n_inputs, n)))

        @functools.wraps(body)
        def call(*args):
            return jitted(*args)

        return call

    return decorate


def _tf_shape(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _host_int(v, what) -> int | None:
    """A size or offset as a Python int; None when it is traced."""
    del what
    val = to_value(v)
    if isinstance(val, jax.core.Tracer):
        return None
    return int(val)


def _static_int(v, what) -> int:
    out = _host_int(v, what)
    if out is None:
        raise NotImplementedError(
            f"{what} must be known while tracing (a Python int or a value computed "
            "from static shapes) in jaxtape.function: it sizes the output."
        )
    return out


def _assert(ok: bool, tensor_arg: bool, message: str) -> None:
    """TF's `_assert`: a ValueError for Python arguments, an
    InvalidArgumentError (a run-time Assert) for tensor arguments."""
    if not ok:
        if tensor_arg:
            raise errors.invalid_argument(message, "Assert")
        raise ValueError(message)


# -- flips, rotations, transpose ----------------------------------------------------
@op("ReverseV2", inputs=("image",))
def _reverse(image, axes):
    return jnp.flip(image, axes)


def flip_left_right(image):
    """Flips an image (or batch) horizontally: reverses the width axis.

    >>> x = jaxtape.reshape(jaxtape.range(4.0), [2, 2, 1])
    >>> jaxtape.image.flip_left_right(x)[..., 0]
    <jaxtape.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[1., 0.],
           [3., 2.]], dtype=float32)>
    """
    image = _image(image)
    _check_at_least_3d(image)
    _check_3_or_4_flip(image)
    return _reverse(image, (-2,))


def flip_up_down(image):
    """Flips an image (or batch) vertically: reverses the height axis."""
    image = _image(image)
    _check_at_least_3d(image)
    _check_3_or_4_flip(image)
    return _reverse(image, (-3,))


def _check_3_or_4_flip(t: Tensor) -> None:
    shape = _dims_of(t)
    if len(shape) not in (3, 4):
        raise ValueError(
            f"'image' (shape {_tf_shape(shape)})must have either 3 or 4 dimensions."
        )


@op("Rot90", inputs=("image",))
def _rot90(image, k):
    return jnp.rot90(image, k, axes=(-3, -2))


def rot90(image, k=1, name=None):
    """Rotates an image (or batch) counter-clockwise by `k` times 90 degrees.

    Differences from TensorFlow:
      `k` must be known while tracing inside `jaxtape.function` (the output
      shape depends on it).
    """
    image = _image(image)
    _check_at_least_3d(image)
    rank = len(_dims_of(image))
    if rank not in (3, 4):
        raise ValueError(
            f"'image' (shape {_tf_shape(_dims_of(image))})must have "
            "either 3 or 4 dimensions."
        )
    if not isinstance(to_value(k), jax.core.Tracer):
        to_value(k, np.int32)  # (TF's TypeError for a float k)
    return _rot90(image, _static_int(k, "rot90's k") % 4)


@op("Transpose", inputs=("image",))
def _swap_hw(image):
    return jnp.swapaxes(image, -3, -2)


def transpose(image, name=None):
    """Swaps the height and width of an image (or batch)."""
    image = _image(image)
    _check_at_least_3d(image)
    _check_3_or_4(image)
    return _swap_hw(image)


# -- crops and pads -----------------------------------------------------------------
@op("Slice", inputs=("image", "offsets"))
def _crop(image, offsets, size):
    batched = image.ndim == 4
    x = image if batched else image[None]
    z = jnp.zeros((), offsets.dtype)
    start = (z, offsets[0], offsets[1], z)
    out = lax.dynamic_slice(x, start, (x.shape[0], size[0], size[1], x.shape[3]))
    return out if batched else out[0]


@op("Pad", inputs=("image", "offsets"))
def _pad(image, offsets, size):
    batched = image.ndim == 4
    x = image if batched else image[None]
    zeros = jnp.zeros((x.shape[0], size[0], size[1], x.shape[3]), x.dtype)
    z = jnp.zeros((), offsets.dtype)
    out = lax.dynamic_update_slice(zeros, x, (z, offsets[0], offsets[1], z))
    return out if batched else out[0]


def _offsets(offset_height, offset_width):
    """The two offsets: Python ints when known, with an int32 array for the op."""
    oh = _host_int(offset_height, "offset_height")
    ow = _host_int(offset_width, "offset_width")
    if oh is not None and ow is not None:
        return oh, ow, np.asarray([oh, ow], np.int32)
    pair = array_ops.stack(
        [
            math_ops.cast(offset_height, dtypes.int32),
            math_ops.cast(offset_width, dtypes.int32),
        ]
    )
    return oh, ow, pair


def _is_tensor(v) -> bool:
    return isinstance(v, Tensor) or hasattr(v, "read_value")


def crop_to_bounding_box(
    image, offset_height, offset_width, target_height, target_width
):
    """Crops `image` to the box at (`offset_height`, `offset_width`) of size
    (`target_height`, `target_width`); TF's checks raise ValueError (Python
    arguments) or InvalidArgumentError (tensor arguments)."""
    image = _image(image)
    rank = _check_3_or_4(image)
    _check_at_least_3d(image)
    height, width = _dims_of(image)[rank - 3 : rank - 1]
    oh, ow, offsets = _offsets(offset_height, offset_width)
    th = _static_int(target_height, "target_height")
    tw = _static_int(target_width, "target_width")
    t_args = [_is_tensor(v) for v in (offset_height, offset_width)]
    t_sizes = [_is_tensor(v) for v in (target_height, target_width)]
    if ow is not None:
        _assert(ow >= 0, t_args[1], "offset_width must be >= 0.")
    if oh is not None:
        _assert(oh >= 0, t_args[0], "offset_height must be >= 0.")
    _assert(tw > 0, t_sizes[1], "target_width must be > 0.")
    _assert(th > 0, t_sizes[0], "target_height must be > 0.")
    if ow is not None:
        _assert(
            width >= tw + ow,
            t_args[1] or t_sizes[1],
            "width must be >= target + offset.",
        )
    if oh is not None:
        _assert(
            height >= th + oh,
            t_args[0] or t_sizes[0],
            "height must be >= target + offset.",
        )
    if tw > width or th > height:
        raise ValueError(
            f"The crop ({th}, {tw}) does not fit the image ({height}, {width})."
        )
    return _crop(image, offsets, (th, tw))


def pad_to_bounding_box(
    image, offset_height, offset_width, target_height, target_width
):
    """Pads `image` with zeros to (`target_height`, `target_width`), placing it
    at (`offset_height`, `offset_width`)."""
    image = _image(image)
    rank = _check_3_or_4(image)
    height, width = _dims_of(image)[rank - 3 : rank - 1]
    oh, ow, offsets = _offsets(offset_height, offset_width)
    th = _static_int(target_height, "target_height")
    tw = _static_int(target_width, "target_width")
    _check_at_least_3d(image)
    t_args = [_is_tensor(v) for v in (offset_height, offset_width)]
    t_sizes = [_is_tensor(v) for v in (target_height, target_width)]
    if oh is not None:
        _assert(oh >= 0, t_args[0], "offset_height must be >= 0")
    if ow is not None:
        _assert(ow >= 0, t_args[1], "offset_width must be >= 0")
    if ow is not None:
        _assert(
            tw - ow - width >= 0,
            t_args[1] or t_sizes[1],
            "width must be <= target - offset",
        )
    if oh is not None:
        _assert(
            th - oh - height >= 0,
            t_args[0] or t_sizes[0],
            "height must be <= target - offset",
        )
    if tw < width or th < height:
        raise ValueError(
            f"The image ({height}, {width}) does not fit the target ({th}, {tw})."
        )
    return _pad(image, offsets, (th, tw))


def resize_with_crop_or_pad(image, target_height, target_width):
    """Crops (centrally) and/or pads (with zeros, centrally) an image to the
    target size, as TF's `resize_with_crop_or_pad`."""
    image = _image(image)
    rank = _check_3_or_4(image)
    _check_at_least_3d(image)
    th = _static_int(target_height, "target_height")
    tw = _static_int(target_width, "target_width")
    _assert(tw > 0, _is_tensor(target_width), "target_width must be > 0.")
    _assert(th > 0, _is_tensor(target_height), "target_height must be > 0.")
    height, width = _dims_of(image)[rank - 3 : rank - 1]
    width_diff, height_diff = tw - width, th - height
    crop = np.asarray([max(-height_diff // 2, 0), max(-width_diff // 2, 0)], np.int32)
    pad = np.asarray([max(height_diff // 2, 0), max(width_diff // 2, 0)], np.int32)
    out = image
    if (min(th, height), min(tw, width)) != (height, width):
        out = _crop(out, crop, (min(th, height), min(tw, width)))
    if (th, tw) != (min(th, height), min(tw, width)):
        out = _pad(out, pad, (th, tw))
    return out if out is not image else math_ops.identity(image)


def central_crop(image, central_fraction):
    """Crops the central `central_fraction` (in (0, 1]) of each image."""
    image = _image(image)
    frac = float(to_value(central_fraction))
    if frac <= 0.0 or frac > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    if frac == 1.0:
        return image
    _check_at_least_3d(image)
    shape = _dims_of(image)
    rank = len(shape)
    if rank not in (3, 4):
        raise ValueError(
            "`image` should either be a Tensor with rank = 3 or rank = 4. Had "
            f"rank = {rank}."
        )
    h, w = shape[rank - 3 : rank - 1]
    top = int((float(h) - float(h) * frac) / 2)
    left = int((float(w) - float(w) * frac) / 2)
    size = (h - 2 * top, w - 2 * left)
    return _crop(image, np.asarray([top, left], np.int32), size)


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


# -- dtype conversion ---------------------------------------------------------------
def _dtype_max(dt: np.dtype):
    return np.iinfo(dt).max if dt.kind in "iu" else float(np.finfo(dt).max)


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Converts an image to `dtype`, rescaling values: floats are in [0, 1],
    integers in [0, MAX] (TF's algorithm: integer scaling by powers of two,
    `x * (MAX + 0.5)` from floats, `x / MAX` to floats)."""
    image = _image(image)
    out_dt = np.dtype(dtypes.np_dtype(dtype))
    in_dt = _np_dtype(image)
    is_num = ("f", "i", "u")
    if out_dt.kind not in is_num and out_dt != jnp.bfloat16:
        raise AttributeError("dtype must be either floating point or integer")
    if in_dt.kind not in is_num and in_dt != jnp.bfloat16:
        raise AttributeError("image dtype must be either floating point or integer")
    if out_dt == in_dt:
        return math_ops.identity(image)
    in_int, out_int = in_dt.kind in "iu", out_dt.kind in "iu"
    cast = math_ops.saturate_cast if saturate else math_ops.cast
    if in_int and out_int:
        scale_in, scale_out = int(_dtype_max(in_dt)), int(_dtype_max(out_dt))
        if scale_in > scale_out:
            scale = (scale_in + 1) // (scale_out + 1)
            scaled = math_ops.floordiv(
                image, convert_to_tensor(np.asarray(scale, in_dt))
            )
            return cast(scaled, dtype)
        scale = (scale_out + 1) // (scale_in + 1)
        return math_ops.multiply(
            cast(image, dtype), convert_to_tensor(np.asarray(scale, out_dt))
        )
    if not in_int and not out_int:
        return math_ops.cast(image, dtype)
    if in_int:
        as_float = math_ops.cast(image, dtype)
        return math_ops.multiply(as_float, 1.0 / float(_dtype_max(in_dt)))
    scaled = math_ops.multiply(image, float(_dtype_max(out_dt)) + 0.5)
    return cast(scaled, dtype)


# -- patches ------------------------------------------------------------------------
@op("ExtractImagePatches", inputs=("images",))
@_fused(1)
def _extract_patches(images, sizes, strides, rates, padding):
    c = images.shape[-1]
    patches = lax.conv_general_dilated_patches(
        images,
        filter_shape=sizes,
        window_strides=strides,
        padding=padding,
        rhs_dilation=rates,
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
        precision=_HIGHEST,
    )
    # JAX orders a patch's features channel-major (c, kh, kw); TF (kh, kw, c).
    n, oh, ow, _ = patches.shape
    patches = patches.reshape(n, oh, ow, c, sizes[0] * sizes[1])
    return jnp.swapaxes(patches, -1, -2).reshape(n, oh, ow, -1)


def _four(v, what):
    vals = [int(d) for d in np.asarray(to_value(v)).reshape(-1)]
    if len(vals) != 4 or vals[0] != 1 or vals[3] != 1:
        raise errors.invalid_argument(
            f"{what} must be [1, rows, cols, 1]; got {vals}.", "ExtractImagePatches"
        )
    return vals[1], vals[2]


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """Extracts `sizes` patches from each image, flattened into the depth
    dimension in TF's (row, col, channel) order."""
    images = _image(images)
    if len(_dims_of(images)) != 4:
        raise errors.invalid_argument(
            f"input must be 4-dimensional{list(_dims_of(images))}",
            "ExtractImagePatches",
        )
    pad = str(padding)
    if pad not in ("SAME", "VALID"):
        raise errors.invalid_argument(
            f"Value for attr 'padding' of \"{padding}\" is not in the list of allowed "
            'values: "SAME", "VALID"',
            "ExtractImagePatches",
        )
    k = _four(sizes, "ksizes")
    s = _four(strides, "strides")
    r = _four(rates, "rates")
    if _np_dtype(images).kind not in "fc" and _np_dtype(images) != jnp.bfloat16:
        return math_ops.cast(
            _extract_patches(math_ops.cast(images, dtypes.float64), k, s, r, pad),
            images.dtype,
        )
    return _extract_patches(images, k, s, r, pad)


# -- image gradients and variation --------------------------------------------------
@op("ImageGradients", inputs=("image",))
@_fused(1)
def _image_gradients(image):
    dy = image[:, 1:] - image[:, :-1]
    dx = image[:, :, 1:] - image[:, :, :-1]
    dy = jnp.pad(dy, ((0, 0), (0, 1), (0, 0), (0, 0)))
    dx = jnp.pad(dx, ((0, 0), (0, 0), (0, 1), (0, 0)))
    return [dy, dx]


def image_gradients(image):
    """Forward differences `(dy, dx)` of a 4-D batch, zero in the last row
    (`dy`) and column (`dx`), as TF's `image_gradients`."""
    image = _image(image)
    shape = _dims_of(image)
    if len(shape) != 4:
        raise ValueError(
            "image_gradients expects a 4D tensor [batch_size, h, w, d], not "
            f"{_tf_shape(shape)}."
        )
    dy, dx = _image_gradients(image)
    return dy, dx


_SOBEL = np.asarray(
    [[[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]],
    np.float64,
)


@op("SobelEdges", inputs=("image",))
@_fused(1)
def _sobel_edges(image):
    x = jnp.pad(image, ((0, 0), (1, 1), (1, 1), (0, 0)), mode="reflect")
    h, w = image.shape[1], image.shape[2]
    outs = []
    for k in _SOBEL:
        acc = jnp.zeros_like(image)
        for i in range(3):
            for j in range(3):
                if k[i, j]:
                    acc = (
                        acc
                        + jnp.asarray(k[i, j], image.dtype) * x[:, i : i + h, j : j + w]
                    )
        outs.append(acc)
    return jnp.stack(outs, axis=-1)


def sobel_edges(image):
    """Sobel edge maps `[batch, h, w, d, 2]` (dy, dx), with reflect padding."""
    image = _image(image)
    if len(_dims_of(image)) != 4:
        raise ValueError(
            f"sobel_edges expects a 4-D image, got shape {_tf_shape(_dims_of(image))}."
        )
    return _sobel_edges(image)


@op("TotalVariation", inputs=("images",))
@_fused(1)
def _total_variation(images):
    dy = jnp.abs(images[..., 1:, :, :] - images[..., :-1, :, :])
    dx = jnp.abs(images[..., :, 1:, :] - images[..., :, :-1, :])
    return jnp.sum(dy, axis=(-3, -2, -1)) + jnp.sum(dx, axis=(-3, -2, -1))


def total_variation(images, name=None):
    """The sum of absolute differences of neighbouring pixels, per image."""
    images = _image(images)
    if len(_dims_of(images)) not in (3, 4):
        raise ValueError("'images' must be either 3 or 4-dimensional.")
    return _total_variation(images)


# -- pieces of the random ops (`state/image_random_ops`) ----------------------------
@op("Slice", inputs=("value", "offsets"))
def _dynamic_slice(value, offsets, size):
    """`value[offsets : offsets + size]` with offsets that may be traced."""
    return lax.dynamic_slice(value, tuple(offsets[i] for i in range(len(size))), size)


@op("Select", inputs=("image", "flips"))
def _flip_where(image, flips, axis):
    """`image` reversed along `axis` where `flips` (per image) is true."""
    mask = flips.reshape(flips.shape + (1,) * (image.ndim - flips.ndim))
    return jnp.where(mask, jnp.flip(image, axis), image)


@op("ExtractGlimpseV2", inputs=("input", "offsets", "noise"))
@_fused(3)
def _glimpse(input, offsets, noise, size, centered, normalized):  # noqa: A002
    """TF's (Eigen's) `ExtractGlimpses`, version 2: offsets to top-left corners
    truncated toward zero; outside the image the glimpse shows `noise`."""
    _, h, w, _ = input.shape
    gh, gw = size
    y, x = offsets[:, 0].astype(jnp.float32), offsets[:, 1].astype(jnp.float32)
    if normalized:
        y, x = y * h, x * w
        if centered:
            y, x = y / 2.0 + h / 2.0 - gh / 2.0, x / 2.0 + w / 2.0 - gw / 2.0
    elif centered:
        y, x = y + h / 2.0, x + w / 2.0
    top, left = jnp.trunc(y).astype(jnp.int32), jnp.trunc(x).astype(jnp.int32)
    rows = top[:, None] + jnp.arange(gh, dtype=jnp.int32)  # [b, gh]
    cols = left[:, None] + jnp.arange(gw, dtype=jnp.int32)  # [b, gw]
    inside = ((rows >= 0) & (rows < h))[:, :, None] & ((cols >= 0) & (cols < w))[
        :, None, :
    ]
    b = jnp.arange(input.shape[0], dtype=jnp.int32)[:, None, None]
    vals = input[
        b, jnp.clip(rows, 0, h - 1)[:, :, None], jnp.clip(cols, 0, w - 1)[:, None, :]
    ]
    return jnp.where(inside[..., None], vals, noise)
