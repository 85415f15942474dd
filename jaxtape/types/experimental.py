"""`jaxtape.types.experimental` (TF's `tf.types.experimental`): re-exports only."""

from jaxtape._src.function.types import (  # noqa: F401
    Callable,
    ConcreteFunction,
    GenericFunction,
    PolymorphicFunction,
    TensorLike,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
