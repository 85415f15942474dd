"""`TensorArray`, TF's `tf.TensorArray`: a Python list eagerly, a buffer in loops. L1.

Eagerly it is TF's eager TensorArray: a Python list of Tensors written in place
(`write` returns the array), `clear_after_read` honoured, an unwritten element
read as zeros. Inside `jaxtape.function` it follows TF's graph TensorArray:
value semantics (`write` returns a new TensorArray and leaves the old one as it
was), reads unlimited. Tapes see ordinary ops (`stack` of the written Tensors,
or a buffer update per write), so gradients flow to the written values.

As a carry of a compiled loop (`while_loop`, `for_range`, `map_fn`...) or when
written at a traced index, it is a buffer: one Tensor of shape
`(capacity, *element_shape)` and its size, a JAX pytree with these two
children, so that a write is `buffer.at[i].set(value)`. JAX needs static
shapes: the capacity is `size`, or for `dynamic_size=True` the elements
written so far plus the loop's static trip count (`maximum_iterations`, a
static range); the element shape is `element_shape` or that of the first write.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.core import checks, context, dtypes, errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.core.tensor import Tensor, TensorShape

_state = context.state


# -- buffer ops (recorded on tapes like any op) ------------------------------------
def _check_index(what):
    def check(xp, buffer, index, *rest):
        if np.dtype(index.dtype).kind not in "iu":
            return
        idx = checks.host(index) if xp is np else index
        n = buffer.shape[0]
        checks.require(
            xp,
            (idx < 0) | (idx >= n),
            what,
            "TensorArray index {} is not in [0, " + str(n) + "): a TensorArray "
            "in a compiled loop holds a fixed number of elements (its size, or for "
            "dynamic_size=True the elements written before the loop plus the "
            "loop's static trip count).",
            lambda xp, p: xp.ravel(idx)[p],
        )

    return check


@op(
    "TensorListSetItem",
    inputs=("buffer", "index", "item"),
    check=_check_index("TensorListSetItem"),
)
def _set_item(buffer, index, item):
    # A dynamic-update-slice (XLA updates a loop's buffer in place; a scatter
    # made the gradient of an RNN loop ~2x slower). In range after the check.
    return lax.dynamic_update_index_in_dim(buffer, item, index, 0)


@op(
    "TensorListGetItem",
    inputs=("buffer", "index"),
    check=_check_index("TensorListGetItem"),
)
def _get_item(buffer, index):
    return lax.dynamic_index_in_dim(buffer, index, 0, keepdims=False)


@op(
    "TensorListScatter",
    inputs=("buffer", "index", "items"),
    check=_check_index("TensorListScatter"),
)
def _scatter_items(buffer, index, items):
    return buffer.at[index].set(items, mode="drop")


@op("TensorListStack", inputs=("buffer",))
def _prefix(buffer, n):
    return buffer[:n]


@op("TensorListConcat")
def _concat_items(buffer):
    return buffer.reshape((-1,) + buffer.shape[2:])


def _is_traced(v) -> bool:
    return isinstance(v._v if type(v) is Tensor else v, jax.core.Tracer)


def _graph_mode() -> bool:
    return _state.function_depth > 0


def _static_int(x):
    """`x` as a Python int when its value is known while tracing, else None."""
    v = x._value if type(x) is Tensor else x
    if isinstance(v, jax.core.Tracer):
        return None
    return int(np.asarray(v))


class TensorArray:
    """A list of Tensors of one dtype for loops (TF's `tf.TensorArray`).

    >>> ta = jaxtape.TensorArray(jaxtape.float32, size=2)
    >>> for i in range(2):
    ...     ta = ta.write(i, float(i) * 2)
    >>> ta.stack()
    <jaxtape.Tensor: shape=(2,), dtype=float32, numpy=array([0., 2.], dtype=float32)>

    Differences from TensorFlow: a TensorArray carried by a compiled loop has
    a static capacity (see the module docstring); `stack()` of a
    dynamically sized one whose size is known only at run time returns all
    `capacity` rows after a run-time check that every one was reached; an
    unknown element shape is `TensorShape(None)`, which jaxtape's TensorShape
    shows as `()`. `handle`, `flow` and `grad` are not available.
    """

    _items: list | None  # list mode: a Tensor (or None: unwritten) per element
    _buffer: Tensor | None  # buffer mode: (capacity, *element_shape)
    _size: Any  # buffer mode (or a traced size): an int32 Tensor
    _capacity: int | None  # rows of a buffer whose element shape is unknown
    _shape: tuple | None  # the element shape; None: unknown rank

    def __init__(
        self,
        dtype,
        size=None,
        dynamic_size=None,
        clear_after_read=None,
        tensor_array_name=None,
        handle=None,
        flow=None,
        infer_shape=True,
        element_shape=None,
        colocate_with_first_write_call=True,
        name=None,
    ):
        del tensor_array_name, colocate_with_first_write_call, name
        if handle is not None or flow is not None:
            raise NotImplementedError(
                "TensorArray(handle=..., flow=...) is not supported by jaxtape "
                "(TF's graph handles have no equivalent); create the array with "
                "`size=` instead."
            )
        if size is None:
            raise ValueError(
                "Size must be declared for TensorArrays when eager execution is "
                "enabled. Pass `size=` (0 with `dynamic_size=True` to grow)."
            )
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic = bool(dynamic_size)
        self._clear = True if clear_after_read is None else bool(clear_after_read)
        self._infer = bool(infer_shape)
        self._shape = _as_shape(element_shape)  # None: unknown rank
        self._buffer = None  # buffer mode: a Tensor (capacity, *element_shape)
        self._size = None  # buffer mode: an int32 Tensor
        self._capacity = None  # rows of a buffer whose element shape is unknown
        self._cell = _ShapeCell()
        self._read: set = set()
        n = _static_int(size)
        if n is None:  # a traced size: a buffer of that capacity is not known
            self._items = []
            self._size = size if type(size) is Tensor else Tensor(size)
        else:
            self._items = [None] * n

    # -- construction helpers ---------------------------------------------------------
    def _list(self) -> list:
        """The elements (list mode)."""
        items = self._items
        if items is None:
            raise RuntimeError("Internal error: a buffered TensorArray has no list.")
        return items

    def _copy(self) -> TensorArray:
        out = object.__new__(TensorArray)
        out.__dict__.update(self.__dict__)
        out._items = None if self._items is None else list(self._items)
        out._read = set(self._read)
        return out

    @property
    def _buffered(self) -> bool:
        return self._items is None

    def _traced(self) -> bool:
        vals = [self._buffer] if self._items is None else list(self._items)
        return any(v is not None and _is_traced(v) for v in [*vals, self._size])

    # -- metadata --------------------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def element_shape(self) -> TensorShape:
        return TensorShape(self._shape)

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic

    @property
    def handle(self):
        return None

    def size(self, name=None) -> Tensor:
        """The number of elements (TF's `size()`), an int32 scalar Tensor."""
        if self._buffered or self._size is not None:
            return _tensor(self._size)
        return Tensor(jnp.asarray(len(self._list()), np.int32))

    def mark_used(self) -> None:
        """Accepted for TF compatibility (TF's unused-result check)."""

    # -- writing -----------------------------------------------------------------------
    def _value_of(self, value) -> Tensor:
        if type(value) is not Tensor:
            if hasattr(value, "read_value"):  # a Variable
                value = value.read_value()
            else:
                value = Tensor(to_value(value, self._dtype.as_numpy_dtype))
        if value.dtype != self._dtype:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"TensorArray dtype is {self._dtype.name} but Op is trying to write "
                f"dtype {value.dtype.name} ",
            )
        return value

    def _merge_shape(self, shape, graph: bool) -> None:
        shape = tuple(shape)
        known = self._shape
        if known is not None and not TensorShape(known).is_compatible_with(shape):
            if graph:
                raise ValueError(
                    f"Inconsistent shapes: saw {TensorShape(shape)} but expected "
                    f"{TensorShape(known)} "
                )
            raise ValueError(
                f"Incompatible shape for value ({TensorShape(shape)}), expected "
                f"({TensorShape(known)})"
            )
        if self._infer or self._buffered:
            self._shape = (
                shape
                if known is None
                else tuple(b if a is None else a for a, b in zip(known, shape))
            )

    def write(self, index, value, name=None) -> TensorArray:
        """Writes `value` at `index`; returns the TensorArray to use from now on.

        Eagerly the array is updated in place and returned (TF eager); inside
        `jaxtape.function` a new TensorArray is returned and this one is left
        as it was (TF's graph semantics: always use the result).
        """
        graph = _graph_mode()
        value = self._value_of(value)
        out = self._copy() if graph else self
        out._merge_shape(value.shape, graph)
        i = _static_int(index)
        if i is not None and not out._buffered:
            if i < 0:
                raise errors.OutOfRangeError(
                    None,
                    None,
                    f"Writing to negative indices (index {i}) is not allowed.",
                )
            items = out._list()
            n = len(items)
            if i >= n and out._size is None:
                if not out._dynamic:
                    raise errors.OutOfRangeError(
                        None,
                        None,
                        f"Tried to write to index {i} but array is not resizeable "
                        f"and size is: {n} ",
                    )
                items.extend([None] * (i + 1 - n))
            elif i >= n:  # a traced size: writes go to a buffer
                out._to_buffer(None)
            if out._items is not None:
                out._items[i] = value
                return out
        if not out._buffered:
            out._to_buffer(None)
        out._materialize(value.shape)
        index_t = Tensor(to_value(index)) if type(index) is not Tensor else index
        out._buffer = _set_item(out._buffer, index_t, value)
        if out._dynamic:
            out._size = _grow(out._size, index_t)
        return out

    def unstack(self, value, name=None) -> TensorArray:
        """Writes the rows of `value` as the elements (TF's `unstack`)."""
        from jaxtape._src.ops.array_ops import unstack

        graph = _graph_mode()
        value = self._value_of(value)
        out = self._copy() if graph else self
        out._merge_shape(value.shape[1:], graph)
        n = int(value._value.shape[0])
        if graph:  # TF's TensorListFromTensor: the value becomes the list
            out._items, out._read = None, set()
            out._buffer, out._size = value, Tensor(jnp.asarray(n, np.int32))
            return out
        size = None if out._items is None else len(out._items)
        if size is not None and n > size and not out._dynamic:
            raise ValueError(
                f"Cannot unstack {n} tensors into a TensorArray of static size {size} "
            )
        out._items, out._read = list(unstack(value)), set()
        out._buffer = out._size = None
        return out

    def scatter(self, indices, value, name=None) -> TensorArray:
        """Writes the rows of `value` at `indices` (TF's `scatter`)."""
        from jaxtape._src.ops.array_ops import unstack

        graph = _graph_mode()
        value = self._value_of(value)
        out = self._copy() if graph else self
        out._merge_shape(value.shape[1:], graph)
        idx = indices._value if type(indices) is Tensor else to_value(indices)
        if not out._buffered and not isinstance(idx, jax.core.Tracer):
            for i, v in zip(np.asarray(idx).tolist(), unstack(value)):
                out = out.write(i, v)
            return out
        if not out._buffered:
            out._to_buffer(None)
        out._materialize(value.shape[1:])
        idx_t = indices if type(indices) is Tensor else Tensor(idx)
        out._buffer = _scatter_items(out._buffer, idx_t, value)
        if out._dynamic:
            out._size = _grow(out._size, idx_t)
        return out

    def split(self, value, lengths, name=None) -> TensorArray:
        """Splits `value` along axis 0 into elements of `lengths` rows."""
        from jaxtape._src.ops.array_ops import split

        value = self._value_of(value)
        lens = [int(n) for n in np.asarray(to_value(lengths)).tolist()]
        if sum(lens) != value.shape[0]:
            raise errors.InvalidArgumentError(
                None,
                None,
                "Expected sum of lengths to be equal to values.shape[0], but sum "
                f"of lengths is {sum(lens)} and value's shape is: "
                f"{list(value.shape)} ",
            )
        out = self._copy() if _graph_mode() else self
        out._items, out._read = list(split(value, lens, axis=0)), set()
        out._buffer = out._size = None
        return out

    # -- reading -----------------------------------------------------------------------
    def _zeros(self) -> Tensor:
        if self._shape is None or None in self._shape:
            raise ValueError(
                f"Cannot convert a partially known TensorShape "
                f"{TensorShape(self._shape or ())} to a Tensor: this TensorArray "
                "has an unwritten element and no known element shape. Pass "
                "`element_shape=` when creating it."
            )
        return Tensor(jnp.zeros(self._shape, self._dtype.as_numpy_dtype))

    def read(self, index, name=None) -> Tensor:
        """The element at `index` (zeros if never written, as TF)."""
        i = _static_int(index)
        if self._buffered or i is None:
            if not self._buffered:
                self._to_buffer(None)
            index_t = index if type(index) is Tensor else Tensor(to_value(index))
            return _get_item(self._buf(), index_t)
        items = self._list()
        n = len(items)
        if i < 0:
            raise errors.OutOfRangeError(
                None, None, f"Reading from negative indices (index {i}) is not allowed."
            )
        if i >= n:
            raise errors.OutOfRangeError(
                None, None, f"Tried to read from index {i} but array size is: {n} "
            )
        item = items[i]
        eager = not _graph_mode()
        if item is None:
            if eager and i in self._read:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Could not read index {i} twice because it was cleared after "
                    "a previous read (perhaps try setting clear_after_read = "
                    "false?)",
                )
            item = self._zeros()
        if eager and self._clear:
            items[i] = None
            self._read.add(i)
        return item

    def _filled(self) -> list:
        return [self._zeros() if t is None else t for t in self._list()]

    def stack(self, name=None) -> Tensor:
        """All elements stacked along a new axis 0."""
        from jaxtape._src.ops.array_ops import stack

        if not self._buffered:
            if self._size is not None:  # a traced size
                self._to_buffer(None)
            elif not self._items:
                shape = (0,) + tuple(self._zeros().shape)
                return Tensor(jnp.zeros(shape, self._dtype.as_numpy_dtype))
            else:
                return stack(self._filled())
        return _rows(self)

    def gather(self, indices, name=None) -> Tensor:
        """The elements at `indices`, stacked."""
        from jaxtape._src.ops.array_ops import gather, stack

        idx = indices._value if type(indices) is Tensor else to_value(indices)
        if not self._buffered and not isinstance(idx, jax.core.Tracer):
            items = self._filled()
            return stack([items[i] for i in np.asarray(idx).tolist()])
        if not self._buffered:
            self._to_buffer(None)
        return gather(self._buf(), indices)

    def concat(self, name=None) -> Tensor:
        """All elements concatenated along axis 0."""
        from jaxtape._src.ops.array_ops import concat

        if not self._buffered:
            items = self._filled()
            for k, t in enumerate(items):
                if not t.shape:
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"Concat saw a scalar shape at index {k} but requires at "
                        "least vectors.",
                    )
            return concat(items, 0)
        if len(self._buf().shape) < 2:
            raise errors.InvalidArgumentError(
                None,
                None,
                "Concat saw a scalar shape at index 0 but requires at least vectors.",
            )
        return _concat_items(_rows(self))

    def identity(self) -> TensorArray:
        """The TensorArray itself eagerly; a copy inside jaxtape.function (TF)."""
        return self._copy() if _graph_mode() else self

    def close(self, name=None) -> None:
        """Drops the elements (eagerly, as TF's eager TensorArray)."""
        if self._items is not None and not _graph_mode():
            del self._items[:]

    # -- the buffer ------------------------------------------------------------------
    def _capacity_for(self, extra: int | None) -> int:
        """Rows of the buffer: `size`, or for a dynamically sized array (or a
        traced size) the elements so far plus `extra` (a loop's trip count)."""
        n = len(self._list())
        if self._size is not None:  # a traced size: its capacity is the bound
            if not extra:
                raise ValueError(
                    "A TensorArray whose size is known only at run time needs a "
                    "static bound inside jaxtape.function: pass a Python int (or "
                    "a shape dimension such as `x.shape[0]`) as `size`, or use it "
                    "as the carry of a loop with a static trip count "
                    "(`maximum_iterations`, `jaxtape.for_range`)."
                )
            return extra
        if self._dynamic:
            if extra is None and _graph_mode() and n == 0:
                raise _needs_bound()
            return n + (extra or 0)
        return n

    def _to_buffer(self, extra: int | None, unshaped_ok: bool = False) -> None:
        """Turns the list into a buffer of `_capacity_for(extra)` rows. With no
        element shape known yet and `unshaped_ok`, the buffer waits for the
        first write to learn it (a loop traces its body again then)."""
        if self._buffered:
            return
        capacity = self._capacity_for(extra)
        shape = self._shape
        items = self._list()
        if shape is None or None in shape:
            first = next((t for t in items if t is not None), None)
            shape = None if first is None else tuple(first.shape)
        n = len(items)
        if self._size is None:
            self._size = Tensor(jnp.asarray(n, np.int32))
        if shape is None:
            if not unshaped_ok:
                raise ValueError(
                    "A TensorArray with no element written and no known element "
                    "shape has no buffer yet (XLA needs static shapes). Write to "
                    "it first, or pass `element_shape=` when creating it."
                )
            self._items, self._buffer, self._capacity = None, None, capacity
            return
        self._shape = shape
        from jaxtape._src.ops.array_ops import concat, stack

        rows = [
            Tensor(jnp.zeros(shape, self._dtype.as_numpy_dtype)) if t is None else t
            for t in items
        ]
        pad = capacity - n
        if rows and pad:
            buffer = concat([stack(rows), _zeros((pad,) + shape, self._dtype)], 0)
        elif rows:
            buffer = stack(rows)
        else:
            buffer = _zeros((capacity,) + shape, self._dtype)
        self._items, self._buffer = None, buffer

    def _materialize(self, shape) -> None:
        """An unshaped buffer's first write: zeros of its element shape, which
        the array's lineage remembers (`_cell`) for the loop's next trace."""
        if self._buffered and self._buffer is None:
            self._shape = tuple(shape)
            self._cell.shape = self._shape
            self._buffer = _zeros((self._capacity,) + self._shape, self._dtype)

    def _buf(self) -> Tensor:
        if self._buffer is None:
            self._zeros()  # (raises: no element shape known)
        return _tensor(self._buffer)

    def _carry(self, extra: int | None) -> TensorArray:
        """This array as a loop carry (a buffer), with `extra` rows to grow
        into when dynamically sized (`extra`: the loop's static trip count)."""
        if self._dynamic and extra is None:
            raise _needs_bound()
        out = self._copy()
        if not out._buffered:
            out._to_buffer(extra, unshaped_ok=True)
        elif out._dynamic and extra:
            if out._buffer is None:
                out._capacity = (out._capacity or 0) + extra
            else:
                from jaxtape._src.ops.array_ops import concat

                pad = _zeros((extra,) + tuple(out._buffer.shape[1:]), out._dtype)
                out._buffer = concat([_tensor(out._buffer), pad], 0)
        return out

    def _shaped(self) -> TensorArray:
        """An unshaped carry given the element shape its loop's body wrote."""
        out = self._copy()
        out._materialize(self._cell.shape)
        return out

    @property
    def _unshaped(self) -> bool:
        return self._buffered and self._buffer is None

    def _aux(self):
        capacity = self._capacity if self._unshaped else None
        return (
            self._dtype,
            self._dynamic,
            self._clear,
            self._infer,
            self._shape,
            capacity,
            self._cell,
        )

    def __repr__(self) -> str:
        return f"<jaxtape.TensorArray dtype={self._dtype.name} size={self.size()}>"


