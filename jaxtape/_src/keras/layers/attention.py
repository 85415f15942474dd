"""Keras's attention layers (MultiHeadAttention, Attention, AdditiveAttention,
EinsumDense). Layer L5.
"""

from __future__ import annotations

__all__: list[str] = []
