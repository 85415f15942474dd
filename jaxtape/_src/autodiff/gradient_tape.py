"""`GradientTape`, TF's public autodiff API, on the recorder and the backward cache.

Layer L3. Mirrors `tf.GradientTape`: automatic watching of trainable
variables, nested structures of targets and sources, `output_gradients`,
`unconnected_gradients`, persistent tapes, nested tapes to any order (an inner
`gradient` called while an outer tape records is one node on the outer tape),
`jacobian` and `batch_jacobian` vectorised with `jax.jacrev`.

As TF's, a tape holds its recording (a `Recorder`) from the moment it is first
entered; a non-persistent tape drops it after one `gradient`/`jacobian` (and
can be entered again for a fresh one), `reset` replaces it.
"""

from __future__ import annotations

import contextlib
import enum
import math
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import jax.numpy as jnp
import numpy as np

from jaxtape._src.autodiff import backward, program
from jaxtape._src.autodiff.tape import Recorder, watches_reads_of
from jaxtape._src.core import context, errors
from jaxtape._src.core.tensor import (
    Tensor,
    nest_flatten,
    tree_flatten,
    tree_unflatten_like,
)
from jaxtape._src.ops.array_ops import broadcast_to, concat, reshape
from jaxtape._src.ops.math_ops import cast
from jaxtape._src.ops.misc_ops import IndexedSlices
from jaxtape._src.state.variable import Variable, live_variables

if TYPE_CHECKING:
    from jaxtape._src.core.typing import Nested, TensorLike

_state = context.state


