"""Keras weight constraints (`keras.constraints`). Layer L5.

A constraint is a callable applied to a weight after each optimizer update
(a Variable applies its `constraint` on assignment); it returns the projected
weight. The numerics are Keras 3's, written with jaxtape's `keras.ops`, so a
constraint records on a tape and runs inside `jaxtape.function`. Names,
configs and classes resolve through the one `registry.Kind` behind every
Keras `get`; `Layer.add_weight` resolves its `constraint` through `get`.
"""

from __future__ import annotations

from jaxtape._src.core import config, registry
from jaxtape._src.keras.ops import numpy as knp

__all__ = [
    "Constraint",
    "MaxNorm",
    "MinMaxNorm",
    "NonNeg",
    "UnitNorm",
    "deserialize",
    "get",
    "max_norm",
    "min_max_norm",
    "non_neg",
    "serialize",
    "unit_norm",
]


class Constraint:
    """Base class of weight constraints (Keras's): `__call__(w)` returns the
    projected weight (this base returns `w` unchanged)."""

    def __call__(self, w):
        return w

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


def _norms(w, axis):
    """`sqrt(sum(w**2, axis, keepdims=True))`: the L2 norm of each unit's weights."""
    return knp.sqrt(knp.sum(knp.square(w), axis=axis, keepdims=True))


def _rescale(w, norms, desired):
    """`w * desired / (epsilon + norms)`, Keras's rescaling of each unit."""
    scale = knp.divide(desired, knp.add(config.epsilon(), norms))
    return knp.multiply(knp.cast(w, norms.dtype), scale)


class MaxNorm(Constraint):
    """Rescales each unit's weights (norms along `axis`) to a norm of at most
    `max_value` (Keras's `MaxNorm`; `axis=0` is the input axis of a Dense
    kernel, `[0, 1, 2]` a Conv2D filter's)."""

    def __init__(self, max_value=2, axis=0):
        self.max_value = max_value
        self.axis = axis

    def __call__(self, w):
        w = knp.convert_to_tensor(w)
        norms = _norms(w, self.axis)
        return _rescale(w, norms, knp.clip(norms, 0, self.max_value))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """Clips the weights at zero from below (Keras's `NonNeg`)."""

    def __call__(self, w):
        return knp.maximum(knp.convert_to_tensor(w), 0)


class UnitNorm(Constraint):
    """Rescales each unit's weights to unit L2 norm along `axis` (Keras's
    `UnitNorm`: `w / (epsilon + norm)`)."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        w = knp.convert_to_tensor(w)
        norms = _norms(w, self.axis)
        return knp.divide(knp.cast(w, norms.dtype), knp.add(config.epsilon(), norms))

    def get_config(self):
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """Moves each unit's norm towards `[min_value, max_value]`: the new norm is
    `rate * clip(norm, min_value, max_value) + (1 - rate) * norm` (Keras's
    `MinMaxNorm`; `rate=1` enforces the bounds strictly)."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value = min_value
        self.max_value = max_value
        self.rate = rate
        self.axis = axis

    def __call__(self, w):
        w = knp.convert_to_tensor(w)
        norms = _norms(w, self.axis)
        desired = knp.add(
            knp.multiply(self.rate, knp.clip(norms, self.min_value, self.max_value)),
            knp.multiply(1 - self.rate, norms),
        )
        return _rescale(w, norms, desired)

    def get_config(self):
        return {
            "min_value": self.min_value,
            "max_value": self.max_value,
            "rate": self.rate,
            "axis": self.axis,
        }


# Keras 3's lowercase names are the classes themselves.
max_norm, min_max_norm, non_neg, unit_norm = MaxNorm, MinMaxNorm, NonNeg, UnitNorm

CONSTRAINTS = registry.Kind("constraint", "keras.constraints")
for _cls in (Constraint, MaxNorm, MinMaxNorm, NonNeg, UnitNorm):
    CONSTRAINTS.add(_cls)


def get(identifier):
    """A constraint from None, a name (`'max_norm'`, `'MaxNorm'`), a serialized
    config, a class (instantiated) or a callable, as Keras's `constraints.get`.

    >>> get("non_neg")  # doctest: +ELLIPSIS
    <...NonNeg object at ...>
    """
    return CONSTRAINTS.get(identifier)


def serialize(constraint):
    """Keras's `{'module', 'class_name', 'config', 'registered_name'}` dict."""
    return CONSTRAINTS.serialize(constraint)


def deserialize(config, custom_objects=None):
    """The constraint of `serialize`'s output."""
    return CONSTRAINTS.deserialize(config, custom_objects)
