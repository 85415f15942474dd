"""Keras's normalization layers. Layer L5.

`BatchNormalization`, `LayerNormalization`, `GroupNormalization`,
`UnitNormalization`, `RMSNormalization` and the `SpectralNormalization`
wrapper. Each call is one recorded op (`nn_ops.fused_batch_norm_*`,
`fused_layer_norm`, this module's bodies), on the moments of `nn_ops.moments`.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.core.dispatch import op
from jaxtape._src.initializers import initializers
from jaxtape._src.keras import constraints, regularizers, serialization
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.layers.core import _serialized
from jaxtape._src.keras.layers.input_spec import InputSpec
from jaxtape._src.ops import array_ops, kinks, math_ops, nn_ops

__all__ = [
    "BatchNormalization",
    "GroupNormalization",
    "LayerNormalization",
    "RMSNormalization",
    "SpectralNormalization",
    "UnitNormalization",
]

_moments = nn_ops._moments.__wrapped__  # the pure body, for fused bodies


def _init_weight_args(layer, prefixes, inits, regs, cons) -> None:
    """Sets `{prefix}_initializer/_regularizer/_constraint`, resolved."""
    for prefix, init, reg, con in zip(prefixes, inits, regs, cons):
        setattr(layer, f"{prefix}_initializer", initializers.get(init))
        setattr(layer, f"{prefix}_regularizer", regularizers.get(reg))
        setattr(layer, f"{prefix}_constraint", constraints.get(con))


def _add_weight_of(layer, prefix, shape):
    """The weight `prefix` with its initializer, regularizer and constraint."""
    return layer.add_weight(
        prefix,
        shape,
        initializer=getattr(layer, f"{prefix}_initializer"),
        regularizer=getattr(layer, f"{prefix}_regularizer"),
        constraint=getattr(layer, f"{prefix}_constraint"),
    )


def _weight_args_config(layer, prefixes) -> dict:
    """Keras's config entries: initializers, then regularizers, then constraints."""
    return {
        **{
            f"{p}_initializer": initializers.serialize(
                getattr(layer, f"{p}_initializer")
            )
            for p in prefixes
        },
        **_serialized(layer, "regularizer", regularizers.serialize, *prefixes),
        **_serialized(layer, "constraint", constraints.serialize, *prefixes),
    }


