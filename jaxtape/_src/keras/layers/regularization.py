"""Keras's regularization layers. Layer L5.

`Dropout`, `SpatialDropout1D/2D/3D` (whole feature maps), `GaussianNoise`,
`GaussianDropout`, `AlphaDropout` (keeps SELU's mean and variance) and
`ActivityRegularization`. Random layers act only with `training=True`.

The layer's op samples Keras's Bernoulli mask from a key it is given, so it is
pure: the key comes from the layer's own stream (`SeedStream`, Keras's
SeedGenerator: two layers built with the same `seed` draw the same masks;
without one, the global generator), which `jaxtape.function` lifts, so the
mask differs from step to step. (`tf.nn.dropout` is `state/random_ops.dropout`:
TF's uniform-threshold rule, another stream.)
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from jaxtape._src.core.dispatch import op
from jaxtape._src.keras import regularizers
from jaxtape._src.keras.layers import arguments
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.layers.core import add_activity_loss
from jaxtape._src.keras.layers.input_spec import InputSpec
from jaxtape._src.keras.layers.seed_generator import SeedStream

__all__ = [
    "ActivityRegularization",
    "AlphaDropout",
    "Dropout",
    "GaussianDropout",
    "GaussianNoise",
    "SpatialDropout1D",
    "SpatialDropout2D",
    "SpatialDropout3D",
]


@op("Dropout", inputs=("x", "key"), jit=True)
def _dropout(x, key, rate, noise_shape):
    keep = jax.random.bernoulli(
        jax.random.wrap_key_data(key), 1.0 - rate, noise_shape or x.shape
    )
    return jnp.where(keep, x / (1.0 - rate), 0).astype(x.dtype)


class Dropout(Layer):
    """Zeroes a `rate` fraction of inputs in training (fresh randomness each call)."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        _check_fraction(rate, "rate")
        self.rate, self.noise_shape, self.seed = float(rate), noise_shape, seed
        self._seed_stream = SeedStream(seed)
        self.supports_masking = True  # (Keras's: the mask passes through)

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        key = self._seed_stream.next()
        shape = None
        if self.noise_shape is not None:
            shape = tuple(
                d if d is not None else inputs.shape[i]
                for i, d in enumerate(self.noise_shape)
            )
        return _dropout(inputs, key, self.rate, shape)

    def get_config(self):
        return {
            **super().get_config(),
            "rate": self.rate,
            "noise_shape": self.noise_shape,
            "seed": self.seed,
        }


def _check_fraction(value, name) -> None:
    if not 0 <= value <= 1:
        raise ValueError(
            f"Invalid value received for argument `{name}`. Expected a float value "
            f"between 0 and 1. Received: {name}={value}"
        )


def _key_data(layer):
    return layer._seed_stream.next()


class _SpatialDropout(Dropout):
    """Dropout of whole feature maps: the mask is shared along the spatial axes."""

    _RANK = 1

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)
        self.data_format = arguments.standardize_data_format(data_format)
        self.input_spec = InputSpec(ndim=self._RANK + 2)

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        shape = tuple(inputs.shape)
        ones = (1,) * self._RANK
        if self.data_format == "channels_first":
            noise = (shape[0], shape[1], *ones)
        else:
            noise = (shape[0], *ones, shape[-1])
        return _dropout(inputs, _key_data(self), self.rate, noise)

    def get_config(self):
        # (Keras's: no `trainable`, the dtype's name)
        return {
            "rate": self.rate,
            "seed": self.seed,
            "name": self.name,
            "dtype": self.dtype,
            "data_format": self.data_format,
        }


class SpatialDropout1D(_SpatialDropout):
    """Drops whole channels of `(batch, steps, channels)` inputs."""

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(rate, "channels_last", seed, **kwargs)

    def get_config(self):
        cfg = super().get_config()
        del cfg["data_format"]  # (Keras's SpatialDropout1D takes none)
        return cfg


class SpatialDropout2D(_SpatialDropout):
    """Drops whole 2-D feature maps (`channels_last` or `channels_first`)."""

    _RANK = 2


class SpatialDropout3D(_SpatialDropout):
    """Drops whole 3-D feature maps (`channels_last` or `channels_first`)."""

    _RANK = 3


@op("GaussianNoise", inputs=("x", "key"), jit=True)
def _gaussian_noise(x, key, stddev):
    noise = jax.random.normal(jax.random.wrap_key_data(key), x.shape, x.dtype)
    return x + stddev * noise


@op("GaussianDropout", inputs=("x", "key"), jit=True)
def _gaussian_dropout(x, key, stddev):
    noise = jax.random.normal(jax.random.wrap_key_data(key), x.shape, x.dtype)
    return x * (1.0 + stddev * noise)


class GaussianNoise(Layer):
    """Adds zero-centred Gaussian noise of `stddev` in training."""

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(**kwargs)
        _check_fraction(stddev, "stddev")
        self.stddev, self.seed = stddev, seed
        self._seed_stream = SeedStream(seed)
        self.supports_masking = True

    def call(self, inputs, training=None):
        if not training or self.stddev == 0:
            return inputs
        return _gaussian_noise(inputs, _key_data(self), float(self.stddev))

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}


class GaussianDropout(Layer):
    """Multiplies by Gaussian noise of mean 1 and variance `rate / (1 - rate)`
    in training."""

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        _check_fraction(rate, "rate")
        self.rate, self.seed = rate, seed
        self._seed_stream = SeedStream(seed)
        self.supports_masking = True

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        return _gaussian_dropout(inputs, _key_data(self), stddev)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@op("AlphaDropout", inputs=("x", "key"), jit=True)
def _alpha_dropout(x, key, rate, noise_shape):
    """Keras's AlphaDropout: dropped units are set to SELU's negative
    saturation, then an affine map restores the mean and variance."""
    alpha_p = -_SELU_ALPHA * _SELU_SCALE
    u = jax.random.uniform(jax.random.wrap_key_data(key), noise_shape)
    kept = (u >= rate).astype(x.dtype)
    a = ((1 - rate) * (1 + rate * alpha_p**2)) ** -0.5
    b = -a * alpha_p * rate
    return (a * (x * kept + alpha_p * (1 - kept)) + b).astype(x.dtype)


class AlphaDropout(Layer):
    """Dropout that keeps a SELU network's self-normalization (Keras's)."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        _check_fraction(rate, "rate")
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed
        self._seed_stream = SeedStream(seed)
        self.supports_masking = True

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        shape = tuple(inputs.shape)
        if self.noise_shape is not None:
            shape = tuple(
                shape[i] if d is None else d for i, d in enumerate(self.noise_shape)
            )
        return _alpha_dropout(inputs, _key_data(self), float(self.rate), shape)

    def get_config(self):
        return {
            **super().get_config(),
            "rate": self.rate,
            "seed": self.seed,
            "noise_shape": self.noise_shape,
        }


class ActivityRegularization(Layer):
    """Returns its inputs; adds `l1 * sum(|x|) + l2 * sum(x**2)`, divided by
    the batch size (Keras 3's activity regularization), to its losses."""

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(**kwargs)
        self.l1, self.l2 = l1, l2
        self.activity_regularizer = regularizers.L1L2(l1=l1, l2=l2)
        self.supports_masking = True

    def call(self, inputs):
        add_activity_loss(self, self.activity_regularizer, inputs)
        return inputs

    def get_config(self):
        return {**super().get_config(), "l1": self.l1, "l2": self.l2}
