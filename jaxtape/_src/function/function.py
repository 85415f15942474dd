"""`jaxtape.function` (TF's `tf.function`): jax.jit with lifted Variables. Layer L3.

The Python function is traced once per input signature into one XLA program.
State is lifted through the state scope (STYLE.md: functionalization happens
in one place): every live Variable is an input of the traced program (those
the trace neither read nor wrote are dropped before it compiles), reads
inside the trace see that input, writes stay in the scope and come out as
outputs, and after the call the written values are assigned back. Layer
weights, optimizer slots and `iterations`, metric accumulators, BatchNorm
statistics and the global RNG key are all Variables, so they all follow.

Variables created during a trace (Keras's lazy `build`, optimizer slots) are
created concretely, outside the trace (`creating_state`); the function is then
traced once more with them lifted, as TF traces twice when the first call
creates variables. No Variable ever holds a tracer, even when tracing fails.

Why a scope and not JAX's mutable array references (`jax.new_ref`): measured
here, an eager read of a ref costs ~76 µs and a write ~109 µs (a plain array
read is free), and eager tapes read variables on every op; the scope costs
nothing outside `jaxtape.function`.
"""

from __future__ import annotations

import collections
import functools
import inspect
import itertools
import logging
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, overload

import jax
import jax.core
import numpy as np
import jax.extend.core as jex_core
from jax._src import source_info_util

from jaxtape._src.core import checks, context, dtypes, errors
from jaxtape._src.core.compile_cache import guard as _guard
from jaxtape._src.core.dispatch import OpInfo, dispatch_raw
from jaxtape._src.core.tensor import (
    Tensor,
    TensorSpec,
    in_key_order,
    key_order,
    tree_flatten,
    tree_map,
)
from jaxtape._src.function import signature as _sig
from jaxtape._src.function import specialize
from jaxtape._src.ops import script_ops
from jaxtape._src.state import scope as _scope
from jaxtape._src.state.variable import Variable, live_variables, state_lock

MAX_TRACES = 64  # traces (compiled programs) a Function keeps, least recent dropped


def _unsettled(*args: Any) -> Any:
    raise RuntimeError(
        "Internal error: a jaxtape.function trace ran a program it has not "
        "built. Please report the issue."
    )


_serials = itertools.count()


class _Trace:
    """One compiled program for one input signature."""

    def __init__(self, fn, lifted, treedef, statics, arg_order=None, poly=None):
        self.fn = fn
        self.serial = next(_serials)  # creation order (printed signatures)
        # A symbolic trace (`specialize`): the array leaves' symbolic avals and
        # where their unknown sizes sit; None for a trace of concrete shapes.
        self.poly = poly
        self.poly_failed = False  # a size it could not be specialized to
        self.key = None  # the trace's key (`signature`), set by Function
        self.signature: Any = None  # (args, kwargs) as TF prints them
        self.call_args: Any = ((), {})  # (args, kwargs) of the call that traced
        self.closed = None  # the traced jaxpr (`settle`)
        self.leaf_avals: list = []  # the arrays' avals it was traced with
        self.out_specs: list = []  # the outputs' shapes and dtypes (`settle`)
        self.arg_order = arg_order  # `key_order` of the tracing call's arguments
        self.lifted = [weakref.ref(v) for v in lifted]
        self.avals = [(v._value.shape, v._value.dtype) for v in lifted]
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
        self._plain: Callable[..., Any] = _unsettled
        self._donating: Callable[..., Any] = _unsettled  # donating written state
        self.has_checks = False  # whether the program holds run-time checks
        self.error_tree = None  # their error's structure (`checks.error_layout`)
        # The program's checks' error alone (`diagnose`; only with checks).
        self._error: Callable[..., Any] = _unsettled

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
        probe = _probe.current
        if probe is not None and probe[0] is self:  # (trace_time_values)
            first = next(iter([*var_vals, *leaf_vals]), None)
            frame = getattr(getattr(first, "_trace", None), "frame", None)
            _probe.current = (self, frame, *probe[2:])
        with context.paused_tapes(), _tracing():
            with _scope.state_scope(pairs, _scope.RecordingScope) as scope:
                out = self.fn(*args, **kwargs)
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
        saved = _probe.current
        if not any(type(x) is jax.ShapeDtypeStruct for x in leaves):
            # The call's concrete inputs, for values needed while tracing.
            env = specialize.environment(self.poly[1], leaves) if self.poly else None
            _probe.current = (self, None, [*var_vals, *leaves], env)
        try:
            return self.jitted.trace(var_vals, self.leaf_avals)
        finally:
            _probe.current = saved

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

        position = {i: k for k, i in enumerate(keep)}
        self.written = [position[i] for i in self.written]
        self.lifted = [self.lifted[i] for i in keep]
        self.avals = [self.avals[i] for i in keep]
        self._plain = jax.jit(flat)
        self._donating = jax.jit(flat, donate_argnums=tuple(self.written))
        self._error = jax.jit(error) if n_error else _unsettled

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
        with state_lock:
            try:
                if objs is not None:
                    values, new_state, failed = self._call_recorded(objs)
                else:
                    values, new_state, failed = self._call(leaves)
            except jax.errors.JaxRuntimeError as e:  # a py_function failed?
                script_ops.raise_failure(e)
                raise
            out = self._write_back(values, new_state)
        if failed is not None:
            if objs is not None:
                leaves = [x._value if type(x) is Tensor else x for x in objs]
            later = checks.failed_later(failed, lambda: self.diagnose(leaves))
            if not later and np.asarray(failed):
                self.diagnose(leaves)
        return out

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
        program = self._donating if self.written and fresh else self._plain
        out = program(*var_vals, *leaves)
        n_values = self.n_values
        if not self.has_checks:
            return out[:n_values], out[n_values:], None
        return out[:n_values], out[n_values:-1], out[-1]

    def _call_recorded(self, objs):
        """The call as one op for outer tapes (`_CompiledCall`): the lifted
        Variables are read as recorded reads, the caller's own Tensors go in,
        so that tracked ones carry gradients."""
        reads = []
        for r, (shape, dtype) in zip(self.lifted, self.avals):
            var = r()
            reads.append(
                var.read_value() if var is not None else _placeholder(shape, dtype)
            )
        call = _CompiledCall(self)
        info = OpInfo(call, f"function:{call.__name__}", False, True)
        args = [x if type(x) is Tensor else Tensor(jax.numpy.asarray(x)) for x in objs]
        out = dispatch_raw(info, [*reads, *args], ())
        out = list(out) if isinstance(out, tuple) else [out]
        failed = out.pop()._value if self.has_checks else None
        return out[: self.n_values], out[self.n_values :], failed

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
            if scoped or var._constraint is not None:
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


