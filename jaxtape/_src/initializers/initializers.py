"""Keras initializers (`keras.initializers`), with Keras's defaults. Layer L4.

An initializer is called as `init(shape, dtype=None)` and returns a Tensor.
Unseeded initializers draw from the global generator, so `set_seed` makes
model creation reproducible; a seeded one gives the same values on every call,
as in Keras 3. Values are drawn on the host, with a NumPy generator keyed by
the JAX key (`_host_rng`), and then placed on the device: drawing them with
JAX would compile one XLA program per weight shape (~0.5 s each, most of a
model's build time).
"""

from __future__ import annotations

import inspect
import math

import jax
import jax.numpy as jnp
import numpy as np
import scipy.special

from jaxtape._src.core import config, dtypes, registry
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.state.random_ops import next_key


def _np_dtype(dtype):
    return dtypes.np_dtype(dtype or config.floatx())


def _host_rng(key) -> np.random.Generator:
    """A NumPy generator (Philox) keyed by the bits of a JAX key."""
    words = np.asarray(jax.random.key_data(key)).astype(np.uint64).ravel()
    seed = 0
    for w in words:
        seed = (seed << 32) | int(w)
    return np.random.Generator(np.random.Philox(key=seed % (1 << 128)))


def _on_device(x, dt) -> Tensor:
    return Tensor(jnp.asarray(np.asarray(x).astype(dt)))


_TRUNC = scipy.special.ndtr(np.array([-2.0, 2.0]))  # normal CDF at +-2


def _truncated_normal(rng, shape):
    """Unit normal values truncated to [-2, 2] (inverse CDF of a uniform draw)."""
    return scipy.special.ndtri(rng.uniform(_TRUNC[0], _TRUNC[1], shape))


class Initializer:
    """Base class: subclasses implement `__call__(shape, dtype=None)`."""

    def __call__(self, shape, dtype=None, **kwargs):
        raise NotImplementedError

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, cfg: dict):
        # Keras 3 configs carry extra keys (input_axes, ...) for features
        # jaxtape does not have; they are dropped when unset.
        accepted = inspect.signature(cls.__init__).parameters
        extra = {k: v for k, v in cfg.items() if k not in accepted}
        if any(v is not None for v in extra.values()):
            raise ValueError(f"{cls.__name__} does not support the settings {extra}.")
        return cls(**{k: v for k, v in cfg.items() if k in accepted})


class Zeros(Initializer):
    def __call__(self, shape, dtype=None, **kwargs):
        return _on_device(np.zeros(tuple(shape)), _np_dtype(dtype))


class Ones(Initializer):
    def __call__(self, shape, dtype=None, **kwargs):
        return _on_device(np.ones(tuple(shape)), _np_dtype(dtype))


class Constant(Initializer):
    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None, **kwargs):
        return _on_device(
            np.full(tuple(shape), np.asarray(self.value)), _np_dtype(dtype)
        )

    def get_config(self):
        return {"value": self.value}


class _Random(Initializer):
    def __init__(self, seed=None):
        self.seed = seed

    def _key(self):
        return next_key() if self.seed is None else jax.random.key(int(self.seed))

    def _rng(self) -> np.random.Generator:
        return _host_rng(self._key())

    def get_config(self):
        return {"seed": self.seed}


class RandomNormal(_Random):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None, **kwargs):
        z = self._rng().standard_normal(tuple(shape))
        return _on_device(z * self.stddev + self.mean, _np_dtype(dtype))

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class TruncatedNormal(RandomNormal):
    """Normal values beyond two standard deviations are redrawn (as Keras)."""

    def __call__(self, shape, dtype=None, **kwargs):
        z = _truncated_normal(self._rng(), tuple(shape))
        return _on_device(z * self.stddev + self.mean, _np_dtype(dtype))


class RandomUniform(_Random):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape, dtype=None, **kwargs):
        u = self._rng().uniform(self.minval, self.maxval, tuple(shape))
        return _on_device(u, _np_dtype(dtype))

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


def _fans(shape, input_axes=None, output_axes=None) -> tuple[float, float]:
    shape = tuple(shape)
    if input_axes is not None and output_axes is not None:  # (Keras's)
        fan_in = math.prod(shape[a] for a in input_axes)
        return float(fan_in), float(math.prod(shape[a] for a in output_axes))
    if len(shape) == 0:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    receptive = math.prod(shape[:-2])
    return float(shape[-2] * receptive), float(shape[-1] * receptive)


