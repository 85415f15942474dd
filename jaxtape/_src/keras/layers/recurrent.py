"""Keras's recurrent layers on lax.scan (SimpleRNN, LSTM, GRU, their cells, RNN,
Bidirectional). Layer L5.
"""

from __future__ import annotations

__all__: list[str] = []
