"""`jaxtape.keras.activations`: re-exports only."""

from jaxtape._src.keras.activations import (  # noqa: F401
    celu,
    deserialize,
    elu,
    exponential,
    gelu,
    get,
    glu,
    hard_shrink,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    leaky_relu,
    linear,
    log_sigmoid,
    log_softmax,
    mish,
    relu,
    relu6,
    selu,
    serialize,
    sigmoid,
    silu,
    soft_shrink,
    softmax,
    softplus,
    softsign,
    sparse_plus,
    sparse_sigmoid,
    sparsemax,
    squareplus,
    swish,
    tanh,
    tanh_shrink,
    threshold,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
