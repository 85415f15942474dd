"""The LinearOperator parity table shared by `test_linear_operator*.py`: the
same operator built from the same NumPy parameters under TF and jaxtape, the
methods to compare, and the checks (values or TF's exception type, gradients).
"""

from __future__ import annotations

import numpy as np

import jaxtape

_R = np.random.default_rng(7)


def _mat(n, m=None, batch=(), shift=3.0, dtype=np.float32):
    m = n if m is None else m
    a = _R.normal(size=batch + (n, m))
    if n == m:
        a = a + shift * np.eye(n)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * _R.normal(size=a.shape) * 0.3
    return a.astype(dtype)


def _spd(n, batch=()):
    a = _R.normal(size=batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32)


def _pos(*shape):
    return (_R.uniform(1.0, 2.0, size=shape)).astype(np.float32)


def _hermitian_spectrum(*shape):
    """The spectrum of a real circulant: the DFT of a real kernel."""
    kernel = _R.normal(size=shape)
    kernel.flat[0] += 4 * np.prod(shape[-1:])
    axes = tuple(range(-1, 0))
    return np.fft.fftn(kernel, axes=axes).astype(np.complex64)


def _lin(m):
    return m.linalg


def _full(m, a, **hints):
    return m.linalg.LinearOperatorFullMatrix(a, **hints)


def _complex(*shape):
    return (_R.normal(size=shape) + 1j * _R.normal(size=shape) + 3).astype(np.complex64)


# name -> (parameters, builder(m, *params) -> operator). Every operator is
# 4 x 4 (or 2 x 4), so that JAX compiles each primitive for few shapes.
CASES = {
    "full": ([_mat(4, batch=(2,))], lambda m, a: _full(m, a)),
    "full_spd": (
        [_spd(4)],
        lambda m, a: _full(m, a, is_self_adjoint=True, is_positive_definite=True),
    ),
    "full_rect": ([_mat(2, 4)], lambda m, a: _full(m, a)),
    "full_complex": ([_mat(4, dtype=np.complex64)], lambda m, a: _full(m, a)),
    "diag": ([_pos(2, 4)], lambda m, d: _lin(m).LinearOperatorDiag(d)),
    "diag_pd": (
        [_pos(4)],
        lambda m, d: _lin(m).LinearOperatorDiag(d, is_positive_definite=True),
    ),
    "diag_complex": (
        [(_pos(4) + 0.5j * _pos(4)).astype(np.complex64)],
        lambda m, d: _lin(m).LinearOperatorDiag(d),
    ),
    "identity": ([], lambda m: _lin(m).LinearOperatorIdentity(4, batch_shape=[2])),
    "scaled_identity": (
        [np.array([2.0, 3.0], np.float32)],
        lambda m, s: _lin(m).LinearOperatorScaledIdentity(4, s),
    ),
    "zeros": ([], lambda m: _lin(m).LinearOperatorZeros(4)),
    "zeros_rect": (
        [],
        lambda m: _lin(m).LinearOperatorZeros(
            2, 4, is_square=False, is_self_adjoint=False
        ),
    ),
    "lower_triangular": (
        [_mat(4, batch=(2,))],
        lambda m, t: _lin(m).LinearOperatorLowerTriangular(t),
    ),
    "adjoint": (
        [_mat(4)],
        lambda m, a: _lin(m).LinearOperatorAdjoint(_full(m, a)),
    ),
    "inversion": (
        [_mat(4)],
        lambda m, a: _lin(m).LinearOperatorInversion(_full(m, a)),
    ),
    "composition": (
        [_mat(4), _pos(4)],
        lambda m, a, d: _lin(m).LinearOperatorComposition(
            [_full(m, a), _lin(m).LinearOperatorDiag(d)]
        ),
    ),
    "kronecker": (
        [_mat(2), _mat(2)],
        lambda m, a, b: _lin(m).LinearOperatorKronecker([_full(m, a), _full(m, b)]),
    ),
    "kronecker_spd": (
        [_spd(2), _pos(2)],
        lambda m, a, d: _lin(m).LinearOperatorKronecker(
            [
                _full(m, a, is_self_adjoint=True, is_positive_definite=True),
                _lin(m).LinearOperatorDiag(d, is_positive_definite=True),
            ]
        ),
    ),
    "block_diag": (
        [_mat(2), _pos(2)],
        lambda m, a, d: _lin(m).LinearOperatorBlockDiag(
            [_full(m, a), _lin(m).LinearOperatorDiag(d)]
        ),
    ),
    "block_lower_triangular": (
        [_mat(2), _mat(2, 2), _mat(2)],
        lambda m, a, b, c: _lin(m).LinearOperatorBlockLowerTriangular(
            [[_full(m, a)], [_full(m, b), _full(m, c)]]
        ),
    ),
    "circulant": ([_complex(4)], lambda m, s: _lin(m).LinearOperatorCirculant(s)),
    "circulant_real": (
        [_hermitian_spectrum(4)],
        lambda m, s: _lin(m).LinearOperatorCirculant(s, input_output_dtype=m.float32),
    ),
    "circulant2d": (
        [_complex(2, 2)],
        lambda m, s: _lin(m).LinearOperatorCirculant2D(s),
    ),
    "circulant3d": (
        [_complex(1, 2, 2)],
        lambda m, s: _lin(m).LinearOperatorCirculant3D(s),
    ),
    "toeplitz": (
        [
            np.array([4.0, 1.0, 0.5, 0.2], np.float32),
            np.array([9.0, 2.0, -1.0, 0.3], np.float32),
        ],
        lambda m, c, r: _lin(m).LinearOperatorToeplitz(c, r),
    ),
    "tridiag_compact": (
        [np.stack([_pos(2, 4), 5 * _pos(2, 4), _pos(2, 4)], axis=-2)],
        lambda m, d: _lin(m).LinearOperatorTridiag(d),
    ),
    "tridiag_sequence": (
        [_pos(4), 5 * _pos(4), _pos(4)],
        lambda m, a, b, c: _lin(m).LinearOperatorTridiag(
            [a, b, c], diagonals_format="sequence"
        ),
    ),
    "tridiag_matrix": (
        [np.triu(np.tril(_mat(4), 1), -1).astype(np.float32)],
        lambda m, d: _lin(m).LinearOperatorTridiag(d, diagonals_format="matrix"),
    ),
    "low_rank_update": (
        [_pos(4), _R.normal(size=(4, 2)).astype(np.float32), _pos(2)],
        lambda m, d, u, du: _lin(m).LinearOperatorLowRankUpdate(
            _lin(m).LinearOperatorDiag(d, is_positive_definite=True),
            u,
            diag_update=du,
            is_diag_update_positive=True,
        ),
    ),
    "low_rank_update_uv": (
        [
            _mat(4),
            _R.normal(size=(4, 2)).astype(np.float32),
            _R.normal(size=(4, 2)).astype(np.float32),
        ],
        lambda m, a, u, v: _lin(m).LinearOperatorLowRankUpdate(_full(m, a), u, v=v),
    ),
    "householder": (
        [_R.normal(size=(2, 4)).astype(np.float32)],
        lambda m, v: _lin(m).LinearOperatorHouseholder(v),
    ),
    "permutation": (
        [np.array([[2, 0, 1, 3], [1, 0, 3, 2]], np.int32)],
        lambda m, p: _lin(m).LinearOperatorPermutation(p),
    ),
}


