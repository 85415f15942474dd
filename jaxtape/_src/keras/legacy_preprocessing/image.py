"""`keras.preprocessing.image`: Keras 3's legacy image augmentation. Layer L5.

`ImageDataGenerator` with its `flow` (`NumpyArrayIterator`) and
`flow_from_directory` (`DirectoryIterator`), the `random_*`/`apply_*`
transforms and `smart_resize`, following
`keras/src/legacy/preprocessing/image.py` (Keras 3.15): NumPy arrays, NumPy's
global generator (so a seeded run draws Keras's transforms), SciPy's
`ndimage.affine_transform` for the geometry and Pillow for brightness.
`array_to_img`/`img_to_array`/`load_img`/`save_img` are `keras.utils`'s.
"""

from __future__ import annotations

import math
import os
import threading
import warnings
from typing import Any, cast

import numpy as np

from jaxtape._src.core import config
from jaxtape._src.keras import image_utils
from jaxtape._src.keras.image_utils import array_to_img as array_to_img
from jaxtape._src.keras.image_utils import img_to_array as img_to_array
from jaxtape._src.keras.image_utils import load_img as load_img
from jaxtape._src.keras.image_utils import save_img as save_img
from jaxtape._src.keras.ops import image as ops_image
from jaxtape._src.keras.progbar import print_msg
from jaxtape._src.keras.py_dataset import PyDataset

# -- transforms ------------------------------------------------------------------


def _offset_to_center(matrix, x, y):
    o_x, o_y = float(x) / 2 - 0.5, float(y) / 2 - 0.5
    offset = np.array([[1, 0, o_x], [0, 1, o_y], [0, 0, 1]])
    reset = np.array([[1, 0, -o_x], [0, 1, -o_y], [0, 0, 1]])
    return offset @ matrix @ reset


def apply_affine_transform(
    x,
    theta=0,
    tx=0,
    ty=0,
    shear=0,
    zx=1,
    zy=1,
    row_axis=1,
    col_axis=2,
    channel_axis=0,
    fill_mode="nearest",
    cval=0.0,
    order=1,
):
    """Rotates (`theta` degrees), shifts (`tx` rows, `ty` columns), shears
    (`shear` degrees) and zooms (`zx`, `zy`) a rank-3 image about its centre,
    with `scipy.ndimage.affine_transform` (`fill_mode`, `cval`, spline
    `order`)."""
    import scipy.ndimage  # lazy: 60 ms, only the geometric transforms need it

    if np.unique([row_axis, col_axis, channel_axis]).size != 3:
        raise ValueError("'row_axis', 'col_axis', and 'channel_axis' must be distinct")
    actual = {row_axis, col_axis, channel_axis}
    if actual != {0, 1, 2}:
        raise ValueError(f"Invalid axis' indices: {actual - {0, 1, 2}}")
    if x.ndim != 3:
        raise ValueError("Input arrays must be multi-channel 2D images.")
    if channel_axis not in [0, 2]:
        raise ValueError("Channels are allowed and the first and last dimensions.")
    parts = []
    if theta != 0:
        t = np.deg2rad(theta)
        parts.append(
            np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0], [0, 0, 1]])
        )
    if tx != 0 or ty != 0:
        parts.append(np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]]))
    if shear != 0:
        s = np.deg2rad(shear)
        parts.append(np.array([[1, -np.sin(s), 0], [0, np.cos(s), 0], [0, 0, 1]]))
    if zx != 1 or zy != 1:
        parts.append(np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]]))
    if not parts:
        return x
    matrix = parts[0]
    for p in parts[1:]:
        matrix = np.dot(matrix, p)
    matrix = _offset_to_center(matrix, x.shape[row_axis], x.shape[col_axis])
    x = np.rollaxis(x, channel_axis, 0)
    if col_axis > row_axis:
        matrix[:, [0, 1]] = matrix[:, [1, 0]]
        matrix[[0, 1]] = matrix[[1, 0]]
    channels = [
        scipy.ndimage.affine_transform(
            c, matrix[:2, :2], matrix[:2, 2], order=order, mode=fill_mode, cval=cval
        )
        for c in x
    ]
    return np.rollaxis(np.stack(channels, axis=0), 0, channel_axis + 1)


def random_rotation(
    x,
    rg,
    row_axis=1,
    col_axis=2,
    channel_axis=0,
    fill_mode="nearest",
    cval=0.0,
    interpolation_order=1,
):
    """Rotates by a uniform angle in `[-rg, rg]` degrees."""
    theta = np.random.uniform(-rg, rg)
    return apply_affine_transform(
        x,
        theta=theta,
        row_axis=row_axis,
        col_axis=col_axis,
        channel_axis=channel_axis,
        fill_mode=fill_mode,
        cval=cval,
        order=interpolation_order,
    )


