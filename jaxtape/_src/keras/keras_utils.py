"""`keras.utils`: array helpers, seeds, sessions, (de)serialization, a progress
bar and datasets built from arrays. Layer L5.

Each helper mirrors Keras 3's (the version tf.keras is in TF 2.21): its
defaults, its output types (NumPy arrays where Keras returns NumPy) and its
error types and texts.
"""

from __future__ import annotations

import random

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import dtypes, registry
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.initializers.initializers import INITIALIZERS
from jaxtape._src.keras import serialization
from jaxtape._src.keras.activations import ACTIVATIONS
from jaxtape._src.keras.data_adapter import (
    pack_x_y_sample_weight as pack_x_y_sample_weight,
)
from jaxtape._src.keras.data_adapter import (
    unpack_x_y_sample_weight as unpack_x_y_sample_weight,
)
from jaxtape._src.keras.keras_tensor import KerasTensor
from jaxtape._src.keras.layers.base import Layer, reset_uids
from jaxtape._src.keras.regularizers import REGULARIZERS
from jaxtape._src.losses.losses import LOSSES
from jaxtape._src.metrics.metrics import METRICS
from jaxtape._src.ops import array_ops
from jaxtape._src.optimizers.optimizers import OPTIMIZERS
from jaxtape._src.optimizers.schedules import SCHEDULES
from jaxtape._src.state import random_ops

# -- arrays --------------------------------------------------------------------


