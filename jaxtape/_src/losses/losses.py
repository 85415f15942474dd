"""Keras losses as functions and classes (`keras.losses`). Layer L4.

Each loss function is one recorded op (a fused jnp body) returning one value
per sample; a `Loss` object adds sample weights and the reduction. Numerics
follow Keras 3: probabilities are normalised and clipped to `[eps, 1 - eps]`
(eps = `keras.backend.epsilon()`, 1e-7), y_true is cast to y_pred's dtype,
and `"sum_over_batch_size"` divides by the number of per-sample values.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import config, dtypes, registry
from jaxtape._src.core.dispatch import op
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import math_ops
from jaxtape._src.ops.nn_ops import check_labels, softmax_xent_tf


# -- shape handling shared by every loss -------------------------------------------
def _shape_of(x):
    if type(x) is Tensor:
        return tuple(x._v.shape)  # a pending value need not be computed
    return tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)


def _same_rank(name, y_true, y_pred, sparse=False):
    """Keras's `squeeze_or_expand_to_same_rank`, with an error that names the loss."""
    t, p = _shape_of(y_true), _shape_of(y_pred)
    if sparse:
        if len(t) == len(p) and t and t[-1] == 1:
            t = t[:-1]
        if t != p[:-1]:
            raise ValueError(
                f"{name}: labels of shape {t} do not match predictions of shape {p}. "
                "Sparse labels hold one class index per sample: their shape must be "
                "the predictions' shape without the last (class) axis."
            )
        return t
    if len(t) == len(p) + 1 and t[-1:] == (1,):
        t = t[:-1]
    elif len(p) == len(t) + 1 and p[-1:] == (1,):
        t = t + (1,)
    try:
        np.broadcast_shapes(t, p)
    except ValueError:
        raise ValueError(
            f"{name}: y_true of shape {_shape_of(y_true)} does not match y_pred of "
            f"shape {p}. Pass labels with the predictions' shape (use "
            "SparseCategoricalCrossentropy for integer class labels)."
        ) from None
    return t


def _pred_dtype(y_pred):
    d = getattr(y_pred, "dtype", None)
    if d is not None:
        np_d = dtypes.np_dtype(d)
        if np_d.kind == "f" or np_d.name == "bfloat16":
            return np_d
    return np.dtype(config.floatx())


def _cast(x, dtype):
    return x if x.dtype == dtype else x.astype(dtype)


# -- per-sample bodies (one recorded op each) ----------------------------------------
@op("CategoricalCrossentropy", inputs=("y_true", "y_pred"), jit=True)
def _categorical_crossentropy(
    y_true, y_pred, t_shape, dtype, from_logits, label_smoothing, axis, eps
):
    y_pred = _cast(y_pred, dtype)
    y_true = _cast(y_true, dtype).reshape(t_shape)
    if label_smoothing:
        n = y_pred.shape[axis]
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / n
    if from_logits:  # TF's fused op, with its gradient (as tf.keras computes it)
        return softmax_xent_tf(y_true, y_pred, axis)
    p = y_pred / jnp.sum(y_pred, axis=axis, keepdims=True)
    return -jnp.sum(y_true * jnp.log(jnp.clip(p, eps, 1.0 - eps)), axis=axis)


def _check_sparse_labels(
    xp, y_true, y_pred, t_shape, dtype, from_logits, ignore, axis, eps
):
    check_labels(xp, y_true, y_pred.shape[axis], ignore)


