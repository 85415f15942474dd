"""Keras 2's config format, as Keras 3 keeps it in `keras.utils.legacy` and
`keras.legacy.saving`: `{'class_name', 'config'}` without a module, nested
objects marked `__passive_serialization__`. Layer L5."""

from __future__ import annotations

import inspect

from jaxtape._src.core import registry

_UNKNOWN = (
    "Please ensure you are using a `keras.utils.custom_object_scope` and that "
    "this object is included in the scope. See "
    "https://www.tensorflow.org/guide/keras/save_and_serialize"
    "#registering_the_custom_object for details."
)


def serialize_keras_object(instance):
    """Keras 2's `{'class_name': registered name, 'config': ...}` of an object
    with `get_config` (nested such objects serialized the same way, marked
    `__passive_serialization__`); a function gives its registered name."""
    instance = inspect.unwrap(instance)
    if instance is None:
        return None
    if hasattr(instance, "get_config"):
        config = {}
        for key, item in instance.get_config().items():
            if isinstance(item, str):
                config[key] = item
                continue
            try:
                serialized = serialize_keras_object(item)
                if isinstance(serialized, dict) and not isinstance(item, dict):
                    serialized["__passive_serialization__"] = True
                config[key] = serialized
            except ValueError:
                config[key] = item
        name = registry.get_registered_name(instance.__class__)
        return {"class_name": name, "config": config}
    if hasattr(instance, "__name__"):
        return registry.get_registered_name(instance)
    raise ValueError(
        f"Cannot serialize {instance} because it doesn't implement `get_config()`."
    )


def _class_and_config(config, module_objects, custom_objects, printable_name):
    if (
        not isinstance(config, dict)
        or "class_name" not in config
        or ("config" not in config)
    ):
        raise ValueError(
            f"Improper config format for {config}. Expecting python dict contains "
            "`class_name` and `config` as keys"
        )
    class_name = config["class_name"]
    cls = registry.get_registered_object(class_name, custom_objects, module_objects)
    if cls is None:
        raise ValueError(f"Unknown {printable_name}: '{class_name}'. {_UNKNOWN}")
    cls_config = config["config"]
    if isinstance(cls_config, list):
        return cls, cls_config
    cls_config = dict(cls_config)
    for key, item in list(cls_config.items()):
        if key == "name":
            continue
        if isinstance(item, dict) and "__passive_serialization__" in item:
            cls_config[key] = deserialize_keras_object(
                item, module_objects, custom_objects, "config_item"
            )
        elif isinstance(item, str):
            found = registry.get_registered_object(item, custom_objects, module_objects)
            if inspect.isfunction(found):
                cls_config[key] = found
    return cls, cls_config


def deserialize_keras_object(
    identifier, module_objects=None, custom_objects=None,
    printable_module_name="object",
):  # fmt: skip
    """The object of Keras 2's serialized form: a `{'class_name', 'config'}`
    dict (the class found in `custom_objects`, the registered objects or
    `module_objects`; nested passive entries too), a name (a function, or a
    class instantiated with no arguments), or a function itself."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        cls, cls_config = _class_and_config(
            identifier, module_objects, custom_objects, printable_module_name
        )
        custom_objects = custom_objects or {}
        with registry.CustomObjectScope(custom_objects):
            if not hasattr(cls, "from_config"):
                return cls(**dict(cls_config))
            takes = inspect.signature(cls.from_config).parameters
            if "custom_objects" in takes:
                return cls.from_config(cls_config, custom_objects=custom_objects)
            return cls.from_config(cls_config)
    if isinstance(identifier, str):
        obj = registry.get_registered_object(identifier, custom_objects)
        if obj is None:
            obj = (module_objects or {}).get(identifier)
        if obj is None:
            raise ValueError(
                f"Unknown {printable_module_name}: '{identifier}'. {_UNKNOWN}"
            )
        return obj() if inspect.isclass(obj) else obj
    if inspect.isfunction(identifier):
        return identifier
    raise ValueError(
        f"Could not interpret serialized {printable_module_name}: {identifier}"
    )
