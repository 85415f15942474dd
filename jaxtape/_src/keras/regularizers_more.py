"""Keras 3's `OrthogonalRegularizer` (`keras.regularizers`). Layer L5."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core.dispatch import op
from jaxtape._src.keras.regularizers import REGULARIZERS, Regularizer


@op("OrthogonalRegularizer", inputs=("x",), jit=True)
def _orthogonal_penalty(x, factor, rows):
    """`factor / 2 * sum(|off-diagonal cosines|) / n_pairs` of rows or columns,
    normalized as Keras's `ops.normalize` (`x * min(rsqrt(sum x^2), 1e7)`)."""
    axis = 1 if rows else 0
    inv = jnp.minimum(_rsqrt(jnp.sum(x * x, axis=axis, keepdims=True)), 1.0 / 1e-7)
    x = x * inv
    product = x @ x.T if rows else x.T @ x
    size = product.shape[0]
    off = product * (1.0 - jnp.eye(size, dtype=x.dtype))
    num_pairs = size * (size - 1.0) / 2.0
    return (factor * 0.5 * jnp.sum(jnp.abs(off)) / num_pairs).astype(x.dtype)


def _rsqrt(x):
    return 1.0 / jnp.sqrt(x)


def _non_negative_float(value, name) -> float:
    """Keras's `validate_float_arg`."""
    if (
        not isinstance(value, (float, int))
        or math.isinf(value)
        or math.isnan(value)
        or value < 0
    ):
        raise ValueError(
            f"Invalid value for argument {name}: expected a non-negative float."
            f"Received: {name}={value}"
        )
    return float(value)


class OrthogonalRegularizer(Regularizer):
    """Keras's penalty pushing the rows (`mode="rows"`) or columns of a rank-2
    weight to be orthogonal: `factor * 0.5 * sum(|off-diagonal dot products of
    the L2-normalized rows|) / (n * (n - 1) / 2)`.

    Args:
      factor: A non-negative float, the penalty's scale.
      mode: `"rows"` or `"columns"`.
    """

    def __init__(self, factor=0.01, mode="rows"):
        # Keras holds it as a float32 tensor: its config shows the rounded value
        self.factor = float(np.float32(_non_negative_float(factor, "factor")))
        if mode not in {"rows", "columns"}:
            raise ValueError(
                "Invalid value for argument `mode`. Expected one of "
                f'{{"rows", "columns"}}. Received: mode={mode}'
            )
        self.mode = mode

    def __call__(self, x):
        if len(x.shape) != 2:
            raise ValueError(
                "Inputs to OrthogonalRegularizer must have rank 2. Received: "
                f"inputs.shape={tuple(x.shape)}"
            )
        return _orthogonal_penalty(x, self.factor, self.mode == "rows")

    def get_config(self):
        return {"factor": self.factor, "mode": self.mode}


orthogonal_regularizer = OrthogonalRegularizer
REGULARIZERS.add(OrthogonalRegularizer, "orthogonal_regularizer")
