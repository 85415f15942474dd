"""`jaxtape.autodiff` (TF's `tf.autodiff`), plus the compiled-backward cache stats."""

from jaxtape._src.autodiff.forward import ForwardAccumulator  # noqa: F401
from jaxtape._src.autodiff.gradient_tape import GradientTape  # noqa: F401


def cache_stats() -> dict:
    """Hit/miss/compile counters of the compiled-backward cache."""
    from jaxtape._src.autodiff.backward import cache

    return cache.stats()


def clear_cache() -> None:
    """Empties the compiled-backward cache and resets its counters."""
    from jaxtape._src.autodiff.backward import cache

    cache.clear()
