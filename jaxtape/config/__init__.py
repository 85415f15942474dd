"""`jaxtape.config` (TF's `tf.config`): devices, placement. Re-exports only."""

from jaxtape._src.core.device import (
    LogicalDevice,
    PhysicalDevice,
    get_soft_device_placement,
    get_visible_devices,
    list_logical_devices,
    list_physical_devices,
    set_soft_device_placement,
    set_visible_devices,
)
from jaxtape._src.function.function import (
    functions_run_eagerly,
    run_functions_eagerly,
)
from jaxtape.config import experimental, threading

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
