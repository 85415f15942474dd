"""The state scope: overlays Variable values and collects writes (functionalization).

Layer L2. `custom_gradient` (and later `jaxtape.function`) run user code with
variables standing for given arrays; nothing else swaps Variable values.

    with state_scope([(v, traced)]) as scope:
        out = body()
    new_value = scope.value_of(v)   # no Variable ever held a tracer
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, overload

import jax
import numpy as np

if TYPE_CHECKING:
    from jaxtape._src.state.variable import Variable


@jax.custom_jvp
def attach(value: Any, read: Any) -> Any:
    """`value`, differentiated as `read`: what a Variable read returns after a
    write inside traced code. The value is the written one; the gradient is a
    read's of the Variable (TF's: an assignment cuts gradients, and every read
    of a Variable counts toward its gradient)."""
    del read
    return value


@attach.defjvp
def _attach_jvp(primals, tangents):
    return primals[0], tangents[1]


def attached(value: Any, read: Any) -> Any:
    """`attach(value, read)` for inexact values (others carry no gradient)."""
    if value is read or np.dtype(getattr(value, "dtype", np.float32)).kind not in "fc":
        return value
    if np.shape(value) != np.shape(read):
        return value
    return attach(value, read)


class _Stack(threading.local):
    def __init__(self):
        self.scopes: list[StateScope] = []


_stack = _Stack()


class StateScope:
    """Values standing in for Variables, keyed by the Variable's identity."""

    def __init__(self, pairs):
        self._values = {id(v): (v, val) for v, val in pairs}
        self.written: dict[int, Variable] = {}

    def get(self, variable: Variable) -> Any:
        """The overlaid value of `variable`; None when the scope does not cover it."""
        hit = self._values.get(id(variable))
        return None if hit is None else hit[1]

    def set(self, variable: Variable, value: Any) -> bool:
        if id(variable) not in self._values:
            return False
        self._values[id(variable)] = (variable, value)
        self.written[id(variable)] = variable
        return True

    def value_of(self, variable):
        return self._values[id(variable)][1]


class RecordingScope(StateScope):
    """A StateScope that also notes Variables it does not cover (`misses`).

    Used by `jaxtape.function` while tracing: reads of an uncovered Variable see
    its concrete value, writes to it are kept in the scope (never in the
    Variable), and both are reported so that the caller can lift it and
    retrace.
    """

    def __init__(self, pairs):
        super().__init__(pairs)
        self.misses: dict[int, Variable] = {}
        self.read: dict[int, Variable] = {}
        self._inputs = {k: val for k, (_, val) in self._values.items()}

    def get(self, variable: Variable) -> Any:
        self.read[id(variable)] = variable
        hit = self._values.get(id(variable))
        if hit is None:
            self.misses[id(variable)] = variable
            return None
        given = self._inputs.get(id(variable))
        if given is not None and id(variable) in self.written:
            # A read after a write: the written value, with the gradient of a
            # read of the Variable (the program's input), as in TF.
            return attached(hit[1], given)
        return hit[1]

    def set(self, variable: Variable, value: Any) -> bool:
        if id(variable) not in self._values:
            self.misses[id(variable)] = variable
        self._values[id(variable)] = (variable, value)
        self.written[id(variable)] = variable
        return True


def current() -> StateScope | None:
    return _stack.scopes[-1] if _stack.scopes else None


_Scope = TypeVar("_Scope", bound=StateScope)


@overload
def state_scope(
    pairs: Iterable[tuple[Any, Any]],
) -> contextlib.AbstractContextManager[StateScope]: ...
@overload
def state_scope(
    pairs: Iterable[tuple[Any, Any]], scope_class: type[_Scope]
) -> contextlib.AbstractContextManager[_Scope]: ...
@contextlib.contextmanager
def state_scope(
    pairs: Iterable[tuple[Any, Any]], scope_class: type[StateScope] = StateScope
) -> Iterator[StateScope]:
    """Reads of the given Variables see the given values; writes stay in the scope.

    `pairs`: an iterable of `(variable, value)` (Variables are unhashable, as in TF).
    """
    scope = scope_class(pairs)
    _stack.scopes.append(scope)
    try:
        yield scope
    finally:
        _stack.scopes.pop()


@contextlib.contextmanager
def creating_state():
    """Runs its body on the Variables themselves, with concrete values.

    For creating state while `jaxtape.function` traces (Keras's lazy build,
    optimizer slots): initial values must be arrays, not tracers, and the RNG
    that draws them advances for real, as TF's `init_scope` lifts creation out
    of the graph.
    """
    saved = _stack.scopes
    _stack.scopes = []
    try:
        with jax.ensure_compile_time_eval():
            yield
    finally:
        _stack.scopes = saved
