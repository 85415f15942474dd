"""`tf.keras.datasets.reuters`: re-exports only."""

from jaxtape._src.keras.datasets.reuters import (  # noqa: F401
    get_label_names,
    get_word_index,
    load_data,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
