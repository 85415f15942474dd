"""Control flow (`cond`, `switch_case`, `case`, `while_loop`, `for_range`,
`map_fn`, `scan`, `foldl`, `foldr`) and `TensorArray`, against TF 2.21.

Every parity row runs the same code with real TensorFlow (`tf.function`) and
jaxtape (`jaxtape.function`): values, gradients taken inside and outside the
function, watched variables, trace counts and exception types. Where jaxtape
differs on purpose (XLA needs static shapes; reverse mode through a loop of
unknown length), the test says so and checks jaxtape's error.
"""

import io
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtape as jt


# -- harness -----------------------------------------------------------------------
def _leaves(x) -> list:
    """A result's leaves in TF's `nest` order (dicts by sorted key)."""
    if isinstance(x, dict):
        return [v for k in sorted(x) for v in _leaves(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _leaves(item)]
    return [x]


def _value(leaf):
    if leaf is None or isinstance(leaf, (str, bytes)):
        return leaf
    return np.asarray(leaf)


def _run(m, build, args):
    return build(m)(*[m.constant(a) for a in args])


def _assert_same(want, got, rtol=1e-5):
    w, g = _leaves(want), _leaves(got)
    assert len(w) == len(g), (want, got)
    for a, b in zip(w, g):
        a, b = _value(a), _value(b)
        if a is None or b is None:
            assert a is None and b is None, (want, got)
            continue
        assert a.dtype == b.dtype, (a, b)
        np.testing.assert_allclose(b, a, rtol=rtol, atol=1e-6)


def _parity(tf, build, *args, rtol=1e-5):
    """Runs `build(module)(*constants)` with TF and jaxtape; same results."""
    want = _run(tf, build, args)
    got = _run(jt, build, args)
    _assert_same(want, got, rtol)
    return got


def _raises_as_tf(tf, build, *args):
    """Both raise, with the same exception type; returns jaxtape's exception."""
    with pytest.raises(Exception) as theirs:
        _run(tf, build, args)
    with pytest.raises(Exception) as ours:
        _run(jt, build, args)
    assert type(ours.value).__name__ == type(theirs.value).__name__, (
        theirs.value,
        ours.value,
    )
    return ours.value


# -- a tape inside the function: the whole construct is one recorded op --------------
def _tape_through_cond(m):
    x = m.Variable(2.0)

    @m.function
    def f(c):
        with m.GradientTape() as t:
            y = m.cond(c > 0, lambda: x * x, lambda: x * 3.0)
        return t.gradient(y, x)

    return f


@pytest.mark.parametrize("pred", [1.0, -1.0], ids=["true", "false"])
def test_tape_inside_function_differentiates_through_cond(tf, pred):
    got = _parity(tf, _tape_through_cond, pred)
    assert got is not None  # (was None: the branches ran with the tapes paused)


def _cond_closures(m):
    v = m.Variable(2.0)
    seen = []

    @m.function
    def f(x):
        with m.GradientTape() as t:
            t.watch(x)
            h = x * 2.0
            y = m.cond(x > 0, lambda: v * h * x, lambda: v + h * 3.0)
        seen.append([w.name for w in t.watched_variables()])
        return t.gradient(y, [x, v, h])

    f.seen = seen
    return f


@pytest.mark.parametrize("x", [1.5, -1.5], ids=["true", "false"])
def test_cond_gradients_reach_closed_over_tensors_and_variables(tf, x):
    _parity(tf, _cond_closures, x)
    theirs, ours = _cond_closures(tf), _cond_closures(jt)
    theirs(tf.constant(x))
    ours(jt.constant(x))
    assert ours.seen == theirs.seen == [["Variable:0"]]


def _switch_grad(m):
    v = m.Variable(3.0)

    @m.function
    def f(i, x):
        with m.GradientTape() as t:
            t.watch(x)
            y = m.switch_case(
                i, [lambda: x * x, lambda: v * x, lambda: m.sin(x) * v * v]
            )
        return y, t.gradient(y, [x, v])

    return lambda i, x: f(m.cast(i, m.int32), x)


@pytest.mark.parametrize("i", [0, 1, 2, 5, -1])
def test_switch_case_gradients_and_out_of_range_index(tf, i):
    _parity(tf, _switch_grad, float(i), 0.7)


def _while_max(m):
    v = m.Variable(1.5)

    @m.function
    def f(x):
        with m.GradientTape() as t:
            t.watch(x)
            i, y = m.while_loop(
                lambda i, y: y < 100.0,
                lambda i, y: (i + 1, y * x * v),
                (0, x),
                maximum_iterations=10,
            )
        return i, y, t.gradient(y, [x, v])

    return f


@pytest.mark.parametrize("x", [2.0, 0.5], ids=["stops_early", "runs_to_maximum"])
def test_while_loop_with_maximum_iterations_differentiates_inside(tf, x):
    _parity(tf, _while_max, x)


def _cond_in_while(m):
    v = m.Variable(0.5)

    @m.function
    def f(x):
        with m.GradientTape() as t:
            t.watch(x)

            def body(i, y):
                y = m.cond(y > 3.0, lambda: y * v, lambda: y * x)
                return i + 1, y

            _, y = m.while_loop(lambda i, y: i < 5, body, (0, x), maximum_iterations=5)
        return y, t.gradient(y, [x, v])

    return f


def test_cond_nested_in_while_loop(tf):
    _parity(tf, _cond_in_while, 2.0)


def _second_order(construct):
    def build(m):
        @m.function
        def f(x):
            with m.GradientTape() as t2:
                t2.watch(x)
                with m.GradientTape() as t1:
                    t1.watch(x)
                    if construct == "cond":
                        y = m.cond(x > 0, lambda: x**3, lambda: x**2)
                    else:
                        y = m.while_loop(
                            lambda i, s: i < 2,
                            lambda i, s: (i + 1, s * x),
                            (0, x),
                            maximum_iterations=2,
                        )[1]
                g = t1.gradient(y, x)
            return g, t2.gradient(g, x)

        return f

    return build


@pytest.mark.parametrize("construct", ["cond", "while_loop"])
@pytest.mark.parametrize("x", [2.0, -2.0])
def test_second_order_gradient_through_cond_and_loop(tf, construct, x):
    _parity(tf, _second_order(construct), x)


def _map_and_scans(m):
    v = m.Variable([1.0, 2.0, 3.0])

    @m.function
    def f(x):
        with m.GradientTape() as t:
            t.watch(x)
            y = m.map_fn(lambda r: m.reduce_sum(r * v) * x[0, 1], x)
            col = x[:, 0]
            s = m.scan(lambda a, e: a * e + 1.0, col)
            fl = m.foldl(lambda a, e: a * e, col, initializer=1.0)
            fr = m.foldr(lambda a, e: a * 2.0 + e * v[0], col)
            total = m.reduce_sum(y) + m.reduce_sum(s) + fl + fr
        return y, s, fl, fr, t.gradient(total, [x, v])

    return f


def test_map_fn_scan_foldl_foldr_gradients(tf):
    _parity(tf, _map_and_scans, np.arange(1.0, 7.0).reshape(2, 3).astype("float32"))


def _pass_through(m):
    @m.function
    def f(x, p):
        with m.GradientTape(persistent=True) as t:
            t.watch(x)
            y = m.cond(p > 0, lambda: x, lambda: 2.0 * x)
            z = m.while_loop(
                lambda i, s: i < 2,
                lambda i, s: (i + 1, x),  # a Tensor from outside, as it is
                (0, 0.0 * x),
                maximum_iterations=2,
            )[1]
            w = m.switch_case(m.cast(p > 0, m.int32), [lambda: x * 3.0, lambda: x])
        return t.gradient(y, x), t.gradient(z, x), t.gradient(w, x)

    return f


@pytest.mark.parametrize("p", [1.0, -1.0])
def test_tensors_returned_as_they_are_by_branches_and_bodies(tf, p):
    _parity(tf, _pass_through, 2.0, p)


def _jacobian_through_cond(m):
    @m.function
    def f(x):
        with m.GradientTape(persistent=True) as t:
            t.watch(x)
            y = m.cond(m.reduce_sum(x) > 0, lambda: x * x, lambda: -x)
        return t.jacobian(y, x), t.gradient(y, x)

    return f


def test_jacobian_through_cond(tf):
    _parity(tf, _jacobian_through_cond, [1.0, 2.0])


def _intermediate_source(m):
    @m.function
    def f(x):
        with m.GradientTape() as t:
            t.watch(x)
            h = x * 2.0
            y = m.cond(x > 0, lambda: h * h, lambda: h)
        return t.gradient(y, [h, x])

    return f


def test_gradient_with_respect_to_a_tensor_captured_by_a_branch(tf):
    _parity(tf, _intermediate_source, 1.5)


def _tape_in_branch(m):
    @m.function
    def f(x):
        def branch():
            with m.GradientTape() as t:
                t.watch(x)
                y = x**3
            return t.gradient(y, x)

        return m.cond(x > 0, branch, lambda: x)

    return f


def test_tape_inside_a_branch(tf):
    _parity(tf, _tape_in_branch, 2.0)


def _watch_flags(m):
    v = m.Variable(1.0, trainable=False)
    w = m.Variable(2.0)
    u = m.Variable(5.0)

    @m.function
    def f(x):
        with m.GradientTape(watch_accessed_variables=False) as t:
            t.watch(w)
            y = m.cond(x > 0, lambda: v * w * x * u, lambda: w)
        return t.gradient(y, [v, w, u])

    return f


def test_unwatched_and_non_trainable_variables_in_branches(tf):
    _parity(tf, _watch_flags, 2.0)


def _watched_constant(m):
    @m.function
    def f(p):
        x = m.constant(3.0)  # concrete: a constant of the compiled program
        with m.GradientTape() as t:
            t.watch(x)
            y = m.cond(p > 0, lambda: x * x, lambda: x)
            z = m.while_loop(
                lambda i, s: i < 3,
                lambda i, s: (i + 1, s * x),
                (0, x),
                maximum_iterations=3,
            )[1]
        return y, t.gradient([y, z], x)

    return f


@pytest.mark.parametrize("p", [1.0, -1.0])
def test_watched_constant_inside_function_through_constructs(tf, p):
    _parity(tf, _watched_constant, p)


# -- Variables assigned inside constructs --------------------------------------------
def _assign_in_branch(m):
    v = m.Variable(1.0)
    w = m.Variable(10.0)

    @m.function
    def f(x):
        with m.GradientTape(persistent=True) as t:
            t.watch(x)

            def yes():
                v.assign(x * 2.0)
                return v * 3.0 + w  # a read after the write: TF cuts at assign

            y = m.cond(x > 0, yes, lambda: w * x)
        return y, t.gradient(y, [x, v, w]), v.read_value()

    return f


@pytest.mark.parametrize("x", [1.5, -1.5], ids=["assigning", "other"])
def test_variable_assigned_in_a_branch(tf, x):
    _parity(tf, _assign_in_branch, x)


def _assign_in_loop(m):
    c = m.Variable(0)
    acc = m.Variable(0.0)

    @m.function
    def f(x):
        def body(i, s):
            c.assign_add(1)
            acc.assign_add(s)
            return i + 1, s + x + m.cast(c, m.float32)

        r = m.while_loop(lambda i, s: i < 4, body, (0, 0.0))
        return r, c.read_value(), acc.read_value()

    return lambda x: (f(x), f(x))


def test_variables_assigned_in_a_loop_are_carried(tf):
    _parity(tf, _assign_in_loop, 1.0)


def _loop_reads_assigned_variable(m):
    v = m.Variable(1.0)

    @m.function
    def f(x):
        with m.GradientTape() as t:
            t.watch(x)

            def body(i, s):
                s = s + v * x  # reads the value the previous iteration wrote
                v.assign(v * 2.0)
                return i + 1, s

            _, s = m.while_loop(
                lambda i, s: i < 3, body, (0, 0.0), maximum_iterations=3
            )
        return s, t.gradient(s, [x, v]), v.read_value()

    return f


def test_loop_reads_the_variable_it_assigns(tf):
    _parity(tf, _loop_reads_assigned_variable, 2.0)


def _outer_assign(m):
    v = m.Variable(1.0)

    @m.function
    def f(x):
        m.cond(x > 0, lambda: v.assign(x * 3.0), lambda: v.assign(x))
        return v * x

    @m.function
    def g(x):
        v.assign(x * 3.0)
        return v * x

    def run(x):
        out = []
        for fn in (f, g):
            with m.GradientTape() as t:
                t.watch(x)
                y = fn(x)
            out.append((y, t.gradient(y, [x, v])))
        return out

    return run


def test_outer_tape_through_an_assignment_in_a_function(tf):
    _parity(tf, _outer_assign, 2.0)


# -- outer tapes around compiled functions -------------------------------------------
def _outer_tape(m):
    v = m.Variable(3.0)

    @m.function
    def f(x):
        y = m.cond(x > 0, lambda: v * x * x, lambda: v - x)
        return m.while_loop(
            lambda i, s: s < 50.0,
            lambda i, s: (i + 1, s * v + x),
            (0, y),
            maximum_iterations=6,
        )[1]

    def run(x):
        with m.GradientTape() as t:
            t.watch(x)
            y = f(x)
        return y, t.gradient(y, [x, v])

    return run


@pytest.mark.parametrize("x", [1.0, -1.0])
def test_outer_tape_around_function_with_cond_and_while(tf, x):
    _parity(tf, _outer_tape, x)


def _dynamic_trip_count(m):
    x = m.Variable(2.0)

    @m.function
    def g(n):
        i, s = m.constant(0), m.constant(0.0)
        return m.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + x), (i, s))

    def outside(n):
        with m.GradientTape() as t:
            r = g(n)[1]
        return r, t.gradient(r, x)

    @m.function
    def inside(n):
        with m.GradientTape() as t:
            s = m.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * x), (0, x))
        return t.gradient(s[1], x)

    return g, outside, inside


