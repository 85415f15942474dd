"""The random ops of `tf.image` (flips, crops, brightness, contrast, hue,
saturation) and their `stateless_` variants. Layer L2: the stateful ones draw
from `random_ops`' keys, so they follow `jaxtape.random.set_seed` and op
seeds like every random op; the image arithmetic is `ops/image_*`'s.

A `stateless_*` op's `seed` (a shape-[2] integer tensor) alone fixes its
result, as in TF: the same seed gives the same image, in eager code and
inside `jaxtape.function` (the key is `ops/stateless_random_ops`' for that
seed, as `jaxtape.random.stateless_uniform` uses). The numbers differ from
TF's (another generator), the distributions do not.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import errors
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import image_color_ops, image_ops
from jaxtape._src.ops.creation_ops import convert_to_tensor
from jaxtape._src.ops.image_ops import _dims_of, _image
from jaxtape._src.ops.stateless_random_ops import seed_key
from jaxtape._src.state.random_ops import next_key

_F32 = np.float32


def _stateless_key(seed):
    """A jax key fixed by a TF stateless seed (two integers; may be traced):
    the key `jaxtape.random.stateless_uniform` draws from for that seed."""
    key_data = to_value(seed_key(seed))
    return jax.random.wrap_key_data(key_data, impl="threefry2x32")


def _uniform(key, lo, hi, shape=()):
    return Tensor(jax.random.uniform(key, shape, jnp.float32, lo, hi))


# -- flips --------------------------------------------------------------------------
def _random_flip(image, axis_3d, key):
    image = _image(image)
    image_ops._check_at_least_3d(image)
    shape = _dims_of(image)
    if len(shape) not in (3, 4):
        raise ValueError(
            f"'image' (shape {image_ops._tf_shape(shape)}) must have either 3 or 4 "
            "dimensions."
        )
    n = () if len(shape) == 3 else (shape[0],)
    flips = Tensor(jax.random.uniform(key, n) < 0.5)
    return image_ops._flip_where(image, flips, axis_3d)


def random_flip_left_right(image, seed=None):
    """Flips each image horizontally with probability 1/2."""
    return _random_flip(image, -2, next_key(seed))


def random_flip_up_down(image, seed=None):
    """Flips each image vertically with probability 1/2."""
    return _random_flip(image, -3, next_key(seed))


def stateless_random_flip_left_right(image, seed):
    """`random_flip_left_right` whose outcome `seed` alone decides."""
    return _random_flip(image, -2, _stateless_key(seed))


def stateless_random_flip_up_down(image, seed):
    """`random_flip_up_down` whose outcome `seed` alone decides."""
    return _random_flip(image, -3, _stateless_key(seed))


# -- crops --------------------------------------------------------------------------
def _random_crop(value, size, key):
    value = _image(value, "value")
    shape = _dims_of(value)
    sz = tuple(int(d) for d in np.asarray(to_value(size)).reshape(-1))
    if len(sz) != len(shape):
        raise errors.invalid_argument(
            f"size must have one entry per dimension of value: value has shape "
            f"{list(shape)}, size is {list(sz)}.",
            "Slice",
        )
    if any(s > d or s < 0 for s, d in zip(sz, shape)):
        raise errors.invalid_argument(
            f"assertion failed: [Need value.shape >= size, got ] [{list(shape)}] "
            f"[{list(sz)}]",
            "Assert",
        )
    limit = np.asarray([d - s + 1 for s, d in zip(sz, shape)], np.int32)
    offsets = Tensor(jax.random.randint(key, (len(sz),), 0, limit, jnp.int32))
    return image_ops._dynamic_slice(value, offsets, sz)


def random_crop(value, size, seed=None, name=None):
    """A `size` block of `value` at a uniformly random offset (any rank)."""
    return _random_crop(value, size, next_key(seed))


def stateless_random_crop(value, size, seed, name=None):
    """`random_crop` whose offset `seed` alone decides."""
    return _random_crop(value, size, _stateless_key(seed))


# -- colour -------------------------------------------------------------------------
def _check_delta(max_delta):
    if float(to_value(max_delta)) < 0:
        raise ValueError("max_delta must be non-negative.")


def _check_range(lower, upper):
    lo, hi = float(to_value(lower)), float(to_value(upper))
    if hi <= lo:
        raise ValueError("upper must be > lower.")
    if lo < 0:
        raise ValueError("lower must be non-negative.")
    return lo, hi


def _check_hue(max_delta):
    d = float(to_value(max_delta))
    if d > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if d < 0:
        raise ValueError("max_delta must be non-negative.")
    return d


def random_brightness(image, max_delta, seed=None):
    """`adjust_brightness` by a delta drawn uniformly from [-max_delta, max_delta)."""
    _check_delta(max_delta)
    d = float(to_value(max_delta))
    delta = _uniform(next_key(seed), -d, d)
    return image_color_ops.adjust_brightness(image, delta)


def stateless_random_brightness(image, max_delta, seed):
    """`random_brightness` whose delta `seed` alone decides."""
    _check_delta(max_delta)
    d = float(to_value(max_delta))
    delta = _uniform(_stateless_key(seed), -d, d)
    return image_color_ops.adjust_brightness(image, delta)


def random_contrast(image, lower, upper, seed=None):
    """`adjust_contrast` by a factor drawn uniformly from [lower, upper)."""
    lo, hi = _check_range(lower, upper)
    factor = _uniform(next_key(seed), lo, hi)
    return image_color_ops.adjust_contrast(image, factor)


def stateless_random_contrast(image, lower, upper, seed):
    """`random_contrast` whose factor `seed` alone decides."""
    lo, hi = _check_range(lower, upper)
    factor = _uniform(_stateless_key(seed), lo, hi)
    return image_color_ops.adjust_contrast(image, factor)


def random_hue(image, max_delta, seed=None):
    """`adjust_hue` by a delta drawn uniformly from [-max_delta, max_delta)
    (`max_delta` in [0, 0.5])."""
    d = _check_hue(max_delta)
    delta = _uniform(next_key(seed), -d, d)
    return image_color_ops.adjust_hue(image, delta)


def stateless_random_hue(image, max_delta, seed):
    """`random_hue` whose delta `seed` alone decides."""
    d = _check_hue(max_delta)
    delta = _uniform(_stateless_key(seed), -d, d)
    return image_color_ops.adjust_hue(image, delta)


def random_saturation(image, lower, upper, seed=None):
    """`adjust_saturation` by a factor drawn uniformly from [lower, upper)."""
    lo, hi = _check_range(lower, upper)
    factor = _uniform(next_key(seed), lo, hi)
    return image_color_ops.adjust_saturation(image, factor)


def stateless_random_saturation(image, lower, upper, seed=None):
    """`random_saturation` whose factor `seed` alone decides."""
    lo, hi = _check_range(lower, upper)
    if seed is None:
        raise ValueError(
            "stateless_random_saturation needs a seed: a shape-[2] "
            "integer tensor such as (1, 2)."
        )
    factor = _uniform(_stateless_key(seed), lo, hi)
    return image_color_ops.adjust_saturation(image, factor)


# -- sample_distorted_bounding_box --------------------------------------------------
def _random_crop_rect(w0, h0, lo_area, hi_area, aspect, rng):
    """TF's `GenerateRandomCrop`: a crop `(y, x, h, w)` or None."""
    if hi_area <= 0 or aspect <= 0 or w0 <= 0 or h0 <= 0 or lo_area > hi_area:
        return None
    min_area = _F32(lo_area) * w0 * h0
    max_area = _F32(hi_area) * w0 * h0
    height = int(np.rint(np.sqrt(min_area / aspect)))
    max_height = int(np.rint(np.sqrt(max_area / aspect)))
    if np.rint(max_height * aspect) > w0:
        max_height = int((w0 + 0.5 - 1e-7) / aspect)
        if np.rint(max_height * aspect) > w0:
            max_height -= 1
    max_height = min(max_height, h0)
    height = min(height, max_height)
    if height < max_height:
        height += int(rng.integers(0, max_height - height + 1))
    width = int(np.rint(height * aspect))
    area = width * height
    if area < min_area:
        height += 1
        width = int(np.rint(height * aspect))
        area = width * height
    if area < min_area or area > max_area:
        return None
    if width > w0 or height > h0 or width <= 0 or height <= 0:
        return None
    y = int(rng.integers(0, h0 - height)) if height < h0 else 0
    x = int(rng.integers(0, w0 - width)) if width < w0 else 0
    return y, x, height, width


