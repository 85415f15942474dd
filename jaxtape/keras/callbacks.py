"""`jaxtape.keras.callbacks`: re-exports only."""

from jaxtape._src.keras.callbacks import (  # noqa: F401
    BackupAndRestore,
    Callback,
    CallbackList,
    CSVLogger,
    EarlyStopping,
    History,
    LambdaCallback,
    LearningRateScheduler,
    ModelCheckpoint,
    ProgbarLogger,
    ReduceLROnPlateau,
    SwapEMAWeights,
    TensorBoard,
    TerminateOnNaN,
)
from jaxtape._src.keras.callbacks_more import RemoteMonitor  # noqa: F401
from jaxtape._src.keras.callbacks_orbax import OrbaxCheckpoint  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
