"""TF's script ops: `py_function` and `numpy_function`. Layer L1.

Eagerly, the Python function simply runs (`py_function`'s ops are recorded
by active tapes, as in TF eager). Inside a compiled program (a
`jaxtape.function`, a control-flow branch or loop body) it runs at run time,
on every execution, through `jax.experimental.io_callback` (ordered, so it
is never dropped when its outputs are unused and keeps its place among
`jaxtape.print`s, as TF runs stateful ops in program order).

XLA needs the outputs' shapes while tracing, where TF leaves them unknown.
They come from `Tout` when it holds `TensorSpec`s with full shapes;
otherwise, at the top level of a `jaxtape.function`, the Python function is
run once at trace time on the call's concrete inputs (the function layer's
`trace_time_values` hook) and that result is what the first execution
returns, what it printed written then, so it still runs once per call, its
prints in program order. Inside control-flow bodies (no
concrete inputs while tracing) give `Tout` as TensorSpecs.

Gradients inside compiled programs: `py_function` is a `jax.custom_vjp`
whose backward runs the Python function again, eagerly under a
GradientTape, through another callback (TF keeps the forward pass's tape
instead: side effects in the function happen once more per gradient here).
`numpy_function` has no gradient (None), as in TF.
"""

from __future__ import annotations

import contextlib
import functools
import io
import sys

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from jaxtape._src.core import context, dtypes, errors
from jaxtape._src.core.dispatch import OpInfo, _tf_name, dispatch_raw, to_value
from jaxtape._src.core.tensor import Tensor, TensorSpec


def py_function(func=None, inp=None, Tout=None, name=None):  # noqa: N803 - TF's
    """Runs a Python function on Tensors, eagerly, even inside a compiled
    function (TF's `tf.py_function`); differentiable.

    Two forms, as TF 2.21: `py_function(func, inp, Tout)` runs `func(*inp)`;
    `@py_function(Tout=...)` decorates a function that then always runs
    eagerly when called.

    Args:
      func: A Python function of Tensors returning a value (or a list of
        values) as described by `Tout`. Not set in the decorator form.
      inp: The arguments: a list of Tensors (or values convertible to them).
      Tout: A dtype (one Tensor returned), a list or tuple of them (a list
        returned), `[]` (`func` returns None); `TensorSpec`s with full shapes
        where the shapes cannot be found while tracing (see module doc).
      name: Accepted for TensorFlow compatibility; ignored.

    >>> @jaxtape.py_function(Tout=jaxtape.float32)
    ... def double(x):
    ...     return x * 2
    >>> jaxtape.function(lambda x: double(x))(jaxtape.constant(3.0))
    <jaxtape.Tensor: shape=(), dtype=float32, numpy=6.0>

    Differences from TensorFlow: inside a compiled function the gradient runs
    `func` again (TF keeps the forward pass's tape); output shapes must be
    knowable while tracing (see the module doc).
    """
    decorator = _decorator(py_function, "jaxtape.py_function", func, inp, Tout)
    if decorator is not None:
        return decorator
    return _run(func, inp, Tout, numpy=False)


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):  # noqa: N803
    """Runs a Python function on NumPy arrays, even inside a compiled
    function (TF's `tf.numpy_function`); its outputs have no gradient.

    Both of TF 2.21's forms, as `py_function`. Eagerly, a NumPy array that
    `func` returns keeps its dtype (as TF eager); inside a compiled function
    it must have `Tout`'s dtype (TF's InvalidArgumentError otherwise).

    Args:
      func: A Python function of NumPy arrays returning NumPy arrays.
      inp: The arguments: a list of Tensors (or values convertible to them).
      Tout: As for `py_function`.
      stateful: Accepted; the function always runs on every execution (a
        stateless one could be merged or dropped by TF's optimizer).
      name: Accepted for TensorFlow compatibility; ignored.
    """
    del stateful
    decorator = _decorator(numpy_function, "jaxtape.numpy_function", func, inp, Tout)
    if decorator is not None:
        return decorator
    return _run(func, inp, Tout, numpy=True)


def _decorator(script_op, script_name, func, inp, Tout):  # noqa: N803
    """TF's `_check_args_and_maybe_make_decorator`: the decorator form when
    `func` is None; TF's TypeErrors for a missing `Tout` or `inp`."""
    if Tout is None:
        raise TypeError(
            "Missing required argument: 'Tout'\n"
            f"  If using {script_name} as a decorator, set `Tout`\n"
            "  **by name** above the function:\n"
            f"  `@{script_name}(Tout=tout)`"
        )
    if func is None:
        if inp is not None:
            raise TypeError(
                f"Don't set the `inp` argument when using {script_name} as a "
                "decorator (`func=None`)."
            )

        def decorate(fun):
            @functools.wraps(fun)
            def wrapper(*args):
                return script_op(fun, inp=args, Tout=Tout)

            return wrapper

        return decorate
    if inp is None:
        raise TypeError(
            "Missing argument `inp`:\n"
            "  You must set the `inp` argument (the list of arguments to the\n"
            f"  function), unless you use `{script_name}` as a decorator"
            "(`func=None`)."
        )
    return None


