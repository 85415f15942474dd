"""`next(iterator)` inside `jaxtape.function`, TF's `IteratorGetNext` op.

Layer L4. In TF an iterator made outside a `tf.function` is a resource the
graph reads: every call of the function takes the iterator's next element.
Here the element read while tracing feeds the first call, and before each later
call (`trace.before_each_call`) the iterator's next element is read on the host
into hidden Variables, which the compiled program reads as inputs (not
constants). An exhausted iterator raises TF's `OutOfRangeError` at the call.
"""

from __future__ import annotations

import weakref
from typing import Any

import jax
import numpy as np

from jaxtape._src.core import context, errors
from jaxtape._src.data.structure import _leaves, _map_structure
from jaxtape._src.function import trace as _trace
from jaxtape._src.state import scope as state_scope
from jaxtape._src.state.variable import Variable


def _arrays(element) -> list:
    """The element's arrays (a SparseTensor's indices and values, ...) as a
    compiled program can take them."""
    out = []
    for leaf in jax.tree_util.tree_leaves(_leaves(element)):
        array = leaf if isinstance(leaf, jax.Array) else np.asarray(leaf)
        if array.dtype.kind not in "biufc":
            raise NotImplementedError(
                "next(iterator) inside jaxtape.function on this iterator: its "
                f"elements hold {array.dtype} values, which a compiled program "
                "cannot take. Iterate outside the function and pass each element "
                "as an argument."
            )
        out.append(array)
    return out


def _specs(arrays, element=None) -> list:
    # (with the element's structure: a SparseTensor's dense shape is static)
    structure = jax.tree_util.tree_structure(_leaves(element))
    return [(a.shape, a.dtype) for a in arrays] + [structure]


def _pull(iterator):
    """The iterator's next element, computed eagerly; TF's end-of-sequence."""
    try:
        with context.hooks.init_scope():  # the pipeline runs eagerly (TF's too)
            return next(iterator._it)
    except StopIteration:
        raise errors.OutOfRangeError(None, None, "End of sequence") from None


class _Next:
    """One `next()` site of one trace: the hidden Variables it reads."""

    def __init__(self, iterator, element):
        self.iterator = iterator
        self.element = element
        arrays = _arrays(element)
        self.specs = _specs(arrays, element)
        with state_scope.creating_state():
            self.holders = [
                Variable(a, trainable=False, name="iterator_get_next") for a in arrays
            ]
        for holder in self.holders:
            holder._hidden = True  # not the user's: any trace may make them
        self.unread = True  # the element read while tracing feeds the first call
        self.trace: Any = None  # the trace it serves (weakly: `_Trace` objects)

    def refresh(self) -> None:
        if self.unread:
            self.unread = False
            return
        element = _pull(self.iterator)
        arrays = _arrays(element)
        specs = _specs(arrays, element)
        if specs != self.specs:
            raise errors.InvalidArgumentError(
                None,
                None,
                "next(iterator) inside jaxtape.function: the iterator's element "
                f"changed shape or dtype since the function was traced (was "
                f"{_spec_text(self.specs)}, now {_spec_text(specs)}). jaxtape "
                "compiles the function for one element shape: batch with "
                "`drop_remainder=True`, or pass each element as an argument.",
            )
        for holder, array in zip(self.holders, arrays):
            holder.assign(array)

    def read(self):
        structure = jax.tree_util.tree_structure(_leaves(self.element))
        arrays = [h.read_value() for h in self.holders]
        values = iter(jax.tree_util.tree_unflatten(structure, arrays))
        return _map_structure(lambda _: next(values), self.element)


def _spec_text(specs) -> str:
    return ", ".join(f"{np.dtype(d).name}{list(s)}" for s, d in specs[:-1])


def traced_next(iterator):
    """The next element of `iterator` (made outside the tracing function), as
    the compiled program reads it anew on every call.

    A trace that creates Variables is traced again at once with them lifted
    (`Function._trace`): the retrace takes over the sites the first attempt
    made, in order, instead of reading further elements.
    """
    current = _trace.tracing()
    sites = iterator.__dict__.setdefault("_traced_sites", [])
    site = None
    for s in sites:
        owner = s.trace() if s.trace is not None else None
        if (
            s.unread
            and owner is not current
            and (owner is None or owner.closed is None)
        ):
            site = s  # made by an attempt traced again (never settled): take it over
            break
    if site is None:
        site = _Next(iterator, _pull(iterator))
        sites[:] = [s for s in sites if s.unread] + [site]  # (drop served ones)
    site.trace = weakref.ref(current) if current is not None else None
    _trace.before_each_call(site.refresh)
    return site.read()
