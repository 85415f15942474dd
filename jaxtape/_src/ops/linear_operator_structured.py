"""The structured `LinearOperator` kinds (TF's `tf.linalg.LinearOperator*`). Layer L1.

Circulant (1-D/2-D/3-D, by FFT), Toeplitz (by a circulant embedding),
Tridiag, LowRankUpdate (Woodbury and the determinant lemma), Householder and
Permutation, each overriding the base class's dense defaults where its
structure gives a faster or exact path.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import dtypes
from jaxtape._src.core.dispatch import op
from jaxtape._src.ops import (
    array_ops,
    creation_ops,
    linalg_more_ops,
    linalg_ops,
    math_ops,
    nondiff,
    signal_ops,
)
from jaxtape._src.ops.linear_operator import (
    LinearOperator,
    adjoint_matrix,
    as_tensor,
    broadcast_batch,
    check_dtype,
    shape_of,
    to_vec_batch,
)
from jaxtape._src.ops.linear_operator_basic import (
    LinearOperatorDiag,
    LinearOperatorIdentity,
)

# -- Circulant ---------------------------------------------------------------------
_COMPLEX_OF = {"float16": "complex64", "float32": "complex64", "float64": "complex128"}


@op("CirculantMatMul", inputs=("spectrum", "x"), jit=True)
def _circulant_apply(spectrum, x, depth, adjoint, adjoint_arg, divide, out_dtype):
    """`A @ x` (or `A^-1 @ x`) for the circulant with this spectrum: one
    compiled FFT, multiply (divide), inverse FFT."""
    wide = {np.dtype(np.float64), np.dtype(np.complex128)}
    cdt = np.complex128 if {spectrum.dtype, x.dtype} & wide else np.complex64
    if adjoint_arg:
        x = jnp.conj(jnp.swapaxes(x, -1, -2))
    spec = spectrum.astype(cdt)
    if adjoint:
        spec = jnp.conj(spec)
    block = spectrum.shape[-depth:]
    n, r = x.shape[-2], x.shape[-1]
    y = jnp.swapaxes(x.astype(cdt), -1, -2).reshape(x.shape[:-2] + (r,) + block)
    axes = tuple(range(-depth, 0))
    y = jnp.fft.fftn(y, axes=axes)
    spec = jnp.expand_dims(spec, -1 - depth)
    y = y / spec if divide else y * spec
    y = jnp.fft.ifftn(y, axes=axes)
    y = jnp.swapaxes(y.reshape(y.shape[: -depth - 1] + (r, n)), -1, -2)
    return (y if np.dtype(out_dtype).kind == "c" else jnp.real(y)).astype(out_dtype)


class _BaseCirculant(LinearOperator):
    """A (block-)circulant operator of depth 1, 2 or 3, given by its spectrum
    (the DFT of its convolution kernel): `matmul` is FFT, multiply, inverse
    FFT."""

    _block_depth = 1

    def __init__(
        self,
        spectrum,
        input_output_dtype=dtypes.complex64,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        name=None,
    ):
        parameters = dict(
            spectrum=spectrum,
            input_output_dtype=input_output_dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        spectrum = as_tensor(spectrum)
        check_dtype(spectrum, "spectrum")
        if len(spectrum.shape) < self._block_depth:
            raise ValueError(
                f"Argument spectrum must have at least {self._block_depth} "
                f"dimensions. Found: {spectrum}"
            )
        self._spectrum = spectrum
        name_of = np.dtype(spectrum.dtype.as_numpy_dtype).name
        self._complex = dtypes.as_dtype(_COMPLEX_OF.get(name_of) or name_of)
        if is_square is False:
            raise ValueError("A [[nested] block] circulant operator is always square.")
        super().__init__(
            input_output_dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
            parameters=parameters,
        )

    @property
    def spectrum(self):
        return self._spectrum

    @property
    def block_depth(self) -> int:
        return self._block_depth

    def block_shape_tensor(self):
        return creation_ops.constant(np.array(self.block_shape, np.int32))

    @property
    def block_shape(self):
        from jaxtape._src.core.tensor import TensorShape

        return TensorShape(shape_of(self._spectrum)[-self._block_depth :])

    def _spectrum_complex(self):
        s = self._spectrum
        return s if s.dtype.is_complex else math_ops.cast(s, self._complex)

    def _shape(self):
        s = shape_of(self._spectrum)
        n = int(np.prod(s[-self._block_depth :]))
        return s[: -self._block_depth] + (n, n)

    def _fft(self, x, inverse=False):
        fns = {
            1: (signal_ops.fft, signal_ops.ifft),
            2: (signal_ops.fft2d, signal_ops.ifft2d),
            3: (signal_ops.fft3d, signal_ops.ifft3d),
        }[self._block_depth]
        return fns[1](x) if inverse else fns[0](x)

    def _out(self, y):
        return math_ops.cast(
            y if self.dtype.is_complex else math_ops.real(y), self.dtype
        )

    def _matmul(self, x, adjoint=False, adjoint_arg=False, divide=False) -> Any:
        return _circulant_apply(
            self._spectrum,
            x,
            self._block_depth,
            bool(adjoint),
            bool(adjoint_arg),
            divide,
            np.dtype(self.dtype.as_numpy_dtype),
        )

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg, divide=True)

    def _reduce_blocks(self, fn, x):
        return fn(x, axis=[-(i + 1) for i in range(self._block_depth)])

    def _determinant(self):
        det = self._reduce_blocks(math_ops.reduce_prod, self._spectrum_complex())
        return self._out(det)

    def _log_abs_determinant(self):
        mag = math_ops.log(math_ops.abs(self._spectrum_complex()))
        return math_ops.cast(self._reduce_blocks(math_ops.reduce_sum, mag), self.dtype)

    def _trace(self):
        return self._out(
            self._reduce_blocks(math_ops.reduce_sum, self._spectrum_complex())
        )

    def _diag_part(self):
        n = self.domain_dimension
        value = math_ops.divide(self._trace(), math_ops.cast(n, self.dtype))
        return math_ops.multiply(
            array_ops.expand_dims(value, -1), creation_ops.ones([n], dtype=self.dtype)
        )

    def _eigvals(self):
        s = shape_of(self._spectrum)
        flat = array_ops.reshape(
            self._spectrum_complex(),
            list(s[: -self._block_depth]) + [self.domain_dimension],
        )
        return self._out(flat)

    def convolution_kernel(self, name="convolution_kernel"):
        """The kernel whose circular convolution this operator is (the
        inverse DFT of the spectrum), in the operator's dtype."""
        return self._out(self._fft(self._spectrum_complex(), inverse=True))

    def _inverse_operator(self) -> LinearOperator:
        return type(self)(
            math_ops.reciprocal(self._spectrum),
            input_output_dtype=self.dtype,
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
        )

    def _adjoint_operator(self) -> LinearOperator:
        # As TF: the adjoint has the default `input_output_dtype` (complex64).
        s = self._spectrum
        return type(self)(
            math_ops.conj(s) if s.dtype.is_complex else s,
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
        )

    def _matmul_operator(self, right) -> LinearOperator | None:
        if type(right) is not type(self):
            return None
        # As TF: the product's `input_output_dtype` is the default (complex64).
        non_singular = True if self.is_non_singular and right.is_non_singular else None
        return type(self)(
            math_ops.multiply(self._spectrum, right.spectrum),
            is_non_singular=non_singular,
        )

    def _cholesky_operator(self) -> LinearOperator:
        # As TF: the Cholesky factor is not circulant; a dense one.
        return super()._cholesky_operator()


