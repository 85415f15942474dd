"""`Module` (TF's `tf.Module`) and `name_scope`. Layer L2.

A Module finds its variables and submodules by walking its attributes
(including lists, tuples and dicts of them) with `graph.walk`, in TF's order:
attributes sorted by name, each module's own before its submodules'.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Sequence
from typing import Any

from jaxtape._src.core import context
from jaxtape._src.state import graph
from jaxtape._src.state import scope as _scope
from jaxtape._src.state.variable import Variable


class name_scope:  # noqa: N801 - TF's public name
    """A context manager that prefixes the names of variables created inside it.

    `name_scope("a/b/")` (trailing slash) replaces the scope instead of nesting.

    >>> with jaxtape.name_scope("block"):
    ...     v = jaxtape.Variable(1.0, name="w")
    >>> v.name
    'block/w:0'
    """

    def __init__(self, name: str):
        if not isinstance(name, str):
            raise TypeError(f"name_scope expects a string name; got {name!r}.")
        self._name = name
        self._cm = None

    @property
    def name(self) -> str:
        return self._name

    def __enter__(self) -> str:
        if self._name.endswith("/") or self._name == "":
            self._cm = context.absolute_name_scope(self._name)
        else:
            self._cm = context.push_name_scope(self._name)
        return self._cm.__enter__()

    def __exit__(self, *exc: Any) -> bool | None:
        if self._cm is None:
            raise RuntimeError(
                "name_scope.__exit__ without __enter__: use the scope in a "
                "`with jaxtape.name_scope(...):` block."
            )
        return self._cm.__exit__(*exc)


def get_current_name_scope() -> str:
    """The current name scope's path, `'outer/inner'` ('' at top level)."""
    return context.current_name_scope().rstrip("/")


class control_dependencies:  # noqa: N801 - TF's public name
    """TF's `tf.control_dependencies`: ops inside run after `control_inputs`.

    Eagerly every op runs when called, in program order; inside
    `jaxtape.function` the traced program keeps the order of its effects
    (assignments, prints, checks, py_functions) as TF 2's automatic control
    dependencies do, so the context has nothing left to add and only checks
    its argument.
    """

    def __init__(self, control_inputs):
        if control_inputs is not None and not hasattr(control_inputs, "__iter__"):
            raise TypeError(
                "control_dependencies expects a list of tensors or ops (or None); "
                f"got {control_inputs!r}."
            )
        self.control_inputs = control_inputs

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return False


def _camel_to_snake(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


_VALID_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


class Module:
    """Base class of objects that own variables and submodules (TF's `tf.Module`).

    >>> class Dense(jaxtape.Module):
    ...     def __init__(self, n_in, n_out, name=None):
    ...         super().__init__(name=name)
    ...         self.w = jaxtape.Variable(jaxtape.ones([n_in, n_out]), name="w")
    ...         with self.name_scope:
    ...             self.b = jaxtape.Variable(jaxtape.zeros([n_out]), name="b")
    >>> [v.name for v in Dense(2, 3, name="d").trainable_variables]
    ['d/b:0', 'w:0']

    As in TF, only variables created inside `with self.name_scope:` (or in
    methods wrapped with `Module.with_name_scope`) get the module's name as a
    prefix.
    """

    _TF_MODULE_IGNORED_PROPERTIES = frozenset()

    def __init__(self, name: str | None = None):
        if name is None:
            name = _camel_to_snake(type(self).__name__)
        elif not _VALID_NAME.match(name):
            raise ValueError(
                f"{name!r} is not a valid module name. Module names must be valid "
                "Python identifiers (e.g. a valid class name)."
            )
        self._name = name
        with name_scope(name) as scope_name:
            self._scope_name = scope_name

    @property
    def name(self) -> str:
        return self._name

    @property
    def name_scope(self):
        """A context manager entering this module's name scope."""
        return name_scope(self._scope_name)

    @property
    def variables(self) -> Sequence[Variable]:
        """All variables of this module and its submodules (deduplicated)."""
        return tuple(self._flatten(lambda o: isinstance(o, Variable)))

    @property
    def trainable_variables(self) -> Sequence[Variable]:
        """The trainable variables of this module and its submodules."""
        return tuple(self._flatten(lambda o: isinstance(o, Variable) and o.trainable))

    @property
    def non_trainable_variables(self) -> Sequence[Variable]:
        return tuple(
            self._flatten(lambda o: isinstance(o, Variable) and not o.trainable)
        )

    @property
    def submodules(self) -> tuple:
        """All modules reachable from this one's attributes (not including itself)."""
        return tuple(self._flatten(lambda o: isinstance(o, Module)))

    def _flatten(self, predicate, recursive: bool = True) -> list:
        """What `predicate` accepts among the Variables and Modules reachable
        from this module, in TF's order (`module_children`, each module's
        attributes before its submodules')."""

        def direct(obj):  # `recursive=False`: this module's own attributes only
            return module_children(obj) if obj is self else []

        view = module_children if recursive else direct
        return [o for _, o in graph.walk(self, view, "siblings") if predicate(o)]

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: runs `method` inside the module's name scope."""

        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)

        return wrapper

    def __repr__(self) -> str:
        cls = type(self)
        return f"<{cls.__module__}.{cls.__name__} object named {self.name!r}>"


@contextlib.contextmanager
def init_scope():
    """Lifts its body out of any trace and tape (TF's `tf.init_scope`).

    Inside a `jaxtape.function` the body runs eagerly at trace time, once per
    trace: ops compute concrete Tensors (`.numpy()` works,
    `jaxtape.executing_eagerly()` is True), Variables read and write their
    own values, not the trace's; outside, it only pauses the tapes, e.g. for
    creating variables in a function that may be called under a tape.

    >>> @jaxtape.function
    ... def f(x):
    ...     with jaxtape.init_scope():
    ...         scale = jaxtape.constant(2.0) * 3  # concrete: 6.0
    ...     return x * scale
    """
    depth = context.state.function_depth
    with context.paused_tapes(), _scope.creating_state():
        context.state.function_depth = 0
        try:
            yield
        finally:
            context.state.function_depth = depth


context.hooks.init_scope = init_scope


def module_children(obj) -> list:
    """TF's view of a Module for `graph.walk`: the Variables and Modules in its
    attributes, attributes sorted by name, nested lists, tuples and dicts seen
    through (dict keys sorted, as `tf.nest` flattens them). Not a Module:
    no children.

    Differences from TensorFlow: a Keras layer is a Module here (its
    variables are found); Keras 3's layers are not `tf.Module`s, so TF 2.21's
    `tf.Module.variables` leaves theirs out.
    """
    if not isinstance(obj, Module):
        return []
    attrs = vars(obj)
    ignored = obj._TF_MODULE_IGNORED_PROPERTIES
    out = []
    for key in sorted(attrs):
        if key in ignored:
            continue
        for path, leaf in graph.flatten(attrs[key], sort_dicts=True):
            if isinstance(leaf, (Variable, Module)):
                out.append(("/".join(map(str, (key, *path))), leaf))
    return out
