"""`jaxtape.lookup.experimental` (TF's `tf.lookup.experimental`): re-exports only."""

from jaxtape._src.structured.lookup_ops import (  # noqa: F401
    DenseHashTable,
    MutableHashTable,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
