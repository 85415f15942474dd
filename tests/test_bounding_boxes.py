"""Bounding boxes against Keras-on-TF: the `keras.utils.bounding_boxes`
functions (values, dtypes, errors, a CIoU gradient), `MaxNumBoundingBoxes`,
and the image preprocessing layers on dict inputs (`images`, `labels`,
`bounding_boxes`, `segmentation_masks`): Resizing, CenterCrop and the
random layers at deterministic settings exactly as tf.keras; RandomFlip,
RandomCrop, RandomShear and RandomPerspective (whose draws differ from
Keras's) against the transformation the layer applied to its images."""

import numpy as np
import pytest

import jaxtape

_RNG = np.random.default_rng(0)


def _random_boxes(shape, size=(40.0, 60.0)):
    """xyxy boxes inside a `size` (h, w) image."""
    h, w = size
    a = _RNG.uniform(0, 1, shape + (2, 2)).astype("float32")
    a.sort(axis=-1)
    x1, x2 = a[..., 0, 0] * w, a[..., 0, 1] * w
    y1, y2 = a[..., 1, 0] * h, a[..., 1, 1] * h
    return np.stack([x1, y1, x2, y2], -1).astype("float32")


_B = _random_boxes((2, 5))  # batched (2, 5, 4) in a 40 x 60 image
_U = _random_boxes((6,))  # unbatched (6, 4)
_LAB = np.arange(10, dtype="int32").reshape(2, 5)
_ANCHORS = _random_boxes((5,))


def _bb(m):
    return m.keras.utils.bounding_boxes


def _rel(fmt, boxes, h=40, w=60):
    """xyxy `boxes` in `fmt`, by NumPy (the test's own inputs)."""
    x1, y1, x2, y2 = np.moveaxis(boxes, -1, 0)
    scale = np.array([w, h, w, h], "float32") if fmt.startswith("rel_") else 1.0
    base = fmt.removeprefix("rel_")
    if base == "yxyx":
        out, scale = np.stack([y1, x1, y2, x2], -1), np.roll(scale, 1)
    elif base == "xywh":
        out = np.stack([x1, y1, x2 - x1, y2 - y1], -1)
    elif base == "center_xywh":
        out = np.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], -1)
    elif base == "center_yxhw":
        out = np.stack([(y1 + y2) / 2, (x1 + x2) / 2, y2 - y1, x2 - x1], -1)
        scale = np.roll(scale, 1)
    else:
        out = boxes
    return (out / scale).astype("float32")


_FORMATS = ["xyxy", "yxyx", "xywh", "center_xywh", "center_yxhw", "rel_xyxy",
            "rel_yxyx", "rel_xywh", "rel_center_xywh"]  # fmt: skip
_Z2, _O2 = np.zeros(2, "float32"), np.ones(2, "float32")

