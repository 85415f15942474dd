"""Keras's convolution layers. Layer L5.

`Conv1D/2D/3D` (with `groups`, `dilation_rate`, `channels_first`), their
transposes `Conv1DTranspose/2D/3D` (`output_padding`), `DepthwiseConv1D/2D`
and `SeparableConv1D/2D`, with Keras's aliases (`Convolution2D`,
`Conv2DTranspose`, `SeparableConvolution2D`, ...). Weights have Keras 3's
names, shapes and order. A call is ONE recorded op,
`activation(conv(x, kernel) + bias)` when the activation is a built-in
(`nn_ops.fused_conv`, or this module's depthwise/separable/transpose bodies,
all on `nn_ops.convolution`'s body).
"""

from __future__ import annotations

import numpy as np
from jax import lax

from jaxtape._src.core.dispatch import op
from jaxtape._src.initializers import initializers
from jaxtape._src.keras import activations, constraints, regularizers
from jaxtape._src.keras.layers import arguments
from jaxtape._src.keras.layers.core import _KernelLayer, _or_none
from jaxtape._src.keras.layers.input_spec import InputSpec
from jaxtape._src.ops import array_ops, math_ops, nn_ops

__all__ = [
    "Conv1D",
    "Conv1DTranspose",
    "Conv2D",
    "Conv2DTranspose",
    "Conv3D",
    "Conv3DTranspose",
    "Convolution1D",
    "Convolution1DTranspose",
    "Convolution2D",
    "Convolution2DTranspose",
    "Convolution3D",
    "Convolution3DTranspose",
    "DepthwiseConv1D",
    "DepthwiseConv2D",
    "SeparableConv1D",
    "SeparableConv2D",
    "SeparableConvolution1D",
    "SeparableConvolution2D",
]

_conv_body = nn_ops._conv.__wrapped__  # the pure convolution, for fused bodies


def _finish(y, bias, channels_first, act):
    """`act(y + bias)`, the bias on the channel axis (`act` None: no activation)."""
    nd = y.ndim - 2
    y = y + (bias.reshape((-1,) + (1,) * nd) if channels_first else bias)
    return y if act is None else act(y)


def _depthwise_body(x, kernel, strides, padding, dilation, channels_first):
    """`(*k, C, M)` kernel: a grouped convolution with one group per channel."""
    k = kernel.reshape((*kernel.shape[:-2], 1, -1))
    layout = nn_ops._conv_layout(kernel.ndim - 2, channels_first)
    return _conv_body(x, k, strides, padding, dilation, layout)


@op("DepthwiseConv", inputs=("x", "kernel", "bias"), jit=True)
def _depthwise_conv(x, kernel, bias, strides, padding, dilation, channels_first, act):
    """`act(depthwise_conv(x, kernel) + bias)`."""
    y = _depthwise_body(x, kernel, strides, padding, dilation, channels_first)
    return _finish(y, bias, channels_first, act)


@op("SeparableConv", inputs=("x", "depthwise", "pointwise", "bias"), jit=True)
def _separable_conv(
    x, depthwise, pointwise, bias, strides, padding, dilation, channels_first, act
):
    """`act(pointwise_conv(depthwise_conv(x)) + bias)` (Keras's order)."""
    y = _depthwise_body(x, depthwise, strides, padding, dilation, channels_first)
    nd = pointwise.ndim - 2
    layout = nn_ops._conv_layout(nd, channels_first)
    y = _conv_body(y, pointwise, (1,) * nd, "VALID", (1,) * nd, layout)
    return _finish(y, bias, channels_first, act)


@op("ConvTranspose", inputs=("x", "kernel", "bias"), jit=True)
def _conv_transpose(x, kernel, bias, strides, pads, dilation, channels_first, act):
    """`act(conv_transpose(x, kernel) + bias)`; kernel `(*k, filters, in)`.

    JAX's fractionally strided convolution with the kernel flipped
    (`transpose_kernel`), the padding Keras's backends compute from
    `padding` and `output_padding`: the gradient of a forward convolution, as
    TF's `conv2d_transpose`.
    """
    nd = kernel.ndim - 2
    layout = nn_ops._conv_layout(nd, channels_first)
    spec = "DHW"[-nd:] + "IO"
    dn = lax.conv_dimension_numbers(x.shape, kernel.shape, (layout, spec, layout))
    y = lax.conv_transpose(
        x,
        kernel,
        strides,
        pads,
        rhs_dilation=dilation,
        dimension_numbers=dn,
        transpose_kernel=True,
    )
    return _finish(y, bias, channels_first, act)