# -- the outputs -----------------------------------------------------------------
def _specs(Tout):  # noqa: N803
    """`Tout` as (is a list, [(NumPy dtype, shape or None)])."""
    is_list = isinstance(Tout, (list, tuple))
    out = []
    for t in Tout if is_list else [Tout]:
        if isinstance(t, TensorSpec):
            shape = tuple(t.shape) if t.shape.is_fully_defined() else None
            out.append((np.dtype(t.dtype.as_numpy_dtype), shape))
        else:
            out.append((np.dtype(dtypes.np_dtype(t)), None))
    return is_list, out


def _as_list(out, n: int, name: str) -> list:
    """`func`'s result as a list of n values (TF's count check)."""
    if n == 0 and out is None:
        return []
    values = list(out) if isinstance(out, (list, tuple)) else [out]
    if out is None or len(values) != n:
        got = 0 if out is None else len(values)
        raise errors.invalid_argument(
            f"{name} returns {got} values, but expects to see {n} values.",
            "EagerPyFunc",
        )
    return values


def _tensor_out(o, dtype) -> Tensor:
    """A `py_function` output as TF converts it (`convert_to_tensor(o, dtype)`)."""
    if type(o) is Tensor:
        if o._value.dtype != dtype:
            raise errors.invalid_argument(
                f"ValueError: Tensor conversion requested dtype {_tf_name(dtype)} "
                f"for Tensor with dtype {_tf_name(o._value.dtype)}: {o!r}",
                "EagerPyFunc",
            )
        return o
    return Tensor(jnp.asarray(to_value(o, dtype)))


def _numpy_out(o, dtype, compiled: bool) -> np.ndarray:
    """A `numpy_function` output: a NumPy array keeps its dtype eagerly (TF
    eager), and must have `Tout`'s inside a compiled program (TF's graph)."""
    if not isinstance(o, (np.ndarray, np.generic)) and not compiled:
        return np.asarray(to_value(o, dtype))
    arr = np.asarray(o)
    if compiled and arr.dtype != dtype:
        raise errors.invalid_argument(
            f"0-th value returned by pyfunc is {_tf_name(arr.dtype)}, but expects "
            f"{_tf_name(dtype)}. Return arrays of the dtypes in `Tout` (e.g. "
            "`np.float32`: a Python float is float64 to NumPy).",
            "PyFunc",
        )
    return arr


def _structure(values: list, is_list: bool):
    if is_list:
        return list(values)
    return values[0] if values else None


# -- running it -------------------------------------------------------------------
def _inputs(inp) -> list:
    """The arguments as Tensors (Variables read, Python values converted)."""
    out = []
    for x in list(inp):
        if type(x) is Tensor:
            out.append(x)
        elif context.hooks.variable_type is not None and isinstance(
            x, context.hooks.variable_type
        ):
            out.append(x.read_value())
        else:
            out.append(Tensor(jnp.asarray(to_value(x))))
    return out


def _run(func, inp, Tout, numpy: bool):  # noqa: N803
    is_list, specs = _specs(Tout)
    tensors = _inputs(inp)
    values = [t._value for t in tensors]
    compiled = context.state.function_depth > 0 or any(
        isinstance(v, jax.core.Tracer) for v in values
    )
    name = getattr(func, "__name__", "pyfunc")
    if not compiled:
        if numpy:
            out = func(*[np.asarray(v) for v in values])
            outs = _as_list(out, len(specs), name)
            arrays = [_numpy_out(o, d, False) for o, (d, _) in zip(outs, specs)]
            return _structure([Tensor(jnp.asarray(a)) for a in arrays], is_list)
        out = func(*tensors)  # recorded by active tapes, as in TF eager
        outs = _as_list(out, len(specs), name)
        return _structure(
            [_tensor_out(o, d) for o, (d, _) in zip(outs, specs)], is_list
        )
    call = _HostCall(func, specs, numpy, name)
    shapes = call.out_shapes(tensors, values)
    primitive = _compiled(call, shapes, numpy)
    # One op for the tapes (a tape inside the compiled function records it).
    info = OpInfo(primitive, "EagerPyFunc", False, not numpy)
    return _structure(list(dispatch_raw(info, tensors, ())), is_list)


