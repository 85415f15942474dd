"""TF-style dtype objects (`jaxtape.float32`, ...) and TF's conversion rules.

Layer L0: imports only numpy, jax and ml_dtypes.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, overload

import jax.numpy as jnp
import numpy as np

if TYPE_CHECKING:
    from jaxtape._src.core.typing import DTypeLike


class DType:
    """A TensorFlow-like dtype: `jaxtape.float32` mirrors `tf.float32`.

    Compares equal to the same dtype given as a `DType`, a NumPy dtype, a NumPy
    scalar type or its name, so `x.dtype == np.float32` works as in TF.
    """

    __slots__ = ("_np", "_name", "_floating", "_integer")

    def __init__(self, np_dtype: np.dtype, name: str):
        self._np = np.dtype(np_dtype)
        self._name = name
        self._floating = builtins.bool(jnp.issubdtype(self._np, jnp.floating))
        self._integer = builtins.bool(jnp.issubdtype(self._np, jnp.integer))

    @property
    def name(self) -> str:
        return self._name

    @property
    def as_numpy_dtype(self) -> type[Any]:
        return self._np.type if self._np.kind != "O" else object  # (string: TF's)

    @property
    def base_dtype(self) -> DType:
        return self

    @property
    def real_dtype(self) -> DType:
        if self._np.kind == "c":
            return as_dtype(np.finfo(self._np).dtype)
        return self

    @property
    def is_floating(self) -> builtins.bool:
        return self._floating

    @property
    def is_integer(self) -> builtins.bool:
        return self._integer

    @property
    def is_unsigned(self) -> builtins.bool:
        return jnp.issubdtype(self._np, jnp.unsignedinteger)

    @property
    def is_complex(self) -> builtins.bool:
        return self._np.kind == "c"

    @property
    def is_bool(self) -> builtins.bool:
        return self._np.kind == "b"

    @property
    def is_numpy_compatible(self) -> builtins.bool:
        return True

    @property
    def size(self) -> int:
        return self._np.itemsize if self._np.kind != "O" else 0  # (string: TF's)

    @property
    def min(self) -> Any:
        self._check_number("minimum")
        return jnp.finfo(self._np).min if self.is_floating else jnp.iinfo(self._np).min

    @property
    def max(self) -> Any:
        self._check_number("maximum")
        return jnp.finfo(self._np).max if self.is_floating else jnp.iinfo(self._np).max

    def _check_number(self, what: str) -> None:
        if self._np.kind == "O":
            raise TypeError(f"Cannot find {what} value of {self} with type {self}.")

    def is_compatible_with(self, other: DTypeLike) -> builtins.bool:
        return self == other

    def __eq__(self, other: Any) -> builtins.bool:
        if other is self:
            return True
        try:
            return self._np == as_dtype(other)._np
        except TypeError:
            return False

    def __ne__(self, other: object) -> builtins.bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self._np)

    def __repr__(self) -> str:
        return f"jaxtape.{self._name}"

    def __str__(self) -> str:  # TF's `print(tf.float32)`
        return f"<dtype: '{self._name}'>"

    def __reduce__(self):
        return as_dtype, (self._name,)


_TABLE = [
    (jnp.float16, "float16"),
    (jnp.bfloat16, "bfloat16"),
    (np.float32, "float32"),
    (np.float64, "float64"),
    (np.int8, "int8"),
    (np.int16, "int16"),
    (np.int32, "int32"),
    (np.int64, "int64"),
    (np.uint8, "uint8"),
    (np.uint16, "uint16"),
    (np.uint32, "uint32"),
    (np.uint64, "uint64"),
    (np.bool_, "bool"),
    (np.complex64, "complex64"),
    (np.complex128, "complex128"),
]
_BY_NP: dict[np.dtype, DType] = {}
_BY_NAME: dict[str, DType] = {}
for _np_type, _name in _TABLE:
    _d = DType(np.dtype(_np_type), _name)
    _BY_NP[_d._np] = _d
    _BY_NAME[_name] = _d
_BY_NAME.update(
    half=_BY_NAME["float16"], float=_BY_NAME["float32"], double=_BY_NAME["float64"]
)

# TF's `tf.string`: host byte strings (NumPy object arrays, `structured/strings`).
string = DType(np.dtype(object), "string")
_BY_NP[string._np] = string
_BY_NAME["string"] = string

float16 = _BY_NAME["float16"]
bfloat16 = _BY_NAME["bfloat16"]
float32 = _BY_NAME["float32"]
float64 = _BY_NAME["float64"]
int8 = _BY_NAME["int8"]
int16 = _BY_NAME["int16"]
int32 = _BY_NAME["int32"]
int64 = _BY_NAME["int64"]
uint8 = _BY_NAME["uint8"]
uint16 = _BY_NAME["uint16"]
uint32 = _BY_NAME["uint32"]
uint64 = _BY_NAME["uint64"]
bool = _BY_NAME["bool"]  # noqa: A001 - TF's public name
complex64 = _BY_NAME["complex64"]
complex128 = _BY_NAME["complex128"]
half = float16
double = float64


def as_dtype(type_value: DTypeLike) -> DType:
    """A `DType` from a dtype, NumPy dtype, scalar type or name (TF's `as_dtype`)."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str):
        found = _BY_NAME.get(type_value)
        if found is not None:
            return found
    try:
        found = _BY_NP.get(np.dtype(type_value))
    except TypeError:
        found = None
    if found is None:
        raise TypeError(
            f"Cannot convert {type_value!r} to a jaxtape DType. Use one of "
            f"{sorted(_BY_NAME)} or a NumPy dtype."
        )
    return found


@overload
def np_dtype(dtype: None) -> None: ...
@overload
def np_dtype(dtype: DTypeLike) -> np.dtype: ...
@overload
def np_dtype(dtype: DTypeLike | None) -> np.dtype | None: ...
def np_dtype(dtype: DTypeLike | None) -> np.dtype | None:
    """The NumPy dtype for a user-given dtype argument, or None for None."""
    if dtype is None:
        return None
    if isinstance(dtype, DType):
        return dtype._np
    return as_dtype(dtype)._np


def of_array(np_dt: np.dtype) -> DType:
    """The `DType` of an array's NumPy dtype (fast path for `Tensor.dtype`)."""
    return _BY_NP[np_dt]


def default_for_python(value) -> np.dtype | None:
    """TF's dtype for a Python value: float -> float32, int -> int32, bool -> bool.

    Returns None when `value` carries its own dtype (NumPy and JAX arrays).
    """
    kind = _python_kind(value)
    if kind is None:
        return None
    return _PY_KIND_DTYPE[kind]


_PY_KIND_DTYPE = {
    "b": np.dtype(np.bool_),
    "i": np.dtype(np.int32),
    "f": np.dtype(np.float32),
    "c": np.dtype(np.complex64),
}


def _python_kind(value):
    """'b', 'i', 'f' or 'c' for Python scalars and (nested) lists of them."""
    t = type(value)
    if t is builtins.bool:
        return "b"
    if t is int:
        return "i"
    if t is float:
        return "f"
    if t is complex:
        return "c"
    if t in (list, tuple):
        kinds = {_python_kind(v) for v in value}
        if None in kinds:
            return None
        for k in ("c", "f", "i", "b"):
            if k in kinds:
                return k
        return "f"  # empty list: TF gives float32
    return None
