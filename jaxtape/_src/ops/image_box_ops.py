"""Boxes in `tf.image`: `crop_and_resize`, non-max suppression (hard, soft,
by overlaps, padded, combined over classes) and `draw_bounding_boxes`.
Layer L1.

Boxes are `[y1, x1, y2, x2]` in normalized coordinates as in TF.
`crop_and_resize` and `draw_bounding_boxes` are jnp bodies (traceable;
`crop_and_resize` differentiable in the image and the boxes, as TF's
bilinear gradients). Non-max suppression follows TF's kernels (candidates by
descending score, ties by lower index; a box is suppressed when its IoU with
a selected box exceeds the threshold; soft-NMS re-queues decayed scores). Its
output size depends on the values, so the unpadded forms run on the host,
eagerly; `non_max_suppression_padded` is a fixed-size jnp loop that also
works inside `jaxtape.function`.
"""

from __future__ import annotations

import heapq

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.core import errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.ops.creation_ops import convert_to_tensor
from jaxtape._src.ops.image_ops import _dims_of, _fused, _image
from jaxtape._src.ops.image_ops import _np_dtype as _np_dt

_F = np.float32


# -- crop_and_resize ----------------------------------------------------------------
@op("CropAndResize", inputs=("image", "boxes", "box_indices"))
@_fused(3)
def _crop_and_resize(image, boxes, box_indices, crop_size, method, extrapolation):
    h, w = image.shape[1], image.shape[2]
    ch, cw = crop_size
    boxes = boxes.astype(jnp.float32)
    y1, x1, y2, x2 = (boxes[:, i] for i in range(4))

    def coords(lo, hi, size, n):
        if n > 1:
            scale = (hi - lo) * (size - 1) / (n - 1)
            return (
                lo[:, None] * (size - 1)
                + jnp.arange(n, dtype=jnp.float32) * scale[:, None]
            )
        return (0.5 * (lo + hi) * (size - 1))[:, None]

    in_y, in_x = coords(y1, y2, h, ch), coords(x1, x2, w, cw)
    ok = ((in_y >= 0) & (in_y <= h - 1))[:, :, None] & ((in_x >= 0) & (in_x <= w - 1))[
        :, None, :
    ]
    b = box_indices[:, None, None]
    x = image.astype(jnp.float32)

    def at(rows, cols):
        rows = jnp.clip(rows, 0, h - 1)[:, :, None]
        cols = jnp.clip(cols, 0, w - 1)[:, None, :]
        return x[b, rows, cols]

    if method == "nearest":
        # (TF's roundf: half away from zero; the coordinates are >= 0 here)
        out = at(
            lax.stop_gradient(jnp.floor(in_y + 0.5)).astype(jnp.int32),
            lax.stop_gradient(jnp.floor(in_x + 0.5)).astype(jnp.int32),
        )
    else:
        top, left = jnp.floor(in_y), jnp.floor(in_x)
        bottom, right = jnp.ceil(in_y), jnp.ceil(in_x)
        y_lerp = (in_y - top)[:, :, None, None]
        x_lerp = (in_x - left)[:, None, :, None]
        ti, bi = top.astype(jnp.int32), bottom.astype(jnp.int32)
        li, ri = left.astype(jnp.int32), right.astype(jnp.int32)
        tl, tr, bl, br = at(ti, li), at(ti, ri), at(bi, li), at(bi, ri)
        t = tl + (tr - tl) * x_lerp
        btm = bl + (br - bl) * x_lerp
        out = t + (btm - t) * y_lerp
    return jnp.where(ok[..., None], out, jnp.float32(extrapolation))


