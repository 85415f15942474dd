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

The pieces: `trace` (one trace: its program, how it runs), `signature`
(trace keys, `input_signature` binding, `reduce_retracing`), `specialize`
(one symbolic trace for every size), `concrete` (`ConcreteFunction`),
`probe` (values while tracing), `retracing` (TF's warning); this module holds
`Function`: which trace runs a call, and TF's rules for creating Variables.

Why a scope and not JAX's mutable array references (`jax.new_ref`): measured
here, an eager read of a ref costs ~76 µs and a write ~109 µs (a plain array
read is free), and eager tapes read variables on every op; the scope costs
nothing outside `jaxtape.function`.
"""

from __future__ import annotations

import collections
import functools
import logging
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, overload

import jax
import jax.core
import numpy as np

from jaxtape._src.core import checks, context, dtypes
from jaxtape._src.core.compile_cache import guard as _guard
from jaxtape._src.core.tensor import (
    Tensor,
    TensorSpec,
    key_order,
)
from jaxtape._src.function import retracing, specialize
from jaxtape._src.function import signature as _sig
from jaxtape._src.function.concrete import ConcreteFunction, FunctionSpec
from jaxtape._src.function.trace import _Trace, inside_function
from jaxtape._src.state.variable import Variable, live_variables

MAX_TRACES = 64  # traces (compiled programs) a Function keeps, least recent dropped


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


class _Eagerly:
    on = False  # TF's `tf.config.run_functions_eagerly`


_eagerly = _Eagerly()


def run_functions_eagerly(run_eagerly: bool) -> None:
    """Makes every `jaxtape.function` call its Python function directly, op by
    op, instead of running its compiled program (TF's
    `tf.config.run_functions_eagerly`, for debugging)."""
    _eagerly.on = bool(run_eagerly)


def functions_run_eagerly() -> bool:
    """Whether `run_functions_eagerly(True)` is in effect (TF's
    `tf.config.functions_run_eagerly`)."""
    return _eagerly.on


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
      experimental_implements, experimental_attributes: accepted; TF's
        annotations for its graph rewriter (XLA compiles the program as traced).
      experimental_compile, experimental_follow_type_hints: TF's deprecated
        arguments, accepted and ignored.

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
        experimental_implements: str | None = None,
        experimental_attributes: dict | None = None,
        experimental_compile: bool | None = None,
        experimental_follow_type_hints: bool | None = None,
    ) -> None:
        # (TF's graph annotations and deprecated aliases: nothing to do here.)
        del experimental_implements, experimental_attributes
        del experimental_compile, experimental_follow_type_hints
        if experimental_relax_shapes:
            _deprecated_relax_shapes()
        self._fn = python_function
        # AutoGraph: the function as traces call it, converted on first use.
        self._autograph = (autograph, experimental_autograph_options)
        self._converted: Callable[..., Any] | None = None
        self._input_signature = _sig.check_input_signature(input_signature)
        self._reduce_retracing = bool(reduce_retracing or experimental_relax_shapes)
        self._options: dict[str, Any] = dict(
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
        return FunctionSpec(self._fn, self.input_signature)

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
        if _eagerly.on:  # `jaxtape.config.run_functions_eagerly(True)`
            return self._fn(*args, **kwargs)
        if inside_function():  # a compiled function called while tracing: inline
            return self._traced_function()(*args, **kwargs)
        fast = self._fast_key(args, kwargs)
        if fast is not None:
            fast, fast_leaves = fast
            trace = self._fast_traces.get(fast)
            if trace is not None and not context.state.tapes:
                if not trace.flexible or not trace.stale():
                    self._untraced_calls += 1
                    return trace.execute(fast_leaves)
        if _guard.pending:  # JAX's compile caches are due a clear (core)
            _guard.release_if_safe(())
        call = self._signature(args, kwargs)
        trace = self._find(call)
        if trace is not None and trace.flexible and trace.stale():
            self._forget(trace)  # a Variable changed size: trace for the new one
            trace = None
        if trace is None:
            trace = self._trace(call)
            retracing.detector.called_with_tracing(self, self._untraced_calls)
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
            specs = _sig.component_specs(self._input_signature)
            it = iter(specs)
            leaves = []
            for k in key[1]:
                if k[0] == "array":
                    spec = next(it)
                    if spec is None:  # (a RaggedTensor's component: as called)
                        leaves.append(k)
                        continue
                    if spec.shape.rank is None:  # any rank: this call's, sizes open
                        shape = (None,) * len(k[1])
                    else:
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
                if not all(getattr(v, "_hidden", False) for v in trace.misses.values()):
                    if not creating:
                        text = (
                            _SINGLETON if self._created_variables else _NON_FIRST_CALL
                        )
                        raise ValueError(text.format(self.__name__))
                    self._created_variables, creating = True, False
                    self._tracing_count += 1  # (TF counts it too)
                # Retrace with them lifted: that trace must create none. (Hidden
                # ones, jaxtape's own inputs such as `next(iterator)`'s element,
                # may appear in any trace: TF's resources are not Variables.)
                continue
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
            self._forget(old)

    def _forget(self, old: _Trace) -> None:
        """Drops a trace from every cache (evicted, or traced for Variable
        sizes that changed)."""
        for k in [k for k, t in self._traces.items() if t is old]:
            del self._traces[k]
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
        call = self._spec_call(args, kwargs, self._input_signature)
        trace = self._find(call) if not _sig.is_general(call.key) else None
        if trace is None:
            trace = self._general_trace(call) or self._trace(call)
        return ConcreteFunction(self, trace)

    def _spec_call(self, args, kwargs, specs: list | None = None) -> _Call:
        """A call whose TensorSpec arguments stand for tensors of their shape
        (symbolic where unknown), bound to the input signature `specs` if any."""
        if specs is not None:
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
        if specs is not None and not any(type(x) is TensorSpec for x in flat):
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

    def exportable_trace(self, args=None, kwargs=None, pattern=None) -> _Trace:
        """A new trace for `args`/`kwargs` (TensorSpecs, unknown sizes
        symbolic; None: the `input_signature`), without run-time checks and
        not kept by this Function: the pure program that `saved_model`
        exports (`_Trace._plain` over its `lifted` Variables, then the
        array leaves; it returns the values, then the `written` state).
        `pattern`: which unknown sizes share a symbol (`specialize.
        dims_pattern`; default: each its own)."""
        if args is None and not kwargs and self._input_signature is not None:
            args = tuple(self._input_signature)
        call = self._spec_call(tuple(args or ()), kwargs or {}, self._input_signature)
        if pattern is None:
            pattern = tuple(range(_sig.unknowns(call.key)))
        saved, checks.compiled_checks = checks.compiled_checks, False
        try:
            return self._trace_spec(call, tuple(pattern), keep=False)
        finally:
            checks.compiled_checks = saved

    def _trace_spec(self, call: _Call, pattern, keep: bool = True) -> _Trace:
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
        trace.key = (call.key, pattern)
        trace.signature = self._printed_signature(call, call.key)
        trace.call_args = (call.args, call.kwargs)
        if keep:
            self._tracing_count += 1
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
    experimental_implements: str | None = None,
    experimental_autograph_options: Any = None,
    experimental_attributes: dict | None = None,
    experimental_relax_shapes: bool | None = None,
    experimental_compile: bool | None = None,
    experimental_follow_type_hints: bool | None = None,
    name: str | None = None,
) -> Function: ...
@overload
def function(
    func: None = None,
    input_signature: Sequence[TensorSpec] | None = None,
    autograph: bool = True,
    jit_compile: bool | None = None,
    reduce_retracing: bool = False,
    experimental_implements: str | None = None,
    experimental_autograph_options: Any = None,
    experimental_attributes: dict | None = None,
    experimental_relax_shapes: bool | None = None,
    experimental_compile: bool | None = None,
    experimental_follow_type_hints: bool | None = None,
    name: str | None = None,
) -> Callable[[Callable[..., Any]], Function]: ...
def function(
    func: Callable[..., Any] | None = None,
    input_signature: Sequence[TensorSpec] | None = None,
    autograph: bool = True,
    jit_compile: bool | None = None,
    reduce_retracing: bool = False,
    experimental_implements: str | None = None,
    experimental_autograph_options: Any = None,
    experimental_attributes: dict | None = None,
    experimental_relax_shapes: bool | None = None,
    experimental_compile: bool | None = None,
    experimental_follow_type_hints: bool | None = None,
    name: str | None = None,
) -> Function | Callable[[Callable[..., Any]], Function]:
    """Compiles a function with XLA, TF's `tf.function`; decorator or wrapper.

    TF's arguments, in TF's order (see `Function`); `name` is jaxtape's (the
    Function's `__name__`).

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
            experimental_autograph_options=experimental_autograph_options,
            experimental_implements=experimental_implements,
            experimental_attributes=experimental_attributes,
            experimental_compile=experimental_compile,
            experimental_follow_type_hints=experimental_follow_type_hints,
        )

    return decorate(func) if func is not None else decorate


_warned_relax_shapes: list = []


def _deprecated_relax_shapes() -> None:
    """TF's deprecation warning for `experimental_relax_shapes` (once)."""
    if not _warned_relax_shapes:
        _warned_relax_shapes.append(True)
        logging.getLogger("jaxtape").warning(
            "calling function with experimental_relax_shapes is deprecated and "
            "will be removed in a future version.\nInstructions for updating:\n"
            "experimental_relax_shapes is deprecated, use reduce_retracing instead"
        )
