"""`LinearOperator` (TF's `tf.linalg.LinearOperator`): the base class. Layer L1.

One base class holds TF's public API with default dense implementations
(`to_dense` and then a dense op); a subclass overrides only the private
methods it has structure for (`_matmul`, `_solve`, `_determinant`, ...), as
in TF. All arithmetic goes through jaxtape's public ops, so it records on a
`GradientTape` and runs inside `jaxtape.function`. Parameters that are
Variables are kept as Variables and read on each use, as TF's
`convert_nonref_to_tensor` keeps them, so their gradients flow.

The kinds: `linear_operator_basic` (FullMatrix, Diag, Identity,
ScaledIdentity, Zeros, LowerTriangular), `linear_operator_wrappers`
(Adjoint, Inversion, Composition), `linear_operator_block` (Kronecker,
BlockDiag, BlockLowerTriangular) and `linear_operator_structured`
(Circulant, Toeplitz, Tridiag, LowRankUpdate, Householder, Permutation).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxtape._src.core import context, dtypes
from jaxtape._src.core.tensor import Tensor, TensorShape
from jaxtape._src.ops import array_ops, creation_ops, linalg_ops, math_ops, misc_ops

_FLOAT_OR_COMPLEX = ("float16", "float32", "float64", "complex64", "complex128")


# -- helpers -----------------------------------------------------------------------
def is_ref(x) -> bool:
    var = context.hooks.variable_type
    return type(x) is Tensor or (var is not None and isinstance(x, var))


def as_tensor(x, dtype=None, name=None):
    """A Tensor for `x`; a Tensor or Variable is kept as it is (TF's
    `convert_nonref_to_tensor`), so a Variable is read at each use."""
    if is_ref(x):
        if dtype is not None and x.dtype != dtypes.as_dtype(dtype):
            raise TypeError(
                f"Expected {name or 'argument'} to have dtype {dtypes.as_dtype(dtype)}"
                f". Found: {x.dtype}."
            )
        return x
    return creation_ops.convert_to_tensor(x, dtype=dtype)


def _np_name(dtype) -> str:
    return np.dtype(dtypes.as_dtype(dtype).as_numpy_dtype).name


def check_dtype(x, arg_name, allowed=_FLOAT_OR_COMPLEX):
    """TF's dtype check of an operator's parameter: `TypeError`."""
    if _np_name(x.dtype) not in allowed:
        raise TypeError(
            f"Argument {arg_name} must have dtype in {list(allowed)}. Found: {x.dtype}"
        )


def shape_of(x) -> tuple:
    return tuple(int(d) for d in x.shape)


def broadcast_batch(*tensors):
    """The matrices in `tensors` with their batch shapes broadcast to one."""
    batch = np.broadcast_shapes(*(shape_of(t)[:-2] for t in tensors))
    out = []
    for t in tensors:
        s = shape_of(t)
        out.append(t if s[:-2] == batch else array_ops.broadcast_to(t, batch + s[-2:]))
    return out


def adjoint_matrix(x):
    return linalg_ops.adjoint(x)


def _bool_hint(operator, attr) -> bool | None:
    return getattr(operator, attr)


def combined_hint(hints) -> bool | None:
    return True if all(h for h in hints) else None


def merge_hint(name, inherited, given, message):
    """A wrapper's hint: the wrapped operator's, unless the user's contradicts."""
    if inherited is not None and given is not None and inherited != given:
        raise ValueError(message)
    return inherited if inherited is not None else given


