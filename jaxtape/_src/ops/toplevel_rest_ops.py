"""The last of TF's top-level ops and registries: `tf.conv`, `tf.approx_top_k`,
`tf.check_pinned`, `tf.AggregationMethod`, `tf.RegisterGradient`.

Layer L1: imports `core` and `ops`.
"""

from __future__ import annotations

from collections import namedtuple

import jax
import jax.core
import numpy as np
from jax import lax

from jaxtape._src.core import device, errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import toplevel_more_ops
from jaxtape._src.ops.nn_extra_ops import _approx_k


# -- tf.conv -------------------------------------------------------------------------
def conv(
    input,  # noqa: A002 - TF's name
    filter,  # noqa: A002
    strides,
    padding,
    explicit_paddings=(),
    data_format="CHANNELS_LAST",
    dilations=(),
    batch_dims=1,
    groups=1,
    name=None,
):
    """TF's `Conv` op (`tf.conv`): an N-D convolution with `batch_dims` leading
    batch dimensions, `N` = 2 or 3 spatial dimensions.

    Args:
      input: `[*batch, *spatial, in_channels]` (`CHANNELS_LAST`) or
        `[*batch, in_channels, *spatial]` (`CHANNELS_FIRST`).
      filter: `[*spatial_window, in_channels / groups, out_channels]`.
      strides: `N + 2` integers (batch and channel entries 1).
      padding: `"SAME"`, `"VALID"` or `"EXPLICIT"` (then `explicit_paddings`,
        `2 * (N + 2)` integers: a (before, after) pair per dimension).
      dilations: `N + 2` integers, or empty for 1s.
      batch_dims: how many leading dimensions are batch dimensions.
      groups: grouped convolution (`in_channels / groups` per filter).
      name: Accepted for TensorFlow compatibility; ignored.

    Differences from TensorFlow:
      TF's CPU kernel takes only `CHANNELS_LAST` and `groups=1` (its GPU
      kernel takes both); jaxtape computes either on any device.
    """
    del name
    nd = np.ndim(to_value(filter)) - 2
    if nd not in (2, 3):
        raise errors.invalid_argument(
            f"The input must have 2 or 3 spatial dimensions but got {nd}", "Conv"
        )
    first = data_format == "CHANNELS_FIRST"
    if data_format not in ("CHANNELS_LAST", "CHANNELS_FIRST"):
        raise ValueError(
            f"data_format must be 'CHANNELS_LAST' or 'CHANNELS_FIRST'; "
            f"received data_format={data_format!r}."
        )
    strides = _window_attr("strides", strides, nd, first)
    dilations = _window_attr("dilations", list(dilations) or [1] * (nd + 2), nd, first)
    if padding == "EXPLICIT":
        pads = [int(p) for p in explicit_paddings]
        if len(pads) != 2 * (nd + 2):
            raise errors.invalid_argument(
                f"explicit_paddings attribute must contain {2 * (nd + 2)} values, "
                f"but got: {len(pads)}",
                "Conv",
            )
        pairs = [(pads[2 * i], pads[2 * i + 1]) for i in range(nd + 2)]
        spatial_pads = tuple(pairs[2:] if first else pairs[1:-1])
    elif padding in ("SAME", "VALID"):
        spatial_pads = padding
    else:
        raise ValueError(
            "padding must be 'SAME', 'VALID' or 'EXPLICIT'; received "
            f"padding={padding!r}."
        )
    return _conv_nd(
        input,
        filter,
        strides,
        spatial_pads,
        dilations,
        first,
        int(batch_dims),
        int(groups),
    )


def _window_attr(what, values, nd, first) -> tuple[int, ...]:
    """The spatial entries of TF's `N + 2`-long strides/dilations list."""
    values = [int(v) for v in values]
    if len(values) != nd + 2:
        raise errors.invalid_argument(
            f"Sliding window {what} field must specify {nd + 2} dimensions", "Conv"
        )
    outer = (values[0], values[1]) if first else (values[0], values[-1])
    if outer != (1, 1):
        raise errors.invalid_argument(
            f"Current implementation does not support {what} in the batch "
            "and depth dimensions.",
            "Conv",
        )
    return tuple(values[2:] if first else values[1:-1])


