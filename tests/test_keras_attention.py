"""Keras's attention layers (EinsumDense, MultiHeadAttention,
GroupQueryAttention, Attention, AdditiveAttention) against tf.keras: the same
weights give the same outputs, scores and gradients, masks and causal masks
included; Keras 3's weight names and `.weights.h5`/`.keras` layout."""

import numpy as np
import pytest
from layer_checks import check_layer, check_layer_parity, check_multi_input_parity

import jaxtape as jt

L = jt.keras.layers
RNG = np.random.default_rng(1)
# Masks: row 0 of the attention mask is fully masked for batch 0 (Keras's two
# code paths differ there: uniform weights or zeros).
ATTN_MASK = RNG.random((2, 5, 4)) > 0.4
ATTN_MASK[0, 0] = False
VALUE_MASK = np.array([[1, 1, 0, 0], [1, 0, 1, 1]], bool)
QUERY_MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
SELF_MASK = np.array([[1, 1, 1, 0, 0], [1, 0, 1, 1, 1]], bool)

EINSUM = [
    ({"equation": "ab,bc->ac", "output_shape": 4, "bias_axes": "c"}, (3, 5)),
    ({"equation": "abc,cd->abd", "output_shape": (None, 4)}, (2, 3, 5)),
    ({"equation": "...b,bc->...c", "output_shape": 4, "bias_axes": "c"}, (2, 3, 5)),
    (
        {"equation": "abc,cde->abde", "output_shape": (None, 2, 3), "bias_axes": "de"},
        (2, 3, 5),
    ),
    (
        {"equation": "abc,cd->abd", "output_shape": (3, 4), "activation": "relu"},
        (2, 3, 5),
    ),
    ({"equation": "ab...,bc->ac...", "output_shape": 4, "bias_axes": "c"}, (2, 5, 3)),
]


@pytest.mark.parametrize("kwargs,shape", EINSUM, ids=[e[0]["equation"] for e in EINSUM])
def test_einsum_dense_matches_tf_keras(tf, kwargs, shape):
    check_layer_parity(tf, "EinsumDense", kwargs, shape)


def test_einsum_dense_harness(tmp_path):
    check_layer(
        tmp_path,
        lambda: L.EinsumDense("abc,cd->abd", (None, 4), bias_axes="d"),
        (2, 3, 5),
        2,
    )


def test_einsum_dense_kernel_fans_from_its_axes():
    # Keras 3.15 draws an EinsumDense kernel with fans from its input and
    # output axes: (8, 2, 50) from "abc,cde->abde" has fan_in 8, fan_out 100.
    layer = L.EinsumDense("abc,cde->abde", (None, 2, 50), bias_axes="de")
    layer(np.zeros((1, 3, 8), np.float32))
    limit = np.sqrt(6.0 / (8 + 100))
    kernel = layer.kernel.numpy()
    assert np.abs(kernel).max() <= limit
    assert np.abs(kernel).max() > 0.9 * limit  # not the conv fans (limit 0.19)


def test_einsum_dense_bad_equation_is_keras_error():
    with pytest.raises(ValueError, match="Invalid einsum equation"):
        L.EinsumDense("ab->b", 3)(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="did not have a match"):
        L.EinsumDense("ab,zc->ac", 3)(np.ones((2, 3), np.float32))


SELF = [(2, 5, 8), (2, 5, 8)]
CROSS = [(2, 5, 8), (2, 4, 6)]
MHA = [
    ("basic", {"num_heads": 2, "key_dim": 3}, CROSS, {}),
    (
        "key_value_dim_output_shape",
        {"num_heads": 3, "key_dim": 2, "value_dim": 4, "output_shape": 5},
        CROSS + [(2, 4, 7)],
        {},
    ),
    (
        "attention_mask",
        {"num_heads": 2, "key_dim": 3},
        CROSS,
        {"attention_mask": ATTN_MASK},
    ),
    (
        "mask_scores",
        {"num_heads": 2, "key_dim": 3},
        CROSS,
        {"attention_mask": ATTN_MASK, "return_attention_scores": True},
    ),
    (
        "query_mask_unused",
        {"num_heads": 2, "key_dim": 3},
        CROSS,
        {"query_mask": QUERY_MASK},
    ),
    (
        "causal_scores",
        {"num_heads": 2, "key_dim": 3},
        SELF,
        {"use_causal_mask": True, "return_attention_scores": True},
    ),
    (
        "causal_and_mask",
        {"num_heads": 2, "key_dim": 3},
        SELF,
        {"use_causal_mask": True, "value_mask": SELF_MASK},
    ),
    (
        "attention_axes_2d",
        {"num_heads": 2, "key_dim": 3, "attention_axes": (1, 2)},
        [(2, 3, 4, 6), (2, 3, 4, 6)],
        {"return_attention_scores": True},
    ),
    (
        "attention_axes_default_4d",
        {"num_heads": 2, "key_dim": 3},
        [(2, 3, 4, 6), (2, 3, 2, 6)],
        {},
    ),
    ("sliding_window", {"num_heads": 2, "key_dim": 3, "sliding_window": 2}, SELF, {}),
    (
        "gate_no_bias",
        {"num_heads": 2, "key_dim": 3, "use_gate": True, "use_bias": False},
        CROSS,
        {"value_mask": VALUE_MASK},
    ),
]


