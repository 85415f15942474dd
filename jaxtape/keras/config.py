"""`jaxtape.keras.config` (tf.keras's `keras.config`): re-exports only."""

from jaxtape._src.core.config import (  # noqa: F401
    epsilon,
    floatx,
    image_data_format,
    set_epsilon,
    set_floatx,
    set_image_data_format,
)
from jaxtape._src.keras.config import (  # noqa: F401
    backend,
    disable_flash_attention,
    disable_traceback_filtering,
    enable_flash_attention,
    enable_traceback_filtering,
    enable_unsafe_deserialization,
    is_flash_attention_enabled,
    is_nnx_enabled,
    is_traceback_filtering_enabled,
    max_epochs,
    max_steps_per_epoch,
    set_backend,
    set_max_epochs,
    set_max_steps_per_epoch,
)
from jaxtape._src.keras.mixed_precision import (  # noqa: F401
    dtype_policy,
    set_dtype_policy,
)
from jaxtape._src.keras.progbar import (  # noqa: F401
    disable_interactive_logging,
    enable_interactive_logging,
    is_interactive_logging_enabled,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
