"""`tf.io.parse_example` and friends: `Example`/`SequenceExample` protos to
tensors, with TF's feature configurations.

`FixedLenFeature` gives a dense tensor (its `default_value` when absent),
`FixedLenSequenceFeature` a dense tensor padded along its first axis,
`VarLenFeature` a `SparseTensor`, `SparseFeature` a `SparseTensor` from
index and value features, `RaggedFeature` a `RaggedTensor` (partitions
applied outermost first). Parsing runs on the host, as TF's CPU kernel.

Layer L4 (`io`): imports `core`, `ops`, `structured`.
"""

from __future__ import annotations

import collections
from typing import Any, NamedTuple

import numpy as np

from jaxtape._src.core import dtypes, errors
from jaxtape._src.core.context import hooks as _hooks
from jaxtape._src.io import host
from jaxtape._src.io.example_proto import Example, SequenceExample
from jaxtape._src.structured import ragged_ops
from jaxtape._src.structured.ragged import RaggedTensor
from jaxtape._src.structured.sparse import SparseTensor

_KIND = {"float32": "float_list", "int64": "int64_list", "string": "bytes_list"}
_TF_NAME = {"float32": "float", "int64": "int64", "string": "string"}
_KIND_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


# -- feature configurations (TF's namedtuples) ----------------------------------
class FixedLenFeature(
    collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])
):
    """A fixed-size input feature (TF's `tf.io.FixedLenFeature`)."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtypes.as_dtype(dtype), default_value)


class FixedLenSequenceFeature(
    collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"]
    )
):
    """A feature of any number of fixed-size items, stacked and padded
    (TF's `tf.io.FixedLenSequenceFeature`)."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(
            cls, shape, dtypes.as_dtype(dtype), allow_missing, default_value
        )


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A variable-length feature, parsed to a `SparseTensor` (TF's
    `tf.io.VarLenFeature`)."""

    def __new__(cls, dtype):
        return super().__new__(cls, dtypes.as_dtype(dtype))


class SparseFeature(
    collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"]
    )
):
    """A `SparseTensor` from an index feature (or one per dimension) and a
    value feature (TF's `tf.io.SparseFeature`)."""

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(
            cls, index_key, value_key, dtypes.as_dtype(dtype), size, already_sorted
        )


class _RowSplits(NamedTuple):
    key: str


class _RowLengths(NamedTuple):
    key: str


class _RowStarts(NamedTuple):
    key: str


class _RowLimits(NamedTuple):
    key: str


class _ValueRowIds(NamedTuple):
    key: str


class _UniformRowLength(NamedTuple):
    length: int


for _cls, _name in (
    (_RowSplits, "RowSplits"), (_RowLengths, "RowLengths"),
    (_RowStarts, "RowStarts"), (_RowLimits, "RowLimits"),
    (_ValueRowIds, "ValueRowIds"), (_UniformRowLength, "UniformRowLength"),
):  # fmt: skip
    _cls.__name__ = _cls.__qualname__ = _name


class RaggedFeature(
    collections.namedtuple(
        "RaggedFeature",
        ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"],
    )
):
    """A feature parsed to a `RaggedTensor` (TF's `tf.io.RaggedFeature`):
    the values of `value_key` (default: the feature's key), split by
    `partitions` (`RaggedFeature.RowLengths("key")`, ... outermost first).

    Differences from TensorFlow: partitions are always validated (TF's
    `validate=False` lets inconsistent ones through unchecked).
    """

    RowSplits = _RowSplits
    RowLengths = _RowLengths
    RowStarts = _RowStarts
    RowLimits = _RowLimits
    ValueRowIds = _ValueRowIds
    UniformRowLength = _UniformRowLength

    def __new__(cls, dtype, value_key=None, partitions=(),
                row_splits_dtype=dtypes.int32, validate=False):  # fmt: skip
        return super().__new__(
            cls,
            dtypes.as_dtype(dtype),
            value_key,
            tuple(partitions),
            dtypes.as_dtype(row_splits_dtype),
            validate,
        )


_PARTITIONS = (_RowSplits, _RowLengths, _RowStarts, _RowLimits, _ValueRowIds,
               _UniformRowLength)  # fmt: skip


# -- reading one proto ----------------------------------------------------------
class _Context:
    """Where a value came from, for TF's error messages."""

    def __init__(self, op_name: str, names):
        self.op_name = op_name
        self.names = names

    def name(self, index: int) -> str:
        if self.names is None:
            return "<unknown>"
        return self.names[index].decode()

    def error(self, message: str) -> errors.InvalidArgumentError:
        return errors.InvalidArgumentError(None, None, f"{message} [Op:{self.op_name}]")


def _check_dtype(dtype, attr: str, op_name: str) -> str:
    if dtype.name not in _KIND:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Value for attr '{attr}' of {dtype.name} is not in the list of allowed "
            f"values: float, int64, string [Op:{op_name}]",
        )
    return dtype.name


