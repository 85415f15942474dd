"""Process-wide numeric defaults of the Keras backend: floatx and epsilon. Layer L0.

Kept in `core` because losses, initializers and layers (different layers of
the package) all read them; `jaxtape.keras.backend` re-exports the functions.
"""

from __future__ import annotations

import numpy as np

_FLOATX = {"value": "float32"}
_EPSILON = {"value": 1e-7}
_IMAGE_FORMAT = {"value": "channels_last"}


def floatx() -> str:
    """The default float dtype of Keras layers and weights (`'float32'`)."""
    return _FLOATX["value"]


def set_floatx(value: str) -> None:
    """Sets the default float dtype (float16, bfloat16, float32 or float64)."""
    try:
        name = np.dtype(value).name if value != "bfloat16" else "bfloat16"
    except TypeError:  # not a dtype at all ('float8'): Keras's ValueError below
        name = None
    if name not in ("float16", "bfloat16", "float32", "float64"):
        raise ValueError(
            f"Unknown floatx type: {value!r}. Expected one of 'float16', "
            "'bfloat16', 'float32', 'float64'."
        )
    _FLOATX["value"] = name


def epsilon() -> float:
    """The fuzz factor of Keras's numerics (1e-7), e.g. probability clipping."""
    return _EPSILON["value"]


def set_epsilon(value: float) -> None:
    _EPSILON["value"] = float(value)


def image_data_format() -> str:
    return _IMAGE_FORMAT["value"]


def set_image_data_format(data_format: str) -> None:
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(
            f"image_data_format must be 'channels_last' or 'channels_first'; got "
            f"{data_format!r}."
        )
    _IMAGE_FORMAT["value"] = data_format