def test_dynamic_trip_count_reverse_gradient_names_the_fix(tf):
    """TF keeps a stack per loop; XLA's while has no reverse mode. jaxtape
    runs the loop (as TF) but its gradient raises ValueError naming
    `maximum_iterations` (issue 15's repro, second half)."""
    n = 3
    g, outside, inside = _dynamic_trip_count(tf)
    want_value, want_grad = outside(tf.constant(n))
    assert want_grad is not None and inside(tf.constant(n)) is not None
    g, outside, inside = _dynamic_trip_count(jt)
    _assert_same(want_value, g(jt.constant(n))[1])
    with pytest.raises(ValueError, match="maximum_iterations"):
        outside(jt.constant(n))
    with pytest.raises(ValueError, match="for_range"):
        inside(jt.constant(n))


def _forward_through_dynamic_while(m):
    @m.function
    def f(x, n):
        return m.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s * x), (0, x))[1]

    def run(x):
        with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
            y = f(x, m.constant(3))
        return y, acc.jvp(y)

    return run


def test_forward_mode_through_a_dynamic_while_loop(tf):
    _parity(tf, _forward_through_dynamic_while, 2.0)


def test_gradients_match_jax_grad_of_the_same_program():
    v = jt.Variable(np.array([0.3, -0.2, 0.5], "float32"))

    @jt.function
    def f(x):
        with jt.GradientTape() as t:
            t.watch(x)
            y = jt.cond(jt.reduce_sum(x) > 0, lambda: x * v, lambda: x - v)
            y = jt.map_fn(lambda e: jt.sin(e) * e, y)
            s = jt.while_loop(
                lambda i, s: i < 4,
                lambda i, s: (i + 1, s * 0.5 + y * y),
                (0, x),
                maximum_iterations=4,
            )[1]
            total = jt.reduce_sum(s)
        return t.gradient(total, [x, v])

    def pure(x, v):
        y = jax.lax.cond(jnp.sum(x) > 0, lambda: x * v, lambda: x - v)
        y = jnp.sin(y) * y
        s = x
        for _ in range(4):
            s = s * 0.5 + y * y
        return jnp.sum(s)

    for x in (np.array([1.0, 2.0, -0.5], "float32"), np.array([-1.0, 0.2, -0.5], "f")):
        gx, gv = f(jt.constant(x))
        wx, wv = jax.grad(pure, argnums=(0, 1))(x, v.numpy())
        np.testing.assert_allclose(gx.numpy(), wx, rtol=1e-5)
        np.testing.assert_allclose(gv.numpy(), wv, rtol=1e-5)


