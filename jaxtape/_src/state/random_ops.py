"""Random ops on a stateful key that lives in a Variable (TF's `tf.random`). Layer L2.

TF's seed semantics: `set_seed(s)` makes the sequence of random ops
reproducible; an op-level `seed` gives a stream of its own per (global seed,
op seed) pair, whose successive calls still differ, as in TF eager. The exact
numbers differ from TF's (a different generator), the behaviour does not.
"""

from __future__ import annotations

from typing import Any, cast

import jax
import jax.core
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import context, device, dtypes, errors
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import math_ops
from jaxtape._src.ops import stateless_random_ops as sro
from jaxtape._src.ops.array_ops import _shape, gather
from jaxtape._src.state.variable import Variable, state_lock

_DEFAULT_GLOBAL_SEED = 87654321  # TF's DEFAULT_GRAPH_SEED, used with op seeds only


def _key_data(seed: int):
    with jax.ensure_compile_time_eval():  # concrete even inside jaxtape.function
        return jax.random.key_data(jax.random.key(np.uint32(seed % (2**32))))


@jax.jit
def _advance(state):
    """A fresh key (its uint32 data) from a generator state, and the state with
    its counter (word 0) advanced by one draw."""
    key = jax.random.key(0)
    for i in range(state.shape[0]):
        word = state[i]
        key = jax.random.fold_in(key, (word & 0xFFFFFFFF).astype(jnp.uint32))
        key = jax.random.fold_in(key, (word >> 32).astype(jnp.uint32))
    return state.at[0].add(1), jax.random.key_data(key)


_MASK = 0xFFFFFFFF
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _threefry2x32(k0: int, k1: int, x0: int, x1: int) -> tuple[int, int]:
    """JAX's Threefry-2x32 hash of one pair of words, in Python ints (the
    rounds of JAX's `_threefry2x32_lowering`)."""
    ks = (k0, k1, k0 ^ k1 ^ 0x1BD11BDA)
    x0, x1 = (x0 + k0) & _MASK, (x1 + k1) & _MASK
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = (x0 + x1) & _MASK
            x1 = (((x1 << r) | (x1 >> (32 - r))) & _MASK) ^ x0
        x0 = (x0 + ks[(i + 1) % 3]) & _MASK
        x1 = (x1 + ks[(i + 2) % 3] + i + 1) & _MASK
    return x0, x1