class VarianceScaling(_Random):
    """Keras's `VarianceScaling`: the parent of the Glorot, He and LeCun families."""

    def __init__(
        self,
        scale=1.0,
        mode="fan_in",
        distribution="truncated_normal",
        seed=None,
        input_axes=None,
        output_axes=None,
    ):
        super().__init__(seed)
        # (Keras's: the kernel axes counted as fan-in/fan-out, when both set)
        self.input_axes, self.output_axes = input_axes, output_axes
        if scale <= 0:
            raise ValueError(f"VarianceScaling: scale must be positive; got {scale}.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(
                f"VarianceScaling: mode must be 'fan_in', 'fan_out' or 'fan_avg'; "
                f"got {mode!r}."
            )
        if distribution not in ("truncated_normal", "untruncated_normal", "uniform"):
            raise ValueError(
                "VarianceScaling: distribution must be 'truncated_normal', "
                f"'untruncated_normal' or 'uniform'; got {distribution!r}."
            )
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def __call__(self, shape, dtype=None, **kwargs):
        dt = _np_dtype(dtype)
        fan_in, fan_out = _fans(shape, self.input_axes, self.output_axes)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}
        scale = self.scale / max(1.0, n[self.mode])
        rng, shape = self._rng(), tuple(shape)
        if self.distribution == "truncated_normal":
            # 0.879... is the stddev of a unit normal truncated to [-2, 2].
            std = math.sqrt(scale) / 0.87962566103423978
            out = _truncated_normal(rng, shape) * std
        elif self.distribution == "untruncated_normal":
            out = rng.standard_normal(shape) * math.sqrt(scale)
        else:
            limit = math.sqrt(3.0 * scale)
            out = rng.uniform(-limit, limit, shape)
        return _on_device(out, dt)

    def get_config(self):
        return {
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            "seed": self.seed,
            "input_axes": self.input_axes,
            "output_axes": self.output_axes,
        }


def _family(name, scale, mode, distribution):
    class Family(VarianceScaling):
        def __init__(self, seed=None, input_axes=None, output_axes=None):
            super().__init__(scale, mode, distribution, seed, input_axes, output_axes)

        def get_config(self):
            return {
                "seed": self.seed,
                "input_axes": self.input_axes,
                "output_axes": self.output_axes,
            }

    Family.__name__ = Family.__qualname__ = name
    Family.__doc__ = f"`VarianceScaling({scale}, {mode!r}, {distribution!r})`."
    return Family


