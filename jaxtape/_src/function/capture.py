"""Tracing one Python callable of a control-flow construct into a jaxpr. Layer L3.

`cond`, `while_loop`, `map_fn` and the other constructs (`control_flow`) run
their Python functions once, under `jax.make_jaxpr`, with two stand-ins:

- a capture pseudo-tape in place of the tapes (`Capture`): it records nothing,
  and notes the Tensors from outside that an op consumed and the Variables
  read through the tape hook;
- a branch scope on the state scope (`BranchScope`): a Variable read sees the
  enclosing value, a write stays local and comes out as an extra output.

Values closed over from the enclosing trace (tracers of `jaxtape.function`'s
program, or of an enclosing construct) become the jaxpr's constants; `Traced`
knows which, so that the construct turns them into explicit inputs of ONE pure
function: the primitive that tapes record, whose inputs are the Tensors (and
Variable reads) the construct depends on (`Inputs`). Gradients through the
construct are then JAX's (`jax.vjp` of `lax.cond`, `lax.scan`, ...).

The rest is what every construct shares: structure helpers (TensorArrays are
leaves), `dispatch` (the construct as one recorded op), `trace_all`.

TF's tape semantics inside the jaxpr: a Variable read after an assignment in
the same construct has the written value but the gradient of a read of the
Variable (`state.scope.attach`): an assignment cuts gradients, as in TF.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.core
import numpy as np
from jax.experimental import checkify

from jaxtape._src.core import context, dtypes
from jaxtape._src.core.dispatch import OpInfo, dispatch_raw, to_value
from jaxtape._src.core.tensor import Tensor, in_key_order, key_order, tree_flatten
from jaxtape._src.ops.tensor_array import TensorArray
from jaxtape._src.state import scope as _scope
from jaxtape._src.state.variable import Variable

_state = context.state
Tracer = jax.core.Tracer


# -- the stand-ins while tracing ---------------------------------------------------
class Capture:
    """A pseudo-tape for one traced function: notes what it takes from outside."""

    ids = types.MappingProxyType({})  # tracks no tensor (the dispatcher asks)

    def __init__(self) -> None:
        self.inside: dict[int, Tensor] = {}  # Tensors made inside, kept alive
        self.outside: dict[int, Tensor] = {}  # id(value) -> a Tensor from outside
        self.read_vars: dict[int, Variable] = {}  # read through the tape hook

    def mark_inside(self, structure) -> None:
        for t in tree_flatten(structure)[0]:
            if type(t) is Tensor:
                self.inside[id(t)] = t

    def returned(self, leaves) -> None:
        """Tensors from outside returned as they are (`lambda: x`) are inputs."""
        for t in leaves:
            if type(t) is Tensor and id(t) not in self.inside:
                self.outside.setdefault(id(t._v), t)

    def _record(self, info, params, objs, out) -> bool:
        inside = self.inside
        for o in objs:
            if type(o) is Tensor and id(o) not in inside:
                self.outside.setdefault(id(o._v), o)
        self.mark_inside(out)
        return False

    def _on_read(self, var, t) -> None:
        self.inside[id(t)] = t
        self.read_vars.setdefault(id(var), var)

    def note_row_gather(self, out) -> None:
        pass  # (records no gradient)


class BranchScope(_scope.StateScope):
    """Variables inside a construct: reads see the enclosing values, writes
    stay here (`written`); `preset` Variables read given values (loop carries)."""

    def __init__(self, parent) -> None:
        super().__init__(())
        self.parent = parent
        self.entry: dict[int, tuple] = {}  # id(var) -> (var, value at entry)

    def entry_value(self, var):
        hit = self.entry.get(id(var))
        if hit is None:
            val = self.parent.get(var) if self.parent is not None else None
            if val is None:
                val = var._value
            hit = self.entry[id(var)] = (var, val)
        return hit[1]

    def preset(self, var, value) -> None:
        self._values[id(var)] = (var, value)

    def get(self, variable):
        entry = self.entry_value(variable)
        hit = self._values.get(id(variable))
        return entry if hit is None else _scope.attached(hit[1], entry)

    def set(self, variable, value) -> bool:
        self._values[id(variable)] = (variable, value)
        self.written[id(variable)] = variable
        return True

    def local(self, variable):
        """The value a construct hands on for `variable` (written or preset)."""
        hit = self._values.get(id(variable))
        return self.entry_value(variable) if hit is None else hit[1]


# -- one traced function -----------------------------------------------------------
class Traced:
    """A Python callable traced once: a jaxpr, and what it took from outside.

    The jaxpr's inputs are `(*preset, *swapped, *args)` (flat values); its
    outputs the flat array leaves of the result, then the values of the
    Variables it wrote (`written`, preset ones first).
    """

    def __init__(self, closed, meta, capture, scope, preset, swapped):
        self.jaxpr = closed.jaxpr
        self.out_avals = list(closed.out_avals)
        self.consts = list(closed.consts)
        # Constants that are tracers of an enclosing trace: explicit inputs.
        self.hoisted = [
            (k, c) for k, c in enumerate(self.consts) if isinstance(c, Tracer)
        ]
        for k, _ in self.hoisted:
            self.consts[k] = None  # (no tracer is kept past the construct)
        self.tree = meta["tree"]
        self.order = meta["order"]
        self.static = meta["static"]  # per flat leaf: None for an array leaf
        self.n_out = meta["n_out"]
        self.written: list = meta["written"]
        self.capture, self.scope = capture, scope
        self.preset, self.swapped = list(preset), list(swapped)
        self._const_slots: list = []
        self._swap_slots: list = []

    # The construct's inputs: hoisted tracers and swapped Tensors, by key.
    def keys(self) -> list:
        return [("v", id(c), c) for _, c in self.hoisted] + [
            ("t", id(t), t) for t in self.swapped
        ]

    def bind(self, slot_of: dict) -> None:
        self._const_slots = [(k, slot_of[("v", id(c))]) for k, c in self.hoisted]
        self._swap_slots = [slot_of[("t", id(t))] for t in self.swapped]
        self.hoisted = [(k, None) for k, _ in self.hoisted]
        self.capture = self.scope = None  # drop references into the trace

    def call(self, ins: Sequence, preset: Sequence = (), args: Sequence = ()):
        consts = list(self.consts)
        for k, slot in self._const_slots:
            consts[k] = ins[slot]
        swapped = [ins[s] for s in self._swap_slots]
        return jax.core.eval_jaxpr(self.jaxpr, consts, *preset, *swapped, *args)

    def tracked_concrete(self, tapes) -> list:
        """Captured Tensors with concrete values that a tape tracks: the jaxpr
        holds them as constants, so a retrace must make them inputs."""
        out: list = []
        if self.capture is None:
            return out
        for t in self.capture.outside.values():
            if isinstance(t._v, Tracer) or any(t is u for u in self.swapped):
                continue
            if any(id(t) in getattr(tape, "ids", ()) for tape in tapes):
                out.append(t)
        return out


def _output_leaf(leaf, what: str):
    """A result leaf as an array (None stays a static leaf)."""
    if type(leaf) is Tensor:
        return leaf._value
    if leaf is None:
        return None
    if isinstance(leaf, Variable):
        return leaf.read_value()._value
    if isinstance(leaf, (jax.Array, np.ndarray, np.generic, bool, int, float, complex)):
        return to_value(leaf)
    raise TypeError(
        f"{what} returned {leaf!r} of type {type(leaf).__name__}, which is not a "
        "Tensor. Return Tensors, Python numbers or (nested) structures of them."
    )


def trace(
    fn: Callable[..., Any],
    make_args: Callable[[list], tuple],
    arg_avals: Sequence,
    what: str,
    preset: Sequence[Variable] = (),
    swapped: Sequence[Tensor] = (),
) -> Traced:
    """Traces `fn(*make_args(arg_values))` once into a `Traced`.

    `preset`: Variables whose reads see explicit inputs (a loop's carries);
    `swapped`: Tensors from outside whose values become explicit inputs.
    """
    capture = Capture()
    scope = BranchScope(_scope.current())
    meta: dict = {}

    def run(preset_vals, swap_vals, arg_vals):
        for var, val in zip(preset, preset_vals):
            scope.preset(var, val)
        saved_values = [t._v for t in swapped]
        saved_tapes = _state.tapes
        for t, val in zip(swapped, swap_vals):
            t._v = val
        _state.tapes = [capture]
        _scope._stack.scopes.append(scope)
        try:
            args = make_args(list(arg_vals))
            capture.mark_inside(args)
            out = fn(*args)
            flat, tree = tree_flatten(out)
            capture.returned(flat)
            raw = [_output_leaf(leaf, what) for leaf in flat]
        finally:
            _scope._stack.scopes.pop()
            _state.tapes = saved_tapes
            for t, val in zip(swapped, saved_values):
                t._v = val
        written = list(preset) + [
            v for v in scope.written.values() if not any(v is p for p in preset)
        ]
        meta.update(
            tree=tree,
            order=key_order(out),
            static=[None if v is not None else _NONE for v in raw],
            n_out=sum(v is not None for v in raw),
            written=written,
        )
        return [v for v in raw if v is not None], [scope.local(v) for v in written]

    preset_avals = [_aval(v._value) for v in preset]
    swap_avals = [_aval(t._value) for t in swapped]
    closed = jax.make_jaxpr(run)(preset_avals, swap_avals, list(arg_avals))
    return Traced(closed, meta, capture, scope, preset, swapped)


_NONE = object()  # marks a None leaf of a result in `Traced.static`


def _aval(value):
    return jax.ShapeDtypeStruct(np.shape(value), value.dtype)


def aval_of(t: Tensor):
    return _aval(t._value)


# -- a construct's inputs ----------------------------------------------------------
class Inputs:
    """The union of what a construct's traced functions take from outside.

    `values`: the raw inputs (in order); `objs`: what the dispatcher gets for
    them (the Tensor from outside, a recorded read of the Variable, or the
    raw value), so that tapes see the construct as one op on them.
    """

    def __init__(self, traced: Sequence[Traced]) -> None:
        slot_of: dict = {}
        keyed: list = []
        for tr in traced:
            for kind, key, obj in tr.keys():
                if (kind, key) not in slot_of:
                    slot_of[(kind, key)] = len(keyed)
                    keyed.append((kind, obj))
        self.objs = self._objects(keyed, traced)
        for tr in traced:
            tr.bind(slot_of)

    @staticmethod
    def _objects(keyed, traced) -> list:
        if not _state.tapes:  # nothing records: the values themselves
            return [obj._value if kind == "t" else obj for kind, obj in keyed]
        var_of: dict = {}
        for tr in traced:
            for vid, (var, val) in tr.scope.entry.items():
                if vid in tr.capture.read_vars:
                    var_of.setdefault(id(val), var)
        out = []
        for kind, obj in keyed:
            if kind == "t":
                out.append(obj)
                continue
            found = None
            for tr in traced:
                found = tr.capture.outside.get(id(obj))
                if found is not None:
                    break
            if found is None:
                var = var_of.get(id(obj))
                if var is not None:  # a recorded read (watched as TF watches it)
                    found = context.hooks.read_variable(var)
            out.append(obj if found is None else found)
        return out


def retrace_needed(traced: Sequence[Traced]) -> list:
    """Tensors to swap in a retrace (tracked ones with concrete values)."""
    tapes = _state.tapes
    if not tapes:
        return []
    out: list = []
    for tr in traced:
        for t in tr.tracked_concrete(tapes):
            if not any(t is u for u in out):
                out.append(t)
    return out


# -- what every construct shares: structures and the recorded op ---------------
def is_leaf(x) -> bool:
    return x is None or type(x) is Tensor or isinstance(x, (TensorArray, Variable))


def leaves(structure) -> list:
    return jax.tree_util.tree_leaves(structure, is_leaf=is_leaf)


def is_traced(x) -> bool:
    if type(x) is Tensor:
        return isinstance(x._v, Tracer)
    if isinstance(x, TensorArray):
        return x._traced()
    if isinstance(x, Variable):
        return isinstance(x._read_raw(), Tracer)
    return isinstance(x, Tracer)


def in_trace(*structures) -> bool:
    """Whether a construct on these values is compiled (TF's graph mode)."""
    if _state.function_depth:
        return True
    return any(is_traced(leaf) for s in structures for leaf in leaves(s))


def avals_text(tr: Traced) -> str:
    it = iter(tr.out_avals[: tr.n_out])
    leaves = [
        (lambda a: f"Tensor(shape={tuple(a.shape)}, dtype={dtype_name(a.dtype)})")(
            next(it)
        )
        if s is None
        else None
        for s in tr.static
    ]
    return str(jax.tree_util.tree_unflatten(tr.tree, leaves))


def dtype_name(dtype) -> str:
    return dtypes.of_array(np.dtype(dtype)).name


_OWN = object()  # `rebuild`: the traced function's own dict order


def rebuild(
    tr: Traced, values: Sequence, tree=None, static=None, order: Any = _OWN
) -> Any:
    """A traced function's result (or the part `tree`/`static`/`order` say)
    from its array values: None leaves put back, dicts in their own order."""
    it = iter(values)
    static = tr.static if static is None else static
    leaves = [next(it) if s is None else None for s in static]
    out = jax.tree_util.tree_unflatten(tr.tree if tree is None else tree, leaves)
    return in_key_order(out, tr.order if order is _OWN else order)


class Construct:
    """The primitive tapes record for one traced construct (identity-hashed).

    Its first call is the construct itself, run-time checks included (they
    were traced into its functions). Later calls are replays (a tape's
    backward pass, forward mode, an outer tape's jacobian): the forward pass
    already checked, so there the checks are discharged and dropped
    (`checkify`, then XLA removes them), as the dispatcher skips an op's
    checks in replays.
    """

    __slots__ = ("run", "__name__", "_ran")

    def __init__(self, run: Callable, name: str) -> None:
        self.run = run
        self.__name__ = name
        self._ran = False

    def __call__(self, *vals):
        if not self._ran:
            self._ran = True
            return tuple(self.run(*vals))
        return tuple(_unchecked(self.run)(*vals))


def _unchecked(run: Callable) -> Callable:
    def call(*vals):
        return checkify.checkify(run, errors=checkify.user_checks)(*vals)[1]

    return call


def dispatch(name: str, run: Callable, objs: list) -> list:
    info = OpInfo(Construct(run, name), name, False, True)
    out = dispatch_raw(info, objs, ())
    return list(out)


def trace_all(build: Callable[[list], list]) -> list:
    """Traces a construct's functions; again, with the Tensors a tape tracks
    but the jaxpr froze as constants (concrete values) made inputs."""
    swapped: list = []
    traced: list = []
    for _ in range(3):
        traced = build(swapped)
        more = retrace_needed(traced)
        if not more:
            break
        swapped = swapped + [t for t in more if not any(t is u for u in swapped)]
    return traced


def union(groups) -> list:
    out: list = []
    for group in groups:
        for v in group:
            if not any(v is w for w in out):
                out.append(v)
    return out


def position(items: list, x) -> int:
    return next(k for k, y in enumerate(items) if y is x)


def write_back(variables: list, values: Sequence) -> None:
    for var, t in zip(variables, values):
        var._write(t._value if type(t) is Tensor else t)
