"""Keras's attention layers: EinsumDense, MultiHeadAttention,
GroupedQueryAttention, Attention, AdditiveAttention. Layer L5.

Weights, names and the `.weights.h5` layout are Keras 3's, so weights move
between tf.keras and jaxtape with `set_weights` or weight files. The scores
of each attention layer are ONE recorded op (`_attention_probs`: scores,
masks and softmax in one XLA computation); projections are one op each
(`_einsum_dense`). Dropout on the attention probabilities is `Dropout`'s
op on a key from the layer's `SeedStream`, so it is fresh on every compiled
call and reproducible from `seed`.
"""

from __future__ import annotations

import math
import re
import string
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import context
from jaxtape._src.core.dispatch import op
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.initializers import initializers
from jaxtape._src.keras import activations, regularizers
from jaxtape._src.keras.keras_tensor import KerasTensor, shape_of
from jaxtape._src.keras.layers.base import Layer, _layer_scope
from jaxtape._src.keras.layers.input_spec import InputSpec
from jaxtape._src.keras.layers.regularization import _dropout
from jaxtape._src.keras.layers.seed_generator import SeedStream
from jaxtape._src.ops import array_ops, math_ops, nondiff

__all__ = [
    "AdditiveAttention",
    "Attention",
    "EinsumDense",
    "GroupQueryAttention",
    "GroupedQueryAttention",
    "MultiHeadAttention",
]


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
        kwargs.pop("activity_regularizer", None)
        if lora_rank or lora_alpha:
            raise NotImplementedError(
                "EinsumDense(lora_rank=...) (LoRA) is not supported by jaxtape; "
                "leave `lora_rank` and `lora_alpha` unset."
            )
        super().__init__(**kwargs)
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
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint

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
        return y if fused else self.activation(y)

    def get_config(self):
        return {
            **super().get_config(),
            "output_shape": list(self.partial_output_shape),
            "equation": self.equation,
            "activation": activations.serialize(self.activation),
            "bias_axes": self.bias_axes,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
        }


# -- the attention core ------------------------------------------------------------
@op("AttentionProbs", inputs=("query", "key", "mask"), jit=True)
def _attention_probs(query, key, mask, equation, scale, axes, expand_at, zero_masked):
    """Keras's masked softmax of `einsum(equation, key, query * scale)` over
    `axes`. `mask` (bool, or True for none) gets axes inserted at `expand_at`
    until it has the scores' rank; masked scores are -1e9 (-3e4 in float16);
    `zero_masked` zeroes the masked probabilities (Keras's Softmax layer), so
    a row with every key masked is 0 there and uniform otherwise (Keras's
    `dot_product_attention` path)."""
    scores = jnp.einsum(equation, key, query * jnp.asarray(scale, query.dtype))
    mask = jnp.asarray(mask)
    if mask.ndim:
        while mask.ndim < scores.ndim:
            mask = jnp.expand_dims(mask, expand_at)
        big = -3e4 if scores.dtype == jnp.float16 else -1e9
        scores = jnp.where(mask, scores, jnp.asarray(big, scores.dtype))
    probs = jax.nn.softmax(scores, axis=axes)
    if zero_masked and mask.ndim:
        probs = jnp.where(mask, probs, jnp.zeros((), probs.dtype))
    return probs


_NO_MASK = np.True_  # the mask input when there is none (`where` keeps all)


def _dropped(probs, rate, stream, training):
    """Keras's dropout on attention probabilities: in training only."""
    if not training or rate <= 0:
        return probs
    return _dropout(probs, stream.next(), rate, None)


def _causal_mask(t, s):
    """Keras's causal mask of shape `(1, T, S)`: query i sees keys j <= i."""
    return np.tril(np.ones((t, s), bool))[None]


