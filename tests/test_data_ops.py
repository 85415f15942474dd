"""tf.data transformations: each pipeline runs on real tf.data and on jaxtape.data
with the same inputs; elements (values, dtypes, shapes, nesting, inner datasets),
cardinality and element_spec must match, and bad arguments raise the same
exception types."""

import gzip
import threading
import time

import numpy as np
import pytest

import jaxtape

_D = lambda m: m.data.Dataset  # noqa: E731


def _lengths(m):
    """[1], [2, 2], ... [n]*n as a dataset of int64 vectors of growing length."""
    return _D(m).range(1, 6).map(lambda x: m.fill([x], x))


def _pairs(m):
    return _D(m).zip(
        (_D(m).range(5), _D(m).range(5).map(lambda x: m.cast(x, "float32")))
    )


def _gen():
    for i in range(4):
        yield np.arange(i, dtype=np.float64), i


PIPELINES = {
    # padded_batch
    "padded_batch": lambda m: _lengths(m).padded_batch(2),
    "padded_batch_shapes_values_drop": lambda m: _lengths(m).padded_batch(
        2,
        padded_shapes=[6],
        padding_values=m.constant(-1, m.int64),
        drop_remainder=True,
    ),
    "padded_batch_tuple": lambda m: (
        _lengths(m)
        .map(lambda v: (v, m.size(v)))
        .padded_batch(3, padded_shapes=([None], []))
    ),
    "padded_batch_dict_scalar": lambda m: (
        _D(m).range(5).map(lambda x: {"x": x, "v": m.fill([x, 2], 1.5)}).padded_batch(2)
    ),
    # interleave / flat_map / concatenate / zip
    "interleave": lambda m: (
        _D(m)
        .range(1, 5)
        .interleave(
            lambda x: _D(m).range(x).map(lambda y: y * 10 + x),
            cycle_length=2,
            block_length=2,
        )
    ),  # fmt: skip
    "interleave_parallel": lambda m: (
        _D(m)
        .range(1, 6)
        .interleave(
            lambda x: _D(m).range(x).map(lambda y: y * 10 + x),
            cycle_length=3,
            num_parallel_calls=3,
            deterministic=True,
        )
    ),  # fmt: skip
    "flat_map": lambda m: _D(m).range(4).flat_map(lambda x: _D(m).range(x)),
    "concatenate": lambda m: _D(m).range(3).concatenate(_D(m).range(10, 12)),
    "concatenate_infinite": lambda m: (
        _D(m).range(3).concatenate(_D(m).range(2).repeat()).take(7)
    ),
    "zip_nested": lambda m: _D(m).zip(_D(m).range(3), (_D(m).range(4), _pairs(m))),
    "zip_dict": lambda m: _D(m).zip({"a": _D(m).range(2), "b": _D(m).range(3)}),
    "zip_datasets_kw": lambda m: _D(m).zip(
        datasets=(_D(m).range(2), _D(m).range(3).repeat())
    ),
    "zip_unknown": lambda m: _D(m).zip(
        _D(m).range(3), _D(m).range(4).filter(lambda x: x > 0)
    ),
    # window
    "window_flat": lambda m: (
        _D(m).range(7).window(3, 2, drop_remainder=True).flat_map(lambda w: w.batch(3))
    ),
    "window_stride": lambda m: _D(m).range(8).window(3, 2, 2),
    "window_tuple": lambda m: _pairs(m).window(2),
    "window_dict_drop": lambda m: (
        _D(m).range(5).map(lambda x: {"a": x}).window(2, drop_remainder=True)
    ),
    # sharding, batching
    "shard": lambda m: _D(m).range(10).shard(3, 1),
    "unbatch": lambda m: (
        _D(m).from_tensor_slices(np.arange(12).reshape(6, 2)).batch(4).unbatch()
    ),
    "unbatch_known": lambda m: _D(m).range(10).batch(4, drop_remainder=True).unbatch(),
    "rebatch": lambda m: _D(m).range(10).batch(4).rebatch(3),
    "rebatch_list": lambda m: _D(m).range(10).batch(4).rebatch([2, 3]),
    "rebatch_static": lambda m: (
        _D(m).range(10).batch(4, drop_remainder=True).rebatch(2)
    ),
    "rebatch_drop": lambda m: _D(m).range(10).batch(4).rebatch(3, drop_remainder=True),
    # grouping
    "group_by_window": lambda m: (
        _D(m)
        .range(10)
        .group_by_window(lambda x: x % 3, lambda k, w: w.batch(2), window_size=2)
    ),
    "group_by_window_size_func": lambda m: (
        _D(m)
        .range(12)
        .group_by_window(
            lambda x: x % 2,
            lambda k, w: w.map(lambda v: v + 100 * k).batch(4),
            window_size_func=lambda k: k + 2,
        )
    ),  # fmt: skip
    "bucket_by_sequence_length": lambda m: (
        _D(m)
        .range(1, 8)
        .map(lambda x: m.fill([x], x))
        .bucket_by_sequence_length(lambda x: m.shape(x)[0], [3, 5], [2, 2, 3])
    ),
    "bucket_pad_to_boundary": lambda m: (
        _D(m)
        .range(1, 6)
        .map(lambda x: m.fill([x], x))
        .bucket_by_sequence_length(
            lambda x: m.shape(x)[0],
            [3, 7],
            [2, 2, 2],
            pad_to_bucket_boundary=True,
            padding_values=m.constant(-1, m.int64),
        )
    ),  # fmt: skip
    "bucket_no_padding_drop": lambda m: (
        _D(m)
        .range(1, 9)
        .map(lambda x: m.fill([3], x))
        .bucket_by_sequence_length(
            lambda x: m.cast(x[0] % 2, m.int32),
            [1],
            [2, 3],
            no_padding=True,
            drop_remainder=True,
        )
    ),  # fmt: skip
    # stateful and functional
    "scan": lambda m: (
        _D(m).range(5).scan(m.constant(0, m.int64), lambda s, x: (s + x, s * x))
    ),
    "scan_tuple_state": lambda m: _pairs(m).scan(
        (m.constant(0.0), m.constant(1, m.int64)),
        lambda s, e: ((s[0] + e[1], s[1] * 2), s[0]),
    ),
    "take_while": lambda m: _D(m).range(10).take_while(lambda x: x < 4),
    "unique": lambda m: _D(m).from_tensor_slices([1, 2, 1, 3, 2, 5]).unique(),
    "enumerate": lambda m: _pairs(m).enumerate(start=3),
    "skip_repeat_take": lambda m: _D(m).range(5).skip(2).repeat(3).take(7),
    "repeat_count": lambda m: _D(m).range(3).repeat(2),
    "skip_all": lambda m: _D(m).range(3).skip(-1),
    "cache": lambda m: _D(m).range(4).map(lambda x: x * 3).cache(),
    "counter": lambda m: _D(m).counter(5, 2).take(3),
    "counter_int32": lambda m: _D(m).counter(dtype=m.int32).take(2),
    "range_args": lambda m: _D(m).range(2, 10, 3),
    "range_negative_step": lambda m: _D(m).range(5, 0, -2),
    "range_output_type": lambda m: _D(m).range(3, output_type=m.int32),
    "choose_from_datasets": lambda m: _D(m).choose_from_datasets(
        [_D(m).range(3), _D(m).range(10, 14)],
        _D(m).from_tensor_slices(np.array([0, 1, 1, 0, 0, 0, 1])),
    ),
    "choose_not_stop": lambda m: _D(m).choose_from_datasets(
        [_D(m).range(1), _D(m).range(10, 14)],
        _D(m).from_tensor_slices(np.array([0, 0, 1, 0, 1])),
        stop_on_empty_dataset=False,
    ),
    "sample_one_weight": lambda m: _D(m).sample_from_datasets(
        [_D(m).range(4), _D(m).range(10, 14)], weights=[1.0, 0.0], seed=3
    ),
    "apply": lambda m: _D(m).range(6).apply(lambda ds: ds.filter(lambda x: x % 2 == 0)),
    "ignore_errors": lambda m: (
        _D(m)
        .from_tensor_slices([1.0, 2.0, 0.0, 4.0])
        .map(lambda x: m.debugging.check_numerics(1.0 / x, "bad"))
        .ignore_errors()
    ),
    "assert_cardinality": lambda m: (
        _D(m)
        .range(6)
        .filter(lambda x: x < 3)
        .apply(m.data.experimental.assert_cardinality(3))
    ),
    "from_generator_signature": lambda m: _D(m).from_generator(
        _gen,
        output_signature=(m.TensorSpec([None], m.float32), m.TensorSpec([], m.int64)),
    ),
    "from_generator_types_shapes": lambda m: _D(m).from_generator(
        _gen, output_types=(m.float32, m.int32), output_shapes=([None], [])
    ),
    "from_generator_args": lambda m: _D(m).from_generator(
        lambda n: iter(range(int(n))),
        args=(3,),
        output_signature=m.TensorSpec([], m.int64),
    ),
    "experimental_scan_unique": lambda m: (
        _D(m)
        .from_tensor_slices(np.array([3, 3, 1, 2, 1]))
        .apply(m.data.experimental.unique())
        .apply(m.data.experimental.scan(np.int64(0), lambda s, x: (s + x, s)))
    ),
}


