"""Keras's activation layers. Layer L5.

`Activation`, `ReLU` (`max_value`, `negative_slope`, `threshold`),
`LeakyReLU`, `PReLU` (a learned slope), `ELU`, `Softmax` (`axis`, an
optional `mask`) and tf.keras's legacy `ThresholdedReLU`, with Keras's
argument checks and error texts.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp

from jaxtape._src.core.dispatch import op
from jaxtape._src.initializers import initializers
from jaxtape._src.keras import activations, constraints, regularizers
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.layers.core import _or_none
from jaxtape._src.keras.layers.input_spec import InputSpec

__all__ = [
    "ELU",
    "Activation",
    "LeakyReLU",
    "PReLU",
    "ReLU",
    "Softmax",
    "ThresholdedReLU",
]


class Activation(Layer):
    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)
        self.supports_masking = True

    def call(self, inputs):
        return self.activation(inputs)

    def get_config(self):
        return {
            **super().get_config(),
            "activation": activations.serialize(self.activation),
        }


class ReLU(Layer):
    """Keras's `relu` with `max_value`, `negative_slope` and `threshold`."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0.0:
            raise ValueError(
                "max_value of a ReLU layer cannot be a negative value. Received: "
                f"max_value={max_value}"
            )
        if negative_slope is None or negative_slope < 0.0:
            raise ValueError(
                "negative_slope of a ReLU layer cannot be None or a negative value. "
                f"Received: negative_slope={negative_slope}"
            )
        if threshold is None or threshold < 0.0:
            raise ValueError(
                "threshold of a ReLU layer cannot be None or a negative value. "
                f"Received: threshold={threshold}"
            )
        self.max_value, self.negative_slope = max_value, negative_slope
        self.threshold = threshold
        self.supports_masking = True

    def call(self, inputs):
        return activations.relu(
            inputs, self.negative_slope, self.max_value, self.threshold
        )

    def get_config(self):
        return {
            **super().get_config(),
            "max_value": self.max_value,
            "negative_slope": self.negative_slope,
            "threshold": self.threshold,
        }


class LeakyReLU(Layer):
    """`x` if `x >= 0` else `negative_slope * x` (Keras's default slope 0.3;
    TF 2's `alpha` is accepted with Keras 3's deprecation warning)."""

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
            warnings.warn(
                "Argument `alpha` is deprecated. Use `negative_slope` instead.",
                stacklevel=2,
            )
        super().__init__(**kwargs)
        if negative_slope is None or negative_slope < 0:
            raise ValueError(
                "The negative_slope value of a Leaky ReLU layer cannot be None or "
                "negative value. Expected a float. Received: "
                f"negative_slope={negative_slope}"
            )
        self.negative_slope = negative_slope
        self.supports_masking = True

    def call(self, inputs):
        return activations.leaky_relu(inputs, self.negative_slope)

    def get_config(self):
        return {**super().get_config(), "negative_slope": self.negative_slope}


class ELU(Layer):
    """`x` if `x > 0` else `alpha * (exp(x) - 1)`."""

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha
        self.supports_masking = True

    def call(self, inputs):
        return activations.elu(inputs, self.alpha)

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


@op("ThresholdedRelu", inputs=("x",), jit=True)
def _thresholded_relu(x, theta):
    return jnp.where(x > theta, x, jnp.zeros((), x.dtype))


class ThresholdedReLU(Layer):
    """`x` where `x > theta`, else 0 (tf.keras's legacy layer, kept in TF 2.21)."""

    _SAVED_MODULE = "keras._legacy.layers"

    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        if theta is None:
            raise ValueError(
                "Theta of a Thresholded ReLU layer cannot be None, expecting a "
                f"float. Received: {theta}"
            )
        if theta < 0:
            raise ValueError(
                "The theta value of a Thresholded ReLU layer should be >=0. "
                f"Received: {theta}"
            )
        self.theta = float(theta)
        self.supports_masking = True

    def call(self, inputs):
        return _thresholded_relu(inputs, self.theta)

    def get_config(self):
        return {**super().get_config(), "theta": self.theta}


