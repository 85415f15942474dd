"""`jaxtape.keras.metrics`: re-exports only."""

from jaxtape._src.metrics.metrics import (  # noqa: F401
    AUC,
    Accuracy,
    BinaryAccuracy,
    CategoricalAccuracy,
    Mean,
    MeanAbsoluteError,
    MeanMetricWrapper,
    MeanSquaredError,
    Metric,
    Precision,
    Recall,
    SparseCategoricalAccuracy,
    Sum,
    get,
)