@pytest.mark.parametrize(
    "kwargs,shapes,call", [m[1:] for m in MHA], ids=[m[0] for m in MHA]
)
def test_multi_head_attention_matches_tf_keras(tf, kwargs, shapes, call):
    check_multi_input_parity(tf, "MultiHeadAttention", kwargs, shapes, call_kwargs=call)


GQA = [
    (
        "causal_scores",
        {"head_dim": 3, "num_query_heads": 4, "num_key_value_heads": 2},
        SELF,
        {"use_causal_mask": True, "return_attention_scores": True},
    ),
    (
        "masks_no_bias",
        {
            "head_dim": 2,
            "num_query_heads": 2,
            "num_key_value_heads": 1,
            "use_bias": False,
        },
        CROSS,
        {
            "attention_mask": ATTN_MASK,
            "query_mask": QUERY_MASK,
            "value_mask": VALUE_MASK,
        },
    ),
]


@pytest.mark.parametrize(
    "kwargs,shapes,call", [g[1:] for g in GQA], ids=[g[0] for g in GQA]
)
def test_group_query_attention_matches_tf_keras(tf, kwargs, shapes, call):
    check_multi_input_parity(
        tf, "GroupQueryAttention", kwargs, shapes, call_kwargs=call
    )


ATTENTION = [
    ("dot", "Attention", {}, CROSS[:1] + [(2, 4, 8)], {}),
    (
        "dot_scale",
        "Attention",
        {"use_scale": True},
        [(2, 5, 8), (2, 4, 8), (2, 4, 8)],
        {},
    ),
    (
        "concat",
        "Attention",
        {"score_mode": "concat", "use_scale": True},
        [(2, 5, 8), (2, 4, 8)],
        {},
    ),
    (
        "masks_scores",
        "Attention",
        {},
        [(2, 5, 8), (2, 4, 8)],
        {"mask": [QUERY_MASK, VALUE_MASK], "return_attention_scores": True},
    ),
    (
        "causal",
        "Attention",
        {},
        SELF,
        {"use_causal_mask": True, "mask": [SELF_MASK, SELF_MASK]},
    ),
    ("additive", "AdditiveAttention", {}, [(2, 5, 8), (2, 4, 8)], {}),
    (
        "additive_no_scale",
        "AdditiveAttention",
        {"use_scale": False},
        [(2, 5, 8), (2, 4, 8)],
        {},
    ),
    (
        "additive_masks",
        "AdditiveAttention",
        {},
        [(2, 5, 8), (2, 4, 8)],
        {"mask": [QUERY_MASK, VALUE_MASK], "return_attention_scores": True},
    ),
]


@pytest.mark.parametrize(
    "name,kwargs,shapes,call", [a[1:] for a in ATTENTION], ids=[a[0] for a in ATTENTION]
)
def test_attention_matches_tf_keras(tf, name, kwargs, shapes, call):
    check_multi_input_parity(tf, name, kwargs, shapes, as_list=True, call_kwargs=call)


def test_group_query_attention_has_both_names():
    assert L.GroupQueryAttention is L.GroupedQueryAttention
    layer = L.GroupQueryAttention(2, 2, 1)
    assert layer.name.startswith("grouped_query_attention")


