"""`keras.datasets.cifar100.load_data`: the CIFAR-100 `tar.gz` Keras downloads
(cached as `~/.keras/datasets/cifar-100-python-target_archive`)."""

from __future__ import annotations

import numpy as np

from jaxtape._src.keras.datasets import _cifar, _files

ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
SHA256 = "85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7"
ARCHIVE = "cifar-100-python-target_archive"  # Keras's get_file name for it


def load_data(label_mode: str = "fine"):
    """Keras's CIFAR-100: `(x_train, y_train), (x_test, y_test)`, uint8 images
    `(50000, 32, 32, 3)` / `(10000, 32, 32, 3)` (channels first under
    `image_data_format() == "channels_first"`) and labels `(n, 1)`: the 100
    fine classes, or the 20 superclasses with `label_mode="coarse"`.

    The labels are int64, as Keras's (its docstring says uint8).

    Differences from Keras: the batches are read straight from the cached
    archive; Keras also unpacks it into `cifar-100-python-target/`.
    """
    if label_mode not in ["fine", "coarse"]:
        raise ValueError(
            '`label_mode` must be one of `"fine"`, `"coarse"`. '
            f"Received: label_mode={label_mode}."
        )
    archive = _files.fetch(ARCHIVE, ORIGIN, SHA256)
    batches = _cifar.read_batches(
        archive, "cifar-100-python", ("train", "test"), f"{label_mode}_labels"
    )
    (x_train, y_train), (x_test, y_test) = batches["train"], batches["test"]
    y_train = np.reshape(y_train, (len(y_train), 1))
    y_test = np.reshape(y_test, (len(y_test), 1))
    x_train = _cifar.to_image_data_format(x_train)
    x_test = _cifar.to_image_data_format(x_test)
    return (x_train, y_train), (x_test, y_test)
