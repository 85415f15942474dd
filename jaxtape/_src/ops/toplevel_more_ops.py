"""TF's remaining top-level raw-op names (`tf.fftnd`, `tf.extract_volume_patches`,
`tf.conv2d_backprop_*_v2`, `tf.random_index_shuffle`) and the graph-only
gradient names (`tf.gradients`, `tf.hessians`, `tf.no_gradient`). Layer L1.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
from jax import lax

from jaxtape._src.core import context, dispatch, dtypes, errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.ops import nn_ops, signal_ops, stateless_random_ops


# -- raw N-D FFTs ------------------------------------------------------------------
def fftnd(input, fft_length, axes, name=None):  # noqa: A002
    """TF's raw `tf.fftnd`: `tf.signal.fftnd` without `norm` (TF ships no
    CPU/GPU kernel for it; jaxtape computes it)."""
    return signal_ops.fftnd(input, fft_length, axes, name=name)


def ifftnd(input, fft_length, axes, name=None):  # noqa: A002
    """TF's raw `tf.ifftnd` (see `fftnd`)."""
    return signal_ops.ifftnd(input, fft_length, axes, name=name)


def rfftnd(input, fft_length, axes, Tcomplex=dtypes.complex64, name=None):  # noqa: A002, N803
    """TF's raw `tf.rfftnd`: the real N-D FFT, output dtype `Tcomplex`
    (complex64 for float32 input, complex128 for float64)."""
    out = signal_ops.rfftnd(input, fft_length, axes, name=name)
    _check_out_dtype(out, Tcomplex, "RFFTND", "Tcomplex")
    return out


def irfftnd(input, fft_length, axes, Treal=dtypes.float32, name=None):  # noqa: A002, N803
    """TF's raw `tf.irfftnd`: the inverse real N-D FFT, output dtype `Treal`."""
    out = signal_ops.irfftnd(input, fft_length, axes, name=name)
    _check_out_dtype(out, Treal, "IRFFTND", "Treal")
    return out


def _check_out_dtype(out, want, op_name, arg):
    if dtypes.as_dtype(want) != out.dtype:
        raise NotImplementedError(
            f"{op_name}: {arg}={dtypes.as_dtype(want).name} for this input dtype "
            f"(which gives {out.dtype.name}) is not supported in jaxtape; cast the "
            "input instead."
        )


# -- random_index_shuffle ------------------------------------------------------------
def random_index_shuffle(index, seed, max_index, rounds=4, name=None):
    """TF's raw `tf.random_index_shuffle`: `tf.random.experimental.index_shuffle`
    with its `rounds`.

    Differences from TensorFlow: another permutation (as `index_shuffle`);
    `rounds` other than 4 raises NotImplementedError.
    """
    del name  # accepted for TF compatibility
    if rounds != 4:
        raise NotImplementedError(
            f"random_index_shuffle: rounds={rounds} is not supported in jaxtape "
            "(only the default 4)."
        )
    return stateless_random_ops.index_shuffle(index, seed, max_index)


# -- extract_volume_patches ----------------------------------------------------------
@op("ExtractVolumePatches", inputs=("input",), jit=True)
def _volume_patches(input, ksizes, strides, padding):  # noqa: A002
    c = input.shape[-1]
    patches = lax.conv_general_dilated_patches(
        input,
        ksizes,
        strides,
        padding,
        dimension_numbers=("NDHWC", "DHWIO", "NDHWC"),
        precision=lax.Precision.HIGHEST,
    )
    # JAX orders a patch's features (channel, d, h, w); TF (d, h, w, channel).
    n, d, h, w, _ = patches.shape
    k = int(np.prod(ksizes))
    patches = patches.reshape(n, d, h, w, c, k).swapaxes(-1, -2)
    return patches.reshape(n, d, h, w, k * c)


