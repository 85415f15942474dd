"""Keras 3's bounding-box utilities (`keras.utils.bounding_boxes`: format
conversion, clipping, affine transforms, crops and pads, anchor deltas, IoU
and CIoU) and the box transforms the image preprocessing layers share.
Layer L5.

Boxes are `(..., N, 4)` arrays in one of `SUPPORTED_FORMATS`; a dict input
is `{"boxes": ..., "labels": ...}` (labels `(..., N)`). Every public function
is one jitted op on pure `jnp` bodies, so it runs eagerly, inside
`jaxtape.function` and on a `GradientTape` (CIoU as a loss).
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import config, dtypes, errors
from jaxtape._src.core.dispatch import op
from jaxtape._src.ops import math_ops

__all__ = [
    "affine_transform",
    "clip_to_image_size",
    "compute_ciou",
    "compute_iou",
    "convert_format",
    "crop",
    "decode_deltas_to_boxes",
    "encode_box_to_deltas",
    "pad",
]

SUPPORTED_FORMATS = (
    "xyxy",
    "yxyx",
    "xywh",
    "center_xywh",
    "center_yxhw",
    "rel_xyxy",
    "rel_yxyx",
    "rel_xywh",
    "rel_center_xywh",
)


# -- pure bodies: format conversion ----------------------------------------------------
def _split(b):
    return b[..., 0:1], b[..., 1:2], b[..., 2:3], b[..., 3:4]


def _cat(*parts):
    return jnp.concatenate(parts, axis=-1)


def _to_xyxy(b, h, w, fmt):
    """Keras's `_<fmt>_to_xyxy` converters."""
    p, q, r, s = _split(b)
    if fmt == "xyxy":
        return b
    if fmt == "yxyx":
        return _cat(q, p, s, r)
    if fmt == "xywh":
        return _cat(p, q, p + r, q + s)
    if fmt == "center_xywh":
        return _cat(p - r / 2.0, q - s / 2.0, p + r / 2.0, q + s / 2.0)
    if fmt == "center_yxhw":
        return _cat(q - s / 2.0, p - r / 2.0, q + s / 2.0, p + r / 2.0)
    if fmt == "rel_xyxy":
        return _cat(p * w, q * h, r * w, s * h)
    if fmt == "rel_yxyx":
        return _cat(q * w, p * h, s * w, r * h)
    if fmt == "rel_xywh":
        return _cat(p * w, q * h, (p + r) * w, (q + s) * h)
    # rel_center_xywh
    return _cat(
        (p - r / 2.0) * w, (q - s / 2.0) * h, (p + r / 2.0) * w, (q + s / 2.0) * h
    )


def _from_xyxy(b, h, w, fmt):
    """Keras's `_xyxy_to_<fmt>` converters."""
    x1, y1, x2, y2 = _split(b)
    if fmt == "xyxy":
        return b
    if fmt == "yxyx":
        return _cat(y1, x1, y2, x2)
    if fmt == "xywh":
        return _cat(x1, y1, x2 - x1, y2 - y1)
    if fmt == "center_xywh":
        return _cat(x1 + (x2 - x1) / 2.0, y1 + (y2 - y1) / 2.0, x2 - x1, y2 - y1)
    if fmt == "center_yxhw":
        return _cat(y1 + (y2 - y1) / 2.0, x1 + (x2 - x1) / 2.0, y2 - y1, x2 - x1)
    if fmt == "rel_xyxy":
        return _cat(x1 / w, y1 / h, x2 / w, y2 / h)
    if fmt == "rel_yxyx":
        return _cat(y1 / h, x1 / w, y2 / h, x2 / w)
    if fmt == "rel_xywh":
        return _cat(x1 / w, y1 / h, (x2 - x1) / w, (y2 - y1) / h)
    # rel_center_xywh
    return _cat(
        (x1 + (x2 - x1) / 2.0) / w,
        (y1 + (y2 - y1) / 2.0) / h,
        (x2 - x1) / w,
        (y2 - y1) / h,
    )


def convert_body(b, h, w, source, target):
    """Keras's `BoundingBox.convert_format` on arrays (formats checked)."""
    if source == target:
        return b
    if source.startswith("rel_") and target.startswith("rel_"):
        source, target = source[4:], target[4:]
    return _from_xyxy(_to_xyxy(b, h, w, source), h, w, target)


