"""Checkpoints written by real TensorFlow, read and restored by jaxtape.

TensorFlow writes every checkpoint here (`tf.train.Checkpoint.write/save`,
a SavedModel's `variables/`); jaxtape's pure-Python reader
(`checkpoint/tf_bundle.py`) must list and read what TF's own reader does,
and `jaxtape.train.Checkpoint.restore` must put the values into a jaxtape
model of the same architecture (a Keras model trained in TF continues
training in jaxtape as it would in TF). Skipped without TensorFlow.
"""

import os

import ml_dtypes
import numpy as np
import pytest

import jaxtape

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

# One variable per dtype TF checkpoints hold (and the shapes that are special).
_VALUES = {
    "f32": np.arange(6, dtype=np.float32).reshape(2, 3) / 7,
    "f64": np.array([1e-300, -2.5, np.inf]),
    "f16": np.array([0.5, -1.25], np.float16),
    "bf16": np.array([1.5, -3.0, 0.1], ml_dtypes.bfloat16),
    "i8": np.array([-128, 127], np.int8),
    "u8": np.array([0, 255], np.uint8),
    "i16": np.array([-3, 4], np.int16),
    "i32": np.array([[1, -2], [3, 2**31 - 1]], np.int32),
    "i64": np.array(2**40 + 3, np.int64),
    "bool": np.array([True, False, True]),
    "c64": np.array([1 + 2j, -3j], np.complex64),
    "c128": np.array([0.5 - 1j], np.complex128),
    "empty": np.zeros((0, 4), np.float32),
    "text": np.array(b"hello\x00world"),
    "texts": np.array([[b"a", b""], [b"ccc", b"\xff\x00"]], dtype=object),
}


class _Holder(tf.Module):
    def __init__(self):
        super().__init__()
        for name, value in _VALUES.items():
            setattr(self, name, tf.Variable(value))


@pytest.fixture(scope="module")
def tf_written(tmp_path_factory):
    """A checkpoint TF saved (`ckpt-1` in a directory with its state file)."""
    directory = tmp_path_factory.mktemp("tfck")
    prefix = tf.train.Checkpoint(holder=_Holder()).save(str(directory / "ckpt"))
    return str(directory), prefix


def test_list_variables_matches_tensorflow(tf_written):
    directory, prefix = tf_written
    want = tf.train.list_variables(prefix)
    assert jaxtape.train.list_variables(prefix) == want
    assert jaxtape.train.list_variables(directory) == want  # (its latest)
    assert jaxtape.train.latest_checkpoint(directory) == prefix


@pytest.mark.parametrize("name", sorted(_VALUES))
def test_tensors_read_as_tensorflow_reads_them(tf_written, name):
    _, prefix = tf_written
    key = f"holder/{name}/.ATTRIBUTES/VARIABLE_VALUE"
    theirs = tf.train.load_checkpoint(prefix)
    mine = jaxtape.train.load_checkpoint(prefix)
    assert mine.has_tensor(key)
    want, got = theirs.get_tensor(key), mine.get_tensor(key)
    if isinstance(want, bytes):  # (TF gives a scalar string as bytes)
        assert got == want
    else:
        assert got.dtype == want.dtype and got.shape == want.shape
        if want.dtype == object:
            assert got.tolist() == want.tolist()
        else:
            np.testing.assert_array_equal(got, want)
    dtype = mine.get_variable_to_dtype_map()[key]
    assert dtype.name == theirs.get_variable_to_dtype_map()[key].name
    shape = mine.get_variable_to_shape_map()[key]
    assert shape == theirs.get_variable_to_shape_map()[key]
    assert np.array_equal(np.asarray(jaxtape.train.load_variable(prefix, key)), got)


def test_jaxtape_checkpoints_read_by_their_object_paths(tmp_path):
    kernel = np.arange(6, dtype=np.float32).reshape(2, 3)
    module = jaxtape.Module()
    module.kernel = jaxtape.Variable(kernel)
    module.steps = jaxtape.Variable(3, dtype=jaxtape.int64)
    jaxtape.train.CheckpointManager(
        jaxtape.train.Checkpoint(net=module), str(tmp_path), max_to_keep=1
    ).save()
    listed = dict(jaxtape.train.list_variables(str(tmp_path)))  # (its latest)
    assert listed == {"net/kernel": [2, 3], "net/steps": [], "save_counter": []}
    reader = jaxtape.train.load_checkpoint(str(tmp_path))
    np.testing.assert_array_equal(reader.get_tensor("net/kernel"), kernel)
    assert reader.get_variable_to_dtype_map()["net/steps"] == jaxtape.int64
    assert int(jaxtape.train.load_variable(str(tmp_path), "net/steps:0")) == 3


