"""`jaxtape.keras.utils` against tf.keras's (Keras 3's) helpers on the same inputs."""

import random

import numpy as np
import pytest

import jaxtape
from jaxtape.keras import utils

CATEGORICAL = [
    ([0, 1, 2, 3], None),
    ([[1], [0], [2]], None),
    ([1, 0], 4),
    ([[0, 1], [2, 1]], 3),
]


@pytest.mark.parametrize("x,num_classes", CATEGORICAL)
def test_to_categorical_matches_keras(x, num_classes, tf):
    want = tf.keras.utils.to_categorical(x, num_classes)
    got = utils.to_categorical(x, num_classes)
    assert isinstance(got, np.ndarray) and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_to_categorical_of_a_tensor_is_a_float32_tensor(tf):
    got = utils.to_categorical(jaxtape.constant([[2], [0]]), 3)
    want = tf.keras.utils.to_categorical(tf.constant([[2], [0]]), 3)
    assert isinstance(got, jaxtape.Tensor) and got.dtype == jaxtape.float32
    np.testing.assert_array_equal(got.numpy(), np.asarray(want))


@pytest.mark.parametrize("axis,order", [(-1, 2), (1, 1), (None, 2), (-1, 1)])
def test_normalize_matches_keras(axis, order, tf):
    x = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0]])
    want = tf.keras.utils.normalize(x, axis=axis, order=order)
    np.testing.assert_allclose(utils.normalize(x, axis=axis, order=order), want)
    got_t = utils.normalize(jaxtape.constant(x), axis=-1, order=order)
    np.testing.assert_allclose(got_t.numpy(), tf.keras.utils.normalize(x, -1, order))


PAD = [
    dict(),
    dict(maxlen=2),
    dict(maxlen=4, padding="post"),
    dict(maxlen=2, truncating="post"),
    dict(maxlen=5, value=-1, dtype="float32"),
]


@pytest.mark.parametrize("kwargs", PAD)
def test_pad_sequences_matches_keras(kwargs, tf):
    seqs = [[1, 2, 3], [4], [], [5, 6]]
    want = tf.keras.utils.pad_sequences(seqs, **kwargs)
    got = utils.pad_sequences(seqs, **kwargs)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_pad_sequences_of_strings_and_errors_match_keras(tf):
    seqs = [["a", "bb"], ["c"]]
    for kw in (dict(dtype=object, value="<pad>"), dict(dtype="<U5", value="")):
        want = tf.keras.utils.pad_sequences(seqs, **kw)
        np.testing.assert_array_equal(utils.pad_sequences(seqs, **kw), want)
    for args, kw in [
        (seqs, dict(value="x")),
        ([[1, 2]], dict(padding="middle")),
        ([[1, 2]], dict(maxlen=1, truncating="middle")),
        ([1, 2], {}),
        ([[[1, 2]], [[1, 2, 3]]], {}),
    ]:
        with pytest.raises(ValueError) as want:
            tf.keras.utils.pad_sequences(args, **kw)
        with pytest.raises(ValueError) as got:
            utils.pad_sequences(args, **kw)
        assert str(got.value).split(":")[0] == str(want.value).split(":")[0]


def test_set_random_seed_seeds_python_numpy_and_jaxtape():
    def draw():
        return random.random(), np.random.rand(), jaxtape.random.uniform([2]).numpy()

    utils.set_random_seed(3)
    a = draw()
    utils.set_random_seed(3)
    b = draw()
    assert a[0] == b[0] and a[1] == b[1]
    np.testing.assert_array_equal(a[2], b[2])
    random.seed(3)
    np.random.seed(3)
    assert (random.random(), np.random.rand()) == a[:2]


def test_set_random_seed_refuses_a_non_integer_as_keras(tf):
    with pytest.raises(ValueError, match="Expected `seed` argument to be an integer"):
        tf.keras.utils.set_random_seed(1.5)
    with pytest.raises(ValueError, match="Expected `seed` argument to be an integer"):
        utils.set_random_seed(1.5)


