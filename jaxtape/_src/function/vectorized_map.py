"""`vectorized_map` (TF's `tf.vectorized_map`) on `jax.vmap`. Layer L3.

`fn` is traced once on one element (`capture.trace`, as the control-flow
constructs trace their functions), and the jaxpr is batched with `jax.vmap`
over axis 0 of the elements; Tensors and Variable reads `fn` closes over are
unbatched inputs. The whole map is ONE recorded op, so tapes differentiate it
with JAX (`jax.vjp` of the vmapped jaxpr), eagerly and in `jaxtape.function`.
"""

from __future__ import annotations

import logging

import jax

from jaxtape._src.core import context
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.function import capture, control_flow

_state = context.state


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """Maps `fn` over axis 0 of `elems`, vectorized (TF's `tf.vectorized_map`).

    `elems` is a Tensor or a (nested) structure of Tensors of equal length;
    `fn` gets one element (the same structure, axis 0 removed) and returns
    Tensors; results are stacked along a new axis 0 (a result that does not
    depend on the element is broadcast, as TF tiles it).

    `jax.vmap` batches every op jaxtape has, so TF's fallback is only needed
    for a JAX primitive without a batching rule: then, with
    `fallback_to_while_loop`, the map runs as `map_fn` (logging a warning when
    `warn`, as TF), otherwise the error is raised.

    >>> jaxtape.vectorized_map(lambda x: x * x, jaxtape.constant([1.0, 2.0]))
    <jaxtape.Tensor: shape=(2,), dtype=float32, numpy=array([1., 4.], dtype=float32)>

    Differences from TensorFlow: `fn` must not assign Variables
    (NotImplementedError); eagerly, under a recording GradientTape, an `fn`
    that reads Variables runs as a loop of ops (same values and gradients,
    not vectorized); `fn` is traced once per call.
    """
    elems, flat, n = control_flow._elements(elems, "vectorized_map")
    tree = jax.tree_util.tree_structure(elems, is_leaf=capture.is_leaf)
    avals = [jax.ShapeDtypeStruct(t._value.shape[1:], t._value.dtype) for t in flat]

    def make_args(vals):
        return (jax.tree_util.tree_unflatten(tree, [Tensor(v) for v in vals]),)

    def build(swapped):
        return [capture.trace(fn, make_args, avals, "vectorized_map", swapped=swapped)]

    (tr,) = capture.trace_all(build)
    if _state.tapes and not capture.in_trace(elems) and tr.capture.read_vars:
        # Eagerly a Variable's value is a constant of the jaxpr, which would
        # cut its gradient: a recording tape gets the loop, op by op.
        return _loop(fn, flat, tree, n)
    if tr.written:
        raise NotImplementedError(
            "vectorized_map: `fn` assigns Variables, which jaxtape does not "
            "support; return the new values and assign them after the map."
        )
    inputs = capture.Inputs([tr])
    objs = list(inputs.objs)
    n_in = len(objs)

    def run(*vals):
        ins, xs = vals[:n_in], vals[n_in:]
        outs = jax.vmap(lambda *x: tr.call(ins, (), x)[: tr.n_out])(*xs)
        return list(outs)

    try:
        out = capture.dispatch("vectorized_map", run, objs + flat)
    except NotImplementedError as e:
        # (`fn` itself ran in the trace above: this is JAX refusing to batch
        # a primitive, raised before anything was recorded)
        if not fallback_to_while_loop:
            raise
        if warn:
            logging.warning("Using a while_loop for converting vectorized_map: %s", e)
        return _loop(fn, flat, tree, n)
    return capture.rebuild(tr, out)


def _loop(fn, flat, tree, n):
    """TF's while-loop fallback: `fn` on each element, results stacked."""
    parts = control_flow._unstacked(flat, tree, n)
    return control_flow._stacked([fn(x) for x in parts])
