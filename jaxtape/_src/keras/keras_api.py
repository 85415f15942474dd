"""Keras 3's top-level classes and scopes (`tf.keras.Variable`, `Operation`,
`Function`, `StatelessScope`, `remat`, `name_scope`, ...). Layer L5.

The other top-level names (`Layer`, `Loss`, `Metric`, ...) are the classes of
their own namespaces, re-exported by `jaxtape/keras/__init__.py`.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import jax.numpy as jnp

from jaxtape._src.autodiff.recompute import recompute_grad
from jaxtape._src.core import config, context, dtypes
from jaxtape._src.core.device import device as _tf_device
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.initializers.initializers import get as _get_initializer
from jaxtape._src.keras import mixed_precision
from jaxtape._src.keras.keras_tensor import KerasTensor, flatten
from jaxtape._src.keras.layers import base as layers_base
from jaxtape._src.keras.models import Model
from jaxtape._src.keras.ops import dtypes as keras_dtypes
from jaxtape._src.keras.variables import KerasVariable, standardize_aggregation
from jaxtape._src.state import scope as state_scopes
from jaxtape._src.state.variable import VariableSynchronization

KERAS_VERSION = "3.15.1"  # the Keras release tf.keras is in TF 2.21


def version():
    """The Keras version whose API `jaxtape.keras` mirrors (`"3.15.1"`)."""
    return KERAS_VERSION


def device(device_name):
    """Keras's `keras.device`: places what is made inside on `device_name`
    (`"cpu:0"`, `"gpu:1"`, a TF device string), as `jaxtape.device`."""
    return _tf_device(device_name)


# -- Variable --------------------------------------------------------------------


class _KerasVariableMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, KerasVariable)

    def __subclasscheck__(cls, sub) -> bool:
        return isinstance(sub, type) and issubclass(sub, KerasVariable)


class Variable(metaclass=_KerasVariableMeta):
    """Keras 3's `keras.Variable`: a weight with a `path`, as layers make them.

    `Variable(initializer, shape=None, dtype=None, trainable=True,
    autocast=True, aggregation="none", synchronization="auto", name=None)`:
    `initializer` is a value, or an initializer (object, name or callable
    `f(shape, dtype)`) with `shape`; `layout` (a sharding layout) raises
    NotImplementedError. Every weight a jaxtape layer makes is an
    instance (`isinstance(layer.kernel, keras.Variable)`). A float variable
    with `autocast=True` reads as the compute dtype inside a mixed-precision
    layer's `call`.

    >>> v = jaxtape.keras.Variable("ones", shape=(2,), name="w")
    >>> v.path, v.numpy()
    ('w', array([1., 1.], dtype=float32))

    Differences from Keras: the result is a `jaxtape.Variable`, so `dtype` is
    a jaxtape dtype (it compares equal to its name).
    """

    def __new__(
        cls,
        initializer,
        shape=None,
        dtype=None,
        trainable=True,
        autocast=True,
        aggregation="none",
        synchronization="auto",
        name=None,
        layout=None,
        **kwargs,
    ) -> Any:
        del cls
        if layout is not None or kwargs:
            raise NotImplementedError(
                "keras.Variable: sharding layouts and backend-specific arguments "
                "are not supported by jaxtape. Received: "
                f"layout={layout}, kwargs={sorted(kwargs)}"
            )
        if name is not None and (not isinstance(name, str) or "/" in name):
            raise ValueError(
                "Argument `name` must be a string and "
                "cannot contain character `/`. "
                f"Received: name={name}"
            )
        if isinstance(initializer, str) or callable(initializer):
            init = _get_initializer(initializer)
            if shape is None:
                raise ValueError(
                    "When creating a Variable from an initializer, the `shape` "
                    "argument should be specified. "
                    f"Received: initializer={init} and shape={shape}"
                )
            dtype = keras_dtypes.standardize_dtype(dtype)
            value = init(tuple(shape), dtype=dtype)
        else:
            value = to_value(initializer)
            dtype = keras_dtypes.standardize_dtype(
                dtype if dtype is not None else _value_dtype(initializer, value)
            )
        kind = (
            mixed_precision.AutocastVariable
            if autocast and mixed_precision.is_float(dtype)
            else KerasVariable
        )
        if not isinstance(synchronization, VariableSynchronization):
            synchronization = _standardize_synchronization(synchronization)
        var = kind(
            value,
            dtype=dtypes.as_dtype(dtype),
            trainable=trainable,
            name=name if name is not None else layers_base.unique_name("variable"),
            aggregation=standardize_aggregation(aggregation),
            synchronization=synchronization,
        )
        return var


def _standardize_synchronization(value):
    names = {None: "NONE", "none": "NONE", "on_read": "ON_READ", "on_write": "ON_WRITE"}
    names["auto"] = "AUTO"
    if value not in names:
        raise ValueError(
            "Invalid value for argument `synchronization`. Expected "
            "one of `None`, `'none'`, `'on_read'`, `'on_write'`, `'auto'`. "
            f"Received: synchronization={value}"
        )
    return getattr(VariableSynchronization, names[value])


def _value_dtype(initializer, value):
    """Keras's dtype of a value: a Python bool/int/float is bool/int32/floatx
    (what `convert_to_tensor` makes of it), an array keeps its own."""
    if isinstance(initializer, bool):
        return "bool"
    if isinstance(initializer, int):
        return "int32"
    if isinstance(initializer, float):
        return config.floatx()
    return getattr(value, "dtype", None) or config.floatx()


# -- scopes ----------------------------------------------------------------------


class _StatelessState(state_scopes.StateScope):
    """The overlay of a `StatelessScope`: its own values first, then the
    enclosing scope's (a `jaxtape.function` trace); every write stays here."""

    def __init__(self, pairs):
        super().__init__(pairs)
        self._outer: state_scopes.StateScope | None = None

    def get(self, variable):
        hit = self._values.get(id(variable))
        if hit is not None:
            return hit[1]
        return None if self._outer is None else self._outer.get(variable)

    def set(self, variable, value) -> bool:
        self._values[id(variable)] = (variable, value)
        self.written[id(variable)] = variable
        return True


