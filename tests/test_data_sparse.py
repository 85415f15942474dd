"""SparseTensor elements in tf.data: each pipeline runs on real tf.data and on
jaxtape.data with the same inputs; elements (indices, values, dense shapes),
cardinality, element_spec and `as_numpy_iterator` must match."""

import numpy as np
import pytest

import jaxtape

_D = lambda m: m.data.Dataset  # noqa: E731


def _sp(m):
    return m.SparseTensor(
        [[0, 0], [1, 2], [2, 1], [3, 3]], [1.0, 2.0, 3.0, 4.0], [4, 5]
    )


def _examples(m):
    """Serialized Examples: a VarLen int64 feature of 1, 3, 0, 2 values (the first
    serializes to bytes ending in NUL) and a fixed-length float one."""

    def one(k):
        feature = {
            "v": m.train.Feature(int64_list=m.train.Int64List(value=list(range(k)))),
            "x": m.train.Feature(float_list=m.train.FloatList(value=[k / 2])),
        }
        example = m.train.Example(features=m.train.Features(feature=feature))
        return example.SerializeToString()

    return [one(k) for k in (1, 3, 0, 2)]


def _features(m):
    return {
        "v": m.io.VarLenFeature(m.int64),
        "x": m.io.FixedLenFeature([1], m.float32),
    }


def _varying(m):
    """SparseTensors of dense shapes [2], [3], [4] made by `map`."""
    return (
        _D(m)
        .range(1, 4)
        .map(
            lambda n: m.SparseTensor(
                m.reshape(m.range(n), [-1, 1]),
                m.cast(m.range(n), m.float32) + 1,
                [n + 1],
            )
        )
    )


PIPELINES = {
    "slices": lambda m: _D(m).from_tensor_slices(_sp(m)),
    "slices_batch": lambda m: _D(m).from_tensor_slices(_sp(m)).batch(3),
    "slices_batch_drop": lambda m: (
        _D(m).from_tensor_slices(_sp(m)).batch(3, drop_remainder=True)
    ),
    "slices_batch_unbatch": lambda m: (
        _D(m).from_tensor_slices(_sp(m)).batch(3).unbatch()
    ),
    "slices_with_dense": lambda m: _D(m).from_tensor_slices(
        {"s": _sp(m), "i": np.arange(4)}
    ),
    "from_tensors_repeat_batch": lambda m: (
        _D(m).from_tensors(_sp(m)).repeat(3).batch(2)
    ),
    "map_varying_shapes_batch": lambda m: _varying(m).batch(2),
    "map_batch_unbatch": lambda m: _varying(m).batch(2).unbatch(),
    "sparse_into_map": lambda m: (
        _D(m).from_tensor_slices(_sp(m)).map(lambda s: m.sparse.to_dense(s) * 2)
    ),
    "filter_take_skip": lambda m: (
        _D(m)
        .from_tensor_slices(_sp(m))
        .filter(lambda s: m.size(s.values) > 0)
        .skip(1)
        .take(2)
    ),
    "zip_concatenate": lambda m: _D(m).zip(
        (_varying(m).concatenate(_varying(m)), _D(m).range(6))
    ),
    "prefetch": lambda m: _D(m).from_tensor_slices(_sp(m)).batch(2).prefetch(2),
    "from_generator_signature": lambda m: _D(m).from_generator(
        lambda: (m.SparseTensor([[i]], [i * 1.5], [i + 1]) for i in range(3)),
        output_signature=(m.SparseTensorSpec([None], m.float32)),
    ),
    "parse_single_example": lambda m: (
        _D(m)
        .from_tensor_slices(_examples(m))
        .map(lambda s: m.io.parse_single_example(s, _features(m)))
    ),
    "parse_single_example_batch": lambda m: (
        _D(m)
        .from_tensor_slices(_examples(m))
        .map(lambda s: m.io.parse_single_example(s, _features(m)))
        .batch(3)
    ),
    "parse_example_on_batches": lambda m: (
        _D(m)
        .from_tensor_slices(_examples(m))
        .batch(3)
        .map(lambda s: m.io.parse_example(s, _features(m)))
    ),
    "parse_example_unbatch": lambda m: (
        _D(m)
        .from_tensor_slices(_examples(m))
        .batch(3)
        .map(lambda s: m.io.parse_example(s, _features(m)))
        .unbatch()
    ),
}

# After `map` jaxtape reads the spec off the first element: a dense
# component's shape is the first element's (TF's traced spec has None where
# shapes vary), so only the sparse components' specs are compared there.
DENSE_SPEC_FROM_FIRST = {"parse_example_on_batches"}


def _norm(element):
    if isinstance(element, tuple):
        return tuple(_norm(e) for e in element)
    if isinstance(element, dict):
        return {k: _norm(v) for k, v in element.items()}
    if hasattr(element, "indices") and hasattr(element, "dense_shape"):
        return (
            "sparse",
            type(element).__module__.split(".")[0],
            np.asarray(element.indices).tolist(),
            np.asarray(element.values).dtype.name,
            np.asarray(element.values).tolist(),
            np.asarray(element.dense_shape).tolist(),
        )
    a = np.asarray(element)
    return (a.dtype.name, a.shape, a.tolist())


