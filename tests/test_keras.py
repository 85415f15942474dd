"""Keras behaviour without the oracle: seed 002, naming, errors, examples, data."""

import importlib.util
import pathlib

import numpy as np
import pytest

import jaxtape as tf

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_seed_002_my_model_custom_step(caplog):
    class MyModel(tf.keras.Model):
        def __init__(self, num_classes=10):
            super(MyModel, self).__init__(name="my_model")  # noqa: UP008 - seed text
            self.num_classes = num_classes
            self.dense_1 = tf.keras.layers.Dense(32, activation="relu")
            self.dense_2 = tf.keras.layers.Dense(num_classes)

        def call(self, inputs):
            x = self.dense_1(inputs)
            return self.dense_2(x)

    data = np.random.random((1000, 32))
    labels = np.random.random((1000, 10))
    model = MyModel(num_classes=10)
    loss_object = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam()
    with tf.GradientTape() as tape:
        predictions = model(data)
        loss = loss_object(labels, predictions)
    gradients = tape.gradient(loss, model.trainable_variables)
    step = optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    # The seed prints <tf.Variable ... shape=() dtype=int64, numpy=1>.
    assert step.dtype == tf.int64 and step.numpy() == 1
    assert predictions.dtype == tf.float32  # float64 data autocast to float32
    # The seed shows TF 2.0's autocast notice; TF 2.21 (Keras 3) casts silently.
    assert not [r for r in caplog.records if "casting an input" in r.getMessage()]
    # The seed prints TF 2.0's 'my_model/dense_6/kernel:0'; Keras 3 (TF 2.21)
    # names a weight 'kernel' and gives its scope in `path`.
    names = [v.name for v in model.trainable_variables]
    paths = [v.path for v in model.trainable_variables]
    assert names == ["kernel", "bias", "kernel", "bias"]
    assert paths[0].startswith("my_model/dense") and paths[0].endswith("/kernel")
    assert paths[1].endswith("/bias")
    assert model.trainable_variables[0].shape == (32, 32)


def test_layer_tracking_freezing_and_counting():
    model = tf.keras.Sequential(
        [
            tf.keras.Input((4,)),
            tf.keras.layers.Dense(3),
            tf.keras.layers.BatchNormalization(),
            tf.keras.layers.Dense(2),
        ]
    )
    assert model.count_params() == (4 * 3 + 3) + 4 * 3 + (3 * 2 + 2)
    assert (
        len(model.trainable_variables) == 6 and len(model.non_trainable_variables) == 2
    )
    model.layers[0].trainable = False
    assert len(model.trainable_variables) == 4
    with pytest.raises(ValueError, match="isn't built"):
        tf.keras.layers.Dense(2).count_params()


def test_functional_model_matches_the_layers_applied_by_hand():
    inputs = tf.keras.Input(shape=(6,))
    a = tf.keras.layers.Dense(4, activation="tanh")(inputs)
    b = tf.keras.layers.Dense(4)(inputs)
    out = tf.keras.layers.Dense(1)(tf.keras.layers.Concatenate()([a, b]))
    model = tf.keras.Model(inputs, out)
    assert tuple(out.shape) == (None, 1)
    x = np.random.default_rng(0).normal(size=(5, 6)).astype(np.float32)
    _, d1, d2, _, d3 = model.layers  # (an InputLayer first, as Keras 3)
    expected = d3(tf.concat([d1(x), d2(x)], axis=-1))
    np.testing.assert_allclose(model(x).numpy(), expected.numpy(), rtol=1e-6)
    assert len(model.trainable_variables) == 6


def test_dropout_uses_fresh_randomness_only_in_training():
    layer = tf.keras.layers.Dropout(0.5)
    x = tf.ones([1000])
    a, b = layer(x, training=True).numpy(), layer(x, training=True).numpy()
    assert not np.array_equal(a, b)
    assert set(np.unique(a)) <= {0.0, 2.0} and 0.4 < (a == 0).mean() < 0.6
    np.testing.assert_array_equal(layer(x).numpy(), x.numpy())


def test_config_round_trip_rebuilds_an_equal_layer():
    layer = tf.keras.layers.Dense(3, activation="relu", use_bias=False, name="d")
    clone = tf.keras.layers.Dense.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()


def test_built_layer_rejects_inputs_of_the_wrong_shape():
    layer = tf.keras.layers.Dense(3)
    layer(np.zeros((2, 4), np.float32))
    with pytest.raises(
        ValueError, match="expected axis -1 of input shape to have value 4"
    ):
        layer(np.zeros((2, 5), np.float32))
    conv = tf.keras.layers.Conv2D(2, 3)
    with pytest.raises(ValueError, match="expected min_ndim=4"):  # (Keras 3)
        conv(np.zeros((2, 5, 5), np.float32))