class LinearOperatorCirculant(_BaseCirculant):
    """A (batch of) circulant matrices given by their spectrum `[..., N]`
    (TF's `tf.linalg.LinearOperatorCirculant`); `input_output_dtype` is the
    operator's dtype (a real one keeps the real part, for a Hermitian
    spectrum). `matmul`, `solve` and `determinant` by FFT."""

    _block_depth = 1

    def __init__(
        self,
        spectrum,
        input_output_dtype=dtypes.complex64,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        name="LinearOperatorCirculant",
    ):
        super().__init__(
            spectrum,
            input_output_dtype,
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            is_square,
            name,
        )


class LinearOperatorCirculant2D(_BaseCirculant):
    """Block-circulant matrices with circulant blocks, from a spectrum
    `[..., N0, N1]` (TF's `tf.linalg.LinearOperatorCirculant2D`); 2-D FFTs."""

    _block_depth = 2

    def __init__(
        self,
        spectrum,
        input_output_dtype=dtypes.complex64,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        name="LinearOperatorCirculant2D",
    ):
        super().__init__(
            spectrum,
            input_output_dtype,
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            is_square,
            name,
        )


class LinearOperatorCirculant3D(_BaseCirculant):
    """Nested block-circulant matrices from a spectrum `[..., N0, N1, N2]`
    (TF's `tf.linalg.LinearOperatorCirculant3D`); 3-D FFTs."""

    _block_depth = 3

    def __init__(
        self,
        spectrum,
        input_output_dtype=dtypes.complex64,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        name="LinearOperatorCirculant3D",
    ):
        super().__init__(
            spectrum,
            input_output_dtype,
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            is_square,
            name,
        )


