"""`jaxtape.saved_model` (TF's `tf.saved_model`): re-exports only.

Exports are built on `jax.export` (see `jaxtape/_src/saved_model/`): a
directory with `manifest.json`, one `programs/*.jaxexport` per exported
function and the Variables in `variables/`.
"""

from jaxtape._src.saved_model.load import (  # noqa: F401
    LoadOptions,
    contains_saved_model,
    load,
)
from jaxtape._src.saved_model.save import (  # noqa: F401
    DEFAULT_SERVING_SIGNATURE_DEF_KEY,
    SaveOptions,
    save,
)

# TF's names for signature keys and method names (strings, as TF's).
CLASSIFY_INPUTS = "inputs"
CLASSIFY_METHOD_NAME = "tensorflow/serving/classify"
CLASSIFY_OUTPUT_CLASSES = "classes"
CLASSIFY_OUTPUT_SCORES = "scores"
PREDICT_INPUTS = "inputs"
PREDICT_METHOD_NAME = "tensorflow/serving/predict"
PREDICT_OUTPUTS = "outputs"
REGRESS_INPUTS = "inputs"
REGRESS_METHOD_NAME = "tensorflow/serving/regress"
REGRESS_OUTPUTS = "outputs"
SERVING = "serve"
TRAINING = "train"
GPU = "gpu"
TPU = "tpu"
VARIABLES_DIRECTORY = "variables"  # (jaxtape's exports keep their Variables there too)

from jaxtape._src import missing as _missing  # noqa: E402

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
