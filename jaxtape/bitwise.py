"""`jaxtape.bitwise` (TF's `tf.bitwise`): re-exports only."""

from jaxtape._src.ops.nondiff import bitwise_and, bitwise_or, bitwise_xor, invert
from jaxtape._src.ops.bitwise_ops import left_shift, right_shift
from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
