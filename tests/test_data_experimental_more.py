"""The rest of tf.data.experimental against real TF: group_by_reducer,
dense_to_sparse_batch, pad_to_cardinality, parse_example_dataset,
rejection_resample, tables from datasets, TFRecordWriter,
make_batched_features_dataset; save/load/snapshot round trips."""

import os

import numpy as np
import pytest

import jaxtape

_D = lambda m: m.data.Dataset  # noqa: E731
_E = lambda m: m.data.experimental  # noqa: E731


def _sum_reducer(m):
    return _E(m).Reducer(lambda k: np.int64(0), lambda s, x: s + x, lambda s: s * 10)


def _pair_reducer(m):
    return _E(m).Reducer(
        lambda k: (k, np.int64(0)),
        lambda s, x: (s[0], s[1] + x),
        lambda k, s: {"k": k, "s": s},
    )


def _example(m, k):
    feature = {
        "v": m.train.Feature(int64_list=m.train.Int64List(value=list(range(k)))),
        "x": m.train.Feature(float_list=m.train.FloatList(value=[k / 4])),
        "y": m.train.Feature(int64_list=m.train.Int64List(value=[k % 2])),
    }
    return m.train.Example(features=m.train.Features(feature=feature))


def _serialized(m):
    return [_example(m, k).SerializeToString() for k in (1, 3, 0, 2, 4)]


def _features(m):
    return {
        "v": m.io.VarLenFeature(m.int64),
        "x": m.io.FixedLenFeature([1], m.float32),
        "y": m.io.FixedLenFeature([], m.int64),
    }


PIPELINES = {
    "group_by_reducer_sum": lambda m: (
        _D(m)
        .range(10)
        .apply(_E(m).group_by_reducer(lambda x: 2 - x % 3, _sum_reducer(m)))
    ),
    "group_by_reducer_tuple_state": lambda m: (
        _D(m)
        .range(10)
        .apply(_E(m).group_by_reducer(lambda x: (x * 7) % 5, _pair_reducer(m)))
    ),
    "dense_to_sparse_batch_fixed_row": lambda m: (
        _D(m)
        .range(1, 5)
        .map(lambda n: m.range(n))
        .apply(_E(m).dense_to_sparse_batch(2, [5]))
    ),
    "dense_to_sparse_batch_unknown_row": lambda m: (
        _D(m)
        .range(1, 6)
        .map(lambda n: m.fill([n, 2], m.cast(n, m.float32)))
        .apply(_E(m).dense_to_sparse_batch(3, [None, 2]))
    ),
    "dataset_sparse_batch_method": lambda m: (
        _D(m).range(1, 5).map(lambda n: m.range(n)).sparse_batch(3, [4])
    ),
    "dataset_rejection_resample_method": lambda m: (
        _D(m)
        .range(4)
        .rejection_resample(lambda x: m.cast(x % 2, m.int32), [0.5, 0.5], [0.5, 0.5])
    ),
    "pad_to_cardinality": lambda m: (
        _D(m)
        .from_tensor_slices({"a": [1, 2], "b": [[1.0, 2.0], [3.0, 4.0]]})
        .apply(_E(m).pad_to_cardinality(4, mask_key="ok"))
    ),
    "parse_example_dataset": lambda m: (
        _D(m)
        .from_tensor_slices(_serialized(m))
        .batch(2)
        .apply(_E(m).parse_example_dataset(_features(m)))
    ),
    "rejection_resample_no_change": lambda m: (
        _D(m)
        .range(6)
        .apply(
            _E(m).rejection_resample(
                lambda x: m.cast(x % 2, m.int32), [0.5, 0.5], initial_dist=[0.5, 0.5]
            )
        )
    ),
}

# After `map` jaxtape reads dense specs off the first element (TF's traced
# spec has None where shapes vary): those rows compare element specs only
# where jaxtape knows them without running the map.
SPEC_FROM_FIRST_ELEMENT = {
    "rejection_resample_no_change",
    "dataset_rejection_resample_method",
    "parse_example_dataset",
}