def _traces(m):
    v = m.Variable(1.0)

    @m.function
    def f(x):
        def body(i, s):
            v.assign_add(1.0)  # a body that assigns: traced again inside jaxtape
            return i + 1, s + x

        y = m.cond(x > 0, lambda: x, lambda: -x)
        return m.while_loop(lambda i, s: i < 3, body, (0, y))[1]

    def run(*xs):
        out = [f(x) for x in xs]
        return out, f.experimental_get_tracing_count()

    return run


def test_trace_counts_match_tf(tf):
    theirs = _traces(tf)(tf.constant(1.0), tf.constant(-2.0), tf.constant(3.0))
    ours = _traces(jt)(jt.constant(1.0), jt.constant(-2.0), jt.constant(3.0))
    _assert_same(theirs[0], ours[0])
    assert ours[1] == theirs[1] == 1


# -- TF's errors -------------------------------------------------------------------
def _loop_changing(change):
    def build(m):
        changes = {
            "dtype": lambda y: m.cast(y, m.float64),
            "shape": lambda y: m.concat([y, y], 0),
            "structure": lambda y: (y, y),
        }

        @m.function
        def f(x):
            return m.while_loop(
                lambda i, y: i < 3, lambda i, y: (i + 1, changes[change](y)), (0, x)
            )

        return f

    return build


