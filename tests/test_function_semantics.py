"""jaxtape.function runs its body exactly once per call, as tf.function does.

Each case is one script written against the module `m` (TensorFlow or
jaxtape) and run under both; the counters must agree after every call.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtape

# What the compiled body returns, and how it is called.
RETURNS = {
    "no_return": lambda v, x: v.assign_add(x) and None,
    "none": lambda v, x: (v.assign_add(x), None)[1],
    "tensor": lambda v, x: v.assign_add(x).read_value() * 2.0,
    "variable": lambda v, x: v.assign_add(x),
    "tuple": lambda v, x: (v.assign_add(x).read_value(), x * 2.0),
    "dict": lambda v, x: {"b": v.assign_add(x).read_value(), "a": x},
    "python_int": lambda v, x: (v.assign_add(x), 3)[1],
    "nested": lambda v, x: [{"z": (v.assign_add(x).read_value(),)}, None],
}


def _no_return_body(v, x):
    v.assign_add(x)


CALLS = {
    "positional": lambda f, m, x: f(x),
    "keyword": lambda f, m, x: f(x=x),
    "python_float": lambda f, m, x: f(1.0),
    "under_tape": lambda f, m, x: _under_tape(f, m, x),
}


def _under_tape(f, m, x):
    with m.GradientTape() as tape:
        tape.watch(x)
        out = f(x)
    return out


def _run(m, ret, call):
    v = m.Variable(0.0)
    body = RETURNS[ret]
    if ret == "no_return":

        def fn(x):
            _no_return_body(v, x)

    else:

        def fn(x):
            return body(v, x)

    f = m.function(fn)
    seen = []
    for _ in range(5):
        CALLS[call](f, m, m.constant(1.0))
        seen.append(float(v.numpy()))
    return seen


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("ret", sorted(RETURNS))
def test_compiled_body_runs_once_per_call_like_tf(ret, call, tf):
    expected = _run(tf, ret, call)
    assert expected == [1.0, 2.0, 3.0, 4.0, 5.0]  # TF's own count, as a sanity check
    assert _run(jaxtape, ret, call) == expected


def test_optimizer_iterations_count_each_compiled_step_once(tf):
    def script(m):
        model = m.keras.Sequential([m.keras.layers.Dense(2)])
        model.build((None, 3))
        opt = m.keras.optimizers.SGD(0.1)
        x = np.ones((4, 3), np.float32)

        @m.function
        def train_step(x):  # TF's quickstart-for-experts step: no return
            with m.GradientTape() as tape:
                loss = m.reduce_sum(model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))

        for _ in range(5):
            train_step(x)
        return int(opt.iterations.numpy())

    assert script(jaxtape) == script(tf) == 5


def test_random_ops_with_an_op_seed_draw_anew_on_every_compiled_call():
    """TF: an op-seeded random op (and a seeded Dropout) inside tf.function
    gives new numbers on each call; the op's state advances per execution."""
    import tensorflow as tf_real

    def draws(tf):
        tf.random.set_seed(3)
        drop = tf.keras.layers.Dropout(0.5, seed=1)

        @tf.function
        def f(x):
            return tf.random.uniform([4], seed=5), drop(x, training=True)

        out = [f(tf.ones([16])) for _ in range(3)]
        return [o[0].numpy().tolist() for o in out], [
            o[1].numpy().tolist() for o in out
        ]

    for tf in (tf_real, jaxtape):
        uniforms, masks = draws(tf)
        assert len({tuple(u) for u in uniforms}) == 3, tf
        assert len({tuple(m) for m in masks}) == 3, tf
    # Reproducible from the global seed, as TF's.
    assert draws(jaxtape) == draws(jaxtape)


def test_outer_tape_differentiates_a_checked_function_holding_custom_vjps():
    # A run-time check (gather's index check) and ops whose gradients are
    # custom (sqrt, softmax cross-entropy, a custom_gradient) in one compiled
    # function, differentiated by a tape outside it: the gradient is JAX's on
    # the same pure function, and a bad index still raises.
    rng = np.random.default_rng(0)
    w0 = rng.uniform(0.5, 1.5, (5, 4)).astype(np.float32)
    labels = np.full((3, 4), 0.25, np.float32)

    @jaxtape.custom_gradient
    def twice(x):
        return x * 2.0, lambda dy: dy * 2.0

    w = jaxtape.Variable(w0)
    f = jaxtape.function(
        lambda i: jaxtape.reduce_sum(
            jaxtape.nn.softmax_cross_entropy_with_logits(
                labels=labels, logits=twice(jaxtape.sqrt(jaxtape.gather(w, i)))
            )
        )
    )

    def pure(w, i):
        logits = 2.0 * jnp.sqrt(w[i])
        return jnp.sum(-jnp.sum(labels * jax.nn.log_softmax(logits), -1))

    for idx in ([1, 2, 0], [4, 4, 3]):
        with jaxtape.GradientTape() as tape:
            loss = f(jaxtape.constant(idx))
        got = tape.gradient(loss, w).numpy()
        want = jax.grad(pure)(w0, np.asarray(idx))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    with pytest.raises(jaxtape.errors.InvalidArgumentError):
        with jaxtape.GradientTape() as tape:
            f(jaxtape.constant([1, 7, 0]))
