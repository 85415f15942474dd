"""`ForwardAccumulator`: forward-mode autodiff (TF's `tf.autodiff.ForwardAccumulator`).

Layer L3. Records like a tape that watches the primals; `jvp(target)` replays
the slice under `jax.jvp` with the given tangents.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxtape._src.autodiff import backward, program
from jaxtape._src.autodiff.gradient_tape import UnconnectedGradients
from jaxtape._src.autodiff.tape import Recorder
from jaxtape._src.core import context
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import (
    Tensor,
    nest_flatten,
    plain_mappings,
    tree_flatten,
    tree_unflatten_like,
)
from jaxtape._src.state.variable import Variable


class ForwardAccumulator:
    """Computes Jacobian-vector products with forward-mode autodiff.

    >>> x = jaxtape.constant([1.0, 2.0])
    >>> v = jaxtape.constant([1.0, 0.0])
    >>> with jaxtape.autodiff.ForwardAccumulator(x, v) as acc:
    ...     y = jaxtape.reduce_sum(x * x)
    >>> acc.jvp(y)
    <jaxtape.Tensor: shape=(), dtype=float32, numpy=2.0>
    """

    def __init__(self, primals, tangents):
        # Paired leaf by leaf in TF's `nest` order; as TF's, the structures may
        # differ only in the kind or key order of their mappings.
        tree_p = tree_flatten(plain_mappings(primals))[1]
        tree_t = tree_flatten(plain_mappings(tangents))[1]
        if tree_p != tree_t:
            raise (_mismatch(primals, tangents) or ValueError)(
                "The two structures don't have the same nested structure: "
                f"ForwardAccumulator got primals {tree_p} and tangents {tree_t}. "
                "Give one tangent per primal, in the same containers."
            )
        flat_p, flat_t = nest_flatten(primals), nest_flatten(tangents)
        self._rec = Recorder(watch_accessed_variables=False)
        self._tangent_of: list = []  # (kind, key, tangent value)
        for p, t in zip(flat_p, flat_t):
            if p.shape != getattr(t, "shape", jnp.shape(to_value(t))):
                raise ValueError(
                    f"ForwardAccumulator: tangent shape {tuple(jnp.shape(to_value(t)))}"
                    f" does not match primal shape {tuple(p.shape)}."
                )
            tv = to_value(t, p.dtype.as_numpy_dtype)
            if isinstance(p, Variable):
                self._rec.watch_variable(p)
                self._tangent_of.append(("var", id(p), tv))
            elif type(p) is Tensor:
                self._rec.watch_tensor(p)
                self._tangent_of.append(("ref", self._rec.ids[id(p)], tv))
            else:
                raise TypeError(
                    f"ForwardAccumulator primals must be Tensors or "
                    f"Variables; got {p!r}."
                )
        self._recording = False

    def __enter__(self) -> ForwardAccumulator:
        context.state.tapes.append(self._rec)
        self._recording = True
        return self

    def __exit__(self, *exc) -> None:
        tapes = context.state.tapes
        for i in range(len(tapes) - 1, -1, -1):
            if tapes[i] is self._rec:
                del tapes[i]
                break
        self._recording = False

    def _leaf_tangents(self):
        tangent_by_ref = {}
        for kind, key, tv in self._tangent_of:
            refs = self._rec.var_reads.get(key, ()) if kind == "var" else (key,)
            for r in refs:
                tangent_by_ref[r] = tv
        return tangent_by_ref

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The JVP of `primals` (a Tensor or a structure of them) along the tangents."""
        mode = UnconnectedGradients(unconnected_gradients)
        flat, tree = tree_flatten(primals)
        tangent_by_ref = self._leaf_tangents()
        refs = sorted(tangent_by_ref)
        out = []
        tangent_of_var = {
            key: tv for kind, key, tv in self._tangent_of if kind == "var"
        }
        for target in flat:
            if isinstance(target, Variable):  # as TF: a primal's own tangent
                tv = tangent_of_var.get(id(target))
                if tv is not None:
                    out.append(Tensor(jnp.asarray(tv)))
                elif mode is UnconnectedGradients.ZERO:
                    out.append(Tensor(jnp.zeros_like(target._read_raw())))
                else:
                    out.append(None)
                continue
            ref = self._rec.ids.get(id(target)) if type(target) is Tensor else None
            sl = program.build_program(self._rec, [ref], [[r] for r in refs])
            if ref is not None and ref in tangent_by_ref:
                out.append(Tensor(jnp.asarray(tangent_by_ref[ref])))
            elif sl.program.targets[0] >= 0 and sl.program.n_leaves:
                leaf_refs = [r for r, g in zip(refs, sl.program.groups) if g]
                out.append(backward.jvp(sl, [tangent_by_ref[r] for r in leaf_refs])[0])
            elif mode is UnconnectedGradients.ZERO:
                out.append(Tensor(jnp.zeros_like(to_value(target))))
            else:
                out.append(None)
        return tree_unflatten_like(primals, out, tree)


def _mismatch(a, b) -> type[Exception] | None:
    """TF's `nest.assert_same_structure` error class for two different structures
    (None for the same structure).

    TypeError where some container types differ (a list against a tuple),
    ValueError where the nesting, lengths or dict keys differ.
    """
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return ValueError
        kinds = {_mismatch(a[k], b[k]) for k in a} - {None}
        return ValueError if ValueError in kinds else kinds.pop() if kinds else None
    a_seq, b_seq = isinstance(a, (list, tuple)), isinstance(b, (list, tuple))
    if a_seq and b_seq:
        if len(a) != len(b):
            return ValueError
        kinds = {_mismatch(x, y) for x, y in zip(a, b)} - {None}
        if ValueError in kinds:
            return ValueError
        return TypeError if type(a) is not type(b) or kinds else None
    if a_seq or b_seq or isinstance(a, dict) or isinstance(b, dict):
        return ValueError
    return None
