"""Keras's preprocessing layers against tf.keras: deterministic layers give
tf.keras's outputs; random ones are tf.keras's transforms when their range
is one value, reproducible from a seed, fresh on every compiled call and
the identity at inference; they work inside `jaxtape.function` and
`Dataset.map`."""

import numpy as np
import pytest

import jaxtape as jt

L = jt.keras.layers
RNG = np.random.default_rng(0)
IMAGES = RNG.uniform(0, 255, (2, 6, 7, 3)).astype(np.float32)
FEATURES = RNG.normal(3.0, 2.0, (20, 4)).astype(np.float32)


def _same(tf, name, kwargs, x, training=None, rtol=1e-5, atol=1e-4, **call):
    theirs = getattr(tf.keras.layers, name)(**kwargs)
    ours = getattr(L, name)(**kwargs)
    if training is not None:
        call["training"] = training
    a, b = ours(x, **call), theirs(x, **call)
    assert a.dtype.name == b.dtype.name
    np.testing.assert_allclose(a.numpy(), np.asarray(b), rtol=rtol, atol=atol)
    return ours


DETERMINISTIC = [
    ("Rescaling", {"scale": 1 / 255.0, "offset": -0.5}, IMAGES),
    ("Rescaling", {"scale": [1.0, 2.0, 3.0]}, IMAGES),
    (
        "Normalization",
        {"mean": [1.0, 2.0, 3.0, 4.0], "variance": [1, 4, 9, 0]},
        FEATURES,
    ),
    ("Normalization", {"axis": None, "mean": 2.0, "variance": 4.0}, FEATURES),
    (
        "Normalization",
        {"mean": [1.0, 2.0, 3.0, 4.0], "variance": [1, 4, 9, 16], "invert": True},
        FEATURES,
    ),
    ("Resizing", {"height": 4, "width": 5}, IMAGES),
    ("Resizing", {"height": 9, "width": 11}, IMAGES),
    ("Resizing", {"height": 3, "width": 9, "interpolation": "nearest"}, IMAGES),
    ("Resizing", {"height": 9, "width": 4, "interpolation": "bicubic"}, IMAGES),
    ("Resizing", {"height": 4, "width": 4, "crop_to_aspect_ratio": True}, IMAGES),
    ("Resizing", {"height": 4, "width": 8, "pad_to_aspect_ratio": True}, IMAGES),
    ("Resizing", {"height": 4, "width": 5}, IMAGES[0]),
    ("CenterCrop", {"height": 4, "width": 3}, IMAGES),
    ("CenterCrop", {"height": 8, "width": 3}, IMAGES),
    ("CenterCrop", {"height": 2, "width": 2}, IMAGES[0]),
    ("CategoryEncoding", {"num_tokens": 5}, np.array([[0, 1, 1], [4, 3, 0]])),
    ("CategoryEncoding", {"num_tokens": 5}, np.array([0, 1, 3])),
    (
        "CategoryEncoding",
        {"num_tokens": 5, "output_mode": "count"},
        np.array([[0, 1, 1]]),
    ),
    (
        "CategoryEncoding",
        {"num_tokens": 4, "output_mode": "one_hot"},
        np.array([0, 3, 2]),
    ),
    (
        "CategoryEncoding",
        {"num_tokens": 4, "output_mode": "one_hot"},
        np.array([[0], [3], [2]]),
    ),
    ("Discretization", {"bin_boundaries": [-1.0, 0.0, 1.5]}, FEATURES - 3.0),
    (
        "Discretization",
        {"bin_boundaries": [0.0, 2.0, 4.0], "output_mode": "multi_hot"},
        FEATURES[:3],
    ),
    (
        "Discretization",
        {"bin_boundaries": [0.0, 2.0, 4.0], "output_mode": "one_hot"},
        FEATURES[:3, 0],
    ),
]


@pytest.mark.parametrize(
    "name,kwargs,x",
    DETERMINISTIC,
    ids=[f"{d[0]}{i}" for i, d in enumerate(DETERMINISTIC)],
)
def test_deterministic_layer_matches_tf_keras(tf, name, kwargs, x):
    # Bicubic: JAX's and TF's kernels differ slightly near the borders (3e-4
    # of the value range here).
    _same(tf, name, kwargs, x, atol=0.1 if "bicubic" in str(kwargs) else 1e-4)


