"""TF 2's RNN cell wrappers (`tf.nn.RNNCellDropoutWrapper`,
`RNNCellResidualWrapper`, `RNNCellDeviceWrapper`): layers around a Keras cell
that change its step (`rnn_cell_wrapper_v2` and `rnn_cell_wrapper_impl` in
TF). Layer L5 (keras/).
"""

from __future__ import annotations

import hashlib
from typing import Any

from jaxtape._src.core import device as device_lib
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.keras import serialization
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.ops import math_ops, nondiff
from jaxtape._src.ops import nest as nest_ops
from jaxtape._src.state import random_ops


class _RNNCellWrapper(Layer):
    """What the three wrappers share (TF's `_RNNCellWrapperV2`): the cell's
    sizes, build and initial state; `call(inputs, state, **kwargs)` runs the
    wrapped step; the config holds the cell's."""

    def __init__(self, cell, **kwargs):
        super().__init__(**kwargs)
        self.cell = cell

    @property
    def wrapped_cell(self):
        return self.cell

    @property
    def state_size(self):
        return self.cell.state_size

    @property
    def output_size(self):
        return getattr(self.cell, "output_size", None) or self.cell.state_size

    def build(self, input_shape):
        if not getattr(self.cell, "built", False):
            self.cell.build(input_shape)
            self.cell.built = True
        self.built = True

    def get_initial_state(self, batch_size=None):
        return self.cell.get_initial_state(batch_size=batch_size)

    def call(self, inputs, state, **kwargs):
        return self._call_wrapped_cell(inputs, state, self.cell.call, **kwargs)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        raise NotImplementedError  # each wrapper defines its step

    def get_config(self):
        return {
            **super().get_config(),
            "cell": serialization.serialize_layer(self.cell),
        }

    @classmethod
    def from_config(cls, config: dict) -> Any:
        cfg = dict(config)
        cell = serialization.deserialize_layer(cfg.pop("cell"))
        return cls(cell, **cfg)


def _keep_prob(value, what: str) -> float:
    p = float(to_value(value))
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"Parameter {what} must be between 0 and 1: {p:g}")
    return p


class RNNCellDropoutWrapper(_RNNCellWrapper):
    """Dropout on a cell's inputs, outputs and new states (TF's
    `tf.nn.RNNCellDropoutWrapper`), at every call (training or not, as TF's).

    Args:
      cell: the Keras RNN cell to wrap.
      input_keep_prob, output_keep_prob, state_keep_prob: the probabilities
        of keeping each entry (1: no dropout).
      variational_recurrent: one noise per wrapper (drawn here, the same at
        every step and call) instead of a fresh mask per call; needs `dtype`,
        and `input_size` when inputs are dropped.
      input_size: the inputs' depth (nested as the inputs), without batch.
      dtype: the noise's dtype (variational only).
      seed: the op seed; each input/state/output part gets its own, derived
        as TF derives them.
      dropout_state_filter_visitor: `f(substate) -> bool`, which parts of the
        state are dropped (default: all).
    """

    def __init__(
        self,
        cell,
        input_keep_prob=1.0,
        output_keep_prob=1.0,
        state_keep_prob=1.0,
        variational_recurrent=False,
        input_size=None,
        dtype=None,
        seed=None,
        dropout_state_filter_visitor=None,
        **kwargs,
    ):
        super().__init__(cell, dtype=dtype, **kwargs)
        if dropout_state_filter_visitor is not None and not callable(
            dropout_state_filter_visitor
        ):
            raise TypeError("dropout_state_filter_visitor must be callable")
        self._dropout_state_filter = dropout_state_filter_visitor
        self._input_keep_prob = _keep_prob(input_keep_prob, "input_keep_prob")
        self._state_keep_prob = _keep_prob(state_keep_prob, "state_keep_prob")
        self._output_keep_prob = _keep_prob(output_keep_prob, "output_keep_prob")
        self._variational_recurrent = bool(variational_recurrent)
        self._input_size = input_size
        self._seed = seed
        self._noise: dict[str, Any] = {}
        if self._variational_recurrent:
            if dtype is None:
                raise ValueError(
                    "When variational_recurrent=True, dtype must be provided"
                )
            if self._input_keep_prob < 1.0:
                if input_size is None:
                    raise ValueError(
                        "When variational_recurrent=True and input_keep_prob < 1.0 "
                        "or is unknown, input_size must be provided"
                    )
                self._noise["input"] = self._batch_noise(input_size, "input", dtype)
            self._noise["state"] = self._batch_noise(cell.state_size, "state", dtype)
            self._noise["output"] = self._batch_noise(self.output_size, "output", dtype)

    def _gen_seed(self, salt_prefix: str, index: int):
        """TF's per-part seed: md5 of the seed and the part's name."""
        if self._seed is None:
            return None
        text = (str(self._seed) + f"{salt_prefix}_{index}").encode("utf-8")
        return int(hashlib.md5(text).hexdigest()[:8], 16) & 0x7FFFFFFF

    def _batch_noise(self, sizes, salt_prefix, dtype):
        flat = _flat_sizes(sizes)
        return [
            random_ops.uniform(
                [1, *size], dtype=dtype, seed=self._gen_seed(salt_prefix, i)
            )
            for i, size in enumerate(flat)
        ]

    def _dropout(self, values, salt_prefix, keep_prob, keep=None):
        flat = nest_ops.flatten(values)
        keep = [True] * len(flat) if keep is None else keep
        noise = self._noise.get(salt_prefix)
        out = []
        for i, (v, do) in enumerate(zip(flat, keep)):
            if not do:
                out.append(v)
            elif noise is None:
                seed = self._gen_seed(salt_prefix, i)
                out.append(random_ops.dropout(v, rate=1.0 - keep_prob, seed=seed))
            else:  # TF's variational dropout: floor(keep + noise) / keep
                mask = nondiff.floor(math_ops.add(noise[i], keep_prob))
                out.append(math_ops.multiply(math_ops.divide(v, keep_prob), mask))
        return nest_ops.pack_sequence_as(values, out)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        if self._input_keep_prob < 1:
            inputs = self._dropout(inputs, "input", self._input_keep_prob)
        output, new_state = cell_call_fn(inputs, state, **kwargs)
        if self._state_keep_prob < 1:
            keep = None
            if self._dropout_state_filter is not None:
                keep = [
                    bool(self._dropout_state_filter(s))
                    for s in nest_ops.flatten(new_state)
                ]
            new_state = self._dropout(new_state, "state", self._state_keep_prob, keep)
        if self._output_keep_prob < 1:
            output = self._dropout(output, "output", self._output_keep_prob)
        return output, new_state

    def get_config(self):
        if self._dropout_state_filter is not None:
            raise NotImplementedError(
                "RNNCellDropoutWrapper.get_config with a "
                "dropout_state_filter_visitor is not supported in jaxtape (TF "
                "serializes the function's bytecode)."
            )
        return {
            **super().get_config(),
            "input_keep_prob": self._input_keep_prob,
            "output_keep_prob": self._output_keep_prob,
            "state_keep_prob": self._state_keep_prob,
            "variational_recurrent": self._variational_recurrent,
            "input_size": self._input_size,
            "seed": self._seed,
        }