@pytest.mark.parametrize(
    "data", [(1,), (1, 2), (1, 2, 3), 7, [1, 2]], ids=["x", "xy", "xyw", "bare", "list"]
)
def test_unpack_and_pack_match_keras(data, tf):
    want_unpacked = tf.keras.utils.unpack_x_y_sample_weight(data)
    assert utils.unpack_x_y_sample_weight(data) == want_unpacked
    x, y, w = tf.keras.utils.unpack_x_y_sample_weight(data)
    want = tf.keras.utils.pack_x_y_sample_weight(x, y, w)
    got = utils.pack_x_y_sample_weight(x, y, w)
    assert len(got) == (len(want) if isinstance(want, tuple) else 1)


@pytest.mark.parametrize(
    "dtype", ["float32", "int", "int64", np.float64, "bool", None, "bfloat16"]
)
def test_standardize_dtype_matches_keras(dtype, tf):
    assert utils.standardize_dtype(dtype) == tf.keras.utils.standardize_dtype(dtype)


def test_standardize_dtype_of_jaxtape_dtypes_and_tensors():
    assert utils.standardize_dtype(jaxtape.int64) == "int64"
    assert utils.standardize_dtype(jaxtape.constant([1.0])) == "float32"
    for bad in ("nonsense", "float"):  # Keras refuses "float" too
        with pytest.raises(ValueError, match="Invalid dtype"):
            utils.standardize_dtype(bad)


def test_is_keras_tensor_and_get_source_inputs():
    a = jaxtape.keras.Input((3,))
    b = jaxtape.keras.Input((3,))
    h = jaxtape.keras.layers.Dense(2)(a)
    out = jaxtape.keras.layers.Concatenate()([h, b, a])
    assert utils.is_keras_tensor(a) and utils.is_keras_tensor(out)
    assert not utils.is_keras_tensor(jaxtape.constant(1.0))
    assert utils.get_source_inputs(out) == [a, b]
    assert utils.get_source_inputs(a) == [a]


def test_clear_session_restarts_automatic_names():
    utils.clear_session()
    first = jaxtape.keras.layers.Dense(1).name
    jaxtape.keras.layers.Dense(1)
    utils.clear_session()
    assert jaxtape.keras.layers.Dense(1).name == first == "dense"


def _tf_config(tf, obj):
    return tf.keras.utils.serialize_keras_object(obj)


@pytest.mark.parametrize(
    "make",
    [
        lambda k: k.layers.Dense(3, activation="relu", name="d"),
        lambda k: k.losses.MeanSquaredError(),
        lambda k: k.optimizers.Adam(0.01),
        lambda k: k.initializers.GlorotUniform(seed=1),
        lambda k: k.regularizers.L2(0.1),
        lambda k: k.activations.relu,
    ],
    ids=["layer", "loss", "optimizer", "initializer", "regularizer", "activation"],
)
def test_serialize_round_trips_and_reads_keras_configs(make, tf):
    ours = make(jaxtape.keras)
    cfg = utils.serialize_keras_object(ours)
    want = _tf_config(tf, make(tf.keras))
    assert cfg["class_name"] == want["class_name"]
    if isinstance(want["config"], str):  # a function: Keras writes module builtins
        assert cfg["config"] == want["config"]
    else:
        assert cfg["module"] == want["module"]
    for config in (cfg, want):
        back = utils.deserialize_keras_object(config)
        if callable(ours) and not hasattr(ours, "get_config"):
            assert back is ours
        else:
            assert type(back) is type(ours)


def test_serialize_plain_values_and_custom_classes(tf):
    for value in (None, 1, 2.5, "s", [1, "a"], {"k": [1, 2]}):
        assert utils.serialize_keras_object(value) == _tf_config(tf, value)
        assert utils.deserialize_keras_object(utils.serialize_keras_object(value)) == (
            list(value) if isinstance(value, tuple) else value
        )

    @jaxtape.keras.utils.register_keras_serializable(package="T")
    class Thing:
        def __init__(self, n=1):
            self.n = n

        def get_config(self):
            return {"n": self.n}

        @classmethod
        def from_config(cls, config):
            return cls(**config)

    cfg = utils.serialize_keras_object(Thing(4))
    assert cfg["registered_name"] == "T>Thing" and cfg["config"] == {"n": 4}
    assert utils.deserialize_keras_object(cfg).n == 4
    with pytest.raises(TypeError, match="Could not locate class 'Nope'"):
        utils.deserialize_keras_object(
            {"module": "x", "class_name": "Nope", "config": {}, "registered_name": None}
        )
