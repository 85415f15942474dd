"""Keras metrics (`keras.metrics`): state in Variables, one XLA call per update. L4.

A metric's state is a few non-trainable Variables. `update_state` runs a pure
jnp update (`_update(state, y_true, y_pred, sample_weight) -> state`),
jit-compiled per input shape, and assigns the new values; `result` is a pure
function of the state. Tapes never record metric updates (they carry no
gradient in TF either).
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import context, dtypes, registry
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.state.module import Module, _camel_to_snake, name_scope
from jaxtape._src.state.scope import creating_state
from jaxtape._src.state.variable import Variable

if TYPE_CHECKING:
    from jaxtape._src.core.typing import DTypeLike


def _raw(x):
    if x is None:
        return None
    v = to_value(x)
    return jnp.asarray(v)


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
    configuration, so the compiled update is shared by equal metrics).
    """

    _DEFAULT_NAME: str | None = None  # Keras's name; None: the class's, numbered
    # The pure functions subclasses define (staticmethods, positional):
    # `_update(static, state, *inputs) -> new state`, `_result(static, state)`.
    _update: Callable[..., tuple]
    _result: Callable[..., Any]

    def __init__(self, name: str | None = None, dtype: DTypeLike | None = None) -> None:
        if name is None:  # Keras's auto_name: `auc`, `auc_1`, ...
            name = self._DEFAULT_NAME or _unique_name(
                _camel_to_snake(type(self).__name__)
            )
        super().__init__(name=name)
        self._dtype = np.dtype(dtypes.np_dtype(dtype or "float32"))
        self._state_vars: list[Variable] = []
        # Concrete even when made while jaxtape.function traces (Keras builds
        # compiled metrics on the first batch).
        with context.paused_tapes(), name_scope(self.name), creating_state():
            for var_name, value in self._init_state():
                v = Variable(value, trainable=False, name=var_name)
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

    def _init_state(self):
        raise NotImplementedError

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
        self._apply(type(self)._update, self._static(), y_true, y_pred, sample_weight)

    def _apply(self, update, static, *args):
        state = tuple(v._read_raw() for v in self._state_vars)
        fn = _jitted(update, static)
        new = fn(state, *[_raw(a) for a in args])
        for v, value in zip(self._state_vars, new):
            v.assign(value.astype(v._value.dtype))

    def result(self) -> Any:  # (a Tensor here; Keras's may return structures)
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
    """The mean of `fn(y_true, y_pred)` over the samples seen (Keras's wrapper).

    `fn` is a pure jnp function of arrays here (the built-in metrics); a user
    function of Tensors is run eagerly and its values averaged.
    """

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        self._fn = fn
        self._fn_kwargs = tuple(sorted(kwargs.items()))
        super().__init__(name=name or getattr(fn, "__name__", None), dtype=dtype)

    def _static(self):
        return (self._fn, self._fn_kwargs)

    @staticmethod
    def _update(static, state, y_true, y_pred, sample_weight, /):
        fn, kwargs = static
        values = fn(y_true, y_pred, **dict(kwargs))
        return Mean._update((), state, values, None, sample_weight)

    # (Keras's signatures: a wrapper's arguments are not Mean's `values`)
    def update_state(self, y_true, y_pred, sample_weight=None) -> None:  # pyright: ignore[reportIncompatibleMethodOverride]
        if getattr(self._fn, "_jnp_metric", False):
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


def _squeeze_labels(y_true, y_pred):
    if y_true.ndim == y_pred.ndim and y_true.shape[-1:] == (1,):
        y_true = y_true[..., 0]
    return y_true


@_jnp_metric
def _accuracy(y_true, y_pred):
    if y_true.ndim == y_pred.ndim + 1 and y_true.shape[-1:] == (1,):
        y_true = y_true[..., 0]
    return (y_true.astype(y_pred.dtype) == y_pred).astype(jnp.float32)


@_jnp_metric
def _categorical_accuracy(y_true, y_pred):
    return (jnp.argmax(y_true, -1) == jnp.argmax(y_pred, -1)).astype(jnp.float32)


