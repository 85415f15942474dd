"""File sources: `TextLineDataset` and `Dataset.list_files` (TF's semantics).

Layer L4. Lines and file names are bytes (NumPy `S` arrays: jaxtape has no
string tensors).
"""

from __future__ import annotations

import glob
import gzip
import os
import zlib
from collections.abc import Callable, Iterator

import numpy as np

from jaxtape._src.core import errors
from jaxtape._src.data.dataset import UNKNOWN_CARDINALITY, Dataset, _to_numpy

_COMPRESSIONS = ("", "GZIP", "ZLIB")


def _file_names(filenames) -> list[str]:
    if isinstance(filenames, Dataset):
        return [_text(f) for f in filenames.as_numpy_iterator()]
    array = np.asarray(
        _to_numpy(filenames) if not isinstance(filenames, str) else filenames
    )
    if array.ndim > 1:
        raise errors.InvalidArgumentError(
            None, None, "`filenames` must be a `tf.Tensor` of dimension 1 or 0."
        )
    return [_text(f) for f in np.atleast_1d(array).tolist()]


def _text(name) -> str:
    name = name.item() if isinstance(name, np.ndarray) else name
    return os.fsdecode(name) if isinstance(name, bytes) else os.fspath(name)


def _read_lines(path: str, compression: str):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(
            None, None, f"{path}; No such file or directory"
        ) from None
    if compression == "GZIP":
        data = gzip.decompress(data)
    elif compression == "ZLIB":
        data = zlib.decompress(data)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # a final newline ends the last line, it does not start one
    for line in lines:
        yield np.asarray(line[:-1] if line.endswith(b"\r") else line)


class TextLineDataset(Dataset):
    """The lines of one or more text files (TF's `tf.data.TextLineDataset`).

    Each element is one line as bytes, without its `\\n` or `\\r\\n`; files
    are read in order, or `num_parallel_reads` at a time interleaved line by
    line as TF does. `compression_type` is `None`/`""`, `"GZIP"` or `"ZLIB"`.

    Differences from TensorFlow: lines are NumPy bytes arrays (jaxtape has
    no string tensors), so `element_spec` is not available; `buffer_size` is
    accepted and ignored (files are read whole).
    """

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None):  # fmt: skip
        compression = (compression_type or "").upper()
        if compression not in _COMPRESSIONS:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Unsupported compression_type: {compression_type!r}. Use None, "
                "'GZIP' or 'ZLIB'.",
            )
        names = _file_names(filenames)
        del buffer_size, name

        def read_in_order() -> Iterator:
            for path in names:
                yield from _read_lines(path, compression)

        make: Callable[[], Iterator] = read_in_order
        if num_parallel_reads is not None:
            files = Dataset.from_tensor_slices(
                np.asarray([os.fsencode(n) for n in names])
            )
            lines = files.interleave(
                lambda f: Dataset(
                    lambda: _read_lines(_text(np.asarray(f)), compression),
                    UNKNOWN_CARDINALITY,
                ),
                cycle_length=num_parallel_reads,
                block_length=1,
                num_parallel_calls=num_parallel_reads,
            )
            make = lines._make
        super().__init__(make, UNKNOWN_CARDINALITY)


def list_files(file_pattern, shuffle=None, seed=None) -> Dataset:
    patterns = _file_names(file_pattern)
    matches: list[str] = []
    for pattern in patterns:
        matches.extend(sorted(glob.glob(pattern)))
    if not matches:
        raise errors.InvalidArgumentError(
            None, None, f"No files matched pattern: {', '.join(patterns)}"
        )
    ds = Dataset.from_tensor_slices(np.asarray([os.fsencode(m) for m in matches]))
    if shuffle is None or shuffle:
        ds = ds.shuffle(len(matches), seed=seed)
    return ds
