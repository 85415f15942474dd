"""`RaggedTensor` (TF's `tf.RaggedTensor`) and `RaggedTensorSpec`: the class, its
factories (`from_row_splits`, `from_tensor`, ...), conversions (`to_tensor`,
`to_list`, `to_sparse`), indexing and element-wise operators. Layer L2
(`structured/`): imports `core`, `ops` and `structured.sparse`.

A RaggedTensor is `values` (a Tensor, or a RaggedTensor for more ragged
dimensions) cut into rows by `row_splits` (int64 or int32, `[nrows + 1]`),
both Tensors: under `jaxtape.function` their contents are traced and their
lengths (the number of rows and of values) are static, so a new length
retraces, as a new static shape does. Values pass through dispatched ops, so
gradients with respect to them record on a `GradientTape` as TF's do.

Results whose size depends on the row lengths (`to_tensor` without `shape`,
`rt[i]`, `to_sparse`) read the splits on the host: inside `jaxtape.function`
they need a concrete RaggedTensor (see `sparse.host_array`). The reductions,
`jaxtape.ragged` functions and `map_flat_values` live in `ragged_ops`.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import checks, context, dtypes, errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.core.tensor import Tensor, TensorShape
from jaxtape._src.core.type_spec import TypeSpec
from jaxtape._src.ops import array_ops, math_ops, nondiff
from jaxtape._src.ops.creation_ops import convert_to_tensor
from jaxtape._src.structured.sparse import SparseTensor, host_array

_INT64 = np.dtype(np.int64)
_SPLIT_DTYPES = (np.dtype(np.int32), _INT64)


class RaggedTensor:
    """Rows of different lengths: `values[row_splits[i]:row_splits[i + 1]]` is row `i`.

    Build one with a factory (`RaggedTensor.from_row_splits`,
    `jaxtape.ragged.constant`, ...), not the constructor.

    >>> rt = jaxtape.RaggedTensor.from_row_splits([1, 2, 3], [0, 2, 3, 3])
    >>> rt
    <jaxtape.RaggedTensor [[1, 2], [3], []]>
    >>> rt.shape
    TensorShape([3, None])

    Differences from TensorFlow:
      The number of rows and of values is static under `jaxtape.function`
      (a new one retraces). `numpy()`, `to_list()`, `rt[i]` and `to_tensor()`
      without `shape` need concrete row splits (not inside `jaxtape.function`).
      Dense ops take a RaggedTensor as TF's dispatch does for the element-wise
      ops, `where`, `reduce_*`, `concat`, `stack`, `shape`, `size` and `rank`
      (`ragged_dispatch`); other ops raise TF's conversion ValueError (use
      `jaxtape.ragged.map_flat_values` or `to_tensor()`).
    """

    __slots__ = ("_values", "_row_splits", "_uniform")

    def __init__(self, values, row_splits, internal=False, uniform=None):
        if not internal:
            raise ValueError(
                "RaggedTensor constructor is private; please use one of the "
                "factory methods instead (e.g., RaggedTensor.from_row_lengths())"
            )
        self._values = values
        self._row_splits = row_splits
        self._uniform = uniform  # a static row length (from_tensor), or None

    # -- factories ---------------------------------------------------------------
    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        """Row `i` is `values[row_splits[i]:row_splits[i + 1]]`.

        `row_splits` starts at 0, never decreases and ends at `len(values)`;
        with `validate`, a violation raises `InvalidArgumentError` (inside
        `jaxtape.function` too, after the call), as TF's.
        """
        del name
        vals = _values_arg(values)
        splits = _splits_arg(row_splits, "row_splits")
        if validate:
            _validate_splits(splits, _nvals(vals), "from_row_splits")
        return cls(vals, splits, internal=True)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        """Row `i` has `row_lengths[i]` values (they must add up to `len(values)`)."""
        del name
        vals = _values_arg(values)
        lengths = _splits_arg(row_lengths, "row_lengths")
        if validate:
            checks.run(_check_lengths, [lengths._value], (_nvals(vals),))
        return cls(vals, _lengths_to_splits(lengths), internal=True)

    @classmethod
    def from_value_rowids(
        cls, values, value_rowids, nrows=None, name=None, validate=True
    ):
        """Value `j` goes to row `value_rowids[j]` (sorted); `nrows` rows in all
        (default: the last row id + 1, read on the host)."""
        del name
        vals = _values_arg(values)
        rowids = _splits_arg(value_rowids, "value_rowids")
        # cycle: ragged -> ragged_ops -> ragged
        from jaxtape._src.structured.ragged_ops import segment_ids_to_row_splits

        if validate:
            checks.run(_check_rowids, [rowids._value], ())
        splits = segment_ids_to_row_splits(rowids, nrows, out_type=rowids.dtype)
        if validate:
            _validate_splits(splits, _nvals(vals), "from_value_rowids")
        return cls(vals, splits, internal=True)

    @classmethod
    def from_row_starts(cls, values, row_starts, name=None, validate=True):
        """Row `i` starts at `row_starts[i]` and ends where the next one starts."""
        del name
        vals = _values_arg(values)
        starts = _splits_arg(row_starts, "row_starts")
        end = np.asarray([_nvals(vals)], np.dtype(starts._value.dtype))
        splits = array_ops.concat([starts, end], 0)
        if validate:
            _validate_splits(splits, _nvals(vals), "from_row_starts")
        return cls(vals, splits, internal=True)

    @classmethod
    def from_row_limits(cls, values, row_limits, name=None, validate=True):
        """Row `i` ends at `row_limits[i]` and starts where the previous one ends."""
        del name
        vals = _values_arg(values)
        limits = _splits_arg(row_limits, "row_limits")
        zero = np.zeros([1], np.dtype(limits._value.dtype))
        splits = array_ops.concat([zero, limits], 0)
        if validate:
            _validate_splits(splits, _nvals(vals), "from_row_limits")
        return cls(vals, splits, internal=True)

    @classmethod
    def from_uniform_row_length(
        cls, values, uniform_row_length, nrows=None, validate=True, name=None
    ):
        """Rows of `uniform_row_length` values each (`nrows` of them)."""
        del name, validate
        vals = _values_arg(values)
        width = int(host_array(uniform_row_length, "from_uniform_row_length", "it"))
        n = _nvals(vals)
        if nrows is None:
            nrows = n // width if width else 0
        nrows = int(host_array(nrows, "from_uniform_row_length", "nrows"))
        if nrows * width != n:
            raise errors.invalid_argument(
                f"uniform_row_length ({width}) times nrows ({nrows}) must equal "
                f"the number of values ({n})."
            )
        splits = convert_to_tensor(np.arange(nrows + 1, dtype=_INT64) * width)
        return cls(vals, splits, internal=True, uniform=width)

    @classmethod
    def from_nested_row_splits(
        cls, flat_values, nested_row_splits, name=None, validate=True
    ):
        """`from_row_splits` applied once per splits, innermost (last) first."""
        del name
        _need_list(nested_row_splits, "nested_row_splits")
        out = flat_values
        for splits in reversed(nested_row_splits):
            out = cls.from_row_splits(out, splits, validate=validate)
        return out

    @classmethod
    def from_nested_row_lengths(
        cls, flat_values, nested_row_lengths, name=None, validate=True
    ):
        """`from_row_lengths` applied once per lengths, innermost (last) first."""
        del name
        _need_list(nested_row_lengths, "nested_row_lengths")
        out = flat_values
        for lengths in reversed(nested_row_lengths):
            out = cls.from_row_lengths(out, lengths, validate=validate)
        return out

    @classmethod
    def from_nested_value_rowids(
        cls, flat_values, nested_value_rowids, nested_nrows=None, name=None,
        validate=True,
    ):  # fmt: skip
        """`from_value_rowids` applied once per row ids, innermost (last) first."""
        del name
        _need_list(nested_value_rowids, "nested_value_rowids")
        nrows = nested_nrows or [None] * len(nested_value_rowids)
        if len(nrows) != len(nested_value_rowids):
            raise ValueError(
                "nested_nrows must have the same length as nested_value_rowids"
            )
        out = flat_values
        for ids, n in zip(reversed(nested_value_rowids), reversed(nrows)):
            out = cls.from_value_rowids(out, ids, n, validate=validate)
        return out

    @classmethod
    def from_tensor(
        cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None,
        row_splits_dtype=np.int64,
    ):  # fmt: skip
        """The rows of a dense `tensor`, cut to `lengths` or before trailing `padding`.

        With neither, every row keeps all its values (traceable). `lengths`
        and `padding` are read on the host and need `ragged_rank=1`.
        """
        del name
        # cycle: ragged -> ragged_ops -> ragged
        from jaxtape._src.structured import ragged_ops

        return ragged_ops.from_tensor(
            tensor, lengths, padding, ragged_rank, row_splits_dtype
        )

    @classmethod
    def from_sparse(cls, st_input, name=None, row_splits_dtype=np.int64):
        """The rows of a 2-D SparseTensor whose entries are packed to the left
        of each row (ragged-right), as TF's."""
        del name
        if not isinstance(st_input, SparseTensor):
            raise TypeError(f"st_input must be a SparseTensor. Received: {st_input!r}")
        if len(st_input._shape) != 2:
            raise ValueError(
                f"rank(st_input) must be 2. Received: rank {len(st_input._shape)}"
            )
        idx = host_array(st_input.indices, "from_sparse", "the indices")
        nrows = st_input._shape[0]
        rows, cols = idx[:, 0], idx[:, 1]
        counts = np.bincount(rows, minlength=nrows)[:nrows]
        splits = np.concatenate([[0], np.cumsum(counts)]).astype(row_splits_dtype)
        ok = np.all(rows[1:] >= rows[:-1]) and np.array_equal(
            cols, np.arange(len(rows)) - splits[rows]
        )
        if not ok:
            raise errors.invalid_argument(
                "SparseTensor is not right-ragged; its entries must fill each row "
                "from column 0 without gaps, in row-major order. Use "
                "`jaxtape.sparse.reorder` first, or build it with `from_value_rowids`."
            )
        return cls(st_input.values, convert_to_tensor(splits), internal=True)

    # -- structure -----------------------------------------------------------------
    @property
    def values(self):
        """The concatenated rows: a Tensor, or a RaggedTensor (ragged_rank > 1)."""
        return self._values

    @property
    def row_splits(self) -> Tensor:
        """Where each row starts in `values`, and where the last one ends."""
        return self._row_splits

    @property
    def flat_values(self) -> Tensor:
        """The innermost values, a Tensor."""
        v = self._values
        while isinstance(v, RaggedTensor):
            v = v._values
        return v

    @property
    def nested_row_splits(self) -> tuple:
        """The row splits of each ragged dimension, outermost first."""
        out = [self._row_splits]
        v = self._values
        while isinstance(v, RaggedTensor):
            out.append(v._row_splits)
            v = v._values
        return tuple(out)

    @property
    def ragged_rank(self) -> int:
        """The number of ragged dimensions."""
        return len(self.nested_row_splits)

    @property
    def dtype(self):
        """The dtype of the values."""
        return self.flat_values.dtype

    @property
    def shape(self) -> TensorShape:
        """`[nrows, None, ..., *inner]`: ragged dimensions are None."""
        dims: list = [_nrows(self)]
        rt: Any = self
        while isinstance(rt, RaggedTensor):
            dims.append(rt._uniform)
            rt = rt._values
        return TensorShape(dims + list(rt.shape[1:]))

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def uniform_row_length(self):
        """The length of every row when it is known to be uniform (`from_tensor`,
        `from_uniform_row_length`), else None."""
        if self._uniform is None:
            return None
        return convert_to_tensor(np.asarray(self._uniform, _out_type(None, self)))

    def nrows(self, out_type=None, name=None) -> Tensor:
        """The number of rows (a scalar of `row_splits`' dtype or `out_type`)."""
        del name
        dt = _out_type(out_type, self)
        return convert_to_tensor(np.asarray(_nrows(self), dt))

    def row_lengths(self, axis=1, name=None) -> Tensor | RaggedTensor:
        """The length of each row (`axis=1`), or of each deeper row (`axis>1`)."""
        del name
        if axis == 0:
            return self.nrows()
        if axis < 0:
            axis += self.ndim
        if axis == 1:
            s = self._row_splits
            return math_ops.subtract(s[1:], s[:-1])
        if axis > self.ragged_rank:
            raise ValueError(f"axis={axis} is not a ragged dimension")
        return self.with_values(self._values.row_lengths(axis - 1))

    def row_starts(self, name=None) -> Tensor:
        """Where each row starts in `values`."""
        del name
        return self._row_splits[:-1]

    def row_limits(self, name=None) -> Tensor:
        """Where each row ends in `values`."""
        del name
        return self._row_splits[1:]

    def value_rowids(self, name=None) -> Tensor:
        """The row of each value (`[len(values)]`, `row_splits`' dtype)."""
        del name
        return _value_rowids(self._row_splits, _nvals(self._values))

    def nested_row_lengths(self, name=None) -> tuple:
        del name
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt.row_lengths())
            rt = rt._values
        return tuple(out)

    def nested_value_rowids(self, name=None) -> tuple:
        del name
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt.value_rowids())
            rt = rt._values
        return tuple(out)

    def bounding_shape(self, axis=None, name=None, out_type=None) -> Tensor:
        """The shape of the smallest dense tensor that holds every row (host read)."""
        del name
        dims = [_nrows(self)]
        rt: Any = self
        while isinstance(rt, RaggedTensor):
            lengths = host_array(rt.row_lengths(), "bounding_shape", "row lengths")
            dims.append(int(lengths.max()) if lengths.size else 0)
            rt = rt._values
        dims += list(rt.shape[1:])
        out = np.asarray(dims, _out_type(out_type, self))
        return convert_to_tensor(out if axis is None else out[axis])

    def with_values(self, new_values) -> RaggedTensor:
        """The same row splits over `new_values` (the same number of rows)."""
        vals = _values_arg(new_values)
        if _nvals(vals) != _nvals(self._values):
            raise ValueError(
                f"new_values has {_nvals(vals)} rows; it needs {_nvals(self._values)}, "
                "as many as `values`."
            )
        return RaggedTensor(
            vals, self._row_splits, internal=True, uniform=self._uniform
        )

    def with_flat_values(self, new_values) -> RaggedTensor:
        """The same nested row splits over `new_values`."""
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype) -> RaggedTensor:
        """The same tensor with int32 or int64 row splits."""
        dt = _splits_dtype(dtype)
        vals = self._values
        if isinstance(vals, RaggedTensor):
            vals = vals.with_row_splits_dtype(dt)
        splits = math_ops.cast(self._row_splits, dt)
        return RaggedTensor(vals, splits, internal=True, uniform=self._uniform)

    def merge_dims(self, outer_axis, inner_axis) -> Any:
        """Merges dimensions `outer_axis..inner_axis` into one, as TF's."""
        rank = self.ndim
        outer = outer_axis + rank if outer_axis < 0 else outer_axis
        inner = inner_axis + rank if inner_axis < 0 else inner_axis
        if not 0 <= outer <= inner < rank:
            raise ValueError(
                f"Expected outer_axis ({outer_axis}) to be less than or equal to "
                f"inner_axis ({inner_axis}), both within rank {rank}."
            )
        if outer == inner:
            return self
        if outer == 0:
            if inner <= self.ragged_rank:
                vals: Any = self._values
                for _ in range(inner - 1):
                    vals = vals._values
                return vals
            flat = self.flat_values
            merged = array_ops.reshape(
                flat, [-1] + list(flat.shape[inner - self.ragged_rank + 1 :])
            )
            return merged
        if outer > 1:
            return self.with_values(self._values.merge_dims(outer - 1, inner - 1))
        splits, vals = self._row_splits, self._values
        for _ in range(inner - outer):
            if isinstance(vals, RaggedTensor):
                splits, vals = array_ops.gather(vals._row_splits, splits), vals._values
            else:  # a uniform dimension of the flat values
                d: Any = vals.shape[1]
                splits = math_ops.multiply(splits, np.asarray(d, splits._value.dtype))
                vals = array_ops.reshape(vals, [-1] + list(vals.shape[2:]))
        return RaggedTensor(vals, splits, internal=True)

    # -- conversions -------------------------------------------------------------
    def to_tensor(self, default_value=None, name=None, shape=None) -> Tensor:
        """A dense tensor: rows padded with `default_value` (0) to the longest row,
        or cut/padded to `shape` (dimensions of None: the longest row).

        Differentiable with respect to the values and `default_value`. Without a
        fully known `shape`, the row lengths are read on the host.
        """
        del name
        # cycle: ragged -> ragged_ops -> ragged
        from jaxtape._src.structured import ragged_ops

        return ragged_ops.to_tensor(self, default_value, shape)

    def to_sparse(self, name=None) -> SparseTensor:
        """A SparseTensor of the values at `[row, column, *inner index]` (host read)."""
        del name
        # cycle: ragged -> ragged_ops -> ragged
        from jaxtape._src.structured import ragged_ops

        return ragged_ops.to_sparse(self)

    def to_list(self) -> list:
        """The rows as a nested Python list (concrete values only)."""
        splits = _host_splits(self, "to_list").tolist()
        vals = self._values
        if isinstance(vals, RaggedTensor):
            inner = vals.to_list()
        else:
            inner = _eager_numpy(vals, "to_list").tolist()
        return [inner[a:b] for a, b in zip(splits[:-1], splits[1:])]

    def numpy(self) -> np.ndarray:
        """TF's NumPy form: an object array of row arrays, or a dense array when
        every row has the same length."""
        vals = self._values
        values = vals.numpy() if isinstance(vals, RaggedTensor) else _eager_numpy(vals)
        splits = _host_splits(self, "numpy()")
        rows = [values[splits[i] : splits[i + 1]] for i in range(len(splits) - 1)]
        if not rows:
            return np.zeros((0, 0) + values.shape[1:], dtype=values.dtype)
        if any(len(row) != len(rows[0]) for row in rows):
            out = np.empty(len(rows), dtype=object)
            out[:] = rows
            return out
        return np.array(rows)

    def __repr__(self) -> str:
        if _is_traced(self):
            return (
                f"jaxtape.RaggedTensor(values={self._values!r}, "
                f"row_splits={self._row_splits!r})"
            )
        with np.printoptions(formatter={"all": _formatter}):
            text = _formatter(self.numpy())
        return f"<jaxtape.RaggedTensor {text}>"

    __str__ = __repr__

    def __bool__(self):
        raise TypeError("RaggedTensor may not be used as a boolean.")

    def __iter__(self):  # (TF's RaggedTensor has no len(), but iterates)
        for i in range(_nrows(self)):
            yield self[i]

    def __getitem__(self, key):
        # cycle: ragged -> ragged_ops -> ragged
        from jaxtape._src.structured import ragged_ops

        return ragged_ops.getitem(self, key)

    def __hash__(self) -> int:
        return id(self)

    # -- operators (TF's ragged dispatch of the element-wise ops) -------------------
    def __add__(self, other):
        return elementwise(math_ops.add, self, other)

    def __radd__(self, other):
        return elementwise(math_ops.add, other, self)

    def __sub__(self, other):
        return elementwise(math_ops.subtract, self, other)

    def __rsub__(self, other):
        return elementwise(math_ops.subtract, other, self)

    def __mul__(self, other):
        return elementwise(math_ops.multiply, self, other)

    def __rmul__(self, other):
        return elementwise(math_ops.multiply, other, self)

    def __truediv__(self, other):
        return elementwise(math_ops.truediv, self, other)

    def __rtruediv__(self, other):
        return elementwise(math_ops.truediv, other, self)

    def __floordiv__(self, other):
        return elementwise(math_ops.floordiv, self, other)

    def __rfloordiv__(self, other):
        return elementwise(math_ops.floordiv, other, self)

    def __mod__(self, other):
        return elementwise(math_ops.floormod, self, other)

    def __rmod__(self, other):
        return elementwise(math_ops.floormod, other, self)

    def __pow__(self, other):
        return elementwise(math_ops.pow, self, other)

    def __rpow__(self, other):
        return elementwise(math_ops.pow, other, self)

    def __neg__(self):
        return self.with_flat_values(math_ops.negative(self.flat_values))

    def __abs__(self):
        return self.with_flat_values(math_ops.abs(self.flat_values))

    def __lt__(self, other):
        return elementwise(nondiff.less, self, other)

    def __le__(self, other):
        return elementwise(nondiff.less_equal, self, other)

    def __gt__(self, other):
        return elementwise(nondiff.greater, self, other)

    def __ge__(self, other):
        return elementwise(nondiff.greater_equal, self, other)

    def __eq__(self, other):  # type: ignore[override]
        return elementwise(nondiff.equal, self, other)

    def __ne__(self, other):  # type: ignore[override]
        return elementwise(nondiff.not_equal, self, other)

    def __and__(self, other):
        return elementwise(nondiff.logical_and, self, other)

    def __rand__(self, other):
        return elementwise(nondiff.logical_and, other, self)

    def __or__(self, other):
        return elementwise(nondiff.logical_or, self, other)

    def __ror__(self, other):
        return elementwise(nondiff.logical_or, other, self)

    def __invert__(self):
        return self.with_flat_values(nondiff.logical_not(self.flat_values))


