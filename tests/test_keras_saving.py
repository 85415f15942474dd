"""Keras 3 files both ways: `.weights.h5` and `.keras`, against real tf.keras."""

import numpy as np
import pytest

import jaxtape as jt

X = np.random.default_rng(0).random((5, 4)).astype(np.float32)


def _sequential(mod):
    layers = mod.keras.layers
    return mod.keras.Sequential(
        [
            mod.keras.Input((4,)),
            layers.Dense(3, activation="relu"),
            layers.BatchNormalization(),
            layers.Dense(2),
        ]
    )


def _perturbed(model):
    rng = np.random.default_rng(1)
    model.set_weights(
        [w + rng.normal(size=w.shape).astype(np.float32) for w in model.get_weights()]
    )
    return model


def _subclassed(mod):
    class Block(mod.keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.d = mod.keras.layers.Dense(3)
            self.extra = self.add_weight(name="extra", shape=(3,), initializer="ones")

        def call(self, x):
            return self.d(x) * self.extra

    class Net(mod.keras.Model):
        def __init__(self):
            super().__init__(name="net")
            self.block = Block()
            self.blocks = [mod.keras.layers.Dense(2), mod.keras.layers.Dense(2)]
            self.head = mod.keras.layers.Dense(1)

        def call(self, x):
            return self.head(self.blocks[1](self.blocks[0](self.block(x))))

    model = Net()
    model(X)
    return model


def _functional(mod):
    inputs = mod.keras.Input((4,), name="inp")
    a = mod.keras.layers.Dense(3, activation="tanh")(inputs)
    b = mod.keras.layers.Dense(3)(inputs)
    merged = mod.keras.layers.Concatenate()([a, b])
    return mod.keras.Model(inputs, mod.keras.layers.Dense(2)(merged))


@pytest.mark.parametrize("build", [_sequential, _functional, _subclassed])
def test_weights_files_move_both_ways(tf, tmp_path, build):
    theirs = _perturbed(build(tf))
    theirs.save_weights(tmp_path / "t.weights.h5")
    ours = build(jt)
    ours(X)
    ours.load_weights(tmp_path / "t.weights.h5")
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X, verbose=0), atol=1e-5)
    ours = _perturbed(ours)
    ours.save_weights(tmp_path / "j.weights.h5")
    back = build(tf)
    back.load_weights(tmp_path / "j.weights.h5")
    np.testing.assert_allclose(back.predict(X, verbose=0), ours.predict(X), atol=1e-5)


@pytest.mark.parametrize("build", [_sequential, _functional])
def test_keras_files_move_both_ways(tf, tmp_path, build):
    theirs = _perturbed(build(tf))
    theirs.save(tmp_path / "t.keras")
    ours = jt.keras.models.load_model(tmp_path / "t.keras")
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X, verbose=0), atol=1e-5)
    ours.save(tmp_path / "j.keras")
    back = tf.keras.models.load_model(tmp_path / "j.keras")
    np.testing.assert_allclose(back.predict(X, verbose=0), ours.predict(X), atol=1e-5)


def test_own_round_trip_and_atomic_writes(tmp_path):
    model = _perturbed(_sequential(jt))
    path = tmp_path / "m.weights.h5"
    model.save_weights(path)
    model.save_weights(path)  # overwriting works and leaves no temporary files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.weights.h5"]
    other = _sequential(jt)
    other.load_weights(path)
    np.testing.assert_array_equal(other.predict(X), model.predict(X))
    model.save(tmp_path / "m.keras")
    np.testing.assert_array_equal(
        jt.keras.models.load_model(tmp_path / "m.keras").predict(X), model.predict(X)
    )


