"""Keras 3's `keras.export.ExportArchive` and `Model.export`'s SavedModel. Layer L6.

As Keras's TensorFlow backend: an archive gathers endpoints (a
`jaxtape.function` per endpoint, with the endpoint's input signature) and
the Variables of the layers it tracks (`variables`, `trainable_variables`,
`non_trainable_variables`, named variable collections) on one object, which
`write_out` saves with `saved_model.save`, every endpoint also a signature
(the first one as `serving_default` too). The Variables that the endpoints
use are saved too, tracked or not (Keras's `_all_variables`). Importing this
module installs `export_saved_model` as `Model.export`'s
`"tf_saved_model"` exporter (keras is one layer down).
"""

from __future__ import annotations

from jaxtape._src.function.concrete import ConcreteFunction
from jaxtape._src.function.function import Function
from jaxtape._src.keras import export as _keras_export
from jaxtape._src.keras.keras_tensor import map_structure
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.progbar import print_msg
from jaxtape._src.saved_model.save import exportable_trace, save
from jaxtape._src.state import trackable
from jaxtape._src.state.module import Module
from jaxtape._src.state.variable import Variable

DEFAULT_ENDPOINT_NAME = _keras_export.DEFAULT_ENDPOINT_NAME
_JAX_ONLY = ("jax2tf_kwargs", "is_static")


class _SavedList(list):
    """A list that is saved even when empty (Keras's AutoTrackable saves its
    empty lists: `loaded.variables` of an archive that tracked nothing is
    `[]`)."""

    def _trackable_children(self) -> dict:
        return {str(i): v for i, v in enumerate(self)}


class _ArchiveObject:
    """What `write_out` saves (Keras's `_tf_trackable`, an AutoTrackable):
    the Variable lists and collections, the endpoints, and the Variables the
    endpoints use (`_all_variables`)."""

    def __init__(self):
        self.variables = _SavedList()
        self.trainable_variables = _SavedList()
        self.non_trainable_variables = _SavedList()
        self._all_variables: list = []  # (set by `write_out`)

    def _trackable_children(self) -> dict:
        items = [(k, v) for k, v in vars(self).items() if trackable._is_trackable(v)]
        public = [(k, v) for k, v in items if not k.startswith("_")]
        return dict(public + [(k, v) for k, v in items if k.startswith("_")])


