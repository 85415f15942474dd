"""`jaxtape.keras.activations`: re-exports only."""

from jaxtape._src.keras.activations import (  # noqa: F401
    deserialize,
    elu,
    exponential,
    gelu,
    get,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    leaky_relu,
    linear,
    log_softmax,
    relu,
    relu6,
    selu,
    serialize,
    sigmoid,
    silu,
    softmax,
    softplus,
    softsign,
    swish,
    tanh,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