@_jnp_metric
def _sparse_categorical_accuracy(y_true, y_pred):
    labels = _squeeze_labels(y_true, y_pred)
    pred = jnp.argmax(y_pred, -1).astype(labels.dtype)
    return (labels == pred).astype(jnp.float32)


@_jnp_metric
def _binary_accuracy(y_true, y_pred, threshold=0.5):
    pred = (y_pred > threshold).astype(y_true.dtype)
    if y_true.ndim == y_pred.ndim - 1:
        y_true = y_true[..., None]
    return jnp.mean((y_true == pred).astype(jnp.float32), axis=-1)


@_jnp_metric
def _mse(y_true, y_pred):
    if y_true.ndim == y_pred.ndim - 1:
        y_true = y_true[..., None]
    d = y_pred.astype(jnp.float32) - y_true.astype(jnp.float32)
    return jnp.mean(d * d, axis=-1)


@_jnp_metric
def _mae(y_true, y_pred):
    if y_true.ndim == y_pred.ndim - 1:
        y_true = y_true[..., None]
    d = y_pred.astype(jnp.float32) - y_true.astype(jnp.float32)
    return jnp.mean(jnp.abs(d), axis=-1)


def _wrapper(class_name, fn, default_name, direction, **defaults):
    def __init__(self, name=default_name, dtype=None, **kwargs):
        unknown = sorted(set(kwargs) - set(defaults))
        if unknown:
            raise TypeError(
                f"{class_name}.__init__() got unexpected keyword arguments {unknown}; "
                f"it takes name, dtype{''.join(', ' + k for k in defaults)}."
            )
        values = {**defaults, **kwargs}
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **values)

    return type(
        class_name,
        (MeanMetricWrapper,),
        {
            "__init__": __init__,
            "__doc__": f"Keras's `{class_name}` metric.",
            "_direction": direction,  # which way is better (Keras's, for callbacks)
        },
    )


Accuracy = _wrapper("Accuracy", _accuracy, "accuracy", "up")
CategoricalAccuracy = _wrapper(
    "CategoricalAccuracy", _categorical_accuracy, "categorical_accuracy", "up"
)
SparseCategoricalAccuracy = _wrapper(
    "SparseCategoricalAccuracy",
    _sparse_categorical_accuracy,
    "sparse_categorical_accuracy",
    "up",
)
BinaryAccuracy = _wrapper(
    "BinaryAccuracy", _binary_accuracy, "binary_accuracy", "up", threshold=0.5
)
MeanSquaredError = _wrapper("MeanSquaredError", _mse, "mean_squared_error", "down")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", _mae, "mean_absolute_error", "down")


# -- confusion-matrix metrics ---------------------------------------------------------
def _confusion(
    thresholds, y_true, y_pred, sample_weight, class_id, top_k, label_weights=None
):
    """Weighted tp, fp, tn, fn per threshold (`pred > threshold` is positive)."""
    y_pred = y_pred.astype(jnp.float32)
    y_true = y_true.astype(jnp.float32)
    if y_true.ndim == y_pred.ndim - 1:
        y_true = y_true[..., None]
    if top_k is not None:
        kth = jnp.sort(y_pred, axis=-1)[..., -top_k][..., None]
        y_pred = jnp.where(y_pred >= kth, y_pred, -jnp.inf)
    if class_id is not None:
        y_true, y_pred = y_true[..., class_id], y_pred[..., class_id]
    w = _weights_like(y_pred, sample_weight)
    if label_weights is not None:  # one weight per label (the last axis)
        w = w * jnp.broadcast_to(jnp.asarray(label_weights, w.dtype), w.shape)
    w = w.reshape(-1)
    # In float32, as TF compares (a float64 0.3 would be below float32 0.3).
    pred = y_pred.reshape(-1)[None, :] > jnp.asarray(thresholds, y_pred.dtype)[:, None]
    true = y_true.reshape(-1)[None, :] > 0.5
    tp = jnp.sum(jnp.where(pred & true, w, 0.0), axis=1)
    fp = jnp.sum(jnp.where(pred & ~true, w, 0.0), axis=1)
    fn = jnp.sum(jnp.where(~pred & true, w, 0.0), axis=1)
    tn = jnp.sum(jnp.where(~pred & ~true, w, 0.0), axis=1)
    return tp, fp, tn, fn


