"""`jaxtape.keras` (TF's `tf.keras`): re-exports only."""

from jaxtape.keras import (  # noqa: F401
    activations,
    backend,
    callbacks,
    config,
    constraints,
    datasets,
    dtype_policies,
    export,
    initializers,
    layers,
    legacy,
    losses,
    metrics,
    models,
    ops,
    optimizers,
    preprocessing,
    random,
    regularizers,
    saving,
    tree,
    utils,
)
from jaxtape._src.initializers.initializers import Initializer  # noqa: F401
from jaxtape._src.keras.keras_api import (  # noqa: F401
    Function,
    Operation,
    Quantizer,
    RematScope,
    StatelessScope,
    SymbolicScope,
    Variable,
    device,
    name_scope,
    remat,
    version,
)
from jaxtape._src.keras.keras_tensor import KerasTensor  # noqa: F401
from jaxtape._src.keras.layers import Input  # noqa: F401
from jaxtape._src.keras.layers.base import Layer  # noqa: F401
from jaxtape._src.keras.layers.input_spec import InputSpec  # noqa: F401
from jaxtape._src.keras.mixed_precision import (  # noqa: F401
    DTypePolicy,
    FloatDTypePolicy,
)
from jaxtape._src.keras.models import Model, Sequential  # noqa: F401
from jaxtape._src.keras.regularizers import Regularizer  # noqa: F401
from jaxtape._src.losses.losses import Loss  # noqa: F401
from jaxtape._src.metrics.base import Metric  # noqa: F401
from jaxtape._src.optimizers.optimizers import Optimizer  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
