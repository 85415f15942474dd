"""The Keras `Metric` base class and the reduction metrics. Layer L4.

A metric's state is a few non-trainable Variables. `update_state` runs a pure
jnp update (`_update(static, state, y_true, y_pred, sample_weight) -> state`),
jit-compiled per input shape, and assigns the new values; `result` is a pure
function of the state. Tapes never record metric updates (they carry no
gradient in TF either). Under `jaxtape.function` the same update is traced
into the caller's program (its Variables are lifted like any other).
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import context, dtypes
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.state.module import Module, _camel_to_snake, name_scope
from jaxtape._src.state.scope import creating_state
from jaxtape._src.state.variable import (
    Variable,
    VariableAggregation,
    VariableSynchronization,
)

if TYPE_CHECKING:
    from jaxtape._src.core.typing import DTypeLike


def _raw(x):
    if x is None:
        return None
    v = to_value(x)
    return jnp.asarray(v)


def _shape(x) -> tuple:
    if type(x) is Tensor:
        return tuple(x._v.shape)
    return tuple(x.shape) if hasattr(x, "shape") else tuple(np.shape(x))


_uids: collections.Counter = collections.Counter()


def _unique_name(base: str) -> str:
    n = _uids[base]
    _uids[base] += 1
    return base if n == 0 else f"{base}_{n}"


def reset_uids() -> None:
    """Forgets the numbered names given so far (`keras.backend.clear_session`)."""
    _uids.clear()


@functools.lru_cache(maxsize=256)
def _jitted(fn, static):
    """One compiled function per (pure function, metric configuration)."""
    return jax.jit(functools.partial(fn, static))


class Metric(Module):
    """Base class: subclasses define `_init_state`, `_update` and `_result`.

    `_update` and `_result` are pure functions of arrays (static per metric
    configuration, so the compiled update is shared by equal metrics). A
    metric whose state's shape depends on the data (Keras builds it on the
    first batch: `F1Score`, `R2Score`) sets `_LAZY` and receives the first
    batch's shapes in `_init_state(y_true_shape, y_pred_shape)`.
    """

    _DEFAULT_NAME: str | None = None  # Keras's name; None: the class's, numbered
    _LAZY = False
    # `_init_state(self, *first_batch_shapes) -> [(name, initial array)]`:
    _init_state: Callable[..., list]
    # The pure functions subclasses define (staticmethods, positional):
    # `_update(static, state, *inputs) -> new state`, `_result(static, state)`.
    _update: Callable[..., tuple]
    _result: Callable[..., Any]

    def __init__(self, dtype: DTypeLike | None = None, name: str | None = None) -> None:
        if name is None:  # Keras's auto_name: `auc`, `auc_1`, ...
            name = self._DEFAULT_NAME or _unique_name(
                _camel_to_snake(type(self).__name__)
            )
        super().__init__(name=name)
        self._dtype = np.dtype(dtypes.np_dtype(dtype or "float32"))
        self._state_vars: list[Variable] = []
        self._initial: list = []
        if not self._LAZY:
            self._make_state(self._init_state())

    def _make_state(self, pairs) -> None:
        # Concrete even when made while jaxtape.function traces (Keras builds
        # compiled metrics on the first batch).
        with context.paused_tapes(), name_scope(self.name), creating_state():
            for var_name, value in pairs:
                v = Variable(  # (Keras 3's metric state: summed across replicas)
                    value,
                    trainable=False,
                    name=var_name,
                    synchronization=VariableSynchronization.ON_READ,
                    aggregation=VariableAggregation.SUM,
                )
                self._state_vars.append(v)
        # The initial arrays, kept for `reset_state` (no host copy per reset).
        self._initial = [v._value for v in self._state_vars]

    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, value: str) -> None:  # Keras renames compiled metrics
        self._name = value

    @property
    def dtype(self):
        return dtypes.as_dtype(self._dtype)

    @property
    def variables(self) -> tuple:
        return tuple(self._state_vars)

    def _static(self) -> tuple:
        """The hashable configuration the pure functions depend on."""
        return ()

    def update_state(self, *args: Any, **kwargs: Any) -> None:
        """Accumulates statistics from one batch.

        Keras's signature: each metric names its own arguments; the built-in
        ones here take `(y_true, y_pred=None, sample_weight=None)`.
        """
        self._update_state(*args, **kwargs)

    def _update_state(self, y_true, y_pred=None, sample_weight=None) -> None:
        if self._LAZY and not self._state_vars:
            self._make_state(self._init_state(_shape(y_true), _shape(y_pred)))
        self._apply(type(self)._update, self._static(), y_true, y_pred, sample_weight)

    def _apply(self, update, static, *args):
        state = tuple(v._read_raw() for v in self._state_vars)
        fn = _jitted(update, static)
        new = fn(state, *[_raw(a) for a in args])
        for v, value in zip(self._state_vars, new):
            v.assign(value.astype(v._value.dtype))

    def result(self) -> Any:  # (a Tensor here; Keras's may return structures)
        if self._LAZY and not self._state_vars:
            raise ValueError(
                f"{type(self).__name__} {self.name!r} has no state yet: its state "
                "is built on the first batch. Call `update_state` first."
            )
        state = tuple(v._read_raw() for v in self._state_vars)
        fn = _jitted(type(self)._result, self._static())
        return Tensor(fn(state))

    def reset_state(self) -> None:
        for v, value in zip(self._state_vars, self._initial):
            v.assign(value)

    reset_states = reset_state

    def __call__(self, *args, **kwargs):
        with context.paused_tapes():
            self.update_state(*args, **kwargs)
            return self.result()

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self._dtype.name}

    @classmethod
    def from_config(cls, cfg):
        return cls(**cfg)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


def _weights_like(values, sample_weight):
    if sample_weight is None:
        return jnp.ones_like(values)
    w = sample_weight.astype(values.dtype)
    while w.ndim > values.ndim and w.shape[-1] == 1:
        w = w[..., 0]
    while w.ndim < values.ndim:
        w = w[..., None]
    return jnp.broadcast_to(w, values.shape)


def _safe_div(a, b):
    return jnp.where(b == 0, 0.0, a / jnp.where(b == 0, 1.0, b)).astype(a.dtype)


class Mean(Metric):
    """The weighted mean of the values seen (`total / count`)."""

    _DEFAULT_NAME = "mean"

    def __init__(self, name: str | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__(dtype=dtype, name=name)  # (Keras's order: name first)

    def _init_state(self):
        z = np.zeros((), self._dtype)
        return [("total", z), ("count", z)]

    @staticmethod
    def _update(static, state, values, _unused, sample_weight, /):
        total, count = state
        values = values.astype(total.dtype)
        w = _weights_like(values, sample_weight)
        return total + jnp.sum(values * w), count + jnp.sum(w)

    @staticmethod
    def _result(static, state):
        return _safe_div(*state)

    def update_state(self, values, sample_weight=None) -> None:
        self._update_state(values, None, sample_weight)


class Sum(Metric):
    """The weighted sum of the values seen."""

    _DEFAULT_NAME = "sum"

    def __init__(self, name: str | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__(dtype=dtype, name=name)  # (Keras's order: name first)

    def _init_state(self):
        return [("total", np.zeros((), self._dtype))]

    @staticmethod
    def _update(static, state, values, _unused, sample_weight):
        values = values.astype(state[0].dtype)
        return (state[0] + jnp.sum(values * _weights_like(values, sample_weight)),)

    @staticmethod
    def _result(static, state):
        return state[0]

    def update_state(self, values, sample_weight=None) -> None:
        self._update_state(values, None, sample_weight)


class MeanMetricWrapper(Mean):
    """The mean of `fn(y_true, y_pred, **kwargs)` over the samples seen (Keras's).

    A built-in `fn` (a jnp function, or a jaxtape function carrying one as
    `_jnp_body`) runs inside the one compiled update; a user function of
    Tensors is run eagerly and its values averaged. A jnp function may return
    `(values, mask)`: as in Keras, the mask then scales a given sample weight.
    """

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        self._fn = fn
        self._fn_kwargs = tuple(sorted(kwargs.items()))
        super().__init__(name=name or getattr(fn, "__name__", None), dtype=dtype)

    def _static(self):
        return (getattr(self._fn, "_jnp_body", self._fn), self._fn_kwargs)

    @staticmethod
    def _update(static, state, y_true, y_pred, sample_weight, /):
        fn, kwargs = static
        values = fn(y_true, y_pred, **dict(kwargs))
        if isinstance(values, tuple):  # (values, Keras's mask on them)
            values, mask = values
            if sample_weight is not None:
                sample_weight = _weights_like(values, sample_weight) * mask
        return Mean._update((), state, values, None, sample_weight)

    # (Keras's signatures: a wrapper's arguments are not Mean's `values`)
    def update_state(self, y_true, y_pred, sample_weight=None) -> None:  # pyright: ignore[reportIncompatibleMethodOverride]
        if getattr(self._fn, "_jnp_metric", False) or hasattr(self._fn, "_jnp_body"):
            Metric._update_state(self, y_true, y_pred, sample_weight)
            return
        with context.paused_tapes():  # a user function of Tensors: run it eagerly
            values = self._fn(y_true, y_pred, **dict(self._fn_kwargs))
        self._apply(Mean._update, (), values, None, sample_weight)

    def get_config(self):
        return {**super().get_config(), **dict(self._fn_kwargs)}


def _jnp_metric(fn):
    fn._jnp_metric = True
    return fn


def _wrapper(class_name, fn, default_name, direction, order=None, **defaults):
    """Builds a `MeanMetricWrapper` class with Keras's arguments: `defaults`
    (fn's keyword arguments) and Keras's positional `order` of all of them."""
    order = order or ["name", "dtype", *defaults]

    def __init__(self, *args, **kwargs):
        if len(args) > len(order):
            raise TypeError(
                f"{class_name}.__init__() takes at most {len(order)} positional "
                f"arguments ({', '.join(order)}); got {len(args)}."
            )
        given = dict(zip(order, args))
        unknown = sorted(set(kwargs) - set(defaults) - {"name", "dtype"})
        if unknown:
            raise TypeError(
                f"{class_name}.__init__() got unexpected keyword arguments {unknown}; "
                f"it takes name, dtype{''.join(', ' + k for k in defaults)}."
            )
        twice = sorted(set(given) & set(kwargs))
        if twice:
            raise TypeError(f"{class_name}.__init__() got multiple values for {twice}")
        values = {"name": default_name, "dtype": None, **defaults, **given, **kwargs}
        name, dtype = values.pop("name"), values.pop("dtype")
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **values)
        for key, value in values.items():  # Keras's attributes (`threshold`, ...)
            setattr(self, key, value)

    return type(
        class_name,
        (MeanMetricWrapper,),
        {
            "__init__": __init__,
            "__doc__": f"Keras's `{class_name}` metric.",
            "_direction": direction,  # which way is better (Keras's, for callbacks)
        },
    )
