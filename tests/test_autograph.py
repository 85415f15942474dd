"""AutoGraph in jaxtape.function, checked against TF 2.21's tf.function.

Each case is a factory `make(tf)` returning a Python function written against
the module `tf`; the same source runs under `tensorflow.function` (real TF,
the oracle) and `jaxtape.function`: values, gradients, trace counts, printed
text and exception types are compared.
"""

import re
import sys

import numpy as np
import pytest

import jaxtape

tf_real = pytest.importorskip("tensorflow")


def _np(x):
    if isinstance(x, (list, tuple)):
        return [_np(v) for v in x]
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _run(module, make, args, **kwargs):
    fn = module.function(make(module), **kwargs)
    return fn, fn(*[module.constant(a) for a in args])


def _parity(make, *args, **kwargs):
    """Runs `make(tf)` under both functions; values must match."""
    _, want = _run(tf_real, make, args, **kwargs)
    _, got = _run(jaxtape, make, args, **kwargs)
    want, got = _np(want), _np(got)
    if isinstance(want, list):
        assert len(want) == len(got)
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=1e-6)
            assert g.dtype == w.dtype
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6)
        assert got.dtype == want.dtype
    return got


def _both_raise(make, *args, **kwargs):
    """Both functions raise the same exception type (TF's errors by name:
    `tf.errors.X` and `jaxtape.errors.X`); returns both messages."""
    with pytest.raises(Exception) as want:
        _run(tf_real, make, args, **kwargs)
    with pytest.raises(Exception) as got:
        _run(jaxtape, make, args, **kwargs)
    if isinstance(want.value, tf_real.errors.OpError):
        assert type(got.value) is getattr(jaxtape.errors, want.type.__name__)
    else:
        assert isinstance(got.value, want.type), (want.type, got.type)
    return str(want.value), str(got.value)


# -- if / elif / else ------------------------------------------------------------
def make_sign(tf):
    def sign(x):
        if x > 0:
            y = tf.constant(1.0)
        elif x < 0:
            y = tf.constant(-1.0)
        else:
            y = tf.constant(0.0)
        return y * 10

    return sign


@pytest.mark.parametrize("x", [3.0, -2.0, 0.0])
def test_if_elif_else_on_a_tensor(x):
    _parity(make_sign, x)


def make_python_if(tf):
    def f(x, flag=True):
        if flag:  # a Python bool: decided while tracing, one branch traced
            return x + 1
        return tf.constant("not traced")

    return f


def test_if_on_a_python_value_is_decided_at_trace_time():
    _parity(make_python_if, 1.0)


def make_conditional_expression(tf):
    def f(x):
        return x * 2 if x > 0 else -x

    return f


@pytest.mark.parametrize("x", [2.0, -5.0])
def test_conditional_expression(x):
    _parity(make_conditional_expression, x)


def make_python_numbers_in_branches(tf):
    def f(x):
        if x > 0:
            n = 1
        else:
            n = 2
        return n

    return f


def test_python_numbers_assigned_in_branches_become_tensors():
    _parity(make_python_numbers_in_branches, -1.0)  # int32, as TF converts


# -- loops -------------------------------------------------------------------------
def make_fizzbuzz(tf):
    def fizzbuzz(n):
        count = 0
        for i in tf.range(1, n + 1):
            if i % 15 == 0:
                tf.print("FizzBuzz")
            elif i % 3 == 0:
                tf.print("Fizz")
            elif i % 5 == 0:
                tf.print("Buzz")
            else:
                tf.print(i)
            count += 1
        return count

    return fizzbuzz


def _printed(err: str) -> list[str]:
    """Lines `tf.print` wrote, without TF's C++ log lines."""
    log = re.compile(r"^(\d{4}-\d\d-\d\d |[IWE]\d{4} |WARNING:|All log messages)")
    return [line for line in err.splitlines() if line and not log.match(line)]


