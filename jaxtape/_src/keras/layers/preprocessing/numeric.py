"""Keras's numeric preprocessing layers: Normalization, Rescaling,
CategoryEncoding, Discretization. Layer L5.

They run as ordinary layers (inside a model, under `jaxtape.function`) and
in `Dataset.map`. `adapt` reads NumPy arrays, Tensors, `jaxtape.data`
Datasets (of batches) and iterables of batches, on the host, as Keras's.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import checks
from jaxtape._src.core.dispatch import op
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.data.dataset import Dataset
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.ops import array_ops, math_ops

__all__ = [
    "CategoryEncoding",
    "Discretization",
    "Normalization",
    "Rescaling",
]


def _batches(data, layer_name: str):
    """`(first batch shape, iterator of NumPy batches)` of `adapt`'s data:
    an array or Tensor is one batch; a Dataset or iterable yields batches
    (a Dataset of single rank-1 elements is batched by 128, as Keras; the
    first item of a tuple element is the data)."""
    if isinstance(data, (np.ndarray, Tensor)) or hasattr(data, "__array__"):
        arr = np.asarray(data)
        return arr.shape, iter([arr])
    if isinstance(data, Dataset):
        try:
            spec: Any = data.element_spec
        except NotImplementedError:  # string elements: assumed batched
            spec = None
        spec = spec[0] if isinstance(spec, tuple) else spec
        # (a Dataset of strings yields batches already: TextVectorization's)
        if spec is not None and len(spec.shape) == 1 and spec.dtype != "string":
            data = data.batch(128)
    if not hasattr(data, "__iter__"):
        raise TypeError(
            f"Unsupported data type: {type(data)}. `{layer_name}.adapt` supports "
            "NumPy arrays, Tensors, `jaxtape.data.Dataset`s and iterables of "
            "batches (e.g. a list of arrays)."
        )
    it = iter(data)
    first = next(it, None)
    if first is None:
        raise ValueError(
            "adapt() received an empty iterable (no batches). Expected at least "
            "one batch. Pass a non-empty iterable of arrays or tensors, e.g. "
            "layer.adapt([x]) or layer.adapt(list_of_batches)."
        )

    def x_of(b):
        return np.asarray(b[0] if isinstance(b, tuple) else b)

    first = x_of(first)
    return first.shape, (x_of(b) for b in itertools.chain([first], it))


# -- Normalization --------------------------------------------------------------------
@op("Normalize", inputs=("x", "mean", "variance"), jit=True)
def _normalize(x, mean, variance, invert):
    """`(x - mean) / max(sqrt(variance), 1e-7)`, or its inverse."""
    std = jnp.maximum(jnp.sqrt(variance), jnp.asarray(1e-7, variance.dtype))
    return mean + x * std if invert else (x - mean) / std


class Normalization(Layer):
    """Standardizes features with a mean and variance (Keras's `Normalization`).

    Pass `mean` and `variance`, or call `adapt(data)` on arrays, Tensors,
    Datasets of batches or iterables of batches; `axis` (default -1) are
    the axes that keep their own statistics (None: one scalar mean).
    `invert=True` maps standardized values back. Weights (adapted case):
    `mean`, `variance` and `count`, non-trainable, as Keras 3's.

    >>> norm = jaxtape.keras.layers.Normalization(axis=None)
    >>> norm.adapt(np.array([1.0, 2.0, 3.0]))
    >>> norm(np.array([2.0])).numpy()
    array([0.], dtype=float32)

    Differences from Keras: None known (statistics are accumulated in
    float64 on the host, Keras's in float32).
    """

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True  # (Keras's: the mask passes through)
        if axis is None:
            axis = ()
        elif isinstance(axis, int):
            axis = (axis,)
        self.axis = tuple(axis)
        self.input_mean, self.input_variance, self.invert = mean, variance, invert
        self._build_input_shape = None
        self.mean = self.variance = None
        if (mean is not None) != (variance is not None):
            raise ValueError(
                "When setting values directly, both `mean` and `variance` must be "
                f"set. Received: mean={mean} and variance={variance}"
            )
        if mean is not None and variance is not None:
            if np.shape(mean) != np.shape(variance):
                raise ValueError(
                    "When setting values directly, `mean` and `variance` must have "
                    f"the same shape. Received: mean shape {np.shape(mean)} and "
                    f"variance shape {np.shape(variance)}"
                )
            if len(np.shape(mean)) > len(self.axis):
                raise ValueError(
                    "The rank of `mean` must be less than or equal to the number of "
                    f"axes ({len(self.axis)}). Received: mean shape "
                    f"{np.shape(mean)} for axis {self.axis}"
                )

    def build(self, input_shape):
        shape = tuple(input_shape)
        ndim = len(shape)
        self._build_input_shape = shape
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError(
                "All `axis` values must be in the range [-ndim, ndim). Received "
                f"inputs with ndim={ndim}, while axis={self.axis}"
            )
        self._keep_axis = tuple(sorted(a % ndim for a in self.axis))
        for d in self._keep_axis:
            if shape[d] is None:
                raise ValueError(
                    "All `axis` values to be kept must have a known shape. Received "
                    f"axis={self.axis}, inputs.shape={shape}, with unknown axis at "
                    f"index {d}"
                )
        self._reduce_axis = tuple(d for d in range(ndim) if d not in self._keep_axis)
        self._broadcast_shape = [
            shape[d] if d in self._keep_axis else 1 for d in range(ndim)
        ]
        self._mean_and_var_shape = tuple(shape[d] for d in self._keep_axis)
        if self.input_mean is None:
            stats = self._mean_and_var_shape
            self.adapt_mean = self.add_weight(
                "mean", stats, initializer="zeros", trainable=False
            )
            self.adapt_variance = self.add_weight(
                "variance", stats, initializer="ones", trainable=False
            )
            self.count = self.add_weight(
                "count", (), dtype="int64", initializer="zeros", trainable=False
            )
        else:
            mean = np.asarray(self.input_mean, np.float64)
            var = np.asarray(self.input_variance, np.float64)
            expanded = [1] * ndim
            for i in range(1, mean.ndim + 1):
                expanded[self._keep_axis[-i]] = mean.shape[-i]
            bshape = tuple(self._broadcast_shape)
            self.mean = np.broadcast_to(mean.reshape(expanded), bshape).astype(
                self._dtype
            )
            self.variance = np.broadcast_to(var.reshape(expanded), bshape).astype(
                self._dtype
            )
        self.built = True

    def adapt(self, data) -> None:
        """Computes the mean and variance of `data` (Keras's streaming
        update over batches: the lack-of-fit sum of squares)."""
        shape, batches = _batches(data, "Normalization")
        if not self.built:
            self.build(shape)
            self.built = True
        elif self.input_mean is not None:
            raise ValueError(
                f"Normalization layer {self.name!r} was given `mean` and "
                "`variance`; it cannot be adapted. Create it without them."
            )
        build_shape = self._build_input_shape or ()
        total_mean = np.zeros(self._mean_and_var_shape)
        total_var = np.zeros(self._mean_and_var_shape)
        total = 0
        for batch in batches:
            batch = batch.astype(np.float64)
            for d in self._keep_axis:
                if build_shape[d] is not None and batch.shape[d] != build_shape[d]:
                    raise ValueError(
                        f"The layer was built with input_shape={build_shape}, but "
                        "adapt() is being called with data with an incompatible "
                        f"shape, data.shape={batch.shape}"
                    )
            mean = batch.mean(axis=self._reduce_axis)
            var = batch.var(axis=self._reduce_axis)
            n = math.prod(batch.shape[d] for d in self._reduce_axis)
            total += n
            w = n / total
            new_mean = total_mean * (1 - w) + mean * w
            total_var = (total_var + (total_mean - new_mean) ** 2) * (1 - w) + (
                var + (mean - new_mean) ** 2
            ) * w
            total_mean = new_mean
        self.adapt_mean.assign(total_mean.astype(self._dtype))
        self.adapt_variance.assign(total_var.astype(self._dtype))

    def call(self, inputs):
        if self.input_mean is None:
            mean = math_ops.cast(self.adapt_mean, self._dtype.name)
            variance = math_ops.cast(self.adapt_variance, self._dtype.name)
            mean = array_ops.reshape(mean, self._broadcast_shape)
            variance = array_ops.reshape(variance, self._broadcast_shape)
        else:
            mean, variance = self.mean, self.variance
        x = math_ops.cast(inputs, self._dtype.name)
        return _normalize(x, mean, variance, bool(self.invert))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def build_from_config(self, config) -> None:
        if config and "input_shape" in config:
            self.build(tuple(config["input_shape"]))
            self.built = True

    def get_config(self):
        return {
            **super().get_config(),
            "axis": list(self.axis),
            "invert": self.invert,
            "mean": np.array(self.input_mean).tolist(),
            "variance": np.array(self.input_variance).tolist(),
        }


# -- Rescaling -------------------------------------------------------------------------
class Rescaling(Layer):
    """`inputs * scale + offset` in the layer's dtype (Keras's `Rescaling`):
    `Rescaling(1 / 255)` maps pixels to [0, 1].

    Differences from Keras: None known.
    """

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset

    def call(self, inputs):
        x = math_ops.cast(inputs, self._dtype.name)
        scale = np.asarray(self.scale, self._dtype)
        offset = np.asarray(self.offset, self._dtype)
        return math_ops.add(math_ops.multiply(x, scale), offset)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        def plain(v):
            return np.asarray(v).tolist() if not isinstance(v, (int, float)) else v

        return {
            **super().get_config(),
            "scale": plain(self.scale),
            "offset": plain(self.offset),
        }


# -- CategoryEncoding ------------------------------------------------------------------
def _check_non_negative(xp, x, count_weights, depth, mode, dtype):
    """TF's `DenseBincount` check (multi-hot and count modes)."""
    if mode != "one_hot":
        flat = xp.ravel(x)
        checks.require(
            xp,
            flat < 0,
            "DenseBincount",
            "Input 'in' must be non-negative! Negative input value found: {}",
            lambda xp, i: flat[i],
        )


@op(
    "CategoryEncoding",
    inputs=("x", "count_weights"),
    differentiable=False,
    check=_check_non_negative,
)
def _encode(x, count_weights, depth, mode, dtype):
    """Keras's `encode_categorical_inputs`: one-hot, multi-hot or counts."""
    x = x.astype(jnp.int32)
    if mode == "one_hot":
        if x.ndim and x.shape[-1] == 1 and x.ndim > 1:
            x = x[..., 0]
        return (x[..., None] == jnp.arange(depth, dtype=x.dtype)).astype(dtype)
    if x.ndim == 1:
        x = x[None]
        squeeze = True
    elif x.ndim == 0:
        x = x[None, None]
        squeeze = True
    else:
        squeeze = False
    hits = x[..., None] == jnp.arange(depth, dtype=x.dtype)  # (..., n, depth)
    w = jnp.asarray(count_weights)
    if mode == "count":
        if w.ndim:
            out = jnp.sum(jnp.where(hits, w[..., None], 0), axis=-2)
        else:
            out = jnp.sum(hits, axis=-2)
    else:
        out = jnp.any(hits, axis=-2)
    out = out.astype(dtype)
    return out[0] if squeeze else out


class CategoryEncoding(Layer):
    """Encodes integer features as one-hot, multi-hot or count vectors
    (Keras's `CategoryEncoding`): `num_tokens` categories, `output_mode`
    `'multi_hot'` (default), `'one_hot'` or `'count'` (`count_weights=` in
    the call weighs each occurrence). Values `>= num_tokens` are dropped and
    negative ones raise InvalidArgumentError (multi-hot and count modes), as
    Keras 3.15 on TF.

    Differences from Keras: `sparse=True` raises NotImplementedError.
    """

    def __init__(
        self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs
    ):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode not in ("count", "one_hot", "multi_hot"):
            raise ValueError(f"Unknown arg for output_mode: {output_mode}")
        if num_tokens is None:
            raise ValueError(
                "num_tokens must be set to use this layer. If the number of tokens "
                "is not known beforehand, use the IntegerLookup layer instead."
            )
        if num_tokens < 1:
            raise ValueError(
                f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}."
            )
        if sparse:
            raise NotImplementedError(
                "CategoryEncoding(sparse=True) is not supported by jaxtape; use "
                "the dense output."
            )
        self.num_tokens, self.output_mode, self.sparse = (
            int(num_tokens),
            output_mode,
            False,
        )
        self._autocast = False

    def call(self, inputs, count_weights=None):
        if count_weights is not None and self.output_mode != "count":
            raise ValueError(
                "`count_weights` is not used when `output_mode` is not `'count'`. "
                f"Received `count_weights={count_weights}`."
            )
        weights = np.True_ if count_weights is None else count_weights
        return _encode(
            inputs, weights, self.num_tokens, self.output_mode, self._dtype.name
        )

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        if not shape:
            return (self.num_tokens,)
        if self.output_mode == "one_hot" and shape[-1] != 1:
            return (*shape, self.num_tokens)
        return (*shape[:-1], self.num_tokens)

    def get_config(self):
        return {
            **super().get_config(),
            "num_tokens": self.num_tokens,
            "output_mode": self.output_mode,
        }  # (Keras's lists no `sparse`)


