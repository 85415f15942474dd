"""AutoGraph's operators: converted Python control flow, lowered to jaxtape's. L5.

The converter (`conversion.py`) rewrites `if`/`while`/`for`, `and`/`or`/`not`,
`x if c else y` and `assert` into calls of the functions here, as TF's
AutoGraph does (the generated code is TF's: `ag__.if_stmt(cond, body,
orelse, get_state, set_state, names, nouts)`). Each decides at trace time:

- on a traced Tensor (inside `jaxtape.function`) the statement is staged:
  `if` becomes `control_flow.cond`, `while` and `for` become
  `control_flow.while_loop`, each body traced once, as TF stages `tf.cond`
  and `tf.while_loop`;
- on Python values (and concrete Tensors, eagerly) it runs as Python: a
  `for` over a list unrolls, an `if` on a Python bool is decided at trace
  time.

A `for` over `jaxtape.range(...)`, a Tensor or a `Dataset` inside a function
is a loop even when its values are known (TF's rule: a Tensor is iterated by
a TF loop). A range's trip count is static when its arguments are Python or
concrete values, and the loop gets it as `maximum_iterations` (TF's XLA
hint), the form control_flow can differentiate in reverse mode.

TF's checks and texts: a variable defined in one branch only, `None` at the
end of a branch, dtype or structure that differs between branches or
changes in a loop iteration (named), a value defined only inside a loop
that may run zero times (a run-time check, as TF's), conditions that are not
scalar booleans. Variables undefined before a loop get their type from its
first iteration, which runs before the loop (TF traces one iteration in a
scratch graph for the same purpose; here it is peeled off and kept).
"""

from __future__ import annotations

import threading
import warnings
import weakref
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from malt.operators import variables as _ag_vars

from jaxtape._src.core import context
from jaxtape._src.core.tensor import Tensor, tree_map
from jaxtape._src.data.dataset import Dataset
from jaxtape._src.function import capture as _capture
from jaxtape._src.function import control_flow
from jaxtape._src.function import trace as _trace
from jaxtape._src.function.function import inside_function
from jaxtape._src.ops import creation_ops, math_ops, nondiff
from jaxtape._src.ops.array_ops import gather
from jaxtape._src.ops.misc_ops import Assert
from jaxtape._src.ops.tensor_array import TensorArray
from jaxtape._src.state import scope as state_scope
from jaxtape._src.state.variable import Variable

Undefined = _ag_vars.Undefined
UndefinedReturnValue = _ag_vars.UndefinedReturnValue

_LEGAL_LOOP_TYPES = "Tensor, int, float, bool or a list, tuple or dict thereof"
_STATIC_SHAPES = (
    " jaxtape.function compiles loops and branches with XLA, which needs a fixed "
    "shape: keep the shape constant (pad, or write rows into a preallocated "
    "tensor or a `jaxtape.TensorArray`), or iterate over a Python value (the "
    "loop unrolls)."
)


# -- values ----------------------------------------------------------------------
def _tensor(x):
    """`x` as a Tensor when it is one (a Variable is read), else None."""
    if type(x) is Tensor:
        return x
    if isinstance(x, Variable):
        return x.read_value()
    return None


def _is_traced(x) -> bool:
    """Whether `x` is a Tensor of the trace: traced, or a known value derived
    from static shapes (TF's are symbolic: loops over them are staged)."""
    t = _tensor(x)
    if t is None:
        return False
    v = t._value
    return isinstance(v, jax.core.Tracer) or id(v) in context.state.static


def _is_tracer(x) -> bool:
    t = _tensor(x)
    return t is not None and isinstance(t._value, jax.core.Tracer)


def _is_null(v) -> bool:
    return v is None or isinstance(v, (Undefined, UndefinedReturnValue))


