"""Compile on second sight: an LRU of functions keyed by program structure. Layer L0.

The tape's backward pass and deferred forward segments both meet programs that
are built at run time from what was recorded. A program seen once runs eagerly
(no compile cost for one-off work); when its key recurs it is compiled with
`jax.jit` and reused, so a training loop becomes a few XLA calls per step.
"""

from __future__ import annotations

import collections

import jax

_ABSENT = object()
_SEEN_ONCE = object()


class CompileCache:
    """An LRU of functions: `make()` the first time, `jax.jit(make())` after.

    `hits`, `misses` and `compiles` are public so that tests and benchmarks can
    see that a repeated training-step shape compiles once.
    """

    def __init__(self, maxsize: int = 512):
        self.maxsize = maxsize
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self.hits = self.misses = self.compiles = 0

    def lookup(self, key, make):
        """The function for `key`: eager the first time, jitted from the second."""
        entry = self._entries.get(key, _ABSENT)
        if entry is _ABSENT:
            self.misses += 1
            self._entries[key] = _SEEN_ONCE
            if len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)
            return make()
        self.hits += 1
        self._entries.move_to_end(key)
        if entry is _SEEN_ONCE:
            entry = self._entries[key] = jax.jit(make())
            self.compiles += 1
        return entry

    def clear(self) -> None:
        self._entries.clear()
        self.hits = self.misses = self.compiles = 0

    def stats(self) -> dict:
        return {
            "hits": self.hits,
            "misses": self.misses,
            "compiles": self.compiles,
            "size": len(self._entries),
        }


def abstract_value(v):
    """A hashable stand-in for an input of a cached program: JAX's own aval
    (shape, dtype, weak type) for arrays, tracers and pending values; the type
    for a Python scalar (passed weakly typed); shape and dtype for NumPy."""
    t = type(v)
    if t is int or t is float or t is complex or t is bool:
        return t
    aval = getattr(v, "aval", None)
    if aval is not None:
        return aval
    return (tuple(v.shape), v.dtype, False)
