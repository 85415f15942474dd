"""`tf.keras.backend`'s neural-network functions (Keras 3's legacy backend). Layer L5.

Convolutions, pooling, padding, resizing, activations, losses, CTC and `rnn`,
each mirroring `keras/src/legacy/backend.py` (Keras 3.15) over jaxtape's TF
ops: `data_format` is `"channels_last"`/`"channels_first"` (default
`image_data_format()`), `padding` is `"valid"`/`"same"` (`conv1d` also
`"causal"`).
"""

from __future__ import annotations

import itertools

import jax
import numpy as np

from jaxtape._src.core import config, dtypes
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.keras.layers import base as layers_base
from jaxtape._src.keras.legacy_backend import (
    ndim,
    repeat_elements,
    reshape,
    zeros_like,
)
from jaxtape._src.ops import (
    array_ops,
    creation_ops,
    image_resize_ops,
    math_extra_ops,
    math_ops,
    nest,
    nn_extra_ops,
    nn_ops,
    nondiff,
)
from jaxtape._src.structured import nn_sparse_ops, sparse, sparse_ops


def _data_format(data_format):
    if data_format is None:
        data_format = config.image_data_format()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError(f"Unknown data_format: {data_format}")
    return data_format


def _tf_padding(padding):
    if padding == "same":
        return "SAME"
    if padding == "valid":
        return "VALID"
    raise ValueError(f"Invalid padding: {padding}")


_TF_FORMATS = {  # spatial rank -> (channels_last, channels_first)
    1: ("NWC", "NCW"),
    2: ("NHWC", "NCHW"),
    3: ("NDHWC", "NCDHW"),
}


def _tf_format(data_format, rank):
    last, first = _TF_FORMATS[rank]
    return first if data_format == "channels_first" else last


def _full_strides(strides, tf_format):
    strides = tuple(strides)
    return (1,) + strides + (1,) if tf_format.endswith("C") else (1, 1) + strides


# -- convolution and pooling -----------------------------------------------------


def _convolution(x, kernel, strides, padding, data_format, dilation_rate, rank):
    data_format = _data_format(data_format)
    return nn_ops.convolution(
        x,
        kernel,
        strides=strides,
        padding=_tf_padding(padding),
        data_format=_tf_format(data_format, rank),
        dilations=dilation_rate,
    )


def conv1d(x, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """1-D convolution; `padding="causal"` left-pads by `dilation_rate * (k - 1)`."""
    _data_format(data_format)
    if padding == "causal":
        left_pad = dilation_rate * (kernel.shape.as_list()[0] - 1)
        x = temporal_padding(x, (left_pad, 0))
        padding = "valid"
    return _convolution(x, kernel, strides, padding, data_format, dilation_rate, 1)


def conv2d(
    x, kernel, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1)
):
    return _convolution(x, kernel, strides, padding, data_format, dilation_rate, 2)


def conv3d(
    x,
    kernel,
    strides=(1, 1, 1),
    padding="valid",
    data_format=None,
    dilation_rate=(1, 1, 1),
):
    return _convolution(x, kernel, strides, padding, data_format, dilation_rate, 3)


def conv2d_transpose(
    x,
    kernel,
    output_shape,
    strides=(1, 1),
    padding="valid",
    data_format=None,
    dilation_rate=(1, 1),
):
    """Transposed 2-D convolution to `output_shape` (in `data_format`'s order);
    a dilation goes through `atrous_conv2d_transpose` (NHWC), as Keras's."""
    data_format = _data_format(data_format)
    dilation_rate = tuple(dilation_rate)
    transpose = data_format == "channels_first" and dilation_rate != (1, 1)
    tf_format = "NCHW" if data_format == "channels_first" and not transpose else "NHWC"
    if transpose:
        x = array_ops.transpose(x, (0, 2, 3, 1))
        output_shape = tuple(output_shape[i] for i in (0, 2, 3, 1))
    if output_shape[0] is None:
        output_shape = (x.shape[0],) + tuple(output_shape[1:])
    output_shape = list(output_shape)
    padding = _tf_padding(padding)
    if dilation_rate == (1, 1):
        x = nn_extra_ops.conv2d_transpose(
            x,
            kernel,
            output_shape,
            _full_strides(strides, tf_format),
            padding=padding,
            data_format=tf_format,
        )
    else:
        if dilation_rate[0] != dilation_rate[1]:
            raise ValueError(
                "Expected the 2 dimensions of the `dilation_rate` argument "
                "to be equal to each other. "
                f"Received: dilation_rate={dilation_rate}"
            )
        x = nn_extra_ops.atrous_conv2d_transpose(
            x, kernel, output_shape, rate=dilation_rate[0], padding=padding
        )
    if transpose:
        x = array_ops.transpose(x, (0, 3, 1, 2))
    return x


