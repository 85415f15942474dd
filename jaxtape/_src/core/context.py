"""Thread-local context stacks: active tapes, name scopes, device; and upward hooks.

Layer L0. Lower layers never import upper ones: where they must call up (the
tape's record hook, variable creators), the upper layer installs a hook here.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import jax

from jaxtape._src.core import errors


class _State(threading.local):
    def __init__(self) -> None:
        # Tapes currently recording, innermost last. The dispatcher's fast path
        # is `if _state.tapes:`; keep it a plain list.
        self.tapes: list = []
        self.name_scope: list[str] = []
        self.device: Any = None  # a jax.Device, or None: JAX's default placement
        self.device_spec: str | None = None
        self.init_scope_depth = 0
        self.function_depth = 0  # > 0 while jaxtape.function traces
        # While it traces: values derived from static shapes (`shape(x)`, and
        # small ops on them), id -> array; known values, folded by the
        # dispatcher and staged by AutoGraph as TF's symbolic ones.
        self.static: dict[int, Any] = {}


state = _State()
errors.tracing = lambda: state.function_depth > 0


def current_name_scope() -> str:
    """The active name-scope prefix, e.g. `'outer/inner/'` ('' at top level)."""
    return "".join(s + "/" for s in state.name_scope)


@contextlib.contextmanager
def push_name_scope(name: str) -> Iterator[str]:
    """Pushes one name-scope component (`jaxtape.name_scope` builds on this)."""
    state.name_scope.append(name)
    try:
        yield current_name_scope()
    finally:
        state.name_scope.pop()


@contextlib.contextmanager
def absolute_name_scope(prefix: str) -> Iterator[str]:
    """Replaces the whole scope stack by `prefix` (TF's `name_scope('a/b/')`)."""
    saved = state.name_scope
    state.name_scope = [p for p in prefix.split("/") if p]
    try:
        yield current_name_scope()
    finally:
        state.name_scope = saved


@contextlib.contextmanager
def paused_tapes() -> Iterator[None]:
    """Runs its body with no tape recording (used by `init_scope`, `stop_recording`)."""
    saved = state.tapes
    state.tapes = []
    try:
        yield
    finally:
        state.tapes = saved


def _no_variables(variable: Any) -> Any:
    raise TypeError(f"No Variable type is installed to read {variable!r}.")


@contextlib.contextmanager
def _eager_scope():
    saved = state.function_depth
    state.function_depth = 0
    try:
        with paused_tapes(), jax.ensure_compile_time_eval():
            yield
    finally:
        state.function_depth = saved


def mark_static(value: Any) -> Any:
    """Notes `value` (an array) as derived from static shapes while
    jaxtape.function traces (`state.static`); returns it."""
    if state.function_depth:
        state.static[id(value)] = value
    return value


def _no_scope(name: str) -> contextlib.AbstractContextManager[None]:
    return contextlib.nullcontext()


class Hooks:
    """Functions installed by upper layers; defaults keep L0/L1 usable alone."""

    def __init__(self) -> None:
        # Called with a Variable when it is read by an op while tapes record;
        # returns the value to use (a Tensor registered as a leaf on those
        # tapes). The state layer installs a plain read with `variable_type`,
        # so the default never runs: there is no Variable to read before.
        self.read_variable: Callable[[Any], Any] = _no_variables
        # The class of Variables (state layer); lets the dispatcher unwrap them.
        self.variable_type: type | None = None
        # Called as warn_numpy_escape(tensor) when a tracked tensor goes to NumPy.
        self.numpy_escape: Callable[[Any], None] | None = None
        # `eager_vjp(fn, inputs, cotangents)`: the gradients of `fn(*inputs)` (a
        # list of Tensors) for `inputs`, computed eagerly with a GradientTape
        # (`py_function`'s gradient inside a compiled program). The autodiff
        # layer installs it.
        self.eager_vjp: Callable[[Any, list, list], list] | None = None
        # `trace_time_values(values)`: concrete values, while jaxtape.function
        # traces, of traced inputs of an op (`py_function`'s output shapes), or
        # None where they cannot be known. The function layer installs it.
        self.trace_time_values: Callable[[list], list | None] | None = None
        # `init_scope()`: a context that runs its body eagerly even while
        # jaxtape.function traces (TF's `tf.init_scope`); the state layer
        # installs it (it also lifts Variables out of the trace).
        self.init_scope: Callable[[], Any] = _eager_scope
        # `py_function_scope(name)`: a context around every run of a
        # py_function's `func` (Variables a compiled program holds); the
        # function layer installs it.
        self.py_function_scope: Callable[[str], Any] = _no_scope
        # `random_key(seed)`: a fresh `jax.random` key from the global seed
        # streams, and `log_uniform_candidate_sampler(...)` (tf.random's), for
        # the L1 ops that sample (tf.nn's fractional pooling, nce_loss); the
        # state layer installs both.
        self.random_key: Callable[[Any], Any] | None = None
        self.log_uniform_candidate_sampler: Callable[..., Any] | None = None
        # `parse_example(serialized, features)`: tf.io's, for tf.data's
        # `parse_example_dataset` (data/ and io/ are peers); io installs it.
        self.parse_example: Callable[..., Any] | None = None


hooks = Hooks()