def _combined_mask(query, value, query_mask, value_mask, key_mask, attention_mask,
                   use_causal_mask):  # fmt: skip
    """Keras's `_compute_attention_mask`: the Keras masks of query `[B, T, 1]`,
    value and key `[B, 1, S]`, the causal mask `[1, T, S]` and the
    `attention_mask`, AND-ed; None when there is none."""
    masks = []
    if query_mask is not None:
        masks.append(math_ops.cast(query_mask, "bool")[:, :, None])
    for m in (value_mask, key_mask):
        if m is not None:
            masks.append(math_ops.cast(m, "bool")[:, None, :])
    if use_causal_mask:
        masks.append(_causal_mask(query.shape[1], value.shape[1]))
    if attention_mask is not None:
        masks.append(math_ops.cast(attention_mask, "bool"))
    if not masks:
        return None
    out = masks[0]
    for m in masks[1:]:
        out = nondiff.logical_and(out, m)
    return out


def _to_shape(x) -> tuple:
    return tuple(x.shape) if isinstance(x, KerasTensor) else shape_of(x)


class _MultiInputLayer(Layer):
    """A layer whose `build` takes the shapes of `query`, `value` and `key`
    (Keras's MultiHeadAttention signature): built on the first call with all
    three, eagerly or on KerasTensors."""

    def __call__(self, query: Any, value: Any = None, key: Any = None, **kwargs: Any):
        if value is None:
            raise ValueError(
                f"{type(self).__name__} layer {self.name!r} takes `query` and "
                "`value` (and optionally `key`): call it as `layer(query, value)`; "
                "for self-attention pass the same tensor twice."
            )
        if not isinstance(query, KerasTensor):
            value = self._autocast_inputs(value)
            key = None if key is None else self._autocast_inputs(key)
        if not self.built:
            shapes = [_to_shape(query), _to_shape(value)]
            with context.paused_tapes(), _layer_scope(self.name):
                build: Any = self.build  # (query_shape, value_shape, key_shape)
                build(*shapes, None if key is None else _to_shape(key))
            self.built = True
        return super().__call__(query, value, key, **kwargs)

    def _saveable_children(self) -> list:
        """Keras's `.weights.h5` walk visits the public properties
        (`key_dense`, ...) before the private attributes holding the same
        sublayers, so the sublayers are saved under the public names."""
        public = [
            (name, getattr(self, "_" + name))
            for name in self._PUBLIC_SUBLAYERS
            if getattr(self, "_" + name, None) is not None
        ]
        seen = {id(v) for _, v in public}
        rest = [(k, v) for k, v in super()._saveable_children() if id(v) not in seen]
        return sorted(public, key=lambda kv: kv[0]) + rest

    _PUBLIC_SUBLAYERS: tuple[str, ...] = ()


