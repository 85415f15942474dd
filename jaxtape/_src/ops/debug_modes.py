"""TF's debugging modes: check numerics, device-placement logging, traceback filtering.

While `enable_check_numerics` is on, every op's floating outputs are checked
for NaN and infinity: eagerly on the host (the op raises at once), and inside
`jaxtape.function` as a run-time check compiled into the program
(`core/checks`: the call raises after it runs). While
`set_log_device_placement(True)` is on, each op says where it runs. Both sit
in the dispatcher as one hook (`dispatch.set_output_check`), so the modes
cost nothing while they are off.

Layer L1: imports only `core`.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable

import jax
import jax.core
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import checks, context, deferred, dispatch, dtypes, errors
from jaxtape._src.core.device import device_name
from jaxtape._src.core.tensor import Tensor, device_string

_state = context.state
_limits = {"stack_height": 30, "path_length": 50}
_deferred_before: list[bool] = []  # deferred execution's setting while enabled
_watchers: dict[str, Callable[[str, list, object], None]] = {}  # the modes on


def _set_watcher(mode: str, watcher) -> None:
    """Turns one mode's per-op hook on (a function) or off (None)."""
    if watcher is None:
        _watchers.pop(mode, None)
    else:
        _watchers[mode] = watcher
    hooks = list(_watchers.values())
    if not hooks:
        dispatch.set_output_check(None)
    elif len(hooks) == 1:
        dispatch.set_output_check(hooks[0])
    else:
        dispatch.set_output_check(lambda *args: _run_all(hooks, args))


def _run_all(hooks, args) -> None:
    for hook in hooks:
        hook(*args)


def enable_check_numerics(stack_height_limit=30, path_length_limit=50):
    """Makes every op raise `InvalidArgumentError` when it outputs NaN or Inf.

    Mirrors TF's `tf.debugging.enable_check_numerics`: the error names the op
    (`... in output 0 of eagerly-executing op "Log" ...`), its output's dtype
    and shape, the number of -Inf, +Inf and NaN elements, and the op's inputs.
    Inside `jaxtape.function` the check is part of the compiled program (a
    `graph op` message, with the stack of the op's creation, at most
    `stack_height_limit` frames, paths cut to `path_length_limit` characters);
    functions traced before the call keep their unchecked programs, as in TF.
    Recorded ops run at once while enabled (no deferred execution), so each
    is checked when it runs.

    Differences from TensorFlow:
      Only ops run through jaxtape's dispatcher are checked: gradients
      computed by `GradientTape.gradient` (JAX's backward pass) are not. The
      compiled message gives the counts of each kind instead of TF's kind
      words.
    """
    _limits["stack_height"] = int(stack_height_limit)
    _limits["path_length"] = int(path_length_limit)
    if not _deferred_before:
        _deferred_before.append(deferred.get_deferred_execution())
        deferred.set_deferred_execution(False)
    _set_watcher("check_numerics", _check_outputs)


def disable_check_numerics():
    """Turns `enable_check_numerics` off (TF's `tf.debugging.disable_check_numerics`).

    A no-op when it is not on.
    """
    _set_watcher("check_numerics", None)
    if _deferred_before:
        deferred.set_deferred_execution(_deferred_before.pop())


def _check_outputs(op: str, inputs: list, out) -> None:
    outputs = jax.tree.leaves(out)
    for slot, value in enumerate(outputs):
        if not jnp.issubdtype(value.dtype, jnp.inexact):
            continue
        if isinstance(value, jax.core.Tracer):
            if _state.function_depth and checks.compiled_checks:
                _require_finite(op, slot, len(outputs), inputs, value)
            continue
        arr = np.asarray(value)
        if np.all(np.isfinite(arr)):
            continue
        text = _header(op, slot, len(outputs), arr, eager=True)
        text += _counts(arr) + _inputs_text(inputs)
        raise errors.invalid_argument(
            text + "\n : Tensor had " + _kinds(arr) + " values", "CheckNumericsV2"
        )


def _header(op, slot, n_outputs, value, eager) -> str:
    where = "eagerly-executing" if eager else "graph"
    dtype = str(dtypes.of_array(np.dtype(value.dtype)))
    return (
        f'\n\n!!! Detected Infinity or NaN in output {slot} of {where} op "{op}" '
        f"(# of outputs: {n_outputs}) !!!\n  dtype: {dtype}\n"
        f"  shape: {tuple(value.shape)}\n"
    )


def _counts(arr) -> str:
    text = ""
    inf = np.isinf(arr)
    real = np.real(arr)
    for label, n in (
        ("-Inf", np.sum(inf & (real < 0))),
        ("+Inf", np.sum(inf & (real > 0))),
        ("+NaN", np.sum(np.isnan(arr))),
    ):
        if n:
            text += f"  # of {label} elements: {n}\n"
    return text


