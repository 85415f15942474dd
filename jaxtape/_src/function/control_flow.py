"""Control flow on tensors: TF's `cond`, `switch_case`, `case`, `while_loop`,
`map_fn`, `scan`, `foldl`, `foldr`, and `for_range` (a loop over a range). L3.

Eagerly (nothing traced) these are plain Python, as in TF eager: the branch
that runs, or each iteration, is recorded op by op on the tapes.

Inside `jaxtape.function` (or on traced values) each construct traces its
Python functions once (`capture.trace`) and becomes ONE pure function over
`lax` control flow, called through the dispatcher. A GradientTape recording
inside the function sees one op whose inputs are every Tensor the construct
depends on (loop variables, elements, and Tensors and Variable reads its
functions close over), and differentiates it with JAX (`jax.vjp` of the
`lax` primitive). Variables assigned inside are extra outputs (loop carries).
Lowerings, and why:

- `cond`, `switch_case`, `case`: `lax.cond` / `lax.switch` (one branch runs).
- `for_range` with static bounds, `map_fn`, `scan`, `foldl`, `foldr`:
  `lax.scan`, which JAX differentiates in both modes.
- `while_loop` with `maximum_iterations` a Python int (or known while
  tracing): `lax.scan` over that many steps, each a `lax.cond` on the loop
  condition (steps after it turns False do nothing), so that it is
  reverse-mode differentiable; otherwise `lax.while_loop`, which JAX
  differentiates only in forward mode: a gradient through it raises
  `ValueError` naming the fix (`autodiff/backward.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.core import checks, context, dtypes, errors
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import (
    Tensor,
    TensorShape,
    TensorSpec,
    in_key_order,
    key_order,
)
from jaxtape._src.function import capture, loops
from jaxtape._src.state.variable import Variable

_state = context.state
_Tracer = jax.core.Tracer


# -- structures --------------------------------------------------------------------
def _like(loop_vars, values):
    """`values` in the sequence type of `loop_vars` (TF packs into it)."""
    if isinstance(loop_vars, list):
        return list(values)
    if hasattr(loop_vars, "_fields"):
        return type(loop_vars)(*values)
    return tuple(values)


def _assert_same_structure(a, b) -> None:
    ta = jax.tree_util.tree_structure(a, is_leaf=capture.is_leaf)
    tb = jax.tree_util.tree_structure(b, is_leaf=capture.is_leaf)
    if ta != tb:
        raise ValueError(
            "The two structures don't have the same nested structure.\n\n"
            f"First structure: {_show(a)}\n\nSecond structure: {_show(b)}"
        )


def _show(structure) -> str:
    return str(
        jax.tree_util.tree_map(
            lambda x: (
                f"Tensor(shape={tuple(x.shape)}, dtype={x.dtype.name})"
                if type(x) is Tensor
                else x
            ),
            structure,
            is_leaf=capture.is_leaf,
        )
    )


# -- cond, switch_case, case -------------------------------------------------------
def _no_args(vals) -> tuple:
    return ()


def _check_branches(traced: list, op_name: str, names: list) -> None:
    """TF's `_check_same_outputs`: same structure and dtypes in every branch."""
    first = traced[0]
    for tr, bname in zip(traced[1:], names[1:]):
        detail = None
        if tr.tree != first.tree or tr.static != first.static:
            detail = "The two structures don't have the same nested structure."
        else:
            for a, b in zip(first.out_avals[: first.n_out], tr.out_avals[: tr.n_out]):
                if a.dtype != b.dtype:
                    detail = (
                        f"Tensor of dtype {capture.dtype_name(a.dtype)} and Tensor of "
                        f"dtype {capture.dtype_name(b.dtype)} have different types"
                    )
                    break
        if detail is not None:
            raise TypeError(
                f"{names[0]} and {bname} arguments to {op_name} must have the same "
                "number, type, and overall structure of return values.\n\n"
                f"{names[0]} output: {capture.avals_text(first)}\n"
                f"{bname} output: {capture.avals_text(tr)}\n\nError details:\n{detail}"
            )
        for a, b in zip(first.out_avals[: first.n_out], tr.out_avals[: tr.n_out]):
            if a.shape != b.shape:
                raise NotImplementedError(
                    f"The outputs of {names[0]} and {bname} of {op_name} have "
                    f"shapes {tuple(a.shape)} and {tuple(b.shape)}. TensorFlow "
                    "gives the result an unknown shape; jaxtape compiles with XLA, "
                    "which needs one static shape: pad or reshape the outputs to "
                    "the same shape in every branch."
                )


