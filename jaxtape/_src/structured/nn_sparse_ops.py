"""The `tf.nn` ops that take or return SparseTensors: `ctc_loss` with sparse
labels, the CTC decoders, and the sparse embedding lookups. Layer L2
(`structured/`): imports `core`, `ops` and `structured.sparse`.

The decoders' and lookups' output sizes depend on the data (how many labels
each sequence decodes to, which ids are valid), so they read those on the
host: inside `jaxtape.function` they need concrete inputs, as other
data-dependent sparse ops (`sparse.host_array`).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import array_ops, math_ops, nn_ctc_ops
from jaxtape._src.ops.nn_extra_ops import embedding_lookup
from jaxtape._src.structured.sparse import SparseTensor, host_array, is_sparse

_INT64 = np.dtype(np.int64)


def _sparse(indices, values, shape) -> SparseTensor:
    return SparseTensor(
        Tensor(jnp.asarray(np.asarray(indices, _INT64).reshape(-1, 2))),
        Tensor(jnp.asarray(np.asarray(values, _INT64))),
        [int(s) for s in shape],
    )


# -- CTC ----------------------------------------------------------------------------
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
    """CTC negative log-likelihood per sequence (TF 2's `tf.nn.ctc_loss`).

    `labels` is a dense zero-padded int `[batch, max_label_length]` tensor
    with `label_length`, or a SparseTensor (then `blank_index` is required and
    `label_length` unused, as TF's). See `ops.nn_ctc_ops.ctc_loss` for the
    dense arguments.

    Differences from TensorFlow: an impossible alignment (a label longer than
    its frames allow) gives a large finite loss of about 1e5 (optax's
    log-epsilon) where TF's dense loss gives about 700 (the gradients agree);
    sparse labels are read on the host and computed by the dense algorithm
    (the same values).
    """
    if not is_sparse(labels):
        return nn_ctc_ops.ctc_loss(
            labels,
            logits,
            label_length,
            logit_length,
            logits_time_major,
            unique,
            blank_index,
            name,
        )
    if blank_index is None:
        raise ValueError(
            "Argument `blank_index` must be provided when `labels` is a `SparseTensor`."
        )
    dense, lengths = _sparse_labels_to_dense(labels)
    return nn_ctc_ops.ctc_loss(
        dense, logits, lengths, logit_length, logits_time_major, None, blank_index
    )


def _sparse_labels_to_dense(labels: SparseTensor):
    """Each row's values in index order, left-aligned, and the row lengths
    (the label sequences TF's `CTCLoss` op reads from sparse labels)."""
    idx = host_array(labels.indices, "ctc_loss", "the labels' indices")
    values = host_array(labels.values, "ctc_loss", "the labels' values")
    batch = int(
        np.asarray(host_array(labels.dense_shape, "ctc_loss", "dense_shape"))[0]
    )
    order = np.lexsort((idx[:, 1], idx[:, 0])) if len(idx) else np.zeros(0, int)
    rows = idx[order, 0]
    lengths = np.bincount(rows, minlength=batch).astype(np.int32)
    width = max(int(lengths.max(initial=0)), 1)
    pos = np.arange(len(rows)) - np.concatenate([[0], np.cumsum(lengths)])[rows]
    dense = np.zeros((batch, width), np.int32)
    dense[rows, pos] = values[order]
    return dense, lengths


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """Greedy (best path) CTC decoding (TF's `tf.nn.ctc_greedy_decoder`).

    Args:
      inputs: float `[max_time, batch, classes]` logits.
      sequence_length: int `[batch]` valid steps per sequence.
      merge_repeated: emit a run of one class once.
      blank_index: the blank class, default `classes - 1`; negative counts
        from the end.

    Returns:
      `([decoded], neg_sum_logits)`: `decoded` a SparseTensor of int64
      classes, `[batch, max_decoded_length]`; `neg_sum_logits` `[batch, 1]`,
      minus the sum of each step's largest logit.
    """
    decoded, lengths, score = nn_ctc_ops.greedy_decode_dense(
        inputs, sequence_length, merge_repeated, blank_index
    )
    dec = host_array(decoded, "ctc_greedy_decoder", "the decoded classes")
    n = host_array(lengths, "ctc_greedy_decoder", "the decoded lengths")
    rows, cols = np.nonzero(np.arange(dec.shape[1])[None, :] < n[:, None])
    sp = _sparse(
        np.stack([rows, cols], 1),
        dec[rows, cols],
        (dec.shape[0], int(n.max(initial=0))),
    )
    return [sp], score


def _log_sum_exp(a: float, b: float) -> float:
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    return max(a, b) + float(np.log1p(np.exp(-abs(a - b))))


class _Beam:
    """One prefix in TF's CTC beam search tree (`ctc_beam_entry.h`)."""

    __slots__ = ("parent", "label", "children", "old", "new")

    def __init__(self, parent, label):
        self.parent, self.label = parent, label
        self.children: list[_Beam] | None = None
        self.old = [-np.inf, -np.inf, -np.inf]  # total, blank, label
        self.new = [-np.inf, -np.inf, -np.inf]

    def active(self) -> bool:
        return self.new[0] != -np.inf

    def labels(self) -> list[int]:
        out, e = [], self
        while e.parent is not None:
            out.append(e.label)
            e = e.parent
        return out[::-1]


def _beam_search_one(steps: np.ndarray, beam_width: int, top_paths: int):
    """TF's `CTCBeamSearchDecoder` (default scorer, blank the last class) on
    one sequence's `[time, classes]` logits: the best prefixes and their log
    probabilities."""
    blank = steps.shape[1] - 1
    root = _Beam(None, -1)
    root.new = [0.0, 0.0, -np.inf]
    leaves = [root]
    for raw in steps:
        x = raw - raw.max()
        norm = float(np.log(np.exp(x).sum()))
        branches = sorted(leaves, key=lambda e: -e.new[0])
        leaves = []
        for b in branches:
            b.old = list(b.new)
        for b in branches:
            if b.parent is not None:
                if b.parent.active():
                    prev = (
                        b.parent.old[1]
                        if b.label == b.parent.label
                        else b.parent.old[0]
                    )
                    b.new[2] = _log_sum_exp(b.new[2], prev)
                b.new[2] += float(x[b.label]) - norm
            b.new[1] = b.old[0] + float(x[blank]) - norm
            b.new[0] = _log_sum_exp(b.new[1], b.new[2])
            leaves.append(b)

        def bottom():
            return min(leaves, key=lambda e: e.new[0])

        def candidate(total):
            return total > -np.inf and (
                len(leaves) < beam_width or total > bottom().new[0]
            )

        for b in branches:
            if not candidate(b.old[0]):
                continue
            if b.children is None:
                b.children = [_Beam(b, c) for c in range(blank)]
            for c in list(b.children):
                if c.active():
                    continue
                c.new[1] = -np.inf
                prev = b.old[1] if c.label == b.label else b.old[0]
                c.new[2] = float(x[c.label]) - norm + prev
                c.new[0] = c.new[2]
                if candidate(c.new[0]):
                    if len(leaves) == beam_width:
                        low = bottom()
                        low.new = [-np.inf, -np.inf, -np.inf]
                        leaves.remove(low)
                    leaves.append(c)
                else:
                    c.old = [-np.inf, -np.inf, -np.inf]
                    c.new = [-np.inf, -np.inf, -np.inf]
    best = sorted(leaves, key=lambda e: -e.new[0])
    if len(best) < top_paths:
        raise errors.invalid_argument(
            "Less leaves in the beam search than requested.", "CTCBeamSearchDecoder"
        )
    return [e.labels() for e in best[:top_paths]], [e.new[0] for e in best[:top_paths]]


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1):
    """Beam search CTC decoding (TF 2's `tf.nn.ctc_beam_search_decoder`; the
    blank is the last class, repeats are not merged).

    Returns `(decoded, log_probabilities)`: `decoded` a list of `top_paths`
    SparseTensors (int64 classes, `[batch, max_decoded_length]`),
    `log_probabilities` `[batch, top_paths]`.

    Differences from TensorFlow: it runs on the host (eager, or constant
    inputs inside `jaxtape.function`) in float64; the log-probabilities match
    TF's float32 ones to rounding, and beams of exactly equal probability may
    be ordered differently.
    """
    x = host_array(inputs, "ctc_beam_search_decoder", "inputs")
    lengths = host_array(sequence_length, "ctc_beam_search_decoder", "sequence_length")
    beam_width, top_paths = int(beam_width), int(top_paths)
    if x.ndim != 3:
        raise errors.invalid_argument(
            f"inputs is not a 3-Tensor; got shape {list(x.shape)}",
            "CTCBeamSearchDecoder",
        )
    t, batch, _ = x.shape
    if lengths.shape != (batch,):
        raise errors.invalid_argument(
            "len(sequence_length) != batch_size", "CTCBeamSearchDecoder"
        )
    if (lengths > t).any():
        b = int(np.argmax(lengths > t))
        raise errors.FailedPreconditionError(
            None,
            "CTCBeamSearchDecoder",
            f"sequence_length({b}) <= {t} [Op:CTCBeamSearchDecoder]",
        )
    if top_paths < 1 or top_paths > beam_width:
        raise errors.invalid_argument(
            f"top_paths must be in [1, beam_width]; got top_paths={top_paths}, "
            f"beam_width={beam_width}",
            "CTCBeamSearchDecoder",
        )
    paths, scores = [], []
    for b in range(batch):
        p, s = _beam_search_one(
            x[: lengths[b], b].astype(np.float64), beam_width, top_paths
        )
        paths.append(p)
        scores.append(s)
    decoded = []
    for k in range(top_paths):
        seqs = [paths[b][k] for b in range(batch)]
        idx = [(b, i) for b, seq in enumerate(seqs) for i in range(len(seq))]
        values = [v for seq in seqs for v in seq]
        width = max((len(s) for s in seqs), default=0)
        decoded.append(_sparse(idx, values, (batch, width)))
    log_probs = Tensor(jnp.asarray(np.asarray(scores, dtype=x.dtype)))
    return decoded, log_probs


# -- sparse embedding lookups -------------------------------------------------------
@op("SparseSegmentCombine", inputs=("rows", "weights", "segments"), jit=True)
@functools.partial(jax.jit, static_argnums=(3, 4))  # one compiled backward
def _combine(rows, weights, segments, n, combiner):
    w = weights.astype(rows.dtype).reshape((-1,) + (1,) * (rows.ndim - 1))
    total = jax.ops.segment_sum(rows * w, segments, n)
    if combiner == "sum":
        return total
    denom = jax.ops.segment_sum(w if combiner == "mean" else w * w, segments, n)
    if combiner == "sqrtn":
        denom = jnp.sqrt(denom)
    safe = jnp.where(denom == 0, jnp.ones_like(denom), denom)
    return jnp.where(denom == 0, jnp.zeros_like(total), total / safe)


def _check_combiner(combiner):
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(
            f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}"
        )


def _ids_arg(sp_ids, what):
    if is_sparse(sp_ids):
        return sp_ids
    if hasattr(sp_ids, "row_splits"):
        raise NotImplementedError(
            f"{what}: RaggedTensor ids are not supported in jaxtape; pass a "
            "SparseTensor."
        )
    raise TypeError(f"sp_ids must be SparseTensor, got {type(sp_ids)}")


def embedding_lookup_sparse(
    params,
    sp_ids,
    sp_weights,
    combiner=None,
    max_norm=None,
    name=None,
    allow_fast_lookup=False,
):
    """Combines the embeddings of each row's ids (TF 2's
    `tf.nn.embedding_lookup_sparse`): row `i` of the result is the
    `combiner` ('mean', default; 'sqrtn'; 'sum') of `params[id]` over the
    ids in row `i` of `sp_ids`, weighted by `sp_weights` (or 1). As TF's
    segment sums, the result has `last row with an id + 1` rows. `params`
    may be a list of 'div' shards; `max_norm` clips each looked-up row.
    `allow_fast_lookup` is TF's speed hint (the result is the same).

    Differences from TensorFlow: the ids are read on the host (eager, or
    constant ids inside `jaxtape.function`); RaggedTensor ids raise
    `NotImplementedError`.
    """
    del name, allow_fast_lookup  # accepted for TF compatibility (see docstring)
    combiner = "mean" if combiner is None else combiner
    _check_combiner(combiner)
    sp = _ids_arg(sp_ids, "embedding_lookup_sparse")
    if sp_weights is not None and not is_sparse(sp_weights):
        raise TypeError(
            f"sp_weights must be either None or SparseTensor,got {type(sp_weights)}"
        )
    idx = host_array(sp.indices, "embedding_lookup_sparse", "the ids' indices")
    segments = idx[:, 0].astype(np.int32) if len(idx) else np.zeros(0, np.int32)
    n = int(segments.max()) + 1 if len(segments) else 0
    rows = embedding_lookup(params, sp.values, max_norm)
    if sp_weights is None:
        weights = Tensor(jnp.ones(np.shape(to_value(sp.values)), np.float32))
        weights = math_ops.cast(weights, to_value(rows).dtype)
    else:
        weights = sp_weights.values
    low = np.dtype(to_value(rows).dtype) in (
        np.dtype(np.float16),
        np.dtype(jnp.bfloat16),
    )
    if low and sp_weights is not None:  # TF combines half floats in float32
        out = _combine(math_ops.cast(rows, np.float32), weights, segments, n, combiner)
        return math_ops.cast(out, to_value(rows).dtype)
    return _combine(rows, weights, segments, n, combiner)


def safe_embedding_lookup_sparse(
    embedding_weights,
    sparse_ids,
    sparse_weights=None,
    combiner="mean",
    default_id=None,
    max_norm=None,
    name=None,
    allow_fast_lookup=False,
):
    """`embedding_lookup_sparse` that tolerates invalid ids and empty rows (TF
    2's `tf.nn.safe_embedding_lookup_sparse`): ids < 0 (and, unless
    `combiner='sum'`, weights <= 0) are dropped; a row left empty gets
    `embedding_weights[default_id]`, or zeros when `default_id` is None.
    `sparse_ids` of rank > 2 give a result of shape `dense_shape[:-1] +
    [dim]`.

    Differences from TensorFlow: as `embedding_lookup_sparse`'s.
    """
    del name
    if embedding_weights is None or (
        isinstance(embedding_weights, (list, tuple)) and not embedding_weights
    ):
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    _check_combiner(combiner)
    sp = _ids_arg(sparse_ids, "safe_embedding_lookup_sparse")
    shape = [
        int(s)
        for s in host_array(
            sp.dense_shape, "safe_embedding_lookup_sparse", "dense_shape"
        )
    ]
    idx = host_array(sp.indices, "safe_embedding_lookup_sparse", "the ids' indices")
    ids = host_array(sp.values, "safe_embedding_lookup_sparse", "the ids")
    lead = int(np.prod(shape[:-1]))
    row = np.zeros(len(idx), np.int64)
    for d, size in enumerate(shape[:-1]):  # the row of the flattened leading dims
        row = row * size + idx[:, d]
    keep = ids >= 0
    if sparse_weights is not None and combiner != "sum":
        w = host_array(sparse_weights.values, "safe_embedding_lookup_sparse", "weights")
        keep &= w > 0
    kept = np.flatnonzero(keep)
    empty = np.ones(lead, bool)
    empty[row[kept]] = False
    fill = np.flatnonzero(empty)
    all_rows = np.concatenate([row[kept], fill])
    order = np.argsort(all_rows, kind="stable")
    id_vals = array_ops.concat(
        [
            array_ops.gather(sp.values, kept),
            math_ops.cast(
                np.full(len(fill), default_id or 0), to_value(sp.values).dtype
            ),
        ],
        0,
    )
    id_vals = array_ops.gather(id_vals, order)
    new_idx = np.stack([all_rows[order], np.zeros(len(order), np.int64)], 1)
    dense2 = [lead, max(shape[-1], 1)]
    ids2 = SparseTensor(Tensor(jnp.asarray(new_idx, np.int64)), id_vals, dense2)
    weights2 = None
    if sparse_weights is not None:
        wv = sparse_weights.values
        one = math_ops.cast(np.ones(len(fill)), to_value(wv).dtype)
        wv = array_ops.gather(
            array_ops.concat([array_ops.gather(wv, kept), one], 0), order
        )
        weights2 = SparseTensor(Tensor(jnp.asarray(new_idx, np.int64)), wv, dense2)
    result = embedding_lookup_sparse(
        embedding_weights, ids2, weights2, combiner, max_norm, None, allow_fast_lookup
    )
    if default_id is None:
        result = _zero_rows(result, Tensor(jnp.asarray(empty)))
    dim = list(np.shape(to_value(result))[1:])
    return array_ops.reshape(result, shape[:-1] + dim)


@op("ZeroEmptyRows", inputs=("result", "empty"), jit=True)
def _zero_rows(result, empty):
    mask = empty.reshape((-1,) + (1,) * (result.ndim - 1))
    return jnp.where(mask, jnp.zeros_like(result), result)
