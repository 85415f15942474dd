"""`jaxtape.debugging.enable_check_numerics` against TF's: which ops raise, and
the message (op, dtype, shape, counts of each kind, inputs)."""

import re

import numpy as np
import pytest

import jaxtape


@pytest.fixture
def check_numerics(tf):
    """TF's and jaxtape's check-numerics mode on, for one test."""
    tf.debugging.enable_check_numerics()
    jaxtape.debugging.enable_check_numerics()
    try:
        yield
    finally:
        tf.debugging.disable_check_numerics()
        jaxtape.debugging.disable_check_numerics()


def _message(fn, m):
    """The error message `fn(m)` raises (normalized), or None when it does not."""
    try:
        fn(m)
    except m.errors.InvalidArgumentError as e:
        text = re.sub(r"^\{\{function_node [^}]*\}\} ", "", str(e))
        text = text.removesuffix(" name: ")
        return text.replace("tf.Tensor(", "jaxtape.Tensor(")
    return None


F32 = np.float32
ROWS = {
    "log_of_zero": lambda m: m.math.log(m.constant([0.0, 1.0])),
    "divide_by_zero": lambda m: m.constant([1.0, 0.0]) / m.constant(0.0),
    "sqrt_of_negative": lambda m: m.sqrt(m.constant(-1.0)),
    "exp_overflow": lambda m: m.exp(m.constant([100.0, -1.0])),
    "all_three_kinds": lambda m: m.math.multiply(
        m.constant([np.inf, -np.inf, np.nan], F32), m.constant(1.0)
    ),
    "float64_log": lambda m: m.math.log(m.constant(np.zeros(3))),
    "finite_matmul": lambda m: m.matmul(m.ones([2, 3]), m.ones([3, 2])),
    "integer_division": lambda m: m.math.floordiv(m.constant([4]), m.constant([2])),
    "relu_of_finite": lambda m: m.nn.relu(m.constant([-1.0, 2.0])),
}
FINITE = {"finite_matmul", "integer_division", "relu_of_finite"}


@pytest.mark.parametrize("name", list(ROWS))
def test_eager_ops_raise_tensorflows_error(name, tf, check_numerics):
    fn = ROWS[name]
    theirs = _message(fn, tf)
    assert (theirs is None) == (name in FINITE)
    assert _message(fn, jaxtape) == theirs


def test_compiled_function_raises_naming_the_graph_op(tf, check_numerics):
    def f(x):
        return tf_or_jt.math.log(x) * 2.0

    for tf_or_jt in (tf, jaxtape):
        g = tf_or_jt.function(f)
        with pytest.raises(tf_or_jt.errors.InvalidArgumentError) as info:
            g(tf_or_jt.constant([0.0, 1.0]))
        assert 'output 0 of graph op "Log" (# of outputs: 1)' in str(info.value)
        assert "shape: (2,)" in str(info.value)
        np.testing.assert_allclose(g(tf_or_jt.constant([2.0, 1.0])), [np.log(4.0), 0])
    assert "(-Inf: 1, +Inf: 0, NaN: 0)" in str(info.value)


def test_ops_recorded_on_a_tape_are_checked(check_numerics):
    x = jaxtape.Variable(1.0)
    with jaxtape.GradientTape():
        with pytest.raises(jaxtape.errors.InvalidArgumentError, match='op "Log"'):
            jaxtape.math.log(x - 1.0)


def test_disable_check_numerics_turns_the_mode_off():
    jaxtape.debugging.disable_check_numerics()  # (off already: a no-op)
    jaxtape.debugging.enable_check_numerics()
    jaxtape.debugging.disable_check_numerics()
    assert np.isneginf(jaxtape.math.log(jaxtape.constant(0.0)).numpy())
    assert jaxtape.config.experimental.get_deferred_execution()