def _as_carried(name, value):
    """A loop or branch value as a structure of Tensors (TF converts Python
    numbers and NumPy arrays to tensors for `tf.cond`/`tf.while_loop`)."""

    def leaf(x):
        if isinstance(x, TensorArray):  # control_flow carries it as it is
            return x
        t = _tensor(x)
        if t is not None:
            return t
        if isinstance(x, (bool, int, float, np.ndarray, np.generic)):
            return creation_ops.convert_to_tensor(x)
        if x is None or _is_null(x):
            return x
        if isinstance(x, jax.Array):
            return Tensor(x)
        if jax.tree_util.all_leaves([x]) and not isinstance(x, (list, tuple, dict)):
            raise TypeError(
                f"Found an unsupported type '{type(x).__name__}' for '{name}', a "
                "value that a loop or a branch on a Tensor changes. Supported types "
                f"include {_LEGAL_LOOP_TYPES}."
            )
        return x

    return jax.tree_util.tree_map(leaf, value, is_leaf=_is_leaf)


def _is_leaf(x) -> bool:
    return type(x) is Tensor or isinstance(x, (Variable, TensorArray))


def _leaves(value):
    return jax.tree_util.tree_flatten(value, is_leaf=_is_leaf)


def _same_structure(a, b) -> str | None:
    """None when `a` and `b` have the same nesting, else TF's explanation."""
    ta, tb = _leaves(a)[1], _leaves(b)[1]
    if ta == tb:
        return None
    return (
        "The two structures don't have the same nested structure.\n\n"
        f"First structure: type={type(a).__name__} str={a}\n\n"
        f"Second structure: type={type(b).__name__} str={b}"
    )


def _verify_condition(cond, tag: str) -> Tensor:
    """TF's check that a staged condition is a scalar bool (reshaped if size 1)."""
    t = _tensor(cond)
    if t is None:
        t = creation_ops.convert_to_tensor(cond)
    hint = "to check for None, use `is not None`"
    if t.dtype.name != "bool":
        raise ValueError(
            f"condition of {tag} expected to be `jaxtape.bool` scalar, got {t}; "
            f"to use as boolean Tensor, use `jaxtape.cast`; {hint}"
        )
    if t.shape.rank:
        if int(np.prod(t.shape.as_list())) > 1:
            raise ValueError(
                f"condition of {tag} expected to be `jaxtape.bool` scalar, got {t}; "
                f"{hint}"
            )
        t = Tensor(jnp.reshape(t._value, ()))
    return t


# -- if ----------------------------------------------------------------------------
def if_stmt(cond, body, orelse, get_state, set_state, symbol_names, nouts):
    """`if cond: body() else: orelse()`; staged as `control_flow.cond` when
    `cond` is a traced Tensor, else Python's `if` (TF's `if_stmt`)."""
    if _is_traced(cond):
        _staged_if(cond, body, orelse, get_state, set_state, symbol_names, nouts)
    elif body_taken(cond):
        body()
    else:
        orelse()


def body_taken(cond) -> bool:
    t = _tensor(cond)
    return bool(t if t is not None else cond)


def _staged_if(cond, body, orelse, get_state, set_state, names, nouts):
    pred = _verify_condition(cond, "if statement")
    init = get_state()
    outs: dict = {}

    def branch(fn, kind, other):
        def run():
            set_state(init)
            fn()
            new = tuple(get_state()[:nouts])
            for name, v in zip(names, new):
                if isinstance(v, Undefined):
                    raise ValueError(
                        f"'{name}' must also be initialized in the {kind} branch"
                    )
                if isinstance(v, UndefinedReturnValue):
                    raise ValueError(
                        f"the {kind} branch must also have a return statement."
                    )
                if v is None:
                    raise ValueError(
                        f"'{name}' is None at the end of the {kind} branch."
                    )
            new = tuple(_as_carried(n, v) for n, v in zip(names, new))
            outs[kind] = new
            if other in outs:
                main, alt = (new, outs[other]) if kind == "main" else (outs[other], new)
                _verify_branches(main, alt, names)
            return new

        return run

    final: Any = control_flow.cond(
        pred, branch(body, "main", "else"), branch(orelse, "else", "main")
    )
    set_state(tuple(final) + tuple(init[nouts:]))


