"""`jaxtape.keras.saving`: re-exports only."""

from jaxtape._src.keras.saving import load_model  # noqa: F401
