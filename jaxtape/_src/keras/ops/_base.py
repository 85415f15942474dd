"""The shared machinery of `keras.ops`: op bodies on the dispatcher, arguments.

Every `keras.ops` function here is a thin Python wrapper that applies Keras's
dtype rules (`dtypes.result_type`) to its arguments and calls a pure jnp body
registered with `dispatch.register_op`, so it runs eagerly, inside
`jaxtape.function`, and records on a `GradientTape` like any jaxtape op.

Layer L5 (keras); imports `core` only.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from jaxtape._src.core import config
from jaxtape._src.core.dispatch import register_op
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.keras.ops import dtypes as kd


def body(name: str, differentiable: bool = True) -> Callable[[Callable], Callable]:
    """Registers a pure jnp body as the recorded op `keras.ops.<name>`.

    Positional array arguments are the op's inputs; keyword arguments are its
    static parameters (hashable after `static`).
    """

    def decorate(fn: Callable) -> Callable:
        # One compiled dispatch per call (a body is often several jnp calls);
        # tapes record the jitted body, which JAX differentiates through.
        kw = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        ]
        jitted = jax.jit(fn, static_argnames=kw)
        return register_op(
            jitted, name=f"keras.ops.{name}", differentiable=differentiable
        )

    return decorate


def static(v: Any) -> Any:
    """A static argument (axis, shape) as Python ints/tuples; Tensors are read."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return tuple(static(a) for a in v)
    if type(v) is Tensor or isinstance(v, (np.ndarray, np.generic, jax.Array)):
        arr = np.asarray(v)
        return arr.item() if arr.ndim == 0 else tuple(arr.reshape(-1).tolist())
    if hasattr(v, "__index__"):
        return int(v)
    return v


def shape_arg(shape: Any) -> tuple[int, ...]:
    """A shape argument (int, tuple, list, TensorShape, tensor) as a tuple."""
    s = static(shape)
    return (s,) if isinstance(s, int) else tuple(int(d) for d in s)


def dtype_arg(dtype: Any, default: str | None = None) -> str:
    """A `dtype=` argument as a Keras dtype name (`None`: `default` or floatx)."""
    if dtype is None:
        return default or config.floatx()
    return kd.standardize_dtype(dtype)


def tensor(x: Any, dtype: str | None = None) -> Any:
    """`x` as an op input (Tensor, Variable or array), of `dtype` if given."""
    return kd.as_input(x, dtype)


def float_of(dtype: str) -> str:
    """The float dtype Keras computes a float function of `dtype` in."""
    return config.floatx() if dtype == "int64" else kd.result_type(dtype, float)


def sum_dtype(dtype: str) -> str:
    """Keras's accumulator dtype for sums: small ints widen to (u)int32."""
    if dtype in ("bool", "int8", "int16"):
        return "int32"
    if dtype in ("uint8", "uint16"):
        return "uint32"
    return dtype


def name_public(fn: Callable, name: str, doc: str) -> Callable:
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn
