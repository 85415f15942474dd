"""Linear algebra (TF's `tf.linalg`). Layer L1.

TF's kernels decide what is accepted: square (batches of) matrices, float and
complex dtypes (float16 only where TF has a half kernel: `inv`, `qr`), and
the value checks TF's kernels make (`inv`/`solve` of a singular matrix, `eigh`
of a NaN matrix raise `InvalidArgumentError`, eagerly and inside compiled
functions through `core/checks`). As TF, `cholesky` and `eigh` read only the
lower triangle of their input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.core import checks, errors
from jaxtape._src.core.dispatch import op
from jaxtape._src.ops.math_ops import K_INEXACT, _unsupported_dtype, kernels

K_LINALG = K_INEXACT  # half and bfloat16 are told apart below
K_HALF_OK = kernels("half, float, double, complex64, complex128")
_F16 = np.dtype(np.float16)


def _check_matrix(op_name, x, half_ok=False, square=True):
    """TF's dtype and shape checks for a (batch of) matrices.

    float16 has a kernel only where `half_ok` (elsewhere TF declares it and
    has no CPU kernel: `NotFoundError`); other dtypes are refused with TF's
    `InvalidArgumentError`, as are inputs of rank < 2 and non-square ones.
    """
    dtype = np.dtype(x.dtype)
    if dtype == _F16 and not half_ok:
        raise errors.NotFoundError(
            None,
            op_name,
            f"Could not find device for node: {op_name}[T=half]: TensorFlow has no "
            "float16 kernel for it. Cast to float32 first.",
        )
    if (
        dtype not in (K_HALF_OK if half_ok else K_LINALG).dtypes
        or dtype.kind not in "fc"
    ):
        allowed = "half, float, double, complex64, complex128"
        raise _unsupported_dtype(op_name, dtype, allowed)
    shape = np.shape(x)
    if len(shape) < 2:
        raise errors.invalid_argument(
            f"Input must have rank >= 2, got {len(shape)}: shape {list(shape)} is "
            "not a (batch of) matrices.",
            op_name,
        )
    if square and shape[-1] != shape[-2]:
        raise errors.invalid_argument(
            f"Input matrix must be square, got shape {list(shape)}.", op_name
        )


def _in_float32(fn: Callable[..., Any], x, *args) -> Any:
    """`fn` on float16 input computed in float32 (JAX has no half LAPACK)."""
    if x.dtype == _F16:
        out = fn(x.astype(np.float32), *args)
        if isinstance(out, tuple):
            return tuple(o.astype(_F16) for o in out)
        return out.astype(_F16)
    return fn(x, *args)


def _check_invertible(op_name, message):
    """TF's check of `MatrixInverse`/`MatrixSolve`: its partially pivoted LU
    must have no zero (or NaN) pivot."""

    def check(xp, matrix, *rest):
        shape = np.shape(matrix)
        if (
            len(shape) < 2
            or shape[-1] != shape[-2]
            or shape[-1] == 0
            or np.dtype(matrix.dtype) not in K_HALF_OK.dtypes
        ):
            return  # the op refuses it, or there is nothing to invert
        bad = _zero_pivot(matrix)
        checks.require(xp, bad if xp is jnp else np.asarray(bad), op_name, message)

    return check


@jax.jit
def _zero_pivot(matrix):
    """Per matrix: whether its partially pivoted LU has a zero or NaN pivot."""
    m = matrix.astype(np.float32) if matrix.dtype == _F16 else matrix
    lu = lax.linalg.lu(m)[0]
    pivots = jnp.abs(jnp.diagonal(lu, axis1=-2, axis2=-1))
    return ~(jnp.min(pivots, axis=-1) > 0)


@op(
    "MatrixInverse",
    check=_check_invertible("MatrixInverse", "Input is not invertible."),
    jit=True,
)
def inv(input, adjoint=False, name=None):  # noqa: A002
    """Inverse of a (batch of) square matrices.

    A singular matrix (or one holding NaN) raises TF's `InvalidArgumentError`
    "Input is not invertible."
    """
    _check_matrix("MatrixInverse", input, half_ok=True)
    out = _in_float32(jnp.linalg.inv, input)
    return jnp.conj(jnp.swapaxes(out, -1, -2)) if adjoint else out


@op("MatrixDeterminant", jit=True)
def det(input, name=None):  # noqa: A002
    """Determinant of a (batch of) square matrices (0 for a singular one)."""
    _check_matrix("MatrixDeterminant", input)
    return jnp.linalg.det(input)


@op("LogMatrixDeterminant", jit=True)
def slogdet(input, name=None):  # noqa: A002
    """Sign and log of the absolute determinant, `(sign, log_abs_determinant)`.

    As TF, both have the input's dtype (a complex input gives a complex log).
    """
    _check_matrix("LogMatrixDeterminant", input)
    sign, logdet = jnp.linalg.slogdet(input)
    return sign, logdet.astype(input.dtype)


@op(
    "MatrixSolve",
    same_dtype=True,
    check=_check_invertible("MatrixSolve", "Input matrix is not invertible."),
    jit=True,
)
def solve(matrix, rhs, adjoint=False, name=None):
    """Solves `matrix @ x = rhs` for `x` (`rhs` a (batch of) matrices).

    A singular matrix raises TF's `InvalidArgumentError` "Input matrix is not
    invertible."
    """
    _check_matrix("MatrixSolve", matrix)
    _check_rhs("MatrixSolve", matrix, rhs, same_rank=True)
    if adjoint:
        matrix = jnp.conj(jnp.swapaxes(matrix, -1, -2))
    return jnp.linalg.solve(matrix, rhs)


def _check_rhs(op_name, matrix, rhs, same_rank=False):
    """TF's checks of a right-hand side: rank >= 2, its rows the matrix's."""
    ms, rs = np.shape(matrix), np.shape(rhs)
    if len(rs) < 2:
        raise errors.invalid_argument(
            f"In[1] ndims must be >= 2: {len(rs)}. The right-hand side is a (batch "
            "of) matrices; make a vector a column with `jaxtape.expand_dims(b, -1)`.",
            op_name,
        )
    if same_rank and len(rs) != len(ms):
        raise errors.invalid_argument(
            "All input tensors must have the same rank.", op_name
        )
    if rs[-2] != ms[-1]:
        raise errors.invalid_argument(
            f"Input matrix and right-hand side must have the same number of rows: "
            f"{ms[-2]} vs. {rs[-2]}.",
            op_name,
        )


@op("Cholesky", jit=True)
def cholesky(input, name=None):  # noqa: A002
    """Lower-triangular Cholesky factor of a symmetric positive-definite matrix.

    As TF, only the lower triangle of `input` is read, and a matrix that is
    not positive definite raises no error: its factor's lower triangle is NaN.

    Differences from TensorFlow:
      Above the diagonal of such a failed factor jaxtape has zeros; TF leaves
      whatever memory held.
    """
    _check_matrix("Cholesky", input)
    return lax.linalg.cholesky(input, symmetrize_input=False)


@op("MatrixTriangularSolve", same_dtype=True, jit=True)
def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """Solves a triangular system (a zero on the diagonal gives infs, as TF)."""
    import jax.scipy.linalg as jsl

    if matrix.dtype == jnp.bfloat16:
        raise errors.NotFoundError(
            None,
            "MatrixTriangularSolve",
            "Could not find device for node: MatrixTriangularSolve[T=bfloat16]: "
            "cast to float32 first.",
        )
    _check_matrix("MatrixTriangularSolve", matrix)
    _check_rhs("MatrixTriangularSolve", matrix, rhs)
    return jsl.solve_triangular(matrix, rhs, lower=lower, trans="C" if adjoint else 0)


def _check_rank2(op_name, x, what="input"):
    if np.ndim(x) < 2:
        raise errors.invalid_argument(
            f"{what} must be at least 2-dim, received shape: {list(np.shape(x))}",
            op_name,
        )


@op("Trace", jit=True)
def trace(x, name=None):
    """Sum of the diagonal of each innermost matrix (in `x`'s dtype)."""
    _check_rank2("MatrixDiagPartV3", x)
    if x.dtype == np.bool_:
        raise _unsupported_dtype("Sum", x, "numbers")
    return jnp.sum(jnp.diagonal(x, axis1=-2, axis2=-1), axis=-1, dtype=x.dtype)


@op("MatrixDiagPart")
def diag_part(input, name=None):  # noqa: A002
    """The diagonal of each innermost matrix."""
    _check_rank2("MatrixDiagPartV3", input)
    return jnp.diagonal(input, axis1=-2, axis2=-1)


@op("Qr", jit=True)
def qr(input, full_matrices=False, name=None):  # noqa: A002
    """QR decomposition; returns `(q, r)`."""
    _check_matrix("Qr", input, half_ok=True, square=False)
    mode = "complete" if full_matrices else "reduced"
    return tuple(_in_float32(lambda m: tuple(jnp.linalg.qr(m, mode=mode)), input))


def _check_finite_lower(xp, tensor):
    """TF's eigh fails on NaN input: "Self-adjoint eigen decomposition was not
    successful."""
    shape = np.shape(tensor)
    if len(shape) < 2 or np.dtype(tensor.dtype) not in K_LINALG.dtypes:
        return
    lower = tensor if xp is jnp else checks.host(tensor)
    bad = xp.any(xp.isnan(xp.tril(lower)), axis=(-2, -1))
    checks.require(
        xp,
        bad,
        "SelfAdjointEigV2",
        "Self-adjoint eigen decomposition was not successful. The input might not "
        "be valid.",
    )


@op("SelfAdjointEigV2", check=_check_finite_lower, jit=True)
def eigh(tensor, name=None):
    """Eigen-decomposition of a self-adjoint matrix; returns `(e, v)`.

    As TF, only the lower triangle is read, and the eigenvalues have the
    input's dtype (complex for a complex input).
    """
    _check_matrix("SelfAdjointEigV2", tensor)
    v, w = lax.linalg.eigh(tensor, lower=True, symmetrize_input=False)
    return w.astype(tensor.dtype), v


@op("Svd", inputs=("tensor",), jit=True)
def _svd(tensor, full_matrices, compute_uv):
    _check_matrix("Svd", tensor, square=False)
    if not compute_uv:
        return jnp.linalg.svd(tensor, compute_uv=False)
    u, s, vh = jnp.linalg.svd(tensor, full_matrices=full_matrices)
    return s, u, jnp.conj(jnp.swapaxes(vh, -1, -2))


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """Singular values `s` (and `u`, `v` with `compute_uv`), TF's order `(s, u, v)`.

    `s` is real (float32 for a complex64 input), as in TF.
    """
    return _svd(tensor, bool(full_matrices), bool(compute_uv))


@op("MatrixTranspose")
def _matrix_transpose(a, conjugate):
    out = jnp.swapaxes(a, -1, -2)
    return jnp.conj(out) if conjugate else out


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """Transposes the last two dimensions of `a` (a batch of matrices).

    A tensor of rank < 2 raises TF's `ValueError`.
    """
    if np.ndim(a) < 2:
        raise ValueError(
            "Argument `a` should be a (batch) matrix with rank >= 2.  Received `a` "
            f"with shape: {tuple(np.shape(a))}"
        )
    return _matrix_transpose(a, bool(conjugate))
