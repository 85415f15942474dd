"""Connectionist temporal classification in `tf.nn`: the dense CTC loss (on
optax's forward algorithm), label preprocessing (`ctc_unique_labels`,
`collapse_repeated`) and the dense core of the greedy decoder. Layer L1: imports
`core` and `ops` only; the decoders' SparseTensor results are built in
`structured/nn_sparse_ops.py`.
"""

from __future__ import annotations

import functools

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
import optax

from jaxtape._src.core import errors
from jaxtape._src.core.dispatch import op, to_value

_LOW_FLOATS = (np.dtype(jnp.float16), np.dtype(jnp.bfloat16))


def _is_sparse(x) -> bool:
    return hasattr(x, "indices") and hasattr(x, "dense_shape")


@op(
    "CTCLossDense",
    inputs=("logits", "labels", "label_length", "logit_length"),
    jit=True,
)
@functools.partial(jax.jit, static_argnums=(4,))  # one compiled backward
def _ctc_loss(logits, labels, label_length, logit_length, blank):
    # logits: [batch, time, classes]. optax computes the log-softmax and the
    # forward recursion; its gradient is TF's `softmax - posterior`, masked
    # past `logit_length`.
    t, n = logits.shape[1], labels.shape[1]
    logit_pad = (
        jnp.arange(t, dtype=jnp.int32)[None, :] >= logit_length[:, None]
    ).astype(logits.dtype)
    label_pad = (
        jnp.arange(n, dtype=jnp.int32)[None, :] >= label_length[:, None]
    ).astype(logits.dtype)
    labels = labels.astype(jnp.int32)
    if blank:  # TF's: move the blank class first and shift the labels below it
        logits = jnp.concatenate(
            [
                logits[..., blank : blank + 1],
                logits[..., :blank],
                logits[..., blank + 1 :],
            ],
            axis=-1,
        )
        labels = jnp.where(labels < blank, labels + 1, labels)
    # (optax mixes float64 one-hots into the logits' dtype: promote as NumPy.)
    with jax.numpy_dtype_promotion("standard"):
        loss = optax.ctc_loss(logits, logit_pad, labels, label_pad, blank_id=0)
    return loss.astype(logits.dtype)


def ctc_loss(
    labels,
    logits,
    label_length,
    logit_length,
    logits_time_major=True,
    unique=None,
    blank_index=None,
    name=None,
):
    """CTC negative log-likelihood per sequence (TF 2's `tf.nn.ctc_loss`,
    dense labels: TF's `ctc_loss_dense`).

    Args:
      labels: int `[batch, max_label_length]`, padded past `label_length`.
      logits: `[time, batch, classes]` (`[batch, time, classes]` when
        `logits_time_major=False`); the softmax is taken here.
      label_length: `[batch]` label lengths.
      logit_length: `[batch]` number of valid frames per sequence.
      logits_time_major: the layout of `logits`.
      unique: `ctc_unique_labels(labels)`, TF's speed hint; the loss does not
        depend on it (checked for shape only).
      blank_index: the blank class, default 0; negative counts from the end.
      name: accepted for TensorFlow compatibility; ignored.

    Returns:
      float `[batch]`, the dtype of `logits` (float16/bfloat16 computed in
      float32, as TF).

    Differences from TensorFlow: `SparseTensor` labels raise
    `NotImplementedError` here (`jaxtape.nn.ctc_loss` takes them). An
    impossible alignment (a label longer than its frames allow) gives a large
    finite loss of about 1e5 (optax's log-epsilon) where TF's dense loss gives
    about 700; the gradients agree.
    """
    del name  # accepted for TF compatibility
    if _is_sparse(labels):
        raise NotImplementedError(
            "ctc_loss with SparseTensor labels is not supported in jaxtape; pass "
            "dense zero-padded labels and `label_length`."
        )
    if label_length is None:
        raise ValueError(
            "ctc_loss: `label_length` is required with dense labels (it may be "
            "None only for SparseTensor labels)."
        )
    x = to_value(logits)
    if np.ndim(x) != 3:
        raise ValueError(
            f"ctc_loss: logits must be 3-D; got shape {list(np.shape(x))}."
        )
    num_classes = np.shape(x)[2]
    blank = 0 if blank_index is None else int(blank_index)
    if blank < 0:
        blank += num_classes
    if not 0 <= blank < num_classes:
        raise errors.invalid_argument(
            f"blank_index {blank_index} is out of range for {num_classes} classes.",
            "CTCLossDense",
        )
    if unique is not None:
        u, idx = unique
        if np.shape(to_value(u)) != np.shape(to_value(labels)) or np.shape(
            to_value(idx)
        ) != np.shape(to_value(labels)):
            raise ValueError(
                "ctc_loss: `unique` must be `ctc_unique_labels(labels)`, two "
                "tensors of the labels' shape."
            )
    orig = np.dtype(x.dtype)
    if logits_time_major:
        logits = _time_to_batch(logits)
    if orig in _LOW_FLOATS:
        logits = _cast(logits, np.dtype(np.float32))
    loss = _ctc_loss(
        logits,
        _as_int(labels),
        _as_int(label_length),
        _as_int(logit_length),
        blank,
    )
    return _cast(loss, orig) if orig in _LOW_FLOATS else loss


