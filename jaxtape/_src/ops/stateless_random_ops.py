"""Stateless random ops (TF's `tf.random.stateless_*`, `split`, `fold_in`). Layer L1.

A stateless op's result is a pure function of its `seed`, a shape-[2]
int32/int64 tensor (TF's rule): the same seed gives the same values, eagerly
and inside `jaxtape.function` (where the seed may be a traced input), and an
int32 seed gives what the same int64 seed gives, as in TF. The numbers come
from JAX's threefry generator keyed by the seed, not from TF's Philox
streams: distributions, dtypes and shapes are TF's, the values are not.

The samplers are ops on *key data* (uint32[2], `jax.random.key_data`), so the
stateful ops of `state/random_ops.py` reuse them with keys from a generator.
`gamma` is differentiable with respect to `alpha` (implicit
reparameterization, as TF's), the others record no gradient; `mean`/`stddev`
scaling is done with recorded ops, so it is differentiable as in TF.
"""

from __future__ import annotations

import enum
import functools
from typing import Any

import jax
import jax.core
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import dtypes, errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import math_ops
from jaxtape._src.ops.array_ops import _dims


class Algorithm(enum.Enum):
    """TF's RNG algorithms (`tf.random.Algorithm`). jaxtape accepts each and
    always draws from JAX's threefry (the numbers differ from TF's anyway)."""

    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


_ALG_NAMES = {"philox": 1, "threefry": 2, "auto_select": 3}


def convert_alg(alg) -> int:
    """TF's `alg` argument (None, a name, an `Algorithm` or its value) as an int."""
    if alg is None:
        return Algorithm.AUTO_SELECT.value
    if isinstance(alg, Algorithm):
        return alg.value
    if isinstance(alg, str) and alg.lower() in _ALG_NAMES:
        return _ALG_NAMES[alg.lower()]
    if isinstance(alg, (int, np.integer)) and int(alg) in (1, 2, 3):
        return int(alg)
    raise ValueError(
        f"Argument `alg` got unsupported value {alg}. Supported values are philox "
        "for the Philox algorithm, threefry for the ThreeFry algorithm, and "
        "auto_select for auto-selection."
    )


# -- seeds and keys ----------------------------------------------------------------
def _check_seed(seed, op_name: str):
    s = to_value(seed)
    dt = np.dtype(s.dtype)
    if dt.kind not in "iu":
        raise errors.invalid_argument(
            f"Value for attr 'Tseed' of {dt.name} is not in the list of allowed "
            "values: int32, int64. A stateless seed is two integers, e.g. "
            "`seed=(1, 2)`.",
            op_name,
        )
    if np.shape(s) != (2,):
        raise errors.invalid_argument(
            f"seed must have shape [2], not {list(np.shape(s))}", op_name
        )
    return s


@op("StatelessRandomGetKeyCounter", differentiable=False)
def _seed_to_key(seed):
    """uint32[2] key data from a stateless seed; an int32 seed equals the same
    int64 seed, as in TF (the high words are folded in only when set)."""
    s = seed.astype(jnp.int64)
    lo = (s & 0xFFFFFFFF).astype(jnp.uint32)
    hi = (s >> 32).astype(jnp.uint32)
    key = jax.random.wrap_key_data(lo, impl="threefry2x32")
    wide = jax.random.fold_in(jax.random.fold_in(key, hi[0]), hi[1])
    return jnp.where(jnp.any(hi != 0), jax.random.key_data(wide), lo)


def seed_key(seed, op_name: str = "StatelessRandomGetKeyCounter"):
    """The key data (a Tensor) of a stateless `seed`, checked as TF checks it."""
    return _seed_to_key(_check_seed(seed, op_name))


def _key(key_data):
    return jax.random.wrap_key_data(key_data, impl="threefry2x32")


def _sample_shape(shape, op_name):
    """A random op's `shape`: a vector of sizes >= 0, as TF requires."""
    if shape is not None and type(shape) is not tuple and np.ndim(shape) == 0:
        raise errors.invalid_argument(
            f"shape must be a vector of {{int32,int64}}, got shape []: {shape!r}. "
            f"Pass a list, e.g. [{shape!r}].",
            op_name,
        )
    return _dims(shape, op_name)