def test_category_encoding_count_weights_and_out_of_range_values(tf):
    x = np.array([[0, 1, 1, 3]])
    w = np.array([[0.5, 1.0, 2.0, 4.0]], np.float32)
    _same(tf, "CategoryEncoding", {"num_tokens": 4, "output_mode": "count"}, x,
          count_weights=w)  # fmt: skip
    # Keras 3.15 on TF drops values >= num_tokens and refuses negative ones.
    for mode in ("multi_hot", "count", "one_hot"):
        _same(tf, "CategoryEncoding", {"num_tokens": 3, "output_mode": mode},
              np.array([[0, 3, 1]]))  # fmt: skip
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
        tf.keras.layers.CategoryEncoding(3)(np.array([[0, -1]]))
    with pytest.raises(jt.errors.InvalidArgumentError, match="non-negative"):
        L.CategoryEncoding(3)(np.array([[0, -1]]))


def test_normalization_adapts_to_arrays_datasets_and_batches_as_tf(tf):
    theirs = tf.keras.layers.Normalization()
    theirs.adapt(FEATURES)
    for data in (
        FEATURES,
        jt.constant(FEATURES),
        jt.data.Dataset.from_tensor_slices(FEATURES).batch(7),
        [FEATURES[:5], FEATURES[5:]],
    ):
        ours = L.Normalization()
        ours.adapt(data)
        assert [v.name for v in ours.weights] == [v.name for v in theirs.weights]
        assert [v.dtype.name for v in ours.weights] == [v.dtype for v in theirs.weights]
        for a, b in zip(ours.get_weights()[:2], theirs.get_weights()[:2]):
            np.testing.assert_allclose(a, b, rtol=1e-5)
        np.testing.assert_allclose(
            ours(FEATURES).numpy(), np.asarray(theirs(FEATURES)), rtol=1e-4, atol=1e-5
        )
    images = L.Normalization(axis=(1, 2))
    images.adapt(jt.data.Dataset.from_tensor_slices(IMAGES).batch(1))
    tf_images = tf.keras.layers.Normalization(axis=(1, 2))
    tf_images.adapt(IMAGES)
    np.testing.assert_allclose(
        images(IMAGES).numpy(), np.asarray(tf_images(IMAGES)), rtol=1e-4, atol=1e-4
    )


def test_normalization_weights_file_from_tf_keras(tf, tmp_path):
    theirs = tf.keras.Sequential(
        [tf.keras.Input((4,)), tf.keras.layers.Normalization()]
    )
    theirs.layers[0].adapt(FEATURES)
    theirs.save_weights(tmp_path / "n.weights.h5")
    ours = jt.keras.Sequential([jt.keras.Input((4,)), L.Normalization()])
    ours.load_weights(tmp_path / "n.weights.h5")
    np.testing.assert_allclose(ours(FEATURES).numpy(), np.asarray(theirs(FEATURES)),
                               rtol=1e-5, atol=1e-5)  # fmt: skip


def test_discretization_adapt_finds_quantiles(tf):
    data = RNG.normal(size=(1000,)).astype(np.float32)
    ours = L.Discretization(num_bins=4)
    ours.adapt(data)
    theirs = tf.keras.layers.Discretization(num_bins=4)
    theirs.adapt(data)
    # tf.keras's approximate quantile summary, reproduced exactly
    assert ours.bin_boundaries == theirs.bin_boundaries
    np.testing.assert_array_equal(ours(data).numpy(), np.asarray(theirs(data)))
    with pytest.raises(ValueError, match="num_bins"):
        L.Discretization(bin_boundaries=[0.0]).adapt(data)


# Random layers with a one-value range are deterministic: tf.keras's transform.
PINNED = [
    ("RandomRotation", {"factor": (0.1, 0.1)}),
    (
        "RandomRotation",
        {"factor": (-0.3, -0.3), "fill_mode": "constant", "fill_value": 7.0},
    ),
    (
        "RandomRotation",
        {"factor": (0.2, 0.2), "fill_mode": "wrap", "interpolation": "nearest"},
    ),
    ("RandomZoom", {"height_factor": (0.4, 0.4)}),
    (
        "RandomZoom",
        {
            "height_factor": (-0.3, -0.3),
            "width_factor": (0.2, 0.2),
            "fill_mode": "nearest",
        },
    ),  # fmt: skip
    ("RandomTranslation", {"height_factor": (0.2, 0.2), "width_factor": (-0.3, -0.3)}),
    (
        "RandomTranslation",
        {
            "height_factor": (0.2, 0.2),
            "width_factor": (0.1, 0.1),
            "fill_mode": "reflect",
        },
    ),  # fmt: skip
    ("RandomBrightness", {"factor": (0.1, 0.1)}),
    ("RandomContrast", {"factor": (-0.5, 0.5)}),
    ("RandomContrast", {"factor": (-0.2, 0.2), "value_range": (0, 1)}),
]