def _verify_branches(main, alt, names):
    for name, a, b in zip(names, main, alt):
        why = _same_structure(a, b)
        if why is not None:
            raise TypeError(
                f"'{name}' must have the same nested structure in the main and else "
                f"branches:\n\n{why}"
            )
        for x, y in zip(_leaves(a)[0], _leaves(b)[0]):
            if type(x) is not Tensor or type(y) is not Tensor:
                continue
            if x.dtype != y.dtype:
                raise TypeError(
                    f"'{name}' has dtype {x.dtype.name} in the main branch, but dtype "
                    f"{y.dtype.name} in the else branch"
                )
            if x.shape != y.shape:
                raise ValueError(
                    f"'{name}' has shape {x.shape} in the main branch, but shape "
                    f"{y.shape} in the else branch (TF gives it an unknown shape)."
                    + _STATIC_SHAPES
                )


def if_exp(cond, if_true, if_false, expr_repr):
    """`if_true() if cond else if_false()` (TF's `if_exp`)."""
    if not _is_traced(cond):
        return if_true() if body_taken(cond) else if_false()
    pred = _verify_condition(cond, "if expression")
    outs: dict = {}

    def branch(fn, kind):
        def run():
            out = _as_carried(expr_repr, fn())
            outs[kind] = out
            if len(outs) == 2:
                _verify_branches((outs["main"],), (outs["else"],), (expr_repr,))
            return out

        return run

    return control_flow.cond(pred, branch(if_true, "main"), branch(if_false, "else"))


# -- logical operators -------------------------------------------------------------
def and_(a, b):
    """`a() and b()`, lazy in `b` (TF stages it as `tf.cond(a, b, lambda: a)`)."""
    a_val = a()
    if _is_traced(a_val):
        a_t = _tensor(a_val)
        return control_flow.cond(a_t, lambda: _tensor_or_value(b()), lambda: a_t)
    return a_val and b()


def or_(a, b):
    """`a() or b()`, lazy in `b` (TF stages it as `tf.cond(a, lambda: a, b)`)."""
    a_val = a()
    if _is_traced(a_val):
        a_t = _tensor(a_val)
        return control_flow.cond(a_t, lambda: a_t, lambda: _tensor_or_value(b()))
    return a_val or b()


def _tensor_or_value(x):
    return _as_carried("<operand>", x)


def not_(a):
    """`not a`; `logical_not` on a traced Tensor."""
    if _is_traced(a):
        return nondiff.logical_not(_tensor(a))
    return not a


def eq(a, b):
    """`a == b` (with `Feature.EQUALITY_OPERATORS`): `equal` on Tensors."""
    if _tensor(a) is not None or _tensor(b) is not None:
        return nondiff.equal(a, b)
    return a == b


def not_eq(a, b):
    return not_(eq(a, b))


# -- assert ------------------------------------------------------------------------
def assert_stmt(expression1, expression2):
    """`assert expression1, expression2()`: on a Tensor, a run-time check
    (`jaxtape.debugging.Assert`, as TF's with `Feature.ASSERT_STATEMENTS`)."""
    if _tensor(expression1) is not None:
        data = expression2()
        Assert(expression1, data if isinstance(data, list) else [data])
        return None
    if not expression1:
        raise AssertionError(expression2())
    return None


# -- while -------------------------------------------------------------------------
def while_stmt(test, body, get_state, set_state, symbol_names, opts):
    """`while test(): body()`; staged when the first test is a traced Tensor."""
    first = test()
    if _is_traced(first):
        _staged_loop(test, body, get_state, set_state, symbol_names, opts)
        return
    if not body_taken(first):
        return
    body()
    while True:
        result = test()
        if _is_traced(result):
            raise NotImplementedError(
                "The condition of while loop started as non-Tensor, then changed to "
                "Tensor. This may happen either because variables changed type, or "
                "when a break or return statement inside the loop depends on a "
                "Tensor condition. In both cases, changing to a TF loop should remove "
                "the error: make the loop's condition a Tensor from the start (e.g. "
                "`i = jaxtape.constant(0)`)."
            )
        if not body_taken(result):
            return
        body()