@pytest.mark.parametrize(
    "change,error",
    [("dtype", TypeError), ("shape", ValueError), ("structure", ValueError)],
)
def test_loop_variables_that_change_raise_tf_errors(tf, change, error):
    e = _raises_as_tf(tf, _loop_changing(change), [1.0])
    assert isinstance(e, error)
    if change != "structure":
        assert "loop_vars[1]" in str(e)  # names the loop variable


def test_shape_invariants_allowing_a_change_raise_not_implemented(tf):
    def build(m):
        @m.function
        def f(x):
            return m.while_loop(
                lambda i, y: i < 2,
                lambda i, y: (i + 1, m.concat([y, y], 0)),
                (0, x),
                shape_invariants=(m.TensorShape([]), m.TensorShape([None])),
            )

        return f

    _run(tf, build, [[1.0]])  # TF: the shape varies (XLA cannot)
    with pytest.raises(NotImplementedError, match="static shapes"):
        _run(jt, build, [[1.0]])


def test_shape_invariants_that_hold_are_accepted(tf):
    def build(m):
        @m.function
        def f(x):
            return m.while_loop(
                lambda i, y: i < 2,
                lambda i, y: (i + 1, y * 2.0),
                (0, x),
                shape_invariants=(m.TensorShape([]), m.TensorShape([None])),
            )

        return f

    _parity(tf, build, [1.0, 2.0])


@pytest.mark.parametrize(
    "false_fn",
    ["int", "structure"],
)
def test_cond_branches_that_differ_raise_tf_errors(tf, false_fn):
    def build(m):
        other = {
            "int": lambda x: lambda: m.cast(x, m.int32),
            "structure": lambda x: lambda: [x, x],
        }[false_fn]

        @m.function
        def f(x):
            return m.cond(
                x > 0, lambda: (x, x) if false_fn == "structure" else x, other(x)
            )

        return f

    e = _raises_as_tf(tf, build, 1.0)
    assert isinstance(e, TypeError)
    assert "must have the same number, type, and overall structure" in str(e)


def test_cond_branch_shapes_that_differ_raise_not_implemented(tf):
    def build(m):
        return m.function(lambda x: m.cond(x[0] > 0, lambda: x, lambda: x[:1]))

    _run(tf, build, [[1.0, 2.0]])  # TF: an unknown shape
    with pytest.raises(NotImplementedError, match="same shape"):
        _run(jt, build, [[1.0, 2.0]])


def test_eager_while_loop_structure_change_raises_value_error(tf):
    def build(m):
        return lambda x: m.while_loop(
            lambda i, y: i < 2, lambda i, y: (i + 1, (y, y)), (0, x)
        )

    _raises_as_tf(tf, build, 1.0)


