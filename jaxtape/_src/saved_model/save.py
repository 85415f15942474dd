"""`saved_model.save` (TF's `tf.saved_model.save`) on `jax.export`. Layer L5.

Each `jaxtape.function` with an `input_signature` reachable from the saved
object (and each signature) is traced once more without run-time checks
(`Function.exportable_trace`); the trace's pure program, whose inputs are
the Variables it reads and the argument arrays and whose outputs are its
values and the Variables it writes, is exported with `jax.export` (unknown
sizes as symbolic dimensions, platforms `cpu` and `cuda`, differentiable to
first order) and written as `programs/<n>.jaxexport`. The Variables go
through the checkpoint storage (`variables/`, checksummed), described with
the programs in `manifest.json`. With `SaveOptions(tf_saved_model=True)`,
`export_tf` adds a TensorFlow SavedModel of the same programs. The directory
is written under a temporary sibling name and renamed into place, so a
killed save leaves the previous export as it was.
"""

from __future__ import annotations

import inspect
import itertools
import logging
import os
import re

import jax
import numpy as np

from jaxtape._src.checkpoint import storage
from jaxtape._src.core import errors
from jaxtape._src.core.tensor import TensorSpec, in_key_order
from jaxtape._src.function import signature as _sig
from jaxtape._src.function import specialize
from jaxtape._src.function.concrete import OUT_ARRAY, OUT_TENSOR, ConcreteFunction
from jaxtape._src.function.function import Function
from jaxtape._src.saved_model import export_tf
from jaxtape._src.saved_model import manifest as _manifest
from jaxtape._src.state import graph, trackable
from jaxtape._src.state.module import Module
from jaxtape._src.state.variable import Variable

DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
_DEFAULT_SIGNATURE_ATTR = "_default_save_signature"  # TF's attribute name
# Each program is lowered for both: an export made on a CPU machine runs on a
# CUDA one and the reverse (`jax.export` picks the platform at call time). A
# program with an op that has no CUDA lowering (`linalg.eig`) is CPU's only,
# and so is the export (with a warning).
PLATFORMS = ("cpu", "cuda")


class SaveOptions:
    """TF's `tf.saved_model.SaveOptions`: every field is accepted with its
    default; a field that would change what is written raises
    `NotImplementedError` when `save` reads it.

    jaxtape's own field: `tf_saved_model=True` also writes a genuine
    TensorFlow SavedModel into the same directory (`saved_model.pb` and
    `variables/variables.*`, through `jax2tf` from the same exported
    programs; see `export_tf.py`), so that `tensorflow.saved_model.load`,
    `saved_model_cli` and TF Serving read the directory as well as
    `jaxtape.saved_model.load`. It needs TensorFlow (the `export-tf` extra).

    Differences from TensorFlow: `namespace_whitelist` and `save_debug_info`
    have nothing to act on (jaxtape has no custom op namespaces, and the
    exported programs carry JAX's own source locations); `tf_saved_model`
    is jaxtape's (TF's SaveOptions has no such field: without it, the
    directory is jaxtape's export only).
    """

    _DEFAULTS = dict(
        namespace_whitelist=None,
        save_debug_info=False,
        function_aliases=None,
        experimental_debug_stripper=False,
        experimental_io_device=None,
        experimental_variable_policy=None,
        experimental_custom_gradients=True,
        experimental_image_format=False,
        experimental_skip_saver=False,
        experimental_sharding_callback=None,
        extra_tags=None,
        tf_saved_model=False,
    )
    _HARMLESS = frozenset({"namespace_whitelist", "save_debug_info", "tf_saved_model"})

    def __init__(
        self,
        namespace_whitelist=None,
        save_debug_info=False,
        function_aliases=None,
        experimental_debug_stripper=False,
        experimental_io_device=None,
        experimental_variable_policy=None,
        experimental_custom_gradients=True,
        experimental_image_format=False,
        experimental_skip_saver=False,
        experimental_sharding_callback=None,
        extra_tags=None,
        tf_saved_model=False,
    ):
        self.namespace_whitelist = namespace_whitelist
        self.save_debug_info = save_debug_info
        self.function_aliases = function_aliases
        self.experimental_debug_stripper = experimental_debug_stripper
        self.experimental_io_device = experimental_io_device
        self.experimental_variable_policy = experimental_variable_policy
        self.experimental_custom_gradients = experimental_custom_gradients
        self.experimental_image_format = experimental_image_format
        self.experimental_skip_saver = experimental_skip_saver
        self.experimental_sharding_callback = experimental_sharding_callback
        self.extra_tags = extra_tags
        self.tf_saved_model = tf_saved_model

    def _check_supported(self) -> None:
        for name, default in self._DEFAULTS.items():
            if name not in self._HARMLESS and getattr(self, name) != default:
                raise NotImplementedError(
                    f"saved_model.save: SaveOptions({name}=...) is not supported by "
                    f"jaxtape (got {getattr(self, name)!r}); leave it at its default "
                    f"{default!r}."
                )


