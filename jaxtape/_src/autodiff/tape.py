"""The recording half of a tape: tracked tensors, nodes, variable reads. Layer L3.

A node is `(fn, params, ins, outs, multi)`: `fn` a pure primitive called as
`fn(*input_values, *params)`, `ins` a tuple of refs of tracked inputs (>= 0)
or `~k` for the k-th recorded constant, `outs` refs of the float outputs (-1
for outputs that carry no gradient), `multi` whether `fn` returns a structure.
Refs index `tensors`, which keeps every tracked Tensor alive so that `id()`
keys stay unique.
"""

from __future__ import annotations

import types
import warnings
import weakref
from typing import TYPE_CHECKING

import jax.numpy as jnp
import numpy as np

from jaxtape._src.autodiff import program
from jaxtape._src.core import context
from jaxtape._src.core.deferred import Pending
from jaxtape._src.core.tensor import Tensor, tree_flatten

if TYPE_CHECKING:
    from jaxtape._src.state.variable import Variable

_state = context.state


class NumpyEscapeWarning(UserWarning):
    """A tracked tensor was converted to NumPy while a tape recorded.

    Wrong:  `y = jaxtape.constant(x.numpy() * 2) * x`   (d/dx is 2x, not 4x)
    Right:  `y = (x * 2) * x`
    """


_BFLOAT16 = np.dtype(jnp.bfloat16)


def _float_out(t) -> bool:
    dtype = t._v.dtype
    return dtype.kind in "fc" or dtype == _BFLOAT16