class _Probe(threading.local):
    def __init__(self):
        # (trace, its frame, the concrete inputs, sizes of a symbolic trace)
        # while `trace_program` traces a call with concrete arguments.
        self.current: tuple | None = None


_probe = _Probe()


def _trace_time_values(values) -> list | None:
    """Concrete values of tensors while jaxtape.function traces (installed as
    `context.hooks.trace_time_values`; `py_function`'s output shapes): the
    program so far, up to them, evaluated on the call's concrete inputs.
    None where they are not known: inside control-flow bodies, in
    `get_concrete_function` of TensorSpecs."""
    probe = _probe.current
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


context.hooks.trace_time_values = _trace_time_values


_TENSOR, _ARRAY = object(), object()
_SINGLETON = (
    "tf.function only supports singleton tf.Variables created on the first call. "
    "Make sure the tf.Variable is only created once or created outside "
    "tf.function. See https://www.tensorflow.org/guide/function#creating_tfvariables"
    " for more information. (jaxtape.function {!r} created Variables on its "
    "first call and creates new ones again: create them once, outside the "
    "function, or guard their creation:\n"
    "  Wrong: def f(x): v = jaxtape.Variable(1.0); ...\n"
    "  Right: if self.v is None: self.v = jaxtape.Variable(1.0))"
)
_RETURN_ERROR = (
    "jaxtape.function returned {!r}, a traced value that is not a Tensor; return "
    "Tensors (or structures of them) and plain Python values."
)


def _fast_leaf(a, key, leaves) -> bool:
    t = type(a)
    if t is Tensor:
        v = a._value
    elif t is np.ndarray or isinstance(a, jax.Array):
        v = a
    else:
        return False
    key.append((v.shape, v.dtype))
    leaves.append(v)
    return True


@functools.lru_cache(maxsize=64)
def _placeholder(shape, dtype):
    return jax.numpy.zeros(shape, dtype)


class _tracing:  # noqa: N801
    """Marks that a jaxtape.function trace is running (for clearer errors)."""

    def __enter__(self):
        context.state.function_depth += 1

    def __exit__(self, *exc):
        context.state.function_depth -= 1
        return False


def inside_function() -> bool:
    return context.state.function_depth > 0


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
        return tuple(self.trace._plain(*vals))


