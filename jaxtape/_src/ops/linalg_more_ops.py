"""More of TF's `tf.linalg`: matrix functions and banded solvers. Layer L1.

`logm`, `sqrtm`, `tridiagonal_matmul`, `tridiagonal_solve`,
`banded_triangular_solve`, `eigh_tridiagonal` and
`experimental.conjugate_gradient`, with TF's argument names, formats and
dtype rules. Gradients where TF has them (`logm` has none in TF, so it
records none here).
"""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
from jax import lax

from jaxtape._src.core import errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.ops import array_ops, creation_ops, linalg_ops, math_ops, nondiff
from jaxtape._src.ops.linalg_ops import _check_matrix
from jaxtape._src.ops.math_ops import _unsupported_dtype


# -- matrix functions --------------------------------------------------------------
def _batched(fn, a):
    """`fn` over the innermost matrices of `a`."""
    if a.ndim == 2:
        return fn(a)
    flat = a.reshape((-1,) + a.shape[-2:])
    return jax.vmap(fn)(flat).reshape(a.shape[:-2] + fn(flat[0]).shape)


@op("MatrixLogarithm", differentiable=False, jit=True)
def logm(input, name=None):  # noqa: A002
    """The principal matrix logarithm of each innermost (complex) matrix.

    As TF, only complex64 and complex128 are accepted (a real input raises
    `InvalidArgumentError`), and there is no gradient (TF registers none).

    Differences from TensorFlow:
      Computed from the eigendecomposition (`V log(L) V^-1`), so it needs a
      diagonalizable matrix; TF uses a Schur-Pade method that does not.
    """
    if np.dtype(input.dtype).kind != "c":
        raise _unsupported_dtype("MatrixLogarithm", input, "complex64, complex128")
    _check_matrix("MatrixLogarithm", input)

    def one(a):
        w, v = jnp.linalg.eig(a)
        return (v * jnp.log(w)[None, :]) @ jnp.linalg.inv(v)

    return _batched(one, input).astype(input.dtype)


@jax.custom_jvp
def _sqrtm(a):
    out = jsl.sqrtm(a)
    return out if jnp.iscomplexobj(a) else jnp.real(out).astype(a.dtype)


@_sqrtm.defjvp
def _sqrtm_jvp(primals, tangents):
    # X dX + dX X = dA (TF's MatrixSquareRoot gradient solves the same
    # Sylvester equation), as one Kronecker-structured solve.
    (a,), (t,) = primals, tangents
    x = _sqrtm(a)
    n = a.shape[-1]
    eye = jnp.eye(n, dtype=a.dtype)
    system = jnp.kron(eye, x) + jnp.kron(x.T, eye)
    dx = jnp.linalg.solve(system, t.T.reshape(-1)).reshape(n, n).T
    return x, dx


@op("MatrixSquareRoot", jit=True)
def sqrtm(input, name=None):  # noqa: A002
    """The principal square root of each innermost square matrix.

    Real inputs give real roots (as TF's real Schur method); differentiable.

    Differences from TensorFlow:
      Computed by JAX's complex Schur method (CPU only in JAX).
    """
    _check_matrix("MatrixSquareRoot", input)
    return _batched(_sqrtm, input)


# -- tridiagonal -------------------------------------------------------------------
def _tridiagonal_parts(diagonals, diagonals_format, op_name):
    """`(super, main, sub)` diagonals, each `[..., M]`, from TF's three formats.

    In TF's compact layout the last superdiagonal entry and the first
    subdiagonal entry are padding (zeroed here).
    """
    if diagonals_format == "compact":
        d = to_value(diagonals)
        if np.ndim(d) < 2 or np.shape(d)[-2] != 3:
            raise ValueError(
                "Expected last two dimensions of diagonals to be [3, M] for the "
                f"'compact' format; got shape {list(np.shape(d))}."
            )
        return _split_compact(diagonals)
    if diagonals_format == "sequence":
        if not isinstance(diagonals, (list, tuple)) or len(diagonals) != 3:
            raise ValueError(
                "Expected diagonals to be a sequence of length 3 for the "
                f"'sequence' format; got {type(diagonals).__name__}."
            )
        return _stack_sequence(*diagonals)
    if diagonals_format == "matrix":
        m = to_value(diagonals)
        shape = np.shape(m)
        if len(shape) < 2 or shape[-1] != shape[-2]:
            raise ValueError(
                f"Expected last two dimensions of diagonals to be the same, got "
                f"shape {list(shape)} for the 'matrix' format."
            )
        return _matrix_diagonals(diagonals)
    raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")


