"""Keras 3's `keras.ops.linalg` (also `keras.ops.*`) and `keras.ops` math ops
(`segment_sum`, `top_k`, `fft`, `erf`, ...).

Linear algebra follows Keras's TensorFlow backend: `cholesky` and `eigh` are
jaxtape's TF ops (TF's gradient conventions), `svd` returns `(u, s, v)` in
NumPy's order, `norm` follows NumPy's `ord` rules, FFTs take and return
`(real, imag)` pairs.

Layer L5 (keras); imports `core`, `ops` and this package.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.keras.ops import numpy as knp
from jaxtape._src.keras.ops._base import body, float_of, static, tensor
from jaxtape._src.ops import kinks, linalg_ops


def _float(x):
    x = tensor(x)
    d = float_of(knp._name(x))
    return knp.cast(x, d)


def _check_square(x, name="x"):
    s = np.shape(x)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(
            f"Expected input {name} to be a square matrix (or a batch of them). "
            f"Received: {name}.shape={s}"
        )


def cholesky(x, upper=False):
    """Keras 3's `keras.ops.cholesky`: the lower (or `upper`) Cholesky factor."""
    x = _float(x)
    _check_square(x)
    low = linalg_ops.cholesky(x)
    return knp.swapaxes(knp.conj(low), -1, -2) if upper else low


def cholesky_inverse(x, upper=False):
    """Keras 3's `keras.ops.cholesky_inverse`: `inv(L L^T)` from the factor `x`."""
    x = _float(x)
    _check_square(x)
    lower = knp.swapaxes(x, -1, -2) if upper else x
    n = np.shape(x)[-1]
    eye = knp.broadcast_to(knp.eye(n, dtype=knp._name(x)), np.shape(x))
    inv_l = solve_triangular(lower, eye, lower=True)
    return knp.matmul(knp.swapaxes(inv_l, -1, -2), inv_l)


def eigh(x):
    """Keras 3's `keras.ops.eigh`: `(eigenvalues, eigenvectors)` (lower triangle)."""
    x = _float(x)
    _check_square(x)
    return tuple(linalg_ops.eigh(x))


def _unary(name, fn, differentiable=True):
    @body(name, differentiable)
    def _op(x):
        return fn(x)

    _op.__name__ = f"_{name}"

    def public(x):
        x = _float(x)
        _check_square(x)
        return _op(x)

    return knp.name_public(public, name, f"Keras 3's `keras.ops.{name}`.")


det = _unary("det", jnp.linalg.det)
inv = _unary("inv", jnp.linalg.inv)


@body("slogdet")
def _slogdet(x):
    s, ld = jnp.linalg.slogdet(x)
    return [s, ld]


def slogdet(x):
    """Keras 3's `keras.ops.slogdet`: `(sign, log|det|)`."""
    x = _float(x)
    _check_square(x)
    return tuple(_slogdet(x))


@body("logdet")
def _logdet(x):
    return 2.0 * jnp.sum(
        jnp.log(jnp.diagonal(jnp.linalg.cholesky(x), axis1=-2, axis2=-1)), axis=-1
    )


def logdet(x):
    """Keras 3's `keras.ops.logdet` of a Hermitian positive-definite matrix."""
    x = _float(x)
    _check_square(x)
    return _logdet(x)


@body("eig")
def _eig(x):
    w, v = jnp.linalg.eig(x)
    return [w, v]


def eig(x):
    """Keras 3's `keras.ops.eig`: complex `(eigenvalues, eigenvectors)` (CPU only)."""
    x = _float(x)
    _check_square(x)
    return tuple(_eig(x))


@body("solve")
def _solve(a, b):
    return jnp.linalg.solve(a, b)


def solve(a, b):
    """Keras 3's `keras.ops.solve`: `x` with `a @ x = b`."""
    a = _float(a)
    _check_square(a, "a")
    return _solve(a, knp.cast(b, knp._name(a)))


