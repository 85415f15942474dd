"""Keras's reshaping layers: Flatten, Reshape. Layer L5."""

from __future__ import annotations

import math

from jaxtape._src.keras.layers import arguments
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.ops import array_ops

__all__ = [
    "Flatten",
    "Reshape",
]


class Flatten(Layer):
    """Flattens all axes but the batch axis (channels-last order, as Keras)."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = arguments.standardize_data_format(data_format)

    def call(self, inputs):
        rank = len(inputs.shape)
        if self.data_format == "channels_first" and rank > 2:
            inputs = arguments.to_channels_last(inputs, rank - 2)
        n = inputs.shape[0]
        rest = math.prod(inputs.shape[1:])
        return array_ops.reshape(inputs, (n, rest))

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


class Reshape(Layer):
    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(target_shape)

    def call(self, inputs):
        return array_ops.reshape(inputs, (inputs.shape[0], *self.target_shape))

    def get_config(self):
        return {**super().get_config(), "target_shape": list(self.target_shape)}