def to_categorical(x, num_classes=None):
    """Class indices to one-hot rows, class axis last (Keras's `to_categorical`).

    A trailing axis of size 1 is dropped first. Host input gives a float64
    NumPy array, as Keras; a jaxtape Tensor gives a float32 Tensor (Keras's
    `ops.one_hot` of a backend tensor).
    """
    if isinstance(x, Tensor):
        if x.ndim > 1 and x.shape[-1] == 1:
            x = array_ops.reshape(x, tuple(x.shape[:-1]))
        if num_classes is None:
            num_classes = int(np.max(np.asarray(to_value(x)))) + 1
        return array_ops.one_hot(x, num_classes)
    x = np.array(x, dtype="int64")
    input_shape = x.shape
    if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
        input_shape = tuple(input_shape[:-1])
    x = x.reshape(-1)
    if not num_classes:
        num_classes = int(np.max(x)) + 1
    categorical = np.zeros((x.shape[0], num_classes))
    categorical[np.arange(x.shape[0]), x] = 1
    return np.reshape(categorical, input_shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    """`x` divided by its `order`-norm along `axis` (zero norms left as 1), as
    Keras's `normalize`: NumPy in, NumPy out; a Tensor gives a Tensor."""
    is_tensor = isinstance(x, Tensor)
    arr = np.asarray(to_value(x)) if is_tensor else np.asarray(x)
    norm = np.atleast_1d(np.linalg.norm(arr, order, axis))
    norm[norm == 0] = 1
    out = arr / np.expand_dims(norm, axis or -1)
    return Tensor(jnp.asarray(out, arr.dtype)) if is_tensor else out


def pad_sequences(
    sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0
):
    """Pads (or truncates) a list of sequences to one length (Keras's
    `pad_sequences`): a NumPy array `(num_samples, maxlen) + sample_shape`.
    Strings need `dtype=object` (or a string dtype), as in Keras."""
    lengths, sample_shape, found = [], (), False
    for x in sequences:
        try:
            lengths.append(len(x))
            if not found and len(x):
                sample_shape, found = np.asarray(x).shape[1:], True
        except TypeError as e:
            raise ValueError(
                f"`sequences` must be a list of iterables. Found non-iterable: {x}"
            ) from e
    if maxlen is None:
        maxlen = np.max(lengths)
    is_str = np.issubdtype(dtype, np.str_) or np.issubdtype(dtype, np.bytes_)
    if isinstance(value, str) and dtype is not object and not is_str:
        raise ValueError(
            f"`dtype` {dtype} is not compatible with `value`'s type: {type(value)}\n"
            "You should set `dtype=object` for variable length strings."
        )
    out = np.full((len(sequences), maxlen) + sample_shape, value, dtype=dtype)
    for idx, s in enumerate(sequences):
        if not len(s):
            continue
        if truncating == "pre":
            trunc = s[-maxlen:]
        elif truncating == "post":
            trunc = s[:maxlen]
        else:
            raise ValueError(f'Truncating type "{truncating}" not understood')
        trunc = np.asarray(trunc, dtype=dtype)
        if trunc.shape[1:] != sample_shape:
            raise ValueError(
                f"Shape of sample {trunc.shape[1:]} of sequence at position {idx} "
                f"is different from expected shape {sample_shape}"
            )
        if padding == "post":
            out[idx, : len(trunc)] = trunc
        elif padding == "pre":
            out[idx, -len(trunc) :] = trunc
        else:
            raise ValueError(f'Padding type "{padding}" not understood')
    return out


def standardize_dtype(dtype):
    """Keras's dtype name: `'float32'`, `'int64'`, ... (None gives `'float32'`,
    `'int'` gives `'int64'`; Keras refuses `'float'`, and so does this)."""
    if dtype is None:
        return "float32"
    if not isinstance(dtype, (str, np.dtype, type, dtypes.DType)) and hasattr(
        dtype, "dtype"
    ):  # a Tensor, Variable or array
        dtype = dtype.dtype
    if isinstance(dtype, dtypes.DType):
        return dtype.name
    if dtype == "int":
        return "int64"
    if dtype == "float":
        raise ValueError(f"Invalid dtype: {dtype}")
    try:
        return dtypes.as_dtype(dtype).name
    except (TypeError, ValueError, KeyError):
        raise ValueError(f"Invalid dtype: {dtype}") from None


# -- seeds and sessions --------------------------------------------------------


def set_random_seed(seed):
    """Seeds Python's `random`, NumPy's global generator and jaxtape's global
    seed (`jaxtape.random.set_seed`), as Keras seeds `random`, NumPy and TF."""
    if not isinstance(seed, int):
        raise ValueError(
            "Expected `seed` argument to be an integer. "
            f"Received: seed={seed} (of type {type(seed)})"
        )
    random.seed(seed)
    np.random.seed(seed)
    random_ops.set_seed(seed)


def clear_session(free_memory=True):
    """Keras's `clear_session`: automatic layer and metric names start again.
    `free_memory` is accepted (JAX frees arrays when they are unreferenced)."""
    del free_memory
    reset_uids()


# -- the functional API --------------------------------------------------------


def is_keras_tensor(x):
    """Whether `x` is a symbolic tensor of the functional API (`keras.Input`)."""
    return isinstance(x, KerasTensor)


def get_source_inputs(tensor):
    """The `keras.Input` tensors that `tensor` is computed from (Keras's
    `get_source_inputs`), in the order first met, each once."""
    if not isinstance(tensor, KerasTensor):
        raise ValueError(
            "get_source_inputs: expected a KerasTensor (the output of a layer "
            f"called on `keras.Input`). Received: tensor={tensor!r}"
        )
    found, seen, stack = [], set(), [tensor]
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if t._producer is None:
            found.append(t)
        else:
            stack.extend(reversed(t._producer.dependencies()))
    return found


# -- serialization ---------------------------------------------------------------

_KINDS = (
    LOSSES,
    METRICS,
    OPTIMIZERS,
    SCHEDULES,
    INITIALIZERS,
    REGULARIZERS,
    ACTIVATIONS,
)


def serialize_keras_object(obj):
    """Keras 3's `serialize_keras_object`: a dict `{'module', 'class_name',
    'config', 'registered_name'}` for an object with `get_config` or a
    function; plain Python values, lists and dicts as themselves."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, bytes):
        return {"class_name": "__bytes__", "config": {"value": obj.decode("utf-8")}}
    if isinstance(obj, (list, tuple)):
        return [serialize_keras_object(v) for v in obj]
    if isinstance(obj, dict):
        return {k: serialize_keras_object(v) for k, v in obj.items()}
    if isinstance(obj, (np.ndarray, Tensor)):
        arr = np.asarray(to_value(obj)) if isinstance(obj, Tensor) else obj
        return {
            "class_name": "__numpy__" if isinstance(obj, np.ndarray) else "__tensor__",
            "config": {"value": arr.tolist(), "dtype": standardize_dtype(arr.dtype)},
        }
    if isinstance(obj, Layer):
        return serialization.serialize_layer(obj)
    for kind in _KINDS:
        if kind.is_builtin(obj) or kind.is_builtin(type(obj)):
            return kind.serialize_object(obj)
    if callable(obj) and not hasattr(obj, "get_config"):
        name = registry.get_registered_name(obj)
        return {
            "module": getattr(obj, "__module__", "builtins"),
            "class_name": "function",
            "config": name,
            "registered_name": name,
        }
    if not hasattr(obj, "get_config"):
        raise TypeError(
            f"Cannot serialize {obj!r}: it has no `get_config()`. Give its class "
            "a `get_config` method (and register it with "
            "`keras.saving.register_keras_serializable()`)."
        )
    return LOSSES.serialize_object(obj)  # a user class: its own module and name


_MODULE_KINDS = {kind.module: kind for kind in _KINDS}


def deserialize_keras_object(config, custom_objects=None, safe_mode=True, **kwargs):
    """Keras 3's `deserialize_keras_object`: the object a config dict names
    (built-ins by their module, user classes by registered name or
    `custom_objects`); plain values, lists and dicts come back as themselves."""
    del safe_mode  # no lambdas are deserialized
    if kwargs:
        raise NotImplementedError(
            f"deserialize_keras_object: arguments {sorted(kwargs)} (Keras's "
            "legacy `module_objects`/`printable_module_name`) are not supported."
        )
    if config is None or isinstance(config, (bool, int, float)):
        return config
    if isinstance(config, str):
        found = registry.get_registered_object(config, custom_objects)
        return config if found is None else found
    if isinstance(config, (list, tuple)):
        return [deserialize_keras_object(v, custom_objects) for v in config]
    if not isinstance(config, dict):
        raise TypeError(f"Could not parse config: {config}")
    if "class_name" not in config or "config" not in config:
        return {
            k: deserialize_keras_object(v, custom_objects) for k, v in config.items()
        }
    class_name, inner = config["class_name"], config["config"]
    if class_name == "__bytes__":
        return inner["value"].encode("utf-8")
    if class_name in ("__numpy__", "__tensor__"):
        arr = np.array(inner["value"], dtype=inner["dtype"])
        return arr if class_name == "__numpy__" else Tensor(jnp.asarray(arr))
    module = config.get("module") or ""
    if module.startswith(("keras.layers", "keras.models", "keras.src.models")):
        return serialization.deserialize_layer(config, custom_objects)
    kind = _MODULE_KINDS.get(module)
    if kind is not None:
        return kind.deserialize(config, custom_objects)
    found = None
    for name in (config.get("registered_name"), class_name):
        found = found or registry.get_registered_object(name, custom_objects)
    if found is None and class_name == "function":  # a built-in function by name
        found = registry.get_registered_object(inner, custom_objects)
        for other in _KINDS:
            found = found or other.builtin(inner)
    if found is None:
        found = serialization.LAYERS.resolve(class_name, None, custom_objects)
    if found is None:
        raise LOSSES.not_found(
            "function" if class_name == "function" else "class", class_name, config
        )
    if class_name == "function" or not isinstance(found, type):
        return found
    if issubclass(found, Layer):
        return serialization.deserialize_layer(config, custom_objects)
    with registry.CustomObjectScope(custom_objects):
        return found.from_config(dict(inner or {}))
