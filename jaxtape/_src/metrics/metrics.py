"""Keras metrics (`keras.metrics`): state in Variables, one XLA call per update. L4.

This module holds the metrics that average a per-sample function (accuracy,
regression, probabilistic, hinge and correlation metrics, Keras's
`MeanMetricWrapper` subclasses), their public function forms, and the one
registry of every built-in metric (`get`, `serialize`, `deserialize`). The
base class is in `base.py`; confusion-matrix metrics in
`confusion_metrics.py`; IoU, F-beta and R² in `score_metrics.py`.

The per-sample functions are pure jnp (`_jnp_metric`), so a metric's update
is one compiled call; the formulas shared with `keras.losses` come from
`ops/loss_ops.py`. As in Keras, they see the raw labels and predictions
(y_true cast to y_pred's float dtype), not the metric's dtype.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxtape._src.core import config, registry
from jaxtape._src.core.dispatch import op
from jaxtape._src.metrics.base import (
    Mean,
    MeanMetricWrapper,
    Metric,
    Sum,
    _jnp_metric,
    _safe_div,
    _wrapper,
)
from jaxtape._src.metrics.confusion_metrics import (
    AUC,
    FalseNegatives,
    FalsePositives,
    Precision,
    PrecisionAtRecall,
    Recall,
    RecallAtPrecision,
    SensitivityAtSpecificity,
    SpecificityAtSensitivity,
    TrueNegatives,
    TruePositives,
)
from jaxtape._src.metrics.score_metrics import (
    BinaryIoU,
    F1Score,
    FBetaScore,
    IoU,
    MeanIoU,
    OneHotIoU,
    OneHotMeanIoU,
    R2Score,
)
from jaxtape._src.ops import loss_ops


def _floats(y_true, y_pred):
    """Keras: y_pred as a float tensor (float32 unless it is a float), y_true
    cast to its dtype."""
    if not jnp.issubdtype(y_pred.dtype, jnp.floating):
        y_pred = y_pred.astype(config.floatx())
    return y_true.astype(y_pred.dtype), y_pred


def _floatx(x):
    return x.astype(config.floatx())


# -- accuracy -------------------------------------------------------------------------
@_jnp_metric
def _accuracy(y_true, y_pred):
    y_true, y_pred = loss_ops.same_rank(*_floats(y_true, y_pred))
    return _floatx(y_true == y_pred)


@_jnp_metric
def _binary_accuracy(y_true, y_pred, threshold=0.5):
    y_true, y_pred = loss_ops.same_rank(y_true, y_pred)
    pred = (y_pred > threshold).astype(y_true.dtype)
    return _floatx(y_true == pred)


@_jnp_metric
def _categorical_accuracy(y_true, y_pred):
    return _floatx(jnp.argmax(y_true, -1) == jnp.argmax(y_pred, -1))


@_jnp_metric
def _sparse_categorical_accuracy(y_true, y_pred):
    if y_true.ndim == y_pred.ndim and y_true.shape[-1:] == (1,):
        y_true = y_true[..., 0]
    _, y_pred = _floats(y_true, y_pred)
    labels = y_true.astype(y_pred.dtype)
    return _floatx(labels == jnp.argmax(y_pred, -1).astype(labels.dtype))


def _in_top_k(targets, predictions, k):
    """TF's `in_top_k`: ties at the k-th score count as in the top k."""
    score = jnp.take_along_axis(predictions, targets[:, None], axis=-1)
    above = jnp.sum(predictions > score, axis=-1)
    return (above < k) & jnp.isfinite(score[:, 0])


@_jnp_metric
def _top_k_categorical_accuracy(y_true, y_pred, k=5):
    labels = jnp.argmax(y_true, axis=-1)
    shape = labels.shape
    scores = y_pred.reshape(-1, y_pred.shape[-1])
    return _floatx(_in_top_k(labels.reshape(-1), scores, k)).reshape(shape)


@_jnp_metric
def _sparse_top_k_categorical_accuracy(y_true, y_pred, k=5, from_sorted_ids=False):
    shape = y_true.shape
    y_pred = y_pred.reshape(-1, y_pred.shape[-1])
    if from_sorted_ids:  # y_pred holds each row's top class ids, best first
        labels = y_true.astype(y_pred.dtype).reshape(-1)
        hits = jnp.any(labels[:, None] == y_pred[:, :k], axis=1)
    else:
        hits = _in_top_k(y_true.astype(jnp.int32).reshape(-1), y_pred, k)
    return _floatx(hits).reshape(shape)


