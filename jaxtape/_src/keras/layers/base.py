"""`keras.layers.Layer`: lazy build, weight tracking, autocast, name scopes. Layer L5.

A layer is a `Module` whose variables are tracked in creation order (Keras's
order, not tf.Module's sorted one). The first call builds it inside its name
scope, so its weights get Keras 3's names: `name` is the weight's own name
(`kernel`) and `path` the scoped one (`my_model/dense/kernel`), as tf.keras in
TF 2.21 (plain `jaxtape.Variable`s keep TF's `name:0`). Float inputs are cast
to the layer's compute dtype (its dtype policy's: floatx, float32, by default;
float16 under `"mixed_float16"`, `keras/mixed_precision.py`), silently, as
Keras 3 autocasts. Calling a layer on a symbolic `KerasTensor` (from
`keras.Input`, `keras/keras_tensor.py`) records a node of a functional model
instead of computing. The views of the object graph that `weights`, `layers`
and the `.weights.h5` walk take (`state/graph.py`) are defined here; so is the
saving protocol that `keras/saving.py` calls. Keras 3's masks
(`Embedding(mask_zero=True)`, `Masking`) travel beside the Tensors
(`get_keras_mask`): a layer whose `call` takes `mask` receives its input's, one
that `supports_masking` passes `compute_mask`'s on.
"""

from __future__ import annotations

import collections
import inspect
import re
import threading
import warnings
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, SupportsIndex

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import context, device, dtypes
from jaxtape._src.core.dispatch import StringInput, to_value
from jaxtape._src.core.tensor import Tensor, TensorShape
from jaxtape._src.initializers import initializers
from jaxtape._src.keras import constraints, mixed_precision, regularizers, serialization
from jaxtape._src.keras.keras_tensor import (
    KerasTensor,
    Node,
    flatten,
    map_structure,
    shape_of,
)
from jaxtape._src.keras.layers.input_spec import assert_input_compatibility
from jaxtape._src.keras.variables import KerasVariable, standardize_aggregation
from jaxtape._src.metrics import base as metrics_base
from jaxtape._src.metrics import metrics as metrics_module
from jaxtape._src.ops import math_ops
from jaxtape._src.optimizers import optimizers as optimizers_module
from jaxtape._src.state import graph, trackable
from jaxtape._src.state.module import Module, name_scope
from jaxtape._src.state.scope import creating_state
from jaxtape._src.state.variable import Variable

if TYPE_CHECKING:
    from jaxtape._src.core.typing import (
        ConstraintLike,
        DTypeLike,
        InitializerLike,
        RegularizerLike,
    )

_uids: collections.defaultdict = collections.defaultdict(int)


def keras_snake(name: str) -> str:
    """Keras's snake-casing (`Conv2D` -> `conv2d`; tf.Module's gives `conv2_d`)."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", re.sub(r"\W+", "", name))
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def unique_name(base: str) -> str:
    """Keras's layer naming: `dense`, then `dense_1`, `dense_2`, ..."""
    n = _uids[base]
    _uids[base] += 1
    return base if n == 0 else f"{base}_{n}"


def reset_uids() -> None:
    """`keras.backend.clear_session`: automatic names start again (layers,
    metrics and optimizers)."""
    _uids.clear()
    metrics_base.reset_uids()
    optimizers_module.reset_uids()


# Keras's masks attached to tensors (`backend.set_keras_mask`): Tensors have
# slots, so the mask of a live Tensor is kept here, by identity, and dropped
# with the Tensor.
_masks: dict[int, tuple[weakref.ref, Any]] = {}


def _mask_of(inputs) -> Any:
    """The Keras mask of a layer's inputs: a list input's is the list of its
    tensors' masks (None when none has one), as Keras maps over it."""
    if isinstance(inputs, (list, tuple)):
        masks = [get_keras_mask(x) for x in inputs]
        return None if all(m is None for m in masks) else masks
    return get_keras_mask(inputs)


def get_keras_mask(x) -> Any:
    """The mask a masking layer attached to `x` (Keras's `_keras_mask`), or None."""
    hit = _masks.get(id(x))
    if hit is None or hit[0]() is not x:
        return None
    return hit[1]


def set_keras_mask(x, mask) -> None:
    """Attaches `mask` to the Tensor `x` (for the layers that `x` is passed to)."""
    key = id(x)

    def drop(ref, key=key):
        hit = _masks.get(key)
        if hit is not None and hit[0] is ref:
            del _masks[key]

    _masks[key] = (weakref.ref(x, drop), mask)


class _CallContext(threading.local):
    def __init__(self):
        self.training = []  # the `training` value of the enclosing calls


_call_ctx = _CallContext()
# Layers holding loss terms that a call added (`add_loss` of a Tensor): an
# outer call drops its layers' terms, as Keras's does; with none held
# anywhere it has nothing to walk.
_holding_call_losses: dict[int, weakref.ref] = {}  # (by id: layers may be unhashable)


