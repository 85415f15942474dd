"""Errors inside `jaxtape.function` have TF's graph-mode types, and the ops
whose output shape depends on values say so there.

TF raises `InvalidArgumentError` for a bad shape or dtype eagerly, but
`ValueError` (shape inference) or `TypeError` (dtype) while a `tf.function`
builds its graph; run-time checks (an index out of range) stay
`InvalidArgumentError`. Each row runs under TF and jaxtape, eagerly and inside
a function, and the exception must be an instance of TF's type.
"""

import numpy as np
import pytest
from parity_checks import assert_raises_like_tf

import jaxtape

CASES = {
    "mul int64 by int32": lambda L: L.constant([1], L.int64) * L.constant([1], L.int32),
    "add float32 float64": lambda L: L.constant([1.0]) + L.constant([1.0], L.float64),
    "add shapes": lambda L: L.constant([1.0, 2.0]) + L.constant([1.0, 2.0, 3.0]),
    "matmul shapes": lambda L: L.matmul(L.ones((2, 3)), L.ones((2, 3))),
    "concat shapes": lambda L: L.concat([L.ones((2, 3)), L.ones((2, 4))], 0),
    "stack shapes": lambda L: L.stack([L.ones((2,)), L.ones((3,))]),
    "reshape size": lambda L: L.reshape(L.ones((2, 3)), (4, 2)),
    "reduce axis": lambda L: L.reduce_sum(L.ones((2, 3)), axis=4),
    "transpose perm": lambda L: L.transpose(L.ones((2, 3)), [0, 2]),
    "one_hot float indices": lambda L: L.one_hot(L.constant([1.5]), 3),
    "squeeze non-1 axis": lambda L: L.squeeze(L.ones((2, 3)), axis=0),
    "split uneven": lambda L: L.split(L.ones((5,)), 2),
    "tile multiples": lambda L: L.tile(L.ones((2, 3)), [2]),
    "einsum shapes": lambda L: L.einsum("ij,jk->ik", L.ones((2, 3)), L.ones((4, 5))),
    "sqrt of int": lambda L: L.math.sqrt(L.constant([1, 2])),
    "expand_dims axis": lambda L: L.expand_dims(L.ones((2,)), 5),
    "broadcast_to shape": lambda L: L.broadcast_to(L.ones((3,)), (2, 4)),
    "where shapes": lambda L: L.where(
        L.constant([True, False]), L.ones((3,)), L.ones((3,))
    ),
    "zeros negative": lambda L: L.zeros((2, -3)),
    "pad paddings": lambda L: L.pad(L.ones((2, 3)), [[1, 1]]),
    "gather out of range": lambda L: L.gather(L.ones((3,)), 5),
    "slice out of range": lambda L: L.slice(L.ones((3,)), [2], [4]),
    # (TF accepts a float predicate eagerly: Python truthiness; graphs need bool)
    "cond on a float [function only]": lambda L: L.cond(
        L.constant(1.5), lambda: 1.0, lambda: 2.0
    ),
}
ROWS = [
    pytest.param(case, compiled, id=f"{case}-{'function' if compiled else 'eager'}")
    for case in CASES
    for compiled in (False, True)
    if compiled or "[function only]" not in case
]


@pytest.mark.parametrize("case, compiled", ROWS)
def test_error_type_matches_tf(tf, case, compiled):
    make = CASES[case]

    def run(m):
        return m.function(lambda: make(m))() if compiled else make(m)

    assert_raises_like_tf(tf, run)


def test_graph_errors_are_still_invalid_argument_errors():
    # `except InvalidArgumentError` (jaxtape's eager type) still catches them,
    # and the printed type is TF's graph-mode one.
    with pytest.raises(jaxtape.errors.InvalidArgumentError) as info:
        jaxtape.function(lambda: jaxtape.ones((2,)) + jaxtape.ones((3,)))()
    assert isinstance(info.value, ValueError)
    assert type(info.value).__name__ == "ValueError"
    with pytest.raises(jaxtape.errors.InvalidArgumentError) as info:
        jaxtape.function(lambda: jaxtape.ones((2,)) + jaxtape.ones((2,), "int32"))()
    assert isinstance(info.value, TypeError)
    # Eagerly: the plain eager type, neither ValueError nor TypeError.
    with pytest.raises(jaxtape.errors.InvalidArgumentError) as info:
        jaxtape.ones((2,)) + jaxtape.ones((3,))
    assert not isinstance(info.value, (ValueError, TypeError))


@pytest.mark.parametrize(
    "name, run",
    [
        ("boolean_mask", lambda x: jaxtape.boolean_mask(x, x > 0)),
        ("where", lambda x: jaxtape.where(x > 0)),
    ],
)
def test_value_dependent_shapes_say_so_inside_functions(name, run):
    x = jaxtape.constant([1.0, -1.0, 2.0])
    eager = run(x).numpy()
    assert eager.shape[0] == 2  # eagerly: the two positive entries
    with pytest.raises(NotImplementedError, match=f"{name}: .* decide the output"):
        jaxtape.function(run)(x)


def test_boolean_mask_eager_values(tf):
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    mask = np.array([[True, False, True], [False, True, False]])
    want = tf.boolean_mask(x, mask).numpy()
    np.testing.assert_array_equal(jaxtape.boolean_mask(x, mask).numpy(), want)