def _branch_fn(tr: capture.Traced, written: list) -> Callable:
    pos = [capture.position(written, v) for v in tr.written]

    def branch(ins, cur):
        outs = tr.call(ins)
        new = list(cur)
        for p, val in zip(pos, outs[tr.n_out :]):
            new[p] = val
        return [*outs[: tr.n_out], *new]

    return branch


def _branches(op_name: str, key, fns: list, names: list, lower: Callable):
    """Traces every branch and runs the one `lower(key, ...)` picks, as one op."""

    def build(swapped):
        return [
            capture.trace(f, _no_args, (), f"{n} of {op_name}", swapped=swapped)
            for f, n in zip(fns, names)
        ]

    traced = capture.trace_all(build)
    _check_branches(traced, op_name, names)
    written = capture.union(tr.written for tr in traced)
    inputs = capture.Inputs(traced)
    n_in = len(inputs.objs)
    cur = [v._read_raw() for v in written]
    branch_fns = [_branch_fn(tr, written) for tr in traced]

    def run(k, *vals):
        return lower(k, branch_fns, list(vals[:n_in]), list(vals[n_in:]))

    out = capture.dispatch(op_name, run, [key, *inputs.objs, *cur])
    n = traced[0].n_out
    capture.write_back(written, out[n:])
    return capture.rebuild(traced[0], out[:n])


def _scalar_pred(pred):
    """A predicate as TF reads it: a concrete one by Python's truth rule (TF
    eager's `if pred:`), a traced one must be a bool of one element (TF's
    graph `cond`: `InvalidArgumentError` for another dtype)."""
    if pred is None:
        raise ValueError(
            "Attempt to convert a value (None) with an unsupported type "
            "(<class 'NoneType'>) to a Tensor. Pass a boolean Tensor or Python "
            "bool as the predicate."
        )
    v = pred._value if type(pred) is Tensor else pred
    if isinstance(v, Variable):
        v = v._read_raw()
    if not isinstance(v, _Tracer):
        return bool(np.asarray(v))  # (NumPy's error for several elements)
    if v.dtype != np.bool_:
        raise errors.InvalidArgumentError(
            None,
            "cond",
            f"Input 'pred' passed {capture.dtype_name(v.dtype)} expected bool. "
            "Compare to get a boolean predicate, e.g. `x != 0`.",
        )
    if np.size(v) != 1:
        raise ValueError(
            f"Shape must be rank 0 but is rank {np.ndim(v)}: the predicate of a "
            f"cond has shape {tuple(v.shape)}. Reduce it first, e.g. with "
            "`jaxtape.reduce_all`."
        )
    return v.reshape(()) if np.ndim(v) else v


def cond(pred, true_fn=None, false_fn=None, name=None) -> Any:
    """`true_fn()` if `pred` else `false_fn()` (TF's `tf.cond`).

    Eagerly (a concrete `pred`) only the taken branch runs, as in TF. With a
    traced `pred` (inside `jaxtape.function`) both branches are traced once
    and the result is `lax.cond`: both must return the same structure,
    dtypes and shapes. Variables assigned in a branch are assigned after it.

    >>> jaxtape.cond(jaxtape.constant(2.0) > 1, lambda: 1.0, lambda: 0.0)
    1.0

    Differences from TensorFlow: branches whose outputs differ in shape raise
    `NotImplementedError` (TF gives an unknown shape; XLA needs one).
    """
    del name
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    p = _scalar_pred(pred)
    if not isinstance(p, _Tracer):
        return true_fn() if p else false_fn()
    key = pred if type(pred) is Tensor else p
    return _branches(
        "tf.cond", key, [true_fn, false_fn], ["true_fn", "false_fn"], _lower_cond
    )