# What `compile` sets: listed in `Model.metrics` by the training API itself.
_COMPILE_STATE = frozenset({"_loss_tracker", "_compile_metrics"})

# Lists that name weights without owning them: `add_weight`'s regularized
# (weight, regularizer) pairs would otherwise put regularized weights first.
_BOOKKEEPING = frozenset({"_regularized", "_losses"})


def _layer_scope(name: str):
    """The name scope of a layer called `name` (none for Keras's `name=''`)."""
    return name_scope(name) if name else _null_scope()


def _check_layer_name(name) -> None:
    if not isinstance(name, str) or "/" in name:
        raise ValueError(
            "Argument `name` must be a string and cannot contain character `/`. "
            f"Received: name={name} (of type {type(name)})"
        )


def _is_shape(shape) -> bool:
    """A shape (not a structure of shapes): a TensorShape or a tuple/list of
    ints and Nones."""
    return isinstance(shape, TensorShape) or (
        isinstance(shape, (tuple, list))
        and all(d is None or isinstance(d, (int, np.integer)) for d in shape)
    )


def _symbolic_inputs(shape):
    """KerasTensors of a shape or a (list/tuple/dict) structure of shapes."""
    if _is_shape(shape):
        return KerasTensor(shape)
    if isinstance(shape, dict):
        return {k: _symbolic_inputs(v) for k, v in shape.items()}
    return [_symbolic_inputs(s) for s in shape]


