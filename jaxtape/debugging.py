"""`jaxtape.debugging` (TF's `tf.debugging`): re-exports only."""

from jaxtape._src.ops.misc_ops import (  # noqa: F401
    Assert,
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_less,
    assert_less_equal,
    assert_near,
    assert_rank,
    check_numerics,
)
from jaxtape._src.autodiff.explain import explain_gradient  # noqa: F401

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
