"""`Tensor`: an immutable wrapper around one `jax.Array`; `TensorShape`, `TensorSpec`.

Layer L0. Operators (`+`, `@`, indexing, ...) are installed by `ops/tensor_methods`
so that this module never imports the op layer.
"""

from __future__ import annotations

import collections
import operator
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

import jax
import jax.core
import numpy as np

from jaxtape._src.core import context, dtypes, errors
from jaxtape._src.core.deferred import Pending
from jaxtape._src.core.device import device_name
from jaxtape._src.core.type_spec import TypeSpec

if TYPE_CHECKING:
    from jaxtape._src.core.typing import DTypeLike, ShapeLike, TensorLike


class TensorShape(tuple):
    """TF's `TensorShape`: a tuple of ints (or None for an unknown dimension).

    Converts to a tensor wherever TF's does (`jaxtape.zeros(x.shape)`,
    `jaxtape.reduce_prod(kernel.shape)`), compares equal to a list of the same
    dimensions, and `+` concatenates to a TensorShape.

    An unknown rank, `TensorShape(None)`, is TF's: `rank` None, `str`
    `<unknown>`, compatible with every shape; `len`, iteration and
    `as_list()` raise TF's ValueError.

    Differences from TensorFlow: it is a tuple, so `bool(TensorShape([]))` is
    False, dimensions are ints (TF's `dims` gives `Dimension`s), and tuple
    methods (`count`, `index`, `*`, `<`) work where TF's raise.
    """

    def __new__(cls, dims=None):
        if type(dims) is tuple and all(type(d) is int for d in dims):
            return super().__new__(cls, dims)  # a jax array's shape: the usual case
        if dims is None or (isinstance(dims, TensorShape) and dims.rank is None):
            return _UNKNOWN_RANK
        if isinstance(dims, int):
            dims = (dims,)
        return super().__new__(cls, [_dimension(d) for d in dims])

    def __eq__(self, other) -> bool:
        if isinstance(other, tuple):
            return tuple.__eq__(self, other)
        if other is None:
            return False
        try:  # as TF: anything that makes a shape (a list, a Tensor) compares
            other = TensorShape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return tuple.__eq__(self, other)

    def __ne__(self, other) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__

    def __add__(self, other) -> TensorShape:
        return self.concatenate(other)

    def __radd__(self, other) -> TensorShape:
        return TensorShape(other).concatenate(self)

    @property
    def rank(self) -> int:
        return len(self)

    ndims = rank

    @property
    def dims(self) -> list:
        return list(self)

    def as_list(self) -> list:
        return list(self)

    def num_elements(self) -> int | None:
        if None in self:
            return None
        return int(np.prod(self, dtype=np.int64))

    def is_fully_defined(self) -> bool:
        return None not in self

    def is_compatible_with(self, other) -> bool:
        other = TensorShape(other)
        if other.rank is None:
            return True
        return len(self) == len(other) and all(
            a is None or b is None or a == b for a, b in zip(self, other)
        )

    def concatenate(self, other) -> TensorShape:
        other = TensorShape(other)
        if other.rank is None:
            return other
        return TensorShape(tuple(self) + tuple(other))

    def merge_with(self, other) -> TensorShape:
        """The most specific shape compatible with both (ValueError if none)."""
        other = TensorShape(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        if other.rank is None:
            return self
        return TensorShape(a if b is None else b for a, b in zip(self, other))

    def most_specific_compatible_shape(self, other) -> TensorShape:
        """The shape that keeps the dimensions on which both shapes agree."""
        other = TensorShape(other)
        if other.rank is None or len(self) != len(other):
            return _UNKNOWN_RANK
        return TensorShape(a if a == b else None for a, b in zip(self, other))

    def with_rank(self, rank: int) -> TensorShape:
        self.assert_has_rank(rank)
        return self

    def with_rank_at_least(self, rank: int) -> TensorShape:
        if len(self) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def assert_has_rank(self, rank: int) -> None:
        if len(self) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    def assert_is_compatible_with(self, other) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are incompatible")

    def __getitem__(self, key):
        out = super().__getitem__(key)
        return TensorShape(out) if isinstance(key, slice) else out

    def __repr__(self) -> str:
        return f"TensorShape({list(self)})"

    def __str__(self) -> str:
        if len(self) == 1:
            return f"({'None' if self[0] is None else self[0]},)"
        return "(" + ", ".join("None" if d is None else str(d) for d in self) + ")"


class _UnknownRankShape(TensorShape):
    """`TensorShape(None)`: TF's shape of unknown rank (one instance)."""

    @property
    def rank(self) -> None:  # pyright: ignore[reportIncompatibleMethodOverride]
        return None

    ndims = rank

    @property
    def dims(self) -> None:  # pyright: ignore[reportIncompatibleMethodOverride]
        return None

    def as_list(self) -> list:
        raise ValueError("as_list() is not defined on an unknown TensorShape.")

    def __len__(self) -> int:
        raise ValueError("Cannot take the length of shape with unknown rank.")

    def __iter__(self):
        raise ValueError("Cannot iterate over a shape with unknown rank.")

    def __bool__(self) -> bool:
        return False

    def __getitem__(self, key):
        return self if isinstance(key, slice) else None

    def __eq__(self, other) -> bool:
        return isinstance(other, TensorShape) and other.rank is None

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(None)

    def num_elements(self) -> None:
        return None

    def is_fully_defined(self) -> bool:
        return False

    def is_compatible_with(self, other) -> bool:
        TensorShape(other)  # (TF's error for what is not a shape)
        return True

    def concatenate(self, other) -> TensorShape:
        return self

    def merge_with(self, other) -> TensorShape:
        return TensorShape(other)

    def most_specific_compatible_shape(self, other) -> TensorShape:
        return self

    def with_rank(self, rank: int) -> TensorShape:
        return TensorShape([None] * rank)

    def with_rank_at_least(self, rank: int) -> TensorShape:
        return self

    def assert_has_rank(self, rank: int) -> None:
        return None

    def __repr__(self) -> str:
        return "TensorShape(None)"

    def __str__(self) -> str:
        return "<unknown>"

    def __reduce__(self):
        return (TensorShape, (None,))


_UNKNOWN_RANK = tuple.__new__(_UnknownRankShape, ())


def _dimension(d):
    """One dimension as TF reads it: an int (anything with `__index__`) or None.

    A symbolic size (a `jaxtape.function` traced once for all sizes of an
    `input_signature`'s `None` dimension) is None, as TF's static shape shows it.
    """
    if d is None or jax.export.is_symbolic_dim(d):
        return None
    try:
        return operator.index(d)
    except TypeError:
        raise TypeError(
            "Dimension value must be integer or None or have an __index__ method, "
            f"got value '{d!r}' with type '{type(d)}'"
        ) from None


if TYPE_CHECKING:

    class TensorOperators:
        """TF's operators on Tensors and Variables, to a type checker.

        `ops/tensor_methods` installs them at import (`core` cannot import the
        op layer); at run time this base is `object`.
        """

        def __add__(self, other: TensorLike) -> Tensor: ...
        def __radd__(self, other: TensorLike) -> Tensor: ...
        def __sub__(self, other: TensorLike) -> Tensor: ...
        def __rsub__(self, other: TensorLike) -> Tensor: ...
        def __mul__(self, other: TensorLike) -> Tensor: ...
        def __rmul__(self, other: TensorLike) -> Tensor: ...
        def __truediv__(self, other: TensorLike) -> Tensor: ...
        def __rtruediv__(self, other: TensorLike) -> Tensor: ...
        def __floordiv__(self, other: TensorLike) -> Tensor: ...
        def __rfloordiv__(self, other: TensorLike) -> Tensor: ...
        def __mod__(self, other: TensorLike) -> Tensor: ...
        def __rmod__(self, other: TensorLike) -> Tensor: ...
        def __pow__(self, other: TensorLike) -> Tensor: ...
        def __rpow__(self, other: TensorLike) -> Tensor: ...
        def __matmul__(self, other: TensorLike) -> Tensor: ...
        def __rmatmul__(self, other: TensorLike) -> Tensor: ...
        def __neg__(self) -> Tensor: ...
        def __pos__(self) -> Tensor: ...
        def __abs__(self) -> Tensor: ...
        def __invert__(self) -> Tensor: ...
        def __and__(self, other: TensorLike) -> Tensor: ...
        def __rand__(self, other: TensorLike) -> Tensor: ...
        def __or__(self, other: TensorLike) -> Tensor: ...
        def __ror__(self, other: TensorLike) -> Tensor: ...
        def __xor__(self, other: TensorLike) -> Tensor: ...
        def __rxor__(self, other: TensorLike) -> Tensor: ...
        def __lt__(self, other: TensorLike) -> Tensor: ...
        def __le__(self, other: TensorLike) -> Tensor: ...
        def __gt__(self, other: TensorLike) -> Tensor: ...
        def __ge__(self, other: TensorLike) -> Tensor: ...
        # `==` and `!=` are element-wise (a bool Tensor; False/True for None):
        # `Any`, since `object.__eq__` promises a bool.
        def __eq__(self, other: object) -> Any: ...
        def __ne__(self, other: object) -> Any: ...
        def __getitem__(self, key: Any) -> Tensor: ...
        def __iter__(self) -> Iterator[Tensor]: ...

else:
    TensorOperators = object


class Reference:
    """A hashable handle to a Tensor or Variable (`x.ref()`), as in TF."""

    __slots__ = ("_obj",)

    def __init__(self, obj):
        self._obj = obj

    def deref(self):
        return self._obj

    def __hash__(self) -> int:
        return id(self._obj)

    def __eq__(self, other) -> bool:
        return isinstance(other, Reference) and other._obj is self._obj

    def __repr__(self) -> str:
        return f"<Reference wrapping {self._obj!r}>"


class _eager_only:  # noqa: N801 - a decorator
    """`Tensor.numpy` as TF has it: absent while `jaxtape.function` traces the
    tensor (AttributeError, so `hasattr(x, "numpy")` is False, as for TF's
    graph tensors), the method otherwise."""

    def __init__(self, method):
        self.method = method
        self.__doc__ = method.__doc__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.method
        if context.state.function_depth and isinstance(obj._v, jax.core.Tracer):
            raise AttributeError(
                "Tensor.numpy() is not available inside jaxtape.function (as in "
                "tf.function): the value is not computed yet. Return the tensor "
                "from the function, or use `jaxtape.print` to see it at run time."
            )
        return self.method.__get__(obj, owner)


class Tensor(TensorOperators):
    """An immutable multidimensional array, TF's eager `tf.Tensor`.

    Holds one `jax.Array` (or a tracer inside `jaxtape.function`). Created by
    ops and by `jaxtape.constant`; never constructed by users directly.

    >>> jaxtape.constant(6.0)
    <jaxtape.Tensor: shape=(), dtype=float32, numpy=6.0>
    """

    # `_v`: the array, or a `deferred.Pending` under a recording tape; `_value`
    # computes a pending value on first use. Shape and dtype never need it.
    __slots__ = ("_v", "__weakref__")
    __array_priority__ = 100  # NumPy defers `ndarray + Tensor` to us
    _v: jax.Array | Pending

    def __init__(self, value: jax.Array | Pending) -> None:
        self._v = value

    @property
    def _value(self) -> jax.Array:
        v = self._v
        if type(v) is Pending:
            v = self._v = v.force()
        return v

    # -- metadata -----------------------------------------------------------
    value = property(_value.fget, doc="The underlying `jax.Array` (jaxtape extension).")

    @property
    def dtype(self) -> dtypes.DType:
        return dtypes.of_array(self._v.dtype)

    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._v.shape)

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def ndim(self) -> int:
        return self._v.ndim

    @property
    def device(self) -> str:
        return device_string(self._value)

    @property
    def name(self) -> str:
        raise AttributeError(
            "Tensor.name is undefined when eager execution is enabled (as in TF)."
        )

    def ref(self) -> Reference:
        return Reference(self)

    def experimental_ref(self) -> Reference:
        return Reference(self)

    # -- conversion ---------------------------------------------------------
    @_eager_only
    def numpy(self) -> Any:
        """The value as a NumPy array (a NumPy scalar for rank 0), like TF:
        an array of its own, which the caller may write to."""
        value = self._value
        if isinstance(value, jax.core.Tracer):
            if errors.is_escaped(value):
                raise errors.EscapedTensorError(errors.ESCAPED)
        if context.state.tapes and context.hooks.numpy_escape is not None:
            context.hooks.numpy_escape(self)
        out = np.array(value)  # (JAX's own view of the buffer is read-only)
        return out[()] if out.ndim == 0 else out

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        # NumPy's protocol: `np.array(t)` asks for a copy (writable, as TF's
        # is), `np.asarray(t)` takes a read-only view of the buffer.
        if context.state.tapes and context.hooks.numpy_escape is not None:
            context.hooks.numpy_escape(self)
        if copy:
            return np.array(self._value, dtype=dtype)
        out = np.asarray(self._value)
        return out if dtype is None else out.astype(dtype, copy=False)

    def __jax_array__(self) -> jax.Array:
        return self._value

    def __bool__(self) -> bool:
        value = self._value
        if isinstance(value, jax.core.Tracer):
            raise errors.OperatorNotAllowedInGraphError(
                _TRACED_CONTROL_FLOW.format(what="a Python `if`/`while`")
            )
        return bool(value)

    def __float__(self) -> float:
        return float(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __index__(self) -> int:
        if isinstance(self._value, jax.core.Tracer):
            raise TypeError(_TRACED_CONTROL_FLOW.format(what="`range()` or indexing"))
        if not self.dtype.is_integer:
            raise TypeError(
                f"Only integer tensors can be used as an index; got dtype "
                f"{self.dtype.name}. Cast first with `jaxtape.cast(x, jaxtape.int32)`."
            )
        return int(self._value)

    def __complex__(self) -> complex:
        return complex(self._value)

    def __len__(self) -> int:
        if not self._v.shape:
            raise TypeError("len() of unsized object: a scalar Tensor has no length.")
        return self._v.shape[0]

    def __hash__(self) -> int:
        raise TypeError("Tensor is unhashable. Instead, use tensor.ref() as the key.")

    # -- printing -----------------------------------------------------------
    def __repr__(self) -> str:
        return (
            f"<jaxtape.Tensor: shape={self.shape}, dtype={self.dtype.name}, "
            f"numpy={_numpy_text(self._value, is_repr=True)}>"
        )

    def __str__(self) -> str:
        return (
            f"jaxtape.Tensor({_numpy_text(self._value, is_repr=False)}, "
            f"shape={self.shape}, dtype={self.dtype.name})"
        )

    def __format__(self, spec: str) -> str:
        # TF formats the NumPy value: `f"{t}"` of a float32 scalar is
        # `format(np.float32(0.1), "")`, "0.10000000149011612" (not str's
        # "0.1"); `f"{t:.3f}"` works for scalars only (NumPy's TypeError else).
        host = _host_or_none(self._value)
        if host is None:  # a tracer inside jaxtape.function
            if spec:
                raise TypeError(
                    "unsupported format string passed to Tensor.__format__: a "
                    "traced Tensor inside jaxtape.function has no value yet (as in "
                    "tf.function). Format it outside the function, or print it at "
                    "run time with `jaxtape.print`."
                )
            return str(self)
        return format(host[()] if host.ndim == 0 else host, spec)


# A Tensor is a pytree with one child, its value, so it can be handed to any
# jax/jnp function: `jnp.sin(t)`, `jax.jit(f)(t)`, `jax.grad(f)(t)`. (JAX >= 0.10
# no longer calls `__jax_array__` while abstractifying arguments; it asks for a
# pytree instead.) Code that walks structures holding Tensors uses `tree_flatten`
# and `tree_map` below, which keep Tensors whole.
jax.tree_util.register_pytree_node(
    Tensor, lambda t: ((t._value,), None), lambda _, children: Tensor(children[0])
)


def _is_leaf(x) -> bool:
    return x is None or type(x) is Tensor


def tree_flatten(structure):
    """`jax.tree_util.tree_flatten` with Tensors and None as leaves."""
    return jax.tree_util.tree_flatten(structure, is_leaf=_is_leaf)


def _is_tensor(x) -> bool:
    return type(x) is Tensor


def tree_map(fn, structure):
    """`jax.tree_util.tree_map` with Tensors as leaves (None stays None).

    The result keeps `structure`'s containers and dict key order, as TF's
    `nest.map_structure` (JAX's would sort the keys).
    """
    leaves, treedef = jax.tree_util.tree_flatten(structure, is_leaf=_is_tensor)
    return tree_unflatten_like(structure, [fn(x) for x in leaves], treedef)


# Dict key order. JAX's trees flatten a dict (and a defaultdict) in sorted key
# order and rebuild it with sorted keys; TF's `nest` flattens every mapping in
# sorted key order too but rebuilds it in the order of the structure it packs
# into. So `tape.gradient(y, {'b': vb, 'a': va})` must come back as
# `{'b': ..., 'a': ...}`, or `zip(grads.values(), vs.values())` pairs wrongly.
# An OrderedDict is the other way round: JAX keeps its insertion order in both
# directions, TF flattens it sorted (this matters only where two structures are
# paired leaf by leaf, e.g. targets and output_gradients: see `nest_flatten`).
_MAPPINGS = (dict, collections.OrderedDict, collections.defaultdict)


class KeyOrder(NamedTuple):
    """A mapping's keys in its own order, and the orders inside its values."""

    keys: list
    subs: dict  # key -> the order inside that value (None: nothing to restore)


def key_order(structure):
    """Where `structure` holds dicts whose key order JAX's trees lose, that order.

    None when there is nothing to restore (no dict, or all in sorted order), so
    the usual structure costs nothing more. Pair with `in_key_order`; a
    structure that must outlive its values (a traced output) keeps only this.
    """
    t = type(structure)
    if t in _MAPPINGS:
        subs = {
            k: key_order(v) if isinstance(v, _NODES) else None
            for k, v in structure.items()
        }
        try:
            in_order = t is collections.OrderedDict or list(structure) == sorted(
                structure
            )
        except TypeError:  # keys that do not sort: JAX refuses them anyway
            in_order = True
        if in_order and all(s is None for s in subs.values()):
            return None
        return KeyOrder(list(structure), subs)
    if t is list or t is tuple or (isinstance(structure, tuple) and _is_namedtuple(t)):
        subs = [key_order(v) if isinstance(v, _NODES) else None for v in structure]
        return None if all(s is None for s in subs) else subs
    return None


_NODES = (dict, list, tuple)


def _is_namedtuple(t) -> bool:
    return hasattr(t, "_fields")


def in_key_order(value: Any, order: Any) -> Any:
    """`value` (a JAX-rebuilt structure) with its mappings back in `order`."""
    if order is None:
        return value
    if type(order) is KeyOrder:
        subs = order.subs
        items = [
            (k, value[k] if subs[k] is None else in_key_order(value[k], subs[k]))
            for k in order.keys
        ]
        if type(value) is collections.defaultdict:
            return collections.defaultdict(value.default_factory, items)
        return type(value)(items)
    items = [in_key_order(v, o) for v, o in zip(value, order)]
    if type(value) is list:
        return items
    return type(value)(*items) if _is_namedtuple(type(value)) else tuple(items)


def tree_unflatten_like(structure, leaves, treedef=None):
    """TF's `nest.pack_sequence_as`: `leaves` in the containers of `structure`.

    The inverse of `tree_flatten(structure)` (pass its `treedef` to save a
    walk): lists stay lists, tuples and namedtuples keep their types, and every
    dict, OrderedDict and defaultdict keeps `structure`'s own key order.
    """
    if treedef is None:
        treedef = tree_flatten(structure)[1]
    out = jax.tree_util.tree_unflatten(treedef, leaves)
    # One interior node at most (a lone leaf, a flat list or tuple): no dict
    # below the root to reorder, the usual `gradient(loss, variables)`.
    if treedef.num_nodes - treedef.num_leaves > 1 or type(structure) in _MAPPINGS:
        order = key_order(structure)
        if order is not None:
            out = in_key_order(out, order)
    return out


def nest_flatten(structure) -> list:
    """The leaves of `structure` in TF's `nest.flatten` order.

    As `tree_flatten`, except that an OrderedDict's values come in sorted key
    order too (JAX keeps its insertion order). Use it where two structures are
    paired leaf by leaf (targets and their output_gradients, primals and
    tangents); round trips use `tree_flatten` and `tree_unflatten_like`.
    """
    if type(structure) is Tensor:  # the usual target
        return [structure]
    leaves, treedef = tree_flatten(structure)
    if treedef.num_nodes - treedef.num_leaves <= 1 and (
        type(structure) is not collections.OrderedDict
    ):
        return leaves
    return tree_flatten(plain_mappings(structure))[0]


def plain_mappings(structure):
    """`structure` with every OrderedDict and defaultdict as a plain dict.

    What TF's `nest` compares: two structures that differ only in the kind of
    mapping (or in its key order) are the same structure to it.
    """
    t = type(structure)
    if t in _MAPPINGS:
        return {k: plain_mappings(v) for k, v in structure.items()}
    if t is list:
        return [plain_mappings(v) for v in structure]
    if t is tuple:
        return tuple([plain_mappings(v) for v in structure])
    if isinstance(structure, tuple) and _is_namedtuple(t):
        return t(*[plain_mappings(v) for v in structure])
    return structure


_TRACED_CONTROL_FLOW = (
    "A traced Tensor was used in {what} inside jaxtape.function; its value is not "
    "known while tracing. Use `jaxtape.cond(pred, true_fn, false_fn)`, "
    "`jaxtape.while_loop(cond, body, loop_vars)` or `jaxtape.switch_case`, or pass "
    "a Python value instead of a Tensor (a new value retraces)."
)


def _host_or_none(value):
    """`value` as a NumPy array, or None for a tracer (no value to print)."""
    if isinstance(value, jax.core.Tracer):
        return None
    return np.asarray(value)


def _numpy_text(value, is_repr: bool) -> str:
    """TF's `numpy_text`: `repr`/`str` of the NumPy value, a scalar's as Python's.

    A scalar's repr is its Python item's (`numpy=0.10000000149011612` for a
    float32 0.1, `numpy=True`), its str NumPy's (`0.1`); arrays print as
    NumPy prints them (summarized past 1000 elements), on a new line when
    they take several.
    """
    host = _host_or_none(value)
    if host is None:  # a tracer inside jaxtape.function
        return f"<traced {value.shape} {value.dtype}>"
    if is_repr:
        text = repr(host.item()) if host.ndim == 0 else repr(host)
    else:
        text = str(host)
    if "\n" in text:
        text = "\n" + text
    return text


def device_string(value) -> str:
    """TF's device string for where a jax array lives (CPU:0, GPU:1, ...)."""
    try:
        devices = value.devices()
    except Exception:
        return ""
    if len(devices) != 1:
        return ""
    return device_name(next(iter(devices)))


class TensorSpec(TypeSpec):
    """Describes a tensor's shape and dtype (TF's `TensorSpec`, a `TypeSpec`)."""

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(
        self,
        shape: ShapeLike | None,
        dtype: DTypeLike = dtypes.float32,
        name: str | None = None,
    ) -> None:
        self._shape = TensorShape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._name = name

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    name = property(lambda self: self._name)

    @classmethod
    def from_tensor(cls, tensor, name=None) -> TensorSpec:
        return cls(tensor.shape, tensor.dtype, name)

    @property
    def value_type(self) -> type:
        return Tensor

    def _serialize(self) -> tuple:
        return (self._shape, self._dtype, self._name)

    def is_compatible_with(self, spec_or_tensor) -> bool:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Same dtype and a compatible shape (the name is not compared, as TF)."""
        other = spec_or_tensor
        if isinstance(other, TypeSpec) and not isinstance(other, TensorSpec):
            return False
        return self._dtype == other.dtype and self._shape.is_compatible_with(
            other.shape
        )

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, TensorSpec)
            and self._shape == other._shape
            and self._dtype == other._dtype
            and self._name == other._name
        )

    def __hash__(self) -> int:
        shape = None if self._shape.rank is None else tuple(self._shape)
        return hash((shape, self._dtype, self._name))

    def __repr__(self) -> str:
        return (
            f"TensorSpec(shape={self._shape}, dtype={self._dtype!r}, "
            f"name={self._name!r})"
        )
