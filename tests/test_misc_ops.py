"""TF's utility ops: print, debugging asserts, py_function, numpy_function,
IndexedSlices, and the global/op seed rules of random ops."""

import io

import numpy as np
import pytest

import jaxtape as tf


# -- print --------------------------------------------------------------------------
def test_print_formats_like_tf_print():
    out = io.StringIO()
    tf.print("loss:", tf.constant(0.5), output_stream=out)
    # tf.print summarizes to 3 items per end (TF's docs: `[0 1 2 ... 7 8 9]`).
    tf.print(tf.range(10), output_stream=out)
    tf.print(tf.range(10), summarize=-1, output_stream=out)
    tf.print(tf.constant([[1, 2], [3, 4]]), output_stream=out)
    assert out.getvalue().splitlines() == [
        "loss: 0.5",
        "[0 1 2 ... 7 8 9]",
        "[0 1 2 3 4 5 6 7 8 9]",
        "[[1 2]",
        " [3 4]]",
    ]


def test_print_defaults_to_stderr(capsys):
    tf.print(tf.constant(3))
    captured = capsys.readouterr()
    assert captured.err == "3\n" and captured.out == ""


# -- debugging asserts --------------------------------------------------------------
def test_assert_equal_and_near():
    tf.debugging.assert_equal(tf.constant([1, 2]), [1, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="did not hold"):
        tf.debugging.assert_equal(tf.constant([1, 2]), [1, 3], message="mismatch")
    tf.debugging.assert_near(tf.constant(1.0), 1.0 + 1e-7)
    with pytest.raises(tf.errors.InvalidArgumentError, match="tolerance"):
        tf.debugging.assert_near(tf.constant(1.0), 1.1)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.debugging.assert_less(tf.constant(2), 1)


def test_check_numerics_names_the_problem_as_tf_does():
    ok = tf.constant([1.0, 2.0])
    assert tf.debugging.check_numerics(ok, "fine") is ok
    with pytest.raises(
        tf.errors.InvalidArgumentError, match="bad values : Tensor had NaN values"
    ):
        tf.debugging.check_numerics(tf.constant([1.0, np.nan]), "bad values")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Tensor had Inf values"):
        tf.debugging.check_numerics(tf.constant([np.inf]), "x")


# -- py_function / numpy_function ---------------------------------------------------
def test_py_function_is_differentiable():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.py_function(lambda a: a * a * a, [x], tf.float32)
    assert y.dtype == tf.float32
    assert tape.gradient(y, x).numpy() == pytest.approx(27.0)  # 3 x^2


def test_numpy_function_runs_on_numpy_and_carries_no_gradient():
    seen = []

    def f(a):
        seen.append(type(a))
        return np.sort(a)[::-1]

    x = tf.constant([1.0, 3.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.numpy_function(f, [x], tf.float32)
    assert seen == [np.ndarray]
    np.testing.assert_array_equal(y.numpy(), [3.0, 2.0, 1.0])
    assert tape.gradient(y, x) is None


# -- IndexedSlices and gather gradients ---------------------------------------------
def test_indexed_slices_to_dense():
    s = tf.IndexedSlices(
        values=tf.constant([[1.0, 2.0], [3.0, 4.0]]),
        indices=tf.constant([0, 2]),
        dense_shape=[3, 2],
    )
    np.testing.assert_array_equal(s.to_dense().numpy(), [[1, 2], [0, 0], [3, 4]])
    assert s.dtype == tf.float32


def test_gather_gradient_sums_repeated_rows():
    # As TF: IndexedSlices, one row per gathered index; dense, repeats summed.
    params = tf.Variable(np.arange(8.0, dtype=np.float32).reshape(4, 2))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.gather(params, [0, 0, 3]) * [[1.0, 2.0]])
    grad = tape.gradient(y, params)
    assert isinstance(grad, tf.IndexedSlices)
    np.testing.assert_array_equal(grad.indices.numpy(), [0, 0, 3])
    np.testing.assert_array_equal(
        tf.convert_to_tensor(grad).numpy(), [[2, 4], [0, 0], [0, 0], [1, 2]]
    )


def test_gather_gradient_matches_tf(tf):  # noqa: F811 - `tf` here is real TF
    import jaxtape as jt

    values = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    theirs_var = tf.Variable(values)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.gather(theirs_var, [1, 3, 1]) ** 2)
    theirs = tf.convert_to_tensor(tape.gradient(y, theirs_var)).numpy()
    ours_var = jt.Variable(values)
    with jt.GradientTape() as tape:
        y = jt.reduce_sum(jt.gather(ours_var, [1, 3, 1]) ** 2)
    ours = jt.convert_to_tensor(tape.gradient(y, ours_var)).numpy()
    np.testing.assert_allclose(ours, theirs)


# -- random seeds (TF's tf.random.set_seed rules) ------------------------------------
def test_op_seed_streams_follow_tf_rules():
    tf.random.set_seed(1234)
    a1 = tf.random.uniform([2], seed=1).numpy()
    a2 = tf.random.uniform([2], seed=1).numpy()  # same op seed: the stream moves on
    b1 = tf.random.uniform([2], seed=2).numpy()  # another op seed: another stream
    assert not np.array_equal(a1, a2) and not np.array_equal(a1, b1)
    tf.random.set_seed(1234)  # resetting replays every stream
    np.testing.assert_array_equal(tf.random.uniform([2], seed=1).numpy(), a1)
    np.testing.assert_array_equal(tf.random.uniform([2], seed=1).numpy(), a2)
    np.testing.assert_array_equal(tf.random.uniform([2], seed=2).numpy(), b1)
    tf.random.set_seed(4321)  # another global seed: other values
    assert not np.array_equal(tf.random.uniform([2], seed=1).numpy(), a1)


def test_generators_from_one_seed_agree_and_split_differs():
    g1, g2 = tf.random.Generator.from_seed(5), tf.random.Generator.from_seed(5)
    np.testing.assert_array_equal(g1.normal([4]).numpy(), g2.normal([4]).numpy())
    child = g1.split(1)[0]
    assert not np.array_equal(child.normal([4]).numpy(), g1.normal([4]).numpy())
    samples = tf.random.Generator.from_seed(0).uniform([20000], 2.0, 4.0).numpy()
    assert samples.min() >= 2.0 and samples.max() < 4.0
    # U(2, 4): mean 3, standard error (2 / sqrt(12)) / sqrt(n); five of it.
    assert abs(samples.mean() - 3.0) < 5 * (2 / 12**0.5) / samples.size**0.5


def test_clip_by_global_norm_matches_tf_with_and_without_use_norm(tf):
    import jaxtape as jt

    a, b = np.array([3.0, 4.0], np.float32), np.array([12.0], np.float32)
    for use_norm in (None, 26.0):
        theirs, their_norm = tf.clip_by_global_norm(
            [tf.constant(a), None, tf.constant(b)],
            6.5,
            use_norm=None if use_norm is None else tf.constant(use_norm),
        )
        ours, our_norm = jt.clip_by_global_norm(
            [jt.constant(a), None, jt.constant(b)],
            6.5,
            use_norm=None if use_norm is None else jt.constant(use_norm),
        )
        assert ours[1] is None and theirs[1] is None
        for x, y in (
            (ours[0], theirs[0]),
            (ours[2], theirs[2]),
            (our_norm, their_norm),
        ):
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-6)
