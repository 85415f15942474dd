"""One harness per component kind: every layer, loss, metric and optimizer goes
through the same checks (shapes/dtypes, variables, a training step, config and
save/load round trips)."""

import numpy as np
import pytest
from layer_checks import check_layer

import jaxtape as tf

L = tf.keras.layers
LAYERS = [
    (lambda: L.Dense(4, activation="relu"), (3, 5), 2),
    (lambda: L.Dense(4, use_bias=False), (3, 5), 1),
    (lambda: L.Conv2D(4, 3, padding="same"), (2, 6, 6, 3), 2),
    (lambda: L.Conv1D(3, 2, activation="tanh"), (2, 6, 4), 2),
    (lambda: L.MaxPooling2D(), (2, 6, 6, 3), 0),
    (lambda: L.AveragePooling2D(3, 2), (2, 7, 7, 3), 0),
    (lambda: L.GlobalAveragePooling2D(), (2, 4, 4, 3), 0),
    (lambda: L.GlobalMaxPooling2D(), (2, 4, 4, 3), 0),
    (lambda: L.Flatten(), (2, 3, 4), 0),
    (lambda: L.Reshape((4, 3)), (2, 12), 0),
    (lambda: L.Dropout(0.3), (4, 6), 0),
    (lambda: L.BatchNormalization(), (4, 6), 4),
    (lambda: L.LayerNormalization(), (3, 6), 2),
    (lambda: L.Activation("softplus"), (3, 4), 0),
    (lambda: L.ReLU(max_value=1.0), (3, 4), 0),
    (lambda: L.Softmax(), (3, 4), 0),
]


def _ids():
    return [f"{i}" for i in range(len(LAYERS))]


@pytest.mark.parametrize("make,shape,n_vars", LAYERS, ids=_ids())
def test_layer_harness(tmp_path, make, shape, n_vars):
    check_layer(tmp_path, make, shape, n_vars)


def test_embedding_harness():
    layer = L.Embedding(10, 3)
    ids = np.array([[1, 2], [3, 9]])
    out = layer(ids)
    assert out.shape == (2, 2, 3) and out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy()[1, 1], layer.embeddings.numpy()[9])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(ids))
    grad = tape.gradient(loss, layer.embeddings)  # TF's IndexedSlices
    assert isinstance(grad, tf.IndexedSlices)
    grad = tf.convert_to_tensor(grad).numpy()
    assert grad[[1, 2, 3, 9]].sum() == 4 * 3 and grad[0].sum() == 0


LOSSES = [
    "CategoricalCrossentropy",
    "SparseCategoricalCrossentropy",
    "BinaryCrossentropy",
    "MeanSquaredError",
    "MeanAbsoluteError",
    "Huber",
    "KLDivergence",
]


@pytest.mark.parametrize("name", LOSSES)
def test_loss_harness(name):
    cls = getattr(tf.keras.losses, name)
    loss = cls(reduction="sum")
    clone = cls.from_config(loss.get_config())
    assert clone.get_config() == loss.get_config()
    rng = np.random.default_rng(0)
    p = rng.random((4, 3)).astype(np.float32) + 0.1
    p /= p.sum(-1, keepdims=True)
    y = (
        rng.integers(0, 3, 4)
        if name.startswith("Sparse")
        else np.eye(3)[rng.integers(0, 3, 4)].astype(np.float32)
    )
    pred = tf.constant(p)
    with tf.GradientTape() as tape:
        tape.watch(pred)
        value = loss(y, pred)
    assert value.shape == () and value.dtype == tf.float32
    assert tape.gradient(value, pred) is not None
    assert cls(reduction="none")(y, p).shape == (4,)
    with pytest.raises(ValueError, match="reduction"):
        cls(reduction="average")


METRICS = [
    "Mean",
    "Sum",
    "Accuracy",
    "CategoricalAccuracy",
    "SparseCategoricalAccuracy",
    "BinaryAccuracy",
    "MeanSquaredError",
    "MeanAbsoluteError",
    "Precision",
    "Recall",
    "AUC",
]


@pytest.mark.parametrize("name", METRICS)
def test_metric_harness(name):
    metric = getattr(tf.keras.metrics, name)()
    assert all(not v.trainable for v in metric.variables)
    assert float(metric.result().numpy()) == 0.0
    rng = np.random.default_rng(0)
    if name in ("Mean", "Sum"):
        args = (rng.random(8).astype(np.float32),)
    elif name == "SparseCategoricalAccuracy":
        args = (rng.integers(0, 3, 8), rng.random((8, 3)).astype(np.float32))
    elif name == "Accuracy":
        args = (rng.integers(0, 2, 8), rng.integers(0, 2, 8))
    else:
        args = (
            (rng.random((8, 3)) > 0.5).astype(np.float32),
            rng.random((8, 3)).astype(np.float32),
        )
    with tf.GradientTape() as tape:  # metric updates are never recorded
        metric.update_state(*args)
    assert tape._rec.nodes == []
    first = float(metric.result().numpy())
    metric.reset_state()
    metric.update_state(*args)
    assert float(metric.result().numpy()) == first


OPTIMIZERS = [
    "SGD",
    "Adam",
    "AdamW",
    "RMSprop",
    "Adagrad",
    "Adadelta",
    "Adamax",
    "Nadam",
]


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_harness(name):
    cls = getattr(tf.keras.optimizers, name)
    opt = cls(learning_rate=0.5)
    clone = cls.from_config(opt.get_config())
    assert clone.get_config() == {**opt.get_config(), "name": clone.name}
    v = tf.Variable([1.0, -2.0])
    for _ in range(3):
        opt.minimize(lambda: tf.reduce_sum(v * v), [v])
    assert opt.iterations.numpy() == 3
    assert np.all(np.abs(v.numpy()) < [1.0, 2.0])  # moved towards the minimum
    assert all(not s.trainable for s in opt.variables)
    opt.learning_rate = 0.1
    assert float(opt.learning_rate.numpy()) == pytest.approx(0.1)