def crop_and_resize(
    image,
    boxes,
    box_indices,
    crop_size,
    method="bilinear",
    extrapolation_value=0.0,
    name=None,
):
    """Crops boxes from a batch of images and resizes each crop to `crop_size`
    (bilinear or nearest, TF's corner-aligned sampling); samples outside the
    image take `extrapolation_value`. The result is float32.

    Differences from TensorFlow:
      Where a sample falls exactly on a pixel row or column, the gradient
      with respect to the boxes is the other one-sided derivative than TF's
      kernel may take (the value is the same); `nearest` may round an exact
      .5 sample position the other way (float rounding of the position).
      With `method="nearest"` the gradient with respect to the boxes is
      zero (the derivative of a nearest-pixel lookup); TF's gives the
      bilinear kernel's derivative there.
    """
    image = _image(image)
    shape = _dims_of(image)
    if len(shape) != 4:
        raise errors.invalid_argument(
            f"input image must be 4-D{list(shape)}", "CropAndResize"
        )
    boxes = convert_to_tensor(boxes)
    box_indices = convert_to_tensor(box_indices)
    if len(_dims_of(boxes)) != 2 or _dims_of(boxes)[1] != 4:
        raise errors.invalid_argument(
            f"boxes must be 2-D[num_boxes, 4]: {list(_dims_of(boxes))}", "CropAndResize"
        )
    n = _dims_of(boxes)[0]
    if _dims_of(box_indices) != (n,):
        raise errors.invalid_argument(
            f"box_index has incompatible shape {list(_dims_of(box_indices))}",
            "CropAndResize",
        )
    size = tuple(int(d) for d in np.asarray(to_value(crop_size)).reshape(-1))
    if len(size) != 2 or min(size) <= 0:
        raise errors.invalid_argument(
            f"crop dimensions must be positive: {list(size)}", "CropAndResize"
        )
    if method not in ("bilinear", "nearest"):
        raise errors.invalid_argument(
            f"method must be 'bilinear' or 'nearest', got {method!r}", "CropAndResize"
        )
    idx = to_value(box_indices)
    if not isinstance(idx, jax.core.Tracer):
        bad = (np.asarray(idx) < 0) | (np.asarray(idx) >= shape[0])
        if np.any(bad):
            raise errors.OutOfRangeError(
                None,
                "CropAndResize",
                f"box_index has values outside [0, batch_size): "
                f"{np.asarray(idx)[bad].tolist()} [Op:CropAndResize]",
            )
    return _crop_and_resize(
        image, boxes, box_indices, size, method, float(extrapolation_value)
    )


# -- non-max suppression (host) -----------------------------------------------------
def _iou_matrix(boxes: np.ndarray) -> np.ndarray:
    """TF's `IOU` for every pair (corners canonicalized; empty boxes give 0)."""
    b = boxes.astype(_F)
    ymin, ymax = np.minimum(b[:, 0], b[:, 2]), np.maximum(b[:, 0], b[:, 2])
    xmin, xmax = np.minimum(b[:, 1], b[:, 3]), np.maximum(b[:, 1], b[:, 3])
    area = (ymax - ymin) * (xmax - xmin)
    ih = np.maximum(
        np.minimum(ymax[:, None], ymax[None]) - np.maximum(ymin[:, None], ymin[None]), 0
    )
    iw = np.maximum(
        np.minimum(xmax[:, None], xmax[None]) - np.maximum(xmin[:, None], xmin[None]), 0
    )
    inter = (ih * iw).astype(_F)
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (area[:, None] + area[None] - inter)
    empty = (area[:, None] <= 0) | (area[None] <= 0)
    return np.where(empty, _F(0), iou).astype(_F)


def _nms_host(similarity, scores, max_out, threshold, score_threshold, sigma=0.0):
    """TF's `DoNonMaxSuppressionOp`: (selected indices, their scores)."""
    scores = np.asarray(scores, _F)
    thr, s_thr = _F(threshold), _F(score_threshold)
    scale = _F(-0.5 / sigma) if sigma > 0 else _F(0)
    soft = sigma > 0
    queue = [(-s, i, 0) for i, s in enumerate(scores) if s > s_thr]
    heapq.heapify(queue)  # highest score first, ties by lower index
    selected: list[int] = []
    kept: list[float] = []
    while len(selected) < max_out and queue:
        neg, i, begin = heapq.heappop(queue)
        original = score = _F(-neg)
        hard = False
        for j in range(len(selected) - 1, begin - 1, -1):
            sim = _F(similarity(i, selected[j]))
            weight = _F(np.exp(scale * sim * sim))
            score = _F(score * (weight if soft or sim <= thr else _F(0)))
            if not soft and sim > thr:
                hard = True
                break
            if score <= s_thr:
                break
        if hard:
            continue
        if score == original:
            selected.append(i)
            kept.append(float(score))
        elif score > s_thr:
            heapq.heappush(queue, (-score, i, len(selected)))
    return np.asarray(selected, np.int32), np.asarray(kept, _F)


