"""One trace of a `jaxtape.function`: the traced program and how it runs. Layer L3.

`_Trace` runs the Python function under `jax.jit`'s tracer with the live
Variables lifted through the state scope (symbolically for unknown sizes:
`specialize`), settles on the Variables it touched, builds the plain and
donating programs, and executes them (`execute`: the one way a trace runs),
writing the new state back.
"""

from __future__ import annotations

import functools
import itertools
import threading
import weakref
from collections.abc import Callable
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import ad

from jaxtape._src.core import checks, context, errors
from jaxtape._src.core.dispatch import OpInfo, dispatch_raw, to_value
from jaxtape._src.core.tensor import (
    Tensor,
    in_key_order,
    key_order,
    tree_flatten,
)
from jaxtape._src.function import connectivity, shared_state, specialize
from jaxtape._src.function import probe as _probe
from jaxtape._src.function.concrete import OUT_ARRAY as _ARRAY
from jaxtape._src.function.concrete import OUT_TENSOR as _TENSOR
from jaxtape._src.ops import script_ops
from jaxtape._src.state import scope as _scope
from jaxtape._src.state.variable import Variable, state_lock


def _unsettled(*args: Any) -> Any:
    raise RuntimeError(
        "Internal error: a jaxtape.function trace ran a program it has not "
        "built. Please report the issue."
    )


_UNSETTLED = jax.jit(_unsettled)  # (a program's stand-in: raises when traced)


_serials = itertools.count()


class _Traces(threading.local):
    def __init__(self):
        self.stack: list = []  # the _Traces being traced, innermost last


_traces = _Traces()


def tracing() -> _Trace | None:
    """The trace being traced (the innermost), or None."""
    return _traces.stack[-1] if _traces.stack else None


def before_each_call(hook: Callable[[], None]) -> bool:
    """Runs `hook()` before every later run of the trace being traced (a
    `for` over a Dataset reads the Dataset anew per call, as TF does).
    False when no jaxtape.function is tracing."""
    if not _traces.stack:
        return False
    _traces.stack[-1].before_call.append(hook)
    return True