# -- Toeplitz ------------------------------------------------------------------------
@op("ToeplitzMatMul", inputs=("col", "row", "x"), same_dtype=True, jit=True)
def _toeplitz_apply(col, row, x, adjoint, adjoint_arg):
    """`T @ x` for the Toeplitz matrix `T` with first column `col` and first
    row `row`, by embedding `T` in a circulant of size 2N (one compiled FFT)."""
    if adjoint_arg:
        x = jnp.conj(jnp.swapaxes(x, -1, -2))
    if adjoint:  # the adjoint is Toeplitz too; col[0] stays the diagonal
        col, row = jnp.conj(jnp.concatenate([col[..., :1], row[..., 1:]], -1)), col
        row = jnp.conj(row)
    n = col.shape[-1]
    batch = jnp.broadcast_shapes(col.shape[:-1], row.shape[:-1])
    col = jnp.broadcast_to(col, batch + (n,))
    row = jnp.broadcast_to(row, batch + (n,))
    kernel = jnp.concatenate(
        [col, jnp.zeros(batch + (1,), col.dtype), row[..., 1:][..., ::-1]], -1
    )
    wide = {np.dtype(np.float64), np.dtype(np.complex128)}
    cdt = np.complex128 if np.dtype(col.dtype) in wide else np.complex64
    spectrum = jnp.fft.fft(kernel.astype(cdt))
    y = jnp.swapaxes(x.astype(cdt), -1, -2)  # [..., R, N]
    y = jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, n)])
    y = jnp.fft.ifft(jnp.fft.fft(y) * spectrum[..., None, :])[..., :n]
    y = jnp.swapaxes(y, -1, -2)
    return (y if np.dtype(col.dtype).kind == "c" else jnp.real(y)).astype(col.dtype)


