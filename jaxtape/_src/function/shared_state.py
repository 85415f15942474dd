"""Variables shared by a compiled program and the py_functions it calls. Layer L3.

Inside `jaxtape.function`, `py_function`/`numpy_function` run their Python
`func` on the host while the program runs. The program holds the Variables it
uses as inputs and writes its new state back when it ends, so `func` cannot
see a value the program wrote before it, and a value `func` assigns to a
Variable the program uses would be overwritten (or never read) by it. TF runs
both on the one Variable, in program order. Rather than give a silently
different result, such a `func` raises `NotImplementedError`, naming the
Variable: at trace time for what `func` touched when it ran there, and on
every later run (`py_function_scope`, installed as
`context.hooks.py_function_scope`). Variables the program does not use, and
reads of Variables it only reads, work as in TF.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import jax.extend.core as jex_core

from jaxtape._src.core import context
from jaxtape._src.state import scope as _scope
from jaxtape._src.state.scope import StateScope


class _Held:
    """The Variables of the compiled call running now whose program calls
    py_functions: id -> whether the program writes it (process-wide: XLA may
    run a callback on a thread of its own)."""

    def __init__(self) -> None:
        self.vars: dict[int, bool] = {}


_held = _Held()


class _HostScope(StateScope):
    """Around one run of a py_function's `func`: reads and writes go to the
    Variables themselves and are noted; one the running program holds fails."""

    def __init__(self, name: str, held: dict[int, bool]):
        super().__init__(())
        self.name, self.held = name, held
        self.read: dict[int, Any] = {}

    def get(self, variable) -> Any:
        self.read[id(variable)] = variable
        if self.held.get(id(variable)):
            raise NotImplementedError(conflict(self.name, variable, "reads"))
        return None

    def set(self, variable, value) -> bool:
        self.written[id(variable)] = variable
        if id(variable) in self.held:
            raise NotImplementedError(conflict(self.name, variable, "assigns"))
        return False


def conflict(name: str, variable, verb: str) -> str:
    return (
        f"py_function {name!r} {verb} Variable {variable.name!r}, which the "
        "jaxtape.function that calls it also uses: a compiled program holds its "
        "Variables until it ends, so the py_function would see or leave a "
        "different value than TF's. Pass the value to the py_function as an "
        "input and assign its result outside it, keep that state in a "
        "Variable of its own, or run the function eagerly "
        "(`jaxtape.config.run_functions_eagerly(True)`)."
    )


@contextlib.contextmanager
def py_function_scope(name: str) -> Iterator[None]:
    """Runs a py_function's `func` (trace time and run time) under `_HostScope`;
    at trace time, the trace being traced notes what it touched."""
    from jaxtape._src.function import trace  # (trace imports this module)

    host = _HostScope(name, dict(_held.vars))
    _scope._stack.scopes.append(host)
    try:
        yield
    finally:
        _scope._stack.scopes.pop()
        if trace._traces.stack:  # traced: `check_trace` compares at its end
            trace._traces.stack[-1].host_runs.append(host)


def check_trace(host_runs, read: dict, written: dict) -> None:
    """At the end of a trace: a py_function that ran while it was traced must
    not have read a Variable the trace writes, nor assigned one it uses."""
    for host in host_runs:
        for key, variable in host.written.items():
            if key in read or key in written:
                raise NotImplementedError(conflict(host.name, variable, "assigns"))
        for key, variable in host.read.items():
            if key in written:
                raise NotImplementedError(conflict(host.name, variable, "reads"))


@contextlib.contextmanager
def holding(variables, written: set[int]) -> Iterator[None]:
    """While a program that calls py_functions runs: its Variables are held
    (`written`: ids of those it writes); the program is waited for, so that
    no callback runs after the hold ends."""
    saved = _held.vars
    _held.vars = {**saved, **{id(v): id(v) in written for v in variables}}
    try:
        yield
    finally:
        _held.vars = saved


def calls_host(jaxpr) -> bool:
    """Whether a jaxpr (or one nested in it) runs a host callback."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "io_callback":  # (not `print`'s debug_callback)
            return True
        for param in eqn.params.values():
            for sub in param if isinstance(param, (list, tuple)) else (param,):
                inner = getattr(sub, "jaxpr", sub)
                if isinstance(inner, jex_core.Jaxpr) and calls_host(inner):
                    return True
    return False


context.hooks.py_function_scope = py_function_scope