class _RetracingDetector:
    """TF's frequent-tracing warning (`_FrequentTracingDetector`), with TF's
    counts and text: per Python function (its code object, so that functions
    made in a loop share one history), the calls of the last ~10 that traced;
    when 5 did, a warning is logged (at most twice per function). A call that
    traced counts once however many traces it made; `get_concrete_function`
    does not count."""

    _HISTORY, _THRESHOLD, _MAX_WARNINGS = 10, 5, 2

    def __init__(self):
        # key -> [calls per tracing (a list), call count, warnings given]
        self._by_key: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @staticmethod
    def _key(fn):
        while hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        fn = getattr(fn, "__func__", fn)  # methods: one history per function
        return getattr(fn, "__code__", fn)

    def called_with_tracing(self, function, untraced_calls: int) -> None:
        """A call traced; `untraced_calls` calls since the last report did not."""
        fn = function._fn
        try:
            state = self._by_key.setdefault(self._key(fn), [[], 0, 0])
        except TypeError:  # not weak-referenceable: no history
            return
        per_tracing = state[0]
        if untraced_calls:  # (TF's called_without_tracing, once per call)
            if not per_tracing:
                per_tracing.append(0)
            per_tracing[-1] += untraced_calls
            state[1] += untraced_calls
        state[1] += 1
        per_tracing.append(1)
        while per_tracing and state[1] - per_tracing[0] > self._HISTORY:
            state[1] -= per_tracing.pop(0)
        if state[2] >= self._MAX_WARNINGS or len(per_tracing) < self._THRESHOLD:
            return
        state[2] += 1
        logging.getLogger("jaxtape").warning(
            _RETRACING.format(len(per_tracing), state[1], fn)
        )


_RETRACING = (
    "{} out of the last {} calls to {} triggered tf.function retracing. Tracing "
    "is expensive and the excessive number of tracings could be due to (1) "
    "creating @jaxtape.function repeatedly in a loop, (2) passing tensors with "
    "different shapes, (3) passing Python objects instead of tensors. For (1), "
    "please define your @jaxtape.function outside of the loop. For (2), "
    "@jaxtape.function has reduce_retracing=True option that can avoid "
    "unnecessary retracing. For (3), please refer to "
    "https://www.tensorflow.org/guide/function#controlling_retracing and "
    "https://www.tensorflow.org/api_docs/python/tf/function for  more details."
)
_retracing = _RetracingDetector()

# AutoGraph's converter (`autograph/`, an upper layer, installs it): called as
# `convert(python_function, experimental_autograph_options)`, returns the
# function that traces call.
_autograph_converter: Callable[[Callable[..., Any], Any], Callable[..., Any]] | None = (
    None
)


def install_autograph(convert) -> None:
    """Installs AutoGraph's converter (called by `jaxtape._src.autograph`)."""
    global _autograph_converter
    _autograph_converter = convert


