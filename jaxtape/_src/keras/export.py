"""Keras 3's `Model.export`: formats, and the input signature it infers. Layer L5.

`export_model` checks the format as Keras's `Model.export` does and hands
`"tf_saved_model"` to the exporter that `saved_model/keras_export.py` (layer
6, above keras) installs with `install_saved_model_exporter`; the other
formats raise Keras's errors where Keras checks something first, then
NotImplementedError. `get_input_signature` and `make_tensor_spec` are
Keras's `export_utils` rules for the specs of the `serve` endpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jaxtape._src.core import dtypes
from jaxtape._src.core.tensor import Tensor, TensorSpec
from jaxtape._src.keras.keras_tensor import KerasTensor, map_structure
from jaxtape._src.keras.layers.input_spec import InputSpec
from jaxtape._src.keras.models import Model, Sequential
from jaxtape._src.state.variable import Variable

DEFAULT_ENDPOINT_NAME = "serve"  # Keras's name of `Model.export`'s endpoint
FORMATS = ("tf_saved_model", "onnx", "openvino", "litert", "torch")

# `export_saved_model(model, filepath, verbose, input_signature, **kwargs)`,
# installed by jaxtape/_src/saved_model/keras_export.py.
_saved_model_exporter: list[Callable[..., None]] = []


def install_saved_model_exporter(fn: Callable[..., None]) -> None:
    """Installs the `"tf_saved_model"` exporter (saved_model's, one layer up)."""
    _saved_model_exporter[:] = [fn]


def export_model(model, filepath, format, verbose, input_signature, **kwargs) -> None:  # noqa: A002
    """`Model.export`: Keras's format checks, then the format's exporter."""
    if format not in FORMATS:
        raise ValueError(
            f"Unrecognized format={format}. Supported formats are: {list(FORMATS)}."
        )
    if format == "torch":  # (Keras's checks and texts, TensorFlow backend)
        raise ValueError("Torch export requires PyTorch backend.")
    path = str(filepath)
    if format == "openvino" and not path.endswith(".xml"):
        raise ValueError(
            "The OpenVINO export requires the filepath to end with '.xml'. "
            f"Got: filepath={path}"
        )
    if format == "litert" and not path.endswith(".tflite"):
        raise ValueError(
            "The LiteRT export requires the filepath to end with "
            f"'.tflite'. Got: {path}"
        )
    if format != "tf_saved_model":
        raise NotImplementedError(
            f"Model.export(format={format!r}) is not supported by jaxtape: it "
            "exports `jax.export` programs (format='tf_saved_model', reloaded with "
            "jaxtape.saved_model.load or keras.layers.TFSMLayer), not ONNX, "
            "OpenVINO or LiteRT files."
        )
    if not _saved_model_exporter:
        raise RuntimeError(
            "Model.export: the SavedModel exporter is not installed; `import "
            "jaxtape` (it installs jaxtape.keras.export) before exporting."
        )
    _saved_model_exporter[0](
        model, filepath, verbose, input_signature=input_signature, **kwargs
    )


# -- the input signature (Keras's export_utils) ----------------------------------------
def get_input_signature(model) -> list:
    """Keras's default signature of `model`: a functional model's inputs
    (one argument holding their structure), a Sequential model's input, or
    the shapes of a subclassed model's first call; the batch size `None`."""
    if not isinstance(model, Model):
        raise TypeError(
            "The model must be a `keras.Model`. "
            f"Received: model={model} of the type {type(model)}"
        )
    if not model.built:
        raise ValueError(
            "The model provided has not yet been built. It must be built before export."
        )
    if isinstance(model, Sequential):
        if "_input_tensor" in model.__dict__:  # (its `keras.Input`)
            return [make_input_spec(model._input_tensor)]
        if model._input_shape is None:
            raise ValueError(
                "The model provided has never called. "
                "It must be called at least once before export."
            )
        return [_input_spec(model._input_shape, model.input_dtype)]
    if model._graph is not None:
        return [map_structure(make_input_spec, model._graph[0])]
    shapes = model.__dict__.get("_first_call_shapes")
    if shapes is None:
        raise ValueError(
            "The model provided has never called. "
            "It must be called at least once before export."
        )
    return [_specs_of_shapes(shapes, model.input_dtype)]


def _specs_of_shapes(structure, dtype):
    """Keras's `_infer_input_signature_from_model`: a tuple or list of
    sizes is a shape (an InputSpec of `dtype`, batch size None); other
    tuples, lists and dicts are structures of them."""
    if isinstance(structure, dict):
        return {k: _specs_of_shapes(v, dtype) for k, v in structure.items()}
    if not any(isinstance(d, (list, tuple, dict)) for d in structure):
        # (a size that was symbolic in a traced first call: None)
        return _input_spec(
            [d if isinstance(d, int) else None for d in structure], dtype
        )
    return type(structure)(_specs_of_shapes(v, dtype) for v in structure)


def _input_spec(shape, dtype, name=None) -> InputSpec:
    shape = tuple(shape)
    return InputSpec(dtype=dtype, shape=(None, *shape[1:]), name=name)


def make_input_spec(x) -> InputSpec:
    """Keras's `make_input_spec`: an InputSpec (with shape and dtype) as
    given; a KerasTensor or tensor as a spec with batch size None."""
    if isinstance(x, InputSpec):
        if x.shape is None or x.dtype is None:
            raise ValueError(
                f"The `shape` and `dtype` must be provided. Received: x={x}"
            )
        return x
    if isinstance(x, KerasTensor):
        return _input_spec(x.shape.as_list(), x.dtype.name, x.name)
    if isinstance(x, (Tensor, Variable)):  # (not NumPy arrays, as Keras on TF)
        return _input_spec(x.shape.as_list(), x.dtype.name)
    raise TypeError(
        f"Unsupported x={x} of the type ({type(x)}). Supported types are: "
        "`keras.InputSpec`, `keras.KerasTensor` and backend tensor."
    )


def make_tensor_spec(x: Any) -> TensorSpec:
    """Keras's `make_tf_tensor_spec`: a TensorSpec as given, else the
    TensorSpec of `make_input_spec(x)` (its name kept)."""
    if type(x) is TensorSpec:
        return x
    spec = make_input_spec(x)
    return TensorSpec(spec.shape, dtypes.as_dtype(str(spec.dtype)), name=spec.name)
