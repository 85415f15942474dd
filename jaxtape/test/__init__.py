"""`jaxtape.test` (TF's `tf.test`): re-exports only."""

from jaxtape._src.core.device import (  # noqa: F401
    gpu_device_name,
    is_built_with_cuda,
    is_gpu_available,
)
from jaxtape._src.testing.gradient_checker import compute_gradient  # noqa: F401
from jaxtape._src.testing.platform import (  # noqa: F401
    Benchmark,
    is_built_with_gpu_support,
    is_built_with_rocm,
    is_built_with_xla,
    is_cpu_target_available,
)
from jaxtape._src.testing.test_case import (  # noqa: F401
    TestCase,
    disable_with_predicate,
    main,
    with_eager_op_as_function,
)
from jaxtape.test import experimental as experimental  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
