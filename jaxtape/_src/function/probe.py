"""Values of traced tensors at trace time, for `py_function`'s output shapes.

Layer L3 (function/). While `jaxtape.function` traces a call with concrete
arguments, `trace_time_values` evaluates the program traced so far, up to
some tensors, on that call's inputs (JAX's tracing frame, pruned to what they
need: prints and other side effects do not run). Installed as
`context.hooks.trace_time_values`.
"""

from __future__ import annotations

import threading

import jax
import jax.core
import jax.extend.core as jex_core
import numpy as np
from jax._src import source_info_util

from jaxtape._src.core import context
from jaxtape._src.function import specialize


class _Probe(threading.local):
    def __init__(self):
        # (trace, its frame, the concrete inputs, sizes of a symbolic trace)
        # while `trace_program` traces a call with concrete arguments.
        self.current: tuple | None = None


current = _Probe()  # `current.current`: set by `_Trace.trace_program`


def trace_time_values(values) -> list | None:
    """Concrete values of tensors while jaxtape.function traces (installed as
    `context.hooks.trace_time_values`; `py_function`'s output shapes): the
    program so far, up to them, evaluated on the call's concrete inputs.
    None where they are not known: inside control-flow bodies, in
    `get_concrete_function` of TensorSpecs."""
    probe = current.current
    if probe is None or probe[1] is None:
        return None
    tracers = [v for v in values if isinstance(v, jax.core.Tracer)]
    try:
        outs = _concrete(tracers, *probe[1:], depth=0)
    except Exception:  # noqa: BLE001 - unknown values: the caller says what to do
        return None
    if outs is None:
        return None
    it = iter(outs)
    return [
        np.asarray(next(it)) if isinstance(v, jax.core.Tracer) else np.asarray(v)
        for v in values
    ]


def _concrete(tracers, root, inputs, env, depth: int):
    """The values of `tracers`, frame by frame (`_frame_values`)."""
    groups: dict = {}
    for i, t in enumerate(tracers):
        groups.setdefault(id(getattr(t._trace, "frame", None)), []).append(i)
    out: list = [None] * len(tracers)
    for positions in groups.values():
        group = [tracers[i] for i in positions]
        values = _frame_values(group, root, inputs, env, depth)
        if values is None:
            return None
        for i, v in zip(positions, values):
            out[i] = v
    return out


def _frame_values(tracers, root, inputs, env, depth: int):
    """The values of `tracers` of one frame: its equations up to them,
    evaluated; a frame nested in the root (checkify's) has the root's tracers
    as constants, computed first. None if they depend on a frame's own inputs
    other than the root's (a control-flow body)."""
    if getattr(tracers[0]._trace, "frame", None) is None or depth > 4:
        return None
    trace = tracers[0]._trace
    frame = trace.frame
    debug = frame.debug_info._replace(result_paths=None)
    jaxpr, consts = frame.to_jaxpr(trace, tracers, debug, source_info_util.current())
    jaxpr, consts = _needed(jaxpr, consts)
    if frame is root:
        args = inputs
        if len(jaxpr.invars) != len(inputs):
            return None
    else:
        needed_inputs = set(jaxpr.invars) & _used_vars(jaxpr)
        if needed_inputs:
            return None
        args = [None] * len(jaxpr.invars)
    outer = [c for c in consts if isinstance(c, jax.core.Tracer)]
    if outer:
        known = _concrete(outer, root, inputs, env, depth + 1)
        if known is None:
            return None
        it = iter(known)
        consts = [next(it) if isinstance(c, jax.core.Tracer) else c for c in consts]
    closed = jex_core.ClosedJaxpr(jaxpr, consts)
    if env is None:
        return jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return specialize.evaluate(closed, args, env)


def _used_vars(jaxpr) -> set:
    used = {v for v in jaxpr.outvars if isinstance(v, jex_core.Var)}
    for eqn in jaxpr.eqns:
        used.update(v for v in eqn.invars if isinstance(v, jex_core.Var))
    return used


def _needed(jaxpr, consts):
    """`jaxpr` with only the equations (and constants) its outputs need: the
    others, side effects such as prints included, do not run while tracing."""
    needed = {v for v in jaxpr.outvars if isinstance(v, jex_core.Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in needed for v in eqn.outvars):
            kept.append(eqn)
            needed.update(v for v in eqn.invars if isinstance(v, jex_core.Var))
    kept.reverse()
    pairs = [(v, c) for v, c in zip(jaxpr.constvars, consts) if v in needed]
    jaxpr = jaxpr.replace(
        constvars=[v for v, _ in pairs], eqns=kept, effects=jex_core.no_effects
    )
    return jaxpr, [c for _, c in pairs]


context.hooks.trace_time_values = trace_time_values