@pytest.mark.parametrize(
    "name,kwargs", PINNED, ids=[f"{p[0]}{i}" for i, p in enumerate(PINNED)]
)
def test_pinned_random_layer_is_tf_keras_transform(tf, name, kwargs):
    _same(tf, name, kwargs, IMAGES, training=True, rtol=1e-4, atol=2e-3)
    _same(tf, name, kwargs, IMAGES[0], training=True, rtol=1e-4, atol=2e-3)
    _same(tf, name, kwargs, IMAGES, training=False)


RANDOM = [
    lambda s: L.RandomFlip(seed=s),
    lambda s: L.RandomFlip("horizontal", seed=s),
    lambda s: L.RandomRotation(0.2, seed=s),
    lambda s: L.RandomZoom(0.3, seed=s),
    lambda s: L.RandomTranslation(0.2, 0.3, seed=s),
    lambda s: L.RandomCrop(2, 3, seed=s),
    lambda s: L.RandomContrast(0.5, seed=s),
    lambda s: L.RandomBrightness(0.3, seed=s),
]


@pytest.mark.parametrize("make", RANDOM, ids=[str(i) for i in range(len(RANDOM))])
def test_random_layer_is_seeded_fresh_and_identity_at_inference(make):
    x = np.tile(IMAGES, (4, 1, 1, 1))
    a, b = make(3), make(3)
    first = [a(x, training=True).numpy() for _ in range(2)]
    np.testing.assert_array_equal(
        first, [b(x, training=True).numpy() for _ in range(2)]
    )
    assert not np.array_equal(first[0], first[1])
    step = jt.function(lambda x: a(x, training=True))
    assert not np.array_equal(step(x).numpy(), step(x).numpy())
    np.testing.assert_array_equal(a(x, training=False).numpy(), x)
    # Keras 3: called alone a random layer augments; `predict` does not.
    assert len({a(x).numpy().tobytes() for _ in range(3)}) > 1
    model = jt.keras.Sequential([make(3)])
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)


def test_random_flip_flips_half_the_images_both_ways():
    x = RNG.uniform(size=(400, 2, 2, 1)).astype(np.float32)
    out = L.RandomFlip(seed=1)(x, training=True).numpy()
    flipped = np.all(out == x[:, ::-1, ::-1], axis=(1, 2, 3))
    kept = np.all(out == x, axis=(1, 2, 3))
    assert np.all(flipped | kept)
    assert abs(flipped.mean() - 0.5) < 5 * (0.25 / flipped.size) ** 0.5  # 5 sigma


def test_random_ranges_follow_keras_factors():
    flat = np.full((500, 2, 2, 1), 100.0, np.float32)
    delta = (
        L.RandomBrightness(0.2, seed=0)(flat, training=True).numpy()[:, 0, 0, 0] - 100
    )
    assert -0.2 * 255 <= delta.min() < -0.15 * 255 and 0.15 * 255 < delta.max() <= 51
    # Keras 3 reads RandomContrast(0.5) as factors in [1, 1.5].
    x = np.tile(
        np.array([100.0, 150.0], np.float32).reshape(1, 2, 1, 1), (500, 1, 1, 1)
    )
    out = L.RandomContrast(0.5, seed=0)(x, training=True).numpy()
    factor = (out[:, 1, 0, 0] - out[:, 0, 0, 0]) / 50.0
    assert 1.0 <= factor.min() < 1.05 and 1.45 < factor.max() <= 1.5


def test_random_crop_takes_a_window_and_is_identity_at_inference(tf):
    x = np.arange(2 * 6 * 7 * 1, dtype=np.float32).reshape(2, 6, 7, 1)
    out = L.RandomCrop(3, 4, seed=0)(x, training=True).numpy()
    top, left = np.argwhere(x[0, :, :, 0] == out[0, 0, 0, 0])[0]
    np.testing.assert_array_equal(out, x[:, top : top + 3, left : left + 4])
    _same(tf, "RandomCrop", {"height": 3, "width": 4}, x, training=False)
    _same(tf, "RandomCrop", {"height": 8, "width": 9}, x, training=True)


