"""`jaxtape.keras.export` (Keras 3's `keras.export`): re-exports only.

`ExportArchive` writes `jaxtape.saved_model` exports (see
`jaxtape/_src/saved_model/keras_export.py`); `Model.export` uses it.
"""

from jaxtape._src.saved_model.keras_export import ExportArchive  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
