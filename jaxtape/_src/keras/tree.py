"""`keras.tree`: Keras 3's nested-structure utilities. Layer L5.

Keras 3 runs these on `optree` (namespace `"keras"`, `None` a leaf), whose
rules differ from `tf.nest`'s (`jaxtape.nest`): a `dict`'s values are taken in
sorted-key order but rebuilt in the dict's own key order; an `OrderedDict`
keeps its order; `deque` is a node; a subclass of `list`/`dict` is a leaf;
`dict`, `OrderedDict` and `defaultdict` match each other by keys. This module
is that model in plain Python, with optree's error types and texts.
"""

from __future__ import annotations

import collections
import warnings
from collections.abc import Callable, Sequence
from typing import Any

# A node: (keys for paths, children, rebuild(children) -> node).
_Node = tuple[list, list, Callable[[list], Any]]


class MAP_TO_NONE:  # noqa: N801  (Keras's name)
    """Special value for use with `traverse()`: map a sub-tree to `None`."""


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _sorted_keys(d) -> list:
    try:
        return sorted(d)
    except TypeError:  # unsortable keys: insertion order, as optree
        return list(d)


def _rebuild_dict(d, keys):
    def rebuild(children):
        by_key = dict(zip(keys, children))
        items = {k: by_key[k] for k in d}
        if type(d) is collections.defaultdict:
            return collections.defaultdict(d.default_factory, items)
        return items

    return rebuild


def _node(x, none_is_leaf=True) -> _Node | None:
    """`x`'s children, or None when `x` is a leaf."""
    t = type(x)
    if x is None:
        return None if none_is_leaf else ([], [], lambda c: None)
    if t is list or t is tuple:
        return list(range(len(x))), list(x), t
    if _is_namedtuple(x):
        return list(range(len(x))), list(x), lambda c: t(*c)
    if t is collections.deque:
        return list(range(len(x))), list(x), lambda c: collections.deque(c, x.maxlen)
    if t is dict or t is collections.defaultdict:
        keys = _sorted_keys(x)
        return keys, [x[k] for k in keys], _rebuild_dict(x, keys)
    if t is collections.OrderedDict:
        keys = list(x)
        return (
            keys,
            [x[k] for k in keys],
            lambda c: collections.OrderedDict(zip(keys, c)),
        )
    return None


_DICTS = (dict, collections.OrderedDict, collections.defaultdict)


def _kind(x) -> str:
    if _is_namedtuple(x):
        return "collections.namedtuple"
    if type(x) is collections.deque:
        return "collections.deque"
    if type(x) is collections.OrderedDict:
        return "collections.OrderedDict"
    if type(x) is collections.defaultdict:
        return "collections.defaultdict"
    return type(x).__name__


def _children_like(first, keys, other, none_is_leaf) -> list:
    """`other`'s children in the order of `first`'s `keys`; raises optree's
    ValueError when `other` is not the same kind of node."""
    if first is None:
        if other is not None:
            raise ValueError(f"Expected None, got {other!r}.")
        return []
    if type(first) in _DICTS:
        if type(other) not in _DICTS:
            raise ValueError(f"Expected an instance of dict, got {other!r}.")
        if set(first) != set(other):
            want, got = sorted(first, key=repr), sorted(other, key=repr)
            missing = [k for k in want if k not in other]
            extra = [k for k in got if k not in first]
            raise ValueError(
                f"dictionary key mismatch; expected key(s): {want}, got key(s): "
                f"{got}, missing key(s): {missing}, extra key(s): {extra}; "
                f"dict: {other!r}."
            )
        return [other[k] for k in keys]
    kind = _kind(first)
    if _is_namedtuple(first):
        if not _is_namedtuple(other):
            raise ValueError(f"Expected an instance of {kind}, got {other!r}.")
        if type(other) is not type(first):
            raise ValueError(
                f"namedtuple type mismatch; expected type: {type(first)!r}, "
                f"got type: {type(other)!r}; tuple: {other!r}."
            )
    elif type(other) is not type(first) or _node(other, none_is_leaf) is None:
        raise ValueError(f"Expected an instance of {kind}, got {other!r}.")
    if len(other) != len(first):
        word = "tuple" if isinstance(first, tuple) else kind
        raise ValueError(
            f"{word} arity mismatch; expected: {len(first)}, got: {len(other)}; "
            f"{word}: {other!r}."
        )
    return list(other)


def _map(leaf_fn, first, others, none_is_leaf=True, is_leaf=None):
    node = (
        None if is_leaf is not None and is_leaf(first) else _node(first, none_is_leaf)
    )
    if node is None:
        return leaf_fn(first, *others)
    keys, children, rebuild = node
    columns = [_children_like(first, keys, o, none_is_leaf) for o in others]
    return rebuild(
        [
            _map(leaf_fn, c, [col[i] for col in columns], none_is_leaf, is_leaf)
            for i, c in enumerate(children)
        ]
    )


def _leaves_with_paths(structure, path=()) -> list:
    node = _node(structure)
    if node is None:
        return [(path, structure)]
    keys, children, _ = node
    out = []
    for k, c in zip(keys, children):
        out.extend(_leaves_with_paths(c, path + (k,)))
    return out


def _validate(first, others, none_is_leaf=True):
    """Node-by-node matching of the whole structures before any leaf function
    runs (optree matches the tree specs first)."""
    if others:
        _map(lambda *_: None, first, others, none_is_leaf)


_MISMATCH = "Structures don't have the same nested structure."

# -- the public functions ----------------------------------------------------------


