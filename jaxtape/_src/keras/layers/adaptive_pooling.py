"""Keras 3's adaptive pooling layers: `AdaptiveAveragePooling1D/2D/3D` and
`AdaptiveMaxPooling1D/2D/3D`. Layer L5.

Each call is `keras.ops.adaptive_average_pool` / `adaptive_max_pool` (one
recorded op; PyTorch's windows `[floor(i n / o), ceil((i + 1) n / o))`, the
windows Keras's backends use), so the output has the spatial size
`output_size` whatever the input's.
"""

from __future__ import annotations

from jaxtape._src.core import config
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.layers.input_spec import InputSpec
from jaxtape._src.keras.ops import nn as knn

__all__ = [
    "AdaptiveAveragePooling1D",
    "AdaptiveAveragePooling2D",
    "AdaptiveAveragePooling3D",
    "AdaptiveMaxPooling1D",
    "AdaptiveMaxPooling2D",
    "AdaptiveMaxPooling3D",
]

# Keras's wording of a bad `output_size`, per rank.
_EXPECTED = {
    1: "an integer or tuple of 1 integer",
    2: "an integer or (height, width) tuple",
    3: "an integer or (depth, height, width) tuple",
}


def _output_size(output_size, rank) -> tuple:
    """Keras's check: an int (repeated), or a tuple/list of `rank` of them."""
    if isinstance(output_size, int):
        return (output_size,) * rank
    if isinstance(output_size, (tuple, list)):
        if len(output_size) == rank:
            return tuple(output_size)
        if rank == 1:
            raise ValueError(
                "For 1D input, `output_size` tuple must have length 1. "
                f"Received: {output_size}"
            )
    raise TypeError(
        f"`output_size` must be {_EXPECTED[rank]}. "
        f"Received: {output_size} of type {type(output_size)}"
    )


class _AdaptivePooling(Layer):
    """Keras's `BaseAdaptivePooling`: `output_size` and `data_format`."""

    _RANK = 2
    _MAX = False

    def __init__(self, output_size, data_format=None, **kwargs):
        output_size = _output_size(output_size, self._RANK)
        super().__init__(**kwargs)
        self.output_size = output_size
        self.data_format = data_format or config.image_data_format()
        if self.data_format not in {"channels_first", "channels_last"}:
            raise ValueError(
                f"Invalid data_format: {self.data_format}. "
                "Expected 'channels_first' or 'channels_last'."
            )
        self.input_spec = InputSpec(ndim=self._RANK + 2)

    def call(self, inputs):
        pool = knn.adaptive_max_pool if self._MAX else knn.adaptive_average_pool
        return pool(inputs, self.output_size, self.data_format)

    def compute_output_shape(self, input_shape):
        if self.data_format == "channels_last":
            return (input_shape[0], *self.output_size, input_shape[-1])
        return (input_shape[0], input_shape[1], *self.output_size)

    def get_config(self):
        return {
            **super().get_config(),
            "output_size": self.output_size,
            "data_format": self.data_format,
        }


class AdaptiveAveragePooling1D(_AdaptivePooling):
    """Keras's `AdaptiveAveragePooling1D(output_size, data_format=None)`:
    `(batch, steps, channels)` -> `(batch, output_size, channels)`."""

    _RANK = 1


class AdaptiveAveragePooling2D(_AdaptivePooling):
    """Keras's `AdaptiveAveragePooling2D(output_size, data_format=None)`:
    `(batch, h, w, channels)` -> `(batch, *output_size, channels)`."""

    _RANK = 2


class AdaptiveAveragePooling3D(_AdaptivePooling):
    """Keras's `AdaptiveAveragePooling3D(output_size, data_format=None)`:
    `(batch, d, h, w, channels)` -> `(batch, *output_size, channels)`."""

    _RANK = 3


class AdaptiveMaxPooling1D(_AdaptivePooling):
    """Keras's `AdaptiveMaxPooling1D(output_size, data_format=None)`.

    Differences from TensorFlow: where a window holds tied maxima, the
    gradient is shared among them (JAX's max), not sent to one.
    """

    _RANK = 1
    _MAX = True


class AdaptiveMaxPooling2D(_AdaptivePooling):
    """Keras's `AdaptiveMaxPooling2D(output_size, data_format=None)`.

    Differences from TensorFlow: as `AdaptiveMaxPooling1D`.
    """

    _RANK = 2
    _MAX = True


class AdaptiveMaxPooling3D(_AdaptivePooling):
    """Keras's `AdaptiveMaxPooling3D(output_size, data_format=None)`.

    Differences from TensorFlow: as `AdaptiveMaxPooling1D`.
    """

    _RANK = 3
    _MAX = True
