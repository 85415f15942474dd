"""Signal processing (TF's `tf.signal`): FFTs, framing, windows, STFT, DCT. Layer L1.

The transforms are pure `jnp.fft` bodies behind the dispatcher, so they record
on tapes (TF's complex-gradient convention is the tape's) and compile inside
`jaxtape.function`; `stft`, `inverse_stft`, `mdct` and the mel/MFCC helpers
are compositions of recorded ops, as in TF. Windows and the mel matrix are
computed on the host in the requested dtype, with TF's formulas.

TF's rules kept: `fft*` take complex64/complex128 (NumPy and Python inputs are
converted to complex64 first, as TF's op wrapper does); `rfft*` take
float32/float64 and give complex64/complex128; `fft_length` pads or crops the
innermost dimensions; window lengths, frame lengths and steps are integers.

Differences from TensorFlow: lengths and steps must be known integers (TF
also takes scalar tensors computed inside `tf.function`); a NumPy float64
input to `rfft*` stays float64 (TF's wrapper converts it to float32); the
`rfft`/`irfft` family has gradients also where TF has none (3-D) or fails
(2-D with a cropping `fft_length`); an empty transform gives zeros (TF's
`rfft` of an empty inner dimension returns uninitialized memory); the
`fftnd` family is computed (TF ships no CPU/GPU kernel for it).
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import scipy.special
from jax import lax

from jaxtape._src.core import context, dtypes, errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import array_ops, math_ops
from jaxtape._src.ops.creation_ops import convert_to_tensor
from jaxtape._src.ops.math_ops import _unsupported_dtype, kernels

_K_COMPLEX = kernels("complex64, complex128")
_REAL_OF = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}
_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def _compiled(body: Callable) -> Callable:
    """`body` as one XLA computation (its defaulted parameters static), also
    when a tape replays and differentiates it: its VJP then compiles once per
    shape instead of once per jnp call of the body."""
    params = inspect.signature(body).parameters.values()
    static = tuple(i for i, p in enumerate(params) if p.default is not p.empty)
    jitted = jax.jit(body, static_argnums=static)

    @functools.wraps(body)
    def run(*args):
        return jitted(*args)

    return run


def _is_tensor(x) -> bool:
    return type(x) is Tensor or isinstance(x, context.hooks.variable_type or ())


def _static_int(value, what: str, op_name: str) -> int:
    """A concrete integer argument (TF accepts scalar integer tensors too)."""
    v = to_value(value)
    if np.ndim(v) != 0:
        raise ValueError(f"Shape {list(np.shape(v))} must have rank 0 ({what}).")
    if np.asarray(v).dtype.kind not in "iu":
        raise errors.invalid_argument(
            f"{what} must be an integer, got {np.asarray(v).dtype.name}: {value!r}.",
            op_name,
        )
    return int(v)


def _rank_at_least(x, rank: int) -> None:
    if len(np.shape(x)) < rank:
        raise ValueError(f"Shape {tuple(np.shape(x))} must have rank at least {rank}")


# -- complex FFTs ------------------------------------------------------------------
@op("FFT")
@_compiled
def _fft_op(input, rank=1, inverse=False, op_name="FFT"):
    if np.dtype(input.dtype) not in _K_COMPLEX.dtypes:
        raise _unsupported_dtype(op_name, input, "complex64, complex128")
    if input.ndim < rank:
        raise errors.invalid_argument(
            f"Input must have rank of at least {rank} but got: {list(input.shape)}",
            op_name,
        )
    if input.size == 0:
        return jnp.zeros(input.shape, input.dtype)
    axes = tuple(range(-rank, 0))
    fn = jnp.fft.ifftn if inverse else jnp.fft.fftn
    return fn(input, axes=axes).astype(input.dtype)


def _complex_input(x):
    """TF's op wrapper converts NumPy/Python input to complex64 (Tcomplex)."""
    if _is_tensor(x):
        return x
    v = to_value(x)
    if np.asarray(v).dtype.kind != "c":
        v = np.asarray(v).astype(np.complex64)
    return convert_to_tensor(v)


def _complex_fft(rank: int, inverse: bool, op_name: str) -> Callable:
    def transform(input, name=None):
        del name  # accepted for TF compatibility
        return _fft_op(_complex_input(input), rank, inverse, op_name)

    kind = "inverse " if inverse else ""
    dims = "innermost dimension" if rank == 1 else f"{rank} innermost dimensions"
    transform.__doc__ = (
        f"The {kind}{rank}-D discrete Fourier transform over the {dims} of a "
        f"complex64/complex128 `input` (TF's `tf.signal.{op_name.lower()}`)."
    )
    transform.__name__ = transform.__qualname__ = op_name.lower()
    return transform


