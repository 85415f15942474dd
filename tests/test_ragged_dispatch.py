"""Dense ops given RaggedTensors (TF's ragged dispatch), `nest` with
`expand_composites`, and ragged `tf.data`, against real TF.

The op rows reuse `test_ragged`'s harness: each runs `fn(m, *tensors)` in TF
and in jaxtape on the same NumPy inputs and compares outputs (a RaggedTensor's
shape, flat values and row splits) and the gradients of a weighted sum of the
float outputs; `compiled` rows run the jaxtape side inside `jaxtape.function`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from parity_checks import assert_raises_like_tf
from test_ragged import SPLITS, V5, Row, _run, _same, f, nested, row, rs

import jaxtape

V6x2 = f(6, 2)
COL = f(3, 1)  # one entry per row of `rs`


def rs2(m, v):  # rows of 2, 0 and 4 values of a [6, 2] tensor
    return m.RaggedTensor.from_row_splits(v, [0, 2, 2, 6])


OPS: dict[str, Row] = {
    # -- element-wise: unary, binary (ragged with ragged, scalar, dense), where
    "abs": row(lambda m, v: m.math.abs(rs(m, v)), V5),
    "exp_nested": row(lambda m, v: m.exp(nested(m, v)), V5),
    "relu_inner_dims": row(lambda m, v: m.nn.relu(rs2(m, v)), V6x2),
    "add_scalar": row(lambda m, v: m.add(rs(m, v), 1.5), V5),
    "scalar_add": row(lambda m, v: m.add(2.0, rs(m, v)), V5),
    "add_dense_column": row(lambda m, v, c: m.add(c, rs(m, v)), V5, COL),
    "dense_minus_ragged_operator": row(lambda m, v, c: c - rs(m, v), V5, COL),
    "multiply_ragged_ragged": row(lambda m, v: m.multiply(rs(m, v), rs(m, v)), V5),
    "maximum": row(lambda m, v: m.maximum(rs(m, v), 0.0), V5),
    "cast": row(lambda m, v: m.cast(rs(m, v), m.int32), V5, grad=False),
    "zeros_like": row(lambda m, v: m.zeros_like(rs(m, v)), V5, grad=False),
    "greater": row(lambda m, v: m.greater(rs(m, v), 0.0), V5, grad=False),
    "where": row(
        lambda m, v: m.where(rs(m, v) > 0, rs(m, v), m.zeros_like(rs(m, v))), V5
    ),
    "clip_by_value": row(lambda m, v: m.clip_by_value(rs(m, v), -0.5, 0.5), V5),
    # -- reductions
    "reduce_sum_all": row(lambda m, v: m.reduce_sum(rs(m, v)), V5),
    "reduce_sum_rows": row(lambda m, v: m.reduce_sum(rs(m, v), axis=1), V5),
    "reduce_sum_columns": row(lambda m, v: m.reduce_sum(rs(m, v), axis=0), V5),
    "reduce_mean_rows_keepdims": row(
        lambda m, v: m.math.reduce_mean(rs(m, v), axis=1, keepdims=True), V5
    ),
    "reduce_max_columns": row(lambda m, v: m.reduce_max(rs(m, v), axis=0), V5),
    "reduce_min_inner": row(lambda m, v: m.reduce_min(rs2(m, v), axis=2), V6x2),
    "reduce_prod_rows": row(lambda m, v: m.reduce_prod(rs(m, v), axis=1), V5),
    "reduce_any_all": row(
        lambda m, v: (
            m.reduce_any(rs(m, v) > 0, axis=1),
            m.reduce_all(rs(m, v) > 0, axis=1),
        ),
        V5,
        grad=False,
    ),
    # -- concat, stack
    "concat_rows": row(lambda m, v: m.concat([rs(m, v), rs(m, v) * 2.0], 0), V5),
    "concat_columns": row(lambda m, v: m.concat([rs(m, v), rs(m, v) * 2.0], 1), V5),
    "concat_ragged_and_dense": row(
        lambda m, v, c: m.concat([rs(m, v), c], axis=-1), V5, COL
    ),
    "stack": row(lambda m, v: m.stack([rs(m, v), rs(m, v)], axis=0), V5),
    # -- shape, size, rank
    "shape_size_rank": row(
        lambda m, v: (m.shape(rs(m, v))[0], m.size(rs(m, v)), m.rank(nested(m, v))),
        V5,
        grad=False,
    ),
    "shape_inner_int64": row(
        lambda m, v: m.shape(rs2(m, v), out_type=m.int64)[2], V6x2, grad=False
    ),
    # -- inside jaxtape.function
    "compiled_abs_plus_one": row(
        lambda m, v: m.math.abs(rs(m, v)) + 1.0, V5, compiled=True
    ),
    "compiled_reduce_sum_rows": row(
        lambda m, v: m.reduce_sum(m.square(rs(m, v)), axis=1), V5, compiled=True
    ),
    "compiled_concat_rows": row(
        lambda m, v: m.concat([rs(m, v), rs(m, v)], 0), V5, compiled=True
    ),
}


@pytest.mark.parametrize("name", list(OPS))
def test_dense_op_on_ragged_matches_tensorflow(name, tf):
    r = OPS[name]
    want, want_grads = _run(tf, r)
    got, got_grads = _run(jaxtape, r)
    _same(got, want, f"{name} output")
    _same(got_grads, want_grads, f"{name} gradients")


class _Reflected:
    """An object that only implements the reflected operators."""

    def __rsub__(self, other):
        return "rsub"

    def __radd__(self, other):
        return "radd"

    def __rmul__(self, other):
        return "rmul"


ERRORS: dict[str, Callable] = {
    "ragged_dimension_of_shape": lambda m: m.shape(rs(m, V5))[1],
    "different_splits": lambda m: m.add(rs(m, V5), rs(m, V5, [0, 1, 2, 5])),
    "op_without_ragged_version": lambda m: m.linalg.matrix_transpose(rs(m, V5)),
    "convert_to_tensor": lambda m: m.convert_to_tensor(rs(m, V5)),
    "dense_without_reflected": lambda m: m.constant([1.0]) + object(),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_input_raises_tensorflows_error_type(name, tf):
    assert_raises_like_tf(tf, ERRORS[name])


def test_dense_operator_defers_to_a_reflected_operator(tf):
    for m in (tf, jaxtape):
        x = m.constant([1.0, 2.0])
        assert (x - _Reflected(), x + _Reflected(), x * _Reflected()) == (
            "rsub",
            "radd",
            "rmul",
        )


def test_shape_of_ragged_prints_and_describes_as_tensorflow(tf):
    def describe(m):
        s = m.shape(rs(m, V5))
        return repr(s), s.rank, s.num_row_partitions, s.dtype.name

    assert describe(jaxtape) == describe(tf)


def test_nest_expand_composites_matches_tensorflow(tf):
    def parts(m):
        st = m.SparseTensor([[0, 1], [1, 2]], [3.0, 4.0], [2, 3])
        structure = {"r": nested(m, V5), "s": st, "x": 1}
        flat = m.nest.flatten(structure, expand_composites=True)
        back = m.nest.pack_sequence_as(structure, flat, expand_composites=True)
        doubled = m.nest.map_structure(
            lambda t: t * 2 if t.dtype.is_floating else t,
            structure["r"],
            expand_composites=True,
        )
        return (
            [np.asarray(p) for p in flat],
            back["r"].to_list(),
            m.sparse.to_dense(back["s"]).numpy(),
            doubled.to_list(),
            len(m.nest.flatten(structure)),
        )

    got, want = parts(jaxtape), parts(tf)
    assert len(got[0]) == len(want[0])
    for g, w in zip(got[0], want[0]):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w)
    np.testing.assert_allclose(got[2], want[2])
    assert got[1] == want[1] and got[3] == want[3] and got[4] == want[4]


def test_require_with_nothing_to_check_inside_function(tf):
    # A one-entry SparseTensor: its order check compares zero pairs.
    def dense(m):
        st = m.SparseTensor([[0, 1]], [3.0], [2, 3])
        fn = m.function(lambda s: m.sparse.to_dense(s))
        return fn(st).numpy()

    np.testing.assert_array_equal(dense(jaxtape), dense(tf))


def test_splits_unchanged_by_dispatch():
    rt = rs(jaxtape, V5)
    out = jaxtape.math.abs(rt)
    assert out.row_splits is rt.row_splits
    np.testing.assert_array_equal(out.row_splits.numpy(), SPLITS)


# -- tf.data -----------------------------------------------------------------------
def _ragged_data(m):
    return m.ragged.constant([[1.0, -2.0], [3.0], [], [4.0, 5.0, 6.0]])


DATA: dict[str, Callable] = {
    "slices": lambda m: m.data.Dataset.from_tensor_slices(_ragged_data(m)),
    "slices_batched": lambda m: m.data.Dataset.from_tensor_slices(
        _ragged_data(m)
    ).batch(3),
    "slices_nested_in_dict": lambda m: m.data.Dataset.from_tensor_slices(
        {"a": m.ragged.constant([[[1], [2, 3]], [[4]], []]), "b": [1, 2, 3]}
    ).batch(2),
    "batched_then_unbatched": lambda m: (
        m.data.Dataset.from_tensor_slices(_ragged_data(m)).batch(2).unbatch()
    ),
    "ragged_batch": lambda m: m.data.Dataset.from_tensor_slices(
        _ragged_data(m)
    ).ragged_batch(2, drop_remainder=True, row_splits_dtype=m.int32),
    "ragged_batch_of_fixed_shapes_stays_dense": lambda m: (
        m.data.Dataset.from_tensor_slices(np.arange(6.0).reshape(3, 2)).ragged_batch(2)
    ),
    "dense_to_ragged_batch_after_map": lambda m: (
        m.data.Dataset.range(5)
        .map(lambda x: m.range(x))
        .apply(m.data.experimental.dense_to_ragged_batch(2))
    ),
}


def _elements(m, ds):
    out = []
    for element in ds:
        items = element.values() if isinstance(element, dict) else [element]
        for x in items:
            if isinstance(x, m.RaggedTensor):
                out.append(("ragged", x.to_list(), x.row_splits.dtype.name))
            else:
                out.append(("dense", x.numpy().tolist(), x.dtype.name))
    return out


def _spec_text(spec) -> str:
    return repr(spec).replace("tf.", "jaxtape.")


@pytest.mark.parametrize("name", list(DATA))
def test_dataset_of_ragged_matches_tensorflow(name, tf):
    got_ds, want_ds = DATA[name](jaxtape), DATA[name](tf)
    assert _elements(jaxtape, got_ds) == _elements(tf, want_ds)
    if name != "dense_to_ragged_batch_after_map":  # (jaxtape infers map's spec)
        assert _spec_text(got_ds.element_spec) == _spec_text(want_ds.element_spec)


# -- jaxtape.function(input_signature=[RaggedTensorSpec(...)]) ----------------------
def _ragged_signature_function(m):
    @m.function(input_signature=[m.RaggedTensorSpec([None, None], m.float32, 1)])
    def row_sums(rt):
        return m.reduce_sum(rt * 2.0, axis=1)

    return row_sums


def test_ragged_input_signature_matches_tensorflow(tf):
    def run(m):
        fn = _ragged_signature_function(m)
        a = fn(m.ragged.constant([[1.0, 2.0], [3.0]])).numpy()
        b = fn(m.ragged.constant([[1.0], [], [4.0, 5.0]])).numpy()
        return a.tolist(), b.tolist(), repr(fn.input_signature)

    got, want = run(jaxtape), run(tf)
    assert got[:2] == want[:2]
    assert got[2] == want[2].replace("tf.", "jaxtape.")


@pytest.mark.parametrize(
    "value",
    [
        lambda m: m.ragged.constant([[1, 2]]),
        lambda m: m.constant([1.0]),
        lambda m: m.ragged.constant([[[1.0]]]),
    ],
    ids=["int_values", "dense_tensor", "ragged_rank_2"],
)
def test_ragged_input_signature_refuses_what_tensorflow_refuses(value, tf):
    assert_raises_like_tf(tf, lambda m: _ragged_signature_function(m)(value(m)))
