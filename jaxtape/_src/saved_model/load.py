"""`saved_model.load` (TF's `tf.saved_model.load`): an export, without its code.

Layer L5. The loaded object is a `jaxtape.Module` rebuilt from the manifest:
sub-Modules, lists and dicts along the saved object-graph paths, the saved
Variables restored from the checkpoint storage, and each saved function as
a `jaxtape.function` with the saved `input_signature` whose body runs the
deserialized `jax.export` program on the Variables it reads (one recorded
op for tapes) and assigns the ones it writes. So a loaded function binds
its arguments as the original did, compiles per shape, writes its state
back and is differentiable under a `GradientTape` with respect to the
loaded Variables (the programs are exported with their first-order VJP).
"""

from __future__ import annotations

import collections.abc
import inspect
import os
import re

import jax
import numpy as np

from jaxtape._src.checkpoint import storage
from jaxtape._src.core import errors
from jaxtape._src.core.dispatch import OpInfo, dispatch_raw
from jaxtape._src.core.tensor import Tensor, TensorSpec
from jaxtape._src.function import signature as _sig
from jaxtape._src.function.function import Function
from jaxtape._src.saved_model import manifest as _manifest
from jaxtape._src.state.module import Module
from jaxtape._src.state.variable import Variable


class LoadOptions:
    """TF's `tf.saved_model.LoadOptions`: every field is accepted with its
    default; others raise `NotImplementedError` when `load` reads them."""

    _DEFAULTS = dict(
        allow_partial_checkpoint=False,
        experimental_io_device=None,
        experimental_skip_checkpoint=False,
        experimental_variable_policy=None,
        experimental_load_function_aliases=False,
    )

    def __init__(
        self,
        allow_partial_checkpoint=False,
        experimental_io_device=None,
        experimental_skip_checkpoint=False,
        experimental_variable_policy=None,
        experimental_load_function_aliases=False,
    ):
        self.allow_partial_checkpoint = allow_partial_checkpoint
        self.experimental_io_device = experimental_io_device
        self.experimental_skip_checkpoint = experimental_skip_checkpoint
        self.experimental_variable_policy = experimental_variable_policy
        self.experimental_load_function_aliases = experimental_load_function_aliases

    def _check_supported(self) -> None:
        for name, default in self._DEFAULTS.items():
            if getattr(self, name) != default:
                raise NotImplementedError(
                    f"saved_model.load: LoadOptions({name}=...) is not supported by "
                    f"jaxtape (got {getattr(self, name)!r}); leave it at its default "
                    f"{default!r}."
                )


class _Loaded(Module):
    """An object rebuilt by `load` (TF's revived `_UserObject`), a Module:
    `variables`/`trainable_variables` are the loaded Variables (or the saved
    attributes of those names)."""

    # A saved attribute of one of Module's names is what the object shows,
    # as TF's revived object (Keras's ExportArchive saves such lists).
    @property
    def variables(self) -> collections.abc.Sequence[Variable]:
        saved = self.__dict__.get("variables")
        return super().variables if saved is None else saved

    @property
    def trainable_variables(self) -> collections.abc.Sequence[Variable]:
        saved = self.__dict__.get("trainable_variables")
        return super().trainable_variables if saved is None else saved

    @property
    def non_trainable_variables(self) -> collections.abc.Sequence[Variable]:
        saved = self.__dict__.get("non_trainable_variables")
        return super().non_trainable_variables if saved is None else saved

    signatures: collections.abc.Mapping  # (the root's: `_SignatureMap`)
    # Captured state the object graph did not reach (`save`'s `_capture`).
    _TF_MODULE_IGNORED_PROPERTIES = frozenset({"_captured"})

    def __init__(self, name: str = "loaded"):
        super().__init__(name=name)

    def __call__(self, *args, **kwargs):
        fn = self.__dict__.get("__call__")
        if fn is None:
            raise TypeError(
                f"The loaded object {self.name!r} is not callable: the saved object "
                "had no `__call__` jaxtape.function with an input_signature."
            )
        return fn(*args, **kwargs)