# -- what is saved -------------------------------------------------------------------
def _functions_of(obj) -> dict[str, Function]:
    """The `jaxtape.function`s of one object: methods and attributes, by name."""
    out = {}
    if not hasattr(obj, "__dict__") or isinstance(obj, Variable):
        return out
    for name in dir(type(obj)):
        if isinstance(inspect.getattr_static(type(obj), name, None), Function):
            out[name] = getattr(obj, name)
    for name, value in vars(obj).items():
        if isinstance(value, Function):
            out[name] = value
    return dict(sorted(out.items()))


def _objects(obj):
    """`(path, kind, object)` for the root (path '') and everything trackable
    under it, breadth first (each by its shortest path, as checkpoints name
    them)."""
    yield "", "module", obj
    for names, child in graph.walk(obj, trackable.children, "breadth"):
        path = "/".join(trackable._escape(n) for n in names)
        if isinstance(child, Variable):
            kind = "variable"
        elif isinstance(child, (list, tuple)):
            kind = "list"
        elif isinstance(child, dict):
            kind = "dict"
        else:
            kind = "module"
        yield path, kind, child


def _unknown_dims(args, kwargs) -> list[int]:
    """The axis of each unknown size in the specs, in the trace's order."""
    leaves = jax.tree_util.tree_leaves((args, kwargs))
    return [
        axis
        for spec in leaves
        if type(spec) is TensorSpec and spec.shape.rank is not None
        for axis, d in enumerate(spec.shape.as_list())
        if d is None
    ]


def _patterns(axes: list[int]) -> list[tuple]:
    """Symbol patterns to try: each unknown size its own symbol (TF's
    meaning of `None`); then one batch symbol shared by the leading unknown
    sizes (a loss of `model(x)` against `y`); then one symbol for all."""
    distinct = tuple(range(len(axes)))
    counter = itertools.count(1)
    batch = tuple(0 if a == 0 else next(counter) for a in axes)
    shared = tuple(0 for _ in axes)
    out = []
    for p in (distinct, batch, shared):
        if p not in out:
            out.append(p)
    return out


def _references(objects) -> list[list[str]]:
    """`[path, target]` for each edge of the object graph that reaches an
    object already named by another path (TF's object graph keeps every
    edge: Keras's ExportArchive lists a Variable in `variables`,
    `trainable_variables` and its collections)."""
    path_of = {id(o): p for p, _, o in objects}
    out = []
    for path, kind, o in objects:
        if kind == "variable":
            continue
        for name, child in trackable.children(o):
            edge = "/".join(filter(None, (path, trackable._escape(name))))
            target = path_of.get(id(child))
            if target is not None and target != edge:
                out.append([edge, target])
    return out