class _ThresholdMetric(Metric):
    _OTHER: int  # the subclass's count, an index in (tp, fp, tn, fn)
    _OTHER_NAME: str  # and its Keras name
    _direction = "up"

    def __init__(
        self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None
    ):
        if thresholds is None:
            # Keras: with top_k, every top-k prediction counts as positive.
            thresholds = [0.5] if top_k is None else [-1e10]
        elif np.ndim(thresholds) == 0:
            thresholds = [float(thresholds)]
        for t in thresholds:
            if not 0 <= t <= 1 and t != -1e10:
                raise ValueError(
                    f"Threshold values must be in [0, 1]. Received: {thresholds}"
                )
        self._single = len(thresholds) == 1
        self.thresholds = tuple(float(t) for t in thresholds)
        self.top_k, self.class_id = top_k, class_id
        super().__init__(name=name, dtype=dtype)

    def _init_state(self):
        z = np.zeros(len(self.thresholds), np.float32)
        return [("true_positives", z), (self._OTHER_NAME, z)]

    def get_config(self) -> dict:
        given = None if self.thresholds == (-1e10,) else list(self.thresholds)
        return {
            **super().get_config(),
            "thresholds": given[0] if given and self._single else given,
            "top_k": self.top_k,
            "class_id": self.class_id,
        }

    def _static(self):
        return (self.thresholds, self.class_id, self.top_k, self._single, self._OTHER)

    @staticmethod
    def _update(static, state, y_true, y_pred, sample_weight):
        thresholds, class_id, top_k, _, other = static
        counts = _confusion(thresholds, y_true, y_pred, sample_weight, class_id, top_k)
        return state[0] + counts[0], state[1] + counts[other]

    @staticmethod
    def _result(static, state):
        value = _safe_div(state[0], state[0] + state[1])
        return value[0] if static[3] else value


class Precision(_ThresholdMetric):
    """`tp / (tp + fp)` at each threshold (0.5 by default)."""

    _OTHER, _OTHER_NAME = 1, "false_positives"  # index in (tp, fp, tn, fn)


class Recall(_ThresholdMetric):
    """`tp / (tp + fn)` at each threshold (0.5 by default)."""

    _OTHER, _OTHER_NAME = 3, "false_negatives"