# -- regression, probabilistic, hinge, correlation -------------------------------------
def _dense(body):
    """A jnp metric of a `loss_ops` formula: float inputs, matched ranks."""

    def fn(y_true, y_pred, **kwargs):
        y_true, y_pred = loss_ops.same_rank(*_floats(y_true, y_pred))
        return body(y_true, y_pred, **kwargs)

    fn.__name__ = fn.__qualname__ = f"_{body.__name__}"
    return _jnp_metric(fn)


def _eps(body):
    def with_eps(y_true, y_pred, **kwargs):
        return body(y_true, y_pred, eps=config.epsilon(), **kwargs)

    with_eps.__name__ = body.__name__
    return with_eps


_mse = _dense(loss_ops.mean_squared_error)
_mae = _dense(loss_ops.mean_absolute_error)
_mape = _dense(_eps(loss_ops.mean_absolute_percentage_error))
_msle = _dense(_eps(loss_ops.mean_squared_logarithmic_error))
_log_cosh = _dense(loss_ops.log_cosh)
_hinge = _dense(loss_ops.hinge)
_squared_hinge = _dense(loss_ops.squared_hinge)
_categorical_hinge = _dense(loss_ops.categorical_hinge)
_kl_divergence = _dense(_eps(loss_ops.kl_divergence))
_poisson = _dense(_eps(loss_ops.poisson))


@_jnp_metric
def _cosine_similarity(y_true, y_pred, axis=-1):
    y_true, y_pred = loss_ops.same_rank(*_floats(y_true, y_pred))
    return loss_ops.cosine_similarity(y_true, y_pred, axis, config.epsilon())


@_jnp_metric
def _squared_error(y_true, y_pred):
    y_true, y_pred = loss_ops.same_rank(*_floats(y_true, y_pred))
    return jnp.square(y_pred - y_true)


@_jnp_metric
def _binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    y_true, y_pred = _floats(y_true, y_pred)
    return loss_ops.binary_crossentropy(
        y_true, y_pred, from_logits, label_smoothing, -1, config.epsilon()
    )


@_jnp_metric
def _categorical_crossentropy(
    y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1
):
    y_true, y_pred = _floats(y_true, y_pred)
    return loss_ops.categorical_crossentropy(
        y_true, y_pred, from_logits, label_smoothing, axis, config.epsilon()
    )


@_jnp_metric
def _sparse_categorical_crossentropy(
    y_true, y_pred, from_logits=False, ignore_class=None, axis=-1
):
    _, y_pred = _floats(y_true, y_pred)
    if y_true.ndim == y_pred.ndim and y_true.shape[axis] == 1:
        y_true = jnp.squeeze(y_true, axis)
    labels = y_true.astype(jnp.int32)
    values = loss_ops.sparse_categorical_crossentropy(
        labels, y_pred, from_logits, ignore_class, axis, config.epsilon()
    )
    if ignore_class is None:
        return values
    return values, (labels != ignore_class).astype(values.dtype)  # Keras's mask


@_jnp_metric
def _pearson_correlation(y_true, y_pred, axis=-1):
    y_true, y_pred = loss_ops.same_rank(*_floats(y_true, y_pred))
    t = y_true - jnp.mean(y_true, axis=axis, keepdims=True)
    p = y_pred - jnp.mean(y_pred, axis=axis, keepdims=True)
    t = t / jnp.std(t, axis=axis, keepdims=True)
    p = p / jnp.std(p, axis=axis, keepdims=True)
    return jnp.mean(t * p, axis=axis)


@_jnp_metric
def _concordance_correlation(y_true, y_pred, axis=-1):
    y_true, y_pred = loss_ops.same_rank(*_floats(y_true, y_pred))
    t_mean = jnp.mean(y_true, axis=axis, keepdims=True)
    p_mean = jnp.mean(y_pred, axis=axis, keepdims=True)
    t_var = jnp.var(y_true - t_mean, axis=axis, keepdims=True)
    p_var = jnp.var(y_pred - p_mean, axis=axis, keepdims=True)
    covar = (y_true - p_mean) * (y_pred - p_mean)  # (sic: Keras's formula)
    norm = t_var + p_var + jnp.square(t_mean - p_mean)
    return jnp.mean(2 * covar / (norm + config.epsilon()), axis=axis)


# -- public function forms (keras.metrics.<name>) --------------------------------------
@op("BinaryAccuracy", inputs=("y_true", "y_pred"), differentiable=False, jit=True)
def _binary_accuracy_op(y_true, y_pred, threshold):
    return _binary_accuracy(y_true, y_pred, threshold)


