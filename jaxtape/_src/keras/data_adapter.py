"""Batches for `fit`/`evaluate`/`predict`: arrays, a Dataset or a Python generator.

Layer L5. Each adapter knows its steps per epoch (None when a dataset's or a
generator's length is unknown) and yields, per epoch, the `data` tuples a
step receives: `(x,)`, `(x, y)` or `(x, y, sample_weight)`, as Keras's data
adapters do. `class_weight` becomes per-sample weights here, from each
label's class, as Keras 3's adapters compute them.
"""

from __future__ import annotations

import itertools
import math
import types
import warnings

import numpy as np

from jaxtape._src.core.dispatch import to_value
from jaxtape._src.data.dataset import Dataset
from jaxtape._src.keras.py_dataset import PyDataset, PyDatasetBatches


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


def class_weight_to_sample_weights(y, class_weight) -> np.ndarray:
    """Keras's per-sample weights from `class_weight`: each label's class
    (the argmax of one-hot rows, else the rounded value) looks up its weight
    (1.0 for classes not listed)."""
    y = np.asarray(y)
    weights = np.ones((y.shape[0],), np.float32)
    if y.ndim > 1:
        y = np.argmax(y, axis=-1) if y.shape[-1] != 1 else np.squeeze(y, axis=-1)
    classes = np.round(y).astype(np.int32)
    for i, c in enumerate(classes):
        weights[i] = class_weight.get(int(c), 1.0)
    return weights


def _check_class_weight(y, sample_weight, class_weight) -> None:
    if sample_weight is not None:
        raise ValueError(
            "You cannot `class_weight` and `sample_weight` at the same time."
        )
    if isinstance(y, (list, tuple, dict)):
        raise ValueError(
            "`class_weight` is only supported for Models with a single output."
        )


def train_validation_split(arrays, validation_split):
    """Keras's `validation_split`: the last fraction of the arrays is held out."""
    x = arrays[0]
    if isinstance(x, Dataset) or isinstance(x, types.GeneratorType):
        raise ValueError(
            "`validation_split` is only supported for Tensors or NumPy arrays, "
            f"found following types in the input: {[type(x)]}. Pass "
            "`validation_data` instead."
        )
    arrays = tuple(to_numpy(a) for a in arrays)
    n = num_samples(x)
    cut = int(math.floor(n * (1.0 - validation_split)))
    if cut == 0 or cut == n:
        raise ValueError(
            f"Training data contains {n} samples, which is not sufficient to "
            f"split it into a validation and training set as specified by "
            f"`validation_split={validation_split}`. Either provide more data, "
            "or a different value for the `validation_split` argument."
        )
    train = tuple(take(a, slice(0, cut)) for a in arrays)
    val = tuple(take(a, slice(cut, None)) for a in arrays)
    return train, val


class ArrayBatches:
    """Slices NumPy arrays (or Tensors) into batches, shuffled per epoch if asked."""

    def __init__(
        self,
        x,
        y,
        sample_weight,
        batch_size,
        shuffle=False,
        steps=None,
        class_weight=None,
    ):
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
        if class_weight is not None:
            _check_class_weight(self.y, self.sample_weight, class_weight)
            self.sample_weight = class_weight_to_sample_weights(self.y, class_weight)
        self.batch_size = batch_size or 32
        if shuffle not in (True, False, "batch"):
            raise ValueError(
                f"`shuffle` must be True, False or 'batch'. Received: shuffle={shuffle}"
            )
        self.shuffle = shuffle
        self.steps = steps or math.ceil(self.n / self.batch_size)

    def epoch(self):
        n, size = self.n, self.batch_size
        order = None
        if self.shuffle == "batch":  # Keras: whole batches shuffled, not samples
            rng = np.random.default_rng()
            starts = rng.permutation(math.ceil(n / size)) * size
            order = np.concatenate([np.arange(s, min(s + size, n)) for s in starts])
        elif self.shuffle:
            order = np.random.default_rng().permutation(n)
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

    def __init__(self, dataset: Dataset, steps=None, class_weight=None):
        self.dataset = dataset
        card = dataset._cardinality
        self.steps = steps or (card if card >= 0 else None)
        self._it = None
        self.class_weight = class_weight

    def _element(self, element):
        data = element if isinstance(element, tuple) else (element,)
        if self.class_weight is None:
            return data
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        _check_class_weight(y, sample_weight, self.class_weight)
        y = to_numpy(y)
        return (x, y, class_weight_to_sample_weights(y, self.class_weight))

    def epoch(self):
        if self.steps is None or self.steps == self.dataset._cardinality:
            for element in self.dataset:
                yield self._element(element)
            return
        for _ in range(self.steps):
            if self._it is None:
                self._it = iter(self.dataset)
            try:
                element = next(self._it)
            except StopIteration:
                self._it = None
                _ran_out_warning()
                return
            yield self._element(element)


