"""jaxtape.function: tracing, lifted state, randomness, tapes inside, errors."""

import numpy as np
import pytest

import jaxtape as tf


def _seed_model():
    return tf.keras.Sequential(
        [tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(10)]
    )


def test_function_traces_once_per_signature():
    traces = []

    @tf.function
    def step(x, scale=1.0):
        traces.append(None)
        return x * scale + 1

    step(tf.ones([2]))
    step(tf.ones([2]) * 3)
    assert len(traces) == 1 and step.experimental_get_tracing_count() == 1
    step(tf.ones([3]))  # a new shape retraces
    step(tf.ones([2], tf.float64))  # a new dtype too
    step(tf.ones([2]), scale=2.0)  # and a new Python value
    step(tf.ones([2]), scale=2.0)
    assert len(traces) == 4
    np.testing.assert_array_equal(step(tf.ones([2]), 2.0).numpy(), [3.0, 3.0])


def test_state_is_lifted_and_written_back():
    v = tf.Variable(1.0)
    counter = tf.Variable(0, dtype=tf.int64)

    @tf.function
    def bump(x):
        v.assign(v * x)
        counter.assign_add(1)
        return v + 0.0

    assert float(bump(tf.constant(2.0))) == 2.0
    assert float(bump(tf.constant(3.0))) == 6.0
    assert v.numpy() == 6.0 and counter.numpy() == 2
    assert bump.experimental_get_tracing_count() == 1
    assert not isinstance(v._value, type(None))


def test_only_the_variables_the_function_touches_stay_inputs():
    # Every live Variable is lifted for the first trace; those it neither read
    # nor wrote (here another model's weights) must not stay program inputs.
    unrelated = [tf.Variable(tf.ones([7, 13])) for _ in range(3)]
    v = tf.Variable(2.0)
    grows = tf.Variable(0.0)

    @tf.function
    def f(x):
        grows.assign_add(x)
        return v * x

    x = tf.constant(3.0)
    assert float(f(x)) == 6.0 and float(f(x)) == 6.0 and grows.numpy() == 6.0
    text = f.get_concrete_function(x).as_text()
    assert "7,13" not in text and text.count("f32[]") >= 3  # v, grows, x
    unrelated[0].assign_add(tf.ones([7, 13]))  # still ordinary Variables
    v.assign(5.0)  # read on every call, not baked in
    assert float(f(x)) == 15.0 and f.experimental_get_tracing_count() == 1
    np.testing.assert_array_equal(unrelated[0].numpy(), 2 * np.ones([7, 13]))


def test_no_variable_holds_a_tracer_when_tracing_fails():
    v = tf.Variable(1.0)

    @tf.function
    def broken(x):
        v.assign(x * 2)
        raise ValueError("failed halfway")

    with pytest.raises(ValueError, match="failed halfway"):
        broken(tf.constant(5.0))
    assert v.numpy() == 1.0  # an ordinary array, untouched


def _train(step_fn, model, x, y, n):
    losses = []
    for _ in range(n):
        losses.append(float(step_fn(x, y)))
    return losses, model.get_weights()


