"""`jaxtape.keras.legacy` (Keras 3's `keras.legacy`): re-exports only."""

from jaxtape.keras.legacy import saving  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