# TF reads these element specs off the traced function (static dimensions of
# `fill`, a `batch` inside `flat_map`); jaxtape runs the function on the first
# element (the dtypes and nesting still match, as the elements show).
SPEC_FROM_FIRST_ELEMENT = {
    "padded_batch_dict_scalar",
    "window_flat",
    "interleave",
    "interleave_parallel",
    "flat_map",
    "group_by_window",
    "group_by_window_size_func",
    "bucket_by_sequence_length",
    "bucket_pad_to_boundary",
    "bucket_no_padding_drop",
}


def _norm(element):
    """An element as plain data: nesting, dtype name, shape, values."""
    if isinstance(element, tuple):
        return tuple(_norm(e) for e in element)
    if isinstance(element, dict):
        return {k: _norm(v) for k, v in element.items()}
    if hasattr(element, "element_spec") and hasattr(element, "cardinality"):
        return ("dataset", int(element.cardinality()), [_norm(e) for e in element])
    a = np.asarray(element)
    if a.dtype.kind in "SOU":
        return ("string", a.shape, a.astype(bytes).tolist())
    return (a.dtype.name, a.shape, a.tolist())


def _norm_spec(spec):
    if isinstance(spec, tuple):
        return tuple(_norm_spec(s) for s in spec)
    if isinstance(spec, dict):
        return {k: _norm_spec(v) for k, v in spec.items()}
    if hasattr(spec, "element_spec"):
        return ("DatasetSpec", _norm_spec(spec.element_spec))
    return (list(spec.shape), np.dtype(spec.dtype.as_numpy_dtype if hasattr(
        spec.dtype, "as_numpy_dtype") else spec.dtype.name).name)  # fmt: skip