def random_shift(
    x,
    wrg,
    hrg,
    row_axis=1,
    col_axis=2,
    channel_axis=0,
    fill_mode="nearest",
    cval=0.0,
    interpolation_order=1,
):
    """Shifts by uniform fractions `[-hrg, hrg]` of the height and `[-wrg, wrg]`
    of the width."""
    h, w = x.shape[row_axis], x.shape[col_axis]
    tx = np.random.uniform(-hrg, hrg) * h
    ty = np.random.uniform(-wrg, wrg) * w
    return apply_affine_transform(
        x,
        tx=tx,
        ty=ty,
        row_axis=row_axis,
        col_axis=col_axis,
        channel_axis=channel_axis,
        fill_mode=fill_mode,
        cval=cval,
        order=interpolation_order,
    )


def random_shear(
    x,
    intensity,
    row_axis=1,
    col_axis=2,
    channel_axis=0,
    fill_mode="nearest",
    cval=0.0,
    interpolation_order=1,
):
    """Shears by a uniform angle in `[-intensity, intensity]` degrees."""
    shear = np.random.uniform(-intensity, intensity)
    return apply_affine_transform(
        x,
        shear=shear,
        row_axis=row_axis,
        col_axis=col_axis,
        channel_axis=channel_axis,
        fill_mode=fill_mode,
        cval=cval,
        order=interpolation_order,
    )


def random_zoom(
    x,
    zoom_range,
    row_axis=1,
    col_axis=2,
    channel_axis=0,
    fill_mode="nearest",
    cval=0.0,
    interpolation_order=1,
):
    """Zooms rows and columns by independent uniform factors in `zoom_range`."""
    if len(zoom_range) != 2:
        raise ValueError(
            "`zoom_range` should be a tuple or list of two floats. "
            f"Received: {zoom_range}"
        )
    if zoom_range[0] == 1 and zoom_range[1] == 1:
        zx, zy = 1, 1
    else:
        zx, zy = np.random.uniform(zoom_range[0], zoom_range[1], 2)
    return apply_affine_transform(
        x,
        zx=zx,
        zy=zy,
        row_axis=row_axis,
        col_axis=col_axis,
        channel_axis=channel_axis,
        fill_mode=fill_mode,
        cval=cval,
        order=interpolation_order,
    )


def apply_channel_shift(x, intensity, channel_axis=0):
    """Adds `intensity` to every channel, clipped to the image's own range."""
    x = np.rollaxis(x, channel_axis, 0)
    min_x, max_x = np.min(x), np.max(x)
    channels = [np.clip(c + intensity, min_x, max_x) for c in x]
    return np.rollaxis(np.stack(channels, axis=0), 0, channel_axis + 1)


def random_channel_shift(x, intensity_range, channel_axis=0):
    """`apply_channel_shift` by a uniform intensity in `[-range, range]`."""
    intensity = np.random.uniform(-intensity_range, intensity_range)
    return apply_channel_shift(x, intensity, channel_axis=channel_axis)


def apply_brightness_shift(x, brightness, scale=True):
    """Pillow's `ImageEnhance.Brightness(brightness)` of a channels-last image
    (values outside [0, 255] are rescaled there and back unless `scale`)."""
    from PIL import ImageEnhance  # lazy: Pillow, only for brightness

    x_min, x_max = np.min(x), np.max(x)
    local_scale = x_min < 0 or x_max > 255
    img = image_utils.array_to_img(x, scale=local_scale or scale)
    img = ImageEnhance.Brightness(img).enhance(brightness)
    x = image_utils.img_to_array(img)
    if not scale and local_scale:
        x = x / 255 * (x_max - x_min) + x_min
    return x


def random_brightness(x, brightness_range, scale=True):
    """`apply_brightness_shift` by a uniform factor in `brightness_range`."""
    if len(brightness_range) != 2:
        raise ValueError(
            "`brightness_range should be tuple or list of two floats. "
            f"Received: {brightness_range}"
        )
    u = np.random.uniform(brightness_range[0], brightness_range[1])
    return apply_brightness_shift(x, u, scale)