def _staged_loop(test, body, get_state, set_state, names, opts, trip_count=None):
    """`while test(): body()` as one `control_flow.while_loop`.

    `trip_count`: a static bound on the iterations (a range's length), passed
    as `maximum_iterations`. Variables undefined before the loop are defined
    by its first iteration, run before the loop (under `cond` when the test
    is traced; a run-time check then says when the loop ran zero times).
    """
    init = tuple(get_state())
    _no_return_inside(init)
    maximum = opts.get("maximum_iterations")
    if maximum is None:
        maximum = trip_count
    elif trip_count is not None:
        maximum = min(int(maximum), trip_count)
    nulls = [_is_null(v) for v in init]
    ran = None  # whether the peeled first iteration ran (traced), when it is needed
    if any(nulls):
        init, ran = _peel(test, body, get_state, set_state, init, nulls, names)
        if init is None:  # the loop never runs: its variables stay undefined
            _loop_ran_check(False, names, nulls)
            return
        if maximum is not None:
            maximum = int(maximum) - 1
    else:
        init = tuple(_as_carried(n, v) for n, v in zip(names, init))
    _check_invariants(init, names, opts)

    def cond_fn(*vals):
        set_state(vals)
        return _verify_condition(test(), "while loop")

    def body_fn(*vals):
        set_state(vals)
        body()
        new = tuple(get_state())
        _verify_loop_vars(vals, new, names)
        return tuple(_as_carried(n, v) for n, v in zip(names, new))

    if maximum is None or maximum > 0:
        if not init:  # no Python variable changes (Variables may): a dummy carry
            control_flow.while_loop(
                lambda _: cond_fn(),
                lambda d: (body_fn(), d)[1],
                _Carry((creation_ops.constant(0),)),
                maximum_iterations=maximum,
            )
        else:
            final: Any = control_flow.while_loop(
                cond_fn, body_fn, _Carry(init), maximum_iterations=maximum
            )
            set_state(tuple(final))
    else:
        set_state(init)
    if ran is not None:
        _loop_ran_check(ran, names, nulls)


def _pair(out) -> tuple[Any, Any]:
    first, second = out
    return first, second


class _Carry(tuple):
    """The loop variables as control_flow gets them (a tuple, never a single
    value, even with one variable)."""


def _peel(test, body, get_state, set_state, init, nulls, names):
    """Runs the loop's first iteration before it, to define the variables it
    leaves undefined before the loop (their type comes from that iteration).

    Returns (the state after it, whether it ran: None when known to have
    run), or (None, None) when the test is statically false.
    """
    first = test()
    if not _is_traced(first):
        if not body_taken(first):
            return None, None
        _run_first(body, names, nulls)
        after = tuple(get_state())
        _verify_loop_vars(init, after, names, nulls)
        return tuple(_as_carried(n, v) for n, v in zip(names, after)), None
    pred = _verify_condition(first, "while loop")
    seen: dict = {}

    def ran():
        set_state(init)
        _run_first(body, names, nulls)
        after = tuple(get_state())
        _verify_loop_vars(init, after, names, nulls)
        after = tuple(_as_carried(n, v) for n, v in zip(names, after))
        seen["after"] = after
        return after, creation_ops.constant(True)

    def skipped():
        if "after" not in seen:  # (lax.cond traces its true branch first)
            raise RuntimeError(
                "Internal error: AutoGraph's first loop iteration was not traced "
                "before its placeholder. Please report the issue."
            )
        placeholders = tuple(
            tree_map(lambda t: Tensor(jnp.zeros(t.shape, t._value.dtype)), a)
            if null
            else v
            for a, v, null in zip(seen["after"], init, nulls)
        )
        placeholders = tuple(_as_carried(n, v) for n, v in zip(names, placeholders))
        return placeholders, creation_ops.constant(False)

    state, flag = _pair(control_flow.cond(pred, ran, skipped))
    set_state(tuple(state))
    return tuple(state), flag


def _run_first(body, names, nulls):
    try:
        body()
    except UnboundLocalError as e:
        name = next(n for n, null in zip(names, nulls) if null)
        raise ValueError(
            f"'{name}' must be defined before the loop\nNote: AutoGraph tried to "
            f"define it automatically, but ran into a UnboundLocalError: {e}"
        ) from e