class LinearOperatorToeplitz(LinearOperator):
    """A (batch of) Toeplitz matrices given by first column `col` and first
    row `row` (TF's `tf.linalg.LinearOperatorToeplitz`; `row[0]` is ignored,
    `col[0]` is the diagonal). `matmul` embeds it in a circulant of size 2N
    and uses FFTs."""

    def __init__(
        self,
        col,
        row,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorToeplitz",
    ):
        parameters = dict(
            col=col,
            row=row,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        self._col = as_tensor(col)
        self._row = as_tensor(row, dtype=self._col.dtype, name="row")
        check_dtype(self._col, "col")
        if shape_of(self._col)[-1:] != shape_of(self._row)[-1:]:
            raise ValueError(
                f"col and row must have the same last dimension; got "
                f"{list(self._col.shape)} and {list(self._row.shape)}."
            )
        super().__init__(
            self._col.dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
            parameters=parameters,
        )

    @property
    def col(self):
        return self._col

    @property
    def row(self):
        return self._row

    def _shape(self):
        batch = np.broadcast_shapes(shape_of(self._col)[:-1], shape_of(self._row)[:-1])
        n = shape_of(self._col)[-1]
        return batch + (n, n)

    def _vec(self):
        """`concat(reverse(row[1:]), col)`: entry `A[i, j]` is `v[N-1+i-j]`."""
        batch = self._shape()[:-2]
        col = to_vec_batch(self._col, batch)
        row = to_vec_batch(self._row, batch)
        return array_ops.concat(
            [array_ops.reverse(row[..., 1:], axis=[-1]), col], axis=-1
        )

    def _to_dense(self):
        n = self.domain_dimension
        idx = n - 1 + np.arange(n)[:, None] - np.arange(n)[None, :]
        return array_ops.gather(self._vec(), idx, axis=-1, batch_dims=0)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _toeplitz_apply(
            self._col, self._row, x, bool(adjoint), bool(adjoint_arg)
        )

    def _diag_part(self):
        n = self.domain_dimension
        d = to_vec_batch(self._col[..., :1], self._shape()[:-2])
        return math_ops.multiply(d, creation_ops.ones([n], dtype=self.dtype))


# -- Tridiag -------------------------------------------------------------------------
class LinearOperatorTridiag(LinearOperator):
    """A (batch of) square tridiagonal matrices given by their diagonals
    (TF's `tf.linalg.LinearOperatorTridiag`), in TF's 'compact' (`[..., 3,
    N]`), 'sequence' (a list of three `[..., N]`) or 'matrix' format; `matmul`
    and `solve` use `tridiagonal_matmul`/`tridiagonal_solve`."""

    def __init__(
        self,
        diagonals,
        diagonals_format="compact",
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorTridiag",
    ):
        parameters = dict(
            diagonals=diagonals,
            diagonals_format=diagonals_format,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        if diagonals_format not in ("compact", "sequence", "matrix"):
            raise ValueError(
                f"Diagonals Format must be one of compact, matrix, sequence, got : "
                f"{diagonals_format}"
            )
        if diagonals_format == "sequence":
            self._diagonals = [as_tensor(d) for d in diagonals]
            first = self._diagonals[0]
        else:
            self._diagonals = as_tensor(diagonals)
            first = self._diagonals
        check_dtype(first, "diagonals")
        self._format = diagonals_format
        if is_square is False:
            raise ValueError("A tridiagonal operator is always square.")
        super().__init__(
            first.dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
            parameters=parameters,
        )

    @property
    def diagonals(self):
        return self._diagonals

    @property
    def diagonals_format(self) -> str:
        return self._format

    def _shape(self):
        if self._format == "sequence":
            s = np.broadcast_shapes(*(shape_of(d) for d in self._diagonals))
            return s[:-1] + (s[-1], s[-1])
        s = shape_of(self._diagonals)
        if self._format == "compact":
            return s[:-2] + (s[-1], s[-1])
        return s

    def _parts(self, adjoint=False):
        sup, main, sub = linalg_more_ops._tridiagonal_parts(
            self._diagonals, self._format, "LinearOperatorTridiag"
        )
        if not adjoint:
            return sup, main, sub
        # the adjoint's superdiagonal is the conjugate subdiagonal, shifted
        zero = math_ops.multiply(main[..., :1], 0)
        new_sup = array_ops.concat([math_ops.conj(sub[..., 1:]), zero], axis=-1)
        new_sub = array_ops.concat([zero, math_ops.conj(sup[..., :-1])], axis=-1)
        return new_sup, math_ops.conj(main), new_sub

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_matrix(x) if adjoint_arg else x
        sup, main, sub = self._parts(adjoint)
        return linalg_more_ops._tridiagonal_matmul(sup, main, sub, x)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = adjoint_matrix(rhs) if adjoint_arg else rhs
        sup, main, sub = self._parts(adjoint)
        return linalg_more_ops._tridiagonal_solve(
            sup, main, sub, rhs, False, False, False
        )

    def _to_dense(self):
        sup, main, sub = self._parts()
        return math_ops.add(
            math_ops.add(array_ops.diag(main), _shifted_diag(sup[..., :-1], 1)),
            _shifted_diag(sub[..., 1:], -1),
        )

    def _diag_part(self):
        return self._parts()[1]

    def _trace(self):
        return math_ops.reduce_sum(self._parts()[1], axis=-1)


def _shifted_diag(values, k):
    """The square matrix with `values` on its `k`-th diagonal (k = +-1)."""
    n = shape_of(values)[-1] + 1
    d = array_ops.diag(values)  # [..., n-1, n-1]
    s = shape_of(d)
    pad = [[0, 0]] * (len(s) - 2) + ([[0, 1], [1, 0]] if k > 0 else [[1, 0], [0, 1]])
    out = array_ops.pad(d, pad)
    assert shape_of(out)[-1] == n  # noqa: S101 - internal invariant
    return out


# -- LowRankUpdate -------------------------------------------------------------------
class LinearOperatorLowRankUpdate(LinearOperator):
    """`A = L + U D V^H`: a base operator plus a low-rank update (TF's
    `tf.linalg.LinearOperatorLowRankUpdate`). `solve` by the Woodbury
    identity and `log_abs_determinant` by the matrix determinant lemma, both
    through the small `r x r` capacitance matrix `D^-1 + V^H L^-1 U`."""

    def __init__(
        self,
        base_operator,
        u,
        diag_update=None,
        v=None,
        is_diag_update_positive=None,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorLowRankUpdate",
    ):
        parameters = dict(
            base_operator=base_operator,
            u=u,
            diag_update=diag_update,
            v=v,
            is_diag_update_positive=is_diag_update_positive,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        dtype = base_operator.dtype
        self._u = as_tensor(u, dtype=dtype, name="u")
        self._v = self._u if v is None else as_tensor(v, dtype=dtype, name="v")
        self._use_v = v is not None
        self._diag_update = (
            None
            if diag_update is None
            else as_tensor(diag_update, dtype=dtype, name="diag_update")
        )
        if (
            v is None
            and base_operator.is_self_adjoint
            and (diag_update is None or not self._u.dtype.is_complex)
        ):
            if is_self_adjoint is False:
                raise ValueError(
                    "A = L + UDU^H, with L self-adjoint and D real diagonal. Since "
                    "UDU^H is self-adjoint, this must be a self-adjoint operator."
                )
            is_self_adjoint = True
        if (
            v is None
            and base_operator.is_positive_definite
            and (diag_update is None or is_diag_update_positive)
        ):
            if is_positive_definite is False:
                raise ValueError(
                    "A = L + UDU^H with L positive definite and D positive: A is "
                    "positive definite."
                )
            is_positive_definite = True
        self._base = base_operator
        self._is_diag_update_positive = is_diag_update_positive
        r = shape_of(self._u)[-1]
        self._diag_operator = (
            LinearOperatorIdentity(r, dtype=dtype)
            if self._diag_update is None
            else LinearOperatorDiag(
                self._diag_update,
                is_positive_definite=is_diag_update_positive,
                is_non_singular=True if is_diag_update_positive else None,
            )
        )
        super().__init__(
            dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
            parameters=parameters,
        )

    @property
    def base_operator(self):
        return self._base

    @property
    def u(self):
        return self._u

    @property
    def v(self):
        return self._v

    @property
    def diag_update(self):
        return self._diag_update

    @property
    def diag_operator(self):
        return self._diag_operator

    @property
    def is_diag_update_positive(self):
        return self._is_diag_update_positive

    def _shape(self):
        batch = np.broadcast_shapes(
            self._base._shape()[:-2],
            shape_of(self._u)[:-2],
            shape_of(self._v)[:-2],
            self._diag_operator._shape()[:-2],
        )
        return batch + self._base._shape()[-2:]

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_matrix(x) if adjoint_arg else x
        u, v = (self._v, self._u) if adjoint else (self._u, self._v)
        lx = self._base.matmul(x, adjoint=adjoint)
        vh_x = math_ops.matmul(v, x, adjoint_a=True)
        d_vh_x = self._diag_operator.matmul(vh_x, adjoint=adjoint)
        return math_ops.add(lx, math_ops.matmul(u, d_vh_x))

    def _capacitance(self, adjoint=False):
        """`D^-1 + V^H L^-1 U` (for the adjoint: `D^-H + U^H L^-H V`)."""
        u, v = (self._v, self._u) if adjoint else (self._u, self._v)
        linv_u = self._base.solve(u, adjoint=adjoint)
        vh_linv_u = math_ops.matmul(v, linv_u, adjoint_a=True)
        d_inv = self._diag_operator.inverse()
        if adjoint:
            d_inv = d_inv.adjoint()
        return d_inv.add_to_tensor(vh_linv_u)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = adjoint_matrix(rhs) if adjoint_arg else rhs
        u, v = (self._v, self._u) if adjoint else (self._u, self._v)
        linv_rhs = self._base.solve(rhs, adjoint=adjoint)
        vh_linv_rhs = math_ops.matmul(v, linv_rhs, adjoint_a=True)
        cap, vh_linv_rhs = broadcast_batch(self._capacitance(adjoint), vh_linv_rhs)
        c_inv = linalg_ops.solve(cap, vh_linv_rhs)
        correction = self._base.solve(math_ops.matmul(u, c_inv), adjoint=adjoint)
        return math_ops.subtract(linv_rhs, correction)

    def _log_abs_determinant(self):
        cap = self._capacitance()
        out = math_ops.add(self._base.log_abs_determinant(), linalg_ops.slogdet(cap)[1])
        out = math_ops.add(out, self._diag_operator.log_abs_determinant())
        return out

    def _determinant(self):
        cap = self._capacitance()
        return math_ops.multiply(
            math_ops.multiply(self._base.determinant(), linalg_ops.det(cap)),
            self._diag_operator.determinant(),
        )

    def _to_dense(self):
        ud = self._diag_operator.matmul(self._v, adjoint_arg=True)
        return math_ops.add(self._base.to_dense(), math_ops.matmul(self._u, ud))


# -- Householder ---------------------------------------------------------------------
@op("HouseholderMatMul", inputs=("axis", "x"), same_dtype=True, jit=True)
def _householder_apply(axis, x, adjoint_arg):
    """`x - 2 u (u^H x)` with `u` the unit reflection axis (one compiled op)."""
    if adjoint_arg:
        x = jnp.conj(jnp.swapaxes(x, -1, -2))
    norm = jnp.sqrt(jnp.sum(jnp.real(jnp.conj(axis) * axis), -1, keepdims=True))
    u = (axis / norm.astype(axis.dtype))[..., :, None]
    return x - 2 * (u @ (jnp.conj(jnp.swapaxes(u, -1, -2)) @ x))


class LinearOperatorHouseholder(LinearOperator):
    """The reflection `I - 2 v v^H / (v^H v)` across the hyperplane
    orthogonal to `reflection_axis` (TF's
    `tf.linalg.LinearOperatorHouseholder`): self-adjoint, its own inverse,
    determinant -1."""

    def __init__(
        self,
        reflection_axis,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorHouseholder",
    ):
        parameters = dict(
            reflection_axis=reflection_axis,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        self._axis = as_tensor(reflection_axis)
        check_dtype(self._axis, "reflection_axis")
        if len(self._axis.shape) < 1:
            raise ValueError(
                "Argument reflection_axis must have at least 1 dimension.  Found: "
                f"{self._axis}"
            )
        if is_self_adjoint is False:
            raise ValueError("A Householder operator is always self adjoint.")
        if is_positive_definite is True:
            raise ValueError("A Householder operator is always non-positive definite.")
        if is_square is False:
            raise ValueError("A Householder operator is always square.")
        super().__init__(
            self._axis.dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=True,
            is_positive_definite=False,
            is_square=True,
            name=name,
            parameters=parameters,
        )

    @property
    def reflection_axis(self):
        return self._axis

    def _shape(self):
        s = shape_of(self._axis)
        return s + s[-1:]

    def _unit(self):
        v = self._axis
        norm2 = math_ops.reduce_sum(
            math_ops.real(math_ops.multiply(math_ops.conj(v), v)),
            axis=-1,
            keepdims=True,
        )
        return math_ops.divide(v, math_ops.cast(math_ops.sqrt(norm2), self.dtype))

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _householder_apply(self._axis, x, bool(adjoint_arg))

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint_arg=adjoint_arg)

    def _to_dense(self):
        u = array_ops.expand_dims(self._unit(), -1)
        n = self.domain_dimension
        eye = creation_ops.eye(n, dtype=self.dtype)
        return math_ops.subtract(
            eye, math_ops.multiply(math_ops.matmul(u, u, adjoint_b=True), 2)
        )

    def _batch_fill(self, value):
        return math_ops.cast(
            array_ops.fill(list(self._shape()[:-2]), value), self.dtype
        )

    def _determinant(self):
        return self._batch_fill(-1.0)

    def _log_abs_determinant(self):
        return self._batch_fill(0.0)

    def _trace(self):
        return self._batch_fill(float(self.domain_dimension - 2))

    def _diag_part(self):
        u = self._unit()
        return math_ops.subtract(
            math_ops.cast(1.0, self.dtype),
            math_ops.multiply(math_ops.multiply(math_ops.conj(u), u), 2),
        )

    def _eigvals(self):
        n = self.domain_dimension
        ones = creation_ops.ones(list(self._shape()[:-2]) + [n - 1], dtype=self.dtype)
        minus = math_ops.negative(
            creation_ops.ones(list(self._shape()[:-2]) + [1], dtype=self.dtype)
        )
        return array_ops.concat([minus, ones], axis=-1)

    def _cond(self):
        return self._batch_fill(1.0)

    def _inverse_operator(self) -> LinearOperator:
        return self


# -- Permutation ---------------------------------------------------------------------
class LinearOperatorPermutation(LinearOperator):
    """The (batch of) permutation matrices with `P[i, perm[i]] = 1` (TF's
    `tf.linalg.LinearOperatorPermutation`): `matmul` gathers rows, `solve`
    scatters them back (a permutation's inverse is its transpose)."""

    def __init__(
        self,
        perm,
        dtype=dtypes.float32,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorPermutation",
    ):
        parameters = dict(
            perm=perm,
            dtype=dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        self._perm = as_tensor(perm)
        if not self._perm.dtype.is_integer:
            raise TypeError(
                f"Argument perm must have integer dtype. Found: {self._perm.dtype}"
            )
        if len(self._perm.shape) < 1:
            raise ValueError(
                f"Argument perm must have at least 1 dimension.  Found: {self._perm}"
            )
        if is_non_singular is False:
            raise ValueError(
                "A Permutation operator is always non-singular. Expected argument "
                f"`is_non_singular` to be True. Received: {is_non_singular}."
            )
        if is_square is False:
            raise ValueError(
                "A Permutation operator is always square. Expected argument "
                f"`is_square` to be True. Received: {is_square}."
            )
        super().__init__(
            dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
            parameters=parameters,
        )

    @property
    def perm(self):
        return self._perm

    def _shape(self):
        s = shape_of(self._perm)
        return s + s[-1:]

    def _to_dense(self):
        return array_ops.one_hot(self._perm, self.domain_dimension, dtype=self.dtype)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_matrix(x) if adjoint_arg else x
        return math_ops.matmul(self._to_dense(), x, adjoint_a=adjoint)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self):
        # the sign of the permutation: the determinant of its 0/1 matrix
        return linalg_ops.det(self._to_dense())

    def _log_abs_determinant(self):
        return creation_ops.zeros(list(self._shape()[:-2]), dtype=self.dtype)

    def _diag_part(self):
        n = self.domain_dimension
        hit = nondiff.equal(self._perm, math_ops.cast(np.arange(n), self._perm.dtype))
        return math_ops.cast(hit, self.dtype)

    def _trace(self):
        return math_ops.reduce_sum(self._diag_part(), axis=-1)

    def _cond(self):
        return creation_ops.ones(list(self._shape()[:-2]), dtype=self.dtype)
