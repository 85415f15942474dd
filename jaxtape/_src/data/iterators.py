"""The iterators behind `map`, `filter` and `prefetch`, and the wrapper that
calls a user's function on an element (TF's argument spreading, errors that
name the function).

Layer L4.
"""

from __future__ import annotations

import collections
import queue
import threading
from collections.abc import Iterator
from typing import Any

import jax
import numpy as np

from jaxtape._src.core import dtypes, errors
from jaxtape._src.core.tensor import Tensor, tree_flatten
from jaxtape._src.data.structure import _kept, _map_structure, _to_tensor
from jaxtape._src.function.function import Function

AUTOTUNE = -1
_EAGER = object()  # (`_UserFunction`: the compiled call was not taken)
_VALUES = (np.ndarray, np.generic, int, float, complex, bool, str, bytes, type(None))


def _workers(num_parallel_calls) -> int:
    if num_parallel_calls is None:
        return 1
    n = int(num_parallel_calls)
    if n == AUTOTUNE:
        import os

        return max(os.cpu_count() or 1, 1)
    return max(n, 1)


class _UserFunction:
    """Calls a user's `map`/`filter` function on Tensors; its errors name it.

    With `traced`, the function runs as a `jaxtape.function` (TF traces
    `map`/`filter` functions into a graph): traced once per element shape
    and dtype (Python side effects run then, as in TF), then one compiled
    call per element. It runs eagerly per element instead when it cannot be
    traced (string, ragged or sparse elements, NumPy calls, host-only ops:
    the first element that fails to trace, or whose eager run then
    succeeds, switches the dataset to eager calls) or when elements come in
    more than `_MAX_SHAPES` shapes (one XLA compile each).
    """

    _MAX_SHAPES = 8

    def __init__(self, fn, method: str, traced: bool = False):
        if not callable(fn):
            raise TypeError(f"Dataset.{method} expects a callable, got {fn!r}.")
        self.fn = fn
        self.method = method
        code = getattr(fn, "__code__", None)
        name = getattr(fn, "__qualname__", repr(fn))
        self.where = (
            f"{name} ({code.co_filename}:{code.co_firstlineno})" if code else name
        )
        self.compiled = None
        if traced:
            self.compiled = fn if isinstance(fn, Function) else Function(fn)
        self._shapes: set = set()  # element signatures traced so far
        self._lock = threading.Lock()  # (parallel map: one thread traces)

    def __call__(self, element, index: int) -> Any:
        args = _map_structure(_to_tensor, element)
        if self.compiled is not None:
            out = self._call_compiled(args)
            if out is not _EAGER:
                return _map_structure(_kept, out)
        out = self._call_eagerly(args, index)
        self.compiled = None  # (it could not be traced: eager from now on)
        return out

    def _call_compiled(self, args):
        leaves = tree_flatten(args)[0]
        if not all(type(t) is Tensor and t.dtype != dtypes.string for t in leaves):
            return _EAGER  # (strings, composites: host values)
        key = tuple((t.shape, t.dtype) for t in leaves)
        if key in self._shapes:
            return self._run_compiled(args)
        with self._lock:
            if key not in self._shapes:
                if len(self._shapes) >= self._MAX_SHAPES:
                    self.compiled = None  # (a compile per shape: eager is faster)
                    return _EAGER
                out = self._run_compiled(args)
                if out is not _EAGER:
                    self._shapes.add(key)
                return out
        return self._run_compiled(args)

    def _run_compiled(self, args):
        compiled = self.compiled
        if compiled is None:
            return _EAGER
        try:
            if isinstance(args, tuple) and not hasattr(args, "_fields"):
                out = compiled(*args)
            else:
                out = compiled(args)
        except Exception:  # noqa: BLE001 - the eager call decides: same error, or none
            return _EAGER
        if not all(
            type(x) is Tensor or isinstance(x, _VALUES) for x in tree_flatten(out)[0]
        ):
            return _EAGER  # (a Python object made while tracing: no element)
        return out

    def _call_eagerly(self, args, index: int) -> Any:
        try:
            if isinstance(args, tuple) and not hasattr(args, "_fields"):
                out = self.fn(*args)
            else:
                out = self.fn(args)
        except Exception as e:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Dataset.{self.method} function {self.where} raised "
                f"{type(e).__name__}: {e} (on element {index}). Fix the function or "
                "the data; the original error is chained below.",
            ) from e
        return _map_structure(_kept, out)


class _Prefetcher:
    """An iterator filled by a background thread, elements already on the device."""

    _DONE = object()

    def __init__(self, source: Iterator, size: int):
        self._queue: queue.Queue = queue.Queue(maxsize=size)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._fill, args=(source,), daemon=True)
        self._thread.start()

    def _fill(self, source):
        try:
            for element in source:
                if not self._put(_map_structure(_device_put, element)):
                    return
            self._put(self._DONE)
        except BaseException as e:  # handed to the consumer, raised there
            self._put(e)

    def _put(self, item) -> bool:
        """Waits for room unless the consumer has gone; False if it has."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self):
        return self

    def __next__(self):
        item = self._queue.get()
        if item is self._DONE:
            self._stop.set()
            raise StopIteration
        if isinstance(item, BaseException):
            self._stop.set()
            raise item
        return item

    def __del__(self):
        self._stop.set()


def _device_put(x):
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "USO":
        return x
    return jax.device_put(x)


class _MapIterator:
    """`map`'s iterator; an error in the function leaves it usable (so that
    `ignore_errors` can go on to the next element, as TF's iterators do)."""

    def __init__(self, source: Iterator, call: _UserFunction):
        self._source, self._call, self._index = source, call, 0

    def __iter__(self):
        return self

    def __next__(self):
        element = next(self._source)
        self._index += 1
        return self._call(element, self._index - 1)


class _ParallelMapIterator:
    """`map` with `num_parallel_calls`: up to `2 * workers` elements in flight on
    a thread pool, handed over in input order."""

    def __init__(self, source: Iterator, call: _UserFunction, workers: int):
        from concurrent.futures import ThreadPoolExecutor

        self._source, self._call, self._index = source, call, 0
        self._pool = ThreadPoolExecutor(workers)
        self._pending: collections.deque = collections.deque()
        self._limit = 2 * workers
        self._exhausted = False

    def __iter__(self):
        return self

    def __next__(self):
        while not self._exhausted and len(self._pending) < self._limit:
            try:
                element = next(self._source)
            except StopIteration:
                self._exhausted = True
                break
            self._pending.append(self._pool.submit(self._call, element, self._index))
            self._index += 1
        if not self._pending:
            self._pool.shutdown(wait=False)
            raise StopIteration
        return self._pending.popleft().result()

    def __del__(self):
        self._pool.shutdown(wait=False, cancel_futures=True)


class _FilterIterator:
    """`filter`'s iterator (resumable after an error in the predicate)."""

    def __init__(self, source: Iterator, call: _UserFunction):
        self._source, self._call, self._index = source, call, 0

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            element = next(self._source)
            self._index += 1
            keep = self._call(element, self._index - 1)
            if np.shape(keep) != ():
                raise ValueError(
                    f"Dataset.filter predicate {self._call.where} must return a "
                    f"scalar bool, got shape {np.shape(keep)}."
                )
            if bool(keep):
                return element