def _rebuild(uniform, children) -> RaggedTensor:
    """From pytree children (any leaves JAX hands back: no checks)."""
    return RaggedTensor(*children, internal=True, uniform=uniform)


jax.tree_util.register_pytree_node(
    RaggedTensor, lambda rt: ((rt._values, rt._row_splits), rt._uniform), _rebuild
)


class RaggedTensorSpec(TypeSpec):
    """Describes a RaggedTensor: shape, dtype, ragged_rank and row_splits_dtype.

    Differences from TensorFlow: in a `jaxtape.function` `input_signature` it
    checks the RaggedTensors a call gets; their lengths stay static in the
    trace (a new number of rows or values retraces).
    """

    __slots__ = ("_shape", "_dtype", "_ragged_rank", "_row_splits_dtype")

    def __init__(
        self, shape=None, dtype=dtypes.float32, ragged_rank=None,
        row_splits_dtype=dtypes.int64, flat_values_spec=None,
    ):  # fmt: skip
        if flat_values_spec is not None:
            raise NotImplementedError(
                "RaggedTensorSpec: flat_values_spec is not supported by jaxtape."
            )
        if shape is None and ragged_rank is None:
            raise ValueError("Must specify ragged_rank or a shape with a known rank.")
        self._shape = TensorShape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        rank = len(self._shape)
        if ragged_rank is None:
            ragged_rank = rank - 1
        if shape is not None and not 0 <= ragged_rank < max(rank, 1):
            raise ValueError(
                f"ragged_rank must be in [0, {rank}). Received: {ragged_rank}"
            )
        self._ragged_rank = int(ragged_rank)
        self._row_splits_dtype = dtypes.as_dtype(_splits_dtype(row_splits_dtype))

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    ragged_rank = property(lambda self: self._ragged_rank)
    row_splits_dtype = property(lambda self: self._row_splits_dtype)

    @property
    def flat_values_spec(self):
        return None

    @property
    def value_type(self) -> type:
        return RaggedTensor

    def _serialize(self) -> tuple:
        return (self._shape, self._dtype, self._ragged_rank, self._row_splits_dtype)

    @classmethod
    def from_value(cls, value) -> RaggedTensorSpec:
        if isinstance(value, RaggedTensor):
            return cls(
                value.shape, value.dtype, value.ragged_rank, value.row_splits.dtype
            )
        t = convert_to_tensor(value)
        return cls(t.shape, t.dtype, 0)

    def is_compatible_with(self, spec_or_value) -> bool:
        other = spec_or_value
        if isinstance(other, RaggedTensor):
            other = RaggedTensorSpec.from_value(other)
        if not isinstance(other, RaggedTensorSpec):
            return False
        return (
            self._dtype == other._dtype
            and self._ragged_rank == other._ragged_rank
            and self._row_splits_dtype == other._row_splits_dtype
            and self._shape.is_compatible_with(other._shape)
        )

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, RaggedTensorSpec)
            and self._shape == other._shape
            and self._dtype == other._dtype
            and self._ragged_rank == other._ragged_rank
            and self._row_splits_dtype == other._row_splits_dtype
        )

    def __hash__(self) -> int:
        return hash(
            (tuple(self._shape), self._dtype, self._ragged_rank, self._row_splits_dtype)
        )

    def __repr__(self) -> str:
        return (
            f"RaggedTensorSpec({self._shape!r}, {self._dtype!r}, "
            f"{self._ragged_rank}, {self._row_splits_dtype!r})"
        )