# -- the base class ----------------------------------------------------------------
class LinearOperator:
    """Base class of linear operators (TF's `tf.linalg.LinearOperator`).

    An operator acts like a (batch of) matrices of shape `batch_shape + [M,
    N]` without necessarily storing one. Subclasses implement `_shape` and
    `_matmul` (or `_to_dense`); everything else has a dense default.

    >>> op = jaxtape.linalg.LinearOperatorDiag([1.0, 2.0])
    >>> op.matvec([1.0, 1.0]).numpy()
    array([1., 2.], dtype=float32)

    Differences from TensorFlow:
      Not a `CompositeTensor`: pass the tensors that define an operator into
      a `jaxtape.function`, not the operator. No batch slicing (`op[0]`).
      Not a `tf.Module` (`variables`/`trainable_variables` are provided).
    """

    def __init__(
        self,
        dtype,
        graph_parents=None,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name=None,
        parameters=None,
    ):
        if is_positive_definite:
            if is_non_singular is False:
                raise ValueError("A positive definite matrix is always non-singular.")
            is_non_singular = True
        if is_non_singular:
            if is_square is False:
                raise ValueError("A non-singular matrix is always square.")
            is_square = True
        if is_self_adjoint:
            if is_square is False:
                raise ValueError("A self-adjoint matrix is always square.")
            is_square = True
        self._dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self._graph_parents = list(graph_parents or [])
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._is_square_set_or_implied_by_hints = is_square
        self._name = name or type(self).__name__
        self._parameters = dict(parameters or {})

    # -- properties ----------------------------------------------------------
    @property
    def dtype(self) -> Any:
        """The dtype of the matrices this operator acts like."""
        return self._dtype

    @property
    def name(self) -> str:
        return self._name

    @property
    def parameters(self) -> dict:
        """The constructor's arguments (TF's `parameters`)."""
        return dict(self._parameters)

    @property
    def graph_parents(self) -> list:
        """Deprecated in TF; the `graph_parents` given to the constructor."""
        return self._graph_parents

    @property
    def is_non_singular(self):
        return self._is_non_singular

    @property
    def is_self_adjoint(self):
        return self._is_self_adjoint

    @property
    def is_positive_definite(self):
        return self._is_positive_definite

    @property
    def is_square(self):
        """Whether the operator is square: the hint, or else from its shape."""
        auto = self.domain_dimension == self.range_dimension
        hint = self._is_square_set_or_implied_by_hints
        if hint is False and auto:
            raise ValueError(
                "User set is_square hint to False, but the operator was square."
            )
        return auto if hint is None else hint

    def _shape(self) -> tuple:
        raise NotImplementedError(f"{type(self).__name__} does not define _shape.")

    @property
    def shape(self) -> TensorShape:
        """`batch_shape + [range_dimension, domain_dimension]`."""
        return TensorShape(self._shape())

    def shape_tensor(self, name="shape_tensor"):
        return creation_ops.constant(np.array(self._shape(), np.int32))

    @property
    def batch_shape(self) -> TensorShape:
        return TensorShape(self._shape()[:-2])

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        return creation_ops.constant(np.array(self._shape()[:-2], np.int32))

    @property
    def tensor_rank(self) -> int:
        return len(self._shape())

    def tensor_rank_tensor(self, name="tensor_rank_tensor"):
        return creation_ops.constant(np.int32(self.tensor_rank))

    @property
    def domain_dimension(self) -> int:
        return self._shape()[-1]

    def domain_dimension_tensor(self, name="domain_dimension_tensor"):
        return creation_ops.constant(np.int32(self.domain_dimension))

    @property
    def range_dimension(self) -> int:
        return self._shape()[-2]

    def range_dimension_tensor(self, name="range_dimension_tensor"):
        return creation_ops.constant(np.int32(self.range_dimension))

    # -- variables (TF's tf.Module API) --------------------------------------
    @property
    def variables(self) -> tuple:
        """The Variables this operator (and the operators in it) hold."""
        return tuple(_collect_variables(self, lambda v: True))

    @property
    def trainable_variables(self) -> tuple:
        return tuple(_collect_variables(self, lambda v: v.trainable))

    @property
    def non_trainable_variables(self) -> tuple:
        return tuple(_collect_variables(self, lambda v: not v.trainable))

    @property
    def submodules(self) -> tuple:
        """The operators inside this one (a wrapper's, a composition's)."""
        out: list = []
        for value in _attributes(self):
            if isinstance(value, LinearOperator):
                out.append(value)
                out.extend(value.submodules)
        return tuple(out)

    # -- checks --------------------------------------------------------------
    def _check_input_dtype(self, arg) -> Any:
        if arg.dtype != self.dtype:
            raise TypeError(
                f"Expected argument to have dtype {self.dtype}. Found: {arg.dtype} "
                f"in tensor {arg}"
            )

    def _convert_arg(self, x) -> Any:
        x = as_tensor(x)
        self._check_input_dtype(x)
        return x

    def _check_dim(self, self_dim: int, x, x_dim: int) -> Any:
        mine = self._shape()[self_dim]
        shape = shape_of(x)
        if len(shape) < -x_dim:
            raise ValueError(
                f"Argument of {self.name} must have rank >= {-x_dim}; got shape "
                f"{list(shape)}."
            )
        if mine != shape[x_dim]:
            raise ValueError(f"Dimensions {mine} and {shape[x_dim]} are not compatible")

    def _can_use_cholesky(self) -> bool:
        return bool(self.is_self_adjoint and self.is_positive_definite)

    def _check_square(self, what) -> Any:
        if self.is_square is False:
            raise NotImplementedError(
                f"{what} not implemented for an operator that is expected to not "
                "be square."
            )

    def _check_solvable(self) -> Any:
        if self.is_non_singular is False:
            raise NotImplementedError(
                "Exact solve not implemented for an operator that is expected to "
                "be singular."
            )
        if self.is_square is False:
            raise NotImplementedError(
                "Exact solve not implemented for an operator that is expected to "
                "not be square."
            )

    def assert_non_singular(self, name="assert_non_singular"):
        """Raises `InvalidArgumentError` when the operator is singular (up to
        its dtype's precision); TF's assert op, run eagerly."""
        return self._assert_non_singular()

    def _assert_non_singular(self) -> Any:
        if self._can_use_cholesky():
            return self.assert_positive_definite()
        s = linalg_ops.svd(self.to_dense(), compute_uv=False)
        cond = math_ops.reduce_max(s, axis=-1) / math_ops.reduce_min(s, axis=-1)
        eps = np.finfo(_np_name(self.dtype)).eps
        limit = 1.0 / (max(100.0, self.range_dimension, self.domain_dimension) * eps)
        return misc_ops.assert_less(
            cond, limit, message="Singular matrix up to precision epsilon."
        )

    def assert_positive_definite(self, name="assert_positive_definite"):
        """Raises `InvalidArgumentError` unless the operator's Cholesky factor
        has a positive diagonal."""
        return self._assert_positive_definite()

    def _assert_positive_definite(self) -> Any:
        chol = linalg_ops.cholesky(self.to_dense())
        return misc_ops.assert_positive(
            math_ops.real(linalg_ops.diag_part(chol)),
            message="Matrix was not positive definite.",
        )

    def assert_self_adjoint(self, name="assert_self_adjoint"):
        """Raises `InvalidArgumentError` unless the operator equals its adjoint."""
        return self._assert_self_adjoint()

    def _assert_self_adjoint(self) -> Any:
        dense = self.to_dense()
        return misc_ops.assert_equal(
            dense, adjoint_matrix(dense), message="Matrix was not equal to its adjoint."
        )

    # -- matmul / solve ------------------------------------------------------
    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        """`self @ x` (`adjoint`: `self^H @ x`; `adjoint_arg`: `@ x^H`).

        `x` is a (batch of) matrices, its batch shape broadcast with the
        operator's; a `LinearOperator` `x` gives an operator (a composition,
        or a simpler kind where TF has one: Diag @ Diag is a Diag).
        """
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            if right.range_dimension != left.domain_dimension:
                raise ValueError(
                    f"Operators are incompatible. Expected `x` to have dimension "
                    f"{left.domain_dimension} but got {right.range_dimension}."
                )
            return _wrappers().matmul_operators(left, right)
        x = self._convert_arg(x)
        self._check_dim(-2 if adjoint else -1, x, -1 if adjoint_arg else -2)
        return self._matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _matmul(self, x, adjoint=False, adjoint_arg=False) -> Any:
        return math_ops.matmul(
            self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg
        )

    def __matmul__(self, other) -> Any:
        return self.matmul(other)

    def matvec(self, x, adjoint=False, name="matvec"):
        """`self @ x` for a (batch of) vectors `x`."""
        x = self._convert_arg(x)
        self._check_dim(-2 if adjoint else -1, x, -1)
        return self._matvec(x, adjoint=adjoint)

    def _matvec(self, x, adjoint=False) -> Any:
        out = self._matmul(array_ops.expand_dims(x, -1), adjoint=adjoint)
        return array_ops.squeeze(out, -1)

    def solve(self, rhs, adjoint=False, adjoint_arg=False, name="solve"):
        """`x` with `self @ x = rhs` (`adjoint`: `self^H @ x = rhs`)."""
        self._check_solvable()
        if isinstance(rhs, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = rhs.adjoint() if adjoint_arg else rhs
            if right.range_dimension != left.range_dimension:
                raise ValueError(
                    f"Operators are incompatible. Expected `rhs` to have dimension "
                    f"{left.range_dimension} but got {right.range_dimension}."
                )
            return _wrappers().matmul_operators(left.inverse(), right)
        rhs = self._convert_arg(rhs)
        self._check_dim(-1 if adjoint else -2, rhs, -1 if adjoint_arg else -2)
        return self._solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False) -> Any:
        if adjoint_arg:
            rhs = adjoint_matrix(rhs)
        if self._can_use_cholesky():
            chol, rhs = broadcast_batch(linalg_ops.cholesky(self.to_dense()), rhs)
            return linalg_ops.cholesky_solve(chol, rhs)
        dense, rhs = broadcast_batch(self.to_dense(), rhs)
        return linalg_ops.solve(dense, rhs, adjoint=adjoint)

    def solvevec(self, rhs, adjoint=False, name="solve"):
        """`x` with `self @ x = rhs` for a (batch of) vectors `rhs`."""
        self._check_solvable()
        rhs = self._convert_arg(rhs)
        self._check_dim(-1 if adjoint else -2, rhs, -1)
        return self._solvevec(rhs, adjoint=adjoint)

    def _solvevec(self, rhs, adjoint=False) -> Any:
        out = self._solve(array_ops.expand_dims(rhs, -1), adjoint=adjoint)
        return array_ops.squeeze(out, -1)

    # -- reductions ----------------------------------------------------------
    def to_dense(self, name="to_dense"):
        """The dense (batch) matrix this operator acts like."""
        return self._to_dense()

    def _to_dense(self) -> Any:
        n = self.domain_dimension
        eye = creation_ops.eye(n, batch_shape=list(self.batch_shape), dtype=self.dtype)
        return self.matmul(eye)

    def determinant(self, name="det"):
        """The determinant of each matrix (square operators only)."""
        self._check_square("Determinant")
        return self._determinant()

    def _determinant(self) -> Any:
        if self._can_use_cholesky():
            return math_ops.exp(self.log_abs_determinant())
        return linalg_ops.det(self.to_dense())

    def log_abs_determinant(self, name="log_abs_det"):
        """`log|det|` of each matrix (square operators only)."""
        self._check_square("Determinant")
        return self._log_abs_determinant()

    def _log_abs_determinant(self) -> Any:
        if self._can_use_cholesky():
            diag = linalg_ops.diag_part(linalg_ops.cholesky(self.to_dense()))
            return 2.0 * math_ops.reduce_sum(math_ops.log(diag), axis=-1)
        return linalg_ops.slogdet(self.to_dense())[1]

    def diag_part(self, name="diag_part"):
        """The main diagonal of each matrix, `batch_shape + [min(M, N)]`."""
        return self._diag_part()

    def _diag_part(self) -> Any:
        return linalg_ops.diag_part(self.to_dense())

    def trace(self, name="trace"):
        """The sum of the diagonal of each matrix."""
        return self._trace()

    def _trace(self) -> Any:
        return math_ops.reduce_sum(self.diag_part(), axis=-1)

    def add_to_tensor(self, x, name="add_to_tensor"):
        """`self.to_dense() + x` (often without forming the dense matrix)."""
        x = self._convert_arg(x)
        return self._add_to_tensor(x)

    def _add_to_tensor(self, x) -> Any:
        return math_ops.add(self.to_dense(), x)

    def eigvals(self, name="eigvals"):
        """The eigenvalues of a self-adjoint operator (TF supports only those)."""
        if not self.is_self_adjoint:
            raise NotImplementedError("Only self-adjoint matrices are supported.")
        return self._eigvals()

    def _eigvals(self) -> Any:
        return linalg_ops.eigvalsh(self.to_dense())

    def cond(self, name="cond"):
        """The condition number: max over min singular value (|eigenvalue|
        for a self-adjoint operator)."""
        return self._cond()

    def _cond(self) -> Any:
        if not self.is_self_adjoint:
            vals = linalg_ops.svd(self.to_dense(), compute_uv=False)
        else:
            vals = math_ops.abs(self._eigvals())
        return math_ops.divide(
            math_ops.reduce_max(vals, axis=-1), math_ops.reduce_min(vals, axis=-1)
        )

    # -- derived operators ---------------------------------------------------
    def inverse(self, name="inverse"):
        """The inverse operator (square, non-singular operators)."""
        if self.is_square is False:
            raise ValueError(
                "Cannot take the Inverse: This operator represents a non square matrix."
            )
        if self.is_non_singular is False:
            raise ValueError(
                "Cannot take the Inverse: This operator represents a singular matrix."
            )
        return self._inverse_operator()

    def _inverse_operator(self) -> LinearOperator:
        return _wrappers().LinearOperatorInversion(
            self,
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=self.is_square,
        )

    def adjoint(self, name="adjoint"):
        """The adjoint (conjugate transpose) operator; `self` when self-adjoint."""
        if self.is_self_adjoint is True:
            return self
        return self._adjoint_operator()

    def _adjoint_operator(self) -> LinearOperator:
        return _wrappers().LinearOperatorAdjoint(
            self,
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=self.is_square,
        )

    H = property(adjoint, None, None, "The adjoint operator (`self.adjoint()`).")

    def cholesky(self, name="cholesky"):
        """The lower-triangular Cholesky factor, as an operator
        (self-adjoint positive-definite operators only)."""
        if not self._can_use_cholesky():
            raise ValueError(
                "Cannot take the Cholesky decomposition: Not a positive definite "
                "self adjoint matrix."
            )
        return self._cholesky_operator()

    def _matmul_operator(self, right) -> LinearOperator | None:
        """`self @ right` as a simpler operator, where the kinds allow (or None)."""
        del right
        return None

    def _cholesky_operator(self) -> LinearOperator:
        from jaxtape._src.ops.linear_operator_basic import (
            LinearOperatorLowerTriangular,
        )

        return LinearOperatorLowerTriangular(
            linalg_ops.cholesky(self.to_dense()),
            is_non_singular=True,
            is_self_adjoint=False,
            is_square=True,
        )