class Layer(Module):
    """Keras's base layer (`keras.layers.Layer`).

    Subclasses create weights in `build(input_shape)` with `add_weight` and
    compute in `call(inputs, training=None)`.
    """

    _TAKES_INPUT_LENGTH = False  # (Embedding's TF 2 argument)
    # Keras's opt-out of input conversion (RandomFlip, RandomCrop, the lookups
    # set it False): inputs, dict "labels" included, keep their float dtype.
    _convert_input_args = True
    # Attributes holding Variables, Layers or containers (`__setattr__` keeps it).
    _tracked: dict[str, Any]
    _inbound_nodes: list[Node]  # the layer's calls on KerasTensors, once called

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # Keras 3's auto-config: a subclass without its own `get_config` is
        # serialized from the constructor arguments it was given (`_auto_config`).
        instance = super().__new__(cls)
        instance.__dict__["_auto_config"] = _captured_arguments(
            instance, cls, args, kwargs
        )
        return instance

    def __init__(self, trainable=True, name=None, dtype=None, autocast=True, **kwargs):
        """Args: `trainable`, `name` (any string without `/`, `''` included, as
        Keras; None picks `dense`, `dense_1`, ...), `dtype` (a dtype policy
        or its name, `"mixed_float16"`, or a dtype: the compute and variable
        dtypes; the global policy by default, floatx unless set),
        `autocast` (cast float inputs to the compute dtype), and Keras's
        `input_shape`/`input_dim` and TF 2's
        `batch_input_shape` (the input shape of a Sequential model's first
        layer; Keras 3 refuses the last). TF 2's `input_length` is Embedding's
        only, unused there with Keras 3's deprecation warning; other layers
        refuse it, as Keras 3."""
        self.__dict__.setdefault("_tracked", {})  # attribute -> value, in order
        self.__dict__.setdefault("_metrics", [])  # Metric attributes, in order
        input_shape = kwargs.pop("input_shape", None)
        input_dim = kwargs.pop("input_dim", None)
        batch_input_shape = kwargs.pop("batch_input_shape", None)
        if self._TAKES_INPUT_LENGTH and kwargs.pop("input_length", None) is not None:
            warnings.warn(
                "Argument `input_length` is deprecated. Just remove it.", stacklevel=3
            )
        if kwargs:
            raise ValueError(
                f"Unrecognized keyword arguments passed to {type(self).__name__}: "
                f"{kwargs}"
            )
        if name is None:
            name = unique_name(keras_snake(type(self).__name__))
        _check_layer_name(name)
        # Module's attributes, without tf.Module's identifier check (Keras
        # takes any name without '/', '' and 'my dense' included).
        self._name = name
        self._scope_name = context.current_name_scope() + (name + "/" if name else "")
        self._trainable = bool(trainable)
        self.built = False
        self._set_dtype_policy(dtype)
        self._autocast = autocast
        self._losses: list = []
        self._regularized: list = []
        self.input_spec = None
        self.supports_masking = False
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        if batch_input_shape is not None:
            self._batch_input_shape = tuple(batch_input_shape)
        elif input_shape is not None:
            self._batch_input_shape = (None, *tuple(input_shape))
        else:
            self._batch_input_shape = None
        params = inspect.signature(self.call).parameters
        self._call_takes_training = "training" in params
        self._call_takes_mask = "mask" in params
        # Call arguments with a `<name>_mask` parameter (MultiHeadAttention's
        # query/value/key): Keras fills those masks from the arguments'.
        self._mask_args = tuple(
            (i, n, list(params).index(f"{n}_mask"))
            for i, n in enumerate(params)
            if f"{n}_mask" in params
        )
        self._last_output_shape = None

    # -- tracking ----------------------------------------------------------------
    def __setattr__(self, key, value):
        tracked = self.__dict__.setdefault("_tracked", {})
        if isinstance(value, (Variable, Layer, list, dict)) or (
            isinstance(value, tuple) and _may_hold_state(value)
        ):
            tracked[key] = value  # lists are walked when weights are asked for
            if "_deferred_restore" in self.__dict__:  # a restore waits for it
                trackable.take_deferred(self, key, value)
        else:
            tracked.pop(key, None)
        if isinstance(value, metrics_module.Metric) and key not in _COMPILE_STATE:
            own = self.__dict__.setdefault("_metrics", [])  # Keras tracks these
            if all(m is not value for m in own):
                own.append(value)
        object.__setattr__(self, key, value)

    @property
    def metrics(self) -> list:
        """The metrics assigned as attributes of this layer and its sublayers."""
        out = list(self.__dict__.get("_metrics", ()))
        for layer in self.layers:
            out.extend(layer.metrics)
        return out

    # Training bookkeeping that checkpoints leave out (as Keras does).
    _NOT_CHECKPOINTED = frozenset({"compiled_metrics", "loss_tracker", "_metrics"})

    def _trackable_children(self) -> dict:
        """Attributes holding weights or layers, public first (checkpoint paths)."""
        items = [
            (k, v) for k, v in self._tracked.items() if k not in self._NOT_CHECKPOINTED
        ]
        public = [(k, v) for k, v in items if not k.startswith("_")]
        return dict(public + [(k, v) for k, v in items if k.startswith("_")])

    # -- the object graph: Keras's views of it for `graph.walk` --------------------
    def _own_and_sublayers(self):
        """The Variables and Layers in this layer's tracked attributes (through
        lists, tuples and dicts, in assignment order): its own weights and its
        direct sublayers. Other objects (metrics, plain Modules) hold none."""
        own, subs, seen = [], [], {id(self)}
        for key, value in self._tracked.items():
            if key in _BOOKKEEPING:  # (weights listed there do not order them)
                continue
            for leaf in _leaves(value):
                if id(leaf) in seen or not isinstance(leaf, (Variable, Layer)):
                    continue
                seen.add(id(leaf))
                (own if isinstance(leaf, Variable) else subs).append(leaf)
        return own, subs

    def _own_weights(self) -> list:
        """This layer's own weights in Keras 3's order: trainable, then not."""
        own, _ = self._own_and_sublayers()
        return [v for v in own if v.trainable] + [v for v in own if not v.trainable]

    @property
    def layers(self) -> list:
        """The direct sublayers, in the order they were assigned."""
        return self._own_and_sublayers()[1]

    def _flatten_layers(self, include_self=True):
        """This layer (if `include_self`) and every sublayer, once each, each
        before its sublayers (`graph.walk` depth first over `layers`)."""
        walk = graph.walk(self, _sublayers, "depth")
        return ([self] if include_self else []) + [layer for _, layer in walk]

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value: bool) -> None:
        for layer in self._flatten_layers():
            layer._trainable = bool(value)

    def _weights_and_trainability(self) -> list:
        """`(weight, trainable here)` in Keras 3's order: each layer's own
        trainable weights, then its own non-trainable ones, then each sublayer's
        (in assignment order), each weight once."""
        found = {}  # id(layer) -> its (own weights, sublayers), found once

        def sublayers(obj):
            parts = found[id(obj)] = obj._own_and_sublayers()
            return [(layer.name, layer) for layer in parts[1]]

        out, seen = [], set()
        tree = graph.walk(self, sublayers, "depth")
        for layer in [self, *(layer for _, layer in tree)]:
            own = found[id(layer)][0]
            for v in [v for v in own if v.trainable] + [
                v for v in own if not v.trainable
            ]:
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append((v, layer._trainable and v.trainable))
        return out

    @property
    def weights(self) -> list[Variable]:
        """All weights, per layer: its trainable ones, then its non-trainable
        ones (Keras 3's order, which `get_weights`/`set_weights` follow)."""
        return [v for v, _ in self._weights_and_trainability()]

    @property
    def trainable_weights(self) -> list[Variable]:
        if not self._trainable:
            return []
        return [v for v, trainable in self._weights_and_trainability() if trainable]

    @property
    def non_trainable_weights(self) -> list[Variable]:
        if not self._trainable:
            return self.weights
        return [v for v, t in self._weights_and_trainability() if not t]

    # Keras's aliases (as properties: pyright refuses `variables = weights`
    # where the base class has the property).
    @property
    def trainable_variables(self) -> list[Variable]:
        return self.trainable_weights

    @property
    def non_trainable_variables(self) -> list[Variable]:
        return self.non_trainable_weights

    @property
    def variables(self) -> list[Variable]:
        return self.weights

    @property
    def submodules(self) -> tuple:
        return tuple(self._flatten_layers(include_self=False))

    def get_weights(self) -> list:
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights) -> None:
        """Assigns `weights` (arrays in the order of `weights`, as Keras 3's)."""
        own = self.weights
        if len(weights) != len(own):
            raise ValueError(
                f"You called `set_weights(weights)` on layer '{self.name}' with a "
                f"weight list of length {len(weights)}, but the layer was "
                f"expecting {len(own)} weights. Pass one array per weight, in "
                "the order of `layer.weights`."
            )
        for v, w in zip(own, weights):
            w = np.asarray(w)
            if tuple(w.shape) != tuple(v.shape):
                raise ValueError(
                    f"Layer {self.name} weight shape {tuple(v.shape)} is not "
                    f"compatible with provided weight shape {w.shape} (weight "
                    f"{getattr(v, 'path', v.name)!r})."
                )
            v.assign(w.astype(v.dtype.as_numpy_dtype))

    def count_params(self) -> int:
        if not self.built:
            raise ValueError(
                f"You tried to call `count_params` on layer {self.name!r}, but the "
                "layer isn't built. Call the layer on an input (or call "
                "`build(input_shape)`) first."
            )
        return int(sum(np.prod(v.shape, dtype=np.int64) for v in self.weights))

    # -- dtypes (Keras 3's dtype policy: keras/mixed_precision.py) ----------------
    # A layer that computes in float32 under a mixed policy, as Keras's
    # BatchNormalization/LayerNormalization do: float inputs are cast to
    # float32, weights are not autocast, float outputs are cast to the
    # compute dtype.
    _KEEPS_FLOAT32 = False
    # A layer computed on the host (strings: the lookup layers): a model
    # holding one runs its fit/evaluate/predict steps eagerly.
    _RUNS_ON_HOST = False

    def _set_dtype_policy(self, dtype) -> None:
        if isinstance(dtype, dtypes.DType):
            dtype = dtype.name
        policy = mixed_precision.get(dtype)
        self._dtype_policy = policy
        self._dtype = np.dtype(dtypes.np_dtype(policy.compute_dtype))
        self._variable_dtype = np.dtype(dtypes.np_dtype(policy.variable_dtype))
        self._mixed = self._dtype != self._variable_dtype

    @property
    def dtype_policy(self) -> mixed_precision.DTypePolicy:
        """The layer's `DTypePolicy` (its `dtype` argument, or the global one)."""
        return self._dtype_policy

    @dtype_policy.setter
    def dtype_policy(self, value) -> None:
        self._set_dtype_policy(value)

    @property
    def dtype(self) -> str:
        """The dtype of the layer's weights (Keras 3's alias of `variable_dtype`)."""
        return self._variable_dtype.name

    @property
    def compute_dtype(self) -> str:
        """The dtype of the layer's computations, inputs and outputs."""
        return self._dtype.name

    @property
    def variable_dtype(self) -> str:
        """The dtype the layer creates its weights in."""
        return self._variable_dtype.name

    @property
    def input_dtype(self) -> str:
        """The dtype float inputs are cast to (the compute dtype)."""
        return self._dtype.name

    @property
    def autocast(self) -> bool:
        """Whether float inputs are cast to the compute dtype."""
        return self._autocast

    @autocast.setter
    def autocast(self, value: bool) -> None:
        self._autocast = bool(value)

    def _mixed_input_dtype(self) -> np.dtype | None:
        """What float inputs are cast to under a mixed policy: the compute
        dtype, float32 for a `_KEEPS_FLOAT32` layer (None: not cast)."""
        return self._variable_dtype if self._KEEPS_FLOAT32 else self._dtype

    def _autocast_target(self, current):
        """The dtype weights read as inside this layer's `call`, given the
        enclosing call's (Keras 3's `AutocastScope` rule; None: no cast)."""
        if self._mixed and self._KEEPS_FLOAT32:
            return None
        if current is None:
            return self._dtype if self._mixed else None
        if not self._autocast or not mixed_precision.is_float(self._dtype.name):
            return None
        return self._dtype

    def _policy_call(self, inputs, args, kwargs):
        """`self.call` under the layer's autocast scope; a `_KEEPS_FLOAT32`
        layer under a mixed policy has its float outputs cast to the compute
        dtype."""
        state = mixed_precision.autocast_state
        current = state.dtype
        if current is None and not self._mixed:  # (no policy in sight)
            return self.call(inputs, *args, **kwargs)
        state.dtype = self._autocast_target(current)
        try:
            outputs = self.call(inputs, *args, **kwargs)
        finally:
            state.dtype = current
        if self._mixed and self._KEEPS_FLOAT32:
            outputs = map_structure(self._to_compute_dtype, outputs)
        return outputs

    def _to_compute_dtype(self, x):
        if isinstance(x, Tensor) and x.dtype.is_floating and x._v.dtype != self._dtype:
            return math_ops.cast(x, self._dtype)
        return x

    # -- weights -----------------------------------------------------------------
    def add_weight(
        self,
        name: str | None = None,
        shape: Sequence[SupportsIndex] | None = None,
        dtype: DTypeLike | None = None,
        initializer: InitializerLike | None = None,
        regularizer: RegularizerLike = None,
        trainable: bool = True,
        constraint: ConstraintLike = None,
        autocast: bool = True,
        aggregation: str = "none",
        overwrite_with_gradient: bool = False,
        synchronization: object = None,
        **kwargs: Any,
    ) -> Variable:
        """Creates a weight of this layer (Keras's `add_weight`).

        `name` may come first, positionally, as TF 2's `add_weight("kernel",
        shape=...)` (Keras 3 refuses a positional name). The weight has the
        layer's variable dtype unless `dtype` is given; under a mixed policy a
        float weight with `autocast` reads as the compute dtype inside the
        layer's `call` (`mixed_precision.AutocastVariable`). `aggregation` and
        `synchronization` (TF 2's) are recorded on the Variable, as TF does;
        they matter only to distribution strategies.

        Differences from Keras: `overwrite_with_gradient=True` (float8
        training) raises NotImplementedError.
        """
        if kwargs:
            raise TypeError(
                f"add_weight() got unexpected keyword arguments {sorted(kwargs)} "
                f"(layer {self.name!r}). Keras 3 takes shape, initializer, dtype, "
                "trainable, autocast, regularizer, constraint, aggregation, "
                "overwrite_with_gradient and name."
            )
        if overwrite_with_gradient:
            raise NotImplementedError(
                "add_weight(overwrite_with_gradient=True) (Keras's float8 training) "
                "is not supported by jaxtape; create the weight without it."
            )
        if name is not None and "/" in str(name):
            raise ValueError(
                "Argument `name` must be a string and cannot contain character "
                f"`/`. Received: name={name}"
            )
        shape = () if shape is None else tuple(int(d) for d in shape)
        np_dt = np.dtype(dtypes.np_dtype(dtype or self._variable_dtype.name))
        if initializer is None:
            initializer = "glorot_uniform" if np_dt.kind == "f" else "zeros"
        init = initializers.get(initializer)
        extra = {"aggregation": standardize_aggregation(aggregation)}
        if synchronization is not None:
            extra["synchronization"] = synchronization
        with context.paused_tapes(), self._scope_for_weights():
            with creating_state():  # concrete even inside jaxtape.function
                value = init(shape, dtype=np_dt)
                if not isinstance(value, (Tensor, Variable)):  # NumPy, lists
                    value = Tensor(jnp.asarray(value, np_dt))
            kind = KerasVariable
            if autocast and self._mixed and np_dt.kind == "f":
                kind = mixed_precision.AutocastVariable
            var = kind(
                value,
                trainable=trainable,
                name=name or "Variable",
                dtype=np_dt,
                constraint=constraints.get(constraint),
                **extra,
            )
        self._tracked[f"_weight_{len(self._tracked)}_{var.name}"] = var
        reg = regularizers.get(regularizer)
        if reg is not None:
            self._regularized.append((var, reg))
        return var

    def _scope_for_weights(self):
        scope = context.current_name_scope()
        if not self.name or scope.endswith(self.name + "/"):
            return _null_scope()
        return name_scope(self.name)

    # -- losses ------------------------------------------------------------------
    def add_loss(self, loss) -> None:
        """Adds a loss term (a Tensor, or a zero-argument callable)."""
        self._losses.append(loss)
        if not callable(loss):  # a call's term: the next outer call drops it
            key = id(self)
            _holding_call_losses[key] = weakref.ref(
                self, lambda _, key=key: _holding_call_losses.pop(key, None)
            )

    @property
    def losses(self) -> list:
        out = []
        for layer in self._flatten_layers():
            for term in layer._losses:
                out.append(term() if callable(term) else term)
            for var, reg in layer._regularized:
                out.append(reg(var))
        return out

    # -- building and calling ------------------------------------------------------
    def build(self, input_shape) -> None:
        """Creates the weights; the default creates none."""
        self.built = True

    def call(self, inputs, *args, **kwargs):
        return inputs

    def _maybe_build(self, inputs) -> None:
        if self.built:
            return
        shapes = map_structure(shape_of, inputs)
        if isinstance(inputs, (list, tuple)) and not isinstance(shapes, tuple):
            shapes = list(shapes)
        with context.paused_tapes(), _layer_scope(self.name):
            self.build(
                shapes
                if not isinstance(inputs, (Tensor, KerasTensor))
                else TensorShape(shapes)
            )
        self.built = True

    def _autocast_inputs(self, inputs):
        """Float inputs cast to the layer's compute dtype, silently (as Keras 3
        does; TF 2.0-2.3's notice about it is gone from tf.keras); float32 for
        a `_KEEPS_FLOAT32` layer under a mixed policy."""
        target = self._mixed_input_dtype() if self._mixed else self._dtype

        def cast(x):
            if isinstance(x, Variable):
                x = x.read_value()
            if type(x) is not Tensor:
                # Strings stay host values (NumPy arrays, string tensors): the
                # lookup layers read them.
                if isinstance(x, Tensor) or (
                    isinstance(x, np.ndarray) and x.dtype.kind in "USO"
                ):
                    return x
                try:
                    x = Tensor(device.to_device(to_value(x)))
                except StringInput:  # (a list of str)
                    return x
            dtype = x._v.dtype  # a pending value's too: casting must not compute it
            if (
                self._autocast
                and self._convert_input_args
                and target is not None
                and dtype != target
                and (dtype.kind == "f" or dtype.name == "bfloat16")
            ):
                x = math_ops.cast(x, target)
            return x

        return map_structure(cast, inputs)

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        if any(isinstance(x, KerasTensor) for x in flatten((inputs, args, kwargs))):
            return self._symbolic_call(inputs, *args, **kwargs)
        if inputs is None:  # (Keras's check and wording)
            raise ValueError(
                "Inputs to a layer should be tensors. Got 'None' (of type "
                f"<class 'NoneType'>) as input for layer '{self.name}'. Pass a "
                "tensor or array: `layer(x)`."
            )
        previous_mask = None
        if (self.supports_masking or self._call_takes_mask) and _masks:
            previous_mask = _mask_of(inputs)
            if self._call_takes_mask and kwargs.get("mask") is None:
                if previous_mask is not None:
                    kwargs["mask"] = previous_mask
        if self._mask_args and _masks:
            self._fill_argument_masks(inputs, args, kwargs)
        inputs = self._autocast_inputs(inputs)
        if self.input_spec is not None and isinstance(inputs, Tensor):
            assert_input_compatibility(self, self.input_spec, inputs)
        if not self.built:
            self._maybe_build(inputs)
        training = kwargs.get("training")
        if self._call_takes_training:
            if training is None and _call_ctx.training:
                training = _call_ctx.training[-1]
            kwargs["training"] = training
        else:
            kwargs.pop("training", None)
        outer = not _call_ctx.training
        if outer and _holding_call_losses:  # (no walk when no layer holds any)
            for layer in self._flatten_layers():
                if layer._losses:
                    layer._losses = [t for t in layer._losses if callable(t)]
                _holding_call_losses.pop(id(layer), None)
        _call_ctx.training.append(training)
        name = self.name
        scopes = context.state.name_scope  # (the layer's name scope, pushed)
        if name:
            scopes.append(name)
        try:
            outputs = self._policy_call(inputs, args, kwargs)
        finally:
            _call_ctx.training.pop()
            if name:
                scopes.pop()
        # (For `summary`; set past `__setattr__`: a shape holds no state.)
        self.__dict__["_last_output_shape"] = (
            tuple(outputs._v.shape)
            if type(outputs) is Tensor
            else map_structure(shape_of, outputs)
        )
        if self.supports_masking:
            self._set_mask_metadata(inputs, outputs, previous_mask)
        return outputs

    def _fill_argument_masks(self, inputs, args, kwargs) -> None:
        """Keras 3's rule for calls with several tensor arguments: an argument
        `x` whose `x_mask` is not given gets the Keras mask of `x`."""
        given = [inputs, *args]
        tensors = [x for x in (*given, *kwargs.values()) if isinstance(x, Tensor)]
        if len(tensors) < 2:
            return
        for position, name, mask_position in self._mask_args:
            if mask_position < len(given) or kwargs.get(f"{name}_mask") is not None:
                continue
            value = given[position] if position < len(given) else kwargs.get(name)
            mask = get_keras_mask(value) if isinstance(value, Tensor) else None
            if mask is not None:
                kwargs[f"{name}_mask"] = mask

    def compute_mask(self, inputs, previous_mask=None):
        """The mask of the outputs (Keras's): the input's mask, unchanged."""
        del inputs
        return previous_mask

    def _set_mask_metadata(self, inputs, outputs, previous_mask) -> None:
        """Keras 3's mask propagation: a layer that `supports_masking` attaches
        `compute_mask(inputs, previous_mask)` to its outputs (a layer that does
        not lets the mask go, as Keras 3)."""
        flat_outputs = flatten(outputs)
        if all(get_keras_mask(x) is not None for x in flat_outputs):
            return
        masks = self.compute_mask(inputs, previous_mask)
        if masks is None:
            return
        flat_masks = masks if isinstance(masks, (list, tuple)) else [masks]
        for tensor, mask in zip(flat_outputs, flat_masks):
            if mask is not None and isinstance(tensor, Tensor):
                if get_keras_mask(tensor) is None:
                    set_keras_mask(tensor, mask)

    def _symbolic_call(self, inputs, *args, **kwargs):
        """Functional API: infer the output shape and record the call as a node."""
        first = flatten(inputs)[0]
        if not self.built:
            shapes = map_structure(
                lambda t: tuple(t.shape) if isinstance(t, KerasTensor) else shape_of(t),
                inputs,
            )
            with context.paused_tapes(), _layer_scope(self.name):
                self.build(
                    TensorShape(shapes) if isinstance(inputs, KerasTensor) else shapes
                )
            self.built = True

        def concrete(t):
            if not isinstance(t, KerasTensor):
                return t
            shape = tuple(1 if d is None else d for d in t.shape.as_list())
            # (NumPy's zeros, copied over: `jnp.zeros` compiles per shape)
            return Tensor(jnp.asarray(np.zeros(shape, t.dtype.as_numpy_dtype)))

        with context.paused_tapes():
            # (a symbolic `mask=` too: tf.keras files pass an op's output)
            call_kwargs = {k: map_structure(concrete, v) for k, v in kwargs.items()}
            if self._call_takes_training:
                call_kwargs["training"] = False
            else:  # (Keras takes `training` for every layer)
                call_kwargs.pop("training", None)
            out = self._policy_call(
                self._autocast_inputs(map_structure(concrete, inputs)),
                map_structure(concrete, args),
                call_kwargs,
            )
        batch_unknown = first.shape and first.shape[0] is None
        node = Node(self, inputs, args, kwargs)
        node.index = len(self.__dict__.setdefault("_inbound_nodes", []))
        self._inbound_nodes.append(node)

        def symbolic(t):
            shape = list(t.shape)
            if batch_unknown and shape:
                shape[0] = None
            return KerasTensor(shape, t.dtype, name=self.name, producer=node)

        outputs = map_structure(symbolic, out)
        node.outputs = outputs
        self._last_output_shape = map_structure(lambda t: tuple(t.shape), outputs)
        return outputs

    def compute_output_shape(self, input_shape):
        """The output shape (a structure of them for several outputs) of a
        call on inputs of `input_shape` (a list of shapes: several inputs),
        found by a symbolic call that leaves no node behind, as Keras's."""
        inputs = _symbolic_inputs(input_shape)
        nodes = self.__dict__.get("_inbound_nodes")
        count = None if nodes is None else len(nodes)
        try:
            out = self._symbolic_call(inputs)
        finally:
            if count is None:
                self.__dict__.pop("_inbound_nodes", None)
            else:
                del self._inbound_nodes[count:]
        return map_structure(lambda t: tuple(t.shape), out)

    # -- saving protocol (keras/saving.py calls these; Keras 3's names) ------------
    # Attributes the `.weights.h5` walk leaves out: bookkeeping, not state.
    _NOT_SAVED = frozenset({"_tracked", "_regularized", "_losses"})
    # The module a `.keras` file names for this class, where Keras's is not
    # `keras.layers` (tf.keras loads its legacy layers from theirs only).
    _SAVED_MODULE: str | None = None

    def _saveable_children(self) -> list:
        """`(attribute, value)` for the attributes holding layers or containers,
        in the order Keras's `.weights.h5` walk visits them (its
        `_walk_saveable`: by name, private ones last)."""
        out = [
            (key, value)
            for key, value in vars(self).items()
            if key not in self._NOT_SAVED
            and not key.startswith("__")
            and isinstance(value, (Layer, list, tuple, dict))
        ]
        return sorted(out, key=_saving_order)

    def save_own_variables(self, store) -> None:
        """Writes this layer's own weights into `store` as `'0'`, `'1'`, ...
        (Keras 3's: trainable first, then non-trainable)."""
        for i, v in enumerate(self._own_weights()):
            store[str(i)] = v.numpy()

    def load_own_variables(self, store) -> None:
        """Assigns this layer's own weights from `store` (`save_own_variables`'s
        layout), after checking the count (Keras 3's error)."""
        own = self._own_weights()
        if len(store) != len(own):
            raise ValueError(
                f"Layer '{self.name}' expected {len(own)} variables, but received "
                f"{len(store)} variables during loading. Expected: "
                f"{[v.name for v in own]}"
            )
        for i, v in enumerate(own):
            v.assign(np.asarray(store[str(i)]).astype(v.dtype.as_numpy_dtype))

    def _serialize(self) -> dict:
        """This layer as an entry of a `.keras` config (Keras's
        `serialize_keras_object`): module, class, config, registered name."""
        out = serialization.serialize_layer(self)
        if self._SAVED_MODULE is not None:  # (Keras's legacy layers)
            out["module"] = self._SAVED_MODULE
        return out

    def build_from_config(self, config) -> None:
        """Builds from a `.keras` entry's `build_config` (Keras 3's)."""
        if config and "input_shape" in config:
            self.build(tuple(config["input_shape"]))

    # -- config ------------------------------------------------------------------
    def get_config(self) -> dict:
        """The layer's config. A subclass that does not define `get_config`
        gets Keras 3's auto-config: the constructor arguments it was given
        (when all are numbers, strings, bools, None or lists/tuples/dicts of
        them), so that it saves and loads without one; otherwise
        NotImplementedError, as Keras."""
        cfg = {
            "name": self.name,
            "trainable": self.trainable,
            "dtype": mixed_precision.serialize(self._dtype_policy),
        }
        if self._batch_input_shape is not None:
            cfg["batch_input_shape"] = list(self._batch_input_shape)
        if type(self).get_config is Layer.get_config and type(self) is not Layer:
            return _auto_config(self, cfg)
        return cfg

    @classmethod
    def from_config(cls, config: dict) -> Any:
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


