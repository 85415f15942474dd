"""Keras 3's dict inputs for the image preprocessing layers (`images`,
`labels`, `bounding_boxes`, `segmentation_masks`): the call that moves
every key with the images' random draws, the shape and box-format checks
the layers share. Layer L5.
"""

from __future__ import annotations

from typing import Any

from jaxtape._src.keras.layers.preprocessing import bounding_boxes as bbox
from jaxtape._src.ops import math_ops
from jaxtape._src.ops.creation_ops import convert_to_tensor


def _hw_axes(ndim, channels_first):
    return (ndim - 2, ndim - 1) if channels_first else (ndim - 3, ndim - 2)


def _check_image_rank(layer, x):
    if x.ndim not in (3, 4):
        raise ValueError(
            f"{type(layer).__name__} layer {layer.name!r} expects images of rank 3 "
            f"(H, W, C) or 4 (N, H, W, C). Received: inputs.shape={tuple(x.shape)}"
        )


def _batch_of(x) -> int:
    return 1 if x.ndim == 3 else int(x.shape[0])


def _size_of(x, channels_first) -> tuple[int, int]:
    ha, wa = _hw_axes(x.ndim, channels_first)
    shape: Any = x.shape
    return int(shape[ha]), int(shape[wa])


def _box_format(layer) -> str:
    fmt = str(layer.bounding_box_format).lower()
    if fmt not in bbox.SUPPORTED_FORMATS:
        raise ValueError(
            "Invalid source or target format. Supported formats: "
            f"{bbox.SUPPORTED_FORMATS}. Received: bounding_box_format="
            f"{layer.bounding_box_format!r}"
        )
    return fmt


def _with_boxes(bounding_boxes, result):
    boxes, labels = result
    return {**bounding_boxes, "boxes": boxes, "labels": labels}


def _call_on_dict(layer, inputs, images, boxes, masks, labels=None, cast=True):
    """Keras's `BaseImagePreprocessingLayer.call` on a dict: `images(x)`
    gives the images and the state (the random draws) that `boxes(bb, state,
    x)` and `masks(m, state)` reuse, so all keys move together; `"labels"`
    pass through unless `labels(l, state)` is given; other keys are kept."""
    data = dict(inputs)
    x = data["images"]
    x = math_ops.cast(x, layer._dtype.name) if cast else convert_to_tensor(x)
    _check_image_rank(layer, x)
    bounding_boxes = data.get("bounding_boxes")
    if bounding_boxes is not None:
        bounding_boxes = bbox.densify(layer, bounding_boxes)
    data["images"], state = images(x)
    if bounding_boxes is not None:
        data["bounding_boxes"] = boxes(bounding_boxes, state, x)
    if "labels" in data and labels is not None:
        data["labels"] = labels(data["labels"], state)
    if "segmentation_masks" in data:
        data["segmentation_masks"] = masks(data["segmentation_masks"], state)
    return data


def _box_config(layer):
    """Keras's config entry: `bounding_box_format` only when set."""
    fmt = getattr(layer, "bounding_box_format", None)
    return {} if fmt is None else {"bounding_box_format": fmt}
