"""Keras losses as functions and classes (`keras.losses`). Layer L4.

Each loss function is one recorded op (a fused jnp body from
`ops/loss_ops.py`) returning one value per sample; a `Loss` object adds sample
weights, Keras's masks (`ignore_class`, `Circle`) and the reduction. Numerics
follow Keras 3: probabilities are normalised and clipped to `[eps, 1 - eps]`
(eps = `keras.backend.epsilon()`, 1e-7), y_true is cast to y_pred's dtype,
ranks are matched as Keras's `squeeze_or_expand_to_same_rank` does, and
`"sum_over_batch_size"` divides by the number of per-sample values.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import config, dtypes, errors, registry
from jaxtape._src.core.dispatch import op
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import loss_ops, math_ops
from jaxtape._src.ops.nn_ops import check_labels


# -- shape handling shared by every loss -------------------------------------------
def _shape_of(x):
    if type(x) is Tensor:
        return tuple(x._v.shape)  # a pending value need not be computed
    return tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)


def _same_rank(name, y_true, y_pred):
    """Keras's `squeeze_or_expand_to_same_rank`: the shapes y_true and y_pred
    take (a trailing axis of 1 dropped or added), checked to broadcast."""
    t, p = _shape_of(y_true), _shape_of(y_pred)
    t0, p0 = t, p
    if len(t) == len(p) + 1 and t[-1:] == (1,):
        t, p = (t, p + (1,)) if len(p) == 1 else (t[:-1], p)
    elif len(p) == len(t) + 1 and p[-1:] == (1,):
        t, p = (t + (1,), p) if len(t) == 1 else (t, p[:-1])
    try:
        np.broadcast_shapes(t, p)
    except ValueError:
        raise ValueError(
            f"{name}: y_true of shape {t0} does not match y_pred of shape {p0}. "
            "Pass labels with the predictions' shape (use "
            "SparseCategoricalCrossentropy for integer class labels)."
        ) from None
    return t, p


def _sparse_shape(name, y_true, y_pred, axis):
    """The labels' shape: the predictions' without the class `axis` (a label
    axis of 1 in its place is dropped, as Keras squeezes it)."""
    t, p = _shape_of(y_true), _shape_of(y_pred)
    ax = axis % len(p) if p else 0
    if len(t) == len(p) and t and t[ax] == 1:
        t = t[:ax] + t[ax + 1 :]
    want = p[:ax] + p[ax + 1 :]
    if t != want:
        raise ValueError(
            f"{name}: labels of shape {_shape_of(y_true)} do not match predictions "
            f"of shape {p}. Sparse labels hold one class index per sample: their "
            "shape must be the predictions' shape without the class axis."
        )
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


def _axis(name, axis):
    if isinstance(axis, bool):  # Keras's check (True would read as axis 1)
        raise ValueError(
            f"`axis` must be of type `int`. Received: axis={axis} of type {type(axis)}"
        )
    return None if axis is None else int(axis)


# -- per-sample ops -----------------------------------------------------------------
def _dense_op(tf_name, body):
    """A recorded op: cast y_true and y_pred to one dtype, match their ranks,
    apply the pure `loss_ops` body with its static parameters."""

    def per_sample(y_true, y_pred, t_shape, p_shape, dtype, params):
        y_pred = _cast(y_pred, dtype).reshape(p_shape)
        y_true = _cast(y_true, dtype).reshape(t_shape)
        return body(y_true, y_pred, *params)

    per_sample.__name__ = per_sample.__qualname__ = f"_{body.__name__}"
    return op(tf_name, inputs=("y_true", "y_pred"), jit=True)(per_sample)


def _dense(name, loss_op, y_true, y_pred, *params):
    t, p = _same_rank(name, y_true, y_pred)
    return loss_op(y_true, y_pred, t, p, _pred_dtype(y_pred), params)


_CCE = _dense_op("CategoricalCrossentropy", loss_ops.categorical_crossentropy)
_BCE = _dense_op("BinaryCrossentropy", loss_ops.binary_crossentropy)
_BFCE = _dense_op("BinaryFocalCrossentropy", loss_ops.binary_focal_crossentropy)
_CFCE = _dense_op(
    "CategoricalFocalCrossentropy", loss_ops.categorical_focal_crossentropy
)
_MSE = _dense_op("MeanSquaredError", loss_ops.mean_squared_error)
_MAE = _dense_op("MeanAbsoluteError", loss_ops.mean_absolute_error)
_MAPE = _dense_op(
    "MeanAbsolutePercentageError", loss_ops.mean_absolute_percentage_error
)
_MSLE = _dense_op(
    "MeanSquaredLogarithmicError", loss_ops.mean_squared_logarithmic_error
)
_HUBER = _dense_op("Huber", loss_ops.huber)
_LOG_COSH = _dense_op("LogCosh", loss_ops.log_cosh)
_HINGE = _dense_op("Hinge", loss_ops.hinge)
_SQUARED_HINGE = _dense_op("SquaredHinge", loss_ops.squared_hinge)
_CATEGORICAL_HINGE = _dense_op("CategoricalHinge", loss_ops.categorical_hinge)
_KLD = _dense_op("KLDivergence", loss_ops.kl_divergence)
_POISSON = _dense_op("Poisson", loss_ops.poisson)
_DICE = _dense_op("Dice", loss_ops.dice)
_TVERSKY = _dense_op("Tversky", loss_ops.tversky)


def _negative_cosine(y_true, y_pred, axis, eps):
    return -loss_ops.cosine_similarity(y_true, y_pred, axis, eps)


_NEG_COSINE = _dense_op("CosineSimilarity", _negative_cosine)


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
    labels = y_true.reshape(t_shape).astype(np.int32)
    return loss_ops.sparse_categorical_crossentropy(
        labels, _cast(y_pred, dtype), from_logits, ignore_class, axis, eps
    )


@op("CategoricalGeneralizedCrossEntropy", inputs=("y_true", "y_pred"), jit=True)
def _categorical_generalized_cross_entropy(y_true, y_pred, dtype, q):
    y_pred = _cast(y_pred, dtype)
    labels = y_true.astype(np.int32).reshape(y_pred.shape[:-1])
    return loss_ops.categorical_generalized_cross_entropy(labels, y_pred, q)


@op("CTCLoss", inputs=("y_true", "y_pred"), jit=True)
def _ctc(y_true, y_pred, dtype):
    return loss_ops.ctc(y_true.astype(np.int32), _cast(y_pred, dtype))


@op(
    "CircleLoss",
    inputs=("y_true", "y_pred", "ref_labels", "ref_embeddings"),
    jit=True,
)
def _circle(
    y_true, y_pred, ref_labels, ref_embeddings, dtype, remove_diagonal, gamma, margin
):
    return loss_ops.circle(
        y_true.astype(np.int32).reshape(-1),
        _cast(y_pred, dtype),
        ref_labels.astype(np.int32).reshape(-1),
        _cast(ref_embeddings, dtype),
        remove_diagonal,
        gamma,
        margin,
    )


# -- public functions (per-sample values, as keras.losses.<name>) --------------------
def categorical_crossentropy(
    y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1
):
    """Crossentropy between one-hot (or soft) labels and predictions, per sample."""
    return _dense(
        "categorical_crossentropy",
        _CCE,
        y_true,
        y_pred,
        bool(from_logits),
        float(label_smoothing),
        _axis("categorical_crossentropy", axis),
        config.epsilon(),
    )


def sparse_categorical_crossentropy(
    y_true, y_pred, from_logits=False, ignore_class=None, axis=-1
):
    """Crossentropy between integer class labels and predictions, per sample.

    With `ignore_class`, samples of that label give 0 (a `Loss` object also
    leaves them out of its mean, as Keras's mask does)."""
    axis = _axis("sparse_categorical_crossentropy", axis)
    t = _sparse_shape("sparse_categorical_crossentropy", y_true, y_pred, axis)
    return _sparse_categorical_crossentropy(
        y_true,
        y_pred,
        t,
        _pred_dtype(y_pred),
        bool(from_logits),
        None if ignore_class is None else int(ignore_class),
        axis,
        config.epsilon(),
    )


def binary_crossentropy(
    y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1
):
    """Binary crossentropy averaged over `axis`, per sample."""
    return _dense(
        "binary_crossentropy",
        _BCE,
        y_true,
        y_pred,
        bool(from_logits),
        float(label_smoothing),
        _axis("binary_crossentropy", axis),
        config.epsilon(),
    )


def binary_focal_crossentropy(
    y_true,
    y_pred,
    apply_class_balancing=False,
    alpha=0.25,
    gamma=2.0,
    from_logits=False,
    label_smoothing=0.0,
    axis=-1,
):
    """Focal binary crossentropy (Lin et al., 2018): `(1 - p_t)**gamma * bce`,
    optionally weighted by `alpha` for the positive class; mean over `axis`."""
    return _dense(
        "binary_focal_crossentropy",
        _BFCE,
        y_true,
        y_pred,
        bool(apply_class_balancing),
        float(alpha),
        float(gamma),
        bool(from_logits),
        float(label_smoothing),
        _axis("binary_focal_crossentropy", axis),
        config.epsilon(),
    )


def categorical_focal_crossentropy(
    y_true,
    y_pred,
    alpha=0.25,
    gamma=2.0,
    from_logits=False,
    label_smoothing=0.0,
    axis=-1,
):
    """Focal categorical crossentropy: `alpha * (1 - p)**gamma * cce`, per sample."""
    return _dense(
        "categorical_focal_crossentropy",
        _CFCE,
        y_true,
        y_pred,
        float(alpha),
        float(gamma),
        bool(from_logits),
        float(label_smoothing),
        _axis("categorical_focal_crossentropy", axis),
        config.epsilon(),
    )


def categorical_generalized_cross_entropy(y_true, y_pred, q):
    """Generalized crossentropy (Zhang & Sabuncu, 2018) of integer labels:
    `(1 - p_true**q) / q`, per sample."""
    if not 0 < q < 1:
        raise ValueError("q must be in the interval (0, 1)")
    return _categorical_generalized_cross_entropy(
        y_true, y_pred, _pred_dtype(y_pred), float(q)
    )


def mean_squared_error(y_true, y_pred):
    """Mean of squared errors over the last axis, per sample."""
    return _dense("mean_squared_error", _MSE, y_true, y_pred)


def mean_absolute_error(y_true, y_pred):
    """Mean of absolute errors over the last axis, per sample."""
    return _dense("mean_absolute_error", _MAE, y_true, y_pred)


def mean_absolute_percentage_error(y_true, y_pred):
    """`100 * mean(abs((y_true - y_pred) / max(abs(y_true), eps)))`, per sample."""
    return _dense(
        "mean_absolute_percentage_error", _MAPE, y_true, y_pred, config.epsilon()
    )


def mean_squared_logarithmic_error(y_true, y_pred):
    """`mean((log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1))**2)`."""
    return _dense(
        "mean_squared_logarithmic_error", _MSLE, y_true, y_pred, config.epsilon()
    )


def cosine_similarity(y_true, y_pred, axis=-1):
    """The negative cosine similarity along `axis` (a loss: -1 is best)."""
    return _dense(
        "cosine_similarity",
        _NEG_COSINE,
        y_true,
        y_pred,
        _axis("cosine_similarity", axis),
        config.epsilon(),
    )


def huber(y_true, y_pred, delta=1.0):
    """Huber loss (quadratic below `delta`, linear above) over the last axis."""
    return _dense("huber", _HUBER, y_true, y_pred, float(delta))


def log_cosh(y_true, y_pred):
    """`mean(log(cosh(y_pred - y_true)))` over the last axis, per sample."""
    return _dense("log_cosh", _LOG_COSH, y_true, y_pred)


def hinge(y_true, y_pred):
    """`mean(max(1 - y_true * y_pred, 0))`; 0/1 labels are read as -1/1."""
    return _dense("hinge", _HINGE, y_true, y_pred)


def squared_hinge(y_true, y_pred):
    """`mean(max(1 - y_true * y_pred, 0)**2)`; 0/1 labels are read as -1/1."""
    return _dense("squared_hinge", _SQUARED_HINGE, y_true, y_pred)


def categorical_hinge(y_true, y_pred):
    """`max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0)`."""
    return _dense("categorical_hinge", _CATEGORICAL_HINGE, y_true, y_pred)


def kl_divergence(y_true, y_pred):
    """Kullback-Leibler divergence `sum(y_true * log(y_true / y_pred))`, per sample."""
    return _dense("kl_divergence", _KLD, y_true, y_pred, config.epsilon())


def poisson(y_true, y_pred):
    """`mean(y_pred - y_true * log(y_pred + eps))` over the last axis."""
    return _dense("poisson", _POISSON, y_true, y_pred, config.epsilon())


def dice(y_true, y_pred, axis=None):
    """`1 - 2 * sum(y_true * y_pred) / (sum(y_true) + sum(y_pred))` over `axis`
    (None: every axis, one value)."""
    axis = _axis("dice", axis)
    return _dense("dice", _DICE, y_true, y_pred, axis, config.epsilon())


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """Tversky loss: `1 - tp / (tp + alpha * fp + beta * fn)` over `axis`."""
    return _dense(
        "tversky",
        _TVERSKY,
        y_true,
        y_pred,
        float(alpha),
        float(beta),
        _axis("tversky", axis),
        config.epsilon(),
    )


def ctc(y_true, y_pred):
    """Connectionist temporal classification loss, per sample.

    `y_true`: `(batch, max_label_length)` integer labels, 0-padded (0 is also
    the blank); `y_pred`: `(batch, time, classes)` logits, every step valid.
    """
    t, p = _shape_of(y_true), _shape_of(y_pred)
    if len(t) != 2:
        raise ValueError(
            "Targets `y_true` are expected to be a tensor of shape "
            "`(batch_size, max_length)` in integer format. "
            f"Received: y_true.shape={t}"
        )
    if len(p) != 3:
        raise ValueError(
            "Logits `y_pred` are expected to be a tensor of shape "
            "`(batch_size, max_length, num_classes)`. "
            f"Received: y_pred.shape={p}"
        )
    return _ctc(y_true, y_pred, _pred_dtype(y_pred))


def circle(
    y_true,
    y_pred,
    ref_labels=None,
    ref_embeddings=None,
    remove_diagonal=True,
    gamma=80,
    margin=0.4,
):
    """Circle loss (Sun et al., 2020) of L2-normalised embeddings `y_pred` with
    integer labels `y_true`, against `ref_*` (default: the batch itself)."""
    return _circle(
        y_true,
        y_pred,
        y_true if ref_labels is None else ref_labels,
        y_pred if ref_embeddings is None else ref_embeddings,
        _pred_dtype(y_pred),
        bool(remove_diagonal),
        float(gamma),
        float(margin),
    )


# -- reduction ------------------------------------------------------------------------
class Reduction:
    """TF's `tf.keras.losses.Reduction` names (Keras 3 takes the strings)."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(
                f'Invalid Reduction Key: {key}. Expected keys are "{cls.all()}"'
            )


_REDUCTIONS = {
    "auto": "sum_over_batch_size",
    "sum_over_batch_size": "sum_over_batch_size",
    "mean": "sum_over_batch_size",
    "mean_with_sample_weight": "mean_with_sample_weight",
    "sum": "sum",
    "none": "none",
    None: "none",
}


def _align(values, w):
    """Keras's `squeeze_or_expand_to_same_rank(values, w)`, then trailing axes
    of `w` dropped (size 1) or added so that it broadcasts against `values`."""
    if values.ndim == w.ndim + 1 and values.shape[-1] == 1:
        values, w = (values, w[..., None]) if w.ndim == 1 else (values[..., 0], w)
    elif w.ndim == values.ndim + 1 and w.shape[-1] == 1:
        values, w = (values[..., None], w) if values.ndim == 1 else (values, w[..., 0])
    while w.ndim > values.ndim and w.shape[-1] == 1:
        w = w[..., 0]
    while w.ndim < values.ndim:
        w = w[..., None]
    return values, w


@functools.lru_cache(maxsize=256)
def _weights_broadcast(values: tuple, weights: tuple) -> bool:
    zeros = np.float32(0)
    a, b = _align(np.broadcast_to(zeros, values), np.broadcast_to(zeros, weights))
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return False
    return True


def _check_weight_shape(name, losses, sample_weight):
    """TF's error for weights that do not broadcast against the loss values."""
    values, w = _shape_of(losses), _shape_of(sample_weight)
    if not _weights_broadcast(values, w):
        raise errors.invalid_argument(
            f"Incompatible shapes: the loss {name!r} gives values of shape "
            f"{values} and sample_weight has shape {w}. Pass one weight per "
            "sample (or per loss value).",
            "Mul",
        )


def _reduce_body(losses, w, mask, reduction):
    """Keras's `reduce_weighted_values`: mask merged into the weights (valid
    entries weigh `total / valid` under a mean), weights applied, reduced."""
    dtype = losses.dtype
    if mask is not None:
        m = mask.astype(bool)
        if reduction == "sum_over_batch_size":
            valid = jnp.sum(m.astype(dtype))
            scale = jnp.where(valid == 0, 0.0, m.size / jnp.where(valid == 0, 1, valid))
            fm = jnp.where(m, scale, 0.0).astype(dtype)
        else:
            fm = m.astype(dtype)
        if w is None:
            w = fm
        else:
            fm, w = _align(fm, w.astype(dtype))
            w = w * fm
    if w is not None:
        losses, w = _align(losses, w.astype(dtype))
        losses = losses * w
    if reduction == "none" or losses.ndim == 0 or losses.shape == (0,):
        return losses
    total = jnp.sum(losses)
    if reduction == "sum":
        return total
    div = (
        jnp.sum(w)
        if reduction == "mean_with_sample_weight" and w is not None
        else losses.size
    )
    div = jnp.asarray(div, dtype)
    return jnp.where(div == 0, 0.0, total / jnp.where(div == 0, 1, div)).astype(dtype)


@op("ReduceLoss", inputs=("losses",), jit=True)
def _reduce(losses, reduction):
    return _reduce_body(losses, None, None, reduction)


@op("ReduceWeightedLoss", inputs=("losses", "sample_weight"), jit=True)
def _reduce_weighted(losses, sample_weight, reduction):
    return _reduce_body(losses, jnp.asarray(sample_weight), None, reduction)


@op("ReduceMaskedLoss", inputs=("losses", "mask"), jit=True)
def _reduce_masked(losses, mask, reduction):
    return _reduce_body(losses, None, mask, reduction)


@op("ReduceMaskedWeightedLoss", inputs=("losses", "sample_weight", "mask"), jit=True)
def _reduce_masked_weighted(losses, sample_weight, mask, reduction):
    return _reduce_body(losses, jnp.asarray(sample_weight), mask, reduction)


@op("NotEqual", inputs=("y_true",), differentiable=False, jit=True)
def _valid_labels(y_true, shape, ignore_class):
    return y_true.reshape(shape) != ignore_class


@op("Greater", inputs=("losses",), differentiable=False, jit=True)
def _positive(losses):
    return losses > 0


def _half_to_floatx(x):
    """`x` cast to floatx when it is float16/bfloat16 (Keras computes losses
    in floatx; other dtypes are left to the loss, as before)."""
    d = getattr(x, "dtype", None)
    if d is not None and np.dtype(dtypes.np_dtype(d)).name in _HALF:
        return math_ops.cast(x, config.floatx())
    return x


_HALF = ("float16", "bfloat16")


class Loss:
    """Base class of Keras losses: `loss(y_true, y_pred, sample_weight=None)`.

    Subclasses implement `call(y_true, y_pred)` returning per-sample values.
    `reduction`: `"sum_over_batch_size"` (also `"mean"`, TF's `"auto"`),
    `"sum"`, `"mean_with_sample_weight"` (divide by the sum of the weights),
    `"none"` or None.
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        """`dtype`: the dtype the loss is computed in (None: floatx, float32);
        the predictions and labels are cast to it first, as in Keras 3."""
        if reduction not in _REDUCTIONS:
            raise ValueError(
                "Invalid value for argument `reduction`. Expected one of "
                "'sum_over_batch_size', 'sum', 'mean', 'mean_with_sample_weight', "
                f"'none', None (or TF's 'auto'). Received: reduction={reduction}"
            )
        self.name = name or type(self).__name__
        self.reduction = reduction
        self.dtype = dtype

    def __call__(self, y_true, y_pred, sample_weight=None):
        mode = _REDUCTIONS[self.reduction]
        if self.dtype is not None:  # Keras converts both to the loss's dtype
            y_pred = math_ops.cast(y_pred, self.dtype)
            y_true = math_ops.cast(y_true, self.dtype)
        else:  # (Keras's default, floatx: a mixed-precision model's loss)
            y_pred, y_true = _half_to_floatx(y_pred), _half_to_floatx(y_true)
        losses = self.call(y_true, y_pred)
        if sample_weight is not None:
            _check_weight_shape(self.name, losses, sample_weight)
        mask = self._mask(y_true, y_pred, losses)
        if mask is not None:
            if sample_weight is not None:
                return _reduce_masked_weighted(losses, sample_weight, mask, mode)
            return _reduce_masked(losses, mask, mode)
        if sample_weight is not None:
            return _reduce_weighted(losses, sample_weight, mode)
        if mode == "none":
            return losses
        return _reduce(losses, mode)

    def call(self, y_true, y_pred):
        raise NotImplementedError

    def _mask(self, y_true, y_pred, losses):
        """Keras's mask on the per-sample values (entries left out), or None."""
        return None

    def get_config(self) -> dict:
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, cfg: dict):
        return cls(**cfg)


