"""`GradientTape`, TF's public autodiff API, on the recorder and the backward cache.

Layer L3. Mirrors `tf.GradientTape`: automatic watching of trainable
variables, nested structures of targets and sources, `output_gradients`,
`unconnected_gradients`, persistent tapes, nested tapes to any order (an inner
`gradient` called while an outer tape records is one node on the outer tape),
`jacobian` and `batch_jacobian` vectorised with `jax.jacrev`.
"""

from __future__ import annotations

import contextlib
import enum
import warnings

import jax
import jax.numpy as jnp

from jaxtape._src.autodiff import backward
from jaxtape._src.autodiff.tape import Recorder
from jaxtape._src.core import context
from jaxtape._src.core.tensor import Tensor, tree_flatten
from jaxtape._src.state.variable import Variable

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


_flatten = tree_flatten


def _tf_dtype_name(dt) -> str:
    return f"tf.{dt.name}"


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
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._rec = Recorder(self._watch_accessed_variables)
        self._recording = False
        self._used = False

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
        _state.tapes.append(self._rec)
        self._recording = True

    def _pop(self) -> None:
        tapes = _state.tapes
        for i in range(len(tapes) - 1, -1, -1):
            if tapes[i] is self._rec:
                del tapes[i]
                break
        self._recording = False

    @contextlib.contextmanager
    def stop_recording(self):
        """Temporarily stops recording on this tape (ops inside are not recorded)."""
        if not self._recording:
            raise ValueError("Tape must be recording to use stop_recording.")
        self._pop()
        try:
            yield
        finally:
            self._push()

    def reset(self) -> None:
        """Clears everything recorded so far; the tape keeps recording if it was."""
        self._rec.clear()
        self._used = False

    # -- watching --------------------------------------------------------------
    def watch(self, tensor) -> None:
        """Ensures `tensor` (a Tensor, Variable, or a nested structure) is tracked."""
        leaves, _ = _flatten(tensor)
        for t in leaves:
            if isinstance(t, Variable):
                self._rec.watch_variable(t)
            elif type(t) is Tensor:
                if not (t.dtype.is_floating or t.dtype.is_complex):
                    warnings.warn(
                        "The dtype of the watched tensor must be floating (e.g. "
                        f"tf.float32), got {_tf_dtype_name(t.dtype)}",
                        GradientWarning,
                        stacklevel=2,
                    )
                self._rec.watch_tensor(t)
            else:
                raise ValueError(
                    f"Passed in object {t!r} of type {type(t).__name__!r}, not "
                    "jaxtape.Tensor or jaxtape.Variable. Convert it first with "
                    "`jaxtape.constant(...)` (and keep the returned Tensor to use in "
                    "the computation)."
                )

    def watched_variables(self) -> tuple:
        """The variables watched (explicitly or by access), in first-watch order."""
        return tuple(self._rec.variables.values())

    # -- gradients --------------------------------------------------------------
    def _begin_request(self, what: str) -> None:
        if self._used and not self._persistent:
            raise RuntimeError(_NON_PERSISTENT)
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

    def _end_request(self) -> None:
        if not self._persistent:
            self._used = True
            self._rec.clear()

    def _target_ref(self, t, what="target"):
        if isinstance(t, Variable):
            t = Tensor(t._read_raw())  # a variable as target: its value, untracked
        if type(t) is not Tensor:
            raise TypeError(
                f"GradientTape.gradient: the {what} must be a jaxtape.Tensor (or "
                f"Variable) computed while the tape recorded; got {t!r} of type "
                f"{type(t).__name__}. A Python number cannot be differentiated: "
                "compute the target with jaxtape ops from watched tensors."
            )
        if not (t.dtype.is_floating or t.dtype.is_complex):
            if t.dtype.is_integer:  # as TF: integer ops carry no gradient -> None
                return None
            raise TypeError(
                f"GradientTape.gradient: the {what} has dtype {t.dtype.name}, which is "
                "not numeric; only floating or complex targets can be differentiated. "
                "Cast it with `jaxtape.cast(x, jaxtape.float32)` before the "
                "computation, not after."
            )
        return self._rec.ids.get(id(t))

    def _source_groups(self, flat_sources):
        groups, ok = [], []
        for s in flat_sources:
            if s is None:
                raise TypeError(
                    "GradientTape.gradient: a source is None. Pass only Tensors or "
                    "Variables as sources (check for layers that were never built or "
                    "attributes that were not set)."
                )
            if isinstance(s, Variable):
                refs = list(self._rec.var_reads.get(id(s), ()))
                dt = s.dtype
            elif type(s) is Tensor:
                r = self._rec.ids.get(id(s))
                refs = [] if r is None else [r]
                dt = s.dtype
            else:
                raise TypeError(
                    f"GradientTape.gradient: sources must be Tensors or Variables; "
                    f"got {s!r} of type {type(s).__name__}. To differentiate with "
                    "respect to a Python number, make it a tensor with "
                    "`jaxtape.constant(...)` and `tape.watch` it before computing."
                )
            if not (dt.is_floating or dt.is_complex):
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
        target,
        sources,
        output_gradients=None,
        unconnected_gradients=UnconnectedGradients.NONE,
    ):
        """Computes the gradient of `target` with respect to `sources`.

        Args:
          target: a Tensor or a nested structure of Tensors; a non-scalar target
            means the gradient of its sum (or the vector-Jacobian product with
            `output_gradients`).
          sources: a Tensor, Variable or nested structure of them; the result
            has the same structure.
          output_gradients: optional cotangents, one per flat target (None
            entries mean ones).
          unconnected_gradients: `UnconnectedGradients.NONE` (None for a source
            the target does not depend on) or `.ZERO` (zeros).

        Raises:
          RuntimeError: on a second call of a non-persistent tape.
        """
        mode = self._check_unconnected(unconnected_gradients)
        self._begin_request("gradient")
        flat_targets, _ = _flatten(target)
        flat_sources, src_tree = _flatten(sources)
        target_refs = [self._target_ref(t) for t in flat_targets]
        groups, float_ok = self._source_groups(flat_sources)
        ct_objs, ct_given = self._output_gradients(
            output_gradients, flat_targets, target_refs
        )
        sl = backward.build_program(self._rec, target_refs, groups)
        connected = [c and ok for c, ok in zip(sl.connected, float_ok)]
        results = []
        if any(connected) and any(t >= 0 for t in sl.program.targets):
            results = backward.vjp(sl, ct_objs, ct_given)
        out, it = [], iter(results)
        for s, conn, g in zip(flat_sources, connected, sl.program.groups):
            if conn and g:
                out.append(next(it))
            elif mode is UnconnectedGradients.ZERO:
                out.append(Tensor(jnp.zeros(s.shape, s.dtype.as_numpy_dtype)))
            else:
                out.append(None)
        self._end_request()
        return jax.tree_util.tree_unflatten(src_tree, out)

    def _output_gradients(self, output_gradients, flat_targets, target_refs):
        if output_gradients is None:
            grads = [None] * len(flat_targets)
        else:
            grads, _ = _flatten(output_gradients)
            if len(grads) != len(flat_targets):
                raise ValueError(
                    f"output_gradients has {len(grads)} entries but there are "
                    f"{len(flat_targets)} targets; give one per target (None for ones)."
                )
        # Only connected targets (those the slice replays) take a cotangent.
        objs, given = [], []
        for ref, g in zip(target_refs, grads):
            if ref is None:
                continue
            given.append(g is not None)
            if g is not None:
                objs.append(g if type(g) is Tensor else _as_value(g))
        return objs, tuple(given)

    def jacobian(
        self,
        target,
        sources,
        unconnected_gradients=UnconnectedGradients.NONE,
        parallel_iterations=None,
        experimental_use_pfor=True,
    ):
        """The Jacobian of `target` w.r.t. each source (`target.shape + source.shape`).

        Vectorised with `jax.jacrev` (no Python loop over rows).
        """
        return self._jacobian(target, sources, unconnected_gradients, batch=False)

    def batch_jacobian(
        self,
        target,
        source,
        unconnected_gradients=UnconnectedGradients.NONE,
        parallel_iterations=None,
        experimental_use_pfor=True,
    ):
        """Per-example Jacobians: `[b, *target.shape[1:], *source.shape[1:]]`.

        Assumes, as TF does, that example i of `target` depends only on example i
        of `source`; computed as the Jacobian of the batch sum (one `jacrev`).
        """
        if (
            type(target) is Tensor
            and type(source) in (Tensor, Variable)
            and (target.shape[:1] != source.shape[:1])
        ):
            raise ValueError(
                f"batch_jacobian: target and source need the same first (batch) "
                f"dimension; got target shape {target.shape} and source shape "
                f"{source.shape}."
            )
        return self._jacobian(target, source, unconnected_gradients, batch=True)

    def _jacobian(self, target, sources, unconnected_gradients, batch):
        mode = self._check_unconnected(unconnected_gradients)
        self._begin_request("jacobian")
        ref = self._target_ref(target)
        flat_sources, src_tree = _flatten(sources)
        groups, float_ok = self._source_groups(flat_sources)
        sl = backward.build_program(self._rec, [ref], groups)
        connected = [c and ok for c, ok in zip(sl.connected, float_ok)]
        results = backward.jacobian(sl, batch) if any(connected) else []
        out, it = [], iter(results)
        for s, conn, g in zip(flat_sources, connected, sl.program.groups):
            if conn and g:
                out.append(next(it))
            elif mode is UnconnectedGradients.ZERO:
                shape = (
                    tuple(target.shape) + tuple(s.shape)[1:]
                    if batch
                    else tuple(target.shape) + tuple(s.shape)
                )
                out.append(Tensor(jnp.zeros(shape, s.dtype.as_numpy_dtype)))
            else:
                out.append(None)
        self._end_request()
        return jax.tree_util.tree_unflatten(src_tree, out)


def _as_value(g):
    from jaxtape._src.core.dispatch import to_value

    return to_value(g)
