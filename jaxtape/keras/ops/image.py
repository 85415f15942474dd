"""`jaxtape.keras.ops.image` (Keras 3's `keras.ops.image`): re-exports only."""

from jaxtape._src.keras.ops.image import (  # noqa: F401
    crop_images,
    extract_patches,
    gaussian_blur,
    hsv_to_rgb,
    map_coordinates,
    pad_images,
    resize,
    rgb_to_grayscale,
    rgb_to_hsv,
    scale_and_translate,
    sobel_edges,
)
from jaxtape._src.keras.ops.image_more import (  # noqa: F401
    affine_transform,
    elastic_transform,
    extract_patches_3d,
    perspective_transform,
    ssim,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
