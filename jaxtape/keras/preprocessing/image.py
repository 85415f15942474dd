"""`jaxtape.keras.preprocessing.image` (tf.keras's): re-exports only."""

from jaxtape._src.keras.legacy_preprocessing.image import (  # noqa: F401
    DirectoryIterator,
    ImageDataGenerator,
    Iterator,
    NumpyArrayIterator,
    apply_affine_transform,
    apply_brightness_shift,
    apply_channel_shift,
    array_to_img,
    img_to_array,
    load_img,
    random_brightness,
    random_channel_shift,
    random_rotation,
    random_shear,
    random_shift,
    random_zoom,
    save_img,
    smart_resize,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
