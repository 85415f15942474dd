"""`next(iterator)` inside `jaxtape.function` reads the next element on every
call, as TF's IteratorGetNext does (not the element seen while tracing).

Each script runs under TF and jaxtape and the results must agree.
"""

import numpy as np
import pytest


def two_per_call(m):
    it = iter(m.data.Dataset.range(10))

    @m.function
    def f():
        return next(it) * 10 + next(it)

    return [int(f()) for _ in range(3)]


def training_loop_on_batches(m):
    x = np.arange(12.0, dtype=np.float32).reshape(6, 2)
    it = iter(m.data.Dataset.from_tensor_slices({"x": x, "y": np.arange(6)}).batch(2))
    v = m.Variable(0.0)

    @m.function
    def step():
        e = next(it)
        v.assign_add(m.reduce_sum(e["x"]) + m.cast(m.reduce_sum(e["y"]), m.float32))
        return e["y"]

    seen = [step().numpy().tolist() for _ in range(3)]
    return seen, float(v.numpy())


def exhausted(m):
    it = iter(m.data.Dataset.range(2))

    @m.function
    def f():
        return next(it)

    out = [int(f()), int(f())]
    try:
        f()
    except m.errors.OutOfRangeError:
        out.append("OutOfRangeError")
    return out


def retraced(m):
    it = iter(m.data.Dataset.range(5))

    @m.function
    def f(k):
        return next(it) * k

    one = m.constant(1, m.int64)
    return [int(f(one)), int(f(2)), int(f(one)), int(f(2))]


def get_next_method(m):
    it = iter(m.data.Dataset.range(5).map(lambda x: x * 3))

    @m.function
    def f():
        return it.get_next()

    return [int(f()) for _ in range(3)]


def iterator_made_inside(m):
    ds = m.data.Dataset.range(5)

    @m.function
    def f():
        it = iter(ds)
        return next(it) + next(it)

    return [int(f()) for _ in range(2)]


SCRIPTS = [
    two_per_call,
    training_loop_on_batches,
    exhausted,
    retraced,
    get_next_method,
    iterator_made_inside,
]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.__name__)
def test_same_elements_as_tf(tf, script):
    import jaxtape

    assert script(jaxtape) == script(tf)


def test_shape_change_after_tracing_is_an_error():
    import jaxtape

    # 5 elements in batches of 2: the last batch is shorter than the traced one.
    it = iter(jaxtape.data.Dataset.range(5).batch(2))

    @jaxtape.function
    def f():
        return jaxtape.reduce_sum(next(it))

    assert [int(f()), int(f())] == [1, 5]
    with pytest.raises(jaxtape.errors.InvalidArgumentError, match="drop_remainder"):
        f()


def test_string_elements_raise_clearly():
    import jaxtape

    it = iter(jaxtape.data.Dataset.from_tensor_slices(np.array([b"a", b"b"])))

    @jaxtape.function
    def f():
        return next(it)

    with pytest.raises(NotImplementedError, match="next\\(iterator\\)"):
        f()
