"""GradientTape behaviours as a table: each row is one script run under TF and jaxtape.

A row is `def case(m): ...` written once against the module `m` (real
`tensorflow` or `jaxtape`) and registered with `@row(...)`. The test runs it
under both and compares what it returns: values and gradients (allclose),
None vs Tensor, dtypes, shapes and the structure (list vs tuple, namedtuple
types, dict key ORDER). A row that raises must raise the same exception type
under both (`error=`), with `match=` a phrase both messages contain. TF logs
its gradient warnings while jaxtape warns (`GradientWarning`): `warns=` checks
that jaxtape warns, and only TF's value is compared.

The behaviours are those of TF's GradientTape docs and the test names of TF's
`backprop_test.py`. An `IndexedSlices` gradient (a gathered source) must be
one in jaxtape too, with the same values, indices and dense shape.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Mapping

import numpy as np
import pytest

import jaxtape


@dataclasses.dataclass(frozen=True)
class Row:
    fn: Callable
    error: type[BaseException] | str | None = None  # a built-in or a tf.errors name
    match: str | None = None
    warns: str | None = None  # the jaxtape.debug warning the jaxtape run gives
    rtol: float = 1e-5


CASES: dict[str, Row] = {}


def row(error=None, match=None, warns=None, rtol=1e-5):
    def register(fn):
        assert fn.__name__ not in CASES, fn.__name__
        CASES[fn.__name__] = Row(fn, error, match, warns, rtol)
        return fn

    return register


Pair = collections.namedtuple("Pair", ["w", "b"])


# -- watching ------------------------------------------------------------------------
@row()
def watched_constant_gives_its_gradient(m):
    x = m.constant(3.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.gradient(y, x)


@row()
def unwatched_constant_gives_none(m):
    x = m.constant(3.0)
    with m.GradientTape() as t:
        y = x * x
    return t.gradient(y, x)


@row()
def trainable_variable_is_watched_on_access(m):
    v = m.Variable(2.0)
    with m.GradientTape() as t:
        y = v * v * v
    return t.gradient(y, v)


@row()
def non_trainable_variable_is_not_watched(m):
    v = m.Variable(2.0, trainable=False)
    with m.GradientTape() as t:
        y = v * v
    return t.gradient(y, v)


@row()
def non_trainable_variable_watched_explicitly(m):
    v = m.Variable(2.0, trainable=False)
    with m.GradientTape() as t:
        t.watch(v)
        y = v * v
    return t.gradient(y, v)


@row()
def watch_accessed_variables_false_leaves_reads_unwatched(m):
    a, b = m.Variable(2.0), m.Variable(3.0)
    with m.GradientTape(watch_accessed_variables=False) as t:
        t.watch(a)
        y = a * b
    return t.gradient(y, [a, b])


@row()
def watch_a_nested_structure(m):
    x, y = m.constant(1.0), m.constant(2.0)
    with m.GradientTape() as t:
        t.watch({"x": x, "rest": [y]})
        z = x * y * y
    return t.gradient(z, (x, y))


@row(error=ValueError, match="Passed in object")
def watch_a_python_number_raises(m):
    with m.GradientTape() as t:
        t.watch(3.0)


@row()
def each_variable_read_adds_to_the_gradient(m):
    v = m.Variable(3.0)
    with m.GradientTape() as t:
        y = v * v + m.sin(v)
    return t.gradient(y, v)


@row()
def variable_value_read_before_the_tape_gives_none(m):
    v = m.Variable(3.0)
    cached = v * 1.0
    with m.GradientTape() as t:
        y = cached * 2.0
    return t.gradient(y, v)


@row()
def read_value_and_convert_to_tensor_are_watched_reads(m):
    v = m.Variable(3.0)
    with m.GradientTape() as t:
        y = v.read_value() * m.convert_to_tensor(v)
    return t.gradient(y, v)


# -- watched_variables ---------------------------------------------------------------
@row()
def watched_variables_are_in_creation_order(m):
    a = m.Variable(1.0, name="a")
    b = m.Variable(2.0, name="b")
    c = m.Variable(3.0, name="c")
    with m.GradientTape() as t:
        y = c * b * a
    del y
    return [v.name for v in t.watched_variables()]


@row()
def watched_variables_lists_trainable_int_and_bool_variables(m):
    i = m.Variable(3, name="int")
    f = m.Variable(2.0, name="f")
    frozen = m.Variable(1.0, trainable=False, name="frozen")
    flag = m.Variable(True, name="flag")
    with m.GradientTape() as t:
        _ = i * 2
        _ = f * 3.0
        _ = frozen * 1.0
        _ = m.logical_not(flag)
    return [v.name for v in t.watched_variables()]


@row(warns="GradientWarning")
def watched_variables_lists_explicit_watches(m):
    i = m.Variable(3, name="int")
    frozen = m.Variable(1.0, trainable=False, name="frozen")
    with m.GradientTape() as t:
        t.watch(frozen)
        t.watch(i)
    return [v.name for v in t.watched_variables()]


@row()
def watched_variables_is_a_tuple_of_the_variables(m):
    v = m.Variable(1.0, name="v")
    with m.GradientTape() as t:
        _ = v * 2.0
    return t.watched_variables()


@row()
def watched_variables_empty_without_access_watching(m):
    v = m.Variable(1.0, name="v")
    with m.GradientTape(watch_accessed_variables=False) as t:
        _ = v * 2.0
    return t.watched_variables()


@row()
def watched_variables_after_reset_are_only_the_new_ones(m):
    a, b = m.Variable(1.0, name="a"), m.Variable(2.0, name="b")
    with m.GradientTape() as t:
        t.watch(a)
        t.reset()
        t.watch(b)
    return [v.name for v in t.watched_variables()]


@row()
def watched_variables_survive_a_non_persistent_gradient(m):
    v = m.Variable(1.0, name="v")
    with m.GradientTape() as t:
        y = v * 2.0
    t.gradient(y, v)
    return [x.name for x in t.watched_variables()]


@row()
def nested_tapes_both_watch_an_accessed_variable(m):
    v = m.Variable(1.0, name="v")
    with m.GradientTape() as outer:
        with m.GradientTape() as inner:
            _ = v * 2.0
    return [x.name for x in outer.watched_variables()], [
        x.name for x in inner.watched_variables()
    ]


# -- persistence and re-entry --------------------------------------------------------
@row()
def persistent_tape_gives_several_gradients(m):
    x = m.constant(3.0)
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        z = y * y
    return t.gradient(z, x), t.gradient(y, x), t.gradient(z, y)


@row(error=RuntimeError, match="one set of gradients")
def non_persistent_second_gradient_raises(m):
    x = m.constant(3.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    t.gradient(y, x)
    t.gradient(y, x)


@row(error=RuntimeError, match="one set of gradients")
def non_persistent_jacobian_after_gradient_raises(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    t.gradient(y, x)
    t.jacobian(y, x)


@row(error=RuntimeError, match="one set of gradients")
def gradient_on_a_tape_never_entered_raises(m):
    x = m.constant(3.0)
    m.GradientTape().gradient(x, x)


@row()
def non_persistent_tape_reentered_after_its_gradient(m):
    x = m.constant(2.0)
    t = m.GradientTape()
    with t:
        t.watch(x)
        y = x * x
    first = t.gradient(y, x)
    with t:
        t.watch(x)
        z = x * x * x
    return first, t.gradient(z, x)


@row()
def persistent_tape_reentered_keeps_recording(m):
    x = m.constant(2.0)
    t = m.GradientTape(persistent=True)
    with t:
        t.watch(x)
        y = x * x
    with t:
        z = y * x
    return t.gradient(z, x), t.gradient(y, x)


@row()
def non_persistent_gradient_inside_context_stops_recording(m):
    x = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
        g = t.gradient(y, x)
        z = g * x  # after the gradient: not recorded, and no error
    return g, z


@row(warns="GradientWarning")
def persistent_gradient_inside_context_is_recorded(m):
    x = m.constant(2.0)
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x * x
        dy = t.gradient(y, x)
    return dy, t.gradient(dy, x)


@row(error=ValueError, match="Tape is still recording")
def entering_a_recording_tape_again_raises(m):
    t = m.GradientTape()
    with t:
        with t:
            pass


# -- stop_recording and reset --------------------------------------------------------
@row()
def ops_under_stop_recording_are_not_recorded(m):
    x = m.constant(4.0)
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        with t.stop_recording():
            y = x**2
        z = x * 3.0
    return t.gradient(y, x), t.gradient(z, x)


@row()
def stop_recording_of_the_inner_tape_keeps_the_outer_recording(m):
    x = m.constant(4.0)
    with m.GradientTape() as outer:
        outer.watch(x)
        with m.GradientTape() as inner:
            inner.watch(x)
            with inner.stop_recording():
                y = x * x
    return inner.gradient(y, x), outer.gradient(y, x)


@row(error=RuntimeError, match="Trying to stop recording a tape which is not recording")
def stop_recording_on_a_tape_never_entered_raises(m):
    with m.GradientTape().stop_recording():
        pass


@row(error=ValueError, match="Tape is not recording")
def stop_recording_after_the_context_raises(m):
    with m.GradientTape() as t:
        pass
    with t.stop_recording():
        pass


@row()
def reset_forgets_the_operations_before_it(m):
    x = m.constant(3.0)
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
        t.reset()
        t.watch(x)
        z = x * 5.0
    return t.gradient(y, x), t.gradient(z, x)


@row(error=ValueError, match="Tape is not recording")
def reset_outside_the_context_raises(m):
    with m.GradientTape() as t:
        pass
    t.reset()


# -- targets -------------------------------------------------------------------------
@row(error=TypeError, match="received None")
def none_target_raises(m):
    x = m.constant(1.0)
    with m.GradientTape() as t:
        t.watch(x)
    t.gradient(None, x)


@row()
def list_of_targets_sums_their_gradients(m):
    x = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(x)
        y, z = x * x, x * 3.0
    return t.gradient([y, z], x)


@row()
def nested_dict_target(m):
    x = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(x)
        out = {"b": [x * x], "a": (x * 3.0, {"c": m.sin(x)})}
    return t.gradient(out, x)


@row()
def integer_target_gives_none(m):
    x = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = m.cast(x, m.int32) * 2
    return t.gradient(y, x)


@row()
def bool_target_gives_none(m):
    x = m.constant(1.0)
    with m.GradientTape() as t:
        t.watch(x)
        b = x > 0
    return t.gradient(b, x)


@row()
def variable_gradient_with_respect_to_itself_is_one(m):
    v = m.Variable([1.0, 2.0])
    with m.GradientTape() as t:
        _ = v * v
    return t.gradient(v, v)


@row()
def variable_as_a_target_among_others(m):
    v = m.Variable(2.0)
    with m.GradientTape() as t:
        z = v * v
    return t.gradient([z, v], v)


@row()
def variable_target_with_another_source_gives_none(m):
    v, w = m.Variable(2.0), m.Variable(3.0)
    with m.GradientTape() as t:
        _ = v * w
    return t.gradient(v, w)


@row()
def non_scalar_target_gives_the_gradient_of_its_sum(m):
    x = m.constant([1.0, 2.0, 3.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = m.reshape(x * x, [3, 1])
    return t.gradient(y, x)


@row()
def unconnected_constant_target(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        c = m.constant(5.0)
    return t.gradient(c, x), t.gradient(c, x, unconnected_gradients="zero")


# -- sources -------------------------------------------------------------------------
@row(warns="GradientWarning")
def integer_source_gives_none(m):
    i = m.constant(3)
    x = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = m.cast(i, m.float32) * x
    return t.gradient(y, [i, x])


@row(warns="GradientWarning")
def watching_an_integer_tensor_gives_none(m):
    i = m.constant(3)
    with m.GradientTape() as t:
        t.watch(i)
        y = i * i
    return t.gradient(y, i)


@row()
def the_same_source_twice(m):
    v = m.Variable(2.0)
    with m.GradientTape() as t:
        z = v * v
    return t.gradient(z, [v, v])


@row()
def gradient_with_respect_to_an_intermediate(m):
    x = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
        z = y * x
    return t.gradient(z, [x, y])


@row()
def gradient_of_an_intermediate_with_respect_to_itself(m):
    x = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.gradient(y, y)


@row(error=TypeError)
def none_source_raises(m):
    x = m.constant(1.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    t.gradient(y, [x, None])


@row()
def unconnected_zero_keeps_shape_and_dtype(m):
    x = m.constant(1.0)
    z = m.constant([1.0, 2.0], dtype=m.float64)
    v = m.Variable([[1.0, 2.0]])
    with m.GradientTape() as t:
        t.watch([x, z])
        y = x * 2.0
    return t.gradient(y, [z, v], unconnected_gradients=m.UnconnectedGradients.ZERO)


@row(error=ValueError, match="Unknown value for unconnected_gradients")
def unknown_unconnected_gradients_raises(m):
    x = m.constant(1.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    t.gradient(y, x, unconnected_gradients="bogus")


# -- output_gradients ----------------------------------------------------------------
@row()
def output_gradients_weight_the_target(m):
    x = m.constant([1.0, 2.0, 3.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.gradient(y, x, output_gradients=m.constant([1.0, 0.0, -1.0]))


@row()
def output_gradients_pair_with_dict_targets_in_sorted_key_order(m):
    a, b = m.Variable(1.0), m.Variable(2.0)
    with m.GradientTape() as t:
        y = {"b": a * 3.0, "a": b * 5.0}
    return t.gradient(y, [a, b], output_gradients=[m.constant(1.0), 10.0])


@row()
def output_gradients_pair_with_ordered_dict_targets_in_sorted_key_order(m):
    a, b = m.Variable(1.0), m.Variable(2.0)
    with m.GradientTape() as t:
        y = collections.OrderedDict([("b", a * 3.0), ("a", b * 5.0)])
    return t.gradient(y, [a, b], output_gradients=[m.constant(1.0), m.constant(10.0)])


@row()
def a_scalar_output_gradient_broadcasts_over_an_elementwise_target(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.gradient(y, x, output_gradients=2.0)


@row(error="InvalidArgumentError")
def output_gradients_of_another_dtype_raise(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    t.gradient(y, x, output_gradients=m.constant([1.0, 2.0], m.float64))


@row(error="InvalidArgumentError")
def integer_output_gradients_for_a_float_target_raise(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    t.gradient(y, x, output_gradients=2)


@row(error="InvalidArgumentError", match="Incompatible shapes")
def output_gradients_of_an_incompatible_shape_raise(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    t.gradient(y, x, output_gradients=m.constant([1.0, 2.0, 3.0]))


@row(error=ValueError, match="Attempt to convert a value (None)")
def output_gradients_refuse_none_entries(m):
    x = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(x)
        y, z = x * x, x * 3.0
    return t.gradient([y, z], x, output_gradients=[None, m.constant(2.0)])


# -- result structure ----------------------------------------------------------------
@row()
def gradient_keeps_the_sources_dict_key_order(m):
    va, vb = m.Variable(1.0), m.Variable(2.0)
    with m.GradientTape() as t:
        y = va * 3.0 + vb * 5.0
    return t.gradient(y, {"b": vb, "a": va})


@row()
def gradient_keeps_nested_structure_types(m):
    w, b, c = m.Variable(1.0), m.Variable(2.0), m.Variable(3.0)
    with m.GradientTape() as t:
        y = w * b * c
    sources = [
        {"z": Pair(w, b), "y": (c,)},
        collections.OrderedDict([("q", c), ("p", [w])]),
        collections.defaultdict(list, {"n": b, "m": w}),
    ]
    return t.gradient(y, sources)


# -- higher order --------------------------------------------------------------------
@row()
def nested_tapes_give_the_second_derivative(m):
    x = m.constant(5.0)
    with m.GradientTape() as g:
        g.watch(x)
        with m.GradientTape() as gg:
            gg.watch(x)
            y = x * x * x
        dy = gg.gradient(y, x)
    return dy, g.gradient(dy, x)


@row()
def three_nested_tapes_give_the_third_derivative(m):
    v = m.Variable(0.5)
    with m.GradientTape() as t1:
        with m.GradientTape() as t2:
            with m.GradientTape() as t3:
                y = m.sin(v) * v
            d1 = t3.gradient(y, v)
        d2 = t2.gradient(d1, v)
    return d1, d2, t1.gradient(d2, v)


@row()
def persistent_nested_tape_used_twice(m):
    x = m.constant(3.0)
    with m.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x * x
        with m.GradientTape(persistent=True) as gg:
            gg.watch(y)
            z = 2 * y
        for _ in range(2):
            inner = gg.gradient(z, [y])[0]
        y += inner
    return g.gradient(y, [x])[0], g.gradient(z, [x])[0]


@row()
def gradient_of_a_sum_of_gradients(m):
    w = m.Variable([1.0, 2.0])
    x = m.constant([3.0, 4.0])
    with m.GradientTape() as outer:
        with m.GradientTape() as inner:
            y = m.reduce_sum(w * w * x)
        g = inner.gradient(y, w)
        penalty = m.reduce_sum(g * g)
    return outer.gradient(penalty, w)


# -- jacobians -----------------------------------------------------------------------
@row()
def jacobian_of_a_vector(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape() as g:
        g.watch(x)
        y = x * x
    return g.jacobian(y, x)


@row()
def jacobian_with_respect_to_a_structure(m):
    w = m.Variable([[1.0, 2.0], [3.0, 4.0]])
    x = m.constant([0.5, -1.0])
    with m.GradientTape(persistent=True) as g:
        g.watch(x)
        y = m.tanh(m.reshape(m.linalg.matmul(w, m.reshape(x, [2, 1])), [2]))
    return g.jacobian(y, {"x": x, "w": w})


@row()
def jacobian_of_a_scalar(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape() as g:
        g.watch(x)
        y = m.reduce_sum(x * x)
    return g.jacobian(y, x)


@row()
def jacobian_unconnected_none_and_zero(m):
    x, c = m.constant([1.0, 2.0]), m.constant([[1.0, 2.0, 3.0]])
    with m.GradientTape(persistent=True) as g:
        g.watch([x, c])
        y = x * x
    return g.jacobian(y, c), g.jacobian(y, c, unconnected_gradients="zero")


@row(error=RuntimeError, match="persistent=True")
def jacobian_without_pfor_needs_a_persistent_tape(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape() as g:
        g.watch(x)
        y = x * x
    g.jacobian(y, x, experimental_use_pfor=False)


@row()
def batch_jacobian_per_example(m):
    x = m.constant([[1.0, 2.0], [3.0, 4.0]])
    with m.GradientTape() as g:
        g.watch(x)
        y = m.concat([x * x, m.sin(x)], axis=1)
    return g.batch_jacobian(y, x)


@row()
def batch_jacobian_of_an_unconnected_source_is_zeros(m):
    x, c = m.constant([[1.0, 2.0]]), m.constant([[1.0, 2.0, 3.0]])
    with m.GradientTape(persistent=True) as g:
        g.watch([x, c])
        y = x * x
    return g.batch_jacobian(y, c), g.batch_jacobian(y, c, unconnected_gradients="zero")


@row(error=ValueError, match="must have rank at least 2")
def batch_jacobian_needs_rank_two(m):
    x = m.constant([1.0, 2.0])
    with m.GradientTape() as g:
        g.watch(x)
        y = x * x
    g.batch_jacobian(y, x)


@row(error=ValueError)
def batch_jacobian_needs_matching_batch_dimensions(m):
    x = m.constant([[1.0, 2.0]])
    with m.GradientTape() as g:
        g.watch(x)
        y = m.concat([x, x], axis=0)
    g.batch_jacobian(y, x)


# -- ops without gradients, custom gradients -----------------------------------------
@row()
def stop_gradient_cuts_the_path(m):
    x = m.constant([1.0, 3.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = m.stop_gradient(x) * x
    return t.gradient(y, x)


@row()
def nondifferentiable_ops_give_none(m):
    x = m.constant([1.0, 3.0])
    with m.GradientTape(persistent=True) as t:
        t.watch(x)
        a = m.cast(m.argmax(x), m.float32)
        b = m.round(x)
        c = m.cast(m.cast(x, m.int32), m.float32)
    return [t.gradient(y, x) for y in (a, b, c)]


@row()
def assign_inside_the_tape_cuts_the_path(m):
    v = m.Variable(1.0)
    x = m.constant(3.0)
    with m.GradientTape() as t:
        t.watch(x)
        v.assign(x * 2.0)
        y = v * 1.0
    return t.gradient(y, [x, v])


@row(warns="NumpyEscapeWarning")
def numpy_escape_is_a_constant_to_the_tape(m):
    x = m.constant(3.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = m.constant(x.numpy() * 2) * x
    return t.gradient(y, x)


@row(warns="NumpyEscapeWarning")
def variable_numpy_escape_is_a_constant_to_the_tape(m):
    v = m.Variable(3.0)
    with m.GradientTape() as t:
        y = m.constant(v.numpy() * 2) * v
    return t.gradient(y, v)


@row()
def custom_gradient_replaces_the_rule(m):
    @m.custom_gradient
    def clip_gradient(x):
        def grad(dy):
            return m.clip_by_value(dy, -0.5, 0.5)

        return m.identity(x), grad

    x = m.constant([1.0, 2.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = clip_gradient(x) * 3.0
    return t.gradient(y, x)


@row()
def custom_gradient_with_variables(m):
    v = m.Variable(2.0)

    @m.custom_gradient
    def scale(x):
        def grad(dy, variables=None):
            return dy * v, [dy * x * 10.0]

        return x * v, grad

    x = m.constant(3.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = scale(x)
    return t.gradient(y, [x, v])


@row()
def gather_gradient_is_indexed_slices(m):
    v = m.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with m.GradientTape() as t:
        y = m.reduce_sum(m.gather(v, [0, 2, 0]) * 2.0)
    return t.gradient(y, v)


@row()
def gathers_of_one_variable_concatenate_in_recording_order(m):
    v = m.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    with m.GradientTape() as t:
        y = m.reduce_sum(m.gather(v, [3]) * 3.0)
        y += m.reduce_sum(m.gather(v, [[0, 1], [1, 1]]) * 2.0)
        y += m.reduce_sum(m.nn.embedding_lookup(v, [2]) ** 2)
    return t.gradient(y, v)


@row()
def second_order_through_an_indexed_slices_gradient(m):
    w = m.Variable([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    with m.GradientTape() as outer:
        with m.GradientTape() as inner:
            z = m.reduce_sum(m.gather(w, [0, 2, 0]) ** 3)
        g = inner.gradient(z, w)
        s = m.reduce_sum(m.convert_to_tensor(g) ** 2) + m.norm(g)
    return outer.gradient(s, w)


@row()
def gather_and_a_dense_read_give_a_dense_gradient(m):
    v = m.Variable([[1.0, 2.0], [3.0, 4.0]])
    with m.GradientTape() as t:
        y = m.reduce_sum(m.gather(v, [1])) + m.reduce_sum(v * v)
    return t.gradient(y, v)


@row()
def only_reads_reaching_the_target_decide_sparse_or_dense(m):
    v = m.Variable([[1.0, 2.0], [3.0, 4.0]])
    with m.GradientTape(persistent=True) as t:
        y = m.reduce_sum(m.gather(v, [1, 1]))
        z = m.reduce_sum(v * 2.0)  # another read, not on y's path
    return t.gradient(y, v), t.gradient(z, v), t.gradient([y, z], v)


@row()
def gather_on_axis_1_or_of_a_computed_tensor_is_dense(m):
    v = m.Variable([[1.0, 2.0], [3.0, 4.0]])
    with m.GradientTape() as t:
        y = m.reduce_sum(m.gather(v, [1, 0], axis=1))
        y += m.reduce_sum(m.gather(v * 2.0, [1]))
    return t.gradient(y, v)


@row()
def keras_embedding_gradient_is_indexed_slices(m):
    layer = m.keras.layers.Embedding(5, 3, embeddings_initializer="ones")
    ids = m.constant([[1, 2], [2, 4]])
    with m.GradientTape() as t:
        y = m.reduce_sum(layer(ids) * 2.0)
    return t.gradient(y, layer.trainable_variables)


@row()
def gather_after_a_cast_is_indexed_slices(m):
    v = m.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    w = m.Variable([[1.0, 2.0], [3.0, 4.0]])
    with m.GradientTape() as t:
        y = m.reduce_sum(m.cast(m.gather(m.cast(v, m.float16), [2, 0]), m.float32))
        z = m.reduce_sum(m.gather(m.cast(w, m.float16), [1]))
        z += m.reduce_sum(m.cast(w, m.float16) * 2.0)  # (w: dense)
        y += m.cast(z, m.float32)
    return t.gradient(y, [v, w])


@row()
def mixed_precision_embedding_gradient_is_indexed_slices(m):
    layer = m.keras.layers.Embedding(5, 3, dtype="mixed_float16")
    with m.GradientTape() as t:
        y = m.reduce_sum(m.cast(layer(m.constant([[1, 2], [2, 4]])), m.float32))
    return t.gradient(y, layer.trainable_variables)


@row()
def unconnected_gather_gives_none(m):
    v = m.Variable([[1.0, 2.0], [3.0, 4.0]])
    w = m.Variable(2.0)
    with m.GradientTape() as t:
        m.gather(v, [1])
        y = w * 3.0
    return t.gradient(y, [v, w])


@row()
def gather_from_a_watched_tensor(m):
    x = m.constant([1.0, 2.0, 3.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = m.gather(x * x, [2, 2, 0])
    return t.gradient(y, x)


@row()
def where_of_sqrt_at_zero_gives_zero(m):
    x = m.constant([0.0, 4.0])
    with m.GradientTape() as t:
        t.watch(x)
        y = m.where(x > 0, m.sqrt(x), 0.0)
    return t.gradient(y, x)


# -- dtypes --------------------------------------------------------------------------
@row()
def complex_gradient_is_conjugated(m):
    z = m.constant(1 + 2j, m.complex64)
    with m.GradientTape() as t:
        t.watch(z)
        w = z * z
    return t.gradient(w, z)


@row()
def float64_gradient_stays_float64(m):
    v = m.Variable(np.array([1.0, 2.0]))
    with m.GradientTape() as t:
        y = m.reduce_sum(v * v)
    return t.gradient(y, v)


@row(rtol=1e-3)
def float16_gradient_stays_float16(m):
    x = m.constant([1.0, 2.0], m.float16)
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
    return t.gradient(y, x)


@row()
def cast_between_floats_carries_the_gradient(m):
    x = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = m.cast(x, m.float64) ** 2
    return t.gradient(y, x)


# -- forward mode --------------------------------------------------------------------
@row()
def forward_accumulator_jvp(m):
    x = m.constant([1.0, 2.0])
    with m.autodiff.ForwardAccumulator(x, m.constant([1.0, 0.5])) as acc:
        y = m.reduce_sum(m.sin(x) * x)
    return acc.jvp(y)


@row()
def forward_accumulator_keeps_dict_key_order(m):
    x = m.constant([1.0, 2.0])
    with m.autodiff.ForwardAccumulator(x, m.constant([1.0, 0.5])) as acc:
        out = {"b": x * x, "a": m.sin(x), "c": m.constant(1.0)}
    return acc.jvp(out), acc.jvp(out, unconnected_gradients="zero")


# -- targets that are sources -------------------------------------------------------
@row()
def untracked_tensor_with_respect_to_itself_is_one(m):
    x = m.constant([2.0, 3.0])
    with m.GradientTape() as t:
        _ = x * 1.0
    return t.gradient(x, x)


@row()
def variable_target_takes_its_output_gradient(m):
    v = m.Variable(2.0)
    with m.GradientTape() as t:
        _ = v * 1.0
    return t.gradient(v, v, output_gradients=m.constant(3.0))


@row()
def variable_target_with_zero_for_the_other_sources(m):
    v, x = m.Variable(2.0), m.constant(1.0)
    with m.GradientTape() as t:
        _ = v * 1.0
    return t.gradient(v, [v, x], unconnected_gradients="zero")


@row()
def non_trainable_variable_never_read_with_respect_to_itself(m):
    v = m.Variable([1.0, 2.0], trainable=False)
    with m.GradientTape() as t:
        pass
    return t.gradient(v, v)


@row(warns="GradientWarning")
def integer_variable_with_respect_to_itself_is_an_integer_one(m):
    v = m.Variable(2)
    with m.GradientTape() as t:
        _ = v * 1
    return t.gradient(v, v)


@row()
def jacobian_of_a_variable_with_respect_to_itself_is_the_identity(m):
    v = m.Variable([1.0, 2.0])
    frozen = m.Variable([1.0, 2.0], trainable=False)
    with m.GradientTape(persistent=True) as t:
        pass
    return t.jacobian(v, v), t.jacobian(frozen, frozen)


# -- more states of the tape ---------------------------------------------------------
@row(warns="NumpyEscapeWarning")
def variables_read_through_numpy_are_watched(m):
    v = m.Variable(3.0, name="v")
    w = m.Variable(1.0, name="w")
    with m.GradientTape() as t:
        _ = v.numpy()
        _ = np.asarray(w)
    return [x.name for x in t.watched_variables()]


@row(error=RuntimeError, match="Trying to stop recording a tape which is not recording")
def stop_recording_after_a_non_persistent_gradient_inside_raises(m):
    x = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = x * x
        t.gradient(y, x)
        with t.stop_recording():
            pass


@row()
def variables_read_after_a_gradient_inside_the_context_are_not_watched(m):
    v, w = m.Variable(1.0, name="v"), m.Variable(2.0, name="w")
    with m.GradientTape() as t:
        y = v * 2.0
        t.gradient(y, v)
        _ = w * 2.0
    return [x.name for x in t.watched_variables()]


@row(error=RuntimeError, match="one set of gradients")
def jacobian_on_a_tape_never_entered_raises(m):
    x = m.constant([1.0])
    m.GradientTape().jacobian(x, x)


@row(error=RuntimeError, match="persistent=True")
def batch_jacobian_without_pfor_needs_a_persistent_tape(m):
    x = m.constant([[1.0, 2.0]])
    with m.GradientTape() as g:
        g.watch(x)
        y = x * 2.0
    g.batch_jacobian(y, x, experimental_use_pfor=False)


@row()
def jacobians_without_pfor_on_a_persistent_tape(m):
    x = m.constant([[1.0, 2.0]])
    with m.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x * x
    return (
        g.jacobian(y, x, experimental_use_pfor=False),
        g.batch_jacobian(y, x, experimental_use_pfor=False),
    )


@row()
def tuple_sources_give_a_tuple(m):
    x = m.constant(2.0)
    with m.GradientTape() as t:
        t.watch(x)
        y = x * 2.0
    return t.gradient(y, (x,))


@row()
def forward_accumulator_jvp_of_a_variable_primal_is_its_tangent(m):
    v = m.Variable([1.0, 2.0])
    with m.autodiff.ForwardAccumulator(v, m.constant([1.0, 0.0])) as acc:
        y = v * v
    return acc.jvp(y), acc.jvp(v)


@row()
def forward_accumulator_pairs_dict_tangents_by_key(m):
    a, b = m.constant(1.0), m.constant(2.0)
    with m.autodiff.ForwardAccumulator({"b": b, "a": a}, {"a": 1.0, "b": 10.0}) as acc:
        y = a * 3.0 + b
    return acc.jvp({"z": y, "y": [a, b]})


@row(error=TypeError)
def forward_accumulator_list_primals_with_tuple_tangents_raise(m):
    x = m.constant(1.0)
    with m.autodiff.ForwardAccumulator([x], (m.constant(1.0),)):
        pass


@row()
def forward_over_reverse_gives_a_hessian_vector_product(m):
    x = m.constant(1.5)
    with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
        with m.GradientTape() as t:
            t.watch(x)
            y = x * x * x
        g = t.gradient(y, x)
    return g, acc.jvp(g)


@row()
def reverse_over_forward(m):
    x = m.constant(1.5)
    with m.GradientTape() as t:
        t.watch(x)
        with m.autodiff.ForwardAccumulator(x, m.constant(1.0)) as acc:
            y = x * x * x
        j = acc.jvp(y)
    return j, t.gradient(j, x)


# -- comparing the two runs ----------------------------------------------------------
def _run(m, spec: Row):
    try:
        return spec.fn(m), None
    except Exception as e:  # noqa: BLE001 - the row's error is the result
        return None, e


def _same_error(tf, tf_error, jt_error, spec: Row):
    assert tf_error is not None, "TF did not raise: the row's `error` is wrong"
    assert jt_error is not None, f"TF raised {tf_error!r}; jaxtape did not"
    name = spec.error if isinstance(spec.error, str) else spec.error.__name__
    assert type(tf_error).__name__ == name, f"TF raised {tf_error!r}"
    if isinstance(spec.error, str):  # tf.errors.X <-> jaxtape.errors.X
        assert isinstance(jt_error, getattr(jaxtape.errors, name)), repr(jt_error)
    else:
        assert type(jt_error) is spec.error, repr(jt_error)
    if spec.match is not None:
        assert spec.match in str(tf_error), str(tf_error)
        assert spec.match in str(jt_error), str(jt_error)


def _assert_same(tf, got, want, rtol, path="result"):
    if want is None:
        assert got is None, f"{path}: TF gives None, jaxtape {got!r}"
        return
    assert got is not None, f"{path}: TF gives {want!r}, jaxtape None"
    if isinstance(want, tf.Variable):
        assert isinstance(got, jaxtape.Variable), f"{path}: {got!r} is no Variable"
        assert got.name == want.name, path
        got, want = got.read_value(), want.read_value()
    if isinstance(want, tf.IndexedSlices):  # TF's gradient of a gather
        assert isinstance(got, jaxtape.IndexedSlices), f"{path}: {got!r}"
        for part in ("values", "indices", "dense_shape"):
            _assert_same(tf, getattr(got, part), getattr(want, part), rtol, part)
        return
    if isinstance(want, tf.Tensor):
        assert type(got) is jaxtape.Tensor, f"{path}: {got!r} is no Tensor"
        assert got.dtype.name == want.dtype.name, f"{path}: dtype {got.dtype.name}"
        assert tuple(got.shape) == tuple(want.shape), f"{path}: shape {got.shape}"
        np.testing.assert_allclose(
            got.numpy(), want.numpy(), rtol=rtol, atol=1e-6, err_msg=path
        )
        return
    assert type(got) is type(want), f"{path}: {type(got)} is not {type(want)}"
    if isinstance(want, Mapping):
        assert list(got) == list(want), f"{path}: keys {list(got)}, TF {list(want)}"
        if isinstance(want, collections.defaultdict):
            assert got.default_factory is want.default_factory, path
        for k in want:
            _assert_same(tf, got[k], want[k], rtol, f"{path}[{k!r}]")
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), f"{path}: {len(got)} items, TF {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_same(tf, g, w, rtol, f"{path}[{i}]")
    else:
        assert got == want, f"{path}: {got!r}, TF {want!r}"


def test_the_table_has_at_least_49_rows():
    assert len(CASES) >= 49


def test_explain_gradient_names_a_variable_read_through_numpy(tf):
    # TF gives None here too (the oracle); jaxtape also says why.
    grads = []
    for m in (tf, jaxtape):
        v = m.Variable(3.0)
        with m.GradientTape(persistent=True) as t:
            if m is jaxtape:
                with pytest.warns(jaxtape.debug.NumpyEscapeWarning):
                    y = m.constant(v.numpy() * 2.0) * 2.0
            else:
                y = m.constant(v.numpy() * 2.0) * 2.0
        grads.append(t.gradient(y, v))
    assert grads == [None, None]
    assert "NumPy" in jaxtape.debug.explain_gradient(t, y, v)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_tape_behaves_as_tensorflow(name, tf):
    spec = CASES[name]
    want, tf_error = _run(tf, spec)
    if spec.warns is not None:
        with pytest.warns(getattr(jaxtape.debug, spec.warns)):
            got, jt_error = _run(jaxtape, spec)
    else:
        got, jt_error = _run(jaxtape, spec)
    if spec.error is not None:
        _same_error(tf, tf_error, jt_error, spec)
        return
    if tf_error is not None:
        raise AssertionError(f"TF raised {tf_error!r}") from tf_error
    if jt_error is not None:
        raise jt_error
    _assert_same(tf, got, want, spec.rtol)