def test_attention_dropout_is_fresh_each_call_and_identity_at_inference():
    mha = L.MultiHeadAttention(2, 4, dropout=0.5, seed=3)
    x = np.random.default_rng(0).normal(size=(2, 6, 8)).astype(np.float32)
    infer = mha(x, x).numpy()
    np.testing.assert_array_equal(mha(x, x, training=False).numpy(), infer)
    a, b = mha(x, x, training=True).numpy(), mha(x, x, training=True).numpy()
    assert not np.allclose(a, infer) and not np.allclose(a, b)

    step = jt.function(lambda x: mha(x, x, training=True))
    c, d = step(x).numpy(), step(x).numpy()
    assert not np.allclose(c, d)  # the key is lifted: fresh every compiled call
    attn = L.Attention(dropout=0.5)
    q = x[:, :3]
    e, f = attn([q, x], training=True).numpy(), attn([q, x], training=True).numpy()
    assert not np.allclose(e, f)
    np.testing.assert_array_equal(attn([q, x]).numpy(), attn([q, x]).numpy())
    # Reproducible from the seed: a twin with the same seed and weights draws
    # the same masks, in order.
    twin = L.MultiHeadAttention(2, 4, dropout=0.5, seed=3)
    twin(x, x)
    twin.set_weights(mha.get_weights())
    fresh = L.MultiHeadAttention(2, 4, dropout=0.5, seed=3)
    fresh(x, x)
    fresh.set_weights(mha.get_weights())
    np.testing.assert_array_equal(
        [twin(x, x, training=True).numpy() for _ in range(2)],
        [fresh(x, x, training=True).numpy() for _ in range(2)],
    )
    assert len(twin.weights) == 8  # the generator's state is not a weight


def test_multi_head_attention_trains_in_a_compiled_step():
    mha = L.MultiHeadAttention(2, 4)
    opt = jt.keras.optimizers.Adam(0.01)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 5, 8)).astype(np.float32)
    y = rng.normal(size=(4, 5, 8)).astype(np.float32)

    @jt.function
    def step(x, y):
        with jt.GradientTape() as tape:
            loss = jt.reduce_mean(jt.square(mha(x, x, use_causal_mask=True) - y))
        grads = tape.gradient(loss, mha.trainable_variables)
        opt.apply_gradients(zip(grads, mha.trainable_variables))
        return loss

    losses = [float(step(x, y)) for _ in range(30)]
    assert losses[-1] < 0.8 * losses[0]


def test_multi_head_attention_needs_value():
    with pytest.raises(ValueError, match="query.*value"):
        L.MultiHeadAttention(2, 3)(np.ones((1, 2, 4), np.float32))
    with pytest.raises(ValueError, match="num_heads"):
        L.MultiHeadAttention(0, 3)
    with pytest.raises(NotImplementedError, match="flash_attention"):
        L.MultiHeadAttention(2, 3, flash_attention=True)


def _functional(keras, layer_cls):
    x = keras.Input((5, 8))
    y = layer_cls(x, x)
    out = keras.layers.Dense(2)(keras.layers.GlobalAveragePooling1D()(y))
    return keras.Model(x, out)


def test_multi_head_attention_keras_file_round_trip(tf, tmp_path):
    """Saved by jaxtape, loaded by jaxtape and by tf.keras; a tf.keras weights
    file loads into jaxtape's model (Keras 3's `.weights.h5` paths)."""
    x = np.random.default_rng(0).normal(size=(3, 5, 8)).astype(np.float32)
    mha = L.MultiHeadAttention(2, 4, name="mha")
    model = _functional(jt.keras, lambda q, v: mha(q, v, use_causal_mask=True))
    model.save(tmp_path / "m.keras")
    again = jt.keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(again.predict(x), model.predict(x), rtol=1e-5, atol=1e-6)
    theirs = tf.keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(
        theirs.predict(x, verbose=0), model.predict(x), rtol=1e-4, atol=1e-5
    )
    tf_mha = tf.keras.layers.MultiHeadAttention(2, 4, name="mha")
    tf_model = _functional(tf.keras, lambda q, v: tf_mha(q, v, use_causal_mask=True))
    tf_model.save_weights(tmp_path / "tf.weights.h5")
    model.load_weights(tmp_path / "tf.weights.h5")
    np.testing.assert_allclose(
        model.predict(x), tf_model.predict(x, verbose=0), rtol=1e-4, atol=1e-5
    )


def test_transformer_block_example_learns():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parent.parent / "examples"
    spec = importlib.util.spec_from_file_location(
        "transformer_block", path / "transformer_block.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    history = module.main(["--steps", "80", "--batch-size", "32"])  # (40: noise)
    assert history[-1]["loss"] < history[0]["loss"]
