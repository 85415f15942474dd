"""Keras's preprocessing layers (Normalization, Rescaling, image resizing
and random augmentation, category encoding, discretization, hashing and
lookups). Layer L5.

`numeric` holds the feature layers, `image` the image layers, `lookup` the
host-side hashing and vocabulary layers; every name in
`__all__` is re-exported as `jaxtape.keras.layers.<name>`.
"""

from __future__ import annotations

from jaxtape._src.keras.layers.preprocessing import image, lookup, numeric
from jaxtape._src.keras.layers.preprocessing.image import *  # noqa: F403
from jaxtape._src.keras.layers.preprocessing.lookup import *  # noqa: F403
from jaxtape._src.keras.layers.preprocessing.numeric import *  # noqa: F403

__all__: list[str] = []
__all__ += image.__all__
__all__ += lookup.__all__
__all__ += numeric.__all__
