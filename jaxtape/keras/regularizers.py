"""`jaxtape.keras.regularizers`: re-exports only."""

from jaxtape._src.keras.regularizers import (  # noqa: F401
    L1,
    L1L2,
    L2,
    Regularizer,
    get,
    l1,
    l1_l2,
    l2,
)