def float_dtype(dtype, value, op_name):
    """A sampler's float dtype (TF converts `value`, e.g. `mean`, to it first)."""
    np_dt = dtypes.np_dtype(dtype)
    if np_dt.kind not in "fV":
        to_value(value, np_dt)  # TF's "Cannot convert 0.0 to ... int32" TypeError
        raise errors.invalid_argument(
            f"Value for attr 'dtype' of {np_dt.name} is not in the list of allowed "
            "values: half, bfloat16, float, double. Sample a float dtype and cast.",
            op_name,
        )
    return np_dt


def scaled(sample, mean, stddev):
    """`sample * stddev + mean` with recorded ops (skipped for 1 and 0)."""
    out = sample
    if not (isinstance(stddev, (int, float)) and stddev == 1):
        out = math_ops.multiply(out, _like(stddev, out))
    if not (isinstance(mean, (int, float)) and mean == 0):
        out = math_ops.add(out, _like(mean, out))
    return out


def _like(value, out):
    """A Python/NumPy parameter in `out`'s dtype (Tensors keep theirs: TF's
    dtype error if they differ)."""
    if isinstance(value, (int, float)) or not hasattr(value, "dtype"):
        return Tensor(jnp.asarray(to_value(value, dtypes.np_dtype(out.dtype))))
    if isinstance(value, (np.ndarray, np.generic)):
        return Tensor(jnp.asarray(value, dtypes.np_dtype(out.dtype)))
    return value


# -- samplers on key data -----------------------------------------------------------
@op("RandomUniform", differentiable=False)
def random_uniform(key, shape=(), dtype: Any = np.float32):
    return jax.random.uniform(_key(key), shape, dtype)


@op("RandomUniformInt", differentiable=False)
def random_uniform_int(key, minval, maxval, shape=(), dtype: Any = np.int32):
    return jax.random.randint(_key(key), shape, minval, maxval, dtype)


@op("RandomUniformFullInt", differentiable=False)
def random_full_int(key, shape=(), dtype: Any = np.int64):
    dt = np.dtype(dtype)
    bits = jax.random.bits(_key(key), shape, np.dtype(f"uint{dt.itemsize * 8}"))
    return jax.lax.bitcast_convert_type(bits, dt)


@op("RandomStandardNormal", differentiable=False)
def random_normal(key, shape=(), dtype: Any = np.float32):
    return jax.random.normal(_key(key), shape, dtype)


@op("TruncatedNormal", differentiable=False)
def random_truncated_normal(key, shape=(), dtype: Any = np.float32):
    return jax.random.truncated_normal(_key(key), -2.0, 2.0, shape, dtype)


@op("ParameterizedTruncatedNormal", differentiable=False)
def random_parameterized_truncated_normal(
    key, means, stddevs, minvals, maxvals, shape=()
):
    lo = (minvals - means) / stddevs
    hi = (maxvals - means) / stddevs
    z = jax.random.truncated_normal(_key(key), lo, hi, shape, means.dtype)
    return z * stddevs + means


@op("Multinomial", differentiable=False)
def random_categorical(key, logits, num_samples=1, dtype: Any = np.int64):
    out = jax.random.categorical(
        _key(key), logits, axis=-1, shape=(num_samples,) + logits.shape[:-1]
    )
    return jnp.moveaxis(out, 0, -1).astype(dtype)


@op("RandomGamma")
def random_gamma(key, alpha, shape=()):
    """Gamma(alpha, 1) samples of `shape` (which ends with alpha's shape);
    differentiable with respect to `alpha` (JAX's implicit reparameterization,
    the gradient TF's `RandomGammaGrad` gives)."""
    a = jnp.broadcast_to(alpha, shape)
    if np.dtype(alpha.dtype) in (np.float16, jnp.bfloat16):
        return jax.random.gamma(_key(key), a.astype(np.float32)).astype(alpha.dtype)
    return jax.random.gamma(_key(key), a, dtype=alpha.dtype)


@op("RandomPoisson", differentiable=False)
def random_poisson(key, lam, shape=(), dtype: Any = np.int64):
    lam_f = jnp.broadcast_to(lam, shape).astype(np.float32)
    return jax.random.poisson(_key(key), lam_f, shape, np.int32).astype(dtype)