@op("Transpose", inputs=("x",))
def _time_to_batch(x):
    return jnp.swapaxes(x, 0, 1)


@op("Cast", inputs=("x",))
def _cast(x, dtype):
    return x.astype(dtype)


def _as_int(x):
    v = to_value(x)
    if np.dtype(v.dtype).kind not in "iu":
        raise TypeError(
            f"ctc_loss: labels and lengths must be integers; got {v.dtype}."
        )
    return v


# -- label preprocessing -------------------------------------------------------------
@op("CTCUniqueLabels", inputs=("labels",), differentiable=False, jit=True)
def _unique_labels(labels):
    n = labels.shape[1]
    eq = labels[:, :, None] == labels[:, None, :]  # [b, i, j]
    first = jnp.argmax(eq, axis=2).astype(jnp.int32)  # first j equal to i
    is_first = first == jnp.arange(n, dtype=jnp.int32)[None, :]
    rank = jnp.cumsum(is_first, axis=1, dtype=jnp.int32) - 1
    idx = jnp.take_along_axis(rank, first, axis=1)
    pos = jnp.where(is_first, rank, n)
    rows = jnp.broadcast_to(jnp.arange(labels.shape[0])[:, None], labels.shape)
    y = (
        jnp.zeros(labels.shape, jnp.int64)
        .at[rows, pos]
        .set(labels.astype(jnp.int64), mode="drop")
    )
    return [y, idx]


def ctc_unique_labels(labels, name=None):
    """The unique labels of each row in order of first appearance, padded with
    0 (int64), and each label's index among them (int32): TF's
    `tf.nn.ctc_unique_labels`, for `ctc_loss(unique=...)`."""
    del name  # accepted for TF compatibility
    v = to_value(labels)
    if np.ndim(v) != 2:
        raise ValueError(
            f"ctc_unique_labels: labels must be 2-D [batch, max_label_length]; got "
            f"shape {list(np.shape(v))}."
        )
    return tuple(_unique_labels(labels))


@op("CollapseRepeated", inputs=("labels", "seq_length"), differentiable=False, jit=True)
def _collapse(labels, seq_length):
    b, n = labels.shape
    keep = jnp.concatenate(
        [jnp.ones((b, 1), bool), labels[:, 1:] != labels[:, :-1]], axis=1
    )
    keep = keep & (jnp.arange(n, dtype=seq_length.dtype)[None, :] < seq_length[:, None])
    pos = jnp.where(keep, jnp.cumsum(keep, axis=1) - 1, n)
    rows = jnp.broadcast_to(jnp.arange(b)[:, None], (b, n))
    out = jnp.zeros_like(labels).at[rows, pos].set(labels, mode="drop")
    return [out, jnp.sum(keep, axis=1, dtype=jnp.int32).astype(seq_length.dtype)]


