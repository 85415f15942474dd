"""`jaxtape.lookup` (TF's `tf.lookup`): re-exports only.

Tables live in `jaxtape/_src/structured/lookup_ops.py`.
"""

from jaxtape._src.structured.lookup_ops import (  # noqa: F401
    KeyValueTensorInitializer,
    StaticHashTable,
    StaticVocabularyTable,
    TextFileIndex,
    TextFileInitializer,
)
from jaxtape.lookup import experimental  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