class _ExportedCall:
    """The primitive tapes record for one call of a deserialized program."""

    def __init__(self, exported, name: str):
        self.exported = exported
        self.__name__ = name

    def __call__(self, *vals):
        try:
            return tuple(self.exported.call(*vals))
        except ValueError as e:
            if "polymorphic shapes specification" not in str(e):
                raise
            raise errors.InvalidArgumentError(
                None,
                None,
                f"The loaded function {self.__name__!r} was exported assuming that "
                "some of its `None` sizes are equal (the leading sizes of its "
                "inputs, when independent sizes did not trace); these inputs break "
                f"that: {e}",
            ) from None


def _program_function(name, parameters, input_signature, program, variables):
    """A `jaxtape.function` with `input_signature` whose body runs `program`
    (`(Exported, Variable indices, written positions, outputs nest)`)."""
    exported, var_ids, written, outputs = program
    used = [variables[i] for i in var_ids]
    n_values = len(exported.out_avals) - len(written)
    info = OpInfo(_ExportedCall(exported, name), f"saved_model:{name}", False, True)

    def body(*args):
        leaves = jax.tree_util.tree_leaves(args, is_leaf=lambda x: type(x) is Tensor)
        reads = [v.read_value() for v in used]
        out = dispatch_raw(info, [*reads, *leaves], ())
        out = list(out) if isinstance(out, (tuple, list)) else [out]
        for position, value in zip(written, out[n_values:]):
            used[position].assign(value)
        return _manifest.nest_of(outputs, lambda e: out[e["tensor"]["index"]])

    body.__name__ = body.__qualname__ = name
    body.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            for p in parameters
        ]
    )
    return Function(body, input_signature=input_signature, autograph=False, name=name)


class _NoMatch(Exception):
    pass


