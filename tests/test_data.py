"""jaxtape.data.Dataset: each method against NumPy on the same data."""

import threading
import time

import jax
import numpy as np
import pytest

import jaxtape as tf

Dataset = tf.data.Dataset


def _np(ds):
    return list(ds.as_numpy_iterator())


def test_from_tensor_slices_arrays_tuples_and_dicts():
    x = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    y = np.array([0, 1, 0, 1])
    got = _np(Dataset.from_tensor_slices(x))
    np.testing.assert_array_equal(np.stack(got), x)
    pairs = _np(Dataset.from_tensor_slices((x, y)))
    assert [int(b) for _, b in pairs] == y.tolist()
    np.testing.assert_array_equal(np.stack([a for a, _ in pairs]), x)
    dicts = _np(Dataset.from_tensor_slices({"a": x, "b": tf.constant(y)}))
    assert [sorted(d) for d in dicts] == [["a", "b"]] * 4
    np.testing.assert_array_equal(np.stack([d["a"] for d in dicts]), x)
    # TF's conversion rules: Python floats become float32, ints int32.
    spec = Dataset.from_tensor_slices(([1.0, 2.0], [1, 2])).element_spec
    assert (spec[0].dtype, spec[1].dtype) == (tf.float32, tf.int32)
    assert spec[0].shape == tf.TensorShape([])


def test_iteration_yields_tensors():
    (first,) = list(Dataset.from_tensors(np.ones((2, 2), np.float32)))
    assert isinstance(first, tf.Tensor) and first.shape == (2, 2)
    a, b = next(iter(Dataset.from_tensor_slices((np.ones(3), np.arange(3)))))
    assert isinstance(a, tf.Tensor) and isinstance(b, tf.Tensor)


def test_from_tensor_slices_errors():
    with pytest.raises(ValueError, match="same size in the first dimension"):
        Dataset.from_tensor_slices((np.ones(3), np.ones(4)))
    with pytest.raises(ValueError, match="rank >= 1"):
        Dataset.from_tensor_slices(np.float32(1.0))


def test_range_zip_enumerate():
    assert [int(v) for v in Dataset.range(5)] == list(range(5))
    assert [int(v) for v in Dataset.range(2, 11, 3)] == list(range(2, 11, 3))
    assert Dataset.range(3).element_spec.dtype == tf.int64
    z = Dataset.zip((Dataset.range(3), Dataset.range(10, 20)))
    assert [(int(a), int(b)) for a, b in z] == [(0, 10), (1, 11), (2, 12)]
    assert int(z.cardinality()) == 3
    zd = Dataset.zip({"a": Dataset.range(2), "b": Dataset.range(5, 7)})
    assert [{k: int(v) for k, v in d.items()} for d in zd] == [
        {"a": 0, "b": 5},
        {"a": 1, "b": 6},
    ]
    e = Dataset.from_tensor_slices(np.array([7, 8, 9])).enumerate(start=1)
    assert [(int(i), int(v)) for i, v in e] == [(1, 7), (2, 8), (3, 9)]
    with pytest.raises(TypeError, match="expects Datasets"):
        Dataset.zip((Dataset.range(2), [1, 2]))


@pytest.mark.parametrize("drop", [False, True])
def test_batch_and_unbatch_against_numpy(drop):
    x = np.arange(20).reshape(10, 2)
    ds = Dataset.from_tensor_slices(x).batch(4, drop_remainder=drop)
    want = [x[i : i + 4] for i in range(0, 10, 4)]
    if drop:
        want = [w for w in want if len(w) == 4]
    got = _np(ds)
    assert len(got) == len(want) == int(ds.cardinality())
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert ds.element_spec.shape.as_list() == [4 if drop else None, 2]
    back = np.stack(_np(ds.unbatch()))
    np.testing.assert_array_equal(back, x[: len(back)])
    assert ds.unbatch().element_spec.shape.as_list() == [2]


