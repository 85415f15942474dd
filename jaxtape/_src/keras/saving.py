"""Keras 3's file formats with h5py: `.weights.h5` and the `.keras` zip. Layer L5.

The weights file is laid out as Keras 3's `saving_lib` lays it out, so files
move both ways between tf.keras and jaxtape: each layer's own variables
(trainable first, then non-trainable) under `<path>/vars/<i>`, where the path
follows the object tree: `layers/<layer name>` for Sequential and functional
models, then attribute names in sorted order (private ones last; a subclassed
model's `layers` property among them, as Keras walks `dir(model)`), and list
items named by their snake-cased class (`dense`, `dense_1`, ...). A compiled
model's optimizer state goes under `optimizer/vars/<i>` in Keras 3's order
(`Optimizer.save_own_variables`), and `.keras` files carry the compile
configuration, so `load_model(compile=True)` resumes training as Keras does.
Writes go to a temporary file in the
same directory, then rename, so an interrupted save never leaves a torn file
(the next save to the same path deletes what a killed one left; see
`checkpoint/storage.py`). Unreadable files raise TF's exception types
(`OSError` for HDF5, `zipfile.BadZipFile` / `ValueError` for `.keras`) with
the path and what to do.
"""

from __future__ import annotations

import base64
import builtins
import datetime
import errno
import io
import json
import marshal
import os
import types
import typing
import warnings
import zipfile
import zlib

import h5py
import numpy as np

from jaxtape._src.checkpoint import storage
from jaxtape._src.keras import config as keras_config
from jaxtape._src.keras import serialization
from jaxtape._src.keras.layers.base import Layer, keras_snake
from jaxtape._src.state import graph


