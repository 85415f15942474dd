"""`jaxtape.keras.losses`: re-exports only."""

from jaxtape._src.losses.losses import *  # noqa: F401,F403
from jaxtape._src.losses.losses import (  # noqa: F401
    BinaryCrossentropy,
    CategoricalCrossentropy,
    Huber,
    KLDivergence,
    Loss,
    MeanAbsoluteError,
    MeanSquaredError,
    Reduction,
    SparseCategoricalCrossentropy,
    binary_crossentropy,
    categorical_crossentropy,
    get,
    huber,
    kl_divergence,
    mean_absolute_error,
    mean_squared_error,
    sparse_categorical_crossentropy,
)
