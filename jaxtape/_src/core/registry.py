"""Keras's names for objects: the one table behind every `get(identifier)`. Layer L0.

Keras turns a name (`'adam'`, `'Adam'`, `'glorot_uniform'`), a serialized
config (`{'class_name': ..., 'config': ..., 'registered_name': ...}`) or an
object into a loss, metric, optimizer, initializer, activation, regularizer
or layer. Each of those is a `Kind` here, which its own module fills with its
built-ins under Keras's names (the class name, its snake case, the function
names and Keras's aliases). User classes and functions registered with
`register_keras_serializable(package, name)` are found by their
`'package>name'`, as Keras finds them when it loads a `.keras` file; a
`custom_object_scope` or a `custom_objects` argument adds more, by name.

It lives in `core` because the kinds' modules are peers in L4 and L5
(losses, metrics, optimizers, initializers, keras) that may not import each
other; nothing here imports jaxtape.

>>> losses = Kind("loss", "keras.losses")
>>> def mse(y_true, y_pred): ...
>>> _ = losses.add(mse, "MSE")
>>> losses.get("MSE") is mse
True
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any, TypeGuard

_GLOBAL: dict = {}  # 'package>name' -> class or function (register_keras_serializable)
_NAMES: dict = {}  # class or function -> 'package>name'


class _Scopes(threading.local):
    def __init__(self):
        self.stack: list[dict] = []  # custom_object_scope dicts, innermost last


_scopes = _Scopes()


def snake_case(name: str) -> str:
    """Keras's `to_snake_case` (`'CategoricalCrossentropy'` ->
    `'categorical_crossentropy'`, `'L1L2'` -> `'l1l2'`)."""
    name = re.sub(r"\W+", "", name)
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


# -- user objects ---------------------------------------------------------------------
def register_keras_serializable(package: str = "Custom", name: str | None = None):
    """Registers a class or function under `'package>name'` (Keras's decorator).

    A registered class is written to `.keras` files with that
    `registered_name` and found by it when the file is loaded (by jaxtape or
    tf.keras, where the same class is registered under the same name); a
    registered function is saved as its registered name.

    >>> @register_keras_serializable("my_package")
    ... def twice(x):
    ...     return 2 * x
    >>> get_registered_name(twice)
    'my_package>twice'
    """

    def decorator(arg):
        registered = f"{package}>{name if name is not None else arg.__name__}"
        if isinstance(arg, type) and not hasattr(arg, "get_config"):
            raise ValueError(
                "Cannot register a class that does not have a get_config() method."
            )
        _GLOBAL[registered] = arg
        _NAMES[arg] = registered
        return arg

    return decorator


def get_registered_name(obj) -> str:
    """`'package>name'` for a registered object, else its `__name__` (Keras's)."""
    try:
        return _NAMES[obj]
    except (KeyError, TypeError):  # (an unhashable object is not registered)
        return obj.__name__


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The user's object called `name`: the innermost `custom_object_scope`,
    then the registered ones, then `custom_objects`, then `module_objects`;
    None when none has it (Keras's order)."""
    if not isinstance(name, str):
        return None
    for scope in reversed(_scopes.stack):
        if name in scope:
            return scope[name]
    for table in (_GLOBAL, custom_objects, module_objects):
        if table and name in table:
            return table[name]
    return None


def get_custom_objects() -> dict:
    """The live dict of registered objects (`{'package>name': object}`); names
    put in it directly are found too, as in Keras."""
    return _GLOBAL


class CustomObjectScope:
    """`with custom_object_scope({'name': obj}):` makes `obj` findable by name
    while loading (Keras's `CustomObjectScope`)."""

    def __init__(self, custom_objects=None):
        self.custom_objects = dict(custom_objects or {})

    def __enter__(self):
        _scopes.stack.append(self.custom_objects)
        return self

    def __exit__(self, *exc):
        _scopes.stack.pop()
        return False


custom_object_scope = CustomObjectScope


# -- kinds ----------------------------------------------------------------------------
class _NotFound(TypeError):
    """A config names a class or function that no table knows."""


def _is_class(obj: object) -> TypeGuard[type]:
    return isinstance(obj, type)


class Kind:
    """One kind of Keras object (`'loss'`, `'optimizer'`, ...) and its names.

    Args:
      kind: the word in TF's error, `Could not interpret {kind} identifier: ...`.
      module: Keras's module of the built-ins (`'keras.losses'`), written into
        serialized configs.
      lowercase: names are looked up lower-cased (Keras's optimizers); else
        exactly, as Keras's other kinds.
      none: what `get(None)` returns (None; `linear` for activations).
      accept: whether a resolved object is of this kind (default: callable).
      instantiate: `get(SomeClass)` returns `SomeClass()` (not for optimizers).
      locate_errors: `get` of a config naming an unknown class raises Keras's
        TypeError "Could not locate class" (activations), not TF's ValueError.
      snake_case_classes: a class is found by its snake-case name too (Keras's
        metrics, initializers, regularizers; its losses and optimizers not).
    """

    def __init__(
        self, kind: str, module: str, *, lowercase: bool = False, none: Any = None,
        accept: Callable[[Any], bool] = callable, instantiate: bool = True,
        locate_errors: bool = False, snake_case_classes: bool = True,
    ) -> None:  # fmt: skip
        self.kind, self.module = kind, module
        self._lowercase, self._locate_errors = lowercase, locate_errors
        self._snake = snake_case_classes
        self._none, self._accept, self._instantiate = none, accept, instantiate
        self._by_name: dict = {}
        self._builtins: set[int] = set()

    def _key(self, name: str) -> str:
        return name.lower() if self._lowercase else name

    def add(self, obj, *aliases: str):
        """Registers a built-in under its `__name__` (and, for a class, its snake
        case) and `aliases`; returns it, so it can decorate."""
        names = [obj.__name__, *aliases]
        if _is_class(obj) and self._snake:
            names.append(snake_case(obj.__name__))
        for name in names:
            self._by_name.setdefault(self._key(name), obj)
        self._builtins.add(id(obj))
        return obj

    def builtin(self, name):
        """The built-in called `name` (Keras's case rule), or None."""
        return self._by_name.get(self._key(name)) if isinstance(name, str) else None

    def is_builtin(self, obj) -> bool:
        return id(obj) in self._builtins

    def names(self) -> list:
        """The built-ins' snake-case and function names, sorted (for errors)."""
        return sorted(n for n in self._by_name if n == n.lower())

    def lookup(self, name, custom_objects=None):
        """A built-in by name, else a user object by name (`'package>name'`)."""
        found = self.builtin(name)
        if found is None:
            found = get_registered_object(name, custom_objects)
        return found

    def resolve(self, class_name, registered_name=None, custom_objects=None):
        """The class (or function) a serialized config names: the user's by its
        registered name or class name first, then the built-in, as Keras."""
        for name in (registered_name, class_name):
            found = get_registered_object(name, custom_objects)
            if found is not None:
                return found
        return self.builtin(class_name)

    def deserialize(self, config, custom_objects=None):
        """The object of a serialized config (Keras's `deserialize_keras_object`
        for this kind); a name resolves as `get` resolves it."""
        if isinstance(config, str):
            return self.get(config, custom_objects)
        if not isinstance(config, dict) or "class_name" not in config:
            raise self.error(config)
        class_name, inner = config["class_name"], config.get("config")
        if class_name == "function":  # a function, saved by (registered) name
            found = self.lookup(inner, custom_objects)
            if found is None:
                raise self.not_found("function", inner, config)
            return found
        found = self.resolve(class_name, config.get("registered_name"), custom_objects)
        if found is None:
            raise self.not_found("class", class_name, config)
        if not _is_class(found):
            return found
        with CustomObjectScope(custom_objects):
            return found.from_config(dict(inner or {}))

    def get(self, identifier: Any, custom_objects: dict | None = None) -> Any:
        """Keras's `get`: None, a name, a serialized config, a class or an object."""
        if identifier is None:
            return self._none
        if isinstance(identifier, dict):
            try:
                obj = self.deserialize(identifier, custom_objects)
            except _NotFound:  # unknown class: Keras's `get` says "interpret"
                if self._locate_errors:
                    raise
                raise self.error(identifier) from None
        elif isinstance(identifier, str):
            obj = self.lookup(identifier, custom_objects)
            if _is_class(obj):
                obj = obj()
        else:
            obj = identifier
            if _is_class(obj) and self._instantiate:
                obj = obj()
        if obj is None or _is_class(obj) or not self._accept(obj):
            raise self.error(identifier)
        return obj

    def serialize(self, obj: object) -> dict | None:
        """Keras's `serialize_keras_object` for an object of this kind (or None)."""
        return None if obj is None else self.serialize_object(obj)

    def serialize_object(self, obj: Any) -> dict:
        """`serialize` of an object (not None)."""
        if not hasattr(obj, "get_config"):  # a function: saved by name
            return {
                "module": self.module if self.is_builtin(obj) else "builtins",
                "class_name": "function",
                "config": get_registered_name(obj),
                "registered_name": "function",
            }
        cls = type(obj)
        builtin = self.is_builtin(cls)
        return {
            "module": self.module if builtin else cls.__module__,
            "class_name": cls.__name__,
            "config": obj.get_config(),
            "registered_name": None if builtin else get_registered_name(cls),
        }

    def error(self, identifier) -> ValueError:
        """TF's error for an identifier that names nothing of this kind."""
        return ValueError(
            f"Could not interpret {self.kind} identifier: {identifier}. (Unknown "
            f"{self.kind}: the built-in names are {', '.join(self.names())}; a "
            "custom one is passed as an object, or registered with "
            "`keras.saving.register_keras_serializable()`.)"
        )

    def not_found(self, what, name, config) -> TypeError:
        """Keras's error for a config whose class or function is not known."""
        return _NotFound(
            f"Could not locate {what} '{name}'. Make sure custom classes and "
            "functions are decorated with "
            "`@keras.saving.register_keras_serializable()`. If they are already "
            "decorated, make sure they are all imported so that the decorator is "
            f"run before trying to load them. Full object config: {config}"
        )