# -- element-wise --------------------------------------------------------------------
def elementwise(fn, x, y):
    """`fn(x, y)` on flat values: TF's ragged dispatch of a binary element-wise op.

    Two RaggedTensors must have the same row splits (`InvalidArgumentError`
    otherwise, as TF's assertion); a scalar or a dense tensor that broadcasts
    against the inner (uniform) dimensions applies to every value; a dense
    `[nrows, 1, ...]` tensor applies one entry per row (ragged_rank 1).
    """
    rx, ry = isinstance(x, RaggedTensor), isinstance(y, RaggedTensor)
    if rx and ry:
        _check_same_splits(x, y)
        return x.with_flat_values(fn(x.flat_values, y.flat_values))
    rt = x if rx else y
    other = _operand(y if rx else x, rt)
    if rx:
        return rt.with_flat_values(fn(rt.flat_values, other))
    return rt.with_flat_values(fn(other, rt.flat_values))


_PY_SCALARS = (bool, int, float, complex)


def _operand(other, rt: RaggedTensor):
    """A non-ragged operand, converted as TF's ragged dispatch does: to the
    values' dtype where it can be (else as itself, so that the op raises TF's
    dtype mismatch), and broadcast to one entry per flat value."""
    if type(other) in _PY_SCALARS:
        try:
            convert_to_tensor(other, dtype=rt.dtype)
            return other  # (stays a weakly typed Python scalar)
        except (TypeError, ValueError):
            return convert_to_tensor(other)
    if not _var_or_tensor(other):
        try:
            other = convert_to_tensor(other, dtype=rt.dtype)
        except (TypeError, ValueError):
            other = convert_to_tensor(other)
    other = convert_to_tensor(other)
    return _broadcast_dense(rt, other)


