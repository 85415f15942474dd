"""Summary writers, the default writer and step, and `record_if` (TF's `tf.summary`).

Layer L4. A `SummaryWriter` wraps a tensorboardX event-file writer, opened on
first write. `as_default()` makes a writer the target of `jaxtape.summary.*`
calls, optionally with a default step; `record_if` gates them.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
import weakref
from typing import TYPE_CHECKING

import jax

from jaxtape._src.core import errors

if TYPE_CHECKING:
    from tensorboardX.event_file_writer import EventsWriter


class _Context(threading.local):
    def __init__(self):
        self.writer: SummaryWriter | None = None
        self.step = None  # int, Tensor or Variable (read when a summary is written)
        self.conditions: list = []


_ctx = _Context()
_open_writers: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for writer in list(_open_writers):
        if not writer._closed:
            writer.close()


class SummaryWriter:
    """Writes TensorBoard event files into `logdir` (TF's `tf.summary.SummaryWriter`).

    Made by `create_file_writer`. Events are appended to one event file and
    flushed to disk when `max_queue` are waiting or `flush_millis` have passed,
    on `flush()`, when an `as_default()` block ends, and on `close()`.
    """

    def __init__(self, logdir, max_queue=None, flush_millis=None, filename_suffix=None):
        self.logdir = os.fspath(logdir)
        self._max_queue = 10 if max_queue is None else int(max_queue)
        self._flush_secs = 120.0 if flush_millis is None else flush_millis / 1000.0
        self._suffix = ".v2" if filename_suffix is None else filename_suffix
        self._writer = None
        self._pending = 0
        self._last_flush = time.monotonic()
        self._closed = False
        self._lock = threading.Lock()
        _check_writable(self.logdir)

    # -- TF's writer API -------------------------------------------------------------
    @contextlib.contextmanager
    def as_default(self, step=None):
        """Makes this the default writer (and `step` the default step) inside the block.

        The writer is flushed when the block ends, as in TF.
        """
        saved = _ctx.writer, _ctx.step
        _ctx.writer = self
        if step is not None:
            _ctx.step = step
        try:
            yield self
        finally:
            _ctx.writer, _ctx.step = saved
            self.flush()

    def set_as_default(self, step=None) -> None:
        """Makes this the default writer from now on (TF's `set_as_default`)."""
        _ctx.writer = self
        if step is not None:
            _ctx.step = step

    def init(self) -> None:
        """Opens the event file now instead of on the first write."""
        self._file()

    def flush(self) -> None:
        """Writes queued events, once running compiled calls have written theirs."""
        writer = self._writer
        if writer is not None and not self._closed:
            jax.effects_barrier()
            with self._lock:
                self._flush_locked(writer)

    def close(self) -> None:
        """Flushes and closes the event file; later writes are an error."""
        if self._writer is not None and not self._closed:
            jax.effects_barrier()
            with self._lock:
                self._writer.close()
        self._closed = True

    # -- used by the summary ops -----------------------------------------------------
    def add(self, summary, step: int) -> None:
        """Appends one `Summary` proto at `step` (tensorboardX's event records)."""
        from tensorboardX.proto import event_pb2

        # (protobuf builds the message classes at import: no names for pyright)
        event = event_pb2.Event(  # pyright: ignore[reportAttributeAccessIssue]
            wall_time=time.time(), step=int(step), summary=summary
        )
        with self._lock:
            writer = self._file()
            writer.write_event(event)
            self._pending += 1
            if (
                self._pending >= self._max_queue
                or time.monotonic() - self._last_flush >= self._flush_secs
            ):
                self._flush_locked(writer)

    def _flush_locked(self, writer: EventsWriter) -> None:
        writer.flush()
        self._pending = 0
        self._last_flush = time.monotonic()

    def _file(self) -> EventsWriter:
        if self._closed:
            raise errors.FailedPreconditionError(
                None,
                None,
                f"The summary writer for {self.logdir!r} is closed. Create a new one "
                "with jaxtape.summary.create_file_writer(logdir).",
            )
        if self._writer is None:
            from tensorboardX.event_file_writer import EventsWriter

            prefix = os.path.join(self.logdir, "events")
            self._writer = EventsWriter(prefix, self._suffix)
            _open_writers.add(self)
        return self._writer

    def __repr__(self) -> str:
        return f"<jaxtape.summary.SummaryWriter logdir={self.logdir!r}>"


class _NoopWriter(SummaryWriter):
    """Does nothing: not even becoming the default writer (TF's noop writer)."""

    def __init__(self):
        self.logdir = None
        self._writer = None
        self._closed = False

    @contextlib.contextmanager
    def as_default(self, step=None):
        yield self

    def set_as_default(self, step=None) -> None:
        pass

    def init(self) -> None:
        pass

    def __repr__(self) -> str:
        return "<jaxtape.summary.NoopWriter>"


def _check_writable(logdir: str) -> None:
    try:
        os.makedirs(logdir, exist_ok=True)
    except OSError as e:
        raise errors.NotFoundError(
            None,
            None,
            f"Cannot create the summary log directory {logdir!r}: {e.strerror}. "
            "Pass a logdir in a writable location.",
        ) from None
    if not os.access(logdir, os.W_OK | os.X_OK):
        raise errors.PermissionDeniedError(
            None,
            None,
            f"The summary log directory {logdir!r} is not writable. Pass a logdir "
            "in a writable location or fix its permissions.",
        )


def create_file_writer(
    logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None
) -> SummaryWriter:
    """A writer of TensorBoard event files in `logdir` (TF's `create_file_writer`).

    >>> import tempfile
    >>> w = jaxtape.summary.create_file_writer(tempfile.mkdtemp())
    >>> with w.as_default(step=1):
    ...     bool(jaxtape.summary.scalar('loss', 0.5))
    True
    """
    return SummaryWriter(logdir, max_queue, flush_millis, filename_suffix)


def create_noop_writer() -> SummaryWriter:
    return _NoopWriter()


def default_writer() -> SummaryWriter | None:
    return _ctx.writer


def flush(writer=None, name=None) -> None:
    """Flushes `writer`, or the default writer."""
    writer = writer if writer is not None else _ctx.writer
    if writer is not None:
        writer.flush()


# -- the default step -----------------------------------------------------------------
def set_step(step) -> None:
    """Sets the default step (an int, or a Variable such as `optimizer.iterations`)."""
    _ctx.step = step


def get_step():
    return _ctx.step


# -- record_if ------------------------------------------------------------------------
@contextlib.contextmanager
def record_if(condition):
    """Records summaries inside the block only while `condition` holds.

    `condition` is a bool, a boolean tensor, or a callable returning either;
    a callable is evaluated at each summary call (TF's `tf.summary.record_if`).
    """
    _ctx.conditions.append(condition)
    try:
        yield
    finally:
        _ctx.conditions.pop()


def current_conditions() -> list:
    """The conditions of the open `record_if` blocks, callables evaluated."""
    return [c() if callable(c) else c for c in _ctx.conditions]