@body("solve_triangular")
def _solve_triangular(a, b, *, lower, vector):
    if vector:
        b = b[..., None]
    out = jax.scipy.linalg.solve_triangular(a, b, lower=lower)
    return out[..., 0] if vector else out


def solve_triangular(a, b, lower=False):
    """Keras 3's `keras.ops.solve_triangular`: `x` with `a @ x = b`, `a` triangular."""
    a = _float(a)
    _check_square(a, "a")
    b = knp.cast(b, knp._name(a))
    return _solve_triangular(
        a, b, lower=bool(lower), vector=np.ndim(b) == np.ndim(a) - 1
    )


@body("qr")
def _qr(x, *, mode):
    q, r = jnp.linalg.qr(x, mode=mode)
    return [q, r]


def qr(x, mode="reduced"):
    """Keras 3's `keras.ops.qr`: `(q, r)` ("reduced" or "complete")."""
    if mode not in ("reduced", "complete"):
        raise ValueError(
            "`mode` argument value not supported. Expected one of "
            f"{{'reduced', 'complete'}}. Received: mode={mode}"
        )
    return tuple(_qr(_float(x), mode=mode))


@body("svd")
def _svd(x, *, full_matrices, compute_uv):
    if not compute_uv:
        return jnp.linalg.svd(x, full_matrices=full_matrices, compute_uv=False)
    u, s, vh = jnp.linalg.svd(x, full_matrices=full_matrices)
    return [u, s, vh]


def svd(x, full_matrices=True, compute_uv=True):
    """Keras 3's `keras.ops.svd`: `(u, s, vh)` with `x = u @ diag(s) @ vh`.

    Differences from Keras: singular vectors are unique only up to sign; they
    may differ in sign from TF's (their product is the same).
    """
    out = _svd(
        _float(x), full_matrices=bool(full_matrices), compute_uv=bool(compute_uv)
    )
    return tuple(out) if compute_uv else out


@body("pinv")
def _pinv(x, *, rcond):
    return jnp.linalg.pinv(x, rtol=rcond)


def pinv(x, rcond=None):
    """Keras 3's `keras.ops.pinv`: the Moore-Penrose pseudo-inverse."""
    return _pinv(_float(x), rcond=None if rcond is None else float(rcond))


@body("lstsq")
def _lstsq(a, b, *, rcond):
    return jnp.linalg.lstsq(a, b, rcond=rcond)[0]


def lstsq(a, b, rcond=None):
    """Keras 3's `keras.ops.lstsq`: the least-squares solution of `a @ x = b`."""
    a = _float(a)
    return _lstsq(
        a, knp.cast(b, knp._name(a)), rcond=None if rcond is None else float(rcond)
    )


@body("lu_factor", differentiable=False)
def _lu_factor(x):
    lu, piv = jax.scipy.linalg.lu_factor(x)
    return [lu, piv.astype(jnp.int32)]


def lu_factor(x):
    """Keras 3's `keras.ops.lu_factor`: `(lu, pivots)` in LAPACK's form.

    Differences from Keras on TF: TF's backend returns the permutation
    (`tf.linalg.lu`); this returns LAPACK's row-swap pivots, like JAX's backend.
    """
    x = _float(x)
    _check_square(x)
    return tuple(_lu_factor(x))


@body("matrix_rank", differentiable=False)
def _matrix_rank(x, *, tol):
    return jnp.linalg.matrix_rank(
        x, rtol=None if tol is None else None, tol=tol
    ).astype(jnp.int32)


def matrix_rank(x, tol=None):
    """Keras 3's `keras.ops.matrix_rank` (int32)."""
    return _matrix_rank(_float(x), tol=None if tol is None else float(tol))


