"""`IndexedSlices` as TF's, and what receives one: the clip functions (TF's
values-norm rules) and every Keras optimizer, whose numbers for an
IndexedSlices gradient with repeated rows differ from the equal dense
gradient's (Keras's TF backend squares slice by slice). Oracle: TF + Keras 3.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxtape as jt

_RNG = np.random.default_rng(0)
W0 = _RNG.normal(size=(5, 3)).astype(np.float32)
VALUES = _RNG.normal(size=(4, 3)).astype(np.float32)
INDICES = np.array([1, 1, 3, 1], np.int32)  # row 1 three times: Keras != dense


def _slices(m, step=0, rank=2):
    values = VALUES if rank == 2 else VALUES[:, 0]
    shape = m.constant([5, 3] if rank == 2 else [5])
    return m.IndexedSlices(m.constant(values * (step + 1)), m.constant(INDICES), shape)


# -- optimizers: (name, kwargs, compiled too) -------------------------------------
ROWS = [
    ("SGD", {}, True),
    ("SGD", {"momentum": 0.9, "nesterov": True}, False),
    ("SGD", {"clipnorm": 0.5}, False),
    ("SGD", {"clipvalue": 0.3}, False),
    ("Adam", {}, True),
    ("Adam", {"amsgrad": True}, False),
    ("Adam", {"clipnorm": 0.5}, True),
    ("Adam", {"global_clipnorm": 0.5}, False),
    ("Adam", {"clipvalue": 0.3}, False),
    ("Adam", {"gradient_accumulation_steps": 2}, True),
    ("Adam", {"use_ema": True, "ema_overwrite_frequency": 2}, False),
    ("AdamW", {"weight_decay": 0.1}, False),
    ("Nadam", {}, False),
    ("Adamax", {}, True),
    ("RMSprop", {"momentum": 0.9, "centered": True}, True),
    ("Adagrad", {}, False),
    ("Adadelta", {}, True),
    (
        "Ftrl",
        {
            "l1_regularization_strength": 0.01,
            "l2_shrinkage_regularization_strength": 0.1,
        },
        False,
    ),  # fmt: skip
    ("Lion", {}, False),
    ("Lamb", {}, False),
    ("Adafactor", {}, True),
    ("LossScaleOptimizer", {}, True),
    ("ScheduleFreeAdamW", {}, True),
    ("Muon", {}, False),
    ("Muon", {"rank": 1}, True),  # (Muon's Adam path)
]


def _optimizer(m, name, kwargs):
    opts = m.keras.optimizers
    if name == "LossScaleOptimizer":
        return opts.LossScaleOptimizer(opts.Adam(learning_rate=0.1))
    return getattr(opts, name)(learning_rate=0.1, **kwargs)


def _three_steps(m, name, kwargs, compiled=False):
    kwargs = dict(kwargs)
    rank = kwargs.pop("rank", 2)
    # (Keras's Muon needs a Keras Variable; the others take TF's too.)
    variable = m.keras.Variable if m.__name__ == "tensorflow" else m.Variable
    var = variable(W0 if rank == 2 else W0[:, 0].copy())
    opt = _optimizer(m, name, kwargs)

    def step(grad):
        opt.apply_gradients([(grad, var)])

    if compiled:
        step = m.function(step)
    for k in range(3):
        step(_slices(m, k, rank))
    return var.numpy(), [np.asarray(v.numpy()) for v in opt.variables]


@pytest.mark.parametrize(
    "name,kwargs,compiled",
    ROWS,
    ids=[f"{n}-{'-'.join(k) or 'default'}" for n, k, _ in ROWS],
)
def test_optimizer_on_indexed_slices_matches_keras(tf, name, kwargs, compiled):
    want, want_slots = _three_steps(tf, name, kwargs)
    runs = [False, True] if compiled else [False]
    for fn in runs:
        got, got_slots = _three_steps(jt, name, kwargs, compiled=fn)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        assert len(got_slots) == len(want_slots)
        for a, b in zip(got_slots, want_slots):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_repeated_rows_differ_from_the_dense_gradient_as_in_keras():
    # The point of the table above: Adam's squares are per slice.
    dense = np.zeros_like(W0)
    np.add.at(dense, INDICES, VALUES)
    outs = []
    for grad in (_slices(jt), jt.constant(dense)):
        var = jt.Variable(W0)
        jt.keras.optimizers.Adam(learning_rate=0.1).apply_gradients([(grad, var)])
        outs.append(var.numpy())
    assert np.abs(outs[0][1] - outs[1][1]).max() > 1e-3
    np.testing.assert_array_equal(outs[0][[0, 2, 4]], outs[1][[0, 2, 4]])


@pytest.mark.parametrize(
    "kwargs,error",
    [({}, "InvalidArgumentError"), ({"loss_scale_factor": 2.0}, "TypeError")],
    ids=["row_out_of_range", "loss_scale_factor"],
)
def test_optimizer_refuses_what_keras_refuses(tf, kwargs, error):
    bad = {"InvalidArgumentError": np.array([0, 7], np.int32)}.get(error)
    for m in (tf, jt):
        var = m.Variable(W0)
        opt = m.keras.optimizers.SGD(learning_rate=0.1, **kwargs)
        idx = INDICES[:2] if bad is None else bad
        grad = m.IndexedSlices(m.constant(VALUES[:2]), m.constant(idx), [5, 3])
        with pytest.raises(Exception) as info:
            opt.apply_gradients([(grad, var)])
        assert type(info.value).__name__ == error
        if error == "TypeError":
            assert "'IndexedSlices' and 'float'" in str(info.value)
    # (TF's scatter has applied the rows before the bad one; jaxtape none.)
    np.testing.assert_array_equal(var.numpy(), W0)


# -- the IndexedSlices value -----------------------------------------------------
def test_str_attributes_and_numpy_conversion_match_tf(tf):
    theirs, ours = _slices(tf), _slices(jt)
    assert str(ours) == str(theirs).replace("tf.Tensor", "jaxtape.Tensor")
    assert repr(ours).startswith("<jaxtape.") and "IndexedSlices object" in repr(ours)
    assert ours.shape == jt.TensorShape([5, 3]) and ours.shape.as_list() == [5, 3]
    assert ours.dtype == jt.float32 and ours.dense_shape.dtype == jt.int32
    assert ours.device == theirs.device
    assert not hasattr(ours, "numpy") and not hasattr(theirs, "numpy")
    a, b = np.asarray(ours), np.asarray(theirs)
    assert (a.shape, a.dtype) == (b.shape, b.dtype) == ((), np.dtype(object))
    neg = -ours
    assert type(neg) is jt.IndexedSlices
    np.testing.assert_array_equal(neg.values.numpy(), -VALUES)
    without = jt.IndexedSlices(jt.ones([2, 3]), jt.constant([0, 1]))
    assert without.dense_shape is None and without.shape.rank is None
    assert "dense_shape" not in str(without)


@pytest.mark.parametrize(
    "fn",
    [
        lambda g: g * 2.0,
        lambda g: 2.0 * g,
        lambda g: g / 2.0,
        lambda g: g + g,
        lambda g: g - 1.0,
        lambda g: g @ g,
    ],
    ids=["mul", "rmul", "div", "add", "sub", "matmul"],
)
def test_python_operators_raise_tfs_type_error(tf, fn):
    messages = []
    for m in (tf, jt):
        with pytest.raises(TypeError) as info:
            fn(_slices(m))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, g: m.convert_to_tensor(g),
        lambda m, g: m.reduce_sum(g, axis=0),
        lambda m, g: m.multiply(g, 2.0),
        lambda m, g: m.norm(g),
        lambda m, g: m.constant(2.0) * g,
        lambda m, g: m.math.unsorted_segment_sum(g, [0, 0, 1, 1, 1], 2),
    ],
    ids=["convert", "reduce_sum", "multiply", "norm", "tensor_times", "segment"],
)
def test_ops_convert_to_the_dense_tensor_as_tf(tf, fn):
    want = fn(tf, _slices(tf))
    got = fn(jt, _slices(jt))
    assert got.dtype.name == want.dtype.name and got.shape == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    compiled = jt.function(lambda g: fn(jt, g))(_slices(jt))
    np.testing.assert_allclose(compiled.numpy(), want.numpy(), rtol=1e-6)


def test_conversion_errors_match_tf(tf):
    for m in (tf, jt):
        no_shape = m.IndexedSlices(m.ones([2, 3]), m.constant([0, 1]))
        with pytest.raises(ValueError, match="without dense_shape"):
            m.convert_to_tensor(no_shape)
        bad = m.IndexedSlices(m.ones([2, 3]), m.constant([0, 7]), m.constant([4, 3]))
        with pytest.raises(m.errors.InvalidArgumentError, match="out of range"):
            m.convert_to_tensor(bad)


def test_nest_pytree_and_function_boundaries(tf):
    ours, theirs = _slices(jt), _slices(tf)
    assert jt.nest.flatten(ours) == [ours]
    parts = jt.nest.flatten(ours, expand_composites=True)
    want = tf.nest.flatten(theirs, expand_composites=True)
    assert [p.numpy().tolist() for p in parts] == [p.numpy().tolist() for p in want]
    back = jt.nest.pack_sequence_as(ours, parts, expand_composites=True)
    assert type(back) is jt.IndexedSlices
    doubled = jax.jit(lambda s: jt.IndexedSlices(s.values * 2, s.indices, [5, 3]))(ours)
    np.testing.assert_allclose(doubled.values.numpy(), 2 * VALUES)
    traces = []

    @jt.function
    def through(s):
        traces.append(None)
        return s

    for k in range(2):
        out = through(_slices(jt, k))
        assert type(out) is jt.IndexedSlices and out.shape.as_list() == [5, 3]
    np.testing.assert_allclose(out.values.numpy(), 2 * VALUES)
    assert len(traces) == 1


# -- clipping -------------------------------------------------------------------
@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.clip_by_norm(_slices(m), 0.5),
        lambda m: m.clip_by_global_norm([_slices(m), m.ones([2])], 0.5)[0][0],
        lambda m: m.clip_by_global_norm([_slices(m), m.ones([2])], 0.5)[1],
        lambda m: m.linalg.global_norm([_slices(m), m.ones([2])]),
    ],
    ids=["clip_by_norm", "clip_by_global_norm", "its_norm", "global_norm"],
)
def test_clip_functions_use_the_values_as_tf(tf, fn):
    want, got = fn(tf), fn(jt)
    if isinstance(want, tf.IndexedSlices):
        assert type(got) is jt.IndexedSlices
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
        want, got = want.values, got.values
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
