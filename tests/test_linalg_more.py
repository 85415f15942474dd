"""`logm`, `sqrtm`, tridiagonal/banded solvers, `eigh_tridiagonal`,
`linalg.experimental.conjugate_gradient` and `nn.experimental` dropout
against TF: values, dtypes, gradients, errors, and rows inside
`jaxtape.function`."""

from __future__ import annotations

import numpy as np
import pytest

import jaxtape

_R = np.random.default_rng(3)


def _spd(n):
    a = _R.normal(size=(n, n))
    return (a @ a.T + n * np.eye(n)).astype(np.float32)


_TRI = np.stack(
    [_R.uniform(0.5, 1, 4), _R.uniform(4, 5, 4), _R.uniform(0.5, 1, 4)]
).astype(np.float32)
_TRI_BATCH = np.stack([_TRI, _TRI * 1.5])
_RHS = _R.normal(size=(4, 2)).astype(np.float32)
_RHS_BATCH = _R.normal(size=(2, 4, 2)).astype(np.float32)
_BANDS = np.stack([_R.uniform(2, 3, 4), _R.normal(size=4)]).astype(np.float32)
_ALPHA = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
_BETA = np.array([0.5, -0.3, 0.8], np.float32)


def _dense_tri(t):
    return (np.diag(t[1]) + np.diag(t[0][:-1], 1) + np.diag(t[2][1:], -1)).astype(
        np.float32
    )


# name -> (fn(m, *inputs), inputs, differentiable)
ROWS = {
    "logm": (
        lambda m, a: m.linalg.logm(a),
        [(_spd(3) / 4).astype(np.complex64)],
        False,
    ),
    "sqrtm": (lambda m, a: m.linalg.sqrtm(a), [_spd(3)], True),
    "sqrtm_batch": (lambda m, a: m.linalg.sqrtm(a), [np.stack([_spd(3)] * 2)], True),
    "tridiagonal_matmul_compact": (
        lambda m, d, r: m.linalg.tridiagonal_matmul(d, r),
        [_TRI, _RHS],
        True,
    ),
    "tridiagonal_matmul_sequence": (
        lambda m, a, b, c, r: m.linalg.tridiagonal_matmul(
            (a, b, c), r, diagonals_format="sequence"
        ),
        [_TRI[0], _TRI[1], _TRI[2], _RHS],
        True,
    ),
    "tridiagonal_matmul_matrix": (
        lambda m, d, r: m.linalg.tridiagonal_matmul(d, r, diagonals_format="matrix"),
        [_dense_tri(_TRI), _RHS],
        True,
    ),
    "tridiagonal_solve_compact": (
        lambda m, d, r: m.linalg.tridiagonal_solve(d, r),
        [_TRI_BATCH, _RHS_BATCH],
        True,
    ),
    "tridiagonal_solve_vector": (
        lambda m, d, r: m.linalg.tridiagonal_solve(d, r),
        [_TRI, _RHS[:, 0].copy()],
        True,
    ),
    "tridiagonal_solve_transpose_rhs": (
        lambda m, d, r: m.linalg.tridiagonal_solve(d, r, transpose_rhs=True),
        [_TRI, _RHS.T.copy()],
        True,
    ),
    "tridiagonal_solve_matrix": (
        lambda m, d, r: m.linalg.tridiagonal_solve(d, r, diagonals_format="matrix"),
        [_dense_tri(_TRI), _RHS],
        True,
    ),
    "banded_triangular_solve_lower": (
        lambda m, b, r: m.linalg.banded_triangular_solve(b, r),
        [_BANDS, _RHS],
        True,
    ),
    "banded_triangular_solve_upper_adjoint": (
        lambda m, b, r: m.linalg.banded_triangular_solve(
            b[::-1], r, lower=False, adjoint=True
        ),
        [_BANDS, _RHS],
        True,
    ),
    "eigh_tridiagonal": (
        lambda m, a, b: m.linalg.eigh_tridiagonal(a, b),
        [_ALPHA, _BETA],
        False,
    ),
    "eigh_tridiagonal_select_i": (
        lambda m, a, b: m.linalg.eigh_tridiagonal(
            a, b, select="i", select_range=(1, 2)
        ),
        [_ALPHA, _BETA],
        False,
    ),
    "eigh_tridiagonal_select_v": (
        lambda m, a, b: m.linalg.eigh_tridiagonal(
            a, b, select="v", select_range=(1.5, 4.5)
        ),
        [_ALPHA, _BETA],
        False,
    ),
    "eigh_tridiagonal_vectors": (
        # eigenvectors up to sign: compare V diag(e) V^T, which is unique
        lambda m, a, b: _reconstruct(m, *m.linalg.eigh_tridiagonal(a, b, False)),
        [_ALPHA, _BETA],
        False,
    ),
    "conjugate_gradient": (
        lambda m, a, r: (
            m.linalg.experimental.conjugate_gradient(
                m.linalg.LinearOperatorFullMatrix(
                    a, is_self_adjoint=True, is_positive_definite=True
                ),
                r,
                max_iter=10,
            ).x
        ),
        [_spd(4), _RHS[:, 0].copy()],
        False,
    ),
    "general_dropout": (
        # a deterministic sampler: the same mask under TF and jaxtape
        lambda m, x, u: m.nn.experimental.general_dropout(
            x, 0.4, lambda shape, dtype: m.reshape(m.cast(u, dtype), shape)
        ),
        [_R.normal(size=(3, 4)).astype(np.float32), _R.uniform(size=(3, 4))],
        True,
    ),
}


