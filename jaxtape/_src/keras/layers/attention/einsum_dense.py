"""Keras's `EinsumDense`: a dense layer computed by an einsum, the
projections of the attention layers. Layer L5.
"""

from __future__ import annotations

import math
import re

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core.dispatch import op
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.initializers import initializers
from jaxtape._src.keras import activations, constraints, regularizers
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.layers.core import _serialized, add_activity_loss
from jaxtape._src.keras.layers.input_spec import InputSpec

__all__ = ["EinsumDense"]


# -- EinsumDense ------------------------------------------------------------------
@op("EinsumDense", inputs=("x", "kernel", "bias"), jit=True)
def _einsum_dense(x, kernel, bias, equation, act):
    """`act(einsum(equation, x, kernel) + bias)`."""
    y = jnp.einsum(equation, x, kernel)
    if bias is not None:
        y = y + bias
    return y if act is None else act(y)


@op("EinsumDenseNoBias", inputs=("x", "kernel"), jit=True)
def _einsum_dense_no_bias(x, kernel, equation, act):
    """`act(einsum(equation, x, kernel))`."""
    y = jnp.einsum(equation, x, kernel)
    return y if act is None else act(y)


def _analyze_einsum(equation, bias_axes, input_shape, output_shape):
    """Keras's `_analyze_einsum_string`: `(kernel_shape, bias_shape,
    full_output_shape, input_axes, output_axes)` of an EinsumDense, with
    Keras's errors."""
    dots = re.sub(r"\.\.\.", "0", equation)
    patterns = (
        ("([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)$", False),
        ("0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)$", True),
        ("([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0$", False),
    )
    found = [(m, lft) for p, lft in patterns if (m := re.match(p, dots))]
    if not found:
        raise ValueError(
            f"Invalid einsum equation '{equation}'. Equations must be in the form "
            "[X],[Y]->[Z], ...[X],[Y]->...[Z], or [X]...,[Y]->[Z]...."
        )
    match, left = found[0]
    in_spec, w_spec, out_spec = match.groups()
    input_shape = tuple(input_shape)
    elided = len(input_shape) - len(in_spec)
    out = [input_shape[0], *output_shape]
    if elided > 0 and left:
        for i in range(1, elided):
            out.insert(1, input_shape[i])
    elif elided > 0:
        out.extend(input_shape[len(input_shape) - elided :])
    if left:
        in_map = {d: i + elided - len(input_shape) for i, d in enumerate(in_spec)}
        out_map = {d: i + elided for i, d in enumerate(out_spec)}
    else:
        in_map = {d: i for i, d in enumerate(in_spec)}
        out_map = {d: i for i, d in enumerate(out_spec)}
    for d in in_spec:
        if d in out_map:
            o, i = out[out_map[d]], input_shape[in_map[d]]
            if o is not None and o != i:
                raise ValueError(
                    "Input shape and output shape do not match at shared dimension "
                    f"'{d}'. Input shape is {i}, and output shape is {o}."
                )
    for d in out_spec:
        if d not in in_spec and d not in w_spec:
            raise ValueError(
                f"Dimension '{d}' was specified in the output '{out_spec}' but has "
                f"no corresponding dim in the input spec '{in_spec}' or weight "
                f"spec '{w_spec}'"
            )
    kernel, in_axes, out_axes = [], [], []
    for i, d in enumerate(w_spec):
        if d in out_map:
            kernel.append(out[out_map[d]])
            out_axes.append(i)
        elif d in in_map:
            kernel.append(input_shape[in_map[d]])
            in_axes.append(i)
        else:
            raise ValueError(
                f"Weight dimension '{d}' did not have a match in either the input "
                f"spec '{in_spec}' or the output spec '{out_spec}'. For this layer, "
                "the weight must be fully specified."
            )
    bias = None
    if bias_axes is not None:
        sizes = {c: out[i + (elided if left else 0)] for i, c in enumerate(out_spec)}
        for c in bias_axes:
            if c not in out_spec:
                raise ValueError(
                    f"Bias dimension '{c}' was requested, but is not part of the "
                    f"output spec '{out_spec}'"
                )
        first = min(out_spec.find(c) for c in bias_axes)
        bias = [sizes[c] if c in bias_axes else 1 for c in out_spec[first:]]
        if not left:
            bias += [1] * max(elided, 0)
    return kernel, bias, out, in_axes, out_axes