class _ShapeCell:
    """The element shape a TensorArray lineage learned from its first write
    inside a loop body (equal to every other cell: not part of a pytree's
    structure)."""

    __slots__ = ("shape",)

    def __init__(self) -> None:
        self.shape: tuple | None = None

    def __eq__(self, other) -> bool:
        return isinstance(other, _ShapeCell)

    def __hash__(self) -> int:
        return 0


def _needs_bound() -> Exception:
    return errors.InvalidArgumentError(
        None,
        None,
        "XLA compilation requires a fixed tensor list size. Set the number of "
        "elements. This could also happen if you're using a TensorArray in a "
        "while loop that does not have its maximum_iteration set, you can fix "
        "this by setting maximum_iteration to a suitable value. (A TensorArray "
        "with dynamic_size=True in a compiled loop grows by the loop's static "
        "trip count: pass `maximum_iterations=` as a Python int, or loop with "
        "`jaxtape.for_range` over static bounds.)",
    )


def _tensor(x) -> Tensor:
    return x if type(x) is Tensor else Tensor(x)


def _zeros(shape, dtype) -> Tensor:
    return Tensor(jnp.zeros(shape, dtype.as_numpy_dtype))


def _grow(size, index) -> Tensor:
    """A dynamically sized array's size after writing at `index` (max + 1)."""
    idx = index._value if type(index) is Tensor else index
    top = jnp.max(jnp.asarray(idx, np.int32)) + 1 if np.ndim(idx) else idx + 1
    return Tensor(jnp.maximum(_tensor(size)._value, jnp.asarray(top, np.int32)))


