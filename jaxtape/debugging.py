"""`jaxtape.debugging` (TF's `tf.debugging`): re-exports only."""

from jaxtape._src.ops.misc_ops import (  # noqa: F401
    Assert,
    assert_all_finite,
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_integer,
    assert_less,
    assert_less_equal,
    assert_near,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_proper_iterable,
    assert_rank,
    assert_rank_at_least,
    assert_rank_in,
    assert_same_float_dtype,
    assert_scalar,
    assert_type,
    check_numerics,
    is_numeric_tensor,
)
from jaxtape._src.autodiff.explain import explain_gradient  # noqa: F401
from jaxtape._src.ops.shape_asserts import assert_shapes  # noqa: F401
from jaxtape._src.ops.debug_modes import (  # noqa: F401
    disable_check_numerics,
    disable_traceback_filtering,
    enable_check_numerics,
    enable_traceback_filtering,
    get_log_device_placement,
    is_traceback_filtering_enabled,
    set_log_device_placement,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
