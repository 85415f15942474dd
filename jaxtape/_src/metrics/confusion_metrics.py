"""Keras's confusion-matrix metrics: counts, precision and recall at
thresholds, AUC, and one rate at a fixed value of another. Layer L4.

Every update counts weighted true/false positives/negatives per threshold
(`y_pred > threshold` is a positive) in one compiled call.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.metrics.base import Metric, _safe_div, _weights_like

_NEG_INF = -1e10  # Keras's threshold with top_k: every top-k prediction counts


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
        self.init_thresholds = thresholds
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
        return {
            **super().get_config(),
            "thresholds": self.init_thresholds,
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


def _parse_thresholds(thresholds, default):
    """Keras's `parse_init_thresholds`: a list of floats in [0, 1]."""
    if thresholds is None:
        return (float(default),)
    listed = [thresholds] if np.ndim(thresholds) == 0 else list(thresholds)
    for t in listed:
        if t is None or not 0 <= t <= 1:
            raise ValueError(
                "Threshold values must be in [0, 1]. Received: "
                f"{listed}. Pass thresholds between 0 and 1."
            )
    return tuple(float(t) for t in listed)


class _ConfusionCount(Metric):
    """One weighted count of the confusion matrix per threshold."""

    _INDEX: int  # in (tp, fp, tn, fn)

    def __init__(self, thresholds=None, name=None, dtype=None):
        """`thresholds`: a float or a list of floats in [0, 1] (default 0.5);
        one threshold gives a scalar result, several a vector."""
        self.init_thresholds = thresholds
        self.thresholds = _parse_thresholds(thresholds, 0.5)
        super().__init__(name=name, dtype=dtype)

    def _init_state(self):
        return [("accumulator", np.zeros(len(self.thresholds), np.float32))]

    def _static(self):
        return (self.thresholds, self._INDEX)

    @staticmethod
    def _update(static, state, y_true, y_pred, sample_weight):
        thresholds, index = static
        counts = _confusion(thresholds, y_true, y_pred, sample_weight, None, None)
        return (state[0] + counts[index],)

    @staticmethod
    def _result(static, state):
        return state[0][0] if len(static[0]) == 1 else state[0]

    def get_config(self) -> dict:
        return {**super().get_config(), "thresholds": self.init_thresholds}


class TruePositives(_ConfusionCount):
    """The weighted number of true positives (`y_pred > threshold`, label 1)."""

    _INDEX = 0


class FalsePositives(_ConfusionCount):
    """The weighted number of false positives (`y_pred > threshold`, label 0)."""

    _INDEX = 1


class TrueNegatives(_ConfusionCount):
    """The weighted number of true negatives (`y_pred <= threshold`, label 0)."""

    _INDEX = 2


class FalseNegatives(_ConfusionCount):
    """The weighted number of false negatives (`y_pred <= threshold`, label 1)."""

    _INDEX = 3


class _RateAtRate(Metric):
    """Keras's `SensitivitySpecificityBase`: the best `dependent` rate over the
    `num_thresholds` thresholds where the `constrained` rate is >= `value`."""

    _VALUE: str  # the constructor's first argument (`recall`, ...)
    _KIND: str  # which rates: "sensitivity@specificity", ...
    _direction = "up"

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        if value < 0 or value > 1:
            raise ValueError(
                f"Argument `{self._VALUE}` must be in the range [0, 1]. "
                f"Received: {self._VALUE}={value}"
            )
        if num_thresholds <= 0:
            raise ValueError(
                "Argument `num_thresholds` must be an integer > 0. "
                f"Received: num_thresholds={num_thresholds}"
            )
        setattr(self, self._VALUE, value)
        self.value, self.num_thresholds, self.class_id = value, num_thresholds, class_id
        if num_thresholds == 1:
            self.thresholds = (0.5,)
        else:
            n = num_thresholds
            inner = [(i + 1) * 1.0 / (n - 1) for i in range(n - 2)]
            self.thresholds = tuple([0.0, *inner, 1.0])
        super().__init__(name=name, dtype=dtype)

    def _init_state(self):
        z = np.zeros(len(self.thresholds), np.float32)
        names = ("true_positives", "false_positives", "true_negatives")
        return [(n, z) for n in (*names, "false_negatives")]

    def _static(self):
        return (self.thresholds, self.class_id, float(self.value), self._KIND)

    @staticmethod
    def _update(static, state, y_true, y_pred, sample_weight):
        thresholds, class_id = static[:2]
        new = _confusion(thresholds, y_true, y_pred, sample_weight, class_id, None)
        return tuple(s + n for s, n in zip(state, new))

    @staticmethod
    def _result(static, state):
        _, _, value, kind = static
        tp, fp, tn, fn = state
        rates = {
            "sensitivity": _safe_div(tp, tp + fn),
            "specificity": _safe_div(tn, tn + fp),
            "precision": _safe_div(tp, tp + fp),
        }
        rates["recall"] = rates["sensitivity"]
        dependent, constrained = (rates[k] for k in kind.split("@"))
        feasible = constrained >= value
        return jnp.maximum(jnp.max(jnp.where(feasible, dependent, 0.0)), 0.0)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "class_id": self.class_id,
            "num_thresholds": self.num_thresholds,
            self._VALUE: self.value,
        }


class SensitivityAtSpecificity(_RateAtRate):
    """The best sensitivity (recall) where the specificity is >= `specificity`."""

    _VALUE, _KIND = "specificity", "sensitivity@specificity"

    def __init__(
        self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None
    ):
        super().__init__(specificity, num_thresholds, class_id, name, dtype)


class SpecificityAtSensitivity(_RateAtRate):
    """The best specificity where the sensitivity (recall) is >= `sensitivity`."""

    _VALUE, _KIND = "sensitivity", "specificity@sensitivity"

    def __init__(
        self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None
    ):
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)


class PrecisionAtRecall(_RateAtRate):
    """The best precision where the recall is >= `recall`."""

    _VALUE, _KIND = "recall", "precision@recall"

    def __init__(
        self, recall, num_thresholds=200, class_id=None, name=None, dtype=None
    ):
        super().__init__(recall, num_thresholds, class_id, name, dtype)


class RecallAtPrecision(_RateAtRate):
    """The best recall where the precision is >= `precision`."""

    _VALUE, _KIND = "precision", "recall@precision"

    def __init__(
        self, precision, num_thresholds=200, class_id=None, name=None, dtype=None
    ):
        super().__init__(precision, num_thresholds, class_id, name, dtype)