GlorotUniform = _family("GlorotUniform", 1.0, "fan_avg", "uniform")
GlorotNormal = _family("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
HeNormal = _family("HeNormal", 2.0, "fan_in", "truncated_normal")
HeUniform = _family("HeUniform", 2.0, "fan_in", "uniform")
LecunNormal = _family("LecunNormal", 1.0, "fan_in", "truncated_normal")
LecunUniform = _family("LecunUniform", 1.0, "fan_in", "uniform")


class Orthogonal(_Random):
    """A (scaled) random orthogonal matrix, reshaped to `shape`."""

    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed)
        self.gain = gain

    def __call__(self, shape, dtype=None, **kwargs):
        dt = _np_dtype(dtype)
        shape = tuple(shape)
        if len(shape) < 2:
            raise ValueError(f"Orthogonal needs a shape of rank >= 2; got {shape}.")
        rows, cols = math.prod(shape[:-1]), shape[-1]
        flat = self._rng().standard_normal((max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(flat)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return _on_device((self.gain * q[:rows, :cols]).reshape(shape), dt)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


class Identity(Initializer):
    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None, **kwargs):
        if len(shape) != 2:
            raise ValueError(f"Identity needs a 2-D shape; got {tuple(shape)}.")
        return _on_device(self.gain * np.eye(*shape), _np_dtype(dtype))

    def get_config(self):
        return {"gain": self.gain}


def get_window(window, length, periodic=True):
    import scipy.signal  # lazy: scipy.signal adds ~1.3 s to importing jaxtape

    return scipy.signal.get_window(window, length, fftbins=periodic)


class STFT(Initializer):
    """Keras's STFT kernels for a conv STFT (`STFTSpectrogram`'s weights).

    For `shape=(frame_length, channels, fft_length // 2 + 1)`: `cos` (`side=
    "real"`) or `sin` (`"imag"`) of `-2 pi t f / fft_length`, times the window
    (a `scipy.signal.windows` name, an array of `frame_length` values, or
    None), divided by the window's L2 norm (`scaling="density"`) or its sum
    (`"spectrum"`).

    Differences from Keras: the kernel is computed in float64 and then cast
    (Keras computes in `dtype`; values agree to float32 rounding), and it is
    broadcast to `shape` (Keras returns `(frame_length, 1, ...)` whatever the
    channel count).
    """

    def __init__(self, side="real", window="hann", scaling="density", periodic=False):
        if side not in ["real", "imag"]:
            raise ValueError(f"side should be 'real' or 'imag', not {side}")
        if isinstance(window, str):
            get_window(window, 1)  # (raises for an unknown window)
        if scaling is not None and scaling not in ["density", "spectrum"]:
            raise ValueError(
                "Scaling is invalid, it must be `None`, 'density' "
                f"or 'spectrum'. Received scaling={scaling}"
            )
        self.side = side
        self.window = window
        self.scaling = scaling
        self.periodic = periodic

    def __call__(self, shape, dtype=None, **kwargs):
        frame_length, _, n_freq = (int(d) for d in shape)
        freq = np.arange(n_freq, dtype=np.float64)[None, None, :] / ((n_freq - 1) * 2)
        time = np.arange(frame_length, dtype=np.float64)[:, None, None]
        args = -2.0 * time * freq * np.pi
        kernel = np.cos(args) if self.side == "real" else np.sin(args)
        if self.window is not None:
            kernel = kernel * self._window(frame_length)
        return _on_device(np.broadcast_to(kernel, tuple(shape)), _np_dtype(dtype))

    def _window(self, frame_length):
        """The window as `(frame_length, 1, 1)`, over its norm or sum."""
        win = self.window
        if isinstance(win, str):
            win = get_window(win, frame_length, self.periodic)
        win = np.asarray(win, np.float64)
        if win.ndim != 1 or win.shape[-1] != frame_length:
            raise ValueError(
                "The shape of `window` must be equal to [frame_length]."
                f"Received: window shape={win.shape}"
            )
        win = win.reshape(frame_length, 1, 1)
        if self.scaling == "density":
            return win / np.sqrt(np.sum(np.square(win)))
        if self.scaling == "spectrum":
            return win / np.sum(np.abs(win))
        return win

    def get_config(self):
        return {
            "side": self.side,
            "window": self.window,
            "periodic": self.periodic,
            "scaling": self.scaling,
        }


# Keras 3's lowercase names (and its compatibility names) are the classes.
constant, zeros, ones, identity, stft = Constant, Zeros, Ones, Identity, STFT
random_normal, random_uniform = RandomNormal, RandomUniform
truncated_normal, variance_scaling, orthogonal = (
    TruncatedNormal,
    VarianceScaling,
    Orthogonal,
)
glorot_uniform, glorot_normal = GlorotUniform, GlorotNormal
he_normal, he_uniform = HeNormal, HeUniform
lecun_normal, lecun_uniform = LecunNormal, LecunUniform
IdentityInitializer, OrthogonalInitializer, STFTInitializer = Identity, Orthogonal, STFT


INITIALIZERS = registry.Kind("initializer", "keras.initializers")
for _cls, *_aliases in (
    (Zeros, "zero"),
    (Ones, "one"),
    (Constant,),
    (RandomNormal, "normal"),
    (RandomUniform, "uniform"),
    (TruncatedNormal,),
    (VarianceScaling,),
    (GlorotUniform,),
    (GlorotNormal,),
    (HeNormal,),
    (HeUniform,),
    (LecunNormal,),
    (LecunUniform,),
    (Orthogonal, "OrthogonalInitializer", "orthogonal_initializer"),
    (Identity, "IdentityInitializer", "identity_initializer"),
    (STFT, "STFTInitializer"),
):
    INITIALIZERS.add(_cls, *_aliases)


def get(identifier):
    """An initializer from a name (`'glorot_uniform'`, `'GlorotUniform'`), a
    serialized config, a class or an instance, as Keras's `initializers.get`."""
    return INITIALIZERS.get(identifier)


def serialize(initializer) -> dict | None:
    """Keras's `{'module', 'class_name', 'config', 'registered_name'}` dict."""
    return INITIALIZERS.serialize(initializer)


def deserialize(config, custom_objects=None):
    """The initializer of `serialize`'s output."""
    return INITIALIZERS.deserialize(config, custom_objects)
