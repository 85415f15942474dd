"""`tf.keras.datasets.imdb`: re-exports only."""

from jaxtape._src.keras.datasets.imdb import (  # noqa: F401
    get_word_index,
    load_data,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