fft = _complex_fft(1, False, "FFT")
ifft = _complex_fft(1, True, "IFFT")
fft2d = _complex_fft(2, False, "FFT2D")
ifft2d = _complex_fft(2, True, "IFFT2D")
fft3d = _complex_fft(3, False, "FFT3D")
ifft3d = _complex_fft(3, True, "IFFT3D")


# -- real FFTs ---------------------------------------------------------------------
@op("RFFT")
@_compiled
def _rfft_op(input_tensor, axes=(-1,), fft_length=(1,), inverse=False, norm=None):
    x = input_tensor
    if inverse:
        out_dt = np.dtype(_REAL_OF[np.dtype(x.dtype)])
        s = fft_length
        out_shape = x.shape[: x.ndim - len(axes)] + tuple(s)
        if x.size == 0 or 0 in s:
            return jnp.zeros(out_shape, out_dt)
        return jnp.fft.irfftn(x, s=s, axes=axes, norm=norm).astype(out_dt)
    out_dt = np.dtype(_COMPLEX_OF[np.dtype(x.dtype)])
    s = fft_length
    inner = s[-1] // 2 + 1 if s[-1] else 0
    out_shape = x.shape[: x.ndim - len(axes)] + tuple(s[:-1]) + (inner,)
    if math.prod(out_shape) == 0 or math.prod(s) == 0:
        return jnp.zeros(out_shape, out_dt)
    return jnp.fft.rfftn(x, s=s, axes=axes, norm=norm).astype(out_dt)


def _fft_lengths(fft_length, rank: int, op_name: str, default) -> tuple[int, ...]:
    if fft_length is None:
        return tuple(default)
    v = to_value(fft_length)
    if np.ndim(v) == 0:
        raise TypeError(f"'{type(fft_length).__name__}' object is not iterable")
    if np.shape(v) != (rank,):
        raise errors.invalid_argument(f"fft_length must have shape [{rank}]", op_name)
    out = tuple(int(n) for n in np.asarray(v))
    for i, n in enumerate(out):
        if n < 0:
            raise errors.invalid_argument(
                f"fft_length[{i}] must >= 0, but got: {n}", op_name
            )
    return out


def _real_input(x, op_name: str, inverse: bool):
    """TF's wrapper: `rfft*` take float32/64, `irfft*` complex64/128."""
    if not _is_tensor(x):
        v = to_value(x)
        kind = np.asarray(v).dtype.kind
        if inverse and kind != "c":
            v = np.asarray(v).astype(np.complex64)
        elif not inverse and (kind in "iub" or np.asarray(v).dtype == np.float16):
            v = np.asarray(v).astype(np.float32)
        x = convert_to_tensor(v)
    dt = dtypes.np_dtype(x.dtype)
    allowed = _REAL_OF if inverse else _COMPLEX_OF
    if dt not in allowed:
        want = (
            "tf.complex64 or tf.complex128" if inverse else "tf.float32 or tf.float64"
        )
        raise ValueError(
            f"{op_name} requires {want} inputs, got: {x!r}. Cast it first with "
            "`jaxtape.cast`."
        )
    return x


def _real_fft(rank: int, inverse: bool, op_name: str) -> Callable:
    def transform(input_tensor, fft_length=None, name=None):
        del name  # accepted for TF compatibility
        x = _real_input(input_tensor, op_name, inverse)
        _rank_at_least(x, rank)
        inner = tuple(x.shape[-rank:])
        if inverse:
            default = inner[:-1] + (max(2 * (inner[-1] - 1), 0),)
        else:
            default = inner
        s = _fft_lengths(fft_length, rank, op_name, default)
        return _rfft_op(x, tuple(range(-rank, 0)), s, inverse)

    what = "inverse real" if inverse else "real"
    io = (
        "complex64/complex128 Hermitian half-spectrum to float32/float64"
        if inverse
        else "float32/float64 to complex64/complex128"
    )
    transform.__doc__ = (
        f"The {what}-valued {rank}-D FFT over the innermost dimensions ({io}); "
        f"`fft_length` pads or crops them (TF's `tf.signal.{op_name.lower()}`)."
    )
    transform.__name__ = transform.__qualname__ = op_name.lower()
    return transform


rfft = _real_fft(1, False, "RFFT")
irfft = _real_fft(1, True, "IRFFT")
rfft2d = _real_fft(2, False, "RFFT2D")
irfft2d = _real_fft(2, True, "IRFFT2D")
rfft3d = _real_fft(3, False, "RFFT3D")
irfft3d = _real_fft(3, True, "IRFFT3D")