def _check_strides_and_dilation(strides, dilation_rate) -> None:
    if max(strides) > 1 and max(dilation_rate) > 1:
        raise ValueError(
            "`strides > 1` not supported in conjunction with `dilation_rate > 1`."
            f" Received: strides={strides} and dilation_rate={dilation_rate}"
        )


class _BaseConv(_KernelLayer):
    """What every convolution shares: Keras's argument checks, the channel
    axis, the VALID-output check, bias and activation after the op."""

    _RANK = 2
    _CAUSAL = False  # Conv1D takes padding='causal'

    def _init_conv(self, kernel_size, strides, padding, data_format, dilation_rate):
        n = self._RANK
        self.kernel_size = arguments.standardize_tuple(kernel_size, n, "kernel_size")
        self.strides = arguments.standardize_tuple(strides, n, "strides")
        self.dilation_rate = arguments.standardize_tuple(
            dilation_rate, n, "dilation_rate"
        )
        self.padding = arguments.standardize_padding(self, padding, self._CAUSAL)
        self.data_format = arguments.standardize_data_format(data_format)
        # Keras's min_ndim (its text for too few axes); too many raise
        # ValueError in Keras too (from its kernel-shape check)
        self.input_spec = InputSpec(min_ndim=n + 2, max_ndim=n + 2)

    @property
    def _channels_first(self) -> bool:
        return self.data_format == "channels_first"

    @property
    def _channel_axis(self) -> int:
        return 1 if self._channels_first else -1

    def _input_channels(self, input_shape) -> int:
        channels = input_shape[self._channel_axis]
        if channels is None:
            raise ValueError(
                f"{type(self).__name__} layer {self.name!r}: the channel dimension "
                f"of the inputs must be known; got input shape {tuple(input_shape)}."
            )
        self.input_spec = InputSpec(
            min_ndim=self._RANK + 2,
            max_ndim=self._RANK + 2,
            axes={self._channel_axis: channels},
        )
        return int(channels)

    def _pads(self, input_shape):
        """'SAME'/'VALID', or causal explicit pads; raises Keras's error for an
        empty VALID output."""
        span = [(k - 1) * d + 1 for k, d in zip(self.kernel_size, self.dilation_rate)]
        if self.padding == "causal":
            return ((span[0] - 1, 0),)
        spatial = arguments.spatial_dims(input_shape, self._channels_first)
        sizes = arguments.valid_output_sizes(spatial, span, self.strides)
        if self.padding == "valid" and min(sizes) <= 0:
            raise ValueError(
                "Computed output size would be zero or negative. Received "
                f"`inputs shape={tuple(input_shape)}`, "
                f"`kernel shape={tuple(self._kernel_weight.shape)}`, "
                f"`dilation_rate={np.array(self.dilation_rate)}`, "
                f"`strides={self.strides}`, `padding={self.padding}`. Use "
                "padding='same', a smaller kernel_size or dilation_rate, or a "
                "larger input."
            )
        return self.padding.upper()

    @property
    def _kernel_weight(self):
        return self.kernel

    def _fused(self):
        """The activation's pure body and whether the call can be one op."""
        body = activations.fusable_body(self.activation)
        return body, body is not None or self.activation is activations.linear

    def _bias_and_activation(self, y):
        """The unfused tail: bias on the channel axis, then the activation."""
        if self.bias is not None:
            bias = self.bias
            if self._channels_first:
                bias = array_ops.reshape(bias, (-1,) + (1,) * self._RANK)
            y = math_ops.add(y, bias)
        return self.activation(y)

    def _bias_input(self, size):
        """The bias, or zeros without `use_bias` (a constant of the op, not a
        weight: the fused bodies always take a bias)."""
        if self.bias is not None:
            return self.bias
        return np.zeros((size,), self._dtype)

    def _activate(self, body, fused, y):
        """The call's end: the activation (unless the op applied it), then
        Keras's activity regularization."""
        return self._with_activity(y if fused else self.activation(y))

    def _conv_config(self) -> dict:
        return {
            "kernel_size": list(self.kernel_size),
            "strides": list(self.strides),
            "padding": self.padding,
            "data_format": self.data_format,
            "dilation_rate": list(self.dilation_rate),
        }


