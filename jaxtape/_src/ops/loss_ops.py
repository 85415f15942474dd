"""Per-sample Keras loss formulas as pure jnp functions. Layer L1.

One home for the math that `keras.losses` (as recorded ops) and
`keras.metrics` (inside their compiled updates) both use: each function takes
`y_true` and `y_pred` as arrays of one float dtype with matching ranks (the
callers do Keras's casting and `squeeze_or_expand_to_same_rank`) and static
parameters, and returns one value per sample, as Keras 3's `keras.losses`
functions do. `eps` is `keras.backend.epsilon()`, passed in so that the
formulas stay pure.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxtape._src.ops import kinks
from jaxtape._src.ops.nn_ops import softmax_xent_tf


def same_rank(y_true, y_pred):
    """Keras's `squeeze_or_expand_to_same_rank` on arrays (static shapes)."""
    t, p = y_true.ndim, y_pred.ndim
    if t == p + 1 and y_true.shape[-1] == 1:
        if p == 1:
            y_pred = y_pred[..., None]
        else:
            y_true = y_true[..., 0]
    elif p == t + 1 and y_pred.shape[-1] == 1:
        if t == 1:
            y_true = y_true[..., None]
        else:
            y_pred = y_pred[..., 0]
    return y_true, y_pred


def _smooth(y_true, label_smoothing, n):
    return y_true * (1.0 - label_smoothing) + label_smoothing / n


def l2_normalize(x, axis, eps):
    """Keras's `ops.normalize` (order 2): `x * min(rsqrt(sum(x**2)), 1/eps)`."""
    return kinks.l2_normalize(x, axis, eps)


def categorical_crossentropy(y_true, y_pred, from_logits, label_smoothing, axis, eps):
    if label_smoothing:
        y_true = _smooth(y_true, label_smoothing, y_true.shape[-1])
    if from_logits:  # TF's fused op, with its gradient (as tf.keras computes it)
        return softmax_xent_tf(y_true, y_pred, axis)
    p = y_pred / jnp.sum(y_pred, axis=axis, keepdims=True)
    return -jnp.sum(y_true * jnp.log(kinks.clip(p, eps, 1.0 - eps)), axis=axis)


def sparse_categorical_crossentropy(
    labels, y_pred, from_logits, ignore_class, axis, eps
):
    """`labels`: integer class ids (the predictions' shape without `axis`)."""
    if from_logits:
        log_p = jax.nn.log_softmax(y_pred, axis=axis)
    else:
        p = y_pred / jnp.sum(y_pred, axis=axis, keepdims=True)
        log_p = jnp.log(kinks.clip(p, eps, 1.0 - eps))
    valid = None
    if ignore_class is not None:
        valid = labels != ignore_class
        labels = jnp.where(valid, labels, 0)
    picked = jnp.take_along_axis(
        jnp.moveaxis(log_p, axis, -1), labels[..., None], axis=-1
    )[..., 0]
    return -picked if valid is None else jnp.where(valid, -picked, 0.0)


def _elementwise_bce(y_true, y_pred, from_logits, eps):
    if from_logits:  # TF's sigmoid_cross_entropy_with_logits, exactly
        cond = y_pred >= 0  # (so that the gradient at 0 is TF's too)
        relu_logits = jnp.where(cond, y_pred, jnp.zeros_like(y_pred))
        neg_abs_logits = jnp.where(cond, -y_pred, y_pred)
        return relu_logits - y_pred * y_true + jnp.log1p(jnp.exp(neg_abs_logits))
    p = kinks.clip(y_pred, eps, 1.0 - eps)
    return -(y_true * jnp.log(p) + (1.0 - y_true) * jnp.log(1.0 - p))


def binary_crossentropy(y_true, y_pred, from_logits, label_smoothing, axis, eps):
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return jnp.mean(_elementwise_bce(y_true, y_pred, from_logits, eps), axis=axis)


def binary_focal_crossentropy(
    y_true,
    y_pred,
    apply_class_balancing,
    alpha,
    gamma,
    from_logits,
    label_smoothing,
    axis,
    eps,
):
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = jax.nn.sigmoid(y_pred)
    bce = _elementwise_bce(y_true, y_pred, False, eps)
    p_t = y_true * y_pred + (1 - y_true) * (1 - y_pred)
    focal = jnp.power(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1 - y_true) * (1 - alpha)) * focal
    return jnp.mean(focal, axis=axis)


def categorical_focal_crossentropy(
    y_true, y_pred, alpha, gamma, from_logits, label_smoothing, axis, eps
):
    if label_smoothing:
        y_true = _smooth(y_true, label_smoothing, y_true.shape[-1])
    if from_logits:
        y_pred = jax.nn.softmax(y_pred, axis=axis)
    out = y_pred / jnp.sum(y_pred, axis=axis, keepdims=True)
    out = kinks.clip(out, eps, 1.0 - eps)
    cce = -y_true * jnp.log(out)
    return jnp.sum(jnp.power(1.0 - out, gamma) * alpha * cce, axis=axis)


def categorical_generalized_cross_entropy(labels, y_pred, q):
    """`labels`: integer class ids, one per row of `y_pred`."""
    one_hot = jax.nn.one_hot(labels, y_pred.shape[-1], dtype=y_pred.dtype)
    p = jnp.sum(y_pred * one_hot, axis=-1)
    return (1 - jnp.power(p, q)) / q


