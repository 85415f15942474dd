"""Keras's audio front-end layers: STFTSpectrogram and MelSpectrogram. Layer L5.

`STFTSpectrogram` is Keras's: the STFT as a strided 1-D convolution with
(optionally trainable) cosine/sine kernels made by Keras's `STFT`
initializer. `MelSpectrogram` is `keras.ops.stft` (reflect-padded, centred),
a power, Keras's HTK mel matrix and an optional dB scale.
"""

from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import config
from jaxtape._src.core.dispatch import op
from jaxtape._src.initializers import initializers
from jaxtape._src.keras.layers.arguments import standardize_data_format
from jaxtape._src.keras.layers.base import Layer
from jaxtape._src.keras.layers.input_spec import InputSpec
from jaxtape._src.keras.ops import linalg as klinalg
from jaxtape._src.ops import math_ops

__all__ = ["MelSpectrogram", "STFTSpectrogram"]

_MODES = ("log", "magnitude", "psd", "real", "imag", "angle", "stft")


def _conv_frames(x, kernel, step, padding, channels_first):
    """`(B, T, C)` (or `(B, C, T)`) by `(L, 1, F)` per channel:
    `(B, C, F, T')`, as Keras's `_apply_conv`."""
    if not channels_first:
        x = jnp.swapaxes(x, 1, 2)
    b, c, t = x.shape
    x = x.reshape(b * c, 1, t)
    out = jax.lax.conv_general_dilated(
        x,
        kernel.astype(x.dtype),
        (step,),
        padding.upper(),
        dimension_numbers=("NCH", "HIO", "NCH"),
    )
    return out.reshape(b, c, out.shape[1], out.shape[2])


@op("STFTSpectrogram", inputs=("x", "real_kernel", "imag_kernel"), jit=True)
def _stft_spectrogram(x, real_kernel, imag_kernel, mode, step, padding,
                      expand_dims, channels_first, eps):  # fmt: skip
    # Both convolutions are traced; XLA drops the one a mode does not use.
    re = _conv_frames(x, real_kernel, step, padding, channels_first)
    im = _conv_frames(x, imag_kernel, step, padding, channels_first)
    if mode == "real":
        out = re
    elif mode == "imag":
        out = im
    elif mode == "angle":
        out = jnp.arctan2(im, re)
    elif mode == "stft":
        out = jnp.concatenate([re, im], axis=2)
    else:
        power = jnp.square(re) + jnp.square(im)
        if mode == "psd":
            pad = [(0, 0), (0, 0), (1, 1), (0, 0)]
            out = power + jnp.pad(power[:, :, 1:-1, :], pad)
        else:
            out = jnp.sqrt(jnp.maximum(power, eps))
            if mode == "log":
                out = jnp.log(jnp.maximum(out, eps))
    b, c, f, t = out.shape  # Keras's `_adjust_shapes`
    if expand_dims:
        return jnp.transpose(out, (0, 1, 3, 2) if channels_first else (0, 3, 2, 1))
    out = out.reshape(b, c * f, t)
    return out if channels_first else jnp.swapaxes(out, 1, 2)


