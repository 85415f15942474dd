"""`jaxtape.keras.legacy.saving` (also `keras.utils.legacy`): Keras 2's
config format; re-exports only."""

from jaxtape._src.keras.legacy_serialization import (  # noqa: F401
    deserialize_keras_object,
    serialize_keras_object,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
