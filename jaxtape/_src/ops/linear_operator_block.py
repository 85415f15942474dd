"""The block `LinearOperator` kinds: Kronecker, BlockDiag, BlockLowerTriangular
(TF's `tf.linalg.LinearOperator*`), applied block by block (factor by factor),
their determinants, inverses and Cholesky factors from the blocks'. Layer L1.
"""

from __future__ import annotations

import numpy as np

from jaxtape._src.ops import array_ops, creation_ops, math_ops
from jaxtape._src.ops.linear_operator import (
    LinearOperator,
    adjoint_matrix,
    all_hint,
    batch_of,
    broadcast_batch,
    check_operators,
    shape_of,
    to_batch,
    to_vec_batch,
)


# -- Kronecker ---------------------------------------------------------------------
class LinearOperatorKronecker(LinearOperator):
    """The Kronecker product `A1 ⊗ A2 ⊗ ... ⊗ An` of operators (TF's
    `tf.linalg.LinearOperatorKronecker`), applied factor by factor; its
    determinant, inverse, Cholesky factor and eigenvalues come from the
    factors'."""

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
        check_operators(operators, "Kronecker product")
        self._operators = operators
        is_non_singular = all_hint(
            operators,
            "is_non_singular",
            is_non_singular,
            "The Kronecker product of non-singular operators is always non-singular.",
        )
        is_self_adjoint = all_hint(
            operators,
            "is_self_adjoint",
            is_self_adjoint,
            "The Kronecker product of self-adjoint operators is always self-adjoint.",
        )
        is_positive_definite = all_hint(
            operators,
            "is_positive_definite",
            is_positive_definite,
            "The Kronecker product of positive-definite operators is always "
            "positive-definite.",
        )
        super().__init__(
            operators[0].dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name or "_x_".join(o.name for o in operators),
            parameters=parameters,
        )

    @property
    def operators(self) -> list:
        return list(self._operators)

    def _shape(self):
        rows = int(np.prod([o.range_dimension for o in self._operators]))
        cols = int(np.prod([o.domain_dimension for o in self._operators]))
        return batch_of(self._operators) + (rows, cols)

    def _apply(self, x, step, in_dims, out_dims):
        """`step(operator_i, x_i)` applied along each factor's axis of `x`."""
        batch = np.broadcast_shapes(self._shape()[:-2], shape_of(x)[:-2])
        x = to_batch(x, batch)
        r = shape_of(x)[-1]
        k, nb = len(self._operators), len(batch)
        dims = list(in_dims)
        y = array_ops.reshape(x, list(batch) + dims + [r])
        for i, o in enumerate(self._operators):
            # factor i's axis to the rows, every other axis into the columns
            others = [nb + j for j in range(k) if j != i] + [nb + k]
            perm = list(range(nb)) + [nb + i] + others
            y = array_ops.transpose(y, perm)
            rest = [shape_of(y)[nb + 1 + j] for j in range(k)]
            y = step(o, array_ops.reshape(y, list(batch) + [dims[i], -1]))
            dims[i] = out_dims[i]
            y = array_ops.reshape(y, list(batch) + [dims[i]] + rest)
            y = array_ops.transpose(y, [int(a) for a in np.argsort(perm)])
        return array_ops.reshape(y, list(batch) + [int(np.prod(dims)), r])

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_matrix(x) if adjoint_arg else x
        ins = [
            o.range_dimension if adjoint else o.domain_dimension
            for o in self._operators
        ]
        outs = [
            o.domain_dimension if adjoint else o.range_dimension
            for o in self._operators
        ]
        return self._apply(x, lambda o, y: o.matmul(y, adjoint=adjoint), ins, outs)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = adjoint_matrix(rhs) if adjoint_arg else rhs
        dims = [o.domain_dimension for o in self._operators]
        return self._apply(rhs, lambda o, y: o.solve(y, adjoint=adjoint), dims, dims)

    def _to_dense(self):
        out = self._operators[0].to_dense()
        for o in self._operators[1:]:
            b = o.to_dense()
            out, b = broadcast_batch(out, b)
            s, t = shape_of(out), shape_of(b)
            prod = math_ops.multiply(
                array_ops.reshape(out, list(s[:-2]) + [s[-2], 1, s[-1], 1]),
                array_ops.reshape(b, list(t[:-2]) + [1, t[-2], 1, t[-1]]),
            )
            out = array_ops.reshape(prod, list(s[:-2]) + [s[-2] * t[-2], s[-1] * t[-1]])
        return out

    def _kron_vectors(self, parts):
        out = parts[0]
        for v in parts[1:]:
            out = math_ops.multiply(
                array_ops.expand_dims(out, -1), array_ops.expand_dims(v, -2)
            )
            s = shape_of(out)
            out = array_ops.reshape(out, list(s[:-2]) + [s[-2] * s[-1]])
        return out

    def _determinant(self):
        total = self.domain_dimension
        out = None
        for o in self._operators:
            term = math_ops.pow(o.determinant(), total // o.domain_dimension)
            out = term if out is None else math_ops.multiply(out, term)
        return out

    def _log_abs_determinant(self):
        total = self.domain_dimension
        out = None
        for o in self._operators:
            term = math_ops.multiply(
                o.log_abs_determinant(), float(total // o.domain_dimension)
            )
            out = term if out is None else math_ops.add(out, term)
        return out

    def _diag_part(self):
        return self._kron_vectors([o.diag_part() for o in self._operators])

    def _trace(self):
        out = None
        for o in self._operators:
            out = o.trace() if out is None else math_ops.multiply(out, o.trace())
        return out

    def _eigvals(self):
        return self._kron_vectors([o.eigvals() for o in self._operators])

    def _derived(self, operators, **hints):
        return LinearOperatorKronecker(operators, **hints)

    def _inverse_operator(self) -> LinearOperator:
        return self._derived(
            [o.inverse() for o in self._operators],
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=True,
        )

    def _adjoint_operator(self) -> LinearOperator:
        return self._derived(
            [o.adjoint() for o in self._operators],
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=self.is_square,
        )

    def _cholesky_operator(self) -> LinearOperator:
        return self._derived(
            [o.cholesky() for o in self._operators],
            is_non_singular=True,
            is_self_adjoint=None,
            is_square=True,
        )


# -- BlockDiag -----------------------------------------------------------------------
def _split_rows(x, sizes):
    return array_ops.split(x, list(sizes), axis=-2)


class LinearOperatorBlockDiag(LinearOperator):
    """The block-diagonal operator with the given operators as blocks (TF's
    `tf.linalg.LinearOperatorBlockDiag`): each block acts on its own rows."""

    def __init__(
        self,
        operators,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
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
        check_operators(operators, "block-diagonal operator")
        self._operators = operators
        is_non_singular = all_hint(
            operators,
            "is_non_singular",
            is_non_singular,
            "The direct sum of non-singular operators is always non-singular.",
        )
        is_self_adjoint = all_hint(
            operators,
            "is_self_adjoint",
            is_self_adjoint,
            "The direct sum of self-adjoint operators is always self-adjoint.",
        )
        is_positive_definite = all_hint(
            operators,
            "is_positive_definite",
            is_positive_definite,
            "The direct sum of positive definite operators is always positive "
            "definite.",
        )
        if not (is_square and all(o.is_square for o in operators)):
            is_square = None if is_square else is_square
        super().__init__(
            operators[0].dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name or "_ds_".join(o.name for o in operators),
            parameters=parameters,
        )

    @property
    def operators(self) -> list:
        return list(self._operators)

    def _shape(self):
        return batch_of(self._operators) + (
            sum(o.range_dimension for o in self._operators),
            sum(o.domain_dimension for o in self._operators),
        )

    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        """`self @ x`, block by block (`x` a Tensor or an operator)."""
        _refuse_block_list(x, "matmul")
        return super().matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def solve(self, rhs, adjoint=False, adjoint_arg=False, name="solve"):
        """`x` with `self @ x = rhs`, block by block."""
        _refuse_block_list(rhs, "solve")
        return super().solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _blockwise(self, x, sizes, step):
        batch = np.broadcast_shapes(self._shape()[:-2], shape_of(x)[:-2])
        parts = [
            to_batch(step(o, p), batch)
            for o, p in zip(self._operators, _split_rows(x, sizes))
        ]
        return array_ops.concat(parts, axis=-2)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_matrix(x) if adjoint_arg else x
        sizes = [
            o.range_dimension if adjoint else o.domain_dimension
            for o in self._operators
        ]
        return self._blockwise(x, sizes, lambda o, p: o.matmul(p, adjoint=adjoint))

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = adjoint_matrix(rhs) if adjoint_arg else rhs
        sizes = [
            o.domain_dimension if adjoint else o.range_dimension
            for o in self._operators
        ]
        return self._blockwise(rhs, sizes, lambda o, p: o.solve(p, adjoint=adjoint))

    def _to_dense(self):
        batch = self._shape()[:-2]
        cols = [o.domain_dimension for o in self._operators]
        rows = []
        for i, o in enumerate(self._operators):
            pieces = []
            for j, n in enumerate(cols):
                if i == j:
                    pieces.append(to_batch(o.to_dense(), batch))
                else:
                    pieces.append(
                        creation_ops.zeros(
                            list(batch) + [o.range_dimension, n], dtype=self.dtype
                        )
                    )
            rows.append(array_ops.concat(pieces, axis=-1))
        return array_ops.concat(rows, axis=-2)

    def _reduce(self, method, combine):
        out = None
        for o in self._operators:
            v = getattr(o, method)()
            out = v if out is None else combine(out, v)
        return out

    def _determinant(self):
        return self._reduce("determinant", math_ops.multiply)

    def _log_abs_determinant(self):
        return self._reduce("log_abs_determinant", math_ops.add)

    def _trace(self):
        return self._reduce("trace", math_ops.add)

    def _concat_vectors(self, method):
        batch = self._shape()[:-2]
        parts = [to_vec_batch(getattr(o, method)(), batch) for o in self._operators]
        return array_ops.concat(parts, axis=-1)

    def _diag_part(self):
        if not all(o.is_square for o in self._operators):
            return super()._diag_part()
        return self._concat_vectors("diag_part")

    def _eigvals(self):
        return self._concat_vectors("eigvals")

    def _derived(self, operators, **hints):
        return LinearOperatorBlockDiag(operators, **hints)

    def _inverse_operator(self) -> LinearOperator:
        return self._derived(
            [o.inverse() for o in self._operators],
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=True,
        )

    def _adjoint_operator(self) -> LinearOperator:
        return self._derived(
            [o.adjoint() for o in self._operators],
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=True,
        )

    def _cholesky_operator(self) -> LinearOperator:
        return self._derived(
            [o.cholesky() for o in self._operators],
            is_non_singular=True,
            is_square=True,
        )


def _refuse_block_list(x, method):
    if isinstance(x, (list, tuple)) and x and not isinstance(x[0], (int, float)):
        if any(np.ndim(b) >= 2 or hasattr(b, "shape") for b in x):
            raise NotImplementedError(
                f"LinearOperatorBlockDiag.{method} with a list of blocks is not "
                "supported in jaxtape; concatenate the blocks along the rows "
                "(`jaxtape.concat(blocks, axis=-2)`) and pass one tensor."
            )


# -- BlockLowerTriangular --------------------------------------------------------------
class LinearOperatorBlockLowerTriangular(LinearOperator):
    """A block lower-triangular operator (TF's
    `tf.linalg.LinearOperatorBlockLowerTriangular`): `operators[i]` lists
    the `i + 1` blocks of block row `i`, the last one square (on the
    diagonal); `solve` is block forward/back substitution."""

    def __init__(
        self,
        operators,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorBlockLowerTriangular",
    ):
        parameters = dict(
            operators=operators,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        rows = [list(r) for r in operators]
        if not rows:
            raise ValueError(f"Expected a non-empty list of operators. Found: {rows}")
        for i, row in enumerate(rows):
            if len(row) != i + 1:
                raise ValueError(
                    f"Argument `operators[{i}]` must contain `{i + 1}` blocks. "
                    f"Found: {len(row)} blocks."
                )
        flat = [o for row in rows for o in row]
        check_operators(flat, "block lower-triangular operator")
        diagonal = [row[-1] for row in rows]
        for i, row in enumerate(rows):
            for j, o in enumerate(row):
                if o.range_dimension != diagonal[i].range_dimension or (
                    o.domain_dimension != diagonal[j].domain_dimension
                ):
                    raise ValueError(
                        f"Block [{i}][{j}] has shape {o.shape}: its rows must match "
                        f"the diagonal block [{i}][{i}] and its columns block "
                        f"[{j}][{j}]."
                    )
        self._rows = rows
        self._diagonal = diagonal
        if all(o.is_non_singular for o in diagonal):
            if is_non_singular is False:
                raise ValueError(
                    "A blockwise lower-triangular operator with non-singular "
                    "operators on the main diagonal is always non-singular."
                )
            is_non_singular = True
        if is_square is False:
            raise ValueError(
                "Argument `is_square` must be `True` or `None`: a blockwise "
                "lower-triangular operator is always square."
            )
        super().__init__(
            flat[0].dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
            parameters=parameters,
        )

    @property
    def operators(self) -> list:
        return [list(r) for r in self._rows]

    def _shape(self):
        flat = [o for row in self._rows for o in row]
        n = sum(o.domain_dimension for o in self._diagonal)
        return batch_of(flat) + (n, n)

    def _sizes(self):
        return [o.domain_dimension for o in self._diagonal]

    def _batch_for(self, x):
        return np.broadcast_shapes(self._shape()[:-2], shape_of(x)[:-2])

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = adjoint_matrix(x) if adjoint_arg else x
        batch = self._batch_for(x)
        parts = _split_rows(x, self._sizes())
        k = len(self._rows)
        out = []
        for i in range(k):
            if adjoint:  # column i of the blocks, adjointed
                terms = [
                    self._rows[r][i].matmul(parts[r], adjoint=True) for r in range(i, k)
                ]
            else:
                terms = [self._rows[i][j].matmul(parts[j]) for j in range(i + 1)]
            out.append(
                to_batch(math_ops.add_n([to_batch(t, batch) for t in terms]), batch)
            )
        return array_ops.concat(out, axis=-2)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = adjoint_matrix(rhs) if adjoint_arg else rhs
        batch = self._batch_for(rhs)
        parts = [to_batch(p, batch) for p in _split_rows(rhs, self._sizes())]
        k = len(self._rows)
        sol: list = [None] * k
        order = range(k - 1, -1, -1) if adjoint else range(k)
        for i in order:
            b = parts[i]
            if adjoint:
                others = [
                    self._rows[r][i].matmul(sol[r], adjoint=True)
                    for r in range(i + 1, k)
                ]
            else:
                others = [self._rows[i][j].matmul(sol[j]) for j in range(i)]
            for t in others:
                b = math_ops.subtract(b, to_batch(t, batch))
            sol[i] = to_batch(self._diagonal[i].solve(b, adjoint=adjoint), batch)
        return array_ops.concat(sol, axis=-2)

    def _to_dense(self):
        batch = self._shape()[:-2]
        sizes = self._sizes()
        rows = []
        for i, row in enumerate(self._rows):
            pieces = [to_batch(o.to_dense(), batch) for o in row]
            pieces += [
                creation_ops.zeros(list(batch) + [sizes[i], n], dtype=self.dtype)
                for n in sizes[i + 1 :]
            ]
            rows.append(array_ops.concat(pieces, axis=-1))
        return array_ops.concat(rows, axis=-2)

    def _determinant(self):
        out = self._diagonal[0].determinant()
        for o in self._diagonal[1:]:
            out = math_ops.multiply(out, o.determinant())
        return out

    def _log_abs_determinant(self):
        out = self._diagonal[0].log_abs_determinant()
        for o in self._diagonal[1:]:
            out = math_ops.add(out, o.log_abs_determinant())
        return out

    def _diag_part(self):
        batch = self._shape()[:-2]
        return array_ops.concat(
            [to_vec_batch(o.diag_part(), batch) for o in self._diagonal], axis=-1
        )
