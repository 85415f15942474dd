"""Linear algebra (TF's `tf.linalg`). Layer L1."""

from __future__ import annotations

import jax.numpy as jnp

from jaxtape._src.core.dispatch import op


@op("MatrixInverse")
def inv(input, adjoint=False, name=None):  # noqa: A002
    """Inverse of a (batch of) square matrices."""
    out = jnp.linalg.inv(input)
    return jnp.conj(jnp.swapaxes(out, -1, -2)) if adjoint else out


@op("MatrixDeterminant")
def det(input, name=None):  # noqa: A002
    """Determinant of a (batch of) square matrices."""
    return jnp.linalg.det(input)


@op("LogMatrixDeterminant")
def slogdet(input, name=None):  # noqa: A002
    """Sign and log of the absolute determinant."""
    return tuple(jnp.linalg.slogdet(input))


@op("MatrixSolve", same_dtype=True)
def solve(matrix, rhs, adjoint=False, name=None):
    """Solves `matrix @ x = rhs` for `x`."""
    if adjoint:
        matrix = jnp.conj(jnp.swapaxes(matrix, -1, -2))
    return jnp.linalg.solve(matrix, rhs)


@op("Cholesky")
def cholesky(input, name=None):  # noqa: A002
    """Lower-triangular Cholesky factor of a symmetric positive-definite matrix."""
    return jnp.linalg.cholesky(input)


@op("MatrixTriangularSolve", same_dtype=True)
def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """Solves a triangular system."""
    import jax.scipy.linalg as jsl

    return jsl.solve_triangular(matrix, rhs, lower=lower, trans="C" if adjoint else 0)


@op("Trace")
def trace(x, name=None):
    """Sum of the diagonal of each innermost matrix."""
    return jnp.trace(x, axis1=-2, axis2=-1)


@op("MatrixDiagPart")
def diag_part(input, name=None):  # noqa: A002
    """The diagonal of each innermost matrix."""
    return jnp.diagonal(input, axis1=-2, axis2=-1)


@op("Qr")
def qr(input, full_matrices=False, name=None):  # noqa: A002
    """QR decomposition; returns `(q, r)`."""
    return tuple(jnp.linalg.qr(input, mode="complete" if full_matrices else "reduced"))


@op("SelfAdjointEigV2")
def eigh(tensor, name=None):
    """Eigen-decomposition of a self-adjoint matrix; returns `(e, v)`."""
    return tuple(jnp.linalg.eigh(tensor))


@op("Svd", inputs=("tensor",))
def _svd(tensor, full_matrices, compute_uv):
    if not compute_uv:
        return jnp.linalg.svd(tensor, compute_uv=False)
    u, s, vh = jnp.linalg.svd(tensor, full_matrices=full_matrices)
    return s, u, jnp.conj(jnp.swapaxes(vh, -1, -2))


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """Singular values `s` (and `u`, `v` with `compute_uv`), TF's order `(s, u, v)`."""
    return _svd(tensor, bool(full_matrices), bool(compute_uv))
