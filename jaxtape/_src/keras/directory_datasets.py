"""`keras.utils.image_dataset_from_directory` and `text_dataset_from_directory`:
a folder of class subfolders as a labelled, batched jaxtape `Dataset`. Layer L5.

Files are indexed as Keras indexes them (classes the sorted subfolders,
files walked in sorted order, shuffled with `np.random.RandomState(seed)`,
the validation split taken from the end), so with `shuffle=False` the
batches equal tf.keras's; Keras shuffles the batches again in a buffer, so
shuffled orders differ.
"""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.data.dataset import Dataset
from jaxtape._src.keras.image_utils import _pil_image

_IMAGE_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")


def _index(directory, labels, formats, class_names, shuffle, seed, follow_links,
           verbose):  # fmt: skip
    if labels == "inferred":
        subdirs = [
            d
            for d in sorted(os.listdir(directory))
            if os.path.isdir(os.path.join(directory, d)) and not d.startswith(".")
        ]
        if class_names is not None:
            if not set(class_names).issubset(set(subdirs)):
                raise ValueError(
                    "The `class_names` passed did not match the names of the "
                    "subdirectories of the target directory. Expected: "
                    f"{subdirs} (or a subset of it), but received: "
                    f"class_names={class_names}"
                )
            subdirs = list(class_names)
    else:
        subdirs = [""]
        if class_names is not None:
            raise ValueError(
                "When `labels=None` (no labels), argument `class_names` cannot be "
                "specified."
                if labels is None
                else "When argument `labels` is specified, argument `class_names` "
                "cannot be specified (the `class_names` will be the sorted list of "
                "labels)."
            )
    paths, found = [], []
    for index, sub in enumerate(subdirs):
        root_dir = os.path.join(directory, sub)
        walk = sorted(os.walk(root_dir, followlinks=follow_links), key=lambda w: w[0])
        for root, _, files in walk:
            for fname in sorted(files):
                if fname.lower().endswith(formats):
                    paths.append(os.path.join(root, fname))
                    found.append(index)
    if labels == "inferred":
        label_array = np.asarray(found, dtype="int32")
        names = subdirs
    elif labels is None:
        label_array, names = None, None
    else:
        if len(labels) != len(paths):
            raise ValueError(
                "Expected the lengths of `labels` to match the number of files in "
                f"the target directory. len(labels) is {len(labels)} while we "
                f"found {len(paths)} files in directory {directory}."
            )
        label_array = np.asarray(labels)
        names = [str(label) for label in sorted(set(labels))]
    if verbose:
        if label_array is None:
            print(f"Found {len(paths)} files.")
        else:
            print(f"Found {len(paths)} files belonging to {len(names or [])} classes.")
    if shuffle:
        if seed is None:
            seed = np.random.randint(int(1e6))
        np.random.RandomState(seed).shuffle(paths)
        if label_array is not None:
            np.random.RandomState(seed).shuffle(label_array)
    return paths, label_array, names


def _check_split(validation_split, subset, shuffle, seed):
    if validation_split and not 0 < validation_split < 1:
        raise ValueError(
            f"`validation_split` must be between 0 and 1, received: {validation_split}"
        )
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError(
            "If `subset` is set, `validation_split` must be set, and inversely."
        )
    if subset not in ("training", "validation", "both", None):
        raise ValueError(
            '`subset` must be either "training", "validation" or "both", '
            f"received: {subset}"
        )
    if validation_split and shuffle and seed is None:
        raise ValueError(
            "If using `validation_split` and shuffling the data, you must provide "
            "a `seed` argument, to make sure that there is no overlap between the "
            "training and validation subset."
        )


def _split(paths, labels, validation_split, subset, verbose):
    if not validation_split:
        return paths, labels
    num_val = int(validation_split * len(paths))
    if subset == "training":
        if verbose:
            print(f"Using {len(paths) - num_val} files for training.")
        sl = slice(None, -num_val)
    else:
        if verbose:
            print(f"Using {num_val} files for validation.")
        sl = slice(-num_val, None)
    return paths[sl], (None if labels is None else labels[sl])


def _labels(labels, label_mode, num_classes):
    if label_mode == "int":
        return labels.astype("int32")
    if label_mode == "binary":
        return labels.astype("float32").reshape(-1, 1)
    return np.eye(num_classes, dtype="float32")[labels]


def _check_label_mode(label_mode, class_names, labels):
    if label_mode not in ("int", "categorical", "binary", None):
        raise ValueError(
            '`label_mode` argument must be one of "int", "categorical", "binary", '
            f"or None. Received: label_mode={label_mode}"
        )
    if labels is None or label_mode is None:
        return
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(
            'When passing `label_mode="binary"`, there must be exactly 2 '
            f"class_names. Received: class_names={class_names}"
        )