def _host(v, what: str) -> np.ndarray:
    val = to_value(v)
    if isinstance(val, jax.core.Tracer):
        raise NotImplementedError(
            f"{what}'s output size depends on the values of its inputs, so it runs "
            "eagerly only; inside jaxtape.function use "
            "`jaxtape.image.non_max_suppression_padded(..., pad_to_max_output_size="
            "True)`."
        )
    return np.asarray(val)


def _nms_inputs(boxes, scores, max_output_size, op_name):
    b = _host(boxes, op_name)
    s = _host(scores, op_name)
    if b.ndim != 2 or b.shape[1] != 4:
        raise errors.invalid_argument(
            f"boxes must be 2-D[num_boxes, 4]: {list(b.shape)}", op_name
        )
    if s.ndim != 1 or s.shape[0] != b.shape[0]:
        raise errors.invalid_argument(
            f"scores has incompatible shape {list(s.shape)}", op_name
        )
    m = int(_host(max_output_size, op_name))
    if m < 0:
        raise errors.invalid_argument(
            f"max_output_size must be non-negative, got {m}", op_name
        )
    return b, s, m


def _iou_arg(thr, op_name, what="iou_threshold"):
    t = float(_host(thr, op_name))
    if not 0 <= t <= 1:
        raise errors.invalid_argument(f"{what} must be in [0, 1]", op_name)
    return t


def non_max_suppression(
    boxes,
    scores,
    max_output_size,
    iou_threshold=0.5,
    score_threshold=float("-inf"),
    name=None,
):
    """Greedy non-max suppression: indices (int32) of the kept boxes, by
    descending score.

    Differences from TensorFlow:
      Runs eagerly only (its output size depends on the values); inside
      `jaxtape.function` use `non_max_suppression_padded(...,
      pad_to_max_output_size=True)`.
    """
    b, s, m = _nms_inputs(boxes, scores, max_output_size, "NonMaxSuppressionV3")
    t = _iou_arg(iou_threshold, "NonMaxSuppressionV3")
    iou = _iou_matrix(b)
    st = float(_host(score_threshold, "NonMaxSuppressionV3"))
    idx, _ = _nms_host(lambda i, j: iou[i, j], s, m, t, st)
    return convert_to_tensor(idx)


def non_max_suppression_with_scores(
    boxes,
    scores,
    max_output_size,
    iou_threshold=0.5,
    score_threshold=float("-inf"),
    soft_nms_sigma=0.0,
    name=None,
):
    """Non-max suppression returning `(indices, scores)`; `soft_nms_sigma > 0`
    is Soft-NMS (scores decay by `exp(-iou^2 / (2 sigma))` instead of dropping)."""
    op_name = "NonMaxSuppressionV5"
    b, s, m = _nms_inputs(boxes, scores, max_output_size, op_name)
    t = _iou_arg(iou_threshold, op_name)
    sigma = float(_host(soft_nms_sigma, op_name))
    if sigma < 0:
        raise errors.invalid_argument("soft_nms_sigma must be non-negative", op_name)
    iou = _iou_matrix(b)
    st = float(_host(score_threshold, op_name))
    idx, kept = _nms_host(lambda i, j: iou[i, j], s, m, t, st, sigma)
    return convert_to_tensor(idx), convert_to_tensor(kept.astype(s.dtype))


