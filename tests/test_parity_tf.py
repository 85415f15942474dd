"""Parity with real TensorFlow (the `parity` extra): values, None-vs-zero, errors."""

import numpy as np
import pytest

import jaxtape

FUNCTIONS = {
    "tanh_times_x": lambda m, x: m.math.tanh(x) * x,
    "softmax_sum": lambda m, x: m.reduce_sum(m.nn.softmax(x), axis=-1),
    "logsumexp": lambda m, x: m.reduce_logsumexp(x * 2.0, axis=0),
    "sqrt_where": lambda m, x: m.where(x > 0, m.sqrt(m.abs(x)), 0.0),
    "max_ties": lambda m, x: m.reduce_max(m.concat([x, x], axis=0), axis=0),
    "norm": lambda m, x: m.norm(x),
    "gather": lambda m, x: m.gather(x * x, [0, 0, 1]),
    "sigmoid_xent": lambda m, x: m.nn.sigmoid_cross_entropy_with_logits(
        labels=m.ones_like(x) * 0.3, logits=x
    ),
    "l2_loss_relu": lambda m, x: m.nn.l2_loss(m.nn.relu(x)),
    "cumsum_reverse": lambda m, x: m.cumsum(x, axis=1, reverse=True, exclusive=True),
    "clip_by_norm": lambda m, x: m.clip_by_norm(x, 0.5),
    "round_stops": lambda m, x: m.round(x) * x,
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_value_and_gradient_match_tensorflow(name, tf):
    fn = FUNCTIONS[name]
    x_np = np.random.default_rng(0).normal(size=(3, 4)).astype("float32")
    x_np[0, 0] = 0.0
    x_tf = tf.constant(x_np)
    with tf.GradientTape() as tape:
        tape.watch(x_tf)
        y_tf = fn(tf, x_tf)
    g_tf = tape.gradient(y_tf, x_tf)
    x = jaxtape.constant(x_np)
    with jaxtape.GradientTape() as tape:
        tape.watch(x)
        y = fn(jaxtape, x)
    g = tape.gradient(y, x)
    np.testing.assert_allclose(y.numpy(), y_tf.numpy(), rtol=1e-5, atol=1e-6)
    assert (g is None) == (g_tf is None)
    if g is not None:
        np.testing.assert_allclose(g.numpy(), g_tf.numpy(), rtol=1e-5, atol=1e-6)


NONE_CASES = {
    "argmax": lambda m, x: m.cast(m.argmax(x), m.float32),
    "floor": lambda m, x: m.floor(x),
    "cast_int": lambda m, x: m.cast(x, m.int32),
    "unconnected": lambda m, x: m.constant(2.0),
    "stop_gradient": lambda m, x: m.stop_gradient(x) * 2.0,
    "sign": lambda m, x: m.sign(x),
}


@pytest.mark.parametrize("name", sorted(NONE_CASES))
def test_none_versus_zero_matches_tensorflow(name, tf):
    fn = NONE_CASES[name]
    results = []
    for m in (tf, jaxtape):
        x = m.constant([1.5, -2.0])
        with m.GradientTape() as tape:
            tape.watch(x)
            y = fn(m, x)
        results.append(tape.gradient(y, x))
    g_tf, g = results
    assert (g is None) == (g_tf is None)
    if g is not None:
        np.testing.assert_array_equal(g.numpy(), g_tf.numpy())


def test_second_gradient_error_text_matches_tensorflow(tf):
    messages = []
    for m in (tf, jaxtape):
        x = m.constant(3.0)
        with m.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)
        with pytest.raises(RuntimeError) as info:
            tape.gradient(y, x)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_mixed_dtype_error_matches_tensorflow(tf):
    with pytest.raises(tf.errors.InvalidArgumentError) as tf_info:
        tf.constant(1.0) + tf.constant(1.0, tf.float64)
    with pytest.raises(jaxtape.errors.InvalidArgumentError) as info:
        jaxtape.constant(1.0) + jaxtape.constant(1.0, jaxtape.float64)
    tf_head = str(tf_info.value).split(" [Op:")[0]
    assert str(info.value).startswith(tf_head)


def test_complex_gradients_match_tensorflow(tf):
    fns = [
        lambda m, z: z * z,
        lambda m, z: m.math.real(z * m.math.conj(z)),
        lambda m, z: m.math.imag(z) * 3.0,
    ]
    for fn in fns:
        out = []
        for m in (tf, jaxtape):
            z = m.constant([1 + 2j, -0.5 + 1j], m.complex64)
            with m.GradientTape() as tape:
                tape.watch(z)
                y = fn(m, z)
            out.append(tape.gradient(y, z).numpy())
        np.testing.assert_allclose(out[1], out[0], rtol=1e-6)


def test_nested_tape_second_and_third_derivatives_match_tensorflow(tf):
    out = []
    for m in (tf, jaxtape):
        x = m.Variable([0.3, -1.2])
        with m.GradientTape() as t1:
            with m.GradientTape() as t2:
                with m.GradientTape() as t3:
                    y = m.reduce_sum(m.sin(x) ** 3)
                d1 = t3.gradient(y, x)
            d2 = t2.gradient(d1, x)
        d3 = t1.gradient(d2, x)
        out.append([d.numpy() for d in (d1, d2, d3)])
    for a, b in zip(out[1], out[0]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_jacobians_match_tensorflow(tf):
    rng = np.random.default_rng(1)
    w_np = rng.normal(size=(4, 3)).astype(np.float32)
    x_np = rng.normal(size=(2, 3)).astype(np.float32)
    out = []
    for m in (tf, jaxtape):
        w, x = m.constant(w_np), m.constant(x_np)
        with m.GradientTape(persistent=True) as tape:
            tape.watch([w, x])
            y = m.tanh(m.matmul(x, w, transpose_b=True))
        out.append((tape.jacobian(y, w).numpy(), tape.batch_jacobian(y, x).numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-5, atol=1e-6)


def test_reprs_match_tensorflow(tf):
    for value in ([[1.0, 1.0], [1.0, 1.0]], 6.0, [1, 2, 3]):
        ours = repr(jaxtape.constant(value)).replace("jaxtape.Tensor", "tf.Tensor")
        assert ours == repr(tf.constant(value))
    assert repr(jaxtape.Variable(1.0)).replace(
        "jaxtape.Variable", "tf.Variable"
    ) == repr(tf.Variable(1.0))