def _loop_ran_check(ran, names, nulls):
    """TF's run-time assertion that a loop defining variables ran at least once."""
    missing = ", ".join(n for n, null in zip(names, nulls) if null)
    Assert(ran, [f"loop must iterate at least once to initialize {missing}"])


def _verify_loop_vars(entry, exit_, names, skip=None):
    """TF's checks that an iteration keeps each variable's structure and dtype
    (and, here, shape)."""
    for k, (name, a, b) in enumerate(zip(names, entry, exit_)):
        if skip is not None and skip[k]:
            continue
        if b is None:
            raise ValueError(f"'{name}' is None at the end of the iteration.")
        if isinstance(b, (Undefined, UndefinedReturnValue)):
            continue
        a, b = _as_carried(name, a), _as_carried(name, b)
        why = _same_structure(a, b)
        if why is not None:
            raise TypeError(
                f"'{name}' does not have the same nested structure after one "
                f"iteration.\n\n{why}"
            )
        for x, y in zip(_leaves(a)[0], _leaves(b)[0]):
            if type(x) is not Tensor or type(y) is not Tensor:
                continue
            if x.dtype != y.dtype:
                raise TypeError(
                    f"'{name}' has dtype {x.dtype.name} before the loop, but dtype "
                    f"{y.dtype.name} after one iteration"
                )
            if x.shape != y.shape:
                raise ValueError(
                    f"'{name}' has shape {x.shape} before the loop, but shape "
                    f"{y.shape} after one iteration. Use "
                    "tf.autograph.experimental.set_loop_options to set shape "
                    "invariants." + _STATIC_SHAPES
                )


def _check_invariants(init, names, opts):
    """`shape_invariants` (set_loop_options): a fixed shape is all XLA carries."""
    for var, shape in opts.get("shape_invariants", ()):
        for name, v in zip(names, init):
            t = _tensor(v)
            if t is None or t is not _tensor(var) and v is not var:
                continue
            if not t.shape.is_compatible_with(shape) or not _fully_known(shape):
                raise NotImplementedError(
                    f"shape_invariants: '{name}' has shape {t.shape}; the invariant "
                    f"{shape} lets it change between iterations, which "
                    "jaxtape cannot compile." + _STATIC_SHAPES
                )


def _fully_known(shape) -> bool:
    dims = getattr(shape, "as_list", lambda: list(shape))()
    return dims is not None and all(d is not None for d in dims)


# -- for ---------------------------------------------------------------------------
class _Range(threading.local):
    """The arguments of the last `range` the converted code made, so that a
    `for` over it can loop on the iterate (TF recognizes its Range op)."""

    def __init__(self):
        self.last: tuple | None = None  # (tensor, start, limit, delta)


_ranges = _Range()


class DynamicRange:
    """`jaxtape.range(...)` with a traced argument inside converted code: its
    length is not known while tracing, so it exists only to be iterated by a
    `for` (a `while_loop`); other uses raise."""

    def __init__(self, start, limit, delta, dtype):
        self.start, self.limit, self.delta, self.dtype = start, limit, delta, dtype

    def __repr__(self):
        return f"<range({self.start}, {self.limit}, {self.delta}) of traced length>"

    def __getattr__(self, name):
        raise TypeError(
            "jaxtape.range with a traced argument has a length unknown while "
            "tracing; inside a converted function it can only be iterated by a "
            "`for` loop. Pass its bounds as Python numbers for a tensor of "
            "known size."
        )


def range_(start_or_stop, stop=None, step=None, dtype=None, name="range"):
    """`jaxtape.range` and Python's `range` in converted code: a range whose
    arguments include a Tensor loops on the iterate (TF's `range_`)."""
    args = [a for a in (start_or_stop, stop, step) if a is not None]
    if not any(_tensor(a) is not None for a in args):
        if dtype is None and all(isinstance(a, int) for a in args):
            return range(*args)
    return jaxtape_range(start_or_stop, stop, 1 if step is None else step, dtype)


