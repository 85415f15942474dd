"""Gradients exactly at kinks and ties, against real TensorFlow.

JAX and TF agree on derivatives away from these points and differ on them
(JAX splits a `maximum` tie evenly, gives `abs` the derivative 1 at 0); inputs
exactly there are common (zero padding with zero biases, zero-initialized
logits, clipped probabilities, L1 on zero weights). Each row runs `fn(m, *xs)`
under TF and jaxtape at such points and compares the gradients of
`sum(out * w)` (fixed weights) with respect to every input.
"""

from __future__ import annotations

import numpy as np
import pytest

import jaxtape

F32 = np.float32
K = np.asarray([-6.0, -3.0, -1.0, 0.0, 1.0, 3.0, 6.0, 0.5], F32)  # kinks, and not
ONES = np.ones_like(K)
LABELS = np.asarray([0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0], F32)
TIES1 = np.asarray([[[0.0], [0.0], [1.0], [1.0], [0.0]]], F32)
TIES2 = np.kron(np.asarray([[0.0, 1.0], [1.0, 0.0]], F32), np.ones((2, 2), F32))
TIES2 = TIES2[None, :, :, None]
TIES3 = np.kron(np.eye(2, dtype=F32)[:, :, None], np.ones((2, 2, 2), F32))
TIES3 = TIES3[None, ..., None]
PROBS = np.asarray([0.0, 1e-7, 0.5, 1.0 - 1e-7, 1.0, 0.25, 1.0, 0.0], F32)


def _act(name, **kw):
    return lambda m, x: getattr(m.keras.activations, name)(x, **kw)


def _loss(name, y_true, **kw):
    return lambda m, x: getattr(m.keras.losses, name)(**kw)(y_true, x)


