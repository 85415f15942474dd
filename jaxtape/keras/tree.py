"""`jaxtape.keras.tree` (tf.keras's `keras.tree`): re-exports only."""

from jaxtape._src.keras.tree import (  # noqa: F401
    MAP_TO_NONE,
    assert_same_paths,
    assert_same_structure,
    flatten,
    flatten_with_path,
    is_nested,
    lists_to_tuples,
    map_shape_structure,
    map_structure,
    map_structure_up_to,
    pack_sequence_as,
    traverse,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