def depthwise_conv2d(
    x,
    depthwise_kernel,
    strides=(1, 1),
    padding="valid",
    data_format=None,
    dilation_rate=(1, 1),
):
    tf_format = _tf_format(_data_format(data_format), 2)
    return nn_extra_ops.depthwise_conv2d(
        x,
        depthwise_kernel,
        strides=_full_strides(strides, tf_format),
        padding=_tf_padding(padding),
        dilations=dilation_rate,
        data_format=tf_format,
    )


def separable_conv2d(
    x,
    depthwise_kernel,
    pointwise_kernel,
    strides=(1, 1),
    padding="valid",
    data_format=None,
    dilation_rate=(1, 1),
):
    tf_format = _tf_format(_data_format(data_format), 2)
    if len(strides) != 2:
        raise ValueError("`strides` must be a tuple of 2 integers.")
    return nn_extra_ops.separable_conv2d(
        x,
        depthwise_kernel,
        pointwise_kernel,
        strides=_full_strides(strides, tf_format),
        padding=_tf_padding(padding),
        dilations=dilation_rate,
        data_format=tf_format,
    )


def _pool(x, pool_size, strides, padding, data_format, pool_mode, rank):
    tf_format = _tf_format(_data_format(data_format), rank)
    padding = _tf_padding(padding)
    strides = _full_strides(strides, tf_format)
    pool_size = _full_strides(pool_size, tf_format)
    if pool_mode == "max":
        fn = nn_ops.max_pool if rank == 2 else nn_extra_ops.max_pool3d
    elif pool_mode == "avg":
        fn = nn_ops.avg_pool if rank == 2 else nn_extra_ops.avg_pool3d
    else:
        raise ValueError(f"Invalid pooling mode: {pool_mode!s}")
    return fn(x, pool_size, strides, padding=padding, data_format=tf_format)


def pool2d(
    x, pool_size, strides=(1, 1), padding="valid", data_format=None, pool_mode="max"
):
    """2-D max (`pool_mode="max"`) or average (`"avg"`) pooling."""
    _data_format(data_format)
    if len(pool_size) != 2:
        raise ValueError("`pool_size` must be a tuple of 2 integers.")
    if len(strides) != 2:
        raise ValueError("`strides` must be a tuple of 2 integers.")
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 2)


def pool3d(
    x,
    pool_size,
    strides=(1, 1, 1),
    padding="valid",
    data_format=None,
    pool_mode="max",
):
    """3-D max (`pool_mode="max"`) or average (`"avg"`) pooling."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 3)


def bias_add(x, bias, data_format=None):
    """Adds a 1-D bias on the channel axis, or an `ndim(x) - 1`-D bias."""
    data_format = _data_format(data_format)
    bias_shape = tuple(bias.shape)
    if len(bias_shape) != 1 and len(bias_shape) != ndim(x) - 1:
        raise ValueError(
            f"Unexpected bias dimensions {len(bias_shape)}. "
            f"Expected it to be 1 or {ndim(x) - 1} dimensions"
        )
    if len(bias_shape) == 1:
        tf_format = "NCHW" if data_format == "channels_first" else "NHWC"
        return nn_ops.bias_add(x, bias, data_format=tf_format)
    if ndim(x) in (3, 4, 5):
        if data_format == "channels_first":
            return x + reshape(bias, (1, bias_shape[-1]) + bias_shape[:-1])
        return x + reshape(bias, (1,) + bias_shape)
    return nn_ops.bias_add(x, bias)


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """`(x - mean) / sqrt(var + epsilon) * gamma + beta`; `axis` is unused, as
    in Keras's."""
    del axis
    return nn_extra_ops.batch_normalization(x, mean, var, beta, gamma, epsilon)


