"""`jaxtape.keras.datasets`: re-exports only."""

from jaxtape._src.keras.datasets import mnist  # noqa: F401
