"""keras.mixed_precision against tf.keras (Keras 3.15): dtype policies, layers
under mixed_float16/mixed_bfloat16 (output dtypes, values, float32 weight
gradients), LossScaleOptimizer's scale trajectory, and a small fit."""

from __future__ import annotations

import numpy as np
import pytest

import jaxtape as jt

MP = jt.keras.mixed_precision
L = jt.keras.layers


@pytest.fixture(autouse=True)
def _float32_policy_after(tf):
    """Every test leaves both global policies at float32."""
    yield
    MP.set_global_policy("float32")
    tf.keras.mixed_precision.set_global_policy("float32")


def _both(tf, policy):
    MP.set_global_policy(policy)
    tf.keras.mixed_precision.set_global_policy(policy)


# -- policies ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    ["float32", "mixed_float16", "mixed_bfloat16", "float16", "bfloat16", "float64"],
)
def test_policy_and_layer_dtypes_match_keras(tf, name):
    mine, theirs = MP.Policy(name), tf.keras.mixed_precision.Policy(name)
    assert repr(mine) == repr(theirs)
    assert (mine.compute_dtype, mine.variable_dtype) == (
        theirs.compute_dtype,
        theirs.variable_dtype,
    )
    assert mine.get_config() == theirs.get_config()
    # Given to a layer, and as the global policy.
    for make in (lambda m: m.layers.Dense(2, dtype=name), lambda m: m.layers.Dense(2)):
        _both(tf, name)
        a, b = make(jt.keras), make(tf.keras)
        assert repr(a.dtype_policy) == repr(b.dtype_policy)
        for attr in ("dtype", "compute_dtype", "variable_dtype"):
            assert getattr(a, attr) == getattr(b, attr), attr
        assert a.get_config()["dtype"] == b.get_config()["dtype"]
        clone = L.Dense.from_config(a.get_config())
        assert clone.dtype_policy == a.dtype_policy
    assert repr(MP.global_policy()) == repr(tf.keras.mixed_precision.global_policy())


@pytest.mark.parametrize(
    "call",
    [
        lambda mp: mp.Policy(3),
        lambda mp: mp.Policy("float17"),
        lambda mp: mp.set_global_policy(3),
    ],
    ids=["name_not_string", "unknown_name", "set_not_policy"],
)
def test_bad_policies_raise_keras_errors(tf, call):
    with pytest.raises(Exception) as theirs:
        call(tf.keras.mixed_precision)
    with pytest.raises(type(theirs.value)):
        call(MP)


