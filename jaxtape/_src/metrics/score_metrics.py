"""Keras's per-class score metrics: IoU (confusion matrix of classes), F-beta
and R² (per-class sums, built on the first batch as Keras does). Layer L4."""

from __future__ import annotations

import warnings

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import config
from jaxtape._src.metrics.base import Metric
from jaxtape._src.ops import loss_ops


# -- intersection over union ----------------------------------------------------------
class IoU(Metric):
    """Intersection over union of the `target_class_ids`, from a
    `num_classes x num_classes` confusion matrix (Keras's `IoU`).

    `sparse_y_true`/`sparse_y_pred`: whether labels/predictions are class ids
    (else one-hot or scores, reduced with argmax over `axis`). The state's
    dtype is `dtype` (Keras's default: int64, so float sample weights are
    truncated, as in Keras).
    """

    _direction = "up"
    _THRESHOLD: float | None = None  # BinaryIoU's

    def __init__(
        self,
        num_classes,
        target_class_ids,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_true=True,
        sparse_y_pred=True,
        axis=-1,
    ):
        if max(target_class_ids) >= num_classes:
            raise ValueError(
                f"Target class id {max(target_class_ids)} is out of range, which "
                f"is [0, {num_classes})."
            )
        self.num_classes = int(num_classes)
        self.target_class_ids = list(target_class_ids)
        self.ignore_class = ignore_class
        self.sparse_y_true, self.sparse_y_pred = sparse_y_true, sparse_y_pred
        self.axis = axis
        super().__init__(name=name, dtype=dtype or "int64")

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:  # pyright: ignore[reportIncompatibleMethodOverride]
        weight_dtype = getattr(sample_weight, "dtype", None)
        if (
            weight_dtype is not None
            and "float" in str(weight_dtype)
            and self._dtype.kind in "iu"
        ):  # Keras's warning: the weights are truncated to the state's ints
            warnings.warn(
                "You are passing weight as `float`, but dtype is `int`. This may "
                "result in an incorrect weight due to type casting Consider using "
                "integer weights.",
                stacklevel=2,
            )
        self._update_state(y_true, y_pred, sample_weight)

    def _init_state(self):
        cm = np.zeros((self.num_classes, self.num_classes), self._dtype)
        return [("total_confusion_matrix", cm)]

    def _static(self):
        return (
            self.num_classes,
            self.ignore_class,
            bool(self.sparse_y_true),
            bool(self.sparse_y_pred),
            int(self.axis),
            self._THRESHOLD,
            tuple(self.target_class_ids),
            config.epsilon(),
        )

    @staticmethod
    def _update(static, state, y_true, y_pred, sample_weight):
        n, ignore, sparse_true, sparse_pred, axis, threshold = static[:6]
        (cm,) = state
        if threshold is not None:
            y_pred = y_pred.astype(jnp.float32) >= threshold
        if not sparse_true:
            y_true = jnp.argmax(y_true, axis=axis)
        if not sparse_pred:
            y_pred = jnp.argmax(y_pred, axis=axis)
        y_true = y_true.astype(cm.dtype).reshape(-1)
        y_pred = y_pred.astype(cm.dtype).reshape(-1)
        if sample_weight is None:
            w = jnp.ones_like(y_true)
        else:
            w = jnp.broadcast_to(
                sample_weight.astype(cm.dtype).reshape(-1), y_true.shape
            )
        valid = (y_true >= 0) & (y_true < n) & (y_pred >= 0) & (y_pred < n)
        if ignore is not None:
            valid = valid & (y_true != ignore)
        y_true = jnp.where(valid, y_true, 0)
        y_pred = jnp.where(valid, y_pred, 0)
        w = jnp.where(valid, w, 0)
        return (cm.at[y_true, y_pred].add(w),)

    @staticmethod
    def _result(static, state):
        targets, eps = np.asarray(static[6], np.int32), static[7]
        cm = state[0].astype(jnp.float32)
        tp = jnp.diag(cm)
        denominator = (jnp.sum(cm, axis=0) + jnp.sum(cm, axis=1) - tp)[targets]
        tp = tp[targets]
        valid = denominator > 1e-9
        iou = jnp.where(valid, tp / (denominator + eps), 0.0)
        return jnp.sum(iou) / (jnp.sum(valid.astype(jnp.float32)) + eps)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "num_classes": self.num_classes,
            "target_class_ids": self.target_class_ids,
            "ignore_class": self.ignore_class,
            "sparse_y_true": self.sparse_y_true,
            "sparse_y_pred": self.sparse_y_pred,
            "axis": self.axis,
        }


