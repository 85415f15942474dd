"""A tape's program: slices of what it recorded, as pure replayable functions.

Layer L3. Everything a tape computes goes through here, forward and backward,
as one kind of object: a `Program` is a renumbered slice of the tape's nodes,
a hashable description of the pure function that replays it, and the key of
one cache of compiled programs (`core/compile_cache`):

- `build_program` slices backward, from targets to sources (`backward.py`
  differentiates it with `jax.vjp`/`jax.jacrev`/`jax.jvp`);
- `evaluate` slices forward, to the outputs the tape left pending (deferred
  execution, `core/deferred`): the unevaluated nodes behind them, fed by the
  values already computed, run as one program and fill every output they make.

A program is compiled with `jax.jit` when first seen (op by op instead
while the structures met keep changing; see `core/compile_cache`), so a
training loop's forward and backward passes become a few XLA calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import overload

import jax
from jax import lax

from jaxtape._src.core import device
from jaxtape._src.core.compile_cache import CompileCache, abstract_value
from jaxtape._src.core.deferred import Pending
from jaxtape._src.core.tensor import Tensor

cache = CompileCache()  # forward and backward programs, counted per kind


@dataclasses.dataclass(frozen=True, eq=True)
class Program:
    """A replayable slice: nodes over local refs, leaves first, then node outputs.

    Node inputs are local refs (>= 0) or `~k` for constant k. `groups[i]` lists
    the leaf indices feeding requested source i (a variable read several times
    has several leaves; its gradient is their sum). `overrides` are
    `(node, out position, leaf)` for sources that are also computed by the
    slice (a gradient w.r.t. an intermediate tensor); `targets` are local refs
    or -1 for unconnected targets.
    """

    nodes: tuple
    n_leaves: int
    groups: tuple
    targets: tuple
    overrides: tuple
    signature: tuple  # avals of leaves and constants
    size: int  # number of local refs
    # The hash of the fields above, computed once (programs key dict lookups).
    _hash: int = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "_hash",
            hash(
                (
                    self.nodes,
                    self.n_leaves,
                    self.groups,
                    self.targets,
                    self.overrides,
                    self.signature,
                )
            ),
        )

    def __hash__(self) -> int:
        return self._hash

    @overload
    def replay(
        self, leaves, consts, forward_mode: bool = False, keep: None = None
    ) -> list: ...
    @overload
    def replay(
        self, leaves, consts, forward_mode: bool = False, *, keep: Sequence[int]
    ) -> tuple[list, list]: ...
    def replay(
        self, leaves, consts, forward_mode: bool = False, keep=None
    ) -> list | tuple[list, list]:
        """The targets' values (and, with `keep`, those of these local refs)."""
        env = list(leaves) + [None] * (self.size - len(leaves))
        overrides = {(k, p): leaf for k, p, leaf in self.overrides}
        for k, (fn, params, ins, outs, multi) in enumerate(self.nodes):
            if forward_mode:
                fn = getattr(getattr(fn, "__wrapped__", fn), "forward_mode", fn)
            args = [env[i] if i >= 0 else consts[~i] for i in ins]
            res = fn(*args, *params)
            vals = jax.tree_util.tree_leaves(res) if multi else (res,)
            for p, (o, v) in enumerate(zip(outs, vals)):
                if o < 0:
                    continue
                leaf = overrides.get((k, p))
                if leaf is not None:  # cut: the value is the source's own
                    src = leaves[leaf]
                    v = v + (src - lax.stop_gradient(src))
                    env[leaf] = v
                else:
                    env[o] = v
        targets = [env[t] if t >= 0 else None for t in self.targets]
        return targets if keep is None else (targets, [env[k] for k in keep])


def _freeze(v):
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    return v


@dataclasses.dataclass
class Slice:
    """A program plus the objects that feed it on this tape."""

    program: Program
    leaf_objs: list  # Tensors, one per leaf
    const_objs: list  # Tensors or raw values, one per constant
    connected: list  # per requested source: True if some target depends on it
    # (local ref, Pending, tape ref) for the slice's outputs not computed yet
    # (deferred): the backward program computes them anyway, so it returns
    # the values of those still held (all of them on a persistent tape).
    pending: tuple = ()