class STFTSpectrogram(Layer):
    """Spectrograms of 1-D signals by a strided convolution (Keras's
    `STFTSpectrogram`): `mode` log (default), magnitude, psd, real, imag,
    angle or stft; `window` a scipy window name or an array; `scaling`
    density, spectrum or None; `padding` valid or same; the kernels are
    weights (trainable unless `trainable=False`).

    Inputs `(batch, time, channels)` (`channels_first`: `(batch, channels,
    time)`); outputs `(batch, frames, channels * bins)`, or `(batch, frames,
    bins, channels)` with `expand_dims`.

    Differences from Keras: the kernels are computed in float64 and cast
    (Keras computes them in the weight dtype; differences ~1e-7).
    """

    def __init__(self, mode="log", frame_length=256, frame_step=None,
                 fft_length=None, window="hann", periodic=False, scaling="density",
                 padding="valid", expand_dims=False, data_format=None,
                 **kwargs):  # fmt: skip
        if frame_step is not None and (frame_step > frame_length or frame_step < 1):
            raise ValueError(
                "`frame_step` should be a positive integer not greater than "
                f"`frame_length`. Received frame_step={frame_step}, "
                f"frame_length={frame_length}"
            )
        if fft_length is not None and fft_length < frame_length:
            raise ValueError(
                "`fft_length` should be not less than `frame_length`. "
                f"Received fft_length={fft_length}, frame_length={frame_length}"
            )
        if fft_length is not None and (fft_length & -fft_length) != fft_length:
            warnings.warn(
                "`fft_length` is recommended to be a power of two. "
                f"Received fft_length={fft_length}",
                stacklevel=2,
            )
        if mode not in _MODES:
            raise ValueError(
                "Output mode is invalid, it must be one of "
                f"{', '.join(_MODES)}. Received: mode={mode}"
            )
        if scaling is not None and scaling not in ("density", "spectrum"):
            raise ValueError(
                "Scaling is invalid, it must be `None`, 'density' "
                f"or 'spectrum'. Received scaling={scaling}"
            )
        if padding not in ("valid", "same"):
            raise ValueError(
                "Padding is invalid, it should be 'valid', 'same'. "
                f"Received: padding={padding}"
            )
        if isinstance(window, str):
            initializers.get_window(window, 1)  # (raises for an unknown window)
        super().__init__(**kwargs)
        self.mode = mode
        self.frame_length = frame_length
        self.frame_step = frame_step
        self._frame_step = frame_step or frame_length // 2
        self.fft_length = fft_length
        self._fft_length = fft_length or 2 ** int(math.ceil(math.log2(frame_length)))
        self.window = window
        self.periodic = periodic
        self.scaling = scaling
        self.padding = padding
        self.expand_dims = expand_dims
        self.data_format = standardize_data_format(data_format)
        self.input_spec = InputSpec(ndim=3)

    def _kernel_initializer(self, side):
        return initializers.STFT(side, self.window, self.scaling, self.periodic)

    def build(self, input_shape):
        shape = (self.frame_length, 1, self._fft_length // 2 + 1)
        self.real_kernel = self.imag_kernel = None
        if self.mode != "imag":
            self.real_kernel = self.add_weight(
                name="real_kernel",
                shape=shape,
                initializer=self._kernel_initializer("real"),
            )
        if self.mode != "real":
            self.imag_kernel = self.add_weight(
                name="imag_kernel",
                shape=shape,
                initializer=self._kernel_initializer("imag"),
            )
        self.built = True

    def call(self, inputs):
        name = inputs.dtype.name
        if name not in ("float16", "float32", "float64"):
            raise TypeError(
                "Invalid input type. Expected `float16`, `float32` or "
                f"`float64`. Received: input type={name}"
            )
        # A missing kernel is never read; pass the other in its place.
        re = self.real_kernel if self.real_kernel is not None else self.imag_kernel
        im = self.imag_kernel if self.imag_kernel is not None else self.real_kernel
        return _stft_spectrogram(
            inputs,
            re,
            im,
            self.mode,
            int(self._frame_step),
            self.padding,
            bool(self.expand_dims),
            self.data_format == "channels_first",
            float(config.epsilon()),
        )

    def compute_output_shape(self, input_shape):
        cf = self.data_format == "channels_first"
        b = input_shape[0]
        channels = input_shape[1] if cf else input_shape[-1]
        t = input_shape[-1] if cf else input_shape[1]
        freq = self._fft_length // 2 + 1
        if self.mode == "stft":
            freq *= 2
        if t is not None:
            if self.padding == "valid":
                t = (t - self.frame_length) // self._frame_step + 1
            else:
                t = -(-t // self._frame_step)
        if self.expand_dims:
            return (b, channels, t, freq) if cf else (b, t, freq, channels)
        c = None if channels is None else channels * freq
        return (b, c, t) if cf else (b, t, c)

    def get_config(self):
        return {
            **super().get_config(),
            "mode": self.mode,
            "frame_length": self.frame_length,
            "frame_step": self.frame_step,
            "fft_length": self.fft_length,
            "window": self.window,
            "periodic": self.periodic,
            "scaling": self.scaling,
            "padding": self.padding,
            "data_format": self.data_format,
            "expand_dims": self.expand_dims,
        }


_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _hertz_to_mel(hz):
    return _MEL_HIGH_FREQUENCY_Q * np.log(1.0 + hz / _MEL_BREAK_FREQUENCY_HERTZ)


def _mel_matrix(num_mel_bins, num_spectrogram_bins, sampling_rate, lower, upper,
                dtype):  # fmt: skip
    """Keras's (and TF's) HTK `linear_to_mel_weight_matrix`, computed in the
    result dtype as Keras does: `(num_spectrogram_bins, num_mel_bins)`."""
    dt = np.dtype(dtype)
    sr, lo, hi = dt.type(sampling_rate), dt.type(lower), dt.type(upper)
    linear = np.linspace(dt.type(0), sr / dt.type(2), num_spectrogram_bins, dtype=dt)
    bins_mel = _hertz_to_mel(linear[1:]).astype(dt)[:, None]
    edges = np.linspace(
        _hertz_to_mel(lo), _hertz_to_mel(hi), num_mel_bins + 2, dtype=dt
    )
    lower_mel, center, upper_mel = edges[:-2], edges[1:-1], edges[2:]
    lower_slopes = (bins_mel - lower_mel) / (center - lower_mel)
    upper_slopes = (upper_mel - bins_mel) / (upper_mel - center)
    weights = np.maximum(dt.type(0), np.minimum(lower_slopes, upper_slopes))
    return np.pad(weights, [(1, 0), (0, 0)]).astype(dt)


@op("MelSpectrogram", inputs=("real", "imag", "matrix"), jit=True)
def _mel_scale(real, imag, matrix, mag_exp, power_to_db, top_db, min_power,
               ref_power):  # fmt: skip
    """`|stft| ** mag_exp` on the mel matrix, then Keras's `_dbscale` (its
    `top_db` floor is below the maximum of the whole batch, as Keras)."""
    spec = jnp.power(jnp.sqrt(jnp.square(real) + jnp.square(imag)), mag_exp)
    out = jnp.tensordot(spec, matrix, axes=1)
    if power_to_db:
        log_spec = 10.0 * jnp.log10(jnp.maximum(out, min_power))
        ref = jnp.asarray(abs(ref_power), out.dtype)
        log_spec = log_spec - 10.0 * jnp.log10(jnp.maximum(ref, min_power))
        out = jnp.maximum(log_spec, jnp.max(log_spec) - top_db)
    return jnp.swapaxes(out, -1, -2)


class MelSpectrogram(Layer):
    """Mel spectrograms of audio `(time,)` or `(batch, time)` (Keras's
    `MelSpectrogram`): `keras.ops.stft` (centred, `window` hann/hamming),
    magnitude to the power `mag_exp`, Keras's HTK mel matrix
    (`num_mel_bins` from `min_freq` to `max_freq`, default the Nyquist
    frequency) and, with `power_to_db`, decibels relative to `ref_power`
    floored `top_db` below the maximum. Outputs `(..., num_mel_bins,
    frames)`.

    Differences from Keras: None known.
    """

    def __init__(self, fft_length=2048, sequence_stride=512, sequence_length=None,
                 window="hann", sampling_rate=16000, num_mel_bins=128,
                 min_freq=20.0, max_freq=None, power_to_db=True, top_db=80.0,
                 mag_exp=2.0, min_power=1e-10, ref_power=1.0,
                 **kwargs):  # fmt: skip
        self.fft_length = fft_length
        self.sequence_stride = sequence_stride
        self.sequence_length = sequence_length or fft_length
        if self.fft_length < self.sequence_length:
            raise ValueError(
                "`fft_length` must be greater than or equal to  "
                f" `sequence_length`. Received: `sequence_length`="
                f"{self.sequence_length}, `fft_length`={self.fft_length}."
            )
        self.window = window
        self.sampling_rate = sampling_rate
        self.num_mel_bins = num_mel_bins
        self.min_freq = min_freq
        self.max_freq = max_freq or int(sampling_rate / 2)
        self.power_to_db = power_to_db
        self.top_db = top_db
        self.mag_exp = mag_exp
        self.min_power = min_power
        self.ref_power = ref_power
        super().__init__(**kwargs)

    def call(self, inputs):
        cd = self.compute_dtype
        dtype = cd if cd in ("float32", "float64") else "float32"
        x = math_ops.cast(inputs, dtype)
        real, imag = klinalg.stft(
            x,
            sequence_length=self.sequence_length,
            sequence_stride=self.sequence_stride,
            fft_length=self.fft_length,
            window=self.window,
            center=True,
        )
        matrix = _mel_matrix(
            self.num_mel_bins,
            self.fft_length // 2 + 1,
            self.sampling_rate,
            self.min_freq,
            self.max_freq,
            "float32",
        ).astype(dtype)
        out = _mel_scale(
            real,
            imag,
            matrix,
            float(self.mag_exp),
            bool(self.power_to_db),
            float(self.top_db),
            float(self.min_power),
            float(self.ref_power),
        )
        return math_ops.cast(out, cd)

    def compute_output_shape(self, input_shape):
        t = input_shape[-1]
        frames = (
            None
            if t is None
            else (t + self.sequence_stride + 1) // (self.sequence_stride)
        )
        return (*input_shape[:-1], self.num_mel_bins, frames)

    def get_config(self):
        return {
            **super().get_config(),
            "fft_length": self.fft_length,
            "sequence_stride": self.sequence_stride,
            "sequence_length": self.sequence_length,
            "window": self.window,
            "sampling_rate": self.sampling_rate,
            "num_mel_bins": self.num_mel_bins,
            "min_freq": self.min_freq,
            "max_freq": self.max_freq,
            "power_to_db": self.power_to_db,
            "top_db": self.top_db,
            "mag_exp": self.mag_exp,
            "min_power": self.min_power,
            "ref_power": self.ref_power,
        }
