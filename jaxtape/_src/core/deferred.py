"""Deferred values: op outputs a recording tape computes when asked. Layer L0.

Under a recording GradientTape, an op whose input is tracked does not run:
the tape records it as a node of its program, and the dispatcher gives it a
Tensor holding a `Pending`, the node's output not computed yet. Its shape and
dtype are known at once (`out_aval`: `jax.eval_shape`, cached per signature,
which also raises the op's shape errors at the call, as eager execution
would). The tape computes a pending value when something asks for it
(`numpy()`, printing, an op outside the tape, Python control flow) by running
the unevaluated part of its program behind it, and its backward pass computes
the forward values anyway and fills every pending one it covers: a training
step's forward and backward become one XLA program (autodiff/program.py).

TF executes eagerly op by op; the values are the same, only when they are
computed differs. `jaxtape.config.experimental.set_deferred_execution(False)`
turns it off.
"""

from __future__ import annotations

from typing import Protocol, final

import jax
import jax.core
import numpy as np
from jax._src.array import ArrayImpl  # the concrete array type (not a tracer)

from jaxtape._src.core.compile_cache import abstract_value

enabled = True  # set_deferred_execution
_avals: dict = {}  # (op, params, input avals) -> output aval, or None: run now
_MAX_AVALS = 4096
_ARRAY = ArrayImpl
_PY_SCALARS = (float, int, bool, complex)
_ABSENT = object()
_BFLOAT16 = np.dtype(jax.numpy.bfloat16)


class Owner(Protocol):
    """The recorder that owns pending values (autodiff/tape.py's `Recorder`)."""

    def evaluate(self, refs: list[int]) -> None: ...


@final
class Pending:
    """Output `ref` of the program of the tape `owner`, not computed yet.

    `owner` is the recorder that records the op (autodiff/tape.py); it fills
    `value` when asked (`force`) or when its backward pass computes it.
    """

    __slots__ = ("owner", "ref", "aval", "shape", "dtype", "value")

    def __init__(self, aval: jax.core.ShapedArray) -> None:
        # Set by the first tape that records the op; a Pending no tape owns is
        # never handed out (the dispatcher computes the op at once).
        self.owner: Owner | None = None
        self.ref = -1
        self.aval = aval
        self.shape: tuple[int, ...] = aval.shape
        self.dtype: np.dtype = aval.dtype
        self.value: jax.Array | None = None  # once computed

    @property
    def ndim(self) -> int:
        return len(self.shape)

    # A tape that lets its recording go keeps a Pending in place of its
    # Tensor (autodiff/tape.py `let_go`); these read it as the Tensor would.
    @property
    def _v(self) -> Pending:
        return self

    @property
    def _value(self) -> jax.Array:
        return self.force()

    def force(self) -> jax.Array:
        """The value, computed by the owner's program if not yet."""
        value = self.value
        if value is None:
            if self.owner is not None:
                self.owner.evaluate([self.ref])
                value = self.value
            if value is None:
                raise RuntimeError(
                    "Internal error: a pending op output that no tape computes. "
                    "Turn deferred execution off (`jaxtape.config.experimental."
                    "set_deferred_execution(False)`) and report the issue."
                )
        return value


def out_aval(info, vals, params):
    """The output aval of `info`'s op on `vals`, or None when it must run now.

    Deferred: differentiable ops (`info.deferrable`) with one floating output
    whose inputs are concrete arrays, Python scalars or Pendings.
    """
    if len(vals) == 1 and (type(vals[0]) is _ARRAY or type(vals[0]) is Pending):
        key = (info, params, vals[0].aval)  # the common unary case
    else:
        key = [info, params]
        for v in vals:
            t = type(v)
            if t is _ARRAY or t is Pending:
                key.append(v.aval)
            elif t in _PY_SCALARS:
                key.append(t)
            elif t is np.ndarray:
                key.append(abstract_value(v))
            else:
                return None  # tracers and anything unusual run now
        key = tuple(key)
    try:
        aval = _avals.get(key, _ABSENT)
    except TypeError:  # an unhashable static parameter
        return None
    if aval is _ABSENT:
        aval = _avals[key] = _eval_shape(info.fn, vals, params)
        if len(_avals) > _MAX_AVALS:
            del _avals[next(iter(_avals))]
    return aval


def _eval_shape(fn, vals, params):
    specs = [
        v
        if type(v) in _PY_SCALARS
        else jax.ShapeDtypeStruct(
            v.shape, v.dtype, weak_type=type(v) is not np.ndarray and v.aval.weak_type
        )
        for v in vals
    ]
    try:
        out = jax.eval_shape(lambda *a: fn(*a, *params), *specs)
    except Exception:  # value-dependent or failing: the eager run decides
        return None
    if not isinstance(out, jax.ShapeDtypeStruct):
        return None  # several outputs: run now
    if out.dtype.kind not in "fc" and out.dtype != _BFLOAT16:
        return None  # integer/bool outputs carry no gradient: nothing to defer
    return jax.core.ShapedArray(out.shape, out.dtype, weak_type=out.weak_type)


def set_deferred_execution(enabled: bool) -> None:
    """Whether ops recorded on a GradientTape run lazily (default True).

    With False every op runs when called, as in TF; gradients are the same,
    a training step's forward pass is slower.
    """
    globals()["enabled"] = bool(enabled)


def get_deferred_execution() -> bool:
    return enabled


def clear_shapes() -> None:
    """Forgets the cached output shapes."""
    _avals.clear()