def test_losses_name_mismatched_labels():
    with pytest.raises(ValueError, match="sparse_categorical_crossentropy: labels"):
        tf.keras.losses.SparseCategoricalCrossentropy()(
            np.zeros((4, 3)), np.ones((4, 10)) / 10
        )
    with pytest.raises(ValueError, match="categorical_crossentropy: y_true of shape"):
        tf.keras.losses.CategoricalCrossentropy()(np.zeros((4, 3)), np.ones((4, 10)))


def test_apply_gradients_errors_and_none_skipping():
    v, w = tf.Variable(1.0, name="v"), tf.Variable(2.0, name="w")
    opt = tf.keras.optimizers.SGD(0.5)
    with pytest.raises(
        ValueError,
        match=r"No gradients provided for any variable: "
        r"\['v:0', 'w:0'\]",
    ):
        opt.apply_gradients([(None, v), (None, w)])
    with pytest.warns(UserWarning, match="Gradients do not exist"):
        opt.apply_gradients([(tf.constant(1.0), v), (None, w)])
    assert v.numpy() == 0.5 and w.numpy() == 2.0
    with pytest.raises(TypeError, match="Pass `zip"):
        opt.apply_gradients([(tf.constant(1.0), tf.constant(1.0))])


def test_minimize_with_a_callable_loss():
    v = tf.Variable(3.0)
    opt = tf.keras.optimizers.SGD(0.1)
    for _ in range(50):
        opt.minimize(lambda: (v - 1.0) ** 2, [v])
    assert abs(v.numpy() - 1.0) < 1e-3
    with pytest.raises(ValueError, match="`tape` is required"):
        opt.minimize(tf.constant(1.0), [v])


def test_mnist_loader_env_var_errors(monkeypatch, tmp_path):
    monkeypatch.setenv("JAXTAPE_MNIST_PATH", str(tmp_path / "missing.npz"))
    with pytest.raises(FileNotFoundError, match="JAXTAPE_MNIST_PATH"):
        tf.keras.datasets.mnist.load_data()
    bad = tmp_path / "bad.npz"
    np.savez(bad, x=np.zeros(3))
    monkeypatch.setenv("JAXTAPE_MNIST_PATH", str(bad))
    with pytest.raises(ValueError, match="not a valid mnist.npz"):
        tf.keras.datasets.mnist.load_data()