_AUTO_CONFIG_TYPES = (str, int, float, bool, type(None))


def _plain(value) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return isinstance(value, _AUTO_CONFIG_TYPES)


def _captured_arguments(instance, cls, args, kwargs) -> dict | None:
    """Keras's `Operation.__new__`: the constructor's arguments with their
    defaults, when `cls(**config)` could rebuild the layer from them (no
    positional-only or variadic positional ones) and all are plain values;
    else None (and a note for the error)."""
    try:
        signature = inspect.signature(cls.__init__)
        bound = signature.bind(None, *args, **kwargs)
    except (TypeError, ValueError):
        return None
    params = list(signature.parameters.values())[1:]
    if any(p.kind is inspect.Parameter.POSITIONAL_ONLY for p in params):
        instance.__dict__["_auto_config_error_args"] = True
        return None
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    arguments.pop(next(iter(signature.parameters)))  # self
    for p in params:
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            arguments.update(arguments.pop(p.name, {}))
        elif p.kind is inspect.Parameter.VAR_POSITIONAL:
            if arguments.pop(p.name, ()):
                instance.__dict__["_auto_config_error_args"] = True
                return None
    arguments.pop("name", None)
    return arguments if _plain(arguments) else None


def _auto_config(layer, base: dict) -> dict:
    """Keras 3's `Operation.get_config` for a subclass without one."""
    captured = layer.__dict__.get("_auto_config")
    if captured is None:
        why = (
            "was created by passing positional-only or variadic positional "
            "arguments (`*args`) to `__init__()`, which the automatic config "
            "does not support"
            if layer.__dict__.get("_auto_config_error_args")
            else "takes constructor arguments that are not numbers, strings, "
            "booleans, None or lists/dicts of them"
        )
        raise NotImplementedError(
            f"Layer {type(layer).__name__} {why}, and it does not override "
            "`get_config()`. Override `get_config()` (and `from_config()` if "
            "needed) to make it serializable, as Keras requires."
        )
    params = inspect.signature(type(layer).__init__).parameters
    takes_name = "name" in params or any(
        p.kind is inspect.Parameter.VAR_KEYWORD and n == "kwargs"
        for n, p in params.items()
    )
    cfg = {"name": base["name"]} if takes_name else {}
    cfg.update(captured)
    cfg.update({k: v for k, v in base.items() if k != "name"})
    return cfg


