"""Run-time argument checks: TF's `InvalidArgumentError` for bad indices and divisors.

Layer L0. TF checks op arguments in its kernels: an index out of range or an
integer division by zero raises `InvalidArgumentError`, eagerly and inside a
`tf.function` on CPU. XLA has no such errors: it clamps indices and divides
by zero silently. So an op that needs a check declares one (`op(check=...)`,
a function of the op's inputs and static parameters); the dispatcher runs it
before the op, and `require` decides how:

- on concrete inputs (eager execution, also under a recording tape), the
  check runs in NumPy on the host and raises at once, naming the op;
- while `jaxtape.function` traces, it becomes a `checkify.check` in the
  program; the compiled call returns the error with its outputs and raises it
  after the call (one flag read per call, only for programs that hold checks).
  The call's Variable updates are kept, computed with the bad element read as
  0 (an in-program rollback of every update cost 13-25% of a small training
  step on CPU); TF keeps the updates that ran before its failing op;
- anywhere else (a user's own `jax.jit`, a backward replay) it is skipped:
  the forward pass already checked.

`jaxtape.config.experimental.set_runtime_checks(False)` turns compiled checks
off (eager checks are cheap and always on), for the last few percent of speed.

Reading a call's flag waits for its program to finish. Keras's `fit`,
`evaluate` and `predict` loops run inside `deferred_failures()`, where a flag
that is not ready yet is read after the next call has been dispatched, so the
loop keeps XLA busy (as without checks) and a failure still raises inside the
loop, one batch late at most.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from jaxtape._src.core import context, errors

_state = context.state
compiled_checks = True  # set_runtime_checks


def run(check, vals, params) -> None:
    """Runs an op's `check(xp, *vals, *params)` with NumPy or jnp as `xp`."""
    for v in vals:
        if isinstance(v, jax.core.Tracer):
            if _state.function_depth and compiled_checks:
                # NumPy constants become jnp arrays: indexing them with the
                # traced position of a failure needs JAX's indexing.
                vals = [jnp.asarray(x) if type(x) is np.ndarray else x for x in vals]
                check(jnp, *vals, *params)
            return
    check(np, *vals, *params)


def host(v):
    """A concrete input as a NumPy array (a pending value is computed)."""
    force = getattr(v, "force", None)
    if force is not None:
        v = force()
    if isinstance(v, jax.Array) and not isinstance(v, jax.core.Tracer):
        # Waiting, then reading: faster than reading a buffer still computed.
        v = v.block_until_ready()
    return np.asarray(v)


def require(xp, bad, op: str | None, template: str, *fields) -> None:
    """Fails where the boolean array `bad` has a True.

    `template` is TF's message with `{}` placeholders; each of `fields` is
    `fn(xp, position)` of the first bad element's flat position, giving the
    scalar to put in the message (an index, a value). `op` names the op in
    TF's ` [Op:Name]` tag (None: no tag).
    """
    if xp is np:
        bad = np.asarray(bad)
        if not bad.any():
            return
        pos = int(np.flatnonzero(bad)[0])
        text = template.format(*[np.asarray(f(np, pos)).item() for f in fields])
        raise errors.invalid_argument(text, op)
    flat = jnp.ravel(bad)
    if flat.shape[0] == 0:  # (static: nothing to check, and no argmax of nothing)
        return
    pos = jnp.argmax(flat)
    checkify.check(
        ~jnp.any(flat),
        template + (f" [Op:{op}]" if op else ""),
        *[jnp.asarray(f(jnp, pos)) for f in fields],
    )


def position(shape):
    """Fields for the multi-index of a flat position in `shape` (for `indices[i,j]`)."""
    if not shape:
        return []
    return [
        (lambda xp, p, k=k: xp.unravel_index(p, shape)[k]) for k in range(len(shape))
    ]


def index_text(ndim: int) -> str:
    """`[{}]`, `[{},{}]`, ...: the placeholders of a multi-index in TF's messages."""
    return "[" + ",".join(["{}"] * max(ndim, 1)) + "]"


# -- the compiled side ------------------------------------------------------------
def checked(fn):
    """`fn` transformed to return `(error, outputs)` (user checks only)."""
    return checkify.checkify(fn, errors=checkify.user_checks)


def error_layout(error) -> tuple:
    """(number of leaves, number of predicate leaves, treedef) of an Error."""
    leaves, tree = jax.tree_util.tree_flatten(error)
    return len(leaves), len(jax.tree_util.tree_leaves(error._pred)), tree


def raise_if_failed(tree, leaves) -> None:
    """Raises the first failed check of a compiled call as `InvalidArgumentError`."""
    error = jax.tree_util.tree_unflatten(tree, leaves)
    exc = error.get_exception()
    if exc is None:
        return
    text = str(exc)
    suffix = " (`check` failed)"
    if text.endswith(suffix):
        text = text[: -len(suffix)]
    op = None
    if text.endswith("]") and "[Op:" in text:
        op = text[text.rfind("[Op:") + 4 : -1]
    raise errors.InvalidArgumentError(None, op, text)


def set_runtime_checks(enabled: bool) -> None:
    """Whether compiled functions check op arguments at run time (default True).

    With checks, a `jaxtape.function` whose program gathers, scatters or
    divides integers reads one error flag per call and raises TF's
    `InvalidArgumentError` for an index out of range or a division by zero.
    Without, such a program gives what XLA gives (clamped indices, a
    meaningless quotient) and the call never waits for its result.
    Functions traced before the change keep their programs.
    """
    globals()["compiled_checks"] = bool(enabled)


def get_runtime_checks() -> bool:
    return compiled_checks


# -- reading a compiled call's flag without waiting for it -------------------------
class _Deferred(threading.local):
    def __init__(self):
        self.depth = 0
        self.calls: list = []  # (flag, diagnose) of calls not checked yet


_deferred = _Deferred()


@contextlib.contextmanager
def deferred_failures() -> Iterator[None]:
    """Within, compiled calls whose failure flag is not ready do not wait for it.

    Each such flag is read once the next compiled call has been dispatched,
    and every one left when the block ends is read then, so a failed check
    raises inside the block (Keras's training loops use this).
    """
    d = _deferred
    d.depth += 1
    try:
        yield
    except BaseException:
        if d.depth == 1:
            d.calls = []  # the error in flight is the one to report
        raise
    finally:
        d.depth -= 1
    if not d.depth:
        _settle()


def _settle() -> None:
    calls, _deferred.calls = _deferred.calls, []
    for flag, diagnose in calls:
        if np.asarray(flag.block_until_ready()):
            diagnose()


def failed_later(flag, diagnose: Callable[[], None]) -> bool:
    """Whether a compiled call's failure `flag` is left to be read later
    (inside `deferred_failures`, when its program is still running); earlier
    calls' flags are read first. `diagnose()` raises the call's error."""
    d = _deferred
    if not d.depth:
        return False
    if d.calls:
        _settle()
    if _ready(flag):
        return False
    d.calls.append((flag, diagnose))
    return True


def _ready(flag) -> bool:
    return flag.is_ready()
