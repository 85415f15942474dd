"""`jaxtape.keras.utils.bounding_boxes` (Keras 3's `keras.utils.bounding_boxes`):
re-exports only. `jaxtape.keras.utils` is a module, so this namespace lives
here and `utils` binds it as `bounding_boxes`."""

from jaxtape._src.keras.layers.preprocessing.bounding_boxes import (  # noqa: F401
    affine_transform,
    clip_to_image_size,
    compute_ciou,
    compute_iou,
    convert_format,
    crop,
    decode_deltas_to_boxes,
    encode_box_to_deltas,
    pad,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
