"""`jaxtape.data` (TF's `tf.data`): input pipelines. Re-exports only."""

from jaxtape._src.data.dataset import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Dataset,
)
from jaxtape.data import experimental