def _flat_sizes(sizes) -> list[tuple[int, ...]]:
    """A (nested) state or output size as a list of shapes without batch: an
    int is a depth, a list of ints a list of depths (Keras's LSTM), a tuple of
    ints one shape."""
    if isinstance(sizes, (int, float)) or hasattr(sizes, "__index__"):
        return [(int(sizes),)]
    if isinstance(sizes, tuple) and all(isinstance(s, int) for s in sizes):
        return [tuple(sizes)]
    return [shape for s in sizes for shape in _flat_sizes(s)]


class RNNCellResidualWrapper(_RNNCellWrapper):
    """Adds a cell's inputs to its outputs (TF's `tf.nn.RNNCellResidualWrapper`):
    `residual_fn(inputs, outputs)`, by default `inputs + outputs` (same
    structure and shapes)."""

    def __init__(self, cell, residual_fn=None, **kwargs):
        super().__init__(cell, **kwargs)
        self._residual_fn = residual_fn

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        outputs, new_state = cell_call_fn(inputs, state, **kwargs)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, outputs), new_state
        nest_ops.assert_same_structure(inputs, outputs)
        ins, outs = nest_ops.flatten(inputs), nest_ops.flatten(outputs)
        for a, b in zip(ins, outs):
            sa, sb = tuple(a.shape), tuple(b.shape)
            if len(sa) != len(sb) or any(
                x is not None and y is not None and x != y for x, y in zip(sa, sb)
            ):
                raise ValueError(f"Shapes {sa} and {sb} are incompatible")
        summed = [math_ops.add(a, b) for a, b in zip(ins, outs)]
        return nest_ops.pack_sequence_as(outputs, summed), new_state

    def get_config(self):
        if self._residual_fn is not None:
            raise NotImplementedError(
                "RNNCellResidualWrapper.get_config with a residual_fn is not "
                "supported in jaxtape (TF serializes the function's bytecode)."
            )
        return super().get_config()


class RNNCellDeviceWrapper(_RNNCellWrapper):
    """Runs a cell's step on `device` (TF's `tf.nn.RNNCellDeviceWrapper`)."""

    def __init__(self, cell, device, **kwargs):
        super().__init__(cell, **kwargs)
        self._device = device

    def get_initial_state(self, batch_size=None):
        with device_lib.device(self._device):
            return super().get_initial_state(batch_size)

    def _call_wrapped_cell(self, inputs, state, cell_call_fn, **kwargs):
        with device_lib.device(self._device):
            return cell_call_fn(inputs, state, **kwargs)

    def get_config(self):
        return {**super().get_config(), "device": self._device}
