"""Keras's activation layers: Activation, ReLU, Softmax. Layer L5."""

from __future__ import annotations

from jaxtape._src.keras import activations
from jaxtape._src.keras.layers.base import Layer

__all__ = [
    "Activation",
    "ReLU",
    "Softmax",
]


class Activation(Layer):
    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def get_config(self):
        return {
            **super().get_config(),
            "activation": activations.serialize(self.activation),
        }


class ReLU(Layer):
    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        self.max_value, self.negative_slope = max_value, negative_slope
        self.threshold = threshold

    def call(self, inputs):
        return activations.relu(
            inputs, self.negative_slope, self.max_value, self.threshold
        )

    def get_config(self):
        return {
            **super().get_config(),
            "max_value": self.max_value,
            "negative_slope": self.negative_slope,
            "threshold": self.threshold,
        }


class Softmax(Layer):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs, mask=None):
        return activations.softmax(inputs, self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}
