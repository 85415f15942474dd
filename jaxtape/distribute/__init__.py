"""`jaxtape.distribute` (TF's `tf.distribute`): re-exports only."""

from jaxtape._src.distribute.input_lib import (  # noqa: F401
    DistributedDataset,
    DistributedIterator,
)
from jaxtape._src.distribute.multi_worker import (  # noqa: F401
    MultiWorkerMirroredStrategy,
)
from jaxtape._src.distribute.replica import ReplicaContext  # noqa: F401
from jaxtape._src.distribute.strategy import (  # noqa: F401
    InputContext,
    InputOptions,
    InputReplicationMode,
    RunOptions,
    experimental_set_strategy,
    MirroredStrategy,
    OneDeviceStrategy,
    ReduceOp,
    Strategy,
    StrategyExtended,
    get_replica_context,
    get_strategy,
    has_strategy,
    in_cross_replica_context,
)
from jaxtape._src.distribute.values import DistributedValues  # noqa: F401
from jaxtape.distribute import cluster_resolver, experimental  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