class _Trace:
    """One compiled program for one input signature."""

    def __init__(self, fn, lifted, treedef, statics, arg_order=None, poly=None):
        self.fn = fn
        self.serial = next(_serials)  # creation order (printed signatures)
        # A symbolic trace (`specialize`): the array leaves' symbolic avals and
        # where their unknown sizes sit; None for a trace of concrete shapes.
        self.poly = poly
        self.before_call: list[Callable[[], None]] = []  # `before_each_call`
        # py_function runs while tracing (`shared_state`), and whether the
        # program calls py_functions (`settle`): their Variables are held.
        self.host_runs: list = []
        self.callbacks = False
        self.poly_failed = False  # a size it could not be specialized to
        self.key: Any = None  # the trace's key (`signature`), set by Function
        self.signature: Any = None  # (args, kwargs) as TF prints them
        self.call_args: Any = ((), {})  # (args, kwargs) of the call that traced
        self.closed = None  # the traced jaxpr (`settle`)
        self.leaf_avals: list = []  # the arrays' avals it was traced with
        self.out_specs: list = []  # the outputs' shapes and dtypes (`settle`)
        self.arg_order = arg_order  # `key_order` of the tracing call's arguments
        self.lifted = [weakref.ref(v) for v in lifted]
        self.avals = [(v._value.shape, v._value.dtype) for v in lifted]
        self.flexible: list[int] = []  # (`settle`; see `stale`)
        self.treedef, self.statics = treedef, statics
        self.written: list[int] = []  # positions in `lifted`, filled when traced
        self.out_tree = None
        self.key_order = None  # dicts' key order, where JAX's sorting loses it
        self.out_static: list = []
        self.n_values = 0  # Tensor/array outputs, filled when traced
        self.one_tensor = False  # whether the output is one Tensor
        self.misses: dict[int, Variable] = {}
        self.used: set[int] = set()  # ids of the Variables the trace read or wrote
        self.traced = False
        # Run-time argument checks (`core/checks`) become part of the program;
        # its error comes out after the outputs and the new state.
        self.checked = checks.compiled_checks
        self.jitted = jax.jit(
            checks.checked(self._pure) if self.checked else self._pure
        )
        # `settle` builds these: (*var_vals, *leaves) -> values + state + error
        self._plain: jax.stages.Wrapped = _UNSETTLED
        self._donating: jax.stages.Wrapped = _UNSETTLED  # donating written state
        self.has_checks = False  # whether the program holds run-time checks
        self.error_tree = None  # their error's structure (`checks.error_layout`)
        # The program's checks' error alone (`diagnose`; only with checks).
        self._error: Callable[..., Any] = _unsettled
        # The program without its checks, for JAX to differentiate (`_unchecked`;
        # False once it could not be made: the checked program is used).
        self._for_autodiff: Callable[..., Any] | bool | None = None
        # Which inputs (kept Variables, then leaves) reach an output through a
        # differentiable path (`_connected_inputs`; None: not computed yet).
        self._connected: list[bool] | None = None
        self._layout = ([], 0)  # the jaxpr's kept Variables, its error outputs

    def _pure(self, var_vals, leaf_vals):
        lifted = [r() for r in self.lifted]
        pairs = [(v, val) for v, val in zip(lifted, var_vals) if v is not None]
        it_leaf, it_static = iter(leaf_vals), iter(self.statics)
        leaves = [
            Tensor(next(it_leaf)) if is_arr else next(it_static)
            for is_arr in self.treedef[1]
        ]
        args, kwargs = jax.tree_util.tree_unflatten(self.treedef[0], leaves)
        if self.arg_order is not None:  # dicts in the order the caller gave them
            args, kwargs = in_key_order((args, kwargs), self.arg_order)
        # Outer tapes must not see the traced ops (a tape inside the function
        # records normally); the whole call is one op for them (_CompiledCall).
        probe = _probe.current.current
        if probe is not None and probe[0] is self:  # (trace_time_values)
            first = next(iter([*var_vals, *leaf_vals]), None)
            frame = getattr(getattr(first, "_trace", None), "frame", None)
            _probe.current.current = (self, frame, *probe[2:])
        _traces.stack.append(self)
        self.host_runs = []
        try:
            with context.paused_tapes(), _tracing():
                with _scope.state_scope(pairs, _scope.RecordingScope) as scope:
                    out = self.fn(*args, **kwargs)
        finally:
            _traces.stack.pop()
        shared_state.check_trace(self.host_runs, scope.read, scope.written)
        self.traced = True
        self.misses = {k: v for k, v in scope.misses.items()}
        self.used = set(scope.read) | set(scope.written)
        position = {id(v): i for i, v in enumerate(lifted) if v is not None}
        self.written = [position[k] for k in scope.written if k in position]
        flat, self.out_tree = tree_flatten(out)
        self.key_order = key_order(out)
        self.out_static = []
        values = []
        for leaf in flat:
            if type(leaf) is Tensor:
                values.append(leaf._value)
                self.out_static.append(_TENSOR)
            elif isinstance(leaf, jax.Array):
                values.append(leaf)
                self.out_static.append(_ARRAY)
            elif isinstance(leaf, Variable):
                values.append(
                    scope.value_of(leaf) if id(leaf) in position else leaf._value
                )
                self.out_static.append(_TENSOR)
            else:
                if isinstance(leaf, jax.core.Tracer):
                    raise TypeError(_RETURN_ERROR.format(leaf))
                self.out_static.append(leaf)
        self.n_values = len(values)
        self.one_tensor = self.out_static == [_TENSOR] and self.out_tree.num_nodes == 1
        new_state = [scope.value_of(lifted[i]) for i in self.written]
        return values, new_state

    def trace_program(self, var_vals, leaves):
        """Runs the Python function under `jax.jit`'s tracer (no compile):
        with symbolic sizes for a symbolic trace."""
        if self.poly is not None:
            self.leaf_avals = self.poly[0]
        else:
            self.leaf_avals = [
                jax.ShapeDtypeStruct(np.shape(x), x.dtype) for x in leaves
            ]
        saved = _probe.current.current
        if not any(type(x) is jax.ShapeDtypeStruct for x in leaves):
            # The call's concrete inputs, for values needed while tracing.
            env = specialize.environment(self.poly[1], leaves) if self.poly else None
            _probe.current.current = (self, None, [*var_vals, *leaves], env)
        try:
            return self.jitted.trace(var_vals, self.leaf_avals)
        finally:
            _probe.current.current = saved

    def specializes(self, var_vals, leaves) -> bool:
        """Whether a symbolic trace's program builds for these sizes (its
        jaxpr replayed with them; jax.jit keeps the result for the call)."""
        if self.poly is None:
            return True
        try:
            self._plain.trace(*var_vals, *leaves)
        except Exception:
            self.poly_failed = True
            return False
        return True

    def settle(self, traced) -> None:
        """After the first trace: lifts only the Variables it read or wrote,
        and builds the plain and donating programs from its jaxpr.

        Every live Variable is lifted for the trace (so that the first call
        needs no second trace); the others would be dead inputs that each call
        still passes, checks and reads (a model built beside this one made a
        step 7% slower). `traced`: `self.jitted.trace(...)`.
        """
        keep = []
        for i, r in enumerate(self.lifted):
            v = r()
            if v is not None and id(v) in self.used:
                keep.append(i)
        closed, n_all, n_keep = traced.jaxpr, len(self.lifted), len(keep)
        self.closed = closed
        self.callbacks = shared_state.calls_host(closed.jaxpr)
        n_error = n_pred = 0
        if self.checked:
            n_error, n_pred, self.error_tree = checks.error_layout(traced.out_info[0])
        self.has_checks = bool(n_error)
        info = traced.out_info[1] if self.checked else traced.out_info
        self.out_specs = [(x.shape, x.dtype) for x in info[0]]
        dims = self.poly[1] if self.poly is not None else None

        def run(args):
            full = [None] * n_all  # an input the trace did not touch is never read
            for i, val in zip(keep, args[:n_keep]):
                full[i] = val
            leaf_vals = args[n_keep:]
            if dims is None:
                return jax.core.eval_jaxpr(
                    closed.jaxpr, closed.consts, *full, *leaf_vals
                )
            env = specialize.environment(dims, leaf_vals)  # a symbolic trace
            return specialize.evaluate(closed, [*full, *leaf_vals], env)

        def flat(*args):
            out = run(args)
            if not n_error:
                return out
            # One flag that says whether a check failed comes last: the only
            # value a call reads back (XLA drops the unused error messages'
            # arguments; `diagnose` computes them when a check fails).
            failed = functools.reduce(jax.numpy.logical_or, out[:n_pred])
            return [*out[n_error:], failed]

        def error(*args):
            return run(args)[:n_error]

        self._layout = (keep, n_error)
        position = {i: k for k, i in enumerate(keep)}
        self.written = [position[i] for i in self.written]
        self.lifted = [self.lifted[i] for i in keep]
        self.avals = [self.avals[i] for i in keep]
        # Lifted Variables with a declared shape (`shape=[None]`): an
        # assignment can change their size, and the program then traces anew.
        self.flexible = [
            i
            for i, r in enumerate(self.lifted)
            if (v := r()) is not None and v._shape is not None
        ]
        self._plain = jax.jit(flat)
        self._donating = jax.jit(flat, donate_argnums=tuple(self.written))
        self._error = jax.jit(error) if n_error else _unsettled

    def stale(self) -> bool:
        """Whether a lifted Variable with a declared shape now has another
        size than this program was traced with (TF's graph takes any size
        its shape allows; XLA's programs are for one)."""
        for i in self.flexible:
            v = self.lifted[i]()
            if v is not None and v._value.shape != self.avals[i][0]:
                return True
        return False

    def var_values(self):
        """The lifted Variables' current values (placeholders for dead ones)."""
        scoped = bool(_scope._stack.scopes)
        out = []
        for r, (shape, dtype) in zip(self.lifted, self.avals):
            v = r()
            if v is None:
                out.append(_placeholder(shape, dtype))
            else:  # `_value` directly: reading for our own call shares nothing
                out.append(v._read_raw() if scoped else v._value)
        return out

    def execute(self, leaves, objs=None):
        """Runs the program once: the one way a trace is run.

        Under the state lock (threads), the lifted Variables' values go in,
        the program runs, and the written state comes back; a failed run-time
        check raises afterwards. `objs`: the caller's argument objects, given
        when outer tapes record the whole call as one op (`_CompiledCall`).
        """
        for hook in self.before_call:
            hook()
        with state_lock:
            try:
                if not self.callbacks:
                    values, new_state, failed = self._run(leaves, objs)
                else:  # its py_functions must not share its Variables
                    variables = [r() for r in self.lifted]
                    written = {id(variables[i]) for i in self.written}
                    with shared_state.holding(variables, written):
                        values, new_state, failed = self._run(leaves, objs)
                        jax.block_until_ready((values, new_state))
            except jax.errors.JaxRuntimeError as e:  # a py_function failed?
                script_ops.raise_failure(e)
                raise
            out = self._write_back(values, new_state)
        if failed is not None:
            if objs is not None:
                leaves = [x._value if type(x) is Tensor else x for x in objs]
            later = checks.failed_later(failed, lambda: self.diagnose(leaves))
            # Waiting, then reading, is ~20 us faster than reading a flag the
            # program has yet to finish (JAX's host copy of a busy buffer).
            if not later and np.asarray(failed.block_until_ready()):
                self.diagnose(leaves)
        return out

    def _run(self, leaves, objs):
        if objs is not None:
            return self._call_recorded(objs)
        return self._call(leaves)

    def _call(self, leaves):
        """Runs the program, donating the written state nobody else has seen.

        A written Variable's buffer is donated (updated in place by XLA) when
        the previous compiled call produced it and nothing read it since
        (`Variable._fresh`); a Tensor from `read_value()` would alias it.
        When some state was read (or set) outside, the call runs without
        donation, so a program compiles at most twice. Returns the values,
        the new state and the checks' failure flag (None: no checks).
        """
        if _scope._stack.scopes:  # inside another trace's scope: its values
            var_vals, fresh = self.var_values(), False
        else:
            variables, var_vals = [], []
            for r in self.lifted:  # (a loop: cheaper than comprehensions here)
                v = r()
                if v is None:  # a Variable died: placeholders stand in
                    break
                variables.append(v)
                var_vals.append(v._value)
            fresh = len(variables) == len(self.lifted)
            if not fresh:
                var_vals = self.var_values()
            else:
                for i in self.written:
                    if not variables[i]._fresh:
                        fresh = False
        # (No donation when py_functions run: one that fails leaves the
        # state as it was.)
        donate = self.written and fresh and not self.callbacks
        program = self._donating if donate else self._plain
        out = program(*var_vals, *leaves)
        n_values = self.n_values
        if not self.has_checks:
            return out[:n_values], out[n_values:], None
        return out[:n_values], out[n_values:-1], out[-1]

    def _call_recorded(self, objs):
        """The call as one op for outer tapes (`_CompiledCall`): the lifted
        Variables are read as recorded reads, the caller's own Tensors go in,
        so that tracked ones carry gradients."""
        if self.has_checks and self._for_autodiff is None:
            self._for_autodiff = (
                self._unchecked([x._value if type(x) is Tensor else x for x in objs])
                or False
            )
        if self._connected is None:
            self._connected = self._connected_inputs()
        # An input with no differentiable path to an output goes in unrecorded:
        # its gradient is None, as TF's function-call gradient gives it.
        n_vars = len(self.lifted)
        reads = []
        for r, (shape, dtype), connected in zip(
            self.lifted, self.avals, self._connected
        ):
            var = r()
            if var is None:
                reads.append(_placeholder(shape, dtype))
            else:
                reads.append(var.read_value() if connected else var._value)
        call = _CompiledCall(self)
        info = OpInfo(call, f"function:{call.__name__}", False, True)
        args = [
            x if type(x) is Tensor and connected else Tensor(jnp.asarray(to_value(x)))
            for x, connected in zip(objs, self._connected[n_vars:])
        ]
        out = dispatch_raw(info, [*reads, *args], ())
        out = list(out) if isinstance(out, tuple) else [out]
        failed = to_value(out.pop()) if self.has_checks else None
        return out[: self.n_values], out[self.n_values :], failed

    def _connected_inputs(self) -> list[bool]:
        """For each input of the program (kept Variables, then leaves): whether
        a differentiable path joins it to a value output (`connectivity`)."""
        keep, n_error = self._layout
        if self.closed is None:
            return [True] * (len(keep) + len(self.leaf_avals))
        jaxpr = self.closed.jaxpr
        n_outs = len(jaxpr.outvars)
        used = [n_error <= i < n_error + self.n_values for i in range(n_outs)]
        reach = connectivity.differentiable_inputs(jaxpr, used)
        n_all = len(reach) - len(self.leaf_avals)
        return [reach[i] for i in keep] + reach[n_all:]

    def _unchecked(self, leaves):
        """This program without its run-time checks, as JAX differentiates it
        for outer tapes: JAX cannot differentiate a checked (checkified)
        program that holds a `custom_vjp` (`sqrt`, softmax cross-entropy, a
        `custom_gradient`). The recorded call itself runs the checked program
        on the same inputs, so its checks still decide. Traced once, on the
        first recorded call (the Python function runs once more)."""
        lifted = [r() for r in self.lifted]
        if any(v is None for v in lifted):
            return None
        twin = _Trace(
            self.fn, lifted, self.treedef, self.statics, self.arg_order, self.poly
        )
        twin.checked, twin.jitted = False, jax.jit(twin._pure)
        saved, checks.compiled_checks = checks.compiled_checks, False
        try:
            twin.settle(twin.trace_program(twin.var_values(), leaves))
        except Exception:  # (it traced once already: keep the checked program)
            return None
        finally:
            checks.compiled_checks = saved
        position = {id(v): i for i, v in enumerate(lifted)}
        pick = [position[id(r())] for r in twin.lifted]
        if [id(twin.lifted[i]()) for i in twin.written] != [
            id(self.lifted[i]()) for i in self.written
        ]:
            return None  # (a trace that differs from the first: keep the checked one)
        n_vars, plain = len(lifted), twin._plain

        def run(*vals):
            out = plain(*[vals[i] for i in pick], *vals[n_vars:])
            return (*out, jax.numpy.zeros((), bool))  # the checks' flag: passed

        return run

    def _write_back(self, values, new_state):
        """Writes the new state back (under `state_lock`); rebuilds the
        outputs (values: arrays, or Tensors recorded on outer tapes)."""
        scoped = bool(_scope._stack.scopes)
        out_ids = set(map(id, values))  # state also returned as an output
        for i, val in zip(self.written, new_state):
            var = self.lifted[i]()
            if var is None:
                continue
            val = val._value if type(val) is Tensor else val
            if scoped:
                var._write(val)
            else:  # fresh arrays from our own program: no checks, no copies
                var._store_result(val, id(val) not in out_ids)
        return self._outputs(values)

    def diagnose(self, leaves):
        """Raises a failed check's message, TF's text with the bad index or
        value: the program runs once more, returning only the checks' error,
        on the same arguments and the Variables as the call left them (an
        index computed from data finds the same culprit)."""
        with state_lock:
            var_vals = self.var_values()
        error = self._error(*var_vals, *leaves)
        checks.raise_if_failed(self.error_tree, error)
        raise errors.InvalidArgumentError(
            None,
            None,
            f"A run-time check failed inside jaxtape.function "
            f"{getattr(self.fn, '__name__', 'function')!r} (an "
            "index out of range, an integer division by zero or a failed "
            "jaxtape.debugging assertion); the failing values depended on "
            "Variables the call updated, so its message could not be rebuilt. "
            "Call the function's Python body eagerly with the same arguments to "
            "see it, or turn the checks off with "
            "`jaxtape.config.experimental.set_runtime_checks(False)`.",
        )

    def _outputs(self, values):
        if self.one_tensor:  # one Tensor returned: the common case
            v = values[0]
            return v if type(v) is Tensor else Tensor(v)
        it = iter(values)
        leaves = []
        for s in self.out_static:
            if s is _TENSOR or s is _ARRAY:
                v = next(it)
                if s is _ARRAY:
                    leaves.append(v._value if type(v) is Tensor else v)
                else:
                    leaves.append(v if type(v) is Tensor else Tensor(v))
            else:
                leaves.append(s)
        out = jax.tree_util.tree_unflatten(self.out_tree, leaves)
        return out if self.key_order is None else in_key_order(out, self.key_order)


