"""`jaxtape.keras.regularizers`: re-exports only."""

from jaxtape._src.keras.regularizers import (  # noqa: F401
    L1,
    L1L2,
    L2,
    Regularizer,
    deserialize,
    get,
    l1,
    l1_l2,
    l2,
    serialize,
)
from jaxtape._src.keras.regularizers_more import (  # noqa: F401
    OrthogonalRegularizer,
    orthogonal_regularizer,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