@body("norm")
def _norm(x, *, ord, axis, keepdims):
    vector = (axis is None and x.ndim == 1) or isinstance(axis, int)
    if vector and ord in (1, np.inf, -np.inf):  # (TF's `abs` gradient at 0)
        a = kinks.abs(x)
        if ord == 1:
            return jnp.sum(a, axis=axis, keepdims=keepdims)
        reduce = jnp.max if ord == np.inf else jnp.min
        return reduce(a, axis=axis, keepdims=keepdims)
    return jnp.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - Keras's name
    """Keras 3's `keras.ops.norm`: NumPy's vector and matrix norms."""
    x = _float(x)
    return _norm(x, ord=ord, axis=static(axis), keepdims=bool(keepdims))


# -- math --
@body("segment")
def _segment(data, ids, *, kind, num_segments, sorted):
    f = {
        "sum": jax.ops.segment_sum,
        "max": jax.ops.segment_max,
        "min": jax.ops.segment_min,
        "prod": jax.ops.segment_prod,
    }[kind]
    return f(data, ids, num_segments=num_segments, indices_are_sorted=sorted)


def _segment_call(kind, data, segment_ids, num_segments, sorted):
    ids = knp._int_indices(segment_ids)
    if num_segments is None:
        num_segments = int(np.max(np.asarray(ids))) + 1 if np.size(ids) else 0
    return _segment(
        tensor(data),
        ids,
        kind=kind,
        num_segments=int(num_segments),
        sorted=bool(sorted),
    )


