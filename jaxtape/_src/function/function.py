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
import logging
import weakref
from collections.abc import Callable, Sequence
from typing import Any, overload

import jax
import jax.core
import numpy as np

from jaxtape._src.core import checks, context, errors
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
from jaxtape._src.state import scope as _scope
from jaxtape._src.state.variable import Variable, live_variables, state_lock

_MAX_TRACES_PER_CALL = 4
MAX_TRACES = 64  # traces (compiled programs) a Function keeps, least recent dropped


def _is_array(x) -> bool:
    return type(x) is Tensor or isinstance(x, (jax.Array, np.ndarray, np.generic))


def _leaf_key(x):
    """The static part of an argument leaf (its value, unless it is an array)."""
    if _is_array(x):
        v = x._value if type(x) is Tensor else x
        return ("array", tuple(np.shape(v)), v.dtype)
    if isinstance(x, Variable):
        return ("variable", id(x))
    try:
        hash(x)
    except TypeError:
        return ("object", id(x))
    return ("value", type(x).__name__, x)


def _unsettled(*args: Any) -> Any:
    raise RuntimeError(
        "Internal error: a jaxtape.function trace ran a program it has not "
        "built. Please report the issue."
    )


class _Trace:
    """One compiled program for one input signature."""

    def __init__(self, fn, lifted, treedef, statics, arg_order=None):
        self.fn = fn
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
        n_error = n_pred = 0
        if self.checked:
            n_error, n_pred, self.error_tree = checks.error_layout(traced.out_info[0])
        self.has_checks = bool(n_error)

        def run(args):
            full = [None] * n_all  # an input the trace did not touch is never read
            for i, val in zip(keep, args[:n_keep]):
                full[i] = val
            leaf_vals = args[n_keep:]
            return jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *full, *leaf_vals)

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
            if objs is not None:
                values, new_state, failed = self._call_recorded(objs)
            else:
                values, new_state, failed = self._call(leaves)
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


