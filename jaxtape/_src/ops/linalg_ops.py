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
        bad = _zero_pivot(matrix if xp is jnp else checks.host(matrix))
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


def _adjoint(t):
    return jnp.conj(jnp.swapaxes(t, -1, -2))


@jax.custom_jvp
def _cholesky_lower(a):
    return lax.linalg.cholesky(a, symmetrize_input=False)


@_cholesky_lower.defjvp
def _cholesky_jvp(primals, tangents):
    # TF's gradient of a Cholesky factor is symmetric (CholeskyGrad): the
    # tangent is symmetrized, so the VJP is (g + g^H) / 2.
    (a,), (t,) = primals, tangents
    return jax.jvp(_cholesky_lower_raw, (a,), ((t + _adjoint(t)) / 2,))


def _cholesky_lower_raw(a):
    return lax.linalg.cholesky(a, symmetrize_input=False)


@jax.custom_jvp
def _eigh_lower(a):
    v, w = lax.linalg.eigh(a, lower=True, symmetrize_input=False)
    return v, w


@_eigh_lower.defjvp
def _eigh_jvp(primals, tangents):
    # TF reads the lower triangle only, and so does its gradient
    # (SelfAdjointEigV2's: lower triangle, zero above the diagonal): the
    # tangent is the Hermitian matrix built from the tangent's lower triangle.
    (a,), (t,) = primals, tangents
    low = jnp.tril(t, -1)
    diag = jnp.tril(jnp.triu(t))
    full = low + _adjoint(low) + diag
    return jax.jvp(_eigh_lower_raw, (a,), (full,))


def _eigh_lower_raw(a):
    v, w = lax.linalg.eigh(a, lower=True, symmetrize_input=False)
    return v, w


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
    return _cholesky_lower(input)


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
    v, w = _eigh_lower(tensor)
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


@op("MatrixTranspose", inputs=("a",))
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


def adjoint(matrix, name=None):
    """The conjugate transpose of the innermost matrices."""
    return matrix_transpose(matrix, conjugate=True)


@op("MatrixBandPart", inputs=("input",))
def _band_part(input, num_lower, num_upper):  # noqa: A002
    m, n = input.shape[-2:]
    i = jnp.arange(m)[:, None]
    j = jnp.arange(n)[None, :]
    keep = jnp.ones((m, n), bool)
    if num_lower >= 0:
        keep &= i - j <= num_lower
    if num_upper >= 0:
        keep &= j - i <= num_upper
    return jnp.where(keep, input, jnp.zeros_like(input))


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """Keeps `num_lower` diagonals below and `num_upper` above the main one
    (a negative count keeps the whole triangle), zeros the rest."""
    from jaxtape._src.core.dispatch import to_value

    _check_rank2("MatrixBandPart", to_value(input))
    lo, hi = int(to_value(num_lower)), int(to_value(num_upper))
    m, n = np.shape(to_value(input))[-2:]
    if lo > m or hi > n:
        raise errors.invalid_argument(
            f"num_lower must be negative or less or equal to number of rows ({m}) "
            f"got: {lo}; num_upper likewise for columns ({n}) got: {hi}",
            "MatrixBandPart",
        )
    return _band_part(input, lo, hi)


@op("CholeskySolve", same_dtype=True, jit=True)
def cholesky_solve(chol, rhs, name=None):
    """Solves `A x = rhs` given `chol`, the Cholesky factor of `A`."""
    import jax.scipy.linalg as jsl

    _check_matrix("CholeskySolve", chol)
    _check_rhs("CholeskySolve", chol, rhs)
    y = jsl.solve_triangular(chol, rhs, lower=True)
    return jsl.solve_triangular(chol, y, lower=True, trans="C")


@op("Cross", same_dtype=True)
def cross(a, b, name=None):
    """The cross product of 3-element vectors (the last dimension)."""
    if np.shape(a) != np.shape(b):
        raise errors.invalid_argument(
            f"a and b must have the same shape; got {list(np.shape(a))} and "
            f"{list(np.shape(b))}.",
            "Cross",
        )
    if not np.ndim(a) or np.shape(a)[-1] != 3:
        raise errors.FailedPreconditionError(
            None,
            "Cross",
            "Cross-products are only defined for 3-element vectors; got shape "
            f"{list(np.shape(a))}.",
        )
    if np.dtype(a.dtype).kind not in "fiu":
        raise _unsupported_dtype("Cross", a, "real numbers")
    return jnp.cross(a, b)


def _eig_dtype(x):
    return (
        np.complex128
        if np.dtype(x.dtype) in (np.float64, np.complex128)
        else (np.complex64)
    )


@op("Eig", inputs=("tensor",))
def _eig(tensor, compute_v):
    _check_matrix("Eig", tensor)
    dt = _eig_dtype(tensor)
    if compute_v:
        w, v = jnp.linalg.eig(tensor)
        return w.astype(dt), v.astype(dt)
    return jnp.linalg.eigvals(tensor).astype(dt)


