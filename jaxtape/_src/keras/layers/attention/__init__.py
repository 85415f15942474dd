"""Keras's attention layers: EinsumDense, MultiHeadAttention,
GroupedQueryAttention, Attention, AdditiveAttention. Layer L5.

Weights, names and the `.weights.h5` layout are Keras 3's, so weights move
between tf.keras and jaxtape with `set_weights` or weight files. The scores
of each attention layer are ONE recorded op (`_attention_probs`: scores,
masks and softmax in one XLA computation); projections are one op each
(`_einsum_dense`). Dropout on the attention probabilities is `Dropout`'s
op on a key from the layer's `SeedStream`, so it is fresh on every compiled
call and reproducible from `seed`.

`einsum_dense` (EinsumDense), `multi_head` (MultiHeadAttention,
GroupedQueryAttention and their shared core), `dot` (Attention,
AdditiveAttention); every name in `__all__` is re-exported as
`jaxtape.keras.layers.<name>`.
"""

from __future__ import annotations

from jaxtape._src.keras.layers.attention import dot, einsum_dense, multi_head
from jaxtape._src.keras.layers.attention.dot import *  # noqa: F403
from jaxtape._src.keras.layers.attention.einsum_dense import *  # noqa: F403
from jaxtape._src.keras.layers.attention.multi_head import *  # noqa: F403

__all__: list[str] = []
__all__ += einsum_dense.__all__
__all__ += multi_head.__all__
__all__ += dot.__all__