def _lower_cond(pred, fns, ins, cur):
    return lax.cond(jnp.reshape(pred, ()), fns[0], fns[1], ins, cur)


def _branch_list(branch_fns) -> list:
    """`branch_fns` (a list, a dict, or (index, fn) pairs) as a list, as TF."""
    if isinstance(branch_fns, dict):
        items = sorted(branch_fns.items())
    elif all(isinstance(b, (tuple, list)) and len(b) == 2 for b in branch_fns):
        items = sorted(branch_fns)
    else:
        return list(branch_fns)
    keys = [k for k, _ in items]
    if keys != list(range(len(keys))):
        found = "{" + ",".join(str(k) for k in keys) + "}"
        raise ValueError(
            f"branch indices (keys) must form contiguous range of [0 to "
            f"{len(keys)}) but found {found}"
        )
    return [f for _, f in items]


def switch_case(branch_index, branch_fns, default=None, name=None) -> Any:
    """Runs `branch_fns[branch_index]()` (TF's `tf.switch_case`).

    An index out of range runs `default`, or the last branch when there is
    none (TF's rule). A traced index lowers to `lax.switch`.
    """
    del name
    fns = _branch_list(branch_fns)
    if not fns:
        raise ValueError("branch_fns must not be empty.")
    for f in [*fns, *([default] if default is not None else [])]:
        if not callable(f):
            raise TypeError(f"branch_fns and default must be callable; got {f!r}.")
    n = len(fns)
    v = branch_index._value if type(branch_index) is Tensor else branch_index
    if not isinstance(v, _Tracer):
        i = int(np.asarray(to_value(branch_index)))
        if 0 <= i < n:
            return fns[i]()
        return (default or fns[-1])()
    all_fns = fns + ([default] if default is not None else [])
    names = [f"branches[{k}]" for k in range(len(all_fns))]
    last = len(all_fns) - 1

    def lower(index, fns_, ins, cur):
        index = jnp.where((index < 0) | (index >= n), last, index)
        return lax.switch(index, fns_, ins, cur)

    key = branch_index if type(branch_index) is Tensor else v
    return _branches("tf.switch_case", key, all_fns, names, lower)


def case(
    pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"
) -> Any:
    """The callable of the first `pred` that is True (TF's `tf.case`).

    With no `default`, the last pair's callable is the default and one
    predicate must hold (TF's `InvalidArgumentError` otherwise); with
    `exclusive=True` at most one may hold. Traced predicates lower to
    `lax.switch` (the checks run in the compiled program).
    """
    del strict, name
    pairs = (
        list(pred_fn_pairs.items())
        if isinstance(pred_fn_pairs, dict)
        else list(pred_fn_pairs)
    )
    for p in pairs:
        if not (isinstance(p, tuple) and len(p) == 2 and callable(p[1])):
            raise TypeError(
                f"pred_fn_pairs must be a list of (predicate, callable) pairs; got "
                f"{p!r}."
            )
    if not pairs:
        if default is None:
            raise ValueError("case: pred_fn_pairs is empty and no default is given.")
        return default()
    preds = [_scalar_pred(p) for p, _ in pairs]
    fns = [f for _, f in pairs]
    stacked = jnp.stack([jnp.asarray(p, bool) for p in preds])
    checks.run(_check_case, [stacked], (exclusive, default is None))
    if not any(isinstance(p, _Tracer) for p in preds):
        for p, f in zip(preds, fns):
            if bool(p):
                return f()
        return (default or fns[-1])()
    index = Tensor(
        jnp.where(jnp.any(stacked), jnp.argmax(stacked), len(fns)).astype(np.int32)
    )
    return switch_case(index, fns, default=default)


