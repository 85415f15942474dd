"""`jaxtape.linalg` (TF's `tf.linalg`): re-exports only."""

from jaxtape._src.ops.linalg_ops import (  # noqa: F401
    cholesky,
    det,
    diag_part,
    eigh,
    inv,
    qr,
    slogdet,
    solve,
    svd,
    trace,
    triangular_solve,
)
from jaxtape._src.ops.array_ops import diag  # noqa: F401
from jaxtape._src.ops.math_ops import matmul, norm, tensordot, einsum, l2_normalize  # noqa: F401
from jaxtape._src.ops.creation_ops import eye  # noqa: F401
from jaxtape._src.ops.array_ops import transpose as matrix_transpose  # noqa: F401