def jaxtape_range(start, limit=None, delta=1, dtype=None, name="range"):
    """`jaxtape.range` as converted code calls it."""
    if limit is None:
        start, limit = 0, start
    if any(_is_tracer(a) for a in (start, limit, delta)):
        return DynamicRange(start, limit, delta, dtype)
    tensor = creation_ops.range(start, limit, delta, dtype=dtype)
    _ranges.last = (tensor, start, limit, delta)
    return tensor


def for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, opts):
    """`for x in iter_: body(x)`, stopping when `extra_test()` (break, return)
    is false. Inside a function a range, a Tensor or a Dataset is iterated by
    a loop (TF's rule); anything else unrolls in Python."""
    last = _ranges.last
    _ranges.last = None
    staged = inside_function()
    if isinstance(iter_, DynamicRange):
        r = iter_
        _range_loop(
            r.start,
            r.limit,
            r.delta,
            r.dtype,
            None,
            extra_test,
            body,
            get_state,
            set_state,
            symbol_names,
            opts,
        )
    elif staged and last is not None and last[0] is iter_:
        _, start, limit, delta = last
        n = int(iter_.shape[0])
        if iter_.dtype.is_integer:
            first, step = int(_value(start)), int(_value(delta))
            _counted_loop(
                n,
                lambda k: k * step + first,
                lambda i: (
                    i if i.dtype == iter_.dtype else math_ops.cast(i, iter_.dtype)
                ),
                extra_test,
                body,
                get_state,
                set_state,
                symbol_names,
                opts,
                step=step,
            )
        else:  # a float range: TF's `iterate += delta` while `iterate < limit`
            _range_loop(
                start,
                limit,
                delta,
                iter_.dtype,
                n,
                extra_test,
                body,
                get_state,
                set_state,
                symbol_names,
                opts,
            )
    elif staged and (tensor := _tensor(iter_)) is not None and tensor.shape.rank:
        _tensor_loop(tensor, extra_test, body, get_state, set_state, symbol_names, opts)
    elif staged and isinstance(iter_, Dataset):
        _dataset_loop(iter_, extra_test, body, get_state, set_state, symbol_names, opts)
    else:
        _py_for(iter_, extra_test, body)


def _py_for(iter_, extra_test, body):
    def go_on():
        result = extra_test()
        if _is_traced(result):
            raise NotImplementedError(
                "break and return statements which depend on a TF condition are not "
                "supported in Python for loops. Did you intend to make it a TF loop? "
                "Iterate over `jaxtape.range(n)` or a Tensor for a loop in the "
                "compiled program."
            )
        return body_taken(result)

    if extra_test is None:
        for target in iter_:
            body(target)
        return
    if not go_on():
        return
    for target in iter_:
        body(target)
        if not go_on():
            break


def _range_loop(
    start, limit, delta, dtype, n, extra_test, body, get_state, set_state, names, opts
):
    """TF's `_tf_range_for_stmt`: the iterate is a loop variable, `iterate <
    limit` (or `>`, for a negative step) the test, `n` the static trip count."""
    cast = (lambda v: math_ops.cast(v, dtype)) if dtype is not None else (lambda v: v)
    iterate = cast(creation_ops.convert_to_tensor(start)) if dtype else start
    iterate = _as_carried("<iterate>", iterate)
    limit_t = _as_carried("<limit>", limit)
    delta_t = _as_carried("<delta>", delta)
    if dtype is not None:
        limit_t, delta_t = cast(limit_t), cast(delta_t)
    iterate_name = opts.get("iterate_names")

    def aug_get_state():
        state = tuple(get_state())
        state = tuple(
            iterate if name == iterate_name and isinstance(v, Undefined) else v
            for name, v in zip(names, state)
        )
        return (iterate, *state)

    def aug_set_state(values):
        nonlocal iterate
        iterate, *rest = values
        set_state(tuple(rest))

    def aug_body():
        nonlocal iterate
        body(iterate)
        iterate = iterate + delta_t

    step = None if _is_traced(delta) else np.asarray(_value(delta))  # static sign

    def aug_test():
        if step is None:
            main = nondiff.logical_or(
                nondiff.logical_and(delta_t >= 0, iterate < limit_t),
                nondiff.logical_and(delta_t < 0, iterate > limit_t),
            )
        else:
            main = iterate < limit_t if step >= 0 else iterate > limit_t
        if extra_test is not None:
            return and_(lambda: main, extra_test)
        return main

    _staged_loop(
        aug_test,
        aug_body,
        aug_get_state,
        aug_set_state,
        ("<internal iterate>", *names),
        opts,
        trip_count=n,
    )