def build_program(rec, target_refs, source_groups) -> Slice:
    """Slices `rec` (a Recorder) from `target_refs` back to `source_groups`.

    `target_refs`: a ref or None per flat target. `source_groups`: a list of
    ref lists per flat source (several refs for a variable's reads).
    """
    nodes, born = rec.nodes, rec.born
    src_refs = sorted({r for g in source_groups for r in g})
    n_ref = len(rec.tensors)
    dep = bytearray(n_ref)
    for r in src_refs:
        dep[r] = 1
    start = min((born[r] for r in src_refs), default=len(nodes))
    node_dep = bytearray(len(nodes))
    for k in range(start, len(nodes)):
        ins, outs = nodes[k][2], nodes[k][3]
        for i in ins:
            if i >= 0 and dep[i]:
                node_dep[k] = 1
                for o in outs:
                    if o >= 0:
                        dep[o] = 1
                break
    need = bytearray(n_ref)
    for t in target_refs:
        if t is not None and dep[t]:
            need[t] = 1
    in_slice = []
    for k in range(len(nodes) - 1, start - 1, -1):
        if not node_dep[k]:
            continue
        if any(o >= 0 and need[o] for o in nodes[k][3]):
            in_slice.append(k)
            for i in nodes[k][2]:
                if i >= 0 and dep[i]:
                    need[i] = 1
    in_slice.reverse()

    connected = [any(need[r] for r in g) for g in source_groups]
    leaf_refs = [r for r in src_refs if need[r]]
    local = {r: j for j, r in enumerate(leaf_refs)}
    next_local = len(leaf_refs)
    const_slot: dict = {}
    const_objs: list = []
    prog_nodes = []
    overrides = []
    pending = []
    for pos, k in enumerate(in_slice):
        info, params, ins, outs, multi = nodes[k]
        lins = []
        for i in ins:
            if i >= 0 and dep[i]:
                lins.append(local[i])
                continue
            key = i  # a recorded constant (< 0) or an untracked-by-sources ref
            slot = const_slot.get(key)
            if slot is None:
                slot = const_slot[key] = len(const_objs)
                const_objs.append(rec.consts[~i] if i < 0 else rec.tensors[i])
            lins.append(~slot)
        louts = []
        for p, o in enumerate(outs):
            if o < 0:
                louts.append(-1)
            elif o in local:
                overrides.append((pos, p, local[o]))
                louts.append(local[o])
            else:
                local[o] = next_local
                louts.append(next_local)
                v = rec.tensors[o]._v
                if type(v) is Pending and v.value is None:
                    pending.append((next_local, v, o))
                next_local += 1
        prog_nodes.append((info.fn, params, tuple(lins), tuple(louts), multi))
    targets = tuple(local.get(t, -1) if t is not None else -1 for t in target_refs)
    groups = tuple(tuple(local[r] for r in g if r in local) for g in source_groups)
    leaf_objs = [rec.tensors[r] for r in leaf_refs]
    signature = (
        tuple(abstract_value(t._v) for t in leaf_objs),
        tuple(abstract_value(c._v if type(c) is Tensor else c) for c in const_objs),
    )
    prog_nodes = tuple(prog_nodes)
    try:
        hash(prog_nodes)
    except TypeError:
        prog_nodes = tuple((n[0], _freeze(n[1])) + n[2:] for n in prog_nodes)
    program = Program(
        prog_nodes,
        len(leaf_refs),
        groups,
        targets,
        tuple(overrides),
        signature,
        next_local,
    )
    return Slice(program, leaf_objs, const_objs, connected, tuple(pending))


# -- forward: computing what the tape left pending ---------------------------------
def evaluate(rec, refs) -> None:
    """Computes the pending outputs `refs` of `rec` (a Recorder) in one program.

    The program is the unevaluated part of the tape behind them: the nodes
    whose outputs are still pending, fed by the values already computed
    (leaves, constants, outputs filled earlier, values other tapes own). Every
    output it makes is filled.
    """
    if len(refs) == 1 and _evaluate_one(rec, refs[0]):
        return
    plan = _plan(rec, refs)
    if plan is not None:
        plan.run()


def detach(rec, refs) -> None:
    """Hands the pending outputs `refs` of `rec` (and those behind them) to a
    `_Plan` of their own program, so the recording can be dropped while they
    stay pending: computed if and when one of them is read."""
    plan = _plan(rec, refs)
    if plan is not None:
        for j, v in enumerate(plan.pendings):
            v.owner, v.ref = plan, j