def eig(tensor, name=None):
    """Eigenvalues and eigenvectors of a general square matrix (complex),
    `(e, v)`. (Eigenvectors are unit-norm; their complex phase may differ
    from TF's.)"""
    return _eig(tensor, True)


def eigvals(tensor, name=None):
    """Eigenvalues of a general square matrix (complex)."""
    return _eig(tensor, False)


def eigvalsh(tensor, name=None):
    """Eigenvalues of a self-adjoint matrix (its lower triangle), ascending."""
    return eigh(tensor)[0]


@op("MatrixExponential", jit=True)
def expm(input, name=None):  # noqa: A002
    """The matrix exponential of each innermost square matrix."""
    import jax.scipy.linalg as jsl

    _check_matrix("MatrixExponential", input)
    if input.ndim == 2:
        return jsl.expm(input)
    flat = input.reshape((-1,) + input.shape[-2:])
    return jax.vmap(jsl.expm)(flat).reshape(input.shape)


@op("LogDet", jit=True)
def logdet(matrix, name=None):
    """`log(det(matrix))` of Hermitian positive-definite matrices, by Cholesky."""
    _check_matrix("LogDet", matrix)
    chol = lax.linalg.cholesky(matrix, symmetrize_input=False)
    d = jnp.real(jnp.diagonal(chol, axis1=-2, axis2=-1))
    return (2 * jnp.sum(jnp.log(d), axis=-1)).astype(matrix.dtype)


@op("MatrixSolveLs", inputs=("matrix", "rhs"), same_dtype=True, jit=True)
def _lstsq(matrix, rhs, l2_regularizer):
    import jax.scipy.linalg as jsl

    _check_matrix("MatrixSolveLs", matrix, square=False)
    if rhs.ndim < 2 or rhs.shape[-2] != matrix.shape[-2]:
        raise errors.invalid_argument(
            f"Input matrix and right-hand side must have the same number of rows: "
            f"{matrix.shape[-2]} vs. {rhs.shape[-2] if rhs.ndim >= 2 else rhs.shape}.",
            "MatrixSolveLs",
        )
    a_h = jnp.conj(jnp.swapaxes(matrix, -1, -2))
    m, n = matrix.shape[-2:]
    eye = jnp.eye(min(m, n), dtype=matrix.dtype)
    if m >= n:  # normal equations, TF's fast path
        gram = a_h @ matrix + l2_regularizer * eye
        chol = lax.linalg.cholesky(gram, symmetrize_input=False)
        y = jsl.solve_triangular(chol, a_h @ rhs, lower=True)
        return jsl.solve_triangular(chol, y, lower=True, trans="C")
    gram = matrix @ a_h + l2_regularizer * eye
    chol = lax.linalg.cholesky(gram, symmetrize_input=False)
    y = jsl.solve_triangular(chol, rhs, lower=True)
    return a_h @ jsl.solve_triangular(chol, y, lower=True, trans="C")


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """The least-squares solution of `matrix @ x = rhs` (with an L2 penalty
    `l2_regularizer`), by TF's fast path: the Cholesky-solved normal
    equations."""
    if not fast:
        raise NotImplementedError(
            "lstsq(fast=False) (TF's complete orthogonal factorization) is not "
            "supported; use fast=True."
        )
    return _lstsq(matrix, rhs, float(l2_regularizer))


@op("Lu", inputs=("input",), differentiable=False)
def _lu(input, idx_dtype):  # noqa: A002
    lu_, _, perm = lax.linalg.lu(input)
    return lu_, perm.astype(idx_dtype)


def lu(input, output_idx_type=np.int32, name=None):  # noqa: A002
    """The LU decomposition with partial pivoting: `(lu, p)` with
    `input[p] == L @ U` (L unit-lower and U upper, packed in `lu`). No
    gradient, as TF."""
    from jaxtape._src.core import dtypes
    from jaxtape._src.core.dispatch import to_value

    _check_matrix("Lu", to_value(input))
    dt = np.dtype(dtypes.np_dtype(dtypes.as_dtype(output_idx_type)))
    return _lu(input, dt)


def _unpack_lu(lower_upper):
    n = lower_upper.shape[-1]
    lower = jnp.tril(lower_upper, -1) + jnp.eye(n, dtype=lower_upper.dtype)
    upper = jnp.triu(lower_upper)
    return lower, upper


def _permute_rows(x, perm, inverse=False):
    perm = perm.astype(np.int64)
    if inverse:
        perm = jnp.argsort(perm, axis=-1)
    return jnp.take_along_axis(x, perm[..., :, None], axis=-2)


@op("LuReconstruct", inputs=("lower_upper", "perm"))
def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    """The matrix whose `lu` is `(lower_upper, perm)`."""
    lower, upper = _unpack_lu(lower_upper)
    return _permute_rows(lower @ upper, perm, inverse=True)