# -- padding and resizing --------------------------------------------------------


def temporal_padding(x, padding=(1, 1)):
    """Zero-pads axis 1 of a 3-D tensor."""
    if len(padding) != 2:
        raise ValueError(
            "Expected `padding` to be a tuple of 2 integers. "
            f"Received: padding={padding}"
        )
    return array_ops.pad(x, [[0, 0], [padding[0], padding[1]], [0, 0]])


def _spatial_padding(x, padding, data_format, rank):
    if len(padding) != rank or any(len(p) != 2 for p in padding):
        words = {2: "2 tuples", 3: "3 tuples"}[rank]
        raise ValueError(
            f"Expected `padding` to be a tuple of {words} of 2 integers. "
            f"Received: padding={padding}"
        )
    spatial = [list(p) for p in padding]
    if _data_format(data_format) == "channels_first":
        pattern = [[0, 0], [0, 0]] + spatial
    else:
        pattern = [[0, 0]] + spatial + [[0, 0]]
    return array_ops.pad(x, pattern)


def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    return _spatial_padding(x, padding, data_format, 2)


def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    return _spatial_padding(x, padding, data_format, 3)


_RESIZE = image_resize_ops.ResizeMethod
_INTERPOLATIONS = {
    "area": _RESIZE.AREA,
    "bicubic": _RESIZE.BICUBIC,
    "bilinear": _RESIZE.BILINEAR,
    "gaussian": _RESIZE.GAUSSIAN,
    "lanczos3": _RESIZE.LANCZOS3,
    "lanczos5": _RESIZE.LANCZOS5,
    "mitchellcubic": _RESIZE.MITCHELLCUBIC,
    "nearest": _RESIZE.NEAREST_NEIGHBOR,
}


def resize_images(x, height_factor, width_factor, data_format, interpolation="nearest"):
    """Scales the two spatial axes by integer factors with `image.resize`."""
    if data_format == "channels_first":
        rows = 2
    elif data_format == "channels_last":
        rows = 1
    else:
        raise ValueError(f"Invalid `data_format` argument: {data_format}")
    if interpolation not in _INTERPOLATIONS:
        names = '"' + '", "'.join(_INTERPOLATIONS) + '"'
        raise ValueError(
            "`interpolation` argument should be one of: "
            f'{names}. Received: "{interpolation}".'
        )
    height, width = x.shape.as_list()[rows : rows + 2]
    new_shape = [height * height_factor, width * width_factor]
    if data_format == "channels_first":
        x = array_ops.transpose(x, [0, 2, 3, 1])
    x = image_resize_ops.resize(x, new_shape, method=_INTERPOLATIONS[interpolation])
    if data_format == "channels_first":
        x = array_ops.transpose(x, [0, 3, 1, 2])
    return x


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    """Repeats the three spatial axes' elements by integer factors."""
    if data_format == "channels_first":
        first = 2
    elif data_format == "channels_last":
        first = 1
    else:
        raise ValueError(f"Invalid data_format: {data_format}")
    for offset, factor in enumerate((depth_factor, height_factor, width_factor)):
        x = repeat_elements(x, factor, axis=first + offset)
    return x


# -- products --------------------------------------------------------------------


