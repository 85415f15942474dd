"""A genuine TensorFlow SavedModel beside jaxtape's export, through jax2tf. Layer L6.

`write(export_dir)` reads a finished jaxtape export (its manifest, its
`jax.export` programs and its Variables) and writes, into the same
directory, what `tensorflow.saved_model.load` and TF Serving read:
`saved_model.pb`, `fingerprint.pb` and the TF checkpoint
`variables/variables.{index,data-00000-of-00001}` (beside jaxtape's own
files in `variables/`; neither reader looks at the other's). The TF object
mirrors the saved object graph: `tf.Variable`s at the same attribute paths
(so `loaded.variables` of a Keras export are TF Variables), each saved
function a `tf.function` with its input_signature and each signature under
its name (`serving_default`, inputs named as in jaxtape's). Their bodies run
the same serialized programs, embedded by `jax2tf.convert` as
`XlaCallModule` ops for the platforms they were exported for, with `None`
sizes as jax2tf's symbolic dimensions and gradients (jax2tf's
`with_gradient`). Needs TensorFlow (the `export-tf` extra).

Differences from a SavedModel TensorFlow writes: a program with integer
outputs (a train step returning a step counter) has no gradient in TF
(jax2tf cannot differentiate it); a function saved without an
input_signature keeps one concrete function per trace, but its Python
defaults are not saved (pass every argument); optimizer slots and random
generator states that no attribute reaches are saved under the root's
`_jaxtape_captured` list (TF would refuse untracked resources); loading
logs TF's warning "Importing a function ... with ops with unsaved custom
gradients" (jax2tf's gradients still work).
"""

from __future__ import annotations

import inspect
import os
import re
import shutil

import jax
import numpy as np

from jaxtape._src.checkpoint import storage
from jaxtape._src.saved_model import manifest as _manifest

TF_FILES = ("saved_model.pb", "fingerprint.pb", "assets")


def _tensorflow():
    """TensorFlow and jax2tf, or an ImportError saying which extra brings them."""
    try:
        import tensorflow as tf  # lazy: TensorFlow takes seconds to import
        from jax.experimental import jax2tf  # lazy: imports TensorFlow
    except ImportError as e:
        raise ImportError(
            "Writing a TensorFlow SavedModel (SaveOptions(tf_saved_model=True)) "
            "needs TensorFlow: pip install 'jaxtape[export-tf]'. "
            f"({type(e).__name__}: {e})"
        ) from e
    return tf, jax2tf


def _poly_shape(aval) -> str:
    """jax2tf's polymorphic shape for an exported input (its symbols kept)."""
    return "(" + ", ".join(str(d) for d in aval.shape) + ")"


class _Program:
    """One exported program as a TF callable on (Variable values, arguments)."""

    def __init__(self, tf, jax2tf, exported, entry: dict, variables: list):
        self.used = [variables[i] for i in entry["variables"]]
        self.outputs = entry["outputs"]  # (the manifest's nest of output specs)
        self.written = entry["written"]
        self.n_values = len(exported.out_avals) - len(self.written)
        # (jax2tf differentiates a nested program only when its outputs are
        # all floating: it passes an integer output's cotangent as int, the
        # program's VJP wants float0. A train step's counters make it so.)
        differentiable = all(
            jax.numpy.issubdtype(a.dtype, jax.numpy.inexact) for a in exported.out_avals
        )
        self._call = jax2tf.convert(
            exported.call,
            polymorphic_shapes=[_poly_shape(a) for a in exported.in_avals],
            native_serialization_platforms=tuple(exported.platforms),
            with_gradient=differentiable,
        )

    def __call__(self, leaves: list) -> list:
        reads = [v.read_value() for v in self.used]
        out = list(self._call(*reads, *leaves))
        for position, value in zip(self.written, out[self.n_values :]):
            self.used[position].assign(value)
        return out