def test_fizzbuzz_prints_each_iteration_in_order_on_every_call(capfd):
    def run(module):
        fn = module.function(make_fizzbuzz(module))
        counts = [int(fn(module.constant(n))) for n in (15, 6)]
        sys.stdout.flush()
        sys.stderr.flush()
        return counts, _printed(capfd.readouterr().err), fn

    want_counts, want_lines, tf_fn = run(tf_real)
    got_counts, got_lines, fn = run(jaxtape)
    assert got_counts == want_counts == [15, 6]
    assert got_lines == want_lines and len(got_lines) == 21
    assert fn.experimental_get_tracing_count() == 1  # the body traced once
    assert tf_fn.experimental_get_tracing_count() == 1


def make_while_break(tf):
    def f(x, n):
        i = tf.constant(0)
        s = tf.constant(0.0)
        while i < n:
            i += 1
            if s > 5.0:
                break
            s += x
        return i, s

    return f


@pytest.mark.parametrize("n", [10, 2, 0])
def test_while_with_break(n):
    _parity(make_while_break, 2.0, n)


def make_continue(tf):
    def f(x):
        s = tf.constant(0.0)
        for i in tf.range(10):
            if i % 2 == 0:
                continue
            s += tf.cast(i, tf.float32) * x
        return s

    return f


def test_for_with_continue():
    _parity(make_continue, 2.0)


def make_nested_loops(tf):
    def f(x, n):
        total = tf.zeros_like(x)
        for i in tf.range(n):
            j = tf.constant(0)
            while j < i:
                total += x * tf.cast(j, tf.float32)
                j += 1
            for k in [1.0, 2.0]:  # a Python list: unrolled
                total += k
        return total

    return f


def test_nested_loops():
    _parity(make_nested_loops, [1.0, 2.0], 4)


def make_loop_over_tensor(tf):
    def f(m):
        s = tf.constant(0.0)
        for row in m:
            s += tf.reduce_sum(row) * 2
        return s

    return f


def test_for_over_a_tensor_iterates_its_rows():
    _parity(make_loop_over_tensor, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])


def make_python_int_counter(tf):
    def f(x):
        n = 0
        for _ in tf.range(3):
            n += 1
        return n, x

    return f


def test_python_counter_in_a_loop_becomes_an_int32_tensor():
    _parity(make_python_int_counter, 1.0)


def make_defined_in_loop(tf):
    def f(x, n):
        for i in tf.range(n):
            z = x * tf.cast(i + 1, tf.float32)
        return z

    return f


def test_value_defined_only_inside_a_loop_is_available_after_it():
    _parity(make_defined_in_loop, 2.0, 3)


def test_value_defined_only_inside_a_loop_that_runs_zero_times():
    want, got = _both_raise(make_defined_in_loop, 2.0, 0)
    assert "loop must iterate at least once to initialize z" in want
    assert "loop must iterate at least once to initialize z" in got


def make_dynamic_range(tf):
    def f(x, n):
        s = x
        for i in range(n):  # Python's range of a Tensor: a loop, as tf.range
            s = s * 1.5 + tf.cast(i, tf.float32)
        return s

    return f


def test_python_range_of_a_tensor_loops():
    _parity(make_dynamic_range, 1.0, 4)


def make_float_range(tf):
    def f(x):
        s = x
        for v in tf.range(0.5, 2.0, 0.5):
            s = s + v
        return s

    return f


def test_float_range():
    _parity(make_float_range, 1.0)


# -- return, and/or/not, assert ----------------------------------------------------
def make_return_in_branches(tf):
    def f(x):
        if x > 0:
            return x * 3
        else:
            return -x

    return f


@pytest.mark.parametrize("x", [2.0, -1.0])
def test_return_inside_branches(x):
    _parity(make_return_in_branches, x)


def make_return_in_loop(tf):
    def f(x):
        for i in tf.range(10):
            if i > 3:
                return x * tf.cast(i, tf.float32)
        return x

    return f