def smart_resize(
    x, size, interpolation="bilinear", data_format="channels_last", **kwargs
):
    """Crops the largest centred window of `size`'s aspect ratio, then resizes
    to `size`; a NumPy input gives a NumPy array, else a Tensor.

    Differences from Keras: `backend_module` is not accepted (jaxtape has one
    backend).
    """
    if kwargs:
        raise TypeError(
            f"smart_resize() got unexpected keyword arguments: {list(kwargs.keys())}"
        )
    if len(size) != 2:
        raise ValueError(
            f"Expected `size` to be a tuple of 2 integers, but got: {size}."
        )
    shape = tuple(np.shape(x))
    if len(shape) < 3 or len(shape) > 4:
        raise ValueError(
            "Expected an image array with shape `(height, width, channels)`, "
            "or `(batch_size, height, width, channels)`, but got input with "
            f"incorrect rank, of shape {shape}."
        )
    height, width = shape[-3:-1] if data_format == "channels_last" else shape[-2:]
    target_height, target_width = size
    crop_h = max(min(height, int(float(width * target_height) / target_width)), 1)
    crop_w = max(min(width, int(float(height * target_width) / target_height)), 1)
    h0 = int(float(height - crop_h) / 2)
    w0 = int(float(width - crop_w) / 2)
    rows, cols = slice(h0, h0 + crop_h), slice(w0, w0 + crop_w)
    if data_format == "channels_last":
        index = (Ellipsis, rows, cols, slice(None))
    else:
        index = (Ellipsis, rows, cols)
    img = ops_image.resize(
        x[index], size=size, interpolation=interpolation, data_format=data_format
    )
    if isinstance(x, np.ndarray):
        return np.array(img)
    return img


def _flip_axis(x, axis):
    return np.asarray(x).swapaxes(axis, 0)[::-1, ...].swapaxes(0, axis)


# -- iterators -------------------------------------------------------------------


class Iterator(PyDataset):
    """Keras's base image iterator: batches of `batch_size` indices over `n`
    samples (reshuffled each epoch when `shuffle`; `seed` reseeds NumPy's
    global generator per batch), by index (`it[i]`) or endlessly (`next(it)`).
    Subclasses define `_get_batches_of_transformed_samples(index_array)`."""

    white_list_formats = ("png", "jpg", "jpeg", "bmp", "ppm", "tif", "tiff")

    def __init__(self, n, batch_size, shuffle, seed, **kwargs):
        super().__init__(**kwargs)
        self.n = n
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.batch_index = 0
        self.total_batches_seen = 0
        self.lock = threading.Lock()
        self.index_array: np.ndarray | None = None
        self.index_generator = self._flow_index()

    def _set_index_array(self):
        self.index_array = np.arange(self.n)
        if self.shuffle:
            self.index_array = np.random.permutation(self.n)

    def __getitem__(self, idx):
        if idx >= len(self):
            raise ValueError(
                f"Asked to retrieve element {idx}, but the Sequence has length "
                f"{len(self)}"
            )
        if self.seed is not None:
            np.random.seed(self.seed + self.total_batches_seen)
        self.total_batches_seen += 1
        if self.index_array is None:
            self._set_index_array()
        indices = cast(np.ndarray, self.index_array)
        index_array = indices[self.batch_size * idx : self.batch_size * (idx + 1)]
        return self._get_batches_of_transformed_samples(index_array)

    def __len__(self):
        return (self.n + self.batch_size - 1) // self.batch_size

    def on_epoch_end(self):
        self._set_index_array()

    def reset(self):
        self.batch_index = 0

    def _flow_index(self):
        self.reset()
        while True:
            if self.seed is not None:
                np.random.seed(self.seed + self.total_batches_seen)
            if self.batch_index == 0:
                self._set_index_array()
            current = (
                0 if self.n == 0 else (self.batch_index * self.batch_size) % self.n
            )
            if self.n > current + self.batch_size:
                self.batch_index += 1
            else:
                self.batch_index = 0
            self.total_batches_seen += 1
            indices = cast(np.ndarray, self.index_array)  # set on batch 0
            yield indices[current : current + self.batch_size]

    def __iter__(self):  # pyright: ignore[reportIncompatibleMethodOverride]
        return self  # (Keras's: endless `next()`, not PyDataset's one epoch)

    def __next__(self):
        with self.lock:
            index_array = next(self.index_generator)
        return self._get_batches_of_transformed_samples(index_array)

    def _get_batches_of_transformed_samples(self, index_array):
        """The batch of the samples at `index_array` (subclasses define it)."""
        raise NotImplementedError


def _save_batch(batch_x, index_array, data_format, save_to_dir, prefix, fmt, high):
    for i, j in enumerate(index_array):
        img = image_utils.array_to_img(batch_x[i], data_format, scale=True)
        fname = f"{prefix}_{j}_{np.random.randint(high)}.{fmt}"
        img.save(os.path.join(save_to_dir, fname))