def _match(saved, value):
    """`value` bound to one saved argument (a TensorSpec: converted as an
    input_signature converts; a structure: item by item; a Python value:
    equal); raises `_NoMatch`."""
    if type(saved) is TensorSpec:
        try:
            return _sig._bind_tensor(value, saved)[0]
        except _sig._BindError:
            raise _NoMatch from None
    if isinstance(saved, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(saved):
            raise _NoMatch
        return type(saved)(_match(s, v) for s, v in zip(saved, value))
    if isinstance(saved, dict):
        if not isinstance(value, dict) or set(value) != set(saved):
            raise _NoMatch
        return {k: _match(saved[k], value[k]) for k in saved}
    if type(value) is not type(saved) or value != saved:
        raise _NoMatch
    return value


class _RestoredFunction:
    """A loaded function that was saved without an `input_signature` (TF's
    `RestoredFunction`): one program per trace the original had; a call runs
    the first whose arguments match (tensors by spec, Python values by
    equality; an argument left out takes the traced value, as a default)."""

    def __init__(self, name: str, parameters: list, concrete: list):
        self.__name__ = name
        self._parameters = parameters
        self._concrete = concrete  # [((args, kwargs) of specs, Function)]

    def __call__(self, *args, **kwargs):
        for (saved_args, saved_kwargs), fn in self._concrete:
            try:
                tensors = self._bind(saved_args, saved_kwargs, args, kwargs)
            except _NoMatch:
                continue
            return fn(*tensors)
        options = "\n".join(
            f"  Option {i + 1}: {a!r}, {k!r}"
            for i, ((a, k), _) in enumerate(self._concrete)
        )
        raise ValueError(
            "Could not find matching concrete function to call loaded from the "
            f"SavedModel. Got:\n  Positional arguments ({len(args)} total): {args!r}"
            f"\n  Keyword arguments: {kwargs!r}\n\n Expected these arguments to "
            f"match one of the following {len(self._concrete)} option(s):\n"
            f"{options}\n(jaxtape: {self.__name__!r} was saved without an "
            "input_signature, with the traces it had; give it an input_signature "
            "to accept any matching shape.)"
        )

    def _bind(self, saved_args, saved_kwargs, args, kwargs) -> list:
        if len(args) > len(saved_args):
            raise _NoMatch
        given = dict(zip(self._parameters, args))
        for key, value in kwargs.items():
            if key in given:
                raise _NoMatch
            given[key] = value
        names = self._parameters[: len(saved_args)]
        if set(given) - set(names) - set(saved_kwargs):
            raise _NoMatch
        out_args = []
        for name, saved in zip(names, saved_args):
            out_args.append(_given_or_default(saved, given, name))
        out_kwargs = {
            k: _given_or_default(v, given, k) for k, v in saved_kwargs.items()
        }
        leaves = jax.tree_util.tree_leaves(
            (tuple(out_args), out_kwargs), is_leaf=lambda x: type(x) is Tensor
        )
        return [x for x in leaves if type(x) is Tensor]

    def __repr__(self):
        return f"<jaxtape.saved_model restored function {self.__name__}>"


def _given_or_default(saved, given: dict, name: str):
    if name in given:
        return _match(saved, given[name])
    if any(type(x) is TensorSpec for x in jax.tree_util.tree_leaves(saved)):
        raise _NoMatch  # (a tensor argument has no default)
    return saved


def _restored_function(entry: dict, programs: list, variables: list):
    concrete = []
    for i, c in enumerate(entry["concrete"]):
        saved_args, saved_kwargs = _manifest.nest_of(c["inputs"], _manifest.spec_of)
        specs = [
            s
            for s in jax.tree_util.tree_leaves((tuple(saved_args), saved_kwargs))
            if type(s) is TensorSpec
        ]
        fn = _program_function(
            f"{entry['name']}_{i}",
            [f"args_{j}" for j in range(len(specs))],
            specs,
            programs[c["program"]],
            variables,
        )
        concrete.append(((tuple(saved_args), saved_kwargs), fn))
    return _RestoredFunction(entry["name"], entry["parameters"], concrete)


class _Signature:
    """A loaded signature (TF's signature `ConcreteFunction`): called with its
    inputs by name (or in order), returns a dict of its named outputs; an
    input of the wrong shape or dtype raises `InvalidArgumentError` naming
    the expected TensorSpec, as TF's does."""

    def __init__(self, name, inputs: dict, outputs: dict, function: Function):
        self.name = name
        self._inputs = inputs  # name -> TensorSpec, in the program's order
        self._outputs = outputs  # key -> TensorSpec
        self._function = function

    @property
    def structured_input_signature(self):
        return (), dict(self._inputs)

    @property
    def structured_outputs(self):
        return dict(self._outputs)

    def __call__(self, *args, **kwargs):
        names = list(self._inputs)
        if len(args) > len(names):
            raise TypeError(
                f"Signature {self.name!r} takes {len(names)} inputs ({names}); got "
                f"{len(args)} positional arguments."
            )
        values = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in self._inputs:
                raise TypeError(
                    f"Signature {self.name!r} got an unexpected keyword argument "
                    f"{key!r}; its inputs are {names}."
                )
            if key in values:
                raise TypeError(
                    f"Signature {self.name!r} got multiple values for argument {key!r}."
                )
            values[key] = value
        missing = [n for n in names if n not in values]
        if missing:
            raise TypeError(
                f"Signature {self.name!r} is missing required arguments {missing}."
            )
        tensors = []
        for i, (name, spec) in enumerate(self._inputs.items()):
            try:
                tensor, _ = _sig._bind_tensor(values[name], spec)
            except _sig._BindError as e:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Signature {self.name!r}: input #{i} {name!r} was expected to "
                    f"be {spec!r} ({e}).",
                ) from None
            tensors.append(tensor)
        return self._function(*tensors)

    def __repr__(self):
        return f"<jaxtape.saved_model signature {self.name!r}>"