def extract_volume_patches(input, ksizes, strides, padding, name=None):  # noqa: A002
    """Extracts 3-D patches of an NDHWC `input` into the depth dimension (TF's
    `tf.extract_volume_patches`): each output position holds its
    `ksizes[1] * ksizes[2] * ksizes[3] * C` values in (d, h, w, channel) order.

    Differences from TensorFlow: integer inputs go through a float64
    convolution (exact for values below 2**53).
    """
    del name  # accepted for TF compatibility
    ks, st = _five(ksizes, "ksizes"), _five(strides, "strides")
    pad = padding.upper() if isinstance(padding, str) else padding
    if pad not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'SAME' or 'VALID'; got {padding!r}.")
    if np.ndim(input) != 5:
        raise ValueError(f"input must be 5-D; got shape {list(np.shape(input))}.")
    kind = np.dtype(to_value(input).dtype).kind
    if kind in "iub":
        from jaxtape._src.ops import math_ops  # cycle: math_ops -> ... -> ops

        out = _volume_patches(math_ops.cast(input, dtypes.float64), ks, st, pad)
        return math_ops.cast(out, to_value(input).dtype)
    return _volume_patches(input, ks, st, pad)


def _five(v, what):
    v = [int(x) for x in v]
    if len(v) != 5 or v[0] != 1 or v[4] != 1:
        raise errors.invalid_argument(
            f"{what} must be 5 values [1, d, h, w, 1]; got {v}.",
            "ExtractVolumePatches",
        )
    return tuple(v[1:4])


# -- conv2d_backprop_*_v2 ----------------------------------------------------------
def _conv_args(strides, padding, explicit_paddings, data_format, dilations):
    first = nn_ops._is_channels_first(data_format)
    if isinstance(padding, str) and padding.upper() == "EXPLICIT":
        pads = np.asarray(list(explicit_paddings), int).reshape(-1, 2).tolist()
        pad = nn_ops._conv_padding(pads, 2, first)
    else:
        if list(explicit_paddings):
            raise errors.invalid_argument(
                "explicit_paddings must be empty unless padding is 'EXPLICIT'.",
                "Conv2DBackpropInputV2",
            )
        pad = nn_ops._conv_padding(padding, 2, first)
    return (
        nn_ops._tuple(strides, 2, first),
        pad,
        nn_ops._tuple(dilations, 2, first),
        data_format,
    )


@op("Conv2DBackpropInputV2", inputs=("input", "filter", "out_backprop"), jit=True)
@functools.partial(jax.jit, static_argnums=(3, 4, 5, 6))
def _input_grad(input, filter, out_backprop, strides, padding, dilations, fmt):  # noqa: A002
    conv = nn_ops._conv.__wrapped__
    _, vjp = jax.vjp(lambda x: conv(x, filter, strides, padding, dilations, fmt), input)
    return vjp(out_backprop)[0]


@op("Conv2DBackpropFilterV2", inputs=("input", "filter", "out_backprop"), jit=True)
@functools.partial(jax.jit, static_argnums=(3, 4, 5, 6))
def _filter_grad(input, filter, out_backprop, strides, padding, dilations, fmt):  # noqa: A002
    conv = nn_ops._conv.__wrapped__
    _, vjp = jax.vjp(lambda f: conv(input, f, strides, padding, dilations, fmt), filter)
    return vjp(out_backprop)[0]


def conv2d_backprop_input_v2(
    input,  # noqa: A002
    filter,  # noqa: A002
    out_backprop,
    strides,
    padding,
    use_cudnn_on_gpu=True,
    explicit_paddings=(),
    data_format="NHWC",
    dilations=(1, 1, 1, 1),
    name=None,
):
    """The gradient of `conv2d(input, filter)` with respect to `input`, given
    `out_backprop` (TF's `tf.conv2d_backprop_input_v2`: only `input`'s shape
    is used). `use_cudnn_on_gpu` only chooses TF's kernel."""
    del name, use_cudnn_on_gpu  # accepted for TF compatibility
    args = _conv_args(strides, padding, explicit_paddings, data_format, dilations)
    return _input_grad(input, filter, out_backprop, *args)


