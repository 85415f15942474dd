"""`jaxtape.keras.models`: re-exports only."""

from jaxtape._src.keras.models import Model, Sequential  # noqa: F401
from jaxtape._src.keras.saving import load_model  # noqa: F401
