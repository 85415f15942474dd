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


class _Stack(threading.local):
    def __init__(self):
        self.scopes: list[StateScope] = []


_stack = _Stack()


class StateScope:
    """Values standing in for Variables, keyed by the Variable's identity."""

    def __init__(self, pairs):
        self._values = {id(v): (v, val) for v, val in pairs}
        self.written: dict[int, object] = {}

    def get(self, variable):
        """The overlaid value of `variable`; None when the scope does not cover it."""
        hit = self._values.get(id(variable))
        return None if hit is None else hit[1]

    def set(self, variable, value) -> bool:
        if id(variable) not in self._values:
            return False
        self._values[id(variable)] = (variable, value)
        self.written[id(variable)] = variable
        return True

    def value_of(self, variable):
        return self._values[id(variable)][1]


def current() -> StateScope | None:
    return _stack.scopes[-1] if _stack.scopes else None


@contextlib.contextmanager
def state_scope(pairs):
    """Reads of the given Variables see the given values; writes stay in the scope.

    `pairs`: an iterable of `(variable, value)` (Variables are unhashable, as in TF).
    """
    scope = StateScope(pairs)
    _stack.scopes.append(scope)
    try:
        yield scope
    finally:
        _stack.scopes.pop()