def _attributes(obj):
    for value in vars(obj).values():
        if isinstance(value, (list, tuple)):
            for v in value:
                yield from (v if isinstance(v, (list, tuple)) else [v])
        else:
            yield value


def _collect_variables(operator, keep) -> list:
    var = context.hooks.variable_type
    out: list = []
    for value in _attributes(operator):
        if var is not None and isinstance(value, var):
            if keep(value) and all(value is not o for o in out):
                out.append(value)
        elif isinstance(value, LinearOperator):
            for v in _collect_variables(value, keep):
                if all(v is not o for o in out):
                    out.append(v)
    return out


def _wrappers():
    """The wrapper kinds (imported late: they subclass this module's class)."""
    from jaxtape._src.ops import linear_operator_wrappers

    return linear_operator_wrappers


def check_operators(operators: list[Any], what: str) -> None:
    """TF's checks of an operator list: non-empty, one dtype."""
    if not operators:
        raise ValueError(f"Expected a non-empty list of operators. Found: {operators}")
    if any(not isinstance(o, LinearOperator) for o in operators):
        raise TypeError(
            f"Expected a list of LinearOperators for the {what}. Found: {operators}"
        )
    dts = [o.dtype for o in operators]
    if any(d != dts[0] for d in dts):
        raise TypeError(
            "Expected all operators to have the same dtype.  Found "
            + "   ".join(f"{o.name}: {o.dtype}" for o in operators)
        )


def all_hint(operators, attr, given, message):
    """TF's rule: a hint every operator has holds for the combination."""
    if all(getattr(o, attr) for o in operators):
        if given is False:
            raise ValueError(message)
        return True
    return given


def batch_of(operators) -> tuple:
    return np.broadcast_shapes(*(o._shape()[:-2] for o in operators))


def to_batch(x, batch):
    s = shape_of(x)
    full = np.broadcast_shapes(s[: len(s) - 2], batch) + s[-2:]
    return x if full == s else array_ops.broadcast_to(x, full)


def to_vec_batch(x, batch):
    s = shape_of(x)
    full = np.broadcast_shapes(s[:-1], batch) + s[-1:]
    return x if full == s else array_ops.broadcast_to(x, full)
