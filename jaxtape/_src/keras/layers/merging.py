"""Keras's merging layers: Add, Multiply, Concatenate. Layer L5."""

from __future__ import annotations

from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.ops import array_ops, math_ops

__all__ = [
    "Add",
    "Concatenate",
    "Multiply",
]


class Add(Layer):
    def call(self, inputs):
        out = inputs[0]
        for x in inputs[1:]:
            out = math_ops.add(out, x)
        return out


class Multiply(Layer):
    def call(self, inputs):
        out = inputs[0]
        for x in inputs[1:]:
            out = math_ops.multiply(out, x)
        return out


class Concatenate(Layer):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return array_ops.concat(list(inputs), self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}