@op("RandomBinomial", differentiable=False)
def random_binomial(key, counts, probs, shape=(), dtype: Any = np.int32):
    n = jnp.broadcast_to(counts, shape).astype(np.float32)
    p = jnp.broadcast_to(probs, shape).astype(np.float32)
    return jax.random.binomial(_key(key), n, p, shape, np.float32).astype(dtype)


@op("RandomShuffle", differentiable=False)
def random_shuffle(key, value):
    return jax.random.permutation(_key(key), value, axis=0, independent=False)


# -- shared front ends (stateless here, stateful in state/random_ops) -------------
_UNIFORM_DTYPES = (
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "int32",
    "int64",
    "uint32",
    "uint64",
)


def uniform_from_key(key, shape, minval, maxval, dtype, op_name="RandomUniform"):
    """TF's `uniform` (floats in `[minval, maxval)`, ints with both bounds, the
    full integer range with neither) from `key` data."""
    np_dt = dtypes.np_dtype(dtype)
    if np_dt.name not in _UNIFORM_DTYPES:
        raise ValueError(
            f"Argument `dtype` got invalid value {dtype!r}. Accepted dtypes are "
            f"({', '.join('jaxtape.' + n for n in _UNIFORM_DTYPES)})."
        )
    shape = _sample_shape(shape, op_name)
    if np_dt.kind in "iu":
        if minval is None and maxval is None:
            return random_full_int(key, shape, np_dt)
        if minval is None or maxval is None:
            raise ValueError(
                f"For integer `dtype` argument jaxtape.{np_dt.name}, argument "
                "`minval` and `maxval` must be both None or not None. Got "
                f"`minval`={minval} and `maxval`={maxval}."
            )
        if np_dt.kind == "u":
            raise ValueError(
                f"Argument `dtype` got invalid value jaxtape.{np_dt.name} when "
                "argument `minval` is not None. Please don't use unsigned integers "
                "in this case."
            )
        lo = to_value(minval, np_dt)  # a float bound is TF's TypeError
        hi = to_value(maxval, np_dt)
        if not isinstance(lo, jax.core.Tracer) and not isinstance(hi, jax.core.Tracer):
            bad = np.asarray(lo) >= np.asarray(hi)
            if np.any(bad):
                raise errors.invalid_argument(
                    f"Need minval < maxval, got {np.asarray(lo).max()} >= "
                    f"{np.asarray(hi).min()}",
                    op_name + "Int",
                )
        return random_uniform_int(
            key, Tensor(jnp.asarray(lo)), Tensor(jnp.asarray(hi)), shape, np_dt
        )
    sample = random_uniform(key, shape, np_dt)
    lo = 0.0 if minval is None else minval
    hi = 1.0 if maxval is None else maxval
    if isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
        if (lo, hi) == (0.0, 1.0):
            return sample
        return scaled(sample, float(lo), float(hi - lo))
    lo_t, hi_t = _like(lo, sample), _like(hi, sample)
    return math_ops.add(math_ops.multiply(sample, math_ops.subtract(hi_t, lo_t)), lo_t)


def categorical_from_key(key, logits, num_samples, dtype, op_name="Multinomial"):
    lg = to_value(logits)
    if np.ndim(lg) != 2:
        raise errors.invalid_argument(
            f"logits should be a matrix, got shape {list(np.shape(lg))}: one row of "
            "class logits per distribution.",
            op_name,
        )
    if np.dtype(lg.dtype).kind not in "fV":
        raise errors.invalid_argument(
            f"logits must be floats, got {np.dtype(lg.dtype).name}. Cast them "
            "first with `jaxtape.cast`.",
            op_name,
        )
    n = int(to_value(num_samples, np.int32))
    if n < 0:
        raise errors.invalid_argument(
            f"num_samples should be non-negative, got {n}", op_name
        )
    np_dt = dtypes.np_dtype(dtype) or np.dtype(np.int64)
    return random_categorical(key, Tensor(jnp.asarray(lg)), n, np_dt)


def _param(value, dtype):
    if isinstance(value, Tensor) or hasattr(value, "read_value"):
        return value
    return Tensor(jnp.asarray(to_value(value, dtype)))


