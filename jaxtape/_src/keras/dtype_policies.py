"""`keras.dtype_policies`: Keras 3's dtype-policy namespace. Layer L5.

`DTypePolicy`/`FloatDTypePolicy` are `keras.mixed_precision`'s
(`mixed_precision.py`); this module adds `DTypePolicyMap` (layer paths, or
regexes over them, to policies), `get`/`serialize`/`deserialize` that know the
map, and Keras's quantized policy classes, which raise NotImplementedError:
jaxtape has no quantized layers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, MutableMapping

from jaxtape._src.keras import mixed_precision
from jaxtape._src.keras.mixed_precision import DTypePolicy, FloatDTypePolicy

__all__ = [
    "AWQDTypePolicy",
    "DTypePolicy",
    "DTypePolicyMap",
    "FloatDTypePolicy",
    "GPTQDTypePolicy",
    "Int4DTypePolicy",
    "QuantizedDTypePolicy",
    "QuantizedFloat8DTypePolicy",
    "deserialize",
    "get",
    "serialize",
]


class QuantizedDTypePolicy(DTypePolicy):
    """Keras's int8 quantized policy (`"int8_from_float32"`).

    Differences from Keras: not supported; constructing one raises
    NotImplementedError (jaxtape has no quantized layers).
    """

    def __init__(self, mode, source_name=None) -> None:
        del mode, source_name
        _refuse_quantized(self)


def _refuse_quantized(policy) -> None:
    raise NotImplementedError(
        f"keras.dtype_policies.{type(policy).__name__} is not supported by "
        "jaxtape (it has no quantized layers); use a float policy such as "
        "'mixed_float16'."
    )


class QuantizedFloat8DTypePolicy(QuantizedDTypePolicy):
    """Keras's float8 quantized policy. Not supported: raises NotImplementedError."""

    def __init__(self, mode, source_name=None, amax_history_length=1024) -> None:
        del mode, source_name, amax_history_length
        _refuse_quantized(self)


class Int4DTypePolicy(QuantizedDTypePolicy):
    """Keras's int4 quantized policy. Not supported: raises NotImplementedError."""


class GPTQDTypePolicy(QuantizedDTypePolicy):
    """Keras's GPTQ quantized policy. Not supported: raises NotImplementedError."""


class AWQDTypePolicy(QuantizedDTypePolicy):
    """Keras's AWQ quantized policy. Not supported: raises NotImplementedError."""


