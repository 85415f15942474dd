"""`jaxtape.keras.random` (Keras 3's `keras.random`): re-exports only."""

from jaxtape._src.keras.random_ops import (  # noqa: F401
    SeedGenerator,
    beta,
    binomial,
    categorical,
    dropout,
    gamma,
    normal,
    randint,
    shuffle,
    truncated_normal,
    uniform,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
