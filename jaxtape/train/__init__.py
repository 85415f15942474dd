"""`jaxtape.train` (TF's `tf.train`): checkpoints. Re-exports only."""

from jaxtape._src.checkpoint.checkpoint import (
    Checkpoint,
    CheckpointLoadStatus,
    CheckpointManager,
    latest_checkpoint,
)
