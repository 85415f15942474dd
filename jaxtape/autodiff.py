"""`jaxtape.autodiff` (TF's `tf.autodiff`), plus the compiled-backward cache stats."""

from jaxtape._src.autodiff.forward import ForwardAccumulator  # noqa: F401
from jaxtape._src.autodiff.gradient_tape import GradientTape  # noqa: F401


def cache_stats() -> dict:
    """Hit/miss/compile counters of the compiled-backward cache."""
    from jaxtape._src.autodiff.backward import cache

    return cache.stats()


def deferred_cache_stats() -> dict:
    """Hit/miss/compile counters of the deferred-forward cache (values computed
    from ops a recording tape ran lazily; see README, "Deferred execution")."""
    from jaxtape._src.core.deferred import cache

    return cache.stats()


def clear_cache() -> None:
    """Empties the compiled-backward and deferred-forward caches (and counters)."""
    from jaxtape._src.autodiff.backward import cache
    from jaxtape._src.core import deferred

    cache.clear()
    deferred.clear_cache()