# -- Discretization --------------------------------------------------------------------
@op("Bucketize", inputs=("x",), differentiable=False)
def _bucketize(x, boundaries):
    """TF's `Bucketize`: the index of the bucket of each value (right-closed
    boundaries: `b[i-1] <= x < b[i]`)."""
    bounds = jnp.asarray(boundaries, x.dtype)
    return jnp.searchsorted(bounds, x, side="right").astype(jnp.int32)


class Discretization(Layer):
    """Buckets continuous values by `bin_boundaries` (Keras's
    `Discretization`), or by `num_bins` boundaries that `adapt` finds with
    Keras's approximate-quantile summary (`epsilon`; the same boundaries as
    Keras's, batch by batch). `output_mode` `'int'` (bucket indices, int32)
    or one of CategoryEncoding's modes.

    Differences from Keras: `sparse=True` raises NotImplementedError.
    """

    def __init__(
        self,
        bin_boundaries=None,
        num_bins=None,
        epsilon=0.01,
        output_mode="int",
        sparse=False,
        dtype=None,
        name=None,
    ):
        super().__init__(name=name, dtype=dtype or "float32")
        if sparse:
            raise NotImplementedError(
                "Discretization(sparse=True) is not supported by jaxtape."
            )
        if output_mode not in ("int", "one_hot", "multi_hot", "count"):
            raise ValueError(
                "Invalid value for argument `output_mode`. Expected one of "
                "{'int', 'one_hot', 'multi_hot', 'count'}. Received: "
                f"output_mode={output_mode}"
            )
        if num_bins is not None and num_bins < 0:
            raise ValueError(
                "`num_bins` must be greater than or equal to 0. Received: "
                f"`num_bins={num_bins}`"
            )
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError(
                "Both `num_bins` and `bin_boundaries` should not be set. "
                f"Received: `num_bins={num_bins}` and "
                f"`bin_boundaries={bin_boundaries}`"
            )
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        self.bin_boundaries = bin_boundaries
        self.num_bins = num_bins
        self.epsilon, self.output_mode, self.sparse = epsilon, output_mode, False
        self._autocast = False
        self.summary: Any = None if bin_boundaries else _empty_summary()

    def adapt(self, data, steps=None) -> None:
        """Sets `num_bins - 1` boundaries from the data's quantiles, as
        Keras's: each batch (an array is one batch) is summarized and merged
        into a summary of `1 / epsilon` weighted points."""
        if self.num_bins is None:
            raise ValueError(
                "Cannot adapt a Discretization layer that has been initialized "
                "with `bin_boundaries`, use `num_bins` instead."
            )
        self.reset_state()
        if isinstance(data, (np.ndarray, Tensor)) or not hasattr(data, "__iter__"):
            batches = iter([data])
        else:
            batches = (b[0] if isinstance(b, tuple) else b for b in data)
        for batch in itertools.islice(batches, steps):
            self.update_state(batch)
        self.finalize_state()

    def update_state(self, data) -> None:
        summary = _summarize(np.asarray(data).astype("float32"), self.epsilon)
        self.summary = _merge_summaries(summary, self.summary, self.epsilon)

    def finalize_state(self) -> None:
        if self.num_bins is not None:
            self.bin_boundaries = _compress_summary(self.summary, 1.0 / self.num_bins)[
                0, :-1
            ].tolist()

    def reset_state(self) -> None:
        if self.num_bins is not None:
            self.summary = _empty_summary()

    def call(self, inputs):
        boundaries = self.bin_boundaries
        if boundaries is None:
            raise ValueError(
                f"Discretization layer {self.name!r} has no `bin_boundaries`: call "
                "`adapt(data)` first, or pass `bin_boundaries`."
            )
        idx = _bucketize(inputs, tuple(float(b) for b in boundaries))
        if self.output_mode == "int":
            return idx
        depth = len(boundaries) + 1
        return _encode(idx, np.True_, depth, self.output_mode, self._dtype.name)

    def get_config(self):
        # (Keras's: no `trainable`, the dtype's name; adapted boundaries listed)
        return {
            "bin_boundaries": self.bin_boundaries,
            "num_bins": self.num_bins,
            "epsilon": self.epsilon,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
            "name": self.name,
            "dtype": self.dtype,
        }

    @classmethod
    def from_config(cls, config: dict) -> Any:
        cfg = {k: v for k, v in config.items() if k != "trainable"}
        if isinstance(cfg.get("dtype"), dict):  # (a DTypePolicy's config)
            cfg["dtype"] = cfg["dtype"]["config"]["name"]
        if cfg.get("bin_boundaries") is not None and cfg.get("num_bins") is not None:
            boundaries = cfg.pop("bin_boundaries")  # (an adapted layer's)
            layer = cls(**cfg)
            layer.bin_boundaries = boundaries
            return layer
        return cls(**cfg)


