"""Which inputs of a traced program reach its outputs through a differentiable
path. Layer L3 (reads jaxprs only).

TF's gradient of a function call is None for an input joined to the call's
outputs only through ops without a gradient (`stop_gradient`, an integer
cast, `floor`, a comparison) or not at all; JAX differentiates the whole
program and returns zeros there. `differentiable_inputs` walks the jaxpr
backwards from the outputs, as dead-code elimination does, except that a
primitive whose derivative JAX declares zero (`defjvp_zero`) and values of
integer or boolean dtype stop the walk. The walk goes into `jit` and `cond`
bodies; every other primitive with a sub-program passes all its inputs
through, as TF's loops do (an input a `scan`/`while` body reads gets a zero
gradient from TF, even through `stop_gradient`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from jax._src.interpreters import ad
from jax.extend.core import Var


def differentiable_inputs(jaxpr, used_outputs: Sequence[bool]) -> list[bool]:
    """For each input of `jaxpr` (a `jax.core.Jaxpr`): whether a
    differentiable path joins it to one of the outputs marked used."""
    needed: set = set()
    for var, used in zip(jaxpr.outvars, used_outputs):
        if used and _is_var(var) and _inexact(var):
            needed.add(var)
    for eqn in reversed(jaxpr.eqns):
        outs = [v in needed for v in eqn.outvars if _is_var(v)]
        if not any(outs) or _zero_derivative(eqn.primitive):
            continue
        used_outs = [_is_var(v) and v in needed for v in eqn.outvars]
        for var, reaches in zip(eqn.invars, _through(eqn, used_outs)):
            if reaches and _is_var(var) and _inexact(var):
                needed.add(var)
    return [v in needed and _inexact(v) for v in jaxpr.invars]


def _through(eqn, used_outs: list[bool]) -> list[bool]:
    """Which of one equation's inputs reach its used outputs."""
    params, name = eqn.params, eqn.primitive.name
    if name in ("jit", "pjit", "closed_call", "core_call"):
        inner = params.get("jaxpr", params.get("call_jaxpr"))
        inner = getattr(inner, "jaxpr", inner)
        if inner is not None and len(inner.invars) == len(eqn.invars):
            return differentiable_inputs(inner, used_outs)
    elif name == "cond":  # (index, *operands): any branch
        reach = [False] * (len(eqn.invars) - 1)
        for branch in params["branches"]:
            inner = differentiable_inputs(branch.jaxpr, used_outs)
            reach = [a or b for a, b in zip(reach, inner)]
        return [False, *reach]
    return [True] * len(eqn.invars)


def _zero_derivative(primitive) -> bool:
    rule = ad.primitive_jvps.get(primitive)
    return getattr(rule, "func", None) is ad.zero_jvp or primitive.name == (
        "stop_gradient"
    )


def _is_var(v) -> bool:
    return isinstance(v, Var)


def _inexact(v) -> bool:
    dtype = getattr(v.aval, "dtype", None)
    return dtype is not None and np.issubdtype(dtype, np.inexact)
