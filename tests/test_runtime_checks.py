"""TF's run-time argument checks: bad indices and integer division by zero raise
`InvalidArgumentError` eagerly, under a tape and inside compiled functions,
where XLA alone would clamp or divide silently. Every row runs under TF too."""

import threading

import numpy as np
import pytest

import jaxtape

P = np.arange(6, dtype=np.float32).reshape(2, 3)

# name -> (op on module m and an index-like argument, good argument, bad arguments)
CASES = {
    "gather": (lambda m, i: m.gather(m.constant(P), i), [1, 0], [[2], [-1]]),
    "gather_axis1": (
        lambda m, i: m.gather(m.constant(P), i, axis=1),
        [[0, 2]],
        [[[0, 3]], [[-1, 0]]],
    ),
    "gather_nd": (
        lambda m, i: m.gather_nd(m.constant(P), i),
        [[1, 2], [0, 0]],
        [[[2, 0]], [[0, 3]], [[-1, 0]]],
    ),
    "tensor_scatter_nd_update": (
        lambda m, i: m.tensor_scatter_nd_update(m.constant(P), i, [9.0]),
        [[1, 1]],
        [[[2, 0]], [[0, -1]]],
    ),
    "tensor_scatter_nd_add": (
        lambda m, i: m.tensor_scatter_nd_add(m.constant(P), i, [9.0]),
        [[0, 2]],
        [[[0, 3]]],
    ),
    "scatter_nd": (
        lambda m, i: m.scatter_nd(i, m.constant([1.0, 2.0]), [4]),
        [[3], [0]],
        [[[4], [0]], [[-1], [0]]],
    ),
    "scalar_tensor_index": (
        lambda m, i: m.constant(P)[m.convert_to_tensor(i)[0]],
        [-2],
        [[2], [-3]],
    ),
    "scalar_tensor_index_dim1": (
        lambda m, i: m.constant(P)[:, m.convert_to_tensor(i)[0]],
        [2],
        [[3], [-4]],
    ),
    "floordiv": (
        lambda m, i: m.constant([7, -7]) // m.convert_to_tensor(i),
        [2, 3],
        [[2, 0]],
    ),
    "floormod": (lambda m, i: m.math.floormod(m.constant([7]), i), [3], [[0]]),
    "sparse_softmax_xent": (
        lambda m, i: m.nn.sparse_softmax_cross_entropy_with_logits(
            m.convert_to_tensor(i), m.constant(P)
        ),
        [2, 0],
        [[3, 0], [0, -1]],
    ),
    "sparse_categorical_crossentropy": (
        lambda m, i: m.keras.losses.SparseCategoricalCrossentropy(from_logits=True)(
            m.convert_to_tensor(i), m.constant(P)
        ),
        [2, 0],
        [[0, 3]],
    ),
    "embedding": (
        lambda m, i: _embedding(m)(m.expand_dims(i, 0)),
        [3, 0],
        [[4, 0], [0, -1]],
    ),
}

_LAYERS = {}


def _embedding(m):
    if m not in _LAYERS:
        layer = m.keras.layers.Embedding(4, 2)
        layer.build((None, 2))
        layer.set_weights([np.arange(8, dtype=np.float32).reshape(4, 2)])
        _LAYERS[m] = layer
    return _LAYERS[m]


def _outcome(thunk):
    try:
        return np.asarray(thunk())
    except Exception as e:  # noqa: BLE001 - the exception type is the result
        return type(e).__name__


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_checks_match_tf(name, tf):
    fn, good, bads = CASES[name]
    for arg in [good, *bads]:
        want = _outcome(lambda: fn(tf, arg))
        got = _outcome(lambda: fn(jaxtape, arg))
        if isinstance(want, str):
            assert want == "InvalidArgumentError", (arg, want)
            assert got == want, (name, arg, got)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=str(arg))


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_checks_match_tf(name, tf):
    fn, good, bads = CASES[name]
    tf_fn = tf.function(lambda i: fn(tf, i))
    jt_fn = jaxtape.function(lambda i: fn(jaxtape, i))
    for arg in [good, *bads]:
        i = np.asarray(arg, np.int32)  # an argument, so the check is at run time
        want = _outcome(lambda: tf_fn(tf.constant(i)))
        got = _outcome(lambda: jt_fn(jaxtape.constant(i)))
        if isinstance(want, str):
            assert want == "InvalidArgumentError", (arg, want)
            assert got == want, (name, arg, got)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=str(arg))