class _Exporter:
    """Exports programs into `directory` and collects the manifest's parts."""

    def __init__(self, obj, directory: str):
        self.directory = directory
        self.objects = list(_objects(obj))
        self.var_index: dict[int, int] = {}
        self.variables: list[dict] = []
        self.var_values: dict[str, np.ndarray] = {}
        for path, _, o in self.objects:
            if isinstance(o, Variable) and id(o) not in self.var_index:
                self._add(o, path)
        # Optimizer slots, by the paths checkpoints give them (held privately
        # by the loaded object: no attribute reaches them).
        slots = trackable.Graph(dict(trackable.children(obj))).slots()
        for path, (_, _, _, slot) in slots.items():
            if id(slot) not in self.var_index:
                self._add(slot, path, captured=True)
        self.programs: list[dict] = []
        self.cpu_only: list[tuple[str, str]] = []  # (function, why not CUDA)
        self._done: dict = {}

    def _add(self, v: Variable, path: str, captured: bool = False) -> None:
        self.var_index[id(v)] = len(self.variables)
        self.variables.append(
            {
                "path": path,
                "name": v.name,
                "shape": list(v.shape.as_list()),
                "dtype": np.dtype(v.dtype.as_numpy_dtype).name,
                "trainable": bool(v.trainable),
                "captured": captured,
            }
        )
        self.var_values[path] = np.asarray(v.read_value()._value)

    def _capture(self, v: Variable) -> None:
        """Saves a non-trainable Variable that a function uses but the object
        graph does not reach (a random Generator's state, as Keras's dropout
        seed): the loaded object holds it privately, as TF's captures."""
        self._add(v, f".captured/{len(self.variables)}", captured=True)

    def program(self, fn: Function, args=None, kwargs=None):
        """Exports one trace of `fn` (cached by function and arguments);
        returns `(program index, the trace)`."""
        key = (id(fn), repr(args), repr(kwargs))
        if key in self._done:
            return self._done[key]
        trace = exportable_trace(fn, args, kwargs)
        if trace.callbacks:
            raise NotImplementedError(
                f"saved_model.save: jaxtape.function {fn.__name__!r} calls Python "
                "(jaxtape.py_function, numpy_function or jaxtape.print), which an "
                "exported program cannot hold; remove those calls from the "
                "functions you save."
            )
        used = []
        for r in trace.lifted:
            v = r()
            if v is not None and id(v) not in self.var_index and not v.trainable:
                self._capture(v)  # (RNG states: a Generator is not trackable)
            if v is None or id(v) not in self.var_index:
                raise ValueError(
                    f"saved_model.save: jaxtape.function {fn.__name__!r} uses the "
                    f"trainable Variable {getattr(v, 'name', None)!r}, which is not "
                    "tracked by the saved object (TF: 'untracked resource'). Assign "
                    "it to an attribute of the object (or of one of its sub-Modules)."
                )
            used.append(self.var_index[id(v)])
        avals = [jax.ShapeDtypeStruct(s, d) for s, d in trace.avals]
        exported, first = None, None
        # (an op without a CUDA lowering, as `linalg.eig`: that program is CPU's)
        for platforms in (PLATFORMS, ("cpu",)):
            try:
                exported = jax.export.export(trace._plain, platforms=platforms)(
                    *avals, *trace.leaf_avals
                )
                break
            except Exception as e:
                first = first or e
        if exported is None:
            raise ValueError(
                f"saved_model.save: jaxtape.function {fn.__name__!r} could not be "
                f"exported with jax.export ({type(first).__name__}: {first})."
            ) from first
        if tuple(exported.platforms) != PLATFORMS:
            self.cpu_only.append((fn.__name__, f"{type(first).__name__}: {first}"))
        index = len(self.programs)
        name = f"{_manifest.PROGRAMS}/{index}-{_file_name(fn.__name__)}.jaxexport"
        with open(os.path.join(self.directory, name), "wb") as f:
            f.write(exported.serialize(vjp_order=1))
        self.programs.append(
            {
                "file": name,
                "function": fn.__name__,
                "variables": used,
                "written": list(trace.written),
                "outputs": _outputs_json(trace),
            }
        )
        self._done[key] = (index, trace)
        return index, trace


def exportable_trace(fn: Function, args=None, kwargs=None):
    """A trace of `fn` for `args`/`kwargs` (TensorSpecs; None: its
    input_signature) as exports need it: its unknown sizes independent
    symbols if that traces, else the leading ones shared (`_patterns`)."""
    spec_args = tuple(fn.input_signature or ()) if args is None else args
    first = None
    for pattern in _patterns(_unknown_dims(spec_args, kwargs or {})):
        try:
            return fn.exportable_trace(args, kwargs, pattern)
        except Exception as e:  # (sizes it cannot treat as independent)
            first = first or e
    raise ValueError(
        f"saved_model.save: jaxtape.function {fn.__name__!r} could not be traced "
        f"for its signature ({type(first).__name__}: {first}). Call it once "
        "before saving if it creates Variables; where it needs a concrete "
        "size, give that size in its input_signature instead of None."
    ) from first