def test_return_inside_a_tensor_loop_is_not_supported_as_in_tf():
    want, got = _both_raise(make_return_in_loop, 1.0)
    assert "return statement cannot be placed inside this TensorFlow loop" in want
    assert "return statement cannot be placed inside this TensorFlow loop" in got


def make_return_in_python_loop(tf):
    def f(x):
        for k in [1.0, 2.0, 3.0]:
            if k > 1.5:  # Python values: Python's return
                return x * k
        return x

    return f


def test_return_inside_a_python_loop():
    _parity(make_return_in_python_loop, 2.0)


def make_logic(tf):
    def f(x, y):
        both = x > 0 and y > 0
        either = x > 0 or y > 0
        neither = not (x > 0 or y > 0)
        if x > 0 and not y > 0:
            z = tf.constant(1)
        else:
            z = tf.constant(2)
        return both, either, neither, z

    return f


@pytest.mark.parametrize("x, y", [(1.0, -1.0), (1.0, 1.0), (-1.0, -1.0)])
def test_and_or_not_on_tensors(x, y):
    _parity(make_logic, x, y)


def make_assert(tf):
    def f(x):
        assert x > 0, "x must be positive"
        return x * 2

    return f


def test_assert_becomes_a_runtime_check():
    feature = tf_real.autograph.experimental.Feature.ASSERT_STATEMENTS
    _parity(make_assert, 1.0, experimental_autograph_options=feature)
    want, got = _both_raise(make_assert, -1.0, experimental_autograph_options=feature)
    assert "assertion failed: [x must be positive]" in want
    assert "assertion failed: [x must be positive]" in got
    # jaxtape converts `assert` without the option too (TF then raises a TypeError)
    fn = jaxtape.function(make_assert(jaxtape))
    with pytest.raises(jaxtape.errors.InvalidArgumentError, match="must be positive"):
        fn(jaxtape.constant(-1.0))


# -- errors with TF's types and texts ---------------------------------------------
def make_undefined_in_else(tf):
    def f(x):
        if x > 0:
            y = x
        return y

    return f


def make_undefined_in_main(tf):
    def f(x):
        if x > 0:
            pass
        else:
            y = x
        return y

    return f


def make_branch_dtypes(tf):
    def f(x):
        y = 1
        if x > 0:
            y = x
        return y

    return f


def make_none_in_branch(tf):
    def f(x):
        y = None
        if x > 0:
            y = x
        return y

    return f


def make_structure_in_branches(tf):
    def f(x):
        if x > 0:
            y = (x, x)
        else:
            y = x
        return y

    return f


def make_loop_dtype_change(tf):
    def f(x):
        s = tf.constant(0)
        for _ in tf.range(3):
            s = tf.cast(s, tf.float32) + x
        return s

    return f


def make_while_dtype_change(tf):
    def f(x):
        s = tf.constant(0)
        while s < 3:
            s = tf.cast(s, tf.float32) + x
        return s

    return f


def make_loop_shape_change(tf):
    def f(x):
        s = x
        for _ in tf.range(3):
            s = tf.concat([s, x], 0)
        return s

    return f


def make_loop_structure_change(tf):
    def f(x):
        s = x
        for _ in tf.range(3):
            s = (s, s)
        return s

    return f


def make_used_before_defined_in_loop(tf):
    def f(x):
        for _ in tf.range(3):
            y = y + x  # noqa: F821 - the error under test
        return y

    return f


def make_python_while_turning_tensor(tf):
    def f(x):
        i = 0
        while i < 3:
            i = i + x
        return i

    return f


