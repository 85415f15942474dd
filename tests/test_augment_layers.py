"""Keras 3's remaining augmentation layers (MixUp, CutMix, AugMix, RandAugment,
RandomErasing, RandomShear, RandomPerspective, RandomGaussianBlur,
RandomElasticTransform, RandomColorJitter, CLAHE) and `keras.ops.image`'s
perspective_transform, elastic_transform, extract_patches_3d and ssim,
against tf.keras (Keras 3 on TF).

Deterministic paths (fixed factors, collapsed ranges, inference) are one
parity table; random paths are checked by their properties (mixing weights,
erased areas, shears of either sign, ranges, seeded reproducibility), plus
`get_config` equality, Keras's argument errors, a compiled `fit` and
`Dataset.map`.
"""

import numpy as np
import pytest

import jaxtape as jt

L = jt.keras.layers
RNG = np.random.default_rng(0)
IMAGES = RNG.uniform(0, 255, (4, 12, 12, 3)).astype(np.float32)
UNIT = (IMAGES / 255.0).astype(np.float32)
U8 = IMAGES.astype(np.uint8)
CF = np.ascontiguousarray(IMAGES.transpose(0, 3, 1, 2))
CLAHE = "ContrastLimitedAdaptiveHistogramEqualization"

OFF = {"training": False}
BLUR = {"factor": (1, 1)}  # always blurred, with a fixed sigma below
ERASE = {"factor": (1, 1), "scale": (1, 1)}  # the whole image erased
JITTER = {"brightness_factor": (0.1, 0.1), "contrast_factor": 0.0,
          "saturation_factor": (0.7, 0.7)}  # fmt: skip

# name, kwargs, input, call kwargs, compiled
LAYER_ROWS = [
    ("RandomGaussianBlur", {**BLUR, "kernel_size": (3, 5), "sigma": (0.9, 0.9)},
     IMAGES, {}, True),
    ("RandomGaussianBlur", {**BLUR, "sigma": (0.6, 0.6), "value_range": (0, 1),
                            "data_format": "channels_first"}, CF / 255, {}, False),
    ("RandomGaussianBlur", {}, IMAGES, OFF, False),
    ("RandomErasing", {**ERASE, "fill_value": 300}, IMAGES, {}, False),
    ("RandomErasing", {**ERASE, "fill_value": [10.0, 20.0, 30.0]}, IMAGES[0], {},
     False),
    ("RandomErasing", {}, IMAGES, OFF, False),
    ("RandomShear", {}, IMAGES, {}, False),
    ("RandomShear", {"x_factor": 0.5}, IMAGES, OFF, False),
    ("RandomElasticTransform", {"scale": 0.0}, IMAGES, {}, False),
    ("RandomElasticTransform", {"factor": 0.0}, IMAGES, {}, True),
    ("RandomColorJitter", JITTER, IMAGES, {}, False),
    ("RandomColorJitter", {"brightness_factor": 0.5}, IMAGES, OFF, False),
    ("MixUp", {}, IMAGES, OFF, False),
    ("CutMix", {}, IMAGES, OFF, False),
    ("CutMix", {}, IMAGES[0], {}, False),
    ("AugMix", {}, IMAGES, OFF, False),
    ("RandAugment", {}, IMAGES, OFF, False),
    (CLAHE, {"value_range": (0, 1), "clip_limit": 0.0}, UNIT[0], {}, True),
    (CLAHE, {"tile_grid_size": (4, 5), "data_format": "channels_first"},
     CF.astype(np.uint8), OFF, False),
]  # fmt: skip


def _ids(rows):
    return [f"{r[0]}-{i}" for i, r in enumerate(rows)]