def dot(x, y):
    """Keras's `dot`: for rank > 2, contracts `x`'s last axis with `y`'s
    second-to-last (Theano's `dot`), else `matmul`."""
    if ndim(x) > 2 or ndim(y) > 2:
        x_shape = tuple(x.shape.as_list())
        y_shape = tuple(y.shape.as_list())
        perm = list(range(ndim(y)))
        perm = [perm.pop(-2)] + perm
        xt = array_ops.reshape(x, [-1, x_shape[-1]])
        yt = array_ops.reshape(array_ops.transpose(y, perm=perm), [y_shape[-2], -1])
        return array_ops.reshape(
            math_ops.matmul(xt, yt), x_shape[:-1] + y_shape[:-2] + y_shape[-1:]
        )
    if isinstance(x, sparse.SparseTensor):
        return sparse_ops.sparse_dense_matmul(x, y)
    return math_ops.matmul(x, y)


def _batch_dot_axes(x_shape, y_shape, axes):
    x_ndim, y_ndim = len(x_shape), len(y_shape)
    if x_ndim < 2 or y_ndim < 2:
        raise ValueError(
            "Cannot do batch_dot on inputs with rank < 2. "
            f"Received inputs with tf.shapes {x_shape} and {y_shape}."
        )
    if x_shape[0] is not None and y_shape[0] is not None:
        if x_shape[0] != y_shape[0]:
            raise ValueError(
                "Cannot do batch_dot on inputs with different batch sizes. "
                f"Received inputs with tf.shapes {x_shape} and {y_shape}."
            )
    if isinstance(axes, int):
        axes = [axes, axes]
    if axes is None:
        axes = [x_ndim - 1, y_ndim - 1] if y_ndim == 2 else [x_ndim - 1, y_ndim - 2]
    if any(isinstance(a, (list, tuple)) for a in axes):
        raise ValueError(
            "Multiple target dimensions are not supported. "
            "Expected: None, int, (int, int), "
            f"Provided: {axes}"
        )
    axes = list(axes)
    if axes[0] < 0:
        axes[0] += x_ndim
    if axes[1] < 0:
        axes[1] += y_ndim
    if 0 in axes:
        raise ValueError(
            "Cannot perform batch_dot over axis 0. "
            "If your inputs are not batched, "
            "add a dummy batch dimension to your "
            "inputs using K.expand_dims(x, 0)"
        )
    d1, d2 = x_shape[axes[0]], y_shape[axes[1]]
    if d1 is not None and d2 is not None and d1 != d2:
        raise ValueError(
            "Cannot do batch_dot on inputs with tf.shapes "
            f"{x_shape} and {y_shape} with axes={axes}. "
            "x.shape[%d] != y.shape[%d] (%d != %d)." % (axes[0], axes[1], d1, d2)
        )
    return axes


def batch_dot(x, y, axes=None):
    """Keras's batchwise dot product: contracts `x`'s axis `axes[0]` with `y`'s
    `axes[1]` per batch element; the result keeps `x`'s then `y`'s other axes
    (a rank-2 operand's added axis is squeezed out)."""
    x_shape, y_shape = tuple(x.shape.as_list()), tuple(y.shape.as_list())
    a0, a1 = _batch_dot_axes(x_shape, y_shape, axes)
    x_ndim, y_ndim = len(x_shape), len(y_shape)
    orig_x_ndim, orig_y_ndim = x_ndim, y_ndim
    if x_ndim == 2:
        x = array_ops.expand_dims(x, 1)
        a0 += 1
        x_ndim += 1
    if y_ndim == 2:
        y = array_ops.expand_dims(y, 2)
        y_ndim += 1
    if a0 != x_ndim - 1:  # x's contracted axis last
        pattern = [i for i in range(x_ndim) if i != a0] + [a0]
        x = array_ops.transpose(x, pattern)
    if a1 != 1:  # y's contracted axis second
        pattern = [0, a1] + [i for i in range(1, y_ndim) if i != a1]
        y = array_ops.transpose(y, pattern)
    x_mid = x.shape.as_list()[1:-1]
    y_trail = y.shape.as_list()[2:]
    if x_ndim > 3:
        x = array_ops.reshape(x, [x.shape[0], -1, x.shape[-1]])
    if y_ndim > 3:
        y = array_ops.reshape(y, [y.shape[0], y.shape[1], -1])
    result = math_ops.matmul(x, y)
    if x_ndim > 3 or y_ndim > 3:
        out_shape = result.shape.as_list()
        if x_ndim > 3:
            out_shape = out_shape[:1] + x_mid + out_shape[-1:]
        if y_ndim > 3:
            out_shape = out_shape[:-1] + y_trail
        result = array_ops.reshape(result, out_shape)
    if orig_x_ndim == 2:
        result = array_ops.squeeze(result, 1)
    elif orig_y_ndim == 2:
        result = array_ops.squeeze(result, -1)
    return result