def _build(elements_fn, directory, labels, label_mode, class_names, batch_size,
           shuffle, seed, validation_split, subset, follow_links, formats,
           verbose):  # fmt: skip
    if labels not in ("inferred", None) and not isinstance(labels, (list, tuple)):
        raise ValueError(
            "`labels` argument should be a list/tuple of integer labels, of the "
            "same size as the number of files in the target directory. If you "
            "wish to infer the labels from the subdirectory names in the target "
            'directory, pass `labels="inferred"`. If you wish to get a dataset '
            f"that only contains images (no labels), pass `labels=None`. "
            f"Received: labels={labels}"
        )
    if labels is None or label_mode is None:
        labels, label_mode = (None if labels == "inferred" else labels), None
    _check_split(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(int(1e6))
    paths, label_array, names = _index(
        directory, labels, formats, class_names, shuffle, seed, follow_links, verbose
    )
    _check_label_mode(label_mode, names, label_array)
    if not paths:
        raise ValueError(
            f"No files found in directory {directory}. Allowed formats: {formats}"
        )

    def make(subset_name):
        p, lab = _split(paths, label_array, validation_split, subset_name, verbose)
        if not p:
            raise ValueError(
                f"No files found in directory {directory}. Allowed formats: {formats}"
            )
        x = elements_fn(p)
        data = x if lab is None or label_mode is None else (
            x, _labels(lab, label_mode, len(names or []))
        )  # fmt: skip
        ds = Dataset.from_tensor_slices(data)
        if shuffle:  # Keras shuffles again in a buffer
            ds = ds.shuffle(1024 if batch_size is None else batch_size * 8, seed=seed)
        if batch_size is not None:
            ds = ds.batch(batch_size)
        ds.class_names = names  # type: ignore[attr-defined]
        ds.file_paths = p  # type: ignore[attr-defined]
        return ds

    if subset == "both":
        return [make("training"), make("validation")]
    return make(subset)


def image_dataset_from_directory(
    directory, labels="inferred", label_mode="int", class_names=None,
    color_mode="rgb", batch_size=32, image_size=(256, 256), shuffle=True,
    seed=None, validation_split=None, subset=None, interpolation="bilinear",
    follow_links=False, crop_to_aspect_ratio=False, pad_to_aspect_ratio=False,
    data_format=None, format="tf", verbose=True,
):  # fmt: skip
    """Images in class subfolders as a Dataset of `(images, labels)` batches
    (Keras's `image_dataset_from_directory`): float32 images (uint8 with
    `interpolation='nearest'`, as tf.image.resize gives) of `image_size`
    with 1 (grayscale), 3 (rgb) or 4 (rgba) channels; labels by `label_mode`
    ('int' int32, 'categorical' one-hot float32, 'binary' float32 (n, 1),
    None no labels). The Dataset has `class_names` and `file_paths`.

    Differences from Keras: resizing is `jax.image.resize` without
    antialiasing (tf.image.resize's default; bilinear and nearest agree with
    tf.keras); grayscale conversion is Pillow's ('L'), which can differ by 1
    from TF's PNG/JPEG decoder; `crop_to_aspect_ratio`,
    `pad_to_aspect_ratio` and `format='grain'` raise NotImplementedError;
    all images are decoded when the Dataset is made.
    """
    for arg, value in (
        ("crop_to_aspect_ratio", crop_to_aspect_ratio),
        ("pad_to_aspect_ratio", pad_to_aspect_ratio),
        ("format='grain'", format == "grain"),
    ):
        if value:
            raise NotImplementedError(
                f"image_dataset_from_directory: `{arg}` is not supported."
            )
    modes = {"rgb": ("RGB", 3), "rgba": ("RGBA", 4), "grayscale": ("L", 1)}
    if color_mode not in modes:
        raise ValueError(
            '`color_mode` must be one of {"rgb", "rgba", "grayscale"}. '
            f"Received: color_mode={color_mode}"
        )
    methods = {"bilinear": "bilinear", "nearest": "nearest", "bicubic": "bicubic",
               "lanczos3": "lanczos3", "lanczos5": "lanczos5"}  # fmt: skip
    if interpolation not in methods:
        raise NotImplementedError(
            f"image_dataset_from_directory: interpolation={interpolation!r} is not "
            f"supported; use one of {sorted(methods)}."
        )
    pil_mode, channels = modes[color_mode]
    height, width = image_size

    def load(paths):
        image = _pil_image()
        # tf.image.resize keeps uint8 for nearest, else gives float32
        dtype = np.uint8 if interpolation == "nearest" else np.float32
        out = np.empty((len(paths), height, width, channels), dtype)
        for i, path in enumerate(paths):
            with image.open(path) as img:
                arr = np.asarray(img.convert(pil_mode), np.float32)
            arr = arr.reshape(arr.shape[0], arr.shape[1], channels)
            if arr.shape[:2] != (height, width):
                arr = np.asarray(
                    jax.image.resize(
                        jnp.asarray(arr),
                        (height, width, channels),
                        methods[interpolation],
                        antialias=False,
                    )
                )
            out[i] = np.round(arr) if dtype == np.uint8 else arr
        if data_format == "channels_first":
            out = out.transpose(0, 3, 1, 2)
        return out

    return _build(load, directory, labels, label_mode, class_names, batch_size,
                  shuffle, seed, validation_split, subset, follow_links,
                  _IMAGE_FORMATS, verbose)  # fmt: skip


def text_dataset_from_directory(
    directory, labels="inferred", label_mode="int", class_names=None,
    batch_size=32, max_length=None, shuffle=True, seed=None,
    validation_split=None, subset=None, follow_links=False, format="tf",
    verbose=True,
):  # fmt: skip
    """`.txt` files in class subfolders as a Dataset of `(texts, labels)`
    batches (Keras's `text_dataset_from_directory`): texts as bytes (cut to
    `max_length` characters), labels as for `image_dataset_from_directory`.

    Differences from Keras: `format='grain'` raises NotImplementedError.
    """
    if format == "grain":
        raise NotImplementedError(
            "text_dataset_from_directory: `format='grain'` is not supported."
        )

    def load(paths):
        texts = []
        for path in paths:
            with open(path, "rb") as f:
                data = f.read()
            if max_length is not None:
                data = data[:max_length]
            texts.append(data)
        return np.array(texts, dtype=object)

    return _build(load, directory, labels, label_mode, class_names, batch_size,
                  shuffle, seed, validation_split, subset, follow_links,
                  (".txt",), verbose)  # fmt: skip