def _advance_on_host(state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`_advance` of a concrete state, on the host: the same key (JAX's
    `fold_in` is Threefry of `(0, word)`), without XLA compiling `_advance`
    (~0.3 s on CPU, paid by a script's first initializer or dropout)."""
    key = (0, 0)
    for word in state.tolist():
        key = _threefry2x32(*key, 0, word & _MASK)
        key = _threefry2x32(*key, 0, (word >> 32) & _MASK)
    new = state.copy()
    new[0] = (int(new[0]) + 1 + 2**63) % 2**64 - 2**63  # (int64 wraps, as XLA's)
    return new, np.array(key, np.uint32)


def _state_size(alg: int) -> int:
    return 2 if alg == sro.Algorithm.THREEFRY.value else 3


def _resolve_alg(alg) -> int:
    """TF's `alg`, with auto-select resolved as TF's CPU resolves it (Philox)."""
    value = sro.convert_alg(alg)
    return sro.Algorithm.PHILOX.value if value == 3 else value


def _checked_state(state, alg: int) -> np.ndarray:
    arr = np.asarray(to_value(state)).astype(np.int64).reshape(-1)
    if arr.shape != (_state_size(alg),):
        raise ValueError(
            f"Shapes {tuple(np.shape(to_value(state)))} and [{_state_size(alg)}] "
            "are incompatible: the state of this algorithm has "
            f"{_state_size(alg)} words."
        )
    return arr


class Generator:
    """A random number generator whose state is a Variable (TF's `tf.random.Generator`).

    The state is TF's: an int64 vector of counter words and a key (3 words for
    Philox, the default, 2 for ThreeFry), so `from_seed`, `from_state`,
    `from_key_counter`, `state`, `key`, `skip` and `reset*` behave as TF's.
    Each draw derives a JAX key from the state and advances the counter by one;
    inside `jaxtape.function` the state is lifted like any Variable, so every
    call draws anew.

    >>> g = jaxtape.random.Generator.from_seed(1)
    >>> g.normal([2]).shape
    TensorShape([2])

    Differences from TensorFlow: the numbers are JAX's threefry stream for
    every `alg` (TF's Philox values are not reproduced); the counter advances
    by one per draw, not by the number of samples. `Generator(seed)` with an
    integer `copy_from` is taken as a seed (jaxtape's older signature).
    """

    def __init__(self, copy_from=None, state=None, alg=None, *, name=None):
        if isinstance(copy_from, Generator):
            alg_value = copy_from._alg
            initial = np.asarray(copy_from.state.numpy())
        elif copy_from is not None or (state is None and alg is None):
            if copy_from is None and state is None:
                raise ValueError(
                    "Generator() needs `copy_from` or `state` (and `alg`), as in "
                    "TF. Use `jaxtape.random.Generator.from_seed(seed)` or "
                    "`Generator.from_non_deterministic_state()`."
                )
            alg_value = _resolve_alg(alg)
            initial = sro.create_rng_state(int(to_value(copy_from)), alg_value)
        else:
            if state is None:
                raise ValueError("Generator(alg=...) also needs `state`.")
            alg_value = _resolve_alg(alg)
            initial = _checked_state(state, alg_value)
        self._alg = alg_value
        with jax.ensure_compile_time_eval():  # concrete also while a function traces
            value = jnp.asarray(initial, np.int64)
        self.state = Variable(value, trainable=False, name=name or "StateVar")

    @classmethod
    def from_seed(cls, seed, alg=None) -> Generator:
        """A generator whose state TF's `create_rng_state(seed, alg)` gives."""
        alg_value = _resolve_alg(alg)
        return cls(state=sro.create_rng_state(seed, alg_value), alg=alg_value)

    @classmethod
    def from_non_deterministic_state(cls, alg=None) -> Generator:
        """A generator seeded from the operating system's entropy."""
        seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
        return cls.from_seed(seed, alg)

    @classmethod
    def from_state(cls, state, alg) -> Generator:
        """A generator with the given state vector (TF's layout for `alg`)."""
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg) -> Generator:
        """A generator from a key (scalar) and a counter (1 or 2 words)."""
        words = np.asarray(to_value(counter)).astype(np.int64).reshape(-1)
        return cls(state=np.append(words, int(to_value(key))), alg=alg)

    @property
    def algorithm(self) -> int:
        """The RNG algorithm's id (TF's `Algorithm` values: 1 Philox, 2 ThreeFry)."""
        return self._alg

    @property
    def key(self) -> Tensor:
        """The key word of the state (its last word, as in TF)."""
        last = _state_size(self._alg) - 1
        return gather(self.state, Tensor(jnp.asarray(last, jnp.int32)))

    def reset(self, state) -> None:
        """Sets the state vector (TF's `reset`)."""
        self.state.assign(_checked_state(state, self._alg))

    def reset_from_seed(self, seed) -> None:
        """Sets the state that `from_seed(seed)` starts from."""
        self.state.assign(sro.create_rng_state(seed, self._alg))

    def reset_from_key_counter(self, key, counter) -> None:
        words = np.asarray(to_value(counter)).astype(np.int64).reshape(-1)
        self.reset(np.append(words, int(to_value(key))))

    def skip(self, delta) -> Tensor:
        """Advances the counter by `delta` draws; returns the old state."""
        with state_lock:
            old = self.state._read_raw()
            self.state._write(old.at[0].add(int(to_value(delta))))
        return Tensor(old)

    def make_key(self):
        """Advances the state and returns a fresh jax PRNG key."""
        with state_lock:  # atomic with compiled calls that advance it too
            state = self.state._read_raw()
            if isinstance(state, jax.core.Tracer):
                new, data = _advance(state)
            else:
                new, host_data = _advance_on_host(np.asarray(state))
                new, data = jnp.asarray(new), cast(jax.Array, host_data)
            self.state._write(new)
        return device.place(jax.random.wrap_key_data(data))  # drawn where it is

    def _key_tensor(self) -> Tensor:
        return Tensor(jax.random.key_data(self.make_key()))

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
        """Normal samples (TF's `Generator.normal`)."""
        np_dt = _float_dtype(dtype, mean, "StatelessRandomNormalV2")
        shape = _sample_shape(shape, "StatelessRandomNormalV2")
        return sro.scaled(
            sro.random_normal(self._key_tensor(), shape, np_dt), mean, stddev
        )

    def uniform(self, shape, minval=0, maxval=None, dtype=dtypes.float32, name=None):
        """Uniform samples in `[minval, maxval)`; integers need `maxval`, or
        `minval=None, maxval=None` for the dtype's full range (TF's rule)."""
        np_dt = dtypes.np_dtype(dtype)
        if np_dt.kind in "iu" and maxval is None and minval is not None:
            raise ValueError(f"Must specify maxval for integer dtype {np_dt.name}.")
        return sro.uniform_from_key(
            self._key_tensor(), shape, minval, maxval, dtype, "StatelessRandomUniform"
        )

    def uniform_full_int(self, shape, dtype: Any = dtypes.uint64, name=None):
        """Integers over the whole range of `dtype` (int32/int64/uint32/uint64)."""
        np_dt = dtypes.np_dtype(dtype)
        if np_dt.name not in ("int32", "int64", "uint32", "uint64"):
            raise errors.invalid_argument(
                f"Value for attr 'dtype' of {np_dt.name} is not in the list of allowed "
                "values: int32, int64, uint32, uint64",
                "StatelessRandomUniformFullIntV2",
            )
        shape = _sample_shape(shape, "StatelessRandomUniformFullIntV2")
        return sro.random_full_int(self._key_tensor(), shape, np_dt)

    def truncated_normal(
        self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None
    ):
        """Normal samples within two standard deviations of `mean`."""
        np_dt = _float_dtype(dtype, mean, "StatelessTruncatedNormalV2")
        shape = _sample_shape(shape, "StatelessTruncatedNormalV2")
        sample = sro.random_truncated_normal(self._key_tensor(), shape, np_dt)
        return sro.scaled(sample, mean, stddev)

    def binomial(self, shape, counts, probs, dtype=dtypes.int32, name=None):
        """Binomial(counts, probs) samples of `shape` (TF's `Generator.binomial`)."""
        shape = _sample_shape(shape, "StatelessRandomBinomial")
        c, p = to_value(counts), to_value(probs)
        np.broadcast_shapes(np.shape(c), np.shape(p), tuple(shape))
        return sro.random_binomial(
            self._key_tensor(),
            Tensor(jnp.asarray(c)),
            Tensor(jnp.asarray(p)),
            shape,
            dtypes.np_dtype(dtype),
        )

    def make_seeds(self, count=1) -> Tensor:
        """`count` seeds for stateless ops: an int64 `[2, count]` tensor whose
        second row is zeros, as TF's."""
        keys = sro.random_full_int(self._key_tensor(), (int(count),), np.int64)
        return Tensor(jnp.stack([keys._value, jnp.zeros_like(keys._value)]))

    def split(self, count: int = 1) -> list[Generator]:
        """`count` new generators, independent of this one (which advances)."""
        out = []
        for _ in range(count):
            seed = int(self.uniform_full_int([], np.int64).numpy())
            out.append(Generator.from_seed(seed, self._alg))
        return out


def _scaled(sample, mean, stddev):
    out = Tensor(sample)
    if not (isinstance(stddev, (int, float)) and stddev == 1):
        out = math_ops.multiply(out, stddev)
    if not (isinstance(mean, (int, float)) and mean == 0):
        out = math_ops.add(out, mean)
    return out


# (TF's checks of a sampler's `shape` and float `dtype`, shared with the
# stateless ops.)
_sample_shape = sro._sample_shape
_float_dtype = sro.float_dtype


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
                self.generator = (
                    Generator.from_non_deterministic_state()
                    if self.global_seed is None
                    else Generator.from_seed(self.global_seed)
                )
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
                stream = Generator.from_seed(hash(pair) % (2**32))
                self.op_streams[pair] = stream
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


def gamma(shape, alpha, beta=None, dtype=dtypes.float32, seed=None, name=None):
    """Gamma(alpha, beta) samples of shape `shape + broadcast(alpha, beta).shape`
    (TF's `tf.random.gamma`); differentiable with respect to `alpha` (implicit
    reparameterization, as TF's) and `beta`."""
    del name  # accepted for TF compatibility
    key = Tensor(jax.random.key_data(_seeds.key(seed)))
    return sro.gamma_from_key(key, shape, alpha, beta, dtype, "RandomGamma", False)


def poisson(shape, lam, dtype=dtypes.float32, seed=None, name=None):
    """Poisson(lam) samples of shape `shape + lam.shape` (TF's `tf.random.poisson`)."""
    del name  # accepted for TF compatibility
    key = Tensor(jax.random.key_data(_seeds.key(seed)))
    return sro.poisson_from_key(key, shape, lam, dtype, "RandomPoissonV2", False)


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


# -- candidate samplers ------------------------------------------------------------
def _candidates(key, cdf, num_sampled: int, unique: bool):
    """`num_sampled` class ids drawn by inverse CDF (distinct ones when
    `unique`, by rejection as TF's `RangeSampler`) and the number of tries."""
    n = cdf.shape[0]

    def draw(k):
        u = jax.random.uniform(k, (), cdf.dtype) * cdf[-1]
        return jnp.minimum(jnp.searchsorted(cdf, u, side="right"), n - 1)

    if not unique:
        keys = jax.random.split(key, num_sampled)
        return jax.vmap(draw)(keys), jnp.asarray(num_sampled, cdf.dtype)

    def body(carry):
        i, tries, out, seen, k = carry
        k, sub = jax.random.split(k)
        idx = draw(sub)
        new = jnp.logical_not(seen[idx])
        out = jnp.where(new, out.at[i].set(idx), out)
        return i + new.astype(i.dtype), tries + 1, out, seen.at[idx].set(True), k

    init = (
        jnp.asarray(0, jnp.int32),
        jnp.asarray(0, jnp.int32),
        jnp.zeros((num_sampled,), jnp.int32),
        jnp.zeros((n,), bool),
        key,
    )
    _, tries, out, _, _ = jax.lax.while_loop(lambda c: c[0] < num_sampled, body, init)
    return out, tries.astype(cdf.dtype)


def _expected_count(p, num_sampled, tries):
    """TF's `ExpectedCountHelper`: `p * num_sampled` when every try counted,
    else `1 - (1 - p) ** tries`."""
    return jnp.where(
        tries == num_sampled, p * num_sampled, -jnp.expm1(tries * jnp.log1p(-p))
    )


@jax.jit(static_argnums=(3, 4))
def _sample_with(key, probs, true_classes, num_sampled, unique):
    cdf = jnp.cumsum(probs)
    sampled, tries = _candidates(key, cdf, num_sampled, unique)
    true_p = probs[jnp.clip(true_classes, 0, probs.shape[0] - 1)]
    return (
        sampled.astype(jnp.int64),
        _expected_count(true_p, num_sampled, tries).astype(jnp.float32),
        _expected_count(probs[sampled], num_sampled, tries).astype(jnp.float32),
    )


def _run_sampler(op_name, true_classes, num_true, num_sampled, unique, probs, seed):
    tc = np.asarray(to_value(true_classes))
    if tc.ndim != 2 or tc.shape[1] != int(num_true):
        raise errors.invalid_argument(
            f"true_classes must be a matrix of shape [batch_size, num_true="
            f"{num_true}], got {list(tc.shape)}",
            op_name,
        )
    n_sampled = int(num_sampled)
    if unique and n_sampled > probs.shape[0]:
        raise errors.invalid_argument(
            f"Sampler's range is too small: range_max={probs.shape[0]} < "
            f"num_sampled={n_sampled} with unique=True.",
            op_name,
        )
    out = _sample_with(
        _seeds.key(seed), jnp.asarray(probs), jnp.asarray(tc), n_sampled, bool(unique)
    )
    return tuple(Tensor(o) for o in out)


def _range_max(range_max, op_name) -> int:
    n = int(to_value(range_max))
    if n <= 0:
        raise errors.invalid_argument(f"range_max must be positive, got {n}", op_name)
    return n


def uniform_candidate_sampler(
    true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None
):
    """Samples `num_sampled` classes uniformly from `[0, range_max)` (TF's
    `tf.random.uniform_candidate_sampler`).

    Returns `(sampled_candidates, true_expected_count, sampled_expected_count)`:
    int64 `[num_sampled]`, float32 `[batch, num_true]`, float32 `[num_sampled]`,
    with TF's expected-count formula (it uses the number of tries when
    `unique`).
    """
    del name  # accepted for TF compatibility
    n = _range_max(range_max, "UniformCandidateSampler")
    probs = np.full((n,), 1.0 / n, np.float64)
    return _run_sampler(
        "UniformCandidateSampler",
        true_classes,
        num_true,
        num_sampled,
        unique,
        probs,
        seed,
    )


def log_uniform_candidate_sampler(
    true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None
):
    """Samples classes by the log-uniform (Zipfian) distribution
    `P(k) = log((k + 2) / (k + 1)) / log(range_max + 1)` (TF's
    `tf.random.log_uniform_candidate_sampler`); returns as
    `uniform_candidate_sampler`."""
    del name  # accepted for TF compatibility
    n = _range_max(range_max, "LogUniformCandidateSampler")
    k = np.arange(n, dtype=np.float64)
    probs = (np.log(k + 2.0) - np.log(k + 1.0)) / np.log(n + 1.0)
    return _run_sampler(
        "LogUniformCandidateSampler",
        true_classes,
        num_true,
        num_sampled,
        unique,
        probs,
        seed,
    )


def fixed_unigram_candidate_sampler(
    true_classes,
    num_true,
    num_sampled,
    unique,
    range_max,
    vocab_file="",
    distortion=1.0,
    num_reserved_ids=0,
    num_shards=1,
    shard=0,
    unigrams=(),
    seed=None,
    name=None,
):
    """Samples classes by given unigram counts (`unigrams`, or the last
    comma-separated column of `vocab_file`), raised to `distortion`, after
    `num_reserved_ids` ids of probability 0 (TF's
    `tf.random.fixed_unigram_candidate_sampler`); returns as
    `uniform_candidate_sampler`. `num_shards > 1` is not supported."""
    del name  # accepted for TF compatibility
    op_name = "FixedUnigramCandidateSampler"
    if int(num_shards) != 1 or int(shard) != 0:
        raise NotImplementedError(
            "fixed_unigram_candidate_sampler with num_shards/shard is not "
            "supported in jaxtape; pass num_shards=1, shard=0."
        )
    if vocab_file:
        with open(vocab_file) as f:
            counts = [float(line.rsplit(",", 1)[-1]) for line in f if line.strip()]
    else:
        counts = [float(u) for u in unigrams]
    n = _range_max(range_max, op_name)
    weights = np.concatenate(
        [np.zeros(int(num_reserved_ids)), np.asarray(counts, np.float64)]
    ) ** float(distortion)
    weights[: int(num_reserved_ids)] = 0.0
    if weights.shape[0] != n:
        raise errors.invalid_argument(
            f"Range max {n} must equal num_reserved_ids + the number of unigrams "
            f"({weights.shape[0]}).",
            op_name,
        )
    probs = weights / weights.sum()
    return _run_sampler(
        op_name, true_classes, num_true, num_sampled, unique, probs, seed
    )


_LEARNED_COUNTS: dict[tuple, np.ndarray] = {}


def learned_unigram_candidate_sampler(
    true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None
):
    """Samples classes by a unigram distribution learned from the true classes
    of earlier calls (TF's `tf.random.learned_unigram_candidate_sampler`):
    counts start at 1 for every class, and each call samples, then adds its
    `true_classes`. As in TF eager, calls with the same arguments (`seed`
    included) share the counts. Returns as `uniform_candidate_sampler`.

    Differences from TensorFlow: the counts live on the host, so it runs
    eagerly only.
    """
    del name  # accepted for TF compatibility
    op_name = "LearnedUnigramCandidateSampler"
    n = _range_max(range_max, op_name)
    state = (int(num_true), int(num_sampled), bool(unique), n, seed)
    counts = _LEARNED_COUNTS.setdefault(state, np.ones((n,), np.float64))
    out = _run_sampler(
        op_name,
        true_classes,
        num_true,
        num_sampled,
        unique,
        counts / counts.sum(),
        seed,
    )
    seen = np.asarray(to_value(true_classes)).ravel()
    np.add.at(counts, seen[(seen >= 0) & (seen < n)], 1.0)
    return out


def all_candidate_sampler(
    true_classes, num_true, num_sampled, unique, seed=None, name=None
):
    """Returns every class `0 .. num_sampled - 1` as the sample, with expected
    counts of 1 (TF's `tf.random.all_candidate_sampler`, for testing)."""
    del name, seed, unique  # accepted for TF compatibility (TF ignores them too)
    tc = np.asarray(to_value(true_classes))
    if tc.ndim != 2 or tc.shape[1] != int(num_true):
        raise errors.invalid_argument(
            f"true_classes must be a matrix of shape [batch_size, num_true="
            f"{num_true}], got {list(tc.shape)}",
            "AllCandidateSampler",
        )
    n = int(num_sampled)
    if tc.size and (tc.min() < 0 or tc.max() >= n):
        bad = tc.max() if tc.max() >= n else tc.min()
        raise errors.invalid_argument(
            f"`true_candidate` out of range [0, {n}), received {bad}",
            "AllCandidateSampler",
        )
    return (
        Tensor(jnp.arange(n, dtype=jnp.int64)),
        Tensor(jnp.ones(tc.shape, jnp.float32)),
        Tensor(jnp.ones((n,), jnp.float32)),
    )


context.hooks.random_key = next_key  # for tf.nn's sampling ops (layer L1)
context.hooks.log_uniform_candidate_sampler = log_uniform_candidate_sampler