def _check_case(xp, preds, exclusive, no_default):
    if exclusive:
        checks.require(
            xp,
            xp.sum(preds.astype(np.int32)) > 1,
            None,
            "Input error: exclusive=True: more than 1 conditions evaluated as True",
        )
    if no_default:
        checks.require(
            xp,
            ~xp.any(preds),
            None,
            "Input error: None of conditions evaluated as True",
        )


# -- while_loop --------------------------------------------------------------------
def while_loop(
    cond,
    body,
    loop_vars,
    shape_invariants=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    maximum_iterations=None,
    name=None,
) -> Any:
    """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` (TF's
    `tf.while_loop`); at most `maximum_iterations` times when given.

    Eagerly it is a Python loop, as in TF eager. Traced (inside
    `jaxtape.function`) it is compiled once: with `maximum_iterations` a
    Python int, a `lax.scan` of that many steps, each a `lax.cond` on `cond`
    (reverse-mode differentiable: a GradientTape through it works); else a
    `lax.while_loop`, whose gradient JAX cannot take in reverse mode (a
    `ValueError` says to set `maximum_iterations`). Loop variables must keep
    their structure, dtypes and shapes (TF's errors); TensorArrays may be
    loop variables. Variables assigned in `body` are carried through the loop.

    >>> jaxtape.while_loop(lambda i: i < 3, lambda i: i + 1, [jaxtape.constant(0)])
    [<jaxtape.Tensor: shape=(), dtype=int32, numpy=3>]

    Differences from TensorFlow: inside `jaxtape.function`, a shape that
    varies between iterations (allowed by `shape_invariants`) raises
    `NotImplementedError`; a gradient through a loop without a static
    `maximum_iterations` raises `ValueError` (TF keeps a stack per loop); a
    body that assigns Variables (or writes a TensorArray of unknown element
    shape) is traced twice, so its Python side effects run twice; a loop
    with `maximum_iterations` runs that many (masked) steps' conditions. A
    GradientTape inside the function replays the loop's forward pass under
    `jax.vjp`, which XLA does not merge with the first one (a loop's forward
    runs twice when a tape inside the function differentiates it).
    `parallel_iterations` and `swap_memory` are accepted and ignored.
    """
    del parallel_iterations, swap_memory, name
    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    if loop_vars is None or (isinstance(loop_vars, (list, tuple)) and not loop_vars):
        raise ValueError("'loop_vars' must be provided.")
    single = not isinstance(loop_vars, (list, tuple))
    state = (loop_vars,) if single else tuple(loop_vars)
    limit = loops.static_int(maximum_iterations)
    if not capture.in_trace(state, maximum_iterations):
        count = 0
        structure = state
        while limit is None or count < limit:
            c = cond(*state)
            if capture.is_traced(c):  # a closure over a traced value: compile the rest
                left = None if limit is None else limit - count
                return _while_compiled(
                    cond,
                    body,
                    loop_vars,
                    state,
                    single,
                    shape_invariants,
                    left if maximum_iterations is not None else None,
                    back_prop,
                )
            if not bool(to_value(c)):
                break
            out = body(*state)
            state = (out,) if single else _unpack(out, len(state))
            _assert_same_structure(structure, state)
            count += 1
        return state[0] if single else _like(loop_vars, state)
    return _while_compiled(
        cond,
        body,
        loop_vars,
        state,
        single,
        shape_invariants,
        maximum_iterations,
        back_prop,
    )


def _unpack(out, n: int) -> tuple:
    """The body's result as a tuple of `n` loop variables (TF packs a lone one)."""
    if n == 1 and not isinstance(out, (list, tuple)):
        return (out,)
    if not isinstance(out, (list, tuple)):
        raise ValueError(
            "The two structures don't have the same nested structure.\n\n"
            f"The body returned {_show(out)} for {n} loop variables; return a "
            "list or tuple of them."
        )
    return tuple(out)


