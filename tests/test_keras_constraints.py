"""keras.constraints and the Keras 3 initializer aliases vs tf.keras (issue 18)."""

import numpy as np
import pytest

import jaxtape

_W = np.random.default_rng(0).normal(size=(5, 4)).astype("float32")
_W4 = np.random.default_rng(1).normal(size=(3, 3, 2, 4)).astype("float32")

# (name, constructor arguments, weights)
CONSTRAINTS = [
    ("Constraint", {}, _W),
    ("MaxNorm", {}, _W),
    ("MaxNorm", {"max_value": 0.5, "axis": 1}, _W),
    ("MaxNorm", {"max_value": 1.0, "axis": [0, 1, 2]}, _W4),
    ("NonNeg", {}, _W),
    ("UnitNorm", {}, _W),
    ("UnitNorm", {"axis": -1}, _W4),
    ("MinMaxNorm", {}, _W),
    ("MinMaxNorm", {"min_value": 2.0, "max_value": 3.0, "rate": 0.5}, _W),
    ("max_norm", {"max_value": 1.5}, _W),
    ("min_max_norm", {"min_value": 0.5, "axis": 1}, _W),
    ("non_neg", {}, _W4),
    ("unit_norm", {"axis": [0, 1]}, _W4),
]


@pytest.mark.parametrize(
    "name, kwargs, w",
    CONSTRAINTS,
    ids=[f"{r[0]}-{i}" for i, r in enumerate(CONSTRAINTS)],
)
def test_constraint_matches_tf_keras(name, kwargs, w, tf):
    mine = getattr(jaxtape.keras.constraints, name)(**kwargs)
    theirs = getattr(tf.keras.constraints, name)(**kwargs)
    want = np.asarray(theirs(tf.constant(w)))
    got = mine(jaxtape.constant(w))
    assert got.dtype == jaxtape.float32 and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    assert mine.get_config() == theirs.get_config()
    compiled = jaxtape.function(mine)(jaxtape.constant(w))  # inside jaxtape.function
    np.testing.assert_allclose(compiled.numpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["MaxNorm", "UnitNorm", "MinMaxNorm", "NonNeg"])
def test_constraint_gradient_matches_tf(name, tf):
    w_mine, w_tf = jaxtape.constant(_W), tf.constant(_W)
    with jaxtape.GradientTape() as tape:
        tape.watch(w_mine)
        y = jaxtape.reduce_sum(jaxtape.keras.constraints.get(name)(w_mine) ** 3)
    with tf.GradientTape() as ttape:
        ttape.watch(w_tf)
        ty = tf.reduce_sum(tf.keras.constraints.get(name)(w_tf) ** 3)
    np.testing.assert_allclose(
        tape.gradient(y, w_mine).numpy(), ttape.gradient(ty, w_tf).numpy(), rtol=1e-4
    )


@pytest.mark.parametrize(
    "identifier",
    ["max_norm", "MaxNorm", "non_neg", "unit_norm", "MinMaxNorm", "Constraint"],
)
def test_get_names_give_the_keras_class(identifier, tf):
    mine = jaxtape.keras.constraints.get(identifier)
    theirs = tf.keras.constraints.get(identifier)
    assert type(mine).__name__ == type(theirs).__name__
    assert mine.get_config() == theirs.get_config()


def test_get_serialize_deserialize_round_trip_with_tf_keras(tf):
    k = jaxtape.keras.constraints
    c = k.MinMaxNorm(min_value=0.2, max_value=2.0, rate=0.5, axis=[0, 1])
    cfg = k.serialize(c)
    assert cfg == tf.keras.constraints.serialize(
        tf.keras.constraints.MinMaxNorm(
            min_value=0.2, max_value=2.0, rate=0.5, axis=[0, 1]
        )
    )
    for back in (k.deserialize(cfg), k.get(cfg)):
        assert type(back) is k.MinMaxNorm and back.get_config() == c.get_config()
    # A tf.keras config loads here, and ours there.
    tf_cfg = tf.keras.constraints.serialize(tf.keras.constraints.MaxNorm(3.0, axis=1))
    assert k.get(tf_cfg).get_config() == {"max_value": 3.0, "axis": 1}
    assert tf.keras.constraints.deserialize(k.serialize(k.UnitNorm(1))).axis == 1
    assert k.get(None) is None and k.serialize(None) is None
    assert isinstance(k.get(k.NonNeg), k.NonNeg)  # a class is instantiated
    assert k.get(c) is c
    fn = lambda w: w  # noqa: E731
    assert k.get(fn) is fn
    assert k.serialize(k.NonNeg())["class_name"] == "NonNeg"


