"""`Variable`: a mutable cell holding a `jax.Array`, TF's `tf.Variable`. Layer L2.

A read inside a recording tape is a new leaf on that tape (each read its own
leaf; the gradient with respect to the variable sums over its reads). Writes
(`assign*`) are not recorded: a gradient does not flow through an assignment,
as in TF.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import inspect
import itertools
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import context, device, distribution, dtypes, errors
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import (
    Reference,
    Tensor,
    TensorOperators,
    TensorShape,
    device_string,
)
from jaxtape._src.ops import array_extra_ops, array_ops, misc_ops, tensor_methods
from jaxtape._src.state import scope as _scope

if TYPE_CHECKING:
    from jaxtape._src.core.typing import DTypeLike, ShapeLike, TensorLike

_state = context.state
_replicas = distribution.state  # the replica `strategy.run` is running, if any
_scopes = _scope._stack
# Serializes Variable read-modify-writes (`assign_add`) and compiled calls'
# read-call-write exchange of state across threads (TF's variables are
# updated atomically); reentrant, since a constraint may read its variable.
state_lock = threading.RLock()


class VariableSynchronization(enum.Enum):
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


class _Creators(threading.local):
    def __init__(self) -> None:
        self.stack: list[Callable[..., Any]] = []  # innermost scope last


_creators = _Creators()


@contextlib.contextmanager
def variable_creator_scope(variable_creator):
    """Runs `jaxtape.Variable(...)` calls through `variable_creator` (TF's
    `tf.variable_creator_scope`): `variable_creator(next_creator, **kwargs)`
    gets every constructor argument by name and may change them, call
    `next_creator(**kwargs)` (the enclosing scope's creator, or the
    constructor) or return something else. Scopes nest, innermost first;
    subclasses of Variable construct directly, as in TF.
    """
    _creators.stack.append(variable_creator)
    try:
        yield
    finally:
        _creators.stack.pop()


class _VariableMeta(type):
    """`Variable(...)` through the creator scopes (TF's `VariableMetaclass`)."""

    def __call__(cls, *args, **kwargs):
        if cls is not Variable or not _creators.stack:
            return super().__call__(*args, **kwargs)
        bound = _INIT_SIGNATURE.bind(None, *args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        del arguments["self"]

        def create(**kw):
            return type.__call__(cls, **kw)

        for creator in _creators.stack:  # outermost first: the innermost runs first
            create = functools.partial(creator, create)
        return create(**arguments)


class Variable(TensorOperators, metaclass=_VariableMeta):
    """A mutable tensor-like value: model weights, optimizer slots, counters.

    Usable anywhere a Tensor is (ops read it). Trainable variables read inside
    a `GradientTape` are watched automatically.

    >>> v = jaxtape.Variable(1.0)
    >>> v.assign_add(2.0)
    <jaxtape.Variable 'Variable:0' shape=() dtype=float32, numpy=3.0>
    """

    __slots__ = (
        "_value",
        "_name",
        "_trainable",
        "_constraint",
        "_shape",
        "_fresh",
        "synchronization",
        "aggregation",
        "__weakref__",
        "__dict__",
    )
    __array_priority__ = 100  # `np.float64(2) * v` is ours (as for Tensor)
    # jaxtape's own program inputs (`next(iterator)`'s element holders), which
    # any trace may create: not the user's Variables (`Function._trace`).
    _hidden = False

    def __init__(
        self,
        initial_value: TensorLike | Callable[[], TensorLike] | None = None,
        trainable: bool | None = None,
        validate_shape: bool = True,
        caching_device: object = None,
        name: str | None = None,
        variable_def: object = None,
        dtype: DTypeLike | None = None,
        import_scope: str | None = None,
        constraint: Callable[[Tensor], TensorLike] | None = None,
        synchronization: VariableSynchronization = VariableSynchronization.AUTO,
        aggregation: VariableAggregation = VariableAggregation.NONE,
        shape: ShapeLike | None = None,
        experimental_enable_variable_lifting: bool = True,
    ) -> None:
        if initial_value is None:
            raise ValueError(
                "Variable: initial_value must be given (a tensor-like "
                "value or a callable returning one)."
            )
        if callable(initial_value) and not isinstance(
            initial_value, (Tensor, Variable)
        ):
            # Concrete even while jaxtape.function traces (TF's init_scope).
            with context.paused_tapes(), _scope.creating_state():
                initial_value = initial_value()
        np_dt = dtypes.np_dtype(dtype)
        if isinstance(initial_value, Variable):
            value = initial_value._read_raw()
            if np_dt is not None and value.dtype != np_dt:
                raise _variable_dtype_error(initial_value, np_dt)
        elif type(initial_value) is Tensor:
            value = initial_value._value
            if np_dt is not None and value.dtype != np_dt:
                raise _tensor_dtype_error(initial_value, np_dt, "initial_value: ")
        else:  # NumPy values are cast to `dtype`, Python ones converted (TF's rules)
            value = to_value(initial_value, np_dt)
        if isinstance(value, jax.core.Tracer):
            raise ValueError(
                "A Variable was created from a traced value inside a "
                "jaxtape.function; it would hold a tracer after the call. Create "
                "it outside the function, or pass a callable or a NumPy value as "
                "`initial_value` (evaluated once, as TF's init_scope does).\n"
                "  Wrong: v = jaxtape.Variable(jaxtape.zeros([3]))  # inside\n"
                "  Right: v = jaxtape.Variable(lambda: jaxtape.zeros([3]))"
            )
        self._value = device.to_device(value)
        # True while `_value` is a buffer that only jaxtape.function wrote and
        # nothing has read since: the next compiled call may donate it.
        self._fresh = False
        _register(self)
        if synchronization == VariableSynchronization.ON_READ and trainable:
            raise ValueError(
                "Synchronization value can be set to "
                "VariableSynchronization.ON_READ only for non-trainable "
                "variables."
            )
        self._trainable = True if trainable is None else bool(trainable)
        base = "Variable" if name is None else str(name)
        if base.endswith(":0"):
            base = base[:-2]
        self._name = context.current_name_scope() + base + ":0"
        self._constraint = constraint
        # A declared shape (TF's `shape=`, e.g. `[None, 3]` or `TensorShape(None)`):
        # assignments need only be compatible with it; None: exactly the value's.
        self._shape = None if shape is None else TensorShape(shape)
        if self._shape is not None and not self._shape.is_compatible_with(
            self._value.shape
        ):
            raise ValueError(
                f"The initial value's shape ({tuple(self._value.shape)}) is not "
                f"compatible with the explicitly supplied `shape` argument "
                f"({self._shape})."
            )
        self.synchronization = synchronization
        self.aggregation = aggregation
        distribution.variable_created(self)  # mirrored under a strategy's scope

    # -- reading --------------------------------------------------------------
    def _read_raw(self):
        """The current array, honouring a state scope overlay (no tape involvement)."""
        if _scopes.scopes:
            val = _scopes.scopes[-1].get(self)
            if val is not None:
                return val
        value = self._value
        if self._fresh or self._value is not value:
            # A buffer the next compiled call may donate, or one being replaced
            # by another thread's call: read it under the lock, and mark it
            # shared so that it is never donated (see `_store_result`).
            with state_lock:
                self._fresh = False
                return self._value
        return value

    def _store_result(self, value, fresh: bool) -> None:
        """Stores a compiled call's new value (the caller holds `state_lock`).

        `fresh`: nobody else holds `value`, so the next call may donate it.
        The flag is raised before the value changes, so that a reader in
        another thread that saw the old value re-reads under the lock.
        """
        self._fresh = True
        self._value = value
        self._fresh = fresh

    def read_value(self) -> Tensor:
        """The current value as a Tensor (a recorded read when tapes are active)."""
        if _state.tapes:
            return context.hooks.read_variable(self)
        return Tensor(self._read_raw())

    def value(self) -> Tensor:
        return self.read_value()

    def numpy(self):
        """The value as a NumPy array (a NumPy scalar for rank 0), like TF.

        Under a recording tape that watches this variable, the tape warns
        (`NumpyEscapeWarning`): what is computed from the NumPy value is a
        constant to it.
        """
        if _state.tapes and context.hooks.numpy_escape is not None:
            context.hooks.numpy_escape(self)
        out = np.array(self._read_raw())  # (a copy of its own: writable, as TF's)
        return out[()] if out.ndim == 0 else out

    def __array__(self, dtype=None, copy=None):
        if _state.tapes and context.hooks.numpy_escape is not None:
            context.hooks.numpy_escape(self)
        if copy:  # `np.array(v)`: writable, as TF's
            return np.array(self._read_raw(), dtype=dtype)
        out = np.asarray(self._read_raw())
        return out if dtype is None else out.astype(dtype, copy=False)

    def __jax_array__(self):
        return self._read_raw()

    def __bool__(self):
        return bool(self._read_raw())

    def __float__(self):
        return float(self._read_raw())

    def __int__(self):
        return int(self._read_raw())

    def __index__(self):
        return int(self._read_raw())

    def __len__(self):
        return len(self._read_raw())

    # -- metadata -------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> dtypes.DType:
        return dtypes.of_array(self._value.dtype)

    @property
    def shape(self) -> TensorShape:
        return (
            self._shape if self._shape is not None else TensorShape(self._value.shape)
        )

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def ndim(self) -> int:
        return self._value.ndim

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def device(self) -> str:
        return device_string(self._value)

    @property
    def constraint(self):
        """The projection an optimizer applies after updating the Variable
        (TF's: `assign` and `set_weights` store values as given)."""
        return self._constraint

    @property
    def handle(self):
        return self

    def ref(self) -> Reference:
        return Reference(self)

    experimental_ref = ref

    def __hash__(self):
        raise TypeError(
            "Variable is unhashable. Instead, use variable.ref() as the key."
        )

    # -- writing --------------------------------------------------------------
    def assign(
        self,
        value: TensorLike,
        use_locking: bool | None = None,
        name: str | None = None,
        read_value: bool = True,
    ) -> Variable | None:
        """Sets the variable to `value` (same shape; converted to its dtype)."""
        value = self._checked(value, "assign")
        replica = _replicas.replica
        if replica is not None and replica._update(self, "assign", value):
            return self if read_value else None  # aggregated across replicas
        with state_lock:
            self._write(value)
        return self if read_value else None

    def assign_add(
        self,
        delta: TensorLike,
        use_locking: bool | None = None,
        name: str | None = None,
        read_value: bool = True,
    ) -> Variable | None:
        """Adds `delta` to the variable."""
        checked = self._checked(delta, "assign_add")
        replica = _replicas.replica
        if replica is not None and replica._update(self, "assign_add", checked):
            return self if read_value else None  # aggregated across replicas
        with state_lock:  # read-modify-write: atomic across threads, as in TF
            self._write(self._read_raw() + checked)
        return self if read_value else None

    def assign_sub(
        self,
        delta: TensorLike,
        use_locking: bool | None = None,
        name: str | None = None,
        read_value: bool = True,
    ) -> Variable | None:
        """Subtracts `delta` from the variable."""
        checked = self._checked(delta, "assign_sub")
        replica = _replicas.replica
        if replica is not None and replica._update(self, "assign_sub", checked):
            return self if read_value else None  # aggregated across replicas
        with state_lock:
            self._write(self._read_raw() - checked)
        return self if read_value else None

    # -- sparse updates (TF's ResourceScatter* ops) --------------------------------
    def scatter_update(self, sparse_delta, use_locking=False, name=None) -> Variable:
        """Sets the rows `sparse_delta.indices` to `sparse_delta.values`."""
        return self._scatter(array_ops.tensor_scatter_nd_update, sparse_delta)

    def scatter_add(self, sparse_delta, use_locking=False, name=None) -> Variable:
        """Adds `sparse_delta.values` to the rows `sparse_delta.indices`."""
        return self._scatter(array_ops.tensor_scatter_nd_add, sparse_delta)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None) -> Variable:
        """Subtracts `sparse_delta.values` from the rows `sparse_delta.indices`."""
        return self._scatter(array_extra_ops.tensor_scatter_nd_sub, sparse_delta)

    def scatter_mul(self, sparse_delta, use_locking=False, name=None) -> Variable:
        """Multiplies the rows `sparse_delta.indices` by `sparse_delta.values`."""
        return self._scatter(array_extra_ops.scatter_nd_mul, sparse_delta)

    def scatter_div(self, sparse_delta, use_locking=False, name=None) -> Variable:
        """Divides the rows `sparse_delta.indices` by `sparse_delta.values`."""
        return self._scatter(array_extra_ops.scatter_nd_div, sparse_delta)

    def scatter_max(self, sparse_delta, use_locking=False, name=None) -> Variable:
        """The element-wise max of the rows `sparse_delta.indices` and the values."""
        return self._scatter(array_extra_ops.tensor_scatter_nd_max, sparse_delta)

    def scatter_min(self, sparse_delta, use_locking=False, name=None) -> Variable:
        """The element-wise min of the rows `sparse_delta.indices` and the values."""
        return self._scatter(array_extra_ops.tensor_scatter_nd_min, sparse_delta)

    def scatter_nd_update(self, indices, updates, name=None) -> Variable:
        """Sets the elements or slices at the index tuples `indices`."""
        return self._update(array_ops.tensor_scatter_nd_update, indices, updates)

    def scatter_nd_add(self, indices, updates, name=None) -> Variable:
        """Adds `updates` at the index tuples `indices`."""
        return self._update(array_ops.tensor_scatter_nd_add, indices, updates)

    def scatter_nd_sub(self, indices, updates, name=None) -> Variable:
        """Subtracts `updates` at the index tuples `indices`."""
        return self._update(array_extra_ops.tensor_scatter_nd_sub, indices, updates)

    def sparse_read(self, indices, name=None) -> Tensor:
        """The rows `indices` (a recorded read: gradients flow to them)."""
        return array_ops.gather(self, indices)

    def gather_nd(self, indices, name=None) -> Tensor:
        """The elements or slices at the index tuples `indices`."""
        return array_ops.gather_nd(self, indices)

    def _scatter(self, fn, sparse_delta) -> Variable:
        if not isinstance(sparse_delta, misc_ops.IndexedSlices):
            raise TypeError(
                "Argument `sparse_delta` must be a `tf.IndexedSlices`. Received "
                f"arg: {sparse_delta}. Wrap rows and their indices as "
                "`jaxtape.IndexedSlices(values, indices)`, or use `scatter_nd_*`."
            )
        indices = array_ops.expand_dims(sparse_delta.indices, -1)
        return self._update(fn, indices, sparse_delta.values)

    def _update(self, fn, indices, updates) -> Variable:
        # A read-modify-write under the lock (atomic across threads, as in
        # TF); an assignment, so it cuts gradients as `assign` does.
        with context.paused_tapes(), state_lock:
            self._write(fn(Tensor(self._read_raw()), indices, updates)._value)
        return self

    def _checked(self, value: Any, what: str) -> Any:
        """`value` as an array of this variable's dtype and shape, by TF's rules.

        A Tensor or Variable of another dtype is TF's ValueError (cast it
        first); NumPy values are cast as TF casts them (float64 to float32,
        floats to ints truncated toward 0, ints to floats); Python values are
        converted (a float is no integer: TypeError).
        """
        np_dt = self._value.dtype
        if isinstance(value, Variable):
            if value._value.dtype != np_dt:
                raise _variable_dtype_error(value, np_dt)
            value = value._read_raw()
        elif type(value) is Tensor:
            if value._value.dtype != np_dt:
                raise _tensor_dtype_error(value, np_dt)
            value = value._value
        elif isinstance(value, jax.Array):
            if value.dtype != np_dt:
                raise _tensor_dtype_error(value, np_dt)
        else:
            value = to_value(value, np_dt)
        shape = tuple(np.shape(value))
        if (
            shape != tuple(self._value.shape)
            if self._shape is None
            else not self._shape.is_compatible_with(shape)
        ):
            declared = self._shape if self._shape is not None else self._value.shape
            text = (
                f"Cannot {what} a value of shape {shape} to Variable "
                f"{self._name!r} of shape {tuple(self._value.shape)}. Shapes must "
                "match exactly; reshape the value first with `jaxtape.reshape`."
                if self._shape is None
                else f"Cannot {what} a value of shape {shape} to Variable "
                f"{self._name!r}: it is not compatible with the Variable's declared "
                f"shape {declared}."
            )
            if what == "assign":
                raise ValueError(text)
            # (TF's AssignAdd/AssignSub kernels raise this one)
            raise errors.invalid_argument(text, "AssignAddVariableOp")
        return value

    def _write(self, value):
        if _scopes.scopes and _scopes.scopes[-1].set(self, value):
            return
        if isinstance(value, jax.core.Tracer):
            raise RuntimeError(
                f"A traced value was assigned to Variable {self._name!r} outside the "
                "function that traced it; the tracer would leak. Assign inside the "
                "compiled function, or pass the value out and assign it eagerly."
            )
        self._value = _place_like(value, self._value)
        self._fresh = False

    # -- printing -------------------------------------------------------------
    def __repr__(self) -> str:
        from jaxtape._src.core.tensor import _numpy_text

        return (
            f"<jaxtape.Variable {self._name!r} shape={self.shape} "
            f"dtype={self.dtype.name}, numpy={_numpy_text(self._read_raw(), True)}>"
        )

    def __str__(self) -> str:
        return self.__repr__()


def _tensor_dtype_error(value, np_dt, prefix=""):
    want = np.dtype(np_dt).name
    return ValueError(
        f"{prefix}Tensor conversion requested dtype {want} for Tensor with dtype "
        f"{np.dtype(dtypes.np_dtype(value.dtype)).name}: {value!r}. Cast it first with "
        f"`jaxtape.cast(value, jaxtape.{want})`."
    )


def _variable_dtype_error(variable, np_dt):
    want = np.dtype(np_dt).name
    return ValueError(
        f"Incompatible type conversion requested to type {want} for `Variable "
        f"{variable.name!r}` of type {variable.dtype.name}. Cast its value first "
        f"with `jaxtape.cast(v, jaxtape.{want})`."
    )


_registry: dict[int, weakref.ref] = {}
_INIT_SIGNATURE = inspect.signature(Variable.__init__)  # (for the creator scopes)
_next_id = itertools.count()


def _register(var) -> None:
    key = next(_next_id)
    # (The dict is bound to the callback: at interpreter exit the module's
    # globals may already be None when the last Variables die.)
    _registry[key] = weakref.ref(
        var, lambda _, key=key, registry=_registry: registry.pop(key, None)
    )


def live_variables() -> list:
    """Every Variable still alive, in creation order (jaxtape.function lifts them)."""
    out = []
    for ref in list(_registry.values()):
        var = ref()
        if var is not None:
            out.append(var)
    return out


def store_computed(pairs) -> bool:
    """Stores new values computed from these Variables' own (their dtype,
    shape and device: an optimizer's update), under one lock, without
    `assign`'s conversions and placement. False, storing nothing, inside a
    trace's state scope or a replica's step, where `assign` must run."""
    if _scopes.scopes or _replicas.replica is not None or _state.function_depth:
        return False
    for var, value in pairs:
        old = var._value
        if value.dtype != old.dtype or value.shape != old.shape:
            return False  # (an AutocastVariable read in another dtype...)
    with state_lock:
        for var, value in pairs:
            var._store_result(value, False)
    return True


def _place_like(value, old):
    if isinstance(value, jax.Array) and not isinstance(value, jax.core.Tracer):
        try:
            if value.devices() == old.devices():
                return value
            if len(old.devices()) > 1:  # a mirrored Variable stays mirrored
                return jax.device_put(value, old.sharding)
            return jax.device_put(value, next(iter(old.devices())))
        except Exception:
            return value
    try:
        devices = old.devices()
        where = old.sharding if len(devices) > 1 else next(iter(devices))
        return jax.device_put(value, where)
    except Exception:
        return jnp.asarray(value)


tensor_methods.install(Variable)
context.hooks.variable_type = Variable


def _plain_read(variable):
    return Tensor(variable._read_raw())


context.hooks.read_variable = _plain_read  # the tape layer installs the recording read
