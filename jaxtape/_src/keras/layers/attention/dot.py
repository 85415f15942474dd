"""Keras's dot-product and additive attention layers (`Attention`,
`AdditiveAttention`). Layer L5.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxtape._src.core.dispatch import op
from jaxtape._src.keras.layers.attention.multi_head import (
    _NO_MASK,
    _causal_mask,
    _dropped,
)
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.layers.seed_generator import SeedStream
from jaxtape._src.ops import array_ops, math_ops, nondiff

__all__ = ["AdditiveAttention", "Attention"]


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
        self.supports_masking = True  # (the query's mask goes on, as Keras's)
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

    def compute_mask(self, inputs, previous_mask=None):
        """Keras's: the query's mask."""
        return None if not previous_mask else previous_mask[0]

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
