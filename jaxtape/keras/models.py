"""`jaxtape.keras.models`: re-exports only."""

from jaxtape._src.keras.models import Model, Sequential  # noqa: F401
from jaxtape._src.keras.saving import load_model  # noqa: F401
from jaxtape._src.keras.saving_more import (  # noqa: F401
    clone_model,
    model_from_json,
    save_model,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