# -- results, as TF gives them ---------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    ["dict_order", "none", "python_numbers", "list_loop_vars"],
)
def test_results_keep_tf_structures(tf, name):
    def build(m):
        cases = {
            "dict_order": lambda x: m.cond(
                x > 0, lambda: {"b": x, "a": 2 * x}, lambda: {"a": x, "b": 3 * x}
            ),
            "none": lambda x: m.cond(x > 0, lambda: None, lambda: None),
            "python_numbers": lambda x: m.cond(x > 0, lambda: 1.0, lambda: 2.0),
            "list_loop_vars": lambda x: m.while_loop(
                lambda i, y: i < 3, lambda i, y: (i + 1, y * x), [0, x]
            ),
        }
        return m.function(cases[name])

    want, got = _run(tf, build, [1.5]), _run(jt, build, [1.5])
    _assert_same(want, got)
    if isinstance(want, (list, tuple, dict)):
        assert type(got) is type(want)
    if isinstance(want, dict):
        assert list(got) == list(want)


@pytest.mark.parametrize("x", [3.0, 1.5, 0.0])
def test_case_picks_the_first_true_predicate(tf, x):
    def build(m):
        return m.function(
            lambda x: m.case(
                [(x > 2, lambda: 1.0), (x > 1, lambda: 2.0)], default=lambda: 3.0
            )
        )

    _parity(tf, build, x)


@pytest.mark.parametrize("compiled", [True, False], ids=["function", "eager"])
def test_case_checks_exclusive_and_missing_default(tf, compiled):
    def build(m, **kw):
        def f(x):
            return m.case([(x > 2, lambda: 1.0), (x > 1, lambda: 2.0)], **kw)

        return m.function(f) if compiled else f

    e = _raises_as_tf(tf, lambda m: build(m, default=lambda: 3.0, exclusive=True), 3.0)
    assert isinstance(e, jt.errors.InvalidArgumentError) and "exclusive" in str(e)
    e = _raises_as_tf(tf, lambda m: build(m), 0.0)
    assert "None of conditions evaluated as True" in str(e)
    _parity(tf, lambda m: build(m), 3.0)


@pytest.mark.parametrize(
    "pred,compiled",
    [([False], False), ([False], True), ([True, False], False), (0, False)],
    ids=["one_element", "one_element_traced", "two_elements", "int_eagerly"],
)
def test_cond_predicates_as_tf_reads_them(tf, pred, compiled):
    def build(m):
        def f(p):
            return m.cond(p, lambda: 1, lambda: 2)

        return m.function(f) if compiled else f

    if np.size(pred) > 1:
        _raises_as_tf(tf, build, pred)
    else:
        _parity(tf, build, pred)


def test_traced_cond_predicate_must_be_boolean(tf):
    def build(m):
        return m.function(lambda p: m.cond(p, lambda: 1, lambda: 2))

    e = _raises_as_tf(tf, build, 3)
    assert "expected bool" in str(e)
    with pytest.raises(ValueError, match="None"):
        jt.cond(None, lambda: 1, lambda: 2)


def test_switch_case_branch_keys_must_be_a_range(tf):
    def build(m):
        return m.function(
            lambda i: m.switch_case(m.cast(i, m.int32), {3: lambda: 1, 7: lambda: 2})
        )

    e = _raises_as_tf(tf, build, 3.0)
    assert isinstance(e, ValueError) and "contiguous range" in str(e)


@pytest.mark.parametrize("compiled", [True, False], ids=["function", "eager"])
def test_map_fn_output_signature(tf, compiled):
    def wrap(m, f):
        return m.function(f) if compiled else f

    def wrong(m):
        return wrap(m, lambda x: m.map_fn(lambda r: m.cast(r, m.int32), x))

    e = _raises_as_tf(tf, wrong, [1.0, 2.0])
    assert isinstance(e, jt.errors.InvalidArgumentError)

    def right(m):
        return wrap(
            m,
            lambda x: m.map_fn(
                lambda r: (r, m.cast(r, m.int32)),
                x,
                fn_output_signature=(m.float32, m.int32),
            ),
        )

    _parity(tf, right, [1.0, 2.0])

    def structured(m):
        return wrap(
            m,
            lambda x: m.map_fn(
                lambda e: e["a"] * e["b"],
                {"a": x, "b": x + 1.0},
                fn_output_signature=m.float32,
            ),
        )

    _parity(tf, structured, [1.0, 2.0])


def test_map_fn_over_no_elements_inside_function(tf):
    def build(m):
        return m.function(lambda x: m.map_fn(lambda r: r * 2.0, x))

    _parity(tf, build, np.zeros((0, 2), "float32"))


@pytest.mark.parametrize("compiled", [True, False], ids=["function", "eager"])
def test_scan_initializer_reverse_and_structures(tf, compiled):
    def build(m):
        def f(x):
            return (
                m.scan(lambda a, e: a + e, x, reverse=True),
                m.scan(lambda a, e: a * e, x, initializer=2.0, reverse=True),
                m.scan(lambda a, e: (a[0] + e, a[1] * e), x, initializer=(0.0, 1.0)),
                m.scan(lambda a, e: a + e[0] * e[1], (x, x * 2.0), initializer=0.0),
                m.foldr(lambda a, e: a * 10.0 + e, x),
                m.foldl(lambda a, e: a * 10.0 + e, x),
            )

        return m.function(f) if compiled else f

    _parity(tf, build, [1.0, 2.0, 3.0])


