"""Keras 3's spectrogram layers and the image augmentation layers whose output
is fixed by their arguments (or in inference), against tf.keras: one parity
table (values, dtypes, shapes; some rows inside `jaxtape.function`),
gradients for STFTSpectrogram, and range/shape checks where the output is
random."""

import numpy as np
import pytest

import jaxtape as jt

L = jt.keras.layers
RNG = np.random.default_rng(0)
AUDIO = RNG.normal(size=(2, 64, 2)).astype(np.float32)
AUDIO_1D = RNG.normal(size=(2, 400)).astype(np.float32)
AUDIO_CF = np.ascontiguousarray(AUDIO.transpose(0, 2, 1))
IMAGES = RNG.uniform(0, 255, (2, 8, 8, 3)).astype(np.float32)
UNIT = (IMAGES / 255.0).astype(np.float32)


def _wrapped(a):
    """Angles compared modulo 2 pi (±0 imaginary parts flip atan2 by 2 pi)."""
    return np.angle(np.exp(1j * np.asarray(a, np.float64)))


# name, kwargs, input, call kwargs, compiled, post-process of both outputs
ROWS = [
    ("STFTSpectrogram", {"frame_length": 16, "frame_step": 8}, AUDIO, {}, False),
    (
        "STFTSpectrogram",
        {"mode": "magnitude", "frame_length": 16, "padding": "same"},
        AUDIO,
        {},
        True,
    ),
    (
        "STFTSpectrogram",
        {
            "mode": "psd",
            "frame_length": 15,
            "fft_length": 32,
            "window": "hamming",
            "periodic": True,
            "scaling": "spectrum",
        },
        AUDIO,
        {},
        False,
    ),
    (
        "STFTSpectrogram",
        {"mode": "stft", "frame_length": 8, "expand_dims": True},
        AUDIO,
        {},
        False,
    ),
    ("STFTSpectrogram", {"mode": "real", "frame_length": 8}, AUDIO, {}, False),
    (
        "STFTSpectrogram",
        {"mode": "imag", "frame_length": 8, "window": None},
        AUDIO,
        {},
        False,
    ),
    (
        "STFTSpectrogram",
        {"mode": "angle", "frame_length": 8, "scaling": None},
        AUDIO,
        {},
        False,
    ),
    (
        "MelSpectrogram",
        {
            "fft_length": 64,
            "sequence_stride": 16,
            "num_mel_bins": 10,
            "sampling_rate": 8000,
        },
        AUDIO_1D,
        {},
        True,
    ),
    (
        "MelSpectrogram",
        {
            "fft_length": 64,
            "sequence_length": 40,
            "sequence_stride": 20,
            "num_mel_bins": 8,
            "power_to_db": False,
            "mag_exp": 1.0,
            "window": "hamming",
            "max_freq": 3000.0,
        },
        AUDIO_1D,
        {},
        False,
    ),
    (
        "MelSpectrogram",
        {
            "fft_length": 32,
            "sequence_stride": 8,
            "num_mel_bins": 6,
            "top_db": 20.0,
            "ref_power": 2.0,
        },  # fmt: skip
        AUDIO_1D[0],
        {},
        False,
    ),
    ("RandomGrayscale", {"factor": 1.0}, IMAGES, {}, True),
    ("RandomGrayscale", {"factor": 0.0}, IMAGES[0], {}, False),
    ("RandomInvert", {"factor": (1.0, 1.0)}, IMAGES, {}, False),
    ("RandomInvert", {"value_range": (0, 1)}, UNIT, {"training": False}, False),
    ("Solarization", {}, IMAGES, {}, True),
    ("Solarization", {"value_range": (0, 1)}, UNIT, {}, False),
    ("Solarization", {"addition_factor": 0.5}, IMAGES, {"training": False}, False),
    ("AutoContrast", {}, IMAGES, {}, False),
    ("AutoContrast", {"value_range": (0, 1)}, UNIT, {"training": False}, True),
    ("Equalization", {}, IMAGES, {}, True),
    ("Equalization", {"value_range": (0, 1), "bins": 16}, UNIT[0], {}, False),
    ("Equalization", {}, IMAGES, {"training": False}, False),
    ("RandomPosterization", {"factor": (3, 3)}, IMAGES, {}, True),
    (
        "RandomPosterization",
        {"factor": (5, 5), "value_range": (0, 1)},
        UNIT,
        {},
        False,
    ),  # fmt: skip
    ("RandomColorDegeneration", {"factor": (0.3, 0.3)}, IMAGES, {}, False),
    (
        "RandomColorDegeneration",
        {"factor": (1.0, 1.0), "value_range": (0, 1)},
        UNIT,
        {},
        True,
    ),  # fmt: skip
    ("RandomSharpness", {"factor": (0.2, 0.2)}, IMAGES, {}, True),
    (
        "RandomSharpness",
        {"factor": (0.9, 0.9), "value_range": (0, 1)},
        UNIT[0],
        {},
        False,
    ),  # fmt: skip
    ("RandomHue", {"factor": (1.0, 1.0)}, IMAGES, {}, True),
    ("RandomHue", {"factor": 0.0, "value_range": (0, 1)}, UNIT, {}, False),
    ("RandomHue", {"factor": 0.5}, IMAGES, {"training": False}, False),
    ("RandomSaturation", {"factor": (0.5, 0.5)}, IMAGES, {}, False),
    (
        "RandomSaturation",
        {"factor": (0.8, 0.8), "value_range": (0, 1)},
        UNIT,
        {},
        True,
    ),  # fmt: skip
    ("RandomSaturation", {"factor": (0.0, 0.0)}, UNIT, {}, False),
    ("RandomHeight", {"factor": (0.5, 0.5)}, IMAGES, {}, True),
    (
        "RandomWidth",
        {"factor": (-0.25, -0.25), "interpolation": "nearest"},
        IMAGES[0],
        {},
        False,
    ),  # fmt: skip
    ("RandomWidth", {"factor": 0.3}, IMAGES, {"training": False}, False),
]


