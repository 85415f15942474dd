"""`keras.preprocessing.sequence`: Keras 3's legacy sequence utilities. Layer L5.

`pad_sequences` is `keras.utils.pad_sequences`; `TimeseriesGenerator`,
`make_sampling_table` and `skipgrams` follow
`keras/src/legacy/preprocessing/sequence.py` (Keras 3.15): NumPy and Python's
`random`, so a seeded run gives Keras's numbers.
"""

from __future__ import annotations

import json
import random

import numpy as np

from jaxtape._src.keras.keras_utils import pad_sequences as pad_sequences
from jaxtape._src.keras.py_dataset import PyDataset


class TimeseriesGenerator(PyDataset):
    """Batches of `(windows of data, target at each window's end)`.

    Window `i` ends (exclusive) at row `start_index + length + i * stride`, and
    takes every `sampling_rate`-th row of the `length` rows before it; its
    target is `targets[end row]`. `shuffle` draws end rows with NumPy's global
    generator; `reverse` flips each window in time.
    """

    def __init__(
        self,
        data,
        targets,
        length,
        sampling_rate=1,
        stride=1,
        start_index=0,
        end_index=None,
        shuffle=False,
        reverse=False,
        batch_size=128,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if len(data) != len(targets):
            raise ValueError(
                "Data and targets have to be of same length. Data length is "
                f"{len(data)} while target length is {len(targets)}"
            )
        self.data = data
        self.targets = targets
        self.length = length
        self.sampling_rate = sampling_rate
        self.stride = stride
        self.start_index = start_index + length
        self.end_index = len(data) - 1 if end_index is None else end_index
        self.shuffle = shuffle
        self.reverse = reverse
        self.batch_size = batch_size
        if self.start_index > self.end_index:
            raise ValueError(
                f"`start_index+length={self.start_index} > "
                f"end_index={self.end_index}` is disallowed, as no part of the "
                "sequence would be left to be used as current step."
            )

    def __len__(self):
        step = self.batch_size * self.stride
        return (self.end_index - self.start_index + step) // step

    def __getitem__(self, index):
        if self.shuffle:
            rows = np.random.randint(
                self.start_index, self.end_index + 1, size=self.batch_size
            )
        else:
            i = self.start_index + self.batch_size * self.stride * index
            rows = np.arange(
                i,
                min(i + self.batch_size * self.stride, self.end_index + 1),
                self.stride,
            )
        samples = np.array(
            [self.data[row - self.length : row : self.sampling_rate] for row in rows]
        )
        targets = np.array([self.targets[row] for row in rows])
        if self.reverse:
            return samples[:, ::-1, ...], targets
        return samples, targets

    def get_config(self):
        """The generator's arguments, `data`/`targets` as JSON strings."""

        def as_json(value, what):
            if type(value).__module__ == np.__name__:
                value = value.tolist()
            try:
                return json.dumps(value)
            except TypeError as e:
                raise TypeError(f"{what} not JSON Serializable: {value}") from e

        return {
            "workers": self.workers,
            "use_multiprocessing": self.use_multiprocessing,
            "max_queue_size": self.max_queue_size,
            "data": as_json(self.data, "Data"),
            "targets": as_json(self.targets, "Targets"),
            "length": self.length,
            "sampling_rate": self.sampling_rate,
            "stride": self.stride,
            "start_index": self.start_index,
            "end_index": self.end_index,
            "shuffle": self.shuffle,
            "reverse": self.reverse,
            "batch_size": self.batch_size,
        }

    def to_json(self, **kwargs):
        return json.dumps(
            {"class_name": type(self).__name__, "config": self.get_config()}, **kwargs
        )


def make_sampling_table(size, sampling_factor=1e-05):
    """Word2vec's sampling probabilities for word ranks `0..size-1` (Zipf's law:
    `min(1, sqrt(sampling_factor * inv_freq))`)."""
    gamma = 0.577
    rank = np.arange(size)
    rank[0] = 1
    inv_fq = rank * (np.log(rank) + gamma) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inv_fq
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(
    sequence,
    vocabulary_size,
    window_size=4,
    negative_samples=1.0,
    shuffle=True,
    categorical=False,
    sampling_table=None,
    seed=None,
):
    """`(couples, labels)`: each in-window word pair labelled 1, plus
    `negative_samples` times as many random pairs labelled 0 (Python's
    `random`, as Keras's). Index 0 is skipped."""
    couples, labels = [], []
    for i, wi in enumerate(sequence):
        if not wi:
            continue
        if sampling_table is not None and sampling_table[wi] < random.random():
            continue
        for j in range(
            max(0, i - window_size), min(len(sequence), i + window_size + 1)
        ):
            if j != i and sequence[j]:
                couples.append([wi, sequence[j]])
                labels.append([0, 1] if categorical else 1)
    if negative_samples > 0:
        num_negative = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        random.shuffle(words)
        couples += [
            [words[i % len(words)], random.randint(1, vocabulary_size - 1)]
            for i in range(num_negative)
        ]
        labels += ([[1, 0]] if categorical else [0]) * num_negative
    if shuffle:
        if seed is None:
            seed = random.randint(0, int(10e6))
        random.seed(seed)
        random.shuffle(couples)
        random.seed(seed)
        random.shuffle(labels)
    return couples, labels