@op(
    "SparseCategoricalCrossentropy",
    inputs=("y_true", "y_pred"),
    jit=True,
    check=_check_sparse_labels,
)
def _sparse_categorical_crossentropy(
    y_true, y_pred, t_shape, dtype, from_logits, ignore_class, axis, eps
):
    y_pred = _cast(y_pred, dtype)
    labels = y_true.reshape(t_shape).astype(np.int32)
    if from_logits:
        log_p = jax.nn.log_softmax(y_pred, axis=axis)
    else:
        p = y_pred / jnp.sum(y_pred, axis=axis, keepdims=True)
        log_p = jnp.log(jnp.clip(p, eps, 1.0 - eps))
    valid = None
    if ignore_class is not None:
        valid = labels != ignore_class
        labels = jnp.where(valid, labels, 0)
    picked = jnp.take_along_axis(
        jnp.moveaxis(log_p, axis, -1), labels[..., None], axis=-1
    )[..., 0]
    loss = -picked
    return loss if valid is None else jnp.where(valid, loss, 0.0)


@op("BinaryCrossentropy", inputs=("y_true", "y_pred"), jit=True)
def _binary_crossentropy(
    y_true, y_pred, t_shape, dtype, from_logits, smoothing, axis, eps
):
    y_pred = _cast(y_pred, dtype)
    y_true = _cast(y_true, dtype).reshape(t_shape)
    if smoothing:
        y_true = y_true * (1.0 - smoothing) + 0.5 * smoothing
    if from_logits:
        per = (
            jnp.maximum(y_pred, 0)
            - y_pred * y_true
            + jnp.log1p(jnp.exp(-jnp.abs(y_pred)))
        )
    else:
        p = jnp.clip(y_pred, eps, 1.0 - eps)
        per = -(y_true * jnp.log(p) + (1.0 - y_true) * jnp.log(1.0 - p))
    return jnp.mean(per, axis=axis)


@op("MeanSquaredError", inputs=("y_true", "y_pred"), jit=True)
def _mean_squared_error(y_true, y_pred, t_shape, dtype):
    d = _cast(y_pred, dtype) - _cast(y_true, dtype).reshape(t_shape)
    return jnp.mean(d * d, axis=-1)


@op("MeanAbsoluteError", inputs=("y_true", "y_pred"), jit=True)
def _mean_absolute_error(y_true, y_pred, t_shape, dtype):
    d = _cast(y_pred, dtype) - _cast(y_true, dtype).reshape(t_shape)
    return jnp.mean(jnp.abs(d), axis=-1)


@op("Huber", inputs=("y_true", "y_pred"), jit=True)
def _huber(y_true, y_pred, t_shape, dtype, delta):
    err = jnp.abs(_cast(y_pred, dtype) - _cast(y_true, dtype).reshape(t_shape))
    quad = jnp.minimum(err, delta)
    return jnp.mean(0.5 * quad * quad + delta * (err - quad), axis=-1)


@op("KLDivergence", inputs=("y_true", "y_pred"), jit=True)
def _kl_divergence(y_true, y_pred, t_shape, dtype, eps):
    t = jnp.clip(_cast(y_true, dtype).reshape(t_shape), eps, 1.0)
    p = jnp.clip(_cast(y_pred, dtype), eps, 1.0)
    return jnp.sum(t * jnp.log(t / p), axis=-1)


# -- public functions (per-sample values, as keras.losses.<name>) --------------------
def categorical_crossentropy(
    y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1
):
    """Crossentropy between one-hot (or soft) labels and predictions, per sample."""
    t = _same_rank("categorical_crossentropy", y_true, y_pred)
    return _categorical_crossentropy(
        y_true,
        y_pred,
        t,
        _pred_dtype(y_pred),
        bool(from_logits),
        float(label_smoothing),
        int(axis),
        config.epsilon(),
    )


def sparse_categorical_crossentropy(
    y_true, y_pred, from_logits=False, ignore_class=None, axis=-1
):
    """Crossentropy between integer class labels and predictions, per sample."""
    t = _same_rank("sparse_categorical_crossentropy", y_true, y_pred, sparse=True)
    return _sparse_categorical_crossentropy(
        y_true,
        y_pred,
        t,
        _pred_dtype(y_pred),
        bool(from_logits),
        ignore_class,
        int(axis),
        config.epsilon(),
    )