class Function:
    """A Python function compiled with `jax.jit`, with TF's `tf.function` API.

    Args:
      python_function: the function (or method) to compile.
      input_signature: optional (nested) list of `TensorSpec`s; calls must
        match it (TF's `TypeError` otherwise); Python numbers, lists and NumPy
        arrays are converted to the specs' dtypes. With `None` dimensions the
        Python function is traced ONCE for all sizes (`specialize`); XLA
        compiles one program per concrete shape behind it.
      jit_compile: accepted; everything is compiled with XLA.
      reduce_retracing: TF's shape relaxation: a call with new shapes traces
        with the dimensions that differ from an earlier trace's as `None`, so
        that further sizes reuse that trace. `experimental_relax_shapes` is
        its deprecated alias.
      autograph: whether to convert Python `if`/`while`/`for` on tensors to
        control flow, as TF's AutoGraph does (`jaxtape.autograph`); with
        False, such code raises an error that names the fix.
      experimental_autograph_options: TF's `autograph.experimental.Feature`s.

    Retracing happens when the tensor shapes or dtypes, the nested structure,
    or the Python values of non-tensor arguments change; a call runs the most
    specific trace that accepts it (a trace with `None` dimensions accepts
    every size). Variables may be created on the first call only, as in TF.

    Differences from TensorFlow: where a trace with unknown sizes cannot be
    traced symbolically (Python code that needs a concrete size, see
    `specialize`), each size is traced on its own (Python side effects once
    per size); unknown sizes that are equal in the tracing call are assumed
    equal, so a later call where they differ traces once more; shapes of
    different ranks are not relaxed to an unknown rank.
    """

    __name__: str  # (and `__doc__`, `__wrapped__`: the Python function's)

    def __init__(
        self,
        python_function: Callable[..., Any],
        input_signature: Sequence[TensorSpec] | None = None,
        jit_compile: bool | None = None,
        reduce_retracing: bool = False,
        autograph: bool = True,
        name: str | None = None,
        experimental_relax_shapes: bool | None = None,
        experimental_autograph_options: Any = None,
        **kwargs: Any,
    ) -> None:
        self._fn = python_function
        # AutoGraph: the function as traces call it, converted on first use.
        self._autograph = (autograph, experimental_autograph_options)
        self._converted: Callable[..., Any] | None = None
        self._input_signature = _sig.check_input_signature(input_signature)
        self._reduce_retracing = bool(reduce_retracing or experimental_relax_shapes)
        self._options = dict(
            input_signature=input_signature,
            jit_compile=jit_compile,
            reduce_retracing=self._reduce_retracing,
            autograph=autograph,
            experimental_autograph_options=experimental_autograph_options,
        )
        # The most recently used traces (an LRU of `MAX_TRACES`), by key (a
        # symbolic trace's: (key, pattern)); each holds its compiled programs.
        self._traces: collections.OrderedDict = collections.OrderedDict()
        self._general: list[_Trace] = []  # the symbolic ones, oldest first
        self._failed: set = set()  # (key, pattern) that cannot trace symbolically
        self._resolved: dict = {}  # a call's key -> the symbolic trace it runs
        self._fast_traces: dict = {}  # all-array calls: (shape, dtype) per arg
        self._tracing_count = 0
        self._created_variables = False  # whether the first call created some
        self._untraced_calls = 0  # for the retracing detector, since it last saw us
        functools.update_wrapper(self, python_function)
        if name is not None:
            self.__name__ = name

    # -- methods: one Function per instance ------------------------------------------
    def __get__(self, instance, owner):
        if instance is None:
            return self
        cache = instance.__dict__.setdefault("_jaxtape_functions", {})
        bound = cache.get(id(self))
        if bound is None:
            bound = Function(self._fn.__get__(instance, owner), **self._options)
            cache[id(self)] = bound
        return bound

    @property
    def python_function(self):
        return self._fn

    @property
    def input_signature(self):
        """The `input_signature` as TF gives it: a tuple of TensorSpecs, or None."""
        specs = self._input_signature
        return None if specs is None else tuple(specs)

    @property
    def function_spec(self):
        """TF's `function_spec`: the Python signature and the input signature."""
        return _FunctionSpec(self._fn, self.input_signature)

    def _traced_function(self) -> Callable[..., Any]:
        """The Python function as traces call it: converted by AutoGraph
        (`install_autograph`) unless `autograph=False`; converted once."""
        if self._converted is None:
            on, options = self._autograph
            convert = _autograph_converter
            self._converted = convert(self._fn, options) if on and convert else self._fn
        return self._converted

    def experimental_get_tracing_count(self) -> int:
        """How many times the Python function was traced (TF's counter)."""
        return self._tracing_count

    # -- calling ---------------------------------------------------------------------
    def _signature(self, args, kwargs) -> _Call:
        """The call's key, structure and array leaves (bound to the
        `input_signature` first, if any: TF's TypeError when it does not fit)."""
        converted = False
        if self._input_signature is not None:
            args, converted = _sig.bind(self._fn, self._input_signature, args, kwargs)
            kwargs = {}
        flat, treedef = jax.tree_util.tree_flatten(
            (args, kwargs),
            is_leaf=lambda x: type(x) is Tensor or x is None or isinstance(x, Variable),
        )
        is_arr = tuple(_sig.is_array(x) for x in flat)
        key = (treedef, tuple(_sig.leaf_key(x) for x in flat))
        objs = [x for x, a in zip(flat, is_arr) if a]
        leaves = [x._value if type(x) is Tensor else x for x in objs]
        statics = tuple(x for x, a in zip(flat, is_arr) if not a)
        return _Call(
            key, (treedef, is_arr), statics, leaves, objs, args, kwargs, converted
        )

    def _fast_key(self, args, kwargs):
        """A cheap key and the leaves when every argument is an array, or a
        tuple of arrays as Keras's `train_step(data)` gets; else None. (With
        an `input_signature`, a fast key is only kept for calls that bound
        without conversion, so a hit needs no binding.)"""
        if kwargs:
            return None
        key, leaves = [], []
        for a in args:
            if type(a) is tuple:
                key.append(len(a))  # the structure, so (x, y) != x, y
                for b in a:
                    if not _fast_leaf(b, key, leaves):
                        return None
            elif not _fast_leaf(a, key, leaves):
                return None
        return tuple(key), leaves

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if inside_function():  # a compiled function called while tracing: inline
            return self._traced_function()(*args, **kwargs)
        fast = self._fast_key(args, kwargs)
        if fast is not None:
            fast, fast_leaves = fast
            trace = self._fast_traces.get(fast)
            if trace is not None and not context.state.tapes:
                self._untraced_calls += 1
                return trace.execute(fast_leaves)
        if _guard.pending:  # JAX's compile caches are due a clear (core)
            _guard.release_if_safe(())
        call = self._signature(args, kwargs)
        trace = self._find(call)
        if trace is None:
            trace = self._trace(call)
            _retracing.called_with_tracing(self, self._untraced_calls)
            self._untraced_calls = 0
        else:
            self._untraced_calls += 1
        if fast is not None and not call.converted:
            if len(self._fast_traces) >= 4 * MAX_TRACES:  # sizes of symbolic traces
                self._fast_traces.clear()
            self._fast_traces[fast] = trace
        return trace.execute(call.leaves, call.objs if context.state.tapes else None)

    def _find(self, call: _Call) -> _Trace | None:
        """The trace that runs this call: its own, else the most specific
        symbolic trace that accepts it (None: trace anew)."""
        trace = self._traces.get(call.key)
        if trace is not None:
            self._traces.move_to_end(call.key)
            return trace
        trace = self._resolved.get(call.key)
        if trace is not None and not trace.poly_failed:
            return trace
        best = None
        for t in self._general:
            if t.poly_failed or not _sig.accepts(t.key[0], call.key):
                continue
            sizes = _sig.unknown_sizes(t.key[0], call.leaves)
            if not _sig.pattern_accepts(t.key[1], specialize.dims_pattern(sizes)):
                continue
            if best is None or _sig.unknowns(t.key[0]) < _sig.unknowns(best.key[0]):
                best = t
        if best is None or not best.specializes(best.var_values(), call.leaves):
            return None
        if len(self._resolved) >= 4 * MAX_TRACES:
            self._resolved.clear()
        self._resolved[call.key] = best
        self._traces.move_to_end(best.key)
        return best

    def _general_key(self, call: _Call):
        """The key to trace this call with: its own, or one with unknown
        sizes (an `input_signature`'s, or `reduce_retracing`'s relaxation)."""
        key = call.key
        if self._input_signature is not None:
            specs = jax.tree_util.tree_leaves(self._input_signature)
            it = iter(specs)
            leaves = []
            for k in key[1]:
                if k[0] == "array":
                    spec = next(it)
                    shape = tuple(spec.shape)
                    leaves.append(("array", shape, k[2]))
                else:
                    leaves.append(k)
            key = (key[0], tuple(leaves))
        elif self._reduce_retracing:
            others = [
                t.key[0] if t.poly is not None else t.key for t in self._traces.values()
            ]
            key = _sig.generalize(key, others)
        return key

    def _trace(self, call: _Call) -> _Trace:
        """Traces the Python function for this call (symbolically where its
        key has unknown sizes) and keeps the trace, with TF's rules for
        Variables created while tracing."""
        key = self._general_key(call)
        pattern = None
        if _sig.is_general(key):
            pattern = specialize.dims_pattern(_sig.unknown_sizes(key, call.leaves))
            if (key, pattern) in self._failed:
                key, pattern = call.key, None
        creating = self._tracing_count == 0  # TF: only the first call creates
        while True:
            poly = None
            if pattern is not None:
                arrays = [k for k in key[1] if k[0] == "array"]
                poly = specialize.make_avals(
                    [k[1] for k in arrays], [k[2] for k in arrays], pattern
                )
            trace = _Trace(
                self._traced_function(),
                live_variables(),
                call.structure,
                call.statics,
                key_order((call.args, call.kwargs)),
                poly,
            )
            var_vals = trace.var_values()
            try:
                traced = trace.trace_program(var_vals, call.leaves)
            except Exception:
                if poly is None:
                    raise
                # Symbolic sizes do not work for this function: trace each
                # size on its own from now on (`specialize` says where).
                self._failed.add((key, pattern))
                key, pattern = call.key, None
                continue
            if trace.misses:  # Variables were created while tracing
                if not creating:
                    text = _SINGLETON if self._created_variables else _NON_FIRST_CALL
                    raise ValueError(text.format(self.__name__))
                self._created_variables, creating = True, False
                self._tracing_count += 1  # (TF counts it too) then retrace,
                continue  # with them lifted: that trace must create none
            trace.settle(traced)
            if poly is not None and not trace.specializes(
                trace.var_values(), call.leaves
            ):
                self._failed.add((key, pattern))
                key, pattern = call.key, None
                continue
            break
        self._tracing_count += 1
        trace.key = key if pattern is None else (key, pattern)
        trace.signature = self._printed_signature(call, key)
        trace.call_args = (call.args, call.kwargs)
        self._keep(trace, call)
        return trace

    def _keep(self, trace: _Trace, call: _Call) -> None:
        """Caches a new trace (dropping the least recently used past
        `MAX_TRACES`)."""
        self._traces[trace.key] = trace
        if trace.poly is not None:
            self._general.append(trace)
            self._resolved[call.key] = trace
        if len(self._traces) > MAX_TRACES:
            _, old = self._traces.popitem(last=False)
            if old in self._general:
                self._general.remove(old)
            for cache in (self._fast_traces, self._resolved):
                for k in [k for k, t in cache.items() if t is old]:
                    del cache[k]

    def _printed_signature(self, call: _Call, key):
        """The trace's (args, kwargs) as TF prints them: TensorSpecs with the
        trace's (possibly unknown) sizes, Python values as they were."""
        flat = jax.tree_util.tree_flatten(
            (call.args, call.kwargs),
            is_leaf=lambda x: type(x) is Tensor or x is None or isinstance(x, Variable),
        )[0]
        leaves = []
        for x, k in zip(flat, key[1]):
            if k[0] == "array":
                name = x.name if type(x) is TensorSpec else None
                leaves.append(TensorSpec(k[1], dtypes.as_dtype(k[2]), name))
            else:
                leaves.append(x)
        args, kwargs = jax.tree_util.tree_unflatten(call.structure[0], leaves)
        return _sig.canonical(self._fn, args, kwargs)

    # -- inspection ------------------------------------------------------------------
    def get_concrete_function(self, *args, **kwargs) -> ConcreteFunction:
        """The trace for these arguments (Tensors, TensorSpecs or Python
        values), traced without running it if there is none yet, as TF's."""
        if not args and not kwargs and self._input_signature is not None:
            args = tuple(self._input_signature)
        if self._input_signature is None:
            call = self._spec_call(args, kwargs)
        else:
            call = self._spec_call(args, kwargs, bind=True)
        trace = self._find(call) if not _sig.is_general(call.key) else None
        if trace is None:
            trace = self._general_trace(call) or self._trace(call)
        return ConcreteFunction(self, trace)

    def _spec_call(self, args, kwargs, bind: bool = False) -> _Call:
        """A call whose TensorSpec arguments stand for tensors of their shape
        (symbolic where unknown)."""
        if bind:
            specs = self._input_signature
            for a, s in zip(args, specs):
                if type(a) is TensorSpec and not (
                    isinstance(s, TensorSpec)
                    and s.dtype == a.dtype
                    and s.shape.is_compatible_with(a.shape)
                ):
                    raise TypeError(
                        f"Binding inputs to tf.function failed due to `Can not cast "
                        f"{a!r} to {s!r}`. Pass TensorSpecs that match the "
                        "input_signature, or none at all."
                    )
            args = tuple(specs) if all(type(a) is TensorSpec for a in args) else args
        flat, treedef = jax.tree_util.tree_flatten(
            (args, kwargs),
            is_leaf=lambda x: type(x) is Tensor or x is None or isinstance(x, Variable),
        )
        if bind and not any(type(x) is TensorSpec for x in flat):
            return self._signature(args, kwargs)
        is_arr = tuple(_sig.is_array(x) or type(x) is TensorSpec for x in flat)
        key = (treedef, tuple(_sig.leaf_key(x) for x in flat))
        objs = [x for x, a in zip(flat, is_arr) if a]
        leaves = [
            jax.ShapeDtypeStruct(
                tuple(1 if d is None else d for d in x.shape), x.dtype.as_numpy_dtype
            )
            if type(x) is TensorSpec
            else (x._value if type(x) is Tensor else x)
            for x in objs
        ]
        statics = tuple(x for x, a in zip(flat, is_arr) if not a)
        return _Call(key, (treedef, is_arr), statics, leaves, objs, args, kwargs, False)

    def _general_trace(self, call: _Call) -> _Trace | None:
        """For TensorSpecs with unknown sizes: the trace with exactly that key,
        made (with one symbol per unknown size) when there is none."""
        if not _sig.is_general(call.key):
            return None
        for t in self._general:
            if t.key[0] == call.key and not t.poly_failed:
                return t
        pattern = tuple(range(_sig.unknowns(call.key)))
        return self._trace_spec(call, pattern)

    def _trace_spec(self, call: _Call, pattern) -> _Trace:
        arrays = [k for k in call.key[1] if k[0] == "array"]
        poly = specialize.make_avals(
            [k[1] for k in arrays], [k[2] for k in arrays], pattern
        )
        trace = _Trace(
            self._traced_function(),
            live_variables(),
            call.structure,
            call.statics,
            key_order((call.args, call.kwargs)),
            poly,
        )
        traced = trace.trace_program(trace.var_values(), call.leaves)
        if trace.misses:
            raise ValueError(
                "get_concrete_function with TensorSpecs traced a function that "
                "creates Variables: call the function once with tensors first, "
                "so that its Variables exist, as tf.function's first call does."
            )
        trace.settle(traced)
        self._tracing_count += 1
        trace.key = (call.key, pattern)
        trace.signature = self._printed_signature(call, call.key)
        trace.call_args = (call.args, call.kwargs)
        self._keep(trace, call)
        return trace

    def pretty_printed_concrete_signatures(self, verbose: bool = True) -> str:
        """Every trace's signature, as TF prints them (oldest first)."""
        traces = sorted(self._traces.values(), key=lambda t: t.serial)
        return "\n\n".join(
            ConcreteFunction(self, t).pretty_printed_signature(verbose) for t in traces
        )

    def __repr__(self):
        return f"<jaxtape.function {self.__name__}>"


