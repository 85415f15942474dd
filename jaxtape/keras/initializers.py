"""`jaxtape.keras.initializers`: re-exports only."""

from jaxtape._src.initializers.initializers import (  # noqa: F401
    Constant,
    GlorotNormal,
    GlorotUniform,
    HeNormal,
    HeUniform,
    Identity,
    Initializer,
    LecunNormal,
    LecunUniform,
    Ones,
    Orthogonal,
    RandomNormal,
    RandomUniform,
    TruncatedNormal,
    VarianceScaling,
    Zeros,
    get,
    serialize,
)