def binary_crossentropy(
    y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1
):
    """Binary crossentropy averaged over the last axis, per sample."""
    t = _same_rank("binary_crossentropy", y_true, y_pred)
    return _binary_crossentropy(
        y_true,
        y_pred,
        t,
        _pred_dtype(y_pred),
        bool(from_logits),
        float(label_smoothing),
        int(axis),
        config.epsilon(),
    )


def mean_squared_error(y_true, y_pred):
    """Mean of squared errors over the last axis, per sample."""
    t = _same_rank("mean_squared_error", y_true, y_pred)
    return _mean_squared_error(y_true, y_pred, t, _pred_dtype(y_pred))


def mean_absolute_error(y_true, y_pred):
    """Mean of absolute errors over the last axis, per sample."""
    t = _same_rank("mean_absolute_error", y_true, y_pred)
    return _mean_absolute_error(y_true, y_pred, t, _pred_dtype(y_pred))


def huber(y_true, y_pred, delta=1.0):
    """Huber loss (quadratic below `delta`, linear above) over the last axis."""
    t = _same_rank("huber", y_true, y_pred)
    return _huber(y_true, y_pred, t, _pred_dtype(y_pred), float(delta))


def kl_divergence(y_true, y_pred):
    """Kullback-Leibler divergence `sum(y_true * log(y_true / y_pred))`, per sample."""
    t = _same_rank("kl_divergence", y_true, y_pred)
    return _kl_divergence(y_true, y_pred, t, _pred_dtype(y_pred), config.epsilon())


# -- reduction ------------------------------------------------------------------------
class Reduction:
    """TF's `tf.keras.losses.Reduction` names (Keras 3 takes the strings)."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"


_REDUCTIONS = {
    "auto": "sum_over_batch_size",
    "sum_over_batch_size": "sum_over_batch_size",
    "mean": "sum_over_batch_size",
    "sum": "sum",
    "none": "none",
    None: "none",
}


@op("ReduceLoss", inputs=("losses",), jit=True)
def _reduce(losses, reduction):
    if reduction == "sum":
        return jnp.sum(losses)
    return jnp.sum(losses) / max(losses.size, 1)


@op("ReduceWeightedLoss", inputs=("losses", "sample_weight"), jit=True)
def _reduce_weighted(losses, sample_weight, reduction):
    w = jnp.asarray(sample_weight, losses.dtype)
    while w.ndim > losses.ndim and w.shape[-1] == 1:
        w = w[..., 0]
    while w.ndim < losses.ndim:
        w = w[..., None]
    weighted = losses * w
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return jnp.sum(weighted)
    return jnp.sum(weighted) / max(weighted.size, 1)


class Loss:
    """Base class of Keras losses: `loss(y_true, y_pred, sample_weight=None)`.

    Subclasses implement `call(y_true, y_pred)` returning per-sample values.
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        """`dtype`: the dtype the loss is computed in (None: floatx, float32);
        the predictions and labels are cast to it first, as in Keras 3."""
        if reduction not in _REDUCTIONS:
            raise ValueError(
                f"Invalid value for argument `reduction`: {reduction!r}. Expected "
                "one of 'sum_over_batch_size', 'sum', 'none' (or TF's 'auto')."
            )
        self.name = name or type(self).__name__
        self.reduction = reduction
        self.dtype = dtype

    def __call__(self, y_true, y_pred, sample_weight=None):
        mode = _REDUCTIONS[self.reduction]
        if self.dtype is not None:  # Keras converts both to the loss's dtype
            y_pred = math_ops.cast(y_pred, self.dtype)
            y_true = math_ops.cast(y_true, self.dtype)
        losses = self.call(y_true, y_pred)
        if sample_weight is not None:
            return _reduce_weighted(losses, sample_weight, mode)
        if mode == "none":
            return losses
        return _reduce(losses, mode)

    def call(self, y_true, y_pred):
        raise NotImplementedError

    def get_config(self) -> dict:
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, cfg: dict):
        return cls(**cfg)


