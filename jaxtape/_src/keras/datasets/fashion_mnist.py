"""`keras.datasets.fashion_mnist.load_data`: Zalando's Fashion-MNIST, read from
the four gzipped IDX files Keras downloads into `~/.keras/datasets/fashion-mnist`.
"""

from __future__ import annotations

import gzip
import os

import numpy as np

from jaxtape._src.keras.datasets import _files

FILES = (
    "train-labels-idx1-ubyte.gz",
    "train-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
)
CACHE_SUBDIR = os.path.join("datasets", "fashion-mnist")


def _read_idx(path, offset: int) -> np.ndarray:
    with open(path, "rb") as f:
        return np.frombuffer(gzip.decompress(f.read()), np.uint8, offset=offset)


def load_data():
    """Keras's Fashion-MNIST: `(x_train, y_train), (x_test, y_test)`, uint8
    images of shape `(60000, 28, 28)` / `(10000, 28, 28)` and uint8 labels 0-9
    (T-shirt/top, Trouser, Pullover, Dress, Coat, Sandal, Shirt, Sneaker, Bag,
    Ankle boot).

    Differences from Keras: none known (Keras publishes no hash for these
    files, so neither checks one). The arrays are read-only views of the
    decompressed files, as Keras's.
    """
    paths = [
        _files.fetch(f, _files.ORIGIN_FOLDER + f, cache_subdir=CACHE_SUBDIR)
        for f in FILES
    ]
    y_train = _read_idx(paths[0], 8)
    x_train = _read_idx(paths[1], 16).reshape(len(y_train), 28, 28)
    y_test = _read_idx(paths[2], 8)
    x_test = _read_idx(paths[3], 16).reshape(len(y_test), 28, 28)
    return (x_train, y_train), (x_test, y_test)
