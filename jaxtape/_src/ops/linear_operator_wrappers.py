"""The wrapper `LinearOperator` kinds: Adjoint, Inversion, Composition, and
the product of two operators (TF's simplifications, else a composition). Layer L1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxtape._src.ops import math_ops
from jaxtape._src.ops.linear_operator import (
    LinearOperator,
    adjoint_matrix,
    check_operators,
    combined_hint,
    merge_hint,
)
from jaxtape._src.ops.linear_operator_basic import (
    LinearOperatorDiag,
    LinearOperatorIdentity,
    LinearOperatorScaledIdentity,
)


def matmul_operators(left, right):
    """`left @ right` for operators: TF's simplifications, else a composition."""
    special = left._matmul_operator(right)
    if special is not None:
        return special
    if isinstance(left, LinearOperatorIdentity):
        return right
    if isinstance(right, LinearOperatorIdentity):
        return left
    if isinstance(left, LinearOperatorDiag) and isinstance(right, LinearOperatorDiag):
        return LinearOperatorDiag(
            math_ops.multiply(left.diag, right.diag),
            is_non_singular=combined_hint(
                [left.is_non_singular, right.is_non_singular]
            ),
            is_self_adjoint=combined_hint(
                [left.is_self_adjoint, right.is_self_adjoint]
            ),
            is_square=True,
        )
    if isinstance(left, LinearOperatorScaledIdentity) and isinstance(
        right, LinearOperatorScaledIdentity
    ):
        return LinearOperatorScaledIdentity(
            left.domain_dimension,
            math_ops.multiply(left.multiplier, right.multiplier),
            is_non_singular=combined_hint(
                [left.is_non_singular, right.is_non_singular]
            ),
            is_self_adjoint=combined_hint(
                [left.is_self_adjoint, right.is_self_adjoint]
            ),
        )
    square = (
        True
        if left.is_square and right.is_square
        else (False if left.is_square is False or right.is_square is False else None)
    )
    non_singular = (
        combined_hint([left.is_non_singular, right.is_non_singular]) if square else None
    )
    return LinearOperatorComposition(
        [left, right], is_non_singular=non_singular, is_square=square
    )


# -- wrappers: Adjoint, Inversion, Composition ---------------------------------------
class LinearOperatorAdjoint(LinearOperator):
    """The adjoint of another operator, without forming it (TF's
    `tf.linalg.LinearOperatorAdjoint`)."""

    def __init__(
        self,
        operator,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name=None,
    ):
        parameters = dict(
            operator=operator,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        self._operator = operator
        hints = {}
        for attr, given in (
            ("is_non_singular", is_non_singular),
            ("is_self_adjoint", is_self_adjoint),
            ("is_positive_definite", is_positive_definite),
            ("is_square", is_square),
        ):
            hints[attr] = merge_hint(
                attr,
                getattr(operator, attr),
                given,
                f"An operator is {attr[3:].replace('_', '-')} if and only if its "
                f"adjoint is. Found operator.{attr} = {getattr(operator, attr)} and "
                f"{attr} = {given}.",
            )
        super().__init__(
            operator.dtype,
            name=name or operator.name + "_adjoint",
            parameters=parameters,
            **hints,
        )

    @property
    def operator(self):
        return self._operator

    def _shape(self):
        s = self._operator._shape()
        return s[:-2] + (s[-1], s[-2])

    def _matmul(self, x, adjoint=False, adjoint_arg=False) -> Any:
        return self._operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _matvec(self, x, adjoint=False) -> Any:
        return self._operator.matvec(x, adjoint=not adjoint)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False) -> Any:
        return self._operator.solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _solvevec(self, rhs, adjoint=False) -> Any:
        return self._operator.solvevec(rhs, adjoint=not adjoint)

    def _determinant(self) -> Any:
        if self.is_self_adjoint:
            return self._operator.determinant()
        return math_ops.conj(self._operator.determinant())

    def _log_abs_determinant(self) -> Any:
        return self._operator.log_abs_determinant()

    def _trace(self) -> Any:
        if self.is_self_adjoint:
            return self._operator.trace()
        return math_ops.conj(self._operator.trace())

    def _to_dense(self) -> Any:
        if self.is_self_adjoint:
            return self._operator.to_dense()
        return adjoint_matrix(self._operator.to_dense())

    def _diag_part(self) -> Any:
        return math_ops.conj(self._operator.diag_part())

    def _eigvals(self) -> Any:
        return math_ops.conj(self._operator.eigvals())

    def _adjoint_operator(self) -> LinearOperator:
        return self._operator

    def _cholesky_operator(self) -> LinearOperator:
        return self._operator.cholesky()