@pytest.mark.parametrize(
    "bad", ["not_a_constraint", 3, {"class_name": "Nope", "config": {}}]
)
def test_get_refuses_unknown_identifiers_like_keras(bad, tf):
    with pytest.raises(ValueError, match="Could not interpret constraint identifier"):
        jaxtape.keras.constraints.get(bad)
    with pytest.raises((ValueError, TypeError)):
        tf.keras.constraints.get(bad)


@pytest.mark.parametrize(
    "kernel_constraint",
    [
        "max_norm",
        "non_neg",
        {"class_name": "UnitNorm", "config": {"axis": 0}},
        "instance",
    ],
)
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
def test_dense_constraint_after_an_optimizer_step_matches_tf_keras(
    kernel_constraint, compiled, tf
):
    x = np.random.default_rng(2).normal(size=(8, 5)).astype("float32")
    y = np.random.default_rng(3).normal(size=(8, 4)).astype("float32")

    def step(lib):
        c = (
            lib.keras.constraints.MaxNorm(0.3)
            if kernel_constraint == "instance"
            else kernel_constraint
        )
        # (initial weights through initializers: jaxtape's Variable applies its
        # constraint on every assignment, set_weights included; Keras's not)
        layer = lib.keras.layers.Dense(
            4,
            kernel_initializer=lib.keras.initializers.Constant(_W * 2.0),
            bias_initializer=lib.keras.initializers.Constant(-0.01),
            kernel_constraint=c,
            bias_constraint="non_neg",
        )
        layer.build((None, 5))
        opt = lib.keras.optimizers.SGD(0.1)

        def train_step():
            with lib.GradientTape() as tape:
                loss = lib.reduce_mean((layer(lib.constant(x)) - y) ** 2)
            grads = tape.gradient(loss, layer.trainable_variables)
            opt.apply_gradients(zip(grads, layer.trainable_variables))

        (lib.function(train_step) if compiled and lib is jaxtape else train_step)()
        return [np.asarray(v) for v in layer.get_weights()]

    for got, want in zip(step(jaxtape), step(tf), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# -- initializers ---------------------------------------------------------------------
_KERAS_INIT_NAMES = [
    "constant", "zeros", "ones", "identity", "stft", "random_normal", "random_uniform",
    "truncated_normal", "variance_scaling", "orthogonal", "glorot_uniform",
    "glorot_normal", "he_normal", "he_uniform", "lecun_normal", "lecun_uniform",
    "IdentityInitializer", "OrthogonalInitializer", "STFT", "STFTInitializer",
]  # fmt: skip


@pytest.mark.parametrize("name", _KERAS_INIT_NAMES)
def test_initializer_alias_is_the_same_class_as_keras(name, tf):
    theirs = getattr(tf.keras.initializers, name)
    for module in (jaxtape.keras.initializers, jaxtape.initializers):
        mine = getattr(module, name)
        assert isinstance(mine, type) and mine.__name__ == theirs.__name__
        assert jaxtape.keras.initializers.get(name).__class__ is mine


@pytest.mark.parametrize(
    "kwargs, shape",
    [
        ({}, (16, 1, 9)),
        ({"side": "imag"}, (16, 1, 9)),
        ({"window": "hamming", "scaling": "spectrum", "periodic": True}, (12, 1, 5)),
        ({"window": None, "scaling": None}, (8, 1, 5)),
        ({"side": "imag", "window": np.linspace(0, 1, 10).tolist()}, (10, 1, 17)),
    ],
)
def test_stft_initializer_matches_tf_keras(kwargs, shape, tf):
    want = np.asarray(tf.keras.initializers.STFT(**kwargs)(shape))
    init = jaxtape.keras.initializers.STFT(**kwargs)
    got = init(shape)
    assert got.dtype == jaxtape.float32 and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
    assert init.get_config() == tf.keras.initializers.STFT(**kwargs).get_config()
    back = jaxtape.keras.initializers.get(jaxtape.keras.initializers.serialize(init))
    np.testing.assert_array_equal(back(shape).numpy(), got.numpy())


def test_stft_initializer_refuses_bad_arguments_like_keras():
    with pytest.raises(ValueError, match="side should be"):
        jaxtape.keras.initializers.STFT(side="both")
    with pytest.raises(ValueError, match="Scaling is invalid"):
        jaxtape.keras.initializers.STFT(scaling="l3")
    with pytest.raises(ValueError, match="window"):
        jaxtape.keras.initializers.STFT(window=[1.0, 2.0])((3, 1, 5))


def test_a_tf_keras_layer_config_with_constraints_builds_them(tf):
    entry = tf.keras.layers.serialize(
        tf.keras.layers.Dense(3, kernel_constraint=tf.keras.constraints.MaxNorm(1.5, 1))
    )  # (what a .keras file holds)
    layer = jaxtape.keras.utils.deserialize_keras_object(entry)
    layer.build((None, 4))
    assert isinstance(layer.kernel.constraint, jaxtape.keras.constraints.MaxNorm)
    assert layer.kernel.constraint.get_config() == {"max_value": 1.5, "axis": 1}
    assert layer.bias.constraint is None


def _constraint_history(m, compiled):
    """A constrained Variable through assign, set_weights, assign inside a
    function, and optimizer steps (with EMA overwriting), as TF/Keras see it."""
    v = m.Variable([3.0, -1.0], constraint=lambda x: m.clip_by_value(x, 0.0, 1.0))
    seen = []
    v.assign([5.0, -5.0])
    seen.append(v.numpy())
    m.function(lambda: v.assign([7.0, -7.0]))()
    seen.append(v.numpy())
    opt = m.keras.optimizers.SGD(0.1, use_ema=True, ema_overwrite_frequency=2)
    step = lambda: opt.apply_gradients([(m.constant([1.0, -1.0]), v)])  # noqa: E731
    step = m.function(step) if compiled else step
    for _ in range(3):
        step()
        seen.append(v.numpy())
    dense = m.keras.layers.Dense(2, kernel_constraint="non_neg")
    dense.build((None, 2))
    dense.set_weights([-np.ones((2, 2), "float32"), np.zeros(2, "float32")])
    seen.append(dense.kernel.numpy().ravel())
    return seen


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
def test_constraints_apply_after_optimizer_updates_only_as_tf(tf, compiled):
    # TF/Keras project a constrained Variable after an optimizer update (after
    # the moving averages); `assign` and `set_weights` store values as given.
    want = _constraint_history(tf, compiled)
    got = _constraint_history(jaxtape, compiled)
    for i, (w, g) in enumerate(zip(want, got)):
        np.testing.assert_allclose(g, w, rtol=1e-6, err_msg=f"step {i}")


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.keras.layers.Dense(
            2, kernel_constraint=m.keras.constraints.MaxNorm(3)
        ),
        lambda m: m.keras.layers.Conv2D(2, 3, bias_constraint="non_neg"),
        lambda m: m.keras.layers.LSTM(
            2, recurrent_constraint=m.keras.constraints.UnitNorm(axis=1)
        ),
    ],
    ids=["Dense", "Conv2D", "LSTM"],
)
def test_layer_configs_carry_their_constraints_as_tf_keras(tf, make, tmp_path):
    keys = ("kernel_constraint", "bias_constraint", "recurrent_constraint")
    want, layer = make(tf).get_config(), make(jaxtape)
    got = layer.get_config()
    assert {k: got.get(k) for k in keys} == {k: want.get(k) for k in keys}
    # and a .keras file keeps them, for jaxtape and for tf.keras
    shape = (5, 4, 3) if "Conv" in type(layer).__name__ else (4, 3)
    inp = jaxtape.keras.Input(shape)
    model = jaxtape.keras.Model(inp, layer(inp))
    path = str(tmp_path / "m.keras")
    model.save(path)
    for m in (jaxtape, tf):
        back = m.keras.models.load_model(path).layers[1].get_config()
        assert {k: back.get(k) for k in keys} == {k: want.get(k) for k in keys}
