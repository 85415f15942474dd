"""`jaxtape.random.experimental` (TF's `tf.random.experimental`): re-exports only."""

from jaxtape._src.ops.stateless_random_ops import (  # noqa: F401
    Algorithm,
    create_rng_state,
    index_shuffle,
    stateless_shuffle,
)
from jaxtape._src.ops.stateless_random_ops import fold_in as stateless_fold_in  # noqa: F401
from jaxtape._src.ops.stateless_random_ops import split as stateless_split  # noqa: F401
from jaxtape._src.state.random_ops import (  # noqa: F401
    Generator,
    get_global_generator,
    set_global_generator,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
