"""The export directory's manifest: a versioned JSON file, no pickle. Layer L5.

`manifest.json` records the format version, each exported program (its
`*.jaxexport` file, its input and output structures with TensorSpecs, the
Variables it reads and which it writes) and each Variable (its object-graph
path, name, shape, dtype, trainability). Nested structures are written as
`{"tensor": {...}}`, `{"list": [...]}`, `{"tuple": [...]}`,
`{"dict": [[key, item], ...]}` (keys in order) and `{"value": python value}`.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from jaxtape._src.core import dtypes
from jaxtape._src.core.tensor import TensorSpec

FORMAT = "jaxtape-saved-model"
VERSION = 1
MANIFEST = "manifest.json"
VARIABLES = "variables"  # the checkpoint directory (checkpoint/storage)
PROGRAMS = "programs"  # the `*.jaxexport` files


def spec_json(spec: TensorSpec, index: int | None = None) -> dict:
    """A TensorSpec (and the position of its array among the program's
    inputs or outputs) as JSON."""
    shape = None if spec.shape.rank is None else list(spec.shape.as_list())
    out: dict[str, Any] = {
        "shape": shape,
        "dtype": np.dtype(spec.dtype.as_numpy_dtype).name,
        "name": spec.name,
    }
    if index is not None:
        out["index"] = index
    return {"tensor": out}


def spec_of(entry: dict) -> TensorSpec:
    """The TensorSpec of a `{"tensor": ...}` entry."""
    t = entry["tensor"]
    return TensorSpec(t["shape"], dtypes.as_dtype(np.dtype(t["dtype"])), t["name"])


def nest_json(x, leaf) -> dict:
    """A nested structure as JSON; `leaf(spec)` encodes each TensorSpec."""
    if type(x) is TensorSpec:
        return leaf(x)
    if isinstance(x, list):
        return {"list": [nest_json(v, leaf) for v in x]}
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return {"tuple": [nest_json(v, leaf) for v in x]}
    if isinstance(x, dict):
        if not all(isinstance(k, str) for k in x):
            raise NotImplementedError(
                f"saved_model: a dict with keys that are not strings ({list(x)!r}) "
                "cannot be exported; use string keys."
            )
        return {"dict": [[k, nest_json(v, leaf)] for k, v in x.items()]}
    if x is None or isinstance(x, (bool, int, float, str)):
        return {"value": x}
    raise NotImplementedError(
        f"saved_model: a value of type {type(x).__name__} ({x!r:.60}) in a "
        "function's inputs or outputs cannot be exported; use Tensors, lists, "
        "tuples, dicts with string keys and Python numbers or strings."
    )


def nest_of(entry: dict, leaf) -> Any:
    """The structure of a JSON nest; `leaf(entry)` rebuilds each tensor."""
    if "tensor" in entry:
        return leaf(entry)
    if "list" in entry:
        return [nest_of(v, leaf) for v in entry["list"]]
    if "tuple" in entry:
        return tuple(nest_of(v, leaf) for v in entry["tuple"])
    if "dict" in entry:
        return {k: nest_of(v, leaf) for k, v in entry["dict"]}
    return entry["value"]


def write(path: str, manifest: dict) -> None:
    with open(path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.flush()
        os.fsync(f.fileno())


def read(export_dir: str) -> dict:
    """The manifest of `export_dir`, checked: TF's OSError when there is none,
    ValueError for another format or a newer version."""
    path = os.path.join(export_dir, MANIFEST)
    if not os.path.isfile(path):
        for name in ("saved_model.pb", "saved_model.pbtxt"):
            if os.path.isfile(os.path.join(export_dir, name)):
                variables = os.path.join(export_dir, VARIABLES, VARIABLES)
                raise NotImplementedError(
                    f"{export_dir} is a TensorFlow SavedModel ({name}); jaxtape "
                    "loads only its own exports (manifest.json) so far. Load it with "
                    "TensorFlow, or restore its Variables into a jaxtape model of the "
                    "same architecture with jaxtape.train.Checkpoint(root=model)"
                    f".restore({variables!r}), then save that with "
                    "jaxtape.saved_model.save."
                )
        raise OSError(
            f"SavedModel file does not exist at: {path}. (jaxtape.saved_model.load "
            "reads a directory written by jaxtape.saved_model.save; pass that "
            "directory.)"
        )
    try:
        with open(path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(
            f"{path} is not a readable jaxtape SavedModel manifest ({e}). Save the "
            "model again with jaxtape.saved_model.save."
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValueError(
            f"{path} is not a jaxtape SavedModel manifest (its format is "
            f"{manifest.get('format') if isinstance(manifest, dict) else None!r}, "
            f"expected {FORMAT!r})."
        )
    version = manifest.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise ValueError(
            f"{path} was written in SavedModel format version {version!r}, newer "
            f"than this jaxtape reads (version {VERSION}). Upgrade jaxtape to "
            "load it."
        )
    return manifest