class ExportArchive:
    """Writes an inference export of Keras layers and functions (Keras 3's
    `keras.export.ExportArchive`, as on its TensorFlow backend).

    `track(layer)` adds a built layer's Variables to the export's
    `variables` / `trainable_variables` / `non_trainable_variables`;
    `add_endpoint(name, fn, input_signature)` makes `fn` an endpoint (a
    `jaxtape.function` with that signature; a `jaxtape.function` that was
    called needs none); `add_variable_collection(name, variables)` saves a
    list of Variables as `loaded.<name>`; `write_out(path)` writes it with
    `jaxtape.saved_model.save`, every endpoint also a signature and the
    first one also `serving_default`.

    >>> import tempfile
    >>> model = jaxtape.keras.Sequential([jaxtape.keras.Input((3,)),
    ...                                   jaxtape.keras.layers.Dense(2)])
    >>> archive = jaxtape.keras.export.ExportArchive()
    >>> archive.track(model)
    >>> fn = archive.add_endpoint(
    ...     "serve", model.call,
    ...     [jaxtape.keras.InputSpec(shape=(None, 3), dtype="float32")])
    >>> path = tempfile.mkdtemp() + "/archive"
    >>> archive.write_out(path, verbose=False)
    >>> loaded = jaxtape.saved_model.load(path)
    >>> loaded.serve(np.ones((4, 3), np.float32)).shape
    TensorShape([4, 2])

    Differences from Keras: the export is a `jaxtape.saved_model` directory
    (`jax.export` programs for CPU and CUDA, see `saved_model.save`), and a
    TensorFlow SavedModel too only with `write_out(path,
    options=jaxtape.saved_model.SaveOptions(tf_saved_model=True))`; lookup tables
    and other TensorFlow resources are not exported (`track` keeps them, as Keras
    does for non-layer trackables, but only Variables reach the export); keyword
    arguments of `add_endpoint` other than Keras's JAX-only ones raise
    NotImplementedError (Keras's TensorFlow backend ignores them); the printed
    signatures list the Variables under "Captures" with their shapes (TF:
    `dtype=tf.resource`).
    """

    def __init__(self, format="saved_model"):  # noqa: A002 - Keras's name
        if format == "neptune_model":
            raise NotImplementedError(
                "ExportArchive(format='neptune_model') is not supported by jaxtape; "
                "use format='saved_model'."
            )
        if format != "saved_model":
            raise ValueError(f"Unsupported format: {format}")
        self._endpoint_names: list[str] = []
        self._endpoint_signatures: dict = {}
        self._tracked: list = []
        self._tf_trackable = _ArchiveObject()

    @property
    def variables(self) -> list:
        return self._tf_trackable.variables

    @property
    def trainable_variables(self) -> list:
        return self._tf_trackable.trainable_variables

    @property
    def non_trainable_variables(self) -> list:
        return self._tf_trackable.non_trainable_variables

    def track(self, resource) -> None:
        """Tracks a built layer's Variables (or keeps another trackable
        object, as Keras keeps TensorFlow trackables)."""
        if isinstance(resource, Layer):
            if not resource.built:
                raise ValueError(
                    "The layer provided has not yet been built. "
                    "It must be built before export."
                )
            self._tracked.append(resource)
            archive = self._tf_trackable
            archive.variables += resource.variables
            archive.trainable_variables += resource.trainable_variables
            archive.non_trainable_variables += resource.non_trainable_variables
        elif isinstance(resource, (Module, Variable)) or hasattr(
            resource, "_trackable_children"
        ):
            self._tracked.append(resource)
        else:
            raise ValueError(
                "Invalid resource type. Expected a Keras `Layer` or `Model` "
                "or a TensorFlow `Trackable` object. "
                f"Received object {resource} of type '{type(resource)}'. "
            )

    def add_endpoint(self, name, fn, input_signature=None, **kwargs):
        """Makes `fn` the endpoint `name` (`loaded.<name>` and a signature):
        a `jaxtape.function` of `fn` with `input_signature` (a structure of
        InputSpecs, TensorSpecs, KerasTensors or tensors), or `fn` itself if
        it is a `jaxtape.function` that was called and no signature is
        given. Returns the endpoint's `jaxtape.function`."""
        if name in self._endpoint_names:
            raise ValueError(f"Endpoint name '{name}' is already taken.")
        jax_only = [k for k in _JAX_ONLY if k in kwargs]
        if jax_only:
            raise ValueError(
                "'jax2tf_kwargs' and 'is_static' are only supported with "
                "the jax backend. Current backend: tensorflow"
            )
        if kwargs:
            raise NotImplementedError(
                f"ExportArchive.add_endpoint: the keyword arguments {sorted(kwargs)} "
                "are not supported by jaxtape (Keras's TensorFlow backend ignores "
                "them); leave them out."
            )
        if input_signature is None:
            if not isinstance(fn, Function):
                raise ValueError(
                    "If the `fn` argument provided is not a `tf.function`, "
                    "you must provide an `input_signature` argument to "
                    "specify the shape and dtype of the function arguments. "
                    "Example:\n\n"
                    "export_archive.add_endpoint(\n"
                    "    name='call',\n"
                    "    fn=model.call,\n"
                    "    input_signature=[\n"
                    "        keras.InputSpec(\n"
                    "            shape=(None, 224, 224, 3),\n"
                    "            dtype='float32',\n"
                    "        )\n"
                    "    ],\n"
                    ")"
                )
            if not fn._traces and fn.input_signature is None:
                raise ValueError(
                    f"The provided tf.function '{fn}' "
                    "has never been called. "
                    "To specify the expected shape and dtype "
                    "of the function's arguments, "
                    "you must either provide a function that "
                    "has been called at least once, or alternatively pass "
                    "an `input_signature` argument in `add_endpoint()`."
                )
            decorated_fn = fn
        else:
            input_signature = map_structure(
                _keras_export.make_tensor_spec, input_signature
            )
            decorated_fn = Function(
                _as_keras_call(fn),
                input_signature=input_signature,
                autograph=False,
                name=name,
            )
            self._endpoint_signatures[name] = input_signature
        setattr(self._tf_trackable, name, decorated_fn)
        self._endpoint_names.append(name)
        return decorated_fn

    def track_and_add_endpoint(self, name, resource, input_signature, **kwargs):
        """`track(resource)`, then `resource`'s `__call__` as the endpoint."""
        self.track(resource)
        return self.add_endpoint(name, resource.__call__, input_signature, **kwargs)

    def add_variable_collection(self, name, variables) -> None:
        """Saves `variables` (a list, tuple or set of Variables) as the list
        `loaded.<name>`."""
        if not isinstance(variables, (list, tuple, set)):
            raise ValueError(
                "Expected `variables` to be a list/tuple/set. "
                f"Received instead object of type '{type(variables)}'."
            )
        if not all(isinstance(v, Variable) for v in variables):
            raise ValueError(
                "Expected all elements in `variables` to be "
                "`tf.Variable` instances. Found instead the following types: "
                f"{list(set(type(v) for v in variables))}"
            )
        setattr(self._tf_trackable, name, _SavedList(variables))

    def write_out(self, filepath, options=None, verbose=True) -> None:
        """Writes the export to `filepath` (`saved_model.save`, atomically;
        `options` is its `SaveOptions`) and, when `verbose`, prints the
        endpoints' signatures as Keras does."""
        if not self._endpoint_names:
            raise ValueError("No endpoints have been set yet. Call add_endpoint().")
        concrete = {name: self._concrete_fn(name) for name in self._endpoint_names}
        self._track_used_variables(concrete.values())
        signatures = {name: self._signature_fn(name) for name in self._endpoint_names}
        if "serving_default" not in signatures:
            signatures["serving_default"] = signatures[self._endpoint_names[0]]
        save(self._tf_trackable, filepath, signatures=signatures, options=options)
        if verbose:
            endpoints = "\n\n".join(
                _printed_signature(concrete[name], name)
                for name in self._endpoint_names
            )
            print_msg(
                f"Saved artifact at '{filepath}'. "
                "The following endpoints are available:\n\n"
                f"{endpoints}"
            )

    def _concrete_fn(self, name) -> ConcreteFunction:
        """The endpoint's trace (its first, for a function without a signature)."""
        fn = getattr(self._tf_trackable, name)
        if fn.input_signature is not None:  # (as `save` will trace it)
            return ConcreteFunction(fn, exportable_trace(fn))
        first = min(fn._traces.values(), key=lambda t: t.serial)
        return ConcreteFunction(fn, first)

    def _signature_fn(self, name):
        fn = getattr(self._tf_trackable, name)
        return fn if fn.input_signature is not None else self._concrete_fn(name)

    def _track_used_variables(self, concrete) -> None:
        """Keras's `_all_variables`: the endpoints' Variables, trainable first."""
        used = {}
        for c in concrete:
            for v in c.captured_inputs:
                used.setdefault(id(v), v)
        ordered = sorted(used.values(), key=lambda v: not v.trainable)
        self._tf_trackable._all_variables = ordered