def test_a_file_of_another_architecture_names_the_first_mismatch(tmp_path):
    _sequential(jt).save_weights(tmp_path / "a.weights.h5")
    wider = jt.keras.Sequential(
        [
            jt.keras.Input((5,)),
            jt.keras.layers.Dense(3),
            jt.keras.layers.BatchNormalization(),
            jt.keras.layers.Dense(2),
        ]
    )
    before = [w.copy() for w in wider.get_weights()]
    with pytest.raises(
        ValueError,
        match=r"variable '.*dense.*/kernel' has shape "
        r"\(5, 3\) but 'layers/dense/vars/0'",
    ):
        wider.load_weights(tmp_path / "a.weights.h5")
    for a, b in zip(wider.get_weights(), before):  # nothing half-loaded
        np.testing.assert_array_equal(a, b)
    deeper = jt.keras.Sequential(
        [
            jt.keras.Input((4,)),
            jt.keras.layers.Dense(3),
            jt.keras.layers.BatchNormalization(),
            jt.keras.layers.Dense(2),
            jt.keras.layers.Dense(2),
        ]
    )
    with pytest.raises(ValueError, match="no weights for layer"):
        deeper.load_weights(tmp_path / "a.weights.h5")


def test_truncated_and_misnamed_files_give_clear_errors(tmp_path):
    model = _sequential(jt)
    path = tmp_path / "m.weights.h5"
    model.save_weights(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(OSError, match="truncated or corrupt"):  # TF: OSError
        model.load_weights(path)
    with pytest.raises(ValueError, match=r"must end in `\.weights\.h5`"):
        model.save_weights(tmp_path / "m.h5")
    with pytest.raises(ValueError, match=r"must end in\s+`\.keras`"):
        model.save(tmp_path / "m.zip")
    (tmp_path / "bad.keras").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a valid .keras file"):
        jt.keras.models.load_model(tmp_path / "bad.keras")


def test_model_checkpoint_saves_the_best_epoch(tmp_path):
    rng = np.random.default_rng(2)
    x, y = (
        rng.random((64, 4)).astype(np.float32),
        rng.random((64, 2)).astype(np.float32),
    )
    model = _sequential(jt)
    model.compile(optimizer=jt.keras.optimizers.SGD(0.1), loss="mse")
    path = tmp_path / "best.weights.h5"
    seen = []
    model.fit(
        x,
        y,
        epochs=3,
        verbose=0,
        validation_data=(x, y),
        callbacks=[
            jt.keras.callbacks.ModelCheckpoint(
                str(path), save_best_only=True, save_weights_only=True
            ),
            jt.keras.callbacks.LambdaCallback(
                on_epoch_end=lambda epoch, logs: seen.append(logs["val_loss"])
            ),
        ],
    )
    assert path.exists() and len(seen) == 3
    restored = _sequential(jt)
    restored.load_weights(path)
    restored.compile(loss="mse")
    assert restored.evaluate(x, y, verbose=0) == pytest.approx(min(seen), rel=1e-4)


def test_layer_names_and_container_paths_follow_keras_snake_case(tf, tmp_path):
    # Keras names Conv2D "conv2d" (tf.Module's rule would give "conv2_d"); the
    # weights file addresses list items by that name.
    assert jt.keras.layers.Conv2D(2, 3).name.startswith("conv2d")

    def build(mod):
        class Net(mod.keras.Model):
            def __init__(self):
                super().__init__()
                self.convs = [
                    mod.keras.layers.Conv2D(2, 3),
                    mod.keras.layers.Conv2D(2, 3),
                ]

            def call(self, x):
                return self.convs[1](self.convs[0](x))

        model = Net()
        model(np.zeros((1, 7, 7, 1), np.float32))
        return model

    theirs = _perturbed(build(tf))
    theirs.save_weights(tmp_path / "c.weights.h5")
    ours = build(jt)
    ours.load_weights(tmp_path / "c.weights.h5")
    x = np.random.default_rng(0).random((2, 7, 7, 1)).astype(np.float32)
    np.testing.assert_allclose(ours.predict(x), theirs.predict(x, verbose=0), atol=1e-5)


def _dict_model(mod, call=True):
    class Mixer(mod.keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.heads = {
                "zeta": mod.keras.layers.Dense(1, name="zz"),
                "alpha": mod.keras.layers.Dense(2, name="aa"),
            }
            self.scales = {
                "z": self.add_weight(name="wz", shape=(), initializer="ones"),
                "a": self.add_weight(name="wa", shape=(), initializer="ones"),
            }

        def call(self, x):
            z = self.heads["zeta"](x) * self.scales["z"]
            return z + self.heads["alpha"](x)[:, :1] * self.scales["a"]

    class Net(mod.keras.Model):
        def __init__(self):
            super().__init__(name="net")
            self.blocks = {
                "zeta": mod.keras.layers.Dense(1, name="z1"),
                "alpha": mod.keras.layers.Dense(2, name="a1"),
            }
            self.mixer = Mixer(name="mixer")

        def call(self, x):
            out = self.blocks["zeta"](x) + self.blocks["alpha"](x)[:, :1]
            return out + self.mixer(x)

    model = Net()
    if call:
        model(X)
    return model


def _paths(model):
    return [getattr(w, "path", w.name).split(":")[0] for w in model.weights]


def test_dict_attributes_keep_keras_order_in_weights_and_files(tf, tmp_path):
    theirs, ours = _perturbed(_dict_model(tf)), _dict_model(jt)
    assert _paths(ours) == _paths(theirs)  # insertion order, as Keras (not sorted)
    theirs.save_weights(tmp_path / "t.weights.h5")
    ours.load_weights(tmp_path / "t.weights.h5")
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X, verbose=0), atol=1e-5)
    ours = _perturbed(ours)
    ours.save_weights(tmp_path / "j.weights.h5")
    back = _dict_model(tf)
    back.load_weights(tmp_path / "j.weights.h5")
    np.testing.assert_allclose(back.predict(X, verbose=0), ours.predict(X), atol=1e-5)


