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

from jaxtape._src.core import errors
from jaxtape._src.data.structure import _kept, _map_structure, _to_tensor

AUTOTUNE = -1


def _workers(num_parallel_calls) -> int:
    if num_parallel_calls is None:
        return 1
    n = int(num_parallel_calls)
    if n == AUTOTUNE:
        import os

        return max(os.cpu_count() or 1, 1)
    return max(n, 1)


class _UserFunction:
    """Calls a user's `map`/`filter` function on Tensors; its errors name it."""

    def __init__(self, fn, method: str):
        if not callable(fn):
            raise TypeError(f"Dataset.{method} expects a callable, got {fn!r}.")
        self.fn = fn
        self.method = method
        code = getattr(fn, "__code__", None)
        name = getattr(fn, "__qualname__", repr(fn))
        self.where = (
            f"{name} ({code.co_filename}:{code.co_firstlineno})" if code else name
        )

    def __call__(self, element, index: int) -> Any:
        args = _map_structure(_to_tensor, element)
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
