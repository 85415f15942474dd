"""Keras 3's config entries for layers and models (`.keras` config.json). Layer L5.

A layer is written as Keras's `serialize_keras_object` writes it:
`{'module', 'class_name', 'config', 'registered_name'}`, its module
`keras.layers` for a built-in, its own module and `'package>Name'` for a
class registered with `keras.saving.register_keras_serializable`. Reading
resolves the class through `LAYERS` (the registry kind that
`keras/layers/__init__.py` fills with the built-ins and `keras/models.py`
with `Sequential` and `Functional`), so neither this module nor
`keras/saving.py` imports a layer or model class: each class knows its own
config (`get_config`/`from_config`, `Layer._serialize`).
"""

from __future__ import annotations

import inspect

from jaxtape._src.core import registry

LAYERS = registry.Kind("layer", "keras.layers", snake_case_classes=False)


def plain_config(cfg):
    """A config as Keras 3 writes it: lists for tuples, `batch_shape` (not TF
    2's `batch_input_shape`), nested objects as full serialized dicts."""
    if isinstance(cfg, dict):
        out = {}
        for k, v in cfg.items():
            if k == "batch_input_shape":  # Keras 3 spells it batch_shape
                continue
            if isinstance(v, dict) and "class_name" in v and "config" in v:
                v = {"module": "keras.initializers", **v}
                v.setdefault("registered_name", None)
            out[k] = plain_config(v)
        return out
    if isinstance(cfg, tuple):
        return [plain_config(v) for v in cfg]
    return cfg


def serialize_layer(layer) -> dict:
    """`layer`'s entry in a `.keras` config (what `Layer._serialize` returns)."""
    out = LAYERS.serialize_object(layer)
    out["config"] = plain_config(out["config"])
    return out


def deserialize_layer(entry: dict, custom_objects=None):
    """The layer (or model) of a `.keras` config entry, written by jaxtape or
    tf.keras: its class by registered name or class name (user classes first,
    as Keras), then `from_config` with Keras-only arguments dropped.
    `custom_objects` are found by name while nested entries are read too."""
    name = entry["class_name"]
    cls = LAYERS.resolve(name, entry.get("registered_name"), custom_objects)
    if not isinstance(cls, type) or not hasattr(cls, "from_config"):
        raise LAYERS.not_found("class", name, entry)
    cfg = dict(entry.get("config") or {})
    if isinstance(cfg.get("dtype"), dict):  # Keras 3's DTypePolicy
        cfg["dtype"] = cfg["dtype"].get("config", {}).get("name", "float32")
    with registry.CustomObjectScope(custom_objects):
        return cls.from_config(_strip_keras_only(cls, cfg))


# Keras 3 arguments jaxtape's layers do not take: dropped when unset (None or
# False), the ones in `_ALWAYS_DROPPED` in every case.
_KERAS_ONLY = {
    "quantization_config",
    "sparse",
    "ragged",
    "optional",
    "input_axes",
    "output_axes",
    "lora_rank",
    "lora_alpha",
    "synchronized",
    "renorm",
    "renorm_clipping",
    "renorm_momentum",
    "kernel_constraint",
    "bias_constraint",
    "beta_regularizer",
    "gamma_regularizer",
    "beta_constraint",
    "gamma_constraint",
    "activity_regularizer",
    "kernel_regularizer",
    "bias_regularizer",
    "data_format",
    "groups",
    "embeddings_constraint",
    "mask_zero",
    "input_length",
}
_ALWAYS_DROPPED = ("quantization_config", "data_format", "renorm_momentum")


def _strip_keras_only(cls, cfg: dict) -> dict:
    """`cfg` without the Keras-only arguments that `cls` does not take (an
    argument a layer takes is kept: `data_format="channels_first"` must load
    as saved)."""
    taken = _init_parameters(cls)
    return {
        k: v
        for k, v in cfg.items()
        if k in taken
        or not (k in _KERAS_ONLY and (v is None or v is False or k in _ALWAYS_DROPPED))
    }


def _init_parameters(cls) -> set:
    """The argument names the `__init__`s of `cls` and its bases name."""
    names = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            names.update(
                n
                for n, p in inspect.signature(init).parameters.items()
                if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
            )
        except (TypeError, ValueError):  # (a builtin's)
            pass
    return names