def _file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:60] or "function"


def _out_spec(shape, dtype) -> TensorSpec:
    shape = [None if specialize.is_symbolic(d) else int(d) for d in shape]
    return TensorSpec(shape, np.dtype(dtype))


def _outputs_tree(trace):
    """The trace's output structure with a TensorSpec per array output, and
    the position of each among the program's value outputs (by id)."""
    index, leaves = {}, []
    it = iter(enumerate(trace.out_specs))
    for s in trace.out_static:
        if s is OUT_TENSOR or s is OUT_ARRAY:
            i, (shape, dtype) = next(it)
            spec = _out_spec(shape, dtype)
            index[id(spec)] = i
            leaves.append(spec)
        else:
            leaves.append(s)
    out = jax.tree_util.tree_unflatten(trace.out_tree, leaves)
    if trace.key_order is not None:
        out = in_key_order(out, trace.key_order)
    return out, index


def _outputs_json(trace) -> dict:
    out, index = _outputs_tree(trace)
    return _manifest.nest_json(out, lambda s: _manifest.spec_json(s, index[id(s)]))


def _signature_outputs(name: str, fn_name: str, trace) -> dict:
    """TF's signature outputs: a dict as returned, else `output_<i>` for a
    tensor or each tensor of a flat list/tuple."""
    out, index = _outputs_tree(trace)
    if not isinstance(out, dict):
        out = {f"output_{i}": v for i, v in enumerate(_as_list(out))}
    for key, value in out.items():
        if type(value) is not TensorSpec:
            raise ValueError(
                f"Got a non-Tensor value {value!r} for key {key!r} in the output of "
                f"the function {fn_name} used to generate the SavedModel signature "
                f"{name!r}. Outputs for functions used as signatures must be a "
                "single Tensor, a sequence of Tensors, or a dictionary from string "
                "to Tensor."
            )
    return {"dict": [[k, _manifest.spec_json(v, index[id(v)])] for k, v in out.items()]}


def _as_list(out) -> list:
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _signature_inputs(fn: Function, trace) -> dict:
    """The signature's inputs by TF's names (a TensorSpec's own name, else
    the parameter's: `x`, `pair_0`), in the program's order."""
    args, kwargs = trace.signature
    named = _sig.structured_input_signature(fn._fn, args, kwargs)
    specs = [s for s in jax.tree_util.tree_leaves(named) if type(s) is TensorSpec]
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ValueError(
            f"Signature function {fn.__name__!r} has duplicate input names "
            f"{names!r}. Give every TensorSpec of its input_signature its own name."
        )
    return {"dict": [[s.name, _manifest.spec_json(s, i)] for i, s in enumerate(specs)]}


def _as_signature_source(name, value):
    """`(Function, args, kwargs)` for a signature given as a Function with an
    input_signature or as a ConcreteFunction."""
    if isinstance(value, ConcreteFunction):
        args, kwargs = value._trace.signature
        return value._function, tuple(args), dict(kwargs)
    if isinstance(value, Function):
        if value.input_signature is None:
            raise ValueError(
                f"Signature {name!r}: the jaxtape.function {value.__name__!r} has no "
                "input_signature. Pass a function with an input_signature, or "
                "f.get_concrete_function(...)."
            )
        return value, None, None
    raise ValueError(
        f"Expected a TensorFlow function for which to generate a signature (a "
        f"jaxtape.function with an input_signature or a ConcreteFunction), but "
        f"got {value!r} for signature {name!r}."
    )


def _default_signature(functions) -> dict:
    """TF's default: `_default_save_signature`, else the one function of the
    root with an input_signature whose outputs suit a signature."""
    fn = functions.get(_DEFAULT_SIGNATURE_ATTR)
    if fn is not None:
        return {DEFAULT_SERVING_SIGNATURE_DEF_KEY: fn}
    return {}