def gamma_from_key(key, shape, alpha, beta, dtype, op_name, stateless):
    """Gamma(alpha, beta) samples. Stateless (TF's `stateless_gamma`): `shape`
    must end with the broadcast shape of alpha and beta; stateful (`gamma`):
    the output shape is `shape + broadcast(alpha, beta).shape`."""
    np_dt = float_dtype(dtype, 1.0, op_name)
    shape = _sample_shape(shape, op_name)
    a = _param(alpha, np_dt)
    b = None if beta is None else _param(beta, np_dt)
    batch = np.broadcast_shapes(tuple(a.shape), () if b is None else tuple(b.shape))
    if stateless:
        if tuple(shape[len(shape) - len(batch) :]) != batch:
            raise errors.invalid_argument(
                "Shape passed in must end with broadcasted shape.", op_name
            )
        full = tuple(shape)
    else:
        full = tuple(shape) + batch
    sample = random_gamma(key, a, full)
    return sample if b is None else math_ops.divide(sample, b)


def poisson_from_key(key, shape, lam, dtype, op_name, stateless):
    """Poisson(lam) samples as `gamma_from_key` shapes them (TF's rules)."""
    np_dt = dtypes.np_dtype(dtype)
    if np_dt.name not in ("float16", "float32", "float64", "int32", "int64"):
        raise errors.invalid_argument(
            f"Value for attr 'dtype' of {np_dt.name} is not in the list of allowed "
            "values: half, float, double, int32, int64",
            op_name,
        )
    shape = _sample_shape(shape, op_name)
    lam_v = to_value(lam)
    batch = tuple(np.shape(lam_v))
    if stateless:
        if tuple(shape[len(shape) - len(batch) :]) != batch:
            raise errors.invalid_argument(
                "Shape passed in must end with broadcasted shape.", op_name
            )
        full = tuple(shape)
    else:
        full = tuple(shape) + batch
    return random_poisson(key, Tensor(jnp.asarray(lam_v)), full, np_dt)


# -- public stateless ops -----------------------------------------------------------
def stateless_uniform(
    shape,
    seed,
    minval=0,
    maxval=None,
    dtype=dtypes.float32,
    name=None,
    alg="auto_select",
):
    """Uniform samples fixed by `seed` (TF's `tf.random.stateless_uniform`):
    floats in `[minval, maxval)`; integers need both bounds, or neither for the
    full range of the dtype.

    >>> a = jaxtape.random.stateless_uniform([2], seed=[1, 2])
    >>> b = jaxtape.random.stateless_uniform([2], seed=[1, 2])
    >>> bool(jaxtape.reduce_all(a == b))
    True
    """
    del name  # accepted for TF compatibility
    convert_alg(alg)
    key = seed_key(seed, "StatelessRandomUniformV2")
    return uniform_from_key(key, shape, minval, maxval, dtype, "StatelessRandomUniform")


def stateless_normal(
    shape,
    seed,
    mean=0.0,
    stddev=1.0,
    dtype=dtypes.float32,
    name=None,
    alg="auto_select",
):
    """Normal samples fixed by `seed` (TF's `tf.random.stateless_normal`)."""
    del name  # accepted for TF compatibility
    convert_alg(alg)
    np_dt = float_dtype(dtype, mean, "StatelessRandomNormalV2")
    shape = _sample_shape(shape, "StatelessRandomNormalV2")
    key = seed_key(seed, "StatelessRandomNormalV2")
    return scaled(random_normal(key, shape, np_dt), mean, stddev)


def stateless_truncated_normal(
    shape,
    seed,
    mean=0.0,
    stddev=1.0,
    dtype=dtypes.float32,
    name=None,
    alg="auto_select",
):
    """Normal samples within two standard deviations of `mean`, fixed by `seed`
    (TF's `tf.random.stateless_truncated_normal`)."""
    del name  # accepted for TF compatibility
    convert_alg(alg)
    np_dt = float_dtype(dtype, mean, "StatelessTruncatedNormalV2")
    shape = _sample_shape(shape, "StatelessTruncatedNormalV2")
    key = seed_key(seed, "StatelessTruncatedNormalV2")
    return scaled(random_truncated_normal(key, shape, np_dt), mean, stddev)


