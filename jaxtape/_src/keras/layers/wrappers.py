"""Keras 3's `Wrapper`, `ReversibleEmbedding`, `HashedCrossing`, `JaxLayer`
and `FlaxLayer`. Layer L5.

`JaxLayer` and `FlaxLayer` run a pure JAX function (or a `flax.linen`
module's `apply`) as one recorded jaxtape op: its parameters and state are
the layer's Variables, so a `GradientTape` differentiates through the JAX
function (JAX's own autodiff), and `jaxtape.function` compiles it with the
rest of the step. No jax2tf conversion is involved (tf.keras needs one to run
JAX code on TF); everything else follows Keras's `keras/src/utils/jax_layer.py`.
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import registry
from jaxtape._src.core.dispatch import op
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.initializers import initializers
from jaxtape._src.keras import constraints, regularizers, serialization
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.layers.core import Embedding
from jaxtape._src.keras.layers.preprocessing.farmhash import fingerprint64
from jaxtape._src.keras.layers.preprocessing.lookup import (
    _encoded,
    _host,
    _host_call,
)
from jaxtape._src.keras.layers.seed_generator import SeedStream
from jaxtape._src.state.random_ops import next_key
from jaxtape._src.state.scope import creating_state

__all__ = [
    "FlaxLayer",
    "HashedCrossing",
    "JaxLayer",
    "ReversibleEmbedding",
    "Wrapper",
    "TorchModuleWrapper",
]


# -- Wrapper ------------------------------------------------------------------------
class Wrapper(Layer):
    """Keras's abstract base of the layers that wrap one layer (`self.layer`):
    builds the wrapped layer on the same input shape and serializes it in its
    config under `"layer"`. Subclasses implement `call`."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(
                f"Layer {layer} supplied to Wrapper isn't a supported layer type. "
                "Please ensure wrapped layer is a valid Keras layer."
            )
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape=None):
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True
        self.built = True

    def call(self, inputs, *args, **kwargs):
        raise NotImplementedError(
            f"Layer {type(self).__name__} does not have a `call()` method "
            "implemented: `Wrapper` is an abstract base; subclass it and "
            "implement `call` (e.g. `return self.layer(inputs)`)."
        )

    def get_config(self):
        return {
            **super().get_config(),
            "layer": serialization.serialize_layer(self.layer),
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        cfg = dict(config)
        layer = cfg.pop("layer")
        if isinstance(layer, dict):
            layer = serialization.deserialize_layer(layer, custom_objects)
        return cls(layer, **cfg)


# -- ReversibleEmbedding ------------------------------------------------------------
@op("ReversibleEmbedding", inputs=("x", "kernel"), jit=True)
def _reverse_logits(x, kernel, transpose, dtype, soft_cap):
    """`x @ kernel` (the embeddings transposed when tied), optionally cast to
    `dtype` first, then `tanh(logits / cap) * cap` (Keras's logit soft cap)."""
    if transpose:
        kernel = kernel.T
    if dtype is not None:
        x, kernel = x.astype(dtype), kernel.astype(dtype)
    logits = x @ kernel
    if soft_cap is not None:
        logits = jnp.tanh(logits / soft_cap) * soft_cap
    return logits


class ReversibleEmbedding(Embedding):
    """Keras's `ReversibleEmbedding`: an `Embedding` that can also map vectors
    back to vocabulary logits, `call(x, reverse=True)` = `x @ embeddings.T`
    (tied, the default) or `x @ reverse_embeddings` (`tie_weights=False`, an
    `(output_dim, input_dim)` weight), optionally computed in `reverse_dtype`
    and soft-capped (`tanh(logits / cap) * cap`). Quantization (Keras's int8 /
    int4 modes) is not supported: `quantization_config` must be None.
    """

    def __init__(
        self,
        input_dim,
        output_dim,
        tie_weights=True,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        embeddings_constraint=None,
        mask_zero=False,
        reverse_dtype=None,
        logit_soft_cap=None,
        **kwargs,
    ):
        if kwargs.pop("quantization_config", None) is not None:
            raise NotImplementedError(
                "ReversibleEmbedding(quantization_config=...) (Keras's int8/int4 "
                "quantization) is not supported by jaxtape; leave it None."
            )
        self._activity = kwargs.pop("activity_regularizer", None)
        super().__init__(
            input_dim,
            output_dim,
            embeddings_initializer=embeddings_initializer,
            embeddings_regularizer=embeddings_regularizer,
            mask_zero=mask_zero,
            **kwargs,
        )
        if self._activity is not None:
            raise NotImplementedError(
                "ReversibleEmbedding(activity_regularizer=...) is not supported "
                "by jaxtape; add the penalty with `add_loss` instead."
            )
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.tie_weights = bool(tie_weights)
        self.reverse_dtype = reverse_dtype
        self.logit_soft_cap = logit_soft_cap

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(
            "embeddings",
            (self.input_dim, self.output_dim),
            initializer=self.embeddings_initializer,
            regularizer=self.embeddings_regularizer,
            constraint=self.embeddings_constraint,
        )
        if not self.tie_weights:
            self.reverse_embeddings = self.add_weight(
                "reverse_embeddings",
                (self.output_dim, self.input_dim),
                initializer=self.embeddings_initializer,
            )
        self.built = True

    def call(self, inputs, reverse=False):
        if not reverse:
            return super().call(inputs)
        if inputs.dtype.is_integer:
            raise TypeError(
                "ReversibleEmbedding(reverse=True) takes float vectors of size "
                f"output_dim={self.output_dim}; got dtype {inputs.dtype.name}."
            )
        kernel = self.embeddings if self.tie_weights else self.reverse_embeddings
        dtype = None
        if self.reverse_dtype is not None:
            dtype = np.dtype(getattr(self.reverse_dtype, "name", self.reverse_dtype))
        cap = None if self.logit_soft_cap is None else float(self.logit_soft_cap)
        return _reverse_logits(inputs, kernel, self.tie_weights, dtype, cap)

    def compute_mask(self, inputs, previous_mask=None):
        """The forward lookup's mask (`mask_zero`, integer ids), which Keras
        sets on its result; none for the reverse projection (float inputs)."""
        if getattr(inputs, "dtype", None) is not None and inputs.dtype.is_integer:
            return super().compute_mask(inputs, previous_mask)
        return None

    def compute_output_shape(self, input_shape, reverse=False):
        shape = list(input_shape)
        if reverse:
            shape[-1] = self.input_dim
        else:
            shape += [self.output_dim]
        return tuple(shape)

    def get_config(self):
        cfg = super().get_config()
        mask_zero = cfg.pop("mask_zero")
        cfg.update(
            {
                "embeddings_initializer": initializers.serialize(
                    self.embeddings_initializer
                ),
                "embeddings_regularizer": regularizers.serialize(
                    self.embeddings_regularizer
                ),
                "activity_regularizer": None,
                "embeddings_constraint": constraints.serialize(
                    self.embeddings_constraint
                ),
                "mask_zero": mask_zero,
                "quantization_config": None,
                "tie_weights": self.tie_weights,
                "reverse_dtype": self.reverse_dtype,
                "logit_soft_cap": self.logit_soft_cap,
            }
        )
        return cfg


# -- HashedCrossing -----------------------------------------------------------------
_MASK64 = (1 << 64) - 1
_MUL = 0xC6A4A7935BD1E995
_SEED = 0xDECAFCAFFE  # TF's `kInitialHashSeed` of SparseCrossHashed


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def _fingerprint_cat64(fp1: int, fp2: int) -> int:
    """TF's `FingerprintCat64` (tensorflow/core/platform/fingerprint.h)."""
    result = fp1 ^ _MUL
    result ^= (_shift_mix((fp2 * _MUL) & _MASK64) * _MUL) & _MASK64
    result = (result * _MUL) & _MASK64
    result = (_shift_mix(result) * _MUL) & _MASK64
    return _shift_mix(result)


def _feature_hash(value) -> int:
    """SparseCrossHashed's per-feature hash: integers as their 64-bit value,
    strings as FarmHash `Fingerprint64` of their UTF-8 bytes."""
    if isinstance(value, str):
        return fingerprint64(value.encode("utf-8"))
    return int(value) & _MASK64


def _cross_hashed(columns: list, num_bins: int) -> np.ndarray:
    """TF's `sparse.cross_hashed` of equal-length 1-D feature columns."""
    out = []
    for row in zip(*(c.tolist() for c in columns)):
        h = _SEED
        for value in row:
            h = _fingerprint_cat64(h, _feature_hash(value))
        out.append(h % num_bins)
    return np.asarray(out, np.int64)


class HashedCrossing(Layer):
    """Keras's `HashedCrossing`: crosses two or more scalar features (integer
    or string) by TF's `sparse.cross_hashed` into `num_bins` bins, so the bins
    are tf.keras's. `output_mode` `"int"` (int64) or `"one_hot"`. Inputs have
    shape `()`, `(batch,)` or `(batch, 1)`.

    Runs on the host, as Keras runs it (on TF's CPU ops; Keras marks it not
    jit-compatible): call it in the input pipeline or eagerly, not inside
    `jaxtape.function`. `sparse=True` (a SparseTensor) raises
    NotImplementedError.
    """

    _RUNS_ON_HOST = True

    def __init__(self, num_bins, output_mode="int", sparse=False, name=None,
                 dtype=None, **kwargs):  # fmt: skip
        if output_mode == "int" and dtype is None:
            dtype = "int64"
        super().__init__(name=name, dtype=dtype, **kwargs)
        if sparse:
            raise NotImplementedError(
                "HashedCrossing(sparse=True) (a SparseTensor result) is not "
                "supported by jaxtape; leave `sparse=False`."
            )
        if output_mode not in ("int", "one_hot"):
            raise ValueError(
                "Unknown value for `output_mode`. Allowed values are "
                f"('int', 'one_hot'). Received: output_mode={output_mode}"
            )
        self.num_bins = num_bins
        self.output_mode = output_mode
        self.sparse = sparse
        self._autocast = False

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        return _host_call(self, inputs, self.call)

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(
                "`HashedCrossing` should be called on a list or tuple of inputs. "
                f"Received: inputs={inputs}"
            )
        if len(inputs) < 2:
            raise ValueError(
                "`HashedCrossing` should be called on at least two inputs. "
                f"Received: inputs={inputs}"
            )
        values = [_host(self, x) for x in inputs]
        first = values[0].shape
        rank = len(first)
        if rank > 2 or (rank == 2 and first[-1] != 1):
            raise ValueError(
                "All `HashedCrossing` inputs should have shape `()`, "
                f"`(batch_size)` or `(batch_size, 1)`. Received: inputs={inputs}"
            )
        if not all(v.shape == first for v in values[1:]):
            raise ValueError(
                "All `HashedCrossing` inputs should have equal shape. "
                f"Received: inputs={inputs}"
            )
        if not all(v.dtype.kind in "iuU" for v in values):
            raise ValueError(
                "All `HashedCrossing` inputs should have an integer or string "
                f"dtype. Received: inputs={inputs}"
            )
        out = _cross_hashed([v.reshape(-1) for v in values], self.num_bins)
        return _encoded(self, out.reshape(first), self.num_bins, self.dtype)

    def compute_output_shape(self, input_shape):
        first = tuple(input_shape[0])
        if self.output_mode == "int":
            return first
        if first and first[-1] == 1:
            return first[:-1] + (self.num_bins,)
        return first + (self.num_bins,)

    def get_config(self):
        return {
            "num_bins": self.num_bins,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
            "name": self.name,
            "dtype": self.dtype,
        }


# -- JaxLayer / FlaxLayer -----------------------------------------------------------
class _JaxCall:
    """The static part of one JaxLayer call: the function, the order of its
    arguments, the input tree and the training flag (hashable, for the op)."""

    __slots__ = ("fn", "names", "tree", "training", "has_state")

    def __init__(self, fn, names, tree, training, has_state):
        self.fn, self.names, self.tree = fn, names, tree
        self.training, self.has_state = training, has_state

    def _key(self):
        return (self.fn, self.names, self.tree, self.training, self.has_state)

    def __eq__(self, other):
        return isinstance(other, _JaxCall) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def call(self, leaves):
        """`fn` on the arguments unflattened from `leaves`."""
        args = jax.tree.unflatten(self.tree, list(leaves))  # {name: argument}
        return self.fn(
            *[self.training if n == "training" else args[n] for n in self.names]
        )

    def run(self, leaves):
        """`fn`'s outputs' leaves, flat."""
        return tuple(jax.tree.leaves(self.call(leaves)))


@functools.lru_cache(maxsize=256)
def _compiled(call):
    """`call.run` compiled: one XLA program per call, not one per JAX op
    (equal calls share it)."""
    return jax.jit(call.run)


@op("JaxLayer", inputs="values", defer=False)
def _jax_call(values, call):
    """One call of a JaxLayer's pure JAX function on its flattened arguments."""
    return _compiled(call)(tuple(values))


def _check_signature(fn, fn_name, allowed, required) -> tuple:
    """Keras's `_validate_signature`: the parameter names, in order."""
    parameters = inspect.signature(fn).parameters
    for name in required:
        if name not in parameters:
            raise ValueError(f"Missing required argument in `{fn_name}`: `{name}`")
    for name in parameters:
        if name not in allowed:
            raise ValueError(
                f"Unsupported argument in `{fn_name}`: `{name}`, supported "
                f"arguments are `{'`, `'.join(allowed)}`"
            )
    return tuple(parameters)


def _is_leaf_value(value) -> bool:
    return isinstance(value, (np.ndarray, np.generic, jax.Array, Tensor)) or (
        isinstance(value, (bool, int, float))
    )


class JaxLayer(Layer):
    """Keras's `JaxLayer`: a layer around a pure JAX function.

    `call_fn(params, state, rng, inputs, training)` (any subset, `inputs`
    required) is called with the current values of the layer's Variables:
    `params` (trainable) and `state` (non-trainable; with a `state` argument
    `call_fn` returns `(outputs, new_state)` and the state Variables take the
    new values). They come from `params`/`state` given here, or from
    `init_fn(rng, inputs, training)` at build time, called on ones of the
    input shape (unknown sizes as 1). `rng` is fresh raw key data from the
    layer's `seed` in training (None otherwise), as Keras.

    The whole call is one recorded op, so GradientTape gives the gradients of
    the parameters (and inputs) through JAX's autodiff, and the layer runs
    inside `jaxtape.function`. `native_serialization_platforms` (tf.keras's
    jax2tf export option) is kept in the config; jaxtape runs the JAX
    function directly, so it has nothing to configure.
    """

    def __init__(
        self,
        call_fn,
        init_fn=None,
        params=None,
        state=None,
        seed=None,
        native_serialization_platforms=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.call_fn = call_fn
        self.init_fn = init_fn
        self.seed = seed
        self.native_serialization_platforms = native_serialization_platforms
        self.params, self.state = None, None
        self._set_variables(params, state)
        self.call_fn_arguments = _check_signature(
            call_fn,
            "call_fn",
            {"params", "state", "rng", "inputs", "training"},
            {"inputs"},
        )
        self.call_fn_has_params = "params" in self.call_fn_arguments
        self.call_fn_has_state = "state" in self.call_fn_arguments
        has_rng = "rng" in self.call_fn_arguments
        self.seed_generator = SeedStream(seed) if has_rng else None
        if (
            init_fn is None
            and params is None
            and state is None
            and (self.call_fn_has_params or self.call_fn_has_state)
        ):
            raise ValueError(
                "`init_fn`, `params` and `state` cannot all be `None` when "
                "`call_fn` takes a `params` or a `state` argument."
            )
        if init_fn is not None:
            self.init_fn_arguments = _check_signature(
                init_fn, "init_fn", {"rng", "inputs", "training"}, {"inputs"}
            )
        if self.params is not None or self.state is not None:
            self.built = True

    # -- variables -------------------------------------------------------------------
    def _make_variables(self, values, trainable):
        """The tree of `values` with every array or number as a weight (a
        float one in the layer's dtype, as Keras)."""

        def make(value):
            if not _is_leaf_value(value):
                return value
            count = self.__dict__.get("_n_weights", 0)
            self.__dict__["_n_weights"] = count + 1
            array = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
            dtype = None if array.dtype.kind == "f" else array.dtype.name
            return self.add_weight(
                name=f"variable_{count}" if count else "variable",
                shape=array.shape,
                initializer=lambda shape, dtype=None, a=array: a.astype(
                    dtype or a.dtype
                ),
                dtype=dtype,
                trainable=trainable,
            )

        return jax.tree.map(make, values)

    def _set_variables(self, params, state):
        with creating_state():
            self.params = self._make_variables(params, True)
            self.state = self._make_variables(state, False)

    def _init_rng(self) -> Any:
        return jax.random.key_data(next_key(None))

    def _call_rng(self, training) -> Any:
        if not training or self.seed_generator is None:
            return None
        return self.seed_generator.next()

    def build(self, input_shape):
        if (
            self.params is None
            and self.state is None
            and (self.call_fn_has_params or self.call_fn_has_state)
        ):
            self._initialize_weights(input_shape)
        self.built = True

    def _initialize_weights(self, input_shape):
        def ones(shape):
            return jnp.ones([1 if d is None else int(d) for d in shape], "float32")

        if _is_shape(input_shape):
            init_inputs = ones(input_shape)
        else:
            init_inputs = jax.tree.map(ones, input_shape, is_leaf=_is_shape)
        names = self.init_fn_arguments
        init_fn = self.init_fn

        def init(arrays):  # (compiled: one XLA program, not one per JAX op)
            return init_fn(*[arrays.get(n, True) for n in names])  # pyright: ignore[reportOptionalCall]

        with creating_state():
            arrays = {}
            if "rng" in names:
                arrays["rng"] = self._init_rng()
            if "inputs" in names:
                arrays["inputs"] = init_inputs
            result = jax.jit(init)(arrays)
        params, state = result if self.call_fn_has_state else (result, None)
        self._set_variables(params, state)

    # -- calling ---------------------------------------------------------------------
    def call(self, inputs, training=False):
        arguments = {
            "params": self.params,
            "state": self.state,
            "rng": self._call_rng(training),
            "inputs": inputs,
        }
        names = tuple(n for n in self.call_fn_arguments if n != "training")
        by_name = {n: arguments[n] for n in names}
        leaves, tree = jax.tree.flatten(by_name, is_leaf=_is_tensor_like)
        spec = _JaxCall(
            self.call_fn,
            tuple(self.call_fn_arguments),
            tree,
            bool(training),
            self.call_fn_has_state,
        )
        out_tree = self._out_tree(spec, leaves)
        flat = _jax_call(leaves, spec)
        result = jax.tree.unflatten(out_tree, list(flat))
        if not self.call_fn_has_state:
            return result
        outputs, new_state = result
        state_vars, state_tree = jax.tree.flatten(self.state, is_leaf=_is_tensor_like)
        new_values, new_tree = jax.tree.flatten(new_state, is_leaf=_is_tensor_like)
        if new_tree != state_tree:
            raise ValueError(
                "Structure mismatch: the structure of the state returned by "
                "`call` does not match the structure of the state at "
                "initialization time."
            )
        for var, value in zip(state_vars, new_values):
            var.assign(value)
        return outputs

    def _out_tree(self, spec, leaves):
        """The tree of `call_fn`'s outputs (from JAX's shape evaluation,
        cached per input shapes)."""
        cache = self.__dict__.setdefault("_out_trees", {})
        key = (spec, tuple((tuple(v.shape), str(v.dtype)) for v in leaves))
        if key not in cache:
            avals = [
                jax.ShapeDtypeStruct(tuple(v.shape), np.dtype(_np_dtype(v)))
                for v in leaves
            ]

            cache[key] = jax.tree.structure(
                jax.eval_shape(lambda *vals: spec.call(vals), *avals)
            )
        return cache[key]

    def get_config(self):
        return {
            **super().get_config(),
            "call_fn": _serialize_fn(self.call_fn),
            "init_fn": _serialize_fn(self.init_fn),
            "native_serialization_platforms": self.native_serialization_platforms,
        }

    @classmethod
    def from_config(cls, config):
        cfg = dict(config)
        for key in ("call_fn", "init_fn"):
            if isinstance(cfg.get(key), dict):
                cfg[key] = _deserialize_fn(cfg[key])
        return cls(**cfg)


def _is_shape(value) -> bool:
    return (
        isinstance(value, (tuple, list))
        and all(d is None or isinstance(d, (int, np.integer)) for d in value)
    ) or type(value).__name__ == "TensorShape"


def _is_tensor_like(value) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


def _np_dtype(value):
    dtype = value.dtype
    return getattr(dtype, "as_numpy_dtype", dtype)


def _serialize_fn(fn):
    """Keras's entry for a plain function: found again by its registered name."""
    if fn is None:
        return None
    registered = registry.get_registered_name(fn)
    return {
        "module": "builtins",
        "class_name": "function",
        "config": registered,
        "registered_name": "function",
    }


def _deserialize_fn(entry):
    fn = registry.get_registered_object(entry["config"])
    if fn is None:
        raise TypeError(
            f"Could not locate function '{entry['config']}'. Register it with "
            "`keras.saving.register_keras_serializable()` or pass it in "
            "`custom_objects`."
        )
    return fn


class FlaxLayer(JaxLayer):
    """Keras's `FlaxLayer`: a `flax.linen` module as a layer.

    The module's `"params"` collection becomes trainable Variables and its
    other collections (e.g. `batch_stats`) non-trainable state, updated after
    every call (`mutable` = all but params). `method` picks the module method
    (default `__call__`); one with a `training` argument gets the layer's.
    In training a fresh `"dropout"` key is passed (from `seed`). Weights come
    from `variables` or from `module.init` at build time.
    """

    def __init__(self, module, method=None, variables=None, **kwargs):
        from flax.linen import DenyList  # lazy: flax.linen adds ~0.15 s to import

        self.module = module
        self.method = method
        mutable = DenyList(["params"])

        def apply_with_training(params, state, rng, inputs, training):
            return self.module.apply(
                self._params_and_state_to_variables(params, state),
                inputs,
                rngs=rng,
                method=self.method,
                mutable=mutable,
                training=training,
            )

        def apply_without_training(params, state, rng, inputs):
            return self.module.apply(
                self._params_and_state_to_variables(params, state),
                inputs,
                rngs=rng,
                method=self.method,
                mutable=mutable,
            )

        def init_with_training(rng, inputs, training):
            return self._variables_to_params_and_state(
                self.module.init(rng, inputs, method=self.method, training=training)
            )

        def init_without_training(rng, inputs):
            return self._variables_to_params_and_state(
                self.module.init(rng, inputs, method=self.method)
            )

        target = method or module.__call__
        if isinstance(target, str):
            target = getattr(module, target)
        if "training" in inspect.signature(target).parameters:
            call_fn, init_fn = apply_with_training, init_with_training
        else:
            call_fn, init_fn = apply_without_training, init_without_training
        params, state = self._variables_to_params_and_state(variables)
        super().__init__(
            call_fn=call_fn, init_fn=init_fn, params=params, state=state, **kwargs
        )

    def _params_and_state_to_variables(self, params, state):
        if params:
            return {**params, **state} if state else params
        return state or {}

    def _variables_to_params_and_state(self, variables):
        if variables is None:
            return None, None
        if "params" not in variables:
            return {}, variables
        if len(variables) == 1:
            return variables, {}
        params = {"params": variables["params"]}
        state = {k: v for k, v in variables.items() if k != "params"}
        return params, state

    def _init_rng(self):
        return {"params": super()._init_rng(), "dropout": super()._init_rng()}

    def _call_rng(self, training):
        if training and self.seed_generator is not None:
            return {"dropout": self.seed_generator.next()}
        return {}

    def get_config(self):
        raise TypeError(
            f"Cannot serialize object {self.module!r} of type "
            f"{type(self.module)}: jaxtape does not serialize flax modules "
            "into Keras configs. Save the weights with `save_weights` and "
            "rebuild the FlaxLayer in code."
        )


class TorchModuleWrapper(Layer):
    """Keras's `TorchModuleWrapper` (a `torch.nn.Module` as a layer) needs
    Keras's torch backend, which jaxtape does not have: without PyTorch
    installed it raises ModuleNotFoundError, as tf.keras does; with it,
    NotImplementedError. Wrap JAX code with `JaxLayer`/`FlaxLayer` instead."""

    def __init__(self, module, name=None, output_shape=None, **kwargs):
        if importlib.util.find_spec("torch") is None:
            raise ModuleNotFoundError("No module named 'torch'", name="torch")
        raise NotImplementedError(
            "TorchModuleWrapper runs a torch.nn.Module, which needs Keras's torch "
            "backend; jaxtape runs on JAX. Port the module, or wrap JAX code with "
            "`keras.layers.JaxLayer` / `FlaxLayer`."
        )