@pytest.mark.parametrize("row", LAYER_ROWS, ids=_ids(LAYER_ROWS))
def test_layer_matches_tf_keras(row, tf):
    name, kwargs, x, call, compiled = row
    theirs = np.asarray(getattr(tf.keras.layers, name)(**kwargs)(x, **call))
    layer = getattr(L, name)(**kwargs)
    if compiled:
        ours = jt.function(lambda t: layer(t, **call))(jt.constant(x))
    else:
        ours = layer(jt.constant(x), **call)
    assert ours.dtype.name == theirs.dtype.name
    assert tuple(ours.shape) == theirs.shape
    # integer outputs are truncated: a value a rounding error below an integer
    # can land one lower (XLA and TF round differently)
    atol = 1 if theirs.dtype.kind in "iu" else 1e-3
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-5, atol=atol)


_PTS = np.array([[0, 0], [0, 12], [12, 0], [12, 12]], np.float32)
_END = np.array(
    [[[1, 2], [0.5, 11], [11, -1], [13, 12]], [[2, 1], [1, 11.3], [10, 1], [11.5, 10]]],
    np.float32,
)
_VOL = RNG.uniform(0, 1, (2, 5, 6, 7, 2)).astype(np.float32)
_NOISY = np.clip(UNIT + RNG.normal(0, 0.1, UNIT.shape), 0, 1).astype(np.float32)
_OUT_W = RNG.normal(size=(2, 12, 12, 3)).astype(np.float32)

# name, fn(ops, *inputs), inputs, differentiate the first input
CF_UNIT = np.ascontiguousarray(UNIT[:2].transpose(0, 3, 1, 2))
CF_VOL = np.ascontiguousarray(_VOL.transpose(0, 4, 1, 2, 3))
_STARTS = np.stack([_PTS] * 2)

_AFFINE = np.array([[0.93, 0.21, 1.37, -0.11, 1.07, -2.03, 0, 0],
                    [1.2, -0.3, -3.1, 0.2, 0.8, 4.2, 0, 0]], np.float32)  # fmt: skip

# name, fn(ops, *inputs), inputs, differentiate the first input, also compiled
OP_ROWS = [
    ("affine_wrap", lambda o, x: o.affine_transform(x, _AFFINE, fill_mode="wrap"),
     (UNIT[:2],), False, True),
    ("affine_nearest", lambda o, x: o.affine_transform(
        x, _AFFINE[0], "nearest", "constant", 0.5), (UNIT[0],), False, False),
    ("perspective", lambda o, x: o.perspective_transform(x, _STARTS, _END),
     (UNIT[:2],), True, False),
    ("perspective_nearest", lambda o, x: o.perspective_transform(
        x, _PTS, _END[0], interpolation="nearest", fill_value=0.5),
     (UNIT[0],), False, False),
    ("perspective_cf", lambda o, x: o.perspective_transform(
        x, _STARTS, _END, data_format="channels_first"), (CF_UNIT,), False, True),
    ("patches_3d", lambda o, v: o.extract_patches_3d(v, 2), (_VOL,), True, True),
    ("patches_3d_same", lambda o, v: o.extract_patches_3d(
        v[0], (2, 3, 2), strides=(1, 2, 3), padding="same"), (_VOL,), False, False),
    ("patches_3d_cf", lambda o, v: o.extract_patches_3d(
        v, 3, strides=1, dilation_rate=2, data_format="channels_first"),
     (CF_VOL,), False, False),
    ("ssim", lambda o, a, b: o.ssim(a, b), (UNIT, _NOISY), True, False),
    ("ssim_options", lambda o, a, b: o.ssim(
        a[0], b[0], max_val=2.0, filter_size=5, filter_sigma=1.0, k1=0.02, k2=0.05),
     (UNIT, _NOISY), False, True),
    ("ssim_uint8", lambda o, a, b: o.ssim(a, b, max_val=255.0), (U8, U8[::-1]),
     False, False),
    ("elastic_alpha0", lambda o, x: o.elastic_transform(
        x, alpha=0.0, sigma=2.0, seed=1), (UNIT[0, :, :, :1],), False, False),
]  # fmt: skip