# name -> fn(module): the same NumPy inputs through tf.keras and jaxtape
_UTILS = {
    **{
        f"convert {s}->{t}": (
            lambda m, s=s, t=t: _bb(m).convert_format(_B, s, t, height=40, width=60)
        )
        for s, t in zip(_FORMATS, _FORMATS[3:] + _FORMATS[:3], strict=True)
    },
    "convert unbatched CENTER_YXHW->rel_yxyx": lambda m: _bb(m).convert_format(
        _U, "CENTER_YXHW", "rel_yxyx", height=40, width=60
    ),
    "convert array height": lambda m: _bb(m).convert_format(
        _B,
        "xyxy",
        "rel_xywh",
        height=np.array([[[40.0]], [[20.0]]], "float32"),
        width=np.array([[[60.0]], [[30.0]]], "float32"),
    ),  # fmt: skip
    "convert float64 to float16": lambda m: _bb(m).convert_format(
        _U.astype("float64"), "xywh", "xyxy", dtype="float16"
    ),
    "convert dict": lambda m: _bb(m).convert_format(
        {"boxes": _B, "labels": _LAB}, "xyxy", "center_xywh"
    ),
    "clip xyxy": lambda m: _bb(m).clip_to_image_size(
        {"boxes": _B, "labels": _LAB}, height=20, width=30
    ),
    "clip rel_xyxy": lambda m: _bb(m).clip_to_image_size(
        {"boxes": _B / 40.0 - 0.3, "labels": _LAB}, bounding_box_format="rel_xyxy"
    ),
    "clip no labels": lambda m: _bb(m).clip_to_image_size(
        {"boxes": _U}, height=25, width=25
    ),
    "affine_transform": lambda m: _bb(m).affine_transform(
        _B,
        np.array([30.0, -45.0], "float32"),
        _Z2 + 0.1,
        _Z2 - 0.2,
        _O2 * 1.2,
        _Z2 + 5.0,
        _Z2 - 3.0,
        40,
        60,
    ),  # fmt: skip
    "affine_transform centre": lambda m: _bb(m).affine_transform(
        _B,
        np.array([90.0, 10.0], "float32"),
        _Z2,
        _Z2,
        _O2,
        _Z2,
        _Z2,
        40,
        60,
        center_x=0.2,
        center_y=0.7,
    ),  # fmt: skip
    "crop": lambda m: _bb(m).crop(_B, 5, 10, 20, 30),
    "pad": lambda m: _bb(m).pad(_U, 5, 10),
    "encode": lambda m: _bb(m).encode_box_to_deltas(_ANCHORS, _B, "xyxy", "xyxy"),
    "encode variance xywh": lambda m: _bb(m).encode_box_to_deltas(
        _ANCHORS,
        _rel("rel_xywh", _B),
        "xyxy",
        "rel_xywh",
        encoding_format="center_xywh",
        variance=[0.1, 0.1, 0.2, 0.2],
        image_shape=(40, 60, 3),
    ),  # fmt: skip
    "decode": lambda m: _bb(m).decode_deltas_to_boxes(
        _ANCHORS, _B / 100.0, "xyxy", "yxyx", variance=[0.1, 0.1, 0.2, 0.2]
    ),
    "decode dict of levels": lambda m: _bb(m).decode_deltas_to_boxes(
        {"p3": _ANCHORS, "p4": _ANCHORS[:2]},
        {"p3": _B[0] / 50.0, "p4": _B[1, :2] / 50.0},
        "xyxy",
        "rel_center_xywh",
        encoded_format="center_xywh",
        image_shape=(40, 60, 3),
    ),  # fmt: skip
    "iou unbatched": lambda m: _bb(m).compute_iou(_U, _B[0], "xyxy"),
    "iou batched masked": lambda m: _bb(m).compute_iou(
        np.where(np.arange(5)[:, None] == 2, -1.0, _B).astype("float32"),
        _B[:, :3],
        "xyxy",
        use_masking=True,
        mask_val=-7,
    ),
    "iou batched vs unbatched": lambda m: _bb(m).compute_iou(_B, _U, "xyxy"),
    "iou unbatched vs batched": lambda m: _bb(m).compute_iou(_U, _B, "center_xywh"),
    "iou rel_yxyx": lambda m: _bb(m).compute_iou(
        _rel("rel_yxyx", _U),
        _rel("rel_yxyx", _B[1]),
        "rel_yxyx",
        image_shape=(40, 60, 3),
    ),  # fmt: skip
    "ciou": lambda m: _bb(m).compute_ciou(_B, _B[::-1], "xyxy"),
    "ciou center_xywh": lambda m: _bb(m).compute_ciou(
        _rel("center_xywh", _U), _rel("center_xywh", _U[::-1]), "center_xywh"
    ),
}


def _close(got, want, atol=1e-4):
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want)
        for k in want:
            _close(got[k], want[k], atol)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    np.testing.assert_allclose(got, want, atol=atol, rtol=1e-5)


@pytest.mark.parametrize("name", list(_UTILS))
def test_bounding_box_util_matches_tf_keras(tf, name):
    _close(_UTILS[name](jaxtape), _UTILS[name](tf))