def _while_compiled(
    cond,
    body,
    loop_vars,
    state,
    single,
    shape_invariants,
    maximum_iterations,
    back_prop,
):
    static_limit = loops.static_int(maximum_iterations)
    carry = loops.prepare(state, static_limit, "while_loop")
    invariants = _invariants(shape_invariants, state, single)
    n = len(state)

    def step(c, x, i):
        out = body(*c)
        return (_unpack(out, n) if not single else (out,)), None

    def test(c):
        return cond(*c)

    masked = back_prop and static_limit is not None
    loop = loops.Loop(
        "while_loop", step, carry, None, None, test, "loop_vars", invariants
    )
    extra = []
    if maximum_iterations is not None and static_limit is None:
        m = maximum_iterations
        extra = [m if type(m) is Tensor else Tensor(to_value(m))]
    out, _ = loop.run(
        extra,
        length=max(static_limit, 0) if masked and static_limit is not None else None,
        start=0,
        delta=1,
        reverse=False,
        max_iter=static_limit if not masked else None,
        back_prop=back_prop,
    )
    out = tuple(out)
    return out[0] if single else _like(loop_vars, out)


def _invariants(shape_invariants, state, single):
    """One shape invariant (or None) per loop variable (a TensorArray is one)."""
    if shape_invariants is None:
        return None
    inv = (shape_invariants,) if single else tuple(shape_invariants)

    def is_leaf(x):
        return x is None or isinstance(x, (TensorShape, TensorSpec))

    leaves, _ = jax.tree_util.tree_flatten(inv, is_leaf=is_leaf)
    n = len(capture.leaves(state))
    if len(leaves) != n:
        raise ValueError(
            "shape_invariants must have the same structure as loop_vars: "
            f"{len(leaves)} shapes for {n} loop variables."
        )
    return [s.shape if isinstance(s, TensorSpec) else s for s in leaves]