class LinearOperatorInversion(LinearOperator):
    """The inverse of a square non-singular operator, without forming it
    (TF's `tf.linalg.LinearOperatorInversion`): `matmul` solves."""

    def __init__(
        self,
        operator,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name=None,
    ):
        parameters = dict(
            operator=operator,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        self._operator = operator
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError(
                "operator and supplied hints must be non-singular. Found: "
                f"operator.is_non_singular = {operator.is_non_singular}, "
                f"is_non_singular = {is_non_singular}."
            )
        if operator.is_square is False or is_square is False:
            raise ValueError(
                "operator and supplied hints must be square. Found: "
                f"operator.is_square = {operator.is_square}, is_square = {is_square}."
            )
        hints = {}
        for attr, given in (
            ("is_non_singular", is_non_singular),
            ("is_self_adjoint", is_self_adjoint),
            ("is_positive_definite", is_positive_definite),
            ("is_square", is_square),
        ):
            hints[attr] = merge_hint(
                attr,
                getattr(operator, attr),
                given,
                f"An operator is {attr[3:].replace('_', '-')} if and only if its "
                f"inverse is. Found operator.{attr} = {getattr(operator, attr)} and "
                f"{attr} = {given}.",
            )
        super().__init__(
            operator.dtype,
            name=name or operator.name + "_inv",
            parameters=parameters,
            **hints,
        )

    @property
    def operator(self):
        return self._operator

    def _shape(self):
        return self._operator._shape()

    def _matmul(self, x, adjoint=False, adjoint_arg=False) -> Any:
        return self._operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _matvec(self, x, adjoint=False) -> Any:
        return self._operator.solvevec(x, adjoint=adjoint)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False) -> Any:
        return self._operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solvevec(self, rhs, adjoint=False) -> Any:
        return self._operator.matvec(rhs, adjoint=adjoint)

    def _determinant(self) -> Any:
        return math_ops.reciprocal(self._operator.determinant())

    def _log_abs_determinant(self) -> Any:
        return math_ops.negative(self._operator.log_abs_determinant())

    def _eigvals(self) -> Any:
        return math_ops.reciprocal(self._operator.eigvals())

    def _inverse_operator(self) -> LinearOperator:
        return self._operator


class LinearOperatorComposition(LinearOperator):
    """The product `A1 @ A2 @ ... @ An` of operators, applied one by one
    (TF's `tf.linalg.LinearOperatorComposition`)."""

    def __init__(
        self,
        operators,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name=None,
    ):
        parameters = dict(
            operators=operators,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        operators = list(operators)
        check_operators(operators, "composition")
        for left, right in zip(operators[:-1], operators[1:]):
            if left.domain_dimension != right.range_dimension:
                raise ValueError(
                    f"Operators are incompatible: {left.name} has domain dimension "
                    f"{left.domain_dimension} but {right.name} has range dimension "
                    f"{right.range_dimension}."
                )
        self._operators = operators
        if all(o.is_non_singular for o in operators):
            if is_non_singular is False:
                raise ValueError(
                    "The composition of non-singular operators is always non-singular."
                )
            is_non_singular = True
        super().__init__(
            operators[0].dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name or "_o_".join(o.name for o in operators),
            parameters=parameters,
        )

    @property
    def operators(self) -> list:
        return list(self._operators)

    def _shape(self):
        batch = np.broadcast_shapes(*(o._shape()[:-2] for o in self._operators))
        return batch + (
            self._operators[0].range_dimension,
            self._operators[-1].domain_dimension,
        )

    def _matmul(self, x, adjoint=False, adjoint_arg=False) -> Any:
        order = self._operators if adjoint else self._operators[::-1]
        out = order[0].matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for o in order[1:]:
            out = o.matmul(out, adjoint=adjoint)
        return out

    def _solve(self, rhs, adjoint=False, adjoint_arg=False) -> Any:
        order = self._operators[::-1] if adjoint else self._operators
        out = order[0].solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for o in order[1:]:
            out = o.solve(out, adjoint=adjoint)
        return out

    def _determinant(self) -> Any:
        out = self._operators[0].determinant()
        for o in self._operators[1:]:
            out = math_ops.multiply(out, o.determinant())
        return out

    def _log_abs_determinant(self) -> Any:
        out = self._operators[0].log_abs_determinant()
        for o in self._operators[1:]:
            out = math_ops.add(out, o.log_abs_determinant())
        return out

    def _to_dense(self) -> Any:
        out = self._operators[-1].to_dense()
        for o in self._operators[-2::-1]:
            out = o.matmul(out)
        return out
