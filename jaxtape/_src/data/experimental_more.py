"""The rest of `jaxtape.data.experimental`: reducers, `dense_to_sparse_batch`,
`rejection_resample`, `pad_to_cardinality`, Example parsing of datasets,
`TFRecordWriter`, and lookup tables filled from a dataset.

Layer L4 (data/). Like `experimental_ops`, the transformations return a
function `Dataset -> Dataset` for `Dataset.apply`. Example parsing goes
through `context.hooks.parse_example` (tf.io's, installed by `io/`, a peer).
"""

from __future__ import annotations

import contextlib
import itertools
import pathlib
import re
import sqlite3
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from jaxtape._src.core import dtypes, errors
from jaxtape._src.core.context import hooks
from jaxtape._src.core.tensor import TensorSpec
from jaxtape._src.data.dataset import UNKNOWN_CARDINALITY, Dataset, _to_numpy
from jaxtape._src.data.iterators import _UserFunction
from jaxtape._src.data.readers import TFRecordDataset
from jaxtape._src.data.sparse_elements import HostSparse
from jaxtape._src.data.structure import _numpy_leaf
from jaxtape._src.data.type_specs import SparseTensorSpec
from jaxtape._src.ops import record_io
from jaxtape._src.structured import lookup_ops

SHARD_HINT = -1  # TF's: "shard this file-based dataset by the number of workers"


# -- group_by_reducer ------------------------------------------------------------------
class Reducer:
    """A reduction for `group_by_reducer`: `init_func(key) -> state`,
    `reduce_func(state, element) -> state`, `finalize_func(state) -> output`."""

    def __init__(self, init_func, reduce_func, finalize_func):
        self._init_func = init_func
        self._reduce_func = reduce_func
        self._finalize_func = finalize_func

    init_func = property(lambda self: self._init_func)
    reduce_func = property(lambda self: self._reduce_func)
    finalize_func = property(lambda self: self._finalize_func)


def group_by_reducer(key_func, reducer: Reducer):
    """Groups elements by the int64 `key_func(element)` and reduces each group
    with `reducer`; one finalized output per key, in increasing key order.

    Differences from TensorFlow: TF's order of the groups is its hash map's
    (increasing for small non-negative keys, as here); a key of the wrong
    dtype raises TF's ValueError when the dataset is iterated, not at `apply`.
    """
    key_call = _UserFunction(key_func, "group_by_reducer")
    init_call = _UserFunction(reducer.init_func, "group_by_reducer")
    reduce_call = _UserFunction(reducer.reduce_func, "group_by_reducer")
    finalize_call = _UserFunction(reducer.finalize_func, "group_by_reducer")

    def apply(ds: Dataset) -> Dataset:
        source = ds._make

        def make():
            states: dict = {}
            for i, element in enumerate(source()):
                key = np.asarray(key_call(element, i))
                if key.shape != () or key.dtype != np.int64:
                    raise ValueError(
                        "Invalid `key_func`. Expected `key_func` to return a scalar "
                        "tf.int64 tensor, but instead `key_func` has output "
                        f"types={key.dtype} and shapes={key.shape}."
                    )
                k = int(key)
                if k not in states:
                    states[k] = init_call(key, i)
                states[k] = reduce_call((states[k], element), i)
            for i, k in enumerate(sorted(states)):
                yield finalize_call(states[k], i)

        return ds._derive(make, UNKNOWN_CARDINALITY)

    return apply


