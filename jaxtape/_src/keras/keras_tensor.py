"""The functional API's symbolic values: `KerasTensor` and `Node`. Layer L5.

Calling a layer on a `KerasTensor` (from `keras.Input`) records a `Node`
instead of computing; a functional model is the graph of those nodes.
`flatten` and `map_structure` walk nested inputs and outputs with
KerasTensors, Tensors and Variables as leaves, keeping dict key order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from jaxtape._src.core import dtypes
from jaxtape._src.core.tensor import Tensor, TensorShape, tree_unflatten_like
from jaxtape._src.state.variable import Variable

if TYPE_CHECKING:
    from jaxtape._src.keras.layers.core import InputLayer


class Node:
    """One layer call of a functional model: inputs and outputs are KerasTensors."""

    def __init__(self, layer, inputs, args, kwargs):
        self.layer, self.inputs, self.args, self.kwargs = layer, inputs, args, kwargs
        self.outputs: Any = None  # the KerasTensors it makes (set by the call)
        self.index = 0  # its place in the layer's `_inbound_nodes` (set by the call)

    def dependencies(self) -> list:
        return [
            t
            for t in flatten((self.inputs, self.args, self.kwargs))
            if isinstance(t, KerasTensor)
        ]


class KerasTensor:
    """A symbolic tensor of the functional API: a shape, a dtype and its producer."""

    _input_layer: InputLayer  # on a `keras.Input` tensor only: its InputLayer

    def __init__(self, shape, dtype="float32", sparse=False, ragged=False,
                 record_history=True, name=None, *, producer=None):  # fmt: skip
        """Keras 3's arguments; `producer` (jaxtape's) is the Node that
        computes it (None for an Input). Sparse and ragged symbolic tensors
        raise NotImplementedError."""
        if sparse or ragged:
            raise NotImplementedError(
                "KerasTensor(sparse=True / ragged=True): sparse and ragged "
                "functional-model inputs are not supported by jaxtape."
            )
        self.shape = TensorShape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.sparse, self.ragged = False, False
        self.record_history = bool(record_history)
        self._producer = producer
        self.name = name

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self):
        return (
            f"<KerasTensor shape={tuple(self.shape)}, dtype={self.dtype.name}, "
            f"name={self.name}>"
        )

    def __hash__(self):
        return id(self)


def flatten(structure) -> list:
    """The KerasTensors, Tensors, Variables and other leaves of `structure`."""
    return jax.tree_util.tree_leaves(
        structure, is_leaf=lambda x: isinstance(x, (KerasTensor, Tensor, Variable))
    )


def map_structure(fn, structure) -> Any:
    """`fn` over the leaves, keeping dict key order (as Keras's tree.map_structure)."""
    if type(structure) is Tensor:  # (the usual case, without a tree walk)
        return fn(structure)
    leaves, treedef = jax.tree_util.tree_flatten(
        structure, is_leaf=lambda x: isinstance(x, (KerasTensor, Tensor, Variable))
    )
    return tree_unflatten_like(structure, [fn(x) for x in leaves], treedef)


def shape_of(x) -> tuple:
    """The shape of a (symbolic) tensor, Variable or array-like, as a tuple."""
    if isinstance(x, (KerasTensor, Tensor, Variable)):
        return tuple(x.shape)
    return tuple(np.shape(x))