def _norm(element):
    if isinstance(element, tuple):
        return tuple(_norm(e) for e in element)
    if isinstance(element, dict):
        return {k: _norm(v) for k, v in sorted(element.items())}
    if hasattr(element, "indices") and hasattr(element, "dense_shape"):
        return (
            "sparse",
            np.asarray(element.indices).tolist(),
            np.asarray(element.values).dtype.name,
            np.asarray(element.values).tolist(),
            np.asarray(element.dense_shape).tolist(),
        )
    a = np.asarray(element)
    if a.dtype.kind in "SOU":
        return ("string", a.shape, a.astype(bytes).tolist())
    return (a.dtype.name, a.shape, a.tolist())


def _text(spec) -> str:
    return repr(spec).replace("tf.", "jaxtape.")


@pytest.mark.parametrize("name", list(PIPELINES))
def test_experimental_pipeline_matches_tf_data(name, tf):
    want_ds, got_ds = PIPELINES[name](tf), PIPELINES[name](jaxtape)
    assert [_norm(e) for e in got_ds] == [_norm(e) for e in want_ds]
    assert int(got_ds.cardinality()) == int(want_ds.cardinality())
    if name not in SPEC_FROM_FIRST_ELEMENT:
        assert _text(got_ds.element_spec) == _text(want_ds.element_spec)