def _unique(base: str, used: dict) -> str:
    n = used.get(base, 0)
    used[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


def _saving_children(obj) -> list:
    """Keras's `.weights.h5` view of an object for `graph.walk`: a layer's
    saveable attributes (`Layer._saveable_children`), a container's layers
    named by their snake-cased class (`dense`, `dense_1`) and its nested
    containers `container`, `container_1`, ... (Keras's `saving_lib`)."""
    if isinstance(obj, Layer):
        return obj._saveable_children()
    if not isinstance(obj, (list, tuple, dict)):
        return []
    used: dict = {}
    out = []
    for item in obj.values() if isinstance(obj, dict) else obj:
        if isinstance(item, Layer):
            out.append((_unique(keras_snake(type(item).__name__), used), item))
        elif isinstance(item, (list, tuple, dict)):
            out.append((_unique("container", used), item))
    return out


def _saved_layers(model: Layer) -> list:
    """`(path, layer)` for every layer of `model` in Keras's weights-file order
    (depth first; the model itself at `''`)."""
    walk = graph.walk(model, _saving_children, "depth")
    return [("", model)] + [
        ("/".join(path), obj) for path, obj in walk if isinstance(obj, Layer)
    ]


def _vars_group(path: str) -> str:
    return f"{path}/vars" if path else "vars"


def _write_weights_h5(model: Layer, file_obj) -> None:
    with h5py.File(file_obj, "w") as f:
        for path, layer in _saved_layers(model):
            group = f.require_group(_vars_group(path))
            group.attrs["name"] = layer.name
            layer.save_own_variables(group)
        optimizer = getattr(model, "optimizer", None)
        if optimizer is not None and hasattr(optimizer, "save_own_variables"):
            optimizer.save_own_variables(f.require_group("optimizer/vars"))


def _open_h5(file_obj, source: str):
    """The HDF5 file `file_obj`; an unreadable one is TF's `OSError`, with a fix."""
    try:
        return h5py.File(file_obj, "r")
    except OSError as e:
        message = (
            f"Cannot read weights from {source}: it is not a readable HDF5 file "
            f"(truncated or corrupt? {e}). Save the weights again, or load an "
            "earlier file"
        )
        if e.errno:  # a missing file or a directory: FileNotFoundError, ...
            raise OSError(e.errno, message, source) from None
        raise OSError(message) from None


def _read_weights_h5(
    model: Layer, file_obj, source: str, skip_mismatch: bool = False
) -> None:
    """Assigns the file's weights once all of them match; with `skip_mismatch`,
    the layers that do not match are left as they are and named in a
    warning (Keras's), and the others are assigned."""
    f = _open_h5(file_obj, source)
    if "layer_names" in f.attrs or "model_weights" in f:
        f.close()
        raise NotImplementedError(
            f"{source} is in Keras 2's legacy HDF5 layout, which jaxtape does not "
            "read. Load it with tf.keras and save it again with "
            "`model.save_weights('name.weights.h5')` (Keras 3's layout)."
        )
    staged, skipped = [], []  # (layer, its values as `load_own_variables` takes)
    with f:

        def check(path, layer) -> dict:
            variables = layer._own_weights()
            if not variables:
                return {}
            key = _vars_group(path)
            if key not in f:
                raise ValueError(
                    f"{source} does not match model {model.name!r}: it has no weights "
                    f"for layer {layer.name!r} (expected group '{key}'). Was it saved "
                    "from another architecture?"
                )
            group = f[key]
            if not isinstance(group, h5py.Group):
                raise ValueError(
                    f"{source} does not match model {model.name!r}: '{key}' is not a "
                    "group of variables (truncated or corrupt?)."
                )
            if len(group) != len(variables):
                raise ValueError(
                    f"{source} does not match model {model.name!r}: layer "
                    f"{layer.name!r} has {len(variables)} variables but '{key}' holds "
                    f"{len(group)}."
                )
            found = {}
            for i, var in enumerate(variables):
                try:
                    value = np.asarray(group[str(i)])
                except (KeyError, OSError) as e:
                    raise ValueError(
                        f"Cannot read '{key}/{i}' from {source} (truncated or "
                        f"corrupt?): {e}"
                    ) from None
                if tuple(value.shape) != tuple(var.shape):
                    raise ValueError(
                        f"{source} does not match model {model.name!r}: variable "
                        f"{getattr(var, 'path', var.name)!r} has shape "
                        f"{tuple(var.shape)} but '{key}/{i}' "
                        f"in the file has shape {value.shape}."
                    )
                found[str(i)] = value
            return found

        for path, layer in _saved_layers(model):
            try:
                values = check(path, layer)
            except ValueError as e:
                if not skip_mismatch:
                    raise
                skipped.append((layer, e))
                continue
            if values:
                staged.append((layer, values))
        optimizer = getattr(model, "optimizer", None)
        load_optimizer = getattr(optimizer, "load_own_variables", None)
        opt_store = None
        if "optimizer/vars" in f and load_optimizer is not None:
            group = f["optimizer/vars"]
            if not isinstance(group, h5py.Group):
                raise ValueError(
                    f"{source}: 'optimizer/vars' is not a group of variables "
                    "(truncated or corrupt?)."
                )
            opt_store = {k: np.asarray(group[k]) for k in group}
    for layer, values in staged:  # only once everything matched
        layer.load_own_variables(values)
    if load_optimizer is not None and opt_store is not None:
        load_optimizer(opt_store)
    if skipped:  # Keras's warning for skip_mismatch
        layer, error = skipped[0]
        warnings.warn(
            f"A total of {len(skipped)} objects could not be loaded. Example error "
            f"message for object {layer}:\n\n{error}\n\nList of objects that "
            f"could not be loaded:\n{[s[0] for s in skipped]}",
            stacklevel=3,
        )


def _atomic_write(path: str, write) -> None:
    """Writes `path` through a temporary file; OS errors name `path` (TF's types)."""
    try:
        storage.atomic_file(path, write, keep_mode=True)
    except OSError as e:
        if e.errno is None:
            raise
        fix = (
            "free some disk space (or save elsewhere) and save again"
            if e.errno in (errno.ENOSPC, errno.EDQUOT)
            else "fix the path and save again"
        )
        raise OSError(
            e.errno,
            f"{os.strerror(e.errno)} while saving {path!r} ({e}). The file at that "
            f"path, if any, is unchanged and no temporary file is left; {fix}",
            path,
        ) from e


def save_weights(model: Layer, filepath) -> None:
    filepath = os.fspath(filepath)
    if not filepath.endswith(".weights.h5"):
        raise ValueError(
            f"The filename must end in `.weights.h5` (Keras 3's format); got "
            f"{filepath!r}."
        )
    if not model.built:
        raise ValueError(
            f"Model {model.name!r} has no weights yet: call it on data (or build it) "
            "before saving."
        )
    _atomic_write(filepath, lambda f: _write_weights_h5(model, f))


def _read_zip(filepath: str, names: tuple) -> list:
    """The members `names` of the zip at `filepath`, read and CRC-checked."""
    try:
        with zipfile.ZipFile(filepath) as z:
            return [z.read(name) for name in names]
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError) as e:
        raise zipfile.BadZipFile(f"{e}") from None


