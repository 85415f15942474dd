"""`jaxtape.keras.preprocessing` (Keras 3's legacy image/sequence/text) against
tf.keras's: the same inputs and the same seeds (NumPy's and Python's global
generators, which both draw from) through both, results compared."""

import random

import numpy as np
import pytest

import jaxtape

IMG = np.random.default_rng(0).uniform(0, 255, size=(7, 9, 3)).astype("float32")
BATCH = np.random.default_rng(1).uniform(0, 1, size=(6, 8, 8, 3)).astype("float32")
LABELS = np.array([0, 1, 0, 1, 0, 1])
TEXTS = [
    "The cat sat on the mat.",
    "The dog ate my homework!",
    "the cat, the dog; and THE bird",
]


def _tokenizer(P, **kwargs):
    t = P.text.Tokenizer(**kwargs)
    t.fit_on_texts(TEXTS)
    return t


def _tokenizer_state(t):
    return [
        dict(t.word_index),
        dict(t.word_counts),
        dict(t.word_docs),
        dict(t.index_docs),
        t.document_count,
        t.texts_to_sequences(TEXTS + ["unknown words here cat"]),
        t.sequences_to_texts([[1, 2, 3, 40], [5, 1]]),
    ]


def _generator_batches(P, n=3, **kwargs):
    gen = P.image.ImageDataGenerator(**kwargs)
    it = gen.flow(BATCH, LABELS, batch_size=4, seed=3, shuffle=True)
    return [it[0], it[1], next(it), len(it)]


def _fitted(P, **kwargs):
    gen = P.image.ImageDataGenerator(**kwargs)
    gen.fit(BATCH * 255, augment=True, rounds=2, seed=5)
    return [
        gen.mean,
        gen.std,
        gen.zca_whitening_matrix,
        gen.standardize(BATCH[0] * 255),
    ]


def _timeseries(P, **kwargs):
    data = np.arange(50).reshape(25, 2)
    g = P.sequence.TimeseriesGenerator(data, np.arange(25), length=5, **kwargs)
    return [len(g), g[0], g[len(g) - 1]]