def test_preprocessing_in_dataset_map_and_a_compiled_model():
    norm = L.Normalization(axis=None, mean=127.5, variance=127.5**2)
    flip = L.RandomFlip("horizontal", seed=0)
    ds = jt.data.Dataset.from_tensor_slices(IMAGES).map(
        lambda im: flip(norm(im), training=True)
    )
    out = np.stack([e.numpy() for e in ds])
    scaled = (IMAGES - 127.5) / 127.5
    for o, s in zip(out, scaled):
        assert np.allclose(o, s, atol=1e-6) or np.allclose(o, s[:, ::-1], atol=1e-6)
    model = jt.keras.Sequential([
        L.Rescaling(1 / 255.0), L.RandomRotation(0.1, seed=1), L.Resizing(4, 4),
        L.Flatten(), L.Dense(2),
    ])  # fmt: skip
    model.compile(optimizer="adam", loss="mse")
    model.fit(IMAGES, np.zeros((2, 2), np.float32), epochs=2, verbose=0)
    assert model.predict(IMAGES, verbose=0).shape == (2, 2)


def test_affine_transform_op_matches_keras_ops(tf):
    """The op behind rotation/zoom/translation on arbitrary transforms, every
    fill mode, against Keras's `ops.image.affine_transform` (TF backend)."""
    from jaxtape._src.keras.layers.preprocessing.image import _affine

    t = np.array(
        [
            [0.9, -0.3, 1.2, 0.2, 1.1, -0.7, 0, 0],
            [1.2, 0.1, -2.0, -0.1, 0.8, 1.5, 0, 0],
        ],
        np.float32,
    )
    for mode in ("constant", "nearest", "wrap", "reflect"):
        for interp in ("nearest", "bilinear"):
            want = tf.keras.ops.image.affine_transform(
                IMAGES, t, interpolation=interp, fill_mode=mode, fill_value=3.0
            )
            got = _affine(IMAGES, t, interp, mode, 3.0, False)
            np.testing.assert_allclose(got.numpy(), np.asarray(want), atol=2e-3)


STRINGS = np.array([["b", "a", "c"], ["a", "zz", "q"]])
CORPUS = np.array(["b", "a", "c", "a", "b", "d", "z", "z"])
LOOKUPS = [
    ("Hashing", {"num_bins": 5}, STRINGS, None),
    ("Hashing", {"num_bins": 7, "mask_value": "a"}, STRINGS, None),
    ("Hashing", {"num_bins": 6}, np.array([1, 2, 3, 1000, -5]), None),
    ("Hashing", {"num_bins": 3, "salt": [133, 137]}, STRINGS, None),  # SipHash
    ("Hashing", {"num_bins": 5, "salt": 7, "mask_value": "a"}, STRINGS, None),
    ("Hashing", {"num_bins": 4, "salt": [1, 2]}, np.array([1, 22, 333, -4]), None),
    (
        "Hashing",
        {"num_bins": 6, "output_mode": "multi_hot"},
        np.array([[1, 2], [3, 9]]),
        None,
    ),
    ("StringLookup", {}, STRINGS, CORPUS),
    ("StringLookup", {"vocabulary": ["a", "b"], "num_oov_indices": 3}, STRINGS, None),
    (
        "StringLookup",
        {"vocabulary": ["a", "b"], "mask_token": ""},
        np.array(["a", "", "x"]),
        None,
    ),
    (
        "StringLookup",
        {"vocabulary": ["a", "b"], "output_mode": "multi_hot"},
        STRINGS,
        None,
    ),
    ("StringLookup", {"vocabulary": ["a", "b"], "output_mode": "count"}, STRINGS, None),
    (
        "StringLookup",
        {"vocabulary": ["a", "b"], "invert": True},
        np.array([0, 1, 2]),
        None,
    ),
    (
        "IntegerLookup",
        {"vocabulary": [5, 7], "mask_token": 0},
        np.array([5, 0, 9, 7]),
        None,
    ),
    (
        "IntegerLookup",
        {"vocabulary": [5, 7], "num_oov_indices": 2},
        np.array([5, 1, 9, 3]),
        None,
    ),
    (
        "IntegerLookup",
        {"max_tokens": 4},
        np.array([5, 1, 9, 7, 3, 4]),
        np.array([3, 3, 4, 4, 4, 9, 9, 1]),
    ),
]


