"""`jaxtape.linalg.LinearOperator` and its basic kinds (FullMatrix, Diag,
Identity, ScaledIdentity, Zeros, LowerTriangular, Adjoint, Inversion,
Composition) against TF's: every method, gradients, `jaxtape.function`,
Variables, and TF's errors for bad construction. The table is in
`linear_operator_cases.py`; the block and structured kinds are checked in
`test_linear_operator_structured.py`.
"""

from __future__ import annotations

import numpy as np
import pytest
from linear_operator_cases import (
    BASIC,
    check_every_method,
    check_gradients,
    check_inside_function,
)

import jaxtape


@pytest.mark.parametrize("case", BASIC)
def test_every_method_matches_tensorflow(case, tf):
    check_every_method(tf, case)


@pytest.mark.parametrize("case", ["full", "diag", "lower_triangular"])
def test_gradients_match_tensorflow(case, tf):
    check_gradients(tf, case)


@pytest.mark.parametrize("case", ["full", "diag"])
def test_methods_inside_function_match_eager(case):
    check_inside_function(case)


def test_variables_are_read_at_each_use_and_collected():
    d = jaxtape.Variable([1.0, 2.0, 3.0])
    op = jaxtape.linalg.LinearOperatorDiag(d)
    assert op.trainable_variables == (d,)
    with jaxtape.GradientTape() as tape:
        loss = op.log_abs_determinant()
    np.testing.assert_allclose(tape.gradient(loss, d).numpy(), [1.0, 0.5, 1 / 3])
    d.assign([2.0, 2.0, 2.0])
    np.testing.assert_allclose(op.determinant().numpy(), 8.0)


@pytest.mark.parametrize(
    "build",
    [
        lambda m: m.linalg.LinearOperatorIdentity(2, is_self_adjoint=False),
        lambda m: m.linalg.LinearOperatorDiag([1.0, 2.0], is_self_adjoint=False),
        lambda m: m.linalg.LinearOperatorDiag(1.0),
        lambda m: m.linalg.LinearOperatorFullMatrix([1.0, 2.0]),
        lambda m: m.linalg.LinearOperatorFullMatrix([[1, 2], [3, 4]]),
        lambda m: m.linalg.LinearOperatorFullMatrix(
            [[1.0, 2.0]], is_positive_definite=True, is_non_singular=False
        ),
        lambda m: m.linalg.LinearOperatorZeros(2, 3),
        lambda m: m.linalg.LinearOperatorComposition([]),
        lambda m: m.linalg.LinearOperatorHouseholder([1.0, 2.0], is_self_adjoint=False),
        lambda m: m.linalg.LinearOperatorZeros(2, is_non_singular=True),
        lambda m: m.linalg.LinearOperatorIdentity(-1),
        lambda m: m.linalg.LinearOperatorTridiag([[1.0]], diagonals_format="bad"),
    ],
    ids=[
        "identity_not_self_adjoint",
        "real_diag_not_self_adjoint",
        "diag_scalar",
        "full_matrix_vector",
        "full_matrix_int",
        "pd_but_singular",
        "zeros_rect_self_adjoint",
        "empty_composition",
        "householder_not_self_adjoint",
        "zeros_non_singular",
        "negative_rows",
        "tridiag_bad_format",
    ],
)
def test_bad_construction_raises_like_tensorflow(build, tf):
    from parity_checks import assert_raises_like_tf

    def run(m):
        op = build(m)
        return op.is_square  # (TF checks a wrong square hint lazily)

    assert_raises_like_tf(tf, run)
