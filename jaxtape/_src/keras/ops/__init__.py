"""Keras 3's `keras.ops` on jaxtape: `numpy`, `nn`, `linalg`, `core` families."""
