"""`jaxtape.image` (TF's `tf.image`): re-exports only."""

from jaxtape._src.ops.image_ops import (  # noqa: F401
    central_crop,
    convert_image_dtype,
    crop_to_bounding_box,
    extract_patches,
    flip_left_right,
    flip_up_down,
    image_gradients,
    pad_to_bounding_box,
    resize_with_crop_or_pad,
    rot90,
    sobel_edges,
    total_variation,
    transpose,
)
from jaxtape._src.ops.image_box_ops import (  # noqa: F401
    combined_non_max_suppression,
    crop_and_resize,
    draw_bounding_boxes,
    non_max_suppression,
    non_max_suppression_overlaps,
    non_max_suppression_padded,
    non_max_suppression_with_scores,
)
from jaxtape._src.ops.image_color_ops import (  # noqa: F401
    adjust_brightness,
    adjust_contrast,
    adjust_gamma,
    adjust_hue,
    adjust_saturation,
    grayscale_to_rgb,
    hsv_to_rgb,
    per_image_standardization,
    psnr,
    rgb_to_grayscale,
    rgb_to_hsv,
    rgb_to_yiq,
    rgb_to_yuv,
    ssim,
    ssim_multiscale,
    yiq_to_rgb,
    yuv_to_rgb,
)
from jaxtape._src.ops.image_resize_ops import (  # noqa: F401
    ResizeMethod,
    resize,
    resize_with_pad,
)
from jaxtape._src.state.image_random_ops import (  # noqa: F401
    extract_glimpse,
    random_brightness,
    random_contrast,
    random_crop,
    random_flip_left_right,
    random_flip_up_down,
    random_hue,
    random_saturation,
    sample_distorted_bounding_box,
    stateless_random_brightness,
    stateless_random_contrast,
    stateless_random_crop,
    stateless_random_flip_left_right,
    stateless_random_flip_up_down,
    stateless_random_hue,
    stateless_random_saturation,
    stateless_sample_distorted_bounding_box,
)
from jaxtape._src.io.image_codecs import (  # noqa: F401 - TF's tf.image has them too
    adjust_jpeg_quality,
    decode_and_crop_jpeg,
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_jxl,
    decode_png,
    decode_webp,
    encode_jpeg,
    encode_png,
    extract_jpeg_shape,
    is_jpeg,
    random_jpeg_quality,
    stateless_random_jpeg_quality,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