@op("CategoricalAccuracy", inputs=("y_true", "y_pred"), differentiable=False, jit=True)
def _categorical_accuracy_op(y_true, y_pred):
    return _categorical_accuracy(y_true, y_pred)


@op(
    "SparseCategoricalAccuracy",
    inputs=("y_true", "y_pred"),
    differentiable=False,
    jit=True,
)
def _sparse_categorical_accuracy_op(y_true, y_pred):
    return _sparse_categorical_accuracy(y_true, y_pred)


@op(
    "TopKCategoricalAccuracy",
    inputs=("y_true", "y_pred"),
    differentiable=False,
    jit=True,
)
def _top_k_op(y_true, y_pred, k):
    return _top_k_categorical_accuracy(y_true, y_pred, k)


@op(
    "SparseTopKCategoricalAccuracy",
    inputs=("y_true", "y_pred"),
    differentiable=False,
    jit=True,
)
def _sparse_top_k_op(y_true, y_pred, k, from_sorted_ids):
    return _sparse_top_k_categorical_accuracy(y_true, y_pred, k, from_sorted_ids)


@op("PearsonCorrelation", inputs=("y_true", "y_pred"), jit=True)
def _pearson_op(y_true, y_pred, axis):
    return _pearson_correlation(y_true, y_pred, axis)


@op("ConcordanceCorrelation", inputs=("y_true", "y_pred"), jit=True)
def _concordance_op(y_true, y_pred, axis):
    return _concordance_correlation(y_true, y_pred, axis)


def _public(fn, body):
    fn._jnp_body = body  # a MeanMetricWrapper of it compiles `body` into its update
    return fn


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """1.0 where `(y_pred > threshold) == y_true`, else 0.0, element-wise."""
    return _binary_accuracy_op(y_true, y_pred, float(threshold))


def categorical_accuracy(y_true, y_pred):
    """1.0 where the argmax of `y_pred` is the argmax of one-hot `y_true`."""
    return _categorical_accuracy_op(y_true, y_pred)


def sparse_categorical_accuracy(y_true, y_pred):
    """1.0 where the argmax of `y_pred` is the integer label `y_true`."""
    return _sparse_categorical_accuracy_op(y_true, y_pred)


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1.0 where one-hot `y_true`'s class is among `y_pred`'s top `k` scores."""
    return _top_k_op(y_true, y_pred, int(k))


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5, from_sorted_ids=False):
    """1.0 where integer `y_true` is among `y_pred`'s top `k` classes (or, with
    `from_sorted_ids`, among the first `k` ids of each row of `y_pred`)."""
    return _sparse_top_k_op(y_true, y_pred, int(k), bool(from_sorted_ids))


def pearson_correlation(y_true, y_pred, axis=-1):
    """Pearson's correlation coefficient along `axis`, per sample."""
    return _pearson_op(y_true, y_pred, int(axis))


def concordance_correlation(y_true, y_pred, axis=-1):
    """Lin's concordance correlation coefficient along `axis`, per sample."""
    return _concordance_op(y_true, y_pred, int(axis))


for _fn, _body in (
    (binary_accuracy, _binary_accuracy),
    (categorical_accuracy, _categorical_accuracy),
    (sparse_categorical_accuracy, _sparse_categorical_accuracy),
    (top_k_categorical_accuracy, _top_k_categorical_accuracy),
    (sparse_top_k_categorical_accuracy, _sparse_top_k_categorical_accuracy),
    (pearson_correlation, _pearson_correlation),
    (concordance_correlation, _concordance_correlation),
):
    _public(_fn, _body)


