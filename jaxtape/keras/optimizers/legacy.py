"""`jaxtape.keras.optimizers.legacy`: Keras 3's stand-ins, which raise on use."""

from jaxtape._src.optimizers.optimizers_more import (  # noqa: F401
    LegacyOptimizerWarning as Adagrad,
    LegacyOptimizerWarning as Adam,
    LegacyOptimizerWarning as Ftrl,
    LegacyOptimizerWarning as Optimizer,
    LegacyOptimizerWarning as RMSprop,
    LegacyOptimizerWarning as SGD,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