@pytest.mark.parametrize(
    "make, arg, text",
    [
        (
            make_undefined_in_else,
            1.0,
            "'y' must also be initialized in the else branch",
        ),
        (
            make_undefined_in_main,
            1.0,
            "'y' must also be initialized in the main branch",
        ),
        (
            make_branch_dtypes,
            1.0,
            "'y' has dtype float32 in the main branch, but dtype int32 in the else "
            "branch",
        ),
        (make_none_in_branch, 1.0, "'y' is None at the end of the else branch."),
        (
            make_structure_in_branches,
            1.0,
            "'y' must have the same nested structure in the main and else branches",
        ),
        (
            make_loop_dtype_change,
            1.0,
            "'s' has dtype int32 before the loop, but dtype float32 after one "
            "iteration",
        ),
        (
            make_while_dtype_change,
            1.0,
            "'s' has dtype int32 before the loop, but dtype float32 after one "
            "iteration",
        ),
        (
            make_loop_shape_change,
            [1.0],
            "'s' has shape (1,) before the loop, but shape (2,) after one iteration",
        ),
        (
            make_loop_structure_change,
            1.0,
            "'s' does not have the same nested structure after one iteration",
        ),
        (make_used_before_defined_in_loop, 1.0, "'y' must be defined before the loop"),
        (
            make_python_while_turning_tensor,
            1.0,
            "The condition of while loop started as non-Tensor, then changed to Tensor",
        ),
    ],
    ids=lambda v: getattr(v, "__name__", "")[5:] or None,
)
def test_errors_have_tf_types_and_texts(make, arg, text):
    want, got = _both_raise(make, arg)
    assert text in want
    assert text in got
    assert "in user code:" in got  # TF's rewritten message: where, in user code


def test_branch_shapes_must_match_in_jaxtape():
    def f(x):
        if x > 0:
            y = jaxtape.zeros([2])
        else:
            y = jaxtape.zeros([3])
        return y

    # TF gives y an unknown shape; XLA needs one: a clear error naming y.
    with pytest.raises(ValueError, match="'y' has shape \\(2,\\) in the main branch"):
        jaxtape.function(f)(jaxtape.constant(1.0))


def test_autograph_false_keeps_the_clear_error():
    with pytest.raises(TypeError, match="jaxtape.cond"):
        jaxtape.function(make_sign(jaxtape), autograph=False)(jaxtape.constant(1.0))
    with pytest.raises(TypeError):  # TF: OperatorNotAllowedInGraphError, a TypeError
        tf_real.function(make_sign(tf_real), autograph=False)(tf_real.constant(1.0))


# -- what gets converted -----------------------------------------------------------
def _helper_abs(x):  # a user function called from converted code: converted too
    if x < 0:
        return -x
    return x


def make_calls_user_function(tf):
    def f(x):
        return _helper_abs(x) + 1

    return f


def test_called_user_functions_are_converted():
    _parity(make_calls_user_function, -3.0)


def make_nested_function(tf):
    def f(x):
        def inner(v):
            while v < 10:
                v = v * 2
            return v

        return inner(x)

    return f


def test_nested_functions_are_converted():
    _parity(make_nested_function, 1.5)


def test_lambda_is_converted():
    for module in (tf_real, jaxtape):
        fn = module.function(lambda x: x * 2 if x > 0 else -x)
        assert float(fn(module.constant(-4.0))) == 4.0


class _Scaler:
    def __init__(self, tf):
        self.tf = tf
        self.factor = 3.0

    def scale(self, x):
        if x > 0:
            x = x * self.factor
        return x


def test_method_is_converted():
    for module in (tf_real, jaxtape):
        obj = _Scaler(module)
        fn = module.function(obj.scale)
        assert float(fn(module.constant(2.0))) == 6.0
        assert float(fn(module.constant(-2.0))) == -2.0


class _Model(jaxtape.Module):
    @jaxtape.function
    def __call__(self, x):
        s = x
        for _ in jaxtape.range(3):
            s = s * 2.0
        return s


def test_decorated_method_is_converted():
    assert float(_Model()(jaxtape.constant(1.0))) == 8.0


