"""TF's `tf.nn.experimental`: `stateless_dropout` and `general_dropout`. Layer L1.

Dropout whose mask comes from a stateless seed (the same seed, the same
mask, eagerly and inside `jaxtape.function`) or from a caller's uniform
sampler. The scaling and masking are recorded ops, so the gradient with
respect to `x` is TF's (the mask times `1 / (1 - rate)`).
"""

from __future__ import annotations

import numbers

import numpy as np

from jaxtape._src.core.dispatch import to_value
from jaxtape._src.ops import creation_ops, math_ops, nondiff
from jaxtape._src.ops.array_ops import _shape
from jaxtape._src.ops.stateless_random_ops import stateless_uniform


def _checked(x, rate):
    """`x` as a float tensor and `rate`, checked as TF's `_dropout` does."""
    if isinstance(rate, numbers.Real) and not 0 <= float(rate) < 1:
        raise ValueError(
            "`rate` must be a scalar tensor or a float in the range [0, 1). "
            f"Received: rate={rate}"
        )
    x = creation_ops.convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise ValueError(
            "`x.dtype` must be a floating point tensor as `x` will be scaled. "
            f"Received: x_dtype={x.dtype.name}. Cast it first, e.g. "
            "`jaxtape.cast(x, jaxtape.float32)`."
        )
    return x


def _noise_shape(x, noise_shape) -> tuple:
    """TF's `noise_shape`: None entries take `x`'s size."""
    x_shape = tuple(x.shape)
    if noise_shape is None:
        return x_shape
    if isinstance(noise_shape, (list, tuple)):
        given = list(noise_shape)
    else:
        given = to_value(noise_shape)
        given = list(np.asarray(given).tolist()) if np.ndim(given) else given
    if isinstance(given, list) and len(given) == len(x_shape):
        given = [s if d is None else d for d, s in zip(given, x_shape)]
    return _shape(given)


def _apply_mask(x, rate, random):
    """`x / (1 - rate)` where `random >= rate`, 0 elsewhere (TF's formula)."""
    rate_t = math_ops.cast(rate, x.dtype)
    scale = math_ops.divide(creation_ops.ones([], dtype=x.dtype), 1 - rate_t)
    keep = math_ops.cast(nondiff.greater_equal(random, rate_t), x.dtype)
    return math_ops.multiply(math_ops.multiply(x, scale), keep)


def stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name=None):
    """Dropout with a mask fixed by `seed` (a shape-[2] int tensor): elements
    are zeroed with probability `rate`, the others scaled by `1/(1-rate)`.

    >>> y = jaxtape.nn.experimental.stateless_dropout(
    ...     jaxtape.ones([4]), rate=0.5, seed=[1, 2])
    >>> sorted(set(y.numpy().tolist())) in ([0.0, 2.0], [0.0], [2.0])
    True

    Differences from TensorFlow:
      The mask comes from JAX's threefry generator keyed by `seed`
      (`rng_alg` is accepted and checked, as by `stateless_uniform`), so
      the zeroed positions differ from TF's for the same seed.
    """
    x = _checked(x, rate)
    if isinstance(rate, numbers.Real) and rate == 0:
        return x
    shape = _noise_shape(x, noise_shape)
    alg = "auto_select" if rng_alg is None else rng_alg
    random = stateless_uniform(shape, seed=seed, dtype=x.dtype, alg=alg)
    return _apply_mask(x, rate, random)


def general_dropout(x, rate, uniform_sampler, noise_shape=None, name=None):
    """Dropout with the mask drawn by `uniform_sampler(shape=..., dtype=...)`,
    a function returning uniform samples in `[0, 1)` (TF's
    `tf.nn.experimental.general_dropout`)."""
    x = _checked(x, rate)
    if isinstance(rate, numbers.Real) and rate == 0:
        return x
    shape = _noise_shape(x, noise_shape)
    random = uniform_sampler(shape=shape, dtype=x.dtype)
    return _apply_mask(x, rate, random)