def test_compiled_training_matches_eager_and_lifts_all_state():
    rng = np.random.default_rng(0)
    x = rng.random((64, 32)).astype(np.float32)
    y = rng.random((64, 10)).astype(np.float32)
    results = []
    for compiled in (False, True):
        tf.random.set_seed(1)
        tf.keras.backend.clear_session()
        model = _seed_model()
        loss_object = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
        optimizer = tf.keras.optimizers.Adam(0.01)
        metric = tf.keras.metrics.Mean()

        def step(images, labels):
            with tf.GradientTape() as tape:
                loss = loss_object(labels, model(images, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            metric.update_state(loss)
            return loss

        fn = tf.function(step) if compiled else step
        losses, weights = _train(fn, model, x, y, 5)
        results.append(
            (
                losses,
                weights,
                int(optimizer.iterations.numpy()),
                float(metric.result().numpy()),
            )
        )
        if compiled:
            # Variables created on the first call (build, slots): traced twice.
            assert fn.experimental_get_tracing_count() == 2
    (l0, w0, it0, m0), (l1, w1, it1, m1) = results
    np.testing.assert_allclose(l1, l0, rtol=1e-5)
    for a, b in zip(w1, w0):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert it0 == it1 == 5 and m1 == pytest.approx(m0, rel=1e-5)


def test_batch_norm_statistics_and_rng_are_lifted(request):
    bn = tf.keras.layers.BatchNormalization()
    drop = tf.keras.layers.Dropout(0.5)
    x = np.random.default_rng(0).normal(2.0, 1.0, (16, 4)).astype(np.float32)

    @tf.function
    def run(inputs):
        return drop(bn(inputs, training=True), training=True)

    tf.random.set_seed(7)
    a, b = run(x).numpy(), run(x).numpy()
    assert not np.array_equal(a, b)  # fresh randomness on every call
    # The statistics moved twice, as real Keras's do after two training calls
    # (moving = 0.99 * moving + 0.01 * batch statistic, each time).
    real_tf = request.getfixturevalue("tf")
    real_bn = real_tf.keras.layers.BatchNormalization()
    real_bn(x, training=True)
    real_bn(x, training=True)
    for ours, theirs in (
        (bn.moving_mean, real_bn.moving_mean),
        (bn.moving_variance, real_bn.moving_variance),
    ):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5)
    np.testing.assert_allclose(
        bn.moving_mean.numpy(), (1 - 0.99**2) * x.mean(axis=0), rtol=1e-5
    )
    tf.random.set_seed(7)
    np.testing.assert_array_equal(run(x).numpy() != 0, a != 0)  # same sequence


def test_creating_variables_on_a_later_call_is_an_error():
    holder = []

    @tf.function
    def make(x):
        holder.append(tf.Variable(lambda: tf.zeros([2])))
        return x + holder[-1]

    with pytest.raises(  # TF's type and text
        ValueError, match="only supports singleton tf.Variables created on the first"
    ):
        make(tf.ones([2]))
        make(tf.ones([2]))
    with pytest.raises(ValueError, match="created from a traced value"):
        tf.function(lambda x: tf.Variable(x * 2))(tf.ones([2]))


def test_tapes_inside_a_compiled_function():
    @tf.function
    def derivatives(x):
        with tf.GradientTape() as t1:
            t1.watch(x)
            with tf.GradientTape() as t2:
                t2.watch(x)
                y = x**3
            dy = t2.gradient(y, x)
        with tf.GradientTape() as t3:
            t3.watch(x)
            z = tf.sin(x) * x
        return dy, t1.gradient(dy, x), t3.jacobian(z, x)

    x = tf.constant([1.0, 2.0])
    dy, d2y, jac = derivatives(x)
    np.testing.assert_allclose(dy.numpy(), 3 * x.numpy() ** 2)
    np.testing.assert_allclose(d2y.numpy(), 6 * x.numpy())
    expected = np.diag(np.sin(x.numpy()) + x.numpy() * np.cos(x.numpy()))
    np.testing.assert_allclose(jac.numpy(), expected, rtol=1e-6)

    @tf.custom_gradient
    def clip(v):
        return tf.identity(v), lambda dy: tf.clip_by_value(dy, -0.5, 0.5)

    @tf.function
    def clipped_grad(v):
        with tf.GradientTape() as tape:
            tape.watch(v)
            y = tf.reduce_sum(clip(v) * 3.0)
        return tape.gradient(y, v)

    np.testing.assert_array_equal(clipped_grad(x).numpy(), [0.5, 0.5])


def test_a_compiled_function_is_differentiable_from_outside():
    w = tf.Variable(3.0)

    @tf.function
    def f(a):
        return a * w * w

    a = tf.constant(2.0)
    for _ in range(2):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(a)
            out = f(a)
        assert float(tape.gradient(out, a)) == 9.0
        assert float(tape.gradient(out, w)) == 12.0


def test_returned_dicts_keep_their_key_order():
    """As TF's nest does (JAX's trees would sort the keys), traced or not."""

    @tf.function
    def f(x):
        return {"loss": x, "accuracy": [x * 2, {"z": x, "b": x}]}, {"a": 1.0}

    x = tf.constant(1.0)
    for outer_tape in (False, False, True):  # trace, compiled call, recorded call
        with tf.GradientTape() as tape:
            tape.watch(x)
            if not outer_tape:
                with tape.stop_recording():
                    logs, static = f(x)
            else:
                logs, static = f(x)
        assert list(logs) == ["loss", "accuracy"]
        assert list(logs["accuracy"][1]) == ["z", "b"]
        assert static == {"a": 1.0} and float(logs["accuracy"][0]) == 2.0


def test_print_runs_at_run_time(capfd, request):
    def run(m):
        @m.function
        def show(x):
            m.print("value:", x * 2)
            return x

        show(m.constant(1.0))
        show(m.constant(4.25))
        lines = capfd.readouterr().err.splitlines()
        return [line for line in lines if line.startswith("value:")]  # (no TF logs)

    want = run(request.getfixturevalue("tf"))  # (TF's C++ writes to fd 2)
    assert run(tf) == want and len(want) == 2  # once per call, TF's text


def test_python_control_flow_on_traced_tensors_names_the_alternatives():
    @tf.function(autograph=False)  # (AutoGraph converts it: test_autograph.py)
    def branchy(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(TypeError, match="jaxtape.cond"):
        branchy(tf.constant(1.0))

    @tf.function
    def good(x):
        y = tf.cond(x > 0, lambda: x * 2, lambda: -x)
        n = tf.while_loop(
            lambda i, s: i < 4,
            lambda i, s: (i + 1, s + i),
            [tf.constant(0), tf.constant(0)],
        )[1]
        k = tf.switch_case(tf.constant(1), [lambda: x, lambda: x * 10])
        m = tf.map_fn(lambda r: tf.reduce_sum(r), tf.ones([3, 2]))
        return y, n, k, m

    y, n, k, m = good(tf.constant(-3.0))
    assert float(y) == 3.0 and int(n) == 6 and float(k) == -30.0
    np.testing.assert_array_equal(m.numpy(), [2.0, 2.0, 2.0])
    y, n, k, m = good.python_function(tf.constant(-3.0))  # the same, eagerly
    assert float(y) == 3.0 and int(n) == 6 and float(k) == -30.0


def test_errors_for_escaped_tracers_and_signature_mismatch():
    leaked = []

    @tf.function
    def leak(x):
        leaked.append(x * 2)
        return x

    leak(tf.ones([2]))
    with pytest.raises(AttributeError, match="escaped from a jaxtape.function"):
        leaked[0].numpy()

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def fixed(x):
        return tf.reduce_sum(x, axis=1)

    assert fixed(tf.ones([2, 3])).shape == (2,)
    assert fixed(tf.ones([5, 3])).shape == (5,)
    with pytest.raises(TypeError, match="Binding inputs to tf.function failed"):
        fixed(tf.ones([2, 4]))


def test_methods_compile_per_instance():
    class Scaler(tf.Module):
        def __init__(self, k):
            super().__init__()
            self.k = tf.Variable(k)

        @tf.function
        def __call__(self, x):
            return x * self.k

    a, b = Scaler(2.0), Scaler(3.0)
    assert float(a(tf.constant(1.0))) == 2.0 and float(b(tf.constant(1.0))) == 3.0
    b.k.assign(4.0)
    assert float(b(tf.constant(1.0))) == 4.0


def test_fit_compiled_and_eager_give_the_same_numbers():
    rng = np.random.default_rng(3)
    x = rng.random((64, 8)).astype(np.float32)
    y = rng.integers(0, 3, 64)
    histories = []
    for eager in (True, False):
        tf.random.set_seed(0)
        model = tf.keras.Sequential(
            [
                tf.keras.Input((8,)),
                tf.keras.layers.Dense(16, activation="relu"),
                tf.keras.layers.Dense(3),
            ]
        )
        model.compile(
            optimizer="adam",
            metrics=["accuracy"],
            run_eagerly=eager,
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        )
        h = model.fit(x, y, batch_size=16, epochs=3, verbose=0, shuffle=False)
        histories.append((h.history, model.evaluate(x, y, verbose=0), model.predict(x)))
    (h0, e0, p0), (h1, e1, p1) = histories
    np.testing.assert_allclose(h1["loss"], h0["loss"], rtol=1e-5)
    np.testing.assert_allclose(h1["accuracy"], h0["accuracy"])
    np.testing.assert_allclose(e1, e0, rtol=1e-5)
    np.testing.assert_allclose(p1, p0, rtol=1e-5, atol=1e-6)


def test_a_custom_train_step_is_compiled():
    calls = []

    class Custom(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(1)

        def call(self, x):
            return self.dense(x)

        def train_step(self, data):
            calls.append(None)  # Python side effects run at trace time only
            x, y = data
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self(x) - y))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            self.loss_tracker.update_state(loss)
            return {"loss": self.loss_tracker.result()}

    model = Custom()
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    x = np.ones((32, 2), np.float32)
    y = np.full((32, 1), 3.0, np.float32)
    history = model.fit(x, y, batch_size=8, epochs=3, verbose=0)
    assert len(calls) <= 2  # traced, not run per step (12 steps)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_written_state_is_donated_only_when_nothing_else_holds_it():
    v = tf.Variable(tf.zeros([1000]))

    @tf.function
    def bump():
        v.assign_add(tf.ones([1000]))
        return tf.reduce_sum(v)

    bump()
    bump()  # v's buffer is now one that only the compiled program produced
    private = v._value
    bump()
    assert private.is_deleted()  # donated to XLA: updated in place
    snapshot = v.read_value()  # a reader shares the buffer ...
    bump()
    np.testing.assert_array_equal(snapshot.numpy(), np.full(1000, 3.0))  # ... kept
    assert float(bump()) == 5000.0 and v.numpy()[0] == 5.0

    @tf.function
    def bump_and_return():
        v.assign_add(tf.ones([1000]))
        return v  # an output that is the new state itself

    out1 = bump_and_return()
    bump_and_return()
    np.testing.assert_array_equal(out1.numpy(), np.full(1000, 6.0))
    assert v.numpy()[0] == 7.0


def test_seed_004_loop_compiled_matches_eager():
    # Seed 004's step (reshape, one_hot, squared error / batch) under tf.function.
    rng = np.random.default_rng(4)
    images = rng.random((16, 28, 28)).astype(np.float32)
    digits = rng.integers(0, 10, 16)
    weights = []
    for compiled in (False, True):
        tf.random.set_seed(3)
        model = tf.keras.Sequential(
            [tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)]
        )
        optimizer = tf.keras.optimizers.SGD(0.01)

        def train_step(x, y):
            with tf.GradientTape() as tape:
                x = tf.reshape(x, (-1, 28 * 28))
                out = model(x)
                y_onehot = tf.one_hot(y, depth=10)
                loss = tf.square(out - y_onehot)
                loss = tf.reduce_sum(loss) / x.shape[0]
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        step = tf.function(train_step) if compiled else train_step
        losses = [float(step(images, digits)) for _ in range(4)]
        assert losses[-1] < losses[0]
        weights.append(model.get_weights())
    for a, b in zip(*weights):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
