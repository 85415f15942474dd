"""`Dataset.map`/`filter` trace their function, as TF's do: Python side
effects run when it is traced, not per element; what cannot be traced (string
elements, NumPy calls) runs eagerly per element. Each row runs the same
pipeline under TF and jaxtape."""

import numpy as np
import pytest

import jaxtape


def _side_effects_run_once(m):
    seen = []

    def f(x):
        seen.append("traced")  # a Python side effect: at trace time only
        return x * 2

    ds = m.data.Dataset.range(5).map(f)
    out = [list(ds.as_numpy_iterator()) for _ in range(2)]
    return out, len(seen)


def _filter_side_effects_run_once(m):
    seen = []

    def keep(x):
        seen.append(1)
        return x % 2 == 0

    ds = m.data.Dataset.range(6).filter(keep)
    return list(ds.as_numpy_iterator()), len(seen)


def _py_function_runs_per_element(m):
    seen = []

    def count(x):
        seen.append(int(x))
        return x

    ds = m.data.Dataset.range(4).map(lambda x: m.py_function(count, [x], m.int64))
    return list(ds.as_numpy_iterator()), seen


def _variable_updates_per_element(m):
    v = m.Variable(0, dtype=m.int64)

    def f(x):
        v.assign_add(x)
        return x

    list(m.data.Dataset.range(5).map(f).as_numpy_iterator())
    return int(v.numpy())


def _string_elements(m):
    ds = m.data.Dataset.from_tensor_slices(["a", "bbb", "cc"])
    return list(ds.map(m.strings.length).as_numpy_iterator())


def _batched_elements(m):
    ds = m.data.Dataset.range(10).batch(4).map(lambda x: m.reduce_sum(x * x))
    return list(ds.as_numpy_iterator())


@pytest.mark.parametrize(
    "case",
    [
        _side_effects_run_once,
        _filter_side_effects_run_once,
        _py_function_runs_per_element,
        _variable_updates_per_element,
        _string_elements,
        _batched_elements,
    ],
    ids=lambda f: f.__name__.strip("_"),
)
def test_map_traces_its_function_as_tf(tf, case):
    want, got = case(tf), case(jaxtape)
    assert repr(_plain(got)) == repr(_plain(want))


def _plain(x):
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (np.generic, np.ndarray)):
        return np.asarray(x).tolist()
    return x


def test_random_ops_draw_anew_for_each_element():
    ds = jaxtape.data.Dataset.range(50).map(
        lambda x: jaxtape.random.uniform([]) + jaxtape.cast(x, jaxtape.float32) * 0
    )
    draws = list(ds.as_numpy_iterator())
    assert len(set(draws)) == 50
    assert draws != list(ds.as_numpy_iterator())  # and anew each epoch


def test_untraceable_functions_run_eagerly_per_element():
    seen = []

    def f(x):
        seen.append(int(x.numpy()))  # NumPy: eager only (TF raises here)
        return x + 1

    ds = jaxtape.data.Dataset.range(3).map(f)
    assert list(ds.as_numpy_iterator()) == [1, 2, 3]
    assert seen[-3:] == [0, 1, 2]


def test_errors_in_the_traced_function_name_it():
    ds = jaxtape.data.Dataset.range(4).map(lambda x: jaxtape.gather([1, 2, 3], x))
    with pytest.raises(jaxtape.errors.InvalidArgumentError, match="on element 3"):
        list(ds)
