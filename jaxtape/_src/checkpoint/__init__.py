"""Object-based checkpoints on orbax-checkpoint (`tf.train.Checkpoint`). Layer L4."""
