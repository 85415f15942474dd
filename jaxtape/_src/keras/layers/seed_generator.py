"""The random keys of Keras layers that sample (attention dropout, random
augmentation): Keras 3's `SeedGenerator`. Layer L5.

A layer given a `seed` owns a `jaxtape.random.Generator` seeded with it, whose
state is a Variable: `jaxtape.function` lifts it like any state, so a compiled
call draws fresh values each time, and two layers built with the same seed
draw the same sequence. Without a seed, keys come from the global generator
(`next_key`), which `jaxtape.random.set_seed` makes reproducible. The state
is not one of the layer's weights (Keras 3 lists it in `variables` only).
"""

from __future__ import annotations

import jax

from jaxtape._src.core import context
from jaxtape._src.state.random_ops import Generator, next_key


class SeedStream:
    """Fresh `jax.random` key data on each `next()` (one per sampling call)."""

    def __init__(self, seed: int | None = None):
        self.seed = seed
        self._generator = None
        if seed is not None:
            with context.paused_tapes():
                self._generator = Generator(int(seed), name="seed_generator_state")

    def next(self):
        """The raw key data (uint32) of a fresh key, for an op's key input."""
        key = next_key() if self._generator is None else self._generator.make_key()
        return jax.random.key_data(key)