def _ids(rows):
    return [f"{r[0]}-{i}" for i, r in enumerate(rows)]


def _run_ours(name, kwargs, x, call, compiled):
    layer = getattr(L, name)(**kwargs)
    if compiled:
        fn = jt.function(lambda t: layer(t, **call))
        return fn(jt.constant(x))
    return layer(jt.constant(x), **call)


@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_layer_matches_tf_keras(row, tf):
    name, kwargs, x, call, compiled = row
    theirs = getattr(tf.keras.layers, name)(**kwargs)(x, **call)
    ours = _run_ours(name, kwargs, x, call, compiled)
    assert ours.dtype.name == theirs.dtype.name
    assert tuple(ours.shape) == tuple(theirs.shape)
    a, b = ours.numpy(), np.asarray(theirs)
    if kwargs.get("mode") == "angle":
        a, b = _wrapped(a - b), np.zeros_like(b)  # phases of tiny bins: 1e-4
    scale = max(1.0, float(np.abs(b).max())) * (5 if kwargs.get("mode") else 1)
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-5 * scale)


def test_stft_spectrogram_channels_first_is_channels_last_transposed(tf):
    kw = {"mode": "stft", "frame_length": 8, "expand_dims": True}
    theirs = np.asarray(tf.keras.layers.STFTSpectrogram(**kw)(AUDIO))
    ours = L.STFTSpectrogram(data_format="channels_first", **kw)(jt.constant(AUDIO_CF))
    np.testing.assert_allclose(
        ours.numpy().transpose(0, 2, 3, 1), theirs, rtol=1e-4, atol=1e-5
    )
    flat = L.STFTSpectrogram(data_format="channels_first", frame_length=8)
    assert tuple(flat(jt.constant(AUDIO_CF)).shape) == flat.compute_output_shape(
        AUDIO_CF.shape
    )


@pytest.mark.parametrize("mode", ["log", "psd", "stft"])
def test_stft_spectrogram_input_gradient_matches_tf(mode, tf):
    kw = {"mode": mode, "frame_length": 16, "frame_step": 4, "trainable": False}
    w = RNG.normal(size=(1,)).astype(np.float32)
    theirs = tf.keras.layers.STFTSpectrogram(**kw)
    xt = tf.constant(AUDIO)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        yt = tf.reduce_sum(tf.sin(theirs(xt)) * w)
    gt = tape.gradient(yt, xt).numpy()
    ours = L.STFTSpectrogram(**kw)
    xj = jt.constant(AUDIO)
    with jt.GradientTape() as tape:
        tape.watch(xj)
        yj = jt.reduce_sum(jt.sin(ours(xj)) * w)
    gj = tape.gradient(yj, xj).numpy()
    assert not ours.trainable_weights and len(ours.weights) == 2
    np.testing.assert_allclose(gj, gt, rtol=1e-3, atol=1e-4)


def test_spectrogram_errors_match_keras():
    with pytest.raises(ValueError, match="frame_step"):
        L.STFTSpectrogram(frame_length=8, frame_step=9)
    with pytest.raises(ValueError, match="mode"):
        L.STFTSpectrogram(mode="power")
    with pytest.raises(TypeError, match="input type"):
        L.STFTSpectrogram(frame_length=8)(jt.constant(np.ones((1, 16, 1), np.int32)))
    with pytest.raises(ValueError, match="fft_length"):
        L.MelSpectrogram(fft_length=16, sequence_length=32)


