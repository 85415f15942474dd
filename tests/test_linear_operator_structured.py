"""The block and structured `LinearOperator` kinds (Kronecker, BlockDiag,
BlockLowerTriangular, Circulant/2D/3D, Toeplitz, Tridiag, LowRankUpdate,
Householder, Permutation) against TF's: every method of the table in
`linear_operator_cases.py`, gradients, and rows in `jaxtape.function`.
"""

from __future__ import annotations

import pytest
from linear_operator_cases import (
    STRUCTURED,
    check_every_method,
    check_gradients,
    check_inside_function,
)


@pytest.mark.parametrize("case", STRUCTURED)
def test_every_method_matches_tensorflow(case, tf):
    check_every_method(tf, case)


@pytest.mark.parametrize(
    "case",
    [
        "kronecker",
        "circulant",
        "toeplitz",
        "tridiag_sequence",
        "low_rank_update",
        "householder",
    ],
)
def test_gradients_match_tensorflow(case, tf):
    check_gradients(tf, case)


@pytest.mark.parametrize("case", ["circulant", "kronecker", "tridiag_sequence"])
def test_methods_inside_function_match_eager(case):
    check_inside_function(case)
