"""Keras's core layers: Input, Dense, Embedding, Identity, Lambda, Masking,
TimeDistributed. Layer L5.

Dense runs `activation(x @ kernel + bias)` as ONE recorded op when the
activation is a built-in (`nn_ops.fused_dense`): fewer nodes on the tape, one
fused XLA computation. `_KernelLayer` is what Dense and the convolutions share.
"""

from __future__ import annotations

import base64
import inspect
import marshal
import types
from typing import Any

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import config, dtypes, registry
from jaxtape._src.core.dispatch import op
from jaxtape._src.core.tensor import TensorShape
from jaxtape._src.initializers import initializers
from jaxtape._src.keras import activations, constraints, regularizers, serialization
from jaxtape._src.keras import config as keras_config
from jaxtape._src.keras import ops as keras_ops
from jaxtape._src.keras.keras_tensor import KerasTensor
from jaxtape._src.keras.layers.base import Layer, keras_snake, unique_name
from jaxtape._src.keras.layers.input_spec import InputSpec
from jaxtape._src.ops import array_ops, math_ops, nn_ops, nondiff

__all__ = [
    "Dense",
    "Embedding",
    "Identity",
    "Input",
    "InputLayer",
    "Lambda",
    "Masking",
    "TimeDistributed",
]


class InputLayer(Layer):
    """The entry of a functional model; `keras.Input` returns its KerasTensor.
    Keras's `sparse`, `ragged`, `optional` and `input_tensor` raise
    NotImplementedError when set."""

    def __init__(
        self,
        shape=None,
        batch_size=None,
        dtype=None,
        sparse=None,
        ragged=None,
        batch_shape=None,
        input_tensor=None,
        optional=False,
        name=None,
        **kwargs,
    ):
        for arg, value in (
            ("sparse", sparse),
            ("ragged", ragged),
            ("optional", optional),
            ("input_tensor", input_tensor is not None),
        ):
            if value:
                raise NotImplementedError(
                    f"InputLayer({arg}=...) is not supported by jaxtape; leave "
                    f"`{arg}` unset."
                )
        if batch_shape is not None:
            batch_size, shape = batch_shape[0], batch_shape[1:]
        if shape is None:
            shape = kwargs.pop("input_shape", None)
        if shape is None and "batch_input_shape" in kwargs:
            bis = kwargs.pop("batch_input_shape")
            batch_size, shape = bis[0], bis[1:]
        if shape is None:
            raise ValueError("InputLayer needs a `shape` (without the batch axis).")
        # (floatx, not the dtype policy: Keras's inputs are float32 under mixed)
        dtype = dtype or config.floatx()
        # (other keyword arguments: Layer's, unknown ones refused there)
        super().__init__(name=name or unique_name("input_layer"), dtype=dtype, **kwargs)
        self._batch_input_shape = (batch_size, *tuple(shape))
        self.output = KerasTensor(
            self._batch_input_shape, self._dtype.name, name=self.name
        )
        self._last_output_shape = self._batch_input_shape  # (for `summary`)
        self.built = True

    def get_config(self):
        return {
            "batch_shape": list(self._batch_input_shape),
            # (Keras names a string input's dtype "string", not NumPy's "object")
            "dtype": "string" if self.output.dtype.name == "string" else self.dtype,
            "sparse": False,
            "ragged": False,
            "name": self.name,
            "optional": False,
        }

    @classmethod
    def from_config(cls, config: dict) -> Any:
        cfg = dict(config)
        batch_shape = cfg.pop("batch_shape", None) or cfg.pop("batch_input_shape")
        return cls(shape=batch_shape[1:], batch_size=batch_shape[0], **cfg)


def Input(shape=None, batch_size=None, dtype=None, name=None, **kwargs):  # noqa: N802
    """A symbolic input of a functional model (`keras.Input`)."""
    if shape is None and "batch_shape" in kwargs:
        batch = kwargs.pop("batch_shape")
        batch_size, shape = batch[0], batch[1:]
    layer = InputLayer(
        shape=shape, batch_size=batch_size, dtype=dtype, name=name, **kwargs
    )
    out = layer.output
    out._input_layer = layer
    return out