def _run(ds):
    return int(ds.cardinality()), [_norm(e) for e in ds]


@pytest.mark.parametrize("name", list(PIPELINES))
def test_pipeline_matches_tf_data(name, tf):
    build = PIPELINES[name]
    want_ds, got_ds = build(tf), build(jaxtape)
    want, got = _run(want_ds), _run(got_ds)
    assert got[1] == want[1]
    assert got[0] == want[0], "cardinality"
    if name not in SPEC_FROM_FIRST_ELEMENT:
        assert _norm_spec(got_ds.element_spec) == _norm_spec(want_ds.element_spec)


def test_reduce_get_single_element_and_list_files(tf, tmp_path):
    for m in (tf, jaxtape):
        ds = _pairs(m)
        total = ds.reduce(
            (m.constant(0.0), np.int64(0)), lambda s, e: (s[0] + e[1], s[1] + e[0])
        )
        assert [_norm(t) for t in total] == [("float32", (), 10.0), ("int64", (), 10)]
        assert _norm(_D(m).from_tensors([1, 2]).get_single_element()) == (
            "int32",
            (2,),
            [1, 2],
        )
    for name in ("b.txt", "a.txt", "c.csv"):
        (tmp_path / name).write_text("x")
    pattern = str(tmp_path / "*.txt")
    want = [_norm(e) for e in tf.data.Dataset.list_files(pattern, shuffle=False)]
    got_ds = jaxtape.data.Dataset.list_files(pattern, shuffle=False)
    assert [_norm(e) for e in got_ds] == want and len(want) == 2
    assert int(got_ds.cardinality()) == int(
        tf.data.Dataset.list_files(pattern).cardinality()
    )
    shuffled = jaxtape.data.Dataset.list_files(pattern, seed=1)
    assert sorted(shuffled.as_numpy_iterator()) == [  # bytes, as TF gives
        str(tmp_path / n).encode() for n in ("a.txt", "b.txt")
    ]