class BinaryIoU(IoU):
    """IoU of binary labels and scores (`y_pred >= threshold` is class 1)."""

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        self.threshold = float(threshold)
        self._THRESHOLD = self.threshold
        super().__init__(2, target_class_ids, name=name, dtype=dtype)

    def get_config(self) -> dict:
        return {
            "target_class_ids": self.target_class_ids,
            "threshold": self.threshold,
            "name": self.name,
            "dtype": self._dtype.name,
        }


class MeanIoU(IoU):
    """The mean IoU over all `num_classes` classes."""

    def __init__(
        self,
        num_classes,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_true=True,
        sparse_y_pred=True,
        axis=-1,
    ):
        super().__init__(
            num_classes,
            list(range(num_classes)),
            name=name,
            dtype=dtype,
            ignore_class=ignore_class,
            sparse_y_true=sparse_y_true,
            sparse_y_pred=sparse_y_pred,
            axis=axis,
        )

    def get_config(self) -> dict:
        cfg = super().get_config()
        del cfg["target_class_ids"]
        return cfg


class OneHotIoU(IoU):
    """IoU of one-hot labels (and scores, or class ids with `sparse_y_pred`)."""

    def __init__(
        self,
        num_classes,
        target_class_ids,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_pred=False,
        axis=-1,
    ):
        super().__init__(
            num_classes,
            target_class_ids,
            name=name,
            dtype=dtype,
            ignore_class=ignore_class,
            sparse_y_true=False,
            sparse_y_pred=sparse_y_pred,
            axis=axis,
        )

    def get_config(self) -> dict:
        cfg = super().get_config()
        del cfg["sparse_y_true"]
        return cfg


class OneHotMeanIoU(MeanIoU):
    """The mean IoU over all classes, of one-hot labels."""

    def __init__(
        self,
        num_classes,
        name=None,
        dtype=None,
        ignore_class=None,
        sparse_y_pred=False,
        axis=-1,
    ):
        super().__init__(
            num_classes,
            name=name,
            dtype=dtype,
            ignore_class=ignore_class,
            sparse_y_true=False,
            sparse_y_pred=sparse_y_pred,
            axis=axis,
        )

    def get_config(self) -> dict:
        cfg = super().get_config()
        del cfg["sparse_y_true"]
        return cfg


def _zeros(shape):
    return np.broadcast_to(np.float32(0), shape)  # shape only, no memory


def _require_2d(name, y_true_shape, y_pred_shape):
    if len(y_pred_shape) != 2 or len(y_true_shape) != 2:
        raise ValueError(
            f"{name} expects 2D inputs with shape (batch_size, output_dim). "
            f"Received input shapes: y_pred.shape={y_pred_shape} and "
            f"y_true.shape={y_true_shape}."
        )


# -- F-beta ---------------------------------------------------------------------------
class FBetaScore(Metric):
    """Keras's `FBetaScore`: per-class (or micro/macro/weighted) F-beta of
    2D multi-label predictions; `threshold=None` marks each row's top score."""

    _direction = "up"
    _LAZY = True

    def __init__(
        self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None
    ):
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError(
                "Invalid `average` argument value. Expected one of: "
                "{None, 'micro', 'macro', 'weighted'}. "
                f"Received: average={average}"
            )
        if not isinstance(beta, float):
            raise ValueError(
                "Invalid `beta` argument value. It should be a Python float. "
                f"Received: beta={beta} of type '{type(beta)}'"
            )
        if beta <= 0.0:
            raise ValueError(
                "Invalid `beta` argument value. It should be > 0. "
                f"Received: beta={beta}"
            )
        if threshold is not None:
            if not isinstance(threshold, float):
                raise ValueError(
                    "Invalid `threshold` argument value. It should be a Python "
                    f"float. Received: threshold={threshold} of type "
                    f"'{type(threshold)}'"
                )
            if threshold > 1.0 or threshold <= 0.0:
                raise ValueError(
                    "Invalid `threshold` argument value. It should verify "
                    f"0 < threshold <= 1. Received: threshold={threshold}"
                )
        self.average, self.beta, self.threshold = average, beta, threshold
        self.axis = None if average == "micro" else 0
        super().__init__(name=name, dtype=dtype)

    def _init_state(self, y_true_shape, y_pred_shape):
        _require_2d(type(self).__name__, y_true_shape, y_pred_shape)
        shape = () if self.average == "micro" else (y_pred_shape[-1],)
        z = np.zeros(shape, self._dtype)
        names = ("true_positives", "false_positives", "false_negatives")
        return [(n, z) for n in (*names, "intermediate_weights")]

    def _static(self):
        return (self.average, self.beta, self.threshold, self.axis, config.epsilon())

    @staticmethod
    def _update(static, state, y_true, y_pred, sample_weight):
        _, _, threshold, axis, _ = static
        dtype = state[0].dtype
        y_true, y_pred = y_true.astype(dtype), y_pred.astype(dtype)
        if threshold is None:
            top = jnp.max(y_pred, axis=-1, keepdims=True)
            y_pred = (y_pred >= top) & (jnp.abs(y_pred) > 1e-9)
        else:
            y_pred = y_pred > threshold
        y_pred = y_pred.astype(dtype)

        def weighted_sum(val):
            if sample_weight is not None:
                val = val * sample_weight.astype(dtype)[:, None]
            return jnp.sum(val, axis=axis)

        tp, fp, fn, iw = state
        return (
            tp + weighted_sum(y_pred * y_true),
            fp + weighted_sum(y_pred * (1 - y_true)),
            fn + weighted_sum((1 - y_pred) * y_true),
            iw + weighted_sum(y_true),
        )

    @staticmethod
    def _result(static, state):
        average, beta, _, _, eps = static
        tp, fp, fn, iw = state
        precision = tp / (tp + fp + eps)
        recall = tp / (tp + fn + eps)
        f = precision * recall / (beta**2 * precision + recall + eps) * (1 + beta**2)
        if average == "weighted":
            return jnp.sum(f * iw / (jnp.sum(iw) + eps))
        if average is not None:
            return jnp.mean(f)
        return f

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "average": self.average,
            "beta": self.beta,
            "threshold": self.threshold,
        }


