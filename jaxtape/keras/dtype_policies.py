"""`jaxtape.keras.dtype_policies` (tf.keras's): re-exports only."""

from jaxtape._src.keras.dtype_policies import (  # noqa: F401
    AWQDTypePolicy,
    DTypePolicy,
    DTypePolicyMap,
    FloatDTypePolicy,
    GPTQDTypePolicy,
    Int4DTypePolicy,
    QuantizedDTypePolicy,
    QuantizedFloat8DTypePolicy,
    deserialize,
    get,
    serialize,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