def _tensor_loop(tensor, extra_test, body, get_state, set_state, names, opts):
    """TF's `_known_len_tf_for_stmt`: the rows of `tensor`, by index."""
    _counted_loop(
        int(tensor.shape[0]),
        lambda k: k,
        lambda i: gather(tensor, i),
        extra_test,
        body,
        get_state,
        set_state,
        names,
        opts,
    )


def _counted_loop(
    n, index, element, extra_test, body, get_state, set_state, names, opts, step=1
):
    """`for k in range(n): body(element(i_k))` with `n` static, as one
    `control_flow.for_range` (one `lax.scan`, reverse-differentiable; a
    `break` makes each step a `lax.cond`). `index(k)` is the k-th value of the
    range `for_range` runs (`i_k`), `element` what the body gets for it.

    Variables undefined before the loop are defined by its first iteration,
    run before it; a loop of 0 iterations then fails TF's run-time check.
    """
    init = tuple(get_state())
    _no_return_inside(init)
    limit = opts.get("maximum_iterations")
    if limit is not None:
        n = min(n, int(limit))
    nulls = [_is_null(v) for v in init]
    first = 0
    if any(nulls):
        if n == 0:
            _loop_ran_check(False, names, nulls)
            return
        _run_first(lambda: body(element(creation_ops.constant(index(0)))), names, nulls)
        after = tuple(get_state())
        _verify_loop_vars(init, after, names, nulls)
        init, first = after, 1
    init = tuple(_as_carried(name, v) for name, v in zip(names, init))
    _check_invariants(init, names, opts)
    if first >= n or (first and extra_test is not None and not _goes_on(extra_test)):
        set_state(init)
        return

    def body_fn(i, *vals):
        set_state(vals)
        body(element(i))
        new = tuple(get_state())
        _verify_loop_vars(vals, new, names)
        return _Carry(_as_carried(name, v) for name, v in zip(names, new))

    def test_fn(*vals):
        set_state(vals)
        result = going_on()
        return result if _tensor(result) is not None else bool(result)

    going_on: Any = extra_test
    out: Any = control_flow.for_range(
        index(first),
        index(n),
        step,
        body_fn,
        _Carry(init),
        extra_test=test_fn if extra_test is not None else None,
    )
    set_state(tuple(out))


def _goes_on(extra_test) -> bool:
    """Whether a loop whose first iteration ran goes on (a static `break`)."""
    result = extra_test()
    return _is_traced(result) or body_taken(result)


def _no_return_inside(init):
    for v in init:
        if isinstance(v, UndefinedReturnValue):
            raise NotImplementedError(
                "a return statement cannot be placed inside this TensorFlow loop; "
                "this may happen if a return statement depends on a static Python "
                "condition such as a hyperparameter. (jaxtape, as TF: set a variable "
                "and `break` instead, and return after the loop.)"
            )


_DATASET_IN_LOOP = (
    "A `for` loop over a Dataset inside a staged loop of jaxtape.function reads "
    "the Dataset once per call: every iteration of the enclosing loop sees the "
    "same pass (TensorFlow reads the Dataset again in each iteration, so a "
    "shuffled Dataset gives each a new order). To get a fresh pass per "
    "iteration, call the function once per pass."
)


