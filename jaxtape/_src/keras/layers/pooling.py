"""Keras's pooling layers: max and average pooling (1-D to 3-D), global pooling
(`keepdims`), `channels_first`, and Keras's aliases (`MaxPool3D`, ...). Layer L5.

The windows are `nn_ops.max_pool`/`avg_pool` (TF's kernels' semantics:
the max's gradient goes to each window's first maximum).
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxtape._src.core.dispatch import op
from jaxtape._src.keras.layers import arguments
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.layers.input_spec import InputSpec
from jaxtape._src.ops import math_ops, nn_ops

__all__ = [
    "AveragePooling1D",
    "AveragePooling2D",
    "AvgPool1D",
    "AvgPool2D",
    "AvgPool3D",
    "AveragePooling3D",
    "GlobalAveragePooling1D",
    "GlobalAveragePooling2D",
    "GlobalAvgPool1D",
    "GlobalAvgPool2D",
    "GlobalAvgPool3D",
    "GlobalAveragePooling3D",
    "GlobalMaxPool1D",
    "GlobalMaxPool2D",
    "GlobalMaxPool3D",
    "GlobalMaxPooling3D",
    "GlobalMaxPooling1D",
    "GlobalMaxPooling2D",
    "MaxPool1D",
    "MaxPool2D",
    "MaxPool3D",
    "MaxPooling1D",
    "MaxPooling2D",
    "MaxPooling3D",
]


class _Pool(Layer):
    _RANK = 2
    _MAX = True

    def __init__(
        self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs
    ):
        super().__init__(**kwargs)
        n = self._RANK
        self.pool_size = arguments.standardize_tuple(pool_size, n, "pool_size")
        self.strides = (
            self.pool_size
            if strides is None
            else arguments.standardize_tuple(strides, n, "strides")
        )
        self.padding = arguments.standardize_padding(self, padding)
        self.data_format = arguments.standardize_data_format(data_format)
        self.input_spec = InputSpec(ndim=n + 2)

    def call(self, inputs):
        first = self.data_format == "channels_first"
        spatial = arguments.spatial_dims(inputs.shape, first)
        sizes = arguments.valid_output_sizes(spatial, self.pool_size, self.strides)
        if self.padding == "valid" and min(sizes) <= 0:
            raise ValueError(
                "Computed output size would be zero or negative. Received: "
                f"`inputs.shape={list(inputs.shape)}`, "
                f"`pool_size={list(self.pool_size)}`, `strides={self.strides}`, "
                f"`padding={self.padding}`. Use padding='same', a smaller "
                "pool_size or a larger input."
            )
        fn = nn_ops.max_pool if self._MAX else nn_ops.avg_pool
        if first:  # TF's CPU kernels pool channels-last only (as Keras does)
            inputs = arguments.to_channels_last(inputs, self._RANK)
        y = fn(inputs, self.pool_size, self.strides, self.padding.upper())
        return arguments.to_channels_first(y, self._RANK) if first else y

    def get_config(self):
        return {
            **super().get_config(),
            "pool_size": list(self.pool_size),
            "strides": list(self.strides),
            "padding": self.padding,
            "data_format": self.data_format,
        }


class MaxPooling2D(_Pool):
    """2-D max pooling; the gradient goes to each window's first maximum, as TF's."""


class _AveragePooling(_Pool):
    _MAX = False

    def __init__(  # Keras's average pooling has no default pool_size
        self, pool_size, strides=None, padding="valid", data_format=None, **kwargs
    ):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class AveragePooling2D(_AveragePooling):
    """2-D average pooling; with 'same' padding, the padding is not averaged."""


class MaxPooling1D(_Pool):
    """1-D max pooling over NWC inputs."""

    _RANK = 1


class AveragePooling1D(_AveragePooling):
    """1-D average pooling over NWC inputs."""

    _RANK = 1


class MaxPooling3D(_Pool):
    """3-D max pooling over NDHWC inputs (or NCDHW with `channels_first`)."""

    _RANK = 3


class AveragePooling3D(_AveragePooling):
    """3-D average pooling; with 'same' padding, the padding is not averaged."""

    _RANK = 3


class _GlobalPool(Layer):
    _RANK = 2
    _MAX = False

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = arguments.standardize_data_format(data_format)
        self.keepdims = bool(keepdims)
        self.input_spec = InputSpec(ndim=self._RANK + 2)

    def call(self, inputs):
        start = 2 if self.data_format == "channels_first" else 1
        axes = list(range(start, start + self._RANK))
        fn = math_ops.reduce_max if self._MAX else math_ops.reduce_mean
        return fn(inputs, axis=axes, keepdims=self.keepdims)

    def get_config(self):
        return {
            **super().get_config(),
            "data_format": self.data_format,
            "keepdims": self.keepdims,
        }


class GlobalAveragePooling2D(_GlobalPool):
    """Mean over the spatial axes."""


class GlobalMaxPooling2D(_GlobalPool):
    """Max over the spatial axes (the gradient is split among ties, as TF's)."""

    _MAX = True


class GlobalAveragePooling1D(_GlobalPool):
    """Mean over the steps axis; with a mask (`Embedding(mask_zero=True)`,
    `Masking`), over the unmasked steps only, as Keras's."""

    _RANK = 1

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(data_format=data_format, keepdims=keepdims, **kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        axis = 2 if self.data_format == "channels_first" else 1
        return _masked_mean(inputs, mask, axis, self.keepdims)

    def compute_mask(self, inputs, previous_mask=None):
        return None  # (the steps are gone)


@op("MaskedMean", inputs=("x", "mask"), jit=True)
def _masked_mean(x, mask, axis, keepdims):
    """Keras's masked mean: the sum of the unmasked steps over their count."""
    keep = jnp.expand_dims(mask.astype(bool), 2 if axis == 1 else 1)
    total = jnp.sum(jnp.where(keep, x, jnp.zeros((), x.dtype)), axis, keepdims=keepdims)
    return total / jnp.sum(keep.astype(x.dtype), axis, keepdims=keepdims)


class GlobalMaxPooling1D(_GlobalPool):
    """Max over the steps axis."""

    _RANK = 1
    _MAX = True


class GlobalAveragePooling3D(_GlobalPool):
    """Mean over the three spatial axes."""

    _RANK = 3


class GlobalMaxPooling3D(_GlobalPool):
    """Max over the three spatial axes."""

    _RANK = 3
    _MAX = True


# Keras's aliases.
MaxPool1D = MaxPooling1D
MaxPool2D = MaxPooling2D
AvgPool1D = AveragePooling1D
AvgPool2D = AveragePooling2D
MaxPool3D = MaxPooling3D
AvgPool3D = AveragePooling3D
GlobalMaxPool3D = GlobalMaxPooling3D
GlobalAvgPool3D = GlobalAveragePooling3D
GlobalMaxPool1D = GlobalMaxPooling1D
GlobalMaxPool2D = GlobalMaxPooling2D
GlobalAvgPool1D = GlobalAveragePooling1D
GlobalAvgPool2D = GlobalAveragePooling2D
