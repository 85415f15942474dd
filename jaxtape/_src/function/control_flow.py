"""Control flow on tensors (TF's `cond`, `while_loop`, `switch_case`, `map_fn`). L3.

Eagerly these are plain Python (the predicate is a concrete value), so tapes
record the branch that runs, as in TF eager. Inside `jaxtape.function` they
become `lax.cond` / `lax.while_loop` / `lax.switch` / `lax.map`, the only way
to branch on a traced value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import jax
import jax.core
from jax import lax

from jaxtape._src.core import context
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor, in_key_order, key_order, tree_map

if TYPE_CHECKING:
    from jaxtape._src.core.typing import TensorLike


def _traced(x) -> bool:
    v = x._value if type(x) is Tensor else x
    return isinstance(v, jax.core.Tracer)


def _raw(structure):
    return tree_map(lambda t: t._value if type(t) is Tensor else t, structure)


def _wrap(structure):
    return jax.tree_util.tree_map(
        lambda v: Tensor(v) if isinstance(v, jax.Array) else v, structure
    )


def _pure(fn, orders=None):
    """`fn` over Tensors as a function of raw arrays (for lax), tapes paused.

    `orders`: a list that receives the dict key order of `fn`'s result (JAX's
    trees sort dict keys; TF's nest keeps them, see `_in_order`).
    """

    def run(*vals):
        with context.paused_tapes():
            out = fn(*_wrap(vals))
        if orders is not None:
            orders.append(key_order(out))
        return _raw(out)

    return run


def _in_order(out, orders):
    return in_key_order(out, orders[0]) if orders and orders[0] is not None else out


def cond(
    pred: TensorLike,
    true_fn: Callable[[], Any] | None = None,
    false_fn: Callable[[], Any] | None = None,
    name: str | None = None,
) -> Any:
    """`true_fn()` if `pred` else `false_fn()` (TF's `tf.cond`)."""
    if true_fn is None or false_fn is None:  # (None defaults: TF's signature)
        missing = "true_fn" if true_fn is None else "false_fn"
        raise TypeError(
            f"cond(): '{missing}' argument required. Pass both branches: "
            "`jaxtape.cond(pred, lambda: a, lambda: b)`."
        )
    if not _traced(pred):
        return true_fn() if bool(to_value(pred)) else false_fn()
    orders: list = []
    out = lax.cond(
        to_value(pred),
        lambda: _pure(true_fn, orders)(),
        lambda: _pure(false_fn)(),
    )
    return _in_order(_wrap(out), orders)


def switch_case(branch_index, branch_fns, default=None, name=None):
    """Runs `branch_fns[branch_index]()` (or `default` when out of range)."""
    fns = (
        [branch_fns[k] for k in sorted(branch_fns)]
        if isinstance(branch_fns, dict)
        else list(branch_fns)
    )
    if default is not None:
        fns.append(default)
    if not _traced(branch_index):
        i = int(to_value(branch_index))
        if 0 <= i < len(branch_fns):
            return fns[i]()
        return (default or fns[-1])()
    index = to_value(branch_index)
    n = len(branch_fns)
    if default is not None:
        index = jax.numpy.where((index < 0) | (index >= n), n, index)
    orders: list = []
    branches = [
        (lambda f=f, o=(orders if not k else None): _pure(f, o)())
        for k, f in enumerate(fns)
    ]
    return _in_order(_wrap(lax.switch(index, branches)), orders)


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
):
    """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)`."""
    single = not isinstance(loop_vars, (list, tuple))
    state = (loop_vars,) if single else tuple(loop_vars)
    traced = any(
        _traced(x)
        for x in jax.tree_util.tree_leaves(_raw(state), is_leaf=lambda x: x is None)
    )
    if not traced:
        count = 0
        while bool(to_value(cond(*state))):
            if maximum_iterations is not None and count >= maximum_iterations:
                break
            out = body(*state)
            state = (out,) if single else tuple(out)
            count += 1
        return state[0] if single else _like(loop_vars, state)

    def c(carry):
        vals, i = carry
        ok = to_value(_pure(cond)(*vals))
        if maximum_iterations is not None:
            ok = ok & (i < maximum_iterations)
        return ok

    def b(carry):
        vals, i = carry
        out = _pure(body)(*vals)
        return (tuple(out) if not single else (out,)), i + 1

    vals, _ = lax.while_loop(c, b, (_raw(state), 0))
    out = _wrap(vals)
    return out[0] if single else _like(loop_vars, out)


def _like(loop_vars, values):
    """`values` in the sequence type of `loop_vars` (TF returns a tuple for a
    tuple, a list for a list)."""
    return list(values) if isinstance(loop_vars, list) else tuple(values)


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
):
    """Applies `fn` to each element along axis 0 (TF's `tf.map_fn`), via `lax.map`."""
    orders: list = []
    out = lax.map(_pure(fn, orders), _raw(elems))
    return _in_order(_wrap(out), orders)