def _rows(ta: TensorArray) -> Tensor:
    """A buffer's rows up to the array's size (checked at run time if traced)."""
    buffer, size = ta._buf(), _tensor(ta._size)
    capacity = buffer.shape[0]
    n = _static_int(size)
    if n is not None:
        return buffer if n == capacity else _prefix(buffer, n)
    checks.run(_check_full, [size._value], (capacity,))
    return buffer


def _check_full(xp, size, capacity):
    checks.require(
        xp,
        size != capacity,
        "TensorListStack",
        "This TensorArray's size is {} at run time, below the "
        + str(capacity)
        + " elements jaxtape reserved for it in a compiled loop; stack() needs a "
        "static shape. Write every element (loop over a static range), or read "
        "the written ones with gather().",
        lambda xp, p: size,
    )


def _flatten(ta: TensorArray):
    if not ta._buffered:  # (a loop prepares its carries with `_carry` first)
        ta = ta._copy()
        ta._to_buffer(0, unshaped_ok=True)
    if ta._buffer is None:
        return (_tensor(ta._size),), ta._aux()
    return (_tensor(ta._buffer), _tensor(ta._size)), ta._aux()


def _unflatten(aux, children) -> Any:
    out = object.__new__(TensorArray)
    dtype, dynamic, clear, infer, shape, capacity, cell = aux
    out._dtype, out._dynamic, out._clear, out._infer, out._shape = (
        dtype,
        dynamic,
        clear,
        infer,
        shape,
    )
    out._capacity, out._cell = capacity, cell
    out._items, out._read = None, set()
    if capacity is not None:  # unshaped: the size only
        out._buffer, out._size = None, children[0]
    else:
        out._buffer, out._size = children
    return out


jax.tree_util.register_pytree_node(TensorArray, _flatten, _unflatten)


def _as_shape(shape):
    if shape is None:
        return None
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(TensorShape(shape))