def _eager_constructs(m):
    def f(x):
        with m.GradientTape() as t:
            t.watch(x)
            y = m.map_fn(lambda e: e * e * x[0], x)
            z = m.scan(lambda a, e: a * e, x)
            w = m.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * x), (0, x))[1]
            c = m.cond(x[0] > 0, lambda: x * 2.0, lambda: x)
            s = m.reduce_sum(y) + m.reduce_sum(z) + m.reduce_sum(w) + m.reduce_sum(c)
        return s, t.gradient(s, x)

    return f


def test_eager_constructs_record_on_tapes(tf):
    _parity(tf, _eager_constructs, [1.0, 2.0])


def test_back_prop_false_gives_no_gradient(tf):
    def build(m):
        @m.function
        def f(x):
            with m.GradientTape(persistent=True) as t:
                t.watch(x)
                y = m.while_loop(
                    lambda i, s: i < 3,
                    lambda i, s: (i + 1, s * x),
                    (0, x),
                    back_prop=False,
                )[1]
                z = m.map_fn(lambda e: e * x, m.stack([x, x]), back_prop=False)
            return y, t.gradient(y, x), t.gradient(z, x)

        return f

    _parity(tf, build, 2.0)


# -- for_range: the loop form of `for i in range(...)` ---------------------------------
def _range_loop(kind):
    def build(m):
        @m.function
        def f(x, n):
            with m.GradientTape() as t:
                t.watch(x)
                if m is not jt:  # TF: AutoGraph's loop over tf.range
                    s = x
                    if kind == "break":
                        for _ in m.range(10):
                            if s > 20.0:
                                break
                            s = s * x
                    else:
                        stop = n if kind == "dynamic" else 7
                        for i in m.range(1, stop, 2):
                            s = s * x + m.cast(i, m.float32)
                elif kind == "break":
                    s = jt.for_range(
                        0, 10, 1, lambda i, s: s * x, x, extra_test=lambda s: s <= 20.0
                    )
                else:
                    stop = n if kind == "dynamic" else 7
                    s = jt.for_range(
                        1, stop, 2, lambda i, s: s * x + jt.cast(i, jt.float32), x
                    )
            grad = t.gradient(s, x) if kind != "dynamic" else None
            return s, grad

        return lambda x: f(x, m.constant(7))

    return build


@pytest.mark.parametrize("kind", ["static", "break", "dynamic"])
def test_for_range_matches_a_tf_range_loop(tf, kind):
    _parity(tf, _range_loop(kind), 1.5)


def test_for_range_eagerly_is_a_python_loop():
    seen = []
    out = jt.for_range(
        0, 6, 2, lambda i, s: seen.append(i) or s + jt.cast(i, jt.float32), 1.0
    )
    assert [int(i) for i in seen] == [0, 2, 4] and float(out) == 7.0
    assert all(type(i) is jt.Tensor and i.dtype == jt.int32 for i in seen)
    with pytest.raises(jt.errors.InvalidArgumentError, match="delta != 0"):
        jt.for_range(0, 3, 0, lambda i, s: s, 1.0)


def test_for_range_static_loop_compiles_to_scan():
    @jt.function
    def f(x):
        return jt.for_range(0, 5, 1, lambda i, s: s * x, x)

    text = f.get_concrete_function(jt.constant(2.0)).as_text()
    assert "scan" in text and "while" not in text


def _keras_training_loop(m):
    m.random.set_seed(0)
    model = m.keras.Sequential(
        [m.keras.layers.Dense(4, activation="relu"), m.keras.layers.Dense(1)]
    )
    model.build((None, 3))
    opt = m.keras.optimizers.Adam(0.01)

    @m.function
    def fit(x, y):
        def step(i, loss):
            with m.GradientTape() as t:
                loss = m.reduce_mean((model(x) - y) ** 2)
            grads = t.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        if m is jt:
            return jt.for_range(0, 5, 1, step, m.constant(0.0))
        loss = m.constant(0.0)
        for i in m.range(5):  # TF: AutoGraph's loop
            loss = step(i, loss)
        return loss

    return model, fit