_ERRORS = {
    "rel without size": lambda m: _bb(m).convert_format(_B, "rel_xyxy", "xyxy"),
    "last dim not 4": lambda m: _bb(m).convert_format(_B[..., :3], "xyxy", "yxyx"),
    "unknown format": lambda m: _bb(m).convert_format(_B, "xyxy", "xxyy"),
    "clip xywh": lambda m: _bb(m).clip_to_image_size(
        {"boxes": _B}, 4, 4, bounding_box_format="xywh"
    ),
    "clip xyxy without size": lambda m: _bb(m).clip_to_image_size({"boxes": _B}),
    "crop yxyx": lambda m: _bb(m).crop(_B, 1, 1, 4, 4, bounding_box_format="yxyx"),
    "encode bad variance": lambda m: _bb(m).encode_box_to_deltas(
        _ANCHORS, _B, "xyxy", "xyxy", variance=[1.0, 1.0]
    ),
    "decode bad format": lambda m: _bb(m).decode_deltas_to_boxes(
        _ANCHORS, _B, "xyxy", "xyxy", encoded_format="xyxy"
    ),
    "iou rank 1": lambda m: _bb(m).compute_iou(_U[0], _U, "xyxy"),
    "iou masked batched vs unbatched": lambda m: _bb(m).compute_iou(
        _B, _U, "xyxy", use_masking=True
    ),
    "iou masked unbatched vs batched": lambda m: _bb(m).compute_iou(
        _U, _B, "xyxy", use_masking=True
    ),
    "ciou relative": lambda m: _bb(m).compute_ciou(_B, _B, "rel_xyxy", (4, 4, 3)),
}


def _error_type(fn, m):
    with pytest.raises(Exception) as info:
        fn(m)
    return type(info.value).__name__


@pytest.mark.parametrize("name", list(_ERRORS))
def test_bounding_box_util_errors_match_tf_keras(tf, name):
    assert _error_type(_ERRORS[name], jaxtape) == _error_type(_ERRORS[name], tf)


def test_ciou_gradient_matches_tf(tf):
    def grad(m):
        boxes = m.Variable(_B)
        with m.GradientTape() as tape:
            loss = m.reduce_sum(_bb(m).compute_ciou(boxes, _B[::-1], "xyxy"))
        return tape.gradient(loss, boxes)

    _close(grad(jaxtape), grad(tf), atol=1e-5)


def test_bounding_box_utils_compile():
    @jaxtape.function
    def step(boxes):
        rel = _bb(jaxtape).convert_format(boxes, "xyxy", "rel_yxyx", 40, 60)
        iou = _bb(jaxtape).compute_iou(boxes, boxes, "xyxy")
        return rel, iou

    rel, iou = step(_B)
    eager = _bb(jaxtape).convert_format(_B, "xyxy", "rel_yxyx", 40, 60)
    _close(rel, eager, atol=1e-6)
    np.testing.assert_allclose(np.diagonal(np.asarray(iou), axis1=1, axis2=2), 1.0,
                               atol=1e-5)  # fmt: skip


# -- layers on dict inputs ------------------------------------------------------------
_IMAGES = _RNG.uniform(0, 255, (2, 40, 60, 3)).astype("float32")
_MASKS = _RNG.integers(0, 4, (2, 40, 60, 1)).astype("float32")
_BOXES = np.concatenate(
    [_B[:, :4], np.full((2, 1, 4), -1.0, "float32")], axis=1
)  # a padding box last


def _data(fmt="xyxy", batched=True, masks=True):
    boxes = _rel(fmt, _BOXES)
    data = {
        "images": _IMAGES,
        "labels": np.eye(2, dtype="float32"),
        "bounding_boxes": {"boxes": boxes, "labels": _LAB},
    }
    if masks:
        data["segmentation_masks"] = _MASKS
    if not batched:
        data = {
            "images": _IMAGES[0],
            "bounding_boxes": {"boxes": boxes[0], "labels": _LAB[0]},
        }
    return data


def _layers(m):
    return m.keras.layers