class F1Score(FBetaScore):
    """Keras's `F1Score`: `FBetaScore` with `beta=1`."""

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(
            average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype
        )

    def get_config(self) -> dict:
        cfg = super().get_config()
        del cfg["beta"]
        return cfg


# -- R² -------------------------------------------------------------------------------
class R2Score(Metric):
    """Keras's `R2Score` (coefficient of determination) of 2D regression outputs.

    Differences from Keras: with `num_regressors` too large for the samples
    seen, the plain R² is returned without Keras's warning.
    """

    _direction = "up"
    _LAZY = True

    def __init__(
        self,
        class_aggregation="uniform_average",
        num_regressors=0,
        name="r2_score",
        dtype=None,
    ):
        allowed = (None, "uniform_average", "variance_weighted_average")
        if class_aggregation not in allowed:
            raise ValueError(
                "Invalid value for argument `class_aggregation`. Expected one of "
                f"{allowed}. Received: class_aggregation={class_aggregation}"
            )
        if num_regressors < 0:
            raise ValueError(
                "Invalid value for argument `num_regressors`. Expected a value "
                f">= 0. Received: num_regressors={num_regressors}"
            )
        self.class_aggregation, self.num_regressors = class_aggregation, num_regressors
        super().__init__(name=name, dtype=dtype)

    def _init_state(self, y_true_shape, y_pred_shape):
        t, p = (
            a.shape
            for a in loss_ops.same_rank(_zeros(y_true_shape), _zeros(y_pred_shape))
        )
        _require_2d("R2Score", t, p)
        z = np.zeros((p[-1],), self._dtype)
        return [
            ("num_samples", np.zeros((), self._dtype)),
            ("squared_sum", z),
            ("sum", z),
            ("residual", z),
            ("count", z),
        ]

    def _static(self):
        return (self.class_aggregation, int(self.num_regressors))

    @staticmethod
    def _update(static, state, y_true, y_pred, sample_weight):
        n, sq, s, res, count = state
        dtype = s.dtype
        y_true, y_pred = y_true.astype(dtype), y_pred.astype(dtype)
        y_true, y_pred = loss_ops.same_rank(y_true, y_pred)
        w = (
            jnp.ones((), dtype)
            if sample_weight is None
            else sample_weight.astype(dtype)
        )
        if w.ndim == 1:
            w = w[:, None]
        w = jnp.broadcast_to(w, y_true.shape)
        wt = y_true * w
        return (
            n + y_true.size,
            sq + jnp.sum(y_true * wt, axis=0),
            s + jnp.sum(wt, axis=0),
            res + jnp.sum((y_true - y_pred) ** 2 * w, axis=0),
            count + jnp.sum(w, axis=0),
        )

    @staticmethod
    def _result(static, state):
        aggregation, p = static
        n, sq, s, res, count = state
        mean = s / count
        total = sq - s * mean
        raw = 1 - res / total
        raw = jnp.where(jnp.isinf(raw), 0.0, raw)
        if aggregation == "uniform_average":
            r2 = jnp.mean(raw)
        elif aggregation == "variance_weighted_average":
            r2 = jnp.sum(total * raw) / jnp.sum(total)
        else:
            r2 = raw
        if p:
            adjusted = 1.0 - (1.0 - r2) * (n - 1.0) / (n - p - 1.0)
            r2 = jnp.where(p < n - 1, adjusted, r2)
        return r2

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "class_aggregation": self.class_aggregation,
            "num_regressors": self.num_regressors,
        }