class _Call(NamedTuple):
    """One call, flattened (`Function._signature`)."""

    key: Any
    structure: Any  # (treedef, which leaves are arrays)
    statics: tuple
    leaves: list  # the arrays (their values)
    objs: list  # the arrays as given (Tensors keep their tape identity)
    args: tuple
    kwargs: dict
    converted: bool  # whether binding to the input_signature converted a value


class _FunctionSpec:
    """TF's `FunctionSpec`: the Python signature and the input signature."""

    def __init__(self, python_function, input_signature):
        self.fullargspec = inspect.getfullargspec(python_function)
        self.input_signature = input_signature
        self.is_method = inspect.ismethod(python_function)

    def __repr__(self):
        return (
            f"FunctionSpec(fullargspec={self.fullargspec}, "
            f"input_signature={self.input_signature}, is_method={self.is_method})"
        )


class ConcreteFunction:
    """One trace of a `jaxtape.function` (TF's `ConcreteFunction`).

    Calling it runs that trace (a call it does not accept raises TypeError);
    `structured_input_signature`, `structured_outputs`,
    `pretty_printed_signature()` describe it as TF does, and `as_text()`
    gives its program as a jaxpr.

    Differences from TensorFlow: `structured_outputs` holds TensorSpecs (TF:
    symbolic graph tensors with the same shapes and dtypes); the "Captures"
    of the printed signature list the lifted Variables with their value's
    shape and dtype (TF: `dtype=tf.resource`); captured constant tensors are
    folded into the program and not listed.
    """

    def __init__(self, function: Function, trace: _Trace):
        self._function, self._trace = function, trace

    def __call__(self, *args, **kwargs):
        function, trace = self._function, self._trace
        # Python values the trace was made with may be left out, as in TF.
        traced_args, traced_kwargs = trace.call_args
        if len(args) < len(traced_args):
            rest = traced_args[len(args) :]
            if not any(type(x) is TensorSpec for x in jax.tree_util.tree_leaves(rest)):
                args = (*args, *rest)
        for k, v in traced_kwargs.items():
            if k not in kwargs and type(v) is not TensorSpec:
                kwargs[k] = v
        call = function._signature(args, kwargs)
        general = trace.key[0] if trace.poly is not None else trace.key
        ok = _sig.accepts(general, call.key)
        if ok and trace.poly is not None:
            sizes = _sig.unknown_sizes(general, call.leaves)
            ok = _sig.pattern_accepts(trace.key[1], specialize.dims_pattern(sizes))
            ok = ok and trace.specializes(trace.var_values(), call.leaves)
        if not ok:
            args_spec = _sig.unnamed(function._printed_signature(call, call.key))
            raise TypeError(
                f"Binding inputs to a ConcreteFunction of {function.__name__!r} "
                f"failed: it was traced for {_sig.unnamed(trace.signature)!r}, "
                f"received {args_spec!r}. Call the jaxtape.function itself (it "
                "traces again), or get the concrete function for these arguments."
            )
        return trace.execute(call.leaves, call.objs if context.state.tapes else None)

    @property
    def structured_input_signature(self):
        """TF's `(args, kwargs)` of TensorSpecs (named after the parameters)
        and Python values."""
        args, kwargs = self._trace.signature
        return _sig.structured_input_signature(self._function._fn, args, kwargs)

    @property
    def structured_outputs(self):
        """The outputs' structure, with a TensorSpec for each tensor."""
        trace = self._trace
        it = iter(trace.out_specs)
        leaves = []
        for s in trace.out_static:
            if s is _TENSOR or s is _ARRAY:
                shape, dtype = next(it)
                shape = [None if specialize.is_symbolic(d) else d for d in shape]
                leaves.append(TensorSpec(shape, dtypes.as_dtype(np.dtype(dtype))))
            else:
                leaves.append(s)
        if trace.out_tree is None:
            return None
        out = jax.tree_util.tree_unflatten(trace.out_tree, leaves)
        return out if trace.key_order is None else in_key_order(out, trace.key_order)

    @property
    def captured_inputs(self) -> list:
        """The Variables the program reads or writes (TF's captures)."""
        return [v for v in (r() for r in self._trace.lifted) if v is not None]

    def pretty_printed_signature(self, verbose: bool = True) -> str:
        """TF's text: input parameters, output type, captures."""
        del verbose  # accepted for TF compatibility
        args, kwargs = self._trace.signature
        captures = [
            f"{id(v)}: {TensorSpec(v.shape, v.dtype)!r}" for v in self.captured_inputs
        ]
        return _sig.pretty_signature(
            self._function._fn, args, kwargs, self.structured_outputs, captures
        )

    def __str__(self):
        return "ConcreteFunction " + self.pretty_printed_signature()

    def __repr__(self):
        args, kwargs = self._trace.signature
        params = _sig._parameters(self._function._fn, len(args))
        parts = [
            f"{p.name}: {_sig.type_text(_sig._kept_names(a))}"
            for p, a in zip(params, args)
        ]
        if kwargs:
            parts.append("*")
            parts += [
                f"{k}: {_sig.type_text(_sig._kept_names(v))}" for k, v in kwargs.items()
            ]
        out = _sig.type_text(_sig.unnamed(self.structured_outputs))
        return f"<ConcreteFunction ({', '.join(parts)}) -> {out} at 0x{id(self):X}>"

    def as_text(self) -> str:
        """The program as a jaxpr (symbolic sizes shown as symbols)."""
        trace = self._trace
        avals = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in trace.avals]
        return str(jax.make_jaxpr(trace._plain)(*avals, *trace.leaf_avals))


