"""The loop engine of `control_flow`: one traced step as one recorded op. L3.

`Loop` traces a loop's step (and its test) once with `capture.trace`, checks
that the step keeps its carry's structure, dtypes and shapes (TF's errors),
threads the Variables the step assigns through as extra carries, and runs the
loop as ONE op through the dispatcher: `lax.scan` for a static number of
steps (each step a `lax.cond` on the test when there is one, so that the loop
stays reverse-mode differentiable), else `lax.while_loop`. `while_loop`,
`for_range`, `map_fn`, `scan`, `foldl` and `foldr` are all this one engine.

A TensorArray carried without a known element shape learns it from its first
write; the step is then traced again with the buffer shaped (`learned_shapes`).
"""

from __future__ import annotations

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.core import context
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import (
    Tensor,
    TensorShape,
    in_key_order,
    key_order,
    tree_flatten,
)
from jaxtape._src.function import capture
from jaxtape._src.ops.tensor_array import TensorArray
from jaxtape._src.state.variable import Variable

_Tracer = jax.core.Tracer


def loop_value(x, what: str):
    """A loop variable or element as a Tensor (or a TensorArray)."""
    if type(x) is Tensor or isinstance(x, TensorArray):
        return x
    if isinstance(x, Variable):
        return x.read_value()
    if x is None:
        raise ValueError(
            f"{what}: a loop variable is None. Loop variables must be Tensors, "
            "TensorArrays or Python numbers (or structures of them)."
        )
    return Tensor(to_value(x))


def prepare(structure, extra: int | None, what: str):
    """Loop variables as Tensors, TensorArrays as buffers of `extra` more rows."""

    def one(x):
        x = loop_value(x, what)
        return x._carry(extra) if isinstance(x, TensorArray) else x

    return jax.tree_util.tree_map(one, structure, is_leaf=capture.is_leaf)


def paths(structure, prefix: str) -> list:
    """A name per flat carry leaf (a TensorArray's buffer and size), for errors."""
    flat = jax.tree_util.tree_flatten_with_path(
        structure, is_leaf=lambda x: x is None or type(x) is Tensor
    )[0]
    return [prefix + jax.tree_util.keystr(path) for path, _ in flat]


