"""What CIFAR-10 and CIFAR-100 share: reading pickled batches from Keras's
cached `tar.gz` and Keras's channel layout. Layer L5."""

from __future__ import annotations

import tarfile

import numpy as np

from jaxtape._src.core import config
from jaxtape._src.keras.datasets import _files


def read_batches(archive, folder: str, names, label_key: str):
    """`{name: (data (n, 3, 32, 32), labels list)}` for the pickled batches
    `folder/<name>` of the `tar.gz` at `archive`, read in one pass without
    extracting (Keras unpacks the archive beside it on every call instead)."""
    wanted = {f"{folder}/{name}": name for name in names}
    batches = {}
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:
                name = wanted.get(member.name.removeprefix("./"))
                f = tar.extractfile(member) if name and member.isfile() else None
                if f is not None:
                    batch = _files.unpickle(f, encoding="bytes")
                    batch = {k.decode("utf8"): v for k, v in batch.items()}
                    data = batch["data"]
                    batches[name] = (data.reshape(data.shape[0], 3, 32, 32),
                                     batch[label_key])  # fmt: skip
    except (tarfile.TarError, OSError, EOFError, KeyError) as e:
        raise ValueError(
            f"{archive} is not a valid CIFAR archive ({e!r}). Delete it so that "
            "it is downloaded again."
        ) from None
    missing = [f"{folder}/{n}" for n in names if n not in batches]
    if missing:
        raise ValueError(
            f"{archive} lacks the CIFAR batches {missing}. Delete it so that it "
            "is downloaded again."
        )
    return batches


def to_image_data_format(x: np.ndarray) -> np.ndarray:
    """NCHW batches as Keras returns them: NHWC under `channels_last`."""
    if config.image_data_format() == "channels_last":
        return x.transpose(0, 2, 3, 1)
    return x
