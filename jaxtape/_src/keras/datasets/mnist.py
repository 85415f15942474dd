"""`keras.datasets.mnist.load_data`, with Keras's cache and an offline override.

Order of lookup: `$JAXTAPE_MNIST_PATH` (a local `mnist.npz`, e.g. on machines
without internet), then Keras's cache `~/.keras/datasets/<path>`, then a
download from Keras's public location, verified by SHA-256 and written
atomically (temporary file, then rename): see `_files.fetch`.
"""

from __future__ import annotations

import os
import pathlib

from jaxtape._src.keras.datasets import _files

ORIGIN = _files.ORIGIN_FOLDER + "mnist.npz"
SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"
ENV_VAR = "JAXTAPE_MNIST_PATH"


def load_data(path: str = "mnist.npz"):
    """Keras's MNIST: `(x_train, y_train), (x_test, y_test)`, uint8 images of
    shape `(60000, 28, 28)` / `(10000, 28, 28)` and uint8 labels.

    Args:
      path: the file name in Keras's cache (`~/.keras/datasets/<path>`).

    Differences from Keras: `$JAXTAPE_MNIST_PATH`, when set, names a local
    `mnist.npz` that is read instead (no cache, no download).
    """
    local = os.environ.get(ENV_VAR)
    if local:
        file = pathlib.Path(local).expanduser()
        if not file.is_file():
            raise FileNotFoundError(
                f"${ENV_VAR} points at {file}, which is not a file. Set it to the "
                "path of mnist.npz, or unset it to use the Keras cache/download."
            )
    else:
        file = _files.fetch(
            path,
            ORIGIN,
            SHA256,
            hint=f"Or point ${ENV_VAR} at a local copy of mnist.npz.",
        )
    x_train, y_train, x_test, y_test = _files.load_arrays(
        file, ("x_train", "y_train", "x_test", "y_test"), "mnist.npz"
    )
    return (x_train, y_train), (x_test, y_test)
