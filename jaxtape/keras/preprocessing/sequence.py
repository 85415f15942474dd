"""`jaxtape.keras.preprocessing.sequence` (tf.keras's): re-exports only."""

from jaxtape._src.keras.legacy_preprocessing.sequence import (  # noqa: F401
    TimeseriesGenerator,
    make_sampling_table,
    pad_sequences,
    skipgrams,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