def mean_squared_error(y_true, y_pred):
    d = y_true - y_pred
    return jnp.mean(d * d, axis=-1)


def mean_absolute_error(y_true, y_pred):
    return jnp.mean(kinks.abs(y_true - y_pred), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred, eps):
    diff = kinks.abs((y_true - y_pred) / kinks.maximum(kinks.abs(y_true), eps))
    return 100.0 * jnp.mean(diff, axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred, eps):
    d = jnp.log(kinks.maximum(y_pred, eps) + 1.0) - jnp.log(
        kinks.maximum(y_true, eps) + 1.0
    )
    return jnp.mean(d * d, axis=-1)


def cosine_similarity(y_true, y_pred, axis, eps):
    """The similarity (the loss is its negative; the metric is this)."""
    y_pred = l2_normalize(y_pred, axis, eps)
    y_true = l2_normalize(y_true, axis, eps)
    return jnp.sum(y_true * y_pred, axis=axis)


def huber(y_true, y_pred, delta):
    err = y_pred - y_true
    abs_err = kinks.abs(err)
    sq = 0.5 * err * err
    return jnp.mean(
        jnp.where(abs_err <= delta, sq, delta * abs_err - 0.5 * delta * delta), axis=-1
    )


def log_cosh(y_true, y_pred):
    x = y_pred - y_true
    return jnp.mean(
        x + jax.nn.softplus(-2.0 * x) - np.log(2.0).astype(x.dtype), axis=-1
    )


def _hinge_labels(y_true):
    """Keras: labels that are all 0 or 1 become -1 or 1; others stay."""
    binary = jnp.all((y_true == 0) | (y_true == 1))
    return jnp.where(binary, 2.0 * y_true - 1.0, y_true)


def hinge(y_true, y_pred):
    y_true = _hinge_labels(y_true)
    return jnp.mean(kinks.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def squared_hinge(y_true, y_pred):
    y_true = _hinge_labels(y_true)
    return jnp.mean(jnp.square(kinks.maximum(1.0 - y_true * y_pred, 0.0)), axis=-1)


def categorical_hinge(y_true, y_pred):
    pos = jnp.sum(y_true * y_pred, axis=-1)
    neg = jnp.max((1.0 - y_true) * y_pred, axis=-1)
    return kinks.maximum(neg - pos + 1.0, 0.0)


def kl_divergence(y_true, y_pred, eps):
    t = kinks.clip(y_true, eps, 1.0)
    p = kinks.clip(y_pred, eps, 1.0)
    return jnp.sum(t * jnp.log(t / p), axis=-1)


def poisson(y_true, y_pred, eps):
    return jnp.mean(y_pred - y_true * jnp.log(y_pred + eps), axis=-1)


def dice(y_true, y_pred, axis, eps):
    inter = jnp.sum(y_true * y_pred, axis=axis)
    total = jnp.sum(y_true, axis=axis) + jnp.sum(y_pred, axis=axis)
    return 1 - 2.0 * inter / (total + eps)


def tversky(y_true, y_pred, alpha, beta, axis, eps):
    inter = jnp.sum(y_true * y_pred, axis=axis)
    fp = jnp.sum((1 - y_pred) * y_true, axis=axis)
    fn = jnp.sum(y_pred * (1 - y_true), axis=axis)
    return 1 - inter / (inter + fp * alpha + fn * beta + eps)


def circle(labels, y_pred, ref_labels, ref_embeddings, remove_diagonal, gamma, margin):
    """Keras's circle loss on L2-normalised embeddings; labels are int32."""
    dist = kinks.maximum(1 - y_pred @ ref_embeddings.T, 0.0)
    pos = labels.reshape(-1, 1) == ref_labels.reshape(1, -1)
    neg = ~pos
    if remove_diagonal:
        pos = pos & ~jnp.eye(labels.size, ref_labels.size, dtype=bool)
    pos_w = kinks.maximum((margin + dist) * pos.astype(dist.dtype), 0.0)
    neg_w = kinks.maximum((1 + margin - dist) * neg.astype(dist.dtype), 0.0)
    pos_d = -gamma * pos_w * (margin - dist)
    neg_d = gamma * neg_w * (1 - margin - dist)
    p_loss = jax.nn.logsumexp(jnp.where(pos, pos_d, -jnp.inf), axis=1)
    n_loss = jax.nn.logsumexp(jnp.where(neg, neg_d, -jnp.inf), axis=1)
    return jax.nn.softplus(p_loss + n_loss)


@jax.jit  # compiled: a tape's eager replay of its scan would run op by op
def _optax_ctc(logits, logit_pad, labels, label_pad):
    with jax.numpy_dtype_promotion("standard"):  # optax's float64 one-hots (x64)
        return optax.ctc_loss(logits, logit_pad, labels, label_pad, blank_id=0)


def ctc(labels, logits):
    """CTC loss per sample: `labels` (batch, max_label_length) int, 0 padding
    and blank; `logits` (batch, time, classes), every step valid (Keras's)."""
    dtype = logits.dtype
    logits = logits.astype(jnp.float32) if dtype == jnp.float64 else logits
    logit_pad = jnp.zeros(logits.shape[:2], logits.dtype)
    label_pad = (labels == 0).astype(logits.dtype)
    out = _optax_ctc(logits, logit_pad, labels, label_pad)
    return out.astype(dtype)