def test_library_functions_are_not_converted(monkeypatch):
    from jaxtape._src.autograph import conversion

    converted = []
    real = conversion._convert

    def spy(entity, options):
        converted.append(entity)
        return real(entity, options)

    monkeypatch.setattr(conversion, "_convert", spy)

    @jaxtape.function
    def f(x):
        y = jaxtape.nn.relu(x)
        return np.float32(2.0) * jaxtape.reduce_sum(y) + _helper_abs(x)

    f(jaxtape.constant(-2.0))
    names = [e.__name__ for e in converted]
    assert names == ["f", "_helper_abs"], names


def test_do_not_convert():
    @jaxtape.autograph.experimental.do_not_convert
    def plain(x):
        if x > 0:  # not converted: Python's `if` on a traced tensor
            return x
        return -x

    @jaxtape.function
    def f(x):
        return plain(x)

    with pytest.raises(TypeError, match="jaxtape.cond"):
        f(jaxtape.constant(1.0))


def test_to_code_prints_tf_s_generated_code():
    def f(x):
        if x > 0:
            x = x * x
        return x

    want = tf_real.autograph.to_code(f)
    got = jaxtape.autograph.to_code(f)
    assert got == want


def test_to_graph_runs_eagerly_and_inside_functions():
    def f(x, n):
        s = x
        for _ in jaxtape.range(n):
            if s > 5:
                s = s - 1
            else:
                s = s * 3
        return s

    g = jaxtape.autograph.to_graph(f)
    eager = float(g(jaxtape.constant(1.0), 4))
    traced = float(jaxtape.function(g, autograph=False)(jaxtape.constant(1.0), 4))
    assert eager == traced == float(tf_real.autograph.to_graph(f)(1.0, 4)) == 7.0


def test_autograph_options():
    feature = jaxtape.autograph.experimental.Feature
    for ok in (
        feature.ASSERT_STATEMENTS,
        feature.NAME_SCOPES,
        [feature.EQUALITY_OPERATORS],
    ):
        fn = jaxtape.function(make_sign(jaxtape), experimental_autograph_options=ok)
        assert float(fn(jaxtape.constant(2.0))) == 10.0
    with pytest.raises(NotImplementedError, match="LISTS"):
        jaxtape.function(
            make_sign(jaxtape), experimental_autograph_options=feature.ALL
        )(jaxtape.constant(1.0))


def make_equality(tf):
    def f(x):
        if x == 2.0 and x != 3.0:
            y = x * 10
        else:
            y = x
        return y

    return f


@pytest.mark.parametrize("x", [2.0, 3.0])
def test_equality_operators_feature(x):
    feature = tf_real.autograph.experimental.Feature.EQUALITY_OPERATORS
    _parity(make_equality, x, experimental_autograph_options=feature)
    _parity(make_equality, x)


def test_set_loop_options_maximum_iterations():
    def make(tf):
        def f(x):
            i = tf.constant(0)
            while x > 0:
                tf.autograph.experimental.set_loop_options(maximum_iterations=5)
                i += 1
            return i

        return f

    assert int(_parity(make, 1.0)) == 5


# -- trace counts ------------------------------------------------------------------
def test_trace_counts_match():
    def count(module):
        traces = []

        def f(x, n):
            traces.append(None)
            s = x
            for i in module.range(n):
                if s > 10:
                    s = s / 2
                s = s + module.cast(i, module.float32)
            return s

        fn = module.function(f)
        for n in (3, 5, 3):
            fn(module.constant(1.0), module.constant(n))
        fn(module.constant([1.0, 2.0])[0], module.constant(4))
        return len(traces), fn.experimental_get_tracing_count()

    assert count(jaxtape) == count(tf_real) == (1, 1)


# -- state, datasets, gradients ----------------------------------------------------
def test_variables_assigned_in_branches_and_loops():
    def run(tf):
        v = tf.Variable(0.0)
        count = tf.Variable(0)

        @tf.function
        def step(x, n):
            if x > 0:
                v.assign(x)
            else:
                v.assign_sub(1.0)
            while count < n:  # the condition reads a Variable: no loop variable
                count.assign_add(3)
            return v.read_value()

        out = [float(step(tf.constant(a), tf.constant(10))) for a in (5.0, -1.0)]
        return out, float(v.numpy()), int(count.numpy())

    assert run(jaxtape) == run(tf_real) == ([5.0, 4.0], 4.0, 12)