def in_top_k(predictions, targets, k):
    return math_extra_ops.in_top_k(targets, predictions, k)


# -- activations -----------------------------------------------------------------


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """Keras's generalized relu: `x` above `threshold` (capped at `max_value`),
    `alpha * (x - threshold)` below."""
    dtype = getattr(x, "dtype", config.floatx())
    if alpha != 0.0:
        if max_value is None and threshold == 0:
            return nn_ops.leaky_relu(x, alpha=alpha)
        if threshold != 0:
            negative_part = nn_ops.relu(-x + threshold)
        else:
            negative_part = nn_ops.relu(-x)
    else:
        negative_part = 1
    clip_max = max_value is not None
    if threshold != 0:
        x = x * math_ops.cast(nondiff.greater(x, threshold), dtype=dtype)
    elif max_value == 6:
        x = nn_ops.relu6(x)
        clip_max = False
    else:
        x = nn_ops.relu(x)
    if clip_max:
        max_value = creation_ops.convert_to_tensor(max_value, dtype=x.dtype)
        zero = creation_ops.convert_to_tensor(0, dtype=x.dtype)
        x = math_ops.clip_by_value(x, zero, max_value)
    if alpha != 0.0:
        alpha = creation_ops.convert_to_tensor(alpha, dtype=x.dtype)
        x -= alpha * negative_part
    return x


def elu(x, alpha=1.0):
    """`elu`, with the negative part scaled by `alpha`."""
    res = nn_ops.elu(x)
    if alpha == 1:
        return res
    return array_ops.where(x > 0, res, alpha * res)


def hard_sigmoid(x):
    """`clip(0.2 * x + 0.5, 0, 1)` (Keras 2's slope, not Keras 3's 1/6)."""
    x = math_ops.multiply(x, creation_ops.convert_to_tensor(0.2, dtype=x.dtype))
    x = math_ops.add(x, creation_ops.convert_to_tensor(0.5, dtype=x.dtype))
    return math_ops.clip_by_value(x, 0.0, 1.0)


def sigmoid(x):
    return math_ops.sigmoid(x)


def softplus(x):
    return math_ops.softplus(x)


def softsign(x):
    return nn_ops.softsign(x)


def softmax(x, axis=-1):
    """Softmax over `axis` (an int or a tuple of axes); refuses 1-D inputs."""
    if x.shape.rank <= 1:
        raise ValueError(
            f"Cannot apply softmax to a tensor that is 1D. Received input: {x}"
        )
    if isinstance(axis, int):
        return nn_ops.softmax(x, axis=axis)
    numerator = math_ops.exp(x - math_ops.reduce_max(x, axis=axis, keepdims=True))
    return numerator / math_ops.reduce_sum(numerator, axis=axis, keepdims=True)


# -- losses ----------------------------------------------------------------------


def _clip_eps(output):
    eps = creation_ops.convert_to_tensor(config.epsilon(), output.dtype)
    return math_ops.clip_by_value(output, eps, 1.0 - eps)


def binary_crossentropy(target, output, from_logits=False):
    """Elementwise binary crossentropy (probabilities clipped to
    `[eps, 1 - eps]`, `eps` added inside the logs, as Keras's)."""
    target = creation_ops.convert_to_tensor(target)
    output = creation_ops.convert_to_tensor(output)
    if from_logits:
        return nn_ops.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    output = _clip_eps(output)
    bce = target * math_ops.log(output + config.epsilon())
    bce += (1 - target) * math_ops.log(1 - output + config.epsilon())
    return -bce


