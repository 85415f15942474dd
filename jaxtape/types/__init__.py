"""`jaxtape.types` (TF's `tf.types`): re-exports only."""

from jaxtape.types import experimental as experimental  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
