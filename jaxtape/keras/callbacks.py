"""`jaxtape.keras.callbacks`: re-exports only."""

from jaxtape._src.keras.callbacks import (  # noqa: F401
    Callback,
    EarlyStopping,
    History,
    LambdaCallback,
    ModelCheckpoint,
    ProgbarLogger,
    TensorBoard,
)
