"""TF's `tf.CriticalSection` and `tf.nondifferentiable_batch_function`. Layer L3.

Both are about concurrent callers: a CriticalSection runs one `fn` at a time
(a lock), and a batch function in TF gathers concurrent calls into one batch.
Inside `jaxtape.function` everything is one sequential program already.
"""

from __future__ import annotations

import functools
import itertools
import threading

import jax

from jaxtape._src.core import errors
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.function.function import function
from jaxtape._src.ops.nondiff import stop_gradient

_section_ids = itertools.count()


class CriticalSection:
    """Runs functions one at a time (TF's `tf.CriticalSection`).

        cs = jaxtape.CriticalSection()
        v = jaxtape.Variable(0)
        cs.execute(lambda: v.assign_add(1))   # the read and the write together

    `execute(fn)` holds the section's lock while `fn` runs and returns `fn()`;
    other threads' `execute` calls on the same section wait. While
    `jaxtape.function` traces, `fn` is traced inline (the compiled program
    runs its ops in order).

    Differences from TensorFlow:
      `shared_name`, `critical_section_def` and `import_scope` (graph
      sharing and import) are not implemented; TF's check that two sections
      do not touch the same resources with `exclusive_resource_access` is not
      made.
    """

    def __init__(
        self, name=None, shared_name=None, critical_section_def=None, import_scope=None
    ):
        for arg, value in (
            ("shared_name", shared_name),
            ("critical_section_def", critical_section_def),
            ("import_scope", import_scope),
        ):
            if value is not None:
                raise NotImplementedError(
                    f"jaxtape.CriticalSection does not implement {arg}= (TF's "
                    "graph sharing); create one CriticalSection and share the "
                    f"Python object instead. Received: {arg}={value!r}"
                )
        self._name = name or f"CriticalSection_{next(_section_ids)}"
        self._lock = threading.RLock()
        self._running = threading.local()

    @property
    def name(self) -> str:
        return self._name

    def execute(self, fn, exclusive_resource_access=True, name=None):
        """Runs `fn()` holding the section's lock and returns its result.

        Raises TF's `ValueError` when `fn` calls `execute` on the same section
        (it would deadlock).
        """
        del exclusive_resource_access, name  # (see the class's differences)
        if getattr(self._running, "on", False):
            raise ValueError(
                f"Attempting to lock a CriticalSection ({self._name}) in which we "
                "are already running. This is illegal and may cause deadlocks."
            )
        with self._lock:
            self._running.on = True
            try:
                return fn()
            finally:
                self._running.on = False

    def __repr__(self) -> str:
        return f"<jaxtape.CriticalSection {self._name!r}>"


def nondifferentiable_batch_function(
    num_batch_threads,
    max_batch_size,
    batch_timeout_micros,
    allowed_batch_sizes=None,
    max_enqueued_batches=10,
    autograph=True,
    enable_large_batch_splitting=True,
):
    """Decorator: TF's `tf.nondifferentiable_batch_function`.

    The decorated function takes and returns Tensors whose axis 0 is the
    batch; it is compiled (`jaxtape.function`, with `autograph`) and its
    outputs carry no gradient, as in TF.

    TF also gathers the calls of concurrent threads into batches of at most
    `max_batch_size` (padded to one of `allowed_batch_sizes`) and splits the
    results back; each caller gets the same values it would get alone. jaxtape
    runs each call as its own batch (the batching arguments are checked as TF
    checks them, then only affect scheduling, which jaxtape does not do).

    Differences from TensorFlow:
      No cross-thread batching: concurrent callers each run their own call.
    """
    problem = _batch_sizes_problem(
        allowed_batch_sizes, max_batch_size, enable_large_batch_splitting
    )
    del num_batch_threads, batch_timeout_micros, max_enqueued_batches

    def decorator(fn):
        compiled = function(fn, autograph=autograph)

        @functools.wraps(fn)
        def batched(*args):
            if problem:  # (TF's kernel checks its attributes when it runs)
                raise errors.invalid_argument(problem, "BatchFunction")
            out = compiled(*args)
            return jax.tree.map(
                lambda t: stop_gradient(t) if isinstance(t, Tensor) else t, out
            )

        return batched

    return decorator


def _batch_sizes_problem(allowed, max_batch_size, splitting) -> str | None:
    if allowed is None:
        return None
    sizes = [int(s) for s in allowed]
    if any(b <= a for a, b in zip(sizes, sizes[1:])):
        return "allowed_batch_sizes entries must be monotonically increasing"
    if not splitting and sizes and sizes[-1] != int(max_batch_size):
        return (
            "final entry in allowed_batch_sizes must equal max_batch_size when "
            "enable_large_batch_splitting is False"
        )
    return None