def test_object_graph_is_read_without_tensorflow(tf_written):
    from jaxtape._src.checkpoint import tf_bundle

    _, prefix = tf_written
    nodes = tf_bundle.BundleReader(prefix).object_graph()
    holder = nodes[nodes[0]["children"]["holder"]]
    assert sorted(holder["children"]) == sorted(_VALUES)
    f32 = nodes[holder["children"]["f32"]]
    assert f32["attributes"] == {
        "VARIABLE_VALUE": "holder/f32/.ATTRIBUTES/VARIABLE_VALUE"
    }


# -- restoring into jaxtape models ----------------------------------------------------
def _keras_model(k, kind):
    layers = k.layers
    if kind == "sequential":
        return k.Sequential(
            [
                k.Input((5,)),
                layers.Dense(8, activation="relu"),
                layers.BatchNormalization(),
                layers.Dense(3),
            ]
        )
    inputs = k.Input((5,))
    h = layers.Dense(8, activation="tanh")(inputs)
    h = layers.LayerNormalization()(h)
    return k.Model(inputs, layers.Dense(3)(h))


class _TFSub(keras.Model):
    def __init__(self):
        super().__init__(name="sub")
        self.d1 = keras.layers.Dense(6, activation="relu")
        self.out = keras.layers.Dense(3)

    def call(self, x):
        return self.out(self.d1(x))


class _JaxtapeSub(jaxtape.keras.Model):
    def __init__(self):
        super().__init__(name="sub")
        self.d1 = jaxtape.keras.layers.Dense(6, activation="relu")
        self.out = jaxtape.keras.layers.Dense(3)

    def call(self, x):
        return self.out(self.d1(x))


def _data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 5)).astype("float32")
    return x, (x[:, :3] * 2 - x[:, 3:4]).astype("float32")


