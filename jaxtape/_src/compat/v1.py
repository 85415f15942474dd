"""TF1 eager aliases (seed 003): `enable_eager_execution`, `contrib.eager`. Layer L6.

`gradients_function(f)` returns a function computing the gradients of `f`
with respect to its arguments (all, or those in `params`), built on
`GradientTape`; nesting it gives higher derivatives, as in TF 1.x eager.
"""

from __future__ import annotations

import functools
import types

from jaxtape._src.autodiff.gradient_tape import GradientTape
from jaxtape._src.core import context
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.state.variable import Variable


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    """No-op: jaxtape always executes eagerly (TF 1.x's switch, accepted)."""


def executing_eagerly() -> bool:
    """False while `jaxtape.function` traces (but inside `jaxtape.init_scope`),
    True otherwise, as TF's `tf.executing_eagerly`."""
    return context.state.function_depth == 0


def _as_tensors(args):
    return [
        a if type(a) is Tensor or isinstance(a, Variable) else Tensor(to_value(a))
        for a in args
    ]


def value_and_gradients_function(f, params=None):
    """Returns `g(*args) -> (f(*args), [df/dargs...])` (TF 1.x `tfe` API)."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        xs = _as_tensors(args)
        picked = (
            list(range(len(xs)))
            if params is None
            else [p if isinstance(p, int) else _arg_index(f, p) for p in params]
        )
        with GradientTape() as tape:
            for i in picked:
                tape.watch(xs[i])
            value = f(*xs, **kwargs)
        grads = tape.gradient(value, [xs[i] for i in picked])
        return value, grads

    return wrapper


def _arg_index(f, name):
    import inspect

    return list(inspect.signature(f).parameters).index(name)


def gradients_function(f, params=None):
    """Returns `g(*args) -> [df/dargs...]`; nest it for higher derivatives."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return value_and_gradients_function(f, params)(*args, **kwargs)[1]

    return wrapper


def implicit_value_and_gradients(f):
    """Returns `g(*args) -> (value, [(grad, variable), ...])` for the variables read."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        with GradientTape() as tape:
            value = f(*args, **kwargs)
        variables = tape.watched_variables()
        if not variables:
            raise ValueError(
                "No trainable variables were accessed while the function "
                "was being computed."
            )
        grads = tape.gradient(value, list(variables))
        return value, list(zip(grads, variables))

    return wrapper


def implicit_gradients(f):
    """Returns `g(*args) -> [(grad, variable), ...]` over the variables `f` reads."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return implicit_value_and_gradients(f)(*args, **kwargs)[1]

    return wrapper


eager = types.SimpleNamespace(
    gradients_function=gradients_function,
    value_and_gradients_function=value_and_gradients_function,
    implicit_gradients=implicit_gradients,
    implicit_value_and_gradients=implicit_value_and_gradients,
    Variable=Variable,
    GradientTape=GradientTape,
    executing_eagerly=executing_eagerly,
)
contrib = types.SimpleNamespace(eager=eager)