class LossFunctionWrapper(Loss):
    """A `Loss` around a per-sample function and its keyword arguments."""

    def __init__(
        self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs
    ):
        super().__init__(name=name or fn.__name__, reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self) -> dict:
        return {**super().get_config(), **self._fn_kwargs}

    def __repr__(self):
        return f"<LossFunctionWrapper({self.fn}, kwargs={self._fn_kwargs})>"


def _loss_class(class_name, fn, default_name, params, order=None, mask=None):
    """Builds `CategoricalCrossentropy` & co.: `fn` with Keras's arguments
    (`params`, their defaults) in Keras's positional `order`."""
    order = order or [*params, "reduction", "name", "dtype"]

    def __init__(self, *args, **kw):
        if len(args) > len(order):
            raise TypeError(
                f"{class_name} takes at most {len(order)} positional arguments "
                f"({', '.join(order)}); got {len(args)}."
            )
        values = {
            **params,
            "reduction": "sum_over_batch_size",
            "name": default_name,
            "dtype": None,
        }
        values.update(zip(order, args))
        for key, value in kw.items():
            if key not in values:
                raise TypeError(f"{class_name} got an unexpected argument {key!r}.")
            if key in order[: len(args)]:
                raise TypeError(f"{class_name} got multiple values for {key!r}.")
            values[key] = value
        reduction, name = values.pop("reduction"), values.pop("name")
        dtype = values.pop("dtype")
        if "q" in values and not 0 < values["q"] < 1:
            raise ValueError("q must be in the interval (0, 1)")
        LossFunctionWrapper.__init__(
            self, fn, name=name, reduction=reduction, dtype=dtype, **values
        )
        for key, value in values.items():  # Keras's attributes (`from_logits`...)
            setattr(self, key, value)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction, **self._fn_kwargs}

    @classmethod
    def from_config(cls, cfg):
        return cls(**cfg)

    members = {
        "__init__": __init__,
        "get_config": get_config,
        "from_config": from_config,
        "__doc__": f"Keras's `{class_name}`: `{fn.__name__}` with a reduction.",
    }
    if mask is not None:
        members["_mask"] = mask
    return type(class_name, (LossFunctionWrapper,), members)