def binary_focal_crossentropy(
    target,
    output,
    apply_class_balancing=False,
    alpha=0.25,
    gamma=2.0,
    from_logits=False,
):
    sigmoidal = math_ops.sigmoid(output) if from_logits else output
    p_t = target * sigmoidal + (1 - target) * (1 - sigmoidal)
    focal_bce = math_ops.pow(1.0 - p_t, gamma) * binary_crossentropy(
        target=target, output=output, from_logits=from_logits
    )
    if apply_class_balancing:
        focal_bce = (target * alpha + (1 - target) * (1 - alpha)) * focal_bce
    return focal_bce


def _check_compatible(target, output):
    if not target.shape.is_compatible_with(output.shape):
        raise ValueError(f"Shapes {target.shape} and {output.shape} are incompatible")


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    target = creation_ops.convert_to_tensor(target)
    output = creation_ops.convert_to_tensor(output)
    _check_compatible(target, output)
    if from_logits:
        return nn_ops.softmax_cross_entropy_with_logits(
            labels=target, logits=output, axis=axis
        )
    output = _clip_eps(output / math_ops.reduce_sum(output, axis, True))
    return -math_ops.reduce_sum(target * math_ops.log(output), axis)


def categorical_focal_crossentropy(
    target, output, alpha=0.25, gamma=2.0, from_logits=False, axis=-1
):
    target = creation_ops.convert_to_tensor(target)
    output = creation_ops.convert_to_tensor(output)
    _check_compatible(target, output)
    if from_logits:
        output = nn_ops.softmax(output, axis=axis)
    output = _clip_eps(output / math_ops.reduce_sum(output, axis=axis, keepdims=True))
    cce = -target * math_ops.log(output)
    weighting = math_ops.multiply(math_ops.pow(1.0 - output, gamma), alpha)
    return math_ops.reduce_sum(math_ops.multiply(weighting, cce), axis=axis)


def sparse_categorical_crossentropy(
    target, output, from_logits=False, axis=-1, ignore_class=None
):
    """Integer-label crossentropy; `ignore_class` entries give 0, and the
    result carries the mask of the others (Keras's `_keras_mask`, read with
    `jaxtape.keras`'s layers' mask machinery)."""
    target = math_ops.cast(creation_ops.convert_to_tensor(target), "int64")
    output = creation_ops.convert_to_tensor(output)
    if not from_logits:
        output = math_ops.log(_clip_eps(output))
    output_rank = output.shape.rank
    axis %= output_rank
    if axis != output_rank - 1:
        perm = list(itertools.chain(range(axis), range(axis + 1, output_rank), [axis]))
        output = array_ops.transpose(output, perm=perm)
    output_shape = output.shape.as_list()
    update_shape = target.shape.rank != output_rank - 1
    if update_shape:
        target = array_ops.reshape(target, [-1])
        output = array_ops.reshape(output, [-1, output_shape[-1]])
    if ignore_class is not None:
        valid = nondiff.not_equal(target, math_ops.cast(ignore_class, target.dtype))
        safe_target = array_ops.where(valid, target, nondiff.zeros_like(target))
        res = nn_ops.sparse_softmax_cross_entropy_with_logits(
            labels=safe_target, logits=output
        )
        res = array_ops.where(valid, res, nondiff.zeros_like(res))
        res = array_ops.reshape(res, output_shape[:-1])
        layers_base.set_keras_mask(res, array_ops.reshape(valid, output_shape[:-1]))
        return res
    res = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)
    if update_shape and output_rank >= 3:
        res = array_ops.reshape(res, output_shape[:-1])
    return res


# -- CTC -------------------------------------------------------------------------