class NumpyArrayIterator(Iterator):
    """Batches of augmented images from a rank-4 array `x` (with optional
    labels `y`, `sample_weight`, and extra arrays when `x` is `(images,
    [arrays])`), as `ImageDataGenerator.flow` makes them."""

    def __init__(
        self,
        x,
        y,
        image_data_generator,
        batch_size=32,
        shuffle=False,
        sample_weight=None,
        seed=None,
        data_format=None,
        save_to_dir=None,
        save_prefix="",
        save_format="png",
        subset=None,
        ignore_class_split=False,
        dtype=None,
    ):
        data_format = data_format or config.image_data_format()
        self.dtype = dtype or config.floatx()
        if isinstance(x, (tuple, list)):
            misc = x[1] if isinstance(x[1], list) else [x[1]]
            x_misc = [np.asarray(xx) for xx in misc]
            x = x[0]
            for xx in x_misc:
                if len(x) != len(xx):
                    raise ValueError(
                        "All of the arrays in `x` should have the same length. "
                        f"Found a pair with: len(x[0]) = {len(x)}, "
                        f"len(x[?]) = {len(xx)}"
                    )
        else:
            x_misc = []
        if y is not None and len(x) != len(y):
            raise ValueError(
                "`x` (images tensor) and `y` (labels) should have the same length. "
                f"Found: x.shape = {np.asarray(x).shape}, "
                f"y.shape = {np.asarray(y).shape}"
            )
        if sample_weight is not None and len(x) != len(sample_weight):
            raise ValueError(
                "`x` (images tensor) and `sample_weight` should have the same "
                f"length. Found: x.shape = {np.asarray(x).shape}, "
                f"sample_weight.shape = {np.asarray(sample_weight).shape}"
            )
        if subset is not None:
            if subset not in {"training", "validation"}:
                raise ValueError(
                    f"Invalid subset name: {subset}; "
                    'expected "training" or "validation".'
                )
            split = int(len(x) * image_data_generator._validation_split)
            if (
                y is not None
                and not ignore_class_split
                and not np.array_equal(np.unique(y[:split]), np.unique(y[split:]))
            ):
                raise ValueError(
                    "Training and validation subsets have different "
                    "number of classes after the split. If your numpy arrays are "
                    "sorted by the label, you might want to shuffle them."
                )
            part = slice(None, split) if subset == "validation" else slice(split, None)
            x = x[part]
            x_misc = [np.asarray(xx[part]) for xx in x_misc]
            if y is not None:
                y = y[part]
        self.x = np.asarray(x, dtype=self.dtype)
        self.x_misc = x_misc
        if self.x.ndim != 4:
            raise ValueError(
                "Input data in `NumpyArrayIterator` should have rank 4. "
                f"You passed an array with shape {self.x.shape}"
            )
        channels_axis = 3 if data_format == "channels_last" else 1
        if self.x.shape[channels_axis] not in {1, 3, 4}:
            warnings.warn(
                f'NumpyArrayIterator is set to use the data format convention "'
                f'{data_format}" (channels on axis {channels_axis}), i.e. expected '
                f"either 1, 3, or 4 channels on axis {channels_axis}. However, it "
                f"was passed an array with shape {self.x.shape} "
                f"({self.x.shape[channels_axis]} channels).",
                stacklevel=2,
            )
        self.y = None if y is None else np.asarray(y)
        self.sample_weight = (
            None if sample_weight is None else np.asarray(sample_weight)
        )
        self.image_data_generator = image_data_generator
        self.data_format = data_format
        self.save_to_dir = save_to_dir
        self.save_prefix = save_prefix
        self.save_format = save_format
        super().__init__(self.x.shape[0], batch_size, shuffle, seed)

    def _get_batches_of_transformed_samples(self, index_array):
        gen = self.image_data_generator
        batch_x = np.zeros((len(index_array),) + self.x.shape[1:], dtype=self.dtype)
        for i, j in enumerate(index_array):
            x = self.x[j]
            params = gen.get_random_transform(x.shape)
            x = gen.apply_transform(x.astype(self.dtype), params)
            batch_x[i] = gen.standardize(x)
        if self.save_to_dir:
            _save_batch(
                batch_x,
                index_array,
                self.data_format,
                self.save_to_dir,
                self.save_prefix,
                self.save_format,
                10000,
            )
        miscs = [xx[index_array] for xx in self.x_misc]
        first = batch_x if not miscs else [batch_x] + miscs
        if self.y is None:
            return first
        if self.sample_weight is None:
            return first, self.y[index_array]
        return first, self.y[index_array], self.sample_weight[index_array]


def _iter_valid_files(directory, white_list_formats, follow_links):
    walk = sorted(os.walk(directory, followlinks=follow_links), key=lambda x: x[0])
    for root, _, files in walk:
        for fname in sorted(files):
            if fname.lower().endswith(".tiff"):
                warnings.warn(
                    'Using ".tiff" files with multiple bands will cause distortion. '
                    "Please verify your output.",
                    stacklevel=2,
                )
            if fname.lower().endswith(white_list_formats):
                yield root, fname