def test_checks_run_for_ops_recorded_on_a_tape():
    x = jaxtape.constant(P)
    with jaxtape.GradientTape() as tape:
        tape.watch(x)
        y = jaxtape.gather(x * 2.0, [1])
        with pytest.raises(jaxtape.errors.InvalidArgumentError, match="indices"):
            jaxtape.gather(x * 2.0, [2])
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [[0, 0, 0], [2, 2, 2]])


def test_messages_name_the_bad_index_as_tf_does(tf):
    c = jaxtape.constant(P)
    with pytest.raises(
        jaxtape.errors.InvalidArgumentError,
        match=r"indices\[1,0\] = 5 is not in \[0, 3\) \[Op:GatherV2\]",
    ):
        jaxtape.gather(c, [[0, 1], [5, 0]], axis=1)
    compiled = jaxtape.function(lambda i: jaxtape.gather_nd(c, i))
    with pytest.raises(
        jaxtape.errors.InvalidArgumentError,
        match=r"indices\[1\] = \[2, 0\] does not index into param shape \[2,3\]",
    ):
        compiled(jaxtape.constant([[0, 1], [2, 0]]))


def test_static_index_out_of_range_raises_at_the_call(tf):
    c = jaxtape.constant([1.0, 2.0, 3.0])
    for key in (5, -4, (0, 0)):
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.constant([1.0, 2.0, 3.0])[key]
        with pytest.raises(jaxtape.errors.InvalidArgumentError):
            c[key]
    with pytest.raises(ValueError):  # TF's shape inference, while tracing
        tf.function(lambda x: x[5])(tf.constant([1.0, 2.0]))
    with pytest.raises(ValueError):
        jaxtape.function(lambda x: x[5])(jaxtape.constant([1.0, 2.0]))


def test_traced_scalar_index_works_inside_a_function(tf):
    def script(m):
        x = m.constant([1.0, 2.0, 3.0])
        f = m.function(lambda i: x[i] * 2.0)
        return [float(f(m.constant(i)).numpy()) for i in (0, 2, -1)]

    assert script(jaxtape) == script(tf)


def test_a_failed_compiled_call_keeps_independent_updates_as_tf(tf):
    def script(m):
        c = m.constant([1.0, 2.0, 3.0])
        v = m.Variable(0.0)

        @m.function
        def step(i):
            v.assign_add(1.0)  # no data dependence on the failing gather
            return m.gather(c, i)

        seen = []
        for i in ([1], [5], [2]):
            try:
                step(m.constant(i))
            except m.errors.InvalidArgumentError:
                seen.append("error")
            seen.append(float(v.numpy()))
        return seen

    assert script(jaxtape) == script(tf) == [1.0, "error", 2.0, 3.0]


def test_a_failed_compiled_call_keeps_its_dependent_updates_too():
    # TF skips updates that depend on the failing op; a compiled jaxtape call
    # keeps all of its updates, computed with the bad element read as 0
    # (README: Differences from TensorFlow).
    c = jaxtape.constant([1.0, 2.0, 3.0])
    w = jaxtape.Variable(0.0)

    @jaxtape.function
    def step(i):
        w.assign(jaxtape.reduce_sum(jaxtape.gather(c, i)) + 10.0)

    step(jaxtape.constant([0]))
    assert float(w.numpy()) == 11.0
    with pytest.raises(jaxtape.errors.InvalidArgumentError):
        step(jaxtape.constant([3]))
    assert float(w.numpy()) == 10.0
    step(jaxtape.constant([2]))  # donated buffers were not lost
    assert float(w.numpy()) == 13.0


def test_runtime_checks_can_be_turned_off_for_compiled_functions():
    c = jaxtape.constant([1.0, 2.0, 3.0])
    jaxtape.config.experimental.set_runtime_checks(False)
    try:
        f = jaxtape.function(lambda i: jaxtape.gather(c, i))
        # As TF's gather on GPU: zeros for indices out of range.
        np.testing.assert_array_equal(
            f(jaxtape.constant([5, -1, 1])).numpy(), [0, 0, 2]
        )
    finally:
        jaxtape.config.experimental.set_runtime_checks(True)
    assert jaxtape.config.experimental.get_runtime_checks()
    with pytest.raises(jaxtape.errors.InvalidArgumentError):  # eager: always on
        jaxtape.gather(c, [5])
    g = jaxtape.function(lambda i: jaxtape.gather(c, i))
    with pytest.raises(jaxtape.errors.InvalidArgumentError):
        g(jaxtape.constant([5]))


