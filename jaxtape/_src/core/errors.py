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


def _make(name: str, doc: str) -> type[OpError]:
    return type(name, (OpError,), {"__doc__": doc, "__module__": "jaxtape.errors"})


CancelledError = _make("CancelledError", "An operation was cancelled.")
UnknownError = _make("UnknownError", "Unknown error.")
InvalidArgumentError = _make(
    "InvalidArgumentError",
    "An op received an invalid argument (wrong dtype mix, bad shape, bad index).",
)
DeadlineExceededError = _make("DeadlineExceededError", "A deadline expired.")
NotFoundError = _make(
    "NotFoundError", "A requested entity (file, device) was not found."
)
AlreadyExistsError = _make("AlreadyExistsError", "An entity already exists.")
PermissionDeniedError = _make("PermissionDeniedError", "The caller lacks permission.")
ResourceExhaustedError = _make("ResourceExhaustedError", "Out of memory or quota.")
FailedPreconditionError = _make(
    "FailedPreconditionError", "The system is not in a state to run the operation."
)
AbortedError = _make("AbortedError", "The operation was aborted.")
OutOfRangeError = _make("OutOfRangeError", "Iteration past the valid range.")
UnimplementedError = _make("UnimplementedError", "The operation is not implemented.")
InternalError = _make("InternalError", "An internal invariant was broken.")
UnavailableError = _make("UnavailableError", "The runtime is unavailable.")
DataLossError = _make("DataLossError", "Unrecoverable data loss or corruption.")
UnauthenticatedError = _make("UnauthenticatedError", "Missing valid credentials.")


def invalid_argument(message: str, op: str | None = None) -> InvalidArgumentError:
    """An `InvalidArgumentError` whose text ends in TF's ` [Op:Name]` tag."""
    suffix = f" [Op:{op}]" if op else ""
    return InvalidArgumentError(None, op, message + suffix)