@op("LuSolve", inputs=("lower_upper", "perm", "rhs"))
def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """Solves `A x = rhs` given `lu(A)`."""
    import jax.scipy.linalg as jsl

    y = jsl.solve_triangular(
        lower_upper, _permute_rows(rhs, perm), lower=True, unit_diagonal=True
    )
    return jsl.solve_triangular(lower_upper, y, lower=False)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None):
    """The inverse of `A` given `lu(A)`."""
    from jaxtape._src.core.dispatch import to_value
    from jaxtape._src.ops.creation_ops import eye

    v = to_value(lower_upper)
    n = np.shape(v)[-1]
    ident = eye(n, batch_shape=np.shape(v)[:-2], dtype=lower_upper.dtype)
    return lu_solve(lower_upper, perm, ident)


@op("MatrixRank", inputs=("a",), differentiable=False)
def _matrix_rank(a, tol):
    s = jnp.linalg.svd(a, compute_uv=False)
    if tol is None:
        eps = jnp.finfo(a.dtype).eps
        tol = jnp.max(s, axis=-1, keepdims=True) * max(a.shape[-2:]) * eps
    return jnp.sum(s > tol, axis=-1).astype(np.int32)


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values above `tol` (by default `max(s) *
    max(m, n) * eps`), as int32."""
    from jaxtape._src.core.dispatch import to_value

    _check_matrix("MatrixRank", to_value(a), square=False)
    return _matrix_rank(a, None if tol is None else float(to_value(tol)))


def matvec(
    a,
    b,
    transpose_a=False,
    adjoint_a=False,
    a_is_sparse=False,
    b_is_sparse=False,
    name=None,
):
    """`a @ b` for a (batch of) matrix `a` and vector `b`."""
    from jaxtape._src.ops.array_ops import expand_dims, squeeze
    from jaxtape._src.ops.math_ops import matmul

    out = matmul(a, expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a)
    return squeeze(out, -1)


def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002
    """`(tensor / norm, norm)` with the norm kept in its reduced dims."""
    from jaxtape._src.ops.math_ops import divide, norm

    n = norm(tensor, ord=ord, axis=axis, keepdims=True)
    return divide(tensor, n), n


@op("Pinv", inputs=("a",), jit=True)
def _pinv(a, rcond):
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    if rcond is None:
        rcond = 10.0 * max(a.shape[-2:]) * float(jnp.finfo(a.dtype).eps)
    cutoff = rcond * jnp.max(s, axis=-1, keepdims=True)
    inv_s = jnp.where(s > cutoff, 1 / jnp.where(s > cutoff, s, 1), 0).astype(s.dtype)
    return jnp.conj(jnp.swapaxes(vh, -1, -2)) @ (
        inv_s[..., :, None] * jnp.conj(jnp.swapaxes(u, -1, -2))
    )


def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse, singular values below `rcond *
    max(s)` dropped (`rcond` by default `10 * max(m, n) * eps`, as TF)."""
    from jaxtape._src.core.dispatch import to_value

    _check_matrix("Pinv", to_value(a), square=False)
    return _pinv(a, None if rcond is None else float(to_value(rcond)))


@op("MatrixSetDiagV3", same_dtype=True)
def _set_diag(input, diagonal):  # noqa: A002
    m, n = input.shape[-2:]
    k = min(m, n)
    if diagonal.shape != input.shape[:-2] + (k,):
        raise errors.invalid_argument(
            f"diagonal must have shape {list(input.shape[:-2] + (k,))}; got "
            f"{list(diagonal.shape)}.",
            "MatrixSetDiagV3",
        )
    i = jnp.arange(k)
    return input.at[..., i, i].set(diagonal)


def set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """`input` with the main diagonal of each innermost matrix replaced by
    `diagonal` (`k` other than 0 is not supported)."""
    if k != 0:
        raise NotImplementedError("set_diag with k != 0 is not supported yet.")
    return _set_diag(input, diagonal)


@op("Diag")
def tensor_diag(diagonal, name=None):
    """The rank-2k tensor with `diagonal` (rank k) on its diagonal:
    `out[i..., i...] = diagonal[i...]`."""
    shape = diagonal.shape
    n = int(np.prod(shape)) if shape else 1
    flat = (
        jnp.zeros((n, n), diagonal.dtype)
        .at[jnp.arange(n), jnp.arange(n)]
        .set(diagonal.reshape(-1))
    )
    return flat.reshape(shape + shape)


@op("DiagPart")
def tensor_diag_part(input, name=None):  # noqa: A002
    """The diagonal `out[i...] = input[i..., i...]` of a rank-2k tensor."""
    shape = input.shape
    k = len(shape) // 2
    if len(shape) % 2 or shape[:k] != shape[k:]:
        raise errors.invalid_argument(
            f"The input must have an even rank with matching halves; got shape "
            f"{list(shape)}.",
            "DiagPart",
        )
    n = int(np.prod(shape[:k])) if k else 1
    flat = input.reshape(n, n)
    return jnp.diagonal(flat).reshape(shape[:k])