# -- Dense ----------------------------------------------------------------------
class _KernelLayer(Layer):
    """A kernel, an optional bias and an activation: what Dense and Conv share."""

    def _init_kernel(
        self, activation, use_bias, kernel_initializer, bias_initializer,
        kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint,
        activity_regularizer=None,
    ):  # fmt: skip
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    def _build_kernel(self, kernel_shape, bias_size=None) -> None:
        """`kernel` of `kernel_shape`; `bias` of `bias_size` (by default the
        kernel's last dimension), or None without `use_bias`."""
        self.kernel = self.add_weight(
            "kernel",
            tuple(kernel_shape),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                (kernel_shape[-1] if bias_size is None else bias_size,),
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    def _kernel_config(self) -> dict:
        return {
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            **_serialized(
                self,
                "regularizer",
                regularizers.serialize,
                "kernel",
                "bias",
                "activity",
            ),  # fmt: skip
            **_serialized(self, "constraint", constraints.serialize, "kernel", "bias"),
        }

    def _with_activity(self, outputs):
        """Keras's activity regularization: `activity_regularizer(outputs)`
        divided by the batch size, added to the layer's losses."""
        if self.activity_regularizer is not None:
            add_activity_loss(self, self.activity_regularizer, outputs)
        return outputs


def add_activity_loss(layer: Layer, regularizer, outputs) -> None:
    """Adds `regularizer(outputs) / batch_size` to `layer`'s losses (Keras 3's
    base layer does this for every layer with an `activity_regularizer`)."""
    loss = regularizer(outputs)
    if outputs.ndim > 0 and outputs.shape[0]:
        loss = math_ops.divide(loss, float(outputs.shape[0]))
    layer.add_loss(loss)


def _or_none(serialize, obj):
    """`serialize(obj)`, or None for an unset (None) object."""
    return None if obj is None else serialize(obj)


def _serialized(layer, kind, serialize, *prefixes) -> dict:
    """`{prefix}_{kind}` entries of a config (`kind` "regularizer" or
    "constraint"), serialized; None where unset."""
    out = {}
    for prefix in prefixes:
        obj = getattr(layer, f"{prefix}_{kind}", None)
        out[f"{prefix}_{kind}"] = None if obj is None else serialize(obj)
    return out


def _refuse_lora_and_quantization(
    layer: str, lora_rank=None, lora_alpha=None, quantization_config=None
) -> None:
    """Keras's LoRA and quantization arguments: accepted unset (a tf.keras
    config holds `quantization_config: None`), NotImplementedError when set."""
    if quantization_config is not None:
        raise NotImplementedError(
            f"{layer}(quantization_config=...) (Keras's quantization) is not "
            "supported by jaxtape; leave it unset."
        )
    if lora_rank or lora_alpha:
        raise NotImplementedError(
            f"{layer}(lora_rank=...) (LoRA) is not supported by jaxtape; leave "
            "`lora_rank` and `lora_alpha` unset."
        )


class Dense(_KernelLayer):
    """`activation(inputs @ kernel + bias)` (Keras's `Dense`); LoRA and
    quantization (`lora_rank`, `quantization_config`) raise NotImplementedError."""

    def __init__(
        self,
        units,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        lora_rank=None,
        lora_alpha=None,
        quantization_config=None,
        **kwargs,
    ):
        _refuse_lora_and_quantization(
            "Dense", lora_rank, lora_alpha, quantization_config
        )
        super().__init__(**kwargs)
        if not isinstance(units, (int, np.integer)) or units <= 0:
            raise ValueError(  # (Keras's text)
                "Received an invalid value for `units`, expected a positive "
                f"integer. Received: units={units}"
            )
        self.units = int(units)
        self._init_kernel(
            activation, use_bias, kernel_initializer, bias_initializer,
            kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint,
            activity_regularizer,
        )  # fmt: skip
        self.input_spec = InputSpec(min_ndim=2)
        self.supports_masking = True  # (Keras's: the mask passes through)

    def build(self, input_shape):
        in_dim = input_shape[-1]
        if in_dim is None:
            raise ValueError(
                f"Dense layer {self.name!r}: the last dimension of the inputs must be "
                f"known; got input shape {tuple(input_shape)}."
            )
        self._build_kernel((in_dim, self.units))
        self.input_spec = InputSpec(min_ndim=2, axes={-1: in_dim})
        self.built = True

    def call(self, inputs):
        return self._with_activity(self._dense(inputs))

    def _dense(self, inputs):
        body = activations.fusable_body(self.activation)
        if body is not None or self.activation is activations.linear:
            if self.bias is not None:
                return nn_ops.fused_dense(inputs, self.kernel, self.bias, body)
            return nn_ops.fused_dense_no_bias(inputs, self.kernel, body)
        y = math_ops.matmul(inputs, self.kernel)
        if self.bias is not None:
            y = math_ops.add(y, self.bias)
        return self.activation(y)

    def get_config(self):
        cfg = {
            **super().get_config(),
            "units": self.units,
            **self._kernel_config(),
            "quantization_config": None,
        }
        if self.activity_regularizer is None:  # (Keras's Dense: listed when set)
            del cfg["activity_regularizer"]
        return cfg

    @classmethod
    def from_config(cls, config: dict) -> Any:
        return cls(**config)


class Embedding(Layer):
    """Maps integer indices to rows of an `(input_dim, output_dim)` matrix
    (Keras's `Embedding`: `weights` sets the initial matrix, the constraint
    applies after each optimizer update; LoRA and quantization raise
    NotImplementedError)."""

    _TAKES_INPUT_LENGTH = True  # TF 2's `input_length`: unused, Keras 3 warns

    def __init__(
        self,
        input_dim,
        output_dim,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        embeddings_constraint=None,
        mask_zero=False,
        weights=None,
        lora_rank=None,
        lora_alpha=None,
        quantization_config=None,
        **kwargs,
    ):
        _refuse_lora_and_quantization(
            "Embedding", lora_rank, lora_alpha, quantization_config
        )
        activity_regularizer = kwargs.pop("activity_regularizer", None)
        super().__init__(**kwargs)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self._autocast = False  # (Keras's: indices are not cast to float16)
        # Keras's: index 0 is padding, masked for the layers downstream (an RNN).
        self.mask_zero = bool(mask_zero)
        self.supports_masking = self.mask_zero
        for arg, value in (("input_dim", input_dim), ("output_dim", output_dim)):
            if (
                not isinstance(value, (int, np.integer))
                or isinstance(value, bool)
                or value <= 0
            ):
                raise ValueError(  # (Keras's check and text)
                    f"`{arg}` must be a positive integer. Received: {arg}={value} "
                    f"(of type {type(value).__name__})."
                )
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        init = "random_uniform" if embeddings_initializer == "uniform" else None
        self.embeddings_initializer = initializers.get(init or embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        if weights is not None:  # (Keras's: built now, holding `weights`)
            self.build(None)
            self.set_weights(weights if isinstance(weights, list) else [weights])

    def build(self, input_shape):
        self.embeddings = self.add_weight(
            "embeddings",
            (self.input_dim, self.output_dim),
            initializer=self.embeddings_initializer,
            regularizer=self.embeddings_regularizer,
            constraint=self.embeddings_constraint,
        )
        self.built = True

    def call(self, inputs):
        if inputs.dtype.is_floating:
            inputs = math_ops.cast(inputs, dtypes.int32)
        # Keras's `ops.take`: a negative index counts from the end; one out of
        # range raises (gather's run-time check).
        inputs = array_ops.where(inputs < 0, inputs + self.input_dim, inputs)
        out = array_ops.gather(self.embeddings, inputs)
        if out.dtype.name != self.compute_dtype:  # (Keras casts, mixed policies)
            out = math_ops.cast(out, self.compute_dtype)
        if self.activity_regularizer is not None:
            add_activity_loss(self, self.activity_regularizer, out)
        return out

    def compute_mask(self, inputs, previous_mask=None):
        """`inputs != 0` with `mask_zero` (Keras's), else None."""
        del previous_mask
        if not self.mask_zero:
            return None
        return nondiff.not_equal(inputs, 0)

    def get_config(self):
        return {
            **super().get_config(),
            "input_dim": self.input_dim,
            "output_dim": self.output_dim,
            "embeddings_initializer": initializers.serialize(
                self.embeddings_initializer
            ),
            **_serialized(
                self, "regularizer", regularizers.serialize, "embeddings", "activity"
            ),
            "embeddings_constraint": _or_none(
                constraints.serialize, self.embeddings_constraint
            ),
            "mask_zero": self.mask_zero,
            "quantization_config": None,
        }


@op("Masking", inputs=("x",), jit=True)
def _masking(x, mask_value):
    """Keras's Masking: a step whose features all equal `mask_value` becomes 0."""
    keep = jnp.any(x != mask_value, axis=-1, keepdims=True)
    return jnp.where(keep, x, jnp.zeros((), x.dtype))


class Masking(Layer):
    """Keras's `Masking`: time steps whose features all equal `mask_value` are
    zeroed and masked for the layers downstream (an RNN skips them)."""

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value
        self.supports_masking = True

    def compute_mask(self, inputs, previous_mask=None):
        del previous_mask
        return nondiff.reduce_any(nondiff.not_equal(inputs, self.mask_value), -1)

    def call(self, inputs):
        return _masking(inputs, self.mask_value)

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}


class Identity(Layer):
    """Returns its inputs unchanged (Keras's placeholder layer)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs):
        return inputs


class Lambda(Layer):
    """Wraps a function of the inputs as a layer (Keras's `Lambda`).

    `function(inputs, **arguments)` gets `mask` and `training` too when it
    takes them. `output_shape` (without the batch axis, or a function of the
    input shape) is what `compute_output_shape` returns; `mask` (a value or
    `mask(inputs, previous_mask)`) is what `compute_mask` returns.

    The config holds the functions as Keras's: a Python lambda as its
    marshalled bytecode (`__lambda__`; loading it needs `safe_mode=False` or
    `keras.config.enable_unsafe_deserialization()`, as Keras), a named
    function by its name (found in `custom_objects` or the registered
    objects on load), so `.keras` files move both ways with tf.keras.
    """

    def __init__(
        self, function, output_shape=None, mask=None, arguments=None, **kwargs
    ):
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(
                f"Lambda: `function` must be callable. Received: function={function!r}"
            )
        self.function = function
        self.arguments = dict(arguments or {})
        self.mask = mask
        self.supports_masking = mask is not None
        self._output_shape = output_shape
        params = inspect.signature(function).parameters
        self._fn_takes_mask = "mask" in params
        self._fn_takes_training = "training" in params

    def call(self, inputs, mask=None, training=None):
        kwargs = dict(self.arguments)
        if self._fn_takes_mask:
            kwargs["mask"] = mask
        if self._fn_takes_training:
            kwargs["training"] = training
        return self.function(inputs, **kwargs)

    def compute_mask(self, inputs, previous_mask=None):
        if callable(self.mask):
            return self.mask(inputs, previous_mask)
        return self.mask

    def compute_output_shape(self, input_shape) -> Any:
        if self._output_shape is None:
            return super().compute_output_shape(input_shape)
        if callable(self._output_shape):
            return self._output_shape(input_shape)
        return (tuple(input_shape)[0], *tuple(self._output_shape))

    def get_config(self):
        cfg = {**super().get_config(), "function": _function_config(self.function)}
        if self._output_shape is not None:
            cfg["output_shape"] = (
                _function_config(self._output_shape)
                if callable(self._output_shape)
                else self._output_shape
            )
        if self.mask is not None:
            cfg["mask"] = (
                _function_config(self.mask) if callable(self.mask) else self.mask
            )
        cfg["arguments"] = dict(self.arguments)
        return cfg

    @classmethod
    def from_config(cls, config: dict) -> Any:
        config = dict(config)
        for key in ("function", "output_shape", "mask"):
            config[key] = _function_from_config(config.get(key))
        shape = config.get("output_shape")
        if isinstance(shape, list) and all(
            isinstance(d, (int, type(None))) for d in shape
        ):
            config["output_shape"] = tuple(shape)
        if config["output_shape"] is None:
            del config["output_shape"]
        if config["mask"] is None:
            del config["mask"]
        return cls(**config)


def _function_config(fn) -> Any:
    """Keras's entry for a Lambda's function: a Python lambda as marshalled
    bytecode (`__lambda__`, Keras's `func_dump`), a named one by name."""
    if isinstance(fn, types.LambdaType) and fn.__name__ == "<lambda>":
        closure = fn.__closure__
        return {
            "class_name": "__lambda__",
            "config": {
                "code": base64.b64encode(marshal.dumps(fn.__code__)).decode("ascii"),
                "defaults": fn.__defaults__,
                "closure": None
                if not closure
                else tuple(c.cell_contents for c in closure),
            },
        }
    return serialization.LAYERS.serialize_object(fn)


def _function_from_config(entry) -> Any:
    """The function of a `_function_config` entry (other values as given): a
    lambda only outside safe mode (Keras's ValueError), a named function from
    `custom_objects`/the registered objects (Keras's TypeError if none)."""
    if not isinstance(entry, dict) or "class_name" not in entry:
        return entry
    if entry["class_name"] == "__lambda__":
        # cycle: saving -> layers -> core -> saving
        from jaxtape._src.keras import saving

        return saving._with_lambdas(
            entry, safe=keras_config.in_safe_mode() is not False
        )
    if entry["class_name"] == "function":
        found = registry.get_registered_object(entry.get("config"))
        if found is None:
            raise serialization.LAYERS.not_found("function", entry.get("config"), entry)
        return found
    return entry


class TimeDistributed(Layer):
    """Applies `layer` to every step of a `(batch, steps, ...)` input.

    Differences from Keras 3: the steps are folded into the batch and `layer`
    is called once (Keras 2's way; Keras 3 calls it once per step), so a
    BatchNormalization inside normalizes over all steps of the batch in
    training. Every layer computed per sample gives Keras's result.
    """

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(
                "Please initialize `TimeDistributed` layer with a "
                f"`keras.layers.Layer` instance. Received: {layer}"
            )
        super().__init__(**kwargs)
        self.layer = layer
        self.supports_masking = True

    def _child_shape(self, input_shape):
        if not isinstance(input_shape, (tuple, list)) or len(input_shape) < 3:
            raise ValueError(
                "`TimeDistributed` Layer should be passed an `input_shape` with at "
                f"least 3 dimensions, received: {input_shape}"
            )
        return (input_shape[0], *input_shape[2:])

    def build(self, input_shape):
        child = self._child_shape(tuple(input_shape))
        if not self.layer.built:  # (its weights are named in its own scope)
            self.layer.build(TensorShape(child))
            self.layer.built = True
        self.built = True

    def call(self, inputs, training=None, mask=None):
        shape = tuple(inputs.shape)
        self._child_shape(shape)
        batch, steps = shape[0], shape[1]
        if mask is not None and tuple(mask.shape)[:2] != (batch, steps):
            raise ValueError(
                "`TimeDistributed` Layer should be passed a `mask` of shape "
                f"({batch}, {steps}, ...), received: mask.shape={tuple(mask.shape)}"
            )
        # (-1: a batch size known only at run time, as an export's None batch)
        rows = -1 if batch is None or steps is None else batch * steps
        folded = array_ops.reshape(inputs, (rows, *shape[2:]))
        kwargs = {}
        if self.layer._call_takes_training:
            kwargs["training"] = training
        if mask is not None and "mask" in inspect.signature(self.layer.call).parameters:
            kwargs["mask"] = array_ops.reshape(mask, (rows, *tuple(mask.shape)[2:]))
        out = self.layer(folded, **kwargs)
        batch = -1 if batch is None else batch
        return array_ops.reshape(out, (batch, steps, *tuple(out.shape)[1:]))

    def get_config(self):
        return {
            **super().get_config(),
            "layer": serialization.serialize_layer(self.layer),
        }

    @classmethod
    def from_config(cls, config: dict) -> Any:
        cfg = dict(config)
        layer = cfg.pop("layer")
        if isinstance(layer, dict):
            layer = serialization.deserialize_layer(layer)
        return cls(layer, **cfg)


class KerasOperation(Layer):
    """A `keras.ops` call recorded in a tf.keras functional model's config
    (Keras 3 saves one per op applied to symbolic tensors: an `Embedding`'s
    or `Masking`'s mask is `ops.not_equal`), run here as a layer calling
    jaxtape's `keras.ops` function of that name; saved back under Keras's
    module and class, so the file loads in tf.keras again."""

    def __init__(self, module, class_name, op_config=None, **kwargs):
        super().__init__(**kwargs)
        self._autocast = False
        family = module.rsplit(".", 1)[-1]
        fn = getattr(getattr(keras_ops, family, None), keras_snake(class_name), None)
        if fn is None:
            raise NotImplementedError(
                f"The Keras operation {module}.{class_name} of this model is not "
                "supported by jaxtape's keras.ops yet."
            )
        self._fn, self._module, self._class_name = fn, module, class_name
        self._op_config = dict(op_config or {})

    @classmethod
    def from_entry(cls, entry: dict) -> KerasOperation:
        """The operation of a functional model config's entry."""
        config = dict(entry.get("config") or {})
        name = config.pop("name", None) or entry.get("name")
        return cls(entry["module"], entry["class_name"], config, name=name)

    def call(self, inputs, *args):
        return self._fn(inputs, *args, **self._op_config)

    def _serialize(self) -> dict:
        return {
            "module": self._module,
            "class_name": self._class_name,
            "config": {"name": self.name, **self._op_config},
            "registered_name": self._class_name,
        }
