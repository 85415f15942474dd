"""`keras.utils` datasets built from arrays: `timeseries_dataset_from_array`
and `split_dataset`. Layer L5.

Both return jaxtape `Dataset`s with the elements and batches tf.keras's
(Keras 3's `format="tf"`) give for the same arguments; `split_dataset`'s
shuffled order too (the same Python `random` draws Keras makes).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np

from jaxtape._src.data.dataset import Dataset
from jaxtape._src.keras.data_adapter import to_numpy


def timeseries_dataset_from_array(
    data, targets, sequence_length, sequence_stride=1, sampling_rate=1,
    batch_size=128, shuffle=False, seed=None, start_index=None, end_index=None,
    format="tf",
):  # fmt: skip
    """Sliding windows over `data` (Keras's `timeseries_dataset_from_array`).

    Window `i` holds `data[start + p_i + k * sampling_rate]` for `k` in
    `range(sequence_length)`, where `p_i` steps by `sequence_stride`; its
    target is `targets[start + p_i]`. Elements are `(windows, targets)` (or
    windows alone with `targets=None`), batched by `batch_size` (None: not
    batched). `shuffle` permutes the window starts with
    `np.random.RandomState(seed)` and then shuffles the windows in a buffer of
    `8 * batch_size` (1024 unbatched), as Keras.

    Differences from Keras: the buffer shuffle uses jaxtape's Dataset
    shuffle, so a shuffled order differs from tf.keras's (the same windows,
    batch shapes and seeded reproducibility); `format="grain"` raises
    NotImplementedError.
    """
    if format != "tf":
        if format == "grain":
            raise NotImplementedError(
                "timeseries_dataset_from_array: format='grain' is not supported; "
                "jaxtape returns a jaxtape.data.Dataset (format='tf')."
            )
        raise ValueError(
            f'`format` should be either "tf" or "grain". Received: format={format}'
        )
    data = _host(data)
    n = len(data)
    if start_index:
        if start_index < 0:
            raise ValueError(
                "`start_index` must be 0 or greater. Received: "
                f"start_index={start_index}"
            )
        if start_index >= n:
            raise ValueError(
                "`start_index` must be lower than the length of the data. "
                f"Received: start_index={start_index}, for data of length {n}"
            )
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError(
                "`end_index` must be higher than `start_index`. Received: "
                f"start_index={start_index}, and end_index={end_index} "
            )
        if end_index >= n:
            raise ValueError(
                "`end_index` must be lower than the length of the data. "
                f"Received: end_index={end_index}, for data of length {n}"
            )
        if end_index <= 0:
            raise ValueError(
                f"`end_index` must be higher than 0. Received: end_index={end_index}"
            )
    steps = (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride))
    for arg, value in steps:
        if value <= 0:
            raise ValueError(f"`{arg}` must be higher than 0. Received: {arg}={value}")
        if value >= n:
            raise ValueError(
                f"`{arg}` must be lower than the length of the data. Received: "
                f"{arg}={value}, for data of length {n}"
            )
    start = start_index or 0
    end = n if end_index is None else end_index
    num_seqs = end - start - (sequence_length - 1) * sampling_rate
    if targets is not None:
        targets = _host(targets)
        num_seqs = min(num_seqs, len(targets))
    positions = np.arange(0, max(num_seqs, 0), sequence_stride, dtype="int64")
    if shuffle:
        if seed is None:
            seed = np.random.randint(int(1e6))
        np.random.RandomState(seed).shuffle(positions)
    window = np.arange(sequence_length) * sampling_rate
    windows = data[start:end][positions[:, None] + window[None, :]]
    elements = windows if targets is None else (windows, targets[start:end][positions])
    ds = Dataset.from_tensor_slices(elements)
    if shuffle:  # Keras shuffles the windows again in a buffer
        ds = ds.shuffle(1024 if batch_size is None else batch_size * 8, seed=seed)
    return ds if batch_size is None else ds.batch(batch_size)


def split_dataset(
    dataset, left_size=None, right_size=None, shuffle=False, seed=None,
    preferred_backend=None,
):  # fmt: skip
    """Splits arrays or a Dataset into two Datasets (Keras's `split_dataset`).

    `left_size`/`right_size`: a fraction in (0, 1) or a number of samples;
    the one left None is the complement. `shuffle` shuffles the samples with
    Python's `random` seeded by `seed`, as Keras, so the splits equal
    tf.keras's.

    Differences from Keras: a Dataset is split element by element (Keras
    unbatches a batched tf.data Dataset and batches the splits again; batch
    a jaxtape Dataset after splitting it). `preferred_backend` must be None
    or "tensorflow" (the splits are jaxtape Datasets).
    """
    if preferred_backend not in (None, "tensorflow"):
        raise NotImplementedError(
            f"split_dataset: preferred_backend={preferred_backend!r} is not "
            "supported; the splits are jaxtape.data.Dataset objects."
        )
    rebuild: Callable[[list], Any]
    if isinstance(dataset, Dataset):
        samples, rebuild = list(dataset.as_numpy_iterator()), _stack
    elif isinstance(dataset, (list, tuple)) and dataset:
        arrays = [_host(a) for a in dataset]
        lengths = {len(a) for a in arrays}
        if len(lengths) != 1:
            raise ValueError(
                "Received a list of arrays with different lengths: "
                f"{[len(a) for a in arrays]}. All arrays must have the same length."
            )
        samples = list(zip(*arrays, strict=True))
        kind = type(dataset)
        rebuild = lambda part: kind(np.stack(c) for c in zip(*part, strict=True))  # noqa: E731

    elif hasattr(dataset, "shape") or isinstance(dataset, np.ndarray):
        samples, rebuild = list(_host(dataset)), _stack
    else:
        raise TypeError(
            "The `dataset` argument must be either a `jaxtape.data.Dataset` object, "
            f"or a list/tuple of arrays. Received: dataset={dataset} of type "
            f"{type(dataset)}"
        )
    if right_size is None and left_size is None:
        raise ValueError(
            "At least one of the `left_size` or `right_size` must be specified. "
            "Received: left_size=None and right_size=None"
        )
    if shuffle:
        if seed is None:
            seed = random.randint(0, int(1e6))
        random.seed(seed)
        random.shuffle(samples)
    left, right = _split_sizes(left_size, right_size, len(samples))
    return (
        Dataset.from_tensor_slices(rebuild(samples[:left])),
        Dataset.from_tensor_slices(rebuild(samples[-right:])),
    )


def _host(x) -> np.ndarray:
    return np.asarray(to_numpy(x))


def _stack(elements):
    first = elements[0]
    if isinstance(first, (tuple, list)):
        return type(first)(_stack(list(col)) for col in zip(*elements, strict=True))
    if isinstance(first, dict):
        return {k: _stack([e[k] for e in elements]) for k in first}
    return np.stack(elements)


def _split_sizes(left_size, right_size, total):
    """Keras's `_rescale_dataset_split_sizes`: checks, fractions to counts."""
    for name, size in (("left_size", left_size), ("right_size", right_size)):
        if size is not None and type(size) not in (int, float):
            raise TypeError(
                f"Invalid `{name}` Type. Expected: int or float or None, "
                f"Received: type({name})={type(size)}."
            )
    if left_size == 0 and right_size == 0:
        raise ValueError(
            "Both `left_size` and `right_size` are zero. At least one of the split "
            "sizes must be non-zero."
        )
    for name, size in (("left_size", left_size), ("right_size", right_size)):
        if (type(size) is int and (size <= 0 or size >= total)) or (
            type(size) is float and (size <= 0 or size >= 1)
        ):
            raise ValueError(
                f"`{name}` should be either a positive integer smaller than "
                f"{total}, or a float within the range `[0, 1]`. Received: "
                f"{name}={size}"
            )
    if type(left_size) is float and type(right_size) is float:
        if left_size + right_size > 1:
            raise ValueError(
                "The sum of `left_size` and `right_size` is greater than 1. It "
                "must be less than or equal to 1."
            )
    left = round(left_size * total) if type(left_size) is float else left_size
    right = round(right_size * total) if type(right_size) is float else right_size
    if left is None:
        left = total - right
    elif right is None:
        right = total - left
    if left + right > total:
        raise ValueError(
            f"The sum of `left_size` and `right_size` should be smaller than the "
            f"{total}. Received: left_size + right_size = {left + right}and "
            f"total_length = {total}"
        )
    for split, side in ((left, "left"), (right, "right")):
        if split == 0:
            raise ValueError(
                f"With `dataset` of length={total}, `left_size`={left} and "
                f"`right_size`={right}.Resulting {side} side dataset split will "
                "be empty. Adjust any of the aforementioned parameters"
            )
    return int(left), int(right)