# -- dense_to_sparse_batch -------------------------------------------------------------
def dense_to_sparse_batch(batch_size, row_shape):
    """Batches dense elements of varying shape into SparseTensors of dense shape
    `[batch, *row_shape]` (a `None`/-1 entry: the batch's largest size), every
    entry of each element stored (TF's rule)."""
    size = int(_to_numpy(batch_size))
    if size <= 0:
        raise errors.InvalidArgumentError(
            None, None, "Batch size must be greater than zero."
        )
    row = [None if d is None or int(d) < 0 else int(d) for d in row_shape]

    def apply(ds: Dataset) -> Dataset:
        source = ds._make

        def make():
            it = source()
            while chunk := list(itertools.islice(it, size)):
                yield _sparse_batch([np.asarray(x) for x in chunk], row)

        card = ds._cardinality
        if card >= 0:
            card = -(-card // size)

        def out_spec():
            spec: Any = ds.element_spec
            return SparseTensorSpec([None, *row], spec.dtype)

        return ds._derive(make, card, out_spec)

    return apply


def _sparse_batch(rows: list, row_shape: list) -> HostSparse:
    for r in rows:
        if r.ndim != len(row_shape):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Input element had rank {r.ndim} but row shape {row_shape} has rank "
                f"{len(row_shape)}; give `row_shape` one entry per dimension.",
            )
    shape = [
        d if d is not None else max(r.shape[k] for r in rows)
        for k, d in enumerate(row_shape)
    ]
    for r in rows:
        if any(n > d for n, d in zip(r.shape, shape)):
            raise errors.DataLossError(
                None,
                None,
                f"Input element had shape ({list(r.shape)}) that is larger than the "
                f"row shape ({shape}).",
            )
    indices, values = [], []
    for b, r in enumerate(rows):
        where = np.argwhere(np.ones(r.shape, bool)).astype(np.int64)
        indices.append(np.concatenate([np.full((len(where), 1), b), where], axis=1))
        values.append(r.reshape(-1))
    return HostSparse(np.concatenate(indices), np.concatenate(values),
                      (len(rows), *shape))  # fmt: skip


# -- rejection_resample ----------------------------------------------------------------
def rejection_resample(class_func, target_dist, initial_dist=None, seed=None):
    """Resamples elements so their classes follow `target_dist` (TF's
    algorithm: per-class acceptance with mixing from the original data, the
    initial distribution estimated in batches of 32 when not given).
    Elements come out as `(class, element)` pairs.

    Differences from TensorFlow: the random draws differ (NumPy's generator).
    """
    target = np.asarray(_to_numpy(target_dist), np.float32)
    initial = (
        None
        if initial_dist is None
        else np.asarray(_to_numpy(initial_dist), np.float32)
    )

    def apply(ds: Dataset) -> Dataset:
        class_call = _UserFunction(class_func, "rejection_resample")
        source = ds._make
        static_m = None if initial is None else float(np.min(target / initial))

        def classes(it):
            for i, element in enumerate(it):
                yield int(np.asarray(class_call(element, i))), element

        def estimates():
            """(acceptance probabilities, chance of the original) per element."""
            if initial is not None:
                yield from itertools.repeat(_acceptance(initial, target))
                return
            counts = np.full(len(target), 10, np.int64)
            pending = classes(source())
            while chunk := list(itertools.islice(pending, 32)):
                for c, _ in chunk:
                    counts[c] += 1
                dist = (counts / counts.sum()).astype(np.float32)
                yield from itertools.repeat(_acceptance(dist, target), len(chunk))

        def make():
            rng = np.random.default_rng(seed)
            original = classes(source())
            filtered = (
                (c, element)
                for (c, element), (accept, _) in zip(classes(source()), estimates())
                if rng.random() < accept[c]
            )
            weights = (m for _, m in estimates())
            while True:
                m = static_m if static_m is not None else next(weights, None)
                if m is None:
                    return
                pick = original if m >= 1 or (m > 0 and rng.random() < m) else filtered
                try:
                    c, element = next(pick)
                except StopIteration:
                    return  # (TF's stop_on_empty_dataset)
                yield np.asarray(c, np.int32), element

        if static_m is not None and static_m >= 1:  # (TF: the data as it is)

            def make():
                for c, element in classes(source()):
                    yield np.asarray(c, np.int32), element

            return ds._derive(make, ds._cardinality)
        return ds._derive(make, UNKNOWN_CARDINALITY)

    return apply


def _acceptance(initial: np.ndarray, target: np.ndarray):
    ratio = target / (initial + np.finfo(np.float32).tiny)
    lo, hi = ratio.min(), ratio.max()
    with np.errstate(invalid="ignore", divide="ignore"):
        accept = (ratio - lo) / (hi - lo)
    return accept, float(lo)