class _DatasetPass:
    """One pass over a Dataset, as a `for` inside a function reads it: runs
    of consecutive elements of one structure and shape, each stacked leaf by
    leaf into a hidden Variable (an input of the compiled program, not a
    constant). Before each later call the Dataset is read again and the
    Variables take the new pass (TF reads the Dataset per call)."""

    def __init__(self, dataset, groups):
        self.dataset = weakref.ref(dataset)
        self.signatures = [sig for sig, _ in groups]
        with state_scope.creating_state():
            self.holders = [
                [Variable(a, trainable=False, name="dataset_pass") for a in arrays]
                for _, arrays in groups
            ]
        self.unread = True  # this pass is the one the tracing call reads

    def refresh(self) -> None:
        if self.unread:
            self.unread = False
            return
        dataset = self.dataset()
        if dataset is None:
            return
        groups = _read_pass(dataset)
        signatures = [sig for sig, _ in groups]
        if signatures != self.signatures:
            raise ValueError(
                "A Dataset iterated by a `for` loop inside jaxtape.function changed "
                "its number of elements or their shapes since the function was "
                f"traced ({_pass_text(self.signatures)}, now "
                f"{_pass_text(signatures)}). jaxtape compiles the loop for one "
                "sequence of element shapes: keep the Dataset's length and shapes "
                "fixed (e.g. `batch(n, drop_remainder=True)`), or iterate it outside "
                "the function and pass each batch as an argument."
            )
        for holders, (_, arrays) in zip(self.holders, groups):
            for holder, array in zip(holders, arrays):
                holder.assign(array)


_passes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _read_pass(dataset) -> list:
    """One pass over `dataset`, read on the host: for each run of elements of
    one structure and shape, `((treedef, leaf shapes and dtypes, length),
    stacked leaves)`."""
    with context.paused_tapes(), state_scope.creating_state():
        elements = list(dataset)
    groups: list = []
    for element in elements:
        leaves, treedef = _leaves(element)
        sig = (treedef, tuple((np.shape(x), np.dtype(_dtype_of(x))) for x in leaves))
        if groups and groups[-1][0] == sig:
            groups[-1][1].append(leaves)
        else:
            groups.append((sig, [leaves]))
    out = []
    for (treedef, specs), rows in groups:
        arrays = [
            np.stack([np.asarray(_value(r[k])) for r in rows])
            for k in range(len(specs))
        ]
        out.append(((treedef, specs, len(rows)), arrays))
    return out


def _pass_text(signatures) -> str:
    """`3 of [(8, 1), (8, 1)] + 1 of [(4, 1), (4, 1)]`: runs of element shapes."""
    return " + ".join(
        f"{n} of {[tuple(shape) for shape, _ in specs]}" for _, specs, n in signatures
    )


def _dataset_loop(dataset, extra_test, body, get_state, set_state, names, opts):
    """A `for` over a Dataset inside a function: each run of consecutive
    elements of one shape is one loop over its stacked leaves (a partial last
    batch is a second loop), so the body is traced once per shape, not once
    per element; the stacks are program inputs, refilled per call (TF reads
    the Dataset per call), except for a Dataset the traced code makes."""
    if dataset._made_in_function:
        # Made by the traced code itself: read now, its elements constants
        # (each trace makes a new one, so no Variables can hold its pass).
        groups = [
            (sig, list(map(creation_ops.constant, a))) for sig, a in _read_pass(dataset)
        ]
    else:
        p = _passes.get(dataset)
        if p is None:
            p = _passes[dataset] = _DatasetPass(dataset, _read_pass(dataset))
        if not _trace.before_each_call(p.refresh):
            raise NotImplementedError(  # (staged loops run only while tracing)
                "a `for` loop over a Dataset outside jaxtape.function's tracing"
            )
        if any(isinstance(s, _capture.BranchScope) for s in state_scope._stack.scopes):
            warnings.warn(_DATASET_IN_LOOP, UserWarning, stacklevel=4)
        groups = [
            (sig, [h.read_value() for h in hs])
            for sig, hs in zip(p.signatures, p.holders)
        ]
    for (treedef, _, n), stacked in groups:

        def element(i, stacked=stacked, treedef=treedef):
            return jax.tree_util.tree_unflatten(
                treedef, [gather(s, i) for s in stacked]
            )

        _counted_loop(
            n,
            lambda k: k,
            element,
            extra_test,
            body,
            get_state,
            set_state,
            names,
            opts,
        )


def _dtype_of(x):
    t = _tensor(x)
    return t._value.dtype if t is not None else np.asarray(x).dtype


def _value(x):
    t = _tensor(x)
    return t._value if t is not None else x