# name -> fn(P) where P is the `keras.preprocessing` module.
ROWS = {
    # -- sequence
    "pad_sequences": lambda P: P.sequence.pad_sequences([[1, 2, 3], [4], []]),
    "pad_sequences_options": lambda P: P.sequence.pad_sequences(
        [[1, 2, 3], [4, 5]],
        maxlen=2,
        dtype="float32",
        padding="post",
        truncating="post",
        value=-1.5,
    ),
    "pad_sequences_strings": lambda P: P.sequence.pad_sequences(
        [["a", "b"], ["c"]], dtype=object, value="<pad>"
    ),
    "make_sampling_table": lambda P: P.sequence.make_sampling_table(20, 1e-3),
    "skipgrams": lambda P: P.sequence.skipgrams([1, 2, 0, 3, 4, 2], 6, window_size=2),
    "skipgrams_categorical": lambda P: P.sequence.skipgrams(
        [1, 2, 3, 4],
        5,
        negative_samples=0.5,
        categorical=True,
        seed=7,
        sampling_table=P.sequence.make_sampling_table(5, 0.5),
    ),
    "TimeseriesGenerator": lambda P: _timeseries(P, batch_size=4, stride=2),
    "TimeseriesGenerator_options": lambda P: _timeseries(
        P,
        sampling_rate=2,
        start_index=1,
        end_index=20,
        shuffle=True,
        reverse=True,
        batch_size=3,
    ),
    # -- text
    "text_to_word_sequence": lambda P: P.text.text_to_word_sequence(
        "Hello, World!  It's a-test", filters="!,", split=" "
    ),
    "hashing_trick_md5": lambda P: P.text.hashing_trick(TEXTS[0], 17, "md5"),
    "one_hot": lambda P: P.text.one_hot(TEXTS[1], 50),
    "Tokenizer": lambda P: _tokenizer_state(_tokenizer(P)),
    "Tokenizer_oov_num_words": lambda P: _tokenizer_state(
        _tokenizer(P, num_words=5, oov_token="<oov>")
    ),
    "Tokenizer_char_level": lambda P: _tokenizer_state(
        _tokenizer(P, char_level=True, lower=False)
    ),
    "Tokenizer_matrix": lambda P: [
        _tokenizer(P).texts_to_matrix(TEXTS, mode=m)
        for m in ("binary", "count", "freq", "tfidf")
    ],
    "Tokenizer_json_roundtrip": lambda P: _tokenizer_state(
        P.text.tokenizer_from_json(_tokenizer(P, oov_token="?").to_json())
    ),
    "Tokenizer_bad_kwarg": lambda P: P.text.Tokenizer(bogus=1),
    "Tokenizer_unfitted_matrix": lambda P: P.text.Tokenizer().texts_to_matrix(["a"]),
    # -- image transforms
    "apply_affine_transform": lambda P: P.image.apply_affine_transform(
        IMG,
        theta=20,
        tx=1.5,
        ty=-2,
        shear=10,
        zx=0.9,
        zy=1.2,
        row_axis=0,
        col_axis=1,
        channel_axis=2,
    ),
    "apply_affine_transform_fill": lambda P: P.image.apply_affine_transform(
        np.moveaxis(IMG, 2, 0), theta=45, fill_mode="constant", cval=7.0, order=0
    ),
    "apply_affine_transform_bad_axes": lambda P: P.image.apply_affine_transform(
        IMG, row_axis=0, col_axis=0
    ),
    "random_rotation": lambda P: P.image.random_rotation(IMG, 30, 0, 1, 2),
    "random_shift": lambda P: P.image.random_shift(IMG, 0.2, 0.3, 0, 1, 2, "reflect"),
    "random_shear": lambda P: P.image.random_shear(IMG, 15, 0, 1, 2, "wrap"),
    "random_zoom": lambda P: P.image.random_zoom(IMG, (0.7, 1.1), 0, 1, 2),
    "apply_channel_shift": lambda P: P.image.apply_channel_shift(IMG, 30.0, 2),
    "random_channel_shift": lambda P: P.image.random_channel_shift(IMG, 40.0, 2),
    "apply_brightness_shift": lambda P: P.image.apply_brightness_shift(IMG, 1.4),
    "random_brightness": lambda P: P.image.random_brightness(
        IMG * 2, (0.5, 1.5), False
    ),
    "smart_resize": lambda P: P.image.smart_resize(IMG, (4, 4)),
    "smart_resize_batch_first": lambda P: P.image.smart_resize(
        np.moveaxis(BATCH, 3, 1), (5, 3), "nearest", data_format="channels_first"
    ),
    "array_to_img_roundtrip": lambda P: P.image.img_to_array(P.image.array_to_img(IMG)),
    # -- ImageDataGenerator
    "ImageDataGenerator_flow": lambda P: _generator_batches(
        P,
        rotation_range=20,
        width_shift_range=0.1,
        height_shift_range=[-1, 2],
        shear_range=5,
        zoom_range=0.2,
        channel_shift_range=0.1,
        horizontal_flip=True,
        vertical_flip=True,
        fill_mode="nearest",
        rescale=2.0,
    ),
    "ImageDataGenerator_flow_samplewise": lambda P: _generator_batches(
        P,
        samplewise_center=True,
        samplewise_std_normalization=True,
        brightness_range=(0.8, 1.2),
    ),
    "ImageDataGenerator_channels_first": lambda P: P.image.ImageDataGenerator(
        rotation_range=15, zoom_range=[0.8, 1.0], data_format="channels_first"
    ).random_transform(np.moveaxis(IMG, 2, 0), seed=11),
    "ImageDataGenerator_get_random_transform": lambda P: P.image.ImageDataGenerator(
        rotation_range=10,
        width_shift_range=3,
        height_shift_range=0.5,
        shear_range=2,
        zoom_range=0.3,
        horizontal_flip=True,
        channel_shift_range=5,
        brightness_range=[0.5, 1.0],
    ).get_random_transform((9, 7, 3), seed=2),
    "ImageDataGenerator_fit": lambda P: _fitted(
        P,
        featurewise_center=True,
        featurewise_std_normalization=True,
        rotation_range=5,
    ),
    "ImageDataGenerator_fit_zca": lambda P: _fitted(P, zca_whitening=True),
    "ImageDataGenerator_subset": lambda P: [
        P.image.ImageDataGenerator(validation_split=0.5).flow(
            BATCH, LABELS, batch_size=2, shuffle=False, subset=s
        )[0]
        for s in ("training", "validation")
    ],
    "ImageDataGenerator_flow_misc": lambda P: P.image.ImageDataGenerator().flow(
        (BATCH, [LABELS * 2.0]),
        LABELS,
        sample_weight=LABELS + 1.0,
        shuffle=False,
        batch_size=3,
    )[1],
    "ImageDataGenerator_bad_zoom": lambda P: P.image.ImageDataGenerator(
        zoom_range=(1, 2, 3)
    ),
    "ImageDataGenerator_bad_split": lambda P: P.image.ImageDataGenerator(
        validation_split=2
    ),
}


def _run(fn, module):
    np.random.seed(123)
    random.seed(123)
    try:
        return fn(module)
    except (ValueError, TypeError) as e:
        return (type(e).__name__, str(e))


def _compare(got, want, path="result"):
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), path
        for k in want:
            _compare(got[k], want[k], f"{path}[{k!r}]")
    elif isinstance(want, (list, tuple)) and not isinstance(want, np.ndarray):
        assert type(got) is type(want) and len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{path}[{i}]")
    elif isinstance(want, np.ndarray) or hasattr(want, "numpy"):
        got, want = np.asarray(got), np.asarray(want)
        assert (got.dtype, got.shape) == (want.dtype, want.shape), path
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4, err_msg=path)
        else:
            np.testing.assert_array_equal(got, want, err_msg=path)
    else:
        assert got == want, path


