"""Keras 3's `keras.random`: samplers with Keras's `seed=` semantics.

`seed` is an int, a `SeedGenerator`, or None, as in Keras:

- an int is *stateless*: every call with `seed=42` draws the same values;
- a `SeedGenerator` draws a fresh key each call from a Variable state, so a
  sequence is reproducible from its initial seed and `jaxtape.function`
  advances it like any state;
- None draws from jaxtape's global generator (reproducible after
  `jaxtape.random.set_seed`, or `jaxtape.keras.utils.set_random_seed`).

The streams are JAX's, not TF's: the same seed gives other numbers than
`tf.keras.random`. Samplers are jnp bodies behind the dispatcher; `dropout`
is differentiable with respect to its input.

Layer L5 (keras); imports `core`, `state` and the keras package.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.keras.layers.seed_generator import SeedStream
from jaxtape._src.keras.ops import dtypes as kd
from jaxtape._src.keras.ops._base import body, dtype_arg, shape_arg, static, tensor
from jaxtape._src.state.random_ops import _key_data


class SeedGenerator:
    """Keras 3's `keras.random.SeedGenerator`: a stateful source of seeds.

    >>> gen = jaxtape.keras.random.SeedGenerator(1337)
    >>> a = jaxtape.keras.random.normal((2,), seed=gen)
    >>> b = jaxtape.keras.random.normal((2,), seed=gen)  # differs from `a`

    Differences from Keras: the state is a jaxtape Generator's key, not
    Keras's `(seed, counter)` pair; `next()` returns raw key data (uint32).
    """

    def __init__(self, seed=None, name=None, **kwargs):
        backend = kwargs.pop("backend", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
        del backend
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise ValueError(
                f"Argument `seed` must be an integer. Received: seed={seed}"
            )
        self.name = name or "seed_generator"
        self._initial_seed = None if seed is None else int(seed)
        self._stream = SeedStream(self._initial_seed)

    @property
    def state(self):
        """The Variable holding the generator's state (None when global)."""
        gen = self._stream._generator
        return None if gen is None else gen.state

    def next(self, ordered=True):
        """A fresh key (uint32 key data); advances the state."""
        del ordered
        return self._stream.next()

    def get_config(self):
        return {"seed": self._initial_seed}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def draw_seed(seed):
    """Key data for `seed`: an int (stateless), a SeedGenerator, or None."""
    if isinstance(seed, SeedGenerator):
        return seed.next()
    if seed is None:
        return SeedStream(None).next()
    if isinstance(seed, (int, np.integer)):
        return _key_data(int(seed))
    raise ValueError(
        "Argument `seed` must be either an integer or an instance of "
        f"`SeedGenerator`. Received: seed={seed} (of type {type(seed)})"
    )


def _float_dtype(dtype, what):
    d = dtype_arg(dtype)
    if "float" not in d:
        raise ValueError(
            f"`keras.random.{what}` requires a floating point `dtype`. "
            f"Received: dtype={dtype}"
        )
    return d


@body("random_sample", differentiable=False)
def _sample(key, *params, kind, shape, dtype):
    key = jax.random.wrap_key_data(key)
    if kind == "normal":
        mean, stddev = params
        return (jax.random.normal(key, shape, dtype) * stddev + mean).astype(dtype)
    if kind == "truncated_normal":
        mean, stddev = params
        z = jax.random.truncated_normal(key, -2.0, 2.0, shape, dtype)
        return (z * stddev + mean).astype(dtype)
    if kind == "uniform":
        lo, hi = params
        return jax.random.uniform(key, shape, dtype, lo.astype(dtype), hi.astype(dtype))
    if kind == "randint":
        lo, hi = params
        return jax.random.randint(key, shape, lo, hi, dtype)
    if kind == "gamma":
        (alpha,) = params
        return jax.random.gamma(key, alpha.astype(dtype), shape, dtype)
    if kind == "beta":
        a, b = params
        return jax.random.beta(key, a.astype(dtype), b.astype(dtype), shape, dtype)
    if kind == "binomial":
        n, p = params
        return jax.random.binomial(key, n.astype(dtype), p.astype(dtype), shape, dtype)
    raise ValueError(kind)