def _values(feature, dtype_name: str, key: str, ctx: _Context, index: int):
    """The values of one `Feature` as a NumPy array of `dtype_name`."""
    kind = feature.WhichOneof("kind")
    want = _KIND[dtype_name]
    if kind is not None and kind != want:
        raise ctx.error(
            f"Name: {ctx.name(index)}, Key: {key}, Index: {index}.  Data types "
            f"don't match. Data type: {_KIND_NAME[kind]} but expected type: "
            f"{_TF_NAME[dtype_name]}"
        )
    values = list(getattr(feature, want).value) if kind else []
    if dtype_name == "string":
        out = np.empty(len(values), object)
        out[:] = values
        return out
    return np.asarray(values, dtypes.np_dtype(dtypes.as_dtype(dtype_name)))


def _parse(cls, data: bytes, ctx: _Context, index: int) -> Any:
    from google.protobuf.message import DecodeError  # lazy: with the protos

    try:
        return cls.FromString(data)
    except DecodeError:
        raise ctx.error(
            f"Name: {ctx.name(index)}, Could not parse example input, value: "
            f"'{data[:40]!r}'"
        ) from None


def _string_tensor(array):
    return host.strings_out(array)


def _tensor(array: np.ndarray, dtype_name: str):
    if dtype_name == "string":
        return host.strings_out(array)
    return host.numbers_out(array)


def _values_tensor(array: np.ndarray, dtype_name: str):
    """Values of a SparseTensor/RaggedTensor (a tensor even for strings)."""
    if dtype_name == "string":
        return _string_tensor(array)
    return host.numbers_out(array)


def _empty(dtype_name: str, shape=(0,)) -> np.ndarray:
    if dtype_name == "string":
        return np.full(shape, b"", object)
    return np.zeros(shape, dtypes.np_dtype(dtypes.as_dtype(dtype_name)))


def _fill_value(default, dtype_name: str):
    if default is None:
        return b"" if dtype_name == "string" else 0
    array = (
        host.byte_strings(default, "default_value")
        if dtype_name == "string"
        else host.host_numbers(default, "ParseExample")
    )
    return array.reshape(-1)[0]


def _shape(shape) -> tuple:
    return tuple(int(d) for d in (shape if shape is not None else ()))