# -- pad_to_cardinality ----------------------------------------------------------------
def pad_to_cardinality(cardinality, mask_key="valid"):
    """Pads a dataset of dicts with zero elements up to `cardinality`; each
    element gets `mask_key`: True for the originals, False for the padding."""
    target = int(_to_numpy(cardinality))

    def apply(ds: Dataset) -> Dataset:
        n = ds._cardinality
        if n < 0:
            raise ValueError(
                "The dataset passed into `pad_to_cardinality` must have a known "
                f"cardinalty, but has cardinality {n}"
            )
        if n > target:
            raise ValueError(
                "The dataset passed into `pad_to_cardinality` must have a cardinalty "
                f"less than the target cardinality ({target}), but has cardinality {n}"
            )
        spec = ds.element_spec
        if not isinstance(spec, Mapping):
            raise ValueError(
                "`pad_to_cardinality` requires its input dataset to be a dictionary."
            )
        filler = {
            k: np.zeros(s.shape, dtypes.np_dtype(s.dtype)) for k, s in spec.items()
        }
        filler[mask_key] = np.asarray(False)
        source = ds._make

        def make():
            for element in source():
                yield {**element, mask_key: np.asarray(True)}
            for _ in range(target - n):
                yield dict(filler)

        out_spec = {**spec, mask_key: TensorSpec([], dtypes.bool)}
        return ds._derive(make, target, out_spec)

    return apply


# -- Example parsing -------------------------------------------------------------------
def parse_example_dataset(features, num_parallel_calls=1, deterministic=None):
    """Parses batches of serialized `Example`s with `jaxtape.io.parse_example`."""
    if not features:
        raise ValueError("Argument `features` cannot be None or empty.")
    parse = hooks.parse_example
    if parse is None:  # (io/ installs it when jaxtape is imported)
        raise NotImplementedError("parse_example_dataset needs jaxtape.io loaded.")

    def apply(ds: Dataset) -> Dataset:
        spec = ds._known_spec()
        if spec is not None and not (
            isinstance(spec, TensorSpec)
            and spec.dtype == dtypes.string
            and spec.shape.rank == 1
        ):
            raise TypeError(
                "Input dataset should be a dataset of vectors of strings. Instead "
                f"it is `{spec}`."
            )
        return ds.map(lambda serialized: parse(serialized, features),
                      num_parallel_calls, deterministic)  # fmt: skip

    return apply


def make_batched_features_dataset(
    file_pattern, batch_size, features, reader=None, label_key=None,
    reader_args=None, num_epochs=None, shuffle=True, shuffle_buffer_size=10000,
    shuffle_seed=None, prefetch_buffer_size=None, reader_num_threads=None,
    parser_num_threads=None, sloppy_ordering=False, drop_final_batch=False,
) -> Dataset:  # fmt: skip
    """Batches of parsed `Example`s read from the files matching
    `file_pattern` (TF's pipeline: list_files, interleaved reads, shuffle and
    repeat, batch, parse_example, the label split off, prefetch)."""
    if label_key is not None and label_key not in features:
        raise ValueError(
            f"The `label_key` provided ({label_key!r}) must be one of the "
            "`features` keys."
        )
    reader = TFRecordDataset if reader is None else reader
    args = list(reader_args or [])
    ds = Dataset.list_files(file_pattern, shuffle=shuffle, seed=shuffle_seed)
    ds = ds.interleave(
        lambda filename: reader(filename, *args),
        cycle_length=reader_num_threads or 1,
        block_length=1,
        num_parallel_calls=reader_num_threads,
        deterministic=not sloppy_ordering,
    )
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    ds = ds.batch(batch_size, drop_remainder=drop_final_batch or num_epochs is None)
    ds = ds.apply(parse_example_dataset(features, parser_num_threads or 1))
    if label_key is not None:
        ds = ds.map(lambda x: ({k: v for k, v in x.items() if k != label_key},
                               x[label_key]))  # fmt: skip
    return ds.prefetch(-1 if prefetch_buffer_size is None else prefetch_buffer_size)