class MultiHeadAttention(_MultiInputLayer):
    """Multi-head attention (Keras's `MultiHeadAttention`, Vaswani et al. 2017).

    Call as `layer(query, value, key=None, attention_mask=None,
    return_attention_scores=False, training=None, use_causal_mask=False)`
    (also `value_mask`, `key_mask`: boolean `[B, S]`; `query_mask` is
    accepted and unused, as Keras 3 replaces it by the query's implicit
    mask).
    The projections are EinsumDense sublayers named `query`, `key`, `value`
    and `attention_output`, with Keras 3's kernel shapes (`(dim, heads,
    key_dim)`, output `(heads, value_dim, dim)`). `attention_axes` defaults
    to every axis between the batch and the feature axes. Dropout applies to
    the attention probabilities in training. A row whose keys are all masked
    gives zeros when scores are returned or dropout is on, and the mean of
    the values otherwise, as Keras's two code paths do.

    >>> mha = jaxtape.keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    >>> x = jaxtape.ones([1, 3, 8])
    >>> mha(x, x).shape
    TensorShape([1, 3, 8])

    Differences from Keras: `flash_attention=True` raises NotImplementedError
    (XLA fuses the attention); Keras's implicit masks (`mask_zero`
    embeddings) are not propagated: pass masks explicitly.
    """

    _PUBLIC_SUBLAYERS = ("key_dense", "output_dense", "query_dense", "value_dense")

    def __init__(
        self,
        num_heads,
        key_dim,
        value_dim=None,
        dropout=0.0,
        use_bias=True,
        output_shape=None,
        attention_axes=None,
        sliding_window=None,
        flash_attention=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        use_gate=False,
        seed=None,
        **kwargs,
    ):
        for arg, v in (("num_heads", num_heads), ("key_dim", key_dim)):
            if not isinstance(v, (int, np.integer)) or v <= 0:
                raise ValueError(
                    f"Received an invalid value for argument `{arg}`, expected a "
                    f"positive integer. Received: {arg}={v}"
                )
        if value_dim is not None and (
            not isinstance(value_dim, (int, np.integer)) or value_dim <= 0
        ):
            raise ValueError(
                "Received an invalid value for argument `value_dim`, expected a "
                f"positive integer or `None`. Received: value_dim={value_dim}"
            )
        if flash_attention:
            raise NotImplementedError(
                "MultiHeadAttention(flash_attention=True) is not supported by "
                "jaxtape; leave it unset (XLA compiles the attention as one "
                "fused computation)."
            )
        super().__init__(**kwargs)
        self.supports_masking = True
        self._num_heads, self._key_dim = int(num_heads), int(key_dim)
        self._value_dim = int(value_dim) if value_dim else self._key_dim
        self._dropout, self._use_bias, self._use_gate = (
            float(dropout),
            use_bias,
            use_gate,
        )
        if output_shape:
            if isinstance(output_shape, (int, np.integer)):
                output_shape = (int(output_shape),)
            try:
                output_shape = tuple(output_shape)
            except TypeError:
                raise ValueError(
                    f"Invalid `output_shape`: {output_shape}. When specified, the "
                    "`output_shape` should be of type tuple, list, or int."
                ) from None
        self._output_shape = output_shape or None
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        elif attention_axes and not isinstance(attention_axes, (list, tuple)):
            raise ValueError(
                "`attention_axes` must be an int, list, or tuple."
                f"Received: attention_axes={attention_axes}"
            )
        self._attention_axes: Any = tuple(attention_axes) if attention_axes else None
        if sliding_window is not None and (
            not isinstance(sliding_window, int) or sliding_window <= 0
        ):
            raise ValueError(
                "`sliding_window` must be `None` or a positive integer. "
                f"Received: sliding_window={sliding_window}"
            )
        self._sliding_window = sliding_window
        self._kernel_initializer = initializers.get(kernel_initializer)
        self._bias_initializer = initializers.get(bias_initializer)
        self._kernel_regularizer = regularizers.get(kernel_regularizer)
        self._bias_regularizer = regularizers.get(bias_regularizer)
        self._kernel_constraint = kernel_constraint
        self._bias_constraint = bias_constraint
        self.seed = seed
        self._inverse_sqrt_key_dim = 1.0 / math.sqrt(float(self._key_dim))
        self._seed_stream = SeedStream(seed)
        self._query_dense: Any = None  # EinsumDense sublayers, made by build
        self._key_dense: Any = None
        self._value_dense: Any = None
        self._output_dense: Any = None
        self._gate_dense: Any = None

    num_heads = property(lambda self: self._num_heads)
    key_dim = property(lambda self: self._key_dim)
    value_dim = property(lambda self: self._value_dim)
    dropout = property(lambda self: self._dropout)
    use_bias = property(lambda self: self._use_bias)
    attention_axes = property(lambda self: self._attention_axes)
    query_dense = property(lambda self: self._query_dense)
    key_dense = property(lambda self: self._key_dense)
    value_dense = property(lambda self: self._value_dense)
    output_dense = property(lambda self: self._output_dense)

    def _dense(self, equation, output_shape, bias_axes, name, activation=None):
        """An EinsumDense sublayer with this layer's initializers (fresh copies,
        as Keras, so each draws its own values)."""
        kernel_init = type(self._kernel_initializer).from_config(
            self._kernel_initializer.get_config()
        )
        bias_init = type(self._bias_initializer).from_config(
            self._bias_initializer.get_config()
        )
        return EinsumDense(
            equation,
            output_shape=output_shape,
            bias_axes=bias_axes if self._use_bias else None,
            activation=activation,
            name=name,
            kernel_initializer=kernel_init,
            bias_initializer=bias_init,
            kernel_regularizer=self._kernel_regularizer,
            bias_regularizer=self._bias_regularizer,
            kernel_constraint=self._kernel_constraint,
            bias_constraint=self._bias_constraint,
            dtype=self.dtype,
        )

    def build(self, query_shape, value_shape=None, key_shape=None):  # pyright: ignore[reportIncompatibleMethodOverride]
        if value_shape is None:
            raise ValueError(
                f"MultiHeadAttention layer {self.name!r}: build needs "
                "`query_shape` and `value_shape`; call the layer on "
                "`(query, value)` to build it."
            )
        key_shape = value_shape if key_shape is None else key_shape
        if tuple(value_shape[1:-1]) != tuple(key_shape[1:-1]):
            raise ValueError(
                "All dimensions of `value` and `key`, except the last one, must be "
                f"equal. Received: value_shape={value_shape} and "
                f"key_shape={key_shape}"
            )
        heads = [self._num_heads, self._key_dim]
        qr, vr, kr = len(query_shape), len(value_shape), len(key_shape)
        eq, bias, rank = _proj_equation(qr - 1, 1, 2)
        self._query_dense = self._dense(eq, _out_shape(rank - 1, heads), bias, "query")
        self._query_dense.build(query_shape)
        eq, bias, rank = _proj_equation(kr - 1, 1, 2)
        self._key_dense = self._dense(eq, _out_shape(rank - 1, heads), bias, "key")
        self._key_dense.build(key_shape)
        value_heads = [self._num_heads, self._value_dim]
        if self._use_gate:
            eq, bias, rank = _proj_equation(qr - 1, 1, 2)
            self._gate_dense = self._dense(
                eq, _out_shape(rank - 1, value_heads), bias, "gate", "sigmoid"
            )
            self._gate_dense.build(query_shape)
        eq, bias, rank = _proj_equation(vr - 1, 1, 2)
        self._value_dense = self._dense(
            eq, _out_shape(rank - 1, value_heads), bias, "value"
        )
        self._value_dense.build(value_shape)
        if self._attention_axes is None:
            self._attention_axes = tuple(range(1, rank - 2))
        else:
            self._attention_axes = tuple(
                a if a >= 0 else (rank - 1) + a for a in self._attention_axes
            )
        self._dot_product_equation, self._combine_equation, scores_rank = (
            _attention_equations(rank, self._attention_axes)
        )
        n = len(self._attention_axes)
        self._norm_axes = tuple(range(scores_rank - n, scores_rank))
        out_shape = self._output_shape or [query_shape[-1]]
        eq, bias, rank = _proj_equation(qr - 1, 2, len(out_shape))
        self._output_dense = self._dense(
            eq, _out_shape(rank - 1, out_shape), bias, "attention_output"
        )
        dense_in = list(self._query_dense.compute_output_shape(query_shape))
        dense_in[-1] = self._value_dim
        self._output_dense.build(tuple(dense_in))
        self.built = True

    def call(
        self,
        query,
        value,
        key=None,
        query_mask=None,
        value_mask=None,
        key_mask=None,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
    ):
        key = value if key is None else key
        # Keras replaces `query_mask` by the Keras mask of `query` (None here:
        # jaxtape propagates no implicit masks), so a passed one is unused.
        del query_mask
        mask = _combined_mask(
            query, value, None, value_mask, key_mask, attention_mask,
            use_causal_mask,
        )  # fmt: skip
        if self._sliding_window is not None:
            t, s = query.shape[1], value.shape[1]
            idx = np.abs(np.arange(t)[:, None] - np.arange(s)[None, :])
            band = (idx < self._sliding_window)[None]
            mask = band if mask is None else nondiff.logical_and(mask, band)
        gate = self._gate_dense(query) if self._gate_dense is not None else None
        q = self._query_dense(query)
        k = self._key_dense(key)
        v = self._value_dense(value)
        output, scores = self._compute_attention(
            q, k, v, mask, training, return_attention_scores
        )
        if gate is not None:
            output = math_ops.multiply(output, gate)
        output = self._output_dense(output)
        return (output, scores) if return_attention_scores else output

    def _compute_attention(self, query, key, value, attention_mask=None,
                           training=None, return_attention_scores=False):  # fmt: skip
        """Keras's `_compute_attention` on projected `[B, T, N, H]` tensors."""
        dropout = self._dropout > 0.0
        # Keras's `dot_product_attention` path (no dropout, no scores returned,
        # rank 4) leaves fully masked rows uniform; its Softmax path zeroes them.
        zero = dropout or return_attention_scores or len(query.shape) != 4
        probs = _attention_probs(
            query,
            key,
            _NO_MASK if attention_mask is None else attention_mask,
            self._dot_product_equation,
            self._inverse_sqrt_key_dim,
            self._norm_axes,
            -len(self._attention_axes) * 2 - 1,
            zero,
        )
        dropped = _dropped(probs, self._dropout, self._seed_stream, training)
        return math_ops.einsum(self._combine_equation, dropped, value), probs

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):  # pyright: ignore[reportIncompatibleMethodOverride]
        query_shape = tuple(query_shape)
        if self._output_shape:
            return query_shape[:-1] + tuple(self._output_shape)
        return query_shape

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self._num_heads,
            "key_dim": self._key_dim,
            "value_dim": self._value_dim,
            "dropout": self._dropout,
            "use_bias": self._use_bias,
            "use_gate": self._use_gate,
            "output_shape": None
            if self._output_shape is None
            else list(self._output_shape),
            "attention_axes": None
            if self._attention_axes is None
            else list(self._attention_axes),
            "sliding_window": self._sliding_window,
            "kernel_initializer": initializers.serialize(self._kernel_initializer),
            "bias_initializer": initializers.serialize(self._bias_initializer),
            "seed": self.seed,
        }