def _x(op, rows, cols=1, batch=()):
    dt = np.dtype(op.dtype.as_numpy_dtype)
    x = _R.normal(size=batch + (rows, cols))
    if dt.kind == "c":
        x = x + 1j * _R.normal(size=x.shape)
    return x.astype(dt)


def _dense_of(result):
    return result.to_dense() if hasattr(result, "to_dense") else result


# method name -> run(op, inputs) where inputs are NumPy arrays fixed per case
METHODS = {
    "shape": lambda op, a: list(op.shape),
    "batch_shape": lambda op, a: list(op.batch_shape),
    "domain_dimension": lambda op, a: int(op.domain_dimension),
    "range_dimension": lambda op, a: int(op.range_dimension),
    "tensor_rank": lambda op, a: int(op.tensor_rank),
    "shape_tensor": lambda op, a: op.shape_tensor(),
    "dtype": lambda op, a: op.dtype.name,
    "hints": lambda op, a: (
        op.is_non_singular,
        op.is_self_adjoint,
        op.is_positive_definite,
        op.is_square,
    ),
    "to_dense": lambda op, a: op.to_dense(),
    "matmul": lambda op, a: op.matmul(a["x"]),
    "matmul_adjoint": lambda op, a: op.matmul(a["xa"], adjoint=True),
    "matmul_adjoint_arg": lambda op, a: op.matmul(a["xt"], adjoint_arg=True),
    "matmul_broadcast": lambda op, a: op.matmul(a["xb"]),
    "matmul_operator": lambda op, a: op.matmul(op.H).to_dense(),
    "at_operator": lambda op, a: op @ a["x"],
    "matvec": lambda op, a: op.matvec(a["x"][..., 0]),
    "matvec_adjoint": lambda op, a: op.matvec(a["xa"][..., 0], adjoint=True),
    "solve": lambda op, a: op.solve(a["xa"]),
    "solve_adjoint": lambda op, a: op.solve(a["x"], adjoint=True),
    "solve_adjoint_arg": lambda op, a: op.solve(
        np.conj(np.swapaxes(a["xa"], -1, -2)), adjoint_arg=True
    ),
    "solvevec": lambda op, a: op.solvevec(a["xa"][..., 0]),
    "determinant": lambda op, a: op.determinant(),
    "log_abs_determinant": lambda op, a: op.log_abs_determinant(),
    "diag_part": lambda op, a: op.diag_part(),
    "trace": lambda op, a: op.trace(),
    "add_to_tensor": lambda op, a: op.add_to_tensor(a["m"]),
    "eigvals": lambda op, a: op.eigvals(),
    "cond": lambda op, a: op.cond(),
    "inverse": lambda op, a: op.inverse().to_dense(),
    "adjoint": lambda op, a: op.adjoint().to_dense(),
    "H": lambda op, a: op.H.to_dense(),
    "cholesky": lambda op, a: op.cholesky().to_dense(),
    "dimension_mismatch": lambda op, a: op.matmul(a["bad"]),
    "wrong_dtype": lambda op, a: op.matmul(a["x"].astype(np.float64)),
}


