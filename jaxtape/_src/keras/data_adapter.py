"""Batches for `fit`/`evaluate`/`predict`: from arrays or from a `jaxtape.data.Dataset`.

Layer L5. Each adapter knows its steps per epoch (None when a dataset's
length is unknown) and yields, per epoch, the `data` tuples a step receives:
`(x,)`, `(x, y)` or `(x, y, sample_weight)`, as Keras's data adapters do.
"""

from __future__ import annotations

import math

import numpy as np

from jaxtape._src.core.dispatch import to_value
from jaxtape._src.data.dataset import Dataset


def to_numpy(x):
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return type(x)(to_numpy(v) for v in x)
    if isinstance(x, dict):
        return {k: to_numpy(v) for k, v in x.items()}
    return np.asarray(to_value(x)) if not isinstance(x, np.ndarray) else x


def num_samples(x) -> int:
    while isinstance(x, (list, tuple, dict)):
        x = list(x.values())[0] if isinstance(x, dict) else x[0]
    return int(np.shape(x)[0])


def take(x, idx):
    if x is None:
        return None
    if isinstance(x, (list, tuple)):
        return type(x)(take(v, idx) for v in x)
    if isinstance(x, dict):
        return {k: take(v, idx) for k, v in x.items()}
    return x[idx]


def pack_x_y_sample_weight(x, y=None, sample_weight=None) -> tuple:
    """Keras's helper: `(x,)`, `(x, y)` or `(x, y, sample_weight)`, as host arrays."""
    x, y, sample_weight = to_numpy(x), to_numpy(y), to_numpy(sample_weight)
    if y is None and sample_weight is None:
        return (x,)
    return (x, y) if sample_weight is None else (x, y, sample_weight)


def unpack_x_y_sample_weight(data):
    """Keras's helper: `(x,)`, `(x, y)` or `(x, y, sample_weight)`."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data
    raise ValueError(
        "Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, "
        f"sample_weight)`, found: {data!r}"
    )


class ArrayBatches:
    """Slices NumPy arrays (or Tensors) into batches, shuffled per epoch if asked."""

    def __init__(self, x, y, sample_weight, batch_size, shuffle=False, steps=None):
        self.x, self.y, self.sample_weight = (
            to_numpy(x),
            to_numpy(y),
            to_numpy(sample_weight),
        )
        self.n = num_samples(self.x)
        if self.y is not None and num_samples(self.y) != self.n:
            raise ValueError(
                f"x has {self.n} samples but y has {num_samples(self.y)}; they must "
                "match."
            )
        self.batch_size = batch_size or 32
        self.shuffle = shuffle
        self.steps = steps or math.ceil(self.n / self.batch_size)

    def split(self, validation_split: float):
        """Keras's `validation_split`: the last fraction becomes validation data."""
        cut = int(self.n * (1.0 - validation_split))
        val = (take(self.x, slice(cut, None)), take(self.y, slice(cut, None)))
        self.x, self.y = take(self.x, slice(0, cut)), take(self.y, slice(0, cut))
        self.sample_weight = take(self.sample_weight, slice(0, cut))
        self.n = cut
        self.steps = math.ceil(cut / self.batch_size)
        return val

    def epoch(self):
        n, size = self.n, self.batch_size
        order = np.random.default_rng().permutation(n) if self.shuffle else None
        for step in range(self.steps):
            start = (step * size) % n
            idx = (
                order[start:][:size]
                if order is not None
                else slice(start, start + size)
            )
            yield pack_x_y_sample_weight(
                take(self.x, idx), take(self.y, idx), take(self.sample_weight, idx)
            )


class DatasetBatches:
    """A Dataset's elements as batches (Keras: the dataset is already batched).

    With `steps`, one iterator runs on across epochs and is restarted when it
    runs out, as Keras does with `steps_per_epoch`.
    """

    def __init__(self, dataset: Dataset, steps=None):
        self.dataset = dataset
        card = dataset._cardinality
        self.steps = steps or (card if card >= 0 else None)
        self._it = None

    def epoch(self):
        if self.steps is None or self.steps == self.dataset._cardinality:
            for element in self.dataset:
                yield element if isinstance(element, tuple) else (element,)
            return
        for _ in range(self.steps):
            if self._it is None:
                self._it = iter(self.dataset)
            try:
                element = next(self._it)
            except StopIteration:
                self._it = None
                return
            yield element if isinstance(element, tuple) else (element,)


def adapter(method, x, y=None, sample_weight=None, batch_size=None, shuffle=False,
            steps=None):  # fmt: skip
    """The batches for `x` (arrays or a Dataset), with Keras's argument checks."""
    if isinstance(x, Dataset):
        for arg, value in (("y", y), ("sample_weight", sample_weight)):
            if value is not None:
                raise ValueError(
                    f"{method}: `{arg}` must not be given when x is a Dataset; the "
                    "dataset's elements carry (x, y[, sample_weight])."
                )
        return DatasetBatches(x, steps)
    if x is None:
        raise ValueError(f"{method}: x is required (arrays, Tensors or a Dataset).")
    return ArrayBatches(x, y, sample_weight, batch_size, shuffle, steps)
