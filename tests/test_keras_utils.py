"""`jaxtape.keras.utils` against tf.keras's (Keras 3's) helpers on the same inputs."""

import random
import re

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


def _progbar_run(cls, **kwargs):
    bar = cls(4, verbose=2, **kwargs)
    bar.update(1, [("loss", 1.0), ("acc", 0.1)])
    bar.add(2, [("loss", 4.0), ("acc", 0.2)])
    state = {k: list(v) if isinstance(v, list) else v for k, v in bar._values.items()}
    bar.update(4, [("loss", 7.0), ("acc", 0.3)])
    return state, bar._values, bar._seen_so_far


@pytest.mark.parametrize(
    "kwargs", [{}, {"stateful_metrics": ["acc"]}, {"stateless_metrics": ["loss"]}]
)
def test_progbar_averages_values_as_keras(kwargs, tf, capsys):
    want = _progbar_run(tf.keras.utils.Progbar, **kwargs)
    want_text = capsys.readouterr().out
    got = _progbar_run(utils.Progbar, **kwargs)
    got_text = capsys.readouterr().out
    assert got == want
    for name in ("loss", "acc"):
        pattern = rf"{name}: ([0-9.e+-]+)"
        assert re.findall(pattern, got_text) == re.findall(pattern, want_text)
    assert got_text.startswith("4/4 - ")


def test_progbar_verbose_1_draws_a_bar_and_refuses_both_metric_lists(capsys):
    bar = utils.Progbar(3, interval=0)
    for i in range(3):
        bar.update(i + 1, [("loss", float(i))])
    out = capsys.readouterr().out
    assert "3/3" in out and "loss: 2.0000" in out
    with pytest.raises(ValueError, match="Only one of `stateful_metrics`"):
        utils.Progbar(3, stateful_metrics=["a"], stateless_metrics=["b"])


def _batches(ds):
    out = []
    for el in ds:
        parts = el if isinstance(el, tuple) else (el,)
        out.append(tuple(np.asarray(p) for p in parts))
    return out


def _rows(batches):
    """All windows (with their targets) as sorted rows: order-free contents."""
    cols = [np.concatenate(c) for c in zip(*batches, strict=True)]
    flat = np.concatenate([c.reshape(len(c), -1) for c in cols], axis=1)
    return [(np.unique(flat, axis=0),)]


TIMESERIES = [
    dict(sequence_length=3),
    dict(sequence_length=4, sequence_stride=2, sampling_rate=2, batch_size=3),
    dict(sequence_length=2, start_index=3, end_index=15, batch_size=4),
    dict(sequence_length=3, batch_size=5, shuffle=True, seed=7),
    dict(sequence_length=3, batch_size=None),
]


@pytest.mark.parametrize("kwargs", TIMESERIES)
@pytest.mark.parametrize("with_targets", [True, False])
def test_timeseries_dataset_batches_match_keras(kwargs, with_targets, tf):
    data = np.arange(40, dtype="float32").reshape(20, 2)
    targets = np.arange(100, 120) if with_targets else None
    want = _batches(
        tf.keras.utils.timeseries_dataset_from_array(data, targets, **kwargs)
    )
    got = _batches(utils.timeseries_dataset_from_array(data, targets, **kwargs))
    assert len(got) == len(want)
    if kwargs.get("shuffle"):  # TF's buffer shuffle: same windows, its own order
        assert [g[0].shape for g in got] == [w[0].shape for w in want]
        got, want = _rows(got), _rows(want)
    for g, w in zip(got, want, strict=True):
        for a, b in zip(g, w, strict=True):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype


@pytest.mark.parametrize(
    "kwargs",
    [dict(start_index=-1), dict(end_index=30), dict(sampling_rate=0),
     dict(sequence_stride=25), dict(start_index=5, end_index=4)],
)  # fmt: skip
def test_timeseries_dataset_argument_errors_match_keras(kwargs, tf):
    data = np.zeros((20, 1))
    with pytest.raises(ValueError) as want:
        tf.keras.utils.timeseries_dataset_from_array(data, None, 3, **kwargs)
    with pytest.raises(ValueError) as got:
        utils.timeseries_dataset_from_array(data, None, 3, **kwargs)
    assert str(got.value) == str(want.value)


SPLITS = [
    dict(left_size=0.8),
    dict(right_size=3),
    dict(left_size=4, right_size=0.5),
    dict(left_size=0.3, shuffle=True, seed=5),
]


