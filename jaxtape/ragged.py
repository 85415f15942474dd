"""`jaxtape.ragged` (TF's `tf.ragged`): re-exports only.

`reduce_sum`/`reduce_mean`/`reduce_max`/`reduce_min`/`reduce_prod` are jaxtape
additions: TF reaches them through `tf.reduce_sum(rt, ...)`'s dispatch, which
jaxtape's dense ops now do too (`structured/ragged_dispatch.py`).
"""

from jaxtape._src.structured.ragged_ops import (  # noqa: F401
    boolean_mask,
    constant,
    cross,
    cross_hashed,
    map_flat_values,
    ragged_range as range,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    row_splits_to_segment_ids,
    segment_ids_to_row_splits,
    stack,
    stack_dynamic_partitions,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
