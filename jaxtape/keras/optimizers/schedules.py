"""`jaxtape.keras.optimizers.schedules`: re-exports only."""

from jaxtape._src.optimizers.schedules import (  # noqa: F401
    CosineDecay,
    ExponentialDecay,
    InverseTimeDecay,
    LearningRateSchedule,
    PiecewiseConstantDecay,
)
