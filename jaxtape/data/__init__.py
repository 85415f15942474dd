"""`jaxtape.data` (TF's `tf.data`): input pipelines. Re-exports only."""

from jaxtape._src.data.dataset import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Dataset,
    NumpyIterator,
)
from jaxtape._src.data.dataset import DatasetIterator as Iterator
from jaxtape._src.data.structure import DatasetSpec
from jaxtape._src.data.iterator_spec import IteratorSpec
from jaxtape._src.data.options import Options, ThreadingOptions
from jaxtape._src.data.readers import (
    FixedLengthRecordDataset,
    TextLineDataset,
    TFRecordDataset,
)
from jaxtape.data import experimental

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
