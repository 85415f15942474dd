"""Keras's convolution layers: Conv1D, Conv2D. Layer L5.

A call is ONE recorded op, `activation(conv(x, kernel) + bias)`
(`nn_ops.fused_conv`, on `nn_ops.convolution`'s body) when the activation is
a built-in.
"""

from __future__ import annotations

from jaxtape._src.keras import activations
from jaxtape._src.keras.layers import arguments
from jaxtape._src.keras.layers.input_spec import InputSpec
from jaxtape._src.keras.layers.core import _KernelLayer
from jaxtape._src.ops import array_ops, math_ops, nn_ops

__all__ = [
    "Conv1D",
    "Conv2D",
]


class _Conv(_KernelLayer):
    _RANK = 2

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        groups=1,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        n = self._RANK
        self.filters = int(filters)
        self.groups = int(groups)
        self.kernel_size = arguments.standardize_tuple(kernel_size, n, "kernel_size")
        self.strides = arguments.standardize_tuple(strides, n, "strides")
        self.dilation_rate = arguments.standardize_tuple(
            dilation_rate, n, "dilation_rate"
        )
        self.padding = arguments.standardize_padding(self, padding, n == 1)
        self.data_format = arguments.standardize_data_format(data_format)
        if self.filters <= 0:
            raise ValueError(
                "Invalid value for argument `filters`. Expected a strictly positive "
                f"value. Received filters={self.filters}."
            )
        if self.groups <= 0 or self.filters % self.groups:
            raise ValueError(
                "The number of filters must be evenly divisible by the number of "
                f"groups. Received: groups={self.groups}, filters={self.filters}."
            )
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(
                "`strides > 1` not supported in conjunction with `dilation_rate > 1`."
                f" Received: strides={self.strides} and "
                f"dilation_rate={self.dilation_rate}"
            )
        self._init_kernel(
            activation, use_bias, kernel_initializer, bias_initializer,
            kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint,
        )  # fmt: skip
        self.input_spec = InputSpec(ndim=n + 2)

    @property
    def _channel_axis(self) -> int:
        return 1 if self.data_format == "channels_first" else -1

    def build(self, input_shape):
        channels = input_shape[self._channel_axis]
        if channels % self.groups:
            raise ValueError(
                "The number of input channels must be evenly divisible by the number"
                f" of groups. Received groups={self.groups}, but the input has "
                f"{channels} channels (full input shape is {tuple(input_shape)})."
            )
        kernel_shape = (*self.kernel_size, channels // self.groups, self.filters)
        self._build_kernel(kernel_shape)
        self.input_spec = InputSpec(
            ndim=self._RANK + 2, axes={self._channel_axis: channels}
        )
        self.built = True

    def _pads(self, input_shape):
        """'SAME'/'VALID', or causal explicit pads; raises Keras's error for an
        empty VALID output."""
        span = [(k - 1) * d + 1 for k, d in zip(self.kernel_size, self.dilation_rate)]
        if self.padding == "causal":
            return ((span[0] - 1, 0),)
        first = self.data_format == "channels_first"
        spatial = arguments.spatial_dims(input_shape, first)
        sizes = arguments.valid_output_sizes(spatial, span, self.strides)
        if self.padding == "valid" and min(sizes) <= 0:
            raise ValueError(
                "Computed output size would be zero or negative. Received "
                f"`inputs shape={tuple(input_shape)}`, "
                f"`kernel shape={tuple(self.kernel.shape)}`, "
                f"`dilation_rate={list(self.dilation_rate)}`, "
                f"`strides={self.strides}`, `padding={self.padding}`. Use "
                "padding='same', a smaller kernel_size or dilation_rate, or a "
                "larger input."
            )
        return self.padding.upper()

    def call(self, inputs):
        body = activations.fusable_body(self.activation)
        fused = body is not None or self.activation is activations.linear
        args = (
            self.strides,
            self._pads(inputs.shape),
            self.dilation_rate,
            self.data_format == "channels_first",
        )
        if fused and self.bias is not None:
            return nn_ops.fused_conv(inputs, self.kernel, self.bias, *args, body)
        y = nn_ops.fused_conv_no_bias(
            inputs, self.kernel, *args, body if fused else None
        )
        if fused:
            return y
        if self.bias is not None:
            bias = self.bias
            if self.data_format == "channels_first":
                bias = array_ops.reshape(bias, (-1,) + (1,) * self._RANK)
            y = math_ops.add(y, bias)
        return self.activation(y)

    def get_config(self):
        return {
            **super().get_config(),
            "filters": self.filters,
            "kernel_size": list(self.kernel_size),
            "strides": list(self.strides),
            "padding": self.padding,
            "data_format": self.data_format,
            "dilation_rate": list(self.dilation_rate),
            "groups": self.groups,
            **self._kernel_config(),
        }


class Conv2D(_Conv):
    """2-D convolution over NHWC inputs (Keras's defaults: padding 'valid')."""

    _RANK = 2


class Conv1D(_Conv):
    """1-D convolution over NWC inputs; `padding='causal'` pads the start only."""

    _RANK = 1