def _leaves(value):
    """What `graph.flatten` yields for a tracked attribute, with the common
    cases (one weight or layer, an empty or flat list, a shape tuple) cheap:
    Keras asks for its weights on every training step."""
    if not isinstance(value, (list, tuple, dict)):
        return (value,)
    if type(value) is not dict and not any(
        isinstance(v, (list, tuple, dict)) for v in value
    ):
        return value
    return [leaf for _, leaf in graph.flatten(value)]


def _may_hold_state(value: tuple) -> bool:
    """Whether a tuple holds (or holds a container that may come to hold) a
    weight or a layer: others, shapes and flags, are not walked for weights."""
    for v in value:
        if isinstance(v, (Variable, Layer, list, dict)):
            return True
        if isinstance(v, tuple) and _may_hold_state(v):
            return True
    return False


def _sublayers(obj) -> list:
    """`graph.walk`'s view of the layer tree that `layers` shows (a model's
    `layers` property: its stack, or its graph's layers)."""
    if not isinstance(obj, Layer):
        return []
    return [(layer.name, layer) for layer in obj.layers]


def _tracked_sublayers(obj) -> list:
    """`graph.walk`'s view of the layers that hold weights: every sublayer in
    a layer's tracked attributes (Keras's `_layers`; a functional model's
    `InputLayer`s among them)."""
    if not isinstance(obj, Layer):
        return []
    return [(layer.name, layer) for layer in obj._own_and_sublayers()[1]]


def _saving_order(item) -> str:
    """Keras's `.weights.h5` walk order of attributes: by name, private last."""
    return ("~" + item[0]) if item[0].startswith("_") else item[0]


class _null_scope:  # noqa: N801
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