# -- N-D FFTs ------------------------------------------------------------------------
@op("FFTND")
@_compiled
def _fftnd_op(input_tensor, s=None, axes=None, inverse=False, norm=None):
    if input_tensor.size == 0:
        return jnp.zeros(input_tensor.shape, input_tensor.dtype)
    fn = jnp.fft.ifftn if inverse else jnp.fft.fftn
    return fn(input_tensor, s=s, axes=axes, norm=norm).astype(input_tensor.dtype)


def _nd_args(x, fft_length, axes, norm, op_name):
    if norm not in (None, "backward", "ortho", "forward"):
        raise ValueError(f"Invalid norm value {norm}; should be 'backward', "
                         "'ortho' or 'forward'.")  # fmt: skip
    nd = len(np.shape(x))
    ax = tuple(range(nd)) if axes is None else tuple(int(a) for a in np.ravel(axes))
    ax = tuple(a % nd if nd else a for a in ax)
    s = None if fft_length is None else tuple(int(n) for n in np.ravel(fft_length))
    if s is not None and len(s) != len(ax):
        raise errors.invalid_argument(
            f"fft_length has {len(s)} entries for {len(ax)} axes.", op_name
        )
    return s, ax, norm


def _nd_complex(inverse: bool, op_name: str) -> Callable:
    def transform(input_tensor, fft_length=None, axes=None, norm=None, name=None):
        del name  # accepted for TF compatibility
        x = _complex_input(input_tensor)
        if dtypes.np_dtype(x.dtype) not in _K_COMPLEX.dtypes:
            raise _unsupported_dtype(op_name, x.dtype, "complex64, complex128")
        s, ax, norm = _nd_args(x, fft_length, axes, norm, op_name)
        return _fftnd_op(x, s, ax, inverse, norm)

    transform.__doc__ = (
        f"The {'inverse ' if inverse else ''}N-D FFT over `axes` (all by default), "
        f"`fft_length` padding or cropping them (TF's `tf.signal.{op_name.lower()}`"
        "; TF ships no CPU/GPU kernel for it, jaxtape computes it)."
    )
    transform.__name__ = transform.__qualname__ = op_name.lower()
    return transform


def _nd_real(inverse: bool, op_name: str) -> Callable:
    def transform(input_tensor, fft_length=None, axes=None, norm=None, name=None):
        del name  # accepted for TF compatibility
        x = _real_input(input_tensor, op_name, inverse)
        s, ax, norm = _nd_args(x, fft_length, axes, norm, op_name)
        shape = tuple(x.shape)
        if s is None:
            s = tuple(shape[a] for a in ax)
            if inverse:
                s = s[:-1] + (max(2 * (s[-1] - 1), 0),)
        if ax != tuple(range(len(shape) - len(ax), len(shape))):
            raise NotImplementedError(
                f"{op_name.lower()} over axes {list(ax)} that are not the innermost "
                "ones is not supported; transpose them to the end first."
            )
        return _rfft_op(x, tuple(range(-len(ax), 0)), s, inverse, norm)

    transform.__doc__ = (
        f"The {'inverse ' if inverse else ''}real N-D FFT over the innermost "
        f"`axes` (TF's `tf.signal.{op_name.lower()}`; TF ships no CPU/GPU kernel "
        "for it, jaxtape computes it)."
    )
    transform.__name__ = transform.__qualname__ = op_name.lower()
    return transform


fftnd = _nd_complex(False, "FFTND")
ifftnd = _nd_complex(True, "IFFTND")
rfftnd = _nd_real(False, "RFFTND")
irfftnd = _nd_real(True, "IRFFTND")


# -- shifts ----------------------------------------------------------------------------
@op("FFTShift")
@_compiled
def _roll_half(x, axes=None, inverse=False):
    fn = jnp.fft.ifftshift if inverse else jnp.fft.fftshift
    return fn(x, axes=axes)


def _axes_param(axes):
    if axes is None:
        return None
    v = to_value(axes)
    return int(v) if np.ndim(v) == 0 else tuple(int(a) for a in np.ravel(v))


def fftshift(x, axes=None, name=None):
    """Moves the zero-frequency term to the center of the spectrum (TF's
    `tf.signal.fftshift`); all axes by default."""
    del name  # accepted for TF compatibility
    return _roll_half(x, _axes_param(axes), False)


def ifftshift(x, axes=None, name=None):
    """The inverse of `fftshift` (TF's `tf.signal.ifftshift`)."""
    del name  # accepted for TF compatibility
    return _roll_half(x, _axes_param(axes), True)


