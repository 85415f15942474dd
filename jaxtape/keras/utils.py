"""`jaxtape.keras.utils`: re-exports only."""

from jaxtape._src.core.registry import (  # noqa: F401
    CustomObjectScope,
    custom_object_scope,
    get_custom_objects,
    get_registered_name,
    get_registered_object,
    register_keras_serializable,
)
from jaxtape._src.keras.audio_dataset import (  # noqa: F401
    audio_dataset_from_directory,
)
from jaxtape._src.keras.dataset_utils import (  # noqa: F401
    split_dataset,
    timeseries_dataset_from_array,
)
from jaxtape._src.keras.directory_datasets import (  # noqa: F401
    image_dataset_from_directory,
    text_dataset_from_directory,
)
from jaxtape._src.keras.feature_space import FeatureSpace  # noqa: F401
from jaxtape._src.keras.file_utils import (  # noqa: F401
    get_file,
    model_to_dot,
    plot_model,
)
from jaxtape._src.keras.image_utils import (  # noqa: F401
    array_to_img,
    img_to_array,
    load_img,
    save_img,
)
from jaxtape._src.keras.keras_utils import (  # noqa: F401
    clear_session,
    deserialize_keras_object,
    get_source_inputs,
    is_keras_tensor,
    normalize,
    pack_x_y_sample_weight,
    pad_sequences,
    serialize_keras_object,
    set_random_seed,
    standardize_dtype,
    to_categorical,
    unpack_x_y_sample_weight,
)
from jaxtape._src.keras.utils_config import Config  # noqa: F401
from jaxtape.keras.legacy import saving as legacy  # noqa: F401
from jaxtape.keras import _bounding_boxes as bounding_boxes  # noqa: F401
from jaxtape._src.keras.progbar import (  # noqa: F401
    Progbar,
    disable_interactive_logging,
    enable_interactive_logging,
    is_interactive_logging_enabled,
)
from jaxtape._src.keras.py_dataset import PyDataset, Sequence  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
