"""`jaxtape.autograph.experimental` (TF's `tf.autograph.experimental`):
re-exports only; `Feature` and `set_loop_options` come from the converter
(diastatic-malt), imported on first use."""

from jaxtape._src.autograph.conversion import (  # noqa: F401
    do_not_convert,
    experimental_getattr as _experimental_getattr,
)

from jaxtape._src import missing as _missing

# TF names jaxtape lacks say so
__getattr__ = _experimental_getattr(_missing.module_getattr(__name__))
