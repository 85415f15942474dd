"""`jaxtape.SparseTensor` and `jaxtape.sparse` against real TF's `tf.sparse`.

Each row runs `fn(m, *tensors)` in TF and in jaxtape on the same NumPy inputs
and compares every output (a SparseTensor's indices, values and dense shape;
Tensors; tuples and lists of them) by dtype, shape and value; with `grad`,
also the gradients of `sum(values * w)` (w fixed weights) with respect to
every float input, i.e. a SparseTensor's values and the dense operands.
`compiled` rows run the jaxtape side inside `jaxtape.function`. The error rows
check that bad input raises TF's exception type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest
from parity_checks import assert_raises_like_tf

import jaxtape

R = np.random.default_rng(17)
F32, F64 = np.float32, np.float64


def f(*shape, dtype=F32):
    return R.normal(size=shape).astype(dtype)


# A [3, 4] SparseTensor's sorted indices, and an unsorted one's.
IDX = np.array([[0, 1], [0, 3], [2, 0], [2, 2]], np.int64)
IDX_UNSORTED = np.array([[2, 2], [0, 3], [2, 0], [0, 1]], np.int64)
IDX3 = np.array([[0, 0, 1], [0, 2, 0], [1, 1, 1]], np.int64)  # [2, 3, 2]
IDX_B = np.array([[0, 1], [1, 1], [2, 2]], np.int64)  # a second [3, 4] one


def sp(m, v, idx=IDX, shape=(3, 4)):
    return m.SparseTensor(idx, v, shape)


def EMPTY(m):  # noqa: N802 - a [3, 4] SparseTensor with no values
    return m.SparseTensor(np.zeros((0, 2), np.int64), np.zeros(0, F32), [3, 4])


class Row(NamedTuple):
    fn: Callable[..., Any]
    inputs: tuple
    grad: bool = True
    compiled: bool = False


def row(fn, *inputs, grad=True, compiled=False):
    return Row(fn, inputs, grad, compiled)


S = lambda m: m.sparse  # noqa: E731
V4 = f(4)

ROWS: dict[str, Row] = {
    "SparseTensor": row(lambda m, v: sp(m, v), V4),
    "SparseTensor_float64": row(lambda m, v: sp(m, v), f(4, dtype=F64)),
    "SparseTensor_int": row(lambda m: sp(m, [1, 2, 3, 4]), grad=False),
    "SparseTensor_dense_shape_tensor": row(
        lambda m, v: m.SparseTensor(IDX, v, m.constant([3, 4], m.int64)), V4
    ),
    "with_values": row(lambda m, v, w: sp(m, v).with_values(w), V4, f(4)),
    "mul_dense": row(lambda m, v, d: sp(m, v) * d, V4, f(3, 4)),
    "mul_broadcast_row": row(lambda m, v, d: sp(m, v) * d, V4, f(4)),
    "rmul_dense": row(lambda m, v, d: d * sp(m, v), V4, f(3, 4)),
    "mul_scalar": row(lambda m, v: sp(m, v) * 2.0, V4, grad=False),  # TF grad fails
    "truediv_dense": row(lambda m, v, d: sp(m, v) / (d * d + 1.0), V4, f(3, 4)),
    "truediv_int": row(lambda m: sp(m, [1, 2, 3, 4]) / 2, grad=False),
    "to_dense": row(lambda m, v: S(m).to_dense(sp(m, v)), V4),
    "to_dense_default": row(
        lambda m, v, d: S(m).to_dense(sp(m, v), default_value=d), V4, f()
    ),
    "to_dense_3d": row(lambda m, v: S(m).to_dense(sp(m, v, IDX3, (2, 3, 2))), f(3)),
    "to_dense_empty": row(
        lambda m: S(m).to_dense(m.SparseTensor(np.zeros((0, 2), np.int64), [], [2, 2])),
        grad=False,
    ),
    "to_dense_unvalidated": row(
        lambda m, v: S(m).to_dense(sp(m, v, IDX_UNSORTED), validate_indices=False), V4
    ),
    "from_dense": row(lambda m, d: S(m).from_dense(d * m.constant(MASK)), f(3, 4)),
    "from_dense_int": row(lambda m: S(m).from_dense([[0, 3], [5, 0]]), grad=False),
    "reorder": row(lambda m, v: S(m).reorder(sp(m, v, IDX_UNSORTED)), V4),
    "transpose": row(lambda m, v: S(m).transpose(sp(m, v)), V4),
    "transpose_perm": row(
        lambda m, v: S(m).transpose(sp(m, v, IDX3, (2, 3, 2)), [2, 0, 1]), f(3)
    ),
    "add_sparse": row(lambda m, v, w: S(m).add(sp(m, v), sp(m, w, IDX_B)), V4, f(3)),
    "add_threshold": row(
        lambda m, v: S(m).add(sp(m, v), sp(m, -v[:3] + [0.0, 0.0, 0.5], IDX[:3])),
        V4,
    ),
    "add_threshold_drops": row(
        lambda m, v: S(m).add(
            sp(m, v), sp(m, -v[:3] + [0.0, 0.0, 0.5], IDX[:3]), threshold=0.25
        ),
        np.array([1.0, 2.0, 3.0, 4.0], F32),
    ),
    "add_dense": row(lambda m, v, d: S(m).add(sp(m, v), d), V4, f(3, 4)),
    "add_dense_first": row(lambda m, v, d: S(m).add(d, sp(m, v)), V4, f(3, 4)),
    "maximum": row(
        lambda m, v, w: S(m).maximum(sp(m, v), sp(m, w, IDX_B)), V4, f(3), grad=False
    ),
    "minimum": row(
        lambda m, v, w: S(m).minimum(sp(m, v), sp(m, w, IDX_B)), V4, f(3), grad=False
    ),
    "concat": row(
        lambda m, v, w: S(m).concat(1, [sp(m, v), sp(m, w, IDX_B)]), V4, f(3)
    ),
    "concat_axis0": row(
        lambda m, v, w: S(m).concat(0, [sp(m, v), sp(m, w, IDX_B)]), V4, f(3)
    ),
    "concat_expand": row(
        lambda m, v, w: S(m).concat(
            -1,
            [sp(m, v), sp(m, w, np.array([[4, 0], [0, 1]]), (5, 2))],
            expand_nonconcat_dims=True,
        ),
        V4,
        f(2),
    ),
    "reshape": row(lambda m, v: S(m).reshape(sp(m, v), [2, -1]), V4),
    "reshape_3d": row(lambda m, v: S(m).reshape(sp(m, v), [4, 3, 1]), V4),
    "expand_dims": row(lambda m, v: S(m).expand_dims(sp(m, v), 1), V4),
    "expand_dims_default": row(lambda m, v: S(m).expand_dims(sp(m, v)), V4),
    "retain": row(lambda m, v: S(m).retain(sp(m, v), [True, False, True, True]), V4),
    "slice": row(lambda m, v: S(m).slice(sp(m, v), [0, 1], [3, 2]), V4),
    "slice_past_end": row(lambda m, v: S(m).slice(sp(m, v), [2, 2], [5, 5]), V4),
    "split": row(
        lambda m, v: S(m).split(sp_input=sp(m, v), num_split=3, axis=1),
        V4,
        grad=False,
    ),
    "split_axis0": row(
        lambda m, v: S(m).split(sp_input=sp(m, v), num_split=2, axis=0),
        V4,
        grad=False,
    ),
    "fill_empty_rows": row(lambda m, v, d: S(m).fill_empty_rows(sp(m, v), d), V4, f()),
    "reduce_sum": row(lambda m, v: S(m).reduce_sum(sp(m, v)), V4),
    "reduce_sum_axis": row(lambda m, v: S(m).reduce_sum(sp(m, v), 1), V4),
    "reduce_sum_keepdims": row(
        lambda m, v: S(m).reduce_sum(sp(m, v, IDX3, (2, 3, 2)), [0, -1], keepdims=True),
        f(3),
    ),
    "reduce_sum_sparse": row(
        lambda m, v: S(m).reduce_sum(sp(m, v), 0, output_is_sparse=True),
        V4,
        grad=False,  # TF has no gradient (LookupError); jaxtape's is the sum's
    ),
    "reduce_sum_sparse_keepdims": row(
        lambda m, v: S(m).reduce_sum(sp(m, v), 1, keepdims=True, output_is_sparse=True),
        V4,
        grad=False,
    ),
    "reduce_max": row(lambda m, v: S(m).reduce_max(sp(m, v), 1), V4, grad=False),
    "reduce_max_all": row(lambda m, v: S(m).reduce_max(sp(m, v)), V4, grad=False),
    "reduce_max_sparse": row(
        lambda m, v: S(m).reduce_max(sp(m, v), 0, output_is_sparse=True),
        V4,
        grad=False,
    ),
    "sparse_dense_matmul": row(
        lambda m, v, d: S(m).sparse_dense_matmul(sp(m, v), d), V4, f(4, 2)
    ),
    "sparse_dense_matmul_adjoint": row(
        lambda m, v, d: S(m).sparse_dense_matmul(
            sp(m, v), d, adjoint_a=True, adjoint_b=True
        ),
        V4,
        f(2, 3),
    ),
    "dense_sparse_matmul": row(
        lambda m, v, d: S(m).sparse_dense_matmul(d, sp(m, v)), V4, f(2, 3)
    ),
    "softmax": row(lambda m, v: S(m).softmax(sp(m, v)), V4),
    "softmax_3d": row(lambda m, v: S(m).softmax(sp(m, v, IDX3, (2, 3, 2))), f(3)),
    "map_values": row(lambda m, v: S(m).map_values(m.math.tanh, sp(m, v)), V4),
    "map_values_two": row(
        lambda m, v, w: S(m).map_values(m.multiply, sp(m, v), sp(m, w)), V4, f(4)
    ),
    "eye": row(lambda m: S(m).eye(3), grad=False),
    "eye_rect_int": row(lambda m: S(m).eye(2, 4, dtype=m.int32), grad=False),
    "to_indicator": row(
        lambda m: S(m).to_indicator(sp(m, [3, 1, 0, 2]), 5), grad=False
    ),
    "reset_shape": row(lambda m, v: S(m).reset_shape(sp(m, v)), V4),
    "reset_shape_bigger": row(lambda m, v: S(m).reset_shape(sp(m, v), [5, 6]), V4),
    "bincount": row(
        lambda m: S(m).bincount(m.constant([[1, 2, 2], [3, 0, 1]])), grad=False
    ),
    "bincount_axis": row(
        lambda m: S(m).bincount(m.constant([[1, 2, 2], [3, 0, 1]]), axis=-1),
        grad=False,
    ),
    "bincount_weights": row(
        lambda m, w: S(m).bincount(m.constant([1, 2, 2, 5]), weights=w, maxlength=4),
        f(4),
        grad=False,
    ),
    "bincount_binary": row(
        lambda m: S(m).bincount(
            m.constant([1, 2, 2], m.int64), binary_output=True, minlength=6
        ),
        grad=False,
    ),
    "bincount_sparse": row(
        lambda m: S(m).bincount(sp(m, np.array([1, 3, 3, 0], np.int64)), axis=-1),
        grad=False,
    ),
    "bincount_sparse_weights": row(
        lambda m, w: S(m).bincount(
            sp(m, np.array([1, 3, 3, 0], np.int64)),
            weights=sp(m, w),
            minlength=2,
            maxlength=3,
        ),
        f(4),
        grad=False,
    ),
    "sampled_addmm": row(
        lambda m, v, a, b: S(m).sampled_addmm(
            IDX, v, [3, 4], a, b, beta=0.5, alpha=2.0
        ),
        V4,
        f(3, 2),
        f(2, 4),
    ),
    "mask": row(
        lambda m, v: S(m).mask(m.IndexedSlices(v, m.constant([1, 4, 7])), [4]),
        f(3, 2),
    ),
    "segment_sum": row(lambda m, d: S(m).segment_sum(d, [0, 1, 3], [0, 0, 2]), f(4, 2)),
    "segment_sum_num_segments": row(
        lambda m, d: S(m).segment_sum(d, [0, 1, 3], [0, 0, 2], num_segments=4),
        f(4, 2),
    ),
    "segment_mean": row(
        lambda m, d: S(m).segment_mean(d, [0, 1, 3, 3], [0, 0, 1, 1]), f(4, 2)
    ),
    "segment_sqrt_n": row(
        lambda m, d: S(m).segment_sqrt_n(d, [0, 1, 3], [0, 0, 2]), f(4, 2)
    ),
    "segment_sqrt_n_num_segments": row(
        lambda m, d: S(m).segment_sqrt_n(d, [0, 1, 3], [0, 0, 2], num_segments=4),
        f(4, 2),
    ),
    # empty and rank-1 SparseTensors
    "empty_reduce_sum": row(lambda m: S(m).reduce_sum(EMPTY(m), 1), grad=False),
    "empty_matmul": row(
        lambda m, d: S(m).sparse_dense_matmul(EMPTY(m), d), f(4, 2), grad=False
    ),
    "empty_add": row(lambda m, v: S(m).add(EMPTY(m), sp(m, v)), V4),
    "empty_fill_empty_rows": row(
        lambda m: S(m).fill_empty_rows(EMPTY(m), 7.0), grad=False
    ),
    "empty_softmax": row(lambda m: S(m).softmax(EMPTY(m)), grad=False),
    "empty_concat": row(
        lambda m, v: S(m).concat(0, [EMPTY(m), sp(m, v)]), V4, grad=False
    ),
    "from_dense_zeros": row(lambda m: S(m).from_dense(m.zeros((2, 3))), grad=False),
    "vector_slice": row(
        lambda m, v: S(m).slice(sp(m, v, np.array([[1], [4], [6]]), (8,)), [2], [5]),
        f(3),
    ),
    "vector_reduce_sum": row(
        lambda m, v: S(m).reduce_sum(sp(m, v, np.array([[1], [4], [6]]), (8,)), 0),
        f(3),
    ),
    "vector_to_dense": row(
        lambda m, v: S(m).to_dense(sp(m, v, np.array([[1], [4], [6]]), (8,))), f(3)
    ),
    # inside jaxtape.function
    "compiled_to_dense": row(lambda m, v: S(m).to_dense(sp(m, v)), V4, compiled=True),
    "compiled_reduce_sum": row(
        lambda m, v: S(m).reduce_sum(sp(m, v), 0), V4, compiled=True
    ),
    "compiled_matmul": row(
        lambda m, v, d: S(m).sparse_dense_matmul(sp(m, v), d),
        V4,
        f(4, 2),
        compiled=True,
    ),
    "compiled_softmax": row(lambda m, v: S(m).softmax(sp(m, v)), V4, compiled=True),
    "compiled_transpose": row(lambda m, v: S(m).transpose(sp(m, v)), V4, compiled=True),
    "compiled_concat": row(
        lambda m, v, w: S(m).concat(1, [sp(m, v), sp(m, w, IDX_B)]),
        V4,
        f(3),
        compiled=True,
        grad=False,  # TF: None; a compiled function's gradient is zeros
    ),
    "compiled_reshape": row(
        lambda m, v: S(m).reshape(sp(m, v), [6, 2]), V4, compiled=True
    ),
    "compiled_mul": row(lambda m, v, d: sp(m, v) * d, V4, f(3, 4), compiled=True),
}
MASK = np.array([[0, 1, 0, 1], [0, 0, 0, 0], [1, 0, 1, 1]], F32)


def _weights(n: int) -> np.ndarray:
    return np.cos(np.arange(n) + 0.5)


def _loss(m, out):
    """`sum(values * w)` over the float outputs (None when there are none)."""
    parts = []
    for t in _float_parts(m, out):
        w = m.constant(_weights(int(np.prod(t.shape))).astype(t.dtype.as_numpy_dtype))
        parts.append(m.reduce_sum(m.reshape(t, [-1]) * w))
    return m.add_n(parts) if parts else None


def _float_parts(m, out):
    if isinstance(out, (list, tuple)):
        return [p for o in out for p in _float_parts(m, o)]
    if isinstance(out, m.SparseTensor):
        out = out.values
    elif isinstance(out, m.IndexedSlices):
        out = out.values
    return [out] if out.dtype.is_floating else []


def _run(m, r: Row):
    xs = [m.constant(x) for x in r.inputs]
    fn = r.fn
    if r.compiled and m is jaxtape:
        fn = jaxtape.function(fn)
    with m.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        out = fn(m, *xs)
        loss = _loss(m, out) if r.grad else None
    grads = tape.gradient(loss, xs) if r.grad else []
    return _plain(m, out), [
        None if g is None else m.convert_to_tensor(g).numpy() for g in grads
    ]


def _plain(m, out):
    """Outputs as nested lists of NumPy arrays."""
    if isinstance(out, (list, tuple)):
        return [_plain(m, o) for o in out]
    if isinstance(out, m.SparseTensor):
        return [out.indices.numpy(), out.values.numpy(), out.dense_shape.numpy()]
    if isinstance(out, m.IndexedSlices):
        return [out.indices.numpy(), out.values.numpy()]
    return np.asarray(out.numpy())


def _same(got, want, what):
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{what}: structure"
        for k, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{what}[{k}]")
        return
    if want is None:
        assert got is None, f"{what}: TF gives None, jaxtape {got!r}"
        return
    assert got is not None, f"{what}: jaxtape gives None"
    assert got.dtype == want.dtype, f"{what}: {got.dtype} vs {want.dtype}"
    assert got.shape == want.shape, f"{what}: {got.shape} vs {want.shape}"
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("name", list(ROWS))
def test_sparse_op_and_gradient_match_tensorflow(name, tf):
    r = ROWS[name]
    want, want_grads = _run(tf, r)
    got, got_grads = _run(jaxtape, r)
    _same(got, want, f"{name} output")
    _same(got_grads, want_grads, f"{name} gradients")


ERRORS: dict[str, Callable] = {
    "values_rank": lambda m: m.SparseTensor(IDX, [[1.0]] * 4, [3, 4]),
    "indices_rank": lambda m: m.SparseTensor([0, 1], [1.0], [3, 4]),
    "count_mismatch": lambda m: m.SparseTensor([[0, 1]], [1.0, 2.0], [3, 4]),
    "rank_mismatch": lambda m: m.SparseTensor([[0, 1]], [1.0], [3, 4, 5]),
    "to_dense_out_of_bounds": lambda m: m.sparse.to_dense(
        m.SparseTensor([[0, 5]], [1.0], [3, 4])
    ),
    "to_dense_out_of_order": lambda m: m.sparse.to_dense(sp(m, V4, IDX_UNSORTED)),
    "to_dense_repeated": lambda m: m.sparse.to_dense(
        m.SparseTensor([[1, 0], [1, 0]], [1.0, 2.0], [3, 4])
    ),
    "to_dense_of_dense": lambda m: m.sparse.to_dense(m.constant([[1.0]])),
    "number_times_sparse": lambda m: 2.0 * sp(m, V4),
    "dense_plus_sparse": lambda m: m.ones((3, 4)) + sp(m, V4),
    "add_two_dense": lambda m: m.sparse.add(m.ones((2, 2)), m.ones((2, 2))),
    "add_dtype_mismatch": lambda m: m.sparse.add(sp(m, V4), sp(m, [1, 2, 3, 4])),
    "mul_dtype_mismatch": lambda m: sp(m, V4) * m.constant([2.0], m.float64),
    "mul_dense_too_big": lambda m: sp(m, V4) * m.ones((5, 3, 4)),
    "reshape_size": lambda m: m.sparse.reshape(sp(m, V4), [5]),
    "concat_shapes": lambda m: m.sparse.concat(
        1, [sp(m, V4), m.SparseTensor([[0, 0]], [5.0], [2, 1])]
    ),
    "retain_length": lambda m: m.sparse.retain(sp(m, V4), [True]),
    "reset_shape_smaller": lambda m: m.sparse.reset_shape(sp(m, V4), [2, 4]),
    "matmul_inner": lambda m: m.sparse.sparse_dense_matmul(sp(m, V4), m.ones((3, 2))),
    "matmul_out_of_bounds": lambda m: m.sparse.sparse_dense_matmul(
        m.SparseTensor([[0, 5]], [1.0], [2, 2]), m.ones((2, 3))
    ),
    "matmul_adjoint_out_of_bounds": lambda m: m.sparse.sparse_dense_matmul(
        m.SparseTensor([[-1, 0]], [1.0], [2, 2]), m.ones((2, 3)), adjoint_a=True
    ),
    "matmul_dtype": lambda m: m.sparse.sparse_dense_matmul(
        sp(m, V4), m.ones((4, 2), m.float64)
    ),
    "map_values_no_sparse": lambda m: m.sparse.map_values(m.add, 1, 2),
    "map_values_indices": lambda m: m.sparse.map_values(
        m.add, sp(m, V4), sp(m, V4, IDX_UNSORTED)
    ),
    "softmax_rank1": lambda m: m.sparse.softmax(m.SparseTensor([[0]], [1.0], [3])),
    "reduce_sum_axis": lambda m: m.sparse.reduce_sum(sp(m, V4), 2),
    "sampled_addmm_shape": lambda m: m.sparse.sampled_addmm(
        IDX, V4, [3, 5], m.ones((3, 2)), m.ones((2, 4))
    ),
    "bincount_negative": lambda m: m.sparse.bincount(m.constant([1, -1])),
    "bincount_weights_binary": lambda m: m.sparse.bincount(
        m.constant([1, 2]), weights=m.constant([1.0, 2.0]), binary_output=True
    ),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_input_raises_tensorflows_error_type(name, tf):
    assert_raises_like_tf(tf, ERRORS[name])


def test_sparse_tensor_attributes_and_repr(tf):
    got = sp(jaxtape, V4)
    want = sp(tf, V4)
    assert got.shape == want.shape and got.get_shape() == want.shape
    assert got.dtype.name == want.dtype.name
    assert got.dense_shape.dtype.name == "int64" and got.indices.dtype.name == "int64"
    assert repr(got) == repr(want).replace("tf.Tensor", "jaxtape.Tensor")
    assert jaxtape.sparse.SparseTensor is jaxtape.SparseTensor
    assert jaxtape.SparseTensor.from_value(got) is got


def test_sparse_tensor_is_a_function_argument_and_output():
    traces = []

    @jaxtape.function
    def double(s):
        traces.append(None)
        return s.with_values(s.values * 2.0)

    a = sp(jaxtape, V4)
    out = double(a)
    double(sp(jaxtape, V4 + 1.0))
    assert isinstance(out, jaxtape.SparseTensor) and out.shape == (3, 4)
    np.testing.assert_allclose(out.values.numpy(), V4 * 2.0, rtol=1e-6)
    np.testing.assert_array_equal(out.indices.numpy(), IDX)
    assert len(traces) == 1
    double(sp(jaxtape, V4, shape=(3, 5)))  # a new dense shape is a new trace
    assert len(traces) == 2


def test_data_dependent_op_inside_function_says_what_to_do():
    @jaxtape.function
    def fn(d):
        return jaxtape.sparse.from_dense(d)

    with pytest.raises(NotImplementedError, match="from_dense"):
        fn(jaxtape.ones((2, 2)))


def test_cross_is_not_implemented():
    x = jaxtape.constant([[1], [2]], jaxtape.int64)
    with pytest.raises(NotImplementedError, match="string"):
        jaxtape.sparse.cross([x, x])
    with pytest.raises(NotImplementedError, match="cross_hashed"):
        jaxtape.sparse.cross_hashed([x, x], num_buckets=10)
