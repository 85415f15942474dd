"""Image fixes against TF / Keras-on-TF: `hsv_to_rgb` at hue 1.0 (TF's
`HSVToRGB` kernel reads it as red) in `jaxtape.image` and
`keras.ops.image` (and so `RandomHue`), `keras.ops.image.extract_patches`
with a 3-number `size` (Keras's 3-D patches), and the dtype of dict
`"labels"` after a preprocessing layer's input conversion."""

import numpy as np
import pytest

import jaxtape

_HUES = np.array([0, 1 / 6, 2 / 6, 3 / 6, 4 / 6, 5 / 6, 1.0, 0.999, 1.2, -0.1])
_EDGES = np.array([0.0, 0.5, 1.0])


def _hsv_grid(dtype):
    """Every hue of `_HUES` with saturations and values at 0, 0.5 and 1."""
    h, s, v = np.meshgrid(_HUES, _EDGES, _EDGES, indexing="ij")
    return np.stack([h, s, v], -1).reshape(len(_HUES), 9, 3).astype(dtype)


def _close(got, want, atol=1e-6):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=atol, rtol=0)


_PATCH_VOL = np.random.default_rng(0).normal(size=(2, 6, 5, 7, 2)).astype("float32")

# name -> fn(module, compiled-or-eager wrapper) where module is TF or jaxtape
_ROWS = {
    "image.hsv_to_rgb f32": lambda m: m.image.hsv_to_rgb(_hsv_grid("float32")),
    # (a Tensor: TF's fast path gives float32 for a float64 NumPy array once
    # the op has run on float32)
    "image.hsv_to_rgb f64": lambda m: m.image.hsv_to_rgb(
        m.constant(_hsv_grid("float64"))
    ),
    "keras hsv_to_rgb f32": lambda m: m.keras.ops.image.hsv_to_rgb(
        _hsv_grid("float32")
    ),
    "keras hsv_to_rgb f64 channels_first": lambda m: m.keras.ops.image.hsv_to_rgb(
        m.constant(np.moveaxis(_hsv_grid("float64"), -1, 0)),
        data_format="channels_first",
    ),
    "RandomHue factor (1, 1)": lambda m: m.keras.layers.RandomHue(
        factor=(1.0, 1.0), value_range=(0, 255), seed=3
    )(np.array([[[[233, 255, 255], [10, 200, 30], [7, 7, 7]]]], "float32")),
    "extract_patches size 3": lambda m: m.keras.ops.image.extract_patches(
        _PATCH_VOL, (3, 2, 3)
    ),
    "extract_patches size 3 list, strides, same": lambda m: (
        m.keras.ops.image.extract_patches(
            _PATCH_VOL[0], [2, 3, 2], strides=(1, 2, 3), padding="same"
        )
    ),
}


@pytest.mark.parametrize("name", list(_ROWS))
def test_parity(tf, name):
    fn = _ROWS[name]
    want = fn(tf)
    _close(fn(jaxtape), want, atol=1e-3 if "RandomHue" in name else 1e-6)


@pytest.mark.parametrize("name", ["keras hsv_to_rgb f32", "extract_patches size 3"])
def test_compiled(tf, name):
    fn = _ROWS[name]
    _close(jaxtape.function(lambda: fn(jaxtape))(), fn(tf))


@pytest.mark.parametrize(
    "size, error",
    [((2, 2, 2, 2), ValueError), ((2,), ValueError), (np.array([2, 2]), TypeError)],
)
def test_extract_patches_size_errors(tf, size, error):
    img = _PATCH_VOL[0, 0]
    with pytest.raises(error):
        tf.keras.ops.image.extract_patches(img, size)
    with pytest.raises(error, match="Invalid `size` argument"):
        jaxtape.keras.ops.image.extract_patches(img, size)


_IMAGES = np.random.default_rng(1).uniform(0, 255, size=(2, 8, 8, 3))
_LABELS = {
    "float64": np.random.default_rng(2).uniform(size=(2, 4)),
    "int64": np.array([1, 2], "int64"),
}


@pytest.mark.parametrize("labels", list(_LABELS))
def test_dict_labels_dtype(tf, labels):
    """Keras converts every float input of a layer to its compute dtype,
    `"labels"` of a dict included (int labels keep their dtype)."""

    def run(m):
        layer = m.keras.layers.RandomErasing(seed=1)
        out = layer({"images": _IMAGES, "labels": _LABELS[labels]}, training=True)
        return np.asarray(out["images"]).dtype, np.asarray(out["labels"]).dtype

    assert run(jaxtape) == run(tf)


@pytest.mark.parametrize("convert", [True, False])
def test_dict_labels_convert_input_args(tf, convert):
    """A layer that sets Keras's `_convert_input_args = False` (RandomFlip,
    RandomCrop do) keeps float64 `"labels"` (and images) as given."""

    def run(m):
        class Identity(m.keras.layers.Layer):
            def __init__(self):
                super().__init__()
                self._convert_input_args = convert

            def call(self, inputs):
                return inputs

        data = {"images": _IMAGES, "labels": _LABELS["float64"]}
        out = Identity()({k: m.constant(v) for k, v in data.items()})
        return {k: np.asarray(v).dtype for k, v in out.items()}

    assert run(jaxtape) == run(tf)


def test_dict_labels_kept_by_random_flip(tf):
    def run(m):
        out = m.keras.layers.RandomFlip(seed=1)(
            {"images": _IMAGES, "labels": _LABELS["float64"]}, training=True
        )
        return np.asarray(out["labels"]).dtype

    assert run(jaxtape) == run(tf)
