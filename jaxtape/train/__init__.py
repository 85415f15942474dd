"""`jaxtape.train` (TF's `tf.train`): checkpoints. Re-exports only."""

from jaxtape._src.checkpoint.checkpoint import (
    Checkpoint,
    CheckpointLoadStatus,
    CheckpointManager,
    latest_checkpoint,
    list_variables,
    load_checkpoint,
    load_variable,
)
from jaxtape._src.io.example_proto import (  # noqa: F401
    BytesList,
    Example,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
    SequenceExample,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
