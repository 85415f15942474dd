"""Keras's preprocessing layers (Normalization, Rescaling, random augmentation,
lookups). Layer L5.
"""

from __future__ import annotations

__all__: list[str] = []
