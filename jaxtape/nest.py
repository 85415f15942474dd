"""`jaxtape.nest` (TF's `tf.nest`): re-exports only."""

from jaxtape._src.ops.nest import (  # noqa: F401
    assert_same_structure,
    flatten,
    is_nested,
    map_structure,
    pack_sequence_as,
)
from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
