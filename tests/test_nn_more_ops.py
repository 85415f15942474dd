"""The rest of `jaxtape.nn` (CTC, argmax/morphological/fractional pooling,
isotonic regression, depthwise gradients, space-to-batch, sampled losses,
sparse embedding lookups) against real TensorFlow's `tf.nn`, one row per case.

Each row runs `fn(m, *tensors)` in TF and in jaxtape on the same NumPy inputs
and compares every output (a SparseTensor's indices, values and dense shape)
by dtype, shape and value; with `grad`, also the gradients of
`sum(out_k * w_k)` over the float outputs with respect to every float input.
`compiled` rows run the jaxtape side inside `jaxtape.function`. The error
rows check that bad input raises TF's exception type; the random ops (whose
draws cannot match TF's stream) are checked by their properties.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest
from parity_checks import assert_raises_like_tf

import jaxtape

R = np.random.default_rng(7)
F32, F64, I32, I64 = np.float32, np.float64, np.int32, np.int64


def f(*shape, dtype=F32):
    return R.normal(size=shape).astype(dtype)


class Row(NamedTuple):
    fn: Callable[..., Any]
    inputs: tuple
    grad: bool = True
    compiled: bool = False
    rtol: float = 1e-5
    atol: float = 1e-5


def row(fn, *inputs, grad=True, compiled=False, rtol=1e-5, atol=1e-5):
    return Row(fn, inputs, grad, compiled, rtol, atol)


N = lambda m: m.nn  # noqa: E731

# CTC inputs: 8 frames, batch 3, 5 classes; labels padded with 0.
CTC_LOGITS = f(8, 3, 5)
CTC_LABELS = np.array([[1, 2, 2, 0], [3, 0, 0, 0], [4, 1, 3, 2]], I32)
CTC_LABEL_LEN = np.array([3, 1, 4], I32)
CTC_LOGIT_LEN = np.array([8, 5, 7], I32)


def _ctc(m, x, **kw):
    return N(m).ctc_loss(CTC_LABELS, x, CTC_LABEL_LEN, CTC_LOGIT_LEN, **kw)


def _sparse(m, dense, dtype=I64):
    """A SparseTensor of `dense`'s nonzero entries (built from NumPy, so that
    TF and jaxtape get the same one)."""
    idx = np.argwhere(dense != 0)
    return m.SparseTensor(idx, dense[dense != 0].astype(dtype), dense.shape)


def _ctc_sparse(m, x, blank):
    return N(m).ctc_loss(
        _sparse(m, CTC_LABELS, I32), x, None, CTC_LOGIT_LEN, blank_index=blank
    )


IMG = f(2, 6, 7, 3)  # (2 images: the batch part of argmax indices)
DW_FILTER = f(3, 3, 3, 2)
EMB = f(7, 3)
IDS = np.array([[1, 4, 0], [0, 0, 0], [6, 0, 2], [0, 3, 0]], I64)
IDS_BAD = np.array([[1, -4, 0], [0, 0, 0], [6, 0, 2], [0, 3, 0]], I64)
WEIGHTS = np.where(IDS != 0, R.uniform(0.5, 2.0, IDS.shape), 0).astype(F32)
# sampled losses: 10 classes, dim 4, batch 3, 2 true classes each
SAMPLED = (
    np.array([2, 5, 7, 3], I64),
    R.uniform(0.1, 1, (3, 2)).astype(F32),
    R.uniform(0.1, 1, (4,)).astype(F32),
)
TRUE = np.array([[1, 2], [3, 3], [0, 9]], I64)
SAMPLED_TWICE = np.array([2, 3, 2, 9], I64)  # accidental hits: the last 2 only


def _depthwise_out(strides, padding):
    """`depthwise_conv2d(IMG, DW_FILTER)`'s output shape, by NumPy-free TF-free math."""
    h, w = IMG.shape[1:3]
    if padding == "SAME":
        return (2, -(-h // strides), -(-w // strides), 6)
    return (2, (h - 3) // strides + 1, (w - 3) // strides + 1, 6)


def _lookup(m, params, weights, combiner, **kw):
    w = None if weights is None else _sparse(m, WEIGHTS, F32)
    ids = m.SparseTensor(np.argwhere(WEIGHTS != 0), IDS[WEIGHTS != 0], IDS.shape)
    return N(m).embedding_lookup_sparse(params, ids, w, combiner, **kw)


def _safe_lookup(m, params, weighted, combiner, default_id, ids=IDS_BAD):
    mask = WEIGHTS != 0
    sp = m.SparseTensor(np.argwhere(mask), ids[mask], ids.shape)
    w = None
    if weighted:
        values = WEIGHTS[mask].copy()
        values[1] = -1.0  # a weight <= 0 is dropped unless combiner is 'sum'
        w = m.SparseTensor(np.argwhere(mask), values, ids.shape)
    return N(m).safe_embedding_lookup_sparse(params, sp, w, combiner, default_id)


def _cell(m):
    """A Keras SimpleRNNCell with fixed weights (the same in TF and jaxtape)."""
    init = m.keras.initializers.Constant(0.3)
    return m.keras.layers.SimpleRNNCell(
        3, kernel_initializer=init, recurrent_initializer="identity"
    )


def _conv_in(m, f_):
    return lambda x, nd, padding: m.nn.conv2d(x, f_, 1, padding)


ROWS: dict[str, Row] = {
    # -- CTC --------------------------------------------------------------------
    "ctc_loss": row(lambda m, x: _ctc(m, x), CTC_LOGITS),
    "ctc_loss_blank_last_batch_major": row(
        lambda m, x: _ctc(m, x, logits_time_major=False, blank_index=-1),
        np.swapaxes(CTC_LOGITS, 0, 1).copy(),
        grad=False,
    ),
    "ctc_loss_float16": row(
        lambda m, x: _ctc(m, x), CTC_LOGITS.astype(np.float16), rtol=2e-3, atol=2e-3
    ),
    "ctc_loss_unique_compiled": row(
        lambda m, x: _ctc(m, x, unique=m.nn.ctc_unique_labels(CTC_LABELS)),
        CTC_LOGITS,
        compiled=True,
        grad=False,
    ),
    # (the gradient is the dense path's, checked above)
    "ctc_loss_sparse_labels": row(
        lambda m, x: _ctc_sparse(m, x, 0), CTC_LOGITS, grad=False
    ),
    "ctc_loss_sparse_labels_blank_last": row(
        lambda m, x: _ctc_sparse(m, x, -1), CTC_LOGITS, grad=False
    ),
    "ctc_unique_labels": row(
        lambda m, y: m.nn.ctc_unique_labels(y),
        np.array([[3, 4, 4, 3, 0], [0, 1, 0, 2, 1]], I32),
    ),
    "collapse_repeated": row(
        lambda m, y, n: m.nn.collapse_repeated(y, n),
        np.array([[1, 1, 2, 2, 1], [1, 2, 3, 4, 5], [7, 7, 7, 7, 7]], I32),
        np.array([5, 3, 4], I32),
    ),
    "ctc_greedy_decoder": row(
        lambda m, x: m.nn.ctc_greedy_decoder(x, CTC_LOGIT_LEN), CTC_LOGITS
    ),
    "ctc_greedy_decoder_unmerged_blank_0": row(
        lambda m, x: m.nn.ctc_greedy_decoder(x, [8, 0, 3], False, 0), CTC_LOGITS
    ),
    "ctc_beam_search_decoder": row(
        lambda m, x: m.nn.ctc_beam_search_decoder(x, CTC_LOGIT_LEN, 4, 2),
        CTC_LOGITS,
        grad=False,
    ),
    "ctc_beam_search_decoder_wide": row(
        lambda m, x: m.nn.ctc_beam_search_decoder(x, [8, 8, 2], 30, 3),
        CTC_LOGITS,
        grad=False,
    ),
    # -- pooling and morphology -------------------------------------------------
    "max_pool_with_argmax_same": row(
        lambda m, x: m.nn.max_pool_with_argmax(x, [1, 2, 3, 1], [1, 2, 2, 1], "SAME"),
        IMG,
    ),
    "max_pool_with_argmax_batch_index": row(
        lambda m, x: m.nn.max_pool_with_argmax(
            x, 3, 2, "VALID", include_batch_in_index=True
        ),
        IMG,
        compiled=True,
        grad=False,
    ),
    # (TF's CPU has no gradient kernel for int32 argmaxes)
    "max_pool_with_argmax_int32": row(
        lambda m, x: m.nn.max_pool_with_argmax(x, 2, 1, "SAME", output_dtype=m.int32),
        IMG,
        grad=False,
    ),
    "dilation2d_same_rates": row(
        lambda m, x, w: m.nn.dilation2d(
            x, w, [1, 1, 2, 1], "SAME", "NHWC", [1, 2, 1, 1]
        ),
        IMG,
        f(2, 3, 3),
    ),
    "dilation2d_valid_compiled": row(
        lambda m, x, w: m.nn.dilation2d(
            x, w, [1, 2, 1, 1], "VALID", "NHWC", [1, 1, 1, 1]
        ),
        IMG,
        f(3, 2, 3),
        compiled=True,
        grad=False,
    ),
    "erosion2d": row(
        lambda m, x, w: m.nn.erosion2d(
            x, w, [1, 1, 1, 1], "SAME", "NHWC", [1, 1, 2, 1]
        ),
        IMG,
        f(2, 2, 3),
    ),
    # divisible sizes: TF's pooling sequence is deterministic
    "fractional_max_pool_even": row(
        lambda m, x: m.nn.fractional_max_pool(x[:, :6, :6], [1.0, 2.0, 3.0, 1.0]), IMG
    ),
    "fractional_max_pool_overlapping": row(
        lambda m, x: m.nn.fractional_max_pool(
            x[:, :4, :6], [1.0, 2.0, 2.0, 1.0], overlapping=True
        ),
        IMG,
        grad=False,
    ),
    "fractional_avg_pool_even": row(
        lambda m, x: m.nn.fractional_avg_pool(x[:, :6], [1.0, 3.0, 1.0, 1.0]), IMG
    ),
    "fractional_avg_pool_overlapping": row(
        lambda m, x: m.nn.fractional_avg_pool(
            x[:, :6, :6], [1.0, 2.0, 3.0, 1.0], overlapping=True
        ),
        IMG,
        grad=False,
    ),
    "isotonic_regression": row(lambda m, x: m.nn.isotonic_regression(x), f(2, 6)),
    "isotonic_regression_increasing_axis0_compiled": row(
        lambda m, x: m.nn.isotonic_regression(x, decreasing=False, axis=0),
        f(6, 2),
        compiled=True,
        grad=False,
    ),
    "isotonic_regression_ties": row(
        lambda m, x: m.nn.isotonic_regression(x, decreasing=False),
        np.array([[1.0, 1.0, 2.0, 2.0, 4.0, 1.0], [3.0, 1.0, 2.0, 2.0, 0.0, 5.0]], F32),
        grad=False,
    ),
    "isotonic_regression_int16": row(
        lambda m, x: m.nn.isotonic_regression(x),
        np.array([[1, 3, 2, 2, 5, -1], [0, 0, 1, 0, 0, 2]], np.int16),
    ),
    # -- depthwise gradients, space to batch ------------------------------------
    "depthwise_conv2d_backprop_input_same": row(
        lambda m, w, g: m.nn.depthwise_conv2d_backprop_input(
            IMG.shape, w, g, [1, 1, 1, 1], "SAME"
        ),
        DW_FILTER,
        f(*_depthwise_out(1, "SAME")),
        rtol=1e-4,
    ),
    "depthwise_conv2d_backprop_input_valid_strided": row(
        lambda m, w, g: m.nn.depthwise_conv2d_backprop_input(
            IMG.shape, w, g, [1, 2, 2, 1], "VALID"
        ),
        DW_FILTER,
        f(*_depthwise_out(2, "VALID")),
        rtol=1e-4,
        compiled=True,
    ),
    "depthwise_conv2d_backprop_filter_same": row(
        lambda m, x, g: m.nn.depthwise_conv2d_backprop_filter(
            x, DW_FILTER.shape, g, [1, 1, 1, 1], "SAME"
        ),
        IMG,
        f(*_depthwise_out(1, "SAME")),
        rtol=1e-4,
        atol=1e-4,
    ),
    "depthwise_conv2d_backprop_filter_strided": row(
        lambda m, x, g: m.nn.depthwise_conv2d_backprop_filter(
            x, DW_FILTER.shape, g, [1, 2, 2, 1], "VALID"
        ),
        IMG,
        f(*_depthwise_out(2, "VALID")),
        rtol=1e-4,
        atol=1e-4,
    ),
    "with_space_to_batch_same_conv": row(
        lambda m, x, w: m.nn.with_space_to_batch(
            x, [2, 2], "SAME", _conv_in(m, w), filter_shape=[3, 3]
        ),
        IMG,
        f(3, 3, 3, 4),
        rtol=1e-4,
    ),
    "with_space_to_batch_valid_conv": row(
        lambda m, x, w: m.nn.with_space_to_batch(x, [2, 1], "VALID", _conv_in(m, w)),
        IMG,
        f(2, 2, 3, 4),
        rtol=1e-4,
        grad=False,
    ),
    "with_space_to_batch_rate_1_pool": row(
        lambda m, x: m.nn.with_space_to_batch(
            x, [1, 1], "SAME", lambda i, nd, p: m.nn.max_pool2d(i, 2, 1, p)
        ),
        IMG,
    ),
    # -- sampled losses ---------------------------------------------------------
    "compute_accidental_hits": row(
        lambda m: m.nn.compute_accidental_hits(
            [[1, 2], [3, 4], [5, 2]], m.constant([2, 3, 1, 7, 2], m.int64), 2
        ),
    ),
    "nce_loss": row(
        lambda m, w, b, x: m.nn.nce_loss(
            w, b, TRUE, x, 4, 10, 2, sampled_values=SAMPLED
        ),
        f(10, 4),
        f(10),
        f(3, 4),
    ),
    "nce_loss_remove_hits": row(
        lambda m, w, b, x: m.nn.nce_loss(
            w, b, TRUE, x, 4, 10, 2, sampled_values=SAMPLED, remove_accidental_hits=True
        ),
        f(10, 4),
        f(10),
        f(3, 4),
    ),
    "sampled_softmax_loss_compiled": row(
        lambda m, w, b, x: m.nn.sampled_softmax_loss(
            w, b, TRUE, x, 4, 10, 2, sampled_values=SAMPLED
        ),
        f(10, 4),
        f(10),
        f(3, 4),
        compiled=True,
        # (a tape outside jaxtape.function cannot differentiate gather followed
        # by softmax_cross_entropy_with_logits inside it: a function-layer bug)
        grad=False,
    ),
    "sampled_softmax_loss_class_sampled_twice": row(
        lambda m, w, b, x: m.nn.sampled_softmax_loss(
            w, b, TRUE, x, 4, 10, 2, sampled_values=(SAMPLED_TWICE, *SAMPLED[1:])
        ),
        f(10, 4),
        f(10),
        f(3, 4),
    ),
    "sampled_softmax_loss_keep_hits_sharded": row(
        lambda m, w, b, x: m.nn.sampled_softmax_loss(
            [w[:5], w[5:]],  # TF's 'div' shards: equal parts
            b,
            TRUE,
            x,
            4,
            10,
            2,
            sampled_values=SAMPLED,
            remove_accidental_hits=False,
        ),
        f(10, 4),
        f(10),
        f(3, 4),
    ),
    "all_candidate_sampler": row(
        lambda m: m.nn.all_candidate_sampler(TRUE, 2, 10, True),
    ),
    # -- sparse embedding lookups -----------------------------------------------
    "embedding_lookup_sparse_mean": row(lambda m, p: _lookup(m, p, None, None), EMB),
    "embedding_lookup_sparse_sqrtn_weighted": row(
        lambda m, p: _lookup(m, p, WEIGHTS, "sqrtn"), EMB
    ),
    "embedding_lookup_sparse_sum_max_norm": row(
        lambda m, p: _lookup(m, p, WEIGHTS, "sum", max_norm=1.0), EMB
    ),
    "safe_embedding_lookup_sparse_mean": row(
        lambda m, p: _safe_lookup(m, p, True, "mean", None), EMB
    ),
    "safe_embedding_lookup_sparse_sum_default_id": row(
        lambda m, p: _safe_lookup(m, p, True, "sum", 3), EMB
    ),
    "safe_embedding_lookup_sparse_unweighted_sqrtn": row(
        lambda m, p: _safe_lookup(m, p, False, "sqrtn", 2), EMB
    ),
    # -- RNN cell wrappers (a fresh cell each: TF's wrappers build it) -----------
    "rnn_cell_residual_wrapper": row(
        lambda m, x, h: m.nn.RNNCellResidualWrapper(_cell(m))(x, [h]), f(2, 3), f(2, 3)
    ),
    "rnn_cell_residual_wrapper_residual_fn": row(
        lambda m, x, h: m.nn.RNNCellResidualWrapper(
            _cell(m), residual_fn=lambda i, o: i * 2.0 - o
        )(x, [h]),
        f(2, 3),
        f(2, 3),
    ),
    "rnn_cell_device_wrapper": row(
        lambda m, x, h: m.nn.RNNCellDeviceWrapper(_cell(m), "/cpu:0")(x, [h]),
        f(2, 3),
        f(2, 3),
    ),
    "rnn_cell_dropout_wrapper_keep_all": row(
        lambda m, x, h: m.nn.RNNCellDropoutWrapper(_cell(m))(x, [h]), f(2, 3), f(2, 3)
    ),
    "safe_embedding_lookup_sparse_rank3": row(
        lambda m, p: m.nn.safe_embedding_lookup_sparse(
            p, m.SparseTensor([[0, 0, 0], [0, 1, 1], [1, 0, 2]], [1, 3, 0], [2, 2, 3])
        ),
        EMB,
    ),
}


def _is_float(dtype) -> bool:
    return dtype.is_floating


def _leaves(out) -> list:
    """Every tensor of an op's result, a SparseTensor as its three fields."""
    if isinstance(out, (list, tuple)):
        return [leaf for o in out for leaf in _leaves(o)]
    if hasattr(out, "dense_shape"):
        return [out.indices, out.values, out.dense_shape]
    return [out]


def _dense(m, g):
    """A gradient as a dense tensor (TF's IndexedSlices for gathers)."""
    if g is None or not hasattr(g, "indices"):
        return g
    return m.convert_to_tensor(g)


def _run(m, r: Row):
    xs = [m.constant(x) for x in r.inputs]
    if m is jaxtape and r.compiled:
        call = jaxtape.function(lambda *a: r.fn(jaxtape, *a))
    else:
        call = lambda *a: r.fn(m, *a)  # noqa: E731
    sources = [x for x in xs if _is_float(x.dtype)]
    if not (r.grad and sources):
        return _leaves(call(*xs)), []
    with m.GradientTape() as tape:
        tape.watch(sources)
        leaves = _leaves(call(*xs))
        target = 0.0
        for k, leaf in enumerate(leaves):
            if _is_float(leaf.dtype):
                w = np.random.default_rng(k).uniform(0.5, 1.5, leaf.shape)
                target += m.reduce_sum(leaf * w.astype(leaf.dtype.name))
    grads = tape.gradient(target, sources)
    return leaves, [_dense(m, g) for g in grads]


def _same(got, want, rtol, atol, what):
    if want is None:
        assert got is None, f"{what}: TF gives None, jaxtape {got!r}"
        return
    assert got is not None, f"{what}: jaxtape gives None, TF {want!r}"
    assert got.dtype.name == want.dtype.name, f"{what}: {got.dtype} vs {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{what}: {got.shape} vs {want.shape}"
    np.testing.assert_allclose(
        np.asarray(got), want.numpy(), rtol=rtol, atol=atol, err_msg=what
    )


@pytest.mark.parametrize("name", list(ROWS))
def test_nn_op_and_gradient_match_tensorflow(name, tf):
    r = ROWS[name]
    want, want_grads = _run(tf, r)
    got, got_grads = _run(jaxtape, r)
    assert len(got) == len(want), f"{name}: {len(got)} outputs vs TF's {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        _same(g, w, r.rtol, r.atol, f"{name} output {k}")
    assert len(got_grads) == len(want_grads)
    for k, (g, w) in enumerate(zip(got_grads, want_grads)):
        _same(g, w, max(r.rtol, 1e-5), max(r.atol, 1e-5), f"{name} gradient {k}")


ERRORS: dict[str, Callable[[Any], Any]] = {
    "ctc_loss_sparse_labels_without_blank_index": lambda m: m.nn.ctc_loss(
        _sparse(m, CTC_LABELS, I32), CTC_LOGITS, None, CTC_LOGIT_LEN
    ),
    "ctc_greedy_decoder_length_past_time": lambda m: m.nn.ctc_greedy_decoder(
        CTC_LOGITS, [9, 1, 1]
    ),
    "ctc_greedy_decoder_2d_inputs": lambda m: m.nn.ctc_greedy_decoder(
        CTC_LOGITS[0], [1, 1, 1]
    ),
    "ctc_beam_search_top_paths_over_width": lambda m: m.nn.ctc_beam_search_decoder(
        CTC_LOGITS, CTC_LOGIT_LEN, 2, 3
    ),
    "max_pool_with_argmax_nchw": lambda m: m.nn.max_pool_with_argmax(
        IMG, 2, 2, "VALID", data_format="NCHW"
    ),
    "dilation2d_depth_mismatch": lambda m: m.nn.dilation2d(
        IMG, f(2, 2, 4), [1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1]
    ),
    "fractional_max_pool_on_channels": lambda m: m.nn.fractional_max_pool(
        IMG, [1.0, 1.5, 1.5, 2.0]
    ),
    "fractional_avg_pool_ratio_below_1": lambda m: m.nn.fractional_avg_pool(
        IMG, [1.0, 0.5, 1.5, 1.0]
    ),
    "with_space_to_batch_same_without_filter_shape": lambda m: m.nn.with_space_to_batch(
        IMG, [2, 2], "SAME", lambda x, nd, p: x
    ),
    "compute_accidental_hits_num_true": lambda m: m.nn.compute_accidental_hits(
        TRUE, m.constant([1, 2], m.int64), 3
    ),
    "embedding_lookup_sparse_bad_combiner": lambda m: _lookup(m, EMB, None, "max"),
    "embedding_lookup_sparse_dense_ids": lambda m: m.nn.embedding_lookup_sparse(
        EMB, IDS, None
    ),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_input_raises_tensorflows_error_type(name, tf):
    assert_raises_like_tf(tf, ERRORS[name])


# -- random ops: properties, not TF's stream --------------------------------------
def _check_sequence(seq, size, out, pseudo_random):
    seq = np.asarray(seq)
    assert seq.dtype == np.int64 and seq.shape == (out + 1,)
    assert seq[0] == 0 and seq[-1] == size
    diffs = np.diff(seq)
    k = size // out
    assert set(diffs.tolist()) <= (
        {k, k + 1} if not pseudo_random else {k, k + 1, k + 2}
    )
    assert (diffs > 0).all()


def _pool_by_sequences(x, rows, cols, overlapping, reduce):
    out = np.zeros((x.shape[0], len(rows) - 1, len(cols) - 1, x.shape[3]), x.dtype)
    for i in range(len(rows) - 1):
        for j in range(len(cols) - 1):
            r1 = min(rows[i + 1] + overlapping, x.shape[1])
            c1 = min(cols[j + 1] + overlapping, x.shape[2])
            cell = x[:, rows[i] : r1, cols[j] : c1]
            out[:, i, j] = reduce(cell, axis=(1, 2))
    return out


FRAC_X, FRAC_RATIO = f(2, 11, 9, 2), [1.0, 1.44, 1.73, 1.0]


@pytest.mark.parametrize("pseudo_random,overlapping", [(False, False), (True, True)])
def test_fractional_pools_follow_their_random_sequences(tf, pseudo_random, overlapping):
    x, ratio = FRAC_X, FRAC_RATIO
    for name, reduce in (
        ("fractional_max_pool", np.max),
        ("fractional_avg_pool", np.mean),
    ):
        want = getattr(tf.nn, name)(x, ratio, pseudo_random, overlapping, seed=3)
        got = getattr(jaxtape.nn, name)(x, ratio, pseudo_random, overlapping, seed=3)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype.name == w.dtype.name
        out, rows, cols = (np.asarray(t) for t in got)
        _check_sequence(rows, 11, out.shape[1], pseudo_random)
        _check_sequence(cols, 9, out.shape[2], pseudo_random)
        expect = _pool_by_sequences(x, rows, cols, overlapping, reduce)
        np.testing.assert_allclose(out, expect, rtol=1e-5, atol=1e-6, err_msg=name)


def test_fractional_pool_is_reproducible_under_a_seed():
    jaxtape.random.set_seed(5)
    a = jaxtape.nn.fractional_max_pool(FRAC_X, FRAC_RATIO, seed=2)
    jaxtape.random.set_seed(5)
    b = jaxtape.nn.fractional_max_pool(FRAC_X, FRAC_RATIO, seed=2)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(np.asarray(u), np.asarray(v))


def test_fractional_max_pool_gradient_goes_to_each_cells_maximum():
    x = jaxtape.constant(FRAC_X)
    with jaxtape.GradientTape() as tape:
        tape.watch(x)
        out, rows, cols = jaxtape.nn.fractional_max_pool(x, FRAC_RATIO)
        total = jaxtape.reduce_sum(out)
    grad = np.asarray(tape.gradient(total, x))
    # one unit per output cell, on an input equal to that cell's maximum
    assert grad.sum() == pytest.approx(np.asarray(out).size)
    picked = np.asarray(x)[grad > 0]
    assert np.isin(picked, np.asarray(out)).all()


@pytest.mark.parametrize("name", ["sampled_softmax_loss"])  # (nce_loss: the same path)
def test_sampled_losses_sample_log_uniform_classes(name, tf):
    w, b, x = f(50, 4), f(50), f(3, 4)
    labels = np.array([[1], [7], [30]], I64)
    want = getattr(tf.nn, name)(w, b, labels, x, 5, 50)
    jaxtape.random.set_seed(1)
    got = getattr(jaxtape.nn, name)(w, b, labels, x, 5, 50)
    jaxtape.random.set_seed(1)
    again = getattr(jaxtape.nn, name)(w, b, labels, x, 5, 50)
    assert got.shape == want.shape and got.dtype.name == want.dtype.name
    assert np.isfinite(np.asarray(got)).all()
    np.testing.assert_array_equal(np.asarray(got), np.asarray(again))


@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("fixed_unigram_candidate_sampler", {"unigrams": [1.0, 2, 3, 4, 5, 6]}),
        ("learned_unigram_candidate_sampler", {}),
    ],
)
def test_unigram_samplers_return_tfs_shapes_and_dtypes(name, kwargs, tf):
    true = np.array([[0, 3], [5, 1]], I64)
    want = getattr(tf.nn, name)(true, 2, 4, True, 6, **kwargs)
    got = getattr(jaxtape.nn, name)(true, 2, 4, True, 6, **kwargs)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype.name == w.dtype.name
    sampled = np.asarray(got[0])
    assert len(set(sampled.tolist())) == 4 and ((sampled >= 0) & (sampled < 6)).all()


def test_decoders_need_concrete_lengths_inside_function():
    """The decoders' output sizes depend on the values: inside
    `jaxtape.function` they say so instead of returning a wrong shape."""
    step = jaxtape.function(lambda x: jaxtape.nn.ctc_greedy_decoder(x, CTC_LOGIT_LEN))
    with pytest.raises(NotImplementedError, match="jaxtape.function"):
        step(jaxtape.constant(CTC_LOGITS))


def test_rnn_cell_dropout_wrapper_drops_and_rescales(tf):
    # 32 x 3 outputs: all kept or all dropped has probability 2**-95 (with
    # 4 x 3, 2**-11, under five standard deviations' 6e-7).
    x, h = (np.tile(f(4, 3), (8, 1)) for _ in range(2))
    keys = [  # TF's config keys
        sorted(m.nn.RNNCellDropoutWrapper(_cell(m), 0.5, 0.5, seed=3).get_config())
        for m in (tf, jaxtape)
    ]
    assert keys[0] == keys[1]
    cell = _cell(jaxtape)
    wrapped = jaxtape.nn.RNNCellDropoutWrapper(cell, output_keep_prob=0.5, seed=3)
    out, _ = wrapped(jaxtape.constant(x), [jaxtape.constant(h)])
    plain, _ = cell(jaxtape.constant(x), [jaxtape.constant(h)])
    out, plain = np.asarray(out), np.asarray(plain)
    kept = out != 0
    assert 0 < kept.sum() < out.size
    np.testing.assert_allclose(out[kept], 2.0 * plain[kept], rtol=1e-6)
    # variational: one noise for every call
    var = jaxtape.nn.RNNCellDropoutWrapper(
        _cell(jaxtape),
        input_keep_prob=0.5,
        variational_recurrent=True,
        input_size=3,
        dtype=jaxtape.float32,
    )
    ones = jaxtape.ones([32, 3])
    a, _ = var(ones, [jaxtape.constant(h)])
    b, _ = var(ones, [jaxtape.constant(h)])
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    with pytest.raises(ValueError, match="dtype must be provided"):
        jaxtape.nn.RNNCellDropoutWrapper(
            _cell(jaxtape), input_keep_prob=0.5, variational_recurrent=True
        )
    with pytest.raises(ValueError, match="between 0 and 1"):
        jaxtape.nn.RNNCellDropoutWrapper(_cell(jaxtape), output_keep_prob=1.5)


def test_rnn_cell_wrapper_config_round_trips():
    wrapped = jaxtape.nn.RNNCellDeviceWrapper(_cell(jaxtape), "/cpu:0")
    again = jaxtape.nn.RNNCellDeviceWrapper.from_config(wrapped.get_config())
    assert again.cell.units == 3 and again.get_config()["device"] == "/cpu:0"