def _as_keras_call(fn):
    """`fn`; a layer or its `__call__` as Keras's `Layer.__call__(*args,
    **kwargs)`, whose endpoint arguments are `args_0`, `args_1`, ..."""
    owner = getattr(fn, "__self__", None)
    if isinstance(fn, Layer):
        layer = fn
    elif isinstance(owner, Layer) and getattr(fn, "__name__", "") == "__call__":
        layer = owner
    else:
        return fn

    def __call__(*args, **kwargs):  # noqa: N807 - the name Keras's endpoint shows
        return layer(*args, **kwargs)

    return __call__


def _printed_signature(concrete: ConcreteFunction, name: str) -> str:
    """Keras's `_print_signature`: TF's text with "* Endpoint 'name'" first."""
    lines = concrete.pretty_printed_signature(verbose=True).split("\n")
    return "\n".join([f"* Endpoint '{name}'", *lines[1:]])


def export_saved_model(model, filepath, verbose=None, input_signature=None, **kwargs):
    """Keras's `export_saved_model`: `model` tracked, its `__call__` the
    `serve` endpoint for `input_signature` (default: the model's inputs with
    the batch size None), written to `filepath`. jaxtape's `options=`
    (a `jaxtape.saved_model.SaveOptions`) goes to `write_out`:
    `SaveOptions(tf_saved_model=True)` also writes a TensorFlow SavedModel
    there (Keras's TensorFlow backend passes unknown keywords to
    `add_endpoint`, which ignores them)."""
    if verbose is None:
        verbose = True
    options = kwargs.pop("options", None)
    archive = ExportArchive()
    if input_signature is None:
        input_signature = _keras_export.get_input_signature(model)
    archive.track_and_add_endpoint(
        DEFAULT_ENDPOINT_NAME, model, input_signature, **kwargs
    )
    archive.write_out(filepath, options=options, verbose=verbose)


_keras_export.install_saved_model_exporter(export_saved_model)