def test_a_restore_into_an_unbuilt_dict_model_keeps_keras_order(tf, tmp_path):
    ours = _perturbed(_dict_model(jt))
    path = jt.train.Checkpoint(model=ours).write(str(tmp_path / "c"))
    fresh = _dict_model(jt, call=False)
    status = jt.train.Checkpoint(model=fresh).restore(path)
    fresh(X)  # built after the restore: the values waiting for it land now
    status.assert_consumed()
    assert _paths(fresh) == _paths(_dict_model(tf))
    for a, b in zip(fresh.get_weights(), ours.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_keras_file_keeps_arguments_that_layers_take(tmp_path):
    """A `.keras` file restores channels_first convolutions and regularizers
    (arguments once dropped on load as Keras-only)."""
    keras = jt.keras
    model = keras.Sequential(
        [
            keras.Input((3, 8, 8)),
            keras.layers.Conv2D(4, 3, data_format="channels_first"),
            keras.layers.Flatten(),
            keras.layers.Dense(2, kernel_regularizer="l2"),
        ]
    )
    x = np.random.default_rng(0).normal(size=(2, 3, 8, 8)).astype("float32")
    model.save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras")
    assert loaded.layers[0].data_format == "channels_first"
    assert len(loaded.losses) == len(model.losses) == 1
    np.testing.assert_array_equal(
        loaded.predict(x, verbose=0), model.predict(x, verbose=0)
    )


def test_custom_layer_without_get_config_saves_its_arguments(tf, tmp_path):
    # Keras 3's auto-config: a subclass that does not override get_config is
    # serialized from its constructor arguments, so a .keras round trip keeps
    # them (a silent reset to the defaults before); non-plain arguments raise.
    def make(m):
        class Scale(m.keras.layers.Layer):
            def __init__(self, factor=1.0, offsets=(0.0,), name=None, **kwargs):
                super().__init__(name=name, **kwargs)
                self.factor, self.offsets = factor, offsets

            def call(self, x):
                return x * self.factor + self.offsets[0]

        return Scale

    configs = []
    for m in (tf, jt):
        Scale = make(m)
        layer = Scale(2.5, offsets=[1.0], name="scale", trainable=False)
        configs.append(layer.get_config())
    assert configs[0] == configs[1]

    Scale = make(jt)
    model = jt.keras.Sequential([jt.keras.Input((3,)), Scale(2.5, offsets=[1.0])])
    path = str(tmp_path / "m.keras")
    model.save(path)
    back = jt.keras.models.load_model(path, custom_objects={"Scale": Scale})
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(back(x).numpy(), model(x).numpy())
    assert back.layers[-1].factor == 2.5

    for m in (tf, jt):

        class Holder(m.keras.layers.Layer):
            def __init__(self, fn, **kwargs):
                super().__init__(**kwargs)
                self.fn = fn

        with pytest.raises(NotImplementedError):
            Holder(lambda x: x).get_config()