@pytest.mark.parametrize("kwargs", SPLITS)
@pytest.mark.parametrize("source", ["array", "tuple", "dataset"])
def test_split_dataset_matches_keras(kwargs, source, tf):
    x = np.arange(20, dtype="float32").reshape(10, 2)
    y = np.arange(10)
    theirs, ours = {
        "array": (x, x),
        "tuple": ((x, y), (x, y)),
        "dataset": (
            tf.data.Dataset.from_tensor_slices((x, y)),
            jaxtape.data.Dataset.from_tensor_slices((x, y)),
        ),
    }[source]
    want = tf.keras.utils.split_dataset(theirs, **kwargs)
    got = utils.split_dataset(ours, **kwargs)
    for g, w in zip(got, want, strict=True):
        assert isinstance(g, jaxtape.data.Dataset)
        gb, wb = _batches(g), _batches(w)
        assert len(gb) == len(wb)
        for a, b in zip(gb, wb, strict=True):
            for p, q in zip(a, b, strict=True):
                np.testing.assert_array_equal(p, q)


@pytest.mark.parametrize(
    "kwargs",
    [dict(), dict(left_size=0, right_size=0), dict(left_size=1.5),
     dict(left_size=0.6, right_size=0.6), dict(left_size=7, right_size=5),
     dict(left_size="a")],
)  # fmt: skip
def test_split_dataset_errors_match_keras(kwargs, tf):
    x = np.arange(10)
    with pytest.raises((ValueError, TypeError)) as want:
        tf.keras.utils.split_dataset(x, **kwargs)
    with pytest.raises(want.type) as got:
        utils.split_dataset(x, **kwargs)
    assert str(got.value).split(".")[0] == str(want.value).split(".")[0]


def _make_py_dataset(base, workers=1):
    class Rows(base):
        def __init__(self, x, y, **kwargs):
            super().__init__(**kwargs)
            self.x, self.y, self.events = x, y, []

        def __len__(self):
            return 3

        def __getitem__(self, i):
            self.events.append(i)
            return self.x[i * 4 : i * 4 + 4], self.y[i * 4 : i * 4 + 4]

        def on_epoch_begin(self):
            self.events.append("begin")

        def on_epoch_end(self):
            self.events.append("end")

    x = np.linspace(-1, 1, 24, dtype="float32").reshape(12, 2)
    y = (x @ np.array([[1.0], [-2.0]], "float32")).astype("float32")
    return Rows(x, y, workers=workers)


@pytest.mark.parametrize("workers", [1, 3])
def test_fit_on_a_py_dataset_matches_keras(workers, tf):
    def train(k):
        data = _make_py_dataset(k.utils.PyDataset, workers)
        model = k.Sequential(
            [k.Input((2,)), k.layers.Dense(1, kernel_initializer="ones")]
        )
        model.compile(k.optimizers.SGD(0.1), "mse")
        hist = model.fit(data, epochs=2, shuffle=False, verbose=0)
        loss = model.evaluate(data, verbose=0)
        return model.get_weights(), hist.history["loss"], loss, data.events

    want, got = train(tf.keras), train(jaxtape.keras)
    for g, w in zip(got[0], want[0], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5)
    # each pass (2 epochs, then evaluate) reads every batch between the hooks
    # (tf.keras's tf.data wrapper peeks at batches too, so its log differs)
    assert got[3] == ["begin", 0, 1, 2, "end"] * 3
    assert utils.Sequence is utils.PyDataset