class _SignatureMap(collections.abc.Mapping):
    """The loaded object's `signatures` (TF's `_SignatureMap`)."""

    def __init__(self, signatures: dict):
        self._signatures = signatures

    def __getitem__(self, key):
        return self._signatures[key]

    def __iter__(self):
        return iter(self._signatures)

    def __len__(self):
        return len(self._signatures)

    def __repr__(self):
        return f"_SignatureMap({self._signatures!r})"


def contains_saved_model(export_dir) -> bool:
    """Whether `export_dir` holds a jaxtape SavedModel (TF's function; the
    file it looks for is `manifest.json`)."""
    return os.path.isfile(os.path.join(os.fspath(export_dir), _manifest.MANIFEST))


def load(export_dir, tags=None, options=None):
    """Loads an export written by `jaxtape.saved_model.save` (TF's
    `tf.saved_model.load`); the saved object's Python code is not needed.

    Returns a `jaxtape.Module` with the saved sub-objects and Variables at
    their attribute paths, the saved functions as attributes (the same
    arguments and outputs as the originals; assigning functions still
    assign), and `signatures` (`signatures['serving_default'](x=...)`
    returns a dict of outputs). `trainable_variables` are the loaded
    trainable Variables, differentiable through the loaded functions.

    A function saved without an input_signature runs the first of its saved
    traces whose arguments match (TF's `ValueError` "Could not find matching
    concrete function" otherwise). Captured state (optimizer slots, random
    generators' states) is restored but held privately, outside `variables`.

    Errors (TF's types): `OSError` for a directory without
    `manifest.json`, `FileNotFoundError` when its variables are missing;
    ValueError for a newer format version, `DataLossError` for damaged
    variables or programs; `NotImplementedError` for a TensorFlow
    SavedModel (without jaxtape's manifest) and in a process whose JAX
    backend is not one the export was lowered for (CPU and CUDA since
    jaxtape exports both).

    Differences from TensorFlow: `tags` may only be None or `"serve"`
    (jaxtape exports have one meta graph); a loaded `tf.Module` is a
    `jaxtape.Module` with `variables`/`trainable_variables` (TF 2.21's
    revived object has neither, unless they were saved attributes); a
    signature checks its inputs' shapes against the TensorSpecs (TF's fails
    only where an op does).
    """
    if tags is not None and tags not in ("serve", ["serve"], ("serve",), {"serve"}):
        raise NotImplementedError(
            f"saved_model.load(tags={tags!r}) is not supported by jaxtape: its "
            "exports hold one set of functions; pass tags=None."
        )
    if options is not None:
        if not isinstance(options, LoadOptions):
            raise TypeError(
                f"saved_model.load: options must be a LoadOptions, got {options!r}."
            )
        options._check_supported()
    export_dir = os.path.abspath(os.fspath(export_dir))
    if not os.path.lexists(export_dir):  # a save killed between its two renames
        parent, name = os.path.split(export_dir)
        storage.remove_leftovers(parent, re.escape(name))
    manifest = _manifest.read(export_dir)
    platforms = manifest.get("platforms", ["cpu"])
    backend = jax.default_backend()  # ('gpu' for CUDA and ROCm; exports name them)
    if not set(_PLATFORM_NAMES.get(backend, (backend,))) & set(platforms):
        raise NotImplementedError(
            f"{export_dir} was exported for {platforms}, but this process computes "
            f"on {backend!r}. Load it in a process started with JAX_PLATFORMS=cpu, "
            "or export it again with a jaxtape that lowers for this platform."
        )
    values = _read_variables(os.path.join(export_dir, _manifest.VARIABLES))
    root = _Loaded()
    objects: dict[str, object] = {"": root}
    variables = []
    by_path = {}
    for entry in manifest["variables"]:
        path = entry["path"]
        if path not in values:
            raise errors.NotFoundError(
                None,
                None,
                f"The variables of {export_dir} have no value for {path!r}; the "
                "export is incomplete. Save the model again.",
            )
        value = values[path]
        v = Variable(
            value.astype(np.dtype(entry["dtype"])).reshape(entry["shape"]),
            trainable=entry["trainable"],
            name=entry["name"].rsplit(":", 1)[0],
            dtype=np.dtype(entry["dtype"]),
        )
        variables.append(v)
        if entry.get("captured"):
            root.__dict__.setdefault("_captured", []).append(v)
        by_path[path] = v
    for path, kind in manifest["objects"]:
        if kind == "variable":
            obj = by_path[path]
        elif kind == "list":
            obj = []
        elif kind == "dict":
            obj = {}
        else:
            obj = _Loaded(_module_name(path))
        _attach(objects, path, obj)
        objects[path] = obj
    for path, target in manifest.get("references", ()):  # (shared objects)
        _attach(objects, path, objects[target])
    programs = [_read_program(export_dir, p) for p in manifest["programs"]]
    for entry in manifest["functions"]:
        if "concrete" in entry:  # (a function saved without input_signature)
            fn = _restored_function(entry, programs, variables)
        else:
            specs = _manifest.nest_of(entry["input_signature"], _manifest.spec_of)
            fn = _program_function(
                entry["name"],
                entry["parameters"],
                specs,
                programs[entry["program"]],
                variables,
            )
        target = objects[entry["object"]]
        if isinstance(target, Module):
            setattr(target, entry["name"], fn)
    signatures = {}
    for name, entry in manifest["signatures"].items():
        inputs = {k: _manifest.spec_of(e) for k, e in entry["inputs"]["dict"]}
        outputs = {k: _manifest.spec_of(e) for k, e in entry["outputs"]["dict"]}
        params = [f"args_{i}" for i in range(len(inputs))]
        fn = _program_function(
            name,
            params,
            [TensorSpec(s.shape, s.dtype) for s in inputs.values()],
            (*programs[entry["program"]][:3], entry["outputs"]),
            variables,
        )
        outputs = {k: TensorSpec(s.shape, s.dtype, k) for k, s in outputs.items()}
        inputs = {k: TensorSpec(s.shape, s.dtype, k) for k, s in inputs.items()}
        signatures[name] = _Signature(name, inputs, outputs, fn)
    root.signatures = _SignatureMap(signatures)
    return root