class Loop:
    """A loop's traced step (and test), checked against its carry."""

    def __init__(self, what, step, carry, xs, index_dtype, test, prefix, invariants):
        self.what, self.index_dtype = what, index_dtype
        self.x_flat, self.x_tree = tree_flatten(xs if xs is not None else ())
        self.nx = len(self.x_flat)
        preset: list = []
        swapped: list = []
        for _ in range(6):
            self._set_carry(carry, prefix, invariants)
            try:
                traced = self._trace(step, test, preset, swapped)
            except Exception:
                # A TensorArray that learned its element shape in this trace
                # (an unshaped carry's first write): trace again with it.
                shaped = learned_shapes(carry)
                if shaped is None:
                    raise
                carry = shaped
                continue
            shaped = learned_shapes(carry)
            if shaped is not None:
                carry = shaped
                continue
            written = capture.union(tr.written for tr in traced)
            more = capture.retrace_needed(traced)
            if len(written) == len(preset) and not more:
                break
            preset = written  # Variables assigned inside: loop carries
            swapped = swapped + [t for t in more if not any(t is u for u in swapped)]
        else:
            raise RuntimeError(
                f"The Variables that {what} assigns changed from one trace of its "
                "body to the next; assign the same Variables whatever Python "
                "values the body sees."
            )
        self.body, self.vars = traced[0], preset
        self.test = traced[1] if len(traced) > 1 else None
        self._check_body(self.c_avals)
        if self.test is not None:
            self._check_test(self.test)
        self.inputs = capture.Inputs(traced)

    def _set_carry(self, carry, prefix, invariants) -> None:
        self.c_flat, self.c_tree = tree_flatten(carry)
        self.c_order = key_order(carry)
        self.nc = len(self.c_flat)
        self.c_avals = [capture.aval_of(t) for t in self.c_flat]
        self.names = paths(carry, prefix)
        self.invariants = None
        if invariants is not None:  # one per loop variable: one per flat leaf
            self.invariants = []
            for inv, leaf in zip(invariants, capture.leaves(carry)):
                if isinstance(leaf, TensorArray):  # (its buffer and size)
                    self.invariants += [None] * len(tree_flatten(leaf)[0])
                else:
                    self.invariants.append(inv)

    def _trace(self, step, test, preset, swapped) -> list:
        nc, nx, index_dtype = self.nc, self.nx, self.index_dtype
        c_tree, c_order, x_tree = self.c_tree, self.c_order, self.x_tree
        x_avals = [
            jax.ShapeDtypeStruct(t.shape[1:], t._value.dtype) for t in self.x_flat
        ]
        i_avals = [] if index_dtype is None else [jax.ShapeDtypeStruct((), index_dtype)]

        def step_args(vals):
            ts = [Tensor(v) for v in vals]
            c = jax.tree_util.tree_unflatten(c_tree, ts[:nc])
            x = jax.tree_util.tree_unflatten(x_tree, ts[nc : nc + nx])
            i = ts[-1] if index_dtype is not None else None
            return (in_key_order(c, c_order), x, i)

        def test_args(vals):
            c = jax.tree_util.tree_unflatten(c_tree, [Tensor(v) for v in vals])
            return (in_key_order(c, c_order),)

        def test_fn(c):
            return (test(c),)

        traced = [
            capture.trace(
                step,
                step_args,
                self.c_avals + x_avals + i_avals,
                f"the body of {self.what}",
                preset,
                swapped,
            )
        ]
        if test is not None:
            traced.append(
                capture.trace(
                    test_fn,
                    test_args,
                    self.c_avals,
                    f"the condition of {self.what}",
                    preset,
                    swapped,
                )
            )
        return traced

    def _check_body(self, c_avals) -> None:
        tr = self.body
        c_tree, y_tree = jax.tree_util.treedef_children(tr.tree)
        n_leaves = c_tree.num_leaves
        static = tr.static
        if c_tree != self.c_tree or any(s is not None for s in static[:n_leaves]):
            raise ValueError(
                "The two structures don't have the same nested structure.\n\n"
                f"First structure: {capture.avals_text(tr)}\n\nSecond structure: "
                f"{self.c_tree}\n\nThe body of {self.what} must return its loop "
                "variables in the structure it was given them."
            )
        self.y_tree, self.y_static = y_tree, static[n_leaves:]
        self.ny = tr.n_out - self.nc
        for k, (a, b) in enumerate(zip(c_avals, tr.out_avals[: self.nc])):
            name = self.names[k] if k < len(self.names) else f"loop_vars[{k}]"
            if a.dtype != b.dtype:
                raise TypeError(
                    f"Loop var {name} enters the loop with type "
                    f"<dtype: '{capture.dtype_name(a.dtype)}'> but has type "
                    f"<dtype: '{capture.dtype_name(b.dtype)}'> after 1 iteration. "
                    f"{name} type should remain constant."
                )
            if a.shape != b.shape:
                self._shape_changed(k, name, a.shape, b.shape)

    def _shape_changed(self, k, name, before, after):
        inv = self.invariants[k] if self.invariants is not None else None
        if inv is not None and TensorShape(inv).is_compatible_with(after):
            raise NotImplementedError(
                f"Loop var {name} enters the loop with shape {TensorShape(before)} "
                f"and has shape {TensorShape(after)} after one iteration, which its "
                f"shape invariant {TensorShape(inv)} allows. jaxtape compiles loops "
                "with XLA, which needs static shapes: pad the value to a fixed size "
                "(and keep a length), or collect rows in a TensorArray."
            )
        shape = TensorShape(before) if inv is None else TensorShape(inv)
        raise ValueError(
            f"Input tensor `{name}` enters the loop with shape {shape}, but has "
            f"shape {TensorShape(after)} after one iteration. To allow the shape "
            "to vary across iterations, use the `shape_invariants` argument of "
            "tf.while_loop to specify a less-specific shape."
        )

    def _check_test(self, tr: capture.Traced) -> None:
        aval = tr.out_avals[0] if tr.n_out == 1 else None
        if aval is None or aval.dtype != np.bool_ or aval.shape != ():
            got = "nothing" if aval is None else capture.avals_text(tr)
            raise TypeError(
                f"The condition of {self.what} must return a scalar boolean Tensor; "
                f"got {got}. Compare with `<`, `jaxtape.less`, ... and reduce with "
                "`jaxtape.reduce_all` if needed."
            )

    def run(
        self, objs_extra: list, *, length, start, delta, reverse, max_iter, back_prop
    ) -> tuple:
        """Dispatches the loop as one op; returns (final carry, ys)."""
        nc, nx, ny = self.nc, self.nx, self.ny
        body, test = self.body, self.test
        n_in = len(self.inputs.objs)
        n_v = len(self.vars)
        has_index = self.index_dtype is not None
        index_dtype = self.index_dtype
        y_avals = body.out_avals[nc : nc + ny]

        def call_body(ins, c, x, i, v):
            outs = body.call(ins, v, [*c, *x, *([i] if has_index else [])])
            n = body.n_out
            return list(outs[:nc]), list(outs[nc:n]), list(outs[n:])

        def call_test(ins, c, v):
            if test is None:  # (a scan with no test never calls it)
                raise RuntimeError("Internal error: a loop without a test.")
            return test.call(ins, v, c)[0]

        def run(*vals):
            init = list(vals[:nc])
            xs = list(vals[nc : nc + nx])
            ins = list(vals[nc + nx : nc + nx + n_in])
            vinit = list(vals[nc + nx + n_in : nc + nx + n_in + n_v])
            rest = vals[nc + nx + n_in + n_v :]
            if length is not None:
                c, ys, v = _scan(
                    call_body,
                    call_test if test is not None else None,
                    ins,
                    init,
                    xs,
                    vinit,
                    length,
                    start,
                    delta,
                    index_dtype,
                    reverse,
                    y_avals,
                )
            else:
                limit = rest[0] if rest else max_iter
                c, v = _while(call_body, call_test, ins, init, vinit, limit)
                ys = []
            out = [*c, *ys, *v]
            if not back_prop:
                out = [lax.stop_gradient(o) for o in out]
            return out

        objs = [*self.c_flat, *self.x_flat, *self.inputs.objs]
        objs += [v._read_raw() for v in self.vars] + objs_extra
        if back_prop:
            out = capture.dispatch(self.what, run, objs)
        else:
            with context.paused_tapes():
                out = capture.dispatch(self.what, run, objs)
        capture.write_back(self.vars, out[nc + ny :])
        carry = jax.tree_util.tree_unflatten(self.c_tree, out[:nc])
        carry = in_key_order(carry, self.c_order)
        order = body.order[1] if isinstance(body.order, list) else None
        ys = capture.rebuild(body, out[nc : nc + ny], self.y_tree, self.y_static, order)
        return carry, ys


