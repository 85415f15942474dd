"""`jaxtape.image` against real `tf.image`, one row per case.

Each row is `fn(m, *tensors)` run in `m` (TF or jaxtape) on the same NumPy
inputs: outputs must agree in dtype, shape and value, and (with `grad`) so
must the gradients with respect to every float input of the outputs' sum
times fixed random weights. Some rows also run inside `jaxtape.function`.
Random ops are checked by their properties (shapes, ranges, determinism
under `set_seed` and stateless seeds), not against TF's numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest
from parity_checks import assert_raises_like_tf

import jaxtape

R = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def _no_global_seed_afterwards():
    yield
    jaxtape.random.set_seed(None)  # (the random-op tests set it)


F32, F64, U8 = np.float32, np.float64, np.uint8


def img(*shape, dtype=F32):
    x = R.uniform(0, 1, size=shape)
    if np.dtype(dtype).kind in "iu":
        return (x * 255).astype(dtype)
    return x.astype(dtype)


class Row(NamedTuple):
    fn: Callable[..., Any]
    inputs: tuple
    grad: bool = True
    rtol: float = 1e-5
    atol: float = 1e-5


def row(fn, *inputs, grad=True, rtol=1e-5, atol=1e-5):
    return Row(fn, inputs, grad, rtol, atol)


ROWS: dict[str, Row] = {}

# -- resize: every method, up and down, 3-D and 4-D, uint8 and float ----------------
# (TF has no gradient for ResizeArea; `grad=False` there.)
_X4 = img(2, 9, 13, 3)
_X3 = img(7, 6, 2)
_U8 = img(2, 9, 13, 3, dtype=U8)
for _m in ["bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5",
           "gaussian", "mitchellcubic"]:  # fmt: skip
    for _size in [(4, 5), (17, 29)]:
        ROWS[f"resize_{_m}_{_size[0]}x{_size[1]}"] = row(
            lambda m, x, s=_size, k=_m: m.image.resize(x, s, method=k),
            _X4,
            grad=_m != "area" and _size[0] > 9,  # (one gradient per method)
        )
    ROWS[f"resize_{_m}_antialias"] = row(
        lambda m, x, k=_m: m.image.resize(x, [4, 3], method=k, antialias=True),
        _X3,
        grad=_m != "area",
    )
    ROWS[f"resize_{_m}_uint8"] = row(
        lambda m, x, k=_m: m.image.resize(x, [5, 20], method=k),
        _U8,
        rtol=1e-5,
        atol=1e-3,
    )
# (Inputs of 64 pixels or more use the banded kernels: a gather per tap.)
_BIG = img(1, 70, 90, 2)
for _m, _aa, _g in [("bilinear", False, True), ("bicubic", False, False),
                    ("lanczos3", True, False), ("area", False, False)]:  # fmt: skip
    ROWS[f"resize_{_m}_banded{'_antialias' if _aa else ''}"] = row(
        lambda m, x, k=_m, aa=_aa: (
            m.image.resize(x, [31, 29], k, antialias=aa),
            m.image.resize(x, [150, 200], k, antialias=aa),
        ),
        _BIG,
        grad=_g,
    )
ROWS["resize_preserve_aspect_ratio"] = row(
    lambda m, x: m.image.resize(x, [5, 5], preserve_aspect_ratio=True), _X4
)
ROWS["resize_float64_to_float32"] = row(
    lambda m, x: m.image.resize(x, [3, 3], "bicubic"), img(5, 6, 1, dtype=F64)
)
ROWS["resize_method_enum"] = row(
    lambda m, x: m.image.resize(x, [3, 4], m.image.ResizeMethod.NEAREST_NEIGHBOR), _X3
)
ROWS["resize_with_pad"] = row(lambda m, x: m.image.resize_with_pad(x, 8, 8), _X4)
ROWS["resize_with_pad_nearest"] = row(
    lambda m, x: m.image.resize_with_pad(x, 20, 9, method="nearest"), _U8
)
ROWS["resize_with_crop_or_pad_crop"] = row(
    lambda m, x: m.image.resize_with_crop_or_pad(x, 5, 4), _X4
)
ROWS["resize_with_crop_or_pad_pad"] = row(
    lambda m, x: m.image.resize_with_crop_or_pad(x, 12, 15), _X3
)
ROWS["resize_with_crop_or_pad_mixed"] = row(
    lambda m, x: m.image.resize_with_crop_or_pad(x, 12, 4), _U8
)

# -- geometry ------------------------------------------------------------------------
for _name in ["flip_left_right", "flip_up_down", "transpose"]:
    ROWS[_name] = row(lambda m, x, n=_name: getattr(m.image, n)(x), _X4)
    ROWS[f"{_name}_3d"] = row(lambda m, x, n=_name: getattr(m.image, n)(x), _X3)
for _k in [0, 1, 2, 3, -1, 5]:
    ROWS[f"rot90_k{_k}"] = row(lambda m, x, k=_k: m.image.rot90(x, k), _X4)
ROWS["rot90_3d"] = row(lambda m, x: m.image.rot90(x), _X3)
ROWS["central_crop"] = row(lambda m, x: m.image.central_crop(x, 0.5), _X4)
ROWS["central_crop_3d"] = row(lambda m, x: m.image.central_crop(x, 0.33), _X3)
ROWS["crop_to_bounding_box"] = row(
    lambda m, x: m.image.crop_to_bounding_box(x, 2, 3, 4, 5), _X4
)
ROWS["crop_to_bounding_box_tensor_offsets"] = row(
    lambda m, x: m.image.crop_to_bounding_box(x, m.constant(1), m.constant(2), 3, 4),
    _X3,
)
ROWS["pad_to_bounding_box"] = row(
    lambda m, x: m.image.pad_to_bounding_box(x, 1, 2, 12, 17), _X4
)
ROWS["pad_to_bounding_box_uint8_3d"] = row(
    lambda m, x: m.image.pad_to_bounding_box(x[0], 0, 3, 9, 16), _U8
)
ROWS["extract_patches_valid"] = row(
    lambda m, x: m.image.extract_patches(x, [1, 3, 2, 1], [1, 2, 3, 1], [1, 1, 1, 1],
                                         "VALID"),
    _X4,
)  # fmt: skip
ROWS["extract_patches_same_rates"] = row(
    lambda m, x: m.image.extract_patches(x, [1, 2, 2, 1], [1, 1, 2, 1], [1, 2, 1, 1],
                                         "SAME"),
    _X4,
)  # fmt: skip
ROWS["extract_patches_uint8"] = row(
    lambda m, x: m.image.extract_patches(x, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1],
                                         "VALID"),
    _U8,
)  # fmt: skip
ROWS["image_gradients"] = row(lambda m, x: m.image.image_gradients(x), _X4)
ROWS["sobel_edges"] = row(lambda m, x: m.image.sobel_edges(x), _X4)
ROWS["total_variation"] = row(lambda m, x: m.image.total_variation(x), _X4)
ROWS["total_variation_int32"] = row(
    lambda m, x: m.image.total_variation(x),
    R.integers(0, 9, (2, 5, 6, 3)).astype(np.int32),
)
ROWS["total_variation_3d"] = row(lambda m, x: m.image.total_variation(x), _X3)

# -- dtype conversion ----------------------------------------------------------------
for _src, _dst in [
    ("uint8", "float32"), ("float32", "uint8"), ("uint8", "int32"),
    ("int32", "uint8"), ("uint8", "uint16"), ("float32", "float16"),
    ("uint8", "uint8"), ("uint16", "int8"), ("float64", "uint8"),
]:  # fmt: skip
    _x = (
        img(3, 4, 3, dtype=_src)
        if _src != "int32"
        else R.integers(0, 2**31 - 1, (3, 4, 3)).astype(np.int32)
    )
    ROWS[f"convert_image_dtype_{_src}_{_dst}"] = row(
        lambda m, x, d=_dst: m.image.convert_image_dtype(x, getattr(m, d)), _x
    )
ROWS["convert_image_dtype_saturate"] = row(
    lambda m, x: m.image.convert_image_dtype(x * 2.0 - 0.5, m.uint8, saturate=True),
    img(4, 4, 1),
)

# -- colour --------------------------------------------------------------------------
_RGB = img(2, 6, 7, 3)
_RGB[0, 0, :3] = [[0.5, 0.5, 0.5], [0.2, 0.7, 0.7], [0.9, 0.1, 0.9]]  # ties
_RGB_U8 = img(6, 7, 3, dtype=U8)
ROWS["rgb_to_grayscale"] = row(lambda m, x: m.image.rgb_to_grayscale(x), _RGB)
ROWS["rgb_to_grayscale_uint8"] = row(lambda m, x: m.image.rgb_to_grayscale(x), _RGB_U8)
ROWS["grayscale_to_rgb"] = row(lambda m, x: m.image.grayscale_to_rgb(x), img(5, 4, 1))
ROWS["rgb_to_hsv"] = row(lambda m, x: m.image.rgb_to_hsv(x), img(3, 5, 3))
ROWS["rgb_to_hsv_float64"] = row(
    lambda m, x: m.image.rgb_to_hsv(x), img(3, 5, 3, dtype=F64), grad=False
)
# (TF's gradient of hsv_to_rgb is None; jaxtape's is the kernel's derivative.)
ROWS["hsv_to_rgb"] = row(lambda m, x: m.image.hsv_to_rgb(x), _RGB, grad=False)
for _name in ["rgb_to_yiq", "yiq_to_rgb", "rgb_to_yuv", "yuv_to_rgb"]:
    ROWS[_name] = row(lambda m, x, n=_name: getattr(m.image, n)(x), _RGB)
ROWS["adjust_brightness"] = row(lambda m, x: m.image.adjust_brightness(x, 0.2), _RGB)
ROWS["adjust_brightness_uint8"] = row(
    lambda m, x: m.image.adjust_brightness(x, -0.3), _RGB_U8
)
# (TF has no gradient for AdjustContrastv2, AdjustHue, AdjustSaturation.)
ROWS["adjust_contrast"] = row(
    lambda m, x: m.image.adjust_contrast(x, 1.7), _RGB, grad=False
)
ROWS["adjust_contrast_uint8"] = row(
    lambda m, x: m.image.adjust_contrast(x, 0.6), _RGB_U8
)
ROWS["adjust_gamma"] = row(lambda m, x: m.image.adjust_gamma(x, 0.7, 1.2), _RGB)
ROWS["adjust_gamma_uint8"] = row(lambda m, x: m.image.adjust_gamma(x, 1.7), _RGB_U8)
for _d in [0.3, -0.85]:
    ROWS[f"adjust_hue_{_d}"] = row(
        lambda m, x, d=_d: m.image.adjust_hue(x, d), _RGB, grad=False
    )
ROWS["adjust_hue_uint8"] = row(lambda m, x: m.image.adjust_hue(x, 0.4), _RGB_U8)
for _s in [1.6, 0.3]:
    ROWS[f"adjust_saturation_{_s}"] = row(
        lambda m, x, s=_s: m.image.adjust_saturation(x, s), _RGB, grad=False
    )
ROWS["adjust_saturation_uint8"] = row(
    lambda m, x: m.image.adjust_saturation(x, 2.0), _RGB_U8
)
ROWS["per_image_standardization"] = row(
    lambda m, x: m.image.per_image_standardization(x), _RGB
)
ROWS["per_image_standardization_uint8"] = row(
    lambda m, x: m.image.per_image_standardization(x), _RGB_U8
)
ROWS["per_image_standardization_constant"] = row(
    lambda m, x: m.image.per_image_standardization(x), np.ones((3, 3, 2), F32)
)

# -- quality metrics -----------------------------------------------------------------
_A = img(2, 16, 17, 3)
_B = np.clip(_A + R.normal(0, 0.1, _A.shape), 0, 1).astype(F32)
ROWS["psnr"] = row(lambda m, a, b: m.image.psnr(a, b, 1.0), _A, _B, rtol=1e-4)
ROWS["psnr_uint8"] = row(
    lambda m, a, b: m.image.psnr(a, b, 255),
    (_A * 255).astype(U8),
    (_B * 255).astype(U8),
    rtol=1e-4,
)
ROWS["ssim"] = row(lambda m, a, b: m.image.ssim(a, b, 1.0), _A, _B, rtol=1e-4)
ROWS["ssim_index_map_broadcast"] = row(
    lambda m, a, b: m.image.ssim(a, b, 1.0, filter_size=5, return_index_map=True),
    _A,
    _B[:1],
    grad=False,
    rtol=1e-4,
    atol=1e-4,
)
ROWS["ssim_multiscale"] = row(
    lambda m, a, b: m.image.ssim_multiscale(
        a, b, 1.0, power_factors=(0.3, 0.3, 0.4), filter_size=3
    ),
    _A,
    _B,
    grad=False,  # (its gradient: the ssim row; compiling it is slow)
    rtol=1e-4,
    atol=1e-4,
)
ROWS["ssim_multiscale_default"] = row(
    lambda m, a, b: m.image.ssim_multiscale(a, b, 1.0, filter_size=3),
    np.tile(_A[:1, :, :, :1], (1, 3, 3, 1)),
    np.tile(_B[:1, :, :, :1], (1, 3, 3, 1)),
    grad=False,
    rtol=1e-4,
    atol=1e-5,
)


# -- boxes ---------------------------------------------------------------------------
# (Sample positions between pixels: at exact pixel positions TF's box gradient
# takes another one-sided derivative; nearest rounds .5 ties either way.)
_BOXES = np.asarray(
    [[0.13, 0.21, 0.77, 0.93], [-0.27, 0.11, 1.31, 0.67], [0.83, 0.74, 0.12, 0.26]],
    F32,
)
_IDX = np.asarray([0, 1, 1], np.int32)
ROWS["crop_and_resize"] = row(
    lambda m, x, b: m.image.crop_and_resize(x, b, [1], [5, 4]), _X4, _BOXES[:1]
)
ROWS["crop_and_resize_extrapolate"] = row(
    lambda m, x, b: m.image.crop_and_resize(
        x, b, _IDX, [7, 3], extrapolation_value=-1.0
    ),
    _X4,
    _BOXES,
    grad=False,
)
ROWS["crop_and_resize_image_grad"] = row(
    lambda m, x: m.image.crop_and_resize(x, _BOXES, _IDX, [6, 5]), _X4
)
ROWS["crop_and_resize_nearest_uint8"] = row(
    lambda m, x: m.image.crop_and_resize(x, _BOXES, _IDX, [5, 4], method="nearest"),
    _U8,
)
_B = R.uniform(0, 1, (40, 2))
_NMS_BOXES = np.concatenate([_B, _B + R.uniform(0.05, 0.4, (40, 2))], 1).astype(F32)
_NMS_SCORES = R.uniform(0, 1, 40).astype(F32)
for _t, _st in [(0.5, float("-inf")), (0.3, 0.4)]:
    ROWS[f"non_max_suppression_{_t}_{_st}"] = row(
        lambda m, b, s, t=_t, st=_st: m.image.non_max_suppression(b, s, 10, t, st),
        _NMS_BOXES,
        _NMS_SCORES,
        grad=False,
    )
ROWS["non_max_suppression_padded"] = row(
    lambda m, b, s: m.image.non_max_suppression_padded(
        b, s, 12, 0.3, 0.4, pad_to_max_output_size=True
    ),
    _NMS_BOXES,
    _NMS_SCORES,
    grad=False,
)
for _sigma in [0.0, 0.5]:
    ROWS[f"non_max_suppression_with_scores_{_sigma}"] = row(
        lambda m, b, s, sg=_sigma: m.image.non_max_suppression_with_scores(
            b, s, 10, 0.4, 0.1, soft_nms_sigma=sg
        ),
        _NMS_BOXES,
        _NMS_SCORES,
        grad=False,
    )
ROWS["non_max_suppression_unpadded"] = row(
    lambda m, b, s: m.image.non_max_suppression_padded(b, s, 10, 0.3, 0.4),
    _NMS_BOXES,
    _NMS_SCORES,
    grad=False,
)
ROWS["non_max_suppression_overlaps"] = row(
    lambda m, o, s: m.image.non_max_suppression_overlaps(o, s, 10, 0.6),
    R.uniform(0, 1, (40, 40)).astype(F32),
    _NMS_SCORES,
    grad=False,
)
for _pc in [False, True]:
    for _q in [1, 3]:
        ROWS[f"combined_non_max_suppression_q{_q}_{_pc}"] = row(
            lambda m, b, s, q=_q, pc=_pc: m.image.combined_non_max_suppression(
                b[:, :, :q] * 1.5 - 0.2, s, 4, 7, 0.5, 0.3, pad_per_class=pc
            ),
            np.stack([_NMS_BOXES.reshape(2, 20, 4)] * 3, 2),
            R.uniform(0, 1, (2, 20, 3)).astype(F32),
            grad=False,
        )
_DRAW = np.asarray(
    [[[0.1, 0.2, 0.8, 0.9], [-0.2, 0.1, 1.3, 0.7]],
     [[0.5, 0.5, 0.5, 0.5], [0.9, 0.8, 0.1, 0.2]]],
    F32,
)  # fmt: skip
ROWS["draw_bounding_boxes"] = row(
    lambda m, x: m.image.draw_bounding_boxes(x, _DRAW, None),
    img(2, 9, 11, 3),
    grad=False,
)
ROWS["draw_bounding_boxes_colors"] = row(
    lambda m, x: m.image.draw_bounding_boxes(x, _DRAW, [[0.3, 0.6, 0.9, 1.0]]),
    img(2, 9, 11, 4),
    grad=False,
)
ROWS["draw_bounding_boxes_gray"] = row(
    lambda m, x: m.image.draw_bounding_boxes(x, _DRAW, None),
    img(2, 9, 11, 1, dtype=np.float16),
    grad=False,
)

_GLIMPSE_OFFSETS = np.asarray([[0.0, 0.0], [0.9, -0.8]], F32)
for _c, _n in [(True, True), (False, False), (False, True), (True, False)]:
    ROWS[f"extract_glimpse_zero_{_c}_{_n}"] = row(
        lambda m, x, c=_c, n=_n: m.image.extract_glimpse(
            x, [3, 4], _GLIMPSE_OFFSETS * (1 if n else 3), c, n, noise="zero"
        ),
        img(2, 5, 6, 2),
        grad=False,
    )


# -- the harness ---------------------------------------------------------------------
def _is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f"


def _leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _run(m, r: Row, compiled=False):
    xs = [m.constant(x) for x in r.inputs]
    fn = r.fn
    if compiled:
        fn = m.function(lambda *a: r.fn(m, *a))
    with m.GradientTape() as tape:
        for x in xs:
            if _is_float(x.dtype.name):
                tape.watch(x)
        out = fn(*xs) if compiled else fn(m, *xs)
    leaves = _leaves(out)
    targets = [leaf for leaf in leaves if _is_float(leaf.dtype.name)]
    sources = [x for x in xs if _is_float(x.dtype.name)]
    if not (r.grad and targets and sources):
        return leaves, []
    # The gradient of sum(output * w) for fixed random weights w, per output.
    weights = [
        m.constant(
            np.random.default_rng(k)
            .uniform(0.5, 1.5, tuple(t.shape))
            .astype(t.dtype.name)
        )
        for k, t in enumerate(targets)
    ]
    return leaves, tape.gradient(targets, sources, output_gradients=weights)


def _same(got, want, rtol, atol, what):
    if want is None:
        assert got is None, f"{what}: TF gives None, jaxtape {got!r}"
        return
    assert got is not None, f"{what}: jaxtape gives None, TF {want!r}"
    w, g = np.asarray(want), np.asarray(got)
    assert g.dtype == w.dtype, f"{what}: dtype {g.dtype}, TF {w.dtype}"
    assert g.shape == w.shape, f"{what}: shape {g.shape}, TF {w.shape}"
    if w.dtype.kind == "f":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(g, w, err_msg=what)


@pytest.mark.parametrize("name", list(ROWS))
def test_image_op_and_gradient_match_tensorflow(name, tf):
    r = ROWS[name]
    want, want_grads = _run(tf, r)
    got, got_grads = _run(jaxtape, r)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        _same(g, w, r.rtol, r.atol, f"{name} output {k}")
    for k, (g, w) in enumerate(zip(got_grads, want_grads)):
        _same(g, w, max(r.rtol, 1e-4), max(r.atol, 1e-4), f"{name} gradient {k}")


COMPILED = [
    "resize_bilinear_17x29",
    "resize_nearest_4x5",
    "crop_to_bounding_box_tensor_offsets",
    "adjust_saturation_uint8",
    "convert_image_dtype_float32_uint8",
    "non_max_suppression_padded",
    "draw_bounding_boxes",
]


@pytest.mark.parametrize("name", COMPILED)
def test_image_op_inside_function_matches_tensorflow(name, tf):
    r = ROWS[name]
    want, want_grads = _run(tf, r)
    got, got_grads = _run(jaxtape, r, compiled=True)
    for k, (g, w) in enumerate(zip(got, want)):
        _same(g, w, r.rtol, r.atol, f"{name} output {k}")
    for k, (g, w) in enumerate(zip(got_grads, want_grads)):
        _same(g, w, max(r.rtol, 1e-4), max(r.atol, 1e-4), f"{name} gradient {k}")


# -- bad input -----------------------------------------------------------------------
ERRORS: dict[str, tuple[Callable, tuple]] = {
    "resize_rank_2": (lambda m, x: m.image.resize(x, [2, 2]), (img(5, 7),)),
    "resize_size_3": (lambda m, x: m.image.resize(x, [2, 2, 3]), (_X3,)),
    "resize_unknown_method": (lambda m, x: m.image.resize(x, [2, 2], "foo"), (_X3,)),
    "flip_rank_5": (lambda m, x: m.image.flip_left_right(x), (img(1, 2, 3, 4, 1),)),
    "flip_rank_2": (lambda m, x: m.image.flip_up_down(x), (img(3, 4),)),
    "crop_too_big": (
        lambda m, x: m.image.crop_to_bounding_box(x, 3, 0, 5, 2),
        (_X3,),
    ),
    "crop_negative_offset": (
        lambda m, x: m.image.crop_to_bounding_box(x, -1, 0, 2, 2),
        (_X3,),
    ),
    "crop_tensor_offset_too_big": (
        lambda m, x: m.image.crop_to_bounding_box(x, m.constant(4), 0, 5, 2),
        (_X3,),
    ),
    "pad_too_small": (lambda m, x: m.image.pad_to_bounding_box(x, 0, 0, 5, 9), (_X3,)),
    "central_crop_fraction": (lambda m, x: m.image.central_crop(x, 1.5), (_X3,)),
    "resize_with_crop_or_pad_zero": (
        lambda m, x: m.image.resize_with_crop_or_pad(x, 0, 3),
        (_X3,),
    ),
    "grayscale_to_rgb_channels": (
        lambda m, x: m.image.grayscale_to_rgb(x),
        (img(4, 4, 2),),
    ),
    "adjust_hue_delta": (lambda m, x: m.image.adjust_hue(x, 1.5), (_RGB,)),
    "adjust_hue_channels": (lambda m, x: m.image.adjust_hue(x, 0.1), (img(3, 3, 2),)),
    "adjust_gamma_negative": (lambda m, x: m.image.adjust_gamma(x, -1.0), (_RGB,)),
    "rgb_to_hsv_channels": (lambda m, x: m.image.rgb_to_hsv(x), (img(3, 3, 4),)),
    "rgb_to_hsv_uint8": (lambda m, x: m.image.rgb_to_hsv(x), (_RGB_U8,)),
    "image_gradients_rank_3": (lambda m, x: m.image.image_gradients(x), (_X3,)),
    "total_variation_uint8": (lambda m, x: m.image.total_variation(x), (_U8,)),
    "total_variation_rank_2": (lambda m, x: m.image.total_variation(x), (img(3, 3),)),
    "ssim_shapes": (lambda m, a, b: m.image.ssim(a, b, 1.0), (_A, _A[:, :8])),
    "ssim_too_small": (lambda m, a: m.image.ssim(a, a, 1.0), (img(5, 5, 1),)),
    "psnr_rank_2": (lambda m, a: m.image.psnr(a, a, 1.0), (img(5, 5),)),
    "random_brightness_negative": (
        lambda m, x: m.image.random_brightness(x, -0.1),
        (_RGB,),
    ),
    "random_contrast_range": (
        lambda m, x: m.image.random_contrast(x, 0.5, 0.2),
        (_RGB,),
    ),
    "random_hue_delta": (lambda m, x: m.image.random_hue(x, 0.7), (_RGB,)),
    "random_crop_too_big": (lambda m, x: m.image.random_crop(x, [8, 2, 2]), (_X3,)),
    "resize_negative_size": (lambda m, x: m.image.resize(x, [-2, 3]), (_X3,)),
    "resize_zero_size": (lambda m, x: m.image.resize(x, [0, 3], "lanczos3"), (_X3,)),
    "rot90_float_k": (lambda m, x: m.image.rot90(x, 1.0), (_X3,)),
    "extract_patches_rank_3": (
        lambda m, x: m.image.extract_patches(
            x, [1, 2, 2, 1], [1] * 4, [1] * 4, "VALID"
        ),
        (_X3,),
    ),
    "extract_patches_padding": (
        lambda m, x: m.image.extract_patches(x, [1, 2, 2, 1], [1] * 4, [1] * 4, "FOO"),
        (_X4,),
    ),
    "stateless_seed_shape": (
        lambda m, x: m.image.stateless_random_flip_left_right(x, seed=[1, 2, 3]),
        (_X3,),
    ),
    "adjust_contrast_rank_2": (
        lambda m, x: m.image.adjust_contrast(x, 2.0),
        (img(4, 3),),
    ),
    "adjust_gamma_negative_tensor": (
        lambda m, x: m.image.adjust_gamma(x, m.constant(-1.0)),
        (_RGB,),
    ),
    "pad_tensor_offset_too_big": (
        lambda m, x: m.image.pad_to_bounding_box(x, m.constant(5), 0, 9, 9),
        (_X3,),
    ),
    "crop_and_resize_zero_crop": (
        lambda m, x: m.image.crop_and_resize(x, _BOXES[:1], [0], [0, 2]),
        (_X4,),
    ),
    "draw_bounding_boxes_few_color_channels": (
        lambda m, x: m.image.draw_bounding_boxes(x, _DRAW, [[1.0, 0.0]]),
        (img(2, 9, 11, 3),),
    ),
    "non_max_suppression_negative_size": (
        lambda m, b: m.image.non_max_suppression(b, b[:, 0], -1),
        (_NMS_BOXES,),
    ),
    "crop_and_resize_box_index": (
        lambda m, x: m.image.crop_and_resize(x, _BOXES[:1], [5], [2, 2]),
        (_X4,),
    ),
    "crop_and_resize_rank_3": (
        lambda m, x: m.image.crop_and_resize(x, _BOXES[:1], [0], [2, 2]),
        (_X3,),
    ),
    "non_max_suppression_scores_shape": (
        lambda m, b: m.image.non_max_suppression(b, b[:, 0][:5], 3),
        (_NMS_BOXES,),
    ),
    "non_max_suppression_iou_range": (
        lambda m, b: m.image.non_max_suppression(b, b[:, 0], 3, 1.5),
        (_NMS_BOXES,),
    ),
    "draw_bounding_boxes_uint8": (
        lambda m, x: m.image.draw_bounding_boxes(x, _DRAW, None),
        (img(2, 9, 11, 1, dtype=U8),),
    ),
    "draw_bounding_boxes_rank_3": (
        lambda m, x: m.image.draw_bounding_boxes(x, _DRAW[:1], None),
        (_X3,),
    ),
    "combined_non_max_suppression_q": (
        lambda m, b: m.image.combined_non_max_suppression(
            m.reshape(b, [2, 10, 2, 4]), m.ones([2, 10, 3]), 2, 3
        ),
        (_NMS_BOXES,),
    ),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_image_input_raises_tensorflows_error_type(name, tf):
    fn, inputs = ERRORS[name]
    assert_raises_like_tf(tf, lambda m: fn(m, *[m.constant(x) for x in inputs]))


# -- random ops: properties ----------------------------------------------------------
_RANDOM = {
    "random_flip_left_right": lambda x, s: jaxtape.image.random_flip_left_right(x, s),
    "random_flip_up_down": lambda x, s: jaxtape.image.random_flip_up_down(x, s),
    "random_crop": lambda x, s: jaxtape.image.random_crop(x, [2, 3, 4, 3], s),
    "random_brightness": lambda x, s: jaxtape.image.random_brightness(x, 0.3, s),
    "random_contrast": lambda x, s: jaxtape.image.random_contrast(x, 0.2, 1.8, s),
    "random_hue": lambda x, s: jaxtape.image.random_hue(x, 0.4, s),
    "random_saturation": lambda x, s: jaxtape.image.random_saturation(x, 0.2, 3.0, s),
}


@pytest.mark.parametrize("name", list(_RANDOM))
def test_random_image_op_follows_set_seed(name):
    fn = _RANDOM[name]
    x = jaxtape.constant(img(4, 5, 6, 3))
    runs = []
    for _ in range(2):
        jaxtape.random.set_seed(3)
        runs.append([fn(x, None).numpy(), fn(x, 7).numpy(), fn(x, None).numpy()])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)  # the same sequence after set_seed
    first, _, second = runs[0]
    assert first.dtype == np.float32
    assert not np.array_equal(first, second) or name.startswith("random_flip")


def test_random_flips_flip_some_images_and_keep_the_others():
    x = jaxtape.constant(img(64, 3, 4, 1))
    jaxtape.random.set_seed(0)
    out = jaxtape.image.random_flip_left_right(x).numpy()
    flipped = [np.array_equal(o, xi[:, ::-1]) for o, xi in zip(out, x.numpy())]
    kept = [np.array_equal(o, xi) for o, xi in zip(out, x.numpy())]
    assert all(f or k for f, k in zip(flipped, kept))
    assert 10 < sum(flipped) < 54  # per-image coin flips (TF's rank-4 rule)


def test_random_crop_is_a_block_of_the_input():
    x = np.arange(6 * 7 * 2, dtype=np.int32).reshape(6, 7, 2)
    jaxtape.random.set_seed(1)
    seen = set()
    for _ in range(20):
        out = jaxtape.image.random_crop(x, [3, 4, 2]).numpy()
        r, c = np.argwhere(x[..., 0] == out[0, 0, 0])[0]
        np.testing.assert_array_equal(out, x[r : r + 3, c : c + 4])
        seen.add((r, c))
    assert len(seen) > 3


def test_random_colour_ops_stay_in_range():
    x = jaxtape.constant(img(4, 6, 6, 3, dtype=U8))
    jaxtape.random.set_seed(2)
    for out in [
        jaxtape.image.random_brightness(x, 0.5),
        jaxtape.image.random_contrast(x, 0.1, 3.0),
        jaxtape.image.random_hue(x, 0.5),
        jaxtape.image.random_saturation(x, 0.0, 5.0),
    ]:
        assert out.dtype == jaxtape.uint8 and out.shape == x.shape


_STATELESS = {
    "flip_left_right": lambda x, s: jaxtape.image.stateless_random_flip_left_right(
        x, s
    ),
    "flip_up_down": lambda x, s: jaxtape.image.stateless_random_flip_up_down(x, s),
    "crop": lambda x, s: jaxtape.image.stateless_random_crop(x, [2, 3, 4, 3], s),
    "brightness": lambda x, s: jaxtape.image.stateless_random_brightness(x, 0.3, s),
    "contrast": lambda x, s: jaxtape.image.stateless_random_contrast(x, 0.2, 1.8, s),
    "hue": lambda x, s: jaxtape.image.stateless_random_hue(x, 0.4, s),
    "saturation": lambda x, s: jaxtape.image.stateless_random_saturation(
        x, 0.2, 3.0, s
    ),
}


@pytest.mark.parametrize("name", list(_STATELESS))
def test_stateless_random_image_op_depends_on_its_seed_only(name):
    fn = _STATELESS[name]
    x = jaxtape.constant(img(4, 5, 6, 3))
    a = fn(x, (1, 2)).numpy()
    jaxtape.random.set_seed(123)  # the global seed does not matter
    np.testing.assert_array_equal(fn(x, (1, 2)).numpy(), a)
    if name in ("flip_left_right", "hue"):
        compiled = jaxtape.function(fn)
        got = compiled(x, jaxtape.constant([1, 2])).numpy()
        np.testing.assert_allclose(got, a, rtol=1e-6, atol=1e-6)
    others = [fn(x, (s, 9)).numpy() for s in range(6)]
    assert any(not np.array_equal(o, a) for o in others)


def test_random_image_ops_differ_between_compiled_calls():
    x = jaxtape.constant(img(2, 5, 6, 3))
    step = jaxtape.function(lambda x: jaxtape.image.random_brightness(x, 0.5))
    jaxtape.random.set_seed(5)
    a, b = step(x).numpy(), step(x).numpy()
    assert not np.array_equal(a, b)
    jaxtape.random.set_seed(5)
    np.testing.assert_array_equal(step(x).numpy(), a)


def test_random_crop_gradient_flows_to_the_cropped_block():
    x = jaxtape.constant(img(6, 7, 2))
    with jaxtape.GradientTape() as tape:
        tape.watch(x)
        y = jaxtape.reduce_sum(jaxtape.image.random_crop(x, [3, 4, 2], seed=4))
    g = tape.gradient(y, x).numpy()
    assert g.sum() == 3 * 4 * 2 and set(np.unique(g)) <= {0.0, 1.0}


def test_sample_distorted_bounding_box_covers_the_object_inside_the_image():
    obj = [0.1, 0.2, 0.5, 0.6]
    jaxtape.random.set_seed(4)
    crops = set()
    for _ in range(12):
        begin, size, box = jaxtape.image.sample_distorted_bounding_box(
            [100, 120, 3], [[obj]], min_object_covered=0.3, area_range=(0.1, 1.0)
        )
        (y, x, z), (h, w, c) = begin.numpy(), size.numpy()
        assert (z, c) == (0, -1) and begin.dtype == jaxtape.int32
        assert 0 <= y and y + h <= 100 and 0 <= x and x + w <= 120
        np.testing.assert_allclose(
            box.numpy(), [[[y / 100, x / 120, (y + h) / 100, (x + w) / 120]]], 1e-6
        )
        ih = max(0, min(y + h, 50) - max(y, 10))
        iw = max(0, min(x + w, 72) - max(x, 24))
        assert ih * iw / (40 * 48) >= 0.3
        assert 0.75 * 0.9 <= w / h <= 1.33 * 1.1
        crops.add((y, x, h, w))
    assert len(crops) > 3
    again = jaxtape.image.stateless_sample_distorted_bounding_box(
        [100, 120, 3], [[obj]], seed=(3, 4)
    )
    same = jaxtape.image.stateless_sample_distorted_bounding_box(
        [100, 120, 3], [[obj]], seed=(3, 4)
    )
    for a, b in zip(again, same):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_sample_distorted_bounding_box_without_boxes_raises_as_tensorflow(tf):
    for m in (tf, jaxtape):
        err = (
            tf.errors.InvalidArgumentError if m is tf else m.errors.InvalidArgumentError
        )
        with pytest.raises(err):
            m.image.sample_distorted_bounding_box(
                m.constant([10, 10, 3]), m.zeros([1, 0, 4]), seed=1
            )
    begin, size, _ = jaxtape.image.sample_distorted_bounding_box(
        [10, 10, 3], jaxtape.zeros([1, 0, 4]), use_image_if_no_bounding_boxes=True
    )
    assert begin.shape == (3,) and size.shape == (3,)


def test_extract_glimpse_fills_outside_with_noise_in_the_image_range():
    x = jaxtape.constant(img(2, 5, 6, 2) + 3.0)
    jaxtape.random.set_seed(0)
    out = jaxtape.image.extract_glimpse(x, [4, 5], [[1.0, 2.0], [0.0, 0.0]]).numpy()
    assert out.shape == (2, 4, 5, 2)
    lo, hi = x.numpy().min(axis=(1, 2)), x.numpy().max(axis=(1, 2))
    assert np.all(out[0] >= lo[0]) and np.all(out[0] <= hi[0])
    np.testing.assert_array_equal(out[1], x.numpy()[1, 0:4, 0:5])
