"""`jaxtape.keras` (TF's `tf.keras`): re-exports only."""

from jaxtape.keras import (  # noqa: F401
    activations,
    backend,
    callbacks,
    config,
    constraints,
    datasets,
    dtype_policies,
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
from jaxtape._src.keras.layers import Input  # noqa: F401
from jaxtape._src.keras.models import Model, Sequential  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
