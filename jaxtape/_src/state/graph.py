"""The one walk over object graphs (as flax.nnx's `graph` module). Layer L2.

Everything that lists the state an object holds walks it here: TF's
`Module.variables` and `submodules`, Keras's `Layer.weights` and `layers`,
checkpoint paths (`state/trackable.py`) and Keras's `.weights.h5` layout
(`keras/saving.py`). They differ only in

- the *view*, `children(obj) -> [(name, child), ...]` (empty for a leaf):
  which attributes count and in which order (TF sorts them, Keras keeps their
  assignment order, checkpoints put public ones first), and whether lists,
  tuples and dicts are objects of their own (checkpoints, `.weights.h5`) or
  are seen through (`flatten`, for `variables` and `weights`);
- the *order* of the walk:
  - `"depth"`: each object, then its children's subtrees in order (Keras:
    a layer's own weights, then each sublayer's; the weights file);
  - `"breadth"`: level by level, so each object gets its shortest path (TF's
    object-graph checkpoints);
  - `"siblings"`: all of an object's children, then their subtrees (TF's
    `Module._flatten`: a module's own attributes before its submodules').

Each object is visited once, at the first path that reaches it, so shared
objects and cycles are safe; the root itself is not yielded.

>>> tree = {"a": [1, {"b": 2}], "c": 3}
>>> def kids(o):
...     if isinstance(o, dict):
...         return list(o.items())
...     return list(enumerate(o)) if isinstance(o, list) else []
>>> [p for p, _ in walk(tree, kids, "breadth")]
[('a',), ('c',), ('a', 0), ('a', 1), ('a', 1, 'b')]
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Iterator

Children = Callable[[object], Iterable[tuple[object, object]]]

_ORDERS = ("depth", "breadth", "siblings")


def walk(root, children: Children, order: str = "depth") -> Iterator[tuple]:
    """Yields `(path, obj)` for every object reachable from `root`, once each.

    Args:
      root: where the walk starts (not yielded).
      children: the view: `children(obj)` lists `(name, child)` pairs.
      order: `"depth"`, `"breadth"` or `"siblings"` (see the module docstring).

    `path` is the tuple of names from `root` to `obj`.
    """
    seen = {id(root)}
    if order == "breadth":
        queue: collections.deque[tuple[tuple, object]] = collections.deque(
            ((n,), c) for n, c in children(root)
        )
        while queue:
            path, obj = queue.popleft()
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            yield path, obj
            queue.extend((path + (n,), c) for n, c in children(obj))
    elif order == "depth":
        stack: list[tuple[tuple, object]] = [
            ((n,), c) for n, c in reversed(list(children(root)))
        ]
        while stack:
            path, obj = stack.pop()
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            yield path, obj
            stack.extend((path + (n,), c) for n, c in reversed(list(children(obj))))
    elif order == "siblings":
        pending = [((), root)]  # objects whose children are still to be listed
        while pending:
            path, obj = pending.pop()
            fresh = []
            for name, child in children(obj):
                if id(child) not in seen:
                    seen.add(id(child))
                    fresh.append((path + (name,), child))
                    yield path + (name,), child
            pending.extend(reversed(fresh))
    else:
        raise ValueError(f"walk: order must be one of {_ORDERS}; got {order!r}.")


def flatten(value, sort_dicts: bool = False) -> Iterator[tuple[tuple, object]]:
    """Yields `(path, leaf)` through nested lists, tuples and dicts.

    What a view uses to see through containers: `(value,)` itself for a
    non-container, else its items in order (a dict's in key order when
    `sort_dicts`, as TF's `nest` flattens every mapping; in insertion order
    otherwise, as Keras tracks them). A container met twice (shared, or
    holding itself) is expanded once.
    """
    seen: set[int] = set()

    def items(container):
        if isinstance(container, dict):
            keys = sorted(container, key=str) if sort_dicts else list(container)
            return [(k, container[k]) for k in keys]
        return list(enumerate(container))

    stack: list[tuple[tuple, object]] = [((), value)]
    while stack:
        path, obj = stack.pop()
        if isinstance(obj, (list, tuple, dict)):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            stack.extend((path + (k,), v) for k, v in reversed(items(obj)))
        else:
            yield path, obj
