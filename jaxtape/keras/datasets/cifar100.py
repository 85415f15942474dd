"""`tf.keras.datasets.cifar100`: re-exports only."""

from jaxtape._src.keras.datasets.cifar100 import (  # noqa: F401
    load_data,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