_TENSOR, _ARRAY = object(), object()
_SINGLETON = (
    "jaxtape.function {!r} only supports Variables created on the first call, "
    "as tf.function does; this one creates a new Variable every time it runs. "
    "Create it once, outside the function, or guard its creation:\n"
    "  Wrong: def f(x): v = jaxtape.Variable(1.0); ...\n"
    "  Right: if self.v is None: self.v = jaxtape.Variable(1.0)"
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
    """TF's frequent-tracing warning: when 5 of a Python function's last ~10
    calls traced it (at most twice per function), a warning is logged with
    TF's text, as `tf.function` logs it."""

    _HISTORY, _THRESHOLD, _MAX_WARNINGS = 10, 5, 2

    def __init__(self):
        self._by_function = weakref.WeakKeyDictionary()  # fn -> [calls per trace]
        self._warned = weakref.WeakKeyDictionary()

    def traced(self, function, untraced_calls: int) -> None:
        fn = function._fn
        key = getattr(fn, "__func__", fn)  # methods: one history per function
        try:
            history = self._by_function.setdefault(key, [])
        except TypeError:  # not weak-referenceable: no history
            return
        if history:
            history[-1] += untraced_calls
        elif untraced_calls:
            history.append(untraced_calls)
        history.append(1)
        while history and sum(history) - history[0] > self._HISTORY:
            history.pop(0)
        warned = self._warned.get(key, 0)
        if len(history) >= self._THRESHOLD and warned < self._MAX_WARNINGS:
            self._warned[key] = warned + 1
            logging.getLogger("jaxtape").warning(
                _RETRACING.format(len(history), sum(history), key)
            )


_RETRACING = (
    "{} out of the last {} calls to {} triggered tf.function retracing. Tracing "
    "is expensive and the excessive number of tracings could be due to (1) "
    "creating @jaxtape.function repeatedly in a loop, (2) passing tensors with "
    "different shapes, (3) passing Python objects instead of tensors. For (1), "
    "please define your @jaxtape.function outside of the loop. For (2), give "
    "the function an `input_signature` (XLA still compiles one program per "
    "shape: pad or bucket the shapes). For (3), pass tensors: each new Python "
    "value is a new trace."
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
      input_signature: optional list of `TensorSpec`s; calls must match it
        (a `None` dimension accepts any size, but XLA still compiles one
        program per concrete shape).
      jit_compile: accepted; everything is compiled with XLA.
      reduce_retracing: accepted; retracing follows the rules below anyway.
      autograph: whether to convert Python `if`/`while`/`for` on tensors to
        control flow, as TF's AutoGraph does (`jaxtape.autograph`); with
        False, such code raises an error that names the fix.
      experimental_autograph_options: TF's `autograph.experimental.Feature`s.

    Retracing happens when the tensor shapes or dtypes, the nested structure,
    or the Python values of non-tensor arguments change.
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
        self._input_signature = (
            None if input_signature is None else list(input_signature)
        )
        # The most recently used traces (an LRU of `MAX_TRACES`); each holds
        # its compiled programs, freed with it.
        self._traces: collections.OrderedDict = collections.OrderedDict()
        self._fast_traces: dict = {}  # all-array calls: (shape, dtype) per arg
        self._tracing_count = 0
        self._untraced_calls = 0  # for the retracing detector, since it last saw us
        functools.update_wrapper(self, python_function)

    # -- methods: one Function per instance ------------------------------------------
    def __get__(self, instance, owner):
        if instance is None:
            return self
        cache = instance.__dict__.setdefault("_jaxtape_functions", {})
        bound = cache.get(id(self))
        if bound is None:
            bound = Function(
                self._fn.__get__(instance, owner),
                self._input_signature,
                autograph=self._autograph[0],
                experimental_autograph_options=self._autograph[1],
            )
            cache[id(self)] = bound
        return bound

    @property
    def python_function(self):
        return self._fn

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
    def _signature(self, args, kwargs):
        flat, treedef = jax.tree_util.tree_flatten(
            (args, kwargs),
            is_leaf=lambda x: type(x) is Tensor or x is None or isinstance(x, Variable),
        )
        if self._input_signature is not None:
            self._check_signature(args, self._input_signature)
        is_arr = tuple(_is_array(x) for x in flat)
        key = (treedef, tuple(_leaf_key(x) for x in flat))
        objs = [x for x, a in zip(flat, is_arr) if a]
        leaves = [x._value if type(x) is Tensor else x for x in objs]
        statics = tuple(x for x, a in zip(flat, is_arr) if not a)
        return key, (treedef, is_arr), statics, leaves, objs

    def _check_signature(self, args, specs: list) -> None:
        if len(args) != len(specs):
            raise TypeError(
                f"{self.__name__} was given {len(args)} positional arguments but its "
                f"input_signature has {len(specs)} TensorSpecs."
            )
        for i, (a, spec) in enumerate(zip(args, specs)):
            if not isinstance(spec, TensorSpec):
                continue
            shape = tuple(np.shape(a._value if type(a) is Tensor else a))
            dtype = np.dtype(
                a._value.dtype if type(a) is Tensor else np.asarray(a).dtype
            )
            if not spec.shape.is_compatible_with(shape) or dtype != np.dtype(
                spec.dtype.as_numpy_dtype
            ):
                raise ValueError(
                    f"{self.__name__}: argument {i} has shape {shape} and dtype "
                    f"{dtype.name}, which does not match its input_signature "
                    f"{spec}. Pass a tensor of that shape and dtype, or remove the "
                    "input_signature."
                )

    def _fast_key(self, args, kwargs):
        """A cheap key and the leaves when every argument is an array, or a
        tuple of arrays as Keras's `train_step(data)` gets; else None."""
        if kwargs or self._input_signature is not None:
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
        key, structure, statics, leaves, objs = self._signature(args, kwargs)
        trace = self._traces.get(key)
        if trace is not None:
            self._traces.move_to_end(key)
            self._untraced_calls += 1
        for _ in range(_MAX_TRACES_PER_CALL):
            if trace is None:
                trace = _Trace(
                    self._traced_function(),
                    live_variables(),
                    structure,
                    statics,
                    key_order((args, kwargs)),
                )
            var_vals = trace.var_values()
            first = not trace.traced
            result = self._run(trace, var_vals, leaves, objs)
            if first:
                self._tracing_count += 1
            if not trace.misses:
                if first:
                    self._keep(key, fast, trace)
                return result
            # Variables were created (or appeared) during the trace: lift them too.
            if not first:
                raise RuntimeError(_SINGLETON.format(self.__name__))
            trace = None
        raise RuntimeError(_SINGLETON.format(self.__name__))

    def _keep(self, key, fast, trace) -> None:
        """Caches a new trace (dropping the least recently used past
        `MAX_TRACES`) and tells the retracing detector."""
        self._traces[key] = trace
        if fast is not None:
            self._fast_traces[fast] = trace
        if len(self._traces) > MAX_TRACES:
            _, old = self._traces.popitem(last=False)
            for k in [k for k, t in self._fast_traces.items() if t is old]:
                del self._fast_traces[k]
        _retracing.traced(self, self._untraced_calls)
        self._untraced_calls = 0

    def _run(self, trace, var_vals, leaves, objs):
        if not trace.traced:
            # Trace (no compile yet; jax.jit keeps the trace for the call).
            traced = trace.jitted.trace(var_vals, leaves)
            if trace.misses:  # new Variables appeared: retrace with them lifted
                return None
            trace.settle(traced)
        return trace.execute(leaves, objs if context.state.tapes else None)

    # -- inspection ------------------------------------------------------------------
    def get_concrete_function(self, *args, **kwargs):
        """The compiled program for these arguments (traced if needed)."""
        key, structure, statics, leaves, objs = self._signature(args, kwargs)
        if key not in self._traces:
            self(*args, **kwargs)
        return ConcreteFunction(self, self._traces[key], args, kwargs)

    def __repr__(self):
        return f"<jaxtape.function {self.__name__}>"


class ConcreteFunction:
    """One traced program (TF's `ConcreteFunction`): call it, or read its jaxpr."""

    def __init__(self, function, trace, args, kwargs):
        self._function, self._trace = function, trace
        self._args, self._kwargs = args, kwargs

    def __call__(self, *args, **kwargs):
        return self._function(*args, **kwargs)

    @property
    def structured_input_signature(self):
        return tree_map(
            lambda x: TensorSpec.from_tensor(x) if type(x) is Tensor else x,
            (self._args, self._kwargs),
        )

    def as_text(self) -> str:
        """The program as a jaxpr."""
        leaves = self._function._signature(self._args, self._kwargs)[3]
        return str(jax.make_jaxpr(self._trace._pure)(self._trace.var_values(), leaves))


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
            **kwargs,
        )

    return decorate(func) if func is not None else decorate