def _empty_summary():
    return np.array([[], []], dtype="float32")


def _summarize(values, epsilon):
    """Keras's `summarize`: the sorted values at every `len / (1 / epsilon)`-th
    place (all of them when fewer), each weighted by that step."""
    values = np.sort(np.reshape(values, [-1]))
    step = max(np.size(values) / (1.0 / epsilon), 1)
    boundaries = values[int(step - 1) :: int(step)]
    return np.stack([boundaries, np.ones_like(boundaries) * step])


def _merge_summaries(prev_summary, next_summary, epsilon):
    """Keras's `merge_summaries`: a weighted merge sort, then compressed."""
    merged = np.concatenate((prev_summary, next_summary), axis=1)
    merged = np.take(merged, np.argsort(merged[0]), axis=1)
    return _compress_summary(merged, epsilon)


def _compress_summary(summary, epsilon):
    """Keras's `compress_summary`: the values and weights interpolated at
    cumulative-weight fractions `epsilon, 2 * epsilon, ..., 1`."""
    if summary.shape[1] * epsilon < 1:
        return summary
    percents = epsilon + np.arange(0.0, 1.0, epsilon)
    cum_weights = summary[1].cumsum()
    cum_weight_percents = cum_weights / cum_weights[-1]
    new_bins = np.interp(percents, cum_weight_percents, summary[0])
    cum_weights = np.interp(percents, cum_weight_percents, cum_weights)
    new_weights = cum_weights - np.concatenate((np.array([0]), cum_weights[:-1]))
    return np.stack((new_bins, new_weights)).astype("float32")
