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
from jaxtape._src.ops.linalg_ops import (  # noqa: F401
    adjoint,
    band_part,
    cholesky_solve,
    cross,
    eig,
    eigvals,
    eigvalsh,
    expm,
    logdet,
    lstsq,
    lu,
    lu_matrix_inverse,
    lu_reconstruct,
    lu_solve,
    matrix_rank,
    matrix_transpose,
    matvec,
    normalize,
    pinv,
    set_diag,
    tensor_diag,
    tensor_diag_part,
)
from jaxtape._src.ops.math_ops import global_norm  # noqa: F401

from jaxtape._src.ops.linalg_more_ops import (  # noqa: F401
    banded_triangular_solve,
    eigh_tridiagonal,
    logm,
    sqrtm,
    tridiagonal_matmul,
    tridiagonal_solve,
)
from jaxtape._src.ops.linear_operator import LinearOperator  # noqa: F401
from jaxtape._src.ops.linear_operator_basic import (  # noqa: F401
    LinearOperatorDiag,
    LinearOperatorFullMatrix,
    LinearOperatorIdentity,
    LinearOperatorLowerTriangular,
    LinearOperatorScaledIdentity,
    LinearOperatorZeros,
)
from jaxtape._src.ops.linear_operator_wrappers import (  # noqa: F401
    LinearOperatorAdjoint,
    LinearOperatorComposition,
    LinearOperatorInversion,
)
from jaxtape._src.ops.linear_operator_block import (  # noqa: F401
    LinearOperatorBlockDiag,
    LinearOperatorBlockLowerTriangular,
    LinearOperatorKronecker,
)
from jaxtape._src.ops.linear_operator_structured import (  # noqa: F401
    LinearOperatorCirculant,
    LinearOperatorCirculant2D,
    LinearOperatorCirculant3D,
    LinearOperatorHouseholder,
    LinearOperatorLowRankUpdate,
    LinearOperatorPermutation,
    LinearOperatorToeplitz,
    LinearOperatorTridiag,
)
from jaxtape._src.ops import linalg_more_ops as _linalg_more_ops
import sys as _sys
import types as _types

from jaxtape._src import missing as _missing

# `tf.linalg.experimental`: a namespace module of its own (this is a module,
# not a package), registered so that `from ... .experimental import` works.
experimental = _types.ModuleType(
    "jaxtape.linalg.experimental",
    "`jaxtape.linalg.experimental` (TF's `tf.linalg.experimental`).",
)
experimental.__dict__.update(
    dict(
        conjugate_gradient=_linalg_more_ops.conjugate_gradient,
    )
)
experimental.__getattr__ = _missing.module_getattr("jaxtape.linalg.experimental")  # type: ignore[attr-defined]
_sys.modules["jaxtape.linalg.experimental"] = experimental

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