def non_max_suppression_overlaps(
    overlaps,
    scores,
    max_output_size,
    overlap_threshold=0.5,
    score_threshold=float("-inf"),
    name=None,
):
    """Non-max suppression by a given `[n, n]` overlap matrix."""
    op_name = "NonMaxSuppressionWithOverlaps"
    ov = _host(overlaps, op_name).astype(_F)
    s = _host(scores, op_name)
    if ov.ndim != 2 or ov.shape[0] != ov.shape[1] or s.shape != (ov.shape[0],):
        raise errors.invalid_argument(
            f"overlaps must be square [n, n] and scores [n]; got {list(ov.shape)} "
            f"and {list(s.shape)}",
            op_name,
        )
    m = int(_host(max_output_size, op_name))
    t = float(_host(overlap_threshold, op_name))
    st = float(_host(score_threshold, op_name))
    idx, _ = _nms_host(lambda i, j: ov[i, j], s, m, t, st)
    return convert_to_tensor(idx)


# -- non-max suppression (fixed size, traceable) ------------------------------------
def _iou_jnp(b):
    ymin, ymax = jnp.minimum(b[..., 0], b[..., 2]), jnp.maximum(b[..., 0], b[..., 2])
    xmin, xmax = jnp.minimum(b[..., 1], b[..., 3]), jnp.maximum(b[..., 1], b[..., 3])
    area = (ymax - ymin) * (xmax - xmin)
    ih = jnp.maximum(
        jnp.minimum(ymax[..., :, None], ymax[..., None, :])
        - jnp.maximum(ymin[..., :, None], ymin[..., None, :]),
        0,
    )
    iw = jnp.maximum(
        jnp.minimum(xmax[..., :, None], xmax[..., None, :])
        - jnp.maximum(xmin[..., :, None], xmin[..., None, :]),
        0,
    )
    inter = ih * iw
    union = area[..., :, None] + area[..., None, :] - inter
    empty = (area[..., :, None] <= 0) | (area[..., None, :] <= 0)
    return jnp.where(empty, 0.0, inter / jnp.where(empty, 1.0, union))


def _nms_one(boxes, scores, max_out, iou_thr, score_thr):
    """Hard NMS of one set of boxes: (indices padded with 0, count)."""
    n = scores.shape[0]
    order = jnp.argsort(-scores, stable=True)
    s = scores[order]
    iou = _iou_jnp(boxes.astype(jnp.float32)[order])

    def step(i, keep):
        suppressed = jnp.any(keep & (iou[i] > iou_thr))
        ok = (s[i] > score_thr) & ~suppressed & (jnp.sum(keep) < max_out)
        return keep.at[i].set(ok)

    keep = lax.fori_loop(0, n, step, jnp.zeros((n,), bool))
    count = jnp.sum(keep).astype(jnp.int32)
    picked = jnp.sort(jnp.where(keep, jnp.arange(n), n))  # kept, in score order
    if n < max_out:
        picked = jnp.concatenate([picked, jnp.full((max_out - n,), n, picked.dtype)])
    picked = picked[:max_out]
    idx = jnp.where(picked < n, order[jnp.minimum(picked, n - 1)], 0)
    return idx.astype(jnp.int32), count


@op(
    "NonMaxSuppressionV4",
    inputs=("boxes", "scores", "iou_threshold", "score_threshold"),
    differentiable=False,
)
@_fused(4)
def _nms_padded(boxes, scores, iou_threshold, score_threshold, max_out):
    lead = scores.shape[:-1]
    b = boxes.reshape((-1,) + boxes.shape[-2:])
    s = scores.reshape((-1, scores.shape[-1]))
    idx, count = jax.vmap(
        lambda bb, ss: _nms_one(bb, ss, max_out, iou_threshold, score_threshold)
    )(b, s)
    return [idx.reshape(lead + (max_out,)), count.reshape(lead)]