class UnconnectedGradients(enum.Enum):
    """What `gradient` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


class GradientWarning(UserWarning):
    """A TF warning about a gradient request (integer source, inefficient call)."""


_NON_PERSISTENT = (
    "A non-persistent GradientTape can only be used to compute one set "
    "of gradients (or jacobians)"
)
_NEVER_ENTERED = (
    _NON_PERSISTENT + ". This tape was never entered, so it recorded nothing: "
    "compute the target inside `with tape:` first (create the tape with "
    "`persistent=True` to ask for several sets of gradients)."
)


_flatten = tree_flatten


def _tf_dtype_name(dt) -> str:
    return f"tf.{dt.name}"


def _differentiable(dt) -> bool:
    return dt.is_floating or dt.is_complex


class GradientTape:
    """Records operations for automatic differentiation (TF's `tf.GradientTape`).

    >>> x = jaxtape.constant(3.0)
    >>> with jaxtape.GradientTape() as g:
    ...     g.watch(x)
    ...     y = x * x
    >>> g.gradient(y, x)
    <jaxtape.Tensor: shape=(), dtype=float32, numpy=6.0>

    Differences from TensorFlow: the backward pass replays the recorded slice
    under `jax.vjp`; from the second time a slice of the same structure is
    seen, that backward is one compiled XLA call (`jaxtape.autodiff.cache_stats()`).
    Gradients are dense Tensors (TF gives `IndexedSlices` for gathers).
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        # TF's `_tape`: None until first entered, and again after a
        # non-persistent request (entering again starts a fresh recording).
        self._rec: Recorder | None = None
        self._recording = False
        self._watched: dict = {}  # the variables of the last dropped recording
        self._released = False  # a non-persistent request dropped a recording

    # -- context ---------------------------------------------------------------
    def __enter__(self) -> GradientTape:
        self._push()
        return self

    def __exit__(self, *exc) -> None:
        if self._recording:
            self._pop()

    def _push(self) -> None:
        if self._recording:
            raise ValueError(
                "Tape is still recording, This can happen if you try to "
                "re-enter an already-active tape."
            )
        if self._rec is None:
            self._rec = Recorder(self._watch_accessed_variables)
        _state.tapes.append(self._rec)
        self._recording = True

    def _pop(self) -> None:
        if not self._recording:
            raise ValueError(
                "Tape is not recording. Call this inside the tape's `with` block."
            )
        tapes = _state.tapes
        for i in range(len(tapes) - 1, -1, -1):
            if tapes[i] is self._rec:
                del tapes[i]
                break
        self._recording = False

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Temporarily stops recording on this tape (ops inside are not recorded).

        Raises:
          RuntimeError: if the tape holds no recording (never entered, or a
            non-persistent tape after its gradient), as in TF.
          ValueError: if the tape is not recording (outside its `with` block).
        """
        if self._rec is None:
            raise RuntimeError(
                "Trying to stop recording a tape which is not recording. Use "
                "`stop_recording()` inside the tape's `with` block, before a "
                "non-persistent tape computes its gradient."
            )
        self._pop()
        try:
            yield
        finally:
            self._push()

    def reset(self) -> None:
        """Clears everything recorded so far; the tape goes on recording.

        As TF's: the same as leaving the `with` block and entering a new tape.

        Raises:
          ValueError: outside the tape's `with` block ("Tape is not recording").
        """
        self._pop()
        if self._rec is not None:
            self._rec.release()
        self._rec = None
        self._push()

    # -- watching --------------------------------------------------------------
    def watch(self, tensor: Nested[Tensor | Variable]) -> None:
        """Ensures `tensor` (a Tensor, Variable, or a nested structure) is tracked."""
        leaves, _ = _flatten(tensor)
        rec = self._rec
        for t in leaves:
            if isinstance(t, Variable):
                if not _differentiable(t.dtype):
                    self._warn_watched_dtype(t.dtype)
                if rec is None:
                    raise self._not_entered("watch")
                rec.watch_variable(t)
            elif type(t) is Tensor:
                if not _differentiable(t.dtype):
                    self._warn_watched_dtype(t.dtype)
                if rec is None:
                    raise self._not_entered("watch")
                rec.watch_tensor(t)
            else:
                raise ValueError(
                    f"Passed in object {t!r} of type {type(t).__name__!r}, not "
                    "jaxtape.Tensor or jaxtape.Variable. Convert it first with "
                    "`jaxtape.constant(...)` (and keep the returned Tensor to use in "
                    "the computation)."
                )

    @staticmethod
    def _warn_watched_dtype(dtype) -> None:
        warnings.warn(
            "The dtype of the watched tensor must be floating (e.g. tf.float32), "
            f"got {_tf_dtype_name(dtype)}",
            GradientWarning,
            stacklevel=3,
        )

    @staticmethod
    def _not_entered(what) -> RuntimeError:
        return RuntimeError(
            f"GradientTape.{what} was called on a tape that holds no recording: "
            "it was never entered, or it is non-persistent and already computed "
            "its gradient. Call it inside the `with GradientTape() as tape:` block."
        )

    def watched_variables(self) -> tuple:
        """The variables this tape watches (explicitly or by access), as TF's.

        In the order the variables were created (not the order they were
        read), trainable integer and boolean variables included (they are
        watched; their gradients are None). After a non-persistent tape's
        gradient, those of the recording it used.
        """
        if self._rec is not None:
            self._watched = self._rec.variables
        return _in_creation_order(self._watched)

    # -- gradients --------------------------------------------------------------
    def _no_recording(self) -> RuntimeError:
        # TF's text exactly after a request (the pitfall users search for)
        return RuntimeError(_NON_PERSISTENT if self._released else _NEVER_ENTERED)

    def _begin_request(self, what: str) -> Recorder:
        rec = self._rec
        if rec is None:
            raise self._no_recording()
        if self._recording:
            if not self._persistent:
                self._pop()  # as TF: a non-persistent tape stops recording here
            else:
                warnings.warn(
                    f"Calling GradientTape.{what} on a persistent tape inside its "
                    "context is significantly less efficient than calling it outside "
                    "the context (it causes the gradient ops to be recorded on the "
                    "tape, leading to increased CPU and memory usage). Only call "
                    f"GradientTape.{what} inside the context if you actually want to "
                    "trace the gradient in order to compute higher order derivatives.",
                    GradientWarning,
                    stacklevel=3,
                )
        return rec

    def _end_request(self, rec: Recorder) -> None:
        """After a request on `rec` (`_begin_request`'s): a non-persistent tape
        lets its recording go."""
        if not self._persistent:
            self._watched = rec.variables
            rec.release()  # computes what it left pending
            self._rec = None  # releases the recording; entering again starts anew
            self._released = True

    def _target_ref(self, rec, t, what="target"):
        """The target's ref on `rec`; None for a target that carries no gradient."""
        if type(t) is not Tensor:
            if isinstance(t, Variable):
                return None  # its own value: see `_identity_grads`
            raise TypeError(
                f"GradientTape.gradient: the {what} must be a jaxtape.Tensor (or "
                f"Variable) computed while the tape recorded; got {t!r} of type "
                f"{type(t).__name__}. A Python number cannot be differentiated: "
                "compute the target with jaxtape ops from watched tensors."
            )
        if not _differentiable(t.dtype):
            return None  # as TF: integer and bool targets carry no gradient
        return rec.ids.get(id(t))

    def _source_groups(self, rec, flat_sources):
        groups, ok = [], []
        for s in flat_sources:
            if s is None:
                raise TypeError(
                    "GradientTape.gradient: a source is None. Pass only Tensors or "
                    "Variables as sources (check for layers that were never built or "
                    "attributes that were not set)."
                )
            if isinstance(s, Variable):
                refs = list(rec.var_reads.get(id(s), ()))
                dt = s.dtype
            elif type(s) is Tensor:
                r = rec.ids.get(id(s))
                refs = [] if r is None else [r]
                dt = s.dtype
            else:
                raise TypeError(
                    f"GradientTape.gradient: sources must be Tensors or Variables; "
                    f"got {s!r} of type {type(s).__name__}. To differentiate with "
                    "respect to a Python number, make it a tensor with "
                    "`jaxtape.constant(...)` and `tape.watch` it before computing."
                )
            if not _differentiable(dt):
                warnings.warn(
                    "The dtype of the source tensor must be floating (e.g. tf.float32) "
                    f"when calling GradientTape.gradient, got {_tf_dtype_name(dt)}",
                    GradientWarning,
                    stacklevel=3,
                )
                refs = []
                ok.append(False)
            else:
                ok.append(True)
            groups.append(refs)
        return groups, ok

    @staticmethod
    def _check_unconnected(unconnected_gradients) -> UnconnectedGradients:
        try:
            return UnconnectedGradients(unconnected_gradients)
        except ValueError:
            raise ValueError(
                f"Unknown value for unconnected_gradients: {unconnected_gradients!r}. "
                "Use jaxtape.UnconnectedGradients.NONE or .ZERO ('none' / 'zero')."
            ) from None

    def gradient(
        self,
        target: Nested[Tensor | Variable],
        sources: Nested[Tensor | Variable],
        output_gradients: Nested[TensorLike | None] | None = None,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
    ) -> Any:
        """Computes the gradient of `target` with respect to `sources`.

        Args:
          target: a Tensor or a nested structure of Tensors; a non-scalar target
            means the gradient of its sum (or the vector-Jacobian product with
            `output_gradients`). Integer and boolean targets carry no gradient.
            A Variable as target is its own value: its gradient with respect
            to itself is one, as in TF.
          sources: a Tensor, Variable or nested structure of them; the result
            has the same structure (lists, tuples, namedtuples, and every
            dict's own key order, as TF's `nest`).
          output_gradients: optional cotangents, one per flat target (flattened
            as TF's `nest` does: dicts, OrderedDicts included, in sorted key order).
          unconnected_gradients: `UnconnectedGradients.NONE` (None for a source
            the target does not depend on) or `.ZERO` (zeros).

        Raises:
          RuntimeError: on a tape never entered, or a second call of a
            non-persistent tape.
          TypeError: if `target` is None.
        """
        mode = self._check_unconnected(unconnected_gradients)
        rec = self._begin_request("gradient")
        if target is None:
            raise TypeError(
                "Argument `target` should be a list or nested structure of Tensors, "
                "Variables or CompositeTensors to be differentiated, but received "
                "None. Pass the value computed on the tape (e.g. the loss)."
            )
        flat_targets = nest_flatten(target)
        flat_sources, src_tree = _flatten(sources)
        target_refs = [self._target_ref(rec, t) for t in flat_targets]
        groups, float_ok = self._source_groups(rec, flat_sources)
        # Sources read only as gathered rows: their gradient is an
        # IndexedSlices of the gathered rows' gradients, as TF's.
        rows = _row_gathers(rec, groups, target_refs) if rec.row_gathers else {}
        row_groups: dict[int, list[int]] = {}
        for i, uses in rows.items():
            groups[i] = []
            row_groups[i] = list(range(len(groups), len(groups) + len(uses)))
            groups.extend([out_ref] for out_ref, _ in uses)
            float_ok.extend([True] * len(uses))
        cts = self._output_gradients(output_gradients, flat_targets)
        ct_objs, ct_given = [], []
        for i, (t, ref, ct) in enumerate(zip(flat_targets, target_refs, cts)):
            if ref is not None:  # only replayed targets take a cotangent
                ct_given.append(ct is not None)
                if ct is not None:
                    ct_objs.append(_checked_cotangent(i, ct, t))
        sl = program.build_program(rec, target_refs, groups)
        connected = [c and ok for c, ok in zip(sl.connected, float_ok)]
        results = []
        if any(connected) and any(t >= 0 for t in sl.program.targets):
            if not self._persistent:  # its one request: only held values matter
                held = rec.let_go()
                sl.pending = tuple(p for p in sl.pending if p[2] in held)
            results = backward.vjp(sl, ct_objs, tuple(ct_given))
        extra = (
            _identity_grads(flat_targets, target_refs, cts, flat_sources)
            if None in target_refs
            else None
        )
        it = iter(results)
        grads: list[Any] = [
            next(it) if c and g else None for c, g in zip(connected, sl.program.groups)
        ]
        for i, uses in rows.items():
            parts = [(grads[j], idx) for j, (_, idx) in zip(row_groups[i], uses)]
            grads[i] = _indexed_slices(flat_sources[i], parts)
        out = []
        for i, s in enumerate(flat_sources):
            grad = grads[i]
            if extra and i in extra:
                if isinstance(grad, IndexedSlices):
                    grad = grad.to_dense()
                grad = extra[i] if grad is None else grad + extra[i]
            if grad is None and mode is UnconnectedGradients.ZERO:
                grad = Tensor(jnp.zeros(s.shape, s.dtype.as_numpy_dtype))
            out.append(grad)
        self._end_request(rec)
        return tree_unflatten_like(sources, out, src_tree)

    @staticmethod
    def _output_gradients(output_gradients, flat_targets) -> list:
        """One cotangent (or None: ones) per flat target."""
        if output_gradients is None:
            return [None] * len(flat_targets)
        grads = nest_flatten(output_gradients)
        if len(grads) != len(flat_targets):
            raise ValueError(
                f"output_gradients has {len(grads)} entries but there are "
                f"{len(flat_targets)} targets; give one per target."
            )
        for i, g in enumerate(grads):
            if g is None:
                raise ValueError(
                    "Attempt to convert a value (None) with an unsupported type "
                    f"(<class 'NoneType'>) to a Tensor: output_gradients[{i}] is None "
                    "(TF accepts no None here). Pass `jaxtape.ones_like(target)` for "
                    "a target whose gradient is not weighted."
                )
        return grads

    def jacobian(
        self,
        target: Tensor | Variable,
        sources: Nested[Tensor | Variable],
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
        parallel_iterations: int | None = None,
        experimental_use_pfor: bool = True,
    ) -> Any:
        """The Jacobian of `target` w.r.t. each source (`target.shape + source.shape`).

        Vectorised with `jax.jacrev` (no Python loop over rows). The result has
        the structure of `sources`, as `gradient`'s.

        Differences from TensorFlow: `parallel_iterations` and
        `experimental_use_pfor` only choose how TF computes the same result; here
        the computation is always one vectorised `jax.jacrev`, so they change
        nothing (except that `experimental_use_pfor=False` needs a persistent
        tape, as in TF).
        """
        self._check_loop_request("jacobian", experimental_use_pfor)
        return self._jacobian(target, sources, unconnected_gradients, batch=False)

    def batch_jacobian(
        self,
        target: Tensor | Variable,
        source: Tensor | Variable,
        unconnected_gradients: UnconnectedGradients | str = UnconnectedGradients.NONE,
        parallel_iterations: int | None = None,
        experimental_use_pfor: bool = True,
    ) -> Tensor | None:
        """Per-example Jacobians: `[b, *target.shape[1:], *source.shape[1:]]`.

        Assumes, as TF does, that example i of `target` depends only on example i
        of `source`; computed as the Jacobian of the batch sum (one `jacrev`).
        As in TF, an unconnected source gives zeros whatever
        `unconnected_gradients` says.

        Differences from TensorFlow: see `jacobian` for `parallel_iterations`
        and `experimental_use_pfor`.
        """
        if self._rec is None:
            raise self._no_recording()
        t_shape, s_shape = target.shape, source.shape
        for shape in (t_shape, s_shape):
            if len(shape) < 2:
                raise ValueError(
                    f"Shape {shape} must have rank at least 2: batch_jacobian takes "
                    "a batch of examples [b, ...]; use `jacobian` for one example."
                )
        if t_shape[0] != s_shape[0]:
            raise ValueError(
                f"Need first dimension of target shape ({t_shape}) and source shape "
                f"({s_shape}) to match: both are the batch dimension."
            )
        self._check_loop_request("batch_jacobian", experimental_use_pfor)
        return self._jacobian(target, source, unconnected_gradients, batch=True)

    def _check_loop_request(self, what, experimental_use_pfor) -> None:
        if self._rec is None:
            raise self._no_recording()
        if not experimental_use_pfor and not self._persistent:
            raise RuntimeError(
                f"GradientTape must be created with persistent=True to compute the "
                f"{what} with eager execution enabled and with experimental_use_pfor "
                "set to False."
            )

    def _jacobian(self, target, sources, unconnected_gradients, batch):
        mode = self._check_unconnected(unconnected_gradients)
        rec = self._begin_request("jacobian")
        ref = self._target_ref(rec, target)
        flat_sources, src_tree = _flatten(sources)
        groups, float_ok = self._source_groups(rec, flat_sources)
        sl = program.build_program(rec, [ref], groups)
        connected = [c and ok for c, ok in zip(sl.connected, float_ok)]
        results = backward.jacobian(sl, batch) if any(connected) else []
        out, it = [], iter(results)
        t_shape = tuple(target.shape)
        for s, conn, g in zip(flat_sources, connected, sl.program.groups):
            if conn and g:
                out.append(next(it))
                continue
            shape = t_shape + tuple(s.shape)[1 if batch else 0 :]
            if s is target and isinstance(s, Variable) and watches_reads_of(rec, s):
                # TF reads the variable on the tape: its Jacobian is the identity
                out.append(_identity_jacobian(s, batch))
            elif batch:  # TF: zeros whatever `unconnected_gradients` says
                out.append(Tensor(jnp.zeros(shape, target.dtype.as_numpy_dtype)))
            elif mode is UnconnectedGradients.ZERO:
                out.append(Tensor(jnp.zeros(shape, s.dtype.as_numpy_dtype)))
            else:
                out.append(None)
        self._end_request(rec)
        return tree_unflatten_like(sources, out, src_tree)


def _checked_cotangent(i, ct, target):
    """`output_gradients[i]` for `target`: its dtype, broadcast to its shape.

    As TF: a Python float is float32, an int int32; a dtype other than the
    target's is an error (TF fails in the gradient op), a shape that
    broadcasts to the target's is broadcast.
    """
    value = ct._v if type(ct) is Tensor else _as_value(ct)
    want = target.dtype.as_numpy_dtype
    if value.dtype != want:
        raise errors.invalid_argument(
            f"output_gradients[{i}] has dtype {value.dtype.name} but its target has "
            f"dtype {target.dtype.name}; they must match. Cast it with "
            f"`jaxtape.cast(..., jaxtape.{target.dtype.name})`.",
            "GradientTape.gradient",
        )
    shape = tuple(target.shape)
    if tuple(value.shape) == shape:
        return ct if type(ct) is Tensor else value
    try:
        ok = np.broadcast_shapes(value.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise errors.invalid_argument(
            f"Incompatible shapes: output_gradients[{i}] has shape "
            f"{tuple(value.shape)} but its target has shape {shape}; give one "
            "cotangent of the target's shape.",
            "GradientTape.gradient",
        )
    return broadcast_to(ct if type(ct) is Tensor else Tensor(value), shape)


# Ops an `IndexedSlices` gradient passes through, as TF's (`_CastGrad`, and
# `Identity`'s): a mixed precision layer's weight is cast, then gathered.
_PASS_THROUGH = frozenset({"Cast", "Identity"})


def _row_gathers(rec, groups, target_refs) -> dict[int, list]:
    """The sources (index -> `[(gathered rows' ref, indices)]`, in recording
    order) that reach the targets only as the first input of row gathers
    (`gather` on axis 0, `embedding_lookup`, Keras's `Embedding`), directly
    or through a `cast`: TF gives them `IndexedSlices` gradients. A source
    that also reaches them any other way, or is a target itself, has a dense
    gradient (TF's sum of the two is dense too)."""
    gathered, nodes, born = rec.row_gathers, rec.nodes, rec.born
    through: dict[int, int] = {}  # a cast's output -> its input, when gathered
    for p in gathered:
        if p >= 0:
            k = born[p]
            if k < len(nodes) and nodes[k][0].name in _PASS_THROUGH:
                if nodes[k][3] == (p,) and nodes[k][2][0] >= 0:
                    through[p] = nodes[k][2][0]
    owners: dict[int, list[int]] = {}
    cast_inputs = set(through.values())
    for i, refs in enumerate(groups):
        if any(r in gathered or r in cast_inputs for r in refs):
            for r in refs:
                owners.setdefault(r, []).append(i)
    if not owners:
        return {}
    transparent = set()  # the cast nodes between a source and its gathers
    for p, r in through.items():
        if r in owners:
            owners[p] = owners[r]
            transparent.add(born[p])
    dense: set[int] = set()
    for t in target_refs:
        dense.update(owners.get(t, ()))
    uses: dict[int, list] = {}
    gather_nodes = {k: r for r, ks in gathered.items() for k in ks}
    need = bytearray(len(rec.tensors))  # refs on a path to a target
    for t in target_refs:
        if t is not None:
            need[t] = 1
    for k in range(len(nodes) - 1, min(born[r] for r in owners) - 1, -1):
        ins, outs = nodes[k][2], nodes[k][3]
        if not any(o >= 0 and need[o] for o in outs):
            continue
        for pos, r in enumerate(ins):
            if r < 0:
                continue
            need[r] = 1
            found = owners.get(r)
            if found is None or k in transparent:
                continue
            if pos == 0 and gather_nodes.get(k) == r:
                idx = ins[1]
                idx = rec.consts[~idx] if idx < 0 else rec.tensors[idx]
                for i in found:
                    uses.setdefault(i, []).append((outs[0], idx))
            else:
                dense.update(found)
    return {i: u[::-1] for i, u in uses.items() if i not in dense}


def _indexed_slices(source, parts) -> IndexedSlices | None:
    """TF's `IndexedSlices` gradient of `source` from its gathers' parts
    (rows' gradient, indices): values and indices flattened to rows and
    concatenated in recording order, `dense_shape` int32 as TF's."""
    row = tuple(source.shape)[1:]
    values, indices = [], []
    for ct, idx in parts:
        if ct is not None:
            if ct.dtype != source.dtype:  # (gathered after a cast: TF's _CastGrad)
                ct = cast(ct, source.dtype)
            values.append(reshape(ct, (-1, *row)))
            indices.append(reshape(idx, (-1,)))
    if not values:
        return None
    if len(values) > 1:
        values, indices = [concat(values, 0)], [concat(indices, 0)]
    # (NumPy: a known value while jaxtape.function traces, as TF's static shape.)
    dense_shape = np.asarray(tuple(source.shape), np.int32)
    return IndexedSlices(values[0], indices[0], dense_shape)


def _identity_grads(flat_targets, target_refs, cts, flat_sources) -> dict:
    """Gradients of untracked targets that are themselves sources: their cotangent.

    As TF: `tape.gradient(v, v)` for a Variable `v` (or an untracked tensor)
    is ones, and `tape.gradient([loss, v], v)` is `dloss/dv + 1`. Tracked
    tensors are handled by the replay (a source that is also a target).
    """
    extra: dict = {}
    for k, (t, ref, ct) in enumerate(zip(flat_targets, target_refs, cts)):
        if ref is not None:
            continue
        for i, s in enumerate(flat_sources):
            if s is t:
                if ct is None:
                    g = Tensor(jnp.ones(t.shape, t.dtype.as_numpy_dtype))
                else:
                    g = _checked_cotangent(k, ct, t)
                    g = g if isinstance(g, Tensor) else Tensor(g)
                extra[i] = g if i not in extra else extra[i] + g
    return extra


def _identity_jacobian(v, batch: bool) -> Tensor:
    shape = tuple(v.shape)
    np_dt = v.dtype.as_numpy_dtype
    if not batch:
        n = math.prod(shape)
        return Tensor(jnp.eye(n, dtype=np_dt).reshape(shape + shape))
    b, rest = shape[0], shape[1:]
    n = math.prod(rest)
    eye = jnp.broadcast_to(jnp.eye(n, dtype=np_dt), (b, n, n))
    return Tensor(eye.reshape((b,) + rest + rest))


def _in_creation_order(variables: dict) -> tuple:
    """`variables` (id -> Variable) sorted as TF sorts watched variables."""
    if len(variables) < 2:
        return tuple(variables.values())
    rank = {id(v): i for i, v in enumerate(live_variables())}
    late = len(rank)  # variable-likes outside the registry: after, as watched
    return tuple(sorted(variables.values(), key=lambda v: rank.get(id(v), late)))


def _as_value(g):
    from jaxtape._src.core.dispatch import to_value

    return to_value(g)


def _eager_vjp(fn, inputs: list, cotangents: list) -> list:
    """`py_function`'s gradient inside a compiled program (`context.hooks`):
    `fn(*inputs)` run again eagerly under a tape, pulled back with the
    cotangents; zeros for inputs it does not depend on."""
    with GradientTape() as tape:
        for x in inputs:
            tape.watch(x)
        outputs = fn(*inputs)
    return tape.gradient(
        outputs,
        inputs,
        output_gradients=cotangents,
        unconnected_gradients=UnconnectedGradients.ZERO,
    )


context.hooks.eager_vjp = _eager_vjp