def load_weights(model: Layer, filepath, skip_mismatch: bool = False) -> None:
    filepath = os.fspath(filepath)
    if os.path.isdir(filepath):  # an OrbaxCheckpoint directory, as Keras reads it
        # cycle: saving -> callbacks_orbax -> saving
        from jaxtape._src.keras import callbacks_orbax

        callbacks_orbax.load_weights(model, filepath)
        return
    if filepath.endswith(".keras"):
        try:
            (data,) = _read_zip(filepath, ("model.weights.h5",))
        except FileNotFoundError:
            raise FileNotFoundError(
                errno.ENOENT, "No .keras file at that path", filepath
            ) from None
        except zipfile.BadZipFile as e:
            raise zipfile.BadZipFile(
                f"Cannot read weights from {filepath!r}: it is not a valid .keras "
                f"file (truncated or corrupt zip: {e}). Save the model again, or "
                "load an earlier file."
            ) from None
        _read_weights_h5(model, io.BytesIO(data), filepath, skip_mismatch)
        return
    if not filepath.endswith((".h5", ".hdf5")):
        raise ValueError(
            f"File format not supported: filepath={filepath}. jaxtape reads "
            "`.weights.h5` files and `.keras` files (Keras 3's formats); jaxtape "
            "checkpoints are read with `jaxtape.train.Checkpoint(model=...).restore`."
        )
    if not os.path.exists(filepath):
        raise FileNotFoundError(errno.ENOENT, "No weights file at that path", filepath)
    _read_weights_h5(model, filepath, filepath, skip_mismatch)


# -- the .keras zip --------------------------------------------------------------------
def model_config(model) -> dict:
    """`model`'s `.keras` config entry (its `_serialize`; a subclassed model
    raises NotImplementedError)."""
    return model._serialize()


def save_model(model, filepath) -> None:
    filepath = os.fspath(filepath)
    if not filepath.endswith(".keras"):
        raise ValueError(
            f"Model.save writes Keras 3's `.keras` format; the filename must end in "
            f"`.keras`; got {filepath!r}. For weights only, use `save_weights` with "
            "a `.weights.h5` name."
        )
    config = model_config(model)
    compile_config = getattr(model, "get_compile_config", dict)()
    if compile_config:  # Keras 3 keeps compile()'s arguments in config.json
        config["compile_config"] = compile_config
    config = json.dumps(config)
    weights = io.BytesIO()
    _write_weights_h5(model, weights)
    meta = json.dumps(
        {
            "keras_version": "3.15.1",
            "jaxtape": True,
            "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
        }
    )

    def write(f):
        with zipfile.ZipFile(f, "w") as z:
            z.writestr("metadata.json", meta)
            z.writestr("config.json", config)
            z.writestr("model.weights.h5", weights.getvalue())

    _atomic_write(filepath, write)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):  # noqa: A002
    """Loads a `.keras` file written by jaxtape or tf.keras (Sequential, functional).

    With `compile=True` the model is compiled as it was saved (optimizer with
    its config and state, loss, metrics), as Keras does. A Python lambda
    saved by tf.keras (a `Lambda` layer's function) is refused with Keras's
    ValueError in safe mode and rebuilt from its bytecode (same Python
    version only, as Keras) with `safe_mode=False` or after
    `keras.config.enable_unsafe_deserialization()`, which overrides
    `safe_mode=True` as in Keras. Custom layers, losses and metrics are found
    by the name they were registered under (`register_keras_serializable`) or
    in `custom_objects`, as in Keras.
    """
    filepath = os.fspath(filepath)
    if os.path.isdir(filepath):  # an OrbaxCheckpoint directory, as Keras reads it
        # cycle: saving -> callbacks_orbax -> saving
        from jaxtape._src.keras import callbacks_orbax

        return callbacks_orbax.load_model(filepath, custom_objects, compile, safe_mode)
    if filepath.endswith((".h5", ".hdf5")):
        with _open_h5(filepath, filepath) as f:  # OSError if unreadable, as in TF
            if "model_config" not in f.attrs:
                raise ValueError(
                    f"No model config found in the file at {filepath}. It holds "
                    "weights only: build the model in code and call "
                    "`model.load_weights(...)`."
                )
        raise NotImplementedError(
            f"{filepath} is a legacy Keras HDF5 model file, which jaxtape does not "
            "read. Load it with tf.keras and save it again with "
            "`model.save('name.keras')`."
        )
    if not filepath.endswith(".keras"):
        raise ValueError(
            f"File format not supported: filepath={filepath}. jaxtape loads Keras 3 "
            "`.keras` files; for weights only, build the model and call "
            "`model.load_weights(...)`."
        )
    try:
        raw_config, weights = _read_zip(filepath, ("config.json", "model.weights.h5"))
        config = json.loads(raw_config)
    except FileNotFoundError:
        raise ValueError(
            f"File not found: filepath={filepath}. Please ensure the file is an "
            "accessible `.keras` zip file."
        ) from None
    except (zipfile.BadZipFile, KeyError, OSError, ValueError) as e:
        raise ValueError(
            f"{filepath!r} is not a valid .keras file (a zip with config.json and "
            f"model.weights.h5; truncated or corrupt?): {e}. Save the model again, or "
            "load an earlier file."
        ) from None
    model = model_from_config(config, custom_objects, compile, safe_mode)
    _read_weights_h5(model, io.BytesIO(weights), filepath)
    return model


