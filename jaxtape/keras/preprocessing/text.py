"""`jaxtape.keras.preprocessing.text` (tf.keras's): re-exports only."""

from jaxtape._src.keras.legacy_preprocessing.text import (  # noqa: F401
    Tokenizer,
    hashing_trick,
    one_hot,
    text_to_word_sequence,
    tokenizer_from_json,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