def is_nested(structure):
    """Whether `structure` is a list, tuple, namedtuple, deque or dict-like
    (exact types; `None` and strings are not)."""
    return _node(structure) is not None


def flatten(structure):
    """The leaves of `structure`, depth first (dict values by sorted key, an
    OrderedDict in its order); a leaf gives `[leaf]`, `None` gives `[None]`."""
    return [leaf for _, leaf in _leaves_with_paths(structure)]


def flatten_with_path(structure):
    """`[(path, leaf)]`: each path a tuple of indices and dict keys."""
    return _leaves_with_paths(structure)


def map_structure(func, *structures, none_is_leaf=True):
    """`func` applied to the leaves of `structures` (all of one layout), in a
    structure of the first's layout; `none_is_leaf=False` passes `None`s
    through without calling `func`."""
    if not structures:
        raise ValueError("Must provide at least one structure")

    def leaf(*args):
        if len(args) > 1 and not all(_node(a, none_is_leaf) is None for a in args):
            raise ValueError(_MISMATCH)
        return func(*args)

    _validate(structures[0], structures[1:], none_is_leaf)
    return _map(leaf, structures[0], structures[1:], none_is_leaf)


def map_structure_up_to(shallow_structure, func, *structures):
    """`map_structure` down to `shallow_structure`'s leaves only: deeper parts
    of `structures` reach `func` whole. As Keras's (optree's), a `None` leaf
    in `shallow_structure` raises ValueError."""
    if not structures:
        raise ValueError("Must provide at least one structure")

    def leaf(shallow, *args):
        if shallow is None:  # optree's default `tree_is_leaf(None)` is False
            raise ValueError(_MISMATCH)
        return func(*args)

    _validate(shallow_structure, structures)
    return _map(leaf, shallow_structure, structures)


def assert_same_structure(a, b, check_types=None):
    """Raises ValueError unless `a` and `b` nest the same way (same node types,
    lengths and keys; dict-likes match each other). `check_types` is
    deprecated and has no effect, as in Keras."""
    if check_types is not None:
        warnings.warn(
            "The `check_types` argument is deprecated and no longer has any "
            "effect"
            + (
                ", please remove."
                if check_types
                else ". For a looser check, use `keras.tree.assert_same_paths()`, "
                "which considers `list`, `tuple`, `namedtuple` and `deque` as "
                "matching"
            ),
            DeprecationWarning,
            stacklevel=2,
        )

    def leaf(x, y):
        if _node(x) is not None or _node(y) is not None:
            raise ValueError(_MISMATCH)

    _map(leaf, a, [b])


def assert_same_paths(a, b):
    """Raises ValueError unless `a` and `b` have the same set of leaf paths
    (node types are not compared)."""
    a_paths = {p for p, _ in _leaves_with_paths(a)}
    b_paths = {p for p, _ in _leaves_with_paths(b)}
    if a_paths != b_paths:
        msg = "`a` and `b` don't have the same paths."
        if a_paths - b_paths:
            msg += f"\nPaths in `a` missing in `b`:\n{a_paths - b_paths}"
        if b_paths - a_paths:
            msg += f"\nPaths in `b` missing in `a`:\n{b_paths - a_paths}"
        raise ValueError(msg)


def pack_sequence_as(structure, flat_sequence):
    """`flat_sequence` packed into `structure`'s layout (the inverse of
    `flatten`; dicts keep their own key order)."""
    flat = list(flat_sequence)
    n = len(_leaves_with_paths(structure))
    if len(flat) < n:
        raise ValueError(
            f"Too few leaves for PyTreeSpec; expected: {n}, got: {len(flat)}."
        )
    if len(flat) > n:
        raise ValueError(f"Too many leaves for PyTreeSpec; expected: {n}.")
    it = iter(flat)
    return _map(lambda _: next(it), structure, [])


def traverse(func, structure, top_down=True):
    """Applies `func` to every sub-structure, depth first. Top-down, a result
    other than None replaces the sub-tree and stops the descent; bottom-up, it
    replaces the (already traversed) sub-tree. `MAP_TO_NONE` maps to None."""
    if not callable(func):
        raise TypeError(f"{type(func).__name__!r} object is not callable")

    def children_traversed(x):
        node = _node(x)
        if node is None:
            return x
        _, children, rebuild = node
        return rebuild([traverse(func, c, top_down=top_down) for c in children])

    if top_down:
        ret = func(structure)
        if ret is None:
            return children_traversed(structure)
    else:
        traversed = children_traversed(structure)
        ret = func(traversed)
        if ret is None:
            return traversed
    return None if ret is MAP_TO_NONE else ret


def lists_to_tuples(structure):
    """`structure` with every list turned into a tuple."""
    return traverse(
        lambda x: tuple(x) if isinstance(x, list) else None, structure, top_down=False
    )


def _is_shape_tuple(x) -> bool:
    return isinstance(x, (list, tuple)) and all(
        isinstance(e, (int, type(None))) for e in x
    )


def map_shape_structure(func, structure):
    """`map_structure` where a list/tuple of ints and Nones (a shape) is a leaf."""
    return _map(func, structure, [], is_leaf=_is_shape_tuple)


__all__: Sequence[str] = (
    "MAP_TO_NONE",
    "assert_same_paths",
    "assert_same_structure",
    "flatten",
    "flatten_with_path",
    "is_nested",
    "lists_to_tuples",
    "map_shape_structure",
    "map_structure",
    "map_structure_up_to",
    "pack_sequence_as",
    "traverse",
)