@pytest.mark.parametrize("row", OP_ROWS, ids=[r[0] for r in OP_ROWS])
def test_op_matches_keras_ops_image(row, tf):
    _, fn, inputs, grad, compiled = row
    ko = tf.keras.ops.image
    tx = [tf.constant(v) for v in inputs]
    with tf.GradientTape() as tape:
        if grad:
            tape.watch(tx[0])
        theirs = fn(ko, *tx)
        t_loss = tf.reduce_sum(tf.cast(theirs, tf.float32) ** 2)
    jx = [jt.constant(v) for v in inputs]
    with jt.GradientTape() as tape2:
        if grad:
            tape2.watch(jx[0])
        ours = fn(jt.keras.ops.image, *jx)
        j_loss = jt.reduce_sum(jt.cast(ours, jt.float32) ** 2)
    assert ours.dtype.name == theirs.dtype.name
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)
    if compiled:
        out = jt.function(lambda *a: fn(jt.keras.ops.image, *a))(*jx)
        np.testing.assert_allclose(out.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)
    if grad:
        gt = tape.gradient(t_loss, tx[0]).numpy()
        gj = tape2.gradient(j_loss, jx[0]).numpy()
        np.testing.assert_allclose(gj, gt, rtol=1e-4, atol=1e-4)


def test_ops_errors_match_keras(tf):
    ko, jo = tf.keras.ops.image, jt.keras.ops.image
    cases = [
        lambda o: o.perspective_transform(UNIT, _PTS[:3], _END),
        lambda o: o.perspective_transform(UNIT, _PTS, _PTS, interpolation="cubic"),
        lambda o: o.elastic_transform(UNIT, fill_mode="edge"),
        lambda o: o.ssim(UNIT[0, 0], UNIT[0, 0]),
        lambda o: o.extract_patches_3d(_VOL, (2, 2)),
    ]
    for case in cases:
        with pytest.raises(Exception) as theirs:
            case(ko)
        with pytest.raises(type(theirs.value)):
            case(jo)
    with pytest.raises(jt.errors.InvalidArgumentError):
        jo.ssim(UNIT[:, :8, :8], UNIT[:, :8, :8])  # window larger than the image


# -- random paths by their properties ---------------------------------------------
def _one_hot_batch(n):
    return np.eye(n, dtype=np.float32)


@pytest.mark.parametrize("compiled", [False, True])
def test_mix_up_mixes_images_and_labels_by_the_same_weights(compiled):
    layer = L.MixUp(alpha=0.8, seed=3)
    data = {"images": jt.constant(IMAGES), "labels": jt.constant(_one_hot_batch(4))}
    run = jt.function(layer) if compiled else layer
    out = run(data)
    labels, images = out["labels"].numpy(), out["images"].numpy()
    # a compiled call draws afresh each time (the seed's state is lifted)
    assert not np.allclose(run(data)["labels"].numpy(), labels)
    np.testing.assert_allclose(labels.sum(axis=1), 1.0, rtol=1e-6)
    # each row mixes itself (weight labels[i, i]) with one partner
    for i in range(4):
        partner = [j for j in range(4) if j != i and labels[i, j] > 0] or [i]
        j = partner[0]
        expect = IMAGES[i] * labels[i, i] + IMAGES[j] * labels[i, j]
        if j == i:
            expect = IMAGES[i]
        np.testing.assert_allclose(images[i], expect, rtol=1e-4, atol=1e-2)


def test_cut_mix_pastes_one_box_and_weights_labels_by_its_area():
    x = IMAGES + 1000.0 * np.arange(4, dtype=np.float32)[:, None, None, None]
    labels = _one_hot_batch(4)
    out = L.CutMix(seed=5)({"images": jt.constant(x), "labels": jt.constant(labels)})
    images, mixed = out["images"].numpy(), out["labels"].numpy()
    np.testing.assert_allclose(mixed.sum(axis=1), 1.0, rtol=1e-6)
    for i in range(4):
        own = np.all(images[i] == x[i], axis=-1)
        others = [j for j in range(4) if j != i and mixed[i, j] > 0]
        if not others:
            assert own.all() or mixed[i, i] == pytest.approx(1.0, abs=0.2)
            continue
        j = others[0]
        pasted = np.all(images[i] == x[j], axis=-1)
        assert np.all(own | pasted)
        rows, cols = np.nonzero(pasted)
        if rows.size:  # a box
            assert pasted[
                rows.min() : rows.max() + 1, cols.min() : cols.max() + 1
            ].all()
        # the label weight is the box area, up to the grid's rounding
        assert abs(pasted.mean() - mixed[i, j]) <= 2 * 13 / 144 + 1e-6