# -- layers under mixed policies -------------------------------------------------------
def _x(shape, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "int32":
        return rng.integers(0, 10, shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


LAYERS = {
    "Dense": (lambda m: m.layers.Dense(3, activation="relu"), (4, 5)),
    "Conv2D": (lambda m: m.layers.Conv2D(2, 3), (2, 6, 6, 3)),
    "LSTM": (lambda m: m.layers.LSTM(3, return_sequences=True), (2, 4, 5)),
    "LayerNormalization": (lambda m: m.layers.LayerNormalization(), (3, 6)),
    "BatchNormalization": (lambda m: m.layers.BatchNormalization(), (8, 4)),
    "Embedding": (lambda m: m.layers.Embedding(10, 4), "int"),
    "Embedding_float_ids": (lambda m: m.layers.Embedding(5000, 4), "float_ids"),
    "softmax_Activation": (lambda m: m.layers.Activation("softmax"), (3, 7)),
    "float32_softmax": (
        lambda m: m.layers.Activation("softmax", dtype="float32"),
        (3, 7),
    ),
}
TOL = {"mixed_float16": 1e-2, "mixed_bfloat16": 6e-2}


def _run_tf(tf, layer, x, training):
    kw = {"training": True} if training else {}
    with tf.GradientTape() as tape:
        y = layer(x, **kw)
        loss = tf.reduce_sum(tf.square(tf.cast(y, "float32")))
    grads = tape.gradient(loss, layer.trainable_weights)
    return y, grads  # (Embedding's are IndexedSlices)


def _run_jt(layer, x, training, compiled):
    kw = {"training": True} if training else {}

    def step(x):
        with jt.GradientTape() as tape:
            y = layer(x, **kw)
            loss = jt.reduce_sum(jt.square(jt.cast(y, "float32")))
        return y, tape.gradient(loss, layer.trainable_weights)

    return (jt.function(step) if compiled else step)(x)


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_under_mixed_policy_matches_tf_keras(tf, policy, name):
    make, shape = LAYERS[name]
    _both(tf, policy)
    if shape == "int":
        x = _x((2, 3), "int32")
    elif shape == "float_ids":  # (not rounded to float16 on the way: Keras's)
        x = np.array([[4097.0, 3.0], [4999.0, 0.0]], "float32")
    else:
        x = _x(shape)
    theirs, mine = make(tf.keras), make(jt.keras)
    theirs(x)
    mine(x)
    mine.set_weights(theirs.get_weights())
    assert [w.dtype.name for w in mine.weights] == [w.dtype for w in theirs.weights]
    training = name == "BatchNormalization"
    compiled = name in ("Dense", "BatchNormalization")  # (inside jaxtape.function)
    y_tf, g_tf = _run_tf(tf, theirs, x, training)
    y_jt, g_jt = _run_jt(mine, x, training, compiled)
    assert y_jt.dtype.name == y_tf.dtype.name
    tol = TOL[policy]
    np.testing.assert_allclose(
        np.asarray(y_jt).astype("float32"),
        np.asarray(y_tf).astype("float32"),
        rtol=tol,
        atol=tol,
    )
    sparse = [isinstance(g, jt.IndexedSlices) for g in g_jt]
    assert sparse == [isinstance(g, tf.IndexedSlices) for g in g_tf]
    g_jt = [jt.convert_to_tensor(g) for g in g_jt]  # (Embedding's are sparse)
    g_tf = [tf.convert_to_tensor(g) for g in g_tf]
    assert [g.dtype.name for g in g_jt] == [g.dtype.name for g in g_tf]
    for a, b in zip(g_jt, g_tf):
        scale = max(1.0, float(np.abs(np.asarray(b)).max()))
        np.testing.assert_allclose(
            np.asarray(a), np.asarray(b), rtol=4 * tol, atol=4 * tol * scale
        )
    for a, b in zip(mine.weights, theirs.weights):  # (BatchNorm's moving stats)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def test_weights_read_in_compute_dtype_only_inside_call():
    MP.set_global_policy("mixed_float16")
    layer = L.Dense(2)
    layer.build((None, 3))
    seen = []

    class Probe(L.Layer):
        def call(self, x):
            seen.append(layer.kernel.dtype.name)
            return layer(x)

    Probe()(np.ones((1, 3), "float32"))
    assert seen == ["float16"]
    assert layer.kernel.dtype.name == "float32"
    assert type(layer.kernel).__name__ == "AutocastVariable"
    MP.set_global_policy("float32")
    assert type(L.Dense(2, dtype="float32").add_weight(shape=(1,))).__name__ == (
        "KerasVariable"
    )


def test_models_pass_float32_inputs_on_unrounded(tf):
    """A functional/Sequential model leaves its inputs to its layers (Keras
    converts them to the Input's float32): ids above 2048 survive."""
    _both(tf, "mixed_float16")
    x = np.array([[4097.0], [3.0]], "float32")
    table = np.repeat((np.arange(5000) % 2).astype("float32")[:, None], 2, 1)

    def outputs(m):
        inp = m.keras.Input((1,))
        functional = m.keras.Model(inp, m.keras.layers.Embedding(5000, 2)(inp))
        sequential = m.keras.Sequential(
            [m.keras.Input((1,)), m.keras.layers.Embedding(5000, 2)]
        )
        out = []
        for model in (functional, sequential):
            model.set_weights([table])
            out.append(np.asarray(model(x)))
        return out

    for a, b in zip(outputs(jt), outputs(tf)):
        assert a.dtype == b.dtype == np.float16
        np.testing.assert_array_equal(a, b)


def test_model_config_carries_policies(tf):
    _both(tf, "mixed_float16")

    def make(m):
        return m.keras.Sequential(
            [
                m.keras.Input((3,)),
                m.keras.layers.Dense(2),
                m.keras.layers.Dense(1, dtype="mixed_bfloat16"),
            ]
        )

    mine, theirs = make(jt).get_config(), make(tf).get_config()
    assert mine["dtype"] == theirs["dtype"]
    assert [e["config"]["dtype"] for e in mine["layers"]] == [
        e["config"]["dtype"] for e in theirs["layers"]
    ]
    _both(tf, "float32")
    model = jt.keras.Sequential.from_config(mine)
    assert [repr(x.dtype_policy) for x in [model, *model.layers]] == [
        '<DTypePolicy "mixed_float16">',
        '<DTypePolicy "mixed_float16">',
        '<DTypePolicy "mixed_bfloat16">',
    ]


# -- LossScaleOptimizer ------------------------------------------------------------
GRADS = [1.0, np.inf, 2.0, 3.0, 4.0, np.nan, 1.0, 1.0, 1.0, 5.0]


def _trajectory(m, opt, var, compiled):
    def step(g):
        opt.apply_gradients([(g, var)])

    if compiled:
        step = m.function(step)
    out = []
    for g in GRADS:
        scaled = np.full((2,), g, "float32") * float(np.asarray(opt.scale_loss(1.0)))
        step(m.constant(scaled))
        out.append(
            (
                float(np.asarray(opt.dynamic_scale)),
                int(np.asarray(opt.iterations)),
                np.asarray(var).copy(),
            )
        )
    return out


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
def test_loss_scale_optimizer_trajectory_matches_keras(tf, compiled):
    def make(m):
        inner = m.keras.optimizers.SGD(0.1, momentum=0.5)
        return m.keras.mixed_precision.LossScaleOptimizer(
            inner, initial_scale=8.0, dynamic_growth_steps=2
        )

    theirs, mine = make(tf), make(jt)
    assert float(np.asarray(mine.scale_loss(1.0))) == 8.0
    v_tf, v_jt = tf.Variable([1.0, -1.0]), jt.Variable([1.0, -1.0])
    want = _trajectory(tf, theirs, v_tf, False)
    got = _trajectory(jt, mine, v_jt, compiled)
    for (s_a, i_a, v_a), (s_b, i_b, v_b) in zip(got, want):
        assert (s_a, i_a) == (s_b, i_b)
        np.testing.assert_allclose(v_a, v_b, rtol=1e-6)
    assert int(np.asarray(mine.step_counter)) == int(np.asarray(theirs.step_counter))


# -- Model.fit under mixed_float16 ---------------------------------------------------
def test_fit_under_mixed_float16_matches_tf_keras(tf):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(32, 6)).astype("float32")
    y = (x @ rng.normal(size=(6, 1))).astype("float32")
    _both(tf, "mixed_float16")

    def make(m):
        model = m.keras.Sequential(
            [
                m.keras.Input((6,)),
                m.keras.layers.Dense(8, activation="relu"),
                m.keras.layers.Dense(1),
            ]
        )
        model.compile(m.keras.optimizers.SGD(0.05), "mse")
        return model

    theirs, mine = make(tf), make(jt)
    mine.set_weights(theirs.get_weights())
    assert type(mine.optimizer).__name__ == type(theirs.optimizer).__name__
    assert mine.optimizer.name == theirs.optimizer.name
    assert mine(x).dtype.name == theirs(x).dtype.name == "float16"
    fit = {"epochs": 2, "batch_size": 8, "shuffle": False, "verbose": 0}
    h_tf = theirs.fit(x, y, **fit).history["loss"]
    h_jt = mine.fit(x, y, **fit).history["loss"]
    np.testing.assert_allclose(h_jt, h_tf, rtol=2e-2)
    assert [w.dtype for w in mine.get_weights()] == [np.float32] * 4
    for a, b in zip(mine.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=2e-2, atol=2e-2)
    loss = mine.evaluate(x, y, verbose=0)
    np.testing.assert_allclose(loss, theirs.evaluate(x, y, verbose=0), rtol=2e-2)