def segment_sum(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Keras 3's `keras.ops.segment_sum` (empty segments give 0)."""
    return _segment_call("sum", data, segment_ids, num_segments, sorted)


def segment_max(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Keras 3's `keras.ops.segment_max` (empty segments give the dtype's lowest)."""
    return _segment_call("max", data, segment_ids, num_segments, sorted)


def segment_min(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Keras 3's `keras.ops.segment_min` (empty segments give the dtype's highest)."""
    return _segment_call("min", data, segment_ids, num_segments, sorted)


def segment_prod(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
    """Keras 3's `keras.ops.segment_prod` (empty segments give 1)."""
    return _segment_call("prod", data, segment_ids, num_segments, sorted)


@body("top_k")
def _top_k(x, *, k):
    values, indices = lax.top_k(x, k)
    return [values, indices.astype(jnp.int32)]


def top_k(x, k, sorted=True):  # noqa: A002 - Keras's argument name
    """Keras 3's `keras.ops.top_k`: `(values, int32 indices)` along the last axis."""
    if not sorted:
        raise NotImplementedError("top_k: `sorted=False` is not supported.")
    return tuple(_top_k(tensor(x), k=int(k)))


@body("in_top_k", differentiable=False)
def _in_top_k(targets, predictions, *, k):
    target = jnp.take_along_axis(predictions, targets[:, None], axis=-1)
    above = jnp.sum(predictions > target, axis=-1)
    return (above < k) & jnp.isfinite(target[:, 0])


def in_top_k(targets, predictions, k):
    """Keras 3's `keras.ops.in_top_k`: whether each target is among the `k`
    largest predictions (ties at the boundary count as in, as TF's)."""
    return _in_top_k(knp._int_indices(targets), tensor(predictions), k=int(k))


erf = knp._unary("erf", jax.scipy.special.erf)
erfinv = knp._unary("erfinv", jax.scipy.special.erfinv)
erfc = knp._unary("erfc", jax.scipy.special.erfc)
rsqrt = knp._unary("rsqrt", lax.rsqrt)
logsumexp = knp.logsumexp


def _complex_pair(x):
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise ValueError(
            "Input `x` should be a tuple of two tensors - real and imaginary. "
            f"Received: x={x}"
        )
    re, im = _float(x[0]), _float(x[1])
    if np.shape(re) != np.shape(im):
        raise ValueError(
            "Input `x` should be a tuple of two tensors - real and imaginary. "
            "Both the real and imaginary parts should have the same shape. "
            f"Received: x[0].shape = {np.shape(re)}, x[1].shape = {np.shape(im)}"
        )
    return re, im


@body("fft")
def _fft(re, im, *, kind, n):
    z = lax.complex(re, im)
    out = {"fft": jnp.fft.fft, "fft2": jnp.fft.fft2, "ifft2": jnp.fft.ifft2}[kind](z)
    return [jnp.real(out), jnp.imag(out)]


def fft(x):
    """Keras 3's `keras.ops.fft` of `(real, imag)` along the last axis."""
    return tuple(_fft(*_complex_pair(x), kind="fft", n=None))


def fft2(x):
    """Keras 3's `keras.ops.fft2` of `(real, imag)` over the last two axes."""
    return tuple(_fft(*_complex_pair(x), kind="fft2", n=None))


def ifft2(x):
    """Keras 3's `keras.ops.ifft2` of `(real, imag)` over the last two axes."""
    return tuple(_fft(*_complex_pair(x), kind="ifft2", n=None))


@body("rfft")
def _rfft(x, *, n):
    out = jnp.fft.rfft(x, n=n)
    return [jnp.real(out), jnp.imag(out)]


def rfft(x, fft_length=None):
    """Keras 3's `keras.ops.rfft`: `(real, imag)` of the real FFT."""
    return tuple(_rfft(_float(x), n=static(fft_length)))


@body("irfft")
def _irfft(re, im, *, n):
    return jnp.fft.irfft(lax.complex(re, im), n=n)


def irfft(x, fft_length=None):
    """Keras 3's `keras.ops.irfft` of `(real, imag)`."""
    return _irfft(*_complex_pair(x), n=static(fft_length))


@body("extract_sequences")
def _extract_sequences(x, *, length, stride):
    n = (x.shape[-1] - length) // stride + 1
    idx = jnp.arange(n)[:, None] * stride + jnp.arange(length)[None, :]
    return x[..., idx]


def extract_sequences(x, sequence_length, sequence_stride):
    """Keras 3's `keras.ops.extract_sequences`: overlapping frames of the last axis."""
    return _extract_sequences(
        tensor(x), length=int(sequence_length), stride=int(sequence_stride)
    )


@body("view_as_complex")
def _view_as_complex(x):
    return lax.complex(x[..., 0], x[..., 1])


def view_as_complex(x):
    """Keras 3's `keras.ops.view_as_complex`: `(..., 2)` reals as complex."""
    x = tensor(x)
    if np.shape(x)[-1] != 2:
        raise ValueError(
            f"Last dimension of input must be size 2 (real and imaginary). "
            f"Received shape: {np.shape(x)}"
        )
    return _view_as_complex(x)


@body("view_as_real")
def _view_as_real(x):
    return jnp.stack([jnp.real(x), jnp.imag(x)], axis=-1)


def view_as_real(x):
    """Keras 3's `keras.ops.view_as_real`: complex as a trailing `(real, imag)` axis."""
    return _view_as_real(tensor(x))


@body("cdist")
def _cdist(x, y, *, dtype):
    diff = x.astype(dtype)[..., :, None, :] - y.astype(dtype)[..., None, :, :]
    return jnp.sqrt(jnp.sum(jnp.square(diff), axis=-1))


def cdist(x, y):
    """Keras 3's `keras.ops.cdist`: pairwise Euclidean distances of the rows."""
    x, y = tensor(x), tensor(y)
    if np.ndim(x) < 2 or np.ndim(y) < 2:
        raise ValueError("`cdist` inputs must have rank >= 2")
    if np.shape(x)[-1] != np.shape(y)[-1]:
        raise ValueError("Last dimension of inputs to `cdist` must match")
    d = knp.kd.result_type(knp._name(x), knp._name(y))
    return _cdist(x, y, dtype=d)


@body("stft")
def _stft(x, win, *, length, stride, fft_length, center):
    if center:
        pad = [(0, 0)] * (x.ndim - 1) + [(fft_length // 2, fft_length // 2)]
        x = jnp.pad(x, pad, mode="reflect")
    n = (x.shape[-1] - length) // stride + 1
    idx = jnp.arange(n)[:, None] * stride + jnp.arange(length)[None, :]
    frames = x[..., idx]
    if win is not None:
        frames = frames * win
    out = jnp.fft.rfft(frames, n=fft_length)
    return [jnp.real(out), jnp.imag(out)]


def stft(x, sequence_length, sequence_stride, fft_length, window="hann", center=True):
    """Keras 3's `keras.ops.stft`: `(real, imag)` of the short-time Fourier
    transform along the last axis (periodic "hann"/"hamming" windows, or a
    given one, or None)."""
    x = tensor(x)
    d = knp._name(x)
    if d not in ("float32", "float64"):
        raise TypeError(
            f"Invalid input type. Expected `float32` or `float64`. Received: "
            f"input type={d}"
        )
    if fft_length < sequence_length:
        raise ValueError(
            "`fft_length` must equal or larger than `sequence_length`. Received: "
            f"sequence_length={sequence_length}, fft_length={fft_length}"
        )
    if isinstance(window, str) and window not in ("hann", "hamming"):
        raise ValueError(
            'If a string is passed to `window`, it must be one of `"hann"`, '
            f'`"hamming"`. Received: window={window}'
        )
    win = _window(window, sequence_length, fft_length, d)
    return tuple(
        _stft(
            x,
            win,
            length=int(fft_length),
            stride=int(sequence_stride),
            fft_length=int(fft_length),
            center=bool(center),
        )
    )


def _window(window, sequence_length, fft_length, d):
    """Keras's STFT window: periodic hann/hamming or given, zero-padded to
    `fft_length` (centered); None for none."""
    if window is None:
        return None
    if isinstance(window, str):
        t = np.arange(sequence_length) * 2 * np.pi / sequence_length
        a = 0.5 if window == "hann" else 0.54
        w = a - (1 - a) * np.cos(t)
    else:
        w = np.asarray(tensor(window))
    if w.shape != (sequence_length,):
        raise ValueError(
            "The shape of `window` must be equal to [sequence_length]."
            f"Received: window shape={w.shape}"
        )
    l_pad = (fft_length - sequence_length) // 2
    r_pad = fft_length - sequence_length - l_pad
    return np.pad(w, (l_pad, r_pad)).astype(knp.kd.jnp_dtype(d))


def _inverse_window(win, step):
    """TF's `inverse_stft_window_fn`: the window over its overlapping energy."""
    n = win.shape[0]
    overlaps = -(-n // step)
    denom = np.pad(np.square(win), (0, overlaps * step - n)).reshape(overlaps, step)
    denom = np.tile(denom.sum(0, keepdims=True), (overlaps, 1)).reshape(-1)
    return (win / denom[:n]).astype(win.dtype)


@body("istft")
def _istft(re, im, win, *, fft_length, step, start, end):
    frames = jnp.fft.irfft(lax.complex(re, im), n=fft_length)[..., :fft_length]
    if win is not None:
        frames = frames * win
    n = frames.shape[-2]
    total = step * (n - 1) + fft_length
    out = jnp.zeros((*frames.shape[:-2], total), frames.dtype)
    for i in range(n):  # overlap and add
        out = out.at[..., i * step : i * step + fft_length].add(frames[..., i, :])
    return out[..., start:end]


def istft(
    x,
    sequence_length,
    sequence_stride,
    fft_length,
    length=None,
    window="hann",
    center=True,
):
    """Keras 3's `keras.ops.istft`: the inverse of `stft` from `(real, imag)`."""
    re, im = _complex_pair(x)
    d = knp._name(re)
    win = _window(window, sequence_length, fft_length, d)
    if win is not None:
        win = _inverse_window(win, int(sequence_stride))
    n = np.shape(re)[-2]
    expected = fft_length + sequence_stride * (n - 1)
    start = fft_length // 2 if center else 0
    if length is not None:
        end = start + int(length)
    elif center:
        end = expected - fft_length // 2
    else:
        end = expected
    return _istft(
        re,
        im,
        win,
        fft_length=int(fft_length),
        step=int(sequence_stride),
        start=int(start),
        end=int(end),
    )
