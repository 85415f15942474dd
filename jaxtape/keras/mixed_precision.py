"""`jaxtape.keras.mixed_precision` (tf.keras's): re-exports only."""

from jaxtape._src.keras.mixed_precision import (  # noqa: F401
    DTypePolicy,
    Policy,
    dtype_policy,
    global_policy,
    set_dtype_policy,
    set_global_policy,
)
from jaxtape._src.optimizers.loss_scale_optimizer import (  # noqa: F401
    LossScaleOptimizer,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