def _attention_equations(rank, attn_axes):
    """Keras's `_build_attention_equation`: the query-key dot product and the
    combination equations for `(batch, <attention axes>, heads, channels)`."""
    letters = string.ascii_lowercase
    target = letters[:rank]
    batch_dims = tuple(np.delete(np.arange(rank), (*attn_axes, rank - 1)))
    offset, source = rank, ""
    for i in range(rank):
        if i in batch_dims or i == rank - 1:
            source += target[i]
        else:
            source += letters[offset]
            offset += 1
    product = "".join(
        [target[i] for i in batch_dims]
        + [target[i] for i in attn_axes]
        + [source[i] for i in attn_axes]
    )
    return (
        f"{source},{target}->{product}",
        f"{product},{source}->{target}",
        len(product),
    )


def _proj_equation(free_dims, bound_dims, output_dims):
    """Keras's `_build_proj_equation`: `(equation, bias_axes, output rank)`."""
    letters = string.ascii_lowercase
    free = letters[:free_dims]
    bound = letters[free_dims : free_dims + bound_dims]
    outs = letters[free_dims + bound_dims : free_dims + bound_dims + output_dims]
    return f"{free}{bound},{bound}{outs}->{free}{outs}", outs, len(free + outs)


def _out_shape(output_rank, known_last_dims):
    return [None] * (output_rank - len(known_last_dims)) + list(known_last_dims)


