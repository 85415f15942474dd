"""Keras 3's dtype policies and autocasting (`keras.mixed_precision`). Layer L5.

A `DTypePolicy` names a layer's compute dtype (its inputs, outputs and
arithmetic) and variable dtype (its weights): `"mixed_float16"` computes in
float16 and keeps float32 weights. While a layer whose dtypes differ runs its
`call`, an autocast scope (Keras 3's `AutocastScope`) is active, and the
layer's float weights (`AutocastVariable`s, made by `Layer.add_weight`) read
as the compute dtype: without a tape the value is cast; under a recording
tape the float32 read is the tape's leaf and the cast a recorded op, so the
gradient of a float32 weight is float32, as TF's `Cast` gradient gives.

Only `AutocastVariable`s consult the scope, so models without a mixed policy
read their weights exactly as before (the tape's read hook is wrapped only
once a mixed layer has made a weight). Imports `core`, `ops`, `state` and
`keras/variables` only; `keras/layers/base.py` uses it.

Differences from Keras 3:
  - Only float weights made by a layer with a mixed policy autocast; a weight
    of a float32 layer read directly inside a mixed layer's `call` keeps
    float32 (Keras casts every `autocast=True` variable in a scope).
  - BatchNormalization/LayerNormalization under a mixed policy cast float32
    inputs to float32 directly (Keras's BatchNormalization rounds them to
    the compute dtype first; float16 inputs, the usual case, agree).
  - Without `set_dtype_policy`, the global policy follows `floatx()` at every
    call (Keras fixes it at its first use).
  - Quantized policies (`"int8_from_float32"`...) and `DTypePolicyMap` are
    not supported.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from jaxtape._src.core import config, context, dtypes
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.keras.variables import KerasVariable
from jaxtape._src.ops import math_ops
from jaxtape._src.state.variable import Variable

__all__ = [
    "AutocastScope",
    "AutocastVariable",
    "DTypePolicy",
    "FloatDTypePolicy",
    "Policy",
    "dtype_policy",
    "get",
    "global_policy",
    "serialize",
    "set_dtype_policy",
    "set_global_policy",
]

_MIXED = {
    "mixed_float16": ("float16", "float32"),
    "mixed_bfloat16": ("bfloat16", "float32"),
}
_QUANTIZED = ("int8", "float8", "int4", "gptq", "awq")


def _standardize(name: str) -> str:
    """Keras's `standardize_dtype` of a policy name (`'float'` is float32)."""
    if name == "bfloat16":
        return name
    try:
        return np.dtype(dtypes.np_dtype(name)).name
    except TypeError:
        raise ValueError(name) from None


def is_float(name: str) -> bool:
    return name == "bfloat16" or np.dtype(name).kind == "f"


class DTypePolicy:
    """A layer's compute and variable dtypes (Keras 3's `DTypePolicy`).

    Args:
      name: `"mixed_float16"` or `"mixed_bfloat16"` (float16/bfloat16
        computations, float32 variables), or a dtype name (`"float32"`,
        `"float16"`, ...) used for both. None takes the global policy's name.

    >>> policy = jaxtape.keras.mixed_precision.DTypePolicy("mixed_float16")
    >>> policy.compute_dtype, policy.variable_dtype
    ('float16', 'float32')

    Differences from Keras: quantized policies (`"int8_from_float32"` ...)
    raise NotImplementedError; `DTypePolicyMap` is not provided.
    """

    def __init__(self, name: str | None = None) -> None:
        if name is None:
            name = dtype_policy().name
        self._name = name
        self._compute_dtype, self._variable_dtype = self._parse_name(name)
        self._quantization_mode = None

    @staticmethod
    def _parse_name(name) -> tuple[str, str]:
        if not isinstance(name, str):
            raise TypeError(
                "'name' must be a string, such as 'mixed_float16'. "
                f"Received: name={name} (of type {type(name)})"
            )
        if name in _MIXED:
            return _MIXED[name]
        if name.startswith(_QUANTIZED):
            raise NotImplementedError(
                f"Quantized dtype policies ({name!r}) are not supported by "
                "jaxtape; use a float policy such as 'mixed_float16'."
            )
        try:
            dtype = _standardize(name)
        except ValueError:
            raise ValueError(
                f"Cannot convert '{name}' to a mixed precision DTypePolicy. Valid "
                "policies include 'mixed_float16', 'mixed_bfloat16', and the name "
                "of any float dtype such as 'float32'."
            ) from None
        return dtype, dtype

    @property
    def name(self) -> str:
        """The policy's name (`"mixed_float16"`)."""
        return self._name

    @property
    def compute_dtype(self) -> str:
        """The dtype of a layer's inputs, computations and outputs."""
        return self._compute_dtype

    @property
    def variable_dtype(self) -> str:
        """The dtype a layer creates its weights in."""
        return self._variable_dtype

    @property
    def quantization_mode(self) -> None:
        """None: jaxtape has no quantized policies."""
        return self._quantization_mode

    def get_config(self) -> dict:
        return {"name": self._name}

    @classmethod
    def from_config(cls, config: dict) -> DTypePolicy:
        return cls(**config)

    def __repr__(self) -> str:
        name = type(self).__name__
        if name == "FloatDTypePolicy":
            name = "DTypePolicy"
        return f'<{name} "{self._name}">'

    def __eq__(self, other) -> bool:
        if not isinstance(other, DTypePolicy):
            return False
        return self._name == other._name

    def __hash__(self) -> int:
        return hash(self._name)


class FloatDTypePolicy(DTypePolicy):
    """Keras's alias of `DTypePolicy`."""


Policy = DTypePolicy  # (Keras 3's legacy `keras.mixed_precision.Policy`)