class LossFunctionWrapper(Loss):
    """A `Loss` around a per-sample function and its keyword arguments."""

    def __init__(
        self, fn, name=None, reduction="sum_over_batch_size", dtype=None, **kwargs
    ):
        super().__init__(name=name or fn.__name__, reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self) -> dict:
        return {**super().get_config(), **self._fn_kwargs}


def _wrapper_class(class_name, fn, default_name, params):
    """Builds `CategoricalCrossentropy` & co. with Keras's argument order."""

    def __init__(
        self,
        *args,
        reduction="sum_over_batch_size",
        name=default_name,
        dtype=None,
        **kw,
    ):
        if len(args) > len(params):
            raise TypeError(
                f"{class_name} takes at most {len(params)} positional arguments "
                f"({', '.join(params) or 'none'}); got {len(args)}."
            )
        values = dict(params)
        for key, value in zip(params, args):
            values[key] = value
        for key, value in kw.items():
            if key not in values:
                raise TypeError(f"{class_name} got an unexpected argument {key!r}.")
            values[key] = value
        LossFunctionWrapper.__init__(
            self, fn, name=name, reduction=reduction, dtype=dtype, **values
        )

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction, **self._fn_kwargs}

    @classmethod
    def from_config(cls, cfg):
        return cls(**cfg)

    doc = f"Keras's `{class_name}`: `{fn.__name__}` with a reduction."
    return type(
        class_name,
        (LossFunctionWrapper,),
        {
            "__init__": __init__,
            "get_config": get_config,
            "from_config": from_config,
            "__doc__": doc,
        },
    )


CategoricalCrossentropy = _wrapper_class(
    "CategoricalCrossentropy",
    categorical_crossentropy,
    "categorical_crossentropy",
    {"from_logits": False, "label_smoothing": 0.0, "axis": -1},
)
SparseCategoricalCrossentropy = _wrapper_class(
    "SparseCategoricalCrossentropy",
    sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy",
    {"from_logits": False, "ignore_class": None, "axis": -1},
)
BinaryCrossentropy = _wrapper_class(
    "BinaryCrossentropy",
    binary_crossentropy,
    "binary_crossentropy",
    {"from_logits": False, "label_smoothing": 0.0, "axis": -1},
)
MeanSquaredError = _wrapper_class(
    "MeanSquaredError", mean_squared_error, "mean_squared_error", {}
)
MeanAbsoluteError = _wrapper_class(
    "MeanAbsoluteError", mean_absolute_error, "mean_absolute_error", {}
)
Huber = _wrapper_class("Huber", huber, "huber_loss", {"delta": 1.0})
KLDivergence = _wrapper_class("KLDivergence", kl_divergence, "kl_divergence", {})

# Keras's short aliases.
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
kld = KLD = kullback_leibler_divergence = kl_divergence

LOSSES = registry.Kind("loss", "keras.losses", snake_case_classes=False)
for _obj, *_aliases in (
    (categorical_crossentropy,),
    (sparse_categorical_crossentropy,),
    (binary_crossentropy, "bce", "BCE"),
    (mean_squared_error, "mse", "MSE"),
    (mean_absolute_error, "mae", "MAE"),
    (huber,),
    (kl_divergence, "kld", "KLD"),
    (CategoricalCrossentropy,),
    (SparseCategoricalCrossentropy,),
    (BinaryCrossentropy,),
    (MeanSquaredError,),
    (MeanAbsoluteError,),
    (Huber,),
    (KLDivergence,),
):
    LOSSES.add(_obj, *_aliases)


def get(identifier):
    """A loss from a name (`'mse'`, `'MeanSquaredError'`), a serialized config,
    a `Loss` or a function, as Keras's `losses.get`."""
    return LOSSES.get(identifier)


def serialize(loss):
    """Keras's `{'module', 'class_name', 'config', 'registered_name'}` dict."""
    return LOSSES.serialize(loss)


def deserialize(name, custom_objects=None):
    """The loss of `serialize`'s output, or of a name."""
    return LOSSES.deserialize(name, custom_objects)