@pytest.mark.parametrize(
    "name,kwargs,x,corpus", LOOKUPS, ids=[f"{e[0]}{i}" for i, e in enumerate(LOOKUPS)]
)
def test_hashing_and_lookups_match_tf_keras(tf, name, kwargs, x, corpus):
    theirs = getattr(tf.keras.layers, name)(**kwargs)
    ours = getattr(L, name)(**kwargs)
    if corpus is not None:
        theirs.adapt(corpus)
        ours.adapt(corpus)
    want, got = np.asarray(theirs(x)), ours(x)
    if want.dtype.kind in "SO":  # invert: a string tensor of bytes, as TF's
        assert got.dtype.name == "string"
        np.testing.assert_array_equal(got.numpy(), want)
        return
    assert got.dtype.name == want.dtype.name
    np.testing.assert_array_equal(got.numpy(), want)
    if hasattr(theirs, "get_vocabulary"):
        assert ours.get_vocabulary() == [
            v.decode() if isinstance(v, bytes) else type(ours.oov_token)(v)
            for v in theirs.get_vocabulary()
        ]


def test_lookup_layers_are_host_side():
    lookup = L.StringLookup(vocabulary=["a", "b"])
    ds = jt.data.Dataset.from_tensor_slices(np.array(["a", "x", "b", "b"]))
    batches = [e.numpy().tolist() for e in ds.batch(2).map(lookup)]
    assert batches == [[1, 0], [2, 2]]
    ints = L.IntegerLookup(vocabulary=[3, 4])
    with pytest.raises(TypeError, match="input pipeline"):
        jt.function(lambda x: ints(x))(np.array([3, 4]))


def test_farmhash_fingerprint64_is_tf_to_hash_bucket_fast(tf):
    from jaxtape._src.keras.layers.preprocessing.farmhash import fingerprint64

    rng = np.random.default_rng(5)
    lengths = [*range(0, 70), 96, 127, 128, 129, 200, 1000]
    data = [rng.integers(0, 256, n).astype(np.uint8).tobytes() for n in lengths]
    want = tf.strings.to_hash_bucket_fast(tf.constant(data), 2**62).numpy()
    assert [fingerprint64(s) % 2**62 for s in data] == want.tolist()


TEXT = np.array(
    ["The cat sat.", "the dog, the CAT!", "a bird sat on the mat", "Dogs & cats"]
)
TEXT_VECTORIZATION = [
    {},
    {"max_tokens": 6},
    {"output_sequence_length": 4},
    {"output_mode": "multi_hot"},
    {"output_mode": "count", "max_tokens": 5},
    {"ngrams": 2},
    {"standardize": "lower", "split": "character", "output_sequence_length": 6},
    {"standardize": None},
]


@pytest.mark.parametrize(
    "kwargs", TEXT_VECTORIZATION, ids=[str(k) for k in TEXT_VECTORIZATION]
)
def test_text_vectorization_matches_tf_keras(tf, kwargs):
    x = np.array(["the cat, the bird", "unknown words here", "MAT"])
    theirs = tf.keras.layers.TextVectorization(**kwargs)
    ours = L.TextVectorization(**kwargs)
    theirs.adapt(TEXT)
    ours.adapt(jt.data.Dataset.from_tensor_slices(TEXT).batch(3))
    vocab = [
        v.decode() if isinstance(v, bytes) else str(v) for v in theirs.get_vocabulary()
    ]
    assert ours.get_vocabulary() == vocab
    want, got = np.asarray(theirs(x)), ours(x)
    assert got.dtype.name == want.dtype.name
    np.testing.assert_array_equal(got.numpy(), want)


