"""GradientTape behaviours (TF's backprop_test.py as a checklist) vs closed forms."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtape as tf


def test_non_persistent_tape_refuses_second_gradient():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(
        RuntimeError,
        match="A non-persistent GradientTape can only be "
        r"used to compute one set of gradients \(or jacobians\)",
    ):
        tape.gradient(y, x)


def test_trainable_variables_are_watched_automatically():
    v = tf.Variable(2.0)
    frozen = tf.Variable(5.0, trainable=False)
    with tf.GradientTape() as tape:
        y = v * v * frozen
    gv, gf = tape.gradient(y, [v, frozen])
    assert gv.numpy() == 20.0 and gf is None
    assert tape.watched_variables() == () or tape.watched_variables()[0] is v


def test_watch_accessed_variables_false_needs_explicit_watch():
    a, b = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(a)
        y = a * b
    ga, gb = tape.gradient(y, [a, b])
    assert ga.numpy() == 3.0 and gb is None


def test_each_variable_read_is_a_leaf_and_gradients_sum():
    v = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = v * v + tf.sin(v)
    assert np.isclose(tape.gradient(y, v).numpy(), 6 + np.cos(3.0))


def test_nested_structures_of_sources_and_targets():
    x, y = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        out = {"a": x * y, "b": [x + y]}
    grads = tape.gradient(out, {"first": x, "pair": (y, x)})
    assert set(grads) == {"first", "pair"}
    assert grads["first"].numpy() == 4.0  # d(xy + x + y)/dx = y + 1
    assert grads["pair"][0].numpy() == 3.0 and grads["pair"][1].numpy() == 4.0


def test_non_scalar_target_is_summed_or_weighted_by_output_gradients():
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2, 4, 6])
    w = tf.constant([1.0, 0.0, -1.0])
    np.testing.assert_allclose(
        tape.gradient(y, x, output_gradients=w).numpy(), [2, 0, -6]
    )


def test_unconnected_gradients_none_and_zero():
    x, z = tf.constant(1.0), tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * 2.0
    assert tape.gradient(y, z) is None
    zero = tape.gradient(y, z, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(zero.numpy(), [0.0, 0.0])
    assert tape.gradient(y, z, unconnected_gradients="zero").shape == (2,)


def test_unknown_unconnected_gradients_value_is_a_clear_error():
    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients"):
        tape.gradient(y, x, unconnected_gradients="bogus")


def test_gradient_with_respect_to_intermediate_and_its_input_together():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * x  # x^3
    gx, gy = tape.gradient(z, [x, y])
    assert gx.numpy() == 12.0  # total derivative 3x^2
    assert gy.numpy() == 2.0  # partial dz/dy = x


def test_stop_recording_and_reset():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        with tape.stop_recording():
            z = y * x  # not recorded
        tape.reset()
        tape.watch(x)
        w = x * 5.0
    assert tape.gradient(z, x) is None
    assert tape.gradient(y, x) is None  # cleared by reset
    assert tape.gradient(w, x).numpy() == 5.0


def test_stop_gradient_and_nondifferentiable_ops_give_none():
    x = tf.constant([1.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a = tf.stop_gradient(x) * 2.0
        b = tf.cast(tf.argmax(x), tf.float32)
        c = tf.round(x)
        d = tf.sign(x)
    assert tape.gradient(a, x) is None
    assert tape.gradient(b, x) is None
    assert tape.gradient(c, x) is None
    np.testing.assert_array_equal(tape.gradient(d, x).numpy(), [0.0, 0.0])  # TF: zeros


@pytest.mark.filterwarnings("ignore::jaxtape.debug.GradientWarning")
def test_integer_source_gives_none_with_tf_warning():
    i = tf.constant(3)
    with tf.GradientTape() as tape:
        with pytest.warns(tf.debug.GradientWarning, match="must be floating"):
            tape.watch(i)
        y = i * i
    with pytest.warns(
        tf.debug.GradientWarning,
        match=r"source tensor must be floating \(e.g. tf.float32\) when "
        "calling GradientTape.gradient, got tf.int32",
    ):
        assert tape.gradient(y, i) is None


def test_persistent_gradient_inside_context_warns_and_is_recorded():
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x * x
        with pytest.warns(tf.debug.GradientWarning, match="less efficient"):
            dy = tape.gradient(y, x)
    assert dy.numpy() == 12.0
    assert tape.gradient(dy, x).numpy() == 12.0  # d/dx 3x^2 = 6x


def test_third_derivative_with_three_nested_tapes():
    x = tf.Variable(0.5)
    with tf.GradientTape() as t1:
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t3:
                y = tf.sin(x) * x
            d1 = t3.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t1.gradient(d2, x)
    f = lambda v: jnp.sin(v) * v
    expected = jax.grad(jax.grad(jax.grad(f)))(0.5)
    assert np.isclose(d3.numpy(), expected, rtol=1e-5)
    assert np.isclose(d2.numpy(), jax.grad(jax.grad(f))(0.5), rtol=1e-5)


def test_jacobian_matches_jacrev_and_batch_jacobian_per_example(rng):
    w_np = rng.normal(size=(5, 4)).astype(np.float32)
    x_np = rng.normal(size=(4,)).astype(np.float32)
    w, x = tf.constant(w_np), tf.Variable(x_np)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(w)
        y = tf.tanh(tf.linalg.matmul(w, tf.reshape(x, [4, 1])))[:, 0]
    jw, jx = tape.jacobian(y, [w, x])
    f = lambda w, x: jnp.tanh(w @ x)
    np.testing.assert_allclose(
        jw.numpy(), jax.jacrev(f, 0)(w_np, x_np), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        jx.numpy(), jax.jacrev(f, 1)(w_np, x_np), rtol=1e-5, atol=1e-6
    )

    xb_np = rng.normal(size=(3, 4)).astype(np.float32)
    xb = tf.constant(xb_np)
    with tf.GradientTape() as tape:
        tape.watch(xb)
        yb = tf.tanh(tf.matmul(xb, w, transpose_b=True))
    jb = tape.batch_jacobian(yb, xb)
    per_example = jax.vmap(jax.jacrev(lambda x: jnp.tanh(w_np @ x)))(xb_np)
    assert jb.shape == (3, 5, 4)
    np.testing.assert_allclose(jb.numpy(), per_example, rtol=1e-5, atol=1e-6)


def test_custom_gradient_replaces_the_rule():
    @tf.custom_gradient
    def clip_gradient_identity(x):
        def grad(dy):
            return tf.clip_by_value(dy, -0.5, 0.5)

        return tf.identity(x), grad

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = clip_gradient_identity(x) * 3.0
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.5, 0.5])


def test_custom_gradient_with_variables():
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def scale(x):
        def grad(dy, variables=None):
            return dy * v, [dy * x * 10.0]  # a deliberately "wrong" dv to see it used

        return x * v, grad

    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = scale(x)
    gx, gv = tape.gradient(y, [x, v])
    assert gx.numpy() == 2.0 and gv.numpy() == 30.0


def test_custom_gradient_with_variables_requires_variables_argument():
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def scale(x):
        return x * v, lambda dy: dy * v

    with pytest.raises(TypeError, match="keyword argument 'variables'"):
        scale(tf.constant(1.0))


def test_forward_accumulator_matches_jvp(rng):
    x_np = rng.normal(size=(3,)).astype(np.float32)
    t_np = rng.normal(size=(3,)).astype(np.float32)
    x = tf.constant(x_np)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(t_np)) as acc:
        y = tf.reduce_sum(tf.sin(x) * x)
        z = tf.sqrt(x * x + 1.0)
    _, expected = jax.jvp(lambda x: jnp.sum(jnp.sin(x) * x), (x_np,), (t_np,))
    assert np.isclose(acc.jvp(y).numpy(), expected, rtol=1e-5)
    _, ez = jax.jvp(lambda x: jnp.sqrt(x * x + 1.0), (x_np,), (t_np,))
    np.testing.assert_allclose(acc.jvp(z).numpy(), ez, rtol=1e-5)


def test_sqrt_zero_upstream_rule_and_complex_conjugation():
    x = tf.constant([0.0, 4.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.where(x > 0, tf.sqrt(x), 0.0)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 0.25])  # TF
    z = tf.constant(1 + 2j, tf.complex64)
    with tf.GradientTape() as tape:
        tape.watch(z)
        w = z * z
    assert tape.gradient(w, z).numpy() == 2 - 4j  # TF's conj(2z)


def test_compiled_backward_is_compiled_once_for_a_repeated_step():
    tf.autodiff.clear_cache()
    w = tf.Variable(np.ones((4, 3), np.float32))
    for i in range(5):
        x = tf.constant(np.full((2, 4), float(i), np.float32))
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.tanh(tf.matmul(x, w)))
        g = tape.gradient(loss, w)
        expected = jax.grad(lambda w: jnp.sum(jnp.tanh(x.numpy() @ w)))(w.numpy())
        np.testing.assert_allclose(g.numpy(), expected, rtol=1e-5)
    stats = tf.autodiff.cache_stats()
    assert stats["misses"] == 1 and stats["compiles"] == 1 and stats["hits"] == 4


def test_a_new_backward_compiles_at_first_sight_unless_structures_keep_changing():
    """A training loop's first step is compiled at once (no op-by-op run,
    which compiles every primitive on its own); while each step brings a new
    structure that never recurs, new programs run op by op instead."""
    tf.autodiff.clear_cache()
    w = tf.Variable(np.ones((3,), np.float32))

    def grad(n):
        with tf.GradientTape() as tape:
            y = w
            for _ in range(n):
                y = tf.sin(y)
            loss = tf.reduce_sum(y)
        g = tape.gradient(loss, w)
        expected = jax.grad(lambda v: jnp.sum(_nested_sin(v, n)))(w.numpy())
        np.testing.assert_allclose(g.numpy(), expected, rtol=1e-5)

    grad(2)
    assert tf.autodiff.cache_stats()["compiles"] == 1  # the first new program
    for n in range(3, 8):  # a new structure each time, never recurring
        grad(n)
    stats = tf.autodiff.cache_stats()
    assert stats["misses"] == 6 and stats["compiles"] == 1, stats
    grad(7)  # recurs: compiled now
    grad(7)
    assert tf.autodiff.cache_stats()["compiles"] == 2
    grad(9)  # structures recur again: the next new one compiles at first sight
    stats = tf.autodiff.cache_stats()
    assert stats["misses"] == 7 and stats["compiles"] == 3, stats


def _nested_sin(v, n):
    for _ in range(n):
        v = jnp.sin(v)
    return v


def test_numpy_escape_warns_and_explain_gradient_says_why():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with pytest.warns(tf.debug.NumpyEscapeWarning, match="converted to NumPy"):
            c = tf.constant(x.numpy() * 2)
        y = c * x
    assert "NumPy" in tf.debug.explain_gradient(tape, c, x)
    v = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        y = x * 2.0
    assert "never read" in tf.debug.explain_gradient(tape, y, v)
    assert "integer" in tf.debug.explain_gradient(tape, y, tf.Variable(1))


def test_python_float_target_or_source_and_none_source_are_clear_errors():
    x = tf.constant(1.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(TypeError, match="Python number cannot be differentiated"):
        tape.gradient(3.0, x)
    with pytest.raises(TypeError, match="sources must be Tensors or Variables"):
        tape.gradient(y, 3.0)
    with pytest.raises(TypeError, match="a source is None"):
        tape.gradient(y, [x, None])
    assert tape.gradient(tf.constant(True), x) is None  # TF: bool target -> None
    assert tape.gradient(tf.constant(1), x) is None  # TF: integer target -> None


def test_watching_non_tensors_is_a_clear_error():
    with tf.GradientTape() as tape:
        with pytest.raises(ValueError, match="not jaxtape.Tensor or jaxtape.Variable"):
            tape.watch([1.0, "a"])


def test_mixed_dtypes_refused_like_tf():
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=r"cannot compute AddV2 as input #1\(zero-based\) was "
        "expected to be a float tensor but is a double tensor",
    ):
        tf.constant(1.0) + tf.constant(1.0, tf.float64)
    with pytest.raises(tf.errors.InvalidArgumentError, match="int32"):
        tf.constant(1.0) * tf.constant(1)
    assert (tf.constant(1.0) + np.float64(2.0)).dtype == tf.float32  # TF converts
    with pytest.raises(TypeError, match="not an integer"):
        tf.constant(1) * 1.5
    with pytest.raises(tf.errors.InvalidArgumentError, match="AddV2"):
        tf.constant(1) + 1.5  # (TF's AddV2 raises this one, not TypeError)


def test_static_shape_arguments_survive_the_compiled_backward():
    # reshape/tile/expand_dims shapes are static params, not traced inputs.
    x = tf.constant(np.arange(6, dtype=np.float32))
    for _ in range(3):  # third call runs the jitted backward
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(
                tf.tile(tf.expand_dims(tf.reshape(x, [2, 3]), 0), [2, 1, 1]) ** 2
            )
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), 4 * x.numpy())


def test_integer_exponents_are_exact_and_static():
    # `x ** 3` is lax.integer_pow: exact at 0 (jnp.power's general path goes
    # through log for traced exponents) and fixed in the compiled backward.
    x = tf.constant([0.0, -2.0, 1.5])
    for _ in range(3):  # eager first, then the compiled, cached backward
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(x**3 + x**-2 * 0.0 + 2.0**x)
        g = tape.gradient(y, x).numpy()
        assert g[1] == pytest.approx(3 * 4.0 + np.log(2) * 2.0**-2, rel=1e-6)
        assert g[2] == pytest.approx(3 * 1.5**2 + np.log(2) * 2.0**1.5, rel=1e-6)
    assert (tf.constant(2) ** 3).dtype == tf.int32 and int(tf.constant(2) ** 3) == 8
    assert float(tf.constant(2.0) ** -2) == 0.25


def test_gradients_through_an_op_given_none_for_an_optional_input():
    """`batch_normalization(x, mean, var, offset=None, scale=None)` under a
    tape: the backward program's cache key takes the None input (a recurring
    gradient is compiled), and the gradient is jax.grad's."""
    import jax
    import jax.numpy as jnp

    x0 = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)

    def pure(x):
        y = (x - jnp.mean(x, 0)) * jax.lax.rsqrt(jnp.ones(3, jnp.float32) + 1e-3)
        return jnp.sum(y * y)

    want = jax.grad(pure)(x0)
    x = tf.constant(x0)
    for _ in range(3):  # eager, then compiled on second sight
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.nn.batch_normalization(
                x, tf.reduce_mean(x, 0), tf.ones([3]), None, None, 1e-3
            )
            loss = tf.reduce_sum(y * y)
        np.testing.assert_allclose(tape.gradient(loss, x).numpy(), want, rtol=1e-5)


@pytest.mark.parametrize("which", ["cholesky", "eigh"])
def test_cholesky_and_eigh_gradients_are_tfs(which):
    """TF's gradient conventions for a symmetric input: Cholesky's gradient is
    symmetric, eigh's lives on the lower triangle (the one it reads); both
    have the same symmetric part as JAX's, but a training step applies the
    gradient itself, so it must be TF's."""
    tf_real = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(0)
    m = rng.normal(size=(4, 4)).astype(np.float32)
    a0 = m @ m.T + 4 * np.eye(4, dtype=np.float32)
    w = rng.normal(size=(4, 4)).astype(np.float32)

    def grad(mod):
        a = mod.Variable(a0)
        with mod.GradientTape() as tape:
            if which == "cholesky":
                loss = mod.reduce_sum(mod.linalg.cholesky(a) * w)
            else:
                e, v = mod.linalg.eigh(a)
                loss = mod.reduce_sum(e * w[0]) + mod.reduce_sum(mod.abs(v) * w)
        return tape.gradient(loss, a).numpy()

    want = grad(tf_real)
    for _ in range(2):  # eager, then the compiled backward
        np.testing.assert_allclose(grad(tf), want, rtol=1e-4, atol=1e-5)