def collapse_repeated(labels, seq_length, name=None):
    """Merges runs of repeated labels within each sequence's `seq_length`
    (TF's `tf.nn.collapse_repeated`): `(collapsed, new_seq_length)`, the
    labels padded with 0 to the longest new length.

    Differences from TensorFlow: the result's width depends on the values, so
    the lengths must be known (eager, or constants inside `jaxtape.function`).
    """
    del name  # accepted for TF compatibility
    if np.ndim(to_value(labels)) != 2:
        raise ValueError("collapse_repeated: labels must be 2-D [batch, time].")
    out, length = _collapse(labels, seq_length)
    width = int(np.max(np.asarray(to_value(length)), initial=0))
    return _first_columns(out, width), length


@op("Slice", inputs=("x",), differentiable=False)
def _first_columns(x, width):
    return x[:, :width]


# -- the greedy decoder's dense core -------------------------------------------------
@op(
    "CTCGreedyDecoder",
    inputs=("inputs", "sequence_length"),
    differentiable=False,
    jit=True,
)
def _greedy(inputs, sequence_length, merge_repeated, blank):
    # inputs: [time, batch, classes]. Returns the decoded classes [batch, time]
    # (left-aligned, -1 past each length), the lengths, and -sum(max logit).
    t, b, _ = inputs.shape
    k = jnp.argmax(inputs, axis=-1).astype(jnp.int64).T  # [b, t]
    valid = (
        jnp.arange(t, dtype=sequence_length.dtype)[None, :] < sequence_length[:, None]
    )
    prev = jnp.concatenate([jnp.full((b, 1), -1, k.dtype), k[:, :-1]], axis=1)
    keep = valid & (k != blank)
    if merge_repeated:
        keep = keep & (k != prev)
    pos = jnp.where(keep, jnp.cumsum(keep, axis=1) - 1, t)
    rows = jnp.broadcast_to(jnp.arange(b)[:, None], (b, t))
    decoded = jnp.full((b, t), -1, k.dtype).at[rows, pos].set(k, mode="drop")
    best = jnp.max(inputs, axis=-1).T
    score = -jnp.sum(jnp.where(valid, best, jnp.zeros_like(best)), axis=1)
    return [decoded, jnp.sum(keep, axis=1), score[:, None]]


def greedy_decode_dense(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """`(decoded [batch, time] padded with -1, lengths [batch], neg_sum_logits
    [batch, 1])`: the values of TF's `ctc_greedy_decoder` in dense form."""
    x = to_value(inputs)
    if np.ndim(x) != 3:
        raise errors.invalid_argument(
            f"inputs is not a 3-Tensor; got shape {list(np.shape(x))}",
            "CTCGreedyDecoder",
        )
    t, b, n = np.shape(x)
    lengths = to_value(sequence_length)
    if np.shape(lengths) != (b,):
        raise errors.invalid_argument(
            f"len(sequence_length) != batch_size.  len(sequence_length):  "
            f"{np.shape(lengths)[0] if np.ndim(lengths) else 0} batch_size: {b}",
            "CTCGreedyDecoder",
        )
    if not isinstance(lengths, jax.core.Tracer) and np.any(np.asarray(lengths) > t):
        b = int(np.argmax(np.asarray(lengths) > t))
        raise errors.FailedPreconditionError(
            None,
            "CTCGreedyDecoder",
            f"sequence_length({b}) <= {t} [Op:CTCGreedyDecoder]",
        )
    blank = n - 1 if blank_index is None else int(blank_index)
    if blank < 0:
        blank += n
    return _greedy(inputs, sequence_length, bool(merge_repeated), blank)
