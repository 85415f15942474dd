"""`jaxtape.test` (TF's `tf.test`): the device queries tutorials use. Re-exports."""

from jaxtape._src.core.device import (
    gpu_device_name,
    is_built_with_cuda,
    is_gpu_available,
)
