"""`jaxtape.keras.optimizers`: re-exports only."""

from jaxtape.keras.optimizers import schedules  # noqa: F401
from jaxtape._src.optimizers.optimizers import (  # noqa: F401
    SGD,
    Adadelta,
    Adafactor,
    Adagrad,
    Adam,
    Adamax,
    AdamW,
    Ftrl,
    Lamb,
    Lion,
    Nadam,
    Optimizer,
    RMSprop,
    deserialize,
    get,
    serialize,
)
from jaxtape._src.optimizers.loss_scale_optimizer import (  # noqa: F401
    LossScaleOptimizer,
)
from jaxtape._src.optimizers.optimizers_more import (  # noqa: F401
    MultiOptimizer,
    Muon,
    OptimizerMap,
    ScheduleFreeAdamW,
)
from jaxtape.keras.optimizers import legacy  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
