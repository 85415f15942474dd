"""Geometry of `tf.image`: flips, rotations, crops and pads, dtype
conversion, patches and image gradients, as pure jnp bodies behind
`dispatch.op` (or compositions of public ops where TF composes); also the
checks and helpers the other `image_*` modules share. Layer L1.

Images are `[height, width, channels]` or `[batch, height, width, channels]`
as in TF. Sizes, offsets and crop fractions are read on the host (static),
as TF's kernels size their outputs; inside `jaxtape.function` they must be
Python numbers or values known while tracing. Offsets of
`crop_to_bounding_box` and `pad_to_bounding_box` may also be traced.
"""

from __future__ import annotations

import functools
import inspect

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
    dt = images.dtype  # (TF sums in the image dtype, wrapping integers)
    return jnp.sum(dy, axis=(-3, -2, -1), dtype=dt) + jnp.sum(
        dx, axis=(-3, -2, -1), dtype=dt
    )


def total_variation(images, name=None):
    """The sum of absolute differences of neighbouring pixels, per image."""
    images = _image(images)
    if len(_dims_of(images)) not in (3, 4):
        raise ValueError("'images' must be either 3 or 4-dimensional.")
    dt = _np_dtype(images)
    if dt.kind == "u" or dt.kind == "b":  # (TF's `Abs` has no kernel for them)
        raise errors.invalid_argument(
            f"Value for attr 'T' of {dt.name} is not in the list of allowed values: "
            "bfloat16, half, float, double, int8, int16, int32, int64",
            "Abs",
        )
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