@op("Conv", inputs=("input", "filter"), same_dtype=True)
def _conv_nd(input, filter, strides, padding, dilations, first, batch_dims, groups):  # noqa: A002
    nd = filter.ndim - 2
    batch = input.shape[:batch_dims]
    x = input.reshape((-1,) + input.shape[batch_dims:])
    spatial = tuple(range(2, nd + 2)) if first else tuple(range(1, nd + 1))
    feature = 1 if first else nd + 1
    numbers = lax.ConvDimensionNumbers(
        lhs_spec=(0, feature) + spatial,
        rhs_spec=(nd + 1, nd) + tuple(range(nd)),
        out_spec=(0, feature) + spatial,
    )
    out = lax.conv_general_dilated(
        x,
        filter,
        window_strides=strides,
        padding=padding,
        rhs_dilation=dilations,
        dimension_numbers=numbers,
        feature_group_count=groups,
    )
    return out.reshape(batch + out.shape[1:])


# -- tf.approx_top_k ------------------------------------------------------------------
ApproxTopK = namedtuple("ApproxTopK", ["values", "indices"])


def approx_top_k(
    input,  # noqa: A002 - TF's name
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    is_max_k=True,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
    name=None,
):
    """The `k` largest (or, `is_max_k=False`, smallest) entries along
    `reduction_dimension` and their int32 indices (TF's `tf.approx_top_k`,
    the op behind `tf.math.approx_max_k`), as `ApproxTopK(values, indices)`.

    Exact here (recall 1, above any `recall_target`): TF's CPU kernel is
    exact too; its TPU kernel may miss entries. `reduction_input_size_override`
    and `aggregate_to_topk` only steer the TPU algorithm; the result is the
    same top `k`.

    Differences from TensorFlow:
      TF's CPU kernel takes only `reduction_dimension=-1` and `is_max_k=True`
      (others raise NotFoundError there); jaxtape computes any.
    """
    del recall_target, reduction_input_size_override, aggregate_to_topk, name
    values, indices = _approx_k(input, int(k), int(reduction_dimension), bool(is_max_k))
    return ApproxTopK(values, indices)


# -- tf.check_pinned ------------------------------------------------------------------
def check_pinned(tensor, name=None):
    """Returns `tensor` if it is in host memory pinned for the GPU (TF's
    `tf.check_pinned`): a JAX array whose memory kind is `pinned_host`.

    Raises TF's `FailedPreconditionError` when jaxlib has no CUDA plugin and
    `InvalidArgumentError` when the tensor is elsewhere (device or unpinned
    host memory). Eager only: inside `jaxtape.function` a value's memory is
    chosen by XLA, so it raises NotImplementedError there.
    """
    del name
    if not device.is_built_with_cuda():
        raise errors.FailedPreconditionError(
            None,
            "CheckPinned",
            "to check pinnedness, must be built with `--config=cuda` [Op:CheckPinned]",
        )
    value = to_value(tensor)
    if isinstance(value, jax.core.Tracer):
        raise NotImplementedError(
            "jaxtape.check_pinned inside jaxtape.function: a traced value has no "
            "memory placement yet; call it eagerly."
        )
    kind = getattr(getattr(value, "sharding", None), "memory_kind", None)
    if kind != "pinned_host":
        raise errors.invalid_argument(
            f"Tensor is not in pinned host memory (its memory kind is {kind}); "
            "put it there with jax.device_put(x, sharding.with_memory_kind("
            "'pinned_host')).",
            "CheckPinned",
        )
    return tensor if isinstance(tensor, Tensor) else Tensor(value)


# -- tf.AggregationMethod ------------------------------------------------------------
class AggregationMethod:
    """How `tf.gradients` adds the gradients of one tensor (TF's constants).

    jaxtape's gradients come from `GradientTape`, which has no such option:
    the constants exist for code that passes them (`tf.gradients` itself is
    graph-only in TF 2).
    """

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


# -- tf.RegisterGradient ------------------------------------------------------------
_gradients: dict[str, object] = {}


class RegisterGradient:
    """Registers a gradient function for an op type (TF's `tf.RegisterGradient`).

        @jaxtape.RegisterGradient("MyCustomOp")
        def _my_custom_op_grad(op, grad): ...

    TF uses the registry for the op types of graph ops (`tf.load_op_library`,
    `gradient_override_map`); jaxtape has neither, so the function is only
    recorded (`registered_gradient(op_type)` returns it): no jaxtape op's
    gradient changes. Write a new gradient with `jaxtape.custom_gradient`.
    Registering a name twice (here or with `jaxtape.no_gradient`) raises
    TF's `KeyError`.
    """

    def __init__(self, op_type: str):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, f):
        name = self._op_type
        if name in _gradients or name in toplevel_more_ops._no_gradient_types:
            raise KeyError(f"Registering two gradient with name '{name}'!")
        _gradients[name] = f
        return f


def registered_gradient(op_type: str):
    """The function registered for `op_type` with `RegisterGradient`, or None."""
    return _gradients.get(op_type)