def _signatures(signatures, root_functions, exporter) -> dict:
    if signatures is None:
        chosen = _default_signature(root_functions)
        if not chosen:
            candidates = []
            for fn in root_functions.values():
                if fn.input_signature is None:
                    continue
                index, trace = exporter.program(fn)
                try:
                    _signature_outputs("", fn.__name__, trace)
                except ValueError:
                    continue
                if trace.out_specs:
                    candidates.append(fn)
            if len(candidates) == 1:
                chosen = {DEFAULT_SERVING_SIGNATURE_DEF_KEY: candidates[0]}
    elif isinstance(signatures, dict):
        chosen = dict(signatures)
        for key in chosen:
            if not isinstance(key, str):
                raise ValueError(
                    f"Invalid signature key {key!r}: signature keys must be strings."
                )
    else:
        chosen = {DEFAULT_SERVING_SIGNATURE_DEF_KEY: signatures}
    out = {}
    for name, value in chosen.items():
        fn, args, kwargs = _as_signature_source(name, value)
        index, trace = exporter.program(fn, args, kwargs)
        out[name] = {
            "program": index,
            "inputs": _signature_inputs(fn, trace),
            "outputs": _signature_outputs(name, fn.__name__, trace),
        }
    return out


# -- save ---------------------------------------------------------------------------
def save(obj, export_dir, signatures=None, options=None) -> None:
    """Exports `obj`'s `jaxtape.function`s and Variables to `export_dir`
    (TF's `tf.saved_model.save`), loadable without its Python code by
    `jaxtape.saved_model.load`.

    Args:
      obj: a `jaxtape.Module` (or another trackable object). Every
        `jaxtape.function` on it or on an object reachable from it
        (sub-Modules, lists and dicts of them) is exported. Variables that
        functions use but no attribute reaches (optimizer slots, random
        generators' states) are saved too when not trainable (a trainable
        one is TF's "untracked resource" error).
      export_dir: the directory to write. An earlier export there is replaced
        as a whole, atomically.
      signatures: a `jaxtape.function` with an input_signature or a
        ConcreteFunction (saved as `serving_default`), or a dict from
        signature name to such functions. Default: TF's choice, the root's
        `_default_save_signature` or its one function with an
        input_signature whose outputs suit a signature.
      options: a `SaveOptions`; fields other than the defaults raise
        `NotImplementedError`, except `tf_saved_model=True`: also write a
        TensorFlow SavedModel into `export_dir` (needs TensorFlow).

    A function without an input_signature is saved with the traces it has
    (as TF saves its concrete functions); one with arguments that the
    manifest cannot describe (Variables, arbitrary objects) is left out with
    a warning.

    Differences from TensorFlow: the programs are lowered for CPU and CUDA
    (jax.export `platforms=("cpu", "cuda")`; loading in a process whose JAX backend
    is another raises `NotImplementedError`) and are differentiable to first order
    (gradients of gradients through a loaded function fail); run-time argument
    checks (index out of range, division by zero) are not part of the exported
    programs; an existing `export_dir` holding other files than an earlier export is
    refused instead of written into.
    """
    if not isinstance(obj, Module) and not hasattr(obj, "_trackable_children"):
        raise ValueError(
            f"Expected an object of type `Trackable`, such as `tf.Module` or a "
            f"subclass of the `Trackable` class, for export. Got {obj!r} with type "
            f"{type(obj)}. (jaxtape: a jaxtape.Module or a Keras layer/model.)"
        )
    if options is not None:
        if not isinstance(options, SaveOptions):
            raise TypeError(
                f"saved_model.save: options must be a SaveOptions, got {options!r}."
            )
        options._check_supported()
    export_dir = os.path.abspath(os.fspath(export_dir))
    parent, name = os.path.split(export_dir)
    storage.make_directory(parent)
    storage.remove_leftovers(parent, re.escape(name))
    _check_replaceable(export_dir)
    staging = storage.temp_name(export_dir)
    try:
        os.makedirs(os.path.join(staging, _manifest.PROGRAMS))
        _write(obj, staging, signatures)
        if options is not None and options.tf_saved_model:
            export_tf.write(staging)
        # (`remove_leftovers` undoes a swap cut short)
        storage.replace_path(staging, export_dir)
    except BaseException as e:
        storage._remove(staging)
        if isinstance(e, OSError):
            error = storage.save_error(e, export_dir)
            if error is not None:
                raise error from e
        raise