def test_map_spreads_tuples_and_passes_dicts():
    x, y = np.arange(6.0, dtype=np.float32), np.arange(6)
    ds = Dataset.from_tensor_slices((x, y)).map(lambda a, b: (a * 2.0, b + 1))
    got = _np(ds)
    np.testing.assert_allclose([a for a, _ in got], x * 2)
    assert [int(b) for _, b in got] == (y + 1).tolist()
    d = Dataset.from_tensor_slices({"v": x}).map(lambda e: tf.square(e["v"]))
    np.testing.assert_allclose(_np(d), x**2)
    assert d.element_spec == tf.TensorSpec([], tf.float32)


def test_parallel_map_keeps_order_and_uses_threads():
    threads = set()

    def slow_square(v):
        threads.add(threading.get_ident())
        time.sleep(0.002 * (5 - int(v) % 5))  # later elements finish first
        return v * v

    ds = Dataset.range(20).map(slow_square, num_parallel_calls=tf.data.AUTOTUNE)
    assert [int(v) for v in ds] == [i * i for i in range(20)]
    serial = Dataset.range(20).map(slow_square, num_parallel_calls=4)
    assert [int(v) for v in serial] == [i * i for i in range(20)]
    assert threading.get_ident() not in threads


def test_map_error_names_the_users_function():
    def bad_parse(v):
        if int(v) == 3:
            raise ValueError("cannot parse record")
        return v

    ds = Dataset.range(5).map(bad_parse)
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        list(ds)
    message = str(info.value)
    assert "bad_parse" in message and "test_data.py" in message
    assert "cannot parse record" in message and "element 3" in message
    assert isinstance(info.value.__cause__, ValueError)
    with pytest.raises(TypeError, match="expects a callable"):
        Dataset.range(2).map(3)


def test_filter_repeat_take_skip():
    ds = Dataset.range(10).filter(lambda v: v % 3 == 0)
    assert [int(v) for v in ds] == [0, 3, 6, 9]
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    r = Dataset.range(3).repeat(2)
    assert [int(v) for v in r] == [0, 1, 2, 0, 1, 2] and int(r.cardinality()) == 6
    forever = Dataset.range(3).repeat()
    assert int(forever.cardinality()) == tf.data.INFINITE_CARDINALITY
    assert [int(v) for v in forever.take(7)] == [0, 1, 2, 0, 1, 2, 0]
    assert int(forever.take(7).cardinality()) == 7
    assert [int(v) for v in Dataset.range(5).skip(2)] == [2, 3, 4]
    assert [int(v) for v in Dataset.range(5).take(-1)] == list(range(5))
    assert list(Dataset.range(5).skip(-1)) == []
    assert len(Dataset.range(5).skip(2)) == 3
    with pytest.raises(TypeError, match="infinite"):
        len(forever)
    with pytest.raises(ValueError, match="scalar bool"):
        list(Dataset.range(3).filter(lambda v: tf.stack([v, v]) > 0))


def test_shuffle_is_a_seeded_buffered_permutation():
    n = 50
    ds = Dataset.range(n).shuffle(10, seed=7)
    first = [int(v) for v in ds]
    second = [int(v) for v in ds]
    assert sorted(first) == list(range(n)) and first != list(range(n))
    assert first != second  # reshuffled each iteration
    again = Dataset.range(n).shuffle(10, seed=7)
    assert [int(v) for v in again] == first  # the same seed, the same orders
    assert [int(v) for v in again] == second
    fixed = Dataset.range(n).shuffle(10, seed=7, reshuffle_each_iteration=False)
    assert [int(v) for v in fixed] == [int(v) for v in fixed]
    # A buffer of k can only emit one of the first k elements first; 1 = no shuffle.
    assert all(int(next(iter(Dataset.range(n).shuffle(3)))) < 3 for _ in range(10))
    assert [int(v) for v in Dataset.range(n).shuffle(1)] == list(range(n))


def test_shuffle_follows_the_global_seed():
    tf.random.set_seed(123)
    a = [int(v) for v in Dataset.range(30).shuffle(30)]
    tf.random.set_seed(123)
    b = [int(v) for v in Dataset.range(30).shuffle(30)]
    assert a == b and sorted(a) == list(range(30))


