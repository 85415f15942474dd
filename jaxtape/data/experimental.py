"""`jaxtape.data.experimental`: TF's older names. Re-exports only."""

from jaxtape._src.data.dataset import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
)


def cardinality(dataset):
    """`dataset.cardinality()` (TF's `data.experimental.cardinality`)."""
    return dataset.cardinality()
