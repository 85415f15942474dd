"""`jaxtape.random`'s stateless ops, samplers and `Generator`, by property.

jaxtape draws from JAX's threefry, not TF's Philox, so values are never
compared with TF's. What is compared: dtypes and shapes (TF runs the same
call), determinism (same seed, same values; other seeds, other values;
eagerly and inside `jaxtape.function`), moments against the distribution's,
the gamma sampler's implicit-reparameterization gradient against its formula,
Generator state bookkeeping against TF's, and TF's exception types.
"""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special
import scipy.stats
from parity_checks import assert_raises_like_tf

import jaxtape

SEED = [3, 7]
N = 20000
ALPHA = np.asarray([1.0, 1.5, 2.5, 7.0], np.float32)
BETA = np.asarray([1.0, 1.0, 2.0, 0.5], np.float32)
OTHER = [3, 8]
R = np.random.default_rng(5)

# name -> fn(m, seed): one stateless call per row (dtypes/shapes vs TF)
STATELESS: dict[str, Callable] = {
    "uniform": lambda m, s: m.random.stateless_uniform([3, 4], s),
    "uniform_f64_bounds": lambda m, s: m.random.stateless_uniform(
        [5], s, minval=-2.0, maxval=3.0, dtype=m.float64
    ),
    "uniform_f16": lambda m, s: m.random.stateless_uniform([4], s, dtype=m.float16),
    "uniform_tensor_bounds": lambda m, s: m.random.stateless_uniform(
        [2], s, minval=[0.0, 1.0], maxval=[1.0, 5.0]
    ),
    "uniform_int64": lambda m, s: m.random.stateless_uniform(
        [6], s, minval=3, maxval=9, dtype=m.int64
    ),
    "uniform_full_uint32": lambda m, s: m.random.stateless_uniform(
        [4], s, minval=None, maxval=None, dtype=m.uint32
    ),
    "uniform_full_int64": lambda m, s: m.random.stateless_uniform(
        [4], s, minval=None, maxval=None, dtype=m.int64
    ),
    "normal": lambda m, s: m.random.stateless_normal([2, 3], s, mean=[1.0, 2, 3]),
    "normal_alg": lambda m, s: m.random.stateless_normal([4], s, alg="philox"),
    "truncated_normal_f64": lambda m, s: m.random.stateless_truncated_normal(
        [7], s, stddev=2.0, dtype=m.float64
    ),
    "categorical": lambda m, s: m.random.stateless_categorical(
        [[0.0, 1.0, 2.0], [1.0, 1.0, -1.0]], 5, s
    ),
    "categorical_int32": lambda m, s: m.random.stateless_categorical(
        [[0.0, 1.0]], 4, s, dtype=m.int32
    ),
    # (the slow-to-compile samplers draw the shapes of the moment checks below)
    "binomial": lambda m, s: m.random.stateless_binomial([N], s, 10.0, 0.5),
    "binomial_float_out": lambda m, s: m.random.stateless_binomial(
        [N], s, 5.0, 0.1, output_dtype=m.float32
    ),
    "gamma": lambda m, s: m.random.stateless_gamma(
        [N // 4, 4], s, alpha=ALPHA, beta=BETA
    ),
    "poisson": lambda m, s: m.random.stateless_poisson([N], s, lam=2.0),
    "poisson_float": lambda m, s: m.random.stateless_poisson(
        [N], s, lam=5.0, dtype=m.float32
    ),
    "parameterized_truncated_normal": lambda m, s: (
        m.random.stateless_parameterized_truncated_normal(
            [6], s, means=0.5, stddevs=2.0, minvals=-1.0, maxvals=1.0
        )
    ),
    "split": lambda m, s: m.random.split(s, 3),
    "fold_in": lambda m, s: m.random.fold_in(s, 5),
    "experimental_split": lambda m, s: m.random.experimental.stateless_split(s),
    "experimental_fold_in": lambda m, s: m.random.experimental.stateless_fold_in(s, 2),
    "stateless_shuffle": lambda m, s: m.random.experimental.stateless_shuffle(
        np.arange(12).reshape(6, 2), s
    ),
}


# Rows also checked inside `jaxtape.function` (each compile costs; JAX's
# gamma/Poisson/binomial kernels take seconds).
COMPILED = {"uniform", "uniform_int64", "normal", "categorical", "split", "fold_in"}


@pytest.mark.parametrize("name", list(STATELESS))
def test_stateless_op_is_a_function_of_its_seed(name, tf):
    fn = STATELESS[name]
    want = fn(tf, tf.constant(SEED))
    got = fn(jaxtape, jaxtape.constant(SEED))
    assert got.dtype.name == want.dtype.name
    assert tuple(got.shape) == tuple(want.shape)
    again = fn(jaxtape, np.asarray(SEED, np.int64))  # int64 seed: same values
    np.testing.assert_array_equal(np.asarray(got), np.asarray(again))
    other = fn(jaxtape, jaxtape.constant(OTHER))
    if name != "categorical_int32" and "shuffle" not in name:
        assert not np.array_equal(np.asarray(got), np.asarray(other))
    if name not in COMPILED:
        return
    compiled = jaxtape.function(lambda s: fn(jaxtape, s))  # (XLA may fuse: 1 ulp)
    for s, eager in ((SEED, got), (OTHER, other)):
        np.testing.assert_allclose(
            np.asarray(compiled(jaxtape.constant(s))), np.asarray(eager), rtol=1e-5
        )


S = jaxtape.constant([11, 12])
# name -> (samples, expected mean, expected variance)
MOMENTS: dict[str, tuple[Callable, float, float]] = {
    "uniform": (lambda: jaxtape.random.stateless_uniform([N], S, 2.0, 4.0), 3.0, 1 / 3),
    "normal": (lambda: jaxtape.random.stateless_normal([N], S, 1.0, 2.0), 1.0, 4.0),
    "truncated_normal": (
        lambda: jaxtape.random.stateless_truncated_normal([N], S),
        0.0,
        1 - 4 * scipy.stats.norm.pdf(2) / (2 * scipy.stats.norm.cdf(2) - 1),
    ),
    "poisson": (lambda: jaxtape.random.stateless_poisson([N], S, 3.5), 3.5, 3.5),
    "binomial": (
        lambda: jaxtape.random.stateless_binomial([N], S, 20.0, 0.3),
        6.0,
        4.2,
    ),
    "parameterized_truncated_normal": (
        lambda: jaxtape.random.stateless_parameterized_truncated_normal(
            [N], S, 0.0, 1.0, 0.0, 10.0
        ),
        np.sqrt(2 / np.pi),
        1 - 2 / np.pi,
    ),
    "uniform_int": (
        lambda: jaxtape.random.stateless_uniform([N], S, 0, 10, jaxtape.int32),
        4.5,
        99 / 12,
    ),
    "random.poisson": (lambda: jaxtape.random.poisson([N], 7.0), 7.0, 7.0),
    "generator.normal": (
        lambda: jaxtape.random.Generator.from_seed(3).normal([N], 2.0, 0.5),
        2.0,
        0.25,
    ),
    "generator.truncated_normal": (
        lambda: jaxtape.random.Generator.from_seed(3).truncated_normal([N]),
        0.0,
        1 - 4 * scipy.stats.norm.pdf(2) / (2 * scipy.stats.norm.cdf(2) - 1),
    ),
    "generator.binomial": (
        lambda: jaxtape.random.Generator.from_seed(3).binomial([N], 8.0, 0.25),
        2.0,
        1.5,
    ),
    "generator.uniform_full_int_bits": (
        lambda: jaxtape.cast(
            jaxtape.random.Generator.from_seed(3).uniform_full_int([N], jaxtape.uint32)
            % 2,
            jaxtape.float32,
        ),
        0.5,
        0.25,
    ),
}


@pytest.mark.parametrize("name", list(MOMENTS))
def test_samples_have_the_distributions_moments(name):
    sample, mean, var = MOMENTS[name]
    x = np.asarray(sample(), np.float64)
    assert x.shape == (N,)
    tol = 5 * np.sqrt(var / N)  # 5 standard errors of the mean
    assert abs(x.mean() - mean) < tol, (x.mean(), mean)
    assert abs(x.var() - var) < 0.06 * var + 1e-3, (x.var(), var)


def test_bounded_samplers_stay_in_their_bounds():
    x = np.asarray(jaxtape.random.stateless_truncated_normal([N], S, 1.0, 0.5))
    assert x.min() >= 0.0 and x.max() <= 2.0
    z = np.asarray(
        jaxtape.random.stateless_parameterized_truncated_normal(
            [N // 2, 2],
            S,
            np.asarray([0.0, 5.0], np.float32),
            np.float32(1.0),
            np.asarray([-0.5, 4.0], np.float32),
            np.asarray([0.5, 7.0], np.float32),
        )
    )
    assert (z[:, 0] >= -0.5).all() and (z[:, 0] <= 0.5).all()
    assert (z[:, 1] >= 4.0).all() and (z[:, 1] <= 7.0).all()
    u = np.asarray(jaxtape.random.stateless_uniform([N], S, 3, 6, jaxtape.int64))
    assert set(np.unique(u)) == {3, 4, 5}
    c = np.asarray(
        jaxtape.random.stateless_categorical(np.log([[0.2, 0.8]]), N, S)
    ).ravel()
    assert abs(c.mean() - 0.8) < 0.02


def _implicit_gradients(x, alpha, beta):
    """TF's `RandomGammaGrad` for samples `x` of Gamma(alpha, beta): per draw,
    d x / d alpha = -(d/d alpha P(alpha, x beta)) / (density(x beta) beta),
    and d x / d beta = -x / beta; summed over the sample axis."""
    a, b = np.asarray(alpha, np.float64), np.asarray(beta, np.float64)
    xs = np.asarray(x, np.float64) * b  # the Gamma(alpha, 1) draws
    eps = 1e-5
    dcdf = scipy.special.gammainc(a + eps, xs) - scipy.special.gammainc(a - eps, xs)
    per_draw = -(dcdf / (2 * eps)) / scipy.stats.gamma.pdf(xs, a) / b
    return per_draw.sum(axis=0), (-np.asarray(x) / b).sum(axis=0)


def test_gamma_moments_and_implicit_reparameterization_gradient():
    alpha, beta = jaxtape.constant(ALPHA), jaxtape.constant(BETA)
    # (`random.gamma` samples with the same op; its gradient compiles slowly)
    with jaxtape.GradientTape() as tape:
        tape.watch([alpha, beta])
        x = jaxtape.random.stateless_gamma([N // 4, 4], S, alpha, beta)
    xs = np.asarray(x, np.float64)
    se = np.sqrt(ALPHA / BETA**2 / xs.shape[0])
    assert (abs(xs.mean(0) - ALPHA / BETA) < 5 * se).all(), xs.mean(0)
    # The sample variance's relative standard error for Gamma(alpha):
    # sqrt((2 + 6 / alpha) / n) (excess kurtosis 6 / alpha); five of it.
    rel = 5 * np.sqrt((2 + 6 / ALPHA) / xs.shape[0])
    assert (abs(xs.var(0) / (ALPHA / BETA**2) - 1) < rel).all(), xs.var(0)
    want_alpha, want_beta = _implicit_gradients(x, alpha, beta)
    d_alpha, d_beta = tape.gradient(x, [alpha, beta])
    np.testing.assert_allclose(d_alpha, want_alpha, rtol=2e-3)
    np.testing.assert_allclose(d_beta, want_beta, rtol=1e-5)


def test_stateless_normal_is_differentiable_in_mean_and_stddev(tf):
    grads = []
    for m in (tf, jaxtape):
        mean, std = m.constant([1.0, 2.0]), m.constant(3.0)
        with m.GradientTape() as tape:
            tape.watch([mean, std])
            x = m.random.stateless_normal([4, 2], m.constant(SEED), mean, std)
        z = (np.asarray(x) - np.asarray(mean)) / 3.0
        g_mean, g_std = tape.gradient(x, [mean, std])
        grads.append((np.asarray(g_mean), float(np.asarray(g_std)) - z.sum()))
    np.testing.assert_allclose(grads[1][0], grads[0][0])
    assert abs(grads[1][1]) < 1e-4 and abs(grads[0][1]) < 1e-4


def test_generator_state_follows_tensorflow(tf):
    for alg in ("philox", "threefry"):
        for seed in (0, 5, 2**40 + 3):
            want = tf.random.Generator.from_seed(seed, alg).state.numpy()
            got = jaxtape.random.Generator.from_seed(seed, alg).state.numpy()
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(
            jaxtape.random.create_rng_state(7, alg), tf.random.create_rng_state(7, alg)
        )
    np.testing.assert_array_equal(
        jaxtape.random.create_rng_state([5, 6], 1),
        tf.random.create_rng_state([5, 6], 1),
    )
    g = jaxtape.random.Generator.from_key_counter(5, [1, 2], "philox")
    np.testing.assert_array_equal(
        g.state.numpy(),
        tf.random.Generator.from_key_counter(5, [1, 2], "philox").state.numpy(),
    )
    assert int(g.key) == 5 and g.algorithm == 1
    assert jaxtape.random.Generator.from_seed(1).algorithm == 1
    assert jaxtape.random.Generator.from_seed(1, "threefry").algorithm == 2
    assert [a.value for a in jaxtape.random.Algorithm] == [
        a.value for a in tf.random.Algorithm
    ]
    old = g.skip(10)
    np.testing.assert_array_equal(np.asarray(old), [1, 2, 5])
    np.testing.assert_array_equal(g.state.numpy(), [11, 2, 5])
    g.reset([4, 4, 4])
    np.testing.assert_array_equal(g.state.numpy(), [4, 4, 4])
    g.reset_from_seed(9)
    np.testing.assert_array_equal(g.state.numpy(), [9, 0, 0])
    copy = jaxtape.random.Generator(copy_from=g)
    np.testing.assert_array_equal(copy.normal([3]), g.normal([3]))


def test_generator_draws_reproducibly_and_anew():
    g1 = jaxtape.random.Generator.from_seed(5)
    g2 = jaxtape.random.Generator.from_seed(5)
    a, b = g1.normal([4]), g2.normal([4])
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(g1.normal([4]), a)  # the counter moved
    assert not np.array_equal(jaxtape.random.Generator.from_seed(6).normal([4]), a)
    g3 = jaxtape.random.Generator.from_seed(5)
    g3.skip(1)
    np.testing.assert_array_equal(g3.normal([4]), g2.normal([4]))
    seeds = g1.make_seeds(3)
    assert seeds.dtype == jaxtape.int64 and tuple(seeds.shape) == (2, 3)
    assert not np.asarray(seeds)[1].any() and len(set(np.asarray(seeds)[0])) == 3
    s1, s2 = g1.split(2)
    assert not np.array_equal(s1.normal([4]), s2.normal([4]))
    for dt in ("int32", "int64", "uint32", "uint64"):
        assert g1.uniform_full_int([3], getattr(jaxtape, dt)).dtype.name == dt
    full = g1.uniform([3], minval=None, maxval=None, dtype=jaxtape.int64)
    assert full.dtype == jaxtape.int64
    step = jaxtape.function(lambda: g1.uniform([3]))
    assert not np.array_equal(step(), step())  # compiled calls advance the state


def test_stateful_samplers_follow_set_seed(tf):
    draws = []
    for _ in range(2):
        jaxtape.random.set_seed(4)
        draws.append(
            [
                jaxtape.random.gamma([N // 4], ALPHA),
                jaxtape.random.poisson([N], 7.0, dtype=jaxtape.int64),
                jaxtape.random.gamma([N // 4], ALPHA, seed=3),
            ]
        )
    for x, y in zip(*draws):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(draws[0][0], draws[0][2])
    want = [
        tf.random.gamma([N // 4], ALPHA),
        tf.random.poisson([N], 7.0, dtype=tf.int64),
    ]
    for g, w in zip(draws[0], want):
        assert g.dtype.name == w.dtype.name and tuple(g.shape) == tuple(w.shape)
    jaxtape.random.set_seed(None)


def test_generators_first_made_inside_a_function_hold_concrete_state():
    saved = jaxtape.random.get_global_generator()
    jaxtape.random.set_global_generator(None)
    try:
        draw = jaxtape.function(
            lambda a: (
                jaxtape.random.normal([3], a),
                jaxtape.random.normal([2], seed=9),
            )
        )
        first, second = draw(jaxtape.constant(2.0)), draw(jaxtape.constant(2.0))
        for x, y in zip(first, second):
            assert not np.array_equal(x, y)
    finally:
        jaxtape.random.set_global_generator(saved)


def test_candidate_samplers_match_tensorflow_shapes_and_expected_counts(tf):
    true = np.asarray([[1, 4], [0, 9]], np.int64)
    for name in ("uniform", "log_uniform"):
        for unique in (False, True):
            fn = f"{name}_candidate_sampler"
            want = getattr(tf.random, fn)(true, 2, 6, unique, 10, seed=1)
            got = getattr(jaxtape.random, fn)(true, 2, 6, unique, 10, seed=1)
            for g, w in zip(got, want):
                assert g.dtype.name == w.dtype.name
                assert tuple(g.shape) == tuple(w.shape)
            sampled = np.asarray(got[0])
            assert ((sampled >= 0) & (sampled < 10)).all()
            if unique:
                assert len(set(sampled)) == 6
            else:  # p * num_sampled: deterministic, so TF's exact values
                np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
    want = tf.random.fixed_unigram_candidate_sampler(
        true, 2, 6, False, 10, distortion=0.5, num_reserved_ids=2,
        unigrams=[1.0, 2, 3, 4, 5, 6, 7, 8],
    )  # fmt: skip
    got = jaxtape.random.fixed_unigram_candidate_sampler(
        true, 2, 6, False, 10, distortion=0.5, num_reserved_ids=2,
        unigrams=[1.0, 2, 3, 4, 5, 6, 7, 8],
    )  # fmt: skip
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
    assert (np.asarray(got[0]) >= 2).all()  # reserved ids have probability 0
    for step in range(3):  # counts learned from earlier calls' true classes
        want = tf.random.learned_unigram_candidate_sampler(true, 2, 6, False, 10, 7)
        got = jaxtape.random.learned_unigram_candidate_sampler(true, 2, 6, False, 10, 7)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5, err_msg=str(step))
    want = tf.random.all_candidate_sampler(true, 2, 10, True)
    got = jaxtape.random.all_candidate_sampler(true, 2, 10, True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w.numpy())
        assert g.dtype.name == w.dtype.name


def test_index_shuffle_is_a_permutation_fixed_by_its_seed():
    idx = np.arange(10)
    shuffle = jaxtape.random.experimental.index_shuffle
    perm = np.asarray(shuffle(idx, np.tile([1, 2, 3], (10, 1)), 9))
    assert sorted(perm) == list(idx) and not np.array_equal(perm, idx)
    assert int(shuffle(4, [1, 2, 3], 9)) == perm[4]
    other = np.asarray(shuffle(idx, np.tile([1, 2, 4], (10, 1)), 9))
    assert not np.array_equal(other, perm)
    assert shuffle(np.int64(2), [5, 6], 9).dtype == jaxtape.int64


ERRORS: dict[str, Callable] = {
    "seed_shape_3": lambda m: m.random.stateless_uniform([2], [1, 2, 3]),
    "seed_float": lambda m: m.random.stateless_normal([2], [1.0, 2.0]),
    "shape_scalar": lambda m: m.random.stateless_uniform(3, [1, 2]),
    "int_without_maxval": lambda m: m.random.stateless_uniform(
        [2], [1, 2], dtype=m.int32
    ),
    "int_empty_range": lambda m: m.random.stateless_uniform(
        [2], [1, 2], minval=5, maxval=5, dtype=m.int32
    ),
    "uniform_int8": lambda m: m.random.stateless_uniform(
        [2], [1, 2], maxval=3, dtype=m.int8
    ),
    "uint_defaults": lambda m: m.random.stateless_uniform([2], [1, 2], dtype=m.uint32),
    "uint_with_bounds": lambda m: m.random.stateless_uniform(
        [2], [1, 2], minval=1, maxval=5, dtype=m.uint32
    ),
    "generator_int_without_maxval": lambda m: m.random.Generator.from_seed(1).uniform(
        [2], dtype=m.int32
    ),
    "normal_int_dtype": lambda m: m.random.stateless_normal([2], [1, 2], dtype=m.int32),
    "bad_alg": lambda m: m.random.stateless_uniform([2], [1, 2], alg="foo"),
    "categorical_vector_logits": lambda m: m.random.stateless_categorical(
        [0.0, 1.0], 3, [1, 2]
    ),
    "gamma_shape_mismatch": lambda m: m.random.stateless_gamma(
        [3], [1, 2], alpha=[1.0, 2.0]
    ),
    "gamma_int_dtype": lambda m: m.random.gamma([3], 1.0, dtype=m.int32),
    "ptn_mixed_dtypes": lambda m: m.random.stateless_parameterized_truncated_normal(
        [3], [1, 2], means=np.float64(0)
    ),
    "full_int_float": lambda m: m.random.Generator.from_seed(1).uniform_full_int(
        [2], dtype=m.float32
    ),
    "from_state_wrong_size": lambda m: m.random.Generator.from_state([1, 2], "philox"),
    "index_shuffle_seed_shape": lambda m: m.random.experimental.index_shuffle(
        3, [1, 2, 3, 4], 9
    ),
    "index_shuffle_vector_with_vector_seed": lambda m: (
        m.random.experimental.index_shuffle([0, 1, 2, 3], [1, 2, 3], 9)
    ),
    "all_candidate_true_out_of_range": lambda m: m.random.all_candidate_sampler(
        [[1, 4]], 2, 4, True
    ),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_input_raises_tensorflows_error_type(name, tf):
    assert_raises_like_tf(tf, ERRORS[name])


def test_generator_keys_drawn_on_the_host_equal_jax_fold_in():
    """Eagerly a generator advances on the host (no XLA compile of the
    Threefry chain); its keys must be the ones the compiled `_advance`
    (JAX's `fold_in`) gives inside jaxtape.function, bit for bit."""
    from jaxtape._src.state import random_ops as stateful

    rng = np.random.default_rng(7)
    states = [rng.integers(-(2**63), 2**63 - 1, n, np.int64, True) for n in (2, 3)] * 50
    states.append(np.array([2**63 - 1, -1, 0], np.int64))  # the counter wraps
    for state in states:
        want_state, want_key = stateful._advance(jnp.asarray(state))
        got_state, got_key = stateful._advance_on_host(state)
        np.testing.assert_array_equal(got_key, np.asarray(want_key))
        np.testing.assert_array_equal(got_state, np.asarray(want_state))
