"""Keras's MultiHeadAttention and GroupedQueryAttention, and the attention
core they share (masks, the scores op, dropout on a SeedStream). Layer L5.
"""

from __future__ import annotations

import math
import string
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import context
from jaxtape._src.core.dispatch import op
from jaxtape._src.initializers import initializers
from jaxtape._src.keras import constraints, regularizers
from jaxtape._src.keras.keras_tensor import KerasTensor, shape_of
from jaxtape._src.keras.layers.attention.einsum_dense import EinsumDense
from jaxtape._src.keras.layers.base import Layer, _layer_scope, get_keras_mask
from jaxtape._src.keras.layers.core import add_activity_loss
from jaxtape._src.keras.layers.regularization import _dropout
from jaxtape._src.keras.layers.seed_generator import SeedStream
from jaxtape._src.ops import array_ops, math_ops, nondiff

__all__ = ["GroupQueryAttention", "GroupedQueryAttention", "MultiHeadAttention"]


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
        self._kernel_constraint = constraints.get(kernel_constraint)
        self._bias_constraint = constraints.get(bias_constraint)
        # (Keras's: the projections' activity regularizer, not this layer's)
        self._activity_regularizer = regularizers.get(activity_regularizer)
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
            activity_regularizer=self._activity_regularizer,
            kernel_constraint=self._kernel_constraint,
            bias_constraint=self._bias_constraint,
            dtype=self.dtype_policy,
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
        # Keras replaces `query_mask` by the Keras mask of `query` (from
        # `Embedding(mask_zero=True)`, `Masking`); `value_mask`/`key_mask`
        # come from theirs when not given (the Layer's call fills them).
        query_mask = get_keras_mask(query)
        mask = _combined_mask(
            query, value, query_mask, value_mask, key_mask, attention_mask,
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
            **_regularizers_and_constraints(self),
            "seed": self.seed,
        }


def _regularizers_and_constraints(layer) -> dict:
    """Keras's config entries of the projections' regularizers and constraints."""
    out = {}
    for key in ("kernel_regularizer", "bias_regularizer", "activity_regularizer"):
        obj = getattr(layer, "_" + key)
        out[key] = None if obj is None else regularizers.serialize(obj)
    for key in ("kernel_constraint", "bias_constraint"):
        obj = getattr(layer, "_" + key)
        out[key] = None if obj is None else constraints.serialize(obj)
    return out


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
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        # (Keras's: on the projections and, as a Layer's, on the outputs)
        self.activity_regularizer = regularizers.get(activity_regularizer)
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
    def _activity_regularizer(self):
        return self.activity_regularizer

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
        outputs = (output, probs) if return_attention_scores else (output,)
        if self.activity_regularizer is not None:  # (Keras's Layer.__call__)
            for out in outputs:
                add_activity_loss(self, self.activity_regularizer, out)
        return outputs if return_attention_scores else output

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
            **_regularizers_and_constraints(self),
            "seed": self.seed,
        }

    def _serialize(self) -> dict:
        # Keras files it by its exported name; tf.keras loads no other
        return {**super()._serialize(), "class_name": "GroupQueryAttention"}


GroupQueryAttention = GroupedQueryAttention  # tf.keras's (and Keras's export) name