# -- framing -------------------------------------------------------------------------
@op("Frame", inputs=("signal",))
@_compiled
def _frame_op(
    signal, frame_length=1, frame_step=1, pad_end=False, pad_value=0, axis=-1
):
    axis = axis % signal.ndim
    n = signal.shape[axis]
    if pad_end:
        num_frames = -(-n // frame_step)
        padded = max(0, (num_frames - 1) * frame_step + frame_length)
        if padded > n:
            widths = [(0, 0)] * signal.ndim
            widths[axis] = (0, padded - n)
            signal = jnp.pad(signal, widths, constant_values=pad_value)
    else:
        num_frames = max(0, (n - frame_length + frame_step) // frame_step)
    idx = np.arange(num_frames)[:, None] * frame_step + np.arange(frame_length)[None, :]
    if signal.shape[axis] == 0 or idx.size == 0:
        shape = signal.shape[:axis] + idx.shape + signal.shape[axis + 1 :]
        return jnp.zeros(shape, signal.dtype)
    return jnp.take(signal, idx, axis=axis)


def frame(
    signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None
):
    """Expands `signal`'s `axis` into frames of `frame_length` every `frame_step`
    samples (TF's `tf.signal.frame`); `pad_end` pads the end with `pad_value`
    so that every sample is in a frame.

    >>> jaxtape.signal.frame(jaxtape.range(5), 3, 2).shape
    TensorShape([2, 3])
    """
    del name  # accepted for TF compatibility
    x = signal if _is_tensor(signal) else convert_to_tensor(signal)
    _rank_at_least(x, 1)
    length = _static_int(frame_length, "frame_length", "FloorDiv")
    step = _static_int(frame_step, "frame_step", "FloorDiv")
    if step == 0:
        raise errors.invalid_argument("Integer division by zero", "FloorDiv")
    ax = _static_int(axis, "axis", "Frame")
    pad = to_value(pad_value, dtypes.np_dtype(x.dtype)).item()
    return _frame_op(x, length, step, bool(pad_end), pad, ax)


@op("OverlapAndAdd", inputs=("signal",))
@_compiled
def _overlap_and_add_op(signal, frame_step=1):
    *outer, frames, frame_length = signal.shape
    outer = tuple(outer)
    output_length = frame_length + frame_step * (frames - 1)
    if frames == 0:
        return jnp.zeros(outer + (max(output_length, 0),), signal.dtype)
    if frame_step == frame_length:  # TF's fast path
        return signal.reshape(outer + (output_length,))
    segments = -(-frame_length // frame_step)  # TF's pad-and-fold algorithm
    widths = [(0, 0)] * len(outer) + [
        (0, segments),
        (0, segments * frame_step - frame_length),
    ]
    s = jnp.pad(signal, widths)
    s = s.reshape(outer + (frames + segments, segments, frame_step))
    s = jnp.swapaxes(s, -3, -2)
    s = s.reshape(outer + ((frames + segments) * segments, frame_step))
    s = s[..., : (frames + segments - 1) * segments, :]
    s = s.reshape(outer + (segments, frames + segments - 1, frame_step))
    s = s.sum(axis=-3, dtype=signal.dtype)
    s = s.reshape(outer + ((frames + segments - 1) * frame_step,))
    return s[..., :output_length]


def overlap_and_add(signal, frame_step, name=None):
    """Adds overlapping frames `[..., frames, frame_length]` into a signal,
    frame `i` starting at `i * frame_step` (TF's `tf.signal.overlap_and_add`)."""
    del name  # accepted for TF compatibility
    x = signal if _is_tensor(signal) else convert_to_tensor(signal)
    _rank_at_least(x, 2)
    step = to_value(frame_step)
    if np.ndim(step) != 0:
        raise ValueError(f"Shape {list(np.shape(step))} must have rank 0")
    if np.asarray(step).dtype.kind not in "iu":
        raise ValueError(
            f"frame_step must be an integer. Got jaxtape.{np.asarray(step).dtype.name}"
        )
    return _overlap_and_add_op(x, int(step))


# -- windows ---------------------------------------------------------------------------
def _window_params(window_length, dtype, op_name: str) -> tuple[int, np.dtype]:
    np_dt = dtypes.np_dtype(dtype)
    if np_dt is None or (np_dt.kind != "f" and np_dt != jnp.bfloat16):
        raise ValueError(
            f"dtype must be a floating point type. Found {dtypes.as_dtype(dtype)!r}"
        )
    v = to_value(window_length, np.int32)  # a float is TF's TypeError
    if np.ndim(v) != 0:
        raise ValueError(f"Shape {list(np.shape(v))} must have rank 0")
    n = int(v)
    if n < 0:
        raise errors.invalid_argument(
            f"Requires start <= limit when delta > 0: 0/{n}", "Range"
        )
    return n, np_dt


def _window(values: np.ndarray, np_dt) -> Tensor:
    return Tensor(jnp.asarray(values, np_dt))


def _compute_dtype(np_dt) -> np.dtype:
    """Host math in the window's dtype, as TF (float32 for bfloat16)."""
    keep = np_dt in (np.float16, np.float32, np.float64)
    return np.dtype(np_dt if keep else np.float32)


def _raised_cosine(window_length, periodic, dtype, a, b, op_name):
    n, np_dt = _window_params(window_length, dtype, op_name)
    if n == 1:
        return _window(np.ones([1]), np_dt)
    cdt = _compute_dtype(np_dt)
    p = int(bool(to_value(periodic)))
    denom = cdt.type(n + p * (1 - n % 2) - 1)
    arg = cdt.type(2 * np.pi) * np.arange(n).astype(cdt) / denom
    return _window(cdt.type(a) - cdt.type(b) * np.cos(arg), np_dt)


def hann_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """A Hann window, `0.5 - 0.5 cos(2 pi n / N)` (TF's `tf.signal.hann_window`;
    `periodic` windows suit spectral analysis: N = window_length)."""
    del name  # accepted for TF compatibility
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5, "hann_window")


def hamming_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """A Hamming window, `0.54 - 0.46 cos(2 pi n / N)` (TF's
    `tf.signal.hamming_window`)."""
    del name  # accepted for TF compatibility
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46, "hamming_window")


def _kaiser(n: int, beta: float, cdt) -> np.ndarray:
    if n == 1:
        return np.ones([1], cdt)
    half = np.float32((np.float32(n) - 1.0) / 2.0)
    arg = np.arange(-half, half + 0.1, dtype=np.float32).astype(cdt)
    half, beta_c = cdt.type(half), cdt.type(beta)
    num = beta_c * np.sqrt(np.maximum(cdt.type(1) - np.square(arg / half), 0))
    ratio = scipy.special.i0e(num).astype(cdt) / cdt.type(scipy.special.i0e(beta_c))
    return (np.exp(num - beta_c) * ratio).astype(cdt)


def kaiser_window(window_length, beta=12.0, dtype=dtypes.float32, name=None):
    """A Kaiser window with shape parameter `beta` (TF's `tf.signal.kaiser_window`)."""
    del name  # accepted for TF compatibility
    n, np_dt = _window_params(window_length, dtype, "kaiser_window")
    if n == 0:  # TF's range(-(-0.5), ...) fails the same way
        raise errors.invalid_argument(
            "Requires start <= limit when delta > 0: 0.5/-0.4", "Range"
        )
    return _window(_kaiser(n, float(to_value(beta)), _compute_dtype(np_dt)), np_dt)


def kaiser_bessel_derived_window(
    window_length, beta=12.0, dtype=dtypes.float32, name=None
):
    """A Kaiser-Bessel-derived window, for the MDCT (TF's
    `tf.signal.kaiser_bessel_derived_window`)."""
    del name  # accepted for TF compatibility
    n, np_dt = _window_params(window_length, dtype, "kaiser_bessel_derived_window")
    cdt = _compute_dtype(np_dt)
    csum = np.cumsum(_kaiser(n // 2 + 1, float(to_value(beta)), cdt), dtype=cdt)
    half = np.sqrt(csum[:-1] / csum[-1])
    return _window(np.concatenate([half, half[::-1]]), np_dt)


def vorbis_window(window_length, dtype=dtypes.float32, name=None):
    """A Vorbis power-complementary window, for the MDCT (TF's
    `tf.signal.vorbis_window`)."""
    del name  # accepted for TF compatibility
    n, np_dt = _window_params(window_length, dtype, "vorbis_window")
    cdt = _compute_dtype(np_dt)
    arg = np.arange(n).astype(cdt)
    inner = np.sin(cdt.type(np.pi) / cdt.type(n) * (arg + cdt.type(0.5))) ** 2
    return _window(np.sin(cdt.type(np.pi / 2.0) * inner), np_dt)


# -- STFT ----------------------------------------------------------------------------
def _enclosing_power_of_two(n: int) -> int:
    return int(2 ** np.ceil(np.log(n) / np.log(2.0)))


def stft(
    signals,
    frame_length,
    frame_step,
    fft_length=None,
    window_fn=hann_window,
    pad_end=False,
    name=None,
):
    """The short-time Fourier transform of `[..., samples]` float `signals`:
    `[..., frames, fft_length // 2 + 1]` complex (TF's `tf.signal.stft`).

    `fft_length` defaults to the smallest power of 2 >= `frame_length`;
    `window_fn(frame_length, dtype=...)` windows each frame (None: no window).

    >>> jaxtape.signal.stft(jaxtape.zeros([1000]), 256, 128).shape
    TensorShape([6, 129])
    """
    del name  # accepted for TF compatibility
    x = signals if _is_tensor(signals) else convert_to_tensor(signals)
    _rank_at_least(x, 1)
    length = _static_int(frame_length, "frame_length", "stft")
    n_fft = (
        _enclosing_power_of_two(length)
        if fft_length is None
        else _static_int(fft_length, "fft_length", "stft")
    )
    framed = frame(x, length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed = math_ops.multiply(framed, window_fn(length, dtype=framed.dtype))
    return rfft(framed, [n_fft])


@op("InverseSTFTWindow")
@_compiled
def _inverse_window(forward, frame_step=1):
    """`forward` divided by the sum of the squared windows overlapping each
    sample (0 where that sum is 0), as TF's `inverse_stft_window_fn`."""
    length = forward.shape[0]
    overlaps = -(-length // frame_step)
    denom = jnp.pad(jnp.square(forward), (0, overlaps * frame_step - length))
    denom = denom.reshape(overlaps, frame_step).sum(0, keepdims=True)
    denom = jnp.tile(denom, (overlaps, 1)).reshape(-1)[:length]
    zero = denom == 0
    return jnp.where(zero, jnp.zeros_like(forward), forward / jnp.where(zero, 1, denom))


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """A window function for `inverse_stft` that undoes `forward_window_fn`'s
    overlap weighting (TF's `tf.signal.inverse_stft_window_fn`)."""
    del name  # accepted for TF compatibility
    step = _static_int(frame_step, "frame_step", "inverse_stft_window_fn")

    def inverse_stft_window_fn_inner(frame_length, dtype):
        length = _static_int(frame_length, "frame_length", "inverse_stft_window_fn")
        forward = forward_window_fn(length, dtype=dtype)
        return _inverse_window(forward, step)

    return inverse_stft_window_fn_inner


def inverse_stft(
    stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window, name=None
):
    """The inverse of `stft` for `[..., frames, fft_unique_bins]` complex `stfts`
    (TF's `tf.signal.inverse_stft`); pass `window_fn=inverse_stft_window_fn(
    frame_step)` for perfect reconstruction of a Hann-windowed `stft`."""
    del name  # accepted for TF compatibility
    x = stfts if _is_tensor(stfts) else convert_to_tensor(stfts)
    _rank_at_least(x, 2)
    length = _static_int(frame_length, "frame_length", "inverse_stft")
    step = _static_int(frame_step, "frame_step", "inverse_stft")
    n_fft = (
        _enclosing_power_of_two(length)
        if fft_length is None
        else _static_int(fft_length, "fft_length", "inverse_stft")
    )
    real_frames = irfft(x, [n_fft])
    have = real_frames.shape[-1]
    if have > length:
        real_frames = real_frames[..., :length]
    elif have < length:
        pads = [[0, 0]] * (len(real_frames.shape) - 1) + [[0, length - have]]
        real_frames = array_ops.pad(real_frames, pads)
    if window_fn is not None:
        real = dtypes.as_dtype(_REAL_OF[dtypes.np_dtype(x.dtype)])
        window = window_fn(length, dtype=real)
        real_frames = math_ops.multiply(real_frames, window)
    return overlap_and_add(real_frames, step)


# -- DCT -------------------------------------------------------------------------------
def _validate_dct(x, dct_type, n, axis, norm):
    if axis != -1:
        raise NotImplementedError(f"axis must be -1. Got: {axis}")
    if n is not None and n < 1:
        raise ValueError("n should be a positive integer or None")
    if dct_type not in (1, 2, 3, 4):
        raise ValueError("Types I, II, III and IV (I)DCT are supported.")
    if dct_type == 1:
        if norm == "ortho":
            raise ValueError("Normalization is not supported for the Type-I DCT.")
        if x.shape[-1] < 2:
            raise ValueError(
                "Type-I DCT requires the dimension to be greater than one."
            )
    if norm not in (None, "ortho"):
        raise ValueError(
            f"Unknown normalization. Expected None or 'ortho', got: {norm}"
        )


@op("DCT")
@_compiled
def _dct_op(input, dct_type=2, n=None, norm=None):
    x = input
    if n is not None:
        seq = x.shape[-1]
        if n <= seq:
            x = x[..., :n]
        else:
            x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n - seq)])
    return _dct(x, dct_type, norm)


def _dct(x, dct_type, norm):
    """TF's FFT-based DCTs (scipy.fftpack conventions), in `x`'s dtype."""
    dt = x.dtype
    ct = _COMPLEX_OF[np.dtype(dt)]
    m = x.shape[-1]
    mf = np.asarray(m, dt)
    if dct_type == 1:
        y = jnp.concatenate([x, x[..., -2:0:-1]], axis=-1)
        return jnp.real(jnp.fft.rfft(y)).astype(dt)
    if dct_type == 2:
        k = jnp.arange(m, dtype=dt)
        scale = 2.0 * jnp.exp(lax.complex(jnp.zeros_like(k), -k * np.pi * 0.5 / mf))
        spec = jnp.fft.rfft(x, n=2 * m).astype(ct)[..., :m]
        out = jnp.real(spec * scale).astype(dt)
        if norm == "ortho":
            n1 = 0.5 / jnp.sqrt(mf)
            w = jnp.full((m,), n1 * math.sqrt(2.0), dt).at[0].set(n1)
            out = out * w
        return out
    if dct_type == 3:
        if norm == "ortho":
            n1 = jnp.sqrt(mf)
            w = jnp.full((m,), n1 * math.sqrt(0.5), dt).at[0].set(n1)
            x = x * w
        else:
            x = x * mf
        k = jnp.arange(m, dtype=dt)
        scale = 2.0 * jnp.exp(lax.complex(jnp.zeros_like(k), k * np.pi * 0.5 / mf))
        return jnp.fft.irfft(scale * x.astype(ct), n=2 * m)[..., :m].astype(dt)
    y = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, m)])  # type 4: odd DCT-II terms
    out = _dct(y, 2, None)[..., 1::2]
    if norm == "ortho":
        out = out * (math.sqrt(0.5) / jnp.sqrt(mf))
    return out


