"""`jaxtape.autograph` (TF's `tf.autograph`): re-exports only."""

from jaxtape._src.autograph.conversion import (  # noqa: F401
    set_verbosity,
    to_code,
    to_graph,
    trace,
)
from jaxtape.autograph import experimental  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
