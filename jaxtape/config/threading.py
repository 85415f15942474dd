"""`jaxtape.config.threading` (TF's `tf.config.threading`). Re-exports only."""

from jaxtape._src.core.device import (
    get_inter_op_parallelism_threads,
    get_intra_op_parallelism_threads,
    set_inter_op_parallelism_threads,
    set_intra_op_parallelism_threads,
)