def model_from_config(config: dict, custom_objects, compile, safe_mode):  # noqa: A002
    """The built (and, with `compile`, compiled) model of a `.keras` config."""
    name = config.get("class_name")
    if (
        serialization.LAYERS.resolve(
            name, config.get("registered_name"), custom_objects
        )
        is None
    ):
        raise NotImplementedError(
            f"Loading {name!r} models from .keras files is not supported yet; "
            "rebuild the model in code and use `load_weights` (a custom model "
            "class registered with `keras.saving.register_keras_serializable` "
            "loads by its name)."
        )
    unsafe = keras_config.in_safe_mode() is False or not safe_mode
    config = _with_lambdas(config, safe=not unsafe)
    model = serialization.deserialize_layer(config, custom_objects)
    if not model.built:
        model.build_from_config(config.get("build_config"))
    _compile_from(model, config, compile, custom_objects)
    return model


def _with_lambdas(entry: typing.Any, safe: bool) -> typing.Any:
    """`entry` with Keras's `__lambda__` entries made functions again, as
    Keras's `func_load` (marshalled bytecode, defaults, closure); in safe
    mode the first one raises Keras's ValueError."""
    if isinstance(entry, list):
        return [_with_lambdas(e, safe) for e in entry]
    if not isinstance(entry, dict):
        return entry
    if entry.get("class_name") != "__lambda__":
        return {k: _with_lambdas(v, safe) for k, v in entry.items()}
    if safe:
        raise ValueError(
            "Requested the deserialization of a `Lambda` layer whose `function` "
            "is a Python lambda. This carries a potential risk of arbitrary code "
            "execution and thus it is disallowed by default. If you trust the "
            "source of the artifact, you can override this error by passing "
            "`safe_mode=False` to the loading function, or calling "
            "`keras.config.enable_unsafe_deserialization()."
        )
    inner = entry.get("config") or {}
    if isinstance(inner, dict) and "code" in inner:  # a Lambda layer's function
        code, defaults, closure = inner["code"], inner["defaults"], inner["closure"]
    else:  # Keras's other form: {"value": [code, defaults, closure]}
        code, defaults, closure = inner["value"] if isinstance(inner, dict) else inner
    code = marshal.loads(base64.b64decode(code))
    return types.FunctionType(
        code,
        {"__builtins__": builtins},
        name=code.co_name,
        argdefs=tuple(defaults) if defaults is not None else None,
        closure=None if closure is None else tuple(map(types.CellType, closure)),
    )


def _compile_from(model, config, compile, custom_objects) -> None:  # noqa: A002
    """Keras's `compile=True`: compile as saved, with the optimizer's slots
    built so that its saved state is read too."""
    compile_config = config.get("compile_config")
    if compile and compile_config:
        model.compile_from_config(compile_config, custom_objects=custom_objects)
