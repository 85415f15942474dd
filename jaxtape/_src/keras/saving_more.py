"""Keras 3's `keras.models.save_model` / `model_from_json` and
`keras.layers.serialize` / `deserialize`, on jaxtape's `.keras` config
entries (`serialization.py`). Layer L5."""

from __future__ import annotations

import json

from jaxtape._src.keras import serialization
from jaxtape._src.keras.layers.base import Layer


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs) -> None:
    """Saves `model` to a `.keras` file: Keras 3's `keras.models.save_model`,
    which is `model.save(filepath, overwrite, zipped, **kwargs)`."""
    model.save(filepath, overwrite=overwrite, zipped=zipped, **kwargs)


def _from_entry(entry, custom_objects):
    """The object of a config entry, built from its `build_config` as Keras's
    `deserialize_keras_object` builds it."""
    obj = serialization.deserialize_layer(entry, custom_objects)
    build_config = entry.get("build_config")
    if build_config and not getattr(obj, "built", True):
        obj.build_from_config(build_config)
    return obj


def model_from_json(json_string, custom_objects=None):
    """The model (Sequential or functional) of a JSON config string, e.g. the
    output of tf.keras's `model.to_json()`, as Keras 3's `model_from_json`:
    its architecture with newly initialized weights."""
    return _from_entry(json.loads(json_string), custom_objects)


def serialize(layer) -> dict:
    """Keras's `{'module', 'class_name', 'config', 'registered_name'}` entry of
    `layer` (`keras.layers.serialize`)."""
    return layer._serialize()


def deserialize(config, custom_objects=None):
    """The layer of `serialize`'s output (`keras.layers.deserialize`); a config
    of something that is not a layer raises Keras's ValueError."""
    obj = _from_entry(config, custom_objects) if isinstance(config, dict) else None
    if not isinstance(obj, Layer):
        raise ValueError(
            "`keras.layers.deserialize` was passed a `config` object that is not "
            f"a `keras.layers.Layer`. Received: {config}"
        )
    return obj
