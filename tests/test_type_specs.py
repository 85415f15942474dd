"""The TypeSpec family and `Optional` against real TF: constructor arguments,
repr, value_type, equality and hashing, is_compatible_with, is_subtype_of,
most_specific_compatible_type; Optional's from_value/empty/has_value/get_value,
eagerly and inside a compiled function; `get_next_as_optional`."""

import numpy as np
import pytest

import jaxtape

SPECS = {
    "tensor": lambda m: m.TensorSpec([2, None], m.float32, name="x"),
    "tensor_unknown_rank": lambda m: m.TensorSpec(None, m.int32),
    "sparse": lambda m: m.SparseTensorSpec([None, 3], m.int64),
    "sparse_default": lambda m: m.SparseTensorSpec(),
    "ragged": lambda m: m.RaggedTensorSpec([2, None], m.float32, 1),
    "indexed_slices": lambda m: m.IndexedSlicesSpec(
        [4, 2], m.float32, m.int64, m.int64, [2]
    ),
    "indexed_slices_default": lambda m: m.IndexedSlicesSpec(),
    "none": lambda m: m.NoneTensorSpec(),
    "optional": lambda m: m.OptionalSpec(m.TensorSpec([], m.int32)),
    "optional_nested": lambda m: m.OptionalSpec(
        (m.TensorSpec([2], m.float32), {"s": m.SparseTensorSpec([3], m.int64)})
    ),
    "tensor_array": lambda m: m.TensorArraySpec([2], m.float32, True, True),
    "tensor_array_default": lambda m: m.TensorArraySpec(),
    "iterator": lambda m: m.data.IteratorSpec(
        (m.TensorSpec([2], m.float32), m.SparseTensorSpec([None], m.int64))
    ),
}

# TF's value classes that jaxtape names differently.
_VALUE_TYPES = {"_OptionalImpl": "Optional", "OwnedIterator": "DatasetIterator"}

# Pairs (a, b) for the binary methods.
PAIRS = {
    "sparse_shapes": lambda m: (
        m.SparseTensorSpec([2, 3], m.int64),
        m.SparseTensorSpec([4, 3], m.int64),
    ),
    "sparse_unknown": lambda m: (
        m.SparseTensorSpec([2, 3], m.int64),
        m.SparseTensorSpec([2, None], m.int64),
    ),
    "sparse_dtypes": lambda m: (
        m.SparseTensorSpec([2, 3], m.int64),
        m.SparseTensorSpec([2, 3], m.int32),
    ),
    "sparse_unknown_rank": lambda m: (
        m.SparseTensorSpec([2, 3]),
        m.SparseTensorSpec(None),
    ),
    "tensor_vs_sparse": lambda m: (m.TensorSpec([2, 3]), m.SparseTensorSpec([2, 3])),
    "tensor_names": lambda m: (
        m.TensorSpec([2, 3], name="a"),
        m.TensorSpec([2, None], name="b"),
    ),
    "tensor_same_name": lambda m: (
        m.TensorSpec([2, 3], name="a"),
        m.TensorSpec([2, 4], name="a"),
    ),
    "ragged_rows": lambda m: (
        m.RaggedTensorSpec([2, None], m.float32, 1),
        m.RaggedTensorSpec([3, None], m.float32, 1),
    ),
    "indexed_slices": lambda m: (
        m.IndexedSlicesSpec([4, 2], m.float32),
        m.IndexedSlicesSpec([None, 2], m.float32),
    ),
    "optional": lambda m: (
        m.OptionalSpec(m.TensorSpec([2], m.int32)),
        m.OptionalSpec(m.TensorSpec([3], m.int32)),
    ),
    "optional_dtypes": lambda m: (
        m.OptionalSpec(m.TensorSpec([2], m.int32)),
        m.OptionalSpec(m.TensorSpec([2], m.int64)),
    ),
    "tensor_array": lambda m: (
        m.TensorArraySpec([2], m.float32),
        m.TensorArraySpec([None], m.float32),
    ),
    "tensor_array_dynamic": lambda m: (
        m.TensorArraySpec([2], m.float32),
        m.TensorArraySpec([2], m.float32, dynamic_size=True),
    ),
    "none": lambda m: (m.NoneTensorSpec(), m.NoneTensorSpec()),
    "iterator": lambda m: (
        m.data.IteratorSpec((m.TensorSpec([2]),)),
        m.data.IteratorSpec((m.TensorSpec([3]),)),
    ),
}


def _text(x) -> str:
    return repr(x).replace("tf.", "jaxtape.")


def _outcome(fn):
    """The result's repr, or the exception type's name."""
    try:
        return _text(fn())
    except Exception as e:  # noqa: BLE001 (the type is the outcome compared)
        return type(e).__name__


