"""`jaxtape.RaggedTensor` and `jaxtape.ragged` against real TF's `tf.ragged`.

Each row runs `fn(m, *tensors)` in TF and in jaxtape on the same NumPy inputs
and compares every output (a RaggedTensor's flat values, nested row splits and
shape; Tensors; SparseTensors; tuples of them) by dtype, shape and value; with
`grad`, also the gradients of `sum(flat_values * w)` (w fixed weights) with
respect to every float input. `compiled` rows run the jaxtape side inside
`jaxtape.function`. The error rows check that bad input raises TF's exception
type. TF reduces a RaggedTensor with `tf.reduce_sum(rt, ...)`; jaxtape with
`jaxtape.ragged.reduce_sum` (`RED` below picks the name per module).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest
from parity_checks import assert_raises_like_tf

import jaxtape

R = np.random.default_rng(5)
F32 = np.float32
I32, I64 = np.int32, np.int64


def f(*shape):
    return R.normal(size=shape).astype(F32)


V5, V6 = f(5), f(6)
V5x2 = f(5, 2)
SPLITS = np.array([0, 2, 2, 5], I64)  # rows of 2, 0 and 3 values


def rs(m, v, splits=SPLITS):
    return m.RaggedTensor.from_row_splits(v, splits)


def nested(m, v):  # [[[a, b], []], [[c, d, e]]]
    return m.RaggedTensor.from_nested_row_splits(v, [[0, 2, 3], SPLITS])


def RED(m, name):  # noqa: N802 - TF's dispatch vs jaxtape.ragged's function
    return getattr(m.ragged if m is jaxtape else m, name)


class Row(NamedTuple):
    fn: Callable[..., Any]
    inputs: tuple
    grad: bool = True
    compiled: bool = False


def row(fn, *inputs, grad=True, compiled=False):
    return Row(fn, inputs, grad, compiled)


RT = lambda m: m.RaggedTensor  # noqa: E731
G = lambda m: m.ragged  # noqa: E731
PY = [[1, 2], [], [3, 4, 5]]

ROWS: dict[str, Row] = {
    # -- factories
    "from_row_splits": row(lambda m, v: rs(m, v), V5),
    "from_row_splits_int32": row(lambda m, v: rs(m, v, SPLITS.astype(I32)), V5),
    "from_row_lengths": row(lambda m, v: RT(m).from_row_lengths(v, [2, 0, 3]), V5),
    "from_value_rowids": row(
        lambda m, v: RT(m).from_value_rowids(v, [0, 0, 2, 2, 2], nrows=4), V5
    ),
    "from_value_rowids_no_nrows": row(
        lambda m, v: RT(m).from_value_rowids(v, [0, 1, 1, 3, 3]), V5
    ),
    "from_row_starts": row(lambda m, v: RT(m).from_row_starts(v, [0, 2, 2]), V5),
    "from_row_limits": row(lambda m, v: RT(m).from_row_limits(v, [2, 2, 5]), V5),
    "from_uniform_row_length": row(
        lambda m, v: RT(m).from_uniform_row_length(v, 3), V6
    ),
    "from_nested_row_splits": row(nested, V5),
    "from_nested_row_lengths": row(
        lambda m, v: RT(m).from_nested_row_lengths(v, [[2, 1], [2, 0, 3]]), V5
    ),
    "from_nested_value_rowids": row(
        lambda m, v: RT(m).from_nested_value_rowids(v, [[0, 0, 1], [0, 0, 2, 2, 2]]),
        V5,
    ),
    "from_row_splits_inner_dims": row(lambda m, v: rs(m, v), V5x2),
    "from_tensor": row(lambda m, t: RT(m).from_tensor(t), f(3, 4)),
    "from_tensor_lengths": row(
        lambda m, t: RT(m).from_tensor(t, lengths=[1, 0, 4]), f(3, 4)
    ),
    "from_tensor_padding": row(
        lambda m, t: RT(m).from_tensor(t, padding=0.0),
        np.array([[1, 2, 0, 0], [0, 0, 0, 0], [3, 0, 4, 0]], F32),
    ),
    "from_tensor_padding_inner": row(
        lambda m, t: RT(m).from_tensor(t, padding=[0.0, 0.0]),
        np.array([[[1, 2], [0, 0]], [[0, 1], [3, 0]]], F32),
    ),
    "from_tensor_ragged_rank_2": row(
        lambda m, t: RT(m).from_tensor(t, ragged_rank=2), f(2, 3, 4)
    ),
    "from_sparse": row(
        lambda m, v: RT(m).from_sparse(
            m.SparseTensor([[0, 0], [0, 1], [2, 0]], v, [4, 5])
        ),
        f(3),
    ),
    # -- constant
    "constant_int": row(lambda m: G(m).constant(PY)),
    "constant_float": row(lambda m: G(m).constant([[1.0, 2], [3]])),
    "constant_dtype": row(lambda m: G(m).constant(PY, dtype=m.float64)),
    "constant_nested": row(lambda m: G(m).constant([[[1, 2], [3]], [], [[4]]])),
    "constant_inner_shape": row(
        lambda m: G(m).constant([[[1, 2], [3, 4]], [[5, 6]]], inner_shape=(2,))
    ),
    "constant_ragged_rank_1": row(
        lambda m: G(m).constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)
    ),
    "constant_int32_splits": row(lambda m: G(m).constant(PY, row_splits_dtype=m.int32)),
    "constant_empty_rows": row(lambda m: G(m).constant([[], []])),
    "constant_flat_is_tensor": row(lambda m: G(m).constant([1, 2, 3])),
    # -- structure
    "values": row(lambda m, v: nested(m, v).values, V5),
    "flat_values": row(lambda m, v: nested(m, v).flat_values, V5),
    "nested_row_splits": row(lambda m, v: nested(m, v).nested_row_splits, V5),
    "row_lengths": row(lambda m, v: rs(m, v).row_lengths(), V5),
    "row_lengths_axis2": row(lambda m, v: nested(m, v).row_lengths(axis=2), V5),
    "nrows": row(lambda m, v: rs(m, v).nrows(), V5),
    "nrows_out_type": row(lambda m, v: rs(m, v).nrows(out_type=m.int32), V5),
    "value_rowids": row(lambda m, v: rs(m, v).value_rowids(), V5),
    "row_starts_limits": row(
        lambda m, v: (rs(m, v).row_starts(), rs(m, v).row_limits()), V5
    ),
    "nested_row_lengths": row(lambda m, v: nested(m, v).nested_row_lengths(), V5),
    "nested_value_rowids": row(lambda m, v: nested(m, v).nested_value_rowids(), V5),
    "bounding_shape": row(lambda m, v: nested(m, v).bounding_shape(), V5),
    "with_values": row(lambda m, v, w: rs(m, v).with_values(w), V5, V5x2),
    "with_flat_values": row(lambda m, v, w: nested(m, v).with_flat_values(w), V5, V5),
    "with_row_splits_dtype": row(
        lambda m, v: nested(m, v).with_row_splits_dtype(m.int32), V5
    ),
    "merge_dims_0_1": row(lambda m, v: nested(m, v).merge_dims(0, 1), V5),
    "merge_dims_1_2": row(lambda m, v: nested(m, v).merge_dims(1, 2), V5),
    "merge_dims_all": row(lambda m, v: rs(m, v).merge_dims(0, -1), V5x2),
    # -- conversions
    "to_tensor": row(lambda m, v: rs(m, v).to_tensor(), V5),
    "to_tensor_default": row(
        lambda m, v: rs(m, v).to_tensor(default_value=-1.0), V5, grad=False
    ),
    "to_tensor_default_grad": row(
        lambda m, v, d: rs(m, v).to_tensor(default_value=d), V5, np.float32(2.0)
    ),
    "to_tensor_shape_cut": row(lambda m, v: rs(m, v).to_tensor(shape=[2, 1]), V5),
    "to_tensor_shape_pad": row(
        lambda m, v: rs(m, v).to_tensor(shape=[4, 5]), V5, grad=False
    ),
    "to_tensor_shape_none": row(lambda m, v: rs(m, v).to_tensor(shape=[None, 4]), V5),
    "to_tensor_nested": row(lambda m, v: nested(m, v).to_tensor(), V5),
    "to_tensor_inner_dims": row(lambda m, v: rs(m, v).to_tensor(), V5x2),
    "to_sparse": row(lambda m, v: rs(m, v).to_sparse(), V5),
    "to_sparse_nested": row(lambda m, v: nested(m, v).to_sparse(), V5),
    "to_sparse_inner_dims": row(lambda m, v: rs(m, v).to_sparse(), V5x2),
    # -- indexing
    "getitem_row": row(lambda m, v: rs(m, v)[2], V5),
    "getitem_negative_row": row(lambda m, v: rs(m, v)[-3], V5),
    "getitem_element": row(lambda m, v: rs(m, v)[2, 1], V5),
    "getitem_rows": row(lambda m, v: rs(m, v)[1:], V5),
    "getitem_rows_step": row(lambda m, v: rs(m, v)[::2], V5),
    "getitem_cut_rows": row(lambda m, v: rs(m, v)[:, :2], V5),
    "getitem_drop_first": row(lambda m, v: rs(m, v)[:, 1:], V5),
    "getitem_inner_dim": row(lambda m, v: rs(m, v)[:, :, 1], V5x2),
    "getitem_nested_row": row(lambda m, v: nested(m, v)[0], V5),
    "getitem_nested_cut": row(lambda m, v: nested(m, v)[:, :, 1:], V5),
    # -- element-wise
    "add_scalar": row(lambda m, v: rs(m, v) + 1.0, V5),
    "radd_scalar": row(lambda m, v: 2.0 + rs(m, v), V5),
    "mul_ragged": row(lambda m, v, w: rs(m, v) * rs(m, w), V5, V5),
    "sub_ragged": row(lambda m, v, w: rs(m, v) - rs(m, w), V5, V5),
    "truediv": row(lambda m, v: rs(m, v) / 4.0, V5),
    "rtruediv": row(lambda m, v: 1.0 / (rs(m, v) * rs(m, v) + 1.0), V5),
    "truediv_int": row(lambda m: G(m).constant(PY) / 2),
    "floordiv_mod_int": row(lambda m: (G(m).constant(PY) // 2, G(m).constant(PY) % 2)),
    "pow": row(lambda m, v: rs(m, v) ** 2.0, V5),
    "neg_abs": row(lambda m, v: (-rs(m, v), abs(rs(m, v))), V5),
    "compare": row(lambda m, v: (rs(m, v) < 0.0, rs(m, v) >= 0.5), V5),
    "equal_ragged": row(lambda m, v: rs(m, v) == rs(m, v), V5),
    "logical": row(
        lambda m, v: (rs(m, v) > 0.0) & (rs(m, v) < 1.0) | ~(rs(m, v) > 0.0), V5
    ),
    "add_dense_per_row": row(lambda m, v, d: rs(m, v) + d, V5, f(3, 1)),
    "mul_dense_inner": row(lambda m, v, d: rs(m, v) * d, V5x2, f(2)),
    "add_dense_size_1": row(lambda m, v, d: rs(m, v) + d, V5, f(1)),
    "add_dense_row_of_one": row(lambda m, v, d: rs(m, v) - d, V5, f(1, 1)),
    "nested_mul": row(lambda m, v: nested(m, v) * 3.0, V5),
    # -- reductions (TF: tf.reduce_*; jaxtape: jaxtape.ragged.reduce_*)
    "reduce_sum_rows": row(lambda m, v: RED(m, "reduce_sum")(rs(m, v), axis=1), V5),
    "reduce_sum_columns": row(lambda m, v: RED(m, "reduce_sum")(rs(m, v), axis=0), V5),
    "reduce_sum_all": row(lambda m, v: RED(m, "reduce_sum")(rs(m, v)), V5),
    "reduce_sum_keepdims": row(
        lambda m, v: RED(m, "reduce_sum")(rs(m, v), axis=1, keepdims=True), V5
    ),
    "reduce_sum_inner": row(lambda m, v: RED(m, "reduce_sum")(rs(m, v), axis=2), V5x2),
    "reduce_sum_axes": row(
        lambda m, v: RED(m, "reduce_sum")(rs(m, v), axis=[1, 2]), V5x2
    ),
    "reduce_sum_nested_inner": row(
        lambda m, v: RED(m, "reduce_sum")(nested(m, v), axis=2), V5
    ),
    "reduce_mean_rows": row(lambda m, v: RED(m, "reduce_mean")(rs(m, v), axis=1), V5),
    "reduce_mean_columns": row(
        lambda m, v: RED(m, "reduce_mean")(rs(m, v), axis=0), V5
    ),
    "reduce_mean_all": row(lambda m, v: RED(m, "reduce_mean")(rs(m, v)), V5),
    "reduce_mean_int": row(
        lambda m: RED(m, "reduce_mean")(G(m).constant(PY), axis=1), grad=False
    ),
    "reduce_max_rows": row(lambda m, v: RED(m, "reduce_max")(rs(m, v), axis=1), V5),
    "reduce_max_columns": row(lambda m, v: RED(m, "reduce_max")(rs(m, v), axis=0), V5),
    "reduce_min_rows": row(lambda m, v: RED(m, "reduce_min")(rs(m, v), axis=1), V5),
    "reduce_max_int_rows": row(
        lambda m: RED(m, "reduce_max")(G(m).constant(PY), axis=1)
    ),
    "reduce_prod_rows": row(lambda m, v: RED(m, "reduce_prod")(rs(m, v), axis=1), V5),
    # -- tf.ragged functions
    "map_flat_values_exp": row(
        lambda m, v: G(m).map_flat_values(m.math.exp, rs(m, v)), V5
    ),
    "map_flat_values_two": row(
        lambda m, v, w: G(m).map_flat_values(m.add, rs(m, v), rs(m, w)), V5, V5
    ),
    "map_flat_values_kwargs": row(
        lambda m, v: G(m).map_flat_values(m.multiply, x=rs(m, v), y=2.0), V5
    ),
    "map_flat_values_dense": row(
        lambda m, v: G(m).map_flat_values(m.math.square, v), V5
    ),
    "range": row(lambda m: G(m).range([1, 2], [4, 5])),
    "range_limits_only": row(lambda m: G(m).range([3, 0, 5])),
    "range_float_deltas": row(lambda m: G(m).range([0.0, 1.0], [2.0, 2.0], 0.5)),
    "range_negative_delta": row(lambda m: G(m).range(5, [0, 2], -2)),
    "range_mixed_dtypes": row(lambda m: G(m).range([1, 2], [4.0, 5.0])),
    "range_dtype_int32_splits": row(
        lambda m: G(m).range([2, 3], dtype=m.int64, row_splits_dtype=m.int32)
    ),
    "row_splits_to_segment_ids": row(
        lambda m: G(m).row_splits_to_segment_ids([0, 2, 3, 3, 6])
    ),
    "row_splits_to_segment_ids_int32": row(
        lambda m: G(m).row_splits_to_segment_ids(m.constant([0, 2, 3], m.int32))
    ),
    "segment_ids_to_row_splits": row(
        lambda m: G(m).segment_ids_to_row_splits([0, 0, 1, 3])
    ),
    "segment_ids_to_row_splits_num": row(
        lambda m: G(m).segment_ids_to_row_splits(m.constant([0, 0, 1]), num_segments=4)
    ),
    "stack_axis0": row(lambda m, v, w: G(m).stack([rs(m, v), rs(m, w)]), V5, V5),
    "stack_axis1": row(
        lambda m, v, w: G(m).stack([rs(m, v), rs(m, w)], axis=1), V5, V5
    ),
    "stack_dense_axis0": row(lambda m, a, b: G(m).stack([a, b]), f(2, 3), f(2, 3)),
    "stack_vectors": row(lambda m, a, b: G(m).stack([a, b]), f(2), f(3)),
    "stack_mixed": row(lambda m, v, d: G(m).stack([rs(m, v), d]), V5, f(2, 2)),
    "stack_dynamic_partitions": row(
        lambda m, v: G(m).stack_dynamic_partitions(v, [2, 0, 2, 1, 0], 3), V5
    ),
    "stack_dynamic_partitions_empty_part": row(
        lambda m, v: G(m).stack_dynamic_partitions(v, [3, 0, 3, 0, 0], 4), V5x2
    ),
    "stack_dynamic_partitions_ragged": row(
        lambda m, v: G(m).stack_dynamic_partitions(rs(m, v), [1, 0, 1], 2), V5
    ),
    "boolean_mask_dense_2d": row(
        lambda m, d: G(m).boolean_mask(d, [[True, False, True], [False] * 3]), f(2, 3)
    ),
    "boolean_mask_rows": row(
        lambda m, v: G(m).boolean_mask(rs(m, v), [True, False, True]), V5
    ),
    "boolean_mask_ragged": row(
        lambda m, v: G(m).boolean_mask(rs(m, v), rs(m, v) > 0.0), V5
    ),
    "boolean_mask_vector": row(
        lambda m, d: G(m).boolean_mask(d, [True, False, True]), f(3)
    ),
    "boolean_mask_nested": row(
        lambda m, v: G(m).boolean_mask(nested(m, v), nested(m, v) < 0.5), V5
    ),
    # -- inside jaxtape.function (sizes static, contents traced)
    "compiled_elementwise": row(
        lambda m, v, w: rs(m, v) * rs(m, w) + 1.0, V5, V5, compiled=True
    ),
    "compiled_reduce_rows": row(
        lambda m, v: RED(m, "reduce_sum")(rs(m, v) * 2.0, axis=1), V5, compiled=True
    ),
    "compiled_reduce_mean_max": row(
        lambda m, v: (
            RED(m, "reduce_mean")(rs(m, v), axis=1),
            RED(m, "reduce_max")(rs(m, v), axis=1),
        ),
        V5,
        compiled=True,
    ),
    "compiled_to_tensor_shape": row(
        lambda m, v: rs(m, v).to_tensor(shape=[3, 4]), V5, compiled=True
    ),
    "compiled_from_tensor_round_trip": row(
        lambda m, t: RT(m).from_tensor(t).to_tensor(), f(3, 4), compiled=True
    ),
    "compiled_row_structure": row(
        lambda m, v: (rs(m, v).row_lengths(), rs(m, v).value_rowids()),
        V5,
        compiled=True,
    ),
    "compiled_from_row_lengths": row(
        lambda m, v: RT(m).from_row_lengths(v, [2, 0, 3]).row_splits, V5, compiled=True
    ),
    "compiled_map_flat_values": row(
        lambda m, v: G(m).map_flat_values(m.math.tanh, nested(m, v)), V5, compiled=True
    ),
    "compiled_stack_dynamic_partitions": row(
        lambda m, v: G(m).stack_dynamic_partitions(v, [1, 0, 1, 1, 0], 2),
        V5,
        compiled=True,
    ),
}


def _weights(n: int) -> np.ndarray:
    return np.cos(np.arange(n) + 0.5)


def _float_parts(m, out):
    if isinstance(out, (list, tuple)):
        return [p for o in out for p in _float_parts(m, o)]
    if isinstance(out, m.RaggedTensor):
        out = out.flat_values
    elif isinstance(out, m.SparseTensor):
        out = out.values
    return [out] if out.dtype.is_floating else []


def _loss(m, out):
    """`sum(flat_values * w)` over the float outputs (None when there are none)."""
    parts = []
    for t in _float_parts(m, out):
        n = int(np.prod(t.shape))
        w = m.constant(_weights(n).astype(t.dtype.as_numpy_dtype))
        parts.append(m.reduce_sum(m.reshape(t, [-1]) * w))
    return m.add_n(parts) if parts else None


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
    grads = tape.gradient(loss, xs) if r.grad and loss is not None else []
    return _plain(m, out), [
        None if g is None else m.convert_to_tensor(g).numpy() for g in grads
    ]


def _plain(m, out):
    """Outputs as nested lists of NumPy arrays (and shapes as lists)."""
    if isinstance(out, (list, tuple)):
        return [_plain(m, o) for o in out]
    if isinstance(out, m.RaggedTensor):
        return [
            np.asarray(list(out.shape), object),
            out.flat_values.numpy(),
            *[s.numpy() for s in out.nested_row_splits],
        ]
    if isinstance(out, m.SparseTensor):
        return [out.indices.numpy(), out.values.numpy(), out.dense_shape.numpy()]
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
    if want.dtype == object:  # a RaggedTensor's shape (None: a ragged dimension)
        assert got.tolist() == want.tolist(), f"{what}: {got} vs {want}"
        return
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("name", list(ROWS))
def test_ragged_op_and_gradient_match_tensorflow(name, tf):
    r = ROWS[name]
    want, want_grads = _run(tf, r)
    got, got_grads = _run(jaxtape, r)
    _same(got, want, f"{name} output")
    _same(got_grads, want_grads, f"{name} gradients")


ERRORS: dict[str, Callable] = {
    "splits_not_starting_at_zero": lambda m: rs(m, V5, [1, 2, 2, 5]),
    "splits_not_ending_at_nvals": lambda m: rs(m, V5, [0, 2, 2, 4]),
    "splits_decreasing": lambda m: rs(m, V5, [0, 3, 2, 5]),
    "splits_float": lambda m: rs(m, V5, m.constant([0.0, 5.0])),
    "splits_rank_2": lambda m: rs(m, V5, [[0, 5]]),
    "row_lengths_sum": lambda m: m.RaggedTensor.from_row_lengths(V5, [1, 1]),
    "value_rowids_unsorted": lambda m: m.RaggedTensor.from_value_rowids(
        V5, [1, 0, 0, 0, 0]
    ),
    "private_constructor": lambda m: m.RaggedTensor(V5, SPLITS),
    "constant_mixed_depth": lambda m: m.ragged.constant([[1, [2]]]),
    "constant_negative_ragged_rank": lambda m: m.ragged.constant(PY, ragged_rank=-1),
    "constant_inner_shape_mismatch": lambda m: m.ragged.constant(
        [[[1, 2], [3]]], ragged_rank=1
    ),
    "add_different_splits": lambda m: rs(m, V5) + rs(m, V5, [0, 1, 2, 5]),
    "index_ragged_dimension": lambda m: rs(m, V5)[:, 0],
    "range_zero_delta": lambda m: m.ragged.range([1, 2], [4, 5], 0),
    "partition_out_of_range": lambda m: m.ragged.stack_dynamic_partitions(
        V5, [0, 5, 1, 0, 0], 3
    ),
    "from_tensor_lengths_and_padding": lambda m: m.RaggedTensor.from_tensor(
        f(2, 2), lengths=[1, 1], padding=0.0
    ),
    "from_tensor_rank_1": lambda m: m.RaggedTensor.from_tensor(V5),
    "from_sparse_not_ragged_right": lambda m: m.RaggedTensor.from_sparse(
        m.SparseTensor([[0, 1]], [1.0], [2, 2])
    ),
    "map_flat_values_changes_size": lambda m: m.ragged.map_flat_values(
        lambda x: x[:2], rs(m, V5)
    ),
    "bool_of_ragged": lambda m: bool(rs(m, V5)),
    "row_out_of_range": lambda m: rs(m, V5)[3],
    "too_many_indices": lambda m: rs(m, V5)[2, 1, 0],
    "dense_against_ragged_dimension": lambda m: rs(m, V5) + m.constant([1.0, 2.0]),
    "int_ragged_times_float": lambda m: m.ragged.constant(PY) * 2.5,
    "row_lengths_float": lambda m: m.RaggedTensor.from_row_lengths(V5, [2.5, 2.5]),
    "spec_without_rank": lambda m: m.RaggedTensorSpec(),
    "no_len": lambda m: len(rs(m, V5)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_input_raises_tensorflows_error_type(name, tf):
    assert_raises_like_tf(tf, ERRORS[name])


REPRS = {
    "int": lambda m: m.ragged.constant(PY),
    "float": lambda m: m.ragged.constant([[1.5, 2.0], [3.25]]),
    "nested": lambda m: m.ragged.constant([[[1, 2], [3]], [[4]]]),
    "inner_dims": lambda m: m.ragged.constant(
        [[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1
    ),
    "uniform_rows": lambda m: m.ragged.constant([[1, 2], [3, 4]]),
    "bool": lambda m: m.ragged.constant([[True], [False, True]]),
    "no_rows": lambda m: m.RaggedTensor.from_row_splits(m.zeros([0]), [0]),
}


@pytest.mark.parametrize("name", list(REPRS))
def test_repr_numpy_and_to_list_match_tensorflow(name, tf):
    got, want = REPRS[name](jaxtape), REPRS[name](tf)
    assert repr(got) == repr(want).replace("tf.RaggedTensor", "jaxtape.RaggedTensor")
    assert str(got) == str(want).replace("tf.RaggedTensor", "jaxtape.RaggedTensor")
    assert got.to_list() == want.to_list()
    g, w = got.numpy(), want.numpy()
    assert g.dtype == w.dtype and g.shape == w.shape
    assert repr(g) == repr(w)


def test_spec_and_attributes_match_tensorflow(tf):
    for make in (lambda m: nested(m, V5), lambda m: rs(m, V5x2)):
        got, want = make(jaxtape), make(tf)
        assert got.shape == want.shape and got.ragged_rank == want.ragged_rank
        assert got.dtype.name == want.dtype.name
        assert got.row_splits.dtype.name == want.row_splits.dtype.name
        spec = jaxtape.RaggedTensorSpec.from_value(got)
        assert repr(spec) == repr(tf.RaggedTensorSpec.from_value(want)).replace(
            "tf.", "jaxtape."
        )
        assert spec.is_compatible_with(got)
    spec = jaxtape.RaggedTensorSpec([2, None], jaxtape.int32)
    want = tf.RaggedTensorSpec([2, None], tf.int32)
    assert repr(spec) == repr(want).replace("tf.", "jaxtape.")
    assert (spec.ragged_rank, spec.row_splits_dtype.name) == (1, "int64")
    assert jaxtape.ragged.range is not range
    assert [r.numpy().tolist() for r in rs(jaxtape, V5)] == [
        r.numpy().tolist() for r in rs(tf, V5)
    ]


def test_gradient_through_a_variable_matches_tensorflow(tf):
    def run(m):
        w = m.Variable(V5)
        with m.GradientTape() as tape:
            rt = m.RaggedTensor.from_row_splits(w * 2.0, SPLITS)
            y = RED(m, "reduce_sum")(rt * rt.with_flat_values(w + 0.0))
            y += m.reduce_sum(
                rt.to_tensor(default_value=1.0) * _weights(9).reshape(3, 3)
            )
        return tape.gradient(y, w).numpy()

    np.testing.assert_allclose(run(jaxtape), run(tf), rtol=1e-5)


def test_ragged_tensor_is_a_function_argument_and_output():
    traces = []

    @jaxtape.function
    def double(rt):
        traces.append(None)
        return rt * 2.0, rt.row_lengths()

    out, lengths = double(rs(jaxtape, V5))
    double(rs(jaxtape, V5 + 1.0, [0, 1, 4, 5]))  # same sizes: no retrace
    assert isinstance(out, jaxtape.RaggedTensor) and out.shape == (3, None)
    np.testing.assert_allclose(out.flat_values.numpy(), V5 * 2.0, rtol=1e-6)
    assert lengths.numpy().tolist() == [2, 0, 3]
    assert len(traces) == 1
    double(rs(jaxtape, V6, [0, 6]))  # other sizes: a new trace
    assert len(traces) == 2


def test_bad_splits_inside_function_raise_invalid_argument():
    @jaxtape.function
    def lengths(v, s):
        return jaxtape.RaggedTensor.from_row_splits(v, s).row_lengths()

    assert lengths(V5, SPLITS).numpy().tolist() == [2, 0, 3]
    with pytest.raises(jaxtape.errors.InvalidArgumentError, match="zero"):
        lengths(V5, np.array([1, 2, 2, 5], I64))


def test_data_dependent_size_inside_function_says_what_to_do():
    @jaxtape.function
    def dense(v, s):
        return jaxtape.RaggedTensor.from_row_splits(v, s).to_tensor()

    with pytest.raises(NotImplementedError, match="to_tensor"):
        dense(V5, SPLITS)


def test_cross_is_not_implemented():
    x = jaxtape.ragged.constant([[1], [2]])
    with pytest.raises(NotImplementedError, match="string"):
        jaxtape.ragged.cross([x, x])
    with pytest.raises(NotImplementedError, match="cross_hashed"):
        jaxtape.ragged.cross_hashed([x, x], num_buckets=10)
