"""`jaxtape.data.experimental`: TF's older transformation functions.

Layer L4. Each returns a function `Dataset -> Dataset` for `Dataset.apply`,
as TF's do, and is a thin shell over the `Dataset` method that replaced it.
"""

from __future__ import annotations

import numpy as np

from jaxtape._src.core import errors
from jaxtape._src.data.dataset import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    Dataset,
    _to_numpy,
)


def cardinality(dataset: Dataset):
    """`dataset.cardinality()` (TF's `data.experimental.cardinality`)."""
    return dataset.cardinality()


def assert_cardinality(expected_cardinality):
    """Declares the dataset's cardinality; reading it checks the claim (as TF)."""
    expected = int(_to_numpy(expected_cardinality))

    def apply(ds: Dataset) -> Dataset:
        source = ds._make

        def make():
            count = 0
            for element in source():
                count += 1
                if expected >= 0 and count > expected:
                    raise errors.FailedPreconditionError(
                        None,
                        None,
                        f"Input dataset was expected to contain {_n(expected)} but "
                        f"contained at least {_n(count)}.",
                    )
                yield element
            if expected == INFINITE_CARDINALITY or (0 <= count < expected):
                want = (
                    "an infinite number of elements" if expected < 0 else _n(expected)
                )
                raise errors.FailedPreconditionError(
                    None,
                    None,
                    f"Input dataset was expected to contain {want} but contained "
                    f"only {_n(count)}.",
                )

        return ds._derive(make, expected, ds._same_spec())

    return apply


def _n(count: int) -> str:
    return f"{count} element" + ("" if count == 1 else "s")


def dense_to_ragged_batch(batch_size, drop_remainder=False, row_splits_dtype=None):
    """`Dataset.ragged_batch` for `apply` (TF's deprecated alias)."""
    dt = np.int64 if row_splits_dtype is None else row_splits_dtype
    return lambda ds: ds.ragged_batch(batch_size, drop_remainder, dt)


def get_single_element(dataset: Dataset):
    """`dataset.get_single_element()`."""
    return dataset.get_single_element()


def ignore_errors(log_warning=False):
    """`Dataset.ignore_errors` for `apply`."""
    return lambda ds: ds.ignore_errors(log_warning)


def unbatch():
    """`Dataset.unbatch` for `apply`."""
    return lambda ds: ds.unbatch()


def unique():
    """`Dataset.unique` for `apply`."""
    return lambda ds: ds.unique()


def take_while(predicate):
    """`Dataset.take_while` for `apply`."""
    return lambda ds: ds.take_while(predicate)


def scan(initial_state, scan_func):
    """`Dataset.scan` for `apply`."""
    return lambda ds: ds.scan(initial_state, scan_func)


def enumerate_dataset(start=0):
    """`Dataset.enumerate` for `apply`."""
    return lambda ds: ds.enumerate(start)


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    """`Dataset.group_by_window` for `apply`."""
    return lambda ds: ds.group_by_window(
        key_func, reduce_func, window_size, window_size_func
    )


def bucket_by_sequence_length(element_length_func, bucket_boundaries,
                              bucket_batch_sizes, padded_shapes=None,
                              padding_values=None, pad_to_bucket_boundary=False,
                              no_padding=False, drop_remainder=False):  # fmt: skip
    """`Dataset.bucket_by_sequence_length` for `apply`."""
    return lambda ds: ds.bucket_by_sequence_length(
        element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes,
        padding_values, pad_to_bucket_boundary, no_padding, drop_remainder,
    )  # fmt: skip


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """`shuffle(buffer_size, seed).repeat(count)` for `apply`."""
    return lambda ds: ds.shuffle(buffer_size, seed).repeat(count)


def map_and_batch(map_func, batch_size, num_parallel_batches=None,
                  drop_remainder=False, num_parallel_calls=None):  # fmt: skip
    """`map(map_func).batch(batch_size)` for `apply`."""
    calls = num_parallel_calls
    if calls is None and num_parallel_batches is not None:
        calls = int(num_parallel_batches) * int(_to_numpy(batch_size))
    return lambda ds: ds.map(map_func, calls).batch(batch_size, drop_remainder)


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None,
                        prefetch_input_elements=None):  # fmt: skip
    """`interleave(..., num_parallel_calls=cycle_length)` for `apply` (in TF's
    deterministic order even when `sloppy`)."""
    return lambda ds: ds.interleave(
        map_func, cycle_length, block_length, num_parallel_calls=cycle_length
    )


def prefetch_to_device(device, buffer_size=None):
    """`prefetch` (elements are put on the default device ahead of time).

    Differences from TensorFlow: `device` is accepted and the elements go to
    jaxtape's current default device.
    """
    del device
    return lambda ds: ds.prefetch(1 if buffer_size is None else buffer_size)


def sample_from_datasets(datasets, weights=None, seed=None,
                         stop_on_empty_dataset=False):  # fmt: skip
    """`Dataset.sample_from_datasets`."""
    return Dataset.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
    """`Dataset.choose_from_datasets`."""
    return Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


def Counter(start=0, step=1, dtype=None):  # noqa: N802 (TF's name)
    """`Dataset.counter` (TF's `data.experimental.Counter`)."""
    return Dataset.counter(start, step) if dtype is None else Dataset.counter(
        start, step, dtype
    )  # fmt: skip


