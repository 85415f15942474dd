"""The config of a functional model (Keras 3's `Functional`). Layer L5.

`get_config` writes Keras 3's form, so `.keras` files move both ways between
jaxtape and tf.keras: the layers in call order, each with the nodes that call
it (`inbound_nodes`, their arguments as `__keras_tensor__` references
`[layer name, node index, tensor index]`), and the model's input and output
ends. `from_config` replays the nodes on fresh `keras.Input`s. The model class
itself (`keras/models.py`) is passed in, so this module imports no model.
"""

from __future__ import annotations

from jaxtape._src.keras import serialization
from jaxtape._src.keras.keras_tensor import KerasTensor, flatten
from jaxtape._src.keras.layers.core import Input, KerasOperation


def _history(t) -> list:
    """Keras's `keras_history` of a symbolic tensor: who made it, where."""
    node = t._producer
    if node is None:
        return [t._input_layer.name, 0, 0]
    flat = flatten(node.outputs)
    return [node.layer.name, node.index, next(i for i, o in enumerate(flat) if o is t)]


def _serialize_arg(x):
    if isinstance(x, KerasTensor):
        return {
            "class_name": "__keras_tensor__",
            "config": {
                "shape": list(x.shape),
                "dtype": x.dtype.name,
                "keras_history": _history(x),
            },
        }
    if isinstance(x, (list, tuple)):
        return [_serialize_arg(v) for v in x]
    return x


def get_config(model) -> dict:
    """Keras 3's config of the functional `model` (its `_graph`)."""
    inputs, outputs, order = model._graph
    layers = []
    for t in flatten(inputs):
        layer = t._input_layer
        layers.append(
            {
                "module": "keras.layers",
                "class_name": "InputLayer",
                "config": layer.get_config(),
                "registered_name": None,
                "name": layer.name,
                "inbound_nodes": [],
            }
        )
    by_layer: dict = {}
    for node in order:
        by_layer.setdefault(id(node.layer), (node.layer, []))[1].append(node)
    for layer, nodes in by_layer.values():
        entry = layer._serialize()
        entry["name"] = layer.name
        entry["inbound_nodes"] = [
            {
                "args": [
                    _serialize_arg(n.inputs),
                    *[_serialize_arg(a) for a in n.args],
                ],
                "kwargs": {k: _serialize_arg(v) for k, v in n.kwargs.items()},
            }
            for n in nodes
        ]
        layers.append(entry)

    def ends(structure):
        flat = [_history(t) for t in flatten(structure)]
        return flat[0] if len(flat) == 1 else flat

    return {
        "name": model.name,
        "trainable": model.trainable,
        "layers": layers,
        "input_layers": ends(inputs),
        "output_layers": ends(outputs),
    }


def from_config(model_cls, cfg: dict):
    """A `model_cls(inputs, outputs)` rebuilt from `get_config`'s dict (or
    tf.keras's); custom layers resolve through the registry's scope."""
    produced: dict = {}  # (layer name, node index) -> flat output tensors

    def resolve(x):
        if isinstance(x, dict) and x.get("class_name") == "__keras_tensor__":
            name, node_index, tensor_index = x["config"]["keras_history"]
            return produced[(name, node_index)][tensor_index]
        if isinstance(x, list):
            return [resolve(v) for v in x]
        return x

    for entry in cfg["layers"]:
        name = entry.get("name") or entry["config"].get("name")
        if entry["class_name"] == "InputLayer":
            c = entry["config"]
            shape = c.get("batch_shape") or c.get("batch_input_shape")
            dtype = c.get("dtype")
            if isinstance(dtype, dict):
                dtype = dtype.get("config", {}).get("name")
            produced[(name, 0)] = [
                Input(shape=shape[1:], batch_size=shape[0], dtype=dtype, name=name)
            ]
            continue
        if str(entry.get("module", "")).startswith("keras.src.ops."):
            layer = KerasOperation.from_entry(entry)  # (Keras 3 records ops too)
        else:
            layer = serialization.deserialize_layer(entry)
        for i, node in enumerate(entry.get("inbound_nodes", [])):
            args = [resolve(a) for a in node.get("args", [])]
            kwargs = {k: resolve(v) for k, v in node.get("kwargs", {}).items()}
            out = layer(*args, **kwargs)
            produced[(name, i)] = flatten(out)

    def ends(spec):
        if spec and isinstance(spec[0], list):
            return [produced[(n, i)][t] for n, i, t in spec]
        n, i, t = spec
        return produced[(n, i)][t]

    return model_cls(
        ends(cfg["input_layers"]), ends(cfg["output_layers"]), name=cfg.get("name")
    )
