"""Keras's regularization layers: Dropout. Layer L5.

The layer's op samples Keras's Bernoulli mask from a key it is given, so it is
pure: the key comes from the stateful generator (`next_key`), which
`jaxtape.function` lifts, so the mask differs from step to step. (`tf.nn.dropout`
is `state/random_ops.dropout`: TF's uniform-threshold rule, another stream.)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxtape._src.core.dispatch import op
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.state.random_ops import next_key

__all__ = [
    "Dropout",
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
        if not 0 <= rate <= 1:
            raise ValueError(f"Dropout: rate must be in [0, 1]; got {rate}.")
        self.rate, self.noise_shape, self.seed = float(rate), noise_shape, seed

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        key = jax.random.key_data(next_key(self.seed))
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