def _norm_numpy(element):
    if isinstance(element, tuple):
        return tuple(_norm_numpy(e) for e in element)
    if isinstance(element, dict):
        return {k: _norm_numpy(v) for k, v in element.items()}
    return (type(element).__name__, element.dtype.name, np.shape(element),
            np.asarray(element).tolist())  # fmt: skip


def _sparse_specs(spec) -> list:
    if isinstance(spec, tuple):
        return [x for s in spec for x in _sparse_specs(s)]
    if isinstance(spec, dict):
        return [x for k in sorted(spec) for x in _sparse_specs(spec[k])]
    return [spec] if type(spec).__name__ == "SparseTensorSpec" else []


def _spec_text(spec) -> str:
    return repr(spec).replace("tf.", "jaxtape.")


@pytest.mark.parametrize("name", list(PIPELINES))
def test_sparse_pipeline_matches_tf_data(name, tf):
    build = PIPELINES[name]
    want_ds, got_ds = build(tf), build(jaxtape)
    want = [_norm(e) for e in want_ds]
    got = [_norm(e) for e in got_ds]
    want = [_module_swapped(w) for w in want]
    assert got == want
    assert int(got_ds.cardinality()) == int(want_ds.cardinality())
    got_spec, want_spec = got_ds.element_spec, want_ds.element_spec
    if name in DENSE_SPEC_FROM_FIRST:
        got_spec, want_spec = _sparse_specs(got_spec), _sparse_specs(want_spec)
    assert _spec_text(got_spec) == _spec_text(want_spec)
    want_np = [_norm_numpy(e) for e in want_ds.as_numpy_iterator()]
    assert [_norm_numpy(e) for e in got_ds.as_numpy_iterator()] == want_np


def _module_swapped(element):
    """TF's elements with the module of jaxtape's (each yields its own class)."""
    if isinstance(element, tuple) and element and element[0] == "sparse":
        assert element[1] == "tensorflow"
        return (element[0], "jaxtape", *element[2:])
    if isinstance(element, tuple):
        return tuple(_module_swapped(e) for e in element)
    if isinstance(element, dict):
        return {k: _module_swapped(v) for k, v in element.items()}
    return element


def test_iteration_yields_jaxtape_sparse_tensors_for_a_compiled_function(tf):
    want = []
    step = tf.function(lambda s: tf.sparse.reduce_sum(s, axis=1) * 2)
    for e in PIPELINES["parse_example_on_batches"](tf):
        want.append(step(e["v"]).numpy().tolist())
    traces = []

    @jaxtape.function
    def got_step(s):
        traces.append(None)
        return jaxtape.sparse.reduce_sum(s, axis=1) * 2

    got = []
    for e in PIPELINES["parse_example_on_batches"](jaxtape):
        assert isinstance(e["v"], jaxtape.SparseTensor)
        got.append(got_step(e["v"]).numpy().tolist())
    assert got == want
    assert len(traces) == 2  # (one per dense shape: [3, 3] and [1, 2])


def test_from_generator_checks_sparse_signature_as_tf(tf):
    for m in (tf, jaxtape):
        for spec in (
            m.SparseTensorSpec([1], m.float32),
            m.SparseTensorSpec(None, m.int32),
        ):
            ds = _D(m).from_generator(
                lambda m=m: (m.SparseTensor([[0]], [1.0], [k]) for k in (1, 2)),
                output_signature=spec,
            )
            with pytest.raises(m.errors.InvalidArgumentError, match="yielded an"):
                list(ds)


def test_padded_batch_of_sparse_elements_raises_tf_type_error(tf):
    for m in (tf, jaxtape):
        for ds in (_D(m).from_tensor_slices(_sp(m)), _varying(m)):
            with pytest.raises(TypeError, match="only supported for datasets that"):
                ds.padded_batch(2)


def test_batching_sparse_elements_of_different_ranks_raises():
    # (TF's map cannot return two ranks; a concatenation of two pipelines can)
    one = _D(jaxtape).from_tensors(0)
    mixed = one.map(lambda _: jaxtape.sparse.from_dense(jaxtape.ones([2]))).concatenate(
        one.map(lambda _: jaxtape.sparse.from_dense(jaxtape.ones([2, 2])))
    )
    with pytest.raises(jaxtape.errors.InvalidArgumentError, match="ranks"):
        list(mixed.batch(2))


def test_next_inside_compiled_function_reads_sparse_elements(tf):
    def build(m):
        sp = m.SparseTensor(
            [[0, 0], [1, 2], [2, 1], [3, 0]], [1.0, 2.0, 3.0, 4.0], [4, 5]
        )
        return iter(_D(m).from_tensor_slices(sp).batch(2, drop_remainder=True))

    results = {}
    for m in (tf, jaxtape):
        it = build(m)
        step = m.function(lambda: m.sparse.reduce_sum(next(it), axis=1))  # noqa: B023
        results[m.__name__] = [step().numpy().tolist() for _ in range(2)]
        with pytest.raises(m.errors.OutOfRangeError):
            step()
    assert results["jaxtape"] == results["tensorflow"]