class StatelessScope:
    """Keras 3's `StatelessScope`: inside it, the variables of `state_mapping`
    (pairs `(variable, value)`) read as the given values, and assignments to
    any variable are recorded in the scope instead of changing the variable
    (`get_current_value(variable)` reads them back).

    >>> v = jaxtape.keras.Variable(1.0)
    >>> with jaxtape.keras.StatelessScope([(v, 2.0)]) as scope:
    ...     _ = v.assign(v * 3.0)
    >>> float(scope.get_current_value(v)), float(v.numpy())
    (6.0, 1.0)

    Differences from Keras: `collect_losses=True` and
    `initialize_variables=False` raise NotImplementedError (jaxtape's layers
    report losses to themselves, and variables are initialized on creation).
    """

    def __init__(
        self, state_mapping=None, collect_losses=False, initialize_variables=True
    ):
        if collect_losses:
            raise NotImplementedError(
                "StatelessScope(collect_losses=True) is not implemented in jaxtape: "
                "layers keep their losses in `layer.losses`."
            )
        if not initialize_variables:
            raise NotImplementedError(
                "StatelessScope(initialize_variables=False) is not implemented in "
                "jaxtape: variables are initialized when they are created."
            )
        self.collect_losses = collect_losses
        self.initialize_variables = initialize_variables
        self.losses: list = []
        self._pairs = []
        for k, v in state_mapping or []:
            if not isinstance(k, KerasVariable):
                raise ValueError(
                    "Invalid reference variable in StatelessScope: all keys in "
                    "argument `mapping` must be Variable instances. "
                    f"Received instead: {k}"
                )
            value = jnp.asarray(to_value(v), dtype=k.dtype.as_numpy_dtype)
            if tuple(k.shape) != value.shape:
                raise ValueError(
                    "Invalid variable value in StatelessScope: all values in "
                    "argument `mapping` must be tensors with a shape that matches "
                    f"the corresponding variable shape. For variable {k}, received "
                    f"invalid value {v} with shape {value.shape}."
                )
            self._pairs.append((k, value))
        self._state: _StatelessState | None = None
        self._cm: contextlib.ExitStack | None = None

    def __enter__(self) -> StatelessScope:
        outer = state_scopes.current()
        self._cm = contextlib.ExitStack()
        self._state = self._cm.enter_context(
            state_scopes.state_scope(self._pairs, _StatelessState)
        )
        self._state._outer = outer
        return self

    def __exit__(self, *exc) -> None:
        if self._cm is not None:
            self._cm.close()

    def add_loss(self, loss) -> None:
        self.losses.append(loss)

    def add_update(self, update) -> None:
        variable, value = update
        if self._state is not None:
            self._state.set(variable, to_value(value))

    def get_current_value(self, variable):
        """The value `variable` has in this scope (a Tensor), or None when the
        scope neither maps nor assigned it."""
        if self._state is None:
            return None
        hit = self._state._values.get(id(variable))
        return None if hit is None else Tensor(hit[1])


class SymbolicScope:
    """Keras 3's `SymbolicScope`, which marks Keras's own symbolic tracing.
    jaxtape traces functional models without it, so entering one changes
    nothing."""

    def __enter__(self) -> SymbolicScope:
        return self

    def __exit__(self, *exc) -> None:
        return None


_REMAT_MODES = {"full", "activations", "larger_than", "list_of_layers", None}


class RematScope:
    """Keras 3's `RematScope`; only `mode=None` (no rematerialization) is
    supported: jaxtape's layers do not consult the scope, so the other modes
    raise NotImplementedError. Wrap a function with `keras.remat` instead."""

    def __init__(self, mode="full", output_size_threshold=1024, layer_names=None):
        if mode not in _REMAT_MODES:
            raise ValueError(
                f"Invalid mode '{mode}'. Supported modes are: 'full', 'activations', "
                "'larger_than', 'list_of_layers', or  None."
            )
        if mode is not None:
            raise NotImplementedError(
                f"RematScope(mode={mode!r}) is not implemented in jaxtape: layers do "
                "not rematerialize from a scope. Wrap the function with "
                "`jaxtape.keras.remat(f)`."
            )
        self.mode = mode
        self.output_size_threshold = output_size_threshold
        self.layer_names = layer_names or []

    def __enter__(self) -> RematScope:
        return self

    def __exit__(self, *exc) -> None:
        return None