CONFIGS = [
    lambda: L.Normalization(mean=[1.0, 2.0], variance=[1.0, 4.0]),
    lambda: L.Normalization(axis=None),
    lambda: L.Rescaling(0.5, 1.0),
    lambda: L.Resizing(3, 4, interpolation="nearest"),
    lambda: L.CenterCrop(2, 2),
    lambda: L.RandomFlip("vertical", seed=1),
    lambda: L.RandomRotation(0.1, fill_mode="constant"),
    lambda: L.RandomZoom(0.1, 0.2),
    lambda: L.RandomTranslation(0.1, 0.1),
    lambda: L.RandomCrop(3, 3),
    lambda: L.RandomContrast(0.2),
    lambda: L.RandomBrightness(0.1, value_range=(0, 1)),
    lambda: L.CategoryEncoding(4, "count"),
    lambda: L.Discretization([0.0, 1.0]),
    lambda: L.Hashing(4, mask_value="a"),
    lambda: L.Hashing(4, salt=[3, 4]),
    lambda: L.StringLookup(vocabulary=["a", "b"]),
    lambda: L.IntegerLookup(vocabulary=[3, 4], mask_token=0),
    lambda: L.TextVectorization(max_tokens=5, vocabulary=["x", "y"]),
]


@pytest.mark.parametrize("make", CONFIGS, ids=[str(i) for i in range(len(CONFIGS))])
def test_preprocessing_config_round_trip(make):
    layer = make()
    clone = type(layer).from_config(layer.get_config())
    assert clone.get_config() == {**layer.get_config(), "name": clone.name}


@pytest.mark.parametrize(
    "make, data",
    [
        (lambda m: m.keras.layers.StringLookup(vocabulary=["a"]), ["z"]),
        (lambda m: m.keras.layers.IntegerLookup(vocabulary=[3]), [1]),
        (lambda m: m.keras.layers.TextVectorization(vocabulary=["a"]), ["z y"]),
    ],
    ids=["StringLookup", "IntegerLookup", "TextVectorization"],
)
def test_adapt_after_a_constructor_vocabulary_raises_as_keras(tf, make, data):
    # Keras keeps a vocabulary given to the constructor: adapt raises
    # ValueError instead of replacing it; one set by set_vocabulary() does not.
    for m in (tf, jt):
        with pytest.raises(ValueError, match="Cannot adapt layer"):
            make(m).adapt(data)
    vocabularies = []
    for m in (tf, jt):
        layer = m.keras.layers.StringLookup()
        layer.set_vocabulary(["a"])
        layer.adapt(["b", "b"])
        vocabularies.append([str(v) for v in layer.get_vocabulary()])
    assert vocabularies[0] == vocabularies[1] == ["[UNK]", "b"]


@pytest.mark.parametrize(
    "interpolation", ["bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5"]
)
@pytest.mark.parametrize("aspect", [None, "crop", "pad"])
def test_resizing_uses_tf_kernels(tf, interpolation, aspect):
    x = np.random.default_rng(3).normal(size=(2, 7, 8, 3)).astype("float32")
    kwargs = {
        "crop": {"crop_to_aspect_ratio": True},
        "pad": {"pad_to_aspect_ratio": True},
    }
    kw = kwargs.get(aspect, {})
    want = tf.keras.layers.Resizing(5, 11, interpolation=interpolation, **kw)(x)
    got = jt.keras.layers.Resizing(5, 11, interpolation=interpolation, **kw)(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_text_tutorial_export_model_evaluates_and_predicts_raw_strings():
    """TF's text-classification tutorial: the trained model wrapped with its
    TextVectorization (a host layer) evaluates and predicts raw strings with
    the default compiled steps (jaxtape runs a model holding host layers
    eagerly), equal to applying the parts by hand."""
    layers = jt.keras.layers
    texts = np.array(["the movie was great", "terrible film", "great acting", "bad"])
    labels = np.array([1, 0, 1, 0], np.float32)
    vectorize = layers.TextVectorization(max_tokens=20, output_sequence_length=5)
    vectorize.adapt(texts)
    model = jt.keras.Sequential(
        [layers.Embedding(21, 4), layers.GlobalAveragePooling1D(), layers.Dense(1)]
    )
    export_model = jt.keras.Sequential([vectorize, model, layers.Activation("sigmoid")])
    export_model.compile(
        loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"]
    )
    ds = jt.data.Dataset.from_tensor_slices((texts, labels)).batch(2)
    result = export_model.evaluate(ds, return_dict=True, verbose=0)
    by_hand = 1 / (1 + np.exp(-model(vectorize(texts)).numpy()))
    bce = -np.mean(
        labels[:, None] * np.log(by_hand) + (1 - labels[:, None]) * np.log(1 - by_hand)
    )
    np.testing.assert_allclose(result["loss"], bce, rtol=1e-5)
    np.testing.assert_allclose(
        export_model.predict(texts[:3], verbose=0), by_hand[:3], rtol=1e-6
    )
