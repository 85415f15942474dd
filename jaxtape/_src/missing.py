"""TensorFlow names jaxtape does not have yet: their error, stub namespaces, coverage.

Every public namespace module ends with

    __getattr__ = _missing.module_getattr(__name__)

so that a name TensorFlow has and jaxtape lacks raises
`NotImplementedInJaxtapeError` ("`tf.image.resize` is not implemented in
jaxtape yet ..."), a TF namespace jaxtape lacks entirely (`tf.image`) is a
`MissingNamespace` module whose every TF name says so, and a name TensorFlow
does not have either keeps Python's own AttributeError. TF's name list is
data (`tf_api_names.py`, written by `tools/gen_tf_api_names.py`); it is read
on the first missing name, never at import. Nothing is added to a module's
`__dict__`, so `dir()` and tab completion list only what jaxtape has.

Where Python has the last word: stub namespaces are attributes, not importable
modules (`from jaxtape import image` works, `import jaxtape.image` raises
ModuleNotFoundError), and `from jaxtape.math import <missing name>` raises
Python's own ImportError ("cannot import name ..."): the import statement
replaces any AttributeError with its own.

Imports nothing from jaxtape's layers: every layer may use it.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import types

_POINTER = (
    'The README\'s "What is supported" section lists what jaxtape has '
    "(`python tools/api_coverage.py` prints the name-by-name coverage); "
    "open an issue to ask for this one."
)


class NotImplementedInJaxtapeError(AttributeError, NotImplementedError):
    """A TensorFlow name that jaxtape does not implement yet.

    An `AttributeError`, so `hasattr(tf, name)` answers False and
    `getattr(tf, name, default)` returns the default, as for any missing
    attribute; also a `NotImplementedError`, which is what it means.

    >>> hasattr(jaxtape.compat.v1, "placeholder")  # graph-mode TF1, not eager
    False
    """


class MissingNamespace(types.ModuleType):
    """A TensorFlow namespace jaxtape lacks (`tf.image`): every TF name in it,
    and in the namespaces below it, raises `NotImplementedInJaxtapeError`."""

    def __getattr__(self, name: str):
        return _resolve(self, name)

    def __repr__(self) -> str:
        return f"<module {self.__name__!r} (not implemented in jaxtape yet)>"


def module_getattr(module_name: str):
    """The module-level `__getattr__` of the public namespace `module_name`."""

    def __getattr__(name: str):
        return _resolve(sys.modules[module_name], name)

    return __getattr__


def tf_path(module_name: str) -> str:
    """`jaxtape.keras.layers` -> `tf.keras.layers` (the name a TF user wrote)."""
    return "tf" + module_name[len("jaxtape") :]


@functools.cache
def tf_api() -> dict[str, frozenset[str]]:
    """TF's public names by namespace: `{"tf.math": {"abs", ...}, ...}`."""
    from jaxtape._src import tf_api_names

    names: dict[str, set[str]] = {}
    for dotted in tf_api_names.NAMES.split():
        parent, _, name = dotted.rpartition(".")
        names.setdefault(parent, set()).add(name)
    return {parent: frozenset(children) for parent, children in names.items()}


def not_implemented_message(dotted: str) -> str:
    """The message of `NotImplementedInJaxtapeError` for TF's `dotted` name."""
    from jaxtape._src import tf_api_names

    return (
        f"`{dotted}` is not implemented in jaxtape yet (TensorFlow "
        f"{tf_api_names.TF_VERSION} has it). {_POINTER}"
    )


_stubs: dict[str, MissingNamespace] = {}


def _resolve(module: types.ModuleType, name: str):
    """`module.name` for a name not in `module.__dict__`: a stub namespace, or
    the not-implemented error, or Python's own AttributeError."""
    module_name = module.__name__
    if not name.startswith("_"):  # dunders and private probes never load the data
        parent = tf_path(module_name)
        api = tf_api()
        if name in api.get(parent, ()):
            full_name = f"{module_name}.{name}"
            if f"{parent}.{name}" in api:  # a namespace
                return _namespace(module, full_name)
            raise NotImplementedInJaxtapeError(
                not_implemented_message(f"{parent}.{name}"), name=name, obj=module
            )
    raise AttributeError(
        f"module {module_name!r} has no attribute {name!r}", name=name, obj=module
    )


def _namespace(parent: types.ModuleType, full_name: str) -> types.ModuleType:
    # A real module file that its parent does not import yet wins over a stub.
    if not isinstance(parent, MissingNamespace) and hasattr(parent, "__path__"):
        if importlib.util.find_spec(full_name) is not None:
            return importlib.import_module(full_name)
    stub = _stubs.get(full_name)
    if stub is None:
        stub = MissingNamespace(
            full_name,
            f"`{tf_path(full_name)}`: not implemented in jaxtape yet; every "
            "TensorFlow name in it raises `NotImplementedInJaxtapeError`.",
        )
        stub = _stubs.setdefault(full_name, stub)
    return stub


def coverage(root: types.ModuleType) -> dict[str, tuple[list[str], list[str]]]:
    """For each TF namespace: (TF names jaxtape has, TF names it lacks), sorted.

    `root` is the `jaxtape` package. A stub namespace counts as lacking; a
    name that answers anything but an object or `NotImplementedInJaxtapeError`
    propagates its error (a bug in the namespace).
    """
    table = {}
    for namespace, names in sorted(tf_api().items()):
        module = root
        for part in namespace.split(".")[1:]:
            module = getattr(module, part)
        present, lacking = [], []
        for name in sorted(names):
            try:
                value = getattr(module, name)
            except NotImplementedInJaxtapeError:
                lacking.append(name)
            else:
                (lacking if isinstance(value, MissingNamespace) else present).append(
                    name
                )
        table[namespace] = (present, lacking)
    return table
