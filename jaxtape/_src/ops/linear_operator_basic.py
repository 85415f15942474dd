"""The simple `LinearOperator` kinds: FullMatrix, Diag, Identity,
ScaledIdentity, Zeros, LowerTriangular (TF's `tf.linalg.LinearOperator*`). Layer L1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxtape._src.core import dtypes
from jaxtape._src.ops import array_ops, creation_ops, linalg_ops, math_ops, misc_ops
from jaxtape._src.ops.linear_operator import (
    LinearOperator,
    adjoint_matrix,
    as_tensor,
    broadcast_batch,
    check_dtype,
    is_ref,
    shape_of,
)


# -- FullMatrix ----------------------------------------------------------------------
class LinearOperatorFullMatrix(LinearOperator):
    """An operator that wraps a (batch of) dense matrices (TF's
    `tf.linalg.LinearOperatorFullMatrix`)."""

    def __init__(
        self,
        matrix,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorFullMatrix",
    ):
        parameters = dict(
            matrix=matrix,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        self._matrix = as_tensor(matrix)
        check_dtype(self._matrix, "matrix")
        if len(self._matrix.shape) < 2:
            raise ValueError(
                "Argument matrix must have at least 2 dimensions. Found: "
                f"{self._matrix}"
            )
        super().__init__(
            self._matrix.dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
            parameters=parameters,
        )

    def _shape(self):
        return shape_of(self._matrix)

    def _matmul(self, x, adjoint=False, adjoint_arg=False) -> Any:
        return math_ops.matmul(
            self._matrix, x, adjoint_a=adjoint, adjoint_b=adjoint_arg
        )

    def _to_dense(self) -> Any:
        return math_ops.identity(self._matrix)


# -- Diag ----------------------------------------------------------------------------
class LinearOperatorDiag(LinearOperator):
    """A (batch of) diagonal matrices given by their diagonals (TF's
    `tf.linalg.LinearOperatorDiag`): `matmul`/`solve` scale rows,
    `determinant` is a product."""

    def __init__(
        self,
        diag,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorDiag",
    ):
        parameters = dict(
            diag=diag,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        self._diag = as_tensor(diag)
        check_dtype(self._diag, "diag")
        if len(self._diag.shape) < 1:
            raise ValueError(
                f"Argument diag must have at least 1 dimension.  Found: {self._diag}"
            )
        if not self._diag.dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError("A real diagonal operator is always self adjoint.")
            is_self_adjoint = True
        if is_square is False:
            raise ValueError("Only square diagonal operators currently supported.")
        super().__init__(
            self._diag.dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
            parameters=parameters,
        )

    @property
    def diag(self):
        return self._diag

    def _shape(self):
        s = shape_of(self._diag)
        return s + s[-1:]

    def _diag_term(self, adjoint) -> Any:
        return math_ops.conj(self._diag) if adjoint else self._diag

    def _matmul(self, x, adjoint=False, adjoint_arg=False) -> Any:
        x = adjoint_matrix(x) if adjoint_arg else x
        return math_ops.multiply(array_ops.expand_dims(self._diag_term(adjoint), -1), x)

    def _matvec(self, x, adjoint=False) -> Any:
        return math_ops.multiply(self._diag_term(adjoint), x)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False) -> Any:
        rhs = adjoint_matrix(rhs) if adjoint_arg else rhs
        return math_ops.divide(rhs, array_ops.expand_dims(self._diag_term(adjoint), -1))

    def _solvevec(self, rhs, adjoint=False) -> Any:
        return math_ops.divide(rhs, self._diag_term(adjoint))

    def _determinant(self) -> Any:
        return math_ops.reduce_prod(self._diag, axis=-1)

    def _log_abs_determinant(self) -> Any:
        out = math_ops.reduce_sum(math_ops.log(math_ops.abs(self._diag)), axis=-1)
        return math_ops.cast(out, self.dtype) if self.dtype.is_complex else out

    def _to_dense(self) -> Any:
        return array_ops.diag(self._diag)

    def _diag_part(self) -> Any:
        return math_ops.identity(self._diag)

    def _add_to_tensor(self, x) -> Any:
        return linalg_ops.set_diag(x, math_ops.add(linalg_ops.diag_part(x), self._diag))

    def _eigvals(self) -> Any:
        return math_ops.identity(self._diag)

    def _cond(self) -> Any:
        a = math_ops.abs(self._diag)
        return math_ops.divide(
            math_ops.reduce_max(a, axis=-1), math_ops.reduce_min(a, axis=-1)
        )

    def _assert_non_singular(self) -> Any:
        return misc_ops.assert_none_equal(
            math_ops.abs(self._diag),
            0,
            message="Singular operator:  Diagonal contained zero values.",
        )

    def _assert_positive_definite(self) -> Any:
        return misc_ops.assert_positive(
            math_ops.real(self._diag),
            message="LinearOperator was not positive definite.",
        )

    def _inverse_operator(self) -> LinearOperator:
        return LinearOperatorDiag(
            math_ops.reciprocal(self._diag),
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=True,
        )

    def _adjoint_operator(self) -> LinearOperator:
        return LinearOperatorDiag(
            math_ops.conj(self._diag),
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=True,
        )

    def _cholesky_operator(self) -> LinearOperator:
        return LinearOperatorDiag(
            math_ops.sqrt(self._diag),
            is_non_singular=True,
            is_self_adjoint=True,
            is_positive_definite=True,
            is_square=True,
        )


# -- Identity, ScaledIdentity, Zeros -------------------------------------------------
def _check_num_rows(num_rows, arg_name="num_rows") -> int:
    n = int(np.asarray(num_rows.numpy() if is_ref(num_rows) else num_rows))
    if np.ndim(num_rows.numpy() if is_ref(num_rows) else num_rows) != 0:
        raise ValueError(f"Argument {arg_name} must be a 0-D Tensor.")
    if n < 0:
        raise ValueError(f"Argument {arg_name} must be non-negative.  Found: {n}")
    return n


def _check_batch_shape(batch_shape) -> tuple:
    if batch_shape is None:
        return ()
    value = np.asarray(batch_shape.numpy() if is_ref(batch_shape) else batch_shape)
    if value.ndim != 1:
        raise ValueError("Argument batch_shape must be a 1-D Tensor.")
    if np.any(value < 0):
        raise ValueError(
            f"Argument batch_shape must be non-negative.  Found: {value.tolist()}"
        )
    return tuple(int(d) for d in value)


def _with_batch(x, batch: tuple):
    """`x` broadcast to at least the operator's batch shape (TF's
    `_possibly_broadcast_batch_shape`)."""
    if not batch:
        return x
    s = shape_of(x)
    full = np.broadcast_shapes(s[:-2], batch) + s[-2:]
    return x if full == s else array_ops.broadcast_to(x, full)


class LinearOperatorIdentity(LinearOperator):
    """The (batch of) identity matrices of size `num_rows` (TF's
    `tf.linalg.LinearOperatorIdentity`): nothing stored, `matmul` returns
    its argument."""

    def __init__(
        self,
        num_rows,
        batch_shape=None,
        dtype=None,
        is_non_singular=True,
        is_self_adjoint=True,
        is_positive_definite=True,
        is_square=True,
        assert_proper_shapes=False,
        name="LinearOperatorIdentity",
    ):
        parameters = dict(
            num_rows=num_rows,
            batch_shape=batch_shape,
            dtype=dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            assert_proper_shapes=assert_proper_shapes,
            name=name,
        )
        if not is_self_adjoint:
            raise ValueError("An identity operator is always self adjoint.")
        if not is_non_singular:
            raise ValueError("An identity operator is always non-singular.")
        if not is_positive_definite:
            raise ValueError("An identity operator is always positive-definite.")
        if not is_square:
            raise ValueError("An identity operator is always square.")
        self._num_rows = _check_num_rows(num_rows)
        self._batch = _check_batch_shape(batch_shape)
        self._assert_proper_shapes = assert_proper_shapes  # static shapes: checked
        super().__init__(
            dtype or dtypes.float32,
            is_non_singular=True,
            is_self_adjoint=True,
            is_positive_definite=True,
            is_square=True,
            name=name,
            parameters=parameters,
        )

    def _shape(self):
        return self._batch + (self._num_rows, self._num_rows)

    def _ones(self, shape) -> Any:
        return creation_ops.ones(list(shape), dtype=self.dtype)

    def _matmul(self, x, adjoint=False, adjoint_arg=False) -> Any:
        x = adjoint_matrix(x) if adjoint_arg else math_ops.identity(x)
        return _with_batch(x, self._batch)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False) -> Any:
        return self._matmul(rhs, adjoint_arg=adjoint_arg)

    def _to_dense(self) -> Any:
        return creation_ops.eye(
            self._num_rows, batch_shape=list(self._batch), dtype=self.dtype
        )

    def _determinant(self) -> Any:
        return self._ones(self._batch)

    def _log_abs_determinant(self) -> Any:
        return creation_ops.zeros(list(self._batch), dtype=self.dtype)

    def _diag_part(self) -> Any:
        return self._ones(self._batch + (self._num_rows,))

    def _trace(self) -> Any:
        return math_ops.multiply(self._ones(self._batch), float(self._num_rows))

    def _add_to_tensor(self, x) -> Any:
        return linalg_ops.set_diag(x, math_ops.add(linalg_ops.diag_part(x), 1))

    def _eigvals(self) -> Any:
        return self._diag_part()

    def _cond(self) -> Any:
        return self._ones(self._batch)

    def _assert_non_singular(self) -> Any:
        return None

    def _assert_positive_definite(self) -> Any:
        return None

    def _assert_self_adjoint(self) -> Any:
        return None

    def _inverse_operator(self) -> LinearOperator:
        return self

    def _cholesky_operator(self) -> LinearOperator:
        return self


class LinearOperatorScaledIdentity(LinearOperator):
    """`multiplier * I` for a (batch of) scalars `multiplier` (TF's
    `tf.linalg.LinearOperatorScaledIdentity`)."""

    def __init__(
        self,
        num_rows,
        multiplier,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        assert_proper_shapes=False,
        name="LinearOperatorScaledIdentity",
    ):
        parameters = dict(
            num_rows=num_rows,
            multiplier=multiplier,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            assert_proper_shapes=assert_proper_shapes,
            name=name,
        )
        self._multiplier = as_tensor(multiplier)
        if not self._multiplier.dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError("A real diagonal operator is always self adjoint.")
            is_self_adjoint = True
        if not is_square:
            raise ValueError("A ScaledIdentity operator is always square.")
        self._num_rows = _check_num_rows(num_rows)
        self._assert_proper_shapes = assert_proper_shapes  # static shapes: checked
        super().__init__(
            self._multiplier.dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
            parameters=parameters,
        )

    @property
    def multiplier(self):
        return self._multiplier

    def _shape(self):
        return shape_of(self._multiplier) + (self._num_rows, self._num_rows)

    def _m(self, adjoint=False, dims=0) -> Any:
        m = math_ops.conj(self._multiplier) if adjoint else self._multiplier
        for _ in range(dims):
            m = array_ops.expand_dims(m, -1)
        return m

    def _matmul(self, x, adjoint=False, adjoint_arg=False) -> Any:
        x = adjoint_matrix(x) if adjoint_arg else x
        return math_ops.multiply(x, self._m(adjoint, 2))

    def _solve(self, rhs, adjoint=False, adjoint_arg=False) -> Any:
        rhs = adjoint_matrix(rhs) if adjoint_arg else rhs
        return math_ops.divide(rhs, self._m(adjoint, 2))

    def _to_dense(self) -> Any:
        eye = creation_ops.eye(self._num_rows, dtype=self.dtype)
        return math_ops.multiply(self._m(dims=2), eye)

    def _determinant(self) -> Any:
        return math_ops.pow(self._multiplier, self._num_rows)

    def _log_abs_determinant(self) -> Any:
        out = math_ops.multiply(
            float(self._num_rows), math_ops.log(math_ops.abs(self._multiplier))
        )
        return math_ops.cast(out, self.dtype) if self.dtype.is_complex else out

    def _diag_part(self) -> Any:
        ones = creation_ops.ones([self._num_rows], dtype=self.dtype)
        return math_ops.multiply(self._m(dims=1), ones)

    def _trace(self) -> Any:
        return math_ops.multiply(self._multiplier, self._num_rows)

    def _add_to_tensor(self, x) -> Any:
        return linalg_ops.set_diag(
            x, math_ops.add(linalg_ops.diag_part(x), self._m(dims=1))
        )

    def _eigvals(self) -> Any:
        return self._diag_part()

    def _cond(self) -> Any:
        return creation_ops.ones(list(shape_of(self._multiplier)), dtype=self.dtype)

    def _scaled(self, multiplier, **hints) -> Any:
        return LinearOperatorScaledIdentity(self._num_rows, multiplier, **hints)

    def _inverse_operator(self) -> LinearOperator:
        return self._scaled(
            math_ops.reciprocal(self._multiplier),
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
        )

    def _adjoint_operator(self) -> LinearOperator:
        return self._scaled(
            math_ops.conj(self._multiplier),
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
        )

    def _cholesky_operator(self) -> LinearOperator:
        return self._scaled(
            math_ops.sqrt(self._multiplier),
            is_non_singular=True,
            is_self_adjoint=True,
            is_positive_definite=True,
        )


class LinearOperatorZeros(LinearOperator):
    """The (batch of) all-zero `num_rows x num_columns` matrices (TF's
    `tf.linalg.LinearOperatorZeros`)."""

    def __init__(
        self,
        num_rows,
        num_columns=None,
        batch_shape=None,
        dtype=None,
        is_non_singular=False,
        is_self_adjoint=True,
        is_positive_definite=False,
        is_square=True,
        assert_proper_shapes=False,
        name="LinearOperatorZeros",
    ):
        parameters = dict(
            num_rows=num_rows,
            num_columns=num_columns,
            batch_shape=batch_shape,
            dtype=dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            assert_proper_shapes=assert_proper_shapes,
            name=name,
        )
        if is_non_singular:
            raise ValueError("A Zeros operator is always singular.")
        if is_positive_definite:
            raise ValueError("A Zeros operator is always not positive-definite.")
        self._num_rows = _check_num_rows(num_rows)
        self._num_columns = (
            self._num_rows
            if num_columns is None
            else _check_num_rows(num_columns, "num_columns")
        )
        if is_square and self._num_rows != self._num_columns:
            raise ValueError(
                "LinearOperatorZeros initialized as is_square=True, but got "
                f"num_rows({self._num_rows}) != num_columns({self._num_columns})"
            )
        self._batch = _check_batch_shape(batch_shape)
        self._assert_proper_shapes = assert_proper_shapes  # static shapes: checked
        super().__init__(
            dtype or dtypes.float32,
            is_non_singular=False,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=False,
            is_square=is_square,
            name=name,
            parameters=parameters,
        )

    def _shape(self):
        return self._batch + (self._num_rows, self._num_columns)

    def _zeros(self, shape) -> Any:
        return creation_ops.zeros(list(shape), dtype=self.dtype)

    def _matmul(self, x, adjoint=False, adjoint_arg=False) -> Any:
        s = shape_of(x)
        cols = s[-2] if adjoint_arg else s[-1]
        rows = self._num_columns if adjoint else self._num_rows
        batch = np.broadcast_shapes(s[:-2], self._batch)
        return self._zeros(batch + (rows, cols))

    def _to_dense(self) -> Any:
        return self._zeros(self._shape())

    def _determinant(self) -> Any:
        return self._zeros(self._batch)

    def _log_abs_determinant(self) -> Any:
        return math_ops.log(math_ops.abs(self._determinant()))

    def _diag_part(self) -> Any:
        return self._zeros(self._batch + (min(self._num_rows, self._num_columns),))

    def _trace(self) -> Any:
        return self._zeros(self._batch)

    def _add_to_tensor(self, x) -> Any:
        return math_ops.identity(x)

    def _eigvals(self) -> Any:
        return self._diag_part()

    def _assert_non_singular(self) -> Any:
        raise _singular_error("A Zeros operator is always singular.")

    def _matmul_operator(self, right) -> LinearOperator | None:
        if not self.is_square or not right.is_square:
            raise ValueError(
                "Matmul with non-square `LinearOperator`s or non-square "
                "`LinearOperatorZeros` not supported at this time."
            )
        return self


def _singular_error(message):
    from jaxtape._src.core import errors

    return errors.invalid_argument(message, "assert_non_singular")


# -- LowerTriangular ---------------------------------------------------------------
class LinearOperatorLowerTriangular(LinearOperator):
    """The lower triangle of a (batch of) square matrices (TF's
    `tf.linalg.LinearOperatorLowerTriangular`); the upper triangle of `tril`
    is ignored, `solve` is a triangular solve."""

    def __init__(
        self,
        tril,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorLowerTriangular",
    ):
        parameters = dict(
            tril=tril,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        if is_square is False:
            raise ValueError(
                "Only square lower triangular operators supported at this time."
            )
        self._tril_param = as_tensor(tril)
        check_dtype(self._tril_param, "tril")
        if len(self._tril_param.shape) < 2:
            raise ValueError(
                "Argument tril must have at least 2 dimensions.  Found: "
                f"{self._tril_param}"
            )
        super().__init__(
            self._tril_param.dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
            parameters=parameters,
        )

    def _shape(self):
        return shape_of(self._tril_param)

    def _get_tril(self) -> Any:
        return linalg_ops.band_part(self._tril_param, -1, 0)

    def _diag(self) -> Any:
        return linalg_ops.diag_part(self._tril_param)

    def _matmul(self, x, adjoint=False, adjoint_arg=False) -> Any:
        return math_ops.matmul(
            self._get_tril(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg
        )

    def _solve(self, rhs, adjoint=False, adjoint_arg=False) -> Any:
        rhs = adjoint_matrix(rhs) if adjoint_arg else rhs
        tril, rhs = broadcast_batch(self._get_tril(), rhs)
        return linalg_ops.triangular_solve(tril, rhs, lower=True, adjoint=adjoint)

    def _determinant(self) -> Any:
        return math_ops.reduce_prod(self._diag(), axis=-1)

    def _log_abs_determinant(self) -> Any:
        out = math_ops.reduce_sum(math_ops.log(math_ops.abs(self._diag())), axis=-1)
        return math_ops.cast(out, self.dtype) if self.dtype.is_complex else out

    def _to_dense(self) -> Any:
        return self._get_tril()

    def _diag_part(self) -> Any:
        return self._diag()

    def _eigvals(self) -> Any:
        return self._diag()

    def _assert_non_singular(self) -> Any:
        return misc_ops.assert_none_equal(
            math_ops.abs(self._diag()),
            0,
            message="Singular operator:  Diagonal contained zero values.",
        )