@pytest.mark.filterwarnings("ignore:This ImageDataGenerator specifies")
@pytest.mark.parametrize("row", sorted(ROWS))
def test_matches_tf_keras_preprocessing(row, tf):
    want = _run(ROWS[row], tf.keras.preprocessing)
    got = _run(ROWS[row], jaxtape.keras.preprocessing)
    _compare(got, want)


@pytest.fixture
def image_dir(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(4)
    for cls, n in (("cats", 3), ("dogs", 4)):
        (tmp_path / cls).mkdir()
        for i in range(n):
            pixels = rng.integers(0, 255, size=(10 + i, 12, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(tmp_path / cls / f"img_{i}.png")
    (tmp_path / "dogs" / "notes.txt").write_text("not an image")
    return tmp_path


@pytest.mark.parametrize(
    "kwargs",
    [
        {"class_mode": "categorical"},
        {"class_mode": "binary", "color_mode": "grayscale", "subset": "training"},
        {"class_mode": "sparse", "keep_aspect_ratio": True, "subset": "validation"},
        {"class_mode": "input", "interpolation": "bilinear", "color_mode": "rgba"},
    ],
    ids=["categorical", "binary_gray_training", "sparse_aspect_validation", "input"],
)
def test_flow_from_directory_matches_tf(kwargs, image_dir, tf):
    def batches(P):
        gen = P.image.ImageDataGenerator(
            rotation_range=10, rescale=1 / 255, validation_split=0.3
        )
        it = gen.flow_from_directory(
            str(image_dir), target_size=(6, 5), batch_size=3, seed=1, **kwargs
        )
        return [it.class_indices, it.filenames, it.classes, it[0], next(it)]

    _compare(
        _run(batches, jaxtape.keras.preprocessing),
        _run(batches, tf.keras.preprocessing),
    )


def test_flow_feeds_model_fit():
    model = jaxtape.keras.Sequential(
        [jaxtape.keras.layers.Flatten(), jaxtape.keras.layers.Dense(1)]
    )
    model.compile("sgd", "mse")
    gen = jaxtape.keras.preprocessing.image.ImageDataGenerator(horizontal_flip=True)
    it = gen.flow(BATCH, LABELS.astype("float32"), batch_size=3, seed=0)
    history = model.fit(it, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])


def test_top_level_entries_are_keras_utils_functions():
    P, U = jaxtape.keras.preprocessing, jaxtape.keras.utils
    assert P.image_dataset_from_directory is U.image_dataset_from_directory
    assert P.text_dataset_from_directory is U.text_dataset_from_directory
    assert P.timeseries_dataset_from_array is U.timeseries_dataset_from_array
    assert P.sequence.pad_sequences is U.pad_sequences
    for name in ("load_img", "save_img", "img_to_array", "array_to_img"):
        assert getattr(P.image, name) is getattr(U, name)


def test_flow_from_dataframe_raises_not_implemented():
    gen = jaxtape.keras.preprocessing.image.ImageDataGenerator()
    with pytest.raises(NotImplementedError, match="flow_from_dataframe"):
        gen.flow_from_dataframe(None)


def test_timeseries_generator_config(tf):
    # Known difference: tf.keras's get_config/to_json raise AttributeError (its
    # PyDataset base has no get_config); jaxtape's return Keras's intended config.
    data = np.arange(8).reshape(4, 2)
    with pytest.raises(AttributeError):
        tf.keras.preprocessing.sequence.TimeseriesGenerator(data, data, 2).get_config()
    g = jaxtape.keras.preprocessing.sequence.TimeseriesGenerator(data, data, 2)
    config = g.get_config()
    assert config["data"] == "[[0, 1], [2, 3], [4, 5], [6, 7]]"
    assert (config["length"], config["start_index"], config["end_index"]) == (2, 2, 3)
    assert '"class_name": "TimeseriesGenerator"' in g.to_json()


def test_flow_save_to_dir_writes_the_batch_like_tf(tmp_path, tf):
    def saved(P, sub):
        out = tmp_path / sub
        out.mkdir()
        gen = P.image.ImageDataGenerator(rotation_range=10)
        gen.flow(
            BATCH,
            batch_size=4,
            shuffle=False,
            save_to_dir=str(out),
            save_prefix="aug",
            save_format="png",
        )[0]
        names = sorted(p.name for p in out.iterdir())
        return [n.split("_")[:2] for n in names], [n.rsplit(".", 1)[1] for n in names]

    assert saved(jaxtape.keras.preprocessing, "ours") == saved(
        tf.keras.preprocessing, "tf"
    )
