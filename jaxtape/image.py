"""`jaxtape.image` (TF's `tf.image`): re-exports only."""

from jaxtape._src.ops.image_ops import (  # noqa: F401
    ResizeMethod,
    central_crop,
    convert_image_dtype,
    crop_to_bounding_box,
    extract_patches,
    flip_left_right,
    flip_up_down,
    image_gradients,
    pad_to_bounding_box,
    resize,
    resize_with_crop_or_pad,
    resize_with_pad,
    rot90,
    sobel_edges,
    total_variation,
    transpose,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
