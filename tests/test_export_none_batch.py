"""`Model.export` with its default `None` batch, for the layers real models use.

An export traces the model with a symbolic batch size; layers that computed
a shape from the batch size (Flatten, Reshape, TimeDistributed, the RNNs'
zero initial states) failed to export there. Each row exports a small model,
loads it and compares the loaded `serve` endpoint with the live model at two
batch sizes.
"""

from __future__ import annotations

import numpy as np
import pytest

import jaxtape as tf

L = tf.keras.layers
_RNG = np.random.default_rng(0)
_IMAGES = _RNG.random((3, 8, 8, 3), dtype=np.float32)
_SEQUENCES = _RNG.random((3, 6, 4), dtype=np.float32)
_IDS = _RNG.integers(1, 20, (3, 7))


def _mha_block():
    inputs = tf.keras.Input((6, 4))
    h = L.Add()([inputs, L.MultiHeadAttention(2, 4)(inputs, inputs)])
    return tf.keras.Model(inputs, L.Dense(2)(L.GlobalAveragePooling1D()(h)))


MODELS = {
    "mnist_mlp": (
        lambda: tf.keras.Sequential(
            [L.Flatten(), L.Dense(16, "relu"), L.Dropout(0.2), L.Dense(10)]
        ),
        _IMAGES,
    ),
    "cnn": (
        lambda: tf.keras.Sequential(
            [
                L.Conv2D(4, 3, activation="relu"),
                L.MaxPooling2D(),
                L.BatchNormalization(),
                L.Flatten(),
                L.Dense(3),
            ]
        ),
        _IMAGES,
    ),
    "reshape_conv1d": (
        lambda: tf.keras.Sequential(
            [L.Reshape((-1, 2)), L.Conv1D(3, 2), L.GlobalMaxPooling1D()]
        ),
        _SEQUENCES,
    ),
    "time_distributed": (
        lambda: tf.keras.Sequential(
            [L.TimeDistributed(L.Dense(3)), L.LayerNormalization()]
        ),
        _SEQUENCES,
    ),
    "masked_lstm": (
        lambda: tf.keras.Sequential([L.Embedding(20, 8, mask_zero=True), L.LSTM(4)]),
        _IDS,
    ),
    "bidirectional_gru": (
        lambda: tf.keras.Sequential(
            [L.Bidirectional(L.GRU(3, return_sequences=True)), L.SimpleRNN(2)]
        ),
        _SEQUENCES,
    ),
    "stacked_cells": (
        lambda: tf.keras.Sequential([L.RNN([L.LSTMCell(3), L.GRUCell(2)])]),
        _SEQUENCES,
    ),
    "conv_lstm": (
        lambda: tf.keras.Sequential([L.ConvLSTM1D(2, 3, padding="same")]),
        _RNG.random((3, 4, 6, 2), dtype=np.float32),
    ),
    "attention_block": (_mha_block, _SEQUENCES),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_exported_with_a_none_batch_serves_any_batch(name, tmp_path):
    make, x = MODELS[name]
    model = make()
    model(x)
    model.export(str(tmp_path / "m"), verbose=False)
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    for batch in (1, 5):
        xb = np.repeat(x[:1], batch, axis=0)
        got = np.asarray(loaded.serve(xb))
        assert got.shape[0] == batch
        np.testing.assert_allclose(got, np.asarray(model(xb)), rtol=1e-5, atol=1e-6)