class _FansFromAxes(initializers.Initializer):
    """A VarianceScaling initializer whose fans are the kernel's input and
    output axes (Keras 3.15 passes EinsumDense's `input_axes`/`output_axes`):
    a `(fan_in, fan_out)` draw, reshaped (the draws are i.i.d.)."""

    def __init__(self, base, in_axes, out_axes):
        self.base, self.in_axes, self.out_axes = base, in_axes, out_axes

    def __call__(self, shape, dtype=None, **kwargs):
        fan_in = math.prod(shape[a] for a in self.in_axes)
        fan_out = math.prod(shape[a] for a in self.out_axes)
        flat = self.base((fan_in, fan_out), dtype=dtype)
        return Tensor(jnp.reshape(flat._value, tuple(shape)))


class EinsumDense(Layer):
    """A dense layer computed by an einsum (Keras's `EinsumDense`).

    `equation` is `ab,bc->ac`, `...ab,bc->...ac` or `ab...,bc->ac...`;
    `output_shape` the output's shape without the batch (and elided) axes
    (None where the input gives it); `bias_axes` the output letters that
    get a bias. The kernel is drawn with its fans taken from its input and
    output axes, as Keras 3.15's.

    >>> dense = jaxtape.keras.layers.EinsumDense
    >>> layer = dense("abc,cd->abd", (None, 4), bias_axes="d")
    >>> layer(jaxtape.ones([2, 3, 5])).shape
    TensorShape([2, 3, 4])

    Differences from Keras: LoRA (`lora_rank`) and quantization raise
    NotImplementedError.
    """

    def __init__(
        self,
        equation,
        output_shape,
        activation=None,
        bias_axes=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        lora_rank=None,
        lora_alpha=None,
        **kwargs,
    ):
        for arg in ("gptq_unpacked_column_size", "quantization_config"):
            if kwargs.pop(arg, None) is not None:
                raise NotImplementedError(
                    f"EinsumDense({arg}=...) (Keras's quantization) is not "
                    "supported by jaxtape; leave it unset."
                )
        activity_regularizer = kwargs.pop("activity_regularizer", None)
        if lora_rank or lora_alpha:
            raise NotImplementedError(
                "EinsumDense(lora_rank=...) (LoRA) is not supported by jaxtape; "
                "leave `lora_rank` and `lora_alpha` unset."
            )
        super().__init__(**kwargs)
        self.activity_regularizer = regularizers.get(activity_regularizer)
        self.equation = equation
        self.partial_output_shape = (
            (int(output_shape),)
            if isinstance(output_shape, (int, np.integer))
            else tuple(output_shape)
        )
        self.bias_axes = bias_axes
        self.activation = activations.get(activation)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    def build(self, input_shape):
        kernel_shape, bias_shape, _, in_axes, out_axes = _analyze_einsum(
            self.equation, self.bias_axes, input_shape, self.partial_output_shape
        )
        self.input_spec = InputSpec(ndim=len(input_shape))
        init = self.kernel_initializer
        if isinstance(init, initializers.VarianceScaling):
            init = _FansFromAxes(init, in_axes, out_axes)
        self.kernel = self.add_weight(
            "kernel",
            tuple(kernel_shape),
            initializer=init,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.bias = None
        if bias_shape is not None:
            self.bias = self.add_weight(
                "bias",
                tuple(bias_shape),
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        self.built = True

    def compute_output_shape(self, input_shape):
        return tuple(
            _analyze_einsum(
                self.equation, self.bias_axes, input_shape, self.partial_output_shape
            )[2]
        )

    def call(self, inputs, training=None):
        body = activations.fusable_body(self.activation)
        fused = body is not None or self.activation is activations.linear
        if self.bias is not None:
            y = _einsum_dense(
                inputs, self.kernel, self.bias, self.equation, body if fused else None
            )
        else:
            y = _einsum_dense_no_bias(
                inputs, self.kernel, self.equation, body if fused else None
            )
        y = y if fused else self.activation(y)
        if self.activity_regularizer is not None:
            add_activity_loss(self, self.activity_regularizer, y)
        return y

    def get_config(self):
        return {
            **super().get_config(),
            "output_shape": list(self.partial_output_shape),
            "equation": self.equation,
            "activation": activations.serialize(self.activation),
            "bias_axes": self.bias_axes,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            **_serialized(
                self,
                "regularizer",
                regularizers.serialize,
                "kernel",
                "bias",
                "activity",
            ),
            **_serialized(self, "constraint", constraints.serialize, "kernel", "bias"),
            "quantization_config": None,
        }