# -- TFRecordWriter --------------------------------------------------------------------
class TFRecordWriter:
    """Writes a dataset of scalar strings to a TFRecord file (TF's
    `tf.data.experimental.TFRecordWriter`), `compression_type` "" / None,
    "ZLIB" or "GZIP"."""

    def __init__(self, filename, compression_type=None):
        self._filename = _text(filename)
        kind = (compression_type or "").upper()
        if kind not in ("", "ZLIB", "GZIP"):
            raise ValueError(f'Not a valid compression_type: "{compression_type}"')
        self._kind = kind

    def write(self, dataset: Dataset) -> None:
        """Writes every element of `dataset` (scalar strings) as one record."""
        if not isinstance(dataset, Dataset):
            raise TypeError(
                f"Invalid `dataset.` Expected a `tf.data.Dataset` but got {dataset!r}."
            )
        spec = dataset.element_spec
        if not (
            isinstance(spec, TensorSpec)
            and spec.dtype == dtypes.string
            and spec.shape.rank == 0
        ):
            shape = getattr(spec, "shape", spec)
            dtype = getattr(spec, "dtype", spec)
            raise TypeError(
                "Invalid `dataset`. Expected a`dataset` that produces scalar "
                "`tf.string` elements, but got a dataset which produces elements "
                f"with shapes {shape} and types {dtype!r}."
            )
        wbits = {"": None, "ZLIB": zlib.MAX_WBITS, "GZIP": 16 + zlib.MAX_WBITS}
        bits = wbits[self._kind]
        compressor = None if bits is None else zlib.compressobj(-1, zlib.DEFLATED, bits)
        with open(self._filename, "wb") as f:
            for element in dataset._make():
                data = record_io.frame(_record_bytes(element))
                f.write(data if compressor is None else compressor.compress(data))
            if compressor is not None:
                f.write(compressor.flush())


def _text(name) -> str:
    value = (
        name if isinstance(name, (str, bytes)) else np.asarray(_to_numpy(name)).item()
    )
    return value.decode() if isinstance(value, bytes) else str(value)


def _record_bytes(x) -> bytes:
    value = x if isinstance(x, (str, bytes)) else np.asarray(x).item()
    return value.encode() if isinstance(value, str) else bytes(value)


# -- tables from datasets --------------------------------------------------------------
class DatasetInitializer(lookup_ops._TableInitializer):
    """Fills a lookup table from a dataset of `(key, value)` pairs (TF's)."""

    def __init__(self, dataset: Dataset):
        spec: Any = dataset.element_spec
        _check_pairs(spec)
        self.dataset = dataset
        self._key_dtype = spec[0].dtype
        self._value_dtype = spec[1].dtype

    def _contents(self):
        keys, values = [], []
        for k, v in self.dataset._make():  # (strings as bytes, as TF's)
            keys.append(_numpy_leaf(k))
            values.append(_numpy_leaf(v))
        key_dtype = dtypes.np_dtype(self._key_dtype)
        value_dtype = dtypes.np_dtype(self._value_dtype)
        return (np.asarray(keys, key_dtype).reshape(-1),
                np.asarray(values, value_dtype).reshape(-1))  # fmt: skip


def _check_pairs(spec) -> None:
    if not (isinstance(spec, tuple) and len(spec) == 2):
        raise ValueError(
            "The given dataset must contain pairs of (key, value). Received "
            f"element_spec {spec}."
        )
    for s in spec:
        if not isinstance(s, TensorSpec) or s.shape.rank != 0:
            raise ValueError(
                "The given dataset must contain scalar keys and values. Received "
                f"element_spec {spec}."
            )


def table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None,
                       default_value=None, hasher_spec=None, key_dtype=dtypes.string,
                       name=None):  # fmt: skip
    """A lookup table from a dataset of `(key, value)` pairs; with
    `num_oov_buckets`, unknown keys hash into buckets after the table's ids.

    Differences from TensorFlow: `hasher_spec` other than the default (TF's
    `FastHashSpec`) raises NotImplementedError; the table is a
    `StaticHashTable` (or `StaticVocabularyTable` with buckets).
    """
    del name
    if not isinstance(dataset, Dataset):
        raise TypeError(f"`dataset` must be a jaxtape.data.Dataset, got {dataset!r}.")
    if hasher_spec is not None:
        raise NotImplementedError(
            "table_from_dataset: only the default hasher_spec (FastHashSpec) is "
            "supported by jaxtape."
        )
    spec: Any = dataset.element_spec
    _check_pairs(spec)
    key_dtype = dtypes.as_dtype(key_dtype)
    if default_value is None:
        if not (spec[1].dtype.is_integer or spec[1].dtype.is_floating):
            raise ValueError(
                "`default_value` must be specified when creating a table from a "
                f"dataset that produces values of type {spec[1].dtype}."
            )
        default_value = -1
    if num_oov_buckets < 0:
        raise ValueError(
            f"`num_oov_buckets` must be greater than or equal to 0, got "
            f"{num_oov_buckets}."
        )
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"`vocab_size` must be greater than 0, got {vocab_size}.")
    if not key_dtype.is_integer and key_dtype != dtypes.string:
        raise TypeError(f"`key_dtype` must be integer or string, got {key_dtype!r}.")
    if vocab_size is not None:
        dataset = dataset.take(vocab_size)
    initializer = DatasetInitializer(dataset)
    if num_oov_buckets:
        return lookup_ops.StaticVocabularyTable(initializer, num_oov_buckets)
    return lookup_ops.StaticHashTable(initializer, default_value)


