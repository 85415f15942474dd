"""`jaxtape.keras.datasets` (Keras's `keras.datasets`): re-exports only."""

from jaxtape.keras.datasets import (  # noqa: F401
    boston_housing,
    california_housing,
    cifar10,
    cifar100,
    fashion_mnist,
    imdb,
    mnist,
    reuters,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