class BatchNormalization(Layer):
    """Batch normalization with moving statistics (Keras's defaults:
    momentum 0.99, epsilon 1e-3). Training uses the batch statistics and
    updates the moving ones; inference uses the moving ones. Batch
    renormalization (`renorm=True`) and `synchronized=True` raise
    NotImplementedError."""

    _KEEPS_FLOAT32 = True  # (Keras computes it in float32 under mixed policies)

    def __init__(
        self,
        axis=-1,
        momentum=0.99,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        moving_mean_initializer="zeros",
        moving_variance_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        renorm=False,
        renorm_clipping=None,
        renorm_momentum=0.99,
        synchronized=False,
        **kwargs,
    ):
        for arg, value in (("renorm", renorm), ("synchronized", synchronized)):
            if value:
                raise NotImplementedError(
                    f"BatchNormalization({arg}=True) is not supported by jaxtape; "
                    f"leave `{arg}` unset."
                )
        super().__init__(**kwargs)
        self.axis, self.momentum, self.epsilon = axis, float(momentum), float(epsilon)
        self.center, self.scale = center, scale
        self.supports_masking = True  # (the mask passes through, as Keras's)
        _init_weight_args(
            self, ("beta", "gamma"), (beta_initializer, gamma_initializer),
            (beta_regularizer, gamma_regularizer), (beta_constraint, gamma_constraint),
        )  # fmt: skip
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.renorm, self.renorm_clipping = renorm, renorm_clipping
        self.renorm_momentum, self.synchronized = renorm_momentum, synchronized

    def build(self, input_shape):
        dim = input_shape[self.axis]
        self.gamma = _add_weight_of(self, "gamma", (dim,)) if self.scale else None
        self.beta = _add_weight_of(self, "beta", (dim,)) if self.center else None
        self.moving_mean = self.add_weight(
            "moving_mean",
            (dim,),
            initializer=self.moving_mean_initializer,
            trainable=False,
        )
        self.moving_variance = self.add_weight(
            "moving_variance",
            (dim,),
            initializer=self.moving_variance_initializer,
            trainable=False,
        )
        self.built = True

    def _broadcast(self, ndim):
        axis = self.axis % ndim
        return tuple(a for a in range(ndim) if a != axis), axis

    def call(self, inputs, training=None, mask=None):
        if mask is not None and len(mask.shape) != len(inputs.shape) - 1:
            raise ValueError(
                "The mask provided should be one dimension less than the inputs. "
                f"Received: mask.shape={tuple(mask.shape)}, "
                f"inputs.shape={tuple(inputs.shape)}"
            )
        axes, axis = self._broadcast(inputs.ndim)
        shape = [1] * inputs.ndim
        shape[axis] = inputs.shape[axis]

        def bc(v, fill=None):
            # (an absent gamma/beta is a constant of ones/zeros: ops take no None)
            if v is None:
                return None if fill is None else np.full(shape, fill, self._dtype)
            return array_ops.reshape(v, shape)

        if training and self.trainable:
            gamma, beta = bc(self.gamma, 1.0), bc(self.beta, 0.0)
            if mask is None:
                y, mean, var = nn_ops.fused_batch_norm_train(
                    inputs, gamma, beta, axes, self.epsilon
                )
            else:  # the moments of the unmasked positions, as Keras's
                y, mean, var = nn_ops.fused_batch_norm_train_masked(
                    inputs, math_ops.cast(mask, inputs.dtype), gamma, beta, axes,
                    self.epsilon,
                )  # fmt: skip
            m = self.momentum
            self.moving_mean.assign(
                self.moving_mean._read_raw() * m + mean._value * (1 - m)
            )
            self.moving_variance.assign(
                self.moving_variance._read_raw() * m + var._value * (1 - m)
            )
            return y
        return nn_ops.fused_batch_norm_infer(
            inputs,
            bc(self.moving_mean),
            bc(self.moving_variance),
            bc(self.gamma, 1.0),
            bc(self.beta, 0.0),
            self.epsilon,
        )

    def get_config(self):
        return {
            **super().get_config(),
            "axis": self.axis,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            **_weight_args_config(self, ("beta", "gamma")),
            "moving_mean_initializer": initializers.serialize(
                self.moving_mean_initializer
            ),
            "moving_variance_initializer": initializers.serialize(
                self.moving_variance_initializer
            ),
            "synchronized": self.synchronized,
            "renorm": self.renorm,
            "renorm_clipping": self.renorm_clipping,
            "renorm_momentum": self.renorm_momentum,
        }


class LayerNormalization(Layer):
    """Normalizes each sample over `axis` (Keras's epsilon 1e-3). Keras's
    deprecated `rms_scaling=True` raises NotImplementedError (use
    `RMSNormalization`)."""

    _KEEPS_FLOAT32 = True  # (Keras computes it in float32 under mixed policies)

    def __init__(
        self,
        axis=-1,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        **kwargs,
    ):
        if kwargs.pop("rms_scaling", False):
            raise NotImplementedError(
                "LayerNormalization(rms_scaling=True) (deprecated in Keras) is not "
                "supported by jaxtape; use `RMSNormalization`."
            )
        super().__init__(**kwargs)
        # (the config keeps `axis` as given, as Keras's before `build`)
        self._config_axis = list(axis) if isinstance(axis, (list, tuple)) else axis
        self.axis = axis if isinstance(axis, (list, tuple)) else (axis,)
        self.epsilon, self.center, self.scale = float(epsilon), center, scale
        self.supports_masking = True  # (Keras's: the mask passes through)
        _init_weight_args(
            self, ("beta", "gamma"), (beta_initializer, gamma_initializer),
            (beta_regularizer, gamma_regularizer), (beta_constraint, gamma_constraint),
        )  # fmt: skip

    def build(self, input_shape):
        shape = tuple(input_shape[a] for a in self.axis)
        self.gamma = _add_weight_of(self, "gamma", shape) if self.scale else None
        self.beta = _add_weight_of(self, "beta", shape) if self.center else None
        self.built = True

    def call(self, inputs):
        ndim = inputs.ndim
        axes = tuple(sorted(a % ndim for a in self.axis))
        shape = [inputs.shape[a] if a in axes else 1 for a in range(ndim)]

        def bc(v, fill):
            # (an absent gamma/beta is a constant of ones/zeros: ops take no None)
            if v is None:
                return np.full(shape, fill, self._dtype)
            return array_ops.reshape(v, shape)

        return nn_ops.fused_layer_norm(
            inputs, bc(self.gamma, 1.0), bc(self.beta, 0.0), axes, self.epsilon
        )

    def get_config(self):
        return {
            **super().get_config(),
            "axis": self._config_axis,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            "rms_scaling": False,
            **_weight_args_config(self, ("beta", "gamma")),
        }