@pytest.mark.parametrize("name", list(SPECS))
def test_spec_matches_tensorflow(name, tf):
    want, got = SPECS[name](tf), SPECS[name](jaxtape)
    assert isinstance(got, jaxtape.TypeSpec)
    assert _text(got) == _text(want)
    want_type = want.value_type.__name__
    assert got.value_type.__name__ == _VALUE_TYPES.get(want_type, want_type)
    again = SPECS[name](jaxtape)
    assert got == again and hash(got) == hash(again) and not got != again
    for attr in ("shape", "dtype"):
        assert hasattr(got, attr) == hasattr(want, attr), attr
        if hasattr(want, attr):
            assert _text(getattr(got, attr)) == _text(getattr(want, attr))
    assert got.is_compatible_with(again) == want.is_compatible_with(SPECS[name](tf))


@pytest.mark.parametrize("name", list(PAIRS))
def test_spec_pair_methods_match_tensorflow(name, tf):
    (wa, wb), (ga, gb) = PAIRS[name](tf), PAIRS[name](jaxtape)
    for method in ("is_compatible_with", "is_subtype_of"):
        for x, y, u, v in ((ga, gb, wa, wb), (gb, ga, wb, wa)):
            assert getattr(x, method)(y) == getattr(u, method)(v), method
    assert (ga == gb) == (wa == wb)
    for x, y, u, v in ((ga, gb, wa, wb), (gb, ga, wb, wa)):
        got = _outcome(lambda: x.most_specific_compatible_type(y))  # noqa: B023
        want = _outcome(lambda: u.most_specific_compatible_type(v))  # noqa: B023
        assert got == want
        got = _outcome(lambda: x.most_specific_common_supertype([y]))  # noqa: B023
        want = _outcome(lambda: u.most_specific_common_supertype([v]))  # noqa: B023
        assert got == want


def test_from_value_and_compatibility_with_values(tf):
    for m in (tf, jaxtape):
        sp = m.SparseTensor([[0, 1]], [2.0], [2, 3])
        spec = m.SparseTensorSpec.from_value(sp)
        assert _text(spec) == "SparseTensorSpec(TensorShape([2, 3]), jaxtape.float32)"
        assert m.SparseTensorSpec([None, 3]).is_compatible_with(sp)
        assert not m.SparseTensorSpec([None, 3], m.int64).is_compatible_with(sp)
        assert not m.SparseTensorSpec([None, 4]).is_compatible_with(sp)
        ta = m.TensorArray(m.float32, size=2, element_shape=[3])
        assert _text(m.TensorArraySpec.from_value(ta)) == (
            "TensorArraySpec(TensorShape([3]), jaxtape.float32, False, True)"
        )
        assert _text(m.NoneTensorSpec.from_value(None)) == "NoneTensorSpec()"


def _norm(value):
    if isinstance(value, tuple):
        return tuple(_norm(v) for v in value)
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if hasattr(value, "dense_shape"):
        value = value.values
    a = np.asarray(value)
    return (a.dtype.name, a.shape, a.tolist())


OPTIONAL_VALUES = {
    "scalar": lambda m: 3,
    "tuple": lambda m: (1, m.constant([1.0, 2.0])),
    "dict_sparse": lambda m: {"s": m.SparseTensor([[1]], [5], [3]), "x": 2.5},
}


@pytest.mark.parametrize("name", list(OPTIONAL_VALUES))
def test_optional_from_value_matches_tensorflow(name, tf):
    want = tf.experimental.Optional.from_value(OPTIONAL_VALUES[name](tf))
    got = jaxtape.experimental.Optional.from_value(OPTIONAL_VALUES[name](jaxtape))
    assert bool(got.has_value()) and bool(want.has_value())
    assert got.has_value().dtype == jaxtape.bool
    assert _norm(got.get_value()) == _norm(want.get_value())
    assert _text(got.element_spec) == _text(want.element_spec)
    assert _text(jaxtape.OptionalSpec.from_value(got)) == _text(
        tf.OptionalSpec.from_value(want)
    )


def test_empty_optional_raises_tf_error_type(tf):
    for m in (tf, jaxtape):
        empty = m.experimental.Optional.empty(m.TensorSpec([], m.int32))
        assert not bool(empty.has_value())
        assert _text(empty.element_spec) == (
            "TensorSpec(shape=(), dtype=jaxtape.int32, name=None)"
        )
        with pytest.raises(m.errors.InvalidArgumentError):
            empty.get_value()
    assert jaxtape.data.experimental.Optional is jaxtape.experimental.Optional


def test_get_next_as_optional_matches_tensorflow_and_compiles(tf):
    results = {}
    for m in (tf, jaxtape):
        ds = m.data.Dataset.range(2).map(lambda x: (x, m.cast(x, m.float32) * 2))
        it = iter(ds)
        step = m.function(
            lambda opt: m.cond(
                opt.has_value(),
                lambda: opt.get_value()[1] + 1,
                lambda: m.constant(-1.0),
            )
        )
        got = []
        first = it.get_next_as_optional()
        got.append((bool(first.has_value()), _norm(first.get_value())))
        got.append(float(step(first)))
        second = m.data.experimental.get_next_as_optional(it)
        got.append(_norm(second.get_value()))
        end = it.get_next_as_optional()
        got.append((bool(end.has_value()), _text(end.element_spec)))
        got.append(_text(first.element_spec))
        results[m.__name__] = got
    assert results["jaxtape"] == results["tensorflow"]
