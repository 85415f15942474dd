"""File sources: `TextLineDataset` and `Dataset.list_files` (TF's semantics).

Layer L4. Lines and file names are bytes (NumPy `S` arrays: jaxtape has no
string tensors).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Iterator

import numpy as np

from jaxtape._src.core import errors
from jaxtape._src.data.dataset import UNKNOWN_CARDINALITY, Dataset, _to_numpy
from jaxtape._src.ops import record_io

_COMPRESSIONS = record_io.COMPRESSIONS


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


def _read_lines(path: str, compression: str) -> Iterator:
    lines = _read_bytes(path, compression).split(b"\n")
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
        compression = _check_compression(compression_type)
        del buffer_size, name
        read = lambda path: _read_lines(path, compression)  # noqa: E731
        super().__init__(
            _file_source(filenames, read, num_parallel_reads), UNKNOWN_CARDINALITY
        )


def _read_bytes(path: str, compression: str) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(
            None, None, f"{path}; No such file or directory"
        ) from None
    return record_io.decompress(data, compression)


def _binary(record: bytes) -> np.ndarray:
    """A binary record as a 0-d object array: a NumPy `S` array would drop
    its trailing NUL bytes."""
    out = np.empty((), object)
    out[()] = record
    return out


def _check_compression(compression_type) -> str:
    compression = (compression_type or "").upper()
    if compression not in _COMPRESSIONS:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Unsupported compression_type: {compression_type!r}. Use None, "
            "'GZIP' or 'ZLIB'.",
        )
    return compression


def _file_source(filenames, read, num_parallel_reads) -> Callable[[], Iterator]:
    """The records of each file in turn, or `num_parallel_reads` files
    interleaved record by record on a thread pool (TF's order)."""
    names = _file_names(filenames)
    if num_parallel_reads is None:

        def in_order() -> Iterator:
            for path in names:
                yield from read(path)

        return in_order
    files = Dataset.from_tensor_slices(np.asarray([os.fsencode(n) for n in names]))
    records = files.interleave(
        lambda f: Dataset(lambda: read(_text(np.asarray(f))), UNKNOWN_CARDINALITY),
        cycle_length=num_parallel_reads,
        block_length=1,
        num_parallel_calls=num_parallel_reads,
    )
    return records._make


class FixedLengthRecordDataset(Dataset):
    """Records of `record_bytes` bytes from binary files, after `header_bytes`
    and before `footer_bytes` (TF's `tf.data.FixedLengthRecordDataset`).

    A file whose body is not a whole number of records raises
    `InvalidArgumentError` when it is read, as in TF.

    Differences from TensorFlow: records are NumPy bytes arrays.
    """

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None,
                 buffer_size=None, compression_type=None, num_parallel_reads=None,
                 name=None):  # fmt: skip
        size = int(_to_numpy(record_bytes))
        header = int(_to_numpy(header_bytes or 0))
        footer = int(_to_numpy(footer_bytes or 0))
        if size <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"record_bytes must be > 0 but is {size}."
            )
        compression = _check_compression(compression_type)
        del buffer_size, name

        def read(path: str) -> Iterator:
            data = _read_bytes(path, compression)
            body = data[header : len(data) - footer]
            if len(body) % size:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Excluding the header ({header} bytes) and footer ({footer} "
                    f'bytes), input file "{path}" has body length {len(body)} '
                    f"bytes, which is not an exact multiple of the record length "
                    f"({size} bytes).",
                )
            for i in range(0, len(body), size):
                yield _binary(body[i : i + size])

        super().__init__(
            _file_source(filenames, read, num_parallel_reads), UNKNOWN_CARDINALITY
        )


class TFRecordDataset(Dataset):
    """The records of TFRecord files (TF's `tf.data.TFRecordDataset`), each
    checked against its CRC32C as TF does (`DataLossError` when corrupt).

    Differences from TensorFlow: records are NumPy bytes arrays (jaxtape has
    no string tensors or `tf.io.parse_example`); `buffer_size` is ignored.
    """

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None):  # fmt: skip
        compression = _check_compression(compression_type)
        del buffer_size, name

        def read(path: str) -> Iterator:
            data = _read_bytes(path, compression)
            for record in record_io.records(data, path):
                yield _binary(record)

        super().__init__(
            _file_source(filenames, read, num_parallel_reads), UNKNOWN_CARDINALITY
        )