def _example(name):
    spec = importlib.util.spec_from_file_location(
        name, ROOT / "examples" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mnist_tape_example_learns_on_a_slice(mnist_path):
    history = _example("mnist_tape").main(["--limit", "640", "--epochs", "3"])
    assert history[-1]["loss"] < history[0]["loss"]
    assert history[-1]["test_accuracy"] > 0.6  # chance is 0.1


def test_mnist_fit_example_learns_on_a_slice(mnist_path):
    history, accuracy = _example("mnist_fit").main(
        ["--limit", "640", "--epochs", "3", "--verbose", "0"]
    )
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert accuracy > 0.6


def test_early_stopping_stops_and_restores_the_best_weights():
    rng = np.random.default_rng(0)
    x, y = (
        rng.random((32, 3)).astype(np.float32),
        rng.random((32, 1)).astype(np.float32),
    )
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    # A learning rate this large diverges: the loss rises from the first epoch.
    model.compile(optimizer=tf.keras.optimizers.SGD(3.0), loss="mse")
    stop = tf.keras.callbacks.EarlyStopping(
        monitor="loss", patience=2, restore_best_weights=True
    )
    history = model.fit(x, y, epochs=20, verbose=0, callbacks=[stop])
    losses = history.history["loss"]
    assert len(losses) < 20 and stop.stopped_epoch == len(losses) - 1
    best = int(np.argmin(losses))
    assert len(losses) - 1 - best == 2  # stopped after `patience` epochs without gain


def test_mnist_download_is_verified_and_atomic(monkeypatch, tmp_path):
    from jaxtape._src.keras.datasets import _files, mnist

    monkeypatch.delenv("JAXTAPE_MNIST_PATH", raising=False)
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    arrays = {
        k: np.zeros((2, 28, 28) if k.startswith("x") else 2, np.uint8)
        for k in ("x_train", "y_train", "x_test", "y_test")
    }
    good = tmp_path / "good.npz"
    np.savez(good, **arrays)

    def fake_download(url, target):
        assert url == mnist.ORIGIN
        pathlib.Path(target).write_bytes(good.read_bytes())

    monkeypatch.setattr(_files.urllib.request, "urlretrieve", fake_download)
    with pytest.raises(ValueError, match="SHA-256"):  # not Keras's file
        mnist.load_data()
    assert not (tmp_path / "datasets" / "mnist.npz").exists()
    assert list((tmp_path / "datasets").iterdir()) == []  # no partial file left
    monkeypatch.setattr(mnist, "SHA256", _files.file_hash(good))
    (x_train, _), (x_test, _) = mnist.load_data()
    assert x_train.shape == (2, 28, 28) and x_test.dtype == np.uint8
    assert (tmp_path / "datasets" / "mnist.npz").exists()  # cached for next time


def test_regularizers_and_add_loss_feed_model_losses_and_fit():
    class WithPenalty(tf.keras.layers.Layer):
        def call(self, x):
            self.add_loss(0.5 * tf.reduce_sum(x))
            return x

    dense = tf.keras.layers.Dense(
        2, kernel_regularizer=tf.keras.regularizers.L2(0.1), bias_regularizer="l1"
    )
    model = tf.keras.Sequential([tf.keras.Input((3,)), WithPenalty(), dense])
    x = np.ones((4, 3), np.float32)
    model(x)
    kernel, bias = dense.kernel.numpy(), dense.bias.numpy()
    expected = [6.0, 0.1 * np.sum(kernel**2), 0.01 * np.sum(np.abs(bias))]
    np.testing.assert_allclose(
        sorted(float(t.numpy()) for t in model.losses), sorted(expected), rtol=1e-5
    )
    model(x)  # losses from add_loss are replaced on each call, not accumulated
    assert len(model.losses) == 3
    model.compile(optimizer=tf.keras.optimizers.SGD(0.0), loss="mse")
    y = np.zeros((4, 2), np.float32)
    data_loss = float(np.mean((model.predict(x) - y) ** 2))
    logs = model.train_on_batch(x, y, return_dict=True)
    assert logs["loss"] == pytest.approx(data_loss + sum(expected), rel=1e-5)


def test_initializers_have_keras_statistics():
    init = tf.keras.initializers
    w = init.GlorotUniform()((400, 600)).numpy()
    limit = np.sqrt(6 / (400 + 600))
    assert np.abs(w).max() <= limit and np.abs(w).max() > 0.99 * limit
    assert np.var(w) == pytest.approx(2 / (400 + 600), rel=0.02)
    h = init.HeNormal()((3, 3, 64, 64)).numpy()
    assert np.std(h) == pytest.approx(np.sqrt(2 / (9 * 64)), rel=0.03)
    np.testing.assert_array_equal(
        init.RandomNormal(seed=3)((5,)).numpy(), init.RandomNormal(seed=3)((5,)).numpy()
    )
    assert tf.keras.layers.Dense(2).kernel_initializer.__class__.__name__ == (
        "GlorotUniform"
    )
    with pytest.raises(ValueError, match="Unknown initializer"):
        init.get("glorot_uniformm")


def test_summary_and_progress_output(capsys):
    model = tf.keras.Sequential(
        [tf.keras.Input((4,)), tf.keras.layers.Dense(3), tf.keras.layers.Dense(2)],
        name="tiny",
    )
    model.summary()
    text = capsys.readouterr().out
    assert 'Model: "tiny"' in text and "Total params: 23" in text
    assert "(None, 3)" in text and "Trainable params: 23" in text
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    x, y = np.ones((8, 4), np.float32), np.zeros((8, 2), np.float32)
    model.fit(x, y, epochs=2, batch_size=4, verbose=0)
    assert capsys.readouterr().out == ""
    model.fit(x, y, epochs=2, batch_size=4, verbose=1)
    text = capsys.readouterr().out
    assert "Epoch 1/2" in text and "Epoch 2/2" in text and "2/2" in text
    assert "loss:" in text and "mae:" in text and "/step" in text


def test_custom_callbacks_see_every_hook_in_order():
    events = []

    class Recorder(tf.keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            events.append("train_begin")

        def on_epoch_begin(self, epoch, logs=None):
            events.append(f"epoch{epoch}")

        def on_train_batch_end(self, batch, logs=None):
            events.append(f"batch{batch}")

        def on_epoch_end(self, epoch, logs=None):
            events.append(f"end{epoch}:" + ",".join(sorted(logs)))

    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.ones((4, 2), np.float32), np.ones((4, 1), np.float32)
    model.fit(
        x,
        y,
        epochs=2,
        batch_size=2,
        verbose=0,
        validation_split=0.5,
        callbacks=[Recorder()],
    )
    assert events == [
        "train_begin",
        "epoch0",
        "batch0",
        "end0:loss,val_loss",
        "epoch1",
        "batch0",
        "end1:loss,val_loss",
    ]


def test_steps_of_an_uncompiled_model_say_to_compile():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    x, y = np.ones((2, 3), np.float32), np.ones((2, 1), np.float32)
    model(x)
    for step in (model.train_step, model.test_step):
        with pytest.raises(ValueError, match="compile"):
            step((x, y))


def test_fit_without_an_optimizer_says_to_compile_with_one():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer=None, loss="mse")
    with pytest.raises(ValueError, match="without an optimizer"):
        model.fit(np.ones((2, 3)), np.ones((2, 1)), verbose=0)


def test_callbacks_used_without_a_model_say_so():
    stop = tf.keras.callbacks.EarlyStopping(monitor="loss", patience=0, mode="min")
    stop.on_train_begin()
    stop.on_epoch_end(0, {"loss": 1.0})
    with pytest.raises(RuntimeError, match="not attached to a model"):
        stop.on_epoch_end(1, {"loss": 2.0})