def learned_shapes(carry):
    """`carry` with its unshaped TensorArrays given the element shapes their
    first writes showed (None when there are none)."""
    changed = []

    def one(x):
        if isinstance(x, TensorArray) and x._unshaped and x._cell.shape is not None:
            changed.append(x)
            return x._shaped()
        return x

    out = jax.tree_util.tree_map(one, carry, is_leaf=capture.is_leaf)
    return out if changed else None


def _scan(
    call_body,
    call_test,
    ins,
    init,
    xs,
    vinit,
    length,
    start,
    delta,
    index_dtype,
    reverse,
    y_avals,
):
    def step(state, xk):
        c, v, running = state
        x, k = xk
        i = None
        if index_dtype is not None:
            i = (start + k * delta).astype(index_dtype)
        if call_test is None:
            c2, y, v2 = call_body(ins, c, x, i, v)
            return (c2, v2, running), y
        go = jnp.logical_and(running, call_test(ins, c, v))

        def skip(_):
            return c, [jnp.zeros(a.shape, a.dtype) for a in y_avals], v

        c2, y, v2 = lax.cond(go, lambda _: call_body(ins, c, x, i, v), skip, None)
        return (c2, v2, go), y

    steps = jnp.arange(length, dtype=np.int32)
    (c, v, _), ys = lax.scan(
        step,
        (init, vinit, jnp.asarray(True)),
        (xs, steps),
        length=length,
        reverse=reverse,
    )
    return c, ys, v


def _while(call_body, call_test, ins, init, vinit, limit):
    def keep_going(state):
        c, v, k = state
        ok = call_test(ins, c, v)
        if limit is not None:
            ok = jnp.logical_and(ok, k < limit)
        return ok

    def step(state):
        c, v, k = state
        c2, _, v2 = call_body(ins, c, [], None, v)
        return c2, v2, k + 1

    c, v, _ = lax.while_loop(keep_going, step, (init, vinit, jnp.asarray(0, np.int32)))
    return c, v


def static_int(x):
    """`x` as a Python int when known while tracing (None: traced)."""
    if x is None:
        return None
    v = x._value if type(x) is Tensor else x
    if isinstance(v, Variable):
        v = v._read_raw()
    if isinstance(v, _Tracer):
        return None
    return int(np.asarray(v))
