"""`jaxtape.sets` (TF's `tf.sets`): re-exports only.

See `jaxtape/_src/structured/set_ops.py`.
"""

from jaxtape._src.structured.set_ops import (  # noqa: F401
    difference,
    intersection,
    size,
    union,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