def ctc_label_dense_to_sparse(labels, label_lengths):
    """The first `label_lengths[b]` labels of each row, as an int64-indexed
    SparseTensor of `labels`' shape.

    Differences from TensorFlow: inside `jaxtape.function` a traced
    `label_lengths` raises NotImplementedError (it sets the number of entries).
    """
    labels = creation_ops.convert_to_tensor(labels)
    batch, max_len = labels.shape.as_list()
    try:
        lengths = np.asarray(label_lengths).reshape(-1)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        raise NotImplementedError(
            "tf.keras.backend.ctc_label_dense_to_sparse: traced `label_lengths` "
            "inside jaxtape.function set the SparseTensor's size; call it outside "
            "the function (ctc_batch_cost does not need it)."
        ) from None
    mask = np.arange(max_len)[None, :] < lengths[:, None]
    indices = np.argwhere(mask).astype(np.int64)
    values = array_ops.gather_nd(labels, indices)
    return sparse.SparseTensor(indices, values, np.array([batch, max_len], np.int64))


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """Per-sample CTC loss `(batch, 1)` of softmax outputs `y_pred`
    `(batch, time, classes)` (the last class is the blank)."""
    label_length = math_ops.cast(array_ops.squeeze(label_length, axis=-1), "int32")
    input_length = math_ops.cast(array_ops.squeeze(input_length, axis=-1), "int32")
    logits = math_ops.log(
        array_ops.transpose(y_pred, perm=[1, 0, 2]) + config.epsilon()
    )
    loss = nn_sparse_ops.ctc_loss(
        labels=math_ops.cast(y_true, "int32"),
        logits=logits,
        label_length=label_length,
        logit_length=input_length,
        logits_time_major=True,
        blank_index=-1,
    )
    return array_ops.expand_dims(loss, 1)


def _merged_repeats_dense(st, num_samples, num_steps):
    """A decoded SparseTensor as a `(batch, time)` int64 array padded with -1,
    consecutive repeated labels merged (TF1's `merge_repeated=True`)."""
    indices = np.asarray(st.indices)
    values = np.asarray(st.values)
    out = np.full((num_samples, num_steps), -1, dtype=np.int64)
    for b in range(num_samples):
        row = values[indices[:, 0] == b]
        keep = np.ones(len(row), bool)
        keep[1:] = row[1:] != row[:-1]
        merged = row[keep]
        out[b, : len(merged)] = merged
    return creation_ops.constant(out)


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1):
    """CTC decoding of softmax outputs `(batch, time, classes)`: `([decoded],
    log_prob)`, each decoded `(batch, time)` padded with -1; greedy, or a beam
    search keeping `top_paths` paths (TF1's decoder, repeated labels merged).
    """
    num_samples, num_steps = y_pred.shape.as_list()[:2]
    y_pred = math_ops.log(
        array_ops.transpose(y_pred, perm=[1, 0, 2]) + config.epsilon()
    )
    input_length = math_ops.cast(input_length, "int32")
    if greedy:
        decoded, log_prob = nn_sparse_ops.ctc_greedy_decoder(
            inputs=y_pred, sequence_length=input_length
        )
        dense = [
            sparse.to_dense(
                sparse.SparseTensor(st.indices, st.values, (num_samples, num_steps)),
                default_value=-1,
            )
            for st in decoded
        ]
        return dense, log_prob
    # TF1's beam decoder (`merge_repeated=True`) is TF2's with consecutive
    # repeats merged in each path; the paths and their log-probabilities agree.
    decoded, log_prob = nn_sparse_ops.ctc_beam_search_decoder(
        inputs=y_pred,
        sequence_length=input_length,
        beam_width=beam_width,
        top_paths=top_paths,
    )
    dense = [_merged_repeats_dense(st, num_samples, num_steps) for st in decoded]
    return dense, log_prob


# -- recurrence ------------------------------------------------------------------


def _swap_batch_time(t):
    axes = list(range(len(t.shape)))
    axes[0], axes[1] = 1, 0
    return array_ops.transpose(t, axes)


def _expand_mask(mask_t, like, fixed_dim=1):
    for _ in range(len(like.shape) - len(mask_t.shape)):
        mask_t = array_ops.expand_dims(mask_t, -1)
    return array_ops.tile(mask_t, [1] * fixed_dim + like.shape.as_list()[fixed_dim:])