_PLATFORM_NAMES = {"gpu": ("cuda", "rocm")}  # JAX's backend name -> export names


def _module_name(path: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", path.rsplit("/", 1)[-1])
    return name if name[:1].isalpha() or name[:1] == "_" else f"_{name}"


def _attach(objects: dict, path: str, obj) -> None:
    parent_path, _, name = path.rpartition("/")
    parent = objects[parent_path]
    name = name.replace(".S", "/")
    if isinstance(parent, list):  # (by index: an item saved under another
        index = int(name)  # path first leaves None in its place here)
        parent.extend([None] * (index + 1 - len(parent)))
        parent[index] = obj
    elif isinstance(parent, dict):
        parent[name] = obj
    else:  # (into its __dict__: a saved `variables` list beside the property)
        vars(parent)[name] = obj


def _read_variables(path: str) -> dict:
    """The saved values; TF's FileNotFoundError when the variables are gone."""
    if not os.path.isdir(path):
        raise FileNotFoundError(
            f"Failed to find any matching files for {path}: the export's variables "
            "are missing. Copy the whole export directory, or save the model again."
        )
    return storage.read(path)


def _read_program(export_dir: str, entry: dict):
    path = os.path.join(export_dir, entry["file"])
    try:
        with open(path, "rb") as f:
            exported = jax.export.deserialize(bytearray(f.read()))
    except FileNotFoundError:
        raise errors.NotFoundError(
            None,
            None,
            f"The exported program {path} is missing; the export is incomplete. "
            "Save the model again.",
        ) from None
    except Exception as e:
        raise errors.DataLossError(
            None,
            None,
            f"The exported program {path} cannot be read ({type(e).__name__}: {e}). "
            "Save the model again.",
        ) from e
    return exported, entry["variables"], entry["written"], entry["outputs"]