def _var_or_tensor(x) -> bool:
    var = context.hooks.variable_type
    return type(x) is Tensor or (var is not None and isinstance(x, var))


def _broadcast_dense(rt: RaggedTensor, dense: Tensor) -> Tensor:
    """`dense` as an operand of the flat values: TF's broadcasting of a dense
    tensor against `[nrows, (ragged), *inner]`, where only a size-1 dimension
    broadcasts against the ragged one."""
    shape = tuple(int(d) for d in dense.shape)
    n_inner = len(rt.flat_values.shape) - 1
    k = len(shape)
    if k <= n_inner:
        return dense
    if k > rt.ndim or rt.ragged_rank != 1:
        raise NotImplementedError(
            f"jaxtape broadcasts a dense operand of shape {list(shape)} against a "
            f"RaggedTensor of shape {rt.shape} only for ragged_rank 1 and no more "
            "dimensions than the RaggedTensor. Convert with `to_tensor()` first."
        )
    at_ragged = shape[k - n_inner - 1]
    if at_ragged != 1:
        raise errors.invalid_argument(
            f"Unable to broadcast a dense operand of shape {list(shape)} against a "
            f"RaggedTensor of shape {rt.shape}: its dimension {at_ragged} meets the "
            "ragged dimension, where only 1 broadcasts in jaxtape."
        )
    if k == n_inner + 1:
        return array_ops.reshape(dense, shape[1:])
    nrows = _nrows(rt)
    if shape[0] not in (1, nrows):
        raise errors.invalid_argument(
            f"Incompatible shapes: [{nrows}, (ragged)] vs. {list(shape)}: the dense "
            "operand's first dimension must be 1 or the number of rows."
        )
    squeezed = array_ops.reshape(dense, (shape[0],) + shape[2:])
    if shape[0] == 1:
        return squeezed[0]
    return array_ops.gather(squeezed, rt.value_rowids())