def _tensor_leaves(tf, structure) -> list:
    return [x for x in tf.nest.flatten(structure) if tf.is_tensor(x)]


def _tf_spec(tf, entry: dict, name=None):
    spec = _manifest.spec_of(entry)
    shape = None if spec.shape.rank is None else spec.shape.as_list()
    return tf.TensorSpec(
        shape, tf.as_dtype(np.dtype(entry["tensor"]["dtype"])), name or spec.name
    )


def _with_parameters(body, names: list):
    """`body(*args)` with the named positional parameters TF reads."""
    body.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
    )
    return body


def _identifier(name: str, i: int) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", name or "")
    return name if name[:1].isalpha() or name[:1] == "_" else f"args_{i}"


def _function(tf, entry: dict, programs: list):
    """The `tf.function` of a saved function with an input_signature."""
    program = programs[entry["program"]]
    outputs = program.outputs
    specs = _manifest.nest_of(entry["input_signature"], lambda e: _tf_spec(tf, e))

    def body(*args):
        out = program(_tensor_leaves(tf, args))
        return _manifest.nest_of(outputs, lambda e: out[e["tensor"]["index"]])

    body.__name__ = entry["name"]
    _with_parameters(body, entry["parameters"][: len(specs)])
    return tf.function(body, input_signature=specs, autograph=False)


def _traced_function(tf, entry: dict, programs: list):
    """The `tf.function` of a function saved with its traces (no
    input_signature): one concrete function per trace, as TF saves them;
    a trace runs the program whose saved arguments its own match."""
    concrete = []
    for c in entry["concrete"]:
        args, kwargs = _manifest.nest_of(c["inputs"], lambda e: _tf_spec(tf, e))
        concrete.append(((tuple(args), kwargs), programs[c["program"]]))

    def body(*args, **kwargs):
        for saved, program in concrete:
            if _matches(tf, saved, (args, kwargs)):
                out = program(_tensor_leaves(tf, (args, kwargs)))
                return _manifest.nest_of(
                    program.outputs, lambda e: out[e["tensor"]["index"]]
                )
        raise ValueError(f"no saved trace of {entry['name']!r} matches {args!r}")

    body.__name__ = entry["name"]
    _with_parameters(body, entry["parameters"])
    fn = tf.function(body, autograph=False)
    for (args, kwargs), _ in concrete:
        fn.get_concrete_function(*args, **kwargs)
    return fn


def _matches(tf, saved, value) -> bool:
    """Whether a traced argument structure is the saved one (tensors by
    spec, Python values by equality)."""
    if isinstance(saved, tf.TensorSpec):
        return tf.is_tensor(value) and saved.is_compatible_with(value)
    if isinstance(saved, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(saved)
            and all(_matches(tf, s, v) for s, v in zip(saved, value))
        )
    if isinstance(saved, dict):
        return (
            isinstance(value, dict)
            and set(value) == set(saved)
            and all(_matches(tf, saved[k], value[k]) for k in saved)
        )
    return type(value) is type(saved) and value == saved


def _signature(tf, name: str, entry: dict, programs: list):
    """A signature: named inputs, a dict of named outputs (TF's form)."""
    program = programs[entry["program"]]
    inputs = entry["inputs"]["dict"]
    names = [_identifier(k, i) for i, (k, _) in enumerate(inputs)]
    specs = [_tf_spec(tf, e, k) for k, e in inputs]
    outputs = entry["outputs"]["dict"]

    def body(*args):
        out = program(list(args))
        return {k: out[e["tensor"]["index"]] for k, e in outputs}

    body.__name__ = re.sub(r"[^A-Za-z0-9_]", "_", name)
    _with_parameters(body, names)
    return tf.function(
        body, input_signature=specs, autograph=False
    ).get_concrete_function()


