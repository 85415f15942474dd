"""Keras's reshaping layers. Layer L5.

`Flatten`, `Reshape`, `RepeatVector`, `Permute`, `UpSampling1D/2D/3D`
(nearest; 2-D also bilinear, bicubic, lanczos3/5 as Keras's image resize),
`ZeroPadding1D/2D/3D` and `Cropping1D/2D/3D`, with Keras's arguments and
error texts. Each call is one recorded op.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from jaxtape._src.core.dispatch import op
from jaxtape._src.keras.layers import arguments
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.layers.input_spec import InputSpec
from jaxtape._src.ops import array_ops

__all__ = [
    "Cropping1D",
    "Cropping2D",
    "Cropping3D",
    "Flatten",
    "Permute",
    "RepeatVector",
    "Reshape",
    "UpSampling1D",
    "UpSampling2D",
    "UpSampling3D",
    "ZeroPadding1D",
    "ZeroPadding2D",
    "ZeroPadding3D",
]


class Flatten(Layer):
    """Flattens all axes but the batch axis (channels-last order, as Keras)."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = arguments.standardize_data_format(data_format)

    def call(self, inputs):
        rank = len(inputs.shape)
        if self.data_format == "channels_first" and rank > 2:
            inputs = arguments.to_channels_last(inputs, rank - 2)
        n = inputs.shape[0]
        rest = math.prod(inputs.shape[1:])
        # (A batch size known only when the program runs, as in an export
        # with a None batch: -1, as Keras's reshape of a None dimension.)
        return array_ops.reshape(inputs, (-1 if n is None else n, rest))

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


class Reshape(Layer):
    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(target_shape)

    def call(self, inputs):
        _check_reshape(tuple(inputs.shape)[1:], self.target_shape)
        n, target = inputs.shape[0], self.target_shape
        if n is None:  # a batch size known only at run time: -1, the rest resolved
            n, target = -1, _resolved(tuple(inputs.shape)[1:], target)
        return array_ops.reshape(inputs, (n, *target))

    def get_config(self):
        return {**super().get_config(), "target_shape": list(self.target_shape)}


def _resolved(input_shape, target_shape) -> tuple:
    """`target_shape` with its -1 worked out from the (known) `input_shape`."""
    if -1 not in target_shape or None in input_shape:
        return target_shape
    known = math.prod(d for d in target_shape if d != -1)
    return tuple(
        math.prod(input_shape) // known if d == -1 else d for d in target_shape
    )


def _check_reshape(input_shape, target_shape) -> None:
    """Keras's `compute_reshape_output_shape` checks: the total size must be
    unchanged (ValueError with its text), where the sizes are known."""
    if None in input_shape:
        return
    size, known = math.prod(input_shape), math.prod(d for d in target_shape if d != -1)
    if -1 not in target_shape and size != known:
        raise ValueError(
            "The total size of the tensor must be unchanged. Received: "
            f"input_shape={input_shape}, target_shape={target_shape}"
        )
    if -1 in target_shape and (known == 0 or size % known):
        raise ValueError(
            "The total size of the tensor must be unchanged, however, the input "
            "size cannot by divided by the specified dimensions in target_shape. "
            f"Received: input_shape={input_shape}, target_shape={target_shape}"
        )


class RepeatVector(Layer):
    """`(batch, features)` -> `(batch, n, features)`: the input repeated `n` times."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        if n <= 0:
            raise ValueError(
                f"Argument `n` should be a positive integer. Received: n={n}"
            )
        self.n = n
        self.input_spec = InputSpec(ndim=2)

    def call(self, inputs):
        return array_ops.tile(array_ops.expand_dims(inputs, 1), (1, self.n, 1))

    def get_config(self):
        return {**super().get_config(), "n": self.n}


class Permute(Layer):
    """Permutes the non-batch axes: `dims` counts from 1 (`(2, 1)` swaps them)."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError(
                "Invalid permutation argument `dims` for Permute Layer. The set of "
                "indices in `dims` must be consecutive and start from 1. Received "
                f"dims={dims}"
            )
        self.input_spec = InputSpec(ndim=len(self.dims) + 1)

    def call(self, inputs):
        return array_ops.transpose(inputs, (0, *self.dims))

    def get_config(self):
        return {**super().get_config(), "dims": self.dims}