@op("TridiagonalParts")
def _split_compact(diagonals):
    sup, main, sub = diagonals[..., 0, :], diagonals[..., 1, :], diagonals[..., 2, :]
    return _pad_parts(sup, main, sub)


@op("TridiagonalParts", same_dtype=True)
def _stack_sequence(superdiag, maindiag, subdiag):
    shape = jnp.broadcast_shapes(superdiag.shape, maindiag.shape, subdiag.shape)
    return _pad_parts(
        *(jnp.broadcast_to(d, shape) for d in (superdiag, maindiag, subdiag))
    )


@op("TridiagonalParts")
def _matrix_diagonals(matrix):
    main = jnp.diagonal(matrix, 0, -2, -1)
    z = jnp.zeros(main.shape[:-1] + (1,), matrix.dtype)
    sup = jnp.concatenate([jnp.diagonal(matrix, 1, -2, -1), z], -1)
    sub = jnp.concatenate([z, jnp.diagonal(matrix, -1, -2, -1)], -1)
    return sup, main, sub


def _pad_parts(sup, main, sub):
    sup, main, sub = jnp.asarray(sup), jnp.asarray(main), jnp.asarray(sub)
    sup = sup.at[..., -1].set(0)
    sub = sub.at[..., 0].set(0)
    return sup, main, sub


@op("TridiagonalMatMul", same_dtype=True)
def _tridiagonal_matmul(superdiag, maindiag, subdiag, rhs):
    if rhs.shape[:-2] != maindiag.shape[:-1]:  # TF's kernel does not broadcast
        raise errors.invalid_argument(
            f"Batch shapes of diagonals and rhs must match: {list(maindiag.shape)} "
            f"and {list(rhs.shape)}.",
            "TridiagonalMatMul",
        )
    if rhs.shape[-2] != maindiag.shape[-1]:
        raise errors.invalid_argument(
            f"rhs must have {maindiag.shape[-1]} rows (the diagonals' length); "
            f"got shape {list(rhs.shape)}.",
            "TridiagonalMatMul",
        )
    up = jnp.pad(rhs[..., 1:, :], [(0, 0)] * (rhs.ndim - 2) + [(0, 1), (0, 0)])
    down = jnp.pad(rhs[..., :-1, :], [(0, 0)] * (rhs.ndim - 2) + [(1, 0), (0, 0)])
    return (
        superdiag[..., :, None] * up
        + maindiag[..., :, None] * rhs
        + subdiag[..., :, None] * down
    )


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """`A @ rhs` for a (batch of) tridiagonal `A` given by its diagonals.

    `diagonals_format`: 'compact' (`[..., 3, M]`: super, main, sub rows),
    'sequence' (three `[..., M]` tensors) or 'matrix' (`[..., M, M]`).
    `rhs` is `[..., M, N]`.
    """
    sup, main, sub = _tridiagonal_parts(
        diagonals, diagonals_format, "TridiagonalMatMul"
    )
    return _tridiagonal_matmul(sup, main, sub, rhs)


@op(
    "TridiagonalSolve",
    inputs=("superdiag", "maindiag", "subdiag", "rhs"),
    same_dtype=True,
    jit=True,
)
def _tridiagonal_solve(superdiag, maindiag, subdiag, rhs, vector, transpose, conj):
    if vector:
        rhs = rhs[..., None]
    elif transpose:
        rhs = jnp.swapaxes(rhs, -1, -2)
    if conj:
        rhs = jnp.conj(rhs)
    m = maindiag.shape[-1]
    if rhs.shape[-2] != m:
        raise errors.invalid_argument(
            f"rhs must have {m} rows (the diagonals' length); got shape "
            f"{list(rhs.shape)}.",
            "TridiagonalSolve",
        )
    batch = jnp.broadcast_shapes(maindiag.shape[:-1], rhs.shape[:-2])
    dl, d, du = (
        jnp.broadcast_to(x, batch + (m,)) for x in (subdiag, maindiag, superdiag)
    )
    b = jnp.broadcast_to(rhs, batch + rhs.shape[-2:])
    out = lax.linalg.tridiagonal_solve(dl, d, du, b)
    return out[..., 0] if vector else out