_CSV_TYPES = ("float32", "float64", "int32", "int64", "string")


def _csv_default(value):
    """A record default as (NumPy dtype, default or None when required)."""
    from jaxtape._src.core import dtypes

    if isinstance(value, dtypes.DType) or (
        isinstance(value, type) and issubclass(value, np.generic)
    ):
        dtype, default = np.dtype(dtypes.np_dtype(value)), None
    else:
        array = np.asarray(_to_numpy(value))
        if array.size == 0:  # `[]`: a required field, float32 as TF
            return np.dtype("float32"), None
        default = array.reshape(-1)[0]
        dtype = np.dtype("S") if array.dtype.kind in "SU" else array.dtype
    name = "string" if dtype.kind in "SU" else dtype.name
    if name not in _CSV_TYPES:
        raise TypeError(
            f"CsvDataset record_defaults must be float32, float64, int32, int64 or "
            f"string, got {name}."
        )
    return dtype, default


def _parse_csv_field(text: str, dtype, default, col: int, row: int, na_value: str):
    if text == "" or text == na_value:
        if default is None:
            raise errors.InvalidArgumentError(
                None, None, f"Field {col} is required but missing in record {row}!"
            )
        if dtype.kind == "S":
            value = default.item() if isinstance(default, np.generic) else default
            return np.asarray(
                value if isinstance(value, bytes) else str(value).encode()
            )
        return np.asarray(default, dtype)
    if dtype.kind == "S":
        return np.asarray(text.encode())
    try:
        value = int(text) if dtype.kind == "i" else float(text)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"Field {col} in record {row} is not a valid {dtype}: {text}"
        ) from None
    return np.asarray(value, dtype)


class CsvDataset(Dataset):
    """The records of CSV files as tuples of scalars, typed by `record_defaults`
    (TF's `tf.data.experimental.CsvDataset`): a dtype makes a required field,
    a value its default for empty (or `na_value`) fields.

    Differences from TensorFlow: string fields are NumPy bytes; `buffer_size`
    is ignored.
    """

    def __init__(self, filenames, record_defaults, compression_type=None,
                 buffer_size=None, header=False, field_delim=",",
                 use_quote_delim=True, na_value="", select_cols=None,
                 exclude_cols=None, name=None):  # fmt: skip
        import csv
        import io

        if select_cols is not None and exclude_cols is not None:
            raise ValueError(
                "Either select_cols or exclude_cols should be empty (both were given)."
            )
        defaults = [_csv_default(v) for v in record_defaults]
        select = None if select_cols is None else [int(c) for c in select_cols]
        if select is not None and (sorted(set(select)) != select):
            raise errors.InvalidArgumentError(
                None, None, "select_cols is not strictly increasing."
            )
        if select is not None and len(select) != len(defaults):
            raise ValueError(
                "`len(select_cols)` must equal `len(record_defaults)`, got "
                f"{len(select)} and {len(defaults)}."
            )
        exclude = set() if exclude_cols is None else {int(c) for c in exclude_cols}
        compression = _check_compression(compression_type)
        del buffer_size, name

        def read(path: str) -> Iterator:
            text = _read_bytes(path, compression).decode()
            reader = csv.reader(
                io.StringIO(text),
                delimiter=field_delim,
                quoting=csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE,
            )
            for row_index, row in enumerate(reader):
                if header and row_index == 0:
                    continue
                if select is not None:
                    fields = [row[c] if c < len(row) else "" for c in select]
                else:
                    fields = [f for c, f in enumerate(row) if c not in exclude]
                if len(fields) != len(defaults):
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"Expect {len(defaults)} fields but have {len(fields)} in "
                        f"record {row_index}",
                    )
                yield tuple(
                    _parse_csv_field(f, dt, d, c, row_index, na_value)
                    for c, (f, (dt, d)) in enumerate(zip(fields, defaults))
                )

        super().__init__(_file_source(filenames, read, None), UNKNOWN_CARDINALITY)


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