def _ran_out_warning() -> None:
    warnings.warn(
        "Your input ran out of data; interrupting training. Make sure that your "
        "dataset or generator can generate at least `steps_per_epoch * epochs` "
        "batches. You may need to use the `.repeat()` function when building "
        "your dataset.",
        stacklevel=3,
    )


class GeneratorBatches:
    """A Python generator's batches (Keras 3's GeneratorDataAdapter).

    As Keras, it peeks at the first two batches (to check them), and every
    new pass over the data starts with those two, then goes on where the
    generator stands: with `steps`, epochs continue one pass until the
    generator runs out; without, each epoch is one pass, so later epochs see
    the two peeked batches only. Running out warns, as Keras does.
    """

    def __init__(self, generator, steps=None):
        first = [_as_tuple(b) for b in itertools.islice(generator, 2)]
        if not first:
            raise ValueError(
                "When passing a Python generator to a Keras model, the generator "
                "must yield at least one batch. Received an empty generator."
            )
        if not isinstance(first[0], tuple):
            raise ValueError(
                "When passing a Python generator to a Keras model, the generator "
                "must return a tuple, either (input,) or (inputs, targets) or "
                f"(inputs, targets, sample_weights). Received: {first[0]}"
            )
        self._first, self._generator = first, generator
        self.steps = steps
        self._it = None

    def epoch(self):
        if self._it is None or self.steps is None:
            self._it = itertools.chain(self._first, self._generator)
        step = 0
        while self.steps is None or step < self.steps:
            try:
                data = _as_tuple(next(self._it))
            except StopIteration:
                self._it = None
                _ran_out_warning()
                return
            yield tuple(to_numpy(v) for v in data)
            step += 1


def _as_tuple(batch):
    return tuple(batch) if isinstance(batch, list) else batch


def adapter(method, x, y=None, sample_weight=None, batch_size=None, shuffle=False,
            steps=None, class_weight=None):  # fmt: skip
    """The batches for `x` (arrays, a Dataset or a Python generator), with
    Keras's argument checks. As in Keras, `batch_size` and `shuffle` apply to
    arrays only: a Dataset's or a generator's elements are batches already."""
    if isinstance(x, PyDataset):  # Keras's PyDatasetAdapter
        for arg, value in (("y", y), ("sample_weight", sample_weight)):
            if value is not None:
                raise ValueError(
                    f"{method}: `{arg}` must not be given when x is a PyDataset; "
                    "its batches carry (x, y[, sample_weight])."
                )
        if class_weight is not None:
            raise NotImplementedError(
                f"{method}: `class_weight` with a PyDataset is not supported; "
                "return (x, y, sample_weight) batches from `__getitem__` instead."
            )
        return PyDatasetBatches(x, steps, shuffle)
    if isinstance(x, (Dataset, types.GeneratorType)):
        kind = "Dataset" if isinstance(x, Dataset) else "generator"
        for arg, value in (("y", y), ("sample_weight", sample_weight)):
            if value is not None:
                raise ValueError(
                    f"{method}: `{arg}` must not be given when x is a {kind}; its "
                    "elements carry (x, y[, sample_weight])."
                )
        if shuffle:
            what, expected = (
                ("jaxtape.data.Dataset", "to already be shuffled (via `.shuffle`)")
                if kind == "Dataset"
                else ("generator", "to yield already-shuffled data")
            )
            warnings.warn(
                "`shuffle=True` was passed, but will be ignored since the data "
                f"`x` was provided as a {what}. The {kind} is expected {expected}.",
                stacklevel=3,
            )
        if isinstance(x, Dataset):
            return DatasetBatches(x, steps, class_weight)
        if class_weight is not None:
            raise ValueError(
                "Argument `class_weight` is not supported for Python generator "
                f"inputs. Received: class_weight={class_weight}"
            )
        return GeneratorBatches(x, steps)
    if x is None:
        raise ValueError(f"{method}: x is required (arrays, Tensors or a Dataset).")
    if hasattr(x, "__next__") and not hasattr(x, "shape"):
        raise ValueError(
            f"Unrecognized data type: x={x!r} (of type {type(x)}). Pass arrays, "
            "a jaxtape.data.Dataset, or a generator object (call the generator "
            "function: `fit(gen())`)."
        )
    return ArrayBatches(x, y, sample_weight, batch_size, shuffle, steps, class_weight)