def tridiagonal_solve(
    diagonals,
    rhs,
    diagonals_format="compact",
    transpose_rhs=False,
    conjugate_rhs=False,
    name=None,
    partial_pivoting=True,
    perturb_singular=False,
):
    """Solves `A x = rhs` for a (batch of) tridiagonal `A`.

    `rhs` is `[..., M]` (a vector) or `[..., M, K]` (`[..., K, M]` with
    `transpose_rhs`); formats as `tridiagonal_matmul`. A singular system gives
    NaN or inf, as TF (which only logs a warning).

    Differences from TensorFlow:
      JAX's Thomas algorithm, with no pivoting: `partial_pivoting` is accepted
      and the results agree for the diagonally dominant or well-conditioned
      systems that need none. `perturb_singular=True` is not supported.
    """
    if perturb_singular:
        raise NotImplementedError(
            "tridiagonal_solve(perturb_singular=True) is not supported in jaxtape."
        )
    del partial_pivoting  # see the docstring
    sup, main, sub = _tridiagonal_parts(diagonals, diagonals_format, "TridiagonalSolve")
    vector = np.ndim(to_value(rhs)) == np.ndim(to_value(main))
    return _tridiagonal_solve(
        sup, main, sub, rhs, bool(vector), bool(transpose_rhs), bool(conjugate_rhs)
    )


# -- banded ------------------------------------------------------------------------
@op("BandedTriangularSolve", inputs=("bands", "rhs"), same_dtype=True, jit=True)
def _banded_triangular_solve(bands, rhs, lower, adjoint):
    k, m = bands.shape[-2:]
    if rhs.ndim < 2 or rhs.shape[-2] != m:
        raise errors.invalid_argument(
            f"rhs must be [..., {m}, N] for bands of shape {list(bands.shape)}; got "
            f"{list(rhs.shape)}.",
            "BandedTriangularSolve",
        )
    rows = jnp.arange(m)
    dense = jnp.zeros(bands.shape[:-2] + (m, m), bands.dtype)
    for i in range(k):  # TF's LEFT_RIGHT alignment: row i holds diagonal i
        cols = rows - i if lower else rows + i
        ok = (cols >= 0) & (cols < m)
        vals = bands[..., i if lower else k - 1 - i, :]
        dense = dense.at[..., rows, jnp.clip(cols, 0, m - 1)].add(
            jnp.where(ok, vals, jnp.zeros_like(vals))
        )
    batch = jnp.broadcast_shapes(dense.shape[:-2], rhs.shape[:-2])
    dense = jnp.broadcast_to(dense, batch + (m, m))
    rhs = jnp.broadcast_to(rhs, batch + rhs.shape[-2:])
    return jsl.solve_triangular(dense, rhs, lower=lower, trans="C" if adjoint else 0)


def banded_triangular_solve(bands, rhs, lower=True, adjoint=False, name=None):
    """Solves a banded triangular system given its `[..., K, M]` bands.

    With `lower`, row 0 of `bands` is the diagonal and row `i` the `i`-th
    subdiagonal (right-aligned); otherwise the last row is the diagonal and
    row `K-1-i` the `i`-th superdiagonal (left-aligned): TF's 'LEFT_RIGHT'
    layout.
    """
    return _banded_triangular_solve(bands, rhs, bool(lower), bool(adjoint))


# -- eigh_tridiagonal --------------------------------------------------------------
@op("EighTridiagonal", same_dtype=False, jit=True)
def _tridiagonal_hermitian(alpha, beta):
    dense = jnp.diag(alpha.astype(beta.dtype))
    dense = dense + jnp.diag(beta, -1) + jnp.diag(jnp.conj(beta), 1)
    return dense


