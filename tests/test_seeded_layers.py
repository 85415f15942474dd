"""Keras 3's seeded random layers: each layer draws from its own stream
(a SeedGenerator), so two layers built with the same `seed` give the same
masks and noise, and one layer gives fresh ones on each call. Checked as
tf.keras behaves, property by property (the values come from JAX's generator,
not TF's)."""

import numpy as np
import pytest

import jaxtape

X = np.ones((2, 6, 4), np.float32)
LAYERS = {
    "Dropout": lambda L: L.Dropout(0.5, seed=3),
    "SpatialDropout1D": lambda L: L.SpatialDropout1D(0.5, seed=3),
    "GaussianNoise": lambda L: L.GaussianNoise(1.0, seed=3),
    "GaussianDropout": lambda L: L.GaussianDropout(0.5, seed=3),
    "AlphaDropout": lambda L: L.AlphaDropout(0.5, seed=3),
    "SimpleRNN_dropout": lambda L: L.SimpleRNN(
        3,
        dropout=0.5,
        seed=3,
        kernel_initializer="ones",
        recurrent_initializer="ones",
    ),
    "LSTM_recurrent_dropout": lambda L: L.LSTM(
        3,
        recurrent_dropout=0.5,
        seed=3,
        kernel_initializer="ones",
        recurrent_initializer="ones",
    ),
}


def _properties(m, make):
    L = m.keras.layers
    a, b = make(L), make(L)
    first, again = a(X, training=True), a(X, training=True)
    twin = b(X, training=True)
    same = np.array_equal(np.asarray(first), np.asarray(twin))
    fresh = not np.array_equal(np.asarray(first), np.asarray(again))
    return same, fresh


@pytest.mark.parametrize("name", list(LAYERS))
def test_same_seed_same_draws_and_fresh_ones_per_call_as_tf_keras(tf, name):
    theirs = _properties(tf, LAYERS[name])
    ours = _properties(jaxtape, LAYERS[name])
    assert ours == theirs == (True, True)


def test_compiled_calls_draw_anew_and_weights_are_unchanged():
    layer = jaxtape.keras.layers.Dropout(0.5, seed=3)
    step = jaxtape.function(lambda x: layer(x, training=True))
    assert not np.array_equal(step(X).numpy(), step(X).numpy())
    assert layer.weights == [] and layer.trainable_weights == []