def _kinds(arr) -> str:
    """TF's CheckNumericsV2 words: `-Inf`, `+Inf and NaN`, `-Inf, +Inf, and NaN`."""
    inf = np.isinf(arr)
    neg, pos = bool(np.any(inf & (np.real(arr) < 0))), bool(np.any(inf & (arr > 0)))
    nan = bool(np.any(np.isnan(arr)))
    kinds = [k for k, on in (("-Inf", neg), ("+Inf", pos), ("NaN", nan)) if on]
    if len(kinds) == 3:
        return "-Inf, +Inf, and NaN"
    return " and ".join(kinds)


def _inputs_text(inputs) -> str:
    shown = [_show(v) for v in inputs]
    if len(shown) > 1:
        rows = "".join(f"         {i}: {s}\n" for i, s in enumerate(shown))
        return f"\n  Input tensors ({len(shown)}):\n" + rows
    if shown:
        return f"\n  Input tensor: {shown[0]}\n"
    return ""


def _show(value) -> str:
    if isinstance(value, jax.core.Tracer):
        return f"Tensor(shape={tuple(value.shape)}, dtype={value.dtype})"
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return str(Tensor(jnp.asarray(value)))
    return repr(value)


def _require_finite(op, slot, n_outputs, inputs, value) -> None:
    """The compiled check: TF's graph-op message, raised after the call."""
    text = _header(op, slot, n_outputs, value, eager=False) + _inputs_text(inputs)
    text += _creation_stack() + "\n : Tensor had NaN or Inf values"
    text = text.replace("{", "{{").replace("}", "}}")
    text += " (-Inf: {}, +Inf: {}, NaN: {})"
    inf = jnp.isinf(value)
    real = jnp.real(value)
    checks.require(
        jnp,
        ~jnp.isfinite(value),
        None,
        text,
        lambda xp, p: xp.sum(inf & (real < 0)),
        lambda xp, p: xp.sum(inf & (real > 0)),
        lambda xp, p: xp.sum(xp.isnan(value)),
    )


def _creation_stack() -> str:
    """TF's "Stack trace of op's creation" (user frames marked with `->`)."""
    frames = traceback.extract_stack()[:-4]  # (this module and the dispatcher)
    frames = frames[-_limits["stack_height"] :]
    package = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    text = '\n  Stack trace of op\'s creation ("->": inferred user code):\n'
    for frame in frames:
        path = frame.filename
        limit = _limits["path_length"]
        shown = path if len(path) <= limit else "..." + path[-(limit - 3) :]
        text += f"    + {shown} (L{frame.lineno}) {frame.name}\n"
        user = not (
            path.startswith((package, "<")) or "site-packages" in path
        )  # (`<jaxtape op log>`, AutoGraph's generated code: not the user's)
        text += " -> |   \n" if user else "    |   \n"
    return text


# -- device placement logging -------------------------------------------------------
def set_log_device_placement(enabled):
    """Whether each op prints the device it runs on (TF's
    `tf.debugging.set_log_device_placement`).

    Eager ops print TF's `Executing op Log in device
    /job:localhost/replica:0/task:0/device:CPU:0` to stderr; ops traced by
    `jaxtape.function` print TF's placer line `Log: (Log): <device>` once,
    when traced (the device the program was traced for).

    Differences from TensorFlow:
      TF logs through its C++ logger (with a timestamp prefix) and also logs
      the graph's argument, return and constant nodes; jaxtape prints one plain
      line per op run through its dispatcher.
    """
    _set_watcher("log_device_placement", _log_placement if enabled else None)


def get_log_device_placement():
    """Whether `set_log_device_placement(True)` is on."""
    return "log_device_placement" in _watchers


def _log_placement(op: str, inputs: list, out) -> None:
    first = next(iter(jax.tree.leaves(out)), None)
    if isinstance(first, jax.core.Tracer) or first is None:
        target = _state.device if _state.device is not None else jax.devices()[0]
        where = device_name(target)
        print(f"{op}: ({op}): {where}", file=sys.stderr)
    else:
        print(f"Executing op {op} in device {device_string(first)}", file=sys.stderr)


# -- traceback filtering ------------------------------------------------------------
def enable_traceback_filtering():
    """Filters library frames from tracebacks of errors raised through
    compiled code (TF's `tf.debugging.enable_traceback_filtering`; on by
    default). jaxtape's compiled calls are JAX's: this sets JAX's
    `jax_traceback_filtering` to `"auto"`, which drops JAX's internal frames.

    Differences from TensorFlow:
      jaxtape's own frames are not dropped from eager tracebacks.
    """
    jax.config.update("jax_traceback_filtering", "auto")


def disable_traceback_filtering():
    """Full tracebacks (TF's `tf.debugging.disable_traceback_filtering`):
    sets JAX's `jax_traceback_filtering` to `"off"`."""
    jax.config.update("jax_traceback_filtering", "off")


def is_traceback_filtering_enabled():
    """Whether tracebacks are filtered (JAX's `jax_traceback_filtering` is not
    `"off"`); TF's `tf.debugging.is_traceback_filtering_enabled`."""
    return jax.config.values["jax_traceback_filtering"] != "off"