# -- one feature across a batch -------------------------------------------------
def _fixed(key, spec, feats, ctx: _Context):
    dtype_name = _check_dtype(spec.dtype, "Tdense", ctx.op_name)
    shape = list(spec.shape) if spec.shape is not None else []
    if shape and shape[0] is None:
        raise ValueError(
            f"First dimension of shape for feature {key} unknown. Consider using "
            f"FixedLenSequenceFeature. Received feature={spec}."
        )
    shape = _shape(shape)
    size = int(np.prod(shape, dtype=np.int64))
    default = None
    if spec.default_value is not None:
        default = (
            host.byte_strings(spec.default_value, "default_value")
            if dtype_name == "string"
            else np.asarray(
                host.host_numbers(spec.default_value, ctx.op_name),
                dtypes.np_dtype(spec.dtype),
            )
        )
        if default.size != size:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Input to reshape is a tensor with {default.size} values, but the "
                f"requested shape has {size} [Op:Reshape]",
            )
    rows = []
    for i, feats_i in enumerate(feats):
        if key not in feats_i:
            if default is None:
                raise ctx.error(
                    f"Name: {ctx.name(i)}, Feature: {key} (data type: "
                    f"{_TF_NAME[dtype_name]}) is required but could not be found."
                )
            rows.append(default.reshape(shape))
            continue
        values = _values(feats_i[key], dtype_name, key, ctx, i)
        if values.size != size:
            raise ctx.error(
                f"Name: {ctx.name(i)}, Key: {key}, Index: {i}.  Number of "
                f"{_TF_NAME[dtype_name]} values != expected.  Values size: "
                f"{values.size} but output shape: {list(shape)}"
            )
        rows.append(values.reshape(shape))
    return _stack(rows, (len(feats), *shape), dtype_name)


def _stack(rows, shape, dtype_name):
    out = _empty(dtype_name, shape)
    for i, r in enumerate(rows):
        out[i, ...] = r  # (`out[i] = r` would store a 0-d object array)
    return out