ROWS = {
    "abs": (lambda m, x: m.abs(x), [K]),
    "maximum_tie": (lambda m, x, y: m.maximum(x, y), [K, ONES]),
    "minimum_tie": (lambda m, x, y: m.minimum(x, y), [K, ONES]),
    "maximum_scalar": (lambda m, x: m.maximum(x, 0.0), [K]),
    "clip_by_value": (lambda m, x: m.clip_by_value(x, -1.0, 1.0), [K]),
    "clip_by_value_tensors": (
        lambda m, x, lo, hi: m.clip_by_value(x, lo, hi),
        [K, -ONES, ONES],
    ),
    "clip_by_norm_at_the_norm": (
        lambda m, x: m.clip_by_norm(x, 5.0),
        [np.asarray([3.0, 4.0], F32)],
    ),
    "norm_1": (lambda m, x: m.norm(x, ord=1), [K]),
    # Pooling windows of equal values (ReLU zeros): 1-D and 2-D pass a window's
    # gradient to its first maximum, 3-D to every maximum.
    "nn.max_pool1d_ties": (lambda m, x: m.nn.max_pool1d(x, 2, 1, "VALID"), [TIES1]),
    "nn.max_pool2d_ties": (lambda m, x: m.nn.max_pool2d(x, 2, 1, "SAME"), [TIES2]),
    "nn.max_pool3d_ties": (lambda m, x: m.nn.max_pool3d(x, 2, 2, "VALID"), [TIES3]),
    "nn.max_pool3d_ties_overlap": (
        lambda m, x: m.nn.max_pool3d(x, 2, 1, "SAME"),
        [TIES3],
    ),
    "MaxPooling3D_ties": (lambda m, x: m.keras.layers.MaxPooling3D(2)(x), [TIES3]),
    "nn.relu": (lambda m, x: m.nn.relu(x), [K]),
    "nn.relu6": (lambda m, x: m.nn.relu6(x), [K]),
    "nn.leaky_relu": (lambda m, x: m.nn.leaky_relu(x, 0.2), [K]),
    "nn.elu": (lambda m, x: m.nn.elu(x), [K]),
    "nn.selu": (lambda m, x: m.nn.selu(x), [K]),
    "nn.softsign": (lambda m, x: m.nn.softsign(x), [K]),
    "nn.sigmoid_xent": (
        lambda m, x, z: m.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
        [K, LABELS],
    ),
    "nn.weighted_xent": (
        lambda m, x, z: m.nn.weighted_cross_entropy_with_logits(z, x, 2.0),
        [K, LABELS],
    ),
    "keras.relu": (_act("relu"), [K]),
    "keras.relu_max_value": (_act("relu", max_value=1.0), [K]),
    "keras.relu_max_value_6": (_act("relu", max_value=6.0), [K]),
    "keras.relu_threshold": (_act("relu", threshold=1.0), [K]),
    "keras.relu_negative_slope": (_act("relu", negative_slope=0.1), [K]),
    "keras.relu_all": (
        _act("relu", negative_slope=0.1, max_value=3.0, threshold=1.0),
        [K],
    ),
    "keras.leaky_relu": (_act("leaky_relu"), [K]),
    "keras.relu6": (_act("relu6"), [K]),
    "keras.hard_sigmoid": (_act("hard_sigmoid"), [K]),
    "keras.selu": (_act("selu"), [K]),
    "keras.hard_silu": (_act("hard_silu"), [K]),
    "keras.elu": (_act("elu"), [K]),
    "keras.prelu": (lambda m, x: m.keras.layers.PReLU()(x[None]), [K]),
    "keras.leaky_relu_layer": (lambda m, x: m.keras.layers.LeakyReLU()(x), [K]),
    "keras.relu_layer": (
        lambda m, x: m.keras.layers.ReLU(3.0, negative_slope=0.2, threshold=1.0)(x),
        [K],
    ),
    "keras.maximum_layer": (
        lambda m, x, y: m.keras.layers.Maximum()([x[None], y[None]]),
        [K, ONES],
    ),
    "keras.minimum_layer": (
        lambda m, x, y: m.keras.layers.Minimum()([x[None], y[None]]),
        [K, ONES],
    ),
    "keras.max_pooling_ties": (
        lambda m, x: m.keras.layers.MaxPooling1D(2, 1)(m.reshape(x, [1, 8, 1])),
        [np.asarray([1, 1, 2, 2, 0, 3, 3, 3], F32)],
    ),
    "keras.global_max_pooling_ties": (
        lambda m, x: m.keras.layers.GlobalMaxPooling1D()(m.reshape(x, [1, 8, 1])),
        [np.asarray([1, 3, 2, 3, 0, 3, 1, 3], F32)],
    ),
    "keras.ops.abs": (lambda m, x: m.keras.ops.abs(x), [K]),
    "keras.ops.maximum": (lambda m, x, y: m.keras.ops.maximum(x, y), [K, ONES]),
    "keras.ops.minimum": (lambda m, x, y: m.keras.ops.minimum(x, y), [K, ONES]),
    "keras.ops.clip": (lambda m, x: m.keras.ops.clip(x, -1.0, 1.0), [K]),
    "keras.ops.relu": (lambda m, x: m.keras.ops.relu(x), [K]),
    "keras.ops.relu6": (lambda m, x: m.keras.ops.relu6(x), [K]),
    "keras.ops.leaky_relu": (lambda m, x: m.keras.ops.leaky_relu(x), [K]),
    "keras.ops.hard_sigmoid": (lambda m, x: m.keras.ops.hard_sigmoid(x), [K]),
    "keras.ops.hard_silu": (lambda m, x: m.keras.ops.hard_silu(x), [K]),
    "keras.ops.selu": (lambda m, x: m.keras.ops.selu(x), [K]),
    "keras.ops.elu": (lambda m, x: m.keras.ops.elu(x, alpha=0.5), [K]),
    "keras.ops.norm_1": (lambda m, x: m.keras.ops.norm(x, ord=1), [K]),
    "keras.ops.binary_crossentropy_logits": (
        lambda m, x: m.keras.ops.binary_crossentropy(LABELS, x, from_logits=True),
        [K],
    ),
    "keras.ops.hard_tanh": (lambda m, x: m.keras.ops.hard_tanh(x), [K]),
    "keras.ops.soft_shrink": (lambda m, x: m.keras.ops.soft_shrink(x, 1.0), [K]),
    "keras.ops.hard_shrink": (lambda m, x: m.keras.ops.hard_shrink(x, 1.0), [K]),
    "keras.ops.relu_via_where": (
        lambda m, x: m.keras.ops.where(x > 0, x, 0.0),
        [K],
    ),
    # Zero vectors: `x * min(rsqrt(sum(x**2)), 1/eps)` discards the infinite
    # rsqrt, and TF's RsqrtGrad of a zero gradient is 0 there (not NaN).
    "keras.cosine_similarity_zero": (
        lambda m, x: m.keras.losses.CosineSimilarity()(np.eye(2, dtype=F32), x),
        [np.asarray([[0.0, 0.0], [1.0, 2.0]], F32)],
    ),
    "keras.unit_normalization_zero": (
        lambda m, x: m.keras.layers.UnitNormalization()(x),
        [np.asarray([[0.0, 0.0], [1.0, 2.0]], F32)],
    ),
    "keras.ops.normalize_zero": (
        lambda m, x: m.keras.ops.normalize(x),
        [np.asarray([[0.0, 0.0], [1.0, 2.0]], F32)],
    ),
    "l2_normalize_zero": (
        lambda m, x: m.math.l2_normalize(x, axis=-1),
        [np.asarray([[0.0, 0.0], [1.0, 2.0]], F32)],
    ),
    "keras.dot_normalize_zero": (
        lambda m, x: m.keras.layers.Dot(axes=1, normalize=True)([x, x + 1.0]),
        [np.asarray([[0.0, 0.0], [1.0, 2.0]], F32)],
    ),
    "keras.mae": (_loss("MeanAbsoluteError", ONES[None]), [K[None]]),
    "keras.mape": (_loss("MeanAbsolutePercentageError", ONES[None]), [K[None]]),
    "keras.huber": (_loss("Huber", ONES[None], delta=1.0), [K[None]]),
    "keras.hinge": (_loss("Hinge", ONES[None]), [K[None]]),
    "keras.squared_hinge": (_loss("SquaredHinge", ONES[None]), [K[None]]),
    "keras.categorical_hinge": (
        _loss("CategoricalHinge", np.eye(8, dtype=F32)[:1]),
        [K[None]],
    ),
    "keras.bce_logits_at_0": (
        _loss("BinaryCrossentropy", LABELS[None], from_logits=True),
        [K[None]],
    ),
    "keras.bce_probabilities": (
        _loss("BinaryCrossentropy", LABELS[None]),
        [PROBS[None]],
    ),
    "keras.cce_probabilities": (
        _loss("CategoricalCrossentropy", np.eye(8, dtype=F32)[1:2]),
        [PROBS[None]],
    ),
    "keras.l1_regularizer": (lambda m, x: m.keras.regularizers.L1(0.1)(x), [K]),
    "keras.l1_l2_regularizer": (
        lambda m, x: m.keras.regularizers.L1L2(0.1, 0.1)(x),
        [K],
    ),
}


def _grads(m, fn, inputs):
    xs = [m.Variable(x) for x in inputs]
    with m.GradientTape() as tape:
        out = m.convert_to_tensor(fn(m, *xs))
        shape = tuple(out.shape)
        w = np.arange(1, int(np.prod(shape)) + 1, dtype=F32).reshape(shape)
        total = m.reduce_sum(out * w)
    return [None if g is None else np.asarray(g) for g in tape.gradient(total, xs)]


@pytest.mark.parametrize("name", sorted(ROWS))
def test_gradient_at_kinks_matches_tensorflow(name, tf):
    fn, inputs = ROWS[name]
    want = _grads(tf, fn, inputs)
    got = _grads(jaxtape, fn, inputs)
    for i, (w, g) in enumerate(zip(want, got)):
        if w is None:
            assert g is None or not np.any(g), f"input {i}: TF's gradient is None"
            continue
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"input {i}")
