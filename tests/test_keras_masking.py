"""Keras 3's implicit masks, against tf.keras: what a layer does with the mask
that `Embedding(mask_zero=True)` attaches (averages over the unmasked steps,
attention that skips padding, batch moments of the unmasked positions), and
the functional model's `layers` (its InputLayers first) and `get_layer`."""

from __future__ import annotations

import numpy as np
import pytest

import jaxtape

RNG = np.random.default_rng(0)
EMB = RNG.normal(size=(10, 4)).astype(np.float32)
TOKENS = np.array([[1, 2, 0, 0], [3, 4, 5, 0]])


def _pooled(m, pool):
    model = m.keras.Sequential(
        [
            m.keras.Input((4,)),
            m.keras.layers.Embedding(10, 4, mask_zero=True),
            getattr(m.keras.layers, pool)(),
        ]
    )
    model.layers[0].set_weights([EMB])
    return [np.asarray(model(TOKENS))]


def _through(m):
    # The mask passes Dropout, Dense and LayerNormalization to the pooling.
    model = m.keras.Sequential(
        [
            m.keras.Input((4,)),
            m.keras.layers.Embedding(10, 4, mask_zero=True),
            m.keras.layers.Dropout(0.5),
            m.keras.layers.Dense(3, kernel_initializer="ones"),
            m.keras.layers.LayerNormalization(),
            m.keras.layers.GlobalAveragePooling1D(),
        ]
    )
    model.layers[0].set_weights([EMB])
    return [np.asarray(model(TOKENS))]


def _attention(m, layer):
    inp = m.keras.Input((4,))
    embedding = m.keras.layers.Embedding(10, 4, mask_zero=True)
    h = embedding(inp)
    attention = layer(m)
    model = m.keras.Model(inp, attention(h, h))
    embedding.set_weights([EMB])
    rng = np.random.default_rng(1)
    attention.set_weights(
        [rng.normal(size=w.shape).astype(np.float32) for w in attention.get_weights()]
    )
    return [np.asarray(model(TOKENS))]


def _batch_norm(m):
    inp = m.keras.Input((4,))
    embedding = m.keras.layers.Embedding(10, 4, mask_zero=True)
    bn = m.keras.layers.BatchNormalization()
    model = m.keras.Model(inp, bn(embedding(inp), training=True))
    embedding.set_weights([EMB])
    out = model(TOKENS, training=True)
    return [np.asarray(out), np.asarray(bn.moving_mean), np.asarray(bn.moving_variance)]


CASES = {
    "global_average_pooling_1d": lambda m: _pooled(m, "GlobalAveragePooling1D"),
    "global_max_pooling_1d": lambda m: _pooled(m, "GlobalMaxPooling1D"),
    "through_dropout_dense_layer_normalization": _through,
    "multi_head_attention": lambda m: _attention(
        m, lambda m: m.keras.layers.MultiHeadAttention(2, 2)
    ),
    "group_query_attention": lambda m: _attention(
        m, lambda m: m.keras.layers.GroupQueryAttention(2, 2, 1)
    ),
    "batch_normalization_training": _batch_norm,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_implicit_mask_is_used_as_tf_keras_uses_it(name, tf):
    want = CASES[name](tf)
    got = CASES[name](jaxtape)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _layers(m):
    inp = m.keras.Input((4,), name="x")
    out = m.keras.layers.Dense(2, name="b")(m.keras.layers.Dense(3, name="a")(inp))
    model = m.keras.Model(inp, out)
    seq = m.keras.Sequential([m.keras.Input((4,)), m.keras.layers.Dense(2)])
    errors = []
    for kw in ({"index": 5}, {"name": "nope"}, {"name": "a", "index": 0}, {}):
        try:
            model.get_layer(**kw)
        except ValueError as e:
            errors.append(type(e).__name__)
    return (
        [type(layer).__name__ for layer in model.layers],
        [type(layer).__name__ for layer in seq.layers],
        model.get_layer(index=1).name,
        model.get_layer("b").name,
        errors,
    )


def test_functional_layers_list_the_input_layer_first_as_keras(tf):
    assert _layers(jaxtape) == _layers(tf)


def _list_inputs(m, layer):
    # Two masked sequences into a layer that takes a list: Keras gives it the
    # list of their masks, and the merged output carries the combined mask.
    a_in, b_in = m.keras.Input((4,)), m.keras.Input((4,))
    emb = m.keras.layers.Embedding(10, 4, mask_zero=True)
    merging = layer(m)
    merged = merging([emb(a_in), emb(b_in)])
    out = m.keras.layers.GlobalAveragePooling1D()(merged)
    model = m.keras.Model([a_in, b_in], out)
    emb.set_weights([EMB])
    merging.set_weights([np.full(w.shape, 0.5, np.float32) for w in merging.weights])
    other = np.array([[1, 2, 3, 0], [3, 0, 0, 0]])
    return [np.asarray(model([TOKENS, other]))]


LIST_CASES = {
    "attention": lambda m: m.keras.layers.Attention(),
    "additive_attention": lambda m: m.keras.layers.AdditiveAttention(),
    "add": lambda m: m.keras.layers.Add(),
    "average": lambda m: m.keras.layers.Average(),
    "concatenate_features": lambda m: m.keras.layers.Concatenate(),
    "concatenate_steps": lambda m: m.keras.layers.Concatenate(axis=1),
    "maximum": lambda m: m.keras.layers.Maximum(),
    "minimum": lambda m: m.keras.layers.Minimum(),
    "multiply": lambda m: m.keras.layers.Multiply(),
    "subtract": lambda m: m.keras.layers.Subtract(),
}


@pytest.mark.parametrize("name", sorted(LIST_CASES))
def test_masks_of_a_list_input_are_used_as_tf_keras_uses_them(name, tf):
    want = _list_inputs(tf, LIST_CASES[name])
    got = _list_inputs(jaxtape, LIST_CASES[name])
    for w, g in zip(want, got, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
