"""`jaxtape.keras.ops.linalg` (Keras 3's `keras.ops.linalg`): re-exports only."""

from jaxtape._src.keras.ops.linalg import (  # noqa: F401
    cholesky,
    cholesky_inverse,
    det,
    eig,
    eigh,
    inv,
    lstsq,
    lu_factor,
    matrix_rank,
    norm,
    pinv,
    qr,
    solve,
    solve_triangular,
    svd,
)
from jaxtape._src.keras.ops.core import (  # noqa: F401
    jvp,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