def _object_graph(tf, manifest: dict, values: dict):
    """The root AutoTrackable with the saved objects and tf.Variables at
    their paths; also the Variables in the manifest's order."""
    auto = tf.__internal__.tracking.AutoTrackable
    root = auto()
    variables, by_path = [], {}
    for entry in manifest["variables"]:
        value = values[entry["path"]].astype(np.dtype(entry["dtype"]))
        v = tf.Variable(
            value.reshape(entry["shape"]),
            trainable=entry["trainable"],
            name=entry["name"].rsplit(":", 1)[0],
        )
        variables.append(v)
        by_path[entry["path"]] = v
    nodes: dict = {"": root}
    for path, kind in manifest["objects"]:
        if kind == "variable":
            nodes[path] = by_path[path]
        else:
            nodes[path] = {"list": [], "dict": {}}.get(kind, None)
            if nodes[path] is None:
                nodes[path] = auto()
    edges = [(p, p) for p, _ in manifest["objects"]]
    edges += [tuple(r) for r in manifest.get("references", ())]
    # Deepest parents first: a list is complete before its parent wraps it.
    edges.sort(key=lambda e: -e[0].count("/"))
    for path, target in edges:
        parent_path, _, name = path.rpartition("/")
        parent, child = nodes[parent_path], nodes[target]
        name = name.replace(".S", "/")
        if isinstance(parent, list):
            index = int(name)
            parent.extend([None] * (index + 1 - len(parent)))
            parent[index] = child
        elif isinstance(parent, dict):
            parent[name] = child
        else:
            setattr(parent, name, child)
    captured = [
        v for v, e in zip(variables, manifest["variables"]) if e.get("captured")
    ]
    if captured:  # (optimizer slots, generator states: TF saves tracked ones only)
        root._jaxtape_captured = captured
    return root, nodes, variables


def write(export_dir: str) -> None:
    """Writes a TF SavedModel of the jaxtape export in `export_dir` into it;
    a failure raises ValueError naming the step (`save` then leaves any
    earlier export as it was)."""
    tf, jax2tf = _tensorflow()
    try:
        _write(tf, jax2tf, export_dir)
    except Exception as e:
        raise ValueError(
            "saved_model.save: the TensorFlow SavedModel (SaveOptions("
            "tf_saved_model=True)) could not be written through jax2tf "
            f"({type(e).__name__}: {e}). Save without tf_saved_model to get "
            "jaxtape's export only."
        ) from e


def _write(tf, jax2tf, export_dir: str) -> None:
    manifest = _manifest.read(export_dir)
    values = storage.read(os.path.join(export_dir, _manifest.VARIABLES))
    root, nodes, variables = _object_graph(tf, manifest, values)
    programs = []
    for entry in manifest["programs"]:
        with open(os.path.join(export_dir, entry["file"]), "rb") as f:
            exported = jax.export.deserialize(bytearray(f.read()))
        programs.append(_Program(tf, jax2tf, exported, entry, variables))
    for entry in manifest["functions"]:
        if "concrete" in entry:
            fn = _traced_function(tf, entry, programs)
        else:
            fn = _function(tf, entry, programs)
        target = nodes[entry["object"]]
        if not isinstance(target, (list, dict)):
            setattr(target, entry["name"], fn)
    signatures = {
        name: _signature(tf, name, entry, programs)
        for name, entry in manifest["signatures"].items()
    }
    staging = storage.temp_name(os.path.join(export_dir, "tf"))
    try:
        tf.saved_model.save(root, staging, signatures=signatures or None)
        for name in TF_FILES:
            if os.path.lexists(os.path.join(staging, name)):
                os.replace(os.path.join(staging, name), os.path.join(export_dir, name))
        tf_variables = os.path.join(staging, "variables")
        for name in os.listdir(tf_variables):
            os.replace(
                os.path.join(tf_variables, name),
                os.path.join(export_dir, _manifest.VARIABLES, name),
            )
    finally:
        shutil.rmtree(staging, ignore_errors=True)
