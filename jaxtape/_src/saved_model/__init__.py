"""`jaxtape.saved_model` on `jax.export` (layer L5): `save`, `load`, the manifest."""
