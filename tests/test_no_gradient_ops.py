"""Ops with no gradient, differentiated through compiled code, against real TF.

A tape never records `stop_gradient`, `round`, `argmax`... (as TF), but a
`jaxtape.function` or a loop body that an outer tape differentiates is
differentiated by JAX as a whole: such ops must cut the gradient there too,
or `stop_gradient(x) * x` gets 2x instead of x. Each row computes
`d sum(f(x)) / dx` under TF and jaxtape: eagerly, through a compiled
function, and through loop bodies.

Where TF gives None (nothing connected), jaxtape gives None too, compiled
or not: a function's input that reaches no output through a differentiable
path is not an input of the recorded call. `test_function_call_connectivity`
checks TF's rule for that: every output of the call counts (an output not
differentiated passes zeros), assignments and integer casts cut.
"""

from __future__ import annotations

import numpy as np
import pytest

import jaxtape

X = np.asarray([0.3, 1.7, -2.2], np.float32)

ROWS = {
    "stop_gradient": lambda m, x: m.stop_gradient(x) * x,
    "round": lambda m, x: m.round(x) * x,
    "floor": lambda m, x: m.floor(x) + x,
    "ceil": lambda m, x: m.math.ceil(x * 2.0),
    "rint": lambda m, x: m.math.rint(x),
    "sign": lambda m, x: m.sign(x) * x,
    "one_hot_argmax": lambda m, x: m.one_hot(m.argmax(x), 3) * x,
    "floordiv": lambda m, x: m.math.floordiv(x, 0.7),
    "floormod": lambda m, x: m.math.floormod(x, 0.7),
    "zeros_like": lambda m, x: m.zeros_like(x) + x * 2.0,
    "ones_like": lambda m, x: m.ones_like(x) * x,
    "is_finite": lambda m, x: m.where(m.math.is_finite(x), x, 0.0),
    "sequence_mask": lambda m, x: m.cast(m.sequence_mask([1, 2], 3), m.float32) * x,
    "zero_fraction": lambda m, x: m.math.zero_fraction(x) + x,
    "histogram": lambda m, x: m.cast(
        m.histogram_fixed_width(x, [-3.0, 3.0], nbins=4), m.float32
    ),
    "nextafter": lambda m, x: m.math.nextafter(x, 10.0),
    "map_fn_body": lambda m, x: m.map_fn(lambda r: m.stop_gradient(r) * r, x),
    "scan_body": lambda m, x: m.scan(
        lambda a, r: a + m.stop_gradient(r) * r, x, initializer=0.0
    ),
    "foldl_body": lambda m, x: m.foldl(
        lambda a, r: a + m.round(r) * r, x, initializer=0.0
    ),
    "cond_branch": lambda m, x: m.cond(
        x[0] > 0, lambda: m.stop_gradient(x) * x, lambda: x
    ),
}


def _grad(m, f, compiled):
    x = m.Variable(X)
    fn = m.function(lambda: f(m, x)) if compiled else (lambda: f(m, x))
    with m.GradientTape() as tape:
        y = m.reduce_sum(fn())
    g = tape.gradient(y, x)
    return None if g is None else np.asarray(g)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("name", ROWS)
def test_no_gradient_ops_match_tf(tf, name, compiled):
    f = ROWS[name]
    expected, got = _grad(tf, f, compiled), _grad(jaxtape, f, compiled)
    if expected is None:
        assert got is None
    else:
        assert got is not None
        np.testing.assert_allclose(got, expected, rtol=1e-6)


CALLS = {  # (function body, index of the output differentiated)
    "other_output": (lambda m, v, x: (v[0] * x, v[1] * x), 0),
    "stop_gradient": (lambda m, v, x: v[0] * x + m.stop_gradient(v[1]) * x, None),
    "unused_read": (lambda m, v, x: (v[0] * x, m.cast(v[1] > 0, m.float32)), 1),
    "read_unused": (lambda m, v, x: (v[2] * 0.0, v[0] * x)[1], None),
    "assigned": (lambda m, v, x: (v[1].assign(v[0] * x), v[2] * 1.0)[1], None),
    "integer_cast": (
        lambda m, v, x: m.cast(m.cast(v[0] * x, m.int32), m.float32) + v[2],
        None,
    ),
    "floor_round_sign": (
        lambda m, v, x: (m.floor(v[0] * x), m.round(v[2]), m.sign(v[1])),
        1,
    ),
    "cond": (lambda m, v, x: m.cond(x > 0, lambda: v[0] * x, lambda: v[2] * x), None),
    "cond_stop_gradient": (
        lambda m, v, x: m.cond(
            x > 0, lambda: v[0] * x + m.stop_gradient(v[1]), lambda: v[0] * x
        ),
        None,
    ),
    "argument": (lambda m, v, x: m.stop_gradient(x) * v[0], None),
    "scan_carry": (
        lambda m, v, x: m.scan(
            lambda a, r: a * v[0] + m.stop_gradient(v[1]) * r,
            m.stack([x, x + 1.0]),
            initializer=v[2] * 0.0 + 1.0,
        )[-1],
        None,
    ),
    "map_fn": (
        lambda m, v, x: m.map_fn(lambda r: r * m.floor(v[1]) + v[0], m.stack([x, x])),
        None,
    ),
}


def _call_grads(m, name):
    body, pick = CALLS[name]
    v = [m.Variable(1.5), m.Variable(2.0), m.Variable(-3.0)]
    x = m.constant(3.0)
    fn = m.function(lambda x: body(m, v, x))
    with m.GradientTape() as tape:
        tape.watch(x)
        out = fn(x)
        y = out if pick is None else out[pick]
    return [None if g is None else float(g) for g in tape.gradient(y, [*v, x])]


@pytest.mark.parametrize("name", CALLS)
def test_function_call_connectivity(tf, name):
    """TF's gradient through a function call: None for an input with no
    differentiable path to any of the call's outputs, zeros for one joined
    only to outputs that were not differentiated."""
    assert _call_grads(jaxtape, name) == _call_grads(tf, name)