def test_keras_training_loop_inside_a_function(tf):
    """Five Adam steps in one compiled loop (slots created in the loop's first
    trace, weights assigned every iteration): the losses, the weights and the
    trace count are TF's."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 3)).astype("float32")
    y = x.sum(1, keepdims=True)
    theirs, tfit = _keras_training_loop(tf)
    ours, jfit = _keras_training_loop(jt)
    for w, v in zip(ours.weights, theirs.weights):
        w.assign(v.numpy())
    for _ in range(2):
        _assert_same(tfit(tf.constant(x), tf.constant(y)), jfit(jt.constant(x), y))
    _assert_same(theirs.weights, ours.weights)
    traces = jfit.experimental_get_tracing_count()
    assert traces == tfit.experimental_get_tracing_count()


def _checked_in_loop(m):
    @m.function
    def f(x, n):
        with m.GradientTape() as t:
            t.watch(x)
            s = m.while_loop(
                lambda i, s: i < n,
                lambda i, s: (i + 1, s + m.gather(x, i)),
                (0, 0.0),
                maximum_iterations=5,
            )[1]
            y = m.cond(n > 2, lambda: m.gather(x, n), lambda: s)
        return s, y, t.gradient(s + y, x)

    return f


def test_run_time_checks_inside_branches_and_loops(tf):
    """TF's index check runs inside a compiled loop and branch (the replays
    of the tape's backward pass do not check again)."""

    def build(n):
        return lambda m: lambda x: _checked_in_loop(m)(x, m.constant(n))

    _parity(tf, build(2), [1.0, 2.0, 3.0])
    e = _raises_as_tf(tf, build(4), [1.0, 2.0, 3.0])
    assert "not in [0, 3)" in str(e)


# -- run-time printing inside constructs -----------------------------------------------
def test_print_inside_branches_and_loops_runs_each_call(tf, capfd):
    def build(m):
        @m.function
        def f(x):
            m.cond(
                x > 0,
                lambda: m.print("pos", x, output_stream=sys.stdout) or x,
                lambda: m.print("neg", x, output_stream=sys.stdout) or x,
            )

            def body(i):
                m.print("it", i, output_stream=sys.stdout)
                return i + 1

            m.while_loop(lambda i: i < 2, body, [0], maximum_iterations=5)
            return x

        return lambda x: (f(x), f(-x))

    capfd.readouterr()
    _run(tf, build, [1.0])
    theirs = capfd.readouterr().out  # (TF writes from C++: capfd sees it)
    _run(jt, build, [1.0])
    ours = capfd.readouterr().out
    assert ours == theirs and ours.count("it") == 4


# -- TensorArray -------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    [
        "write_read_stack_gather",
        "clear_after_read_false",
        "unstack_dynamic",
        "scatter",
        "split_concat",
        "close",
        "read_then_stack",
        "identity_shares",
        "infer_shape_false",
    ],
)
def test_tensor_array_eager_semantics(tf, name):
    def build(m):
        def f(x):
            if name == "write_read_stack_gather":
                ta = m.TensorArray(m.float32, size=3)
                ta = ta.write(0, x)
                ta = ta.write(2, x * 2.0)
                return ta.stack(), ta.size(), ta.read(1), ta.gather([2, 0])
            if name == "clear_after_read_false":
                ta = m.TensorArray(m.float32, size=2, clear_after_read=False)
                ta = ta.write(0, x)
                return ta.read(0), ta.read(0)
            if name == "unstack_dynamic":
                ta = m.TensorArray(m.float32, size=0, dynamic_size=True)
                ta = ta.unstack(x)
                ta = ta.write(4, x[0])
                return ta.stack(), ta.size()
            if name == "scatter":
                ta = m.TensorArray(m.float32, size=4, element_shape=[2])
                ta = ta.scatter([3, 1], m.reshape(m.concat([x, x * 3.0], 0), [2, 2]))
                return ta.stack(), list(ta.element_shape)
            if name == "split_concat":
                ta = m.TensorArray(m.float32, size=3)
                ta = ta.split(m.concat([x, x], 0), [1, 3, 0])
                return ta.concat(), ta.read(1)
            if name == "close":
                ta = m.TensorArray(m.float32, size=2)
                ta = ta.write(0, x)
                ta.close()
                return ta.size()
            if name == "infer_shape_false":  # elements of different shapes
                ta = m.TensorArray(m.float32, size=2, infer_shape=False)
                ta = ta.write(0, x)
                ta = ta.write(1, m.concat([x, x], 0))
                return ta.concat(), ta.size()
            if name == "read_then_stack":  # TF: the read clears the element
                ta = m.TensorArray(m.float32, size=2)
                ta = ta.write(1, x)
                return ta.read(1), ta.stack()
            ta = m.TensorArray(m.float32, size=2)
            ta2 = ta.write(0, x)
            ta2.write(1, x * 5.0)  # eagerly, the same storage
            return ta.stack(), ta2.identity().stack()

        return f

    _parity(tf, build, [1.0, 2.0])


@pytest.mark.parametrize(
    "name,error",
    [
        ("double_read", "InvalidArgumentError"),
        ("read_negative", "OutOfRangeError"),
        ("read_past_end", "OutOfRangeError"),
        ("write_past_end", "OutOfRangeError"),
        ("write_dtype", "InvalidArgumentError"),
        ("write_shape", "ValueError"),
        ("unstack_too_many", "ValueError"),
        ("concat_scalars", "InvalidArgumentError"),
        ("no_size", "ValueError"),
    ],
)
def test_tensor_array_eager_errors(tf, name, error):
    def build(m):
        def f(x):
            if name == "no_size":
                return m.TensorArray(m.float32)
            ta = m.TensorArray(m.float32, size=2)
            ta = ta.write(0, x)
            if name == "double_read":
                return ta.read(0), ta.read(0)
            if name == "read_negative":
                return ta.read(-1)
            if name == "read_past_end":
                return ta.read(5)
            if name == "write_past_end":
                return ta.write(2, x)
            if name == "write_dtype":
                return ta.write(1, m.constant(1))
            if name == "write_shape":
                return ta.write(1, m.stack([x, x]))
            if name == "unstack_too_many":
                return ta.unstack(m.stack([x, x, x]))
            return ta.concat()

        return f

    e = _raises_as_tf(tf, build, 1.0)
    assert type(e).__name__ == error


