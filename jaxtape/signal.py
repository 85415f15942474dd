"""`jaxtape.signal` (TF's `tf.signal`): re-exports only."""

from jaxtape._src.ops.signal_ops import (  # noqa: F401
    dct,
    fft,
    fft2d,
    fft3d,
    fftnd,
    fftshift,
    frame,
    hamming_window,
    hann_window,
    idct,
    ifft,
    ifft2d,
    ifft3d,
    ifftnd,
    ifftshift,
    inverse_mdct,
    inverse_stft,
    inverse_stft_window_fn,
    irfft,
    irfft2d,
    irfft3d,
    irfftnd,
    kaiser_bessel_derived_window,
    kaiser_window,
    linear_to_mel_weight_matrix,
    mdct,
    mfccs_from_log_mel_spectrograms,
    overlap_and_add,
    rfft,
    rfft2d,
    rfft3d,
    rfftnd,
    stft,
    vorbis_window,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
