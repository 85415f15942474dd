"""Keras's merging layers and their functional forms. Layer L5.

`Add`, `Subtract`, `Multiply`, `Average`, `Maximum`, `Minimum`, `Concatenate`,
`Dot` (`axes`, `normalize`), and `add`, `subtract`, ... `dot`, which build the
layer and call it on the list. An element-wise merge is ONE recorded op over
all its inputs; inputs of lower rank get axes after the batch axis first, as
Keras's `Merge` does, then broadcast.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
from jax import lax

from jaxtape._src.core.dispatch import op
from jaxtape._src.keras.layers.base import Layer, get_keras_mask
from jaxtape._src.ops import array_ops, kinks, math_ops, nondiff

__all__ = [
    "Add",
    "Average",
    "Concatenate",
    "Dot",
    "Maximum",
    "Minimum",
    "Multiply",
    "Subtract",
    "add",
    "average",
    "concatenate",
    "dot",
    "maximum",
    "minimum",
    "multiply",
    "subtract",
]

_MERGES = {
    "add": jnp.add,
    "subtract": jnp.subtract,
    "multiply": jnp.multiply,
    "maximum": kinks.maximum,  # (a tie's gradient to the first, as TF's)
    "minimum": kinks.minimum,
}


@op("Merge", inputs="values")
def _merge(values, how):
    """Keras's element-wise merge of a list: `how` names the combination."""
    rank = max(v.ndim for v in values)
    values = [
        v.reshape((v.shape[0], *(1,) * (rank - v.ndim), *v.shape[1:])) for v in values
    ]
    if how == "average":
        return functools.reduce(jnp.add, values) / len(values)
    return functools.reduce(_MERGES[how], values)


def _l2_normalize(x, axis):
    """Keras's `normalize(x, axis)` (epsilon 1e-7)."""
    return kinks.l2_normalize(x, axis, 1e-7)


@op("BatchDot", inputs=("x", "y"), jit=True)
def _batch_dot(x, y, axes, normalize):
    """Keras's `batch_dot` over `axes` (one per input), batch axis 0; a
    result of rank 1 gets a trailing axis."""
    if normalize:
        x, y = _l2_normalize(x, axes[0]), _l2_normalize(y, axes[1])
    out = lax.dot_general(x, y, (((axes[0],), (axes[1],)), ((0,), (0,))))
    return out[:, None] if out.ndim == 1 else out


class _Merge(Layer):
    """A layer merging a list of same-shaped (or broadcastable) tensors."""

    _HOW = "add"
    _EXACTLY = None  # Subtract takes exactly 2 inputs

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def compute_mask(self, inputs, previous_mask=None):
        """Keras's: the inputs' masks OR-ed when every input has one."""
        if previous_mask is None or any(m is None for m in previous_mask):
            return None
        out = math_ops.cast(previous_mask[0], "bool")
        for m in previous_mask[1:]:
            out = nondiff.logical_or(out, math_ops.cast(m, "bool"))
        return out

    def build(self, input_shape):
        if not isinstance(input_shape, (list, tuple)) or not all(
            isinstance(s, (list, tuple)) for s in input_shape
        ):
            raise ValueError(
                "A merge layer should be called on a list of inputs. "
                f"Received: input_shape={input_shape} (not a list of shapes)"
            )
        if len(input_shape) < 1:
            raise ValueError(
                "A merge layer should be called on a list of at least 1 input. "
                f"Received {len(input_shape)} inputs. Full input_shape received: "
                f"{input_shape}"
            )
        if self._EXACTLY is not None and len(input_shape) != self._EXACTLY:
            raise ValueError(
                f"A `{type(self).__name__}` layer should be called on exactly "
                f"{self._EXACTLY} inputs. Received: input_shape={input_shape}"
            )
        batch = {s[0] for s in input_shape if s and s[0] is not None}
        if len(batch) > 1:
            raise ValueError(
                "Cannot merge tensors with different batch sizes. Received tensors "
                f"with shapes {input_shape}"
            )
        self._check_shapes(input_shape)
        self.built = True

    def _check_shapes(self, input_shape) -> None:
        """Keras's `_compute_elemwise_op_output_shape`: trailing axes broadcast."""
        for shape in input_shape[1:]:
            a, b = list(input_shape[0][1:]), list(shape[1:])
            for i, j in zip(a[::-1], b[::-1]):
                if i is not None and j is not None and 1 not in (i, j) and i != j:
                    raise ValueError(
                        "Inputs have incompatible shapes. Received shapes "
                        f"{tuple(input_shape[0][1:])} and {tuple(shape[1:])}"
                    )

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(
                "A merge layer should be called on a list of inputs. "
                f"Received: inputs={inputs} (not a list of tensors)"
            )
        if self._HOW in _MASKED and any(get_keras_mask(x) is not None for x in inputs):
            return _MASKED[self._HOW](list(inputs))
        return _merge(list(inputs), self._HOW)