def _ta_value_semantics(m):
    @m.function
    def f(x):
        ta = m.TensorArray(m.float32, size=3)
        ta.write(0, x)  # TF's graph TensorArray: the result is the new array
        ta = ta.write(1, x * 2.0)
        return ta.stack(), ta.read(1), ta.read(1), ta.size(), ta.gather([1, 1])

    return f


def test_tensor_array_inside_function_has_graph_semantics(tf):
    _parity(tf, _ta_value_semantics, 1.0)


def _rnn(kind):
    def build(m):
        w = m.Variable(np.array([[0.5, -0.2], [0.1, 0.3]], "float32"))

        @m.function
        def f(xs):
            n = xs.shape[0]
            with m.GradientTape() as t:
                t.watch(xs)
                ta = m.TensorArray(m.float32, size=n)  # element shape: learned

                def body(i, ta, h):
                    h = m.tanh(m.reduce_sum(w * h, axis=1) + xs[i])
                    return i + 1, ta.write(i, h), h

                if kind == "while_loop":
                    _, ta, _ = m.while_loop(
                        lambda i, ta, h: i < n,
                        body,
                        (0, ta, m.zeros([2])),
                        maximum_iterations=n,
                    )
                elif m is jt:
                    _, ta, _ = jt.for_range(
                        0,
                        n,
                        1,
                        lambda i, j, ta, h: body(i, ta, h),
                        (0, ta, jt.zeros([2])),
                    )
                else:  # TF: AutoGraph's loop over tf.range
                    h = m.zeros([2])
                    for i in m.range(n):
                        _, ta, h = body(i, ta, h)
                out = ta.stack()
                loss = m.reduce_sum(out * out)
            return out, t.gradient(loss, [xs, w])

        return f

    return build


@pytest.mark.parametrize("kind", ["while_loop", "for_range"])
def test_rnn_loop_writing_a_tensor_array_with_gradients(tf, kind):
    xs = np.arange(8.0).reshape(4, 2).astype("float32") / 10
    _parity(tf, _rnn(kind), xs)


def _dynamic_ta(bounded):
    def build(m):
        @m.function
        def f(x, n):
            ta = m.TensorArray(m.float32, size=0, dynamic_size=True)

            def body(i, ta):
                return i + 1, ta.write(i, m.cast(i, m.float32) * x)

            kw = {"maximum_iterations": 4} if bounded else {}
            _, ta = m.while_loop(lambda i, ta: i < n, body, (0, ta), **kw)
            return ta.stack(), ta.size()

        return lambda x: f(x, m.constant(4))

    return build


def test_dynamically_sized_tensor_array_in_a_bounded_loop(tf):
    _parity(tf, _dynamic_ta(True), 2.0)


def test_dynamically_sized_tensor_array_needs_a_bound_inside_function(tf):
    """TF grows a TensorList at run time; XLA needs a static size (TF's XLA
    error text, with jaxtape's fix)."""
    _run(tf, _dynamic_ta(False), [2.0])
    with pytest.raises(jt.errors.InvalidArgumentError, match="maximum_iteration"):
        _run(jt, _dynamic_ta(False), [2.0])


def test_tensor_array_static_size_with_a_run_time_trip_count(tf):
    def build(m):
        @m.function
        def f(x, n):
            ta = m.TensorArray(m.float32, size=5)

            def body(i, ta):
                return i + 1, ta.write(i, m.cast(i, m.float32) * x)

            _, ta = m.while_loop(lambda i, ta: i < n, body, (0, ta))
            return ta.stack(), ta.read(n - 1)

        return lambda x: f(x, m.constant(3))

    _parity(tf, build, 2.0)


def test_tensor_array_unstack_then_read_in_a_loop(tf):
    def build(m):
        @m.function
        def f(x):
            ta = m.TensorArray(m.float32, size=3).unstack(x)
            return m.foldl(lambda a, i: a + ta.read(i) * a, m.range(3), initializer=1.0)

        return f

    _parity(tf, build, [1.0, 2.0, 4.0])


def test_tensor_array_inconsistent_shapes_inside_function(tf):
    def build(m):
        @m.function
        def f(x):
            ta = m.TensorArray(m.float32, size=2)
            ta = ta.write(0, x)
            return ta.write(1, m.ones([3])).stack()

        return f

    e = _raises_as_tf(tf, build, [1.0, 2.0])
    assert "Inconsistent shapes" in str(e)


def test_tensor_array_stdout_repr_and_metadata():
    ta = jt.TensorArray(jt.float32, size=2, dynamic_size=True, element_shape=[3])
    assert ta.dtype == jt.float32 and ta.dynamic_size and ta.element_shape == [3]
    assert "TensorArray" in repr(ta)
    buf = io.StringIO()
    print(ta.size().numpy(), file=buf)
    assert buf.getvalue() == "2\n"
