"""`jaxtape.lookup` (TF's `tf.lookup`): hash tables from keys to values.

Layer L2 (`structured/`): imports `core`, `ops` and the other `structured`
modules; its Variables are made through `context.hooks.variable_type` (the
state layer is a peer). A table holds its keys sorted, with the values in the
same order, and looks keys up by binary search (`searchsorted` and a match
test, the default value where absent). Integer keys look up in a pure jnp body
behind the dispatcher, so they work on traced keys inside `jaxtape.function`;
string keys (host values, static while tracing) look up with NumPy on the host.

Mutable tables with numeric keys and values keep them in Variables
(`table-keys`, `table-values` as TF's checkpoint keys, padded to a capacity
that doubles as the table grows, and `table-size`), so a
`jaxtape.train.Checkpoint` of an object holding the table saves and restores
its contents; `insert`/`remove` change them on the host (eagerly).

Tables are never shared by name (no TF resource manager): every table is
what TF calls anonymous, so `experimental_is_anonymous` changes nothing and
`name` is None, as on TF's eager tables.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import context, dtypes, errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.core.tensor import Tensor, TensorShape
from jaxtape._src.ops.creation_ops import convert_to_tensor
from jaxtape._src.structured.farmhash import fingerprint64
from jaxtape._src.structured.ragged import RaggedTensor
from jaxtape._src.structured.sparse import SparseTensor
from jaxtape._src.structured.strings import StringTensor

_OBJECT = np.dtype(object)
_INT64 = np.dtype(np.int64)


class TextFileIndex:
    """Which part of a line `TextFileInitializer` reads (TF's constants)."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


# -- the pure lookup -------------------------------------------------------------------
def _search(xp, sorted_keys, values, default, keys):
    """`values` where `keys` are in `sorted_keys`, else `default` (xp: np or jnp).

    `default` has the values' shape, or one per key (`keys.shape + that`)."""
    vshape = tuple(values.shape[1:])
    default = _per_key(xp, default, values.dtype, vshape)
    flat = xp.reshape(keys, (-1,))
    out_shape = tuple(keys.shape) + vshape
    if sorted_keys.shape[0] == 0:  # (static: nothing to find)
        return xp.broadcast_to(xp.asarray(default, values.dtype), out_shape)
    idx = xp.searchsorted(sorted_keys, flat)
    idx = xp.minimum(idx, sorted_keys.shape[0] - 1)
    found = sorted_keys[idx] == flat
    found = xp.reshape(found, found.shape + (1,) * len(vshape))
    got = xp.where(found, values[idx], default)
    return xp.reshape(got, out_shape)


def _per_key(xp, default, dtype, vshape: tuple):
    """`default` as an array that broadcasts against the flat `[n, *vshape]`."""
    default = xp.asarray(default, dtype)
    if default.ndim > len(vshape):  # (a default per key: flatten the keys)
        default = xp.reshape(default, (-1, *vshape))
    return default


@op("LookupTableFindV2", differentiable=False)
def _find(sorted_keys, values, default, keys):
    return _search(jnp, jnp.asarray(sorted_keys), jnp.asarray(values), default, keys)


def _bucket_host(keys: np.ndarray, num_buckets: int) -> np.ndarray:
    """TF's `string_to_hash_bucket_fast(as_string(keys))`: FarmHash Fingerprint64."""
    flat = [
        fingerprint64(k if isinstance(k, bytes) else str(int(k)).encode()) % num_buckets
        for k in keys.reshape(-1)
    ]
    return np.asarray(flat, _INT64).reshape(keys.shape)


def _int_buckets(keys, num_buckets: int):
    # Integer keys hashed by their decimal text: on the host, also when traced.
    spec = jax.ShapeDtypeStruct(keys.shape, _INT64)
    return jax.pure_callback(
        lambda k: _bucket_host(np.asarray(k), num_buckets), spec, keys
    )


def _is_traced(v) -> bool:
    return isinstance(v, jax.core.Tracer)


def _host(x, what: str) -> Any:
    """A concrete host value of `x` (NotImplementedError while traced)."""
    if isinstance(x, StringTensor):
        return x._v
    if isinstance(x, np.ndarray):
        return x
    v = to_value(x)
    if _is_traced(v):
        raise NotImplementedError(
            f"jaxtape.lookup: {what} needs concrete values, but it got a traced "
            "tensor inside jaxtape.function (jaxtape changes and reads string "
            "tables on the host). Call it outside the function."
        )
    return np.asarray(v)


# -- initializers ----------------------------------------------------------------------
class _TableInitializer:
    """Base of TF's table initializers: `key_dtype`, `value_dtype`, contents."""

    _key_dtype: Any
    _value_dtype: Any

    @property
    def key_dtype(self):
        """The dtype of the keys."""
        return self._key_dtype

    @property
    def value_dtype(self):
        """The dtype of the values."""
        return self._value_dtype

    def _contents(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def initialize(self, table) -> None:
        """Fills `table` with the keys and values (TF returns the init op)."""
        table._import(*self._contents())


class KeyValueTensorInitializer(_TableInitializer):
    """Initializes a table from a keys tensor and a values tensor (TF's).

    Args:
      keys: the keys (any shape; flattened), converted with `key_dtype`.
      values: the values, as many as keys, converted with `value_dtype`.
      key_dtype, value_dtype: the dtypes (default: inferred, TF's rules).
      name: Accepted for TensorFlow compatibility; ignored.

    Differences from TensorFlow: a conversion error lacks TF's `keys: ` prefix.
    """

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        del name
        self._keys = convert_to_tensor(keys, dtype=key_dtype)
        self._values = convert_to_tensor(values, dtype=value_dtype)
        self._key_dtype = self._keys.dtype
        self._value_dtype = self._values.dtype

    def _contents(self):
        keys = _host(self._keys, "KeyValueTensorInitializer")
        values = _host(self._values, "KeyValueTensorInitializer")
        if keys.size != values.size:
            raise errors.invalid_argument(
                f"Expected shape [{keys.size}] for value, got [{values.size}]",
                "LookupTableImportV2",
            )
        return keys.reshape(-1), values.reshape(-1)


def _check_index(index: int, dtype, what: str) -> None:
    if index < -2:
        raise ValueError(f"`{what}_index` should be >= -2, received: {index}.")
    if index == TextFileIndex.LINE_NUMBER and dtype != dtypes.int64:
        raise ValueError(
            f"`{what}_dtype` must be int64 if `{what}_index` is "
            f"{TextFileIndex.LINE_NUMBER}, received: {dtype!r}"
        )
    if index == TextFileIndex.WHOLE_LINE and not (
        dtype.is_integer or dtype == dtypes.string
    ):
        raise ValueError(
            f"`{what}_dtype` should be either integer or string for `{what}_index` "
            f"{TextFileIndex.WHOLE_LINE}, received: {dtype!r}"
        )


class TextFileInitializer(_TableInitializer):
    """Initializes a table from a text file, one entry per line (TF's).

    `key_index`/`value_index` choose a column (split on `delimiter`),
    `TextFileIndex.WHOLE_LINE` or `TextFileIndex.LINE_NUMBER` (plus
    `value_index_offset` for values); `vocab_size` reads only that many lines
    and requires the file to have at least as many.

    Differences from TensorFlow: the file is read when a table is made with
    it (TF does too, eagerly); TF's shared-resource name clashes between
    tables of the same file with other dtypes do not happen here.
    """

    def __init__(
        self,
        filename,
        key_dtype,
        key_index,
        value_dtype,
        value_index,
        vocab_size=None,
        delimiter="\t",
        name=None,
        value_index_offset=0,
    ):
        del name
        if not isinstance(filename, Tensor) and not filename:
            raise ValueError(
                "`filename` argument required for tf.lookup.TextFileInitializer"
            )
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)
        _check_index(key_index, self._key_dtype, "key")
        _check_index(value_index, self._value_dtype, "value")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` should be > 0, received: {vocab_size}")
        self._filename = filename
        self._key_index = key_index
        self._value_index = value_index
        self._vocab_size = vocab_size
        self._delimiter = delimiter
        self._offset = value_index_offset

    def _contents(self):
        name = self._filename
        if isinstance(name, Tensor):
            name = _host(name, "TextFileInitializer")
            name = name.item() if isinstance(name, np.ndarray) else name
        path = name.decode() if isinstance(name, bytes) else str(name)
        try:
            with open(path, "rb") as f:
                lines = f.read().split(b"\n")
        except FileNotFoundError:
            raise errors.NotFoundError(
                None,
                "InitializeTableFromTextFileV2",
                f"{path}; No such file or directory [Op:InitializeTableFromTextFileV2]",
            ) from None
        if lines and lines[-1] == b"":
            lines.pop()
        lines = [ln[:-1] if ln.endswith(b"\r") else ln for ln in lines]
        n = self._vocab_size
        if n is not None:
            if len(lines) < n:
                raise errors.invalid_argument(
                    f"Invalid vocab_size in {path}: expected {n} but got {len(lines)}",
                    "InitializeTableFromTextFileV2",
                )
            lines = lines[:n]
        sep = self._delimiter.encode() if self._delimiter else None
        keys = self._column(lines, self._key_index, self._key_dtype, sep, path, 0)
        values = self._column(
            lines, self._value_index, self._value_dtype, sep, path, self._offset
        )
        return keys, values

    @staticmethod
    def _column(lines, index, dtype, sep, path, offset) -> np.ndarray:
        if index == TextFileIndex.LINE_NUMBER:
            return np.arange(offset, offset + len(lines), dtype=_INT64)
        out = []
        for i, line in enumerate(lines):
            if index == TextFileIndex.WHOLE_LINE:
                field = line
            else:
                cols = line.split(sep)
                if len(cols) <= index:
                    raise errors.invalid_argument(
                        f"Invalid number of columns in {path} line {i} "
                        f"({line.decode(errors='replace')}) : expected at least "
                        f"{index + 1} got {len(cols)}",
                        "InitializeTableFromTextFileV2",
                    )
                field = cols[index]
            out.append(field if dtype == dtypes.string else _parse(field, dtype, path))
        if dtype == dtypes.string:
            arr = np.empty(len(out), _OBJECT)
            arr[:] = out
            return arr
        return np.asarray(out, dtypes.np_dtype(dtype))


def _parse(field: bytes, dtype, path: str):
    try:
        return int(field) if dtype.is_integer else float(field)
    except ValueError:
        raise errors.invalid_argument(
            f"Field {field.decode(errors='replace')} in line of {path} is not a "
            f"valid {dtype.name}.",
            "InitializeTableFromTextFileV2",
        ) from None


# -- tables ----------------------------------------------------------------------------
def _sorted_unique(keys: np.ndarray, values: np.ndarray, op_name: str, strict: bool):
    """Keys sorted with their values; a later duplicate key wins (or, with
    `strict`, a duplicate with another value is TF's FailedPreconditionError)."""
    if keys.size == 0:
        return keys, values
    rev = keys[::-1]
    uniq, first = np.unique(rev, return_index=True)
    picked = values[::-1][first]
    if strict and uniq.size != keys.size:
        _check_duplicates(keys, values, op_name)
    return uniq, picked


def _check_duplicates(keys, values, op_name):
    seen: dict = {}
    for k, v in zip(keys.tolist(), values.tolist()):
        if k in seen and seen[k] != v:
            raise errors.FailedPreconditionError(
                None,
                op_name,
                f"HashTable has different value for same key. Key {_text(k)} has "
                f"{_text(seen[k])} and trying to add value {_text(v)} "
                f"[Op:{op_name}]",
            )
        seen.setdefault(k, v)


def _text(v) -> str:
    return v.decode(errors="replace") if isinstance(v, bytes) else str(v)


def _wrap(v: np.ndarray, dtype) -> Tensor:
    return convert_to_tensor(v, dtype=dtype)


class _Table:
    """Shared lookup machinery: sorted keys, aligned values, a default."""

    _key_dtype: Any
    _value_dtype: Any
    _default: Tensor
    _name: str | None

    @property
    def key_dtype(self):
        """The table's key dtype."""
        return self._key_dtype

    @property
    def value_dtype(self):
        """The table's value dtype."""
        return self._value_dtype

    @property
    def name(self):
        """None: TF's eager tables have no name."""
        return self._name

    @property
    def default_value(self):
        """The value returned for absent keys."""
        return self._default

    @property
    def resource_handle(self):
        raise NotImplementedError(
            "jaxtape.lookup tables have no resource handle (no TF runtime); use "
            "the table's methods."
        )

    def _arrays(self) -> tuple[Any, Any]:
        """(sorted keys, values): arrays, or Variables for mutable tables."""
        raise NotImplementedError

    def _host_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        k, v = self._arrays()
        return _host(k, "reading the table"), _host(v, "reading the table")

    def _keys_arg(self, keys):
        """`keys` converted to the key dtype; a Tensor of another dtype is TF's
        TypeError."""
        if isinstance(keys, Tensor) and keys.dtype != self._key_dtype:
            raise TypeError(
                f"Dtype of argument `keys` must be {self._key_dtype!r}, received: "
                f"{keys.dtype!r}"
            )
        return convert_to_tensor(keys, dtype=self._key_dtype)

    def _lookup_dense(self, keys: Tensor, default) -> Tensor:
        string_keys = self._key_dtype == dtypes.string
        if string_keys or self._value_dtype == dtypes.string:
            sk, vals = self._host_arrays()
            q = _host(keys, "lookup with string keys or values")
            default = _host(default, "lookup")
            if not string_keys:
                q = q.astype(sk.dtype)
            out = _search(np, sk, vals, default, q)
            if self._value_dtype == dtypes.string:
                out = np.asarray(out, _OBJECT)
            return _wrap(out, self._value_dtype)
        return self._find_numeric(keys, default)

    def _find_numeric(self, keys: Tensor, default) -> Tensor:
        sorted_keys, values = self._arrays()
        return _find(sorted_keys, values, default, keys)

    def lookup(self, keys, name=None):
        """Looks `keys` up: a value per key, `default_value` where absent.

        `keys` may be a Tensor, `SparseTensor` or `RaggedTensor` (the result
        has the same structure); their dtype must be the table's key dtype.
        """
        del name
        if isinstance(keys, SparseTensor):
            return keys.with_values(self.lookup(keys.values))
        if isinstance(keys, RaggedTensor):
            return keys.with_flat_values(self.lookup(keys.flat_values))
        return self._lookup_dense(self._keys_arg(keys), self._default)

    def __getitem__(self, keys):
        return self.lookup(keys)

    def size(self, name=None):
        """The number of entries, an int64 scalar."""
        del name
        return convert_to_tensor(np.int64(self._count()))

    def _count(self) -> int:
        return int(self._arrays()[0].shape[0])

    def export(self, name=None):
        """`(keys, values)` of every entry (sorted by key here; TF: hash order)."""
        del name
        keys, values = self._host_arrays()
        return _wrap(keys, self._key_dtype), _wrap(values, self._value_dtype)


def _default_arg(default_value, dtype) -> Tensor:
    return convert_to_tensor(default_value, dtype=dtype)


class StaticHashTable(_Table):
    """An immutable table filled once by an initializer (TF's).

    >>> init = jaxtape.lookup.KeyValueTensorInitializer([1, 2], [10., 20.])
    >>> table = jaxtape.lookup.StaticHashTable(init, default_value=-1.)
    >>> table.lookup(jaxtape.constant([2, 5])).numpy()
    array([20., -1.], dtype=float32)

    Differences from TensorFlow: `export` returns the entries sorted by key;
    `resource_handle` raises NotImplementedError.
    """

    def __init__(
        self, initializer, default_value, name=None, experimental_is_anonymous=False
    ):
        del experimental_is_anonymous
        del name  # (TF's eager tables have no name: `name` is None)
        self._name = None
        self._key_dtype = initializer.key_dtype
        self._value_dtype = initializer.value_dtype
        self._default = _default_arg(default_value, self._value_dtype)
        if len(self._default.shape) != 0:
            raise ValueError(
                f"Shapes {tuple(self._default.shape)} and () are not compatible"
            )
        self._keys: Any = None
        self._values: Any = None
        initializer.initialize(self)

    def _import(self, keys: np.ndarray, values: np.ndarray) -> None:
        if self._keys is not None:
            return  # (TF: a second initialization is a no-op)
        keys, values = _sorted_unique(keys, values, "LookupTableImportV2", True)
        if self._key_dtype == dtypes.string:
            self._keys = keys
        else:
            self._keys = to_value(keys.astype(dtypes.np_dtype(self._key_dtype)))
        if self._value_dtype == dtypes.string:
            self._values = values
        else:
            self._values = to_value(values.astype(dtypes.np_dtype(self._value_dtype)))

    def _arrays(self):
        return self._keys, self._values


class StaticVocabularyTable:
    """Maps keys to ids, out-of-vocabulary keys to hash buckets (TF's).

    A key in the table gets its value; any other key gets
    `Fingerprint64(as_string(key)) % num_oov_buckets + table size`, TF's hash
    (`jaxtape.strings.to_hash_bucket_fast` of the key's text), so ids match
    TF's. Integer keys work on traced keys inside `jaxtape.function` (the
    hash runs on the host through a callback).

    Differences from TensorFlow: `resource_handle` raises NotImplementedError.
    """

    def __init__(
        self,
        initializer,
        num_oov_buckets,
        lookup_key_dtype=None,
        name=None,
        experimental_is_anonymous=False,
    ):
        del experimental_is_anonymous
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        self._table = None
        if initializer is not None:
            if lookup_key_dtype is None:
                lookup_key_dtype = initializer.key_dtype
            lookup_key_dtype = dtypes.as_dtype(lookup_key_dtype)
            if initializer.key_dtype not in (dtypes.int64, dtypes.string):
                raise TypeError(
                    "Invalid `key_dtype`, expected one of (tf.int64, tf.string), "
                    f"but got {initializer.key_dtype!r}."
                )
            if initializer.key_dtype.is_integer != lookup_key_dtype.is_integer:
                raise TypeError(
                    "Invalid `key_dtype`, expected "
                    f"{'integer' if lookup_key_dtype.is_integer else 'non-integer'} "
                    f"but got {initializer.key_dtype!r}."
                )
            if initializer.value_dtype != dtypes.int64:
                raise TypeError(
                    f"Invalid `value_dtype`, expected {dtypes.int64!r} but got "
                    f"{initializer.value_dtype!r}."
                )
            self._table = StaticHashTable(initializer, -1)
        else:
            lookup_key_dtype = dtypes.as_dtype(lookup_key_dtype or dtypes.string)
        if not lookup_key_dtype.is_integer and lookup_key_dtype != dtypes.string:
            raise TypeError(
                "Invalid `key_dtype`, expected integer or string, got "
                f"{lookup_key_dtype!r}"
            )
        self._num_oov_buckets = int(num_oov_buckets)
        self._key_dtype = lookup_key_dtype
        self._name = name.split("/")[-1] if name else None

    key_dtype = property(lambda self: self._key_dtype, doc="The lookup key dtype.")
    value_dtype = property(lambda self: dtypes.int64, doc="int64.")
    name = property(lambda self: self._name, doc="The table's name.")
    resource_handle = _Table.resource_handle

    def size(self, name=None):
        """Table entries plus `num_oov_buckets`, an int64 scalar."""
        del name
        n = 0 if self._table is None else self._table._count()
        return convert_to_tensor(np.int64(n + self._num_oov_buckets))

    def lookup(self, keys, name=None):
        """The id of each key (a Tensor, SparseTensor or RaggedTensor of them)."""
        del name
        if isinstance(keys, SparseTensor):
            return keys.with_values(self.lookup(keys.values))
        if isinstance(keys, RaggedTensor):
            return keys.with_flat_values(self.lookup(keys.flat_values))
        if not isinstance(keys, Tensor):
            keys = convert_to_tensor(keys, dtype=self._key_dtype)
        if keys.dtype != self._key_dtype:
            raise TypeError(
                f"Dtype of argument `keys` must be {self._key_dtype!r}, received: "
                f"{keys.dtype!r}"
            )
        n_vocab = 0 if self._table is None else self._table._count()
        if self._key_dtype == dtypes.string:
            q = _host(keys, "StaticVocabularyTable.lookup")
            ids = _bucket_host(q, self._num_oov_buckets) + n_vocab
            if self._table is not None:
                found = _search(np, *self._table._host_arrays(), -1, q)
                ids = np.where(found != -1, found, ids)
            return convert_to_tensor(ids)
        return _vocab_ids(*self._int_arrays(), keys, self._num_oov_buckets, n_vocab)

    def _int_arrays(self):
        if self._table is None:
            return np.zeros([0], _INT64), np.zeros([0], _INT64)
        return self._table._arrays()


@op(
    "StaticVocabularyLookup",
    inputs=("sorted_keys", "values", "keys"),
    differentiable=False,
)
def _vocab_ids(sorted_keys, values, keys, num_buckets, n_vocab):
    keys = keys.astype(_INT64)  # (TF casts integer keys to the table's int64)
    buckets = _int_buckets(keys, num_buckets) + n_vocab
    ids = _search(jnp, jnp.asarray(sorted_keys), jnp.asarray(values), -1, keys)
    return jnp.where(ids != -1, ids, buckets)


# -- mutable tables --------------------------------------------------------------------
@op("LookupTableFindV2", differentiable=False)
def _find_padded(sorted_keys, values, count, default, keys):
    """`_find` on capacity-padded arrays: only the first `count` entries hold."""
    vshape = tuple(values.shape[1:])
    flat = jnp.reshape(keys, (-1,))
    idx = jnp.minimum(jnp.searchsorted(sorted_keys, flat), sorted_keys.shape[0] - 1)
    found = (idx < count.astype(idx.dtype)) & (sorted_keys[idx] == flat)
    found = jnp.reshape(found, found.shape + (1,) * len(vshape))
    got = jnp.where(found, values[idx], _per_key(jnp, default, values.dtype, vshape))
    return jnp.reshape(got, tuple(keys.shape) + vshape)


def _padding_key(np_dtype: np.dtype):
    """Sorts after every key: the dtype's largest value (+inf for floats)."""
    if np_dtype.kind == "f":
        return np.inf
    return np.iinfo(np_dtype).max if np_dtype.kind in "iu" else True


class _MutableTable(_Table):
    """Sorted keys and their values: numeric ones in Variables padded to a
    capacity that doubles as the table grows (so compiled lookups see fixed
    shapes between growths), with the entry count in a third Variable; tables
    with string keys or values keep exact host arrays."""

    _keys: Any
    _values: Any
    _n: Any

    def _setup(self, key_dtype, value_dtype, default_value, checkpoint, name, cap):
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)
        self._default = _default_arg(default_value, self._value_dtype)
        self._value_shape = tuple(self._default.shape)
        del name  # (TF's eager tables have no name: `name` is None)
        self._name = None
        self._checkpoint = checkpoint
        self._numeric = dtypes.string not in (self._key_dtype, self._value_dtype)
        self._kdt = dtypes.np_dtype(self._key_dtype)
        self._vdt = dtypes.np_dtype(self._value_dtype)
        keys = np.zeros([0], self._kdt)
        values = np.zeros((0, *self._value_shape), self._vdt)
        if not self._numeric:
            self._keys, self._values = keys, values
            return
        make = context.hooks.variable_type
        if make is None:  # (the state layer installs it at import)
            raise RuntimeError("jaxtape.lookup: Variables are unavailable")
        k, v = self._padded(keys, values, cap)
        var = {"trainable": False, "validate_shape": False}
        self._keys = make(k, name="table-keys", shape=TensorShape([None]), **var)
        shape = TensorShape([None, *self._value_shape])
        self._values = make(v, name="table-values", shape=shape, **var)
        self._n = make(np.int64(0), name="table-size", **var)

    def _padded(self, keys: np.ndarray, values: np.ndarray, cap: int):
        k = np.full([cap], _padding_key(self._kdt), self._kdt)
        v = np.zeros((cap, *self._value_shape), self._vdt)
        k[: keys.size], v[: keys.size] = keys, values
        return k, v

    def _capacity_for(self, n: int) -> int:
        cap = int(to_value(self._keys).shape[0])
        while n > cap:
            cap *= 2
        return cap

    def _trackable_children(self) -> dict:
        if not (self._numeric and self._checkpoint):
            return {}
        return {
            "table-keys": self._keys,
            "table-values": self._values,
            "table-size": self._n,
        }

    def _arrays(self):
        return self._keys, self._values

    def _host_arrays(self):
        if not self._numeric:
            if errors.tracing():  # (contents read now would be baked in)
                raise NotImplementedError(
                    "jaxtape.lookup: a mutable table with string keys or values "
                    "lives on the host, so jaxtape.function cannot read it at run "
                    "time. Use it outside the function, or numeric keys and values."
                )
            return self._keys, self._values
        n = int(_host(self._n, "reading the table"))
        keys = _host(self._keys, "reading the table")[:n]
        return keys, _host(self._values, "reading the table")[:n]

    def _count(self) -> int:
        return int(self._host_arrays()[0].shape[0])

    def size(self, name=None):
        """The number of entries, an int64 scalar (also inside jaxtape.function)."""
        del name
        if self._numeric:
            return convert_to_tensor(self._n)
        return convert_to_tensor(np.int64(self._count()))

    def _find_numeric(self, keys, default):
        return _find_padded(self._keys, self._values, self._n, default, keys)

    def _store(self, keys: np.ndarray, values: np.ndarray) -> None:
        if not self._numeric:
            self._keys, self._values = keys, values
            return
        k, v = self._padded(keys, values, self._capacity_for(keys.size))
        self._keys.assign(k)
        self._values.assign(v)
        self._n.assign(np.int64(keys.size))

    def _check_keys(self, keys: np.ndarray, op_name: str) -> None:
        """DenseHashTable refuses its empty and deleted keys."""

    def insert(self, keys, values, name=None):
        """Inserts (or replaces) `keys` with `values` (shape keys + value shape)."""
        del name
        k = _host(self._keys_arg(keys), "insert")
        v = _host(convert_to_tensor(values, dtype=self._value_dtype), "insert")
        want = tuple(k.shape) + self._value_shape
        if tuple(v.shape) != want:
            raise errors.invalid_argument(
                f"Expected shape {list(want)} for value, got {list(v.shape)}",
                "LookupTableInsertV2",
            )
        self._check_keys(k, "LookupTableInsertV2")
        old_k, old_v = self._host_arrays()
        new_k = np.concatenate([old_k, k.reshape(-1)])
        new_v = np.concatenate([old_v, v.reshape((-1, *self._value_shape))])
        self._store(*_sorted_unique(new_k, new_v, "LookupTableInsertV2", False))

    def remove(self, keys, name=None):
        """Removes `keys` (absent keys are ignored)."""
        del name
        k = _host(self._keys_arg(keys), "remove").reshape(-1)
        self._check_keys(k, "LookupTableRemoveV2")
        old_k, old_v = self._host_arrays()
        keep = ~np.isin(old_k, k)
        self._store(old_k[keep], old_v[keep])

    def _keys_arg(self, keys):
        # (TF converts: a Tensor of another dtype is a ValueError here)
        k = convert_to_tensor(keys, dtype=self._key_dtype)
        if not _is_traced(k._value):
            self._check_keys(np.asarray(k._value), "LookupTableFindV2")
        return k


class MutableHashTable(_MutableTable):
    """A table that `insert`/`remove` change (TF's `MutableHashTable`).

    Values may be vectors: their shape is `default_value`'s. With numeric
    keys and values the contents live in Variables, so a
    `jaxtape.train.Checkpoint` of an object holding the table saves them,
    and `lookup`/`size` work on traced keys inside `jaxtape.function`.

    >>> t = jaxtape.lookup.experimental.MutableHashTable(
    ...     jaxtape.int64, jaxtape.float32, default_value=-1.)
    >>> t.insert(jaxtape.constant([3, 1], jaxtape.int64), jaxtape.constant([3., 1.]))
    >>> t.lookup(jaxtape.constant([1, 2], jaxtape.int64)).numpy()
    array([ 1., -1.], dtype=float32)

    Differences from TensorFlow: `export` is sorted by key; tables with
    string keys or values are host state that checkpoints do not save;
    `insert`/`remove`/`export` run eagerly (NotImplementedError inside
    `jaxtape.function`).
    """

    def __init__(
        self,
        key_dtype,
        value_dtype,
        default_value,
        name="MutableHashTable",
        checkpoint=True,
        experimental_is_anonymous=False,
    ):
        del experimental_is_anonymous
        self._setup(key_dtype, value_dtype, default_value, checkpoint, name, 1024)

    def lookup(self, keys, dynamic_default_values=None, name=None):  # pyright: ignore[reportIncompatibleMethodOverride]
        """Looks `keys` up; absent keys get the default value.

        `dynamic_default_values` (optional) replaces `default_value` for this
        call: of the value shape, or one per key (`keys.shape + value shape`).
        """
        if dynamic_default_values is None:
            return super().lookup(keys, name=name)
        if isinstance(keys, SparseTensor | RaggedTensor):
            raise NotImplementedError(
                "jaxtape.lookup: `dynamic_default_values` with SparseTensor or "
                "RaggedTensor keys is not supported; look up `keys.values`."
            )
        k = self._keys_arg(keys)
        default = convert_to_tensor(dynamic_default_values, dtype=self._value_dtype)
        vshape = list(self._value_shape)
        if list(default.shape) not in (vshape, list(k.shape) + vshape):
            raise errors.invalid_argument(
                f"Expected shape {vshape} or {list(k.shape) + vshape} for default "
                f"value, got {list(default.shape)}",
                "LookupTableFindV2",
            )
        return self._lookup_dense(k, default)


class DenseHashTable(_MutableTable):
    """TF's `DenseHashTable`: a mutable table with reserved empty/deleted keys.

    `empty_key` and `deleted_key` must differ and may not be inserted, looked
    up or removed (TF's InvalidArgumentError); `initial_num_buckets` (default
    2**17, as TF) must be a power of 2, at least 4; it is the capacity, which
    doubles as TF's does when the table is 80% full.

    Differences from TensorFlow: scalar keys only; `export` returns the stored
    entries sorted by key (TF returns its whole bucket array).
    """

    def __init__(
        self,
        key_dtype,
        value_dtype,
        default_value,
        empty_key,
        deleted_key,
        initial_num_buckets=None,
        name="MutableDenseHashTable",
        checkpoint=True,
        experimental_is_anonymous=False,
    ):
        del experimental_is_anonymous
        dt = dtypes.as_dtype(key_dtype)
        empty = _host(convert_to_tensor(empty_key, dtype=dt), "empty_key")
        deleted = _host(convert_to_tensor(deleted_key, dtype=dt), "deleted_key")
        if empty.ndim or deleted.ndim:
            raise NotImplementedError(
                "jaxtape.lookup.experimental.DenseHashTable: only scalar keys "
                "(`empty_key`/`deleted_key` of shape ()) are supported."
            )
        if empty == deleted:
            raise errors.invalid_argument(
                "Empty and deleted keys cannot be equal", "MutableDenseHashTableV2"
            )
        n = 2**17 if initial_num_buckets is None else int(initial_num_buckets)
        if n < 4 or n & (n - 1):
            raise errors.invalid_argument(
                f"Number of buckets must be at least 4 and a power of 2, got: {n}",
                "MutableDenseHashTableV2",
            )
        self._empty, self._deleted = empty.item(), deleted.item()
        self._setup(key_dtype, value_dtype, default_value, checkpoint, name, n)

    def _capacity_for(self, n: int) -> int:
        cap = int(to_value(self._keys).shape[0])
        while n > 0.8 * cap:  # TF's max load factor
            cap *= 2
        return cap

    def _check_keys(self, keys: np.ndarray, op_name: str) -> None:
        for key, what in ((self._empty, "empty_key"), (self._deleted, "deleted_key")):
            if np.any(keys == key):
                raise errors.invalid_argument(
                    f"Using the {what} as a table key is not allowed", op_name
                )

    insert_or_assign = _MutableTable.insert
    erase = _MutableTable.remove