class _Conv(_BaseConv):
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
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        lora_rank=None,
        lora_alpha=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if lora_rank is not None or lora_alpha is not None:
            raise NotImplementedError(
                f"{type(self).__name__}(lora_rank=...) (Keras's LoRA) is not "
                "supported by jaxtape; leave lora_rank and lora_alpha unset."
            )
        self.filters = int(filters)
        self.groups = int(groups)
        self._init_conv(kernel_size, strides, padding, data_format, dilation_rate)
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
        _check_strides_and_dilation(self.strides, self.dilation_rate)
        self._init_kernel(
            activation, use_bias, kernel_initializer, bias_initializer,
            kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint,
            activity_regularizer,
        )  # fmt: skip

    def build(self, input_shape):
        channels = self._input_channels(input_shape)
        if channels % self.groups:
            raise ValueError(
                "The number of input channels must be evenly divisible by the number"
                f" of groups. Received groups={self.groups}, but the input has "
                f"{channels} channels (full input shape is {tuple(input_shape)})."
            )
        self._build_kernel((*self.kernel_size, channels // self.groups, self.filters))
        self.built = True

    def call(self, inputs):
        body, fused = self._fused()
        args = (
            self.strides,
            self._pads(inputs.shape),
            self.dilation_rate,
            self._channels_first,
        )
        if fused and self.bias is not None:
            y = nn_ops.fused_conv(inputs, self.kernel, self.bias, *args, body)
        else:
            y = nn_ops.fused_conv_no_bias(
                inputs, self.kernel, *args, body if fused else None
            )
            if not fused:
                y = self._bias_and_activation(y)
        return self._with_activity(y)

    def get_config(self):
        return {
            **super().get_config(),
            "filters": self.filters,
            **self._conv_config(),
            "groups": self.groups,
            **self._kernel_config(),
        }


class Conv1D(_Conv):
    """1-D convolution over NWC inputs; `padding='causal'` pads the start only."""

    _RANK = 1
    _CAUSAL = True


class Conv2D(_Conv):
    """2-D convolution over NHWC inputs (Keras's defaults: padding 'valid')."""

    _RANK = 2


class Conv3D(_Conv):
    """3-D convolution over NDHWC inputs (or NCDHW with `channels_first`)."""

    _RANK = 3


class _ConvTranspose(_BaseConv):
    """Keras's transposed convolution: kernel `(*kernel_size, filters, in)`."""

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        output_padding=None,
        data_format=None,
        dilation_rate=1,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.filters = int(filters)
        self._init_conv(kernel_size, strides, padding, data_format, dilation_rate)
        self.output_padding = (
            None
            if output_padding is None
            else arguments.standardize_tuple(
                output_padding, self._RANK, "output_padding", allow_zero=True
            )
        )
        if self.filters <= 0:
            raise ValueError(
                "Invalid value for argument `filters`. Expected a strictly positive "
                f"value. Received filters={self.filters}."
            )
        for i, (p, s) in enumerate(zip(self.output_padding or (), self.strides)):
            if p >= s:
                raise ValueError(
                    "`output_padding` must be strictly less than `strides` for all "
                    f"dimensions. At dimension {i}, `output_padding` is {p} but "
                    f"`strides` is {s}. Received: output_padding="
                    f"{self.output_padding}, strides={self.strides}"
                )
        _check_strides_and_dilation(self.strides, self.dilation_rate)
        self._init_kernel(
            activation, use_bias, kernel_initializer, bias_initializer,
            kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint,
            activity_regularizer,
        )  # fmt: skip

    def build(self, input_shape):
        channels = self._input_channels(input_shape)
        self._build_kernel((*self.kernel_size, self.filters, channels), self.filters)
        self.built = True

    def _transpose_pads(self) -> tuple:
        """Keras's JAX-backend padding for `lax.conv_transpose`: VALID gives
        `(in - 1) * stride + max(span, stride)`, SAME `in * stride`, and an
        `output_padding` adds to the high side."""
        out = []
        for i, (k, s, d) in enumerate(
            zip(self.kernel_size, self.strides, self.dilation_rate)
        ):
            span = (k - 1) * d + 1
            extra = None if self.output_padding is None else self.output_padding[i]
            if self.padding == "valid":
                extra = max(span, s) - span if extra is None else extra
                out.append((span - 1, span - 1 + extra))
            else:
                total = s + span - 2 if extra is None else span + span % 2 - 2 + extra
                lo = min(total // 2 + total % 2, span - 1)
                out.append((lo, total - lo))
        return tuple(out)

    def call(self, inputs):
        body, fused = self._fused()
        y = _conv_transpose(
            inputs,
            self.kernel,
            self._bias_input(self.filters),
            self.strides,
            self._transpose_pads(),
            self.dilation_rate,
            self._channels_first,
            body,
        )
        return self._activate(body, fused, y)

    def get_config(self):
        cfg = self._conv_config()
        return {
            **super().get_config(),
            "filters": self.filters,
            "kernel_size": cfg.pop("kernel_size"),
            "strides": cfg.pop("strides"),
            "padding": cfg.pop("padding"),
            "output_padding": (
                None if self.output_padding is None else list(self.output_padding)
            ),
            **cfg,
            **self._kernel_config(),
        }


class Conv1DTranspose(_ConvTranspose):
    """1-D transposed convolution (the gradient of Conv1D with respect to its input)."""

    _RANK = 1


class Conv2DTranspose(_ConvTranspose):
    """2-D transposed convolution ("deconvolution"), TF's `conv2d_transpose`."""

    _RANK = 2


class Conv3DTranspose(_ConvTranspose):
    """3-D transposed convolution (Keras's argument order: `data_format`
    before `output_padding`, unlike the 1-D and 2-D layers)."""

    _RANK = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format=None, output_padding=None, dilation_rate=(1, 1, 1),
                 **kwargs):  # fmt: skip
        super().__init__(
            filters, kernel_size, strides=strides, padding=padding,
            output_padding=output_padding, data_format=data_format,
            dilation_rate=dilation_rate, **kwargs,
        )  # fmt: skip


class _DepthwiseConv(_BaseConv):
    """Keras's depthwise convolution: kernel `(*kernel_size, in, depth_multiplier)`,
    bias `(in * depth_multiplier,)`."""

    def __init__(
        self,
        kernel_size,
        strides=1,
        padding="valid",
        depth_multiplier=1,
        data_format=None,
        dilation_rate=1,
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        depthwise_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self._init_conv(kernel_size, strides, padding, data_format, dilation_rate)
        if self.depth_multiplier <= 0:
            raise ValueError(
                "Invalid value for argument `depth_multiplier`. Expected a strictly "
                f"positive value. Received depth_multiplier={self.depth_multiplier}."
            )
        self._init_kernel(
            activation, use_bias, depthwise_initializer, bias_initializer,
            depthwise_regularizer, bias_regularizer, depthwise_constraint,
            bias_constraint, activity_regularizer,
        )  # fmt: skip

    def build(self, input_shape):
        channels = self._input_channels(input_shape)
        self._build_kernel(
            (*self.kernel_size, channels, self.depth_multiplier),
            channels * self.depth_multiplier,
        )
        self.built = True

    def call(self, inputs):
        body, fused = self._fused()
        y = _depthwise_conv(
            inputs,
            self.kernel,
            self._bias_input(self.kernel.shape[-2] * self.depth_multiplier),
            self.strides,
            self._pads(inputs.shape),
            self.dilation_rate,
            self._channels_first,
            body,
        )
        return self._activate(body, fused, y)

    def get_config(self):
        cfg = self._kernel_config()
        return {
            **super().get_config(),
            "depth_multiplier": self.depth_multiplier,
            **self._conv_config(),
            "activation": cfg["activation"],
            "use_bias": self.use_bias,
            "depthwise_initializer": cfg["kernel_initializer"],
            "bias_initializer": cfg["bias_initializer"],
            "depthwise_regularizer": cfg["kernel_regularizer"],
            "bias_regularizer": cfg["bias_regularizer"],
            "activity_regularizer": cfg["activity_regularizer"],
            "depthwise_constraint": cfg["kernel_constraint"],
            "bias_constraint": cfg["bias_constraint"],
        }


class DepthwiseConv1D(_DepthwiseConv):
    """1-D depthwise convolution: each input channel convolved on its own."""

    _RANK = 1


class DepthwiseConv2D(_DepthwiseConv):
    """2-D depthwise convolution: each input channel convolved on its own."""

    _RANK = 2


class _SeparableConv(_BaseConv):
    """Keras's separable convolution: a depthwise kernel
    `(*kernel_size, in, depth_multiplier)`, then a pointwise kernel
    `(1, ..., in * depth_multiplier, filters)`, then the bias `(filters,)`."""

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        depth_multiplier=1,
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        pointwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        pointwise_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        depthwise_constraint=None,
        pointwise_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.filters = int(filters)
        self.depth_multiplier = int(depth_multiplier)
        self._init_conv(kernel_size, strides, padding, data_format, dilation_rate)
        if self.filters <= 0:
            raise ValueError(
                "Invalid value for argument `filters`. Expected a strictly positive "
                f"value. Received filters={self.filters}."
            )
        if self.depth_multiplier <= 0:
            raise ValueError(
                "Invalid value for argument `depth_multiplier`. Expected a strictly "
                f"positive value. Received depth_multiplier={self.depth_multiplier}."
            )
        self._init_kernel(
            activation, use_bias, depthwise_initializer, bias_initializer,
            depthwise_regularizer, bias_regularizer, depthwise_constraint,
            bias_constraint, activity_regularizer,
        )  # fmt: skip
        self.depthwise_initializer = self.kernel_initializer
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)
        self.pointwise_constraint = constraints.get(pointwise_constraint)

    @property
    def _kernel_weight(self):
        return self.depthwise_kernel

    def build(self, input_shape):
        channels = self._input_channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel",
            (*self.kernel_size, channels, self.depth_multiplier),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel",
            (1,) * self._RANK + (channels * self.depth_multiplier, self.filters),
            initializer=self.pointwise_initializer,
            regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                (self.filters,),
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        self.built = True

    def call(self, inputs):
        body, fused = self._fused()
        y = _separable_conv(
            inputs,
            self.depthwise_kernel,
            self.pointwise_kernel,
            self._bias_input(self.filters),
            self.strides,
            self._pads(inputs.shape),
            self.dilation_rate,
            self._channels_first,
            body,
        )
        return self._activate(body, fused, y)

    def get_config(self):
        cfg = self._kernel_config()
        return {
            **super().get_config(),
            "depth_multiplier": self.depth_multiplier,
            "filters": self.filters,
            **self._conv_config(),
            "activation": cfg["activation"],
            "use_bias": self.use_bias,
            "depthwise_initializer": cfg["kernel_initializer"],
            "pointwise_initializer": initializers.serialize(self.pointwise_initializer),
            "bias_initializer": cfg["bias_initializer"],
            "depthwise_regularizer": cfg["kernel_regularizer"],
            "pointwise_regularizer": (
                None
                if self.pointwise_regularizer is None
                else regularizers.serialize(self.pointwise_regularizer)
            ),
            "bias_regularizer": cfg["bias_regularizer"],
            "activity_regularizer": cfg["activity_regularizer"],
            "depthwise_constraint": cfg["kernel_constraint"],
            "pointwise_constraint": _or_none(
                constraints.serialize, self.pointwise_constraint
            ),
            "bias_constraint": cfg["bias_constraint"],
        }


class SeparableConv1D(_SeparableConv):
    """1-D separable convolution: depthwise, then a pointwise (1x1) convolution."""

    _RANK = 1


class SeparableConv2D(_SeparableConv):
    """2-D separable convolution: depthwise, then a pointwise (1x1) convolution."""

    _RANK = 2


# Keras's aliases.
Convolution1D = Conv1D
Convolution2D = Conv2D
Convolution3D = Conv3D
Convolution1DTranspose = Conv1DTranspose
Convolution2DTranspose = Conv2DTranspose
Convolution3DTranspose = Conv3DTranspose
SeparableConvolution1D = SeparableConv1D
SeparableConvolution2D = SeparableConv2D
