"""TF's `ConcreteFunction` and `FunctionSpec` for `jaxtape.function`. Layer L3.

A ConcreteFunction is one trace of a Function: called, it runs that trace;
it describes itself as TF's does (`signature` holds the texts).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

import jax
import numpy as np

from jaxtape._src.core import context, dtypes
from jaxtape._src.core.tensor import TensorSpec, in_key_order
from jaxtape._src.function import signature as _sig
from jaxtape._src.function import specialize

if TYPE_CHECKING:
    from jaxtape._src.function.function import Function, _Trace

# What a trace's outputs are, besides Python values (`_Trace.out_static`).
OUT_TENSOR, OUT_ARRAY = object(), object()


class FunctionSpec:
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
            if s is OUT_TENSOR or s is OUT_ARRAY:
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