def _covers(crop, boxes, min_covered) -> bool:
    """TF's `SatisfiesOverlapConstraints`: the crop covers enough of a box."""
    y, x, h, w = crop
    if h * w < 1:
        return False
    for by0, bx0, by1, bx1 in boxes:
        area = (by1 - by0) * (bx1 - bx0)
        if area < 1:
            continue
        ih = max(0, min(y + h, by1) - max(y, by0))
        iw = max(0, min(x + w, bx1) - max(x, bx0))
        if ih * iw / area >= min_covered:
            return True
    return False


def _sample_box(
    image_size,
    bounding_boxes,
    key,
    min_object_covered,
    aspect_ratio_range,
    area_range,
    max_attempts,
    use_image_if_no_bounding_boxes,
):
    op_name = "SampleDistortedBoundingBoxV2"
    size = np.asarray(to_value(image_size))
    if size.shape != (3,):
        raise errors.invalid_argument(
            f"image_size must be 1-dimensional with 3 elements (height, width, "
            f"channels), got shape {list(size.shape)}",
            op_name,
        )
    h0, w0 = int(size[0]), int(size[1])
    raw = np.asarray(to_value(bounding_boxes), _F32).reshape(-1, 4)
    boxes = []
    for ymin, xmin, ymax, xmax in raw:
        if not (0 <= ymin <= ymax <= 1 and 0 <= xmin <= xmax <= 1):
            raise errors.invalid_argument(
                f"Invalid bounding box: {[ymin, xmin, ymax, xmax]}; coordinates must "
                "be in [0, 1] with min <= max.",
                op_name,
            )
        boxes.append((int(ymin * h0), int(xmin * w0), int(ymax * h0), int(xmax * w0)))
    if not boxes:
        if not use_image_if_no_bounding_boxes:
            raise errors.invalid_argument(
                "No bounding boxes provided as input. One must enable "
                "use_image_if_no_bounding_boxes if you wish to not provide any "
                "bounding boxes.",
                op_name,
            )
        boxes = [(0, 0, h0, w0)]
    lo_ar, hi_ar = aspect_ratio_range or (0.75, 1.33)
    lo_area, hi_area = area_range or (0.05, 1.0)
    covered = float(to_value(min_object_covered))
    seed = int(jax.random.randint(key, (), 0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    crop = (0, 0, h0, w0)
    for _ in range(100 if max_attempts is None else int(max_attempts)):
        aspect = _F32(rng.random() * (hi_ar - lo_ar) + lo_ar)
        rect = _random_crop_rect(w0, h0, lo_area, hi_area, aspect, rng)
        if rect is not None and _covers(rect, boxes, covered):
            crop = rect
            break
    y, x, h, w = crop
    dt = size.dtype
    box = np.asarray([[[y / h0, x / w0, (y + h) / h0, (x + w) / w0]]], _F32)
    return (
        Tensor(jnp.asarray(np.asarray([y, x, 0], dt))),
        Tensor(jnp.asarray(np.asarray([h, w, -1], dt))),
        Tensor(jnp.asarray(box)),
    )


def sample_distorted_bounding_box(
    image_size,
    bounding_boxes,
    seed=0,
    min_object_covered=0.1,
    aspect_ratio_range=None,
    area_range=None,
    max_attempts=None,
    use_image_if_no_bounding_boxes=None,
    name=None,
):
    """A random crop `(begin, size, bboxes)` covering at least
    `min_object_covered` of one of `bounding_boxes` (TF's sampling rules:
    aspect ratio and area ranges, `max_attempts` tries, else the whole image).

    Differences from TensorFlow:
      Runs eagerly only (its sampling loop is on the host); `seed=0` draws
      from the global generator like other random ops.
    """
    key = next_key(int(seed) if seed else None)
    return _sample_box(
        image_size,
        bounding_boxes,
        key,
        min_object_covered,
        aspect_ratio_range,
        area_range,
        max_attempts,
        use_image_if_no_bounding_boxes,
    )


def stateless_sample_distorted_bounding_box(
    image_size,
    bounding_boxes,
    seed,
    min_object_covered=0.1,
    aspect_ratio_range=None,
    area_range=None,
    max_attempts=None,
    use_image_if_no_bounding_boxes=None,
    name=None,
):
    """`sample_distorted_bounding_box` whose crop `seed` alone decides."""
    return _sample_box(
        image_size,
        bounding_boxes,
        _stateless_key(seed),
        min_object_covered,
        aspect_ratio_range,
        area_range,
        max_attempts,
        use_image_if_no_bounding_boxes,
    )


# -- extract_glimpse ----------------------------------------------------------------
def extract_glimpse(
    input,  # noqa: A002
    size,
    offsets,
    centered=True,
    normalized=True,
    noise="uniform",
    name=None,
):
    """Extracts a `size` glimpse from each image at `offsets` (`[batch, 2]`,
    (y, x)); where the glimpse leaves the image it shows `noise`: 'uniform'
    (in each image channel's [min, max]), 'gaussian' (its mean and stddev) or
    'zero'. TF 2's conventions (`ExtractGlimpseV2`).

    Differences from TensorFlow:
      The noise values differ from TF's (another generator; drawn from the
      global one, so `set_seed` fixes them); the glimpse has a gradient with
      respect to `input` (TF registers none).
    """
    images = _image(input, "input")
    shape = _dims_of(images)
    if len(shape) != 4:
        raise errors.invalid_argument(
            f"input must be a 4-D tensor, got shape {list(shape)}", "ExtractGlimpseV2"
        )
    gh, gw = (int(d) for d in np.asarray(to_value(size)).reshape(-1))
    offs = convert_to_tensor(offsets, dtype="float32")
    if _dims_of(offs) != (shape[0], 2):
        raise errors.invalid_argument(
            f"offsets must be [batch, 2] = [{shape[0]}, 2], got {list(_dims_of(offs))}",
            "ExtractGlimpseV2",
        )
    x = to_value(images).astype(jnp.float32)
    n_shape = (shape[0], gh, gw, shape[3])
    if noise == "zero":
        fill = jnp.zeros(n_shape, jnp.float32)
    elif noise == "uniform":
        lo = jnp.min(x, axis=(1, 2), keepdims=True)
        hi = jnp.max(x, axis=(1, 2), keepdims=True)
        fill = jax.random.uniform(next_key(None), n_shape, jnp.float32) * (hi - lo) + lo
    elif noise == "gaussian":
        mean = jnp.mean(x, axis=(1, 2), keepdims=True)
        std = jnp.std(x, axis=(1, 2), keepdims=True)
        fill = jax.random.normal(next_key(None), n_shape, jnp.float32) * std + mean
    else:
        raise errors.invalid_argument(
            f"noise must be one of 'uniform', 'gaussian', 'zero'; got {noise!r}",
            "ExtractGlimpseV2",
        )
    fill = Tensor(fill.astype(to_value(images).dtype))
    return image_ops._glimpse(
        images, offs, fill, (gh, gw), bool(centered), bool(normalized)
    )
