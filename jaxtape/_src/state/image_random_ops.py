"""The random ops of `tf.image` (flips, crops, brightness, contrast, hue,
saturation) and their `stateless_` variants. Layer L2: the stateful ones draw
from `random_ops`' keys, so they follow `jaxtape.random.set_seed` and op
seeds like every random op; the image arithmetic is `ops/image_*`'s.

A `stateless_*` op's `seed` (a shape-[2] integer tensor) alone fixes its
result, as in TF: the same seed gives the same image, in eager code and
inside `jaxtape.function`. The numbers differ from TF's (another generator),
the distributions do not.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import errors
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import image_color_ops, image_ops
from jaxtape._src.ops.image_ops import _dims_of, _image
from jaxtape._src.state.random_ops import next_key


def _stateless_key(seed):
    """A jax key fixed by a TF stateless seed (two integers; may be traced)."""
    s = to_value(seed)
    if np.shape(s) != (2,) or np.dtype(s.dtype).kind not in "iu":
        raise ValueError(
            f"seed must be a shape-[2] integer tensor (TF's stateless seed); got "
            f"{seed!r}. Pass e.g. `seed=(1, 2)`."
        )
    s = jnp.asarray(s)
    key = jax.random.key(0)
    for i in range(2):
        part = s[i]
        key = jax.random.fold_in(key, (part & 0xFFFFFFFF).astype(jnp.uint32))
        if s.dtype.itemsize > 4:
            key = jax.random.fold_in(key, (part >> 32).astype(jnp.uint32))
    return key


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
