"""Compiled programs keyed by program structure: an LRU of functions. Layer L0.

The tape's backward pass and deferred forward segments both meet programs that
are built at run time from what was recorded, and a training loop meets the
same ones every step: each is compiled with `jax.jit` the first time it is
seen and reused, so a step becomes a few XLA calls.

Running a new program op by op instead costs no compile of its own, but
every primitive at a new shape is compiled by XLA on its own (10-30 ms each
on CPU), so a cold op-by-op run is slower than compiling the whole program
once (the seed model's first eager step: 3.2-3.6 s op by op, 1.6-2.2 s
compiled). Op by op wins when programs never recur but their primitives
do: a loop whose structure changes every step. So a new program runs op by
op while the previous new program of its kind has not recurred (structures
are changing), and is compiled at first sight otherwise; a program op by
op the first time is compiled when it recurs.
"""

from __future__ import annotations

import collections
import ctypes
import gc
import os
from typing import Any

import jax
import jax.core

from jaxtape._src.core import context

_ABSENT = object()
_SEEN_ONCE = object()


# XLA's compile time and memory grow faster than linearly in a program's
# length (a 600-op elementwise chain's gradient took ~10 s to compile, 2k ops
# a minute and gigabytes), while running a program op by op grows linearly:
# programs longer than this stay eager however often they recur.
_limits = {"max_ops": 1000}


def set_max_compiled_ops(max_ops: int) -> None:
    """Programs built from a tape with more than `max_ops` recorded ops
    (default 1000) are never compiled whole: a backward pass is compiled in
    segments (`autodiff/segments`), a deferred forward runs op by op."""
    if int(max_ops) < 0:
        raise ValueError(f"max_ops must be >= 0; got {max_ops}.")
    _limits["max_ops"] = int(max_ops)


def get_max_compiled_ops() -> int:
    return _limits["max_ops"]


class CompileCache:
    """An LRU of functions: `jax.jit(make())`, or `make()` (op by op) the
    first time while structures of its kind are not recurring.

    Programs of several kinds share it ("forward", "backward"); each kind
    counts its `hits`, `misses`, `compiles` and `uncompiled` (programs over
    the size limit, never compiled whole), so that tests and benchmarks can see that a
    repeated training step compiles once.
    """

    _COUNTERS = ("hits", "misses", "compiles", "uncompiled")

    def __init__(self, maxsize: int = 512):
        self.maxsize = maxsize
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self._counts: dict = {}  # kind -> {counter: n}
        # kind -> [the key last seen new, whether it has recurred since]
        self._newest: dict = {}

    def _count(self, kind):
        counts = self._counts.get(kind)
        if counts is None:
            counts = self._counts[kind] = dict.fromkeys(self._COUNTERS, 0)
        return counts

    def lookup(self, key, make, n_ops: int = 0, kind: str = "program") -> Any:
        """The function for `key`: jitted, or op by op the first time while
        new programs of this kind are not recurring (module docstring).

        `n_ops`: the program's length; one over `set_max_compiled_ops`'s limit
        is always eager, and takes no cache entry.
        """
        if context.state.function_depth:  # traced into a jaxtape.function program:
            return make()  # (XLA compiles it there; a nested jit would slow it)
        counts = self._count(kind)
        if n_ops > _limits["max_ops"]:
            counts["uncompiled"] += 1
            return make()
        entry = self._entries.get(key, _ABSENT)
        if entry is _ABSENT:
            counts["misses"] += 1
            newest = self._newest.get(kind)
            self._newest[kind] = [key, False]
            if newest is None or newest[1]:  # structures recur: compile now
                entry = self._entries[key] = jax.jit(make())
                counts["compiles"] += 1
            else:
                entry = self._entries[key] = _SEEN_ONCE
            if len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)
            return make() if entry is _SEEN_ONCE else entry
        counts["hits"] += 1
        self._entries.move_to_end(key)
        newest = self._newest.get(kind)
        if newest is not None and not newest[1] and newest[0] == key:
            newest[1] = True
        if entry is _SEEN_ONCE:
            entry = self._entries[key] = jax.jit(make())
            counts["compiles"] += 1
        return entry

    def clear(self) -> None:
        self._entries.clear()
        self._counts.clear()
        self._newest.clear()

    def stats(self, kind: str = "program") -> dict:
        """The counters of one kind of program, and the cache's size."""
        return {**self._count(kind), "size": len(self._entries)}


def abstract_value(v):
    """A hashable stand-in for an input of a cached program: JAX's own aval
    (shape, dtype, weak type) for arrays, tracers and pending values; the type
    for a Python scalar (passed weakly typed); shape and dtype for NumPy."""
    t = type(v)
    if t is int or t is float or t is complex or t is bool or v is None:
        return t  # (None: an optional input an op was given as None)
    aval = getattr(v, "aval", None)
    if aval is not None:
        return aval
    return (tuple(v.shape), v.dtype, False)


# -- the process-wide bound on compiled executables --------------------------------
class _CompileGuard:
    """Bounds the memory JAX's in-memory compile caches hold.

    XLA compiles one executable per op and input shape, even for eager ops
    (each ~1.5 MB on CPU), and JAX keeps them all: an eager model fed 500
    batch shapes grew by several GB. The guard counts XLA compiles (JAX's own
    monitoring events); after `limit` of them it clears JAX's caches
    (`jax.clear_caches()`) and returns the freed memory to the system, at the
    next op (never inside a compile). Programs in use compile again when next
    called (the cost of one compile each). `limit` 0 turns it off.
    """

    def __init__(self, limit: int):
        self.limit = limit
        self.count = 0
        self.clears = 0
        self.pending = False  # read by the dispatcher before each op

    def on_event(self, event: str, duration_secs: float, **kwargs: str | int) -> None:
        if event != _COMPILE_EVENT or not self.limit:
            return
        self.count += 1
        if self.count >= self.limit:
            self.pending = True

    def release_if_safe(self, inputs) -> None:
        """`release`, unless called inside a trace (a compiled function being
        traced, a gradient replaying user code): then at a later op."""
        if context.state.function_depth:
            return
        for x in inputs:
            v = getattr(x, "_v", x)
            if isinstance(v, jax.core.Tracer):
                return
        self.release()

    def release(self) -> None:
        """Clears JAX's compile caches (called at a safe point, between ops)."""
        self.pending = False
        self.count = 0
        self.clears += 1
        jax.clear_caches()
        gc.collect()
        _malloc_trim()


_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


def _malloc_trim() -> None:
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: the allocator keeps it
        pass


def _initial_limit() -> int:
    text = os.environ.get("JAXTAPE_COMPILE_CACHE_LIMIT", "500")
    try:
        return max(int(text), 0)
    except ValueError:
        raise ValueError(
            f"JAXTAPE_COMPILE_CACHE_LIMIT must be a whole number of compiles "
            f"(0: no limit); got {text!r}."
        ) from None


guard = _CompileGuard(_initial_limit())
jax.monitoring.register_event_duration_secs_listener(guard.on_event)


def set_compile_cache_limit(compiles: int) -> None:
    """After this many XLA compiles, JAX's compile caches are cleared (default
    500; 0: never). Bounds the memory of programs compiled for many shapes."""
    if int(compiles) < 0:
        raise ValueError(f"compiles must be >= 0; got {compiles}.")
    guard.limit = int(compiles)
    guard.pending = bool(guard.limit) and guard.count >= guard.limit


def get_compile_cache_limit() -> int:
    return guard.limit