def index_table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None,
                             default_value=-1, hasher_spec=None,
                             key_dtype=dtypes.string, name=None):  # fmt: skip
    """A table mapping each key of a dataset of scalars to its position."""
    if not isinstance(dataset, Dataset):
        raise TypeError(f"`dataset` must be a jaxtape.data.Dataset, got {dataset!r}.")
    pairs = dataset.enumerate().map(lambda i, k: (k, i))
    return table_from_dataset(pairs, num_oov_buckets, vocab_size, default_value,
                              hasher_spec, key_dtype, name)  # fmt: skip


# -- SqlDataset ----------------------------------------------------------------------
_SQL_TYPES = ("string", "int8", "int16", "int32", "int64", "uint8", "uint16", "bool",
              "float64")  # fmt: skip


class SqlDataset(Dataset):
    """The rows of an SQLite query, one element per row (TF's `SqlDataset`):
    a tuple of scalars of `output_types` (a single dtype: one scalar). As
    SQLite converts them: NULL is 0 / 0.0 / b"", text read as a number is its
    leading numeric part (else 0)."""

    def __init__(self, driver_name, data_source_name, query, output_types):
        driver = _text(driver_name)
        if driver != "sqlite":
            raise errors.InvalidArgumentError(
                None,
                None,
                f"The database type, {driver}, is not supported by SqlDataset. The "
                "set of supported databases is: {'sqlite'}.",
            )
        single = not isinstance(output_types, tuple)
        types = [
            dtypes.as_dtype(t) for t in ((output_types,) if single else output_types)
        ]
        if any(t.name not in _SQL_TYPES for t in types):
            raise errors.InvalidArgumentError(
                None,
                None,
                "Each element of `output_types_` must be one of: DT_STRING, DT_INT8, "
                "DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_UINT16, DT_BOOL, DT_DOUBLE",
            )
        source, text = _text(data_source_name), _text(query)

        def make():
            try:  # read-only, as TF opens it
                uri = pathlib.Path(source).absolute().as_uri() + "?mode=ro"
                connection = sqlite3.connect(uri, uri=True)
            except sqlite3.Error as e:
                raise errors.UnknownError(
                    None, None, f"Sqlite::Open({source}) failed: {e}"
                ) from None
            with contextlib.closing(connection):
                try:
                    cursor = connection.execute(text)
                except sqlite3.Error as e:
                    raise errors.UnknownError(
                        None, None, f"Prepare() failed: {e}: {text}"
                    ) from None
                width = len(cursor.description or ())
                if width != len(types):
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"The number of columns in query ({width}) must match the "
                        f"number of elements in output_types ({len(types)}).",
                    )
                for row in cursor:
                    values = tuple(_sql_value(v, t) for v, t in zip(row, types))
                    yield values[0] if single else values

        specs = tuple(TensorSpec([], t) for t in types)
        super().__init__(make, UNKNOWN_CARDINALITY, specs[0] if single else specs)


def _sql_value(v, dtype) -> np.ndarray:
    if dtype == dtypes.string:
        if v is None:
            return np.asarray(b"", object)
        text = v if isinstance(v, bytes) else str(v).encode()
        return np.asarray(text, object)
    number = _sql_number(v)
    if dtype == dtypes.bool:
        return np.asarray(int(number) != 0)
    if dtype.is_integer:
        return np.asarray(int(number), dtypes.np_dtype(dtype))
    return np.asarray(float(number), np.float64)


def _sql_number(v) -> float:
    """SQLite's reading of a value as a number: text by its numeric prefix."""
    if v is None:
        return 0
    if isinstance(v, (int, float)):
        return v
    text = v.decode(errors="replace") if isinstance(v, bytes) else str(v)
    match = re.match(r"\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?", text)
    return float(match.group(0)) if match else 0