def _check_same_splits(x: RaggedTensor, y: RaggedTensor) -> None:
    xs, ys = x.nested_row_splits, y.nested_row_splits
    if len(xs) != len(ys):
        raise ValueError(
            f"RaggedTensors of ragged_rank {len(xs)} and {len(ys)} cannot be "
            "combined element-wise: they need the same row partition."
        )
    for a, b in zip(xs, ys):
        if a is b:
            continue
        if a.shape != b.shape:
            raise errors.invalid_argument(
                f"Inputs must have identical ragged splits; got row_splits of "
                f"lengths {a.shape[0]} and {b.shape[0]}."
            )
        av, bv = to_value(a), to_value(b)
        if av.dtype != bv.dtype:
            raise ValueError(
                "RaggedTensors with different row_splits dtypes cannot be combined; "
                "use `with_row_splits_dtype`."
            )
        checks.run(_check_equal_splits, [av, bv], ())


def _check_equal_splits(xp, a, b):
    checks.require(
        xp,
        a != b,
        None,
        "Inputs must have identical ragged splits. Condition x == y did not hold: "
        "row_splits[{}] is {} and {}.",
        lambda xp, p: p,
        lambda xp, p: a[p],
        lambda xp, p: b[p],
    )


# -- ops on row splits -----------------------------------------------------------
@op("RaggedValueRowIds", inputs=("row_splits",), differentiable=False, jit=True)
def _value_rowids(row_splits, nvals):
    return rows_of(row_splits, nvals)