# -- GroupedQueryAttention ------------------------------------------------------------
class GroupedQueryAttention(_MultiInputLayer):
    """Grouped-query attention (Keras's `GroupedQueryAttention`, exported by
    Keras and tf.keras as `GroupQueryAttention`; both names work here):
    `num_query_heads` query heads share `num_key_value_heads` key/value heads.

    Sublayers `query` (`(dim, num_query_heads, head_dim)`), `key`, `value`
    (`(dim, num_key_value_heads, head_dim)`) and `attention_output`, as
    Keras 3's. Call as MultiHeadAttention.

    Differences from Keras: `flash_attention=True` raises NotImplementedError.
    """

    _PUBLIC_SUBLAYERS = ()

    def __init__(
        self,
        head_dim,
        num_query_heads,
        num_key_value_heads,
        dropout=0.0,
        use_bias=True,
        sliding_window=None,
        flash_attention=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        use_gate=False,
        seed=None,
        **kwargs,
    ):
        if flash_attention:
            raise NotImplementedError(
                "GroupedQueryAttention(flash_attention=True) is not supported by "
                "jaxtape; leave it unset."
            )
        super().__init__(**kwargs)
        self.supports_masking = True
        self.head_dim = int(head_dim)
        self.num_query_heads = int(num_query_heads)
        self.num_key_value_heads = int(num_key_value_heads)
        if num_query_heads % num_key_value_heads != 0:
            raise ValueError(
                "`num_query_heads` must be divisible by `num_key_value_heads`."
            )
        self.num_repeats = num_query_heads // num_key_value_heads
        self.dropout, self.use_bias, self.use_gate = float(dropout), use_bias, use_gate
        if sliding_window is not None and (
            not isinstance(sliding_window, int) or sliding_window <= 0
        ):
            raise ValueError(
                "`sliding_window` must be `None` or a positive integer. "
                f"Received: sliding_window={sliding_window}"
            )
        self.sliding_window = sliding_window
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.seed = seed
        self._inverse_sqrt_head_dim = 1.0 / math.sqrt(float(self.head_dim))
        self._seed_stream = SeedStream(seed)
        self._gate_dense = None

    _dense = MultiHeadAttention._dense

    @property
    def _kernel_initializer(self):
        return self.kernel_initializer

    @property
    def _bias_initializer(self):
        return self.bias_initializer

    @property
    def _kernel_regularizer(self):
        return self.kernel_regularizer

    @property
    def _bias_regularizer(self):
        return self.bias_regularizer

    @property
    def _kernel_constraint(self):
        return self.kernel_constraint

    @property
    def _bias_constraint(self):
        return self.bias_constraint

    @property
    def _use_bias(self):
        return self.use_bias

    def build(self, query_shape, value_shape=None, key_shape=None):  # pyright: ignore[reportIncompatibleMethodOverride]
        value_shape = query_shape if value_shape is None else value_shape
        key_shape = value_shape if key_shape is None else key_shape
        self.feature_dim = query_shape[-1]
        q_heads = (None, self.num_query_heads, self.head_dim)
        kv_heads = (None, self.num_key_value_heads, self.head_dim)
        self._query_dense = self._dense("bqm,muh->bquh", q_heads, "uh", "query")
        self._query_dense.build(query_shape)
        self._key_dense = self._dense("bkm,mvh->bkvh", kv_heads, "vh", "key")
        self._key_dense.build(key_shape)
        if self.use_gate:
            self._gate_dense = self._dense(
                "bqm,muh->bquh", q_heads, "uh", "gate", "sigmoid"
            )
            self._gate_dense.build(query_shape)
        self._value_dense = self._dense("bkm,mvh->bkvh", kv_heads, "vh", "value")
        self._value_dense.build(value_shape)
        self._output_dense = self._dense(
            "bquh,uhm->bqm", (None, self.feature_dim), "m", "attention_output"
        )
        self._output_dense.build((None, None, self.num_query_heads, self.head_dim))
        self.built = True

    def call(
        self,
        query,
        value,
        key=None,
        query_mask=None,
        value_mask=None,
        key_mask=None,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
    ):
        key = value if key is None else key
        mask = _combined_mask(
            query, value, query_mask, value_mask, key_mask, attention_mask,
            use_causal_mask,
        )  # fmt: skip
        if self.sliding_window is not None:
            t, s = query.shape[1], value.shape[1]
            idx = np.abs(np.arange(t)[:, None] - np.arange(s)[None, :])
            band = (idx < self.sliding_window)[None]
            mask = band if mask is None else nondiff.logical_and(mask, band)
        gate = self._gate_dense(query) if self._gate_dense is not None else None
        q = self._query_dense(query)
        k = array_ops.repeat(self._key_dense(key), self.num_repeats, axis=2)
        v = array_ops.repeat(self._value_dense(value), self.num_repeats, axis=2)
        dropout = self.dropout > 0.0
        probs = _attention_probs(
            q,
            k,
            _NO_MASK if mask is None else mask,
            "bkuh,bquh->buqk",
            self._inverse_sqrt_head_dim,
            (-1,),
            -3,
            dropout or return_attention_scores,
        )
        dropped = _dropped(probs, self.dropout, self._seed_stream, training)
        output = math_ops.einsum("buqk,bkuh->bquh", dropped, v)
        if gate is not None:
            output = math_ops.multiply(output, gate)
        output = self._output_dense(output)
        return (output, probs) if return_attention_scores else output

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):  # pyright: ignore[reportIncompatibleMethodOverride]
        return tuple(query_shape)

    def get_config(self):
        return {
            **super().get_config(),
            "head_dim": self.head_dim,
            "num_query_heads": self.num_query_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "use_bias": self.use_bias,
            "use_gate": self.use_gate,
            "dropout": self.dropout,
            "sliding_window": self.sliding_window,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "seed": self.seed,
        }


