"""`keras.Model` (subclassed and functional) and `keras.Sequential`. Layer L5.

Models take part in saving as every layer does (`Layer._saveable_children`,
`_serialize`, `get_config`/`from_config`): `keras/saving.py` finds
`Sequential` and `Functional` through `serialization.LAYERS`, not by import.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from jaxtape._src.keras import functional, mixed_precision, saving, serialization
from jaxtape._src.keras.keras_tensor import (
    KerasTensor,
    Node,
    flatten,
    map_structure,
    shape_of,
)
from jaxtape._src.keras.layers.base import Layer, _saving_order
from jaxtape._src.keras.layers.core import InputLayer
from jaxtape._src.keras.training import TrainingMixin


class Model(TrainingMixin, Layer):
    """A layer with training methods (`compile`, `fit`, ...).

    Subclass it and define `call` (seed 002's `MyModel`), or build a
    functional model with `Model(inputs, outputs)`.
    """

    def __init__(self, *args, **kwargs):
        """`Model(inputs, outputs, name=None, trainable=True)` builds a
        functional model; a subclass calls `super().__init__(name=...)`. Other
        keyword arguments are the Layer's (`dtype`, `autocast`); unknown ones
        raise ValueError, as in Keras 3."""
        inputs = kwargs.pop("inputs", None)
        outputs = kwargs.pop("outputs", None)
        if len(args) > 2:
            raise TypeError(
                f"Model() takes at most 2 positional arguments (inputs, outputs); "
                f"got {len(args)}."
            )
        if len(args) >= 2:
            inputs, outputs = args[0], args[1]
        elif len(args) == 1:
            inputs = args[0]
        super().__init__(**kwargs)
        TrainingMixin._init_training(self)
        # A functional model's (inputs, outputs, nodes in topological order).
        self._graph: tuple[Any, Any, list[Node]] | None = None
        if inputs is not None or outputs is not None:
            self._init_graph(inputs, outputs)

    # -- functional models -----------------------------------------------------------
    def _init_graph(self, inputs, outputs) -> None:
        if inputs is None or outputs is None:
            raise ValueError("A functional Model needs both `inputs` and `outputs`.")
        flat_in = flatten(inputs)
        for t in flat_in:
            if not isinstance(t, KerasTensor) or t._producer is not None:
                raise ValueError(
                    "Model inputs must be the tensors returned by `keras.Input`; got "
                    f"{t!r}."
                )
        order: list = []  # Nodes in topological order
        seen: set = set()

        def visit(t):
            node = t._producer
            if node is None or id(node) in seen:
                return
            seen.add(id(node))
            for dep in node.dependencies():
                visit(dep)
            order.append(node)

        for t in flatten(outputs):
            visit(t)
        self._graph = (inputs, outputs, order)
        self._functional_layers = []
        for node in order:
            if all(
                node.layer is not seen_layer for seen_layer in self._functional_layers
            ):
                self._functional_layers.append(node.layer)
        self._tracked["_functional_layers"] = self._functional_layers
        self._input_layers = [getattr(t, "_input_layer", None) for t in flat_in]
        self.built = True

    def _run_graph(self, graph, inputs, training=None):
        graph_inputs, graph_outputs, order = graph
        values: dict[int, object] = {}
        expected = flatten(graph_inputs)
        if isinstance(inputs, dict):  # matched by key (or input name), as Keras
            keys = (
                list(graph_inputs)
                if isinstance(graph_inputs, dict)
                else [getattr(t, "name", None) for t in expected]
            )
            if all(k in inputs for k in keys):
                given = flatten([inputs[k] for k in keys])
                if isinstance(graph_inputs, dict):
                    expected = flatten([graph_inputs[k] for k in keys])
            else:
                given = flatten(list(inputs.values()))
        else:
            given = flatten(inputs)
        if len(given) != len(expected):
            raise ValueError(
                f"Model {self.name!r} expects {len(expected)} input(s) but received "
                f"{len(given)}."
            )
        for t, v in zip(expected, given):
            values[id(t)] = v

        def value(t):
            return values[id(t)] if isinstance(t, KerasTensor) else t

        for node in order:
            kwargs = {k: map_structure(value, v) for k, v in node.kwargs.items()}
            if node.layer._call_takes_training and (
                training is not None or "training" not in kwargs
            ):
                # Keras: the model's `training` wins over one given at the
                # layer's symbolic call (a recorded `training=True`)
                kwargs["training"] = training
            out = node.layer(
                map_structure(value, node.inputs),
                *map_structure(value, node.args),
                **kwargs,
            )
            for sym, real in zip(flatten(node.outputs), flatten(out)):
                values[id(sym)] = real
        return map_structure(value, graph_outputs)

    def call(self, inputs, training=None):
        graph = self._graph
        if graph is None:
            raise NotImplementedError(
                f"Model {self.name!r} has no `call` method: subclass keras.Model and "
                "define `call(self, inputs)`, or pass `inputs` and `outputs`."
            )
        return self._run_graph(graph, inputs, training)

    def _maybe_build(self, inputs) -> None:
        # The first call's input shapes (Keras's `_build_shapes_dict`): the
        # input signature `export` infers for a subclassed model.
        if "_first_call_shapes" not in self.__dict__:
            self.__dict__["_first_call_shapes"] = map_structure(shape_of, inputs)
        super()._maybe_build(inputs)

    def export(
        self,
        filepath,
        format="tf_saved_model",  # noqa: A002 - Keras's argument name
        verbose=None,
        input_signature=None,
        **kwargs,
    ) -> None:
        """Exports the forward pass for inference (Keras 3's `Model.export`):
        a `jaxtape.saved_model` export whose `serve` endpoint (and
        `serving_default` signature) runs `model(x)` for the input signature,
        reloaded without the model's code by `jaxtape.saved_model.load(path)
        .serve(x)` or `keras.layers.TFSMLayer(path)`.

        Args:
          filepath: the export directory (replaced atomically).
          format: `"tf_saved_model"`; Keras's other formats raise Keras's
            errors for their arguments, then NotImplementedError.
          verbose: print the endpoints' signatures (Keras's text); None: True.
          input_signature: the specs of the arguments (InputSpecs,
            TensorSpecs, KerasTensors or tensors); default: the model's
            inputs with the batch size None (a subclassed model: its first
            call's shapes).

        Differences from Keras: see `keras.export.ExportArchive`.
        """
        from jaxtape._src.keras import export  # cycle: models -> export -> models

        export.export_model(self, filepath, format, verbose, input_signature, **kwargs)

    def _mixed_input_dtype(self):
        """A functional model leaves its inputs to its layers under a mixed
        policy (Keras converts them to its `Input`s' dtype, not float16)."""
        if self._graph is not None:
            return None
        return super()._mixed_input_dtype()

    # -- saving ------------------------------------------------------------------
    def save_weights(self, filepath, overwrite=True, max_shard_size=None) -> None:
        """Writes the weights (and the optimizer's state, if compiled) in Keras
        3's `.weights.h5` layout, atomically.

        `overwrite=False` asks before replacing an existing file, with Keras's
        prompt (`[WARNING] <path> already exists - overwrite? [y/n]`).
        `max_shard_size` (sharded `.weights.json` files) raises
        NotImplementedError.
        """
        if max_shard_size is not None:
            raise NotImplementedError(
                "save_weights(max_shard_size=...) (sharded weights files) is not "
                "supported by jaxtape; save to one `.weights.h5` file."
            )
        if not overwrite and not _may_overwrite(filepath):
            return
        saving.save_weights(self, filepath)

    def load_weights(self, filepath, skip_mismatch=False, **kwargs) -> None:
        """Reads weights saved by jaxtape or tf.keras (`.weights.h5` or `.keras`).

        With `skip_mismatch=True`, layers whose saved weights do not match
        (another count or shape) keep their values and a warning lists them,
        as Keras does; otherwise nothing is assigned and a ValueError names
        the first mismatch. An optimizer built on the model's variables gets
        its saved state too. Keras's `by_name` (legacy `.h5` only) raises its
        ValueError; `objects_to_skip` raises NotImplementedError.
        """
        by_name = kwargs.pop("by_name", None)
        objects_to_skip = kwargs.pop("objects_to_skip", None)
        if kwargs:
            raise ValueError(f"Invalid keyword arguments: {kwargs}")
        if by_name is not None:
            raise ValueError(
                "`by_name` only supports loading legacy '.h5' or '.hdf5' files, "
                f"which jaxtape does not read. Received: {filepath}"
            )
        if objects_to_skip is not None:
            raise NotImplementedError(
                "load_weights(objects_to_skip=...) is not supported by jaxtape; "
                "load all weights, then restore the values you want to keep."
            )
        saving.load_weights(self, filepath, skip_mismatch=bool(skip_mismatch))

    def save(self, filepath, overwrite=True, zipped=None, **kwargs) -> None:
        """Writes Keras 3's `.keras` zip: config.json (with the compile
        configuration) and model.weights.h5 (with the optimizer's state).

        `overwrite=False` asks before replacing an existing file, as Keras.
        `include_optimizer` is accepted and unused, as Keras 3 ignores it for
        `.keras` files (it always writes the optimizer). `zipped=False`
        (an unzipped directory) raises NotImplementedError; `save_format`
        is Keras's deprecated argument (a `.keras` path only).
        """
        kwargs.pop("include_optimizer", True)  # Keras 3: only for legacy .h5
        save_format = kwargs.pop("save_format", False)
        if kwargs:
            raise ValueError(
                f"The following argument(s) are not supported: {list(kwargs)}"
            )
        if save_format and not str(filepath).endswith(".keras"):
            raise ValueError(
                "The `save_format` argument is deprecated in Keras 3. Please remove "
                "this argument and pass a file path with a `.keras` extension. "
                f"Received: save_format={save_format}"
            )
        if zipped is False:
            raise NotImplementedError(
                "Model.save(zipped=False) (an unzipped directory) is not supported "
                "by jaxtape; save a `.keras` file."
            )
        if not overwrite and not _may_overwrite(filepath):
            return
        saving.save_model(self, filepath)

    # -- saving protocol (see Layer) ---------------------------------------------
    # The training API's state and the graph's bookkeeping: not walked for
    # `.weights.h5` (a model's layers are walked as `layers`).
    _NOT_SAVED = Layer._NOT_SAVED | {
        "_stack",
        "_functional_layers",
        "_graph",
        "_input_layers",
        "optimizer",
        "compiled_loss",
        "compiled_metrics",
        "loss_tracker",
        "history",
    }

    def _saveable_children(self) -> list:
        children = super()._saveable_children()
        if self._graph is not None:  # Keras walks a functional model's layers first
            return [("layers", list(self.layers)), *children]
        # A subclassed model: Keras walks its `layers` property among its attributes.
        return sorted([*children, ("layers", list(self.layers))], key=_saving_order)

    def _serialize(self) -> dict:
        if self._graph is None:
            raise NotImplementedError(
                "Subclassed models cannot be saved to .keras files by jaxtape yet; "
                "save their weights with `save_weights` (.weights.h5) and rebuild "
                "them in code."
            )
        return {
            "module": "keras.src.models.functional",
            "class_name": "Functional",
            "config": self.get_config(),
            "registered_name": "Functional",
        }

    def get_config(self) -> dict:
        """A functional model's graph (Keras 3's `Functional` config); a
        subclassed model's Layer config."""
        if self._graph is None:
            return super().get_config()
        return functional.get_config(self)

    @classmethod
    def from_config(cls, config: dict):
        if "input_layers" in config and "layers" in config:
            return functional.from_config(cls, config)
        return super().from_config(config)

    @property
    def layers(self) -> list:
        if self._graph is not None:  # Keras 3: the InputLayers first
            inputs = []
            for layer in self._input_layers:
                if layer is not None and all(layer is not x for x in inputs):
                    inputs.append(layer)
            return [*inputs, *self._functional_layers]
        return super().layers

    def get_layer(self, name=None, index=None):
        """A layer by its name or its index in `layers` (Keras's `get_layer`)."""
        if index is not None and name is not None:
            raise ValueError(
                "Provide only a layer name or a layer index. Received: "
                f"index={index}, name={name}."
            )
        layers = self.layers
        if index is not None:
            if len(layers) <= index:
                raise ValueError(
                    f"Was asked to retrieve layer at index {index} but model only "
                    f"has {len(layers)} layers."
                )
            return layers[index]
        if name is not None:
            for layer in layers:
                if layer.name == name:
                    return layer
            raise ValueError(
                f"No such layer: {name}. Existing layers are: "
                f"{[layer.name for layer in layers]}."
            )
        raise ValueError("Provide either a layer name or layer index at `get_layer`.")

    def summary(
        self,
        line_length=None,
        positions=None,
        print_fn=None,
        expand_nested=False,
        show_trainable=False,
        layer_range=None,
    ) -> None:
        """Prints a table of layers, output shapes and parameter counts (Keras's).

        `line_length` widens the table to that many characters; `print_fn`
        receives each line. Keras's `positions`, `expand_nested`,
        `show_trainable` and `layer_range` raise NotImplementedError when set.
        """
        for arg, value, default in (
            ("positions", positions, None),
            ("expand_nested", expand_nested, False),
            ("show_trainable", show_trainable, False),
            ("layer_range", layer_range, None),
        ):
            if value != default:
                raise NotImplementedError(
                    f"Model.summary({arg}=...) is not supported by jaxtape; call "
                    "summary() without it."
                )
        print_fn = print_fn or print
        rows = []
        for layer in self.layers:
            shape = layer._last_output_shape
            shape_text = (
                "?"
                if shape is None
                else str(tuple(shape) if isinstance(shape, tuple) else shape)
            )
            params = layer.count_params() if layer.built else 0
            rows.append((f"{layer.name} ({type(layer).__name__})", shape_text, params))
        width = [
            max(len("Layer (type)"), *(len(r[0]) for r in rows)) + 2,
            max(len("Output Shape"), *(len(r[1]) for r in rows)) + 2,
            12,
        ]
        if line_length is not None and line_length > sum(width):
            width[0] += int(line_length) - sum(width)
        total = sum(int(np.prod(v.shape, dtype=np.int64)) for v in self.weights)
        trainable = sum(
            int(np.prod(v.shape, dtype=np.int64)) for v in self.trainable_weights
        )
        line = "─" * sum(width)
        print_fn(f'Model: "{self.name}"')
        print_fn(line)
        print_fn(
            "Layer (type)".ljust(width[0])
            + "Output Shape".ljust(width[1])
            + "Param #".rjust(width[2])
        )
        print_fn("═" * sum(width))
        for name, shape, params in rows:
            print_fn(
                name.ljust(width[0])
                + shape.ljust(width[1])
                + f"{params:,}".rjust(width[2])
            )
        print_fn(line)
        print_fn(f" Total params: {total:,}")
        print_fn(f" Trainable params: {trainable:,}")
        print_fn(f" Non-trainable params: {total - trainable:,}")


class Sequential(Model):
    """A linear stack of layers (`keras.Sequential`)."""

    def __init__(self, layers=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self._stack: list = []
        self._input_shape = None
        for layer in layers or ():
            self.add(layer)

    def add(self, layer) -> None:
        if isinstance(layer, KerasTensor):  # a `keras.Input`: its InputLayer
            layer = getattr(layer, "_input_layer", layer)
        if not isinstance(layer, Layer):
            raise ValueError(
                "Only instances of `keras.Layer` can be added to a Sequential model. "
                f"Received: {layer!r} (of type {type(layer)}). Add a layer, e.g. "
                "`model.add(keras.layers.Dense(8))`."
            )
        if isinstance(layer, InputLayer):
            self._input_shape = layer._batch_input_shape
            self._input_tensor = layer.output  # (`export`'s input signature)
            return
        if not self._stack and layer._batch_input_shape is not None:
            self._input_shape = layer._batch_input_shape
        self._stack.append(layer)
        self._tracked["_stack"] = self._stack
        if self._input_shape is not None:
            self._build_symbolically()

    def _mixed_input_dtype(self):
        """With an input shape, as a functional model (Keras's `input_dtype`
        is its `InputLayer`'s then)."""
        if self._input_shape is not None:
            return None
        return super()._mixed_input_dtype()

    def pop(self):
        layer = self._stack.pop()
        return layer

    def _build_symbolically(self) -> None:
        x = KerasTensor(self._input_shape, self._dtype.name)
        with self._scope_for_weights():  # weights named `sequential/dense/kernel`
            for layer in self._stack:
                x = layer(x)
        self.built = True

    def build(self, input_shape=None):
        if input_shape is not None:
            self._input_shape = tuple(input_shape)
        if self._input_shape is None:
            raise ValueError(
                "Sequential.build needs an input shape: add a keras.Input first, pass "
                "`input_shape` to the first layer, or call the model on data."
            )
        self._build_symbolically()

    @property
    def layers(self) -> list:
        return list(self._stack)

    def call(self, inputs, training=None):
        x = inputs
        for layer in self._stack:
            x = layer(x, training=training) if layer._call_takes_training else layer(x)
        return x

    # -- saving protocol (see Layer) ---------------------------------------------
    def _saveable_children(self) -> list:
        return [("layers", list(self.layers)), *Layer._saveable_children(self)]

    def _serialize(self) -> dict:
        out = {
            "module": "keras",
            "class_name": "Sequential",
            "config": self.get_config(),
            "registered_name": None,
        }
        if self._input_shape is not None:
            out["build_config"] = {"input_shape": list(self._input_shape)}
        return out

    def get_config(self) -> dict:
        """Keras 3's config: the layers' entries, an `InputLayer` first when the
        input shape is known."""
        layers = []
        if self._input_shape is not None:
            layers.append(
                {
                    "module": "keras.layers",
                    "class_name": "InputLayer",
                    "config": {
                        "batch_shape": list(self._input_shape),
                        "dtype": self.dtype,
                        "name": "input_layer",
                    },
                    "registered_name": None,
                }
            )
        layers += [layer._serialize() for layer in self.layers]
        return {
            "name": self.name,
            "trainable": self.trainable,
            "dtype": mixed_precision.serialize(self.dtype_policy),
            "layers": layers,
        }

    @classmethod
    def from_config(cls, config: dict):
        model = cls(name=config.get("name"), dtype=config.get("dtype"))
        for entry in config["layers"]:
            if entry["class_name"] == "InputLayer":
                c = entry["config"]
                shape = c.get("batch_shape") or c.get("batch_input_shape")
                model._input_shape = tuple(shape)
                continue
            model.add(serialization.deserialize_layer(entry))
        return model


def _may_overwrite(filepath) -> bool:
    """Keras's prompt before replacing an existing file (`overwrite=False`)."""
    if not os.path.exists(os.fspath(filepath)):
        return True
    answer = input(f"[WARNING] {filepath} already exists - overwrite? [y/n]")
    answer = answer.strip().lower()
    while answer not in ("y", "n"):
        answer = input('Enter "y" (overwrite) or "n" (cancel).').strip().lower()
    if answer == "n":
        return False
    print("[TIP] Next time specify overwrite=True!")
    return True


serialization.LAYERS.add(Sequential)
serialization.LAYERS.add(Model, "Functional")