class AUC(Metric):
    """Area under the ROC or PR curve from `num_thresholds` confusion matrices.

    Keras's defaults: 200 thresholds, ROC, trapezoidal ('interpolation').
    """

    _direction = "up"

    def __init__(
        self,
        num_thresholds=200,
        curve="ROC",
        summation_method="interpolation",
        name=None,
        dtype=None,
        thresholds=None,
        multi_label=False,
        num_labels=None,
        label_weights=None,
        from_logits=False,
    ):
        """Keras's AUC. `label_weights` weights each label (column) of
        multi-class predictions, as Keras does without `multi_label`.

        Differences from Keras: `multi_label=True` raises NotImplementedError
        (and so `num_labels`, which only it uses; Keras's ValueError otherwise).
        """
        if multi_label:
            raise NotImplementedError(
                "AUC(multi_label=True) (one curve per label, averaged) is not "
                "supported by jaxtape; use one AUC per label column."
            )
        if num_labels:
            raise ValueError("`num_labels` is needed only when `multi_label` is True.")
        self.label_weights = (
            None if label_weights is None else tuple(np.ravel(label_weights).tolist())
        )
        self.multi_label, self.num_labels = bool(multi_label), num_labels
        if curve not in ("ROC", "PR"):
            raise ValueError(f'AUC: curve must be "ROC" or "PR"; got {curve!r}.')
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(
                "AUC: summation_method must be 'interpolation', 'minoring' or "
                f"'majoring'; got {summation_method!r}."
            )
        self._given = thresholds is not None
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
            num_thresholds = len(inner) + 2
        else:
            if num_thresholds <= 1:
                raise ValueError("AUC: num_thresholds must be > 1.")
            n = num_thresholds
            inner = [(i + 1) * 1.0 / (n - 1) for i in range(n - 2)]
        eps = 1e-7
        self.thresholds = tuple([0.0 - eps] + inner + [1.0 + eps])
        self.num_thresholds = num_thresholds
        self.curve, self.summation_method = curve, summation_method
        self.from_logits = from_logits
        super().__init__(name=name, dtype=dtype)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "num_thresholds": self.num_thresholds,
            "curve": self.curve,
            "summation_method": self.summation_method,
            "thresholds": list(self.thresholds[1:-1]) if self._given else None,
            "multi_label": self.multi_label,
            "num_labels": self.num_labels,
            "label_weights": list(self.label_weights) if self.label_weights else None,
            "from_logits": self.from_logits,
        }

    def _init_state(self):
        z = np.zeros(len(self.thresholds), np.float32)
        return [
            ("true_positives", z),
            ("false_positives", z),
            ("true_negatives", z),
            ("false_negatives", z),
        ]

    def _static(self):
        return (
            self.thresholds,
            self.curve,
            self.summation_method,
            self.from_logits,
            self.label_weights,
        )

    @staticmethod
    def _update(static, state, y_true, y_pred, sample_weight):
        thresholds, _, _, from_logits, label_weights = static
        if from_logits:
            y_pred = jax.nn.sigmoid(y_pred)
        new = _confusion(
            thresholds, y_true, y_pred, sample_weight, None, None, label_weights
        )
        return tuple(s + n for s, n in zip(state, new))

    @staticmethod
    def _result(static, state):
        _, curve, method, _, _ = static
        tp, fp, tn, fn = state
        if curve == "PR" and method == "interpolation":
            return _pr_auc_interpolated(tp, fp, fn)
        recall = _safe_div(tp, tp + fn)
        if curve == "ROC":
            x, y = _safe_div(fp, fp + tn), recall
        else:
            x, y = recall, _safe_div(tp, tp + fp)
        if method == "interpolation":
            heights = (y[:-1] + y[1:]) / 2.0
        elif method == "minoring":
            heights = jnp.minimum(y[:-1], y[1:])
        else:
            heights = jnp.maximum(y[:-1], y[1:])
        return jnp.sum((x[:-1] - x[1:]) * heights)


def _pr_auc_interpolated(tp, fp, fn):
    # Davis & Goadrich (2006), as Keras's `interpolate_pr_auc`.
    dtp = tp[:-1] - tp[1:]
    p = tp + fp
    dp = p[:-1] - p[1:]
    prec_slope = _safe_div(dtp, jnp.maximum(dp, 0))
    intercept = tp[1:] - prec_slope * p[1:]
    safe_p_ratio = jnp.where(
        (p[:-1] > 0) & (p[1:] > 0), _safe_div(p[:-1], jnp.maximum(p[1:], 0)), 1.0
    )
    pr_auc = _safe_div(
        prec_slope * (dtp + intercept * jnp.log(safe_p_ratio)),
        jnp.maximum(tp[1:] + fn[1:], 0),
    )
    return jnp.sum(pr_auc)


METRICS = registry.Kind("metric", "keras.metrics")
for _cls, *_aliases in (
    (Mean,),
    (Sum,),
    (Accuracy,),
    (CategoricalAccuracy,),
    (SparseCategoricalAccuracy,),
    (BinaryAccuracy,),
    (MeanSquaredError, "mse", "MSE"),
    (MeanAbsoluteError, "mae", "MAE"),
    (Precision,),
    (Recall,),
    (AUC,),
):
    METRICS.add(_cls, *_aliases)


def get(identifier):
    """A metric from a name (`'accuracy'`, `'AUC'`), a serialized config, a
    class or an instance, as Keras's `metrics.get`; a plain function is
    wrapped in a `MeanMetricWrapper` named after it."""
    if callable(identifier) and not isinstance(identifier, (type, Metric)):
        if not METRICS.is_builtin(identifier):
            name = getattr(identifier, "__name__", None)
            return MeanMetricWrapper(identifier, name=name)
    return METRICS.get(identifier)


def serialize(metric):
    """Keras's `{'module', 'class_name', 'config', 'registered_name'}` dict."""
    return METRICS.serialize(metric)


def deserialize(config, custom_objects=None):
    """The metric of `serialize`'s output."""
    return METRICS.deserialize(config, custom_objects)