def stateless_parameterized_truncated_normal(
    shape, seed, means=0.0, stddevs=1.0, minvals=-2.0, maxvals=2.0, name=None
):
    """Normal(means, stddevs) samples truncated to `[minvals, maxvals]`, fixed
    by `seed` (TF's `tf.random.stateless_parameterized_truncated_normal`);
    the parameters broadcast against `shape` and share one float dtype."""
    del name  # accepted for TF compatibility
    op_name = "StatelessParameterizedTruncatedNormal"
    shape = _sample_shape(shape, op_name)
    key = seed_key(seed, op_name)
    vals = [to_value(p) for p in (means, stddevs, minvals, maxvals)]  # TF's rules
    dt = np.dtype(vals[0].dtype)
    for i, v in enumerate(vals[1:], start=1):
        if np.dtype(v.dtype) != dt:
            raise errors.invalid_argument(
                f"cannot compute {op_name} as input #{i + 2}(zero-based) was expected "
                f"to be a {dt.name} tensor but is a {np.dtype(v.dtype).name} tensor",
                op_name,
            )
    if dt.kind != "f":
        raise errors.invalid_argument(
            f"Value for attr 'dtype' of {dt.name} is not in the list of allowed "
            "values: half, float, double",
            op_name,
        )
    vals = [Tensor(jnp.asarray(v)) for v in vals]
    return random_parameterized_truncated_normal(
        key, vals[0], vals[1], vals[2], vals[3], shape
    )


def stateless_categorical(logits, num_samples, seed, dtype=dtypes.int64, name=None):
    """Class indices drawn from each row of `logits`, fixed by `seed`: shape
    `[batch, num_samples]` (TF's `tf.random.stateless_categorical`)."""
    del name  # accepted for TF compatibility
    key = seed_key(seed, "StatelessMultinomial")
    return categorical_from_key(key, logits, num_samples, dtype, "StatelessMultinomial")


def stateless_binomial(
    shape, seed, counts, probs, output_dtype=dtypes.int32, name=None
):
    """Binomial(counts, probs) samples of `shape`, fixed by `seed` (TF's
    `tf.random.stateless_binomial`)."""
    del name  # accepted for TF compatibility
    op_name = "StatelessRandomBinomial"
    shape = _sample_shape(shape, op_name)
    np_dt = dtypes.np_dtype(output_dtype)
    key = seed_key(seed, op_name)
    c, p = to_value(counts), to_value(probs)
    np.broadcast_shapes(np.shape(c), np.shape(p), tuple(shape))
    return random_binomial(
        key, Tensor(jnp.asarray(c)), Tensor(jnp.asarray(p)), shape, np_dt
    )


def stateless_gamma(shape, seed, alpha, beta=None, dtype=dtypes.float32, name=None):
    """Gamma(alpha, beta) samples fixed by `seed` (TF's `tf.random.stateless_gamma`):
    `shape` ends with the broadcast shape of `alpha` and `beta`; differentiable
    with respect to both (implicit reparameterization for `alpha`)."""
    del name  # accepted for TF compatibility
    key = seed_key(seed, "StatelessRandomGammaV3")
    return gamma_from_key(
        key, shape, alpha, beta, dtype, "StatelessRandomGammaV3", True
    )


def stateless_poisson(shape, seed, lam, dtype=dtypes.int32, name=None):
    """Poisson(lam) samples fixed by `seed` (TF's `tf.random.stateless_poisson`);
    `shape` ends with `lam`'s shape."""
    del name  # accepted for TF compatibility
    key = seed_key(seed, "StatelessRandomPoisson")
    return poisson_from_key(key, shape, lam, dtype, "StatelessRandomPoisson", True)


def stateless_shuffle(value, seed, alg="auto_select", name=None):
    """`value` permuted along its first dimension, fixed by `seed` (TF's
    `tf.random.experimental.stateless_shuffle`)."""
    del name  # accepted for TF compatibility
    convert_alg(alg)
    key = seed_key(seed, "StatelessShuffle")
    if np.ndim(to_value(value)) == 0:
        return math_ops.identity(value)
    return random_shuffle(key, value)


# -- seed arithmetic ----------------------------------------------------------------
@op("StatelessSplit", differentiable=False)
def _split_seed(seed, num=2):
    keys = jax.random.split(_key(_seed_to_key.__wrapped__(seed)), num)
    return _as_seed(jax.random.key_data(keys), seed.dtype)


@op("StatelessFoldIn", differentiable=False)
def _fold_in_seed(seed, data):
    key = _key(_seed_to_key.__wrapped__(seed))
    folded = jax.random.fold_in(key, data.astype(jnp.uint32))
    return _as_seed(jax.random.key_data(folded), seed.dtype)