def eigh_tridiagonal(
    alpha,
    beta,
    eigvals_only=True,
    select="a",
    select_range=None,
    tol=None,
    name=None,
):
    """Eigenvalues (and with `eigvals_only=False` eigenvectors) of the
    Hermitian tridiagonal matrix with diagonal `alpha` (real) and
    subdiagonal `beta`.

    `select`: 'a' all, 'v' those in the half-open interval `select_range =
    (lo, hi]`, 'i' those with indices `lo..hi` (inclusive), ascending.

    Differences from TensorFlow:
      Computed by a dense Hermitian eigensolver (TF bisects); `tol` is
      accepted and not needed. 'v' selection is eager-only (the count of
      eigenvalues depends on the values).
    """
    a, b = to_value(alpha), to_value(beta)
    if np.ndim(a) != 1 or np.ndim(b) != 1:
        raise ValueError("Only 1-D alpha and beta are supported (TF's rule).")
    if np.dtype(a.dtype).kind == "c":
        raise ValueError("alpha must be real (the diagonal of a Hermitian matrix).")
    if np.shape(b)[0] != np.shape(a)[0] - 1:
        raise ValueError(
            f"beta must have length {np.shape(a)[0] - 1} (one less than alpha); "
            f"got {np.shape(b)[0]}."
        )
    if np.dtype(b.dtype).kind != "c" and np.dtype(b.dtype) != np.dtype(a.dtype):
        raise ValueError("alpha and beta must have the same real dtype.")
    if select not in ("a", "v", "i"):
        raise ValueError(f"Invalid select: {select!r}; expected 'a', 'v' or 'i'.")
    w, v = linalg_ops.eigh(_tridiagonal_hermitian(alpha, beta))
    w = math_ops.real(w) if np.dtype(b.dtype).kind == "c" else w
    if select != "a" and select_range is None:
        raise ValueError(f"select={select!r} needs a select_range (lo, hi).")
    if select == "i" and select_range is not None:
        lo, hi = (int(to_value(s)) for s in select_range)
        idx = np.arange(lo, hi + 1)
    elif select == "v" and select_range is not None:
        lo, hi = (float(to_value(s)) for s in select_range)
        wv = np.asarray(to_value(w))
        idx = np.nonzero((wv > lo) & (wv <= hi))[0]
    else:
        idx = None
    if idx is not None:
        w = array_ops.gather(w, idx)
        v = array_ops.gather(v, idx, axis=1)
    return w if eigvals_only else (w, v)


# -- conjugate gradient ------------------------------------------------------------
CGState = collections.namedtuple("CGState", ["i", "x", "r", "p", "gamma"])


def conjugate_gradient(
    operator,
    rhs,
    preconditioner=None,
    x=None,
    tol=1e-5,
    max_iter=20,
    name="conjugate_gradient",
):
    """Solves `operator @ x = rhs` for a self-adjoint positive-definite
    `LinearOperator` by (preconditioned) conjugate gradients, TF's algorithm:
    returns `CGState(i, x, r, p, gamma)` after at most `max_iter` steps, or
    once every residual's norm is at most `tol * norm(rhs)`.
    """
    if not (operator.is_self_adjoint and operator.is_positive_definite):
        raise ValueError("Expected a self-adjoint, positive definite operator.")
    if preconditioner is not None and not (
        preconditioner.is_self_adjoint and preconditioner.is_positive_definite
    ):
        raise ValueError("Expected a self-adjoint, positive definite preconditioner.")

    def dot(u, w):
        return math_ops.reduce_sum(math_ops.multiply(math_ops.conj(u), w), axis=-1)

    def norm(u):
        return math_ops.norm(u, axis=-1)

    rhs = creation_ops.convert_to_tensor(rhs)
    batch = np.broadcast_shapes(tuple(rhs.shape[:-1]), tuple(operator.batch_shape))
    if preconditioner is not None:
        batch = np.broadcast_shapes(batch, tuple(preconditioner.batch_shape))
    r0 = array_ops.broadcast_to(rhs, batch + (rhs.shape[-1],))
    tol = math_ops.multiply(tol, norm(r0))
    if x is None:
        x = creation_ops.zeros(batch + (rhs.shape[-1],), dtype=rhs.dtype)
    else:
        r0 = math_ops.subtract(rhs, operator.matvec(x))
    p0 = r0 if preconditioner is None else preconditioner.matvec(r0)
    s = CGState(creation_ops.constant(0), x, r0, p0, dot(r0, p0))
    one = creation_ops.ones([], dtype=rhs.dtype)
    # TF's while_loop, unrolled to `max_iter` steps that stop changing the
    # state once every residual is small: the same result, eagerly, inside
    # `jaxtape.function` and on a tape.
    for _ in range(int(max_iter)):
        active = nondiff.reduce_any(nondiff.greater(norm(s.r), tol))
        z = operator.matvec(s.p)
        alpha = math_ops.divide(s.gamma, array_ops.where(active, dot(s.p, z), one))
        new_x = s.x + alpha[..., None] * s.p
        r = s.r - alpha[..., None] * z
        q = r if preconditioner is None else preconditioner.matvec(r)
        gamma = dot(r, q)
        beta = math_ops.divide(gamma, array_ops.where(active, s.gamma, one))
        p = q + beta[..., None] * s.p
        step = CGState(s.i + 1, new_x, r, p, gamma)
        s = CGState(*(array_ops.where(active, a, b) for a, b in zip(step, s)))
    return s