class Recorder:
    """What one tape has seen: used by `GradientTape` and `ForwardAccumulator`."""

    def __init__(self, watch_accessed_variables: bool = True):
        self._watch_accessed = watch_accessed_variables
        self.clear()

    def clear(self) -> None:
        self.ids: dict[int, int] = {}  # id(Tensor) -> ref
        self.tensors: list[Tensor] = []  # ref -> Tensor
        self.born: list[int] = []  # ref -> number of nodes when created
        self.nodes: list[tuple] = []  # (info, params, ins, outs, multi)
        self.pending: list[int] = []  # refs of outputs this tape owns, deferred
        self._held: set[int] | None = None  # after `let_go`: pending refs still held
        self.consts: list = []  # constant objects (Tensor or raw value)
        self._const_ids: dict[int, int] = {}
        self.var_reads: dict[int, list[int]] = {}  # id(var) -> leaf refs
        self.variables: dict[int, object] = {}  # id(var) -> var, watch order
        self.watched_var_ids: set[int] = set()
        self.notes: list[str] = []  # where gradient paths were cut
        # Row gathers (`note_row_gather`): params ref -> the gathers' nodes.
        self.row_gathers: dict[int, list[int]] = {}
        self.escaped_vars: set[int] = set()  # ids of variables read via NumPy

    # -- leaves ---------------------------------------------------------------
    def _leaf(self, t: Tensor) -> int:
        ref = len(self.tensors)
        self.ids[id(t)] = ref
        self.tensors.append(t)
        self.born.append(len(self.nodes))
        return ref

    def watch_tensor(self, t: Tensor) -> None:
        if id(t) not in self.ids:
            self._leaf(t)

    def watch_variable(self, var) -> None:
        self.watched_var_ids.add(id(var))
        self.variables.setdefault(id(var), var)

    def _on_read(self, var, t: Tensor) -> None:
        # As TF: a trainable variable read is watched whatever its dtype (it is
        # listed by `watched_variables`); only floating reads become leaves.
        vid = id(var)
        if vid in self.watched_var_ids or (self._watch_accessed and var._trainable):
            self.variables.setdefault(vid, var)
            if _float_out(t):
                self.var_reads.setdefault(vid, []).append(self._leaf(t))

    def is_tracked(self, t) -> bool:
        return type(t) is Tensor and id(t) in self.ids

    # -- recording (called by the dispatcher for every op while recording) -----
    def _record(self, info, params, objs, out) -> bool:
        """Records `out = info(objs)` when an input is tracked; says whether."""
        ids = self.ids  # keyed by the ids of live tracked Tensors only
        if len(objs) == 1:  # the common unary case, without the general loop
            ref = ids.get(id(objs[0]))
            if ref is None:
                return False
            refs = (ref,)
        else:
            refs, untracked = [], 0
            for o in objs:  # (a loop: a 3.11 comprehension costs a call)
                ref = ids.get(id(o))
                if ref is None:
                    untracked += 1
                refs.append(ref)
            if untracked == len(refs):
                return False
            if untracked:  # untracked inputs are the node's constants
                for i, ref in enumerate(refs):
                    if ref is None:
                        refs[i] = self._const(objs[i])
            refs = tuple(refs)  # of ints: the collector stops tracking it
        if not info.differentiable:
            self.notes.append(
                f"`{info.name}` (no gradient, as in TF) consumed a tracked tensor"
            )
            return True
        if type(out) is not Tensor:
            return self._record_outputs(info, params, refs, out)
        dtype = out._v.dtype  # the common case, one output (`_output` inlined)
        if dtype.kind not in "fc" and dtype != _BFLOAT16:
            return self._no_float_output(info)
        tensors = self.tensors
        ref = len(tensors)
        ids[id(out)] = ref
        tensors.append(out)
        k = len(self.nodes)
        self.born.append(k)
        self.nodes.append((info, params, refs, (ref,), False))
        v = out._v
        if type(v) is Pending and v.owner is None:  # deferred: ours to compute
            v.owner = self
            v.ref = ref
            self.pending.append(ref)
        return True

    def _record_outputs(self, info, params, refs, out) -> bool:
        outs = tree_flatten(out)[0]
        floats = [_float_out(t) for t in outs]
        if True not in floats:
            return self._no_float_output(info)
        k = len(self.nodes)
        out_refs = tuple(
            [self._output(t, k) if f else -1 for t, f in zip(outs, floats)]
        )
        self.nodes.append((info, params, refs, out_refs, True))
        return True

    def _no_float_output(self, info) -> bool:
        self.notes.append(
            f"`{info.name}` produced only integer/bool outputs from a tracked tensor"
        )
        return True

    def _output(self, t: Tensor, node: int) -> int:
        ref = len(self.tensors)
        self.ids[id(t)] = ref
        self.tensors.append(t)
        self.born.append(node)
        return ref

    def _const(self, o) -> int:
        # Deduplicated by identity: the literal `1.0` of a loop is one constant.
        k = self._const_ids.get(id(o))
        if k is None:
            k = len(self.consts)
            self._const_ids[id(o)] = k
            self.consts.append(o)
        return ~k

    def note(self, text: str) -> None:
        self.notes.append(text)

    def note_row_gather(self, out: Tensor) -> None:
        """`out` is a gather of whole rows (axis 0) of its first input: a
        source read only that way gets an `IndexedSlices` gradient, as TF's."""
        ref = self.ids.get(id(out))
        if ref is not None:
            k = self.born[ref]
            self.row_gathers.setdefault(self.nodes[k][2][0], []).append(k)

    # -- deferred values (core/deferred.py) -------------------------------------
    # `evaluate(refs)`: computes the pending outputs `refs` (and what they
    # need) in one program of this tape. (The function itself, not a method
    # calling it: a value read under a tape pays one Python call less.)
    evaluate = program.evaluate

    def let_go(self) -> set[int]:
        """Ends the recording for good (a non-persistent tape's one request):
        the tape stops holding the Tensors of its pending outputs, and returns
        the refs of those that are still held elsewhere (by the user, or by
        another tape), the only ones whose values can still be read.

        Each such Tensor's slot keeps its `Pending` (which reads as a Tensor
        to the program builder: `_v`, `_value`), so the tape can still compute
        any of them. Liveness is read from weak references: a Tensor kept
        alive only by a reference cycle counts as held, and is computed (work,
        never a wrong value).
        """
        if self._held is not None:
            return self._held
        refs, weak = _drop_pending(self.tensors, self.pending)
        self.ids = {}  # (ids of Tensors that may now go away)
        self._held = {r for r, w in zip(refs, weak) if w() is not None}
        return self._held

    def release(self) -> None:
        """Lets the recording go. The outputs still pending and held elsewhere
        are handed to the program that computes them (`program.detach`),
        which keeps only its inputs alive: they are computed if and when
        read (a nested tape's values, which its outer tape's backward pass
        usually computes, cost nothing here); the rest are never computed."""
        held = self.let_go()
        tensors = self.tensors
        left = []
        for r in sorted(held):  # (few: usually the loss and predictions)
            v = tensors[r]._v
            if type(v) is Pending and v.value is None:
                left.append(r)
        if left:
            program.detach(self, left)
        # The recording itself goes now: the Pendings this tape computed still
        # name it as their owner, and through its Tensors it would name them,
        # a cycle per step for the cyclic collector to find.
        self.ids, self._const_ids = {}, {}
        self.tensors, self.born, self.nodes, self.consts = [], [], [], []
        self.pending, self.row_gathers = [], {}


