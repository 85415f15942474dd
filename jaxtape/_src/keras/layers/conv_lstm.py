"""Keras's convolutional LSTMs: `ConvLSTM1D/2D/3D` and their cell. Layer L5.

`ConvLSTMCell` is Keras 3's cell (not public in Keras either): LSTM gates
(i, f, c, o) from convolutions of the step's input (`strides`, `padding`,
`dilation_rate`) and of the hidden state (stride 1, 'same'). The layers are
`recurrent.RNN` of that cell, so the time loop is the RNN's one recorded
`lax.scan` op; the cell gives the RNN its output's shape (`output_size`, a
tuple) and its dropout masks' shapes (`_dropout_spec`), which the RNN's
loop reads instead of a width.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from jaxtape._src.core import dtypes
from jaxtape._src.initializers import initializers
from jaxtape._src.keras import activations, constraints, regularizers
from jaxtape._src.keras.layers import arguments
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.layers.input_spec import InputSpec
from jaxtape._src.keras.layers.recurrent import RNN, _DropoutRNNCell, _rate
from jaxtape._src.ops import array_ops, creation_ops, nn_ops

__all__ = ["ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"]

_CELL_ARGS = (
    "filters",
    "kernel_size",
    "strides",
    "padding",
    "data_format",
    "dilation_rate",
    "activation",
    "recurrent_activation",
    "use_bias",
    "kernel_initializer",
    "recurrent_initializer",
    "bias_initializer",
    "unit_forget_bias",
    "kernel_regularizer",
    "recurrent_regularizer",
    "bias_regularizer",
    "kernel_constraint",
    "recurrent_constraint",
    "bias_constraint",
    "dropout",
    "recurrent_dropout",
    "seed",
)


class ConvLSTMCell(_DropoutRNNCell, Layer):
    """Keras 3's `ConvLSTMCell(rank, filters, kernel_size, ...)`.

    Weights `kernel (*kernel_size, input_channels, 4*filters)`,
    `recurrent_kernel (*kernel_size, filters, 4*filters)`, `bias
    (4*filters,)` (the forget gate's part starts at ones with
    `unit_forget_bias`). States `[h, c]`, each of the input convolution's
    output shape. Dropout: one mask per gate, of the input's (and the
    state's) shape, applied only for `0 < rate < 1` as Keras.
    """

    def __init__(
        self,
        rank,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        unit_forget_bias=True,
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if rank > 3:
            raise ValueError(
                f"Rank {rank} convolutions are not currently implemented. "
                f"Received: rank={rank}"
            )
        self.rank = int(rank)
        self.seed = seed
        self.filters = int(filters)
        self.kernel_size = arguments.standardize_tuple(kernel_size, rank, "kernel_size")
        self.strides = arguments.standardize_tuple(
            strides, rank, "strides", allow_zero=True
        )
        self.padding = arguments.standardize_padding(self, padding)
        self.data_format = arguments.standardize_data_format(data_format)
        self.dilation_rate = arguments.standardize_tuple(
            dilation_rate, rank, "dilation_rate"
        )
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(
                "Specifying `strides > 1` is not compatible with `dilation_rate > "
                "1`. Please provide `strides=1` or `dilation_rate=1`. Received: "
                f"strides={self.strides} and dilation_rate={self.dilation_rate}"
            )
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.dropout = _rate(dropout)
        self.recurrent_dropout = _rate(recurrent_dropout)
        self.dropout_mask_count = 4
        self.state_size = -1  # (as Keras: the states' shape comes from `build`)
        self._step_shape: tuple = ()
        self._state_shape: tuple = ()

    @property
    def _channels_first(self) -> bool:
        return self.data_format == "channels_first"

    def build(self, input_shape, states_shape=None):
        del states_shape
        first = self._channels_first
        spatial = arguments.spatial_dims(input_shape, first)
        if None in spatial:
            raise ValueError(
                "ConvLSTM layers only support static input shapes for the spatial "
                f"dimension. Received invalid input shape: input_shape={input_shape}"
            )
        channels = input_shape[1 if first else -1]
        if channels is None:
            raise ValueError(
                "The channel dimension of the inputs (last axis) should be defined. "
                f"Found None. Full input shape received: input_shape={input_shape}"
            )
        channels = int(channels)
        out = self._output_spatial(tuple(int(d) for d in spatial), input_shape)
        f = self.filters
        self._step_shape = tuple(int(d) for d in input_shape[1:])
        self._state_shape = (f, *out) if first else (*out, f)
        self.kernel = self.add_weight(
            name="kernel",
            shape=(*self.kernel_size, channels, 4 * f),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.recurrent_kernel = self.add_weight(
            name="recurrent_kernel",
            shape=(*self.kernel_size, f, 4 * f),
            initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                name="bias",
                shape=(4 * f,),
                initializer=self._bias_init(),
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        self.built = True

    def _output_spatial(self, spatial, input_shape) -> tuple:
        """Keras's conv output sizes ('same': `ceil(size / stride)`)."""
        if self.padding == "same":
            return tuple(-(-d // s) for d, s in zip(spatial, self.strides))
        span = [(k - 1) * d + 1 for k, d in zip(self.kernel_size, self.dilation_rate)]
        sizes = arguments.valid_output_sizes(spatial, span, self.strides)
        if min(sizes) <= 0:
            raise ValueError(
                "Computed output size would be negative. Received "
                f"`inputs shape={tuple(input_shape)}`, `kernel shape="
                f"{self.kernel_size}`, `dilation_rate={self.dilation_rate}`. Use "
                "padding='same', a smaller kernel_size or a larger input."
            )
        return tuple(sizes)

    def _bias_init(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        base, f = self.bias_initializer, self.filters

        def forget_ones(shape, dtype=None):
            del shape
            return jnp.concatenate(
                [
                    jnp.asarray(base((f,), dtype=dtype)),
                    jnp.ones((f,), dtype),
                    jnp.asarray(base((2 * f,), dtype=dtype)),
                ]
            )

        return forget_ones

    @property
    def output_size(self) -> tuple:
        """The output's (and each state's) shape without the batch axis."""
        return self._state_shape

    def _dropout_spec(self) -> tuple:
        """The shapes of one input and one recurrent dropout mask (no batch)
        and the rates that apply (Keras drops only for `0 < rate < 1`)."""

        def applied(rate):
            return rate if 0.0 < rate < 1.0 else 0.0

        return (
            self._step_shape,
            self._state_shape,
            applied(self.dropout),
            applied(self.recurrent_dropout),
        )

    def _loop_key(self) -> tuple:
        """What the step computes given its weights (the RNN loop's cache key)."""
        return (
            ConvLSTMCell,
            self.rank,
            self.filters,
            self.kernel_size,
            self.strides,
            self.padding,
            self.data_format,
            self.dilation_rate,
            self.activation,
            self.recurrent_activation,
            self.use_bias,
            self.compute_dtype,
        )  # (the dropout rates are in the loop's plan when they apply)

    def get_initial_state(self, batch_size=None):
        dt = dtypes.as_dtype(self.compute_dtype)
        shape = (batch_size, *self._state_shape)
        return [
            creation_ops.zeros(shape, dtype=dt),
            creation_ops.zeros(shape, dtype=dt),
        ]

    def _input_conv(self, x, kernel, bias):
        args = (
            self.strides,
            self.padding.upper(),
            self.dilation_rate,
            self._channels_first,
            None,
        )
        if bias is None:
            return nn_ops.fused_conv_no_bias(x, kernel, *args)
        return nn_ops.fused_conv(x, kernel, bias, *args)

    def _recurrent_conv(self, h, kernel):
        ones = (1,) * self.rank
        return nn_ops.fused_conv_no_bias(
            h, kernel, ones, "SAME", ones, self._channels_first, None
        )

    def call(self, inputs, states, training=False):
        h_tm1, c_tm1 = states[0], states[1]
        axis = 1 if self._channels_first else self.rank + 1
        dp = self._dropout_mask if training and 0.0 < self.dropout < 1.0 else None
        rdp = (
            self._recurrent_dropout_mask
            if training and 0.0 < self.recurrent_dropout < 1.0
            else None
        )
        # All four gates in one convolution each; with Keras's per-gate
        # dropout masks, one grouped convolution of the four masked copies
        # (group g: the copy masked for gate g, the kernel's gate-g filters).
        x = inputs if dp is None else _masked_copies(inputs, dp, axis)
        h = h_tm1 if rdp is None else _masked_copies(h_tm1, rdp, axis)
        z = self._input_conv(x, self.kernel, self.bias)
        z = z + self._recurrent_conv(h, self.recurrent_kernel)
        zs = array_ops.split(z, 4, axis=axis)
        i = self.recurrent_activation(zs[0])
        f = self.recurrent_activation(zs[1])
        c = f * c_tm1 + i * self.activation(zs[2])
        o = self.recurrent_activation(zs[3])
        h = o * self.activation(c)
        return h, [h, c]

    def get_config(self):
        return {
            **super().get_config(),
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "data_format": self.data_format,
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "recurrent_activation": activations.serialize(self.recurrent_activation),
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "recurrent_initializer": initializers.serialize(self.recurrent_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "unit_forget_bias": self.unit_forget_bias,
            "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
            "recurrent_regularizer": regularizers.serialize(self.recurrent_regularizer),
            "bias_regularizer": regularizers.serialize(self.bias_regularizer),
            "kernel_constraint": constraints.serialize(self.kernel_constraint),
            "recurrent_constraint": constraints.serialize(self.recurrent_constraint),
            "bias_constraint": constraints.serialize(self.bias_constraint),
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "seed": self.seed,
        }


def _masked_copies(x, masks, axis):
    """`[x * masks[0], ..., x * masks[3]]` joined on the channel axis."""
    return array_ops.concat([x * m for m in masks], axis=axis)


class _ConvLSTM(RNN):
    """Keras 3's `ConvLSTM`: `RNN(ConvLSTMCell(rank, ...))` with the cell's
    arguments taken by the layer (and read back as attributes) and Keras's
    flat config. Inputs `(batch, time, *spatial, channels)` (or `(batch,
    time, channels, *spatial)` with `channels_first`)."""

    _RANK = 2

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        unit_forget_bias=True,
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        seed=None,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        **kwargs,
    ):
        cell = ConvLSTMCell(
            rank=self._RANK,
            filters=filters,
            kernel_size=kernel_size,
            strides=strides,
            padding=padding,
            data_format=data_format,
            dilation_rate=dilation_rate,
            activation=activation,
            recurrent_activation=recurrent_activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer,
            unit_forget_bias=unit_forget_bias,
            kernel_regularizer=kernel_regularizer,
            recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint,
            dropout=dropout,
            recurrent_dropout=recurrent_dropout,
            seed=seed,
            name="conv_lstm_cell",
            dtype=kwargs.get("dtype"),
        )
        super().__init__(
            cell,
            return_sequences=return_sequences,
            return_state=return_state,
            go_backwards=go_backwards,
            stateful=stateful,
            activity_regularizer=activity_regularizer,
            **kwargs,
        )
        self.input_spec = InputSpec(ndim=self._RANK + 3)

    def __getattr__(self, name):
        if name in _CELL_ARGS and "cell" in self.__dict__:
            return getattr(self.__dict__["cell"], name)
        raise AttributeError(
            f"{type(self).__name__!r} object has no attribute {name!r}"
        )

    def compute_mask(self, inputs, previous_mask=None):
        del inputs
        mask = previous_mask
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask, None, None]
        return output_mask

    def get_config(self):
        cfg = super().get_config()
        del cfg["cell"]
        cell_cfg = self.cell.get_config()
        for key in ("name", "trainable", "dtype"):
            cell_cfg.pop(key, None)
        cfg = {**cfg, **cell_cfg}
        cfg["activity_regularizer"] = (
            None
            if self.activity_regularizer is None
            else regularizers.serialize(self.activity_regularizer)
        )
        return cfg

    @classmethod
    def from_config(cls, config: dict) -> Any:
        return cls(**config)


class ConvLSTM1D(_ConvLSTM):
    """Keras's `ConvLSTM1D`: inputs `(batch, time, steps, channels)`; weights
    at `conv_lstm1d/conv_lstm_cell/{kernel,recurrent_kernel,bias}`.

    Differences from TensorFlow: `unroll=True` runs the same scan, unrolled by
    XLA. tf.keras cannot run `channels_first` on CPU; jaxtape can.
    """

    _RANK = 1


class ConvLSTM2D(_ConvLSTM):
    """Keras's `ConvLSTM2D`: inputs `(batch, time, rows, cols, channels)`;
    weights at `conv_lstm2d/conv_lstm_cell/{kernel,recurrent_kernel,bias}`.

    Differences from TensorFlow: as `ConvLSTM1D`.
    """

    _RANK = 2


class ConvLSTM3D(_ConvLSTM):
    """Keras's `ConvLSTM3D`: inputs `(batch, time, d1, d2, d3, channels)`;
    weights at `conv_lstm3d/conv_lstm_cell/{kernel,recurrent_kernel,bias}`.

    Differences from TensorFlow: as `ConvLSTM1D`.
    """

    _RANK = 3