GroupQueryAttention = GroupedQueryAttention  # tf.keras's (and Keras's export) name


# -- Attention, AdditiveAttention ------------------------------------------------
@op("LuongScores", inputs=("query", "key", "scale"), jit=True)
def _dot_scores(query, key, scale):
    """`query @ key^T * scale` (Keras's `Attention`, score_mode `dot`)."""
    return jnp.matmul(query, jnp.swapaxes(key, -2, -1)) * scale


@op("ConcatScores", inputs=("query", "key", "scale", "weight"), jit=True)
def _concat_scores(query, key, scale, weight):
    """`weight * sum(tanh(scale * (q + k)))` over features (Keras's
    `Attention`, score_mode `concat`)."""
    q, k = query[..., :, None, :], key[..., None, :, :]
    return weight * jnp.sum(jnp.tanh(scale * (q + k)), axis=-1)


@op("AdditiveScores", inputs=("query", "key", "scale"), jit=True)
def _additive_scores(query, key, scale):
    """`sum(scale * tanh(q + k))` over features (Keras's `AdditiveAttention`)."""
    q, k = query[..., :, None, :], key[..., None, :, :]
    return jnp.sum(scale * jnp.tanh(q + k), axis=-1)


@op("ApplyAttentionScores", inputs=("scores", "mask"), jit=True)
def _masked_softmax_last(scores, mask):
    """Keras's `Attention._apply_scores` softmax: masked scores minus 1e9
    (65504 in float16), then softmax over the last axis."""
    mask = jnp.asarray(mask)
    if mask.ndim:
        if mask.ndim == 2:
            mask = mask[:, None, :]
        big = 65504.0 if scores.dtype == jnp.float16 else 1.0e9
        scores = jnp.where(mask, scores, scores - jnp.asarray(big, scores.dtype))
    return jax.nn.softmax(scores, axis=-1)