def non_max_suppression_padded(
    boxes,
    scores,
    max_output_size,
    iou_threshold=0.5,
    score_threshold=float("-inf"),
    pad_to_max_output_size=False,
    name=None,
    sorted_input=False,
    canonicalized_coordinates=False,
    tile_size=512,
):
    """Hard NMS with a fixed-size result: `(indices, num_valid)`, the indices
    padded with zeros to `max_output_size` when `pad_to_max_output_size`
    (needed inside `jaxtape.function` and for batched `[..., n, 4]` boxes).
    The kept boxes are those of `non_max_suppression`, in the same order.

    `sorted_input`, `canonicalized_coordinates` and `tile_size` are TF's
    speed hints; the result does not depend on them here.

    Differences from TensorFlow:
      TF's tiled algorithm can keep a different set at `iou_threshold=0`
      (seen in TF 2.21); jaxtape keeps the greedy result there too.
    """
    del sorted_input, canonicalized_coordinates, tile_size  # (speed hints only)
    boxes, scores = convert_to_tensor(boxes), convert_to_tensor(scores)
    rank = len(_dims_of(boxes))
    if not pad_to_max_output_size and rank > 2:
        raise ValueError(
            f"'pad_to_max_output_size' (value {pad_to_max_output_size}) must be True "
            "for batched input"
        )
    m = int(_host(max_output_size, "non_max_suppression_padded"))
    idx, count = _nms_padded(
        boxes,
        scores,
        convert_to_tensor(iou_threshold, dtype="float32"),
        convert_to_tensor(score_threshold, dtype="float32"),
        m,
    )
    if rank == 2:
        if not pad_to_max_output_size:
            n = int(_host(count, "non_max_suppression_padded"))
            return convert_to_tensor(np.asarray(idx)[:n]), count
    return idx, count


def combined_non_max_suppression(
    boxes,
    scores,
    max_output_size_per_class,
    max_total_size,
    iou_threshold=0.5,
    score_threshold=float("-inf"),
    pad_per_class=False,
    clip_boxes=True,
    name=None,
):
    """Per-class greedy NMS over a batch, merged by score: `(nmsed_boxes,
    nmsed_scores, nmsed_classes, valid_detections)`, zero-padded.

    Differences from TensorFlow:
      Runs eagerly only (on the host); equal scores across classes are
      ordered by class (TF's sort leaves their order unspecified).
    """
    op_name = "CombinedNonMaxSuppression"
    b = _host(boxes, op_name).astype(_F)
    s = _host(scores, op_name).astype(_F)
    if b.ndim != 4 or b.shape[-1] != 4 or s.ndim != 3 or s.shape[:2] != b.shape[:2]:
        raise errors.invalid_argument(
            f"boxes must be [batch, num_boxes, q, 4] and scores [batch, num_boxes, "
            f"num_classes]; got {list(b.shape)} and {list(s.shape)}",
            op_name,
        )
    q, classes = b.shape[2], s.shape[2]
    if q not in (1, classes):
        raise errors.invalid_argument(
            "third dimension of boxes must be either 1 or num classes", op_name
        )
    per_class = int(_host(max_output_size_per_class, op_name))
    total = int(_host(max_total_size, op_name))
    if per_class <= 0 or total <= 0:
        raise errors.invalid_argument(
            "max_size_per_class and max_total_size must be > 0", op_name
        )
    t = _iou_arg(iou_threshold, op_name)
    st = float(_host(score_threshold, op_name))
    size = min(total, per_class * classes) if pad_per_class else total
    batch = b.shape[0]
    out_boxes = np.zeros((batch, size, 4), _F)
    out_scores = np.zeros((batch, size), _F)
    out_classes = np.zeros((batch, size), _F)
    valid = np.zeros((batch,), np.int32)
    for i in range(batch):
        found = []
        for c in range(classes):
            cb = b[i, :, 0 if q == 1 else c]
            iou = _iou_matrix(cb)
            idx, kept = _nms_host(lambda x, y: iou[x, y], s[i, :, c], per_class, t, st)
            found += [(float(k), c, cb[j]) for j, k in zip(idx, kept)]
        found.sort(key=lambda r: -r[0])
        found = found[:size]
        valid[i] = len(found)
        for k, (score, c, box) in enumerate(found):
            out_boxes[i, k] = np.clip(box, 0, 1) if clip_boxes else box
            out_scores[i, k], out_classes[i, k] = score, c
    return (
        convert_to_tensor(out_boxes),
        convert_to_tensor(out_scores),
        convert_to_tensor(out_classes),
        convert_to_tensor(valid),
    )