def _dct_input(input, op_name):
    x = input if _is_tensor(input) else convert_to_tensor(input)
    dt = dtypes.np_dtype(x.dtype)
    if dt.kind in "iub":  # TF: converting the 0.0 it builds fails
        to_value(0.0, dt)
    if dt not in _COMPLEX_OF:
        raise TypeError(
            f"The `real` and `imag` components have incorrect types: {dt.name} "
            f"{dt.name}. They must be consistent, and one of [jaxtape.float32, "
            "jaxtape.float64]"
        )
    if len(x.shape) < 1:
        raise IndexError("tuple index out of range")
    return x


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002
    """The DCT of types I-IV of `[..., samples]` float32/float64 `input` along
    the last axis (TF's `tf.signal.dct`; scipy.fftpack's definitions). `n`
    crops or zero-pads the samples; `norm="ortho"` makes II-IV orthonormal."""
    del name  # accepted for TF compatibility
    x = _dct_input(input, "dct")
    _validate_dct(x, type, n, axis, norm)
    return _dct_op(x, type, None if n is None else int(n), norm)


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002
    """The inverse DCT (TF's `tf.signal.idct`): the DCT of the inverse type (II
    and III swap) with the same `norm`, so without `norm`, `idct(dct(x))` is
    `2 N x` (type I: `2 (N - 1) x`), as in TF and scipy.fftpack."""
    del name  # accepted for TF compatibility
    x = _dct_input(input, "idct")
    _validate_dct(x, type, n, axis, norm)
    inverse_type = {1: 1, 2: 3, 3: 2, 4: 4}[type]
    return dct(x, type=inverse_type, n=n, axis=axis, norm=norm)