class DTypePolicyMap(DTypePolicy, MutableMapping):
    """A dict from layer paths (or regexes, matched in full) to `DTypePolicy`s,
    with a default for paths that match nothing (Keras 3's `DTypePolicyMap`).

    >>> m = jaxtape.keras.dtype_policies.DTypePolicyMap("float32")
    >>> m["encoder/.*"] = "float16"
    >>> m["encoder/dense"].name, m["decoder"].name
    ('float16', 'float32')

    Args:
      default_policy: The policy of paths not in the map (anything `get`
        takes); None is the global policy.
      policy_map: An initial dict of path -> `DTypePolicy`.

    Differences from Keras: jaxtape layers have no `path`; a layer given a map
    as its `dtype` uses the map's default policy.
    """

    def __init__(self, default_policy=None, policy_map=None) -> None:
        if isinstance(default_policy, DTypePolicyMap):
            raise ValueError("`default_policy` cannot be a `DTypePolicyMap`.")
        if policy_map is not None and not isinstance(policy_map, dict):
            raise TypeError(
                "If specified, `policy_map` must be a dict. "
                f"Received: policy_map={policy_map} of type {type(policy_map)}"
            )
        self._default_policy_arg = default_policy
        self._default_policy = get(default_policy)
        self._policy_map: dict[str, DTypePolicy] = policy_map or {}
        self._quantization_mode = None

    @property
    def name(self) -> str:
        return f"map_{self.default_policy.name}"

    @property
    def default_policy(self) -> DTypePolicy:
        """The policy of paths that match no key."""
        return get(self._default_policy)

    @property
    def variable_dtype(self) -> str:
        return self.default_policy.variable_dtype

    @property
    def compute_dtype(self) -> str:
        return self.default_policy.compute_dtype

    @property
    def quantization_mode(self) -> None:
        return self.default_policy.quantization_mode

    def __getitem__(self, key) -> DTypePolicy:
        """The policy of `key`: its own entry, else the one key that matches it
        as a regex (ValueError if several do), else the default policy."""
        if key in self._policy_map:
            return self._policy_map[key]
        matching = [p for p in self._policy_map if re.fullmatch(p, key)]
        if len(matching) > 1:
            raise ValueError(
                f"Path '{key}' matches multiple dtype policy "
                f"specification keys: {matching}. Please make "
                "sure each path only matches at most "
                "one dtype policy specification key in the DTypePolicyMap."
            )
        if len(matching) == 1:
            return self._policy_map[matching[0]]
        return self.default_policy

    def __setitem__(self, key, policy) -> None:
        if key in self._policy_map:
            raise ValueError(
                f"{key} already exist in the DTypePolicyMap with "
                f"value {self._policy_map[key]}. Please make sure to "
                "not use duplicated keys."
            )
        try:
            policy = get(policy)
        except Exception:
            raise ValueError(
                "Cannot interpret the assigned value by "
                "`keras.dtype_policies.get`. "
                f"Received: {policy} of type {type(policy)}"
            ) from None
        self._policy_map[key] = policy

    def __delitem__(self, key) -> None:
        self._policy_map.pop(key)

    def __contains__(self, key) -> bool:
        return key in self._policy_map

    def __len__(self) -> int:
        return len(self._policy_map)

    def __iter__(self) -> Iterator[str]:
        return iter(self._policy_map)

    def __eq__(self, other) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    def get_config(self) -> dict:
        return {
            "default_policy": self._default_policy_arg,
            "policy_map": {k: serialize(v) for k, v in self._policy_map.items()},
        }

    @classmethod
    def from_config(cls, config: dict, custom_objects=None) -> DTypePolicyMap:
        del custom_objects
        policy_map = {k: get(v) for k, v in config["policy_map"].items()}
        return cls(config.get("default_policy"), policy_map)

    def __repr__(self) -> str:
        mapping = [(k, v.name) for k, v in self._policy_map.items()]
        return (
            f"<DTypePolicyMap at {hex(id(self))} "
            f"default_policy={self._default_policy.name}, mapping={mapping}>"
        )


def serialize(dtype_policy) -> dict:
    """A policy (or map) as Keras's `serialize_keras_object` writes it."""
    return mixed_precision.serialize(dtype_policy)


_CLASSES = {
    "DTypePolicy": DTypePolicy,
    "FloatDTypePolicy": FloatDTypePolicy,
    "DTypePolicyMap": DTypePolicyMap,
    "QuantizedDTypePolicy": QuantizedDTypePolicy,
    "QuantizedFloat8DTypePolicy": QuantizedFloat8DTypePolicy,
    "Int4DTypePolicy": Int4DTypePolicy,
    "GPTQDTypePolicy": GPTQDTypePolicy,
    "AWQDTypePolicy": AWQDTypePolicy,
}


def deserialize(config, custom_objects=None):
    """A policy from `serialize`'s dict (`custom_objects` may name classes)."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(
            f"Could not interpret serialized dtype policy: {config!r}. Expected "
            "a dict with `class_name` and `config`."
        )
    classes = dict(_CLASSES, **(custom_objects or {}))
    name = config["class_name"]
    if name not in classes:
        raise TypeError(
            f"Could not locate class '{name}'. Make sure custom classes are "
            "decorated with `@keras.saving.register_keras_serializable()`."
        )
    cls = classes[name]
    inner = config.get("config", {})
    if cls is DTypePolicyMap:
        return DTypePolicyMap.from_config(inner, custom_objects)
    return cls(**inner)


def get(identifier):
    """A policy from None (the global policy), a policy, a serialized dict, a
    name (`"mixed_float16"`, `"float16"`) or a dtype."""
    if isinstance(identifier, dict) and "class_name" in identifier:
        return deserialize(identifier)
    return mixed_precision.get(identifier)
