"""Keras's argument checks shared by layer families (conv, pooling, reshaping).

Layer L5. Keras's `standardize_tuple`, `standardize_data_format` and
`standardize_padding`, with their error texts, plus the spatial-shape helpers
that convolution and pooling layers share.
"""

from __future__ import annotations

import numpy as np

from jaxtape._src.core import config
from jaxtape._src.ops import array_ops


def standardize_tuple(value, n, name, allow_zero=False) -> tuple:
    """Keras's `standardize_tuple`: an int or `n` ints, each > 0 (>= 0 if allowed)."""
    text = f"The `{name}` argument must be a tuple of {n} integers. Received {name}="
    if isinstance(value, (int, np.integer)):
        out = (int(value),) * n
    else:
        try:
            out = tuple(int(v) for v in value)
        except (TypeError, ValueError):
            raise ValueError(f"{text}{value}") from None
        if len(out) != n:
            raise ValueError(f"{text}{value}")
    bad = {v for v in out if v < 0 or (v == 0 and not allow_zero)}
    if bad:
        raise ValueError(
            f"{text}{value}, including values {bad} that do not satisfy "
            f"`value {'>= 0' if allow_zero else '> 0'}`"
        )
    return out


def standardize_data_format(data_format) -> str:
    """Keras's `standardize_data_format` (None: `image_data_format()`)."""
    if data_format is None:
        return config.image_data_format()
    fmt = str(data_format).lower()
    if fmt not in ("channels_first", "channels_last"):
        raise ValueError(
            "The `data_format` argument must be one of {'channels_first', "
            f"'channels_last'}}. Received: data_format={data_format}"
        )
    return fmt


def standardize_padding(layer, padding, allow_causal=False) -> str:
    """`'valid'`, `'same'` (or `'causal'` where allowed), lower-cased."""
    allowed = ("valid", "same", "causal") if allow_causal else ("valid", "same")
    mode = str(padding).lower()
    if mode not in allowed:
        names = ", ".join(repr(a) for a in sorted(allowed))
        raise ValueError(  # (Keras's text; it prints a set: any order)
            "The `padding` argument must be a list/tuple or one of "
            f"{{{names}}}. Received: {mode}"
        )
    return mode


def spatial_dims(shape, channels_first) -> tuple:
    """The spatial sizes of an input shape (batch and channel axes dropped)."""
    return tuple(shape[2:]) if channels_first else tuple(shape[1:-1])


def valid_output_sizes(spatial, span, strides) -> list:
    """Keras's VALID output sizes, `floor((size - span) / stride) + 1`."""
    return [(d - k) // s + 1 for d, k, s in zip(spatial, span, strides)]


def to_channels_last(x, rank):
    """`(N, C, *spatial)` -> `(N, *spatial, C)` for `rank` spatial axes."""
    return array_ops.transpose(x, (0, *range(2, rank + 2), 1))


def to_channels_first(x, rank):
    """`(N, *spatial, C)` -> `(N, C, *spatial)` for `rank` spatial axes."""
    return array_ops.transpose(x, (0, rank + 1, *range(1, rank + 1)))