def _rect_scale(x):
    """TF's rectangular MDCT window: a scale of 1/sqrt(2)."""
    return np.asarray(1.0 / np.sqrt(2), dtypes.np_dtype(x.dtype))


# -- MDCT ------------------------------------------------------------------------------
def mdct(
    signals, frame_length, window_fn=vorbis_window, pad_end=False, norm=None, name=None
):
    """The modified DCT of `[..., samples]` float `signals`, frames of
    `frame_length` (a multiple of 4) every `frame_length // 2` samples:
    `[..., frames, frame_length // 2]` (TF's `tf.signal.mdct`)."""
    del name  # accepted for TF compatibility
    x = signals if _is_tensor(signals) else convert_to_tensor(signals)
    _rank_at_least(x, 1)
    length = _static_int(frame_length, "frame_length", "mdct")
    if length % 4 != 0:
        raise ValueError("The frame length must be a multiple of 4.")
    framed = frame(x, length, length // 2, pad_end=pad_end)
    if window_fn is not None:
        framed = math_ops.multiply(framed, window_fn(length, dtype=framed.dtype))
    else:
        framed = math_ops.multiply(framed, _rect_scale(framed))
    return _mdct_op(framed, norm)


@op("MDCT")
@_compiled
def _mdct_op(framed, norm=None):
    q = framed.shape[-1] // 4
    a, b, c, d = (framed[..., i * q : (i + 1) * q] for i in range(4))
    first = -c[..., ::-1] - d
    second = a - b[..., ::-1]
    return _dct(jnp.concatenate([first, second], axis=-1), 4, norm)


@op("InverseMDCT")
@_compiled
def _imdct_op(mdcts, norm=None):
    half = mdcts.shape[-1]
    out = _dct(mdcts, 4, norm)
    if norm is None:
        out = out * np.asarray(0.5 / half, out.dtype)
    q = half // 2
    a, b = out[..., :q], out[..., q:]
    return jnp.concatenate([b, -b[..., ::-1], -a[..., ::-1], -a], axis=-1)


def inverse_mdct(mdcts, window_fn=vorbis_window, norm=None, name=None):
    """The inverse of `mdct` for `[..., frames, frame_length // 2]` float
    `mdcts` (TF's `tf.signal.inverse_mdct`)."""
    del name  # accepted for TF compatibility
    x = mdcts if _is_tensor(mdcts) else convert_to_tensor(mdcts)
    _rank_at_least(x, 2)
    half = x.shape[-1]
    frames = _imdct_op(x, norm)
    if window_fn is not None:
        frames = math_ops.multiply(frames, window_fn(2 * half, dtype=frames.dtype))
    else:
        frames = math_ops.multiply(frames, _rect_scale(frames))
    return overlap_and_add(frames, half)


# -- mel scale -------------------------------------------------------------------------
_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _hertz_to_mel(hz, cdt):
    return cdt.type(_MEL_HIGH_FREQUENCY_Q) * np.log(
        cdt.type(1.0) + hz / cdt.type(_MEL_BREAK_FREQUENCY_HERTZ)
    )


def linear_to_mel_weight_matrix(
    num_mel_bins=20,
    num_spectrogram_bins=129,
    sample_rate=8000,
    lower_edge_hertz=125.0,
    upper_edge_hertz=3800.0,
    dtype=dtypes.float32,
    name=None,
):
    """A `[num_spectrogram_bins, num_mel_bins]` matrix of triangular mel filters
    that maps a linear spectrogram to the mel scale (TF's
    `tf.signal.linear_to_mel_weight_matrix`, HTK's mel formula)."""
    del name  # accepted for TF compatibility
    num_mel_bins = int(to_value(num_mel_bins))
    num_spectrogram_bins = int(to_value(num_spectrogram_bins))
    sr = to_value(sample_rate).item()
    lo, hi = float(to_value(lower_edge_hertz)), float(to_value(upper_edge_hertz))
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if lo < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lo}")
    if lo >= hi:
        raise ValueError(f"lower_edge_hertz {lo:.1f} >= upper_edge_hertz {hi:.1f}")
    if sr <= 0.0:
        raise ValueError(f"sample_rate must be positive. Got: {sr}")
    if hi > sr / 2:
        raise ValueError(
            "upper_edge_hertz must not be larger than the Nyquist frequency "
            f"(sample_rate / 2). Got {hi} for sample_rate: {sr}"
        )
    np_dt = dtypes.np_dtype(dtype)
    if np_dt is None or (np_dt.kind != "f" and np_dt != jnp.bfloat16):
        raise ValueError(
            f"dtype must be a floating point type. Got: {dtypes.as_dtype(dtype)!r}"
        )
    cdt = _compute_dtype(np_dt)
    nyquist = cdt.type(sr) / cdt.type(2.0)
    linear = np.linspace(cdt.type(0), nyquist, num_spectrogram_bins, dtype=cdt)[1:]
    bins_mel = _hertz_to_mel(linear, cdt)[:, None]
    edges = np.linspace(
        _hertz_to_mel(cdt.type(lo), cdt),
        _hertz_to_mel(cdt.type(hi), cdt),
        num_mel_bins + 2,
        dtype=cdt,
    )
    lower, center, upper = edges[:-2], edges[1:-1], edges[2:]
    lower_slopes = (bins_mel - lower) / (center - lower)
    upper_slopes = (upper - bins_mel) / (upper - center)
    weights = np.maximum(cdt.type(0), np.minimum(lower_slopes, upper_slopes))
    return _window(np.pad(weights, [[1, 0], [0, 0]]), np_dt)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """MFCCs of `[..., num_mel_bins]` log-mel spectrograms: an orthonormal-scaled
    DCT-II (TF's `tf.signal.mfccs_from_log_mel_spectrograms`)."""
    del name  # accepted for TF compatibility
    x = _dct_input(log_mel_spectrograms, "mfccs_from_log_mel_spectrograms")
    num_mel_bins = x.shape[-1]
    if num_mel_bins == 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {x!r}")
    scale = np.asarray(1.0 / np.sqrt(num_mel_bins * 2.0), dtypes.np_dtype(x.dtype))
    return math_ops.multiply(dct(x, type=2), scale)