def remat(f):
    """Keras's `keras.remat` (TF's `recompute_grad`, whose mechanism it is):
    `f`'s values and gradients, without keeping its intermediate results for
    the backward pass; they are recomputed from the inputs when gradients
    are taken.

    >>> layer = jaxtape.keras.layers.Dense(3)
    >>> y = jaxtape.keras.remat(layer)(jaxtape.ones((2, 4)))
    """
    return recompute_grad(f)


# -- name scopes -----------------------------------------------------------------


class _KerasScopes(threading.local):
    def __init__(self):
        self.stack: list = []


_keras_scopes = _KerasScopes()


class name_scope:  # noqa: N801  (Keras's name)
    """Keras 3's `keras.name_scope`: prefixes the paths of variables made inside
    (`"outer/inner/variable"`), on jaxtape's name-scope stack.

    `deduplicate` (default True) skips a scope whose name and `caller` equal
    the enclosing Keras scope's (a layer calling itself); `override_parent`
    replaces the enclosing path.
    """

    def __init__(self, name, caller=None, deduplicate=True, override_parent=None):
        if not isinstance(name, str) or "/" in name:
            raise ValueError(
                "Argument `name` must be a string and cannot contain "
                f"character `/`. Received: name={name}"
            )
        self.name = name
        self.caller = caller
        self.deduplicate = deduplicate
        self.override_parent = override_parent
        self._cm: Any = None

    def __enter__(self) -> name_scope:
        top = _keras_scopes.stack[-1] if _keras_scopes.stack else None
        if (
            self.deduplicate
            and self.caller is not None
            and top is not None
            and top.name == self.name
            and top.caller is self.caller
        ):
            self._cm = contextlib.nullcontext()
        elif self.override_parent is not None:
            self._cm = context.absolute_name_scope(
                f"{self.override_parent}/{self.name}/"
            )
        else:
            self._cm = context.push_name_scope(self.name)
        self._cm.__enter__()
        _keras_scopes.stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _keras_scopes.stack.pop()
        self._cm.__exit__(*exc)


# -- Operation, Function, Quantizer ------------------------------------------------


class _OperationMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        if cls is Operation and isinstance(obj, layers_base.Layer):
            return True
        return super().__instancecheck__(obj)


class Operation(metaclass=_OperationMeta):
    """Keras 3's `keras.Operation`, the base of its ops and layers: `call`
    computes; calling on `KerasTensor`s returns `compute_output_spec(...)`.
    jaxtape's layers count as Operations (`isinstance(layer, keras.Operation)`).
    """

    def __init__(self, name=None):
        if name is None:
            name = layers_base.unique_name(layers_base.keras_snake(type(self).__name__))
        self.name = name

    def __call__(self, *args, **kwargs):
        if any(isinstance(x, KerasTensor) for x in flatten((args, kwargs))):
            return self.symbolic_call(*args, **kwargs)
        return self.call(*args, **kwargs)

    def call(self, *args, **kwargs):
        raise NotImplementedError(
            f"{type(self).__name__} must implement `call(self, *args, **kwargs)`."
        )

    def symbolic_call(self, *args, **kwargs):
        return self.compute_output_spec(*args, **kwargs)

    def compute_output_spec(self, *args, **kwargs):
        raise NotImplementedError(
            f"{type(self).__name__}.compute_output_spec is not defined; jaxtape "
            "does not trace Operations symbolically. Define it to return the "
            "output `KerasTensor`s."
        )

    def get_config(self):
        return {"name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<Operation name={self.name}>"


class Function(Operation):
    """Keras 3's `keras.Function`: the computation from `inputs` to `outputs`
    (`KerasTensor`s of the functional API) as a callable.

    Differences from Keras: the graph may contain layers only (jaxtape's
    `KerasTensor`s take no `keras.ops` operators).
    """

    def __init__(self, inputs, outputs, name=None):
        super().__init__(name=name or "function")
        self._model = Model(inputs=inputs, outputs=outputs, name=self.name)
        self._inputs_struct = inputs
        self._outputs_struct = outputs

    @property
    def inputs(self):
        return flatten(self._inputs_struct)

    @property
    def outputs(self):
        return flatten(self._outputs_struct)

    @property
    def operations(self):
        return list(self._model.layers)

    def call(self, inputs):
        return self._model(inputs)

    def compute_output_spec(self, inputs):
        return self._model(inputs)


class Quantizer:
    """Keras 3's `keras.Quantizer`. Not supported: jaxtape has no quantizers,
    so constructing one raises NotImplementedError."""

    def __init__(self, output_dtype="int8"):
        raise NotImplementedError(
            f"keras.Quantizer(output_dtype={output_dtype!r}) is not supported by "
            "jaxtape (it has no quantized layers or quantizers)."
        )