class Attention(Layer):
    """Dot-product (Luong-style) attention (Keras's `Attention`).

    Call on `[query, value]` or `[query, value, key]`, with `mask=[query_mask,
    value_mask]`, `return_attention_scores`, `use_causal_mask`, `training`.
    `use_scale` adds a trainable scalar `scale`; `score_mode='concat'` scores
    with `concat_score_weight * sum(tanh(scale * (q + k)))`.

    Differences from Keras: None known.
    """

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None,
                 **kwargs):  # fmt: skip
        super().__init__(**kwargs)
        self.use_scale, self.score_mode = use_scale, score_mode
        self.dropout, self.seed = float(dropout), seed
        self._seed_stream = SeedStream(seed)
        if score_mode not in ("dot", "concat"):
            raise ValueError(
                "Invalid value for argument score_mode. Expected one of "
                f"{{'dot', 'concat'}}. Received: score_mode={score_mode}"
            )

    def _validate_inputs(self, inputs, mask=None):
        name = type(self).__name__
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(
                f"{name} layer must be called on a list of inputs, namely "
                f"[query, value] or [query, value, key]. Received: inputs={inputs}."
            )
        if not 2 <= len(inputs) <= 3:
            raise ValueError(
                f"{name} layer accepts inputs list of length 2 or 3, namely "
                f"[query, value] or [query, value, key]. Received length: "
                f"{len(inputs)}."
            )
        if mask is not None and (
            not isinstance(mask, (list, tuple)) or not 2 <= len(mask) <= 3
        ):
            raise ValueError(
                f"{name} layer mask must be a list of length 2 or 3, namely "
                f"[query_mask, value_mask]. Received: mask={mask}."
            )

    def build(self, input_shape):
        self._validate_inputs(input_shape)
        self.scale = self.concat_score_weight = None
        if self.use_scale:
            self.scale = self.add_weight("scale", (), initializer="ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(
                "concat_score_weight", (), initializer="ones"
            )
        self.built = True

    def _calculate_scores(self, query, key):
        scale = 1.0 if self.scale is None else self.scale
        if self.score_mode == "dot":
            return _dot_scores(query, key, scale)
        return _concat_scores(query, key, scale, self.concat_score_weight)

    def call(self, inputs, mask=None, training=None, return_attention_scores=False,
             use_causal_mask=False):  # fmt: skip
        self._validate_inputs(inputs, mask)
        q, v = inputs[0], inputs[1]
        k = inputs[2] if len(inputs) > 2 else v
        q_mask = mask[0] if mask else None
        v_mask = mask[1] if mask else None
        scores = self._calculate_scores(q, k)
        scores_mask = None
        if v_mask is not None:
            scores_mask = math_ops.cast(v_mask, "bool")
        if use_causal_mask:
            causal = _causal_mask(scores.shape[-2], scores.shape[-1])
            scores_mask = (
                causal
                if scores_mask is None
                else nondiff.logical_and(scores_mask[..., None, :], causal)
            )
        weights = _masked_softmax_last(
            scores, _NO_MASK if scores_mask is None else scores_mask
        )
        applied = _dropped(weights, self.dropout, self._seed_stream, training)
        output = math_ops.matmul(applied, v)
        if q_mask is not None:
            keep = math_ops.cast(q_mask, "bool")[..., None]
            output = array_ops.where(keep, output, 0.0)
        return (output, weights) if return_attention_scores else output

    def compute_output_shape(self, input_shape):
        return (*tuple(input_shape[0])[:-1], tuple(input_shape[1])[-1])

    def get_config(self):
        return {
            **super().get_config(),
            "use_scale": self.use_scale,
            "score_mode": self.score_mode,
            "dropout": self.dropout,
            "seed": self.seed,
        }


class AdditiveAttention(Attention):
    """Additive (Bahdanau-style) attention (Keras's `AdditiveAttention`):
    scores `sum(scale * tanh(q + k))` over features, with a trainable `scale`
    of shape `(dim,)` (glorot uniform) when `use_scale` (the default).

    Differences from Keras: None known.
    """

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape):
        self._validate_inputs(input_shape)
        self.scale = self.concat_score_weight = None
        if self.use_scale:
            dim = tuple(input_shape[0])[-1]
            self.scale = self.add_weight("scale", (dim,), initializer="glorot_uniform")
        self.built = True

    def _calculate_scores(self, query, key):
        scale = 1.0 if self.scale is None else self.scale
        return _additive_scores(query, key, scale)

    def get_config(self):
        cfg = super().get_config()
        del cfg["score_mode"]
        return cfg