def _step_masks(inputs) -> list:
    """Each input's Keras mask broadcast to its shape (None where it has none)."""
    out = []
    for x in inputs:
        m = get_keras_mask(x)
        if m is not None:
            m = array_ops.expand_dims(math_ops.cast(m, "bool"), -1)
            m = array_ops.broadcast_to(m, tuple(x.shape))
        out.append(m)
    return out


def _masked_extremum(op):
    def merge(inputs):
        """Keras's `_apply_merge_op_and_or_mask`: a masked step takes the
        other inputs' value, so it never wins the comparison."""
        output = output_mask = None
        for x, mask in zip(inputs, _step_masks(inputs)):
            if output is None:
                output, output_mask = x, mask
                continue
            if mask is not None:
                x = array_ops.where(mask, x, output)
            if output_mask is not None:
                output = array_ops.where(output_mask, output, x)
            if mask is not None and output_mask is not None:
                output_mask = nondiff.logical_or(output_mask, mask)
            else:
                output_mask = None
            output = op(output, x)
        return output

    return merge


def _masked_product(inputs):
    """Keras's masked `Multiply`: masked steps count as 1, and the product is
    0 where every input is masked (when all have masks)."""
    masks = _step_masks(inputs)
    has_output_mask = all(m is not None for m in masks)
    output = output_mask = None
    for x, mask in zip(inputs, masks):
        if mask is not None:
            x = array_ops.where(mask, x, nondiff.ones_like(x))
            if has_output_mask:
                if output_mask is not None:
                    mask = nondiff.logical_or(output_mask, mask)
                output_mask = mask
        output = x if output is None else math_ops.multiply(output, x)
    if has_output_mask:
        output = array_ops.where(output_mask, output, nondiff.zeros_like(output))
    return output


_MASKED = {
    "maximum": _masked_extremum(math_ops.maximum),
    "minimum": _masked_extremum(math_ops.minimum),
    "multiply": _masked_product,
}


class Add(_Merge):
    """The element-wise sum of a list of inputs."""


class Subtract(_Merge):
    """`inputs[0] - inputs[1]` (exactly two inputs)."""

    _HOW = "subtract"
    _EXACTLY = 2


class Multiply(_Merge):
    """The element-wise product of a list of inputs."""

    _HOW = "multiply"


class Average(_Merge):
    """The element-wise mean of a list of inputs."""

    _HOW = "average"


class Maximum(_Merge):
    """The element-wise maximum of a list of inputs."""

    _HOW = "maximum"


class Minimum(_Merge):
    """The element-wise minimum of a list of inputs."""

    _HOW = "minimum"


