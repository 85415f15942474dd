"""`keras.utils.PyDataset` (alias `Sequence`) and its batches for `fit`. Layer L5.

A PyDataset is indexed by batch (`__getitem__`, `__len__` or `num_batches`).
`PyDatasetBatches` is the data adapter's view of one, as Keras 3's
PyDatasetAdapter: each epoch calls `on_epoch_begin`, yields the batches (in a
shuffled order with `shuffle=True`, as `fit` passes by default) and calls
`on_epoch_end`. It imports nothing from the data adapter, which imports it.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import random
import warnings
from collections import deque

import numpy as np


class PyDataset:
    """Keras's `PyDataset(workers=1, use_multiprocessing=False, max_queue_size=10)`.

    Subclass it with `__getitem__(index)` returning a batch — `(x,)`,
    `(x, y)` or `(x, y, sample_weight)` — and `__len__` (or a `num_batches`
    property; None means endless), then pass it to `Model.fit`/`evaluate`/
    `predict`.

    Differences from Keras: with `workers > 1` the batches are read by a pool
    of threads (in order, up to `max_queue_size` ahead), also when
    `use_multiprocessing=True`: jaxtape runs no worker processes.
    """

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    def _warn_if_super_not_called(self):
        missing = False
        for attr, default in (
            ("_workers", 1),
            ("_use_multiprocessing", False),
            ("_max_queue_size", 10),
        ):
            if not hasattr(self, attr):
                setattr(self, attr, default)
                missing = True
        if missing:
            warnings.warn(
                "Your `PyDataset` class should call `super().__init__(**kwargs)` in "
                "its constructor. `**kwargs` can include `workers`, "
                "`use_multiprocessing`, `max_queue_size`. Do not pass these "
                "arguments to `fit()`, as they will be ignored.",
                stacklevel=3,
            )

    @property
    def workers(self):
        self._warn_if_super_not_called()
        return self._workers

    @workers.setter
    def workers(self, value):
        self._workers = value

    @property
    def use_multiprocessing(self):
        self._warn_if_super_not_called()
        return self._use_multiprocessing

    @use_multiprocessing.setter
    def use_multiprocessing(self, value):
        self._use_multiprocessing = value

    @property
    def max_queue_size(self):
        self._warn_if_super_not_called()
        return self._max_queue_size

    @max_queue_size.setter
    def max_queue_size(self, value):
        self._max_queue_size = value

    def __getitem__(self, index):
        """The batch at position `index`."""
        raise NotImplementedError

    def __iter__(self):
        try:
            n = self.num_batches
        except NotImplementedError:
            n = None
        for index in itertools.count() if n is None else range(n):
            yield self[index]

    @property
    def num_batches(self):
        """The number of batches (None: endless); `len(self)` by default."""
        if hasattr(self, "__len__"):
            return len(self)  # type: ignore[arg-type]
        raise NotImplementedError(
            "You need to implement the `num_batches` property:\n\n"
            "@property\ndef num_batches(self):\n  return ..."
        )

    def on_epoch_begin(self):
        """Called at the beginning of every epoch."""

    def on_epoch_end(self):
        """Called at the end of every epoch."""


Sequence = PyDataset


def _standardize_batch(batch):
    if isinstance(batch, dict):
        return (batch,)
    if isinstance(batch, np.ndarray):
        batch = (batch,)
    if isinstance(batch, list):
        batch = tuple(batch)
    if not isinstance(batch, tuple) or len(batch) not in {1, 2, 3}:
        raise ValueError(
            "PyDataset.__getitem__() must return a tuple or a dict. If a tuple, it "
            "must be ordered either (input,) or (inputs, targets) or (inputs, "
            f"targets, sample_weights). Received: {str(batch)[:100]}... of type "
            f"{type(batch)}"
        )
    return batch


class PyDatasetBatches:
    """A PyDataset's batches for `fit`/`evaluate`/`predict` (Keras's
    PyDatasetAdapter): `steps` per epoch and `epoch()`."""

    def __init__(self, py_dataset: PyDataset, steps=None, shuffle=False):
        self.py_dataset, self._shuffle = py_dataset, shuffle
        n = py_dataset.num_batches
        self._num_batches = n
        self.steps = steps or n

    def _indices(self):
        if self._num_batches is None:
            return itertools.count() if self.steps is None else range(self.steps)
        indices = list(range(self._num_batches))
        if self._shuffle:
            random.shuffle(indices)
        return indices[: self.steps] if self.steps else indices

    def _read(self, indices):
        ds = self.py_dataset
        workers = ds.workers
        if workers <= 1 and not (workers > 0 and ds.use_multiprocessing):
            for i in indices:
                yield ds[i]
            return
        with concurrent.futures.ThreadPoolExecutor(max(workers, 1)) as pool:
            pending: deque = deque()
            it = iter(indices)
            for i in itertools.islice(it, max(ds.max_queue_size, 1)):
                pending.append(pool.submit(ds.__getitem__, i))
            while pending:
                batch = pending.popleft().result()
                for i in itertools.islice(it, 1):
                    pending.append(pool.submit(ds.__getitem__, i))
                yield batch

    def epoch(self):
        self.py_dataset.on_epoch_begin()
        for batch in self._read(self._indices()):
            yield _standardize_batch(batch)
        self.py_dataset.on_epoch_end()