def _params(*values, dtype):
    return [
        tensor(v, dtype) if kd.dtype_of(v) in (int, float) else tensor(v)
        for v in values
    ]


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Keras 3's `keras.random.normal` (`floatx()` by default)."""
    d = _float_dtype(dtype, "normal")
    return _sample(
        draw_seed(seed),
        *_params(mean, stddev, dtype=d),
        kind="normal",
        shape=shape_arg(shape),
        dtype=kd.jnp_dtype(d),
    )


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Keras 3's `keras.random.truncated_normal`: within 2 `stddev` of `mean`."""
    d = _float_dtype(dtype, "truncated_normal")
    return _sample(
        draw_seed(seed),
        *_params(mean, stddev, dtype=d),
        kind="truncated_normal",
        shape=shape_arg(shape),
        dtype=kd.jnp_dtype(d),
    )


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Keras 3's `keras.random.uniform` in `[minval, maxval)` (float dtypes)."""
    d = _float_dtype(dtype, "uniform")
    return _sample(
        draw_seed(seed),
        *_params(minval, maxval, dtype=d),
        kind="uniform",
        shape=shape_arg(shape),
        dtype=kd.jnp_dtype(d),
    )


def randint(shape, minval, maxval, dtype="int32", seed=None):
    """Keras 3's `keras.random.randint` in `[minval, maxval)` (integer dtypes)."""
    d = dtype_arg(dtype)
    if "int" not in d:
        raise ValueError(
            "`keras.random.randint` requires an integer `dtype`. "
            f"Received: dtype={dtype}"
        )
    return _sample(
        draw_seed(seed),
        tensor(minval, d),
        tensor(maxval, d),
        kind="randint",
        shape=shape_arg(shape),
        dtype=kd.jnp_dtype(d),
    )


def gamma(shape, alpha, dtype=None, seed=None):
    """Keras 3's `keras.random.gamma` with concentration `alpha` (scale 1)."""
    d = _float_dtype(dtype, "gamma")
    return _sample(
        draw_seed(seed),
        *_params(alpha, dtype=d),
        kind="gamma",
        shape=shape_arg(shape),
        dtype=kd.jnp_dtype(d),
    )


def beta(shape, alpha, beta, dtype=None, seed=None):
    """Keras 3's `keras.random.beta` with concentrations `alpha`, `beta`."""
    d = _float_dtype(dtype, "beta")
    return _sample(
        draw_seed(seed),
        *_params(alpha, beta, dtype=d),
        kind="beta",
        shape=shape_arg(shape),
        dtype=kd.jnp_dtype(d),
    )


def binomial(shape, counts, probabilities, dtype=None, seed=None):
    """Keras 3's `keras.random.binomial`: successes in `counts` trials."""
    d = _float_dtype(dtype, "binomial")
    return _sample(
        draw_seed(seed),
        *_params(counts, probabilities, dtype=d),
        kind="binomial",
        shape=shape_arg(shape),
        dtype=kd.jnp_dtype(d),
    )


@body("random_categorical", differentiable=False)
def _categorical(key, logits, *, num_samples, dtype):
    key = jax.random.wrap_key_data(key)
    out = jax.random.categorical(
        key, logits, axis=-1, shape=(num_samples, logits.shape[0])
    )
    return out.T.astype(dtype)


def categorical(logits, num_samples, dtype="int32", seed=None):
    """Keras 3's `keras.random.categorical`: `(batch, num_samples)` class draws
    from 2-D unnormalized log-probabilities."""
    logits = tensor(logits)
    if np.ndim(logits) != 2:
        raise ValueError(
            "`logits` should be a 2-D tensor with shape [batch_size, num_classes]. "
            f"Received: logits={logits}"
        )
    return _categorical(
        draw_seed(seed),
        logits,
        num_samples=int(num_samples),
        dtype=kd.jnp_dtype(dtype_arg(dtype)),
    )


@body("random_dropout")
def _dropout(x, key, *, rate, noise_shape):
    key = jax.random.wrap_key_data(key)
    keep = jax.random.bernoulli(key, 1.0 - rate, noise_shape)
    return jnp.where(keep, x / (1.0 - rate), jnp.zeros_like(x))


def dropout(inputs, rate, noise_shape=None, seed=None):
    """Keras 3's `keras.random.dropout`: zeroes elements with probability `rate`
    and scales the rest by `1 / (1 - rate)`."""
    x = tensor(inputs)
    shape = np.shape(x)
    if noise_shape is None:
        ns = tuple(shape)
    else:
        ns = tuple(
            s if n is None else int(n) for n, s in zip(static(noise_shape), shape)
        )
    if not 0 <= float(rate) < 1:
        raise ValueError(
            f"Invalid value received for argument `rate`. Expected a "
            f"float value in [0, 1). Received: rate={rate}"
        )
    return _dropout(x, draw_seed(seed), rate=float(rate), noise_shape=ns)


@body("random_shuffle")
def _shuffle(x, key, *, axis):
    key = jax.random.wrap_key_data(key)
    return jax.random.permutation(key, x, axis=axis, independent=False)


def shuffle(x, axis=0, seed=None):
    """Keras 3's `keras.random.shuffle`: a random permutation along `axis`."""
    return _shuffle(tensor(x), draw_seed(seed), axis=int(axis))
