"""Deferred execution under a recording tape (core/deferred.py, autodiff/program.py).

Truths: the same computation with deferral off (TF's op-by-op execution),
`jax.grad`/`jax.value_and_grad` of the same pure function, and closed forms.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtape as tf
from jaxtape._src.core.deferred import Pending


@pytest.fixture
def no_deferral():
    tf.config.experimental.set_deferred_execution(False)
    yield
    tf.config.experimental.set_deferred_execution(True)


def _pending(t) -> bool:
    return type(t._v) is Pending and t._v.value is None


def _mlp_step(x, w, b, v):
    """A small forward pass; returns (hidden, loss)."""
    with tf.GradientTape() as tape:
        h = tf.tanh(tf.matmul(x, w) + b)
        loss = tf.reduce_mean(tf.square(h @ v))
    return tape, h, loss


def _data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 5)).astype(np.float32)
    w = rng.normal(size=(5, 4)).astype(np.float32)
    b = rng.normal(size=(4,)).astype(np.float32)
    v = rng.normal(size=(4, 1)).astype(np.float32)
    return x, w, b, v


def _jax_loss(w, b, v, x):
    return jnp.mean(jnp.square(jnp.tanh(x @ w + b) @ v))


def test_ops_on_tracked_tensors_are_deferred_and_shapes_need_no_value():
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.sin(x) * 2.0
        assert _pending(y)
        assert y.shape == (3,) and y.dtype == tf.float32 and y.ndim == 1
        assert len(y) == 3
        assert _pending(y)  # metadata did not compute it
        node = y._v
        untracked = tf.constant(1.0) + 1.0
        assert not _pending(untracked)  # nothing tracked: runs now, as in TF
    np.testing.assert_allclose(y.numpy(), 2 * np.sin([1.0, 2.0, 3.0]), rtol=1e-6)
    assert not _pending(y)
    assert node.owner is tape._rec  # a node of the tape's own program
    assert y._v is node.value  # computed once, by that program


def test_values_and_gradients_match_op_by_op_execution_and_jax(no_deferral):
    x, w, b, v = _data()
    wv, bv, vv = tf.Variable(w), tf.Variable(b), tf.Variable(v)
    tape, h_eager, loss_eager = _mlp_step(x, wv, bv, vv)
    assert not _pending(loss_eager)
    g_eager = tape.gradient(loss_eager, [wv, bv, vv])
    tf.config.experimental.set_deferred_execution(True)
    want_loss, want_g = jax.value_and_grad(_jax_loss, argnums=(0, 1, 2))(w, b, v, x)
    for _ in range(3):  # first sight eager, then compiled: same numbers
        tape, h, loss = _mlp_step(x, wv, bv, vv)
        assert _pending(loss)
        grads = tape.gradient(loss, [wv, bv, vv])
        np.testing.assert_allclose(float(loss), float(loss_eager), rtol=1e-6)
        np.testing.assert_allclose(float(loss), float(want_loss), rtol=1e-5)
        np.testing.assert_allclose(h.numpy(), h_eager.numpy(), rtol=1e-6, atol=1e-7)
        for g, ge, gj in zip(grads, g_eager, want_g):
            np.testing.assert_allclose(g.numpy(), ge.numpy(), rtol=1e-5, atol=1e-7)
            np.testing.assert_allclose(g.numpy(), gj, rtol=1e-5, atol=1e-6)


def test_gradient_computes_values_still_referenced_in_the_same_program():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * 3.0 + 1.0
    assert _pending(y) and _pending(z)
    assert float(tape.gradient(z, x)) == pytest.approx(12.0)
    assert not _pending(y) and not _pending(z)  # filled by the backward program
    assert float(y) == 4.0 and float(z) == 13.0


def test_a_repeated_forward_segment_compiles_once():
    tf.autodiff.clear_cache()
    x = tf.constant(np.linspace(-1, 1, 16, dtype=np.float32))
    values = []
    for _ in range(4):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.exp(x) * x)
        values.append(float(y))  # read inside: the forward segment runs alone
    stats = tf.autodiff.deferred_cache_stats()
    assert stats["misses"] == 1 and stats["compiles"] == 1 and stats["hits"] == 3
    want = float(np.sum(np.exp(x.numpy()) * x.numpy()))
    np.testing.assert_allclose(values, [want] * 4, rtol=1e-5)


def test_shape_errors_are_raised_at_the_call_as_in_eager(no_deferral):
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(Exception) as eager_error:
            tf.matmul(x, tf.ones((3, 3)))
    tf.config.experimental.set_deferred_execution(True)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(type(eager_error.value)):
            tf.matmul(x, tf.ones((3, 3)))


def test_value_checks_still_run_for_tracked_inputs():
    params = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(params)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 7"):
            tf.gather(params, [0, 7])


def test_pending_values_work_everywhere_a_tensor_does():
    x = tf.constant([0.5, -1.5])
    v = tf.Variable([0.0, 0.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
        assert float(tf.reduce_sum(y)) == pytest.approx(-2.0)  # Python reads it
        if y[0] > 0:  # Python control flow on a pending value
            v.assign(y)
        z = y * y
    np.testing.assert_allclose(v.numpy(), [1.0, -3.0])
    np.testing.assert_allclose(np.asarray(z), [1.0, 9.0])
    np.testing.assert_allclose(jnp.sin(z), np.sin([1.0, 9.0]), rtol=1e-6)
    assert "numpy=array([1., 9.]" in repr(z)


def test_inputs_on_several_devices_meet_on_the_default_device():
    a = tf.Variable([1.0, 2.0])
    with tf.device("/cpu:1"):
        b = tf.constant([3.0, 4.0])
    for _ in range(3):  # eager first sight, then the compiled segment
        with tf.GradientTape() as tape:
            y = a * b + a
        np.testing.assert_allclose(y.numpy(), [4.0, 10.0])
        np.testing.assert_allclose(tape.gradient(y, a).numpy(), [4.0, 5.0])


def test_nothing_is_deferred_inside_a_compiled_function():
    seen = []

    @tf.function
    def f(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
            seen.append(type(y._v))
        return tape.gradient(y, x)

    assert float(f(tf.constant(3.0))) == 6.0
    assert Pending not in seen


def test_deferral_can_be_turned_off(no_deferral):
    assert tf.config.experimental.get_deferred_execution() is False
    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
    assert not _pending(y)


def test_a_keras_training_step_computes_nothing_before_its_gradient():
    # Layers and losses look at their inputs' shapes and dtypes (autocasting,
    # rank checks), which a pending value has without being computed: the
    # forward pass runs inside the backward program, as for raw ops.
    rng = np.random.default_rng(0)
    x = rng.random((8, 6), np.float32)
    y = rng.integers(0, 3, 8).astype(np.int32)
    model = tf.keras.Sequential(
        [
            tf.keras.Input((6,)),
            tf.keras.layers.Dense(5, "relu"),
            tf.keras.layers.Dense(3),
        ]
    )
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    before = tf.autodiff.deferred_cache_stats()
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    assert _pending(logits) and _pending(loss)
    grads = tape.gradient(loss, model.trainable_variables)
    after = tf.autodiff.deferred_cache_stats()
    assert after["misses"] + after["hits"] == before["misses"] + before["hits"]
    # The loss the backward filled in is the loss computed op by op.
    want = loss_fn(y, model(x)).numpy()
    np.testing.assert_allclose(float(loss), want, rtol=1e-6)
    assert len(grads) == 4 and all(g is not None for g in grads)


def test_a_non_persistent_gradient_computes_only_the_values_still_held():
    # The backward program returns the forward values of the slice's outputs
    # that something still holds (the loss printed afterwards); those only
    # the tape held are never computed, and a nested tape leaves the values
    # its outer tape tracks to that tape.
    x = tf.constant(np.float32(1.5))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(5):
            y = y * x + 1.0  # each intermediate is dropped at once
        kept = y * 2.0
        y = kept + x
        side = tf.sin(x) * 3.0  # held, outside the gradient's slice
    before = tf.autodiff.deferred_cache_stats()
    g = tape.gradient(y, x)
    after = tf.autodiff.deferred_cache_stats()
    assert after["misses"] + after["hits"] == before["misses"] + before["hits"]
    assert not _pending(y) and not _pending(kept)  # held: filled by the backward
    assert _pending(side)  # not computed when the tape let go: when read
    assert float(side) == pytest.approx(3.0 * np.sin(1.5), rel=1e-6)
    want_y, want_g = jax.value_and_grad(
        lambda x: (lambda k: k * 2.0 + x)(
            __import__("functools").reduce(lambda y, _: y * x + 1.0, range(5), x)
        )
    )(np.float32(1.5))
    assert float(y) == pytest.approx(float(want_y), rel=1e-6)
    assert float(g) == pytest.approx(float(want_g), rel=1e-6)

    v = tf.Variable(np.float32(0.5))
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            z = tf.sin(v) * v
        dz = inner.gradient(z, v)
    assert _pending(z)  # the outer tape tracks it: not computed by the inner
    d2z = outer.gradient(dz, v)
    x0 = np.float32(0.5)
    f = lambda v: jnp.sin(v) * v  # noqa: E731
    assert float(d2z) == pytest.approx(float(jax.grad(jax.grad(f))(x0)), rel=1e-5)
    assert float(z) == pytest.approx(float(f(x0)), rel=1e-6)