def test_cache_runs_the_pipeline_once():
    # `map` traces its function (as TF): the per-element side effect is a
    # `py_function`, as it would be under TF.
    calls = []

    def count(v):
        calls.append(int(v))
        return v

    def record(v):
        return tf.py_function(count, [v], tf.int64)

    ds = Dataset.range(4).map(record).cache()
    assert [int(v) for v in ds] == [0, 1, 2, 3]
    assert [int(v) for v in ds] == [0, 1, 2, 3]
    assert calls == [0, 1, 2, 3]


def test_prefetch_runs_ahead_on_a_thread_and_puts_on_device():
    produced = []

    def count(v):
        produced.append((int(v), threading.get_ident()))
        return v

    def produce(v):  # (the side effect per element: a py_function, as in TF)
        return tf.py_function(count, [v], tf.int64)

    ds = Dataset.range(10).map(produce).prefetch(3)
    it = iter(ds)
    first = next(it)
    deadline = time.monotonic() + 60  # (a bound for a hang, not a timing)
    while len(produced) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)  # the background thread fills the buffer meanwhile
    assert len(produced) >= 4  # one handed over, three waiting
    assert {t for _, t in produced} != {threading.get_ident()}
    assert isinstance(first._value, jax.Array)
    assert [int(first)] + [int(v) for v in it] == list(range(10))


def test_prefetch_hands_on_errors():
    def explode(v):
        if int(v) == 2:
            raise RuntimeError("boom")
        return v

    ds = Dataset.range(5).map(explode).prefetch(tf.data.AUTOTUNE)
    with pytest.raises(tf.errors.InvalidArgumentError, match="boom"):
        list(ds)


def test_from_generator_and_element_spec():
    def gen():
        for i in range(3):
            yield np.full((2,), i, np.float32), i

    ds = Dataset.from_generator(
        gen, output_signature=(tf.TensorSpec([2], tf.float32), tf.TensorSpec([]))
    )
    got = _np(ds)
    assert [int(b) for _, b in got] == [0, 1, 2]
    assert ds.element_spec[0] == tf.TensorSpec([2], tf.float32)
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY


def test_keras_fit_evaluate_predict_accept_a_dataset():
    rng = np.random.default_rng(0)
    x = rng.random((64, 5)).astype(np.float32)
    y = rng.integers(0, 3, 64)

    def model_and_fit(**data):
        tf.random.set_seed(1)
        model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
        model.compile(
            optimizer=tf.keras.optimizers.SGD(0.1),
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        )
        history = model.fit(epochs=2, verbose=0, **data)
        return model, history.history

    ds = Dataset.from_tensor_slices((x, y)).batch(16)
    m1, h1 = model_and_fit(x=ds, validation_data=ds)
    m2, h2 = model_and_fit(
        x=x, y=y, batch_size=16, shuffle=False, validation_data=(x, y)
    )
    for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
        np.testing.assert_allclose(h1[key], h2[key], rtol=1e-5)
    np.testing.assert_allclose(
        m1.evaluate(ds, verbose=0), m2.evaluate(x, y, verbose=0), rtol=1e-5
    )
    np.testing.assert_allclose(
        m1.predict(Dataset.from_tensor_slices(x).batch(10), verbose=0),
        m2.predict(x, verbose=0),
        rtol=1e-5,
        atol=1e-6,  # batches of 10 and of 32: float32 sums in another order
    )
    with pytest.raises(ValueError, match="`y` must not be given"):
        m1.fit(ds, y, verbose=0)
    # steps_per_epoch on a repeated dataset: exactly that many steps per epoch.
    seen = []
    cb = tf.keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda b, logs: seen.append(b)
    )
    m1.fit(ds.repeat(), epochs=2, steps_per_epoch=3, verbose=0, callbacks=[cb])
    assert seen == [0, 1, 2, 0, 1, 2]


def test_as_numpy_iterator_gives_numpy_scalars_as_tf(tf):
    # scalar elements come out as NumPy scalars (TF's), not 0-d arrays
    import jaxtape

    def run(m):
        ds = m.data.Dataset.from_tensor_slices({"a": np.arange(2.0), "b": [3, 4]})
        return [
            (type(e["a"]).__name__, type(e["b"]).__name__, float(e["a"]))
            for e in ds.as_numpy_iterator()
        ]

    assert run(jaxtape) == run(tf)
