"""`jaxtape.config.experimental` (TF's `tf.config.experimental`). Re-exports only."""

from jaxtape._src.core.deferred import (
    get_deferred_execution,
    set_deferred_execution,
)
from jaxtape._src.core.device import (
    get_memory_growth,
    get_memory_info,
    get_memory_usage,
    get_visible_devices,
    list_logical_devices,
    list_physical_devices,
    reset_memory_stats,
    set_memory_growth,
    set_visible_devices,
)
from jaxtape._src.core.checks import get_runtime_checks, set_runtime_checks
from jaxtape._src.core.compile_cache import (
    get_compile_cache_limit,
    get_max_compiled_ops,
    set_compile_cache_limit,
    set_max_compiled_ops,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