@pytest.mark.parametrize("kind", ["sequential", "functional", "subclassed"])
def test_keras_model_trained_in_tensorflow_restores_into_jaxtape(tmp_path, kind):
    x, y = _data()
    keras.utils.set_random_seed(1)
    model = _TFSub() if kind == "subclassed" else _keras_model(keras, kind)
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse", run_eagerly=True)
    model.fit(x, y, epochs=2, batch_size=16, verbose=0, shuffle=False)
    prefix = tf.train.Checkpoint(model=model, optimizer=model.optimizer).save(
        str(tmp_path / "ckpt")
    )

    mine = _JaxtapeSub() if kind == "subclassed" else _keras_model(jaxtape.keras, kind)
    optimizer = jaxtape.keras.optimizers.Adam(0.01)
    if kind == "subclassed":  # restored before it is built: the values wait
        status = jaxtape.train.Checkpoint(model=mine).restore(prefix)
        with pytest.raises(AssertionError, match="waiting for their objects"):
            status.assert_consumed()
        mine(x[:1])  # (builds the layers, which take their values)
        for theirs, got in zip(model.weights, mine.weights):
            np.testing.assert_array_equal(got.numpy(), theirs.numpy())
    optimizer.build(mine.trainable_variables)
    status = jaxtape.train.Checkpoint(model=mine, optimizer=optimizer).restore(prefix)
    status.assert_consumed()
    assert len(mine.weights) == len(model.weights)
    assert len(optimizer.variables) == len(model.optimizer.variables)
    for theirs, got in zip(model.weights, mine.weights):
        np.testing.assert_array_equal(got.numpy(), theirs.numpy())
    for theirs, got in zip(model.optimizer.variables, optimizer.variables):
        np.testing.assert_array_equal(got.numpy(), np.asarray(theirs))
    np.testing.assert_allclose(mine(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)
    if kind != "sequential":
        return  # (one model is enough to see that training goes on alike)
    # Training goes on from the restored moments as it does in TF.
    _train_step(jaxtape, mine, optimizer, x, y)
    _train_step(tf, model, model.optimizer, x, y)
    assert int(optimizer.iterations) == int(model.optimizer.iterations) == 5
    np.testing.assert_allclose(mine(x).numpy(), model(x).numpy(), rtol=1e-4, atol=1e-5)


def _train_step(lib, model, optimizer, x, y):
    with lib.GradientTape() as tape:
        loss = lib.reduce_mean((model(x, training=True) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


class _TFNet(tf.Module):
    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(5)
        self.layers = [
            tf.Variable(rng.normal(size=(4, 3)).astype("float32")),
            tf.Variable(rng.normal(size=(3,)).astype("float32")),
        ]
        self.scale = tf.Variable(2.5)
        self.steps = tf.Variable(7, dtype=tf.int64)

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def __call__(self, x):
        return (tf.matmul(x, self.layers[0]) + self.layers[1]) * self.scale


class _JaxtapeNet(jaxtape.Module):
    def __init__(self):
        super().__init__()
        self.layers = [
            jaxtape.Variable(np.zeros((4, 3), "float32")),
            jaxtape.Variable(np.zeros((3,), "float32")),
        ]
        self.scale = jaxtape.Variable(0.0)
        self.steps = jaxtape.Variable(0, dtype=jaxtape.int64)

    def __call__(self, x):
        return (jaxtape.matmul(x, self.layers[0]) + self.layers[1]) * self.scale


@pytest.mark.parametrize("source", ["checkpoint", "saved_model"])
def test_module_restores_from_tensorflow_checkpoint_and_saved_model(tmp_path, source):
    theirs = _TFNet()
    if source == "checkpoint":
        directory = str(tmp_path / "ckpts")
        tf.train.CheckpointManager(
            tf.train.Checkpoint(net=theirs), directory, max_to_keep=2
        ).save()
        path = jaxtape.train.latest_checkpoint(directory)
        assert path == tf.train.latest_checkpoint(directory)
        mine = _JaxtapeNet()
        checkpoint = jaxtape.train.Checkpoint(net=mine)
        manager = jaxtape.train.CheckpointManager(checkpoint, directory, 2)
        assert manager.checkpoints == [path]  # (and it restores from there)
        assert manager.restore_or_initialize() == path
    else:  # a SavedModel's variables: the saved object is the root
        tf.saved_model.save(theirs, str(tmp_path / "sm"))
        path = str(tmp_path / "sm" / "variables" / "variables")
        mine = _JaxtapeNet()
        checkpoint = jaxtape.train.Checkpoint(root=mine)
    checkpoint.restore(path).assert_existing_objects_matched()
    for got, want in zip(mine.layers, theirs.layers):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert float(mine.scale) == 2.5 and int(mine.steps) == 7
    x = np.random.default_rng(1).normal(size=(3, 4)).astype("float32")
    np.testing.assert_allclose(mine(x).numpy(), theirs(x).numpy(), rtol=1e-6)


# -- errors ---------------------------------------------------------------------------
def _net_checkpoint(tmp_path):
    return tf.train.Checkpoint(net=_TFNet()).write(str(tmp_path / "ckpt"))


def test_a_mismatched_shape_names_the_variable_and_assigns_nothing(tmp_path):
    prefix = _net_checkpoint(tmp_path)
    mine = _JaxtapeNet()
    mine.layers[1] = jaxtape.Variable(np.zeros((5,), "float32"))
    with pytest.raises(ValueError, match=r"net/layers/1.*\(3,\).*\(5,\)"):
        jaxtape.train.Checkpoint(net=mine).restore(prefix)
    assert float(mine.scale) == 0.0 and not mine.layers[0].numpy().any()


def test_damaged_or_missing_data_fails_as_tensorflow_does(tmp_path):
    prefix = _net_checkpoint(tmp_path)
    data = prefix + ".data-00000-of-00001"
    with open(data, "r+b") as f:  # flip a byte of the last tensor
        f.seek(os.path.getsize(data) - 1)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))
    checkpoint = jaxtape.train.Checkpoint(net=_JaxtapeNet())
    with pytest.raises(jaxtape.errors.DataLossError, match="checksum"):
        checkpoint.restore(prefix)
    with pytest.raises(tf.errors.OpError, match="Checksum does not match"):
        tf.train.Checkpoint(net=_TFNet()).restore(prefix)  # (TF: an OpError)
    os.remove(data)
    with pytest.raises(jaxtape.errors.NotFoundError, match="data-00000-of-00001"):
        checkpoint.restore(prefix)
    with pytest.raises(jaxtape.errors.NotFoundError, match="not found in checkpoint"):
        jaxtape.train.load_checkpoint(prefix).get_tensor("nothing")
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        jaxtape.train.load_checkpoint(str(tmp_path))
