"""Keras 3's dtype rules for `keras.ops`: the promotion lattice and conversion.

Keras promotes dtypes in binary ops (unlike TF's ops, which refuse to mix
them) by a JAX-like lattice in which Python numbers are weakly typed and a
weak result resolves to `floatx()`'s precision. This module mirrors Keras's
TensorFlow backend, the one `tf.keras` runs on: float64 and int64 stay 64-bit.

Layer L5 (keras); imports `core` only.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import numpy as np

from jaxtape._src.core import config, dispatch
from jaxtape._src.core import dtypes as core_dtypes
from jaxtape._src.core.tensor import Tensor

_INTS = ("uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64")
_FLOATS = ("bfloat16", "float16", "float32", "float64")
# Each dtype's immediate successors on Keras's (JAX's) promotion lattice; "int"
# and "float" are the weak types of Python numbers.
_LATTICE = {
    "bool": ["int"],
    "uint8": ["int16", "uint16"],
    "uint16": ["int32", "uint32"],
    "uint32": ["int64", "uint64"],
    "uint64": ["float"],
    "int": ["uint8", "int8", "complex64"],
    "int8": ["int16"],
    "int16": ["int32"],
    "int32": ["int64"],
    "int64": ["float"],
    "float": ["bfloat16", "float16"],
    "bfloat16": ["float32"],
    "float16": ["float32"],
    "float32": ["float64", "complex64"],
    "float64": ["complex128"],
    "complex64": ["complex128"],
    "complex128": [],
}


def _upper_bounds() -> dict[str, set[str]]:
    bounds = {n: {n} for n in _LATTICE}
    for n in _LATTICE:
        while True:
            new = set().union(*(_LATTICE[b] for b in bounds[n]))
            if new <= bounds[n]:
                break
            bounds[n] |= new
    return bounds


_UB = _upper_bounds()


@functools.lru_cache(512)
def _least_upper_bound(*nodes: str) -> str:
    common = set.intersection(*(_UB[n] for n in nodes))
    lub = (common & set(nodes)) or {c for c in common if common <= _UB[c]}
    if len(lub) != 1:
        raise ValueError(
            f"Input dtypes {nodes} have no available implicit dtype promotion "
            "path. Try explicitly casting inputs to the desired output type."
        )
    return lub.pop()


def _weak(name: str) -> str:
    if name == "bool":
        return name
    return "float" if "float" in name else "int" if "int" in name else "complex"


def _resolve_weak(name: str) -> str:
    bits = config.floatx()[-2:]
    if name.startswith("b") and name != "bfloat16":
        return "bool"
    if name.startswith("i"):
        return f"int{bits}"
    if name.startswith("u"):
        return f"uint{bits}"
    return f"float{bits}"


def standardize_dtype(dtype: Any) -> str:
    """A dtype's Keras name (`"float32"`); `None` is `floatx()`."""
    if dtype is None:
        return config.floatx()
    if dtype is int:
        return "int64"  # (Keras's TensorFlow backend)
    if dtype is float:
        return "float32"
    if dtype is bool:
        return "bool"
    if isinstance(dtype, str):
        if dtype in ("float", "int"):
            return standardize_dtype(float if dtype == "float" else int)
        if dtype in ("bfloat16",) or dtype in _LATTICE:
            return dtype
    name = getattr(dtype, "name", None)
    if isinstance(name, str) and name in _LATTICE:
        return name
    np_dtype = getattr(dtype, "as_numpy_dtype", None)
    try:
        name = np.dtype(np_dtype if np_dtype is not None else dtype).name
    except TypeError:
        name = None
    if name not in _LATTICE:
        raise ValueError(f"Invalid dtype: {dtype!r}")
    return name


def _dtype_and_weak(value: Any) -> tuple[str, bool]:
    if value is int or value is float:
        return ("int" if value is int else "float"), True
    return standardize_dtype(value), False


def result_type(*dtypes: Any) -> str:
    """Keras's `keras.backend.result_type`: the promoted dtype of `dtypes`.

    `int` and `float` (the Python types) are weak: `result_type("int8", int)`
    is int8, `result_type("int32", float)` is float32 (`floatx()`).
    """
    if not dtypes:
        return config.floatx()
    pairs = [_dtype_and_weak(config.floatx() if d is None else d) for d in dtypes]
    names = [n for n, _ in pairs]
    weak = [w for _, w in pairs]
    if len(pairs) == 1:
        out, out_weak = names[0], weak[0]
    elif len(set(names)) == 1 and not all(weak):
        out, out_weak = names[0], False
    elif all(weak):
        out, out_weak = _least_upper_bound(*set(names)), True
    else:
        nodes = {_weak(n) if w else n for n, w in zip(names, weak)}
        out = _least_upper_bound(*nodes)
        out_weak = out in ("int", "float")
    if out_weak and out != "bool":
        out = _resolve_weak(out)
    return _NARROWED.get(out, out)


# Keras's TensorFlow backend narrows these two results (int64/float64 stay).
_NARROWED = {"uint64": "uint32", "complex128": "complex64"}


def dtype_of(x: Any) -> Any:
    """What `result_type` takes for an argument: a dtype name, or `int`/`float`."""
    t = type(x)
    if t is Tensor:
        return x._v.dtype.name
    if t is int or t is float:
        return t
    if t is bool:
        return "bool"
    if t is complex:
        return "complex64"
    if isinstance(x, (np.ndarray, np.generic, jax.Array)):
        return standardize_dtype(x.dtype)
    dtype = getattr(x, "dtype", None)  # a Variable
    if dtype is not None:
        return standardize_dtype(dtype)
    return np_dtype_name(dispatch.to_value(x))


def np_dtype_name(v: Any) -> str:
    return standardize_dtype(v.dtype)


def jnp_dtype(name: str) -> Any:
    """The NumPy/JAX dtype of a Keras dtype name."""
    return core_dtypes.as_dtype(name).as_numpy_dtype


def as_input(x: Any, dtype: str | None = None) -> Any:
    """`x` as an op input: Tensors and Variables as they are, anything else an array.

    Python values and lists become NumPy arrays (of `dtype` when given, so a
    Python float next to a float64 tensor keeps its precision).
    """
    if type(x) is Tensor or isinstance(x, jax.Array):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        if dtype is not None and x.dtype.kind in "biufc":
            return np.asarray(x, jnp_dtype(dtype))
        return np.asarray(x)
    if getattr(x, "dtype", None) is not None and hasattr(x, "read_value"):
        return x  # a Variable: read (and watched) by the dispatcher
    if hasattr(x, "__array__") and not isinstance(x, (list, tuple)):
        return np.asarray(x)
    if dtype is not None:
        return np.asarray(dispatch.to_value(x), jnp_dtype(dtype))
    return np.asarray(dispatch.to_value(x))