def rows_of(row_splits, nvals):
    """The row of each of `nvals` values (jnp): how many row ends lie at or
    before it. A scatter and a cumsum, cheaper to compile than a search."""
    dt = row_splits.dtype
    marks = jnp.zeros(nvals, dt).at[row_splits[1:]].add(1, mode="drop")
    return jnp.cumsum(marks, dtype=dt)


@op("RaggedRowLengthsToSplits", differentiable=False, jit=True)
def _lengths_to_splits(row_lengths):
    zero = jnp.zeros([1], row_lengths.dtype)
    return jnp.concatenate([zero, jnp.cumsum(row_lengths, dtype=row_lengths.dtype)])


def _validate_splits(splits: Tensor, nvals: int, who: str) -> None:
    if splits.shape[0] == 0:
        raise ValueError(f"{who}: row_splits must have at least one element.")
    checks.run(_check_splits, [splits._value], (nvals, who))


def _check_splits(xp, splits, nvals, who):
    text = f"Arguments to {who} do not form a valid RaggedTensor:"
    checks.require(
        xp,
        splits[:1] != 0,
        None,
        text + "zero. Condition x == y did not hold: row_splits[0] = {}, not 0.",
        lambda xp, p: splits[0],
    )
    if splits.shape[0] > 1:
        checks.require(
            xp,
            splits[1:] < splits[:-1],
            None,
            text + "monotonic. Condition x >= 0 did not hold: row_splits[{}] = {} "
            "is less than row_splits[{}] = {}.",
            lambda xp, p: p + 1,
            lambda xp, p: splits[p + 1],
            lambda xp, p: p,
            lambda xp, p: splits[p],
        )
    checks.require(
        xp,
        splits[-1:] != nvals,
        None,
        f"Arguments to {who} do not form a valid RaggedTensor. Condition x == y "
        "did not hold: row_splits[-1] = {} but there are " + f"{nvals} values.",
        lambda xp, p: splits[-1],
    )


def _check_lengths(xp, lengths, nvals):
    if lengths.shape[0]:
        checks.require(
            xp,
            lengths < 0,
            None,
            "Arguments to from_row_lengths do not form a valid RaggedTensor: "
            "row_lengths[{}] = {} is negative.",
            lambda xp, p: p,
            lambda xp, p: lengths[p],
        )
    checks.require(
        xp,
        xp.reshape(xp.sum(lengths) != nvals, [1]),
        None,
        "Arguments to from_row_lengths do not form a valid RaggedTensor. Condition "
        "x == y did not hold: the row lengths add up to {} " + f"but there are {nvals} "
        "values.",
        lambda xp, p: xp.sum(lengths),
    )


def _check_rowids(xp, rowids):
    if rowids.shape[0] > 1:
        checks.require(
            xp,
            rowids[1:] < rowids[:-1],
            None,
            "Arguments to from_value_rowids do not form a valid RaggedTensor:"
            "monotonic. value_rowids[{}] = {} is less than the one before it.",
            lambda xp, p: p + 1,
            lambda xp, p: rowids[p + 1],
        )
    if rowids.shape[0]:
        checks.require(
            xp,
            rowids[:1] < 0,
            None,
            "Arguments to from_value_rowids do not form a valid RaggedTensor: "
            "value_rowids[0] = {} is negative.",
            lambda xp, p: rowids[0],
        )


