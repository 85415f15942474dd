"""TensorBoard summaries on tensorboardX (TF's `tf.summary`). Layer L4."""