def _ignore_class_mask(self, y_true, y_pred, losses):
    ignore = self._fn_kwargs["ignore_class"]
    if ignore is None:
        return None
    axis = self._fn_kwargs["axis"]
    shape = _sparse_shape(self.name, y_true, y_pred, axis)
    return _valid_labels(y_true, shape, ignore)


def _circle_mask(self, y_true, y_pred, losses):
    return _positive(losses)


_CE = {"from_logits": False, "label_smoothing": 0.0, "axis": -1}
CategoricalCrossentropy = _loss_class(
    "CategoricalCrossentropy",
    categorical_crossentropy,
    "categorical_crossentropy",
    _CE,
)
SparseCategoricalCrossentropy = _loss_class(
    "SparseCategoricalCrossentropy",
    sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy",
    {"from_logits": False, "ignore_class": None, "axis": -1},
    ["from_logits", "ignore_class", "reduction", "axis", "name", "dtype"],
    mask=_ignore_class_mask,
)
BinaryCrossentropy = _loss_class(
    "BinaryCrossentropy", binary_crossentropy, "binary_crossentropy", _CE
)
BinaryFocalCrossentropy = _loss_class(
    "BinaryFocalCrossentropy",
    binary_focal_crossentropy,
    "binary_focal_crossentropy",
    {"apply_class_balancing": False, "alpha": 0.25, "gamma": 2.0, **_CE},
)
CategoricalFocalCrossentropy = _loss_class(
    "CategoricalFocalCrossentropy",
    categorical_focal_crossentropy,
    "categorical_focal_crossentropy",
    {"alpha": 0.25, "gamma": 2.0, **_CE},
)
CategoricalGeneralizedCrossEntropy = _loss_class(
    "CategoricalGeneralizedCrossEntropy",
    categorical_generalized_cross_entropy,
    "categorical_generalized_cross_entropy",
    {"q": 0.5},
)
MeanSquaredError = _loss_class(
    "MeanSquaredError", mean_squared_error, "mean_squared_error", {}
)
MeanAbsoluteError = _loss_class(
    "MeanAbsoluteError", mean_absolute_error, "mean_absolute_error", {}
)
MeanAbsolutePercentageError = _loss_class(
    "MeanAbsolutePercentageError",
    mean_absolute_percentage_error,
    "mean_absolute_percentage_error",
    {},
)
MeanSquaredLogarithmicError = _loss_class(
    "MeanSquaredLogarithmicError",
    mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error",
    {},
)
CosineSimilarity = _loss_class(
    "CosineSimilarity", cosine_similarity, "cosine_similarity", {"axis": -1}
)
Huber = _loss_class("Huber", huber, "huber_loss", {"delta": 1.0})
LogCosh = _loss_class("LogCosh", log_cosh, "log_cosh", {})
Hinge = _loss_class("Hinge", hinge, "hinge", {})
SquaredHinge = _loss_class("SquaredHinge", squared_hinge, "squared_hinge", {})
CategoricalHinge = _loss_class(
    "CategoricalHinge", categorical_hinge, "categorical_hinge", {}
)
KLDivergence = _loss_class("KLDivergence", kl_divergence, "kl_divergence", {})
Poisson = _loss_class("Poisson", poisson, "poisson", {})
CTC = _loss_class("CTC", ctc, "ctc", {})
Dice = _loss_class(
    "Dice", dice, "dice", {"axis": None}, ["reduction", "name", "axis", "dtype"]
)
Tversky = _loss_class(
    "Tversky",
    tversky,
    "tversky",
    {"alpha": 0.5, "beta": 0.5, "axis": None},
    ["alpha", "beta", "reduction", "name", "axis", "dtype"],
)
Circle = _loss_class(
    "Circle",
    circle,
    "circle",
    {"gamma": 80.0, "margin": 0.4, "remove_diagonal": True},
    mask=_circle_mask,
)