def test_py_dataset_refuses_bad_batches_and_extra_arguments():
    class Bad(utils.PyDataset):
        def __len__(self):
            return 1

        def __getitem__(self, i):
            return "nope"

    model = jaxtape.keras.Sequential([jaxtape.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match="must return a tuple or a dict"):
        model.fit(Bad(), verbose=0)
    with pytest.raises(ValueError, match="`y` must not be given"):
        model.fit(Bad(), np.zeros((1, 1)), verbose=0)

    class NoSuper(Bad):
        def __init__(self):
            pass

    with pytest.warns(UserWarning, match="should call `super"):
        assert NoSuper().workers == 1


IMAGES = [
    (np.arange(4 * 6 * 3).reshape(4, 6, 3), True, "rgb"),
    (np.arange(4 * 6 * 4).reshape(4, 6, 4) % 256, False, "rgba"),
    (np.arange(4 * 6 * 1).reshape(4, 6, 1) * 10.0, True, "grayscale"),
]


@pytest.mark.parametrize("x,scale,mode", IMAGES)
def test_image_round_trip_matches_keras(x, scale, mode, tf, tmp_path):
    k = tf.keras.utils
    want_img, got_img = (
        k.array_to_img(x, scale=scale),
        utils.array_to_img(x, scale=scale),
    )
    assert got_img.mode == want_img.mode
    np.testing.assert_array_equal(utils.img_to_array(got_img), k.img_to_array(want_img))
    for fmt in ("channels_first", "channels_last"):
        a = utils.img_to_array(got_img, data_format=fmt, dtype="uint8")
        np.testing.assert_array_equal(a, k.img_to_array(want_img, fmt, dtype="uint8"))
    utils.save_img(tmp_path / "ours.png", x, scale=scale)
    k.save_img(tmp_path / "theirs.png", x, scale=scale)
    for kw in (
        dict(color_mode=mode),
        dict(color_mode="rgb", target_size=(3, 3), interpolation="bilinear"),
        dict(color_mode="rgba", target_size=(2, 5), keep_aspect_ratio=True),
    ):
        got = utils.img_to_array(utils.load_img(tmp_path / "ours.png", **kw))
        want = k.img_to_array(k.load_img(tmp_path / "theirs.png", **kw))
        np.testing.assert_array_equal(got, want)


def test_image_errors_match_keras(tf, tmp_path):
    k = tf.keras.utils
    k.save_img(tmp_path / "a.png", np.zeros((2, 2, 3)))
    cases = [
        (lambda m: m.array_to_img(np.zeros((2, 2))), ValueError),
        (lambda m: m.array_to_img(np.zeros((2, 2, 2))), ValueError),
        (lambda m: m.load_img(tmp_path / "a.png", color_mode="cmyk"), ValueError),
        (
            lambda m: m.load_img(
                tmp_path / "a.png", target_size=(3, 3), interpolation="x"
            ),
            ValueError,
        ),  # noqa: E501
        (lambda m: m.load_img(3), TypeError),
    ]
    for case, err in cases:
        with pytest.raises(err) as want:
            case(k)
        with pytest.raises(err) as got:
            case(utils)
        assert str(got.value) == str(want.value)


def test_get_file_uses_the_cache_checks_hashes_and_fails_clearly_offline(tmp_path):
    import hashlib
    import tarfile

    sub = tmp_path / "datasets"
    sub.mkdir()
    (sub / "data.txt").write_text("hello")
    md5 = hashlib.md5(b"hello").hexdigest()
    sha = hashlib.sha256(b"hello").hexdigest()
    origin = "http://localhost:9/data.txt"
    for kw in ({}, {"file_hash": md5}, {"file_hash": sha}, {"md5_hash": md5}):
        path = utils.get_file("data.txt", origin, cache_dir=tmp_path, **kw)
        assert path == str(sub / "data.txt")
    with pytest.raises(Exception, match="URL fetch failure on"):  # noqa: B017
        utils.get_file("data.txt", origin, cache_dir=tmp_path, file_hash="0" * 32)
    assert not (sub / "data.txt").exists()  # the stale copy is not kept
    with pytest.raises(Exception, match="URL fetch failure"):  # noqa: B017
        utils.get_file(origin=origin, cache_dir=tmp_path)
    with tarfile.open(sub / "pack.tar.gz", "w:gz") as tar:
        (tmp_path / "inner.txt").write_text("x")
        tar.add(tmp_path / "inner.txt", arcname="inner.txt")
    out = utils.get_file("pack.tar.gz", origin, cache_dir=tmp_path, extract=True)
    assert out == str(sub / "pack_extracted")
    assert (sub / "pack_extracted" / "inner.txt").read_text() == "x"
    with pytest.raises(ValueError, match="origin"):
        utils.get_file("data.txt")
    with pytest.raises(NotImplementedError, match="pydot"):
        utils.plot_model(None)


@pytest.fixture
def class_folders(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(0)
    for c, cls in enumerate(["cat", "dog"]):
        (tmp_path / cls / "sub").mkdir(parents=True)
        for i in range(3):
            size = (6 + i, 5) if c else (5, 5)
            pixels = rng.integers(0, 255, (size[1], size[0], 3)).astype("uint8")
            Image.fromarray(pixels).save(tmp_path / cls / f"{i}.png")
            (tmp_path / cls / f"{i}.txt").write_text(f"{cls} text {i}")
        (tmp_path / cls / "sub" / "x.txt").write_text("nested")
        (tmp_path / cls / "notes.md").write_text("ignored")
    return tmp_path


def _all(ds):
    return [tuple(np.asarray(p) for p in el) for el in ds]


@pytest.mark.parametrize(
    "kwargs",
    [dict(), dict(label_mode="categorical", color_mode="grayscale", batch_size=4),
     dict(label_mode="binary", image_size=(4, 3), interpolation="nearest"),
     dict(validation_split=0.34, subset="validation", seed=1),
     dict(class_names=["dog", "cat"], color_mode="rgba")],
)  # fmt: skip
def test_image_dataset_from_directory_matches_keras(kwargs, class_folders, tf):
    kw = dict(image_size=(5, 5), shuffle=False, verbose=False) | kwargs
    want = tf.keras.utils.image_dataset_from_directory(class_folders, **kw)
    got = utils.image_dataset_from_directory(class_folders, **kw)
    assert got.class_names == want.class_names
    for g, w in zip(_all(got), _all(want), strict=True):
        for a, b in zip(g, w, strict=True):
            assert a.shape == b.shape and a.dtype == b.dtype
            # Pillow's RGB->L conversion can differ by 1 from TF's decoder
            tol = 1.01 if kw.get("color_mode") == "grayscale" else 1e-3
            np.testing.assert_allclose(a, b, atol=tol)


@pytest.mark.parametrize(
    "kwargs",
    [dict(), dict(max_length=4, batch_size=2, label_mode="categorical"),
     dict(validation_split=0.5, subset="training", seed=3, shuffle=True),
     dict(labels=None)],
)  # fmt: skip
def test_text_dataset_from_directory_matches_keras(kwargs, class_folders, tf):
    kw = dict(shuffle=False, verbose=False) | kwargs
    want = tf.keras.utils.text_dataset_from_directory(class_folders, **kw)
    got = utils.text_dataset_from_directory(class_folders, **kw)
    if kw.get("shuffle"):  # Keras's buffer shuffle: compare the contents
        g = sorted(
            zip(
                *(np.concatenate(c).tolist() for c in zip(*_all(got), strict=True)),
                strict=True,
            )
        )  # noqa: E501
        w = sorted(
            zip(
                *(np.concatenate(c).tolist() for c in zip(*_all(want), strict=True)),
                strict=True,
            )
        )  # noqa: E501
        assert g == w
        return
    for g, w in zip(_all(got), _all(want), strict=True):
        for a, b in zip(g, w, strict=True):
            assert a.tolist() == b.tolist()


@pytest.mark.parametrize(
    "kwargs",
    [dict(validation_split=0.2), dict(validation_split=0.2, subset="training"),
     dict(label_mode="nope"), dict(class_names=["cow"]), dict(labels=[0, 1])],
)  # fmt: skip
def test_directory_dataset_errors_match_keras(kwargs, class_folders, tf):
    kw = dict(verbose=False) | kwargs
    with pytest.raises(ValueError) as want:
        tf.keras.utils.text_dataset_from_directory(class_folders, **kw)
    with pytest.raises(ValueError) as got:
        utils.text_dataset_from_directory(class_folders, **kw)
    assert str(got.value)[:40] == str(want.value)[:40]


def test_interactive_logging_switch_as_keras(tf, capsys, caplog):
    k = tf.keras.utils
    for m in (k, utils):
        assert m.is_interactive_logging_enabled()
        m.disable_interactive_logging()
        assert not m.is_interactive_logging_enabled()
    try:
        bar = utils.Progbar(2, interval=0)
        bar.update(1, [("loss", 1.0)])
        with caplog.at_level("INFO", logger="jaxtape"):  # logged, as Keras
            bar.update(2, [("loss", 3.0)])
        assert capsys.readouterr().out == ""
        assert caplog.records[-1].getMessage().startswith("2/2 - ")
    finally:
        for m in (k, utils):
            m.enable_interactive_logging()
    assert utils.is_interactive_logging_enabled()


def test_py_dataset_as_validation_data_and_for_predict():
    data = _make_py_dataset(utils.PyDataset)
    model = jaxtape.keras.Sequential(
        [jaxtape.keras.Input((2,)), jaxtape.keras.layers.Dense(1)]
    )
    model.compile("sgd", "mse")
    hist = model.fit(data, validation_data=data, epochs=1, verbose=0)
    np.testing.assert_allclose(
        hist.history["val_loss"][0], model.evaluate(data, verbose=0), rtol=1e-6
    )
    np.testing.assert_allclose(
        model.predict(data, verbose=0), model.predict(data.x, verbose=0), rtol=1e-6
    )


def test_get_file_downloads_atomically(tmp_path):
    # file:// origins work offline; a failed or corrupt download leaves nothing
    # under the target's name (and no temporary files), a good one lands whole.
    import hashlib

    source = tmp_path / "source.bin"
    source.write_bytes(b"payload" * 100)
    good = hashlib.sha256(source.read_bytes()).hexdigest()
    cache = tmp_path / "cache"
    cache.mkdir()  # (Keras falls back to /tmp/.keras for an unwritable one)
    get_file = jaxtape.keras.utils.get_file
    path = get_file("a.bin", source.as_uri(), file_hash=good, cache_dir=str(cache))
    assert open(path, "rb").read() == source.read_bytes()
    with pytest.raises(ValueError, match="corrupted"):
        get_file("b.bin", source.as_uri(), file_hash="0" * 64, cache_dir=str(cache))
    with pytest.raises(Exception, match="URL fetch failure"):
        get_file("c.bin", (tmp_path / "missing").as_uri(), cache_dir=str(cache))
    assert sorted(p.name for p in (cache / "datasets").iterdir()) == ["a.bin"]