# -- draw_bounding_boxes ------------------------------------------------------------
_COLORS = np.asarray(
    [
        [1, 1, 0, 1],
        [0, 0, 1, 1],
        [1, 0, 0, 1],
        [0, 1, 0, 1],
        [0.5, 0, 0.5, 1],
        [0.5, 0.5, 0, 1],
        [0.5, 0, 0, 1],
        [0, 0, 0.5, 1],
        [0, 1, 1, 1],
        [1, 0, 1, 1],
    ],
    _F,
)


@op("DrawBoundingBoxesV2", inputs=("images", "boxes", "colors"), differentiable=False)
@_fused(3)
def _draw_boxes(images, boxes, colors):
    _, h, w, d = images.shape
    rows = jnp.arange(h, dtype=jnp.int32)[:, None]
    cols = jnp.arange(w, dtype=jnp.int32)[None, :]
    canvas = images
    for k in range(boxes.shape[1]):
        bx = boxes[:, k].astype(jnp.float32)
        # (TF truncates `coordinate * (size - 1)` toward zero)
        r0 = jnp.trunc(bx[:, 0] * (h - 1)).astype(jnp.int32)[:, None, None]
        r1 = jnp.trunc(bx[:, 2] * (h - 1)).astype(jnp.int32)[:, None, None]
        c0 = jnp.trunc(bx[:, 1] * (w - 1)).astype(jnp.int32)[:, None, None]
        c1 = jnp.trunc(bx[:, 3] * (w - 1)).astype(jnp.int32)[:, None, None]
        drawn = (r0 <= r1) & (c0 <= c1) & (r0 < h) & (r1 >= 0) & (c0 < w) & (c1 >= 0)
        in_cols = (cols >= jnp.maximum(c0, 0)) & (cols <= jnp.minimum(c1, w - 1))
        in_rows = (rows >= jnp.maximum(r0, 0)) & (rows <= jnp.minimum(r1, h - 1))
        line = ((rows == r0) | (rows == r1)) & in_cols
        line |= ((cols == c0) | (cols == c1)) & in_rows
        color = colors[k % colors.shape[0], :d].astype(images.dtype)
        canvas = jnp.where((drawn & line)[..., None], color, canvas)
    return canvas


def draw_bounding_boxes(images, boxes, colors, name=None):
    """Draws the outline of each box (`[batch, num_boxes, 4]`) on a batch of
    images, cycling through `colors` (`[num_colors, >= channels]`; TF's
    default table when None or empty; white on grayscale images)."""
    images = _image(images)
    shape = _dims_of(images)
    if len(shape) != 4:
        raise errors.invalid_argument(
            f"The rank of the images should be 4{list(shape)}", "DrawBoundingBoxesV2"
        )
    if _np_dt(images) not in (np.dtype(np.float32), np.dtype(np.float16)):
        raise errors.invalid_argument(
            f"Value for attr 'T' of {_np_dt(images).name} is not in the list of "
            "allowed values: float, half. Convert the images first with "
            "`jaxtape.image.convert_image_dtype`.",
            "DrawBoundingBoxesV2",
        )
    if shape[-1] not in (1, 3, 4):
        raise errors.invalid_argument(
            "Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)",
            "DrawBoundingBoxesV2",
        )
    boxes = convert_to_tensor(boxes)
    bshape = _dims_of(boxes)
    if len(bshape) != 3 or bshape[-1] != 4 or bshape[0] != shape[0]:
        raise errors.invalid_argument(
            f"boxes must be [batch, num_boxes, 4] for images of shape {list(shape)}; "
            f"got {list(bshape)}",
            "DrawBoundingBoxesV2",
        )
    table = _COLORS
    if colors is not None:
        given = np.asarray(_host(colors, "draw_bounding_boxes"), _F)
        if given.size:
            if given.ndim != 2 or given.shape[1] < shape[-1]:
                raise errors.invalid_argument(
                    "colors must have equal or more channels than the image provided",
                    "DrawBoundingBoxesV2",
                )
            table = given
    if shape[-1] == 1:
        table = table.copy()
        table[:, 0] = 1  # (TF: boxes on grayscale images are white)
    return _draw_boxes(images, boxes, table)
