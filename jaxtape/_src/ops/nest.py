"""`tf.nest`: TF's rules for nested structures, in plain Python. Layer L1.

As TF: lists, tuples, namedtuples, dicts (and Mappings), `attrs` classes are
structures; everything else (None, strings, tensors, NumPy arrays) is a leaf.
Dict items are flattened in sorted key order (OrderedDicts too); packing
rebuilds each structure with its own type. With `expand_composites=True`, a
composite (RaggedTensor, SparseTensor: `register_composite`, installed by
`structured/`) is a structure of its component Tensors, as TF's.
"""

from __future__ import annotations

import collections.abc
from collections.abc import Callable
from typing import Any

_ATTRS = "__attrs_attrs__"
# type -> (components(x), rebuild(x, components)): TF's `_to_components`.
_composites: dict[type, tuple[Callable[[Any], list], Callable[[Any, list], Any]]] = {}


def register_composite(cls: type, components, rebuild) -> None:
    """`expand_composites=True` flattens a `cls` into `components(x)` and packs
    it back with `rebuild(x, components)` (x: the structure's instance)."""
    _composites[cls] = (components, rebuild)


def is_nested(seq: Any) -> bool:
    """True for the structures `flatten` descends into (not strings)."""
    return _is_nested(seq)


def _is_nested(x, expand=False):
    if isinstance(x, (str, bytes)):
        return False
    if expand and type(x) in _composites:
        return True
    return (
        isinstance(x, (list, tuple, collections.abc.Mapping))
        or hasattr(type(x), _ATTRS)
        or isinstance(x, collections.abc.MappingView)
    )


def _sorted_keys(d):
    try:
        return sorted(d)
    except TypeError as e:
        raise TypeError(f"nest only supports dicts with sortable keys: {e}") from None


def _children(x, expand=False):
    if expand and type(x) in _composites:
        return list(_composites[type(x)][0](x))
    if isinstance(x, collections.abc.Mapping):
        return [x[k] for k in _sorted_keys(x)]
    if hasattr(type(x), _ATTRS):
        return [getattr(x, a.name) for a in getattr(type(x), _ATTRS)]
    return list(x)  # a sequence, or a MappingView (keys, values, items)


def flatten(structure: Any, expand_composites: bool = False) -> list:
    """The leaves of `structure`, depth first, dict items by sorted key; a
    leaf (None included) gives `[leaf]`."""
    out: list = []
    _flatten_into(structure, out, bool(expand_composites))
    return out


def _flatten_into(x, out, expand=False):
    if not _is_nested(x, expand):
        out.append(x)
        return
    for c in _children(x, expand):
        _flatten_into(c, out, expand)


def _sequence_like(instance, args):
    """A structure of `instance`'s type with children `args` (in sorted-key
    order for mappings)."""
    composite = _composites.get(type(instance))
    if composite is not None:
        return composite[1](instance, list(args))
    if isinstance(instance, collections.abc.Mapping):
        result = dict(zip(_sorted_keys(instance), args))
        kind = type(instance)
        if kind is dict:
            return {k: result[k] for k in instance}
        if isinstance(instance, collections.defaultdict):
            d = collections.defaultdict(instance.default_factory)
            for k in instance:
                d[k] = result[k]
            return d
        make: Any = kind
        return make((k, result[k]) for k in instance)
    if hasattr(type(instance), _ATTRS):
        return type(instance)(*args)
    if isinstance(instance, tuple) and hasattr(instance, "_fields"):
        return type(instance)(*args)
    if isinstance(instance, collections.abc.MappingView):
        return list(args)
    return type(instance)(args)


def pack_sequence_as(
    structure: Any, flat_sequence: Any, expand_composites: bool = False
) -> Any:
    """`structure` with its leaves replaced, in order, by `flat_sequence`."""
    expand = bool(expand_composites)
    if not _is_nested(flat_sequence):
        raise TypeError(
            f"Attempted to pack value:\n  {flat_sequence}\ninto a structure, but found "
            f"incompatible type `{type(flat_sequence)}` instead."
        )
    flat = list(flat_sequence)
    if not _is_nested(structure, expand):
        if len(flat) != 1:
            raise ValueError(
                f"The target structure is of type `{type(structure)}`\n  "
                f"{structure}\nHowever the input is a sequence ({type(flat_sequence)}) "
                f"of length {len(flat)}.\n  {flat_sequence}\nnest cannot guarantee "
                "that it is safe to map one to the other."
            )
        return flat[0]
    n = len(flatten(structure, expand))
    if n != len(flat):
        raise ValueError(
            f"Could not pack sequence. Structure had {n} atoms, but flat_sequence "
            f"had {len(flat)} items.  Structure: {structure}, flat_sequence: {flat}."
        )
    it = iter(flat)
    return _pack(structure, it, expand)


