"""`jaxtape.test.experimental` (TF's `tf.test.experimental`): re-exports only."""

from jaxtape._src.testing.platform import sync_devices  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