@op("PRelu", inputs=("x", "alpha"), jit=True)
def _prelu(x, alpha):
    """Keras's `relu(x) - alpha * relu(-x)`."""
    return jax.nn.relu(x) - alpha * jax.nn.relu(-x)  # (relu's gradient: 0 at 0)


class PReLU(Layer):
    """Leaky ReLU with a learned slope `alpha` per input position (shared
    along `shared_axes`, counted from 1 as Keras)."""

    def __init__(
        self,
        alpha_initializer="Zeros",
        alpha_regularizer=None,
        alpha_constraint=None,
        shared_axes=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif not isinstance(shared_axes, (list, tuple)):
            self.shared_axes = [shared_axes]
        else:
            self.shared_axes = list(shared_axes)

    def build(self, input_shape):
        param_shape = list(input_shape[1:])
        for i in self.shared_axes or ():
            param_shape[i - 1] = 1
        self.alpha = self.add_weight(
            "alpha",
            param_shape,
            initializer=self.alpha_initializer,
            regularizer=self.alpha_regularizer,
            constraint=self.alpha_constraint,
        )
        axes = {
            i: input_shape[i]
            for i in range(1, len(input_shape))
            if self.shared_axes and i not in self.shared_axes
        }
        self.input_spec = InputSpec(ndim=len(input_shape), axes=axes)
        self.built = True

    def call(self, inputs):
        return _prelu(inputs, self.alpha)

    def get_config(self):
        reg = self.alpha_regularizer
        return {
            **super().get_config(),
            "alpha_initializer": initializers.serialize(self.alpha_initializer),
            "alpha_regularizer": None if reg is None else regularizers.serialize(reg),
            "alpha_constraint": _or_none(constraints.serialize, self.alpha_constraint),
            "shared_axes": self.shared_axes,
        }


def _large_negative_number(dtype):
    """Keras's stand-in for -inf at masked positions."""
    return -3e4 if dtype == jnp.float16 else -1e9


def _softmax_body(x, mask, axis):
    """Keras's Softmax layer: masked positions (mask false, or <= 0.5) get
    a large negative logit and a zero output; a tuple `axis` normalizes over
    all its axes."""
    if mask is not None:
        if mask.dtype != jnp.bool_:
            mask = mask > 0.5
        x = jnp.where(mask, x, _large_negative_number(x.dtype))
    if isinstance(axis, tuple):
        out = jnp.exp(x - jax.nn.logsumexp(x, axis=axis, keepdims=True))
    else:
        out = jax.nn.softmax(x, axis=axis)
    if mask is not None:
        out = jnp.where(mask, out, 0.0)
    return out.astype(x.dtype)


@op("MaskedSoftmax", inputs=("x", "mask"), jit=True)
def _masked_softmax(x, mask, axis):
    return _softmax_body(x, mask, axis)


@op("Softmax", inputs=("x",), jit=True)
def _softmax(x, axis):
    return _softmax_body(x, None, axis)


class Softmax(Layer):
    """Softmax over `axis` (an int or a tuple of axes); with a `mask`, masked
    positions are left out and give 0, as Keras's layer."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is not None:
            mshape, ishape = tuple(mask.shape), tuple(inputs.shape)
            ok = len(mshape) <= len(ishape) and all(
                m in (1, i) for m, i in zip(mshape[::-1], ishape[::-1])
            )
            if not ok:
                raise ValueError(
                    "The `mask` must be broadcastable to `inputs` and must not have "
                    "more dimensions. Each mask dimension must be 1 or match the "
                    f"corresponding input dimension. Received: inputs.shape={ishape}, "
                    f"mask.shape={mshape}"
                )
        axis = self.axis
        if isinstance(axis, (list, tuple)):
            axis = tuple(axis) if len(axis) > 1 else axis[0]
        if mask is None:
            return _softmax(inputs, axis)
        return _masked_softmax(inputs, mask, axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}
