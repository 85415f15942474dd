"""Keras 3's legacy `keras.preprocessing` (`image`, `sequence`, `text`). Layer L5."""