def _as_seed(key_data, dtype):
    """uint32 key data as seeds of `dtype`: the same bits as int32 (sign-extended
    for int64, so that int32 and int64 seeds split alike)."""
    return jax.lax.bitcast_convert_type(key_data, jnp.int32).astype(dtype)


def split(seed, num=2, alg="auto_select"):
    """`num` new stateless seeds, shape `[num, 2]`, derived from `seed` (TF's
    `tf.random.split` / `tf.random.experimental.stateless_split`)."""
    convert_alg(alg)
    s = _check_seed(seed, "StatelessRandomGetKeyCounter")
    return _split_seed(s, int(num))


def fold_in(seed, data, alg="auto_select"):
    """A new stateless seed from `seed` and the integer `data` (TF's
    `tf.random.fold_in` / `tf.random.experimental.stateless_fold_in`)."""
    convert_alg(alg)
    s = _check_seed(seed, "StatelessRandomGetKeyCounter")
    d = to_value(data)
    if np.ndim(d) != 0 or np.dtype(d.dtype).kind not in "iu":
        raise errors.invalid_argument(
            f"data must be an integer scalar, got {data!r}", "StatelessFoldIn"
        )
    return _fold_in_seed(s, d)


def create_rng_state(seed, alg):
    """The initial state of a `Generator` for `seed` and `alg`, as TF builds it
    (an int64 NumPy vector: 3 words for Philox, 2 for ThreeFry)."""
    size = 2 if convert_alg(alg) == Algorithm.THREEFRY.value else 3
    if isinstance(seed, (int, np.integer)):
        s, words = int(seed), []
        for _ in range(size):
            words.append(s & 0xFFFFFFFFFFFFFFFF)
            s >>= 64
        arr = np.asarray(words, np.uint64).astype(np.int64)
    else:
        arr = np.asarray(to_value(seed)).astype(np.int64).reshape(-1)[:size]
        arr = np.concatenate([np.zeros(size - arr.size, np.int64), arr])
    return arr


@functools.lru_cache(maxsize=64)
def _permutation(max_index: int, seed_words: tuple[int, ...]):
    key = jax.random.key(0)
    for w in seed_words:
        key = jax.random.fold_in(key, np.uint32(w & 0xFFFFFFFF))
        key = jax.random.fold_in(key, np.uint32((w >> 32) & 0xFFFFFFFF))
    return np.asarray(jax.random.permutation(key, max_index + 1))


_MAX_SHUFFLE = 1 << 24


def index_shuffle(index, seed, max_index):
    """Where `index` goes in a random permutation of `[0, max_index]` fixed by
    `seed` (TF's `tf.random.experimental.index_shuffle`): a scalar index takes
    a seed of shape [3] (or [2]), a vector of n indices an `[n, 3]` seed, one
    row per index, as in TF.

    Differences from TensorFlow: another permutation (TF uses a Philox-based
    bijection); `max_index` below 2**24; computed on the host (eager only).
    """
    s = np.asarray(to_value(seed))
    idx = np.asarray(to_value(index))
    if idx.ndim > 1:
        raise errors.invalid_argument(
            "Index bust be a scalar or vector.", "RandomIndexShuffle"
        )
    ok = s.shape in ((2,), (3,)) if idx.ndim == 0 else s.shape == (idx.size, 3)
    if not ok:
        raise errors.invalid_argument(
            "Seed must be a vector of size [3] or a matrix of size "
            f"[{max(idx.size, 1)}, 3]; got shape {list(s.shape)}.",
            "RandomIndexShuffle",
        )
    m = int(np.asarray(to_value(max_index)))
    if m >= _MAX_SHUFFLE:
        raise NotImplementedError(
            f"index_shuffle with max_index={m} >= 2**24 is not supported in jaxtape."
        )
    rows = s.reshape(-1, s.shape[-1])
    flat = np.clip(idx.reshape(-1), 0, m)
    out = np.asarray(
        [
            _permutation(m, tuple(int(w) for w in rows[i % len(rows)]))[j]
            for i, j in enumerate(flat)
        ]
    )
    return Tensor(jnp.asarray(out.reshape(idx.shape).astype(idx.dtype)))