_global: dict[str, DTypePolicy | None] = {"policy": None}


def dtype_policy() -> DTypePolicy:
    """The global dtype policy (Keras's `keras.config.dtype_policy`): the one
    `set_dtype_policy` set, else a policy of `floatx()` (`"float32"`)."""
    policy = _global["policy"]
    if policy is None:
        return DTypePolicy(config.floatx())
    return policy


def set_dtype_policy(policy) -> None:
    """Sets the global dtype policy, used by layers built without `dtype`.

    >>> jaxtape.keras.mixed_precision.set_dtype_policy("mixed_float16")
    >>> jaxtape.keras.layers.Dense(2).compute_dtype
    'float16'
    >>> jaxtape.keras.mixed_precision.set_dtype_policy("float32")
    """
    if not isinstance(policy, DTypePolicy):
        if not isinstance(policy, str):
            raise ValueError(
                "Invalid `policy` argument. Expected the string name of a policy "
                "(such as 'mixed_float16') or a `DTypePolicy` instance. "
                f"Received: policy={policy} (of type {type(policy)})"
            )
        policy = DTypePolicy(policy)
    _global["policy"] = policy


global_policy = dtype_policy  # (Keras 3's legacy names)
set_global_policy = set_dtype_policy


def get(identifier) -> DTypePolicy:
    """A policy from a layer's `dtype` argument (Keras's `dtype_policies.get`):
    None (the global policy), a policy, a name, a config dict, or a dtype."""
    if identifier is None:
        return dtype_policy()
    if isinstance(identifier, DTypePolicy):
        return identifier
    if isinstance(identifier, dict):
        cfg = identifier.get("config", identifier)
        cls = (
            FloatDTypePolicy
            if identifier.get("class_name") == "FloatDTypePolicy"
            else DTypePolicy
        )
        return cls.from_config(cfg)
    if isinstance(identifier, str):
        return DTypePolicy(identifier)
    try:
        return DTypePolicy(dtypes.as_dtype(identifier).name)
    except (TypeError, ValueError):
        raise ValueError(
            "Cannot interpret `dtype` argument. Expected a string or an instance "
            f"of DTypePolicy. Received: dtype={identifier}"
        ) from None


def serialize(policy: DTypePolicy) -> dict:
    """A policy as Keras's `serialize_keras_object` writes it (a layer's
    `"dtype"` config entry)."""
    return {
        "module": "keras",
        "class_name": type(policy).__name__,
        "config": policy.get_config(),
        "registered_name": None,
    }


# -- autocasting -------------------------------------------------------------------
class _AutocastState(threading.local):
    dtype: np.dtype | None = None  # the active scope's target, None: no cast


autocast_state = _AutocastState()


class AutocastScope:
    """While active, `AutocastVariable`s of a float dtype read as `dtype`
    (Keras 3's `AutocastScope`); `AutocastScope(None)` turns casting off."""

    def __init__(self, dtype) -> None:
        if dtype is not None:
            dtype = np.dtype(dtypes.np_dtype(dtype))
            if not is_float(dtype.name):
                raise ValueError(
                    "`AutocastScope` can only be used with a floating-point target "
                    f"dtype, such as 'float16'. Received: dtype={dtype.name}"
                )
        self.dtype = dtype
        self._outer: list = []

    def __enter__(self) -> AutocastScope:
        self._outer.append(autocast_state.dtype)
        autocast_state.dtype = self.dtype
        return self

    def __exit__(self, *exc) -> None:
        autocast_state.dtype = self._outer.pop()


class AutocastVariable(KerasVariable):
    """A float weight of a mixed-policy layer: reads as the autocast scope's
    dtype inside the layer's `call` (Keras 3's autocasting variable), its own
    dtype elsewhere. Assignments cast the value to the variable's dtype."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _install_tape_read()

    def _read_raw(self):
        value = Variable._read_raw(self)
        target = autocast_state.dtype
        if target is None or value.dtype == target:
            return value
        return value.astype(target)

    @property
    def dtype(self) -> dtypes.DType:
        target = autocast_state.dtype
        if target is None:
            return dtypes.of_array(self._value.dtype)
        return dtypes.as_dtype(target)

    def _assigning(self, method, value, *args, **kwargs):
        outer, autocast_state.dtype = autocast_state.dtype, None
        try:
            own = self._value.dtype
            if (
                isinstance(value, (Variable, Tensor))
                and np.dtype(value.dtype.as_numpy_dtype) != own
            ):
                value = math_ops.cast(value, own)
            return method(self, value, *args, **kwargs)
        finally:
            autocast_state.dtype = outer

    def assign(self, value, *args, **kwargs):
        return self._assigning(Variable.assign, value, *args, **kwargs)

    def assign_add(self, delta, *args, **kwargs):
        return self._assigning(Variable.assign_add, delta, *args, **kwargs)

    def assign_sub(self, delta, *args, **kwargs):
        return self._assigning(Variable.assign_sub, delta, *args, **kwargs)


_tape_read: list = []  # the tape layer's read hook, once wrapped


def _install_tape_read() -> None:
    """Wraps `context.hooks.read_variable` (once): a recorded read of an
    `AutocastVariable` inside a scope is the tape's float32 read, then a
    recorded cast."""
    if not _tape_read:
        _tape_read.append(context.hooks.read_variable)
        context.hooks.read_variable = _autocast_read


def _autocast_read(var):
    target = autocast_state.dtype
    if target is None or not isinstance(var, AutocastVariable):
        return _tape_read[0](var)
    autocast_state.dtype = None
    try:
        t = _tape_read[0](var)
    finally:
        autocast_state.dtype = target
    if t._v.dtype == target or t._v.dtype.kind != "f":
        return t
    return math_ops.cast(t, target)
