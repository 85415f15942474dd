"""Keras 3's newer activations (`celu` ... `threshold`), against tf.keras.

One table, one row per call: values, dtypes and the input gradient of
`sum(out * w)` (fixed weights) on random inputs and exactly at the kinks and
thresholds, where TF's gradient conventions differ from JAX's defaults. Then
per name: inside `jaxtape.function`, as `Dense(activation=name)`, and through
`get`/`serialize`/`deserialize`.
"""

from __future__ import annotations

import numpy as np
import pytest

import jaxtape

F32 = np.float32
_RNG = np.random.default_rng(0)
# (few shapes: each new shape is a compilation)
RANDOM = (_RNG.normal(size=(8,)) * 2).astype(F32)
RANDOM_2D = RANDOM.reshape(2, 4)
KINKS = np.asarray([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 0.3], F32)
TIES = np.asarray([1.0, 1.0, 0.0, 0.0, 0.5, 0.5, -1.0, -1.0], F32)  # x == tau
THRESHOLD = {"threshold": 0.5, "default_value": -1.0}

NAMES = [
    "celu",
    "glu",
    "hard_shrink",
    "hard_tanh",
    "log_sigmoid",
    "mish",
    "soft_shrink",
    "sparse_plus",
    "sparse_sigmoid",
    "sparsemax",
    "squareplus",
    "tanh_shrink",
    "threshold",
]
_DEFAULT_KW = {"threshold": THRESHOLD}

# id -> (name, kwargs, input)
ROWS = {
    **{f"{n}_random": (n, _DEFAULT_KW.get(n, {}), RANDOM) for n in NAMES},
    **{f"{n}_kinks": (n, _DEFAULT_KW.get(n, {}), KINKS) for n in NAMES},
    "celu_alpha": ("celu", {"alpha": 0.5}, KINKS),
    "glu_axis0": ("glu", {"axis": 0}, RANDOM_2D),
    "hard_shrink_at_1": ("hard_shrink", {"threshold": 1.0}, KINKS),
    "soft_shrink_at_1": ("soft_shrink", {"threshold": 1.0}, KINKS),
    "threshold_at_0": ("threshold", {"threshold": 0.0, "default_value": 2.0}, KINKS),
    "sparsemax_ties": ("sparsemax", {}, TIES),
    "sparsemax_axis0": ("sparsemax", {"axis": 0}, RANDOM_2D),
    "squareplus_b1": ("squareplus", {"b": 1}, KINKS),
    "mish_float64": ("mish", {}, KINKS.astype(np.float64)),
}


def _weights(shape, dtype):
    return np.linspace(0.5, 2.0, int(np.prod(shape))).reshape(shape).astype(dtype)


def _run_tf(tf, name, kw, x):
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = getattr(tf.keras.activations, name)(xt, **kw)
        s = tf.reduce_sum(y * _weights(y.shape, x.dtype))
    return y.numpy(), tape.gradient(s, xt).numpy()


def _value_and_grad(name, kw, x):
    xj = jaxtape.constant(x)
    with jaxtape.GradientTape() as tape:
        tape.watch(xj)
        y = getattr(jaxtape.keras.activations, name)(xj, **kw)
        s = jaxtape.reduce_sum(y * _weights(tuple(y.shape), x.dtype))
    return y, tape.gradient(s, xj)


def _check(expected, y, g):
    want_y, want_g = expected
    assert y.dtype.name == want_y.dtype.name
    assert tuple(y.shape) == want_y.shape
    tol = 1e-5 if want_y.dtype == F32 else 1e-12
    np.testing.assert_allclose(np.asarray(y), want_y, rtol=tol, atol=tol)
    assert g is not None
    np.testing.assert_allclose(np.asarray(g), want_g, rtol=tol, atol=tol)


@pytest.mark.parametrize("row", list(ROWS), ids=list(ROWS))
def test_value_and_gradient_match_tf_keras(row, tf):
    name, kw, x = ROWS[row]
    _check(_run_tf(tf, name, kw, x), *_value_and_grad(name, kw, x))


COMPILED = ["sparsemax_ties", "threshold_kinks", "mish_random", "glu_axis0"]


@pytest.mark.parametrize("row", COMPILED, ids=COMPILED)
def test_value_and_gradient_inside_function(row, tf):
    name, kw, x = ROWS[row]
    traces = []

    @jaxtape.function
    def step(v):
        traces.append(None)
        return _value_and_grad_of(name, kw, v, x.dtype)

    step(x)
    y, g = step(x)
    assert len(traces) == 1
    _check(_run_tf(tf, name, kw, x), y, g)


def _value_and_grad_of(name, kw, v, dtype):
    with jaxtape.GradientTape() as tape:
        tape.watch(v)
        y = getattr(jaxtape.keras.activations, name)(v, **kw)
        s = jaxtape.reduce_sum(y * _weights(tuple(y.shape), dtype))
    return y, tape.gradient(s, v)


@pytest.mark.parametrize("name", NAMES, ids=NAMES)
def test_dense_activation_by_name_and_serialization(name, tf):
    x = RANDOM_2D
    kernel = _RNG.normal(size=(4, 4)).astype(F32)
    bias = np.linspace(-1, 1, 4).astype(F32)

    def dense(m):
        layer = m.keras.layers.Dense(4, activation=name)
        layer.build((None, 4))
        layer.set_weights([kernel, bias])
        with m.GradientTape() as tape:
            y = layer(m.constant(x))
            s = m.reduce_sum(y * _weights(tuple(y.shape), F32))
        return y, tape.gradient(s, layer.trainable_variables)

    if name == "threshold":  # no defaults for its arguments, in Keras too
        with pytest.raises(TypeError):
            dense(tf)
        with pytest.raises(TypeError):
            dense(jaxtape)
    else:
        want_y, want_g = dense(tf)
        y, g = dense(jaxtape)
        np.testing.assert_allclose(np.asarray(y), want_y.numpy(), rtol=1e-5, atol=1e-5)
        for a, b in zip(g, want_g, strict=True):
            np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-5, atol=1e-5)

    acts, tf_acts = jaxtape.keras.activations, tf.keras.activations
    fn = getattr(acts, name)
    assert acts.get(name) is fn
    assert acts.serialize(fn) == tf_acts.serialize(getattr(tf_acts, name)) == name
    assert acts.deserialize(acts.serialize(fn)) is fn
    assert acts.get({"class_name": "function", "config": name}) is fn


def test_mish_of_integers_is_tfs_softplus_error(tf):
    x = np.asarray([-1, 0, 2], np.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Softplus"):
        tf.keras.activations.mish(x)
    with pytest.raises(jaxtape.errors.InvalidArgumentError, match="Softplus"):
        jaxtape.keras.activations.mish(x)
