"""Keras's normalization layers: BatchNormalization, LayerNormalization. Layer L5.

Each call is one recorded op (`nn_ops.fused_batch_norm_*`, `fused_layer_norm`),
on the moments of `nn_ops.moments`.
"""

from __future__ import annotations

from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.ops import array_ops, nn_ops

__all__ = [
    "BatchNormalization",
    "LayerNormalization",
]


class BatchNormalization(Layer):
    """Batch normalization with moving statistics (Keras's defaults:
    momentum 0.99, epsilon 1e-3). Training uses the batch statistics and
    updates the moving ones; inference uses the moving ones."""

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
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.axis, self.momentum, self.epsilon = axis, float(momentum), float(epsilon)
        self.center, self.scale = center, scale
        self._inits = (
            beta_initializer,
            gamma_initializer,
            moving_mean_initializer,
            moving_variance_initializer,
        )

    def build(self, input_shape):
        dim = input_shape[self.axis]
        beta_i, gamma_i, mean_i, var_i = self._inits
        self.gamma = (
            self.add_weight("gamma", (dim,), initializer=gamma_i)
            if self.scale
            else None
        )
        self.beta = (
            self.add_weight("beta", (dim,), initializer=beta_i) if self.center else None
        )
        self.moving_mean = self.add_weight(
            "moving_mean", (dim,), initializer=mean_i, trainable=False
        )
        self.moving_variance = self.add_weight(
            "moving_variance", (dim,), initializer=var_i, trainable=False
        )
        self.built = True

    def _broadcast(self, ndim):
        axis = self.axis % ndim
        return tuple(a for a in range(ndim) if a != axis), axis

    def call(self, inputs, training=None):
        axes, axis = self._broadcast(inputs.ndim)
        shape = [1] * inputs.ndim
        shape[axis] = inputs.shape[axis]

        def bc(v):
            return None if v is None else array_ops.reshape(v, shape)

        if training and self.trainable:
            y, mean, var = nn_ops.fused_batch_norm_train(
                inputs, bc(self.gamma), bc(self.beta), axes, self.epsilon
            )
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
            bc(self.gamma),
            bc(self.beta),
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
        }


class LayerNormalization(Layer):
    """Normalizes each sample over `axis` (Keras's epsilon 1e-3)."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis if isinstance(axis, (list, tuple)) else (axis,)
        self.epsilon, self.center, self.scale = float(epsilon), center, scale

    def build(self, input_shape):
        shape = tuple(input_shape[a] for a in self.axis)
        self.gamma = (
            self.add_weight("gamma", shape, initializer="ones") if self.scale else None
        )
        self.beta = (
            self.add_weight("beta", shape, initializer="zeros") if self.center else None
        )
        self.built = True

    def call(self, inputs):
        ndim = inputs.ndim
        axes = tuple(sorted(a % ndim for a in self.axis))
        shape = [inputs.shape[a] if a in axes else 1 for a in range(ndim)]

        def bc(v):
            return None if v is None else array_ops.reshape(v, shape)

        return nn_ops.fused_layer_norm(
            inputs, bc(self.gamma), bc(self.beta), axes, self.epsilon
        )

    def get_config(self):
        return {
            **super().get_config(),
            "axis": list(self.axis),
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
        }
