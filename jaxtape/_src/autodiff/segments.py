"""The backward pass of a long program, compiled in segments. Layer L3.

XLA's compile time and memory grow faster than linearly in a program's
length (a 2000-op chain's gradient took 23 s to compile; 10k ops of 64x64
went past 9 GB), so a program over `set_max_compiled_ops` is never compiled
whole. Replaying it op by op under one eager `jax.vjp` is linear but slow
(~0.3 ms an op). Instead, its nodes are cut into consecutive segments of at
most `SEGMENT_OPS`:

- forward, each segment runs as one function of the values it reads, and
  only the values later segments read (its boundary) are kept;
- backward, in reverse, each segment's VJP recomputes its own forward from
  its boundary inputs (rematerialisation, as `jax.checkpoint` does) and turns
  its outputs' cotangents into its inputs'.

Each segment function goes through the program cache, keyed by its
renumbered nodes and input avals, so it is compiled once and
the repeated segments of a loop (an unrolled RNN, a chain) share one
executable. Compile time and memory grow linearly in the program's length.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.autodiff.program import Program, cache
from jaxtape._src.core.compile_cache import abstract_value

SEGMENT_OPS = 200  # nodes per segment: a few seconds' compile at most


class _Structure:
    """A segment's nodes and outputs as a cache key: hashed once, not on every
    gradient (a 200-node tuple); equal to another segment's of the same form,
    so a loop's alike segments share their compiled functions."""

    __slots__ = ("value", "_hash")

    def __init__(self, value):
        self.value, self._hash = value, hash(value)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return other is self or (
            type(other) is _Structure
            and other._hash == self._hash
            and other.value == self.value
        )


class _Segment:
    """One run of consecutive nodes, renumbered: inputs are `0..n_in-1`.

    `spec` nodes are `(fn, params, ins, outs, multi, overrides)` over local
    slots (`~c` for constant c of `const_ids`); `overrides` are `(position,
    source input)` pairs: the output is cut to the source's own value for the
    gradient, as `Program.replay` does for sources computed by the slice.
    """

    def __init__(self, spec, n_in, outs, const_ids, n_boundary):
        self.spec, self.n_in, self.outs, self.const_ids = spec, n_in, outs, const_ids
        self.n_boundary = n_boundary  # outputs later segments read; then kept ones
        self.n_slots = max((o + 1 for n in spec for o in n[3]), default=n_in)
        self.structure = _Structure((spec, outs))  # its cache key, hashed once

    def forward(self, ins, consts):
        env = list(ins) + [None] * (self.n_slots - len(ins))
        for fn, params, lins, louts, multi, ovs in self.spec:
            res = fn(*[env[i] if i >= 0 else consts[~i] for i in lins], *params)
            vals = jax.tree_util.tree_leaves(res) if multi else (res,)
            for o, v in zip(louts, vals):
                if o >= 0:
                    env[o] = v
            for p, src in ovs:
                s = env[src]
                env[louts[p]] = vals[p] + (s - lax.stop_gradient(s))
        return [env[o] for o in self.outs]


def _split(program: Program, seg_ops: int, keep: tuple):
    """Cuts `program` into segments; returns them with their global wiring:
    `(segment, in_refs, out_refs)`. An input ref is `("env", slot)`, the value
    a slot of the program's environment holds as the segment starts, or
    `("leaf", j)`, the original value of leaf j (an override's source); the
    outputs are the slots written in the segment that are read after it."""
    nodes = program.nodes
    n = len(nodes)
    ov_by_node: dict = {}
    for k, p, leaf in program.overrides:
        ov_by_node.setdefault(k, []).append((p, leaf))
    bounds = list(range(0, n, seg_ops)) + [n]
    # The slots read after each boundary (targets and kept values at the end).
    kept = set(keep)
    later = {t for t in program.targets if t >= 0}
    read_after = [set() for _ in bounds]
    for b in range(len(bounds) - 1, -1, -1):
        read_after[b] = set(later)
        if b:
            for k in range(bounds[b - 1], bounds[b]):
                later.update(i for i in nodes[k][2] if i >= 0)
    segments = []
    for b in range(len(bounds) - 1):
        in_refs: list = []
        where: dict = {}  # input ref -> local input
        consts: dict = {}  # program constant -> segment constant
        current: dict = {}  # env slot -> ("w", n): its latest write in the segment
        draft = []

        def input_of(ref):
            if ref not in where:
                where[ref] = len(in_refs)
                in_refs.append(ref)
            return where[ref]

        n_written = 0
        for k in range(bounds[b], bounds[b + 1]):
            fn, params, ins, outs, multi = nodes[k]
            lins = []
            for i in ins:
                if i < 0:
                    lins.append(~consts.setdefault(~i, len(consts)))
                elif i in current:
                    lins.append(current[i])
                else:
                    lins.append(input_of(("env", i)))
            ovs = tuple(
                (p, input_of(("leaf", leaf))) for p, leaf in ov_by_node.get(k, ())
            )
            louts = []
            for o in outs:
                if o < 0:
                    louts.append(-1)
                else:
                    current[o] = ("w", n_written)
                    louts.append(current[o])
                    n_written += 1
            draft.append((fn, params, lins, louts, multi, ovs))
        n_in = len(in_refs)

        def local(x):  # written slots come after the inputs
            return n_in + x[1] if type(x) is tuple else x

        spec = tuple(
            (fn, params, tuple(map(local, lins)), tuple(map(local, louts)), multi, ovs)
            for fn, params, lins, louts, multi, ovs in draft
        )
        # Outputs: what later segments read (differentiated), then the kept
        # values (the tape's pending outputs, returned for their values only).
        out_refs = [s for s in current if s in read_after[b + 1]]
        out_refs += [s for s in current if s in kept and s not in read_after[b + 1]]
        segment = _Segment(
            spec,
            n_in,
            tuple(local(current[s]) for s in out_refs),
            tuple(sorted(consts, key=consts.__getitem__)),
            sum(s in read_after[b + 1] for s in current),
        )
        segments.append((segment, in_refs, out_refs))
    return segments