def _write(obj, staging: str, signatures) -> None:
    exporter = _Exporter(obj, staging)
    functions, skipped = [], []
    root_functions = {}
    for path, kind, o in exporter.objects:
        if kind != "module":
            continue
        for name, fn in _functions_of(o).items():
            if path == "":
                root_functions[name] = fn
            if fn.input_signature is None:
                entry = _traced_function(exporter, fn, path, name)
                if entry is None:
                    skipped.append(f"{path}/{name}" if path else name)
                else:
                    functions.append(entry)
                continue
            index, _ = exporter.program(fn)
            functions.append(
                {
                    "object": path,
                    "name": name,
                    "program": index,
                    "parameters": [
                        p.name
                        for p in _sig._parameters(fn._fn, len(fn.input_signature))
                    ],
                    "input_signature": _manifest.nest_json(
                        list(fn.input_signature), _manifest.spec_json
                    ),
                }
            )
    if skipped:
        logging.getLogger("jaxtape").warning(
            "saved_model.save: the jaxtape.functions %s have no input_signature "
            "and no trace that can be exported (never called; called with "
            "arguments other than tensors, numbers, strings and lists, tuples "
            "and dicts of them; or calling Python or untracked trainable "
            "Variables); they were not saved. Give them an input_signature "
            "(their errors then say what stops the export), or call them first.",
            skipped,
        )
    sigs = _signatures(signatures, root_functions, exporter)
    if not functions and not sigs:
        logging.getLogger("jaxtape").warning(
            "saved_model.save: %r has no jaxtape.function to export; only its "
            "Variables were saved. Decorate its methods with jaxtape.function (with "
            "an input_signature) to call them after loading. (A Keras model's own "
            "`call` is exported by Keras's `model.export`, not yet in jaxtape.)",
            obj,
        )
    if exporter.cpu_only:
        logging.getLogger("jaxtape").warning(
            "saved_model.save: %s could not be lowered for CUDA (%s); the export "
            "runs on CPU only.",
            sorted({name for name, _ in exporter.cpu_only}),
            exporter.cpu_only[0][1][:300],
        )
    storage.write(os.path.join(staging, _manifest.VARIABLES), exporter.var_values)
    _manifest.write(
        os.path.join(staging, _manifest.MANIFEST),
        {
            "format": _manifest.FORMAT,
            "version": _manifest.VERSION,
            "platforms": ["cpu"] if exporter.cpu_only else list(PLATFORMS),
            "objects": [[p, k] for p, k, _ in exporter.objects if p],
            "references": _references(exporter.objects),
            "variables": exporter.variables,
            "programs": exporter.programs,
            "functions": functions,
            "signatures": sigs,
        },
    )


def _traced_function(exporter, fn: Function, path: str, name: str) -> dict | None:
    """A function without an input_signature: each of its traces is exported
    (TF saves a function's concrete functions); a loaded call runs the first
    whose arguments match. None when no trace can be saved."""
    concrete = []
    for trace in sorted(fn._traces.values(), key=lambda t: t.serial):
        args, kwargs = trace.signature
        try:
            inputs = _manifest.nest_json(
                [list(args), dict(kwargs)], _manifest.spec_json
            )
            index, _ = exporter.program(fn, tuple(args), dict(kwargs))
        except (NotImplementedError, ValueError):
            # (arguments the manifest cannot describe, Python callbacks, an
            # untracked Variable: that trace is left out, as `_write` warns)
            continue
        concrete.append({"program": index, "inputs": inputs})
    if not concrete:
        return None
    n_args = max(len(t.signature[0]) for t in fn._traces.values())
    return {
        "object": path,
        "name": name,
        "parameters": [p.name for p in _sig._parameters(fn._fn, n_args)],
        "concrete": concrete,
    }


def _check_replaceable(export_dir: str) -> None:
    if not os.path.lexists(export_dir):
        return
    if not os.path.isdir(export_dir):
        raise errors.FailedPreconditionError(
            None,
            None,
            f"{export_dir} is a file, not a directory. Remove it or save to another "
            "path.",
        )
    names = set(os.listdir(export_dir))
    if names and _manifest.MANIFEST not in names:
        raise errors.FailedPreconditionError(
            None,
            None,
            f"{export_dir} holds files that are not a jaxtape SavedModel "
            f"({sorted(names)[:3]}...). jaxtape replaces an export directory as a "
            "whole; save into an empty or new directory.",
        )