def test_random_erasing_erases_a_box_within_the_scale_bounds():
    layer = L.RandomErasing(factor=(1, 1), scale=(0.1, 0.3), fill_value=-1.0,
                            value_range=(-1, 255), seed=2)  # fmt: skip
    out = layer(jt.constant(np.concatenate([IMAGES] * 2))).numpy()
    for o in out:
        erased = np.all(o == -1.0, axis=-1)
        rows, cols = np.nonzero(erased)
        assert rows.size
        assert erased[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1].all()
        h, w = rows.max() - rows.min() + 1, cols.max() - cols.min() + 1
        # sides sqrt(u) * 12, u in [0.1, 0.3], up to one pixel of rounding
        for side in (h, w):
            assert np.sqrt(0.1) * 12 - 1 <= side <= np.sqrt(0.3) * 12 + 1
    noise = L.RandomErasing(factor=(1, 1), scale=(1, 1), seed=1)(jt.constant(IMAGES))
    assert noise.numpy().min() >= 0.0 and noise.numpy().max() <= 255.0


def test_random_shear_shears_each_image_one_way_or_the_other(tf):
    layer = L.RandomShear(x_factor=(0.3, 0.3), y_factor=(0.2, 0.2), seed=4)
    out = layer(jt.constant(IMAGES)).numpy()
    ref = {}
    for s in (1.0, -1.0):
        t = np.array([[1, 0.3 * s, 0, 0.2 * s, 1, 0, 0, 0]], np.float32)
        ref[s] = np.asarray(tf.keras.ops.image.affine_transform(
            IMAGES, np.repeat(t, 4, axis=0), fill_mode="reflect"))  # fmt: skip
    for i in range(4):
        assert any(np.allclose(out[i], ref[s][i], atol=1e-2) for s in ref)


@pytest.mark.parametrize(
    "make",
    [
        lambda: L.RandomPerspective(scale=0.5, seed=1),
        lambda: L.RandomElasticTransform(scale=(0.5, 1.0), seed=1),
        lambda: L.RandomGaussianBlur(kernel_size=5, sigma=(0.5, 1.0), seed=1),
        lambda: L.RandomColorJitter((0, 255), 0.2, 0.3, 0.4, 0.1, seed=1),
        lambda: L.RandAugment(seed=1),
        lambda: L.AugMix(num_chains=2, chain_depth=2, factor=0.5, seed=1),
    ],
    ids=["perspective", "elastic", "blur", "jitter", "randaugment", "augmix"],
)
def test_random_layer_range_shape_and_seeded_reproducibility(make):
    layer = make()
    x = jt.constant(IMAGES)
    out = layer(x).numpy()
    assert out.shape == IMAGES.shape and out.dtype == np.float32
    assert out.min() >= -1e-3 and out.max() <= 255.0 + 1e-2
    assert not np.allclose(out, IMAGES)
    again = type(layer).from_config(layer.get_config())(x).numpy()
    np.testing.assert_allclose(out, again, rtol=1e-5, atol=1e-3)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), IMAGES)


