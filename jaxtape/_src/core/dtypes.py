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
    def is_quantized(self) -> builtins.bool:
        return False

    @property
    def as_datatype_enum(self) -> int:
        """TF's `DataType` enum value (`types.proto`): float32 is 1, int32 3..."""
        return _ENUMS[self._name]

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
        if self._np.kind in "Ob":  # (strings and bools: TF's error)
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


class _NoTensorDType(NotImplementedError, TypeError):
    """A Tensor of a dtype jaxtape has no arrays for (`qint8`, `resource`...).

    `NotImplementedError` (jaxtape lacks it) and `TypeError` (what TF raises
    for an eager `constant` of `resource`/`variant`), so either `except` works.
    """


class _OpaqueDType(DType):
    """TF's dtypes with no jaxtape Tensors: the quantized ones (`qint8`,
    `quint8`, `qint16`, `quint16`, `qint32`) and the handle ones (`resource`,
    `variant`). Their attributes are TF's; making a tensor of one raises."""

    __slots__ = ("_structured",)

    def __init__(self, name: str, base: Any = None):
        # (`_np` is the property below: no slot write for it.)
        self._name = name
        self._floating = self._integer = False
        # TF's NumPy type for a quantized dtype: a one-field record.
        self._structured = None if base is None else np.dtype([(name, base)])

    @property
    def _np(self) -> np.dtype:  # type: ignore[override]
        # Every path that makes an array of a dtype reads `_np`: it raises here.
        raise _NoTensorDType(
            f"jaxtape has no Tensors of dtype {self._name}: "
            + (
                "quantized tensors are not implemented (TF's eager ops take "
                "few of them); keep the integer values as int8/uint8/int16/"
                "uint16/int32 with their scale."
                if self._structured is not None
                else "it is a TF graph handle type with no JAX array."
            )
        )

    @property
    def as_numpy_dtype(self) -> Any:
        if self._structured is None:
            raise KeyError(self.as_datatype_enum)  # (TF's)
        return self._structured

    @property
    def real_dtype(self) -> DType:
        return self

    @property
    def is_unsigned(self) -> builtins.bool:
        return False

    @property
    def is_complex(self) -> builtins.bool:
        return False

    @property
    def is_bool(self) -> builtins.bool:
        return False

    @property
    def is_numpy_compatible(self) -> builtins.bool:
        return self._structured is not None

    @property
    def is_quantized(self) -> builtins.bool:
        return self._structured is not None

    @property
    def size(self) -> int:
        return 0 if self._structured is None else self._structured.itemsize

    def _check_number(self, what: str) -> None:
        kind = " with quantized type " + str(self) if self.is_quantized else ""
        raise TypeError(f"Cannot find {what} value of {self}{kind}.")

    def __eq__(self, other: Any) -> builtins.bool:
        if other is self:
            return True
        try:
            return as_dtype(other) is self
        except TypeError:
            return False

    def __hash__(self) -> int:
        return hash(self._name)


# (TF's type name for every dtype: `type(tf.qint8).__name__` is "DType".)
_OpaqueDType.__name__ = _OpaqueDType.__qualname__ = "DType"


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
    # TF's `tf.dtypes.experimental`: ml_dtypes' narrow types, which JAX arrays take.
    (jnp.float8_e5m2, "float8_e5m2"),
    (jnp.float8_e4m3fn, "float8_e4m3fn"),
    (jnp.float8_e4m3fnuz, "float8_e4m3fnuz"),
    (jnp.float8_e4m3b11fnuz, "float8_e4m3b11fnuz"),
    (jnp.float8_e5m2fnuz, "float8_e5m2fnuz"),
    (jnp.int4, "int4"),
    (jnp.uint4, "uint4"),
    (jnp.int2, "int2"),
    (jnp.uint2, "uint2"),
    (jnp.float4_e2m1fn, "float4_e2m1fn"),
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

# TF's quantized and handle dtypes (no jaxtape Tensors of them).
qint8 = _OpaqueDType("qint8", np.int8)
quint8 = _OpaqueDType("quint8", np.uint8)
qint16 = _OpaqueDType("qint16", np.int16)
quint16 = _OpaqueDType("quint16", np.uint16)
qint32 = _OpaqueDType("qint32", np.int32)
resource = _OpaqueDType("resource")
variant = _OpaqueDType("variant")
QUANTIZED_DTYPES = frozenset({qint8, quint8, qint16, quint16, qint32})
for _d in (qint8, quint8, qint16, quint16, qint32, resource, variant):
    _BY_NAME[_d.name] = _d
    if _d._structured is not None:
        _BY_NP[_d._structured] = _d

# TF's `DataType` enum (tensorflow/core/framework/types.proto).
_ENUMS = {
    "float32": 1,
    "float64": 2,
    "int32": 3,
    "uint8": 4,
    "int16": 5,
    "int8": 6,
    "string": 7,
    "complex64": 8,
    "int64": 9,
    "bool": 10,
    "qint8": 11,
    "quint8": 12,
    "qint32": 13,
    "bfloat16": 14,
    "qint16": 15,
    "quint16": 16,
    "uint16": 17,
    "complex128": 18,
    "float16": 19,
    "resource": 20,
    "variant": 21,
    "uint32": 22,
    "uint64": 23,
    "float8_e5m2": 24,
    "float8_e4m3fn": 25,
    "float8_e4m3fnuz": 26,
    "float8_e4m3b11fnuz": 27,
    "float8_e5m2fnuz": 28,
    "int4": 29,
    "uint4": 30,
    "int2": 31,
    "uint2": 32,
    "float4_e2m1fn": 33,
}
_BY_ENUM = {enum: _BY_NAME[name] for name, enum in _ENUMS.items()}

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
float8_e5m2 = _BY_NAME["float8_e5m2"]
float8_e4m3fn = _BY_NAME["float8_e4m3fn"]
float8_e4m3fnuz = _BY_NAME["float8_e4m3fnuz"]
float8_e4m3b11fnuz = _BY_NAME["float8_e4m3b11fnuz"]
float8_e5m2fnuz = _BY_NAME["float8_e5m2fnuz"]
int4 = _BY_NAME["int4"]
uint4 = _BY_NAME["uint4"]
int2 = _BY_NAME["int2"]
uint2 = _BY_NAME["uint2"]
float4_e2m1fn = _BY_NAME["float4_e2m1fn"]


def as_dtype(type_value: DTypeLike) -> DType:
    """A `DType` from a dtype, NumPy dtype, scalar type or name (TF's `as_dtype`)."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str):
        found = _BY_NAME.get(type_value)
        if found is not None:
            return found
    elif type(type_value) is int:  # TF's `DataType` enum value
        found = _BY_ENUM.get(type_value)
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