def from_list(elements, name=None) -> Dataset:
    """One element per item of `elements` (each a structure of tensors)."""
    items = list(elements)
    if not items:
        raise ValueError("Invalid `elements`. `elements` should not be empty.")
    from jaxtape._src.data.dataset import _from_user, _spec_of

    data = [_from_user(e) for e in items]
    return Dataset(lambda: iter(data), len(data), lambda: _spec_of(data[0]))


def get_structure(dataset_or_iterator):
    """The element spec of a Dataset or iterator (TF's `get_structure`)."""
    spec = getattr(dataset_or_iterator, "element_spec", None)
    if spec is None:
        raise TypeError(
            "`dataset_or_iterator` must be a `tf.data.Dataset` or tf.data.Iterator "
            f"object, but got {type(dataset_or_iterator)}."
        )
    return spec


def at(dataset: Dataset, index):
    """The element at `index` (TF's `data.experimental.at`), read by iterating."""
    i = int(_to_numpy(index))
    if i < 0:
        raise errors.InvalidArgumentError(None, None, f"Index must be >= 0, got {i}.")
    for k, element in enumerate(dataset):
        if k == i:
            return element
    raise errors.OutOfRangeError(None, None, f"Index {i} is out of range.")


class RandomDataset(Dataset):
    """`Dataset.random(seed)` (TF's `data.experimental.RandomDataset`)."""

    def __init__(self, seed=None, name=None):
        source = Dataset.random(seed)
        super().__init__(source._make, source._cardinality, source._spec)


def copy_to_device(target_device, source_device="/cpu:0"):
    """`prefetch(1)` for `apply`: elements go to jaxtape's default device.

    Differences from TensorFlow: `target_device` is accepted and ignored.
    """
    del target_device, source_device
    return lambda ds: ds.prefetch(1)


def enable_debug_mode():
    """A no-op: jaxtape already runs `map`/`filter` functions eagerly, element by
    element, which is what TF's debug mode switches on."""


def _infer_csv_type(values: list[str]):
    """TF's column type inference: int32, int64, float32, else string."""
    best = 0
    kinds = [np.dtype("int32"), np.dtype("int64"), np.dtype("float32")]
    for v in values:
        if v == "":
            continue
        while best < 3:
            try:
                if best < 2:
                    n = int(v)
                    if best == 0 and not -(2**31) <= n < 2**31:
                        raise ValueError
                else:
                    float(v)
                break
            except ValueError:
                best += 1
    return kinds[best] if best < 3 else np.dtype("S")


def make_csv_dataset(file_pattern, batch_size, column_names=None,
                     column_defaults=None, label_name=None, select_columns=None,
                     field_delim=",", use_quote_delim=True, na_value="", header=True,
                     num_epochs=None, shuffle=True, shuffle_buffer_size=10000,
                     shuffle_seed=None, prefetch_buffer_size=None,
                     num_parallel_reads=None, sloppy=False,
                     num_rows_for_inference=100, compression_type=None,
                     ignore_errors=False, encoding="utf-8"):  # fmt: skip
    """Batches of CSV rows as `(features dict, label)` (TF's `make_csv_dataset`).

    Column names come from the header, column types from the first
    `num_rows_for_inference` rows (int32, int64, float32, else string) unless
    `column_defaults` is given; then `shuffle`, `repeat(num_epochs)`, `batch`
    as TF orders them.

    Differences from TensorFlow: string columns are NumPy bytes arrays.
    """
    import csv
    import io

    from jaxtape._src.data import readers

    if encoding != "utf-8":
        raise NotImplementedError(
            f"make_csv_dataset(encoding={encoding!r}): only 'utf-8' is supported."
        )
    names_ds = Dataset.list_files(file_pattern, shuffle=shuffle, seed=shuffle_seed)
    paths = sorted(readers._text(p) for p in names_ds.as_numpy_iterator())
    compression = readers._check_compression(compression_type)
    first = readers._read_bytes(paths[0], compression).decode()
    rows = list(csv.reader(io.StringIO(first), delimiter=field_delim))
    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` argument to be set.")
        column_names = rows[0]
    column_names = list(column_names)
    if len(set(column_names)) != len(column_names):
        raise ValueError("Expected `column_names` to be unique.")
    body = rows[1:] if header else rows
    if select_columns is not None:
        select = [
            column_names.index(c) if isinstance(c, str) else int(c)
            for c in select_columns
        ]
        select.sort()
    else:
        select = list(range(len(column_names)))
    names = [column_names[i] for i in select]
    if label_name is not None and label_name not in names:
        raise ValueError(
            f"`label_name` provided must be one of the columns: {names}. Received: "
            f"{label_name}."
        )
    if column_defaults is None:
        sample = body[:num_rows_for_inference]
        column_defaults = []
        for i in select:
            dtype = _infer_csv_type([r[i] if i < len(r) else "" for r in sample])
            column_defaults.append([b""] if dtype.kind == "S" else np.zeros(1, dtype))
    dataset = names_ds.interleave(
        lambda path: readers.CsvDataset(
            path, column_defaults, compression_type, header=header,
            field_delim=field_delim, use_quote_delim=use_quote_delim,
            na_value=na_value, select_cols=select if select_columns else None,
        ),
        cycle_length=num_parallel_reads or 1,
        num_parallel_calls=num_parallel_reads,
    )  # fmt: skip
    if ignore_errors:
        dataset = dataset.ignore_errors()
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=num_epochs is None)

    def to_features(*columns):
        features = dict(zip(names, columns))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label

    dataset = dataset.map(to_features)
    return dataset.prefetch(prefetch_buffer_size or AUTOTUNE)