def _inputs(tf_op):
    m, n = int(tf_op.range_dimension), int(tf_op.domain_dimension)
    batch = tuple(tf_op.batch_shape)
    return {
        "x": _x(tf_op, n),
        "xa": _x(tf_op, m),
        "xt": np.swapaxes(_x(tf_op, n), -1, -2).copy(),
        "xb": _x(tf_op, n, batch=(2,)),
        "m": _x(tf_op, m, n, batch=batch),
        "bad": _x(tf_op, n + 1),
    }


def _run(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - the exception is the result
        return None, e


def _same_error(tf, want, got):
    expected = (
        getattr(jaxtape.errors, type(want).__name__)
        if isinstance(want, tf.errors.OpError)
        else type(want)
    )
    return isinstance(got, expected)


def _compare(tf, want, got, label):
    if isinstance(want, tuple):
        assert want == got, label
        return
    if isinstance(want, (list, int, str)):
        assert want == got, f"{label}: TF {want}, jaxtape {got}"
        return
    w, g = np.asarray(_dense_of(want)), np.asarray(_dense_of(got))
    assert g.dtype == w.dtype, f"{label}: dtype {g.dtype} vs TF {w.dtype}"
    assert g.shape == w.shape, f"{label}: shape {g.shape} vs TF {w.shape}"
    np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4, err_msg=label)


BASIC = [
    "full",
    "full_spd",
    "full_rect",
    "full_complex",
    "diag",
    "diag_pd",
    "diag_complex",
    "identity",
    "scaled_identity",
    "zeros",
    "zeros_rect",
    "lower_triangular",
    "adjoint",
    "inversion",
    "composition",
]
STRUCTURED = sorted(set(CASES) - set(BASIC))


def check_every_method(tf, case):
    """Every method of `METHODS` on TF's and jaxtape's operator agree."""
    params, build = CASES[case]
    tf_op = build(tf, *params)
    jt_op = build(jaxtape, *params)
    inputs = _inputs(tf_op)
    failures = []
    for name, method in METHODS.items():
        want, tf_err = _run(lambda m=method: m(tf_op, inputs))
        got, jt_err = _run(lambda m=method: m(jt_op, inputs))
        label = f"{case}.{name}"
        if tf_err is not None:
            if jt_err is None or not _same_error(tf, tf_err, jt_err):
                failures.append(f"{label}: TF raises {tf_err!r}; jaxtape {jt_err!r}")
        elif jt_err is not None:
            failures.append(f"{label}: jaxtape raises {jt_err!r}")
        else:
            _, err = _run(lambda: _compare(tf, want, got, label))
            if err is not None:
                failures.append(str(err))
    assert not failures, "\n".join(failures)


def _loss(m, op, a):
    """matmul, solve and log_abs_determinant, summed into one scalar."""
    parts = (op.matmul(a["x"]), op.solve(a["xa"]), op.log_abs_determinant())
    return m.add_n([m.reduce_sum(m.abs(p) ** 2) for p in parts])


def _gradients(m, build, params, inputs):
    ts = [m.constant(p) for p in params]
    with m.GradientTape() as tape:
        for t in ts:
            tape.watch(t)
        loss = _loss(m, build(m, *ts), inputs)
    return tape.gradient(loss, ts)


def check_gradients(tf, case):
    """Gradients of matmul + solve + log_abs_determinant agree with TF's."""
    params, build = CASES[case]
    inputs = _inputs(build(tf, *params))
    want = _gradients(tf, build, params, inputs)
    got = _gradients(jaxtape, build, params, inputs)
    for i, (w, g) in enumerate(zip(want, got)):
        assert g is not None, f"{case}: no gradient for parameter {i}"
        np.testing.assert_allclose(
            np.asarray(g), np.asarray(w), rtol=1e-3, atol=1e-3, err_msg=f"{case}[{i}]"
        )


def check_inside_function(case):
    """matmul/solve/log_abs_determinant/to_dense in `jaxtape.function` agree
    with eager."""
    params, build = CASES[case]
    eager = build(jaxtape, *params)
    inputs = _inputs(eager)

    @jaxtape.function
    def run(*ps):
        op = build(jaxtape, *ps)
        return (
            op.matmul(inputs["x"]),
            op.solve(inputs["xa"]),
            op.log_abs_determinant(),
            op.to_dense(),
        )

    got = run(*[jaxtape.constant(p) for p in params])
    want = (
        eager.matmul(inputs["x"]),
        eager.solve(inputs["xa"]),
        eager.log_abs_determinant(),
        eager.to_dense(),
    )
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)