# -- the classes ----------------------------------------------------------------------
Accuracy = _wrapper("Accuracy", _accuracy, "accuracy", "up")
BinaryAccuracy = _wrapper(
    "BinaryAccuracy", _binary_accuracy, "binary_accuracy", "up", threshold=0.5
)
CategoricalAccuracy = _wrapper(
    "CategoricalAccuracy", _categorical_accuracy, "categorical_accuracy", "up"
)
SparseCategoricalAccuracy = _wrapper(
    "SparseCategoricalAccuracy",
    _sparse_categorical_accuracy,
    "sparse_categorical_accuracy",
    "up",
)
TopKCategoricalAccuracy = _wrapper(
    "TopKCategoricalAccuracy",
    _top_k_categorical_accuracy,
    "top_k_categorical_accuracy",
    "up",
    ["k", "name", "dtype"],
    k=5,
)
SparseTopKCategoricalAccuracy = _wrapper(
    "SparseTopKCategoricalAccuracy",
    _sparse_top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy",
    "up",
    ["k", "name", "dtype", "from_sorted_ids"],
    k=5,
    from_sorted_ids=False,
)
MeanSquaredError = _wrapper("MeanSquaredError", _mse, "mean_squared_error", "down")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", _mae, "mean_absolute_error", "down")
MeanAbsolutePercentageError = _wrapper(
    "MeanAbsolutePercentageError", _mape, "mean_absolute_percentage_error", "down"
)
MeanSquaredLogarithmicError = _wrapper(
    "MeanSquaredLogarithmicError", _msle, "mean_squared_logarithmic_error", "down"
)
CosineSimilarity = _wrapper(
    "CosineSimilarity", _cosine_similarity, "cosine_similarity", "up", axis=-1
)
LogCoshError = _wrapper("LogCoshError", _log_cosh, "logcosh", "down")
Hinge = _wrapper("Hinge", _hinge, "hinge", "down")
SquaredHinge = _wrapper("SquaredHinge", _squared_hinge, "squared_hinge", "down")
CategoricalHinge = _wrapper(
    "CategoricalHinge", _categorical_hinge, "categorical_hinge", "down"
)
KLDivergence = _wrapper("KLDivergence", _kl_divergence, "kl_divergence", "down")
Poisson = _wrapper("Poisson", _poisson, "poisson", "down")
BinaryCrossentropy = _wrapper(
    "BinaryCrossentropy",
    _binary_crossentropy,
    "binary_crossentropy",
    "down",
    from_logits=False,
    label_smoothing=0,
)
CategoricalCrossentropy = _wrapper(
    "CategoricalCrossentropy",
    _categorical_crossentropy,
    "categorical_crossentropy",
    "down",
    from_logits=False,
    label_smoothing=0,
    axis=-1,
)
SparseCategoricalCrossentropy = _wrapper(
    "SparseCategoricalCrossentropy",
    _sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy",
    "down",
    from_logits=False,
    ignore_class=None,
    axis=-1,
)
PearsonCorrelation = _wrapper(
    "PearsonCorrelation", _pearson_correlation, "pearson_correlation", "up", axis=-1
)
ConcordanceCorrelation = _wrapper(
    "ConcordanceCorrelation",
    _concordance_correlation,
    "concordance_correlation",
    "up",
    axis=-1,
)


class RootMeanSquaredError(MeanMetricWrapper):
    """`sqrt(mean((y_pred - y_true)**2))` over every value seen (Keras's)."""

    _direction = "down"

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(_squared_error, name=name, dtype=dtype)

    @staticmethod
    def _result(static, state):
        return jnp.sqrt(_safe_div(*state))

    def get_config(self) -> dict:
        return Metric.get_config(self)


METRICS = registry.Kind("metric", "keras.metrics")
for _cls, *_aliases in (
    (Mean,),
    (Sum,),
    (Accuracy,),
    (BinaryAccuracy,),
    (CategoricalAccuracy,),
    (SparseCategoricalAccuracy,),
    (TopKCategoricalAccuracy,),
    (SparseTopKCategoricalAccuracy,),
    (MeanSquaredError, "mse", "MSE"),
    (MeanAbsoluteError, "mae", "MAE"),
    (MeanAbsolutePercentageError, "mape", "MAPE"),
    (MeanSquaredLogarithmicError, "msle", "MSLE"),
    (RootMeanSquaredError,),
    (CosineSimilarity,),
    (LogCoshError,),
    (R2Score,),
    (Hinge,),
    (SquaredHinge,),
    (CategoricalHinge,),
    (KLDivergence,),
    (Poisson,),
    (BinaryCrossentropy, "bce", "BCE"),
    (CategoricalCrossentropy,),
    (SparseCategoricalCrossentropy,),
    (PearsonCorrelation,),
    (ConcordanceCorrelation,),
    (AUC,),
    (Precision,),
    (Recall,),
    (TruePositives,),
    (FalsePositives,),
    (TrueNegatives,),
    (FalseNegatives,),
    (PrecisionAtRecall,),
    (RecallAtPrecision,),
    (SensitivityAtSpecificity,),
    (SpecificityAtSensitivity,),
    (F1Score,),
    (FBetaScore,),
    (IoU,),
    (BinaryIoU,),
    (MeanIoU,),
    (OneHotIoU,),
    (OneHotMeanIoU,),
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