def _zero_cotangent(v):
    dtype = jnp.result_type(v)
    if jnp.issubdtype(dtype, jnp.inexact):
        return jnp.zeros(jnp.shape(v), dtype)
    return np.zeros(jnp.shape(v), jax.dtypes.float0)


def _seg_key(kind, segment, ins, consts):
    return (
        kind,
        segment.structure,
        tuple(abstract_value(v) for v in ins),
        tuple(abstract_value(v) for v in consts),
    )


def _make_forward(segment):
    return lambda ins, consts: segment.forward(ins, consts)


def _make_backward(segment, given):
    """The segment's VJP; `given[i]` says whether boundary output i has a
    cotangent (the others get zeros, made inside the program)."""

    def run(ins, consts, cts):
        def boundary(*xs):
            return segment.forward(xs, consts)[: segment.n_boundary]

        outs, pullback = jax.vjp(boundary, *ins)
        it = iter(cts)
        full = [next(it) if g else _zero_cotangent(o) for o, g in zip(outs, given)]
        return pullback(full)

    return run


@functools.lru_cache(maxsize=8)
def make_vjp(program: Program, ct_given: tuple, keep: tuple, conj):
    """`backward._make_vjp`'s contract, computed segment by segment (the
    split is kept for the few most recent long programs)."""
    segments = _split(program, SEGMENT_OPS, keep)

    def run(leaves, consts, cts):
        env: dict = {("env", j): v for j, v in enumerate(leaves)}
        for j, v in enumerate(leaves):
            env[("leaf", j)] = v
        saved = []
        for segment, in_refs, out_refs in segments:
            ins = [env[r] for r in in_refs]
            cs = [consts[c] for c in segment.const_ids]
            fwd = cache.lookup(
                _seg_key("fwd", segment, ins, cs),
                lambda s=segment: _make_forward(s),
                len(segment.spec),
                kind="segment",
            )
            saved.append((ins, cs))
            for r, v in zip(out_refs, fwd(ins, cs)):
                env[("env", r)] = v
        # Cotangents of the program's connected targets, as `_make_vjp` gives them.
        ct_env: dict = {}
        it = iter(cts)
        for t, given in zip([t for t in program.targets if t >= 0], ct_given):
            out = env[("env", t)]
            ct = next(it) if given else jnp.ones_like(out)
            ct = conj(jnp.asarray(ct, out.dtype))
            ct_env[t] = ct_env[t] + ct if t in ct_env else ct
        leaf_cts: dict = {}
        for (segment, in_refs, out_refs), (ins, cs) in zip(
            reversed(segments), reversed(saved)
        ):
            boundary = out_refs[: segment.n_boundary]
            cts_in = [ct_env.pop(r, None) for r in boundary]
            given = tuple(ct is not None for ct in cts_in)
            if not any(given):
                continue
            seg_cts = [ct for ct in cts_in if ct is not None]
            bwd = cache.lookup(
                _seg_key(("bwd", given), segment, ins, cs),
                lambda s=segment, g=given: _make_backward(s, g),
                len(segment.spec),
                kind="segment",
            )
            for (kind, r), ct in zip(in_refs, bwd(ins, cs, seg_cts)):
                if ct is None or jnp.result_type(ct) == jax.dtypes.float0:
                    continue
                target = ct_env if kind == "env" else leaf_cts
                target[r] = target[r] + ct if r in target else ct
        for j, ct in leaf_cts.items():
            ct_env[j] = ct_env[j] + ct if j in ct_env else ct

        def leaf_ct(j):
            ct = ct_env.get(j)
            return ct if ct is not None else _zero_cotangent(leaves[j])

        grads = tuple(
            conj(sum((leaf_ct(j) for j in g[1:]), leaf_ct(g[0])))
            for g in program.groups
            if g
        )
        kept = [env[("env", k)] for k in keep]
        return (*grads, *kept)

    return run