def _list_valid_filenames(directory, white_list_formats, split, class_index, links):
    files = list(_iter_valid_files(directory, white_list_formats, links))
    if split:
        files = files[int(split[0] * len(files)) : int(split[1] * len(files))]
    dirname = os.path.basename(directory)
    names = [
        os.path.join(dirname, os.path.relpath(os.path.join(root, f), directory))
        for root, f in files
    ]
    return [class_index] * len(names), names


class DirectoryIterator(Iterator):
    """Batches of augmented images read from `directory/<class>/*` (sorted),
    as `ImageDataGenerator.flow_from_directory` makes them.

    Differences from Keras: the class directories are listed one after the
    other (Keras lists them on a thread pool; the order is the same).
    """

    allowed_class_modes = {"categorical", "binary", "sparse", "input", None}

    def __init__(
        self,
        directory,
        image_data_generator,
        target_size=(256, 256),
        color_mode="rgb",
        classes=None,
        class_mode="categorical",
        batch_size=32,
        shuffle=True,
        seed=None,
        data_format=None,
        save_to_dir=None,
        save_prefix="",
        save_format="png",
        follow_links=False,
        subset=None,
        interpolation="nearest",
        keep_aspect_ratio=False,
        dtype=None,
    ):
        data_format = data_format or config.image_data_format()
        self.image_data_generator = image_data_generator
        self.target_size = tuple(target_size)
        self.keep_aspect_ratio = keep_aspect_ratio
        channels = {"rgba": 4, "rgb": 3, "grayscale": 1}
        if color_mode not in channels:
            raise ValueError(
                f"Invalid color mode: {color_mode}; "
                'expected "rgb", "rgba", or "grayscale".'
            )
        self.color_mode = color_mode
        self.data_format = data_format
        c = (channels[color_mode],)
        self.image_shape = (
            self.target_size + c
            if data_format == "channels_last"
            else c + self.target_size
        )
        self.save_to_dir = save_to_dir
        self.save_prefix = save_prefix
        self.save_format = save_format
        self.interpolation = interpolation
        if subset is None:
            split = None
        elif subset == "validation":
            split = (0, image_data_generator._validation_split)
        elif subset == "training":
            split = (image_data_generator._validation_split, 1)
        else:
            raise ValueError(
                f'Invalid subset name: {subset};expected "training" or "validation"'
            )
        self.split = split
        self.subset = subset
        self.directory = directory
        if class_mode not in self.allowed_class_modes:
            raise ValueError(
                f"Invalid class_mode: {class_mode}; expected one of: "
                f"{self.allowed_class_modes}"
            )
        self.class_mode = class_mode
        self.dtype = dtype or config.floatx()
        if not classes:
            classes = [
                d
                for d in sorted(os.listdir(directory))
                if os.path.isdir(os.path.join(directory, d))
            ]
        self.num_classes = len(classes)
        self.class_indices = dict(zip(classes, range(len(classes))))
        labels, self.filenames = [], []
        for name in classes:
            found, names = _list_valid_filenames(
                os.path.join(directory, name),
                self.white_list_formats,
                self.split,
                self.class_indices[name],
                follow_links,
            )
            labels += found
            self.filenames += names
        self.samples = len(self.filenames)
        self.classes = np.asarray(labels, dtype="int32").reshape(-1)
        print_msg(
            f"Found {self.samples} images belonging to {self.num_classes} classes."
        )
        self._filepaths = [os.path.join(directory, f) for f in self.filenames]
        super().__init__(self.samples, batch_size, shuffle, seed)

    @property
    def filepaths(self):
        return self._filepaths

    @property
    def labels(self):
        return self.classes

    @property
    def sample_weight(self):
        return None

    def _get_batches_of_transformed_samples(self, index_array):
        batch_x = np.zeros((len(index_array),) + self.image_shape, dtype=self.dtype)
        gen = self.image_data_generator
        for i, j in enumerate(index_array):
            img = image_utils.load_img(
                self._filepaths[j],
                color_mode=self.color_mode,
                target_size=self.target_size,
                interpolation=self.interpolation,
                keep_aspect_ratio=self.keep_aspect_ratio,
            )
            x = image_utils.img_to_array(img, data_format=self.data_format)
            img.close()
            if gen:
                x = gen.apply_transform(x, gen.get_random_transform(x.shape))
                x = gen.standardize(x)
            batch_x[i] = x
        if self.save_to_dir:
            _save_batch(
                batch_x,
                index_array,
                self.data_format,
                self.save_to_dir,
                self.save_prefix,
                self.save_format,
                int(1e7),
            )
        if self.class_mode == "input":
            batch_y = batch_x.copy()
        elif self.class_mode in {"binary", "sparse"}:
            batch_y = self.classes[index_array].astype(self.dtype)
        elif self.class_mode == "categorical":
            batch_y = np.zeros(
                (len(batch_x), len(self.class_indices)), dtype=self.dtype
            )
            batch_y[np.arange(len(batch_x)), self.classes[index_array]] = 1.0
        else:
            return batch_x
        return batch_x, batch_y


