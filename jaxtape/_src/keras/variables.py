"""`KerasVariable`: the weights that `Layer.add_weight` makes. Layer L5."""

from __future__ import annotations

import numpy as np

from jaxtape._src.state.variable import Variable, VariableAggregation


class KerasVariable(Variable):
    """A weight made by `Layer.add_weight`, named as Keras 3 names it.

    `name` is the weight's own name (`'kernel'`) and `path` the name scoped by
    the layers that built it (`'my_model/dense/kernel'`), without TF 1's
    `:0`, as tf.keras in TF 2.21 prints them. Everything else is a
    `jaxtape.Variable`.

    >>> layer = jaxtape.keras.layers.Dense(2, name="head")
    >>> layer.build((None, 3))
    >>> layer.kernel.name, layer.kernel.path
    ('kernel', 'head/kernel')
    """

    def __init__(self, *args, name=None, **kwargs):
        super().__init__(*args, name=name, **kwargs)
        self._path = self._name[:-2]  # the scoped name, without ':0'
        self._short_name = "Variable" if name is None else str(name)

    @property
    def name(self) -> str:
        return self._short_name

    @property
    def path(self) -> str:
        return self._path

    @property
    def value(self) -> KerasVariable:  # pyright: ignore[reportIncompatibleMethodOverride]
        """The backing variable (Keras 3's property on TF: its `tf.Variable`),
        usable as a tensor or assigned; `value()` raises TypeError, as there."""
        return self

    def __repr__(self) -> str:
        try:
            value = f", value={np.asarray(self._read_raw())}"
        except Exception:  # a tracer inside jaxtape.function
            value = ""
        return (
            f"<jaxtape.keras.Variable path={self._path}, shape={tuple(self.shape)}, "
            f"dtype={self.dtype.name}{value}>"
        )


def standardize_aggregation(value):
    """Keras's aggregation strings as TF's `VariableAggregation`."""
    if isinstance(value, VariableAggregation):
        return value
    names = {
        None: "NONE",
        "none": "NONE",
        "mean": "MEAN",
        "sum": "SUM",
        "only_first_replica": "ONLY_FIRST_REPLICA",
    }
    if value not in names:
        raise ValueError(
            "Invalid value for argument `aggregation`. Expected one of "
            "`None`, `'none'`, `'mean'`, `'sum'`, `'only_first_replica'`. "
            f"Received: aggregation={value}"
        )
    return getattr(VariableAggregation, names[value])
