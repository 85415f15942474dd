"""TensorFlow's exception classes (`jaxtape.errors.*`), so `except` clauses port.

Layer L0: no jaxtape imports.
"""

from __future__ import annotations


class OpError(Exception):
    """Base class of TF's runtime errors; carries `message`, `op` and `node_def`."""

    def __init__(self, node_def=None, op=None, message: str = "", *args):
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message

    def __reduce__(self):
        return type(self), (self.node_def, self.op, self.message)


class CancelledError(OpError):
    """An operation was cancelled."""


class UnknownError(OpError):
    """Unknown error."""


class InvalidArgumentError(OpError):
    """An op received an invalid argument (wrong dtype mix, bad shape, bad index)."""


class DeadlineExceededError(OpError):
    """A deadline expired."""


class NotFoundError(OpError):
    """A requested entity (file, device) was not found."""


class AlreadyExistsError(OpError):
    """An entity already exists."""


class PermissionDeniedError(OpError):
    """The caller lacks permission."""


class ResourceExhaustedError(OpError):
    """Out of memory or quota."""


class FailedPreconditionError(OpError):
    """The system is not in a state to run the operation."""


class AbortedError(OpError):
    """The operation was aborted."""


class OutOfRangeError(OpError):
    """Iteration past the valid range."""


class UnimplementedError(OpError):
    """The operation is not implemented."""


class InternalError(OpError):
    """An internal invariant was broken."""


class UnavailableError(OpError):
    """The runtime is unavailable."""


class DataLossError(OpError):
    """Unrecoverable data loss or corruption."""


class UnauthenticatedError(OpError):
    """Missing valid credentials."""


# TF's classes live in `tf.errors`: so do these (reprs, pickles).
for _cls in (
    CancelledError,
    UnknownError,
    InvalidArgumentError,
    DeadlineExceededError,
    NotFoundError,
    AlreadyExistsError,
    PermissionDeniedError,
    ResourceExhaustedError,
    FailedPreconditionError,
    AbortedError,
    OutOfRangeError,
    UnimplementedError,
    InternalError,
    UnavailableError,
    DataLossError,
    UnauthenticatedError,
):
    _cls.__module__ = "jaxtape.errors"
del _cls


def invalid_argument(message: str, op: str | None = None) -> InvalidArgumentError:
    """An `InvalidArgumentError` whose text ends in TF's ` [Op:Name]` tag."""
    suffix = f" [Op:{op}]" if op else ""
    return InvalidArgumentError(None, op, message + suffix)