def _drop_pending(tensors: list, pending: list) -> tuple[list, list]:
    """Puts the `Pending` of each uncomputed pending output in its Tensor's
    slot; returns their refs and weak references to the Tensors. (A function
    of its own, so that no local keeps a Tensor alive once it returns; the
    weak references are made by `map`, at C speed: this runs once per
    gradient for every op of the step.)"""
    refs, objs = [], []
    for r in pending:
        t = tensors[r]
        v = t._v
        if type(v) is Pending and v.value is None:
            refs.append(r)
            objs.append(t)
            tensors[r] = v
    return refs, list(map(weakref.ref, objs))


class _CaptureReads:
    """A pseudo-tape that only collects the variables read (for custom_gradient)."""

    ids = types.MappingProxyType({})  # tracks no tensor

    def __init__(self):
        self.variables: dict[int, Variable] = {}
        self.reads: list = []

    def _on_read(self, var, t) -> None:
        self.variables.setdefault(id(var), var)
        self.reads.append((var, t))

    def _record(self, info, params, objs, out) -> bool:
        return False  # records nothing: the dispatcher computes the op at once

    def note_row_gather(self, out) -> None:
        pass


def read_variable(var) -> Tensor:
    """The recording read installed as `context.hooks.read_variable`."""
    t = Tensor(var._read_raw())
    for tape in _state.tapes:
        tape._on_read(var, t)
    return t


def watches_reads_of(rec, var) -> bool:
    """Whether a read of `var` would be watched by `rec` (a Recorder)."""
    return id(var) in rec.watched_var_ids or (rec._watch_accessed and var._trainable)


def numpy_escape(t) -> None:
    """Warns when a tracked tensor or watched variable leaves for NumPy.

    Called by `Tensor.numpy`/`__array__` and `Variable.numpy`/`__array__`
    while a tape records. A variable read that way is watched, as TF's
    `.numpy()` reads it on the tape, but the NumPy value is a constant.
    """
    if type(t) is Tensor:
        for tape in _state.tapes:
            if isinstance(tape, Recorder) and id(t) in tape.ids:
                what = (
                    f"A tensor of shape {tuple(t.shape)} watched by a recording "
                    "GradientTape"
                )
                tape.note(
                    f"a tracked tensor of shape {tuple(t.shape)} was converted to "
                    "NumPy; values computed from it are constants to the tape"
                )
                break
        else:
            return
    else:  # a Variable
        what = None
        for tape in _state.tapes:
            if isinstance(tape, Recorder) and watches_reads_of(tape, t):
                tape.variables.setdefault(id(t), t)
                tape.escaped_vars.add(id(t))
                tape.note(
                    f"Variable {t.name!r} was converted to NumPy; values computed "
                    "from that are constants to the tape"
                )
                what = f"Variable {t.name!r} (watched by a recording GradientTape)"
        if what is None or not (t.dtype.is_floating or t.dtype.is_complex):
            return
    warnings.warn(
        f"{what} was converted to NumPy; gradients do "
        "not flow through NumPy values, so anything computed from the result "
        "counts as a constant (e.g. `jaxtape.constant(x.numpy() * 2) * x` has "
        "gradient 2x, not 4x). Keep the computation in jaxtape ops, or use "
        "`jaxtape.stop_gradient(x)` to cut the path on purpose.",
        NumpyEscapeWarning,
        stacklevel=3,
    )


context.hooks.read_variable = read_variable
context.hooks.numpy_escape = numpy_escape