# -- the generator -----------------------------------------------------------------


class ImageDataGenerator:
    """Keras's real-time image augmentation: random rotations, shifts, shears,
    zooms, channel shifts, flips and brightness (`get_random_transform` /
    `apply_transform`), then `standardize` (rescale, sample- and feature-wise
    centring and normalization, ZCA whitening; the feature-wise statistics
    come from `fit`).

    Differences from Keras: `flow_from_dataframe` raises NotImplementedError
    (use `flow_from_directory`, or `flow` on arrays).
    """

    def __init__(
        self,
        featurewise_center=False,
        samplewise_center=False,
        featurewise_std_normalization=False,
        samplewise_std_normalization=False,
        zca_whitening=False,
        zca_epsilon=1e-06,
        rotation_range=0,
        width_shift_range=0.0,
        height_shift_range=0.0,
        brightness_range=None,
        shear_range=0.0,
        zoom_range: Any = 0.0,
        channel_shift_range=0.0,
        fill_mode="nearest",
        cval=0.0,
        horizontal_flip=False,
        vertical_flip=False,
        rescale=None,
        preprocessing_function=None,
        data_format=None,
        validation_split=0.0,
        interpolation_order=1,
        dtype=None,
    ):
        data_format = data_format or config.image_data_format()
        self.featurewise_center = featurewise_center
        self.samplewise_center = samplewise_center
        self.featurewise_std_normalization = featurewise_std_normalization
        self.samplewise_std_normalization = samplewise_std_normalization
        self.zca_whitening = zca_whitening
        self.zca_epsilon = zca_epsilon
        self.rotation_range = rotation_range
        self.width_shift_range = width_shift_range
        self.height_shift_range = height_shift_range
        self.shear_range = shear_range
        self.channel_shift_range = channel_shift_range
        self.fill_mode = fill_mode
        self.cval = cval
        self.horizontal_flip = horizontal_flip
        self.vertical_flip = vertical_flip
        self.rescale = rescale
        self.preprocessing_function = preprocessing_function
        self.dtype = dtype or config.floatx()
        self.interpolation_order = interpolation_order
        if data_format not in {"channels_last", "channels_first"}:
            raise ValueError(
                '`data_format` should be `"channels_last"` (channel after row and '
                'column) or `"channels_first"` (channel before row and column). '
                f"Received: {data_format}"
            )
        self.data_format = data_format
        if data_format == "channels_first":
            self.channel_axis, self.row_axis, self.col_axis = 1, 2, 3
        else:
            self.channel_axis, self.row_axis, self.col_axis = 3, 1, 2
        if validation_split and not 0 < validation_split < 1:
            raise ValueError(
                "`validation_split` must be strictly between 0 and 1. "
                f" Received: {validation_split}"
            )
        self._validation_split = validation_split
        self.mean = None
        self.std = None
        self.zca_whitening_matrix = None
        if isinstance(zoom_range, (float, int)):
            self.zoom_range = [1 - zoom_range, 1 + zoom_range]
        elif len(zoom_range) == 2 and all(
            isinstance(v, (float, int)) for v in zoom_range
        ):
            self.zoom_range = [zoom_range[0], zoom_range[1]]
        else:
            raise ValueError(
                "`zoom_range` should be a float or a tuple or list of two floats. "
                f"Received: {zoom_range}"
            )
        self._warn_overrides()
        if brightness_range is not None and (
            not isinstance(brightness_range, (tuple, list))
            or len(brightness_range) != 2
        ):
            raise ValueError(
                "`brightness_range should be tuple or list of two floats. "
                f"Received: {brightness_range}"
            )
        self.brightness_range = brightness_range

    def _warn_overrides(self):
        def warn(text):
            warnings.warn(f"This ImageDataGenerator specifies {text}", stacklevel=3)

        if self.zca_whitening:
            if not self.featurewise_center:
                self.featurewise_center = True
                warn(
                    "`zca_whitening`, which overrides setting of `featurewise_center`."
                )
            if self.featurewise_std_normalization:
                self.featurewise_std_normalization = False
                warn(
                    "`zca_whitening` which overrides setting of"
                    "`featurewise_std_normalization`."
                )
        if self.featurewise_std_normalization and not self.featurewise_center:
            self.featurewise_center = True
            warn(
                "`featurewise_std_normalization`, which overrides setting of "
                "`featurewise_center`."
            )
        if self.samplewise_std_normalization and not self.samplewise_center:
            self.samplewise_center = True
            warn(
                "`samplewise_std_normalization`, which overrides setting of "
                "`samplewise_center`."
            )

    def flow(
        self,
        x,
        y=None,
        batch_size=32,
        shuffle=True,
        sample_weight=None,
        seed=None,
        save_to_dir=None,
        save_prefix="",
        save_format="png",
        ignore_class_split=False,
        subset=None,
    ):
        """A `NumpyArrayIterator` of augmented batches of `x` (and `y`)."""
        return NumpyArrayIterator(
            x,
            y,
            self,
            batch_size=batch_size,
            shuffle=shuffle,
            sample_weight=sample_weight,
            seed=seed,
            data_format=self.data_format,
            save_to_dir=save_to_dir,
            save_prefix=save_prefix,
            save_format=save_format,
            ignore_class_split=ignore_class_split,
            subset=subset,
            dtype=self.dtype,
        )

    def flow_from_directory(
        self,
        directory,
        target_size=(256, 256),
        color_mode="rgb",
        classes=None,
        class_mode="categorical",
        batch_size=32,
        shuffle=True,
        seed=None,
        save_to_dir=None,
        save_prefix="",
        save_format="png",
        follow_links=False,
        subset=None,
        interpolation="nearest",
        keep_aspect_ratio=False,
    ):
        """A `DirectoryIterator` over `directory/<class>/<image files>`."""
        return DirectoryIterator(
            directory,
            self,
            target_size=target_size,
            color_mode=color_mode,
            keep_aspect_ratio=keep_aspect_ratio,
            classes=classes,
            class_mode=class_mode,
            data_format=self.data_format,
            batch_size=batch_size,
            shuffle=shuffle,
            seed=seed,
            save_to_dir=save_to_dir,
            save_prefix=save_prefix,
            save_format=save_format,
            follow_links=follow_links,
            subset=subset,
            interpolation=interpolation,
            dtype=self.dtype,
        )

    def flow_from_dataframe(self, dataframe, *args, **kwargs):
        """Not implemented in jaxtape: raises NotImplementedError."""
        del dataframe, args, kwargs
        raise NotImplementedError(
            "ImageDataGenerator.flow_from_dataframe is not implemented in jaxtape; "
            "use flow_from_directory, or load the images and use flow."
        )

    def standardize(self, x):
        """Applies `preprocessing_function`, `rescale` and the normalizations to
        one image or a batch (in place where NumPy allows, as Keras's)."""
        if self.preprocessing_function:
            x = self.preprocessing_function(x)
        if self.rescale:
            x *= self.rescale
        if self.samplewise_center:
            x -= np.mean(x, keepdims=True)
        if self.samplewise_std_normalization:
            x /= np.std(x, keepdims=True) + 1e-06
        unfit = (
            "This ImageDataGenerator specifies `{}`, but it hasn't been fit on any "
            "training data. Fit it first by calling `.fit(numpy_data)`."
        )
        if self.featurewise_center:
            if self.mean is not None:
                x -= self.mean
            else:
                warnings.warn(unfit.format("featurewise_center"), stacklevel=2)
        if self.featurewise_std_normalization:
            if self.std is not None:
                x /= self.std + 1e-06
            else:
                warnings.warn(
                    unfit.format("featurewise_std_normalization"), stacklevel=2
                )
        if self.zca_whitening:
            if self.zca_whitening_matrix is not None:
                flat_x = x.reshape(-1, math.prod(x.shape[-3:]))
                x = np.reshape(flat_x @ self.zca_whitening_matrix, x.shape)
            else:
                warnings.warn(unfit.format("zca_whitening"), stacklevel=2)
        return x

    def _random_shift(self, shift_range, size):
        try:
            t = np.random.choice(shift_range)
            t *= np.random.choice([-1, 1])
        except ValueError:
            t = np.random.uniform(-shift_range, shift_range)
        if np.max(shift_range) < 1:
            t *= size
        return t

    def get_random_transform(self, img_shape, seed=None):
        """Draws one image's transform parameters (NumPy's global generator,
        reseeded with `seed` when given), in Keras's order of draws."""
        row, col = self.row_axis - 1, self.col_axis - 1
        if seed is not None:
            np.random.seed(seed)
        theta = (
            np.random.uniform(-self.rotation_range, self.rotation_range)
            if self.rotation_range
            else 0
        )
        tx = (
            self._random_shift(self.height_shift_range, img_shape[row])
            if self.height_shift_range
            else 0
        )
        ty = (
            self._random_shift(self.width_shift_range, img_shape[col])
            if self.width_shift_range
            else 0
        )
        shear = (
            np.random.uniform(-self.shear_range, self.shear_range)
            if self.shear_range
            else 0
        )
        if self.zoom_range[0] == 1 and self.zoom_range[1] == 1:
            zx, zy = 1, 1
        else:
            zx, zy = np.random.uniform(self.zoom_range[0], self.zoom_range[1], 2)
        flip_horizontal = (np.random.random() < 0.5) * self.horizontal_flip
        flip_vertical = (np.random.random() < 0.5) * self.vertical_flip
        channel_shift_intensity = None
        if self.channel_shift_range != 0:
            channel_shift_intensity = np.random.uniform(
                -self.channel_shift_range, self.channel_shift_range
            )
        brightness = None
        if self.brightness_range is not None:
            brightness = np.random.uniform(
                self.brightness_range[0], self.brightness_range[1]
            )
        return {
            "theta": theta,
            "tx": tx,
            "ty": ty,
            "shear": shear,
            "zx": zx,
            "zy": zy,
            "flip_horizontal": flip_horizontal,
            "flip_vertical": flip_vertical,
            "channel_shift_intensity": channel_shift_intensity,
            "brightness": brightness,
        }

    def apply_transform(self, x, transform_parameters):
        """Applies `get_random_transform`'s parameters to one rank-3 image."""
        p = transform_parameters
        row, col, channel = self.row_axis - 1, self.col_axis - 1, self.channel_axis - 1
        x = apply_affine_transform(
            x,
            p.get("theta", 0),
            p.get("tx", 0),
            p.get("ty", 0),
            p.get("shear", 0),
            p.get("zx", 1),
            p.get("zy", 1),
            row_axis=row,
            col_axis=col,
            channel_axis=channel,
            fill_mode=self.fill_mode,
            cval=self.cval,
            order=self.interpolation_order,
        )
        if p.get("channel_shift_intensity") is not None:
            x = apply_channel_shift(x, p["channel_shift_intensity"], channel)
        if p.get("flip_horizontal", False):
            x = _flip_axis(x, col)
        if p.get("flip_vertical", False):
            x = _flip_axis(x, row)
        if p.get("brightness") is not None:
            x = apply_brightness_shift(x, p["brightness"], False)
        return x

    def random_transform(self, x, seed=None):
        """`apply_transform(x, get_random_transform(x.shape, seed))`."""
        return self.apply_transform(x, self.get_random_transform(x.shape, seed))

    def fit(self, x, augment=False, rounds=1, seed=None):
        """Computes the feature-wise mean, std and ZCA matrix from images `x`
        (`augment`: from `rounds` randomly transformed copies)."""
        x = np.asarray(x, dtype=self.dtype)
        if x.ndim != 4:
            raise ValueError(
                "Input to `.fit()` should have rank 4. Got array with shape: "
                + str(x.shape)
            )
        if x.shape[self.channel_axis] not in {1, 3, 4}:
            warnings.warn(
                "Expected input to be images (as Numpy array) following the data "
                f'format convention "{self.data_format}" (channels on axis '
                f"{self.channel_axis}), i.e. expected either 1, 3 or 4 channels on "
                f"axis {self.channel_axis}. However, it was passed an array with "
                f"shape {x.shape} ({x.shape[self.channel_axis]} channels).",
                stacklevel=2,
            )
        if seed is not None:
            np.random.seed(seed)
        x = np.copy(x)
        if self.rescale:
            x *= self.rescale
        if augment:
            ax = np.zeros((rounds * x.shape[0],) + x.shape[1:], dtype=self.dtype)
            for r in range(rounds):
                for i in range(x.shape[0]):
                    ax[i + r * x.shape[0]] = self.random_transform(x[i])
            x = ax
        broadcast = [1, 1, 1]
        broadcast[self.channel_axis - 1] = x.shape[self.channel_axis]
        axes = (0, self.row_axis, self.col_axis)
        if self.featurewise_center:
            self.mean = np.reshape(np.mean(x, axis=axes), broadcast)
            x -= self.mean
        if self.featurewise_std_normalization:
            self.std = np.reshape(np.std(x, axis=axes), broadcast)
            x /= self.std + 1e-06
        if self.zca_whitening:
            n = len(x)
            u, s, _ = np.linalg.svd(np.reshape(x, (n, -1)).T, full_matrices=False)
            s_inv = np.sqrt(n) / (s + self.zca_epsilon)
            self.zca_whitening_matrix = (u * s_inv).dot(u.T)
