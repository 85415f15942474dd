"""`jaxtape.experimental`: TF's experimental NumPy API and op registration."""

from jaxtape._src.core.dispatch import register_op  # noqa: F401
from jaxtape._src.data.optional import Optional  # noqa: F401
from jaxtape.experimental import numpy  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