# -- helpers -------------------------------------------------------------------------
def _values_arg(values):
    if isinstance(values, RaggedTensor):
        return values
    v = convert_to_tensor(values)
    if not v.shape:
        raise ValueError("values must have rank >= 1; got a scalar.")
    return v


def _splits_dtype(dtype) -> np.dtype:
    dt = dtypes.np_dtype(dtype)
    if dt not in _SPLIT_DTYPES:
        raise ValueError(
            f"row_splits_dtype must be int32 or int64. Received: {dtype!r}"
        )
    return dt


def _splits_arg(x, what: str) -> Tensor:
    """`x` as an int64 (or given int32/int64) rank-1 Tensor, TF's rules."""
    if type(x) is Tensor or isinstance(x, (np.ndarray, jax.Array)):
        t = convert_to_tensor(x)
    elif _var_or_tensor(x):
        t = convert_to_tensor(x)
    else:
        try:
            t = convert_to_tensor(x, dtype=_INT64)
        except (TypeError, ValueError):
            t = convert_to_tensor(x)  # (refused below, as TF refuses it)
    if np.dtype(t._value.dtype) not in _SPLIT_DTYPES:
        raise ValueError(
            f"{what} must have dtype int32 or int64. Received: {t.dtype!r}. Cast with "
            "`jaxtape.cast`."
        )
    if len(t.shape) != 1:
        raise ValueError(f"Shape {list(t.shape)} must have rank 1 ({what}).")
    return t


def _need_list(x, what):
    if not isinstance(x, (list, tuple)):
        raise TypeError(f"{what} must be a list of Tensors. Received: {x!r}")


def _dim0(t) -> int:
    """The static length of a Tensor's first dimension."""
    d: Any = t.shape[0]
    return int(d)


def _nvals(values) -> int:
    if isinstance(values, RaggedTensor):
        return _nrows(values)
    return _dim0(values)


def _nrows(rt: RaggedTensor) -> int:
    return _dim0(rt._row_splits) - 1


def _out_type(out_type, rt: RaggedTensor) -> np.dtype:
    if out_type is None:
        return np.dtype(rt._row_splits._value.dtype)
    return dtypes.np_dtype(out_type)


def _is_traced(rt: RaggedTensor) -> bool:
    return any(isinstance(to_value(s), jax.core.Tracer) for s in rt.nested_row_splits)


def _host_splits(rt: RaggedTensor, who: str) -> np.ndarray:
    if _is_traced(rt):
        raise ValueError(f"RaggedTensor.{who} is only supported in eager mode.")
    return checks.host(to_value(rt._row_splits))


def _eager_numpy(t: Tensor, who: str = "numpy()") -> np.ndarray:
    v = to_value(t)
    if isinstance(v, jax.core.Tracer):
        raise ValueError(f"RaggedTensor.{who} is only supported in eager mode.")
    return checks.host(v)


def _formatter(x):
    """TF's: NumPy elements separated by commas; `[]` rows spelled out."""
    if isinstance(x, np.ndarray):
        if x.size != 0:
            return np.array2string(x, separator=", ")
        return repr(x.tolist())
    return str(x)


def is_ragged(x) -> bool:
    return isinstance(x, RaggedTensor)