_NON_FIRST_CALL = (
    "Creating variables on a non-first call to a function decorated with "
    "tf.function. (jaxtape.function {!r}: its first call created no Variable, "
    "so this trace may not either. Create the Variables before the first call, "
    "or on it.)"
)


@overload
def function(
    func: Callable[..., Any],
    input_signature: Sequence[TensorSpec] | None = None,
    autograph: bool = True,
    jit_compile: bool | None = None,
    reduce_retracing: bool = False,
    experimental_relax_shapes: bool | None = None,
    name: str | None = None,
    **kwargs: Any,
) -> Function: ...
@overload
def function(
    func: None = None,
    input_signature: Sequence[TensorSpec] | None = None,
    autograph: bool = True,
    jit_compile: bool | None = None,
    reduce_retracing: bool = False,
    experimental_relax_shapes: bool | None = None,
    name: str | None = None,
    **kwargs: Any,
) -> Callable[[Callable[..., Any]], Function]: ...
def function(
    func: Callable[..., Any] | None = None,
    input_signature: Sequence[TensorSpec] | None = None,
    autograph: bool = True,
    jit_compile: bool | None = None,
    reduce_retracing: bool = False,
    experimental_relax_shapes: bool | None = None,
    name: str | None = None,
    **kwargs: Any,
) -> Function | Callable[[Callable[..., Any]], Function]:
    """Compiles a function with XLA, TF's `tf.function`; decorator or wrapper.

    >>> @jaxtape.function
    ... def f(x):
    ...     return x * x + 1.0
    >>> f(jaxtape.constant(2.0))
    <jaxtape.Tensor: shape=(), dtype=float32, numpy=5.0>
    """

    def decorate(f: Callable[..., Any]) -> Function:
        return Function(
            f,
            input_signature=input_signature,
            jit_compile=jit_compile,
            reduce_retracing=reduce_retracing,
            autograph=autograph,
            name=name,
            experimental_relax_shapes=experimental_relax_shapes,
            **kwargs,
        )

    return decorate(func) if func is not None else decorate