# -- up-sampling -----------------------------------------------------------------
_RESIZE = {
    "bilinear": "linear",
    "bicubic": "cubic",
    "lanczos3": "lanczos3",
    "lanczos5": "lanczos5",
}


@op("UpSampling", inputs=("x",), jit=True)
def _upsample(x, size, axis, interpolation):
    """Each of the spatial axes from `axis` on scaled by `size`: `nearest`
    repeats (Keras's `ops.repeat`), others resize with half-pixel centres
    (`jax.image.resize`, as TF's `resize` without antialiasing when enlarging)."""
    if interpolation == "nearest":
        for i, s in enumerate(size):
            x = jnp.repeat(x, s, axis=axis + i)
        return x
    shape = list(x.shape)
    for i, s in enumerate(size):
        shape[axis + i] *= s
    return jax.image.resize(x, shape, _RESIZE[interpolation]).astype(x.dtype)


class UpSampling1D(Layer):
    """Repeats each step `size` times along the steps axis."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(size, int) or isinstance(size, bool):
            raise TypeError(f"Expected an integer value for `size`, got {type(size)}.")
        if size <= 0:
            raise ValueError(
                f"Argument `size` should be a positive integer. Received: size={size}"
            )
        self.size = size
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        return _upsample(inputs, (self.size,), 1, "nearest")

    def get_config(self):
        return {**super().get_config(), "size": self.size}


class _UpSampling(Layer):
    _RANK = 2

    def __init__(self, size, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = arguments.standardize_data_format(data_format)
        self.size = arguments.standardize_tuple(size, self._RANK, "size")
        self.input_spec = InputSpec(ndim=self._RANK + 2)
        self.interpolation = "nearest"

    def call(self, inputs):
        axis = 2 if self.data_format == "channels_first" else 1
        return _upsample(inputs, self.size, axis, self.interpolation)

    def get_config(self):
        return {
            **super().get_config(),
            "size": list(self.size),
            "data_format": self.data_format,
        }


class UpSampling2D(_UpSampling):
    """Scales rows and columns by `size`: `interpolation` 'nearest' (repeats),
    'bilinear', 'bicubic', 'lanczos3' or 'lanczos5' (Keras's image resize)."""

    def __init__(
        self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs
    ):
        super().__init__(size, data_format, **kwargs)
        self.interpolation = str(interpolation).lower()
        if self.interpolation != "nearest" and self.interpolation not in _RESIZE:
            raise ValueError(
                "Invalid value for argument `interpolation`. Expected one of "
                f"{['nearest', *_RESIZE]}. Received: interpolation={interpolation}"
            )

    def get_config(self):
        return {**super().get_config(), "interpolation": self.interpolation}


class UpSampling3D(_UpSampling):
    """Repeats each voxel `size` times along each of the three spatial axes."""

    _RANK = 3

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(size, data_format, **kwargs)


# -- zero-padding and cropping -----------------------------------------------------
def _pairs(value, rank, name):
    """Keras's `padding`/`cropping` argument: an int, `rank` ints (symmetric),
    or `rank` pairs, as `((lo, hi), ...)`."""
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"`{name}` cannot be negative. Received: {name}={value}.")
        return ((value, value),) * rank
    if hasattr(value, "__len__"):
        if len(value) != rank:
            raise ValueError(
                f"`{name}` should have {_WORDS[rank]} elements. Received: "
                f"{name}={value}."
            )
        return tuple(
            arguments.standardize_tuple(
                v, 2, f"{_ORDINALS[i]} entry of {name}", allow_zero=True
            )
            for i, v in enumerate(value)
        )
    raise ValueError(
        f"`{name}` should be either an int, a tuple of {rank} ints or a tuple of "
        f"{rank} tuples of 2 ints. Received: {name}={value}."
    )