def _pack(x, it, expand=False):
    if not _is_nested(x, expand):
        return next(it)
    return _sequence_like(x, [_pack(c, it, expand) for c in _children(x, expand)])


def assert_same_structure(
    nest1: Any, nest2: Any, check_types: bool = True, expand_composites: bool = False
) -> None:
    """Raises TF's ValueError when the structures differ in nesting or lengths
    (or dict keys), TypeError when `check_types` and their types differ."""
    _assert_same(nest1, nest2, check_types, nest1, nest2, bool(expand_composites))


def _mismatch(error, nest1, nest2, more):
    return error(
        "The two structures don't have the same nested structure.\n\n"
        f"First structure: type={type(nest1).__name__} str={nest1}\n\n"
        f"Second structure: type={type(nest2).__name__} str={nest2}\n\n"
        f"More specifically: {more}"
    )


def _assert_same(a, b, check_types, top1, top2, expand=False):
    na, nb = _is_nested(a, expand), _is_nested(b, expand)
    if na != nb:
        raise _mismatch(
            ValueError,
            top1,
            top2,
            f'Substructure "type={type(a).__name__} str={a}" is a sequence, while '
            f'substructure "type={type(b).__name__} str={b}" is not'
            if na
            else f'Substructure "type={type(b).__name__} str={b}" is a sequence, '
            f'while substructure "type={type(a).__name__} str={a}" is not',
        )
    if not na:
        return
    if check_types and not _same_type(a, b):
        raise _mismatch(
            TypeError,
            top1,
            top2,
            f"The two namedtuples don't have the same sequence type. First "
            f"structure type={type(a).__name__} str={a} has type "
            f"{type(a).__name__}, while second structure type={type(b).__name__} "
            f"str={b} has type {type(b).__name__}",
        )
    ca, cb = _children(a, expand), _children(b, expand)
    if len(ca) != len(cb):
        raise _mismatch(
            ValueError,
            top1,
            top2,
            f"The two structures don't have the same number of elements. First "
            f"structure type={type(a).__name__} str={a} has length {len(ca)}, "
            f"while second structure type={type(b).__name__} str={b} has length "
            f"{len(cb)}",
        )
    if isinstance(a, collections.abc.Mapping) and isinstance(
        b, collections.abc.Mapping
    ):
        if set(a) != set(b):
            raise _mismatch(
                ValueError,
                top1,
                top2,
                f"The two dictionaries don't have the same set of keys. First "
                f"structure has keys {sorted(a)}, while second structure has keys "
                f"{sorted(b)}.",
            )
    for x, y in zip(ca, cb):
        _assert_same(x, y, check_types, top1, top2, expand)


def _same_type(a, b):
    ta, tb = type(a), type(b)
    if ta is tb:
        return True
    mappings = (collections.abc.Mapping,)
    if isinstance(a, mappings) and isinstance(b, mappings):
        return True  # TF: any two mappings match (dict vs OrderedDict)
    return False


def map_structure(func: Any, *structure: Any, **kwargs: Any) -> Any:
    """`func` applied to the corresponding leaves of the `structure`s (all of
    one structure), packed as the first; keyword args `check_types` (True)
    and `expand_composites`."""
    if not callable(func):
        raise TypeError(f"func must be callable, got: {func}")
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    expand_composites = kwargs.pop("expand_composites", False)
    if kwargs:
        raise ValueError(
            "Only valid keyword arguments are `check_types` and "
            f"`expand_composites`, not: `{'`, `'.join(kwargs)}`"
        )
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types, expand_composites)
    flats = [flatten(s, expand_composites) for s in structure]
    return pack_sequence_as(
        structure[0], [func(*xs) for xs in zip(*flats)], expand_composites
    )