# -- configs, errors, fit, datasets -----------------------------------------------
CONFIG_ROWS = [
    ("MixUp", {"alpha": 0.4, "seed": 1}),
    ("CutMix", {"factor": 0.5, "data_format": "channels_first"}),
    ("AugMix", {"num_chains": 2, "factor": (0.1, 0.2), "all_ops": False}),
    ("RandAugment", {"num_ops": 3, "factor": 0.7, "interpolation": "nearest"}),
    ("RandomErasing", {"factor": 0.5, "scale": 0.4, "fill_value": 3.0}),
    (
        "RandomShear",
        {"x_factor": (0.0, 0.2), "y_factor": (0.1, 0.3), "fill_mode": "wrap"},
    ),
    ("RandomPerspective", {"factor": (0.2, 0.8), "scale": 0.5, "fill_value": 1.0}),
    ("RandomGaussianBlur", {"kernel_size": (3, 5), "sigma": (0.5, 1.0)}),
    ("RandomElasticTransform", {"scale": 0.3, "fill_mode": "constant"}),
    ("RandomColorJitter", {"brightness_factor": 0.2, "hue_factor": (0.1, 0.3)}),
    (CLAHE, {"clip_limit": 2.0, "tile_grid_size": (4, 4), "value_range": (0, 1)}),
]


@pytest.mark.parametrize("row", CONFIG_ROWS, ids=[r[0] for r in CONFIG_ROWS])
def test_get_config_matches_tf_keras(row, tf):
    name, kwargs = row
    theirs = getattr(tf.keras.layers, name)(**kwargs).get_config()
    ours = getattr(L, name)(**kwargs).get_config()
    theirs.pop("name"), ours.pop("name")
    assert ours == theirs
    copy = getattr(L, name).from_config(ours)
    assert {k: v for k, v in copy.get_config().items() if k != "name"} == ours


ERROR_ROWS = [
    ("CutMix", {"factor": 1.5}),
    ("RandomErasing", {"scale": (0.5, 1.5, 2.0)}),
    ("RandomErasing", {"factor": -0.5}),
    ("RandomShear", {"x_factor": 1.5}),
    ("RandomShear", {"fill_mode": "mirror"}),
    ("RandomPerspective", {"scale": 2.0}),
    ("RandomPerspective", {"interpolation": "bicubic"}),
    ("RandomGaussianBlur", {"kernel_size": 4}),
    ("RandomGaussianBlur", {"sigma": 3.0}),
    ("RandomElasticTransform", {"fill_mode": "edge"}),
    ("AugMix", {"factor": 2.0}),
    ("RandAugment", {"factor": -2.0}),
]


@pytest.mark.parametrize("row", ERROR_ROWS, ids=_ids(ERROR_ROWS))
def test_bad_arguments_raise_keras_errors(row, tf):
    name, kwargs = row
    with pytest.raises(Exception) as theirs:
        getattr(tf.keras.layers, name)(**kwargs)
    with pytest.raises(type(theirs.value)) as ours:
        getattr(L, name)(**kwargs)
    # (Keras lists some choices from a set, in a per-process order)
    assert str(ours.value).split("{")[0] == str(theirs.value).split("{")[0]


def test_layers_train_in_a_compiled_sequential_fit():
    jt.keras.utils.set_random_seed(0)
    model = jt.keras.Sequential(
        [
            jt.keras.Input((12, 12, 3)),
            L.RandomShear(0.2, 0.2, seed=1),
            L.RandomErasing(fill_value=0.0, seed=3),
            L.Rescaling(1 / 255.0),
            L.Flatten(),
            L.Dense(2),
        ]
    )
    model.compile("adam", "mse")
    history = model.fit(IMAGES, np.zeros((4, 2), np.float32), epochs=1, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))


def test_mix_up_in_dataset_map_on_dicts():
    ds = jt.data.Dataset.from_tensor_slices(
        {"images": IMAGES, "labels": _one_hot_batch(4)}
    )
    ds = ds.batch(4).map(L.MixUp(seed=1))
    for batch in ds:
        assert tuple(batch["images"].shape) == (4, 12, 12, 3)
        np.testing.assert_allclose(batch["labels"].numpy().sum(axis=1), 1.0, 1e-6)
    with pytest.raises(NotImplementedError, match="bounding_boxes"):
        boxes = {"boxes": np.zeros((4, 1, 4), "float32"), "labels": np.zeros((4, 1))}
        L.CutMix(bounding_box_format="xyxy")(
            {"images": IMAGES, "bounding_boxes": boxes}
        )