def _train_on_dataset(tf):
    x = np.linspace(-1, 1, 20).astype("float32")[:, None]
    y = 3 * x + 1
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8)  # 8, 8 and 4
    w = tf.Variable(tf.zeros([1, 1]))
    b = tf.Variable(tf.zeros([1]))
    opt = tf.keras.optimizers.SGD(0.1)
    traces = []

    @tf.function
    def train(epochs):
        traces.append(None)
        loss = tf.constant(0.0)
        for _ in tf.range(epochs):
            for xb, yb in ds:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((tf.matmul(xb, w) + b - yb) ** 2)
                grads = tape.gradient(loss, [w, b])
                opt.apply_gradients(zip(grads, [w, b]))
        return loss

    losses = [float(train(tf.constant(e))) for e in (3, 20)]
    return losses, w.numpy().ravel(), b.numpy(), len(traces)


def test_training_loop_over_a_dataset_inside_a_function():
    want = _train_on_dataset(tf_real)
    # Inside a staged loop, each iteration sees the call's one pass (TF reads
    # the Dataset per iteration: the same elements here, unshuffled): said.
    with pytest.warns(UserWarning, match="reads the Dataset once per call"):
        got = _train_on_dataset(jaxtape)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5)
    # The Python body: once per shape in TF; jaxtape traces the first call
    # twice, as when it creates Variables (the Dataset's pass is held in some).
    assert want[3] == 1 and got[3] == 2


def test_a_dataset_loop_reads_the_dataset_on_every_call():
    def run(tf):
        v = tf.Variable(0, dtype=tf.int64)
        ds = tf.data.Dataset.range(4).map(lambda x: x * 2 + v).batch(3)  # 3, 1

        @tf.function
        def total():
            s = tf.constant(0, tf.int64)
            for x in ds:
                s += tf.reduce_sum(x)
            return s

        out = []
        for _ in range(3):
            out.append(int(total()))
            v.assign_add(10)  # the Dataset's next pass sees it
        return out

    assert run(jaxtape) == run(tf_real) == [12, 52, 92]


def test_a_dataset_loop_whose_dataset_changes_length_says_how_to_fix_it():
    limit = jaxtape.Variable(4, dtype=jaxtape.int64)
    ds = jaxtape.data.Dataset.range(6).filter(lambda x: x < limit)

    @jaxtape.function
    def total():
        s = jaxtape.constant(0, jaxtape.int64)
        for x in ds:
            s += x
        return s

    assert int(total()) == 6
    assert int(total()) == 6  # read again: the same length
    limit.assign(5)
    with pytest.raises(ValueError, match="changed its number of elements"):
        total()