# -- for_range ---------------------------------------------------------------------
def for_range(start, limit, delta, body, loop_vars, extra_test=None, name=None) -> Any:
    """`for i in range(start, limit, delta): loop_vars = body(i, *loop_vars)`.

    The loop form of `for i in jaxtape.range(...)` (what AutoGraph lowers such
    a loop to): `body(i, *loop_vars)` returns the new loop variables (as
    `while_loop`'s body), `i` an integer Tensor. `extra_test(*loop_vars)`,
    when given, is checked before each iteration and ends the loop when False
    (a `break`). `limit=None` loops over `range(start)`.

    Eagerly it is a Python loop. Traced with bounds known while tracing
    (Python ints, shapes) it is one `lax.scan` of the trip count (with
    `extra_test`, each step a `lax.cond`), reverse-mode differentiable; with
    traced bounds, a `while_loop` over `(i, *loop_vars)`.

    >>> jaxtape.for_range(0, 4, 1, lambda i, s: s + i, jaxtape.constant(0))
    <jaxtape.Tensor: shape=(), dtype=int32, numpy=6>
    """
    del name
    if limit is None:
        start, limit = 0, start
    if not callable(body):
        raise TypeError("'body' must be callable.")
    single = not isinstance(loop_vars, (list, tuple))
    state = (loop_vars,) if single else tuple(loop_vars)
    n = len(state)
    s, lim, d = [loops.static_int(b) for b in (start, limit, delta)]
    dtype = _index_dtype(start, limit, delta)
    if d == 0:
        raise errors.InvalidArgumentError(None, "Range", "Requires delta != 0")
    if s is None or lim is None or d is None:  # traced: a while_loop over (i, ...)
        return _for_dynamic(
            start, limit, delta, body, loop_vars, state, single, extra_test, dtype
        )
    if not capture.in_trace(state):  # eagerly: a Python loop, as TF's
        for i in range(s, lim, d):
            if extra_test is not None and not bool(to_value(extra_test(*state))):
                break
            out = body(Tensor(to_value(i, dtype)), *state)
            state = (out,) if single else _unpack(out, n)
        return state[0] if single else _like(loop_vars, state)
    trips = max(0, -(-(lim - s) // d))
    carry = loops.prepare(state, trips, "for_range")

    def step(c, x, i):
        out = body(i, *c)
        return (_unpack(out, n) if not single else (out,)), None

    test = None if extra_test is None else (lambda c: extra_test(*c))
    loop = loops.Loop("for_range", step, carry, None, dtype, test, "loop_vars", None)
    out, _ = loop.run(
        [],
        length=trips,
        start=s,
        delta=d,
        reverse=False,
        max_iter=None,
        back_prop=True,
    )
    out = tuple(out)
    return out[0] if single else _like(loop_vars, out)


def _index_dtype(*bounds):
    for b in bounds:
        if type(b) is Tensor:
            return np.dtype(b._value.dtype)
    return np.dtype(np.int32)


def _for_dynamic(
    start, limit, delta, body, loop_vars, state, single, extra_test, dtype
):
    def as_t(b):
        return b if type(b) is Tensor else Tensor(to_value(b, dtype))

    start, limit, delta = as_t(start), as_t(limit), as_t(delta)
    n = len(state)

    def c(i, *vs):
        lv, dv = limit._value, delta._value
        more = Tensor(jnp.where(dv > 0, i._value < lv, i._value > lv))
        if extra_test is not None:
            test = extra_test(*vs)
            test_v = test._value if type(test) is Tensor else jnp.asarray(test)
            more = Tensor(jnp.logical_and(more._value, test_v))
        return more

    def b(i, *vs):
        out = body(i, *vs)
        out = (out,) if single else _unpack(out, n)
        return (Tensor(i._value + delta._value), *out)

    out = while_loop(c, b, (start, *state))
    return out[1] if single else _like(loop_vars, out[1:])


# -- map_fn, scan, foldl, foldr ----------------------------------------------------
def _elements(elems, what: str) -> tuple[Any, list, int]:
    """`elems` as Tensors and their common length along axis 0."""
    elems = jax.tree_util.tree_map(
        lambda x: loops.loop_value(x, what), elems, is_leaf=capture.is_leaf
    )
    flat = capture.leaves(elems)
    if not flat:
        raise ValueError(f"{what}: elems must hold at least one Tensor.")
    if any(not t.shape for t in flat):
        raise ValueError(f"{what}: elems must be Tensors of rank >= 1 (got a scalar).")
    lengths = {int(t._value.shape[0]) for t in flat}
    if len(lengths) != 1:
        raise ValueError(
            f"{what}: all elems must have the same length along axis 0; got "
            f"{sorted(lengths)}."
        )
    return elems, flat, lengths.pop()


def _unstacked(flat, tree, n):
    from jaxtape._src.ops.array_ops import unstack

    cols = [unstack(t) if n else [] for t in flat]
    return [jax.tree_util.tree_unflatten(tree, [c[i] for c in cols]) for i in range(n)]


def _stacked(results, like=None):
    from jaxtape._src.ops.array_ops import stack

    first = results[0]
    flat0, tree = jax.tree_util.tree_flatten(first, is_leaf=capture.is_leaf)
    cols = [jax.tree_util.tree_leaves(r, is_leaf=capture.is_leaf) for r in results]
    out = [
        None if flat0[k] is None else stack([c[k] for c in cols])
        for k in range(len(flat0))
    ]
    return in_key_order(jax.tree_util.tree_unflatten(tree, out), key_order(first))


def _signature_dtypes(signature):
    def is_leaf(x):
        return x is None or not isinstance(x, (list, tuple, dict))

    leaves, tree = jax.tree_util.tree_flatten(signature, is_leaf=is_leaf)
    out = []
    for s in leaves:
        if isinstance(s, TensorSpec):
            out.append(s.dtype)
        elif s is None:
            out.append(None)
        elif hasattr(s, "_type_spec") or type(s).__name__.startswith("Ragged"):
            raise NotImplementedError(
                f"map_fn: fn_output_signature {s!r} is not supported by jaxtape; "
                "give dtypes or TensorSpecs."
            )
        else:
            out.append(dtypes.as_dtype(s))
    return out, tree


def _check_map_output(result, elems, signature):
    """TF's checks: `fn`'s result has the signature's structure and dtypes
    (the elements' when no signature is given)."""
    if signature is None:
        want = [t.dtype for t in capture.leaves(elems)]
        want_tree = jax.tree_util.tree_structure(elems, is_leaf=capture.is_leaf)
    else:
        want, want_tree = _signature_dtypes(signature)
    got_tree = jax.tree_util.tree_structure(result, is_leaf=capture.is_leaf)
    if got_tree.num_leaves != want_tree.num_leaves or (
        want_tree.num_leaves > 1 and got_tree != want_tree
    ):
        raise ValueError(
            "The two structures don't have the same nested structure.\n\n"
            f"First structure: {want_tree}\n\nSecond structure: {_show(result)}\n\n"
            "map_fn's fn must return the structure of `fn_output_signature` (of "
            "`elems` when none is given)."
        )
    for want_dt, got in zip(want, capture.leaves(result)):
        got_dt = got.dtype if hasattr(got, "dtype") else None
        if want_dt is not None and got_dt is not None and got_dt != want_dt:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"TensorArray dtype is {want_dt.name} but Op is trying to write "
                f"dtype {got_dt.name} . Pass `fn_output_signature=` with the "
                "dtypes fn returns.",
            )


def map_fn(
    fn,
    elems,
    dtype=None,
    parallel_iterations=None,
    back_prop=True,
    swap_memory=False,
    infer_shape=True,
    name=None,
    fn_output_signature=None,
) -> Any:
    """Applies `fn` to each element of `elems` along axis 0 and stacks the
    results (TF's `tf.map_fn`).

    `fn`'s result must have the structure and dtypes of `fn_output_signature`
    (or of `elems` when not given), as in TF. Eagerly a Python loop; traced,
    one `lax.scan` (reverse-mode differentiable).

    >>> jaxtape.map_fn(lambda x: x * x, jaxtape.constant([1.0, 2.0]))
    <jaxtape.Tensor: shape=(2,), dtype=float32, numpy=array([1., 4.], dtype=float32)>
    """
    del parallel_iterations, swap_memory, infer_shape, name
    signature = fn_output_signature if fn_output_signature is not None else dtype
    elems, flat, n = _elements(elems, "map_fn")
    tree = jax.tree_util.tree_structure(elems, is_leaf=capture.is_leaf)
    if not capture.in_trace(elems):
        if n == 0:
            return _empty(elems, signature)
        results = []
        for x in _unstacked(flat, tree, n):
            y = fn(x)
            _check_map_output(y, elems, signature)
            results.append(y)
        out = _stacked(results)
        if not back_prop:
            out = jax.tree_util.tree_map(
                lambda t: Tensor(lax.stop_gradient(t._value)),
                out,
                is_leaf=capture.is_leaf,
            )
        return out

    def step(c, x, i):
        y = fn(x)
        _check_map_output(y, elems, signature)
        return (), y

    loop = loops.Loop("map_fn", step, (), elems, None, None, "", None)
    _, ys = loop.run(
        [],
        length=n,
        start=0,
        delta=1,
        reverse=False,
        max_iter=None,
        back_prop=back_prop,
    )
    return ys


def _empty(elems, signature):
    """map_fn over no elements: empty results of the signature's dtypes (TF)."""
    if signature is None:
        return jax.tree_util.tree_map(
            lambda t: Tensor(jnp.zeros((0,), t._value.dtype)),
            elems,
            is_leaf=capture.is_leaf,
        )
    dts, tree = _signature_dtypes(signature)
    return jax.tree_util.tree_unflatten(
        tree, [Tensor(jnp.zeros((0,), d.as_numpy_dtype)) for d in dts]
    )


def _scan_family(what, fn, elems, initializer, reverse, keep_all, back_prop):
    elems, flat, n = _elements(elems, what)
    tree = jax.tree_util.tree_structure(elems, is_leaf=capture.is_leaf)
    no_init = initializer is None
    if no_init and n == 0:
        raise ValueError(f"{what}: elems is empty and no initializer is given.")
    if not capture.in_trace(elems, initializer):
        xs = _unstacked(flat, tree, n)
        if reverse:
            xs = xs[::-1]
        acc = xs[0] if no_init else initializer
        outs = [acc] if no_init else []
        for x in xs[1:] if no_init else xs:
            acc = fn(acc, x)
            outs.append(acc)
        if not keep_all:
            return acc
        if not outs:
            return _empty(initializer, None)
        if reverse:
            outs = outs[::-1]
        return _stacked(outs)
    if no_init:
        from jaxtape._src.ops.array_ops import gather

        first = n - 1 if reverse else 0
        acc0 = jax.tree_util.tree_map(
            lambda t: gather(t, first), elems, is_leaf=capture.is_leaf
        )
        rest = jax.tree_util.tree_map(
            lambda t: t[:-1] if reverse else t[1:], elems, is_leaf=capture.is_leaf
        )
        acc0 = loops.prepare(acc0, n, what)
    else:
        acc0, rest = loops.prepare(initializer, n, what), elems

    def step(c, x, i):
        acc = fn(c[0], x)
        return (acc,), acc if keep_all else None

    loop = loops.Loop(what, step, (acc0,), rest, None, None, "initializer", None)
    length = n - 1 if no_init else n
    (acc,), ys = loop.run(
        [],
        length=length,
        start=0,
        delta=1,
        reverse=reverse,
        max_iter=None,
        back_prop=back_prop,
    )
    if not keep_all:
        return acc
    if no_init:
        from jaxtape._src.ops.array_ops import concat, expand_dims

        def join(a, y):
            a = expand_dims(a, 0)
            return concat([y, a] if reverse else [a, y], 0)

        ys = jax.tree_util.tree_map(join, acc0, ys, is_leaf=capture.is_leaf)
    return ys


def scan(
    fn,
    elems,
    initializer=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    infer_shape=True,
    reverse=False,
    name=None,
) -> Any:
    """The stacked running results of `acc = fn(acc, x)` over `elems` (TF's
    `tf.scan`); without `initializer` the first element starts the sum (and
    is the first result). Traced, one `lax.scan`.

    >>> jaxtape.scan(lambda a, x: a + x, jaxtape.constant([1.0, 2.0]))
    <jaxtape.Tensor: shape=(2,), dtype=float32, numpy=array([1., 3.], dtype=float32)>
    """
    del parallel_iterations, swap_memory, infer_shape, name
    return _scan_family("scan", fn, elems, initializer, reverse, True, back_prop)


def foldl(
    fn,
    elems,
    initializer=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    name=None,
) -> Any:
    """`acc = fn(acc, x)` over `elems` from the first; the last `acc` (TF's
    `tf.foldl`). Traced, one `lax.scan`."""
    del parallel_iterations, swap_memory, name
    return _scan_family("foldl", fn, elems, initializer, False, False, back_prop)


def foldr(
    fn,
    elems,
    initializer=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    name=None,
) -> Any:
    """`acc = fn(acc, x)` over `elems` from the last; the last `acc` (TF's
    `tf.foldr`). Traced, one `lax.scan` in reverse."""
    del parallel_iterations, swap_memory, name
    return _scan_family("foldr", fn, elems, initializer, True, False, back_prop)