def clip_body(b, labels, h, w):
    """Keras's `clip_to_image_size` on xyxy arrays: coordinates clipped to
    `[0, w] x [0, h]`; labels of boxes left with no area become -1."""
    x1, y1, x2, y2 = _split(b)
    b = _cat(jnp.clip(x1, 0, w), jnp.clip(y1, 0, h), jnp.clip(x2, 0, w),
             jnp.clip(y2, 0, h))  # fmt: skip
    if labels is None:
        return b, None
    area = (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
    return b, jnp.where(area > 0, labels, jnp.asarray(-1, labels.dtype))


# -- public: convert_format / clip_to_image_size ---------------------------------------
def _np_dtype(dtype):
    return dtypes.np_dtype(dtype)


def _check_format(source, target, height, width):
    if source not in SUPPORTED_FORMATS or target not in SUPPORTED_FORMATS:
        raise ValueError(
            f"Invalid source or target format. Supported formats: {SUPPORTED_FORMATS}"
        )
    if (source.startswith("rel_") or target.startswith("rel_")) and (
        width is None or height is None
    ):
        raise ValueError(
            "convert_format() must receive `height` and `width` "
            "transforming between relative and absolute formats."
            f"convert_format() received source=`{source}`, "
            f"target=`{target}, "
            f"but height={height} and width={width}."
        )


@op("ConvertBoxFormat", inputs=("boxes", "height", "width"), jit=True)
def _convert_op(boxes, height, width, source, target):
    return convert_body(boxes, height, width, source, target)


def convert_format(boxes, source, target, height=None, width=None, dtype="float32"):
    """Converts bounding boxes between formats (Keras's
    `keras.utils.bounding_boxes.convert_format`).

    Formats (case-insensitive): `xyxy`, `yxyx`, `xywh`, `center_xywh`,
    `center_yxhw` and the relative `rel_xyxy`, `rel_yxyx`, `rel_xywh`,
    `rel_center_xywh` (which need `height` and `width`, numbers or arrays
    broadcasting against the boxes). `boxes` is an array `(..., 4)` or a dict
    with `"boxes"`; the boxes are cast to `dtype`.

    >>> convert_format([[10., 20., 30., 40.]], "xyxy", "xywh").numpy()
    array([[10., 20., 20., 20.]], dtype=float32)

    Differences from Keras: a dict input is copied, not updated in place.
    """
    if isinstance(boxes, dict):
        out = dict(boxes)
        out["boxes"] = convert_format(
            boxes["boxes"], source, target, height=height, width=width, dtype=dtype
        )
        return out
    shape = tuple(np.shape(boxes)) if not hasattr(boxes, "shape") else boxes.shape
    if not shape or shape[-1] != 4:
        raise ValueError(
            "`boxes` must be a tensor with the last dimension of 4. "
            f"Received: boxes.shape={tuple(shape)}"
        )
    source, target = source.lower(), target.lower()
    _check_format(source, target, height, width)
    dt = _np_dtype(dtype)
    boxes = math_ops.cast(boxes, dt)
    if source == target:
        return boxes
    h = math_ops.cast(1.0 if height is None else height, dt)
    w = math_ops.cast(1.0 if width is None else width, dt)
    return _convert_op(boxes, h, w, source, target)


@op("ClipBoxes", inputs=("boxes", "labels", "height", "width"), jit=True)
def _clip_op(boxes, labels, height, width):
    return clip_body(boxes, labels, height, width)


@op("ClipBoxesNoLabels", inputs=("boxes", "height", "width"), jit=True)
def _clip_boxes_op(boxes, height, width):
    return clip_body(boxes, None, height, width)[0]


def clip_to_image_size(bounding_boxes, height=None, width=None,
                       bounding_box_format="xyxy"):  # fmt: skip
    """Clips boxes to the image (Keras's
    `keras.utils.bounding_boxes.clip_to_image_size`): `bounding_boxes` a dict
    with `"boxes"` (and `"labels"`, set to -1 where a clipped box has no
    area); `xyxy` boxes are clipped to `[0, width] x [0, height]`,
    `rel_xyxy` boxes to `[0, 1]`. Other formats raise NotImplementedError,
    as Keras.

    Differences from Keras: None known.
    """
    if bounding_box_format not in ("xyxy", "rel_xyxy"):
        raise NotImplementedError(
            "clip_to_image_size supports bounding_box_format 'xyxy' and "
            f"'rel_xyxy' (as Keras). Received: {bounding_box_format!r}"
        )
    if bounding_box_format == "xyxy" and (height is None or width is None):
        raise ValueError("`height` and `width` must be set if `format='xyxy'`.")
    boxes = bounding_boxes["boxes"]
    boxes = boxes if hasattr(boxes, "dtype") else math_ops.cast(boxes, "float32")
    labels = bounding_boxes.get("labels", None)
    dt = dtypes.np_dtype(boxes.dtype)
    if bounding_box_format == "rel_xyxy" or height is None or width is None:
        height = width = 1.0
    h, w = math_ops.cast(height, dt), math_ops.cast(width, dt)
    result = dict(bounding_boxes)
    if labels is None:
        result["boxes"] = _clip_boxes_op(boxes, h, w)
    else:
        result["boxes"], result["labels"] = _clip_op(boxes, labels, h, w)
    return result


# -- public: affine_transform / crop / pad ---------------------------------------------
def _inverse_affine(cx_frac, cy_frac, angle, tx, ty, scale, shear_x, shear_y, h, w):
    """Keras's `_compute_inverse_affine_matrix`: `(B, 3, 3)`."""
    angle, shear_x, shear_y = -angle, -shear_x, -shear_y
    cx = cx_frac * (w - 1)
    cy = cy_frac * (h - 1)
    rot = angle * (1.0 / 180.0 * math.pi)
    tx = -tx * (w - 1)
    ty = -ty * (h - 1)
    sx = shear_x * (1.0 / 180.0 * math.pi)
    sy = shear_y * (1.0 / 180.0 * math.pi)
    cos_sy, tan_sx = jnp.cos(sy), jnp.tan(sx)
    rot_minus_sy = rot - sy
    cx_plus_tx, cy_plus_ty = cx + tx, cy + ty
    a = jnp.cos(rot_minus_sy) / cos_sy
    b = a * tan_sx + jnp.sin(rot)
    c = -jnp.sin(rot_minus_sy) / cos_sy
    d = jnp.cos(rot) - c * tan_sx
    a0, a1, b0, b1 = d * scale, -b * scale, -c * scale, a * scale
    a2 = cx - a0 * cx_plus_tx - a1 * cy_plus_ty
    b2 = cy - b0 * cx_plus_tx - b1 * cy_plus_ty
    zeros, ones = jnp.zeros_like(a0), jnp.ones_like(a0)
    m = jnp.stack([a0, a1, a2, b0, b1, b2, zeros, zeros, ones], axis=-1)
    return m.reshape((-1, 3, 3))


def corners_through(boxes, matrix):
    """The xyxy hull of each box's four corners mapped by the `(B, 2, 3)`
    matrices (`(x, y) -> matrix @ (x, y, 1)`); boxes `(B, N, 4)`."""
    x1, y1, x2, y2 = (boxes[..., i] for i in range(4))
    pts = jnp.stack(
        [jnp.stack(p, axis=-1) for p in ((x1, y1), (x2, y1), (x2, y2), (x1, y2))],
        axis=2,
    )  # (B, N, 4, 2)
    pts = jnp.concatenate([pts, jnp.ones(pts.shape[:-1] + (1,), pts.dtype)], axis=-1)
    out = jnp.einsum("bnxy,bzy->bnxz", pts, matrix.astype(pts.dtype))
    return jnp.concatenate([jnp.min(out, axis=2), jnp.max(out, axis=2)], axis=-1)


@op(
    "AffineTransformBoxes",
    inputs=("boxes", "angle", "translate_x", "translate_y", "scale", "shear_x",
            "shear_y", "height", "width", "center_x", "center_y"),
    jit=True,
)  # fmt: skip
def _affine_op(boxes, angle, translate_x, translate_y, scale, shear_x, shear_y,
               height, width, center_x, center_y):  # fmt: skip
    m = _inverse_affine(center_x, center_y, angle, translate_x, translate_y, scale,
                        shear_x, shear_y, height, width)  # fmt: skip
    return corners_through(boxes.astype(m.dtype), m[:, :2, :])


def affine_transform(boxes, angle, translate_x, translate_y, scale, shear_x,
                     shear_y, height, width, center_x=None, center_y=None,
                     bounding_box_format="xyxy"):  # fmt: skip
    """Maps `(batch, N, 4)` xyxy boxes through an affine transform (Keras's
    `keras.utils.bounding_boxes.affine_transform`): per-image `angle` and
    shears in degrees, translations as fractions of `width - 1` / `height -
    1`, `scale`, about the centre `(center_x, center_y)` (fractions, default
    0.5); each box becomes the hull of its transformed corners, in the dtype
    of `angle`. Formats other than `xyxy` raise NotImplementedError, as Keras.

    Differences from Keras: None known.
    """
    if bounding_box_format != "xyxy":
        raise NotImplementedError(
            "affine_transform supports bounding_box_format='xyxy' only (as Keras). "
            f"Received: {bounding_box_format!r}"
        )
    angle = math_ops.cast(angle, "float32") if not hasattr(angle, "dtype") else angle
    dt = dtypes.np_dtype(angle.dtype)

    def arr(v, default):
        return math_ops.cast(default if v is None else v, dt)

    return _affine_op(
        math_ops.cast(boxes, dt), angle, arr(translate_x, 0), arr(translate_y, 0),
        arr(scale, 1), arr(shear_x, 0), arr(shear_y, 0), arr(height, 0),
        arr(width, 0), arr(center_x, 0.5), arr(center_y, 0.5),
    )  # fmt: skip


@op("CropBoxes", inputs=("boxes", "top", "left", "height", "width"), jit=True)
def _crop_op(boxes, top, left, height, width):
    x1, y1, x2, y2 = _split(boxes)
    return _cat(
        jnp.clip(x1 - left, 0, width),
        jnp.clip(y1 - top, 0, height),
        jnp.clip(x2 - left, 0, width),
        jnp.clip(y2 - top, 0, height),
    )


def _as_tensor(boxes):
    if hasattr(boxes, "dtype"):
        return boxes
    return math_ops.cast(boxes, np.asarray(boxes).dtype)


def crop(boxes, top, left, height, width, bounding_box_format="xyxy"):
    """Crops xyxy boxes to the window `(top, left, height, width)` (Keras's
    `keras.utils.bounding_boxes.crop`): shifted by the offsets and clipped
    to `[0, width] x [0, height]`. Other formats raise NotImplementedError.

    Differences from Keras: None known.
    """
    if bounding_box_format != "xyxy":
        raise NotImplementedError(
            "crop supports bounding_box_format='xyxy' only (as Keras). "
            f"Received: {bounding_box_format!r}"
        )
    boxes = _as_tensor(boxes)
    dt = dtypes.np_dtype(boxes.dtype)
    args = (math_ops.cast(v, dt) for v in (top, left, height, width))
    return _crop_op(boxes, *args)


@op("PadBoxes", inputs=("boxes", "top", "left"), jit=True)
def _pad_op(boxes, top, left):
    x1, y1, x2, y2 = _split(boxes)
    return _cat(x1 + left, y1 + top, x2 + left, y2 + top)


def pad(boxes, top, left, height=None, width=None, bounding_box_format="xyxy"):
    """Shifts xyxy boxes by the padding `top` and `left` (Keras's
    `keras.utils.bounding_boxes.pad`). `height` and `width` are accepted and
    unused, as in Keras. Other formats raise NotImplementedError.

    Differences from Keras: None known.
    """
    del height, width  # (Keras's signature; its body does not read them)
    if bounding_box_format != "xyxy":
        raise NotImplementedError(
            "pad supports bounding_box_format='xyxy' only (as Keras). "
            f"Received: {bounding_box_format!r}"
        )
    boxes = _as_tensor(boxes)
    dt = dtypes.np_dtype(boxes.dtype)
    return _pad_op(boxes, math_ops.cast(top, dt), math_ops.cast(left, dt))


# -- public: anchor deltas -------------------------------------------------------------
def _variance(variance):
    if variance is None:
        return None
    v = np.asarray(variance, np.float32)
    if v.shape[-1] != 4:
        raise ValueError(f"`variance` must be length 4, got {variance}")
    return tuple(float(x) for x in v.reshape(-1))


def _hw(image_shape):
    if image_shape is None:
        return None, None
    height, width, _ = image_shape
    return height, width


@op("EncodeBoxDeltas", inputs=("anchors", "boxes"), jit=True)
def _encode_op(anchors, boxes, variance, eps):
    anchor_dims = jnp.maximum(anchors[..., 2:], eps)
    box_dims = jnp.maximum(boxes[..., 2:], eps)
    delta = jnp.concatenate(
        [(boxes[..., :2] - anchors[..., :2]) / anchor_dims,
         jnp.log(box_dims / anchor_dims)],
        axis=-1,
    )  # fmt: skip
    if variance is not None:
        delta = delta / jnp.asarray(variance, delta.dtype)
    return delta


def encode_box_to_deltas(anchors, boxes, anchor_format, box_format,
                         encoding_format="center_yxhw", variance=None,
                         image_shape=None):  # fmt: skip
    """Encodes boxes as deltas from anchors (Keras's
    `keras.utils.bounding_boxes.encode_box_to_deltas`): both converted to
    `encoding_format` (`center_yxhw` or `center_xywh`), centre offsets over
    the anchor sizes and log size ratios, divided by `variance` if given.

    Differences from Keras: None known.
    """
    variance = _variance(variance)
    if encoding_format not in ["center_xywh", "center_yxhw"]:
        raise ValueError(
            "`encoding_format` should be one of 'center_xywh' or "
            f"'center_yxhw', got {encoding_format}"
        )
    height, width = _hw(image_shape)
    a = convert_format(anchors, anchor_format, encoding_format, height, width)
    b = convert_format(boxes, box_format, encoding_format, height, width)
    return _encode_op(a, b, variance, float(config.epsilon()))


@op("DecodeBoxDeltas", inputs=("anchors", "deltas"), jit=True)
def _decode_op(anchors, deltas, variance):
    if variance is not None:
        deltas = deltas * jnp.asarray(variance, deltas.dtype)
    return jnp.concatenate(
        [deltas[..., :2] * anchors[..., 2:] + anchors[..., :2],
         jnp.exp(deltas[..., 2:]) * anchors[..., 2:]],
        axis=-1,
    )  # fmt: skip


def decode_deltas_to_boxes(anchors, boxes_delta, anchor_format, box_format,
                           encoded_format="center_yxhw", variance=None,
                           image_shape=None):  # fmt: skip
    """Decodes deltas from anchors back to boxes in `box_format` (Keras's
    `keras.utils.bounding_boxes.decode_deltas_to_boxes`, the inverse of
    `encode_box_to_deltas`); dicts of levels decode level by level.

    Differences from Keras: None known.
    """
    variance = _variance(variance)
    if encoded_format not in ["center_xywh", "center_yxhw"]:
        raise ValueError(
            f"`encoded_format` should be 'center_xywh' or 'center_yxhw', "
            f"but got '{encoded_format}'."
        )
    height, width = _hw(image_shape)

    def one(anchor, delta):
        a = convert_format(anchor, anchor_format, encoded_format, height, width)
        box = _decode_op(a, math_ops.cast(delta, "float32"), variance)
        return convert_format(box, encoded_format, box_format, height, width)

    if isinstance(anchors, dict) and isinstance(boxes_delta, dict):
        return {lvl: one(a, boxes_delta[lvl]) for lvl, a in anchors.items()}
    return one(anchors, boxes_delta)


# -- public: IoU / CIoU ----------------------------------------------------------------
def _rank(x) -> int:
    return len(x.shape) if hasattr(x, "shape") else np.ndim(x)


@op("BoxIoU", inputs=("boxes1", "boxes2"), jit=True)
def _iou_op(boxes1, boxes2, use_masking, mask_val, eps):
    """Keras's `compute_iou` on yxyx boxes."""
    perm2 = (1, 0) if boxes2.ndim == 2 else (0, 2, 1)
    y1a, x1a, y2a, x2a = _split(boxes1)
    y1b, x1b, y2b, x2b = (jnp.transpose(v, perm2) for v in _split(boxes2))
    ih = jnp.maximum(0.0, jnp.minimum(y2a, y2b) - jnp.maximum(y1a, y1b))
    iw = jnp.maximum(0.0, jnp.minimum(x2a, x2b) - jnp.maximum(x1a, x1b))
    inter = ih * iw
    area1 = ((y2a - y1a) * (x2a - x1a))[..., 0]
    area2 = (boxes2[..., 2] - boxes2[..., 0]) * (boxes2[..., 3] - boxes2[..., 1])
    area1 = area1[..., None]
    area2 = jnp.expand_dims(area2, 1 if area2.ndim == 2 else 0)
    res = inter / (area1 + area2 - inter + eps)
    if not use_masking:
        return res
    perm1 = (1, 0) if boxes1.ndim == 2 else (0, 2, 1)
    m1 = jnp.max(boxes1, axis=-1, keepdims=True) < 0.0
    m2 = jnp.max(boxes2, axis=-1, keepdims=True) < 0.0
    return jnp.where(m1 | jnp.transpose(m2, perm1), jnp.asarray(mask_val, res.dtype),
                     res)  # fmt: skip


def compute_iou(boxes1, boxes2, bounding_box_format, use_masking=False, mask_val=-1,
                image_shape=None):  # fmt: skip
    """Pairwise intersection over union (Keras's
    `keras.utils.bounding_boxes.compute_iou`): `(N, 4)` or `(B, N, 4)` boxes
    against `(M, 4)` or `(B, M, 4)`, giving `(..., N, M)`; with
    `use_masking`, pairs with a padding box (all coordinates negative) are
    `mask_val`. Relative formats need `image_shape`.

    Differences from Keras: None known.
    """
    r1, r2 = _rank(boxes1), _rank(boxes2)
    for which, r in (("boxes1", r1), ("boxes2", r2)):
        if r not in [2, 3]:
            raise ValueError(
                f"compute_iou() expects {which} to be batched, or to be unbatched. "
                f"Received len(boxes1.shape)={r1}, len(boxes2.shape)={r2}. "
                f"Expected either len({which}.shape)=2 AND or "
                f"len({which}.shape)=3."
            )
    if use_masking and r1 != r2:  # (what Keras's mask transposes raise)
        text = (
            "compute_iou() with `use_masking=True` needs boxes1 and boxes2 of "
            f"one rank. Received len(boxes1.shape)={r1}, len(boxes2.shape)={r2}."
        )
        if r1 == 3:
            raise ValueError(text)
        raise errors.InvalidArgumentError(None, None, text)
    if "rel" in bounding_box_format and image_shape is None:
        raise ValueError(
            "When using relative bounding box formats (e.g. `rel_yxyx`) "
            "the `image_shape` argument must be provided."
            f"Received `image_shape`: {image_shape}"
        )
    height, width = _hw(image_shape)
    b1 = convert_format(boxes1, bounding_box_format, "yxyx", height, width)
    b2 = convert_format(boxes2, bounding_box_format, "yxyx", height, width)
    return _iou_op(b1, b2, bool(use_masking), float(mask_val), float(config.epsilon()))


@op("BoxCIoU", inputs=("boxes1", "boxes2"), jit=True)
def _ciou_op(boxes1, boxes2, eps):
    """Keras's `compute_ciou` on xyxy boxes (elementwise)."""
    x1a, y1a, x2a, y2a = _split(boxes1)
    x1b, y1b, x2b, y2b = _split(boxes2)
    w1, h1 = x2a - x1a, y2a - y1a + eps
    w2, h2 = x2b - x1b, y2b - y1b + eps
    inter = jnp.maximum(jnp.minimum(x2a, x2b) - jnp.maximum(x1a, x1b), 0) * (
        jnp.maximum(jnp.minimum(y2a, y2b) - jnp.maximum(y1a, y1b), 0)
    )
    union = w1 * h1 + w2 * h2 - inter + eps
    iou = (inter / (union + eps))[..., 0]
    cw = jnp.maximum(x2a, x2b) - jnp.minimum(x1a, x1b)
    ch = jnp.maximum(y2a, y2b) - jnp.minimum(y1a, y1b)
    diag = (cw**2 + ch**2 + eps)[..., 0]
    dist = (((x1a + x2a) / 2 - (x1b + x2b) / 2) ** 2
            + ((y1a + y2a) / 2 - (y1b + y2b) / 2) ** 2)[..., 0]  # fmt: skip
    v = ((4 / math.pi**2) * (jnp.arctan(w2 / h2) - jnp.arctan(w1 / h1)) ** 2)[..., 0]
    alpha = v / (v - iou + (1 + eps))
    return iou - (dist / diag + v * alpha)


def compute_ciou(boxes1, boxes2, bounding_box_format, image_shape=None):
    """Complete IoU of matching boxes (Keras's
    `keras.utils.bounding_boxes.compute_ciou`): IoU minus the normalised
    centre distance and an aspect-ratio term, shape `boxes.shape[:-1]`
    (differentiable: a box-regression loss). Relative formats raise
    ValueError, as Keras (even with `image_shape`).

    Differences from Keras: None known.
    """
    if "rel" in bounding_box_format:
        raise ValueError(
            "When using relative bounding box formats (e.g. `rel_yxyx`) "
            "the `image_shape` argument must be provided."
            f"Received `image_shape`: {image_shape}"
        )
    height, width = _hw(image_shape)
    b1 = convert_format(boxes1, bounding_box_format, "xyxy", height, width)
    b2 = convert_format(boxes2, bounding_box_format, "xyxy", height, width)
    return _ciou_op(b1, b2, float(config.epsilon()))


# -- the image layers' box transforms (dict inputs) ------------------------------------
def densify(layer, bounding_boxes):
    """Keras's `densify_bounding_boxes` for a layer's dict input: checks the
    layer has a `bounding_box_format` and the dict its keys and ranks;
    boxes become float32 Tensors, labels Tensors (ragged ones padded with 0
    boxes and -1 labels)."""
    if not layer.bounding_box_format:
        raise ValueError(
            "You passed an input with a 'bounding_boxes' key, "
            "but you didn't specify a bounding box format. "
            "Pass a `bounding_box_format` argument to your "
            f"{type(layer).__name__} layer, e.g. "
            "`bounding_box_format='xyxy'`."
        )
    if (
        not isinstance(bounding_boxes, dict)
        or "labels" not in bounding_boxes
        or "boxes" not in bounding_boxes
    ):
        raise ValueError(
            "Expected `bounding_boxes` agurment to be a "
            "dict with keys 'boxes' and 'labels'. Received: "
            f"bounding_boxes={bounding_boxes}"
        )
    boxes, labels = bounding_boxes["boxes"], bounding_boxes["labels"]
    if hasattr(boxes, "to_tensor"):  # a RaggedTensor, as Keras's `to_tensor`
        boxes = boxes.to_tensor(default_value=0)
        labels = labels.to_tensor(default_value=-1)
    boxes = math_ops.cast(boxes, "float32")
    labels = _as_tensor(labels)
    rb, rl = len(boxes.shape), len(labels.shape)
    allowed = {2: (1, 2), 3: (2, 3)}.get(rb)
    if allowed is None:
        raise ValueError(
            "Expected `bounding_boxes['boxes']` to have rank 2 or 3, with shape "
            "(num_boxes, 4) or (batch_size, num_boxes, 4). Received: "
            f"bounding_boxes['boxes'].shape={tuple(boxes.shape)}"
        )
    if rl not in allowed:
        raise ValueError(
            f"Found bounding_boxes['boxes'].shape={tuple(boxes.shape)} and expected "
            f"bounding_boxes['labels'] to have rank {allowed[0]} or {allowed[1]}, "
            f"but received: bounding_boxes['labels'].shape={tuple(labels.shape)} "
        )
    return {**bounding_boxes, "boxes": boxes, "labels": labels}


def _batch(boxes, labels):
    if boxes.ndim == 2:
        return True, boxes[None], labels[None]
    return False, boxes, labels


def _unbatch(single, boxes, labels):
    return (boxes[0], labels[0]) if single else (boxes, labels)


def _projected_hull(boxes, matrix):
    """The xyxy hull of each box's corners mapped by the `(B, 3, 3)`
    projective matrices (with the perspective division); boxes `(B, N, 4)`."""
    x1, y1, x2, y2 = (boxes[..., i] for i in range(4))
    pts = jnp.stack(
        [jnp.stack(p, axis=-1) for p in ((x1, y1), (x2, y2), (x1, y2), (x2, y1))],
        axis=2,
    )  # (B, N, 4, 2)
    pts = jnp.concatenate([pts, jnp.ones(pts.shape[:-1] + (1,), pts.dtype)], axis=-1)
    out = jnp.einsum("bnxy,bzy->bnxz", pts, matrix.astype(pts.dtype))
    xy = out[..., :2] / out[..., 2:]
    return jnp.concatenate([jnp.min(xy, axis=2), jnp.max(xy, axis=2)], axis=-1)


@op("TransformLayerBoxes", inputs=("boxes", "labels", "transform"),
    differentiable=False, jit=True)  # fmt: skip
def transform_layer_boxes(boxes, labels, transform, height, width, fmt):
    """Boxes through a layer's image transform (`(n, 8)` rows mapping output
    pixels to input ones, TF's projective transforms): each box becomes the
    hull of its corners mapped by the inverse, clipped to the image (labels
    of emptied boxes -1), as Keras's rotation, zoom, translation and
    perspective boxes."""
    single, b, lab = _batch(boxes, labels)
    b = convert_body(b, height, width, fmt, "xyxy")
    t = transform.reshape((-1, 8)).astype(jnp.float32)
    m = jnp.concatenate([t, jnp.ones_like(t[:, :1])], axis=1).reshape((-1, 3, 3))
    b, lab = clip_body(_projected_hull(b, jnp.linalg.inv(m)), lab, height, width)
    return _unbatch(single, convert_body(b, height, width, "xyxy", fmt), lab)


@op("FlipLayerBoxes", inputs=("boxes", "labels", "flips"),
    differentiable=False, jit=True)  # fmt: skip
def flip_layer_boxes(boxes, labels, flips, height, width, horizontal, vertical, fmt):
    """Keras's `RandomFlip` boxes: in relative xyxy, `x -> 1 - x` (and `y`)
    for the flipped images, then clipped (labels of emptied boxes -1)."""
    single, b, lab = _batch(boxes, labels)
    b = convert_body(b, height, width, fmt, "rel_xyxy")
    f = flips.reshape((-1, 1, 1))
    x1, y1, x2, y2 = _split(b)
    if horizontal:
        b = jnp.where(f, _cat(1 - x2, y1, 1 - x1, y2), b)
    x1, y1, x2, y2 = _split(b)
    if vertical:
        b = jnp.where(f, _cat(x1, 1 - y2, x2, 1 - y1), b)
    b, lab = clip_body(b, lab, height, width)
    return _unbatch(single, convert_body(b, height, width, "rel_xyxy", fmt), lab)


@op("CropLayerBoxes", inputs=("boxes", "labels", "offsets"),
    differentiable=False, jit=True)  # fmt: skip
def crop_layer_boxes(boxes, labels, offsets, size, out_size, scale, fmt):
    """Boxes of a `size` image cropped at `offsets` (top, left), scaled by
    `scale` (y, x) to `out_size` and clipped (labels of emptied boxes -1)."""
    single, b, lab = _batch(boxes, labels)
    b = convert_body(b, size[0], size[1], fmt, "xyxy")
    top, left = offsets[0].astype(b.dtype), offsets[1].astype(b.dtype)
    x1, y1, x2, y2 = _split(b)
    sy, sx = scale
    b = _cat((x1 - left) * sx, (y1 - top) * sy, (x2 - left) * sx, (y2 - top) * sy)
    b, lab = clip_body(b, lab, out_size[0], out_size[1])
    b = convert_body(b, out_size[0], out_size[1], "xyxy", fmt)
    return _unbatch(single, b, lab)


def _f(v, dtype):
    return jnp.asarray(v, dtype)


@op("ResizeLayerBoxes", inputs=("boxes", "labels"), differentiable=False, jit=True)
def resize_layer_boxes(boxes, labels, size, out_size, mode, fmt):
    """Keras's `Resizing` boxes: stretched, or scaled and offset as the
    `pad_to_aspect_ratio` / `crop_to_aspect_ratio` image, clipped (labels
    of emptied boxes -1); padding boxes (all 0 or all -1) become zeros."""
    single, b, lab = _batch(boxes, labels)
    pad_box = jnp.all(b == -1, axis=-1) | jnp.all(b == 0, axis=-1)
    h, w = float(size[0]), float(size[1])
    th, tw = out_size
    b = convert_body(b, h, w, fmt, "xyxy")
    x1, y1, x2, y2 = _split(b)
    f32 = b.dtype
    if mode == "pad":
        r = jnp.minimum(_f(th, f32) / _f(h, f32), _f(tw, f32) / _f(w, f32))
        dy, dx = (th - h * r) // 2, (tw - w * r) // 2
        b = _cat(x1 * r + dx, y1 * r + dy, x2 * r + dx, y2 * r + dy)
    elif mode == "crop":
        src = _f(w, f32) / _f(h, f32)
        wide = src > tw / th
        new_w = jnp.where(wide, th * src, tw)
        new_h = jnp.where(wide, th, tw / src)
        sx, sy = new_w / w, new_h / h
        dx, dy = (new_w - tw) // 2, (new_h - th) // 2
        b = _cat(x1 * sx - dx, y1 * sy - dy, x2 * sx - dx, y2 * sy - dy)
    else:
        ry, rx = _f(th, f32) / _f(h, f32), _f(tw, f32) / _f(w, f32)
        b = _cat(x1 * rx, y1 * ry, x2 * rx, y2 * ry)
    b, lab = clip_body(b, lab, th, tw)
    b = jnp.where(pad_box[..., None], jnp.zeros((), b.dtype), b)
    return _unbatch(single, convert_body(b, th, tw, "xyxy", fmt), lab)


@op("CenterCropLayerBoxes", inputs=("boxes", "labels"), differentiable=False,
    jit=True)  # fmt: skip
def center_crop_layer_boxes(boxes, labels, size, out_size, fmt):
    """Keras's `CenterCrop` boxes: clipped to the centred window and
    shifted; from an image smaller than the target, the aspect-ratio window
    is rescaled to the target as the image is; clipped (labels -1)."""
    single, b, lab = _batch(boxes, labels)
    h, w = size
    th, tw = out_size
    b = convert_body(b, h, w, fmt, "xyxy")
    small = h - th < 0 or w - tw < 0
    if not small:
        top, left, ch, cw = int((h - th) / 2), int((w - tw) / 2), th, tw
    else:
        ch = max(min(h, int(float(w * th) / tw)), 1)
        cw = max(min(w, int(float(h * tw) / th)), 1)
        top, left = int(float(h - ch) / 2), int(float(w - cw) / 2)
    x1, y1, x2, y2 = _split(b)
    b = _cat(
        jnp.clip(x1, left, left + cw) - left,
        jnp.clip(y1, top, top + ch) - top,
        jnp.clip(x2, left, left + cw) - left,
        jnp.clip(y2, top, top + ch) - top,
    )
    if small:
        b = convert_body(convert_body(b, ch, cw, "xyxy", "rel_xyxy"), th, tw,
                         "rel_xyxy", "xyxy")  # fmt: skip
    b, lab = clip_body(b, lab, th, tw)
    return _unbatch(single, convert_body(b, th, tw, "xyxy", fmt), lab)


@op("MaxNumBoxes", inputs=("boxes", "labels"), differentiable=False, jit=True)
def max_num_boxes(boxes, labels, max_number, fill_value):
    """Keras's `MaxNumBoundingBoxes`: the first `max_number` boxes, padded
    with `fill_value` to exactly that many."""
    single, b, lab = _batch(boxes, labels)
    pad_n = max(max_number - b.shape[1], 0)
    b = jnp.pad(b[:, :max_number], ((0, 0), (0, pad_n), (0, 0)),
                constant_values=fill_value)  # fmt: skip
    lab = jnp.pad(lab[:, :max_number], ((0, 0), (0, pad_n)),
                  constant_values=fill_value)  # fmt: skip
    return _unbatch(single, b, lab)