def test_text_line_dataset_plain_gzip_and_parallel(tf, tmp_path):
    plain, zipped = tmp_path / "a.txt", tmp_path / "b.txt.gz"
    plain.write_bytes(b"first\nsecond\r\n\nlast")
    with gzip.open(zipped, "wb") as f:
        f.write(b"one\ntwo\nthree\n")
    cases = [
        (lambda m: m.data.TextLineDataset(str(plain))),
        (lambda m: m.data.TextLineDataset([str(zipped)], compression_type="GZIP")),
        (
            lambda m: m.data.TextLineDataset(
                m.data.Dataset.from_tensor_slices([str(plain), str(plain)])
            )
        ),  # fmt: skip
    ]
    for build in cases:
        assert _run(build(jaxtape)) == _run(build(tf))
    parallel = lambda m, path=str(plain): m.data.TextLineDataset(  # noqa: E731
        [path, str(tmp_path / "c.txt")], num_parallel_reads=2
    )
    (tmp_path / "c.txt").write_text("c1\nc2\nc3\nc4\nc5\n")
    assert _run(parallel(jaxtape)) == _run(parallel(tf))


def _raises(build, tf):
    """The exception type names raised by TF and jaxtape (building + iterating)."""
    names = []
    for m in (tf, jaxtape):
        try:
            out = build(m)
            if hasattr(out, "cardinality"):
                list(out)
            names.append(None)
        except Exception as e:  # noqa: BLE001
            names.append(type(e).__name__)
    return names