def _padded(key, spec, value_lists, ctx: _Context, pad):
    """Dense [B, T_max, *shape] from per-example flat value arrays (None:
    absent), plus the number of items in each."""
    dtype_name = spec.dtype.name
    shape = _shape(spec.shape)
    item = int(np.prod(shape, dtype=np.int64))
    counts = []
    for i, values in enumerate(value_lists):
        n = 0 if values is None else values.size
        if item == 0 or n % item:
            if n or item == 0:
                raise ctx.error(
                    f"Name: {ctx.name(i)}, Key: {key}, Index: {i}.  Number of "
                    f"{_TF_NAME[dtype_name]} values is not a multiple of stride "
                    f"length. Saw {n} values but output shape is: {list(shape)}"
                )
        counts.append(n // item if item else 0)
    longest = max(counts, default=0)
    out = np.full((len(value_lists), longest, *shape), pad, _empty(dtype_name).dtype)
    for i, values in enumerate(value_lists):
        if counts[i]:
            out[i, : counts[i]] = values.reshape((counts[i], *shape))
    return out, np.asarray(counts, np.int64)


def _var_len(value_lists, dtype_name: str, batch: bool):
    """A SparseTensor of per-example value arrays: [B, max] or [max]."""
    idx, vals = [], []
    for b, values in enumerate(value_lists):
        for j in range(len(values)):
            idx.append((b, j) if batch else (j,))
        vals.append(values)
    longest = max((len(v) for v in value_lists), default=0)
    shape = [len(value_lists), longest] if batch else [longest]
    values = np.concatenate(vals) if vals else _empty(dtype_name)
    indices = np.asarray(idx, np.int64).reshape(-1, len(shape))
    return SparseTensor(
        host.numbers_out(indices), _values_tensor(values, dtype_name), shape
    )


def _sparse_feature(spec, feats, ctx: _Context, batch: bool):
    dtype_name = _check_dtype(spec.dtype, "sparse_types", ctx.op_name)
    keys = [spec.index_key] if isinstance(spec.index_key, str) else spec.index_key
    sizes = [spec.size] if np.ndim(spec.size) == 0 else list(spec.size)
    idx, vals = [], []
    for b, f in enumerate(feats):
        values = _get(f, spec.value_key, dtype_name, ctx, b)
        cols = [_get(f, k, "int64", ctx, b) for k in keys]
        for k, c in zip(keys, cols):
            if len(c) != len(values):
                raise ctx.error(
                    f"Name: {ctx.name(b)}, Key: {k}, Index: {b}.  Number of indices "
                    f"({len(c)}) != number of values ({len(values)})"
                )
        rows = np.stack(cols, 1) if cols else np.zeros((0, 0), np.int64)
        if not spec.already_sorted and len(rows):
            order = np.lexsort(rows.T[::-1])
            rows, values = rows[order], values[order]
        lead = [[b]] * len(rows) if batch else [[]] * len(rows)
        idx.append(np.concatenate([np.asarray(lead, np.int64).reshape(len(rows), -1),
                                   rows.reshape(len(rows), -1)], 1))  # fmt: skip
        vals.append(values)
    rank = len(sizes) + (1 if batch else 0)
    indices = np.concatenate(idx) if idx else np.zeros((0, rank), np.int64)
    values = np.concatenate(vals) if vals else _empty(dtype_name)
    shape = ([len(feats)] if batch else []) + [int(s) for s in sizes]
    return SparseTensor(
        host.numbers_out(indices.reshape(-1, rank)),
        _values_tensor(values, dtype_name),
        shape,
    )


def _get(feats_i, key, dtype_name, ctx, index):
    if key not in feats_i:
        return _empty(dtype_name)
    return _values(feats_i[key], dtype_name, key, ctx, index)


def _splits_of(partition, f, ctx, index, nvalues):
    """Row splits (NumPy) of one partition in one example, or an int for a
    uniform row length."""
    if isinstance(partition, _UniformRowLength):
        return int(partition.length)
    data = _get(f, partition.key, "int64", ctx, index)
    if isinstance(partition, _RowSplits):
        return data
    if isinstance(partition, _RowLengths):
        return np.concatenate([[0], np.cumsum(data)]).astype(np.int64)
    if isinstance(partition, _RowStarts):
        return np.concatenate([data, [nvalues]]).astype(np.int64)
    if isinstance(partition, _RowLimits):
        return np.concatenate([[0], data]).astype(np.int64)
    nrows = int(data.max()) + 1 if data.size else 0  # ValueRowIds
    counts = np.bincount(data, minlength=nrows)
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def _ragged_one(key, spec, f, ctx, index):
    """One example's ragged value: a NumPy array (no partitions or uniform
    ones only) or a RaggedTensor."""
    dtype_name = _check_dtype(spec.dtype, "ragged_value_types", ctx.op_name)
    values: Any = _get(f, spec.value_key or key, dtype_name, ctx, index)
    for partition in reversed(spec.partitions):
        if not isinstance(partition, _PARTITIONS):
            raise TypeError(f"Unsupported partition {partition!r} for key {key!r}")
        nvalues = int(values.shape[0])
        splits = _splits_of(partition, f, ctx, index, nvalues)
        if isinstance(splits, int):
            if isinstance(values, np.ndarray):
                if nvalues % splits:
                    raise ctx.error(
                        f"Key: {key}. {nvalues} values are not a multiple of "
                        f"uniform_row_length {splits}"
                    )
                values = values.reshape((nvalues // splits, splits, *values.shape[1:]))
                continue
            values = RaggedTensor.from_uniform_row_length(values, splits)
            continue
        if isinstance(values, np.ndarray):
            values = _values_tensor(values, dtype_name)
        values = RaggedTensor.from_row_splits(
            values, splits.astype(dtypes.np_dtype(spec.row_splits_dtype))
        )
    return values


def _ragged(key, spec, feats, ctx, batch: bool):
    parts = [_ragged_one(key, spec, f, ctx, i) for i, f in enumerate(feats)]
    if not batch:
        part = parts[0]
        return (
            part if isinstance(part, RaggedTensor) else _tensor(part, spec.dtype.name)
        )
    splits_dtype = dtypes.np_dtype(spec.row_splits_dtype)
    if all(isinstance(p, np.ndarray) for p in parts):
        dtype_name = spec.dtype.name
        lengths = [p.shape[0] for p in parts]
        values = np.concatenate(parts) if parts else _empty(dtype_name)
        splits = np.concatenate([[0], np.cumsum(lengths)]).astype(splits_dtype)
        return RaggedTensor.from_row_splits(_values_tensor(values, dtype_name), splits)
    stacked = ragged_ops.stack(parts)
    if isinstance(stacked, RaggedTensor):
        stacked = stacked.with_row_splits_dtype(spec.row_splits_dtype)
    return stacked


# -- the public parse ops -------------------------------------------------------
def _check_features(features, what="features"):
    if not features:
        raise ValueError(f"Argument `{what}` cannot be None or falsy. Got {features!r}")
    for key, spec in features.items():
        if not isinstance(
            spec, (FixedLenFeature, FixedLenSequenceFeature, VarLenFeature,
                   SparseFeature, RaggedFeature),
        ):  # fmt: skip
            raise ValueError(
                f"Unsupported {type(spec).__name__} {spec} for key {key!r}"
            )
        if isinstance(spec, FixedLenSequenceFeature) and not spec.allow_missing:
            raise ValueError(
                "Unsupported: FixedLenSequenceFeature requires allow_missing to be "
                "True."
            )
    _check_disjoint(features)


def _check_disjoint(features) -> None:
    """TF's check that dense, sparse and ragged features read distinct keys."""
    kinds: dict[str, set] = {"Dense": set(), "sparse": set(), "ragged": set()}
    for key, spec in features.items():
        if isinstance(spec, (FixedLenFeature, FixedLenSequenceFeature)):
            kinds["Dense"].add(key)
        elif isinstance(spec, VarLenFeature):
            kinds["sparse"].add(key)
        elif isinstance(spec, SparseFeature):
            index = spec.index_key
            kinds["sparse"].update([index] if isinstance(index, str) else index)
            kinds["sparse"].add(spec.value_key)
        elif isinstance(spec, RaggedFeature):
            kinds["ragged"].add(spec.value_key or key)
            kinds["ragged"].update(
                p.key for p in spec.partitions if not isinstance(p, _UniformRowLength)
            )
    for a, b in (("Dense", "sparse"), ("Dense", "ragged"), ("sparse", "ragged")):
        common = kinds[a] & kinds[b]
        if common:
            raise ValueError(
                f"{a} and {b} keys must not intersect; {a.lower()}_keys: "
                f"{sorted(kinds[a])}, {b}_keys: {sorted(kinds[b])}, intersection: "
                f"{common}"
            )


def _feature_maps(serialized, cls, field, ctx):
    return [getattr(_parse(cls, s, ctx, i), field) for i, s in enumerate(serialized)]


def _parse_features(features, feats, ctx, batch: bool) -> dict:
    out = {}
    for key, spec in features.items():
        if isinstance(spec, FixedLenFeature):
            dense = _fixed(key, spec, feats, ctx)
            out[key] = _tensor(dense if batch else dense[0], spec.dtype.name)
        elif isinstance(spec, FixedLenSequenceFeature):
            dtype_name = _check_dtype(spec.dtype, "Tdense", ctx.op_name)
            lists = [_get(f, key, dtype_name, ctx, i) for i, f in enumerate(feats)]
            pad = _fill_value(spec.default_value, dtype_name)
            dense, _ = _padded(key, spec, lists, ctx, pad)
            out[key] = _tensor(dense if batch else dense[0], dtype_name)
        elif isinstance(spec, VarLenFeature):
            dtype_name = _check_dtype(spec.dtype, "sparse_types", ctx.op_name)
            lists = [_get(f, key, dtype_name, ctx, i) for i, f in enumerate(feats)]
            out[key] = _var_len(lists, dtype_name, batch)
        elif isinstance(spec, SparseFeature):
            out[key] = _sparse_feature(spec, feats, ctx, batch)
        else:
            out[key] = _ragged(key, spec, feats, ctx, batch)
    return out


def _names(example_names, n: int):
    if example_names is None:
        return None
    names = host.byte_strings(example_names, "example_names").reshape(-1)
    return list(names) if names.size else None


def parse_example(serialized, features, example_names=None, name=None):
    """Parses a batch (1-D) of serialized `Example` protos into a dict of
    tensors, one per feature (TF's `tf.io.parse_example`); a scalar parses
    one example as `parse_single_example` does.

    Differences from TensorFlow: inconsistent `RaggedFeature` partitions
    always raise (TF checks them only with `validate=True`).
    """
    del name
    _check_features(features)
    data = host.byte_strings(serialized, "serialized")
    if data.ndim == 0:
        return parse_single_example(data, features, example_names)
    if data.ndim != 1:
        raise ValueError(f"Input serialized must be a vector, got {data.shape}")
    ctx = _Context("ParseExampleV2", _names(example_names, data.size))
    feats = _feature_maps(data.tolist(), Example, "features", ctx)
    return _parse_features(features, [f.feature for f in feats], ctx, batch=True)


def parse_single_example(serialized, features, example_names=None, name=None):
    """Parses one serialized `Example` (a scalar) into a dict of tensors
    without the batch axis (TF's `tf.io.parse_single_example`)."""
    del name
    _check_features(features)
    data = host.byte_strings(serialized, "serialized")
    if data.ndim != 0:
        raise ValueError("Input serialized must be a scalar")
    ctx = _Context("ParseExampleV2", _names(example_names, 1))
    feats = _feature_maps([data[()]], Example, "features", ctx)
    return _parse_features(features, [f.feature for f in feats], ctx, batch=False)


def _check_sequence_features(context_features, sequence_features):
    if not context_features and not sequence_features:
        raise ValueError(
            "Both context_features and sequence_features are None, but at least "
            "one should have values."
        )
    _check_disjoint(context_features or {})
    for key, spec in (context_features or {}).items():
        if not isinstance(spec, (FixedLenFeature, VarLenFeature, RaggedFeature)):
            raise ValueError(
                f"Unsupported {type(spec).__name__} {spec} for key {key!r}"
            )
    for key, spec in (sequence_features or {}).items():
        if not isinstance(
            spec, (FixedLenSequenceFeature, VarLenFeature, RaggedFeature)
        ):
            raise ValueError(
                f"Unsupported {type(spec).__name__} {spec} for key {key!r}"
            )
        if isinstance(spec, FixedLenSequenceFeature) and spec.default_value is not None:
            raise ValueError(f"Value feature_list.dense_defaults[{key}] must be None")
        if isinstance(spec, RaggedFeature) and spec.partitions:
            raise NotImplementedError(
                f"RaggedFeature partitions in sequence_features (key {key!r}) are "
                "not supported by jaxtape; parse the flat feature list instead."
            )


def _steps(lists_i, key, dtype_name, ctx, index) -> list:
    if key not in lists_i:
        return []
    return [_values(f, dtype_name, key, ctx, index) for f in lists_i[key].feature]


def _sequence(key, spec, lists, ctx, batch: bool):
    """One sequence feature: (tensor, length array or None)."""
    attr = {FixedLenSequenceFeature: "feature_list_dense_types",
            VarLenFeature: "feature_list_sparse_types"}.get(
        type(spec), "feature_list_ragged_value_types")  # fmt: skip
    dtype_name = _check_dtype(spec.dtype, attr, ctx.op_name)
    steps = [_steps(li, key, dtype_name, ctx, i) for i, li in enumerate(lists)]
    if isinstance(spec, FixedLenSequenceFeature):
        shape = _shape(spec.shape)
        size = int(np.prod(shape, dtype=np.int64))
        flat = []
        for i, (li, s) in enumerate(zip(lists, steps)):
            if key not in li and not spec.allow_missing:
                raise ctx.error(
                    f"Name: {ctx.name(i)}, Feature list '{key}' is required but "
                    "could not be found.  Did you mean to include it in "
                    "feature_list_dense_missing_assumed_empty or "
                    "feature_list_dense_defaults?"
                )
            for v in s:
                if v.size != size:
                    raise ctx.error(
                        f"Name: {ctx.name(i)}, Key: {key}, Index: {i}.  Number of "
                        f"{_TF_NAME[dtype_name]} values != expected.  values size: "
                        f"{v.size} but output shape: {list(shape)}"
                    )
            flat.append(np.concatenate(s) if s else _empty(dtype_name))
        dense, counts = _padded(key, spec, flat, ctx, _fill_value(None, dtype_name))
        return _tensor(dense if batch else dense[0], dtype_name), counts
    if isinstance(spec, VarLenFeature):
        idx, vals = [], []
        longest_t = max((len(s) for s in steps), default=0)
        longest_v = max((len(v) for s in steps for v in s), default=0)
        for b, s in enumerate(steps):
            for t, v in enumerate(s):
                idx.extend(((b, t, j) if batch else (t, j)) for j in range(len(v)))
                vals.append(v)
        rank = 3 if batch else 2
        shape = ([len(steps)] if batch else []) + [longest_t, longest_v]
        values = np.concatenate(vals) if vals else _empty(dtype_name)
        indices = np.asarray(idx, np.int64).reshape(-1, rank)
        sparse = SparseTensor(
            host.numbers_out(indices), _values_tensor(values, dtype_name), shape
        )
        return sparse, None
    splits_dtype = dtypes.np_dtype(spec.row_splits_dtype)
    inner = [len(v) for s in steps for v in s]
    vals = [v for s in steps for v in s]
    values = np.concatenate(vals) if vals else _empty(dtype_name)
    rt = RaggedTensor.from_row_splits(
        _values_tensor(values, dtype_name),
        np.concatenate([[0], np.cumsum(inner)]).astype(splits_dtype),
    )
    if not batch:
        return rt, None
    outer = np.concatenate([[0], np.cumsum([len(s) for s in steps])])
    return RaggedTensor.from_row_splits(rt, outer.astype(splits_dtype)), None


def _parse_sequences(serialized, context_features, sequence_features, ctx, batch):
    protos = [_parse(SequenceExample, s, ctx, i) for i, s in enumerate(serialized)]
    context = {}
    if context_features:
        feats = [p.context.feature for p in protos]
        for key, spec in context_features.items():
            if isinstance(spec, RaggedFeature) and not batch:
                one = _ragged_one(key, spec, feats[0], ctx, 0)
                context[key] = (
                    one if isinstance(one, RaggedTensor)
                    else _tensor(one, spec.dtype.name)
                )  # fmt: skip
            else:
                context.update(_parse_features({key: spec}, feats, ctx, batch))
    sequences, lengths = {}, {}
    lists = [p.feature_lists.feature_list for p in protos]
    for key, spec in (sequence_features or {}).items():
        sequences[key], counts = _sequence(key, spec, lists, ctx, batch)
        if counts is not None:
            lengths[key] = host.numbers_out(counts)
    return context, sequences, lengths


def parse_sequence_example(serialized, context_features=None,
                           sequence_features=None, example_names=None,
                           name=None):  # fmt: skip
    """Parses a batch of serialized `SequenceExample` protos (TF's
    `tf.io.parse_sequence_example`): returns `(context, feature_lists,
    lengths)`; dense sequence features are zero-padded to the longest
    sequence, `lengths` gives each one's length."""
    del name
    _check_sequence_features(context_features, sequence_features)
    data = host.byte_strings(serialized, "serialized")
    if data.ndim != 1:
        raise ValueError(f"Input serialized must be a vector, got {data.shape}")
    ctx = _Context("ParseSequenceExampleV2", _names(example_names, data.size))
    return _parse_sequences(
        data.tolist(), context_features, sequence_features, ctx, batch=True
    )


def parse_single_sequence_example(serialized, context_features=None,
                                  sequence_features=None, example_name=None,
                                  name=None):  # fmt: skip
    """Parses one serialized `SequenceExample` (TF's
    `tf.io.parse_single_sequence_example`): returns `(context,
    feature_lists)`."""
    del name
    _check_sequence_features(context_features, sequence_features)
    data = host.byte_strings(serialized, "serialized")
    if data.ndim != 0:
        raise ValueError("Input serialized must be a scalar")
    ctx = _Context("ParseSequenceExampleV2", _names(example_name, 1))
    context, sequences, _ = _parse_sequences(
        [data[()]], context_features, sequence_features, ctx, batch=False
    )
    return context, sequences


_hooks.parse_example = parse_example  # for tf.data.experimental.parse_example_dataset