_WORDS = {2: "two", 3: "three"}
_ORDINALS = ("1st", "2nd", "3rd")


@op("ZeroPad", inputs=("x",), jit=True)
def _zero_pad(x, pads):
    return jnp.pad(x, pads)


@op("Crop", inputs=("x",), jit=True)
def _crop(x, crops):
    return x[tuple(slice(lo, x.shape[i] - hi) for i, (lo, hi) in enumerate(crops))]


class _Spatial(Layer):
    """Padding or cropping of the spatial axes by `(lo, hi)` pairs."""

    _RANK = 1
    _NAME = "padding"

    def _init_spatial(self, pairs, data_format):
        self.data_format = arguments.standardize_data_format(data_format)
        self._pairs = pairs
        self.input_spec = InputSpec(ndim=self._RANK + 2)

    def _full(self):
        """One `(lo, hi)` per input axis (zeros for batch and channels)."""
        none = ((0, 0),)
        if self.data_format == "channels_first":
            return none * 2 + self._pairs
        return none + self._pairs + none

    def get_config(self):
        value = self._pairs[0] if self._RANK == 1 else [list(p) for p in self._pairs]
        return {
            **super().get_config(),
            self._NAME: list(value),
            "data_format": self.data_format,
        }


class _ZeroPadding(_Spatial):
    def __init__(self, padding, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self._init_spatial(_pairs(padding, self._RANK, "padding"), data_format)
        self.padding = self._pairs

    def call(self, inputs):
        return _zero_pad(inputs, self._full())


class ZeroPadding1D(_ZeroPadding):
    """Pads the steps axis with zeros: `padding` an int or `(start, end)`."""

    def __init__(self, padding=1, data_format=None, **kwargs):
        pad = arguments.standardize_tuple(padding, 2, "padding", allow_zero=True)
        super().__init__((pad,), data_format, **kwargs)
        self.padding = pad


class ZeroPadding2D(_ZeroPadding):
    """Pads rows and columns with zeros (`((top, bottom), (left, right))`)."""

    _RANK = 2

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class ZeroPadding3D(_ZeroPadding):
    """Pads the three spatial axes with zeros."""

    _RANK = 3

    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class _Cropping(_Spatial):
    _NAME = "cropping"

    def __init__(self, cropping, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self._init_spatial(_pairs(cropping, self._RANK, "cropping"), data_format)
        self.cropping = self._pairs

    def call(self, inputs):
        full = self._full()
        for size, (lo, hi) in zip(inputs.shape, full):
            if lo + hi >= size and (lo or hi) and self._RANK == 1:
                raise ValueError(  # (Keras's own text for the 1D layer)
                    "`cropping` parameter of `Cropping1D` layer must be smaller "
                    f"than the input length. Received: inputs.shape="
                    f"{tuple(inputs.shape)}, cropping={self.cropping}"
                )
            if lo + hi >= size and (lo or hi):
                raise ValueError(
                    "Values in `cropping` argument should be smaller than the "
                    "corresponding spatial dimension of the input. Received: "
                    f"input_shape={tuple(inputs.shape)}, cropping={self.cropping}"
                )
        return _crop(inputs, full)


class Cropping1D(_Cropping):
    """Crops the steps axis: `cropping` an int or `(start, end)`."""

    def __init__(self, cropping=(1, 1), **kwargs):
        crop = arguments.standardize_tuple(cropping, 2, "cropping", allow_zero=True)
        super().__init__((crop,), "channels_last", **kwargs)
        self.cropping = crop

    def get_config(self):
        cfg = super().get_config()
        del cfg["data_format"]  # (Keras's Cropping1D takes none)
        return cfg


class Cropping2D(_Cropping):
    """Crops rows and columns (`((top, bottom), (left, right))`)."""

    _RANK = 2

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)


class Cropping3D(_Cropping):
    """Crops the three spatial axes."""

    _RANK = 3

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)