class Concatenate(Layer):
    """Joins a list of inputs along `axis` (the other axes must match)."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis
        self.supports_masking = True

    def compute_mask(self, inputs, previous_mask=None):
        """Keras's: the masks (all-true for an input without one, expanded to
        its rank) joined along `axis`, then any() over the last axis."""
        if previous_mask is None or all(m is None for m in previous_mask):
            return None
        parts = []
        for x, m in zip(inputs, previous_mask):
            if m is None:
                parts.append(nondiff.ones_like(x, dtype="bool"))
            elif len(m.shape) < len(x.shape):
                parts.append(
                    array_ops.broadcast_to(
                        array_ops.expand_dims(math_ops.cast(m, "bool"), -1),
                        tuple(x.shape),
                    )
                )
            else:
                parts.append(math_ops.cast(m, "bool"))
        return nondiff.reduce_any(array_ops.concat(parts, self.axis), axis=-1)

    def build(self, input_shape):
        if not isinstance(input_shape, (list, tuple)) or not all(
            isinstance(s, (list, tuple)) for s in input_shape
        ):
            raise ValueError(
                "A `Concatenate` layer should be called on a list of at least 1 "
                f"input. Received: input_shape={input_shape}"
            )
        shapes = [list(s) for s in input_shape]
        rank = len(shapes[0])
        for shape in shapes:
            if len(shape) != rank:
                raise ValueError(_concat_error(input_shape))
            del shape[self.axis % rank]
        for shape in shapes[1:]:
            if any(
                a is not None and b is not None and a != b
                for a, b in zip(shapes[0], shape)
            ):
                raise ValueError(_concat_error(input_shape))
        self.built = True

    def call(self, inputs):
        return array_ops.concat(list(inputs), self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


def _concat_error(input_shape) -> str:
    return (
        "A `Concatenate` layer requires inputs with matching shapes except for "
        f"the concatenation axis. Received: input_shape={input_shape}"
    )


class Dot(Layer):
    """The dot product of two samples along `axes` (Keras's `batch_dot`), of
    L2-normalized samples with `normalize=True` (cosine proximity)."""

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)):
                raise TypeError(
                    "Invalid type for argument `axes`: it should be a list or an "
                    f"int. Received: axes={axes}"
                )
            if len(axes) != 2:
                raise ValueError(
                    "Invalid format for argument `axes`: it should contain two "
                    f"elements. Received: axes={axes}"
                )
            if not all(isinstance(a, int) for a in axes):
                raise ValueError(
                    "Invalid format for argument `axes`: list elements should be "
                    f"integers. Received: axes={axes}"
                )
        self.axes = axes
        self.normalize = bool(normalize)
        self.supports_masking = True

    def compute_mask(self, inputs, previous_mask=None):
        return None  # (Keras's: a dot product has no steps left to mask)

    def _axes(self, rank1, rank2) -> tuple:
        if isinstance(self.axes, int):
            if self.axes < 0:
                return self.axes % rank1, self.axes % rank2
            return self.axes, self.axes
        return self.axes[0] % rank1, self.axes[1] % rank2

    def build(self, input_shape):
        if (
            not isinstance(input_shape, (list, tuple))
            or len(input_shape) != 2
            or not isinstance(input_shape[0], (tuple, list))
        ):
            raise ValueError(
                "A `Dot` layer should be called on a list of 2 inputs. "
                f"Received: input_shape={input_shape}"
            )
        shape1, shape2 = input_shape
        a1, a2 = self._axes(len(shape1), len(shape2))
        if shape1[a1] != shape2[a2]:
            raise ValueError(
                f"Incompatible input shapes: axis values {shape1[a1]} (at axis "
                f"{a1}) != {shape2[a2]} (at axis {a2}). Full input shapes: "
                f"{tuple(shape1)}, {tuple(shape2)}"
            )
        self.built = True

    def call(self, inputs):
        if len(inputs) != 2:
            raise ValueError(
                "A `Dot` layer should be called on exactly 2 inputs. "
                f"Received: inputs={inputs}"
            )
        x1, x2 = inputs
        return _batch_dot(x1, x2, self._axes(x1.ndim, x2.ndim), self.normalize)

    def get_config(self):
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


# The functional forms: `add([x1, x2])` is `Add()([x1, x2])`.
def add(inputs, **kwargs):
    """`Add(**kwargs)(inputs)`."""
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    """`Subtract(**kwargs)(inputs)`."""
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    """`Multiply(**kwargs)(inputs)`."""
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    """`Average(**kwargs)(inputs)`."""
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    """`Maximum(**kwargs)(inputs)`."""
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    """`Minimum(**kwargs)(inputs)`."""
    return Minimum(**kwargs)(inputs)


def concatenate(inputs, axis=-1, **kwargs):
    """`Concatenate(axis=axis, **kwargs)(inputs)`."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes=-1, **kwargs):
    """`Dot(axes=axes, **kwargs)(inputs)`."""
    return Dot(axes=axes, **kwargs)(inputs)