def make_second_derivative(tf):
    def f(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = x
                for _ in tf.range(3):
                    if y > 2.0:
                        y = y * x
                    else:
                        y = y + x * x
            dy = inner.gradient(y, x)
        return y, dy, outer.gradient(dy, x)

    return f


@pytest.mark.parametrize("x", [1.5, 0.5])
def test_second_derivatives_through_a_converted_loop_inside_a_function(x):
    _parity(make_second_derivative, x)


def make_sine_loop(tf):
    def f(x):
        y = x
        for _ in tf.range(4):
            y = tf.sin(y) * x
        return y

    return f


def test_second_derivatives_through_a_converted_loop_from_outside():
    import jax

    def grads(tf):
        fn = tf.function(make_sine_loop(tf))
        x = tf.constant(0.7)
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = fn(x)
            g = inner.gradient(y, x)
        return [float(y), float(g), float(outer.gradient(g, x))]

    def pure(x):
        y = x
        for _ in range(4):
            y = jax.numpy.sin(y) * x
        return y

    want = [float(pure(0.7)), float(jax.grad(pure)(0.7))]
    want.append(float(jax.grad(jax.grad(pure))(0.7)))
    np.testing.assert_allclose(grads(jaxtape), want, rtol=1e-5)
    np.testing.assert_allclose(grads(tf_real), want, rtol=1e-5)


# -- printing ----------------------------------------------------------------------
def make_printing(tf):
    def f(n):
        print("trace: start")  # Python's print: once, while tracing
        total = tf.constant(0)
        for i in tf.range(n):
            print("trace: loop body")
            if i % 2 == 0:
                print("trace: even branch")
                tf.print("even", i)
            else:
                tf.print("odd", i)
            total += i
        tf.print("total", total)
        return total

    return f


def test_print_and_jaxtape_print_order(capfd):
    def run(tf):
        fn = tf.function(make_printing(tf))
        for n in (3, 2):
            fn(tf.constant(n))
            tf.print("after call", n)  # eager, after the call's own prints
        sys.stdout.flush()
        out = capfd.readouterr()
        return out.out.splitlines(), _printed(out.err)

    want = run(tf_real)
    got = run(jaxtape)
    assert got == want
    assert got[0] == ["trace: start", "trace: loop body", "trace: even branch"]
    assert got[1][:5] == ["even 0", "odd 1", "even 2", "total 3", "after call 3"]


def test_set_verbosity_logs_the_generated_code(capsys):
    def f(x):
        if x > 0:
            x = -x
        return x

    jaxtape.autograph.set_verbosity(2, alsologtostdout=True)
    try:
        jaxtape.autograph.to_graph(f)
    finally:
        jaxtape.autograph.set_verbosity(0)
    out = capsys.readouterr().out
    assert "def tf__f(x):" in out and "ag__.if_stmt" in out


def test_trace_prints_while_tracing(capsys):
    def make(tf):
        @tf.function
        def f(x):
            tf.autograph.trace("tracing", 1)
            return x + 1

        return f

    for module in (jaxtape, tf_real):
        f = make(module)
        f(module.constant(1.0))
        f(module.constant(2.0))
        assert capsys.readouterr().out == "tracing 1\n"


def make_rnn(tf):
    def rnn(xs, w):
        ta = tf.TensorArray(tf.float32, size=xs.shape[0])
        h = tf.zeros([2])
        for i in tf.range(xs.shape[0]):
            h = tf.tanh(xs[i] * w + h)
            ta = ta.write(i, h)
        return ta.stack()

    return rnn


def test_rnn_style_loop_writing_a_tensor_array_with_gradients():
    xs = np.arange(6, dtype=np.float32).reshape(3, 2) / 5

    def run(tf):
        w = tf.Variable([0.5, -0.3])
        with tf.GradientTape() as tape:
            out = tf.function(make_rnn(tf))(tf.constant(xs), w)
            loss = tf.reduce_sum(out * out)
        return out.numpy(), tape.gradient(loss, w).numpy()

    (want, want_grad), (got, got_grad) = run(tf_real), run(jaxtape)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-5)


def make_range_break(tf):
    def f(x):
        s = x
        for i in tf.range(10):
            if s > 10.0:
                break
            s = s * 2.0 + tf.cast(i, tf.float32)
        return s

    return f


@pytest.mark.parametrize("x", [1.0, 20.0])
def test_for_over_a_range_with_break(x):
    _parity(make_range_break, x)


def make_dataset_break(tf):
    def f(limit):
        s = tf.constant(0, tf.int64)
        for b in tf.data.Dataset.range(10):
            if b > limit:
                break
            s += b
        return s

    return f


def test_for_over_a_dataset_with_break():
    _parity(make_dataset_break, np.int64(3))


def make_defined_in_loop_with_break(tf):
    def f(x):
        for i in tf.range(5):
            last = x * tf.cast(i, tf.float32)
            if last > 2.0:
                break
        return last

    return f


def test_value_defined_in_a_loop_with_break():
    _parity(make_defined_in_loop_with_break, 1.0)