ASSERTS = {
    "assert_equal": lambda m, x: m.debugging.assert_equal(x, m.constant([1.0, 2.0])),
    "assert_less": lambda m, x: m.debugging.assert_less(x, 3.0),
    "assert_greater_equal": lambda m, x: m.debugging.assert_greater_equal(x, 1.0),
    "assert_near": lambda m, x: m.debugging.assert_near(x, m.constant([1.0, 2.0])),
    "check_numerics": lambda m, x: m.debugging.check_numerics(m.math.log(x), "log"),
}


@pytest.mark.parametrize("name", sorted(ASSERTS))
def test_debugging_asserts_check_at_run_time_inside_functions(name, tf):
    fn = ASSERTS[name]
    for x in ([1.0, 2.0], [1.0, 4.0], [0.0, 2.0]):

        def run(m, fn=fn, x=x):
            @m.function
            def f(t):
                fn(m, t)
                return t * 2.0

            return f(m.constant(x))

        want = _outcome(lambda: run(tf))
        got = _outcome(lambda: run(jaxtape))
        if isinstance(want, str):
            assert got == want == "InvalidArgumentError", (name, x)
        else:
            np.testing.assert_allclose(got, want)


def test_two_threads_adding_to_one_variable_lose_no_update(tf):
    def script(m, n=5000):
        v = m.Variable(0.0)

        def work():
            for _ in range(n):
                v.assign_add(1.0)

        threads = [threading.Thread(target=work) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return float(v.numpy())

    assert script(jaxtape) == script(tf) == 10000.0


def test_two_threads_calling_one_compiled_function_lose_no_update(tf):
    def script(m, n=1000):
        v = m.Variable(0.0)
        w = m.Variable(m.zeros([64]))

        @m.function
        def step(x):
            v.assign_add(x)
            w.assign(w * 0.5 + x)  # a donated buffer each call
            return v.read_value()

        step(m.constant(0.0))
        errors = []

        def work():
            try:
                for _ in range(n):
                    step(m.constant(1.0))
                    _ = w.numpy()  # reads racing the other thread's donation
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        return float(v.numpy())

    assert script(jaxtape) == script(tf) == 2000.0


@pytest.fixture
def slow_flags(monkeypatch):
    """Every compiled call's failure flag reads as still being computed, so
    that `deferred_failures` puts each one off (small programs finish first)."""
    from jaxtape._src.core import checks

    monkeypatch.setattr(checks, "_ready", lambda flag: False)


@pytest.mark.parametrize("bad_batch", [0, 3])  # the first batch, and the last
def test_fit_raises_for_a_label_out_of_range_as_tf(bad_batch, tf, slow_flags):
    # Keras's loops read each step's failure flag without waiting for the step
    # (`checks.deferred_failures`): the error still comes out of `fit`, also
    # when the last step fails, and of `evaluate`.
    rng = np.random.default_rng(0)
    x = rng.random((32, 4), np.float32)
    y = rng.integers(0, 3, 32).astype(np.int32)
    y[bad_batch * 8 + 5] = 3

    def run(m):
        model = m.keras.Sequential([m.keras.Input((4,)), m.keras.layers.Dense(3)])
        model.compile(
            "sgd", m.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        )
        with pytest.raises(m.errors.InvalidArgumentError) as fit_error:
            model.fit(x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
        with pytest.raises(m.errors.InvalidArgumentError):
            model.evaluate(x, y, batch_size=8, verbose=0)
        return str(fit_error.value)

    assert "3" in run(jaxtape)
    run(tf)


def test_deferred_failures_raise_by_the_end_of_the_block(slow_flags):
    from jaxtape._src.core import checks

    table = jaxtape.Variable(np.arange(4, dtype=np.float32))

    @jaxtape.function
    def look(i):
        return jaxtape.gather(table, i)

    look(jaxtape.constant([0]))
    with pytest.raises(jaxtape.errors.InvalidArgumentError, match="4 is not in"):
        with checks.deferred_failures():
            for i in [1, 2, 4]:  # the last call fails
                look(jaxtape.constant([i]))
    with checks.deferred_failures():  # nothing is left over from the block above
        look(jaxtape.constant([3]))
