"""Random ops on a stateful key that lives in a Variable (TF's `tf.random`). Layer L2.

TF's seed semantics: `set_seed(s)` makes the sequence of random ops
reproducible; an op-level `seed` gives a stream of its own per (global seed,
op seed) pair, whose successive calls still differ, as in TF eager. The exact
numbers differ from TF's (a different generator), the behaviour does not.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import device, dtypes, errors
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import math_ops
from jaxtape._src.ops.array_ops import _dims, _shape, gather
from jaxtape._src.state.variable import Variable, state_lock

_DEFAULT_GLOBAL_SEED = 87654321  # TF's DEFAULT_GRAPH_SEED, used with op seeds only


def _key_data(seed: int):
    with jax.ensure_compile_time_eval():  # concrete even inside jaxtape.function
        return jax.random.key_data(jax.random.key(np.uint32(seed % (2**32))))


class Generator:
    """A random number generator whose state is a Variable (TF's `tf.random.Generator`).

    >>> g = jaxtape.random.Generator.from_seed(1)
    >>> g.normal([2]).shape
    TensorShape([2])
    """

    def __init__(self, seed: int | None = None, name: str | None = None):
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        self.state = Variable(
            _key_data(int(seed)), trainable=False, name=name or "rng_state"
        )

    @classmethod
    def from_seed(cls, seed: int, alg=None) -> Generator:
        return cls(seed)

    @classmethod
    def from_non_deterministic_state(cls, alg=None) -> Generator:
        return cls(None)

    def reset_from_seed(self, seed: int) -> None:
        self.state.assign(_key_data(int(seed)))

    def make_key(self):
        """Advances the state and returns a fresh jax PRNG key."""
        with state_lock:  # atomic with compiled calls that advance it too
            key = jax.random.wrap_key_data(self.state._read_raw())
            new, sub = jax.random.split(key)
            self.state._write(jax.random.key_data(new))
        return device.place(sub)  # samples are drawn where the key is

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        np_dt = _float_dtype(dtype, mean, "RandomStandardNormal")
        shape = _sample_shape(shape, "RandomStandardNormal")
        return _scaled(jax.random.normal(self.make_key(), shape, np_dt), mean, stddev)

    def uniform(self, shape, minval=0, maxval=None, dtype=dtypes.float32, name=None):
        return _uniform(self.make_key(), shape, minval, maxval, dtype)

    def truncated_normal(
        self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None
    ):
        np_dt = _float_dtype(dtype, mean, "TruncatedNormal")
        shape = _sample_shape(shape, "TruncatedNormal")
        return _scaled(
            jax.random.truncated_normal(self.make_key(), -2.0, 2.0, shape, np_dt),
            mean,
            stddev,
        )

    def split(self, count: int = 1) -> list[Generator]:
        out = []
        for _ in range(count):
            g = Generator.__new__(Generator)
            g.state = Variable(
                jax.random.key_data(self.make_key()), trainable=False, name="rng_state"
            )
            out.append(g)
        return out


def _scaled(sample, mean, stddev):
    out = Tensor(sample)
    if not (isinstance(stddev, (int, float)) and stddev == 1):
        out = math_ops.multiply(out, stddev)
    if not (isinstance(mean, (int, float)) and mean == 0):
        out = math_ops.add(out, mean)
    return out


def _sample_shape(shape, op_name):
    """A random op's `shape`: a vector of sizes >= 0, as TF requires."""
    if shape is not None and type(shape) is not tuple and np.ndim(shape) == 0:
        raise errors.invalid_argument(
            f"shape must be a vector of {{int32,int64}}, got shape []: {shape!r}. "
            f"Pass a list, e.g. [{shape!r}].",
            op_name,
        )
    return _dims(shape, op_name)


def _float_dtype(dtype, mean, op_name):
    """The dtype of a normal sample: a float dtype (TF converts `mean` to it)."""
    np_dt = dtypes.np_dtype(dtype)
    if np_dt.kind not in "fV":
        to_value(mean, np_dt)  # TF's "Cannot convert 0.0 to ... int32" TypeError
        raise errors.invalid_argument(
            f"Value for attr 'dtype' of {np_dt.name} is not in the list of allowed "
            "values: half, bfloat16, float, double. Sample a float dtype and cast.",
            op_name,
        )
    return np_dt


_UNIFORM_DTYPES = ("float16", "bfloat16", "float32", "float64", "int32", "int64")


def _uniform(key, shape, minval, maxval, dtype):
    np_dt = dtypes.np_dtype(dtype)
    if np_dt.name not in _UNIFORM_DTYPES:
        raise ValueError(
            f"Argument `dtype` got invalid value {dtype!r}. Accepted dtypes are "
            f"({', '.join('jaxtape.' + n for n in _UNIFORM_DTYPES)})."
        )
    shape = _sample_shape(shape, "RandomUniform")
    if np_dt.kind in "iu":
        if maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {np_dt.name}.")
        lo = to_value(minval, np_dt)  # a float bound is TF's TypeError
        hi = to_value(maxval, np_dt)
        if np.ndim(lo) or np.ndim(hi):
            raise NotImplementedError(
                "uniform with non-scalar integer minval/maxval is not supported; "
                "pass scalars."
            )
        lo, hi = int(lo), int(hi)
        if lo >= hi:
            raise errors.invalid_argument(
                f"Need minval < maxval, got {lo} >= {hi}", "RandomUniformInt"
            )
        return Tensor(jax.random.randint(key, shape, lo, hi, np_dt))
    sample = Tensor(jax.random.uniform(key, shape, np_dt))
    lo = 0.0 if minval is None else minval
    hi = 1.0 if maxval is None else maxval
    if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
        if (lo, hi) == (0.0, 1.0):
            return sample
        return math_ops.add(math_ops.multiply(sample, float(hi - lo)), float(lo))
    return math_ops.add(math_ops.multiply(sample, math_ops.subtract(hi, lo)), lo)


class _GlobalSeeds:
    """The global generator and TF's global/op seed bookkeeping."""

    def __init__(self):
        self.global_seed: int | None = None
        self.generator: Generator | None = None
        # One generator per (global seed, op seed): its state is a Variable,
        # so inside jaxtape.function each call draws anew, as TF's op does.
        self.op_streams: dict[tuple[int, int], Generator] = {}

    def get_generator(self) -> Generator:
        if self.generator is None:
            from jaxtape._src.core import context

            # Process-wide state: on the default device whatever scope is open.
            with context.paused_tapes(), device.device(None):
                self.generator = Generator(self.global_seed)
        return self.generator

    def key(self, seed):
        if seed is None:
            return self.get_generator().make_key()
        g = _DEFAULT_GLOBAL_SEED if self.global_seed is None else self.global_seed
        pair = (int(g), int(seed))
        stream = self.op_streams.get(pair)
        if stream is None:
            from jaxtape._src.core import context
            from jaxtape._src.state import scope

            # Process-wide state, made concrete also while a function traces.
            with context.paused_tapes(), device.device(None), scope.creating_state():
                stream = self.op_streams[pair] = Generator(hash(pair) % (2**32))
        return stream.make_key()


_seeds = _GlobalSeeds()


def next_key(seed: int | None = None):
    """A fresh `jax.random` key: from the global generator, or the op-seed stream.

    For library code (initializers, dropout layers) that samples with jax.random
    directly but must follow `set_seed` like TF's random ops.
    """
    return _seeds.key(seed)


def set_seed(seed: int | None) -> None:
    """Sets the global random seed; later random ops form a reproducible sequence."""
    _seeds.global_seed = None if seed is None else int(seed)
    g = _DEFAULT_GLOBAL_SEED if seed is None else int(seed)
    for pair, stream in _seeds.op_streams.items():  # (their Variables stay)
        if pair[0] == g:  # op-seeded streams start again, as TF's
            stream.reset_from_seed(hash(pair) % (2**32))
    if seed is None:
        _seeds.generator = None
    else:
        _seeds.get_generator().reset_from_seed(int(seed))


def get_global_generator() -> Generator:
    return _seeds.get_generator()


def set_global_generator(generator: Generator) -> None:
    _seeds.generator = generator


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Samples from a normal distribution (TF's `tf.random.normal`)."""
    np_dt = _float_dtype(dtype, mean, "RandomStandardNormal")
    shape = _sample_shape(shape, "RandomStandardNormal")
    return _scaled(jax.random.normal(_seeds.key(seed), shape, np_dt), mean, stddev)


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Samples uniformly from `[minval, maxval)` (integers need `maxval`)."""
    return _uniform(_seeds.key(seed), shape, minval, maxval, dtype)


def truncated_normal(
    shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None
):
    """Samples a normal distribution truncated to two standard deviations."""
    np_dt = _float_dtype(dtype, mean, "TruncatedNormal")
    shape = _sample_shape(shape, "TruncatedNormal")
    return _scaled(
        jax.random.truncated_normal(_seeds.key(seed), -2.0, 2.0, shape, np_dt),
        mean,
        stddev,
    )


def shuffle(value, seed=None, name=None):
    """Randomly permutes `value` along its first dimension."""
    if np.ndim(value) == 0:  # a scalar has nothing to permute (TF returns it)
        return math_ops.identity(value)
    n = np.shape(value)[0]  # (a Tensor's or Variable's `.shape`: no copy)
    perm = jax.random.permutation(_seeds.key(seed), n)
    return gather(value, Tensor(perm.astype(np.int32)))


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """Draws class indices from the categorical distributions given by `logits`."""
    lg = to_value(logits)
    if np.ndim(lg) != 2:
        raise errors.invalid_argument(
            f"logits should be a matrix, got shape {list(np.shape(lg))}: one row of "
            "class logits per distribution.",
            "Multinomial",
        )
    if np.asarray(lg).dtype.kind not in "fV":
        raise errors.invalid_argument(
            f"logits must be floats, got {np.asarray(lg).dtype.name}. Cast them "
            "first with `jaxtape.cast`.",
            "Multinomial",
        )
    n = int(to_value(num_samples, np.int32))
    if n < 0:
        raise errors.invalid_argument(
            f"num_samples should be non-negative, got {n}", "Multinomial"
        )
    out = jax.random.categorical(
        _seeds.key(seed), lg, axis=-1, shape=(n,) + lg.shape[:-1]
    )
    return Tensor(jnp.moveaxis(out, 0, -1).astype(dtypes.np_dtype(dtype) or np.int64))


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zeroes elements with probability `rate` and scales the rest by `1/(1-rate)`.

    Fresh randomness on every call, from the stateful global generator.
    """
    x_dt = dtypes.np_dtype(x.dtype) if hasattr(x, "dtype") else to_value(x).dtype
    if x_dt.kind != "f" and x_dt != jnp.bfloat16:  # as TF, before the rate
        raise ValueError(
            "`x.dtype` must be a floating point tensor as `x` will be scaled. "
            f"Received: x_dtype={x_dt.name}. Cast it first, e.g. "
            "`jaxtape.cast(x, jaxtape.float32)`."
        )
    rate_f = float(to_value(rate))
    if not 0 <= rate_f < 1:
        raise ValueError(
            f"rate must be a scalar tensor or a float in the range [0, 1)"
            f". Received: rate={rate}"
        )
    if rate_f == 0:
        return math_ops.identity(x)
    x_shape = tuple(x.shape) if hasattr(x, "shape") else np.shape(x)
    shape = x_shape
    if noise_shape is not None:  # None entries take x's size, as in TF
        given = list(noise_shape) if np.ndim(noise_shape) else noise_shape
        if isinstance(given, list) and len(given) == len(x_shape):
            given = [d if d is not None else s for d, s in zip(given, x_shape)]
        shape = _shape(given)
    keep = jax.random.uniform(_seeds.key(seed), shape) >= rate_f
    xv = to_value(x) if not isinstance(x, (Tensor, Variable)) else None
    dt = xv.dtype if xv is not None else np.dtype(x.dtype.as_numpy_dtype)
    mask = Tensor(
        jnp.where(keep, jnp.asarray(1.0 / (1.0 - rate_f), dt), jnp.asarray(0, dt))
    )
    return math_ops.multiply(x, mask)
