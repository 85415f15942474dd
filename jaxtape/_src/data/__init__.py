"""tf.data-style input pipelines (`jaxtape.data`). Layer L4."""