BAD = {
    "batch_zero": lambda m: _D(m).range(3).padded_batch(0),
    "window_zero": lambda m: _D(m).range(3).window(0),
    "window_shift_zero": lambda m: _D(m).range(3).window(2, 0),
    "shard_index": lambda m: _D(m).range(3).shard(2, 2),
    "concatenate_types": lambda m: (
        _D(m).range(3).concatenate(_D(m).from_tensor_slices([1.0]))
    ),
    "zip_list": lambda m: _D(m).zip(_D(m).range(2), [1]),
    "zip_nothing": lambda m: _D(m).zip(),
    "unique_float": lambda m: _D(m).from_tensor_slices([1.0]).unique(),
    "single_of_two": lambda m: _D(m).range(2).get_single_element(),
    "single_of_none": lambda m: _D(m).range(0).get_single_element(),
    "apply_not_dataset": lambda m: _D(m).range(2).apply(lambda ds: 3),
    "generator_no_types": lambda m: _D(m).from_generator(_gen),
    "generator_bad_shape": lambda m: _D(m).from_generator(
        lambda: iter([[1, 2, 3]]), output_signature=m.TensorSpec([2], m.int32)
    ),
    "padded_shape_too_small": lambda m: (
        _D(m).from_tensor_slices([[1, 2]]).padded_batch(1, [1])
    ),
    "padding_value_dtype": lambda m: (
        _D(m).from_tensor_slices([[1, 2]]).padded_batch(1, padding_values=1.5)
    ),
    "padding_at_run_time": lambda m: _lengths(m).padded_batch(2, padded_shapes=[2]),
    "unbatch_scalars": lambda m: _D(m).range(3).unbatch(),
    "bucket_sizes": lambda m: (
        _D(m).range(3).bucket_by_sequence_length(lambda x: x, [2], [2])
    ),
    "rebatch_scalars": lambda m: _D(m).range(3).rebatch(2),
    "group_both_sizes": lambda m: (
        _D(m)
        .range(3)
        .group_by_window(
            lambda x: x, lambda k, w: w, window_size=2, window_size_func=lambda k: 2
        )
    ),
    "group_no_size": lambda m: (
        _D(m).range(3).group_by_window(lambda x: x, lambda k, w: w)
    ),
    "assert_cardinality_short": lambda m: (
        _D(m).range(2).apply(m.data.experimental.assert_cardinality(3))
    ),
    "assert_cardinality_long": lambda m: (
        _D(m).range(4).apply(m.data.experimental.assert_cardinality(3))
    ),
    "options_unknown": lambda m: setattr(m.data.Options(), "nope", 1),
    "missing_text_file": lambda m: m.data.TextLineDataset("/nonexistent/jaxtape.txt"),
    "list_files_none": lambda m: _D(m).list_files("/nonexistent/*.jaxtape"),
    "choose_float_choices": lambda m: _D(m).choose_from_datasets(
        [_D(m).range(2)], _D(m).from_tensor_slices([0.0])
    ),
    "sample_no_datasets": lambda m: _D(m).sample_from_datasets([]),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_arguments_raise_like_tf(name, tf):
    want, got = _raises(BAD[name], tf)
    assert want is not None
    assert got == want


def test_options_merge_and_survive_transformations(tf):
    for m in (tf, jaxtape):
        a, b = m.data.Options(), m.data.Options()
        a.deterministic = False
        b.threading.private_threadpool_size = 3
        ds = _D(m).range(3).with_options(a).map(lambda x: x).with_options(b)
        assert ds.options().deterministic is False
        assert ds.options().threading.private_threadpool_size == 3
        assert _D(m).range(2).options().deterministic is None
        policy = m.data.experimental.AutoShardPolicy
        assert ds.options().experimental_distribute.auto_shard_policy == policy.AUTO


def test_constants_and_experimental_names(tf):
    for name in ("AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"):
        assert getattr(jaxtape.data, name) == getattr(tf.data, name)
        assert getattr(jaxtape.data.experimental, name) == getattr(
            tf.data.experimental, name
        )
    ds = jaxtape.data.Dataset.range(3).repeat()
    assert (
        int(jaxtape.data.experimental.cardinality(ds))
        == jaxtape.data.INFINITE_CARDINALITY
    )
    assert callable(jaxtape.data.experimental.dense_to_ragged_batch(2))


def test_random_and_sample_from_datasets_are_seeded():
    D = jaxtape.data.Dataset
    r = D.random(seed=4).take(5)
    a, b = [int(v) for v in r], [int(v) for v in r]
    assert a == b and len(set(a)) == 5 and r.element_spec.dtype == jaxtape.int64
    assert int(D.random().cardinality()) == jaxtape.data.INFINITE_CARDINALITY
    mixed = D.sample_from_datasets(
        [D.range(0, 50), D.range(100, 150)], [0.5, 0.5], seed=2
    )
    values = [int(v) for v in mixed]
    assert sorted(values) == list(range(50)) + list(range(100, 150))  # all, once
    assert values == [int(v) for v in mixed]  # same seed, same order
    low = [v for v in values if v < 100]
    assert low == sorted(low) and values != sorted(values)  # each input in order
    first = [int(v) for v in D.sample_from_datasets(
        [D.range(3), D.range(10, 13)], seed=1, stop_on_empty_dataset=True)]  # fmt: skip
    # It stops at the first pick of an exhausted input (which one, and when,
    # depends on the global seed too): each input in order, one of them whole.
    low, high = [v for v in first if v < 10], [v for v in first if v >= 10]
    assert low == list(range(len(low))) and high == list(range(10, 10 + len(high)))
    assert len(low) == 3 or len(high) == 3
    lengths = [  # (all 6 only when the first 6 picks split 3/3: p = 0.31 per seed)
        len(list(D.sample_from_datasets(
            [D.range(3), D.range(10, 13)], seed=s, stop_on_empty_dataset=True)))
        for s in range(8)
    ]  # fmt: skip
    assert min(lengths) < 6 and len(first) <= 6


def test_parallel_interleave_reads_inputs_on_pool_threads():
    threads = set()
    # Overlap shown without a clock: input 0's read-ahead of its second element
    # and input 1's first read meet at a barrier, which only reads in flight at
    # the same time can pass (read one after the other, it times out).
    meet = threading.Barrier(2, timeout=60)

    def reader(gate):
        def slow(x):
            def gen():
                for i in range(3):
                    threads.add(threading.get_ident())
                    if gate and (int(x), i) in ((0, 1), (1, 0)):
                        meet.wait()
                    time.sleep(0.01)
                    yield np.int64(int(x) * 10 + i)

            return jaxtape.data.Dataset.from_generator(
                gen, output_signature=jaxtape.TensorSpec([], jaxtape.int64)
            )

        return slow

    D = jaxtape.data.Dataset
    serial = [int(v) for v in D.range(4).interleave(reader(False), cycle_length=4)]
    threads.clear()
    parallel = [
        int(v)
        for v in D.range(4).interleave(
            reader(True), cycle_length=4, num_parallel_calls=4
        )
    ]
    assert parallel == serial
    assert not meet.broken
    assert len(threads - {threading.get_ident()}) >= 2


def test_cache_to_a_file_is_read_by_later_datasets(tmp_path):
    calls = []

    def count(x):
        calls.append(int(x))
        return x

    def record(x):  # (the side effect per element: a py_function, as in TF)
        return jaxtape.py_function(count, [x], jaxtape.int64) * 2

    path = str(tmp_path / "cache")
    ds = jaxtape.data.Dataset.range(3).map(record).cache(path)
    assert [int(v) for v in ds] == [0, 2, 4]
    again = jaxtape.data.Dataset.range(3).map(record).cache(path)
    assert [int(v) for v in again] == [0, 2, 4] and calls == [0, 1, 2]


def test_ignore_errors_keeps_going_after_a_failed_map():
    D = jaxtape.data.Dataset

    def parse(x):
        if int(x) % 3 == 1:
            raise ValueError("bad record")
        return x

    for calls in (None, 2):
        ds = D.range(8).map(parse, num_parallel_calls=calls).ignore_errors()
        assert [int(v) for v in ds] == [0, 2, 3, 5, 6]


def test_record_datasets_match_tf(tf, tmp_path):
    records = [b"alpha", b"", b"a longer record \x00\xff"]
    path = str(tmp_path / "r.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for r in records:
            writer.write(r)
    zipped = str(tmp_path / "r.tfrecord.gz")
    options = tf.io.TFRecordOptions(compression_type="GZIP")
    with tf.io.TFRecordWriter(zipped, options) as writer:
        for r in records:
            writer.write(r)
    fixed = tmp_path / "f.bin"
    fixed.write_bytes(b"HH" + bytes(range(12)) + b"F")
    cases = [
        lambda m: m.data.TFRecordDataset(path),
        lambda m: (
            m.data.TFRecordDataset([zipped, path], compression_type="GZIP")
            .take(3)
            .concatenate(m.data.TFRecordDataset(path, num_parallel_reads=2))
        ),
        lambda m: m.data.FixedLengthRecordDataset(
            str(fixed), 4, header_bytes=2, footer_bytes=1
        ),  # fmt: skip
    ]
    for build in cases:
        assert _run(build(jaxtape)) == _run(build(tf))
    corrupt = tmp_path / "bad.tfrecord"
    data = bytearray((tmp_path / "r.tfrecord").read_bytes())
    data[14] ^= 1  # inside the first record's data
    corrupt.write_bytes(bytes(data))
    assert _raises(lambda m: m.data.TFRecordDataset(str(corrupt)), tf) == [
        "DataLossError",
        "DataLossError",
    ]
    assert _raises(lambda m: m.data.FixedLengthRecordDataset(str(fixed), 4), tf) == [
        "InvalidArgumentError",
        "InvalidArgumentError",
    ]


def test_iterator_get_next_and_numpy_iterator(tf):
    for m in (tf, jaxtape):
        it = iter(_D(m).range(2))
        assert isinstance(it, m.data.Iterator)
        assert [int(it.get_next()), int(next(it))] == [0, 1]
        with pytest.raises(m.errors.OutOfRangeError):
            it.get_next()
        assert _norm_spec(it.element_spec) == ([], "int64")
        numpy_it = _D(m).range(2).as_numpy_iterator()
        assert isinstance(numpy_it, m.data.NumpyIterator)
        assert [int(v) for v in numpy_it] == [0, 1]


def test_experimental_at_get_structure_and_random_dataset(tf):
    for m in (tf, jaxtape):
        e = m.data.experimental
        ds = _pairs(m)
        assert _norm(e.at(ds, 3)) == (("int64", (), 3), ("float32", (), 3.0))
        with pytest.raises(m.errors.OutOfRangeError):
            e.at(ds, 7)
        assert _norm_spec(e.get_structure(ds)) == _norm_spec(ds.element_spec)
        assert _norm_spec(e.RandomDataset(seed=1).element_spec) == ([], "int64")


CSV = 'a,b,name,big\n1,2.5,x,3000000000\n3,,"y,z",4\n5,1e3,w,5\n'


def test_csv_dataset_and_make_csv_dataset_match_tf(tf, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(CSV)
    p = str(path)
    cases = [
        lambda m: m.data.experimental.CsvDataset(
            p, [m.int32, [0.5], [""], m.int64], header=True
        ),
        lambda m: m.data.experimental.CsvDataset(
            p, [[0.0], ["?"]], header=True, select_cols=[1, 2]
        ),
        lambda m: m.data.experimental.CsvDataset(
            p, [[0], [-1.0], [""]], header=True, exclude_cols=[3], na_value="5"
        ),
        lambda m: m.data.experimental.make_csv_dataset(
            p, 2, label_name="a", shuffle=False, num_epochs=1
        ),
        lambda m: m.data.experimental.make_csv_dataset(
            p, 2, select_columns=["big", "a"], shuffle=False, num_epochs=2
        ),
    ]
    for build in cases:
        assert _run(build(jaxtape))[1] == _run(build(tf))[1]
    bad = [
        lambda m: m.data.experimental.CsvDataset(p, [m.int32] * 4, header=True),
        lambda m: m.data.experimental.CsvDataset(p, [m.float32] * 4),
        lambda m: m.data.experimental.CsvDataset(p, [m.float32] * 3, header=True),
    ]
    for build in bad:
        assert _raises(build, tf) == ["InvalidArgumentError", "InvalidArgumentError"]
    shuffled = jaxtape.data.experimental.make_csv_dataset(p, 3, shuffle_seed=1)
    features = next(iter(shuffled))
    assert sorted(features) == ["a", "b", "big", "name"]
    assert features["a"].shape == (3,)  # num_epochs=None: repeated, full batches