def _reconstruct(m, e, v):
    return m.matmul(v * e[None, :], v, transpose_b=True)


def _values_and_grads(m, fn, inputs, differentiable):
    ts = [m.constant(x) for x in inputs]
    with m.GradientTape() as tape:
        for t in ts:
            tape.watch(t)
        out = fn(m, *ts)
        loss = m.reduce_sum(m.abs(out) ** 2) if differentiable else None
    grads = tape.gradient(loss, ts) if differentiable else []
    return out, grads


@pytest.mark.parametrize("name", sorted(ROWS))
def test_values_and_gradients_match_tensorflow(name, tf):
    fn, inputs, differentiable = ROWS[name]
    want, want_g = _values_and_grads(tf, fn, inputs, differentiable)
    got, got_g = _values_and_grads(jaxtape, fn, inputs, differentiable)
    assert got.dtype.name == want.dtype.name
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-4)
    for i, (w, g) in enumerate(zip(want_g, got_g)):
        if w is None:
            continue
        assert g is not None, f"no gradient for input {i}"
        np.testing.assert_allclose(
            np.asarray(g), np.asarray(w), rtol=2e-3, atol=2e-3, err_msg=f"input {i}"
        )


@pytest.mark.parametrize(
    "name",
    ["sqrtm", "tridiagonal_solve_compact", "banded_triangular_solve_lower", "logm"],
)
def test_inside_function_matches_eager(name):
    fn, inputs, _ = ROWS[name]
    compiled = jaxtape.function(lambda *xs: fn(jaxtape, *xs))
    got = compiled(*[jaxtape.constant(x) for x in inputs])
    want = fn(jaxtape, *[jaxtape.constant(x) for x in inputs])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "run",
    [
        lambda m: m.linalg.logm(np.eye(2, dtype=np.float32)),
        lambda m: m.linalg.sqrtm(np.ones((2, 3), np.float32)),
        lambda m: m.linalg.tridiagonal_solve(_TRI, _RHS, diagonals_format="bad"),
        lambda m: m.linalg.tridiagonal_matmul(_TRI_BATCH, _RHS),
        lambda m: m.nn.experimental.stateless_dropout(
            np.ones(3, np.float32), 1.0, seed=[1, 2]
        ),
        lambda m: m.nn.experimental.stateless_dropout(
            np.ones(3, np.int32), 0.5, seed=[1, 2]
        ),
        lambda m: m.nn.experimental.stateless_dropout(
            np.ones(3, np.float32), 0.5, seed=[1, 2, 3]
        ),
    ],
    ids=[
        "logm_real",
        "sqrtm_not_square",
        "tridiagonal_bad_format",
        "tridiagonal_matmul_batch_mismatch",
        "dropout_rate_1",
        "dropout_int",
        "dropout_bad_seed",
    ],
)
def test_bad_input_raises_like_tensorflow(run, tf):
    from parity_checks import assert_raises_like_tf

    assert_raises_like_tf(tf, run)


def test_stateless_dropout_is_a_function_of_its_seed():
    x = jaxtape.constant(np.arange(1, 2001, dtype=np.float32))
    drop = jaxtape.nn.experimental.stateless_dropout
    a = drop(x, 0.25, seed=[4, 5])
    b = drop(x, 0.25, seed=[4, 5])
    c = drop(x, 0.25, seed=[4, 6])
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())
    kept = a.numpy() != 0
    assert 0.7 < kept.mean() < 0.8  # rate 0.25
    np.testing.assert_allclose(a.numpy()[kept], x.numpy()[kept] / 0.75, rtol=1e-6)
    compiled = jaxtape.function(lambda t, s: drop(t, 0.25, seed=s))
    np.testing.assert_array_equal(
        compiled(x, jaxtape.constant([4, 5])).numpy(), a.numpy()
    )
    with jaxtape.GradientTape() as tape:
        tape.watch(x)
        y = drop(x, 0.25, seed=[4, 5], noise_shape=[None])
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), kept / 0.75, rtol=1e-6)
    assert drop(x, 0, seed=[1, 1]) is x or np.array_equal(
        drop(x, 0, seed=[1, 1]).numpy(), x.numpy()
    )


def test_stateless_dropout_noise_shape_broadcasts():
    x = jaxtape.ones([3, 50])
    y = jaxtape.nn.experimental.stateless_dropout(
        x, 0.5, seed=[0, 1], noise_shape=[1, 50]
    ).numpy()
    np.testing.assert_array_equal(y[0], y[1])
    np.testing.assert_array_equal(y[0], y[2])