@op("GroupNorm", inputs=("x", "gamma", "beta"), jit=True)
def _group_norm(x, gamma, beta, axis, groups, epsilon):
    """Keras's GroupNormalization: the channels of `axis` split into `groups`,
    each normalized with its moments over the group and the other non-batch
    axes, then scaled and shifted per channel."""
    shape = x.shape
    grouped = x.reshape(
        (*shape[:axis], groups, shape[axis] // groups, *shape[axis + 1 :])
    )
    axes = tuple(a for a in range(1, grouped.ndim) if a != axis)
    mean, var = _moments(grouped.astype(jnp.float32), axes, True)
    inv = lax.rsqrt(var + epsilon)
    y = ((grouped - mean) * inv).reshape(shape)
    channel = [1] * x.ndim
    channel[axis] = shape[axis]
    if gamma is not None:
        y = y * gamma.reshape(channel)
    if beta is not None:
        y = y + beta.reshape(channel)
    return y.astype(x.dtype)


class GroupNormalization(Layer):
    """Normalizes groups of channels per sample (Keras's defaults: 32 groups,
    epsilon 1e-3; `groups=-1` is instance normalization)."""

    def __init__(
        self,
        groups=32,
        axis=-1,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        **kwargs,
    ):
        if not isinstance(groups, int) or (groups <= 0 and groups != -1):
            raise ValueError(
                "Received an invalid value for argument `groups`, expected a "
                "positive integer (or `-1` for instance normalization). Received: "
                f"groups={groups}"
            )
        super().__init__(**kwargs)
        self.supports_masking = True
        self.groups, self.axis, self.epsilon = groups, axis, float(epsilon)
        self.center, self.scale = center, scale
        _init_weight_args(
            self, ("beta", "gamma"), (beta_initializer, gamma_initializer),
            (beta_regularizer, gamma_regularizer), (beta_constraint, gamma_constraint),
        )  # fmt: skip

    def build(self, input_shape):
        dim = input_shape[self.axis]
        if dim is None:
            raise ValueError(
                f"Axis {self.axis} of input tensor should have a defined dimension "
                f"but the layer received an input with shape {tuple(input_shape)}."
            )
        if self.groups == -1:
            self.groups = dim
        if dim < self.groups:
            raise ValueError(
                f"Number of groups ({self.groups}) cannot be more than the number "
                f"of channels ({dim})."
            )
        if dim % self.groups != 0:
            raise ValueError(
                f"Number of groups ({self.groups}) must be a multiple of the number "
                f"of channels ({dim})."
            )
        self.input_spec = InputSpec(ndim=len(input_shape), axes={self.axis: dim})
        self.gamma = _add_weight_of(self, "gamma", (dim,)) if self.scale else None
        self.beta = _add_weight_of(self, "beta", (dim,)) if self.center else None
        self.built = True

    def call(self, inputs):
        axis = self.axis % inputs.ndim
        if self.gamma is None or self.beta is None:  # (no None inputs to an op)
            dim = inputs.shape[axis]
            one, zero = np.ones((dim,), self._dtype), np.zeros((dim,), self._dtype)
            gamma = one if self.gamma is None else self.gamma
            beta = zero if self.beta is None else self.beta
        else:
            gamma, beta = self.gamma, self.beta
        return _group_norm(inputs, gamma, beta, axis, self.groups, self.epsilon)

    def get_config(self):
        return {
            **super().get_config(),
            "groups": self.groups,
            "axis": self.axis,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
            **_weight_args_config(self, ("beta", "gamma")),
        }


def _axes(axis, ndim) -> tuple:
    axes = axis if isinstance(axis, (list, tuple)) else (axis,)
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(
                f"Axis {a} is out of bounds for input shape of rank {ndim}. "
                f"Received: axis={axis}"
            )
    return tuple(sorted(a % ndim for a in axes))


@op("UnitNorm", inputs=("x",), jit=True)
def _unit_norm(x, axes):
    """Keras's `normalize(x, order=2, epsilon=1e-12)`:
    `x * min(rsqrt(sum(x**2)), 1e12)`."""
    return kinks.l2_normalize(x, axes, 1e-12).astype(x.dtype)


class UnitNormalization(Layer):
    """Scales each sample to unit L2 norm over `axis` (an int or a list)."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError(
                "Invalid value for `axis` argument: expected an int or a list/tuple "
                f"of ints. Received: axis={axis}"
            )
        self.supports_masking = True

    def call(self, inputs):
        return _unit_norm(inputs, _axes(self.axis, inputs.ndim))

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


@op("RMSNorm", inputs=("x", "scale"), jit=True)
def _rms_norm(x, scale, axes, epsilon):
    """`x * rsqrt(mean(x**2) + epsilon) * scale` over `axes`."""
    xf = x.astype(jnp.float32)
    rrms = lax.rsqrt(jnp.mean(jnp.square(xf), axis=axes, keepdims=True) + epsilon)
    return (xf * rrms * scale).astype(x.dtype)


class RMSNormalization(Layer):
    """Root-mean-square normalization with a learned `scale` (Keras's epsilon 1e-6)."""

    def __init__(self, axis=-1, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.axis, self.epsilon = axis, epsilon

    def build(self, input_shape):
        axes = _axes(self.axis, len(input_shape))
        self.scale = self.add_weight(
            "scale", tuple(input_shape[a] for a in axes), initializer="ones"
        )
        self.built = True

    def call(self, inputs):
        axes = _axes(self.axis, inputs.ndim)
        shape = [inputs.shape[a] if a in axes else 1 for a in range(inputs.ndim)]
        scale = array_ops.reshape(self.scale, shape)
        return _rms_norm(inputs, scale, axes, float(self.epsilon))

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon}


def _l2_normalize_all(v):
    """Keras's `normalize(v, axis=None)` (epsilon 1e-7)."""
    return v * jnp.minimum(lax.rsqrt(jnp.sum(jnp.square(v))), 1e7)


@op("SpectralNorm", inputs=("kernel", "u"), differentiable=False, jit=True)
def _spectral_norm(kernel, u, power_iterations):
    """Keras's power iteration: `u` refined, and `kernel / sigma` (an all-zero
    kernel is left as it is)."""
    w = kernel.reshape((-1, kernel.shape[-1]))
    u0, v = u, u
    for _ in range(power_iterations):
        v = _l2_normalize_all(u @ w.T)
        u = _l2_normalize_all(v @ w)
    sigma = (v @ w) @ u.T
    zero = jnp.all(kernel == 0)
    return (
        jnp.where(zero, u0, u),
        jnp.where(zero, kernel, kernel / sigma.reshape(())),
    )


class SpectralNormalization(Layer):
    """Wraps a layer with a `kernel` (or `embeddings`): in training, one power
    iteration step estimates the kernel's largest singular value `sigma` and
    the kernel is replaced by `kernel / sigma` before the call (Keras's)."""

    def __init__(self, layer, power_iterations=1, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(
                "Please initialize `SpectralNormalization` layer with a "
                f"`keras.layers.Layer` instance. Received: {layer}"
            )
        super().__init__(**kwargs)
        if power_iterations <= 0:
            raise ValueError(
                "`power_iterations` should be greater than zero. Received: "
                f"`power_iterations={power_iterations}`"
            )
        self.layer = layer
        self.power_iterations = int(power_iterations)

    def build(self, input_shape):
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True
        self.input_spec = InputSpec(min_ndim=1, axes={-1: input_shape[-1]})
        # The wrapped layer's `kernel` (or `embeddings`), tracked here too, as
        # Keras (so the weights are `kernel, vector_u, bias`, in Keras's order).
        for attr in ("kernel", "embeddings"):
            if hasattr(self.layer, attr):
                self.kernel = getattr(self.layer, attr)
                break
        else:
            raise ValueError(
                f"{type(self.layer).__name__} object has no attribute 'kernel' nor "
                "'embeddings'"
            )
        self.vector_u = self.add_weight(
            "vector_u",
            (1, self.kernel.shape[-1]),
            initializer=initializers.TruncatedNormal(stddev=0.02),
            trainable=False,
        )
        self.built = True

    def call(self, inputs, training=False):
        if training:
            u, kernel = _spectral_norm(
                self.kernel, self.vector_u, self.power_iterations
            )
            self.vector_u.assign(u)
            self.kernel.assign(kernel)
        return self.layer(inputs)

    def get_config(self):
        return {
            **super().get_config(),
            "layer": serialization.serialize_layer(self.layer),
            "power_iterations": self.power_iterations,
        }

    @classmethod
    def from_config(cls, config: dict) -> Any:
        cfg = dict(config)
        layer = cfg.pop("layer")
        if isinstance(layer, dict):
            layer = serialization.deserialize_layer(layer)
        return cls(layer, **cfg)