class _HostCall:
    """`func` as the host side of a callback: NumPy in, NumPy out, checked."""

    def __init__(self, func, specs, numpy: bool, name: str):
        self.func, self.specs, self.numpy, self.name = func, specs, numpy, name
        self.pending = None  # (inputs, outputs) of the trace-time run (once)

    def __call__(self, *arrays):
        pending, self.pending = self.pending, None
        if pending is not None and _same(pending[0], arrays):
            # The first execution: the trace-time run's result, and what it
            # printed, now, in program order.
            inputs, outputs, out, err = pending
            sys.stdout.write(out)
            sys.stderr.write(err)
            return outputs
        return self.run(arrays)

    def run(self, arrays) -> list:
        try:
            # (The user's tapes never see these ops; Variables that the
            # running program holds are not shared: `function/shared_state`.)
            with context.paused_tapes(), context.hooks.py_function_scope(self.name):
                if self.numpy:
                    out = self.func(*[np.asarray(a) for a in arrays])
                    outs = _as_list(out, len(self.specs), self.name)
                    return [
                        _numpy_out(o, d, True) for o, (d, _) in zip(outs, self.specs)
                    ]
                args = [Tensor(jnp.asarray(a)) for a in arrays]
                outs = _as_list(self.func(*args), len(self.specs), self.name)
                return [
                    np.asarray(_tensor_out(o, d)._value)
                    for o, (d, _) in zip(outs, self.specs)
                ]
        except Exception as e:  # raised again, TF's type, after the program
            _failures.last = e
            raise

    def out_shapes(self, tensors, values) -> list:
        """The outputs' shapes: from `Tout`, or from running `func` on the
        concrete inputs while tracing (kept for the first execution)."""
        if all(shape is not None for _, shape in self.specs):
            return [shape for _, shape in self.specs]
        concrete = _trace_time_values(values)
        if concrete is None:
            raise ValueError(
                f"The output shapes of {self.name!r} (a py_function/numpy_function "
                "inside a compiled function) cannot be found while tracing: it "
                "runs inside a control-flow body, or on values that are not known "
                "yet. Give `Tout` as TensorSpecs with full shapes, e.g. "
                "`Tout=jaxtape.TensorSpec([None], jaxtape.float32)` -> "
                "`jaxtape.TensorSpec([3], jaxtape.float32)`."
            )
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            with context.hooks.init_scope():  # eagerly, at trace time (once)
                outputs = self.run(concrete)
        self.pending = (concrete, outputs, out.getvalue(), err.getvalue())
        return [np.shape(o) for o in outputs]


def _trace_time_values(values) -> list | None:
    if not any(isinstance(v, jax.core.Tracer) for v in values):
        return [np.asarray(v) for v in values]
    hook = context.hooks.trace_time_values
    return None if hook is None else hook(values)


def _same(a, b) -> bool:
    return len(a) == len(b) and all(
        np.shape(x) == np.shape(y) and np.array_equal(x, y) for x, y in zip(a, b)
    )


def _compiled(call: _HostCall, shapes, numpy: bool):
    """The op's pure function: the callback, with its gradient."""
    results = [jax.ShapeDtypeStruct(s, d) for s, (d, _) in zip(shapes, call.specs)]

    def host(*arrays):
        return call(*arrays)

    # A custom_vjp around the callback: JAX's io_callback has no derivative
    # rules. numpy_function's gradient is zero (nothing flows back, as TF's
    # None); py_function's runs `func` again under a tape.
    @jax.custom_vjp
    def forward(*xs):
        return _io(host, results, xs)

    def fwd(*xs):
        return forward(*xs), xs

    def bwd(xs, cts):
        if numpy:
            return tuple(jnp.zeros_like(x) for x in xs)
        avals = [jax.ShapeDtypeStruct(np.shape(x), x.dtype) for x in xs]
        grads = io_callback(
            functools.partial(_host_vjp, call), avals, xs, list(cts), ordered=True
        )
        return tuple(grads)

    forward.defvjp(fwd, bwd)

    def primitive(*xs):
        return tuple(forward(*xs))

    return primitive


def _io(host, results, values) -> list:
    if not results:  # (for side effects: func returns None)
        io_callback(lambda *a: (host(*a), None)[1], None, *values, ordered=True)
        return []
    return list(io_callback(host, results, *values, ordered=True))


def _host_vjp(call: _HostCall, xs, cts) -> list:
    """The backward callback: `func` run again eagerly under a tape."""
    vjp = context.hooks.eager_vjp
    if vjp is None:  # pragma: no cover - the autodiff layer installs it
        raise RuntimeError("No autodiff layer is installed for py_function.")
    inputs = [Tensor(jnp.asarray(x)) for x in xs]

    def fn(*args):
        outs = _as_list(call.func(*args), len(call.specs), call.name)
        return [_tensor_out(o, d) for o, (d, _) in zip(outs, call.specs)]

    try:
        grads = vjp(fn, inputs, [Tensor(jnp.asarray(c)) for c in cts])
    except Exception as e:
        _failures.last = e
        raise
    return [np.asarray(g._value, x.dtype) for g, x in zip(grads, xs)]


# -- errors from inside callbacks ---------------------------------------------------
class _Failures:
    """The last exception raised inside a callback (any thread: XLA may run
    callbacks on its own)."""

    def __init__(self):
        self.last: BaseException | None = None


_failures = _Failures()


def take_failure() -> BaseException | None:
    """The exception a py_function/numpy_function raised inside the program
    that just failed (JAX reports it as a runtime error), once; or None."""
    error, _failures.last = _failures.last, None
    return error


def raise_failure(error: Exception) -> None:
    """Raises TF's error for a failed program run: a script op's exception as
    TF's `InvalidArgumentError` (with the original as its cause)."""
    failure = take_failure()
    if failure is None:
        raise error
    if isinstance(failure, (errors.OpError, NotImplementedError)):
        raise failure from error
    raise errors.invalid_argument(
        f"{type(failure).__name__}: {failure}", "EagerPyFunc"
    ) from failure
