"""TensorFlow's exception classes (`jaxtape.errors.*`), so `except` clauses port.

Layer L0: no jaxtape imports.
"""

from __future__ import annotations

from collections.abc import Callable


class OpError(Exception):
    """Base class of TF's runtime errors; carries `message`, `op` and `node_def`."""

    def __init__(self, node_def=None, op=None, message: str = "", *args):
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message
        # (TF's `OpError(node_def, op, message, error_code)`: the base takes it.)
        self._error_code = args[0] if args else None

    @property
    def error_code(self) -> int:
        """TF's integer code of the error (`jaxtape.errors.INVALID_ARGUMENT`...)."""
        if self._error_code is not None:
            return self._error_code
        for cls in type(self).__mro__:
            code = _CODES.get(cls)
            if code is not None:
                return code
        return UNKNOWN

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


# TF's error codes (`tf.errors.OK` ...: `error_codes.proto`'s values).
OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16

_CODES = {
    CancelledError: CANCELLED,
    UnknownError: UNKNOWN,
    InvalidArgumentError: INVALID_ARGUMENT,
    DeadlineExceededError: DEADLINE_EXCEEDED,
    NotFoundError: NOT_FOUND,
    AlreadyExistsError: ALREADY_EXISTS,
    PermissionDeniedError: PERMISSION_DENIED,
    ResourceExhaustedError: RESOURCE_EXHAUSTED,
    FailedPreconditionError: FAILED_PRECONDITION,
    AbortedError: ABORTED,
    OutOfRangeError: OUT_OF_RANGE,
    UnimplementedError: UNIMPLEMENTED,
    InternalError: INTERNAL,
    UnavailableError: UNAVAILABLE,
    DataLossError: DATA_LOSS,
    UnauthenticatedError: UNAUTHENTICATED,
}


class OperatorNotAllowedInGraphError(TypeError):
    """A Python operation on a traced Tensor that needs its value (TF's class).

    Raised for `bool(x)` (a Python `if`/`while`) or iteration over a Tensor
    whose value `jaxtape.function` does not know while it traces. A
    `TypeError`, as in TF.

      Wrong: @jaxtape.function(autograph=False)
             def f(x): return x if x > 0 else -x
      Right: @jaxtape.function
             def f(x): return jaxtape.where(x > 0, x, -x)
    """


# TF's classes live in `tf.errors`: so do these (reprs, pickles).
for _cls in (
    OperatorNotAllowedInGraphError,
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


class _GraphValueError(InvalidArgumentError, ValueError):
    """A shape error found while `jaxtape.function` traces.

    TF raises `InvalidArgumentError` for it eagerly but `ValueError` in a
    `tf.function`, where shape inference finds it while building the graph;
    this is both, so that `except ValueError` written for TF works and
    `except InvalidArgumentError` still does.
    """


class _GraphTypeError(InvalidArgumentError, TypeError):
    """A dtype error found while `jaxtape.function` traces: TF's graph
    construction raises `TypeError` where its eager ops raise
    `InvalidArgumentError`; this is both."""


for _cls, _name in ((_GraphValueError, "ValueError"), (_GraphTypeError, "TypeError")):
    _cls.__module__, _cls.__name__, _cls.__qualname__ = "jaxtape.errors", _name, _name
del _cls, _name

# Whether `jaxtape.function` is tracing (set by `context`, which knows).
tracing: Callable[[], bool] = lambda: False

# TF's texts for a dtype an op does not take (its eager kernel's and op-def's).
_DTYPE_TEXTS = ("was expected to be a", "is not in the list of allowed values")


def invalid_argument(message: str, op: str | None = None) -> InvalidArgumentError:
    """An `InvalidArgumentError` whose text ends in TF's ` [Op:Name]` tag.

    While `jaxtape.function` traces, the error is also TF's graph-mode type:
    `TypeError` for a dtype the op does not take, `ValueError` otherwise (a
    shape, rank or static-argument error, which TF's graph construction finds).
    """
    suffix = f" [Op:{op}]" if op else ""
    if not tracing():
        return InvalidArgumentError(None, op, message + suffix)
    if any(text in message for text in _DTYPE_TEXTS):
        return _GraphTypeError(None, op, message + suffix)
    return _GraphValueError(None, op, message + suffix)


class EscapedTensorError(AttributeError, TypeError):
    """A Tensor whose traced value escaped from a `jaxtape.function` was used.

    TF raises `AttributeError` for `.numpy()` of such a (graph) tensor and
    `TypeError` when it is an op's input; this class is both, so that
    `except AttributeError` or `except TypeError` written for TF still works.

      Wrong: @jaxtape.function
             def f(x): self.last = x * 2; return x     # self.last escapes
      Right: @jaxtape.function
             def f(x): return x, x * 2                 # return it instead
    """


EscapedTensorError.__module__ = "jaxtape.errors"

ESCAPED = (
    "This Tensor holds a traced value that escaped from a jaxtape.function: it was "
    "stored in Python state (an attribute, a global, a list) while the function "
    "was traced, and has no value outside it. Return it from the function "
    "instead, or keep it in a jaxtape.Variable (assign inside the function)."
)


def escaped(values, cause: BaseException | None = None) -> None:
    """Raises `EscapedTensorError` if one of `values` is a tracer while no JAX
    transformation runs (so its trace has ended). Called where an op failed;
    the cause is kept."""
    if any(is_escaped(v) for v in values):
        raise EscapedTensorError(ESCAPED) from cause


def is_escaped(value) -> bool:
    """Whether `value` is a tracer while no JAX transformation runs (inside a
    user's own `jax.jit`/`vmap`/`grad` a tracer is live: JAX's errors apply)."""
    from jax._src import core  # (L0 keeps its imports light: only on errors)

    return isinstance(value, core.Tracer) and core.trace_ctx.is_top_level()