def rnn(
    step_function,
    inputs,
    initial_states,
    go_backwards=False,
    mask=None,
    constants=None,
    unroll=False,
    input_length=None,
    time_major=False,
    zero_output_for_mask=False,
    return_all_outputs=True,
):
    """Iterates `step_function(input_t, states + constants) -> (output,
    new_states)` over the time axis; returns `(last_output, outputs,
    new_states)` as Keras's.

    Masked steps keep the previous output (zeros with `zero_output_for_mask`)
    and the previous states. Without `unroll`, `input_length` bounds the loop
    at `max(input_length)` steps (later outputs are zeros), and a Tensor
    `input_length` masks each sample's steps past its length, as TF's
    `while_loop` version does; with `unroll=True` it is unused, as in TF. The
    loop runs in Python (unrolled when traced by `jaxtape.function`).

    Differences from TensorFlow: inside `jaxtape.function` a traced
    `input_length` raises NotImplementedError (its values set the loop count).
    """
    if not time_major:
        inputs = nest.map_structure(_swap_batch_time, inputs)
    flat_inputs = nest.flatten(inputs)
    time_steps = flat_inputs[0].shape[0]
    for inp in flat_inputs:
        if inp.shape.rank < 3:
            raise ValueError(f"Shape {inp.shape} must have rank at least 3")
    per_step = [array_ops.unstack(t) for t in flat_inputs]
    mask_list = None
    if mask is not None:
        if mask.dtype != dtypes.bool:
            mask = math_ops.cast(mask, dtypes.bool)
        if len(mask.shape) == 2:
            mask = array_ops.expand_dims(mask, -1)
        if not time_major:
            mask = _swap_batch_time(mask)
        mask_list = array_ops.unstack(mask)
    steps, length_mask = _length_bounds(
        input_length, time_steps, go_backwards, mask is None and not unroll
    )
    if unroll:
        steps = time_steps
    order = list(range(time_steps))
    if go_backwards:
        order.reverse()
    constants = list(constants or [])
    states = tuple(initial_states)
    outputs = []
    prev_output = None
    for i, t in enumerate(order[:steps]):
        inp = nest.pack_sequence_as(inputs, [s[t] for s in per_step])
        output, new_states = step_function(inp, tuple(states) + tuple(constants))
        mask_t = mask_list[t] if mask_list is not None else None
        if length_mask is not None:
            mask_t = creation_ops.constant(length_mask(i)[:, None])
        if mask_t is not None:
            if prev_output is None or zero_output_for_mask:
                fallback = zeros_like(output)
            else:
                fallback = prev_output
            output = array_ops.where(_expand_mask(mask_t, output), output, fallback)
            flat_new = [
                array_ops.where(_expand_mask(mask_t, s), n, s)
                for s, n in zip(nest.flatten(states), nest.flatten(new_states))
            ]
            new_states = nest.pack_sequence_as(new_states, flat_new)
        states = new_states
        prev_output = output
        outputs = outputs + [output] if return_all_outputs else [output]
    if return_all_outputs and len(outputs) < time_steps:  # TF's unwritten steps
        outputs += [zeros_like(outputs[0])] * (time_steps - len(outputs))
    last_output = outputs[-1]
    stacked = array_ops.stack(outputs)
    if not time_major:
        stacked = _swap_batch_time(stacked)
    return last_output, stacked, states


def _length_bounds(input_length, time_steps, go_backwards, masks):
    """TF's while-loop `rnn`: the number of steps (`max(input_length)`), and,
    for a Tensor `input_length` (when `masks`), step `i`'s per-sample mask."""
    if input_length is None:
        return time_steps, None
    try:
        lengths = np.asarray(input_length)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        raise NotImplementedError(
            "tf.keras.backend.rnn: a traced `input_length` is not supported inside "
            "jaxtape.function (it sets the number of steps); pass a `mask`."
        ) from None
    steps = min(int(lengths.max()), time_steps)
    if not (masks and isinstance(input_length, Tensor)):
        return steps, None
    if go_backwards:
        rev = lengths.max() - 1 - lengths
        return steps, lambda i: rev < i
    return steps, lambda i: lengths > i