def conv2d_backprop_filter_v2(
    input,  # noqa: A002
    filter,  # noqa: A002
    out_backprop,
    strides,
    padding,
    use_cudnn_on_gpu=True,
    explicit_paddings=(),
    data_format="NHWC",
    dilations=(1, 1, 1, 1),
    name=None,
):
    """The gradient of `conv2d(input, filter)` with respect to `filter`, given
    `out_backprop` (TF's `tf.conv2d_backprop_filter_v2`: only `filter`'s shape
    is used). `use_cudnn_on_gpu` only chooses TF's kernel."""
    del name, use_cudnn_on_gpu  # accepted for TF compatibility
    args = _conv_args(strides, padding, explicit_paddings, data_format, dilations)
    return _filter_grad(input, filter, out_backprop, *args)


# -- graph-mode gradient names -----------------------------------------------------
def _graph_only(what: str):
    if context.state.function_depth:
        raise NotImplementedError(
            f"tf.{what} inside jaxtape.function is not supported in jaxtape (it "
            "builds no graph to differentiate symbolically). Use "
            "jaxtape.GradientTape instead."
        )
    raise RuntimeError(
        f"tf.{what} is not supported when eager execution is enabled. Use "
        "tf.GradientTape instead."
    )


def gradients(
    ys,
    xs,
    grad_ys=None,
    name="gradients",
    gate_gradients=False,
    aggregation_method=None,
    stop_gradients=None,
    unconnected_gradients="none",
):
    """TF's graph-only `tf.gradients`: eagerly TF's RuntimeError; inside
    `jaxtape.function` NotImplementedError (use `jaxtape.GradientTape`)."""
    del ys, xs, grad_ys, name, gate_gradients, aggregation_method, stop_gradients
    del unconnected_gradients
    _graph_only("gradients")


def hessians(ys, xs, gate_gradients=False, aggregation_method=None, name="hessians"):
    """TF's graph-only `tf.hessians` (see `gradients`)."""
    del ys, xs, gate_gradients, aggregation_method, name
    _graph_only("gradients")


_no_gradient_types: set[str] = set()


def no_gradient(op_type: str) -> None:
    """Declares the op type `op_type` non-differentiable (TF's
    `tf.no_gradient`, for ops loaded with `tf.load_op_library`).

    jaxtape loads no graph op types, so the name is only recorded: no jaxtape
    op is affected. Registering the same name twice raises TF's KeyError.
    """
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    if op_type in _no_gradient_types:
        raise KeyError(f"Registering two gradient with name '{op_type}'!")
    _no_gradient_types.add(op_type)


# -- register_tensor_conversion_function ----------------------------------------
_REFUSED_BASES = (int, float, bool, complex, np.generic, np.ndarray)


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """Registers how values of `base_type` become Tensors (TF's
    `tf.register_tensor_conversion_function`).

    `conversion_func(value, dtype=None, name=None, as_ref=False)` returns a
    Tensor (of `dtype` when one is asked for) or `NotImplemented` to let the
    next function try; lower `priority` runs first. `convert_to_tensor` and
    every op's inputs use it.

    Differences from TensorFlow: an op's input converts when its type is
    exactly a registered `base_type` (a subclass instance converts in
    `convert_to_tensor` only).
    """
    types = base_type if isinstance(base_type, tuple) else (base_type,)
    if not all(isinstance(t, type) for t in types):
        raise TypeError("base_type must be a type or a tuple of types.")
    if any(issubclass(t, _REFUSED_BASES) for t in types):
        raise TypeError(
            "Cannot register conversions for Python numeric types and NumPy "
            "scalars and arrays."
        )
    if not callable(conversion_func):
        raise TypeError(
            f"Argument `conversion_func` must be callable. Received {conversion_func}."
        )
    dispatch.register_conversion(types, conversion_func, priority)
    for t in types:
        dispatch.register_composite(t, _converted_call)


def _converted_call(info, ins, params):
    """An op's call with its registered-type inputs converted first."""
    return dispatch.dispatch(info, tuple(_convert_registered(a) for a in ins), params)


def _convert_registered(a):
    if type(a) in dispatch._composites and dispatch._composites[type(a)] is (
        _converted_call
    ):
        out = dispatch.registered_conversion(a, None)
        if out is None:
            raise TypeError(
                f"No registered conversion function converts {a!r} to a Tensor."
            )
        return out
    return a
