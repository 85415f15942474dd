"""`jaxtape.signal` against real TensorFlow's `tf.signal`, one row per case.

Each row runs `fn(m, *tensors)` in TF and in jaxtape on the same NumPy inputs
and compares dtypes, shapes and values; with `grad`, also the gradients of
`sum(real(out) * w1 + imag(out) * w2)` with respect to every float or complex
input (so TF's conjugation convention for complex gradients is checked).
`compiled` rows run the jaxtape side inside `jaxtape.function`. The error
rows check that bad input raises TF's exception type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest
from parity_checks import assert_raises_like_tf

import jaxtape

R = np.random.default_rng(11)
F32, F64, C64, C128 = np.float32, np.float64, np.complex64, np.complex128


def f(*shape, dtype=F32):
    return R.normal(size=shape).astype(dtype)


def c(*shape, dtype=C64):
    return (R.normal(size=shape) + 1j * R.normal(size=shape)).astype(dtype)


class Row(NamedTuple):
    fn: Callable[..., Any]
    inputs: tuple
    grad: bool = True
    compiled: bool = False
    rtol: float = 1e-5
    atol: float = 1e-5


def row(fn, *inputs, grad=True, compiled=False, rtol=1e-5, atol=1e-5):
    return Row(fn, inputs, grad, compiled, rtol, atol)


S = lambda m: m.signal  # noqa: E731

ROWS: dict[str, Row] = {
    # complex FFTs
    "fft_c64": row(lambda m, x: S(m).fft(x), c(3, 8)),
    "fft_c128": row(lambda m, x: S(m).fft(x), c(5, dtype=C128), rtol=1e-10),
    "ifft_c64": row(lambda m, x: S(m).ifft(x), c(2, 7)),
    "fft2d_c64": row(lambda m, x: S(m).fft2d(x), c(2, 4, 6)),
    "ifft2d_c128": row(lambda m, x: S(m).ifft2d(x), c(3, 5, dtype=C128), rtol=1e-10),
    "fft3d_c64": row(lambda m, x: S(m).fft3d(x), c(2, 3, 4, 5)),
    "ifft3d_c64": row(lambda m, x: S(m).ifft3d(x), c(3, 4, 2)),
    "fft_compiled": row(lambda m, x: S(m).fft(x), c(4, 6), compiled=True),
    "fft_empty": row(lambda m, x: S(m).fft(x), c(0, 4), grad=False),
    "fft_of_list": row(lambda m: S(m).fft([1.0, 2.0, 0.5]), grad=False),
    # real FFTs
    "rfft_f32": row(lambda m, x: S(m).rfft(x), f(3, 8)),
    "rfft_f64": row(lambda m, x: S(m).rfft(x), f(9, dtype=F64), rtol=1e-10),
    "rfft_odd": row(lambda m, x: S(m).rfft(x), f(2, 7)),
    "rfft_pad": row(lambda m, x: S(m).rfft(x, [12]), f(2, 7)),
    "rfft_crop": row(lambda m, x: S(m).rfft(x, [5]), f(2, 8), grad=False),  # TF fails
    "rfft_compiled": row(lambda m, x: S(m).rfft(x, [10]), f(3, 8), compiled=True),
    "irfft_c64": row(lambda m, x: S(m).irfft(x), c(3, 5)),
    "irfft_odd_length": row(lambda m, x: S(m).irfft(x, [9]), c(2, 5)),
    "irfft_pad": row(lambda m, x: S(m).irfft(x, [16]), c(2, 5)),
    "irfft_c128": row(lambda m, x: S(m).irfft(x), c(6, dtype=C128), rtol=1e-10),
    "rfft2d": row(lambda m, x: S(m).rfft2d(x), f(2, 4, 6)),
    "rfft2d_fft_length": row(lambda m, x: S(m).rfft2d(x, [6, 4]), f(4, 6), grad=False),
    "irfft2d": row(lambda m, x: S(m).irfft2d(x), c(4, 4)),
    "irfft2d_fft_length": row(
        lambda m, x: S(m).irfft2d(x, [3, 8]), c(2, 4, 3), grad=False
    ),
    "rfft3d": row(lambda m, x: S(m).rfft3d(x), f(2, 3, 4, 4), grad=False),
    "irfft3d": row(lambda m, x: S(m).irfft3d(x, [2, 3, 6]), c(2, 3, 4), grad=False),
    "irfft3d_compiled": row(
        lambda m, x: S(m).irfft3d(x), c(2, 3, 4), compiled=True, grad=False
    ),
    "fftshift": row(lambda m, x: S(m).fftshift(x), f(4, 5)),
    "fftshift_axes": row(lambda m, x: S(m).fftshift(x, axes=1), f(4, 5)),
    "ifftshift_axes": row(lambda m, x: S(m).ifftshift(x, axes=[0]), c(5, 3)),
    "ifftshift_int": row(lambda m: S(m).ifftshift(m.range(7))),
    # framing
    "frame": row(lambda m, x: S(m).frame(x, 4, 2), f(2, 11)),
    "frame_pad_end": row(
        lambda m, x: S(m).frame(x, 4, 3, pad_end=True, pad_value=1.5), f(2, 11)
    ),
    "frame_axis0": row(lambda m, x: S(m).frame(x, 3, 2, axis=0), f(8, 3)),
    "frame_axis_middle": row(lambda m, x: S(m).frame(x, 2, 1, axis=-2), f(2, 5, 3)),
    "frame_int": row(lambda m, x: S(m).frame(x, 2, 1, True, 7), np.arange(5)),
    "frame_too_short": row(lambda m, x: S(m).frame(x, 6, 1), f(4)),
    "frame_compiled": row(lambda m, x: S(m).frame(x, 4, 2), f(10), compiled=True),
    "overlap_and_add": row(lambda m, x: S(m).overlap_and_add(x, 3), f(2, 5, 7)),
    "overlap_and_add_fast": row(lambda m, x: S(m).overlap_and_add(x, 4), f(3, 4)),
    "overlap_and_add_big_step": row(lambda m, x: S(m).overlap_and_add(x, 5), f(3, 4)),
    "overlap_and_add_int": row(
        lambda m, x: S(m).overlap_and_add(x, 2), np.arange(12).reshape(3, 4)
    ),
    "overlap_and_add_compiled": row(
        lambda m, x: S(m).overlap_and_add(x, 2), f(4, 6), compiled=True
    ),
    # STFT
    "stft": row(lambda m, x: S(m).stft(x, 16, 8), f(2, 64), rtol=1e-4, atol=1e-4),
    "stft_fft_length_pad_end": row(
        lambda m, x: S(m).stft(x, 10, 4, fft_length=32, pad_end=True),
        f(45),
        rtol=1e-4,
        atol=1e-4,
    ),
    "stft_hamming_f64": row(
        lambda m, x: S(m).stft(x, 12, 5, window_fn=S(m).hamming_window),
        f(50, dtype=F64),
        rtol=1e-9,
    ),
    "stft_no_window": row(lambda m, x: S(m).stft(x, 8, 8, window_fn=None), f(32)),
    "stft_compiled": row(
        lambda m, x: S(m).stft(x, 16, 8), f(64), compiled=True, rtol=1e-4, atol=1e-4
    ),
    "inverse_stft": row(
        lambda m, x: S(m).inverse_stft(x, 16, 8), c(2, 5, 9), rtol=1e-4, atol=1e-4
    ),
    "inverse_stft_window_fn": row(
        lambda m, x: S(m).inverse_stft(
            x, 12, 4, fft_length=8, window_fn=S(m).inverse_stft_window_fn(4)
        ),
        c(6, 5),
        rtol=1e-4,
        atol=1e-4,
    ),
    "stft_roundtrip": row(
        lambda m, x: S(m).inverse_stft(
            S(m).stft(x, 16, 4),
            16,
            4,
            window_fn=S(m).inverse_stft_window_fn(4, S(m).hann_window),
        ),
        f(80),
        rtol=1e-4,
        atol=1e-4,
    ),
    "stft_roundtrip_compiled": row(
        lambda m, x: S(m).inverse_stft(
            S(m).stft(x, 16, 4), 16, 4, window_fn=S(m).inverse_stft_window_fn(4)
        ),
        f(80),
        compiled=True,
        rtol=1e-4,
        atol=1e-4,
    ),
    "mdct": row(lambda m, x: S(m).mdct(x, 8), f(2, 40), rtol=1e-4, atol=1e-4),
    "mdct_kbd_ortho": row(
        lambda m, x: S(m).mdct(
            x, 12, window_fn=S(m).kaiser_bessel_derived_window, norm="ortho"
        ),
        f(30),
        rtol=1e-4,
        atol=1e-4,
    ),
    "inverse_mdct": row(lambda m, x: S(m).inverse_mdct(x), f(5, 4), rtol=1e-4),
    "inverse_mdct_no_window": row(
        lambda m, x: S(m).inverse_mdct(x, window_fn=None, norm="ortho"),
        f(3, 6),
        rtol=1e-4,
    ),
    # windows
    "hann_periodic": row(lambda m: S(m).hann_window(10)),
    "hann_symmetric_odd": row(lambda m: S(m).hann_window(9, periodic=False)),
    "hann_one": row(lambda m: S(m).hann_window(1)),
    "hann_empty": row(lambda m: S(m).hann_window(0)),
    "hamming_f64": row(lambda m: S(m).hamming_window(8, dtype=m.float64)),
    "hamming_f16": row(lambda m: S(m).hamming_window(8, dtype=m.float16), rtol=1e-3),
    "kaiser": row(lambda m: S(m).kaiser_window(9), rtol=1e-4, atol=1e-6),
    "kaiser_beta": row(lambda m: S(m).kaiser_window(8, beta=3.0, dtype=m.float64)),
    "kaiser_bessel_derived": row(
        lambda m: S(m).kaiser_bessel_derived_window(10), rtol=1e-4
    ),
    "kaiser_bessel_derived_one": row(
        lambda m: S(m).kaiser_bessel_derived_window(1), rtol=1e-4
    ),
    "vorbis": row(lambda m: S(m).vorbis_window(12)),
    "vorbis_f16": row(lambda m: S(m).vorbis_window(6, dtype=m.float16), rtol=1e-3),
    # mel / MFCC
    "mel_matrix_default": row(
        lambda m: S(m).linear_to_mel_weight_matrix(), rtol=1e-4, atol=1e-5
    ),
    "mel_matrix_f64": row(
        lambda m: S(m).linear_to_mel_weight_matrix(
            40, 257, 16000, 20.0, 8000.0, dtype=m.float64
        ),
        rtol=1e-9,
    ),
    "mfccs": row(lambda m, x: S(m).mfccs_from_log_mel_spectrograms(x), f(3, 4, 20)),
    "mfccs_f64": row(
        lambda m, x: S(m).mfccs_from_log_mel_spectrograms(x),
        f(13, dtype=F64),
        rtol=1e-9,
    ),
}
for _t in (1, 2, 3, 4):
    ROWS[f"dct_type{_t}"] = row(
        lambda m, x, t=_t: S(m).dct(x, type=t), f(3, 8), rtol=1e-4
    )
    _norm = None if _t == 1 else "ortho"
    ROWS[f"idct_type{_t}_{_norm}_f64"] = row(
        lambda m, x, t=_t, n=_norm: S(m).idct(x, type=t, norm=n),
        f(3, 8, dtype=F64),
        grad=False,
        rtol=1e-9,
    )
ROWS["dct_ortho_n_crop"] = row(
    lambda m, x: S(m).dct(x, n=5, norm="ortho"), f(3, 8), grad=False, rtol=1e-4
)
ROWS["dct_n_pad"] = row(
    lambda m, x: S(m).dct(x, type=3, n=11), f(3, 8), grad=False, rtol=1e-4
)
ROWS["dct_compiled"] = row(
    lambda m, x: S(m).dct(x, type=4, norm="ortho"), f(2, 8), compiled=True, rtol=1e-4
)


def _is_diff(dtype_name: str) -> bool:
    return dtype_name.startswith(("float", "complex", "bfloat"))


def _run(m, r: Row):
    xs = [m.constant(x) for x in r.inputs]
    if m is jaxtape and r.compiled:
        call = jaxtape.function(lambda *a: r.fn(jaxtape, *a))
    else:
        call = lambda *a: r.fn(m, *a)  # noqa: E731
    sources = [x for x in xs if _is_diff(x.dtype.name)]
    if not (r.grad and sources):
        return call(*xs), []
    with m.GradientTape() as tape:
        tape.watch(sources)
        out = call(*xs)
        w = np.random.default_rng(1).uniform(0.5, 1.5, (2, *out.shape))
        real = m.math.real(out)
        dt = real.dtype.name
        target = m.reduce_sum(real * w[0].astype(dt))
        if out.dtype.is_complex:
            target += m.reduce_sum(m.math.imag(out) * w[1].astype(dt))
    return out, tape.gradient(target, sources)


def _same(got, want, rtol, atol, what):
    if want is None:
        assert got is None, f"{what}: TF gives None, jaxtape {got!r}"
        return
    assert got is not None, f"{what}: jaxtape gives None, TF {want!r}"
    assert got.dtype.name == want.dtype.name, f"{what}: {got.dtype} vs {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{what}: {got.shape} vs {want.shape}"
    np.testing.assert_allclose(
        np.asarray(got), want.numpy(), rtol=rtol, atol=atol, err_msg=what
    )


@pytest.mark.parametrize("name", list(ROWS))
def test_signal_op_and_gradient_match_tensorflow(name, tf):
    r = ROWS[name]
    want, want_grads = _run(tf, r)
    got, got_grads = _run(jaxtape, r)
    _same(got, want, r.rtol, r.atol, f"{name} output")
    assert len(got_grads) == len(want_grads)
    for k, (g, w) in enumerate(zip(got_grads, want_grads)):
        _same(g, w, max(r.rtol, 1e-5), max(r.atol, 1e-5), f"{name} gradient {k}")


ERRORS: dict[str, tuple[Callable, tuple]] = {
    "fft_of_float_tensor": (lambda m, x: m.signal.fft(x), (f(4),)),
    "fft_of_scalar": (lambda m, x: m.signal.fft(x), (c(),)),
    "fft2d_of_vector": (lambda m, x: m.signal.fft2d(x), (c(4),)),
    "rfft_of_complex": (lambda m, x: m.signal.rfft(x), (c(4),)),
    "rfft_of_int": (lambda m, x: m.signal.rfft(x), (np.arange(4),)),
    "rfft_of_scalar": (lambda m, x: m.signal.rfft(x), (f(),)),
    "rfft_fft_length_shape": (lambda m, x: m.signal.rfft(x, [2, 3]), (f(4),)),
    "rfft_fft_length_negative": (lambda m, x: m.signal.rfft(x, [-1]), (f(4),)),
    "rfft_fft_length_scalar": (lambda m, x: m.signal.rfft(x, 4), (f(4),)),
    "rfft2d_of_vector": (lambda m, x: m.signal.rfft2d(x), (f(4),)),
    "irfft_of_float": (lambda m, x: m.signal.irfft(x), (f(4),)),
    "frame_of_scalar": (lambda m, x: m.signal.frame(x, 2, 1), (f(),)),
    "frame_step_zero": (lambda m, x: m.signal.frame(x, 2, 0), (f(4),)),
    "frame_float_length": (lambda m, x: m.signal.frame(x, 2.0, 1), (f(4),)),
    "overlap_and_add_vector": (lambda m, x: m.signal.overlap_and_add(x, 1), (f(4),)),
    "overlap_and_add_float_step": (
        lambda m, x: m.signal.overlap_and_add(x, 1.0),
        (f(2, 3),),
    ),
    "hann_int_dtype": (lambda m: m.signal.hann_window(4, dtype=m.int32), ()),
    "hann_float_length": (lambda m: m.signal.hann_window(4.0), ()),
    "hann_negative_length": (lambda m: m.signal.hann_window(-1), ()),
    "kaiser_empty": (lambda m: m.signal.kaiser_window(0), ()),
    "dct_type5": (lambda m, x: m.signal.dct(x, type=5), (f(4),)),
    "dct_axis0": (lambda m, x: m.signal.dct(x, axis=0), (f(4),)),
    "dct_int": (lambda m, x: m.signal.dct(x), (np.arange(4),)),
    "dct_half": (lambda m, x: m.signal.dct(x), (f(4, dtype=np.float16),)),
    "dct_n_zero": (lambda m, x: m.signal.dct(x, n=0), (f(4),)),
    "dct1_ortho": (lambda m, x: m.signal.dct(x, type=1, norm="ortho"), (f(4),)),
    "dct_unknown_norm": (lambda m, x: m.signal.dct(x, norm="x"), (f(4),)),
    "stft_of_int": (lambda m, x: m.signal.stft(x, 4, 2), (np.arange(8),)),
    "stft_of_scalar": (lambda m, x: m.signal.stft(x, 4, 2), (f(),)),
    "inverse_stft_vector": (lambda m, x: m.signal.inverse_stft(x, 4, 2), (c(3),)),
    "inverse_stft_float": (lambda m, x: m.signal.inverse_stft(x, 4, 2), (f(3, 3),)),
    "mdct_frame_length": (lambda m, x: m.signal.mdct(x, 6), (f(12),)),
    "mel_above_nyquist": (
        lambda m: m.signal.linear_to_mel_weight_matrix(upper_edge_hertz=5000.0),
        (),
    ),
    "mel_int_dtype": (
        lambda m: m.signal.linear_to_mel_weight_matrix(dtype=m.int32),
        (),
    ),
    "mfccs_no_bins": (
        lambda m, x: m.signal.mfccs_from_log_mel_spectrograms(x),
        (f(2, 0),),
    ),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_input_raises_tensorflows_error_type(name, tf):
    fn, inputs = ERRORS[name]
    assert_raises_like_tf(tf, lambda m: fn(m, *[m.constant(x) for x in inputs]))


def test_nd_ffts_match_numpy():
    """TF ships no kernel for `fftnd` & co. (NotFoundError), so NumPy is the oracle."""
    x, z = f(2, 3, 4), c(2, 3, 4)
    sig = jaxtape.signal
    cases = [
        (sig.fftnd(z), np.fft.fftn(z)),
        (
            sig.ifftnd(z, axes=[-2, -1], norm="ortho"),
            np.fft.ifftn(z, axes=(-2, -1), norm="ortho"),
        ),  # fmt: skip
        (sig.fftnd(z, fft_length=[5], axes=[1]), np.fft.fftn(z, s=(5,), axes=(1,))),
        (sig.rfftnd(x, axes=[-2, -1]), np.fft.rfftn(x, axes=(-2, -1))),
        (
            sig.irfftnd(z, fft_length=[4, 6], axes=[1, 2]),
            np.fft.irfftn(z, s=(4, 6), axes=(1, 2)),
        ),  # fmt: skip
    ]
    for got, want in cases:
        assert got.dtype.name in ("complex64", "float32")
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5)