# Keras's short aliases (functions, as in tf.keras.losses).
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh

LOSSES = registry.Kind("loss", "keras.losses", snake_case_classes=False)
for _obj, *_aliases in (
    (categorical_crossentropy,),
    (sparse_categorical_crossentropy,),
    (binary_crossentropy, "bce", "BCE"),
    (binary_focal_crossentropy,),
    (categorical_focal_crossentropy,),
    (categorical_generalized_cross_entropy,),
    (mean_squared_error, "mse", "MSE"),
    (mean_absolute_error, "mae", "MAE"),
    (mean_absolute_percentage_error, "mape", "MAPE"),
    (mean_squared_logarithmic_error, "msle", "MSLE"),
    (cosine_similarity,),
    (huber,),
    (log_cosh,),
    (hinge,),
    (squared_hinge,),
    (categorical_hinge,),
    (kl_divergence, "kld", "KLD"),
    (poisson,),
    (dice,),
    (tversky,),
    (circle,),
    (ctc,),
    (CategoricalCrossentropy,),
    (SparseCategoricalCrossentropy,),
    (BinaryCrossentropy,),
    (BinaryFocalCrossentropy,),
    (CategoricalFocalCrossentropy,),
    (CategoricalGeneralizedCrossEntropy,),
    (MeanSquaredError,),
    (MeanAbsoluteError,),
    (MeanAbsolutePercentageError,),
    (MeanSquaredLogarithmicError,),
    (CosineSimilarity,),
    (Huber,),
    (LogCosh,),
    (Hinge,),
    (SquaredHinge,),
    (CategoricalHinge,),
    (KLDivergence,),
    (Poisson,),
    (CTC,),
    (Dice,),
    (Tversky,),
    (Circle,),
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