_RETURN_ERROR = (
    "jaxtape.function returned {!r}, a traced value that is not a Tensor; return "
    "Tensors (or structures of them) and plain Python values."
)


@functools.lru_cache(maxsize=64)
def _placeholder(shape, dtype):
    return jax.numpy.zeros(shape, dtype)


class _tracing:  # noqa: N801
    """Marks that a jaxtape.function trace is running (for clearer errors)."""

    def __enter__(self):
        context.state.function_depth += 1

    def __exit__(self, *exc):
        context.state.function_depth -= 1
        if not context.state.function_depth:
            context.state.static.clear()
        return False


def inside_function() -> bool:
    return context.state.function_depth > 0


_AD_TRACERS = (ad.JVPTracer, ad.LinearizeTracer)


class _CompiledCall:
    """The primitive an outer GradientTape records for one compiled call."""

    __slots__ = ("trace", "__name__")

    def __init__(self, trace):
        self.trace = trace
        self.__name__ = getattr(trace.fn, "__name__", "function")

    def __hash__(self):
        return id(self.trace)

    def __eq__(self, other):
        return isinstance(other, _CompiledCall) and other.trace is self.trace

    def __call__(self, *vals):
        trace = self.trace
        if trace._for_autodiff and any(isinstance(v, _AD_TRACERS) for v in vals):
            return tuple(trace._for_autodiff(*vals))
        return tuple(trace._plain(*vals))