# name -> (fn(layers module) -> layer, data kwargs); all deterministic in Keras
_LAYERS = {
    "Resizing stretch rel_yxyx": (
        lambda L: L.Resizing(20, 25, bounding_box_format="rel_yxyx"),
        {"fmt": "rel_yxyx"},
    ),
    "Resizing pad": (
        lambda L: L.Resizing(
            30, 30, pad_to_aspect_ratio=True, bounding_box_format="xyxy"
        ),  # fmt: skip
        {},
    ),
    "Resizing crop center_xywh": (
        lambda L: L.Resizing(
            30, 30, crop_to_aspect_ratio=True, bounding_box_format="center_xywh"
        ),  # fmt: skip
        {"fmt": "center_xywh"},
    ),
    "Resizing unbatched": (
        lambda L: L.Resizing(15, 45, bounding_box_format="xywh"),
        {"fmt": "xywh", "batched": False},
    ),
    "CenterCrop": (
        lambda L: L.CenterCrop(20, 30, bounding_box_format="xyxy"),
        {},
    ),
    "CenterCrop small rel_xywh": (
        lambda L: L.CenterCrop(50, 40, bounding_box_format="rel_xywh"),
        {"fmt": "rel_xywh"},
    ),
    "MaxNumBoundingBoxes pad": (
        lambda L: L.MaxNumBoundingBoxes(7, fill_value=-2, bounding_box_format="xyxy"),
        {},
    ),
    "MaxNumBoundingBoxes cut": (
        lambda L: L.MaxNumBoundingBoxes(3, bounding_box_format="xyxy"),
        {"batched": False},
    ),
    "RandomRotation 90": (
        lambda L: L.RandomRotation(
            (0.25, 0.25), fill_mode="constant", bounding_box_format="xyxy"
        ),  # fmt: skip
        {},
    ),
    "RandomRotation -36 unbatched": (
        lambda L: L.RandomRotation((-0.1, -0.1), bounding_box_format="xyxy"),
        {"batched": False},
    ),
    "RandomZoom": (
        lambda L: L.RandomZoom(
            (0.5, 0.5), (-0.3, -0.3), fill_mode="constant", bounding_box_format="xywh"
        ),  # fmt: skip
        {"fmt": "xywh"},
    ),
    "RandomTranslation": (
        lambda L: L.RandomTranslation(
            (0.2, 0.2), (-0.1, -0.1), fill_mode="nearest", bounding_box_format="yxyx"
        ),  # fmt: skip
        {"fmt": "yxyx"},
    ),
    "RandomContrast": (
        lambda L: L.RandomContrast((0.0, 0.0), bounding_box_format="xyxy"),
        {},
    ),
    "RandomBrightness": (
        lambda L: L.RandomBrightness((0.0, 0.0), bounding_box_format="xyxy"),
        {},
    ),
    "RandomPosterization": (
        lambda L: L.RandomPosterization((8, 8), bounding_box_format="xyxy"),
        {},
    ),
    "AutoContrast": (lambda L: L.AutoContrast(bounding_box_format="xyxy"), {}),
    "Solarization": (lambda L: L.Solarization(bounding_box_format="xyxy"), {}),
    "RandomErasing": (
        lambda L: L.RandomErasing(factor=0.0, bounding_box_format="xyxy"),
        {},
    ),
    "RandomColorJitter": (
        lambda L: L.RandomColorJitter(
            brightness_factor=(0.0, 0.0), bounding_box_format="xyxy"
        ),  # fmt: skip
        {},
    ),
}


@pytest.mark.parametrize("name", list(_LAYERS))
def test_layer_dict_matches_tf_keras(tf, name):
    make, kwargs = _LAYERS[name]
    got = make(_layers(jaxtape))(_data(**kwargs))
    want = make(_layers(tf))(_data(**kwargs))
    _close(got.pop("images"), want.pop("images"), atol=2e-3)  # (bilinear sums)
    _close(got, want)


def test_layer_dict_compiles_and_matches_eager():
    layer = jaxtape.keras.layers.Resizing(30, 30, pad_to_aspect_ratio=True,
                                          bounding_box_format="xyxy")  # fmt: skip
    data = {"images": _IMAGES, "bounding_boxes": {"boxes": _BOXES, "labels": _LAB}}
    compiled = jaxtape.function(layer)(data)
    _close(compiled, layer(data), atol=1e-5)


@pytest.mark.parametrize(
    "name",
    [
        "RandomFlip",
        "RandomRotation",
        "CenterCrop",
        "MaxNumBoundingBoxes",
        "AutoContrast",
    ],
)
def test_boxes_without_bounding_box_format_raise_as_keras(tf, name):
    args = {"RandomRotation": (0.1,), "CenterCrop": (8, 8), "MaxNumBoundingBoxes": (3,)}

    def run(m):
        return _error_type(
            lambda m: getattr(_layers(m), name)(*args.get(name, ()))(_data()), m
        )

    assert run(jaxtape) == run(tf) == "ValueError"


