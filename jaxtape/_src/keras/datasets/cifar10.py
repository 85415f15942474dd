"""`keras.datasets.cifar10.load_data`: the CIFAR-10 `tar.gz` Keras downloads
(cached as `~/.keras/datasets/cifar-10-batches-py-target_archive`)."""

from __future__ import annotations

import numpy as np

from jaxtape._src.keras.datasets import _cifar, _files

ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
SHA256 = "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"
ARCHIVE = "cifar-10-batches-py-target_archive"  # Keras's get_file name for it
_TRAIN = tuple(f"data_batch_{i}" for i in range(1, 6))


def load_data():
    """Keras's CIFAR-10: `(x_train, y_train), (x_test, y_test)`, uint8 images
    `(50000, 32, 32, 3)` / `(10000, 32, 32, 3)` (channels first under
    `image_data_format() == "channels_first"`) and uint8 labels `(n, 1)`
    (airplane, automobile, bird, cat, deer, dog, frog, horse, ship, truck).

    Differences from Keras: the batches are read straight from the cached
    archive; Keras also unpacks it into `cifar-10-batches-py-target/`.
    """
    archive = _files.fetch(ARCHIVE, ORIGIN, SHA256)
    batches = _cifar.read_batches(
        archive, "cifar-10-batches-py", (*_TRAIN, "test_batch"), "labels"
    )
    # Keras fills uint8 arrays batch by batch; the same values, in one go.
    x_train = np.concatenate([batches[n][0] for n in _TRAIN]).astype(np.uint8)
    y_train = np.array([y for n in _TRAIN for y in batches[n][1]], np.uint8)
    x_test, y_test = batches["test_batch"]
    y_train = np.reshape(y_train, (len(y_train), 1))
    y_test = np.reshape(y_test, (len(y_test), 1))
    x_train = _cifar.to_image_data_format(x_train)
    x_test = _cifar.to_image_data_format(x_test)
    return (x_train, y_train), (x_test.astype(x_train.dtype), y_test.astype(np.uint8))