ERRORS = {
    "dense_to_sparse_batch_row_too_small": lambda m: list(
        _D(m)
        .range(1, 4)
        .map(lambda n: m.range(n))
        .apply(_E(m).dense_to_sparse_batch(2, [2]))
    ),
    "pad_to_cardinality_too_many": lambda m: (
        _D(m).from_tensor_slices({"a": [1, 2]}).apply(_E(m).pad_to_cardinality(1))
    ),
    "pad_to_cardinality_not_dict": lambda m: (
        _D(m).from_tensor_slices([1, 2]).apply(_E(m).pad_to_cardinality(3))
    ),
    "pad_to_cardinality_unknown": lambda m: (
        _D(m)
        .from_tensor_slices({"a": [1, 2]})
        .filter(lambda x: True)
        .apply(_E(m).pad_to_cardinality(3))
    ),
    "tfrecord_writer_not_strings": lambda m: (
        _E(m).TFRecordWriter(os.devnull).write(_D(m).range(2))
    ),
    "load_missing_path": lambda m: _E(m).load("/nonexistent/jaxtape/saved"),
    "group_by_reducer_int32_key": lambda m: list(
        _D(m)
        .range(3)
        .apply(_E(m).group_by_reducer(lambda x: m.cast(x, m.int32), _sum_reducer(m)))
    ),
    "table_needs_default_for_strings": lambda m: _E(m).table_from_dataset(
        _D(m).from_tensor_slices((["a"], ["b"]))
    ),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_input_raises_tf_error_type(name, tf):
    with pytest.raises(Exception) as want:
        ERRORS[name](tf)
    with pytest.raises(Exception) as got:
        ERRORS[name](jaxtape)
    assert type(got.value).__name__ == type(want.value).__name__


def test_tables_from_datasets_match_tensorflow(tf):
    results = {}
    for m in (tf, jaxtape):
        keys = _D(m).from_tensor_slices(["a", "b", "c"])
        queries = m.constant(["b", "z", "c", "a"])
        with_oov = _E(m).index_table_from_dataset(keys, num_oov_buckets=3)
        plain = _E(m).index_table_from_dataset(keys)
        pairs = _D(m).zip((keys, _D(m).range(10, 13)))
        valued = _E(m).table_from_dataset(pairs, default_value=-7)
        init = _E(m).DatasetInitializer(pairs)
        static = m.lookup.StaticHashTable(init, -5)
        results[m.__name__] = [
            with_oov.lookup(queries).numpy().tolist(),
            plain.lookup(queries).numpy().tolist(),
            valued.lookup(queries).numpy().tolist(),
            int(valued.size()),
            static.lookup(queries).numpy().tolist(),
            (init.key_dtype.name, init.value_dtype.name),
        ]
    assert results["jaxtape"] == results["tensorflow"]


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_tfrecord_writer_files_read_back_in_tensorflow(compression, tf, tmp_path):
    path = str(tmp_path / "r.tfrecord")
    records = [b"x", b"", b"yy\x00", "text"]
    writer = jaxtape.data.experimental.TFRecordWriter(path, compression)
    writer.write(jaxtape.data.Dataset.from_tensor_slices(records))
    got = list(tf.data.TFRecordDataset(path, compression).as_numpy_iterator())
    assert got == [b"x", b"", b"yy\x00", b"text"]


def test_make_batched_features_dataset_matches_tensorflow(tf, tmp_path):
    for k, group in enumerate((_serialized(tf)[:3], _serialized(tf)[3:])):
        with tf.io.TFRecordWriter(str(tmp_path / f"part-{k}.tfrecord")) as w:
            for record in group:
                w.write(record)
    pattern = str(tmp_path / "part-*.tfrecord")
    results = {}
    for m in (tf, jaxtape):
        ds = _E(m).make_batched_features_dataset(
            pattern, 2, _features(m), label_key="y", num_epochs=1, shuffle=False
        )
        results[m.__name__] = [_norm(e) for e in ds]
        forever = _E(m).make_batched_features_dataset(
            pattern, 2, _features(m), num_epochs=None, shuffle=True, shuffle_seed=3
        )
        results[m.__name__].append(int(forever.cardinality()))
    assert results["jaxtape"] == results["tensorflow"]
    with pytest.raises(ValueError, match="label_key"):
        _E(jaxtape).make_batched_features_dataset(
            pattern, 2, _features(jaxtape), label_key="nope"
        )


def _mixed(m):
    """Tuples of a float vector, a string with a trailing NUL, a SparseTensor
    and a RaggedTensor."""
    sp = m.SparseTensor([[0, 1], [2, 0]], [1.5, 2.5], [3, 2])
    rt = m.ragged.constant([[1, 2], [], [3]], dtype=m.int64)
    return _D(m).from_tensor_slices(
        {
            "x": np.arange(6, dtype=np.float32).reshape(3, 2),
            "s": [b"a\x00", b"", b"c"],
            "sp": sp,
            "rt": rt,
        }  # fmt: skip
    )


def test_save_load_round_trip_keeps_values_and_specs(tmp_path):
    ds = _mixed(jaxtape)
    path = str(tmp_path / "saved")
    jaxtape.data.experimental.save(ds, path)
    loaded = jaxtape.data.experimental.load(path)
    assert [_norm(e) for e in loaded] == [_norm(e) for e in ds]
    assert _text(loaded.element_spec) == _text(ds.element_spec)
    assert int(loaded.cardinality()) == 3
    ds.save(path)  # overwrites (written beside it, then renamed)
    assert sorted(os.listdir(tmp_path)) == ["saved"]
    again = jaxtape.data.Dataset.load(path, element_spec=ds.element_spec)
    assert [_norm(e) for e in again] == [_norm(e) for e in ds]


def test_save_shards_and_reader_func(tmp_path):
    ds = jaxtape.data.Dataset.range(10)
    path = str(tmp_path / "sharded")
    jaxtape.data.experimental.save(ds, path, shard_func=lambda x: x % 3)
    loaded = jaxtape.data.experimental.load(path)
    assert sorted(loaded.as_numpy_iterator()) == list(range(10))
    by_shard = jaxtape.data.experimental.load(
        path, reader_func=lambda shards: shards.flat_map(lambda d: d.take(1))
    )
    assert list(by_shard.as_numpy_iterator()) == [0, 1, 2]


def test_snapshot_computes_once_then_reads_back(tmp_path):
    calls = []

    def count(x):
        calls.append(int(x))
        return x

    def record(x):  # (the side effect per element: a py_function, as in TF)
        return jaxtape.py_function(count, [x], jaxtape.int64) * 2

    path = str(tmp_path / "snap")
    ds = jaxtape.data.Dataset.range(4).map(record).snapshot(path)
    assert list(ds.as_numpy_iterator()) == [0, 2, 4, 6]
    assert list(ds.as_numpy_iterator()) == [0, 2, 4, 6]
    assert calls == [0, 1, 2, 3]  # (the second pass read the snapshot)
    other = jaxtape.data.Dataset.range(4).map(record)
    again = other.apply(jaxtape.data.experimental.snapshot(path))
    assert list(again.as_numpy_iterator()) == [0, 2, 4, 6]
    assert calls == [0, 1, 2, 3]


@pytest.mark.parametrize("initial", [[0.8, 0.2], None], ids=["given", "estimated"])
def test_rejection_resample_reaches_target_distribution(initial):
    n = 1200
    labels = (np.random.default_rng(0).random(n) < 0.2).astype(np.int32)
    ds = jaxtape.data.Dataset.from_tensor_slices(labels)
    resampled = ds.apply(
        jaxtape.data.experimental.rejection_resample(
            lambda x: x, [0.5, 0.5], initial_dist=initial, seed=1
        )
    )
    out = [(int(c), int(x)) for c, x in resampled.as_numpy_iterator()]
    assert all(c == x for c, x in out)  # (class, element) pairs
    ones = sum(c for c, _ in out)
    k = len(out)
    assert k > 400
    sigma = np.sqrt(k * 0.25)
    assert abs(ones - k / 2) < 5 * sigma, (ones, k)


def _database(path) -> str:
    import sqlite3

    connection = sqlite3.connect(path)
    connection.execute("create table t (name text, age int, h real, note text)")
    connection.executemany(
        "insert into t values (?, ?, ?, ?)",
        [("ann", 30, 1.5, "12.5x"), ("bob", None, 2.0, None), ("cy", 7, None, "no")],
    )
    connection.commit()
    connection.close()
    return str(path)


SQL_QUERIES = {
    "columns": ("SELECT name, age, h FROM t", ("string", "int32", "float64")),
    "single_type": ("SELECT age FROM t", "int64"),
    "text_as_numbers": ("SELECT note, note, age FROM t", ("int64", "float64", "bool")),
    "numbers_as_text": ("SELECT age, h, note FROM t", ("string", "string", "string")),
    "small_ints": ("SELECT age, age FROM t WHERE age > 0", ("uint8", "int16")),
}


def test_sql_dataset_matches_tensorflow(tf, tmp_path):
    db = _database(tmp_path / "t.db")
    for name, (query, types) in SQL_QUERIES.items():
        results = {}
        for m in (tf, jaxtape):
            dts = (
                getattr(m, types)
                if isinstance(types, str)
                else tuple(getattr(m, t) for t in types)
            )
            ds = _E(m).SqlDataset("sqlite", db, query, dts)
            results[m.__name__] = (
                [_norm(e) for e in ds],
                _text(ds.element_spec),
                int(ds.cardinality()),
            )
        assert results["jaxtape"] == results["tensorflow"], name
    for m in (tf, jaxtape):
        with pytest.raises(m.errors.InvalidArgumentError):
            _E(m).SqlDataset("mysql", db, "SELECT age FROM t", (m.int64,))
        with pytest.raises(m.errors.InvalidArgumentError):
            _E(m).SqlDataset("sqlite", db, "SELECT h FROM t", (m.float32,))
        with pytest.raises(m.errors.InvalidArgumentError):
            list(_E(m).SqlDataset("sqlite", db, "SELECT h, age FROM t", (m.int64,)))
        with pytest.raises(m.errors.UnknownError):
            list(_E(m).SqlDataset("sqlite", db, "SELECT nope FROM t", (m.int64,)))