def test_random_layer_at_inference_passes_boxes_as_keras(tf):
    def run(m):
        layer = _layers(m).RandomRotation(0.2, bounding_box_format="xyxy")
        return layer(_data(), training=False)

    _close(run(jaxtape), run(tf))


def test_config_holds_bounding_box_format_as_keras(tf):
    def run(m):
        return _layers(m).RandomFlip(bounding_box_format="xywh").get_config()

    got, want = run(jaxtape), run(tf)
    assert got["bounding_box_format"] == want["bounding_box_format"] == "xywh"


# -- layers whose draws differ from Keras's: against their own transformation ---------
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
def test_random_flip_moves_boxes_and_masks_with_the_images(compiled):
    """Each image flipped (or not) horizontally; its boxes `x -> 60 - x` and
    its mask flipped likewise; labels of the boxes kept (also compiled)."""
    layer = jaxtape.keras.layers.RandomFlip("horizontal", seed=3,
                                            bounding_box_format="xyxy")  # fmt: skip
    if compiled:
        layer = jaxtape.function(layer)
    images = np.concatenate([_IMAGES] * 4)  # 8 images: both outcomes likely
    masks = np.concatenate([_MASKS] * 4)
    boxes = np.concatenate([_BOXES] * 4)
    labels = np.concatenate([_LAB] * 4)
    out = layer(
        {
            "images": images,
            "bounding_boxes": {"boxes": boxes, "labels": labels},
            "segmentation_masks": masks,
        }
    )
    got_images = np.asarray(out["images"])
    flipped = [np.allclose(g, i[:, ::-1]) for g, i in zip(got_images, images)]
    assert any(flipped) and not all(flipped)
    for k, f in enumerate(flipped):
        assert np.allclose(got_images[k], images[k][:, ::-1] if f else images[k])
        want_mask = masks[k][:, ::-1] if f else masks[k]
        np.testing.assert_array_equal(out["segmentation_masks"][k], want_mask)
        b = boxes[k]
        # (Keras clips relative boxes to [0, pixel size]: the padding box
        # (-1, -1, -1, -1) flips to x = 61, or stays at 0)
        want = np.stack([60 - b[:, 2], b[:, 1], 60 - b[:, 0], b[:, 3]], -1) if f else b
        want = np.maximum(want, 0)
        np.testing.assert_allclose(out["bounding_boxes"]["boxes"][k], want, atol=1e-4)
    area = (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])
    np.testing.assert_array_equal(
        out["bounding_boxes"]["labels"], np.where(area > 0, labels, -1)
    )


def test_random_crop_moves_boxes_and_masks_with_the_window():
    """The window found in the input image; boxes shifted by its offset and
    clipped to it; the mask cut from the same window."""
    layer = jaxtape.keras.layers.RandomCrop(25, 30, seed=7,
                                            bounding_box_format="rel_xyxy")  # fmt: skip
    rel = _BOXES[:, :4] / np.array([60, 40, 60, 40], "float32")
    out = layer(
        {
            "images": _IMAGES,
            "bounding_boxes": {"boxes": rel, "labels": _LAB[:, :4]},
            "segmentation_masks": _MASKS,
        }
    )
    got = np.asarray(out["images"])[0]
    top, left = next(
        (t, s)
        for t in range(16)
        for s in range(31)
        if np.allclose(_IMAGES[0, t : t + 25, s : s + 30], got)
    )
    np.testing.assert_array_equal(
        out["segmentation_masks"], _MASKS[:, top : top + 25, left : left + 30]
    )
    b = _BOXES[:, :4] - np.array([left, top, left, top], "float32")
    want = np.clip(b, 0, [30, 25, 30, 25]) / np.array([30, 25, 30, 25], "float32")
    np.testing.assert_allclose(out["bounding_boxes"]["boxes"], want, atol=1e-5)