CHANNELS_FIRST = [
    ("RandomGrayscale", {"factor": 1.0}),
    ("Equalization", {}),
    ("RandomSharpness", {"factor": (0.2, 0.2)}),
    ("RandomHue", {"factor": (1.0, 1.0)}),
    ("RandomSaturation", {"factor": (0.7, 0.7)}),
    ("RandomColorDegeneration", {"factor": (0.5, 0.5)}),
]


@pytest.mark.parametrize("row", CHANNELS_FIRST, ids=[r[0] for r in CHANNELS_FIRST])
def test_channels_first_is_channels_last_transposed(row, tf):
    name, kwargs = row
    theirs = np.asarray(getattr(tf.keras.layers, name)(**kwargs)(IMAGES))
    layer = getattr(L, name)(data_format="channels_first", **kwargs)
    ours = layer(jt.constant(IMAGES.transpose(0, 3, 1, 2))).numpy()
    np.testing.assert_allclose(ours.transpose(0, 2, 3, 1), theirs, atol=5e-3)


def _is_either(out, a, b):
    """Each image of `out` is the one of `a` or of `b`."""
    for o, x, y in zip(out, a, b, strict=True):
        assert np.allclose(o, x, atol=1e-3) or np.allclose(o, y, atol=1e-3)


def test_random_layers_in_training(tf):
    x = jt.constant(np.concatenate([IMAGES] * 4))  # 8 images
    gray = np.asarray(tf.keras.layers.RandomGrayscale(factor=1.0)(IMAGES))
    out = L.RandomGrayscale(seed=1)(x)
    _is_either(out.numpy(), np.concatenate([gray] * 4), x.numpy())
    out = L.RandomInvert(seed=2)(x).numpy()
    _is_either(out, 255.0 - x.numpy(), x.numpy())
    bits = L.RandomPosterization(factor=4, seed=3)(x).numpy()
    assert np.all(bits % 16 == 0) and bits.max() <= 255  # 1 to 3 bits kept
    for layer in (
        L.RandomHue(0.5, seed=4),
        L.RandomSaturation(0.5, seed=5),
        L.RandomSharpness(0.5, seed=6),
        L.RandomColorDegeneration(0.5, seed=7),
        L.Solarization(0.5, 0.5, seed=8),
    ):
        y = layer(x).numpy()
        assert y.shape == x.shape and y.dtype == np.float32
        assert y.min() >= -1e-3 and y.max() <= 255.0 + 1e-2, type(layer).__name__
        again = type(layer).from_config(layer.get_config())(x).numpy()
        assert np.array_equal(y, again), type(layer).__name__  # same seed


def test_random_height_and_width_shapes():
    x = jt.constant(IMAGES)
    heights = {L.RandomHeight(0.5, seed=s)(x).shape[1] for s in range(6)}
    assert heights <= set(range(4, 13)) and len(heights) > 1
    out = L.RandomWidth((0.5, 1.0), seed=0)(x)
    assert 12 <= out.shape[2] <= 16 and out.shape[1] == 8
    with pytest.raises(NotImplementedError, match="fixed factor"):
        jt.function(lambda t: L.RandomHeight(0.5)(t))(x)


def test_pipeline_matches_tf_keras(tf):
    def build(m):
        return m.keras.layers.Pipeline(
            [
                m.keras.layers.Equalization(),
                m.keras.layers.RandomPosterization((4, 4)),
                m.keras.layers.AutoContrast(),
            ]
        )

    for training in (True, False):
        theirs = np.asarray(build(tf)(IMAGES, training=training))
        ours = build(jt)
        np.testing.assert_allclose(
            ours(jt.constant(IMAGES), training=training).numpy(), theirs, atol=1e-3
        )
    copy = L.Pipeline.from_config(ours.get_config())
    assert [type(la).__name__ for la in copy.layers] == [
        "Equalization",
        "RandomPosterization",
        "AutoContrast",
    ]


@pytest.mark.parametrize(
    "make",
    [
        lambda: L.RandomGrayscale(factor=1.5),
        lambda: L.RandomPosterization(factor=9),
        lambda: L.RandomSharpness(factor=(0.5, 1.5, 2)),
        lambda: L.Solarization(threshold_factor=2.0),
        lambda: L.AutoContrast(value_range=(0,)),
        lambda: L.RandomHeight(factor=(0.5, 0.2)),
    ],
)
def test_image_layer_argument_errors_are_value_errors(make):
    with pytest.raises(ValueError):
        make()
