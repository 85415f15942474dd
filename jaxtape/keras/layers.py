"""`jaxtape.keras.layers`: re-exports only."""

from jaxtape._src import missing as _missing

from jaxtape._src.keras.layers import *  # noqa: F401,F403
from jaxtape._src.keras.saving_more import deserialize, serialize  # noqa: F401
from jaxtape._src.saved_model.tfsm_layer import TFSMLayer  # noqa: F401

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