@pytest.mark.parametrize(
    "make",
    [
        lambda L: L.RandomShear(0.4, 0.3, seed=2, bounding_box_format="xyxy"),
        lambda L: L.RandomPerspective(seed=2, bounding_box_format="xyxy"),
        lambda L: L.RandomRotation(0.3, seed=2, bounding_box_format="xyxy"),
        lambda L: L.RandomZoom(0.4, seed=2, bounding_box_format="xyxy"),
    ],
    ids=["shear", "perspective", "rotation", "zoom"],
)
def test_warped_box_covers_the_warped_mask_of_the_box(make):
    """A mask that is 1 inside one box: after the layer, its pixels lie in
    the transformed box (the hull of the box's mapped corners)."""
    box = np.array([[[18.0, 12.0, 42.0, 28.0]]] * 2, "float32")
    yy, xx = np.mgrid[0:40, 0:60]
    inside = (xx >= 18) & (xx <= 42) & (yy >= 12) & (yy <= 28)
    masks = np.broadcast_to(inside[None, :, :, None], (2, 40, 60, 1)).astype("float32")
    layer = make(jaxtape.keras.layers)
    layer.fill_mode = "constant"
    out = layer(
        {
            "images": _IMAGES,
            "bounding_boxes": {"boxes": box, "labels": np.ones((2, 1), "int32")},
            "segmentation_masks": masks,
        }
    )
    got = np.asarray(out["segmentation_masks"])[..., 0]
    assert got.sum() > 0 and set(np.unique(got)) <= {0.0, 1.0}  # (nearest)
    for k in range(2):
        x1, y1, x2, y2 = np.asarray(out["bounding_boxes"]["boxes"])[k, 0]
        ys, xs = np.nonzero(got[k])
        assert xs.min() >= x1 - 1 and xs.max() <= x2 + 1
        assert ys.min() >= y1 - 1 and ys.max() <= y2 + 1


@pytest.mark.parametrize(
    "make",
    [
        lambda L: L.RandomFlip(seed=4),
        lambda L: L.RandomCrop(24, 33, seed=4),
        lambda L: L.RandomRotation(0.3, interpolation="nearest", seed=4),
        lambda L: L.RandomZoom(0.3, 0.2, interpolation="nearest", seed=4),
        lambda L: L.RandomTranslation(0.2, 0.3, interpolation="nearest", seed=4),
        lambda L: L.RandomShear(0.3, 0.3, interpolation="nearest", seed=4),
        lambda L: L.RandomPerspective(interpolation="nearest", seed=4),
        lambda L: L.RandomElasticTransform(interpolation="nearest", seed=4),
        lambda L: L.CutMix(seed=4),
    ],
    ids=[
        "flip",
        "crop",
        "rotation",
        "zoom",
        "translation",
        "shear",
        "perspective",
        "elastic",
        "cutmix",
    ],  # fmt: skip
)
def test_masks_follow_the_images_draws(make):
    """A mask equal to the images' first channel stays equal to it: the
    masks get the images' random draws (nearest sampling both)."""
    images = _IMAGES.round()
    out = make(jaxtape.keras.layers)(
        {"images": images, "segmentation_masks": images[..., :1]}
    )
    got = np.asarray(out["images"])
    assert got.shape != images.shape or not np.allclose(got, images)
    np.testing.assert_allclose(out["segmentation_masks"], got[..., :1])


def test_mix_up_appends_the_partner_boxes_and_blends_masks():
    layer = jaxtape.keras.layers.MixUp(seed=1, bounding_box_format="xyxy")
    out = layer(_data())
    boxes = np.asarray(out["bounding_boxes"]["boxes"])
    assert boxes.shape == (2, 10, 4)
    np.testing.assert_array_equal(boxes[:, :5], _BOXES)
    partner = [
        next(j for j in range(2) if np.allclose(b[5:], _BOXES[j])) for b in boxes
    ]
    w = np.asarray(out["labels"])[np.arange(2), np.arange(2)]  # (one-hot labels)
    for k, j in enumerate(partner):
        want = w[k] * _MASKS[k] + (1 - w[k]) * _MASKS[j]
        np.testing.assert_allclose(out["segmentation_masks"][k], want, atol=1e-4)


@pytest.mark.parametrize(
    "make",
    [
        lambda L: L.CutMix(bounding_box_format="xyxy"),
        lambda L: L.RandomElasticTransform(bounding_box_format="xyxy"),
        lambda L: L.ContrastLimitedAdaptiveHistogramEqualization(
            bounding_box_format="xyxy"
        ),
    ],
    ids=["CutMix", "RandomElasticTransform", "CLAHE"],
)
def test_layers_without_box_transform_raise_not_implemented(make):
    with pytest.raises(NotImplementedError, match="bounding_boxes"):
        make(jaxtape.keras.layers)(_data(masks=False))
