"""`keras.datasets.mnist.load_data`, with Keras's cache and an offline override.

Order of lookup: `$JAXTAPE_MNIST_PATH` (a local `mnist.npz`, e.g. on machines
without internet), then Keras's cache `~/.keras/datasets/<path>`, then a
download from Keras's public location, verified by SHA-256 and written
atomically (temporary file, then rename).
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import tempfile
import urllib.request

import numpy as np

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"
SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"
ENV_VAR = "JAXTAPE_MNIST_PATH"


def _sha256(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _download(target: pathlib.Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".mnist-", suffix=".part")
    os.close(fd)
    try:
        try:
            urllib.request.urlretrieve(ORIGIN, tmp)
        except OSError as e:
            raise OSError(
                f"Could not download MNIST from {ORIGIN} ({e}). Without internet, "
                f"point ${ENV_VAR} at a local copy of mnist.npz."
            ) from None
        digest = _sha256(pathlib.Path(tmp))
        if digest != SHA256:
            raise ValueError(
                f"The downloaded MNIST file has SHA-256 {digest}, expected {SHA256}; "
                "the download is corrupt. Try again."
            )
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_data(path: str = "mnist.npz"):
    """`(x_train, y_train), (x_test, y_test)`: uint8 images 28x28 and uint8 labels."""
    local = os.environ.get(ENV_VAR)
    if local:
        file = pathlib.Path(local).expanduser()
        if not file.is_file():
            raise FileNotFoundError(
                f"${ENV_VAR} points at {file}, which is not a file. Set it to the "
                "path of mnist.npz, or unset it to use the Keras cache/download."
            )
    else:
        cache = pathlib.Path(os.environ.get("KERAS_HOME", "~/.keras")).expanduser()
        file = cache / "datasets" / path
        if not file.is_file():
            _download(file)
    try:
        with np.load(file, allow_pickle=False) as data:
            return (data["x_train"], data["y_train"]), (data["x_test"], data["y_test"])
    except (KeyError, ValueError, OSError) as e:
        raise ValueError(
            f"{file} is not a valid mnist.npz (expected arrays x_train, y_train, "
            f"x_test, y_test): {e}"
        ) from None
