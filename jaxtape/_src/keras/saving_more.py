"""Keras 3's `keras.models.save_model` / `model_from_json` / `clone_model` and
`keras.layers.serialize` / `deserialize`, on jaxtape's `.keras` config
entries (`serialization.py`). Layer L5."""

from __future__ import annotations

import json

from jaxtape._src.keras import serialization
from jaxtape._src.keras.keras_tensor import KerasTensor, flatten, map_structure
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.layers.core import Input
from jaxtape._src.keras.models import Model, Sequential


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


# -- clone_model -------------------------------------------------------------------
def _default_clone(layer):
    """Keras's default: a fresh layer of the same config (new weights)."""
    return layer.__class__.from_config(layer.get_config())


def _wrap_clone_function(clone_function, call_function, recursive, cache):
    """Keras's `_wrap_clone_function`: each layer cloned once (`cache`);
    with `recursive`, nested Sequential/functional models cloned as models."""
    clone_function = clone_function or _default_clone

    def wrapped(layer):
        if id(layer) in cache:
            return cache[id(layer)]
        if (
            recursive
            and isinstance(layer, Model)
            and (isinstance(layer, Sequential) or layer._graph is not None)
        ):
            clone = clone_model(
                layer,
                clone_function=clone_function,
                call_function=None if isinstance(layer, Sequential) else call_function,
                recursive=True,
                cache=cache,
            )
        else:
            clone = clone_function(layer)
        cache[id(layer)] = clone
        return clone

    return wrapped


def _compiled_like(new, model):
    config = (
        model.get_compile_config() if hasattr(model, "get_compile_config") else None
    )
    if config:
        new.compile_from_config(config)
    return new


def _clone_sequential(model, clone_function, input_tensors):
    layers = [clone_function(layer) for layer in model.layers]
    if input_tensors is not None:
        if isinstance(input_tensors, (list, tuple)):
            if len(input_tensors) != 1:
                raise ValueError(
                    "Argument `input_tensors` must contain a single tensor."
                )
            input_tensors = input_tensors[0]
        if not isinstance(input_tensors, KerasTensor):
            raise ValueError(
                "Argument `input_tensors` must be a KerasTensor. Received invalid "
                f"value: input_tensors={input_tensors}"
            )
        layers = [input_tensors, *layers]
    elif model._input_shape is not None:
        shape = tuple(model._input_shape)
        layers = [Input(batch_shape=shape, dtype=model.dtype), *layers]
    new = Sequential(layers, name=model.name)
    new.trainable = model.trainable
    return _compiled_like(new, model)


def _clone_functional(model, clone_function, input_tensors, call_function):
    graph_inputs, graph_outputs, order = model._graph
    if input_tensors is not None:
        given = flatten(input_tensors)
        if not all(isinstance(x, KerasTensor) for x in given):
            raise ValueError(
                "All entries in `input_tensors` must be KerasTensors. Received "
                f"invalid values: inputs_tensors={input_tensors}"
            )
        if len(given) != len(flatten(graph_inputs)):
            raise ValueError(
                "`input_tensors` must have the same structure as model.input"
                f"\nReference structure: {graph_inputs}"
                f"\nReceived structure: {input_tensors}"
            )
    else:
        input_tensors = map_structure(
            lambda t: Input(
                batch_shape=tuple(t.shape), dtype=t.dtype.name, name=t.name
            ),
            graph_inputs,
        )
    values = {
        id(old): new for old, new in zip(flatten(graph_inputs), flatten(input_tensors))
    }

    def value(t):
        return values[id(t)] if isinstance(t, KerasTensor) else t

    for node in order:
        layer = clone_function(node.layer)
        args = (map_structure(value, node.inputs), *map_structure(value, node.args))
        kwargs = {k: map_structure(value, v) for k, v in node.kwargs.items()}
        if call_function is not None:
            out = call_function(layer, *args, **kwargs)
        else:
            out = layer(*args, **kwargs)
        for sym, new in zip(flatten(node.outputs), flatten(out)):
            values[id(sym)] = new
    new = Model(input_tensors, map_structure(value, graph_outputs), name=model.name)
    return _compiled_like(new, model)


def clone_model(model, input_tensors=None, clone_function=None,
                call_function=None, recursive=False, **kwargs):  # fmt: skip
    """A copy of `model` with new layers (Keras 3's `keras.models.clone_model`):
    a Sequential or functional model is rebuilt with each layer replaced by
    `clone_function(layer)` (default: the layer's class from its config, so
    new weights), called through `call_function(layer, *args, **kwargs)` if
    given (functional only), on `input_tensors` (new `keras.Input`s by
    default); `recursive` clones nested models the same way. A compiled
    model's clone is compiled as it was. Other models are cloned through
    their config.
    """
    cache = kwargs.pop("cache", None)
    if kwargs:
        raise ValueError(f"Unexpected keyword argument(s): {tuple(kwargs.keys())}")
    cache = {} if cache is None else cache
    is_functional = isinstance(model, Model) and model._graph is not None
    if isinstance(model, Sequential):
        if call_function is not None:
            raise ValueError(
                "`call_function` argument is not supported with Sequential models. "
                " In a Sequential model, layers aren't called at model-construction "
                "time (they're merely listed). Use `call_function` with Functional "
                "models only. Received model of type "
                f"'{model.__class__.__name__}', with call_function={call_function}"
            )
        wrapped = _wrap_clone_function(clone_function, None, recursive, cache)
        return _clone_sequential(model, wrapped, input_tensors)
    if is_functional:
        wrapped = _wrap_clone_function(clone_function, call_function, recursive, cache)
        return _clone_functional(model, wrapped, input_tensors, call_function)
    if clone_function or input_tensors:
        raise ValueError(
            "Arguments `clone_function` and `input_tensors` are only supported for "
            "Sequential models or Functional models. Received model of type "
            f"'{model.__class__.__name__}', with clone_function={clone_function} "
            f"and input_tensors={input_tensors}"
        )
    if call_function is not None:
        raise ValueError(
            "Argument `call_function` is only supported for Functional models. "
            f"Received model of type '{model.__class__.__name__}', with "
            f"call_function={call_function}"
        )
    return model.__class__.from_config(model.get_config())