class _Plan:
    """The forward program behind some pending outputs, with what feeds it
    (Tensors or raw values, resolved when it runs); the owner of those
    outputs once their tape's recording is dropped (`detach`)."""

    def __init__(self, spec, leaf_objs, pendings):
        self.spec, self.leaf_objs, self.pendings = spec, leaf_objs, pendings

    def run(self) -> None:
        # The cache key is made here, not when the plan is made: most plans
        # of detached values are never run.
        leaves = [_value_of(o) for o in self.leaf_objs]
        spec = self.spec
        key = (
            "forward",
            tuple((info.fn, params, lins) for info, params, lins in spec),
            tuple(abstract_value(v) for v in leaves),
        )
        program = cache.lookup(key, lambda: _Replay(spec), len(spec), kind="forward")
        for v, value in zip(self.pendings, _run(program, spec, leaves)):
            if v.value is None:
                v.value = value
            if v.owner is self:  # (computed: no cycle back to the plan)
                v.owner = None
        self.leaf_objs = self.pendings = []  # (nothing to keep alive any more)

    def evaluate(self, refs) -> None:  # `deferred.Owner`: all outputs at once
        self.run()


def _plan(rec, refs) -> _Plan | None:
    """The program computing `refs` and every pending output of `rec` behind
    them, or None when nothing is pending."""
    nodes, tensors, born = rec.nodes, rec.tensors, rec.born
    segment, seen, stack = set(), set(), list(refs)
    while stack:
        r = stack.pop()
        if r in seen:
            continue
        seen.add(r)
        v = tensors[r]._v
        if type(v) is not Pending or v.value is not None or v.owner is not rec:
            continue  # computed already, or another tape's to compute: an input
        k = born[r]
        segment.add(k)
        for i in nodes[k][2]:
            if i >= 0 and i not in seen:
                stack.append(i)
    if not segment:
        return None
    local: dict = {}  # tape ref (or ~constant) -> env index, or ~leaf index
    leaf_objs, spec, pendings = [], [], []
    for k in sorted(segment):  # nodes are in recording order: a valid schedule
        info, params, ins, node_outs, _ = nodes[k]
        lins = []
        for i in ins:
            key = i if i >= 0 else ("const", i)
            j = local.get(key)
            if j is None:
                src = tensors[i] if i >= 0 else rec.consts[~i]
                j = local[key] = ~len(leaf_objs)
                leaf_objs.append(src)
            lins.append(j)
        local[node_outs[0]] = len(spec)
        spec.append((info, params, tuple(lins)))
        pendings.append(tensors[node_outs[0]]._v)
    return _Plan(spec, leaf_objs, pendings)


def _evaluate_one(rec, r) -> bool:
    """Computes pending output `r` alone when its inputs are all computed (a
    value read right after its op was recorded): one eager op call, as the
    dispatcher makes outside a tape, instead of a one-node program. False
    when some input is still pending on this tape."""
    t = rec.tensors[r]
    v = t._v
    if type(v) is not Pending or v.value is not None or v.owner is not rec:
        return True  # nothing to compute
    info, params, ins, outs, _ = rec.nodes[rec.born[r]]
    vals = []
    for i in ins:
        if i < 0:
            c = rec.consts[~i]
            vals.append(_value_of(c))
            continue
        src = rec.tensors[i]
        w = src._v
        if type(w) is Pending and w.value is None and w.owner is rec:
            return False
        vals.append(src._value)
    try:  # (`device.run` inlined: this runs for every value read under a tape)
        value = info.eager(*vals, *params)
    except Exception:  # inputs on several devices, or an error to report
        value = device.run(info.eager, vals, params)
    v.value = value
    if type(t) is Tensor:  # (not a Pending the tape kept in its place)
        t._v = value
    return True


def _value_of(o):
    """The value of a program input: a Tensor, a `Pending` a released tape kept
    in its place, or a raw value (a recorded Python scalar)."""
    t = type(o)
    return o._value if t is Tensor or t is Pending else o


class _Replay:
    """A forward segment as one pure function of its leaves (jitted by the cache)."""

    def __init__(self, spec):
        self.spec = [(info.fn, params, lins) for info, params, lins in spec]

    def __call__(self, *leaves):
        env = []
        for fn, params, lins in self.spec:
            env.append(fn(*[env[r] if r >= 0 else leaves[~r] for r in lins], *params))
        return env


def _run(program, spec, leaves):
    if type(program) is _Replay:  # first sight: op by op, as eager execution
        return _run_eagerly(spec, leaves)
    try:
        return program(*leaves)
    except ValueError as error:  # inputs on several devices: op by op
        if "incompatible devices" not in str(error):
            raise
        return _run_eagerly(spec, leaves)


def _run_eagerly(spec, leaves):
    env = []
    for info, params, lins in spec:
        vals = [env[r] if r >= 0 else leaves[~r] for r in lins]
        env.append(device.run(info.eager, vals, params))
    return env
