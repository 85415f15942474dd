"""`jaxtape.keras.preprocessing` (tf.keras's, Keras 3's legacy one): re-exports only."""

from jaxtape._src.keras.dataset_utils import (  # noqa: F401
    timeseries_dataset_from_array,
)
from jaxtape._src.keras.directory_datasets import (  # noqa: F401
    image_dataset_from_directory,
    text_dataset_from_directory,
)
from jaxtape.keras.preprocessing import image, sequence, text  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
