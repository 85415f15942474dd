"""Dataset transformations that regroup elements: `window`, `padded_batch`,
`rebatch`, `group_by_window`, `bucket_by_sequence_length` (TF's semantics).

Layer L4; called by the `Dataset` methods of the same names.
"""

from __future__ import annotations

import itertools

import numpy as np

from jaxtape._src.core import errors
from jaxtape._src.core.tensor import TensorShape, TensorSpec
from jaxtape._src.data.dataset import (
    UNKNOWN_CARDINALITY,
    Dataset,
    _check_positive,
    _leaves,
    _map_structure,
    _np_dtype,
    _to_numpy,
    _UserFunction,
    _zip_structures,
)
from jaxtape._src.data.structure import DatasetSpec


def _int(value) -> int:
    return int(_to_numpy(value))


# -- window -----------------------------------------------------------------------
def window(ds: Dataset, size, shift, stride, drop_remainder) -> Dataset:
    size = _int(size)
    shift = size if shift is None else _int(shift)
    stride = _int(stride)
    _check_positive(size, "Window size")
    _check_positive(shift, "Window shift")
    _check_positive(stride, "Window stride")
    span = (size - 1) * stride + 1
    source = ds._make

    def make():
        it, buffer, base, start, exhausted = source(), [], 0, 0, False
        while True:
            while not exhausted and base + len(buffer) < start + span:
                try:
                    buffer.append(next(it))
                except StopIteration:
                    exhausted = True
            del buffer[: start - base]
            base = start
            members = buffer[0:span:stride]
            if not members or (drop_remainder and len(members) < size):
                return
            yield _zip_structures(_window_component, members)
            start += shift

    n = ds._cardinality
    if n >= 0:
        if drop_remainder:
            rest = n - span
            n = 0 if rest < 0 else rest // shift + 1
        else:
            n = -(-n // shift)
    spec = lambda: _map_structure(DatasetSpec, ds.element_spec)
    return ds._derive(make, n, spec)


def _window_component(parts) -> Dataset:
    parts = list(parts)
    return Dataset(lambda: iter(parts), len(parts))


# -- padded_batch --------------------------------------------------------------------
def _up_to(spec, value, fn):
    """`fn(spec_leaf, value_part)` over `spec`'s structure (TF's `map_structure_up_to`);
    a shape given as a tuple or TensorShape is one value, not a structure."""
    if isinstance(spec, tuple) and not isinstance(spec, TensorShape):
        if not isinstance(value, (tuple, list)) or len(value) != len(spec):
            raise ValueError(
                f"The structure of {value!r} does not match the element structure "
                f"{spec!r}."
            )
        return tuple(_up_to(s, v, fn) for s, v in zip(spec, value))
    if isinstance(spec, dict):
        if not isinstance(value, dict) or set(value) != set(spec):
            raise ValueError(
                f"The structure of {value!r} does not match the element structure "
                f"{spec!r}."
            )
        return {k: _up_to(s, value[k], fn) for k, s in spec.items()}
    return fn(spec, value)


def _padded_shape(spec: TensorSpec, value) -> TensorShape:
    dims = [None if d is None or int(d) == -1 else int(d) for d in _shape_list(value)]
    shape = TensorShape(dims)
    compatible = len(shape) == len(spec.shape) and all(
        p is None or s is None or p >= s for p, s in zip(shape, spec.shape)
    )
    if not compatible:
        raise ValueError(
            f"The padded shape {tuple(shape)} is not compatible with the shape "
            f"{tuple(spec.shape)} of the corresponding input component."
        )
    return shape


def _shape_list(value) -> list:
    if isinstance(value, (TensorShape, list, tuple)):
        return [None if d is None else _int(d) for d in value]
    array = np.asarray(_to_numpy(value))
    if array.ndim != 1:
        raise ValueError(
            f"Padded shape {value} must be a `tf.int64` vector tensor, but its shape "
            f"was {array.shape}."
        )
    return array.tolist()


def _padding_value(spec: TensorSpec, value):
    if value is None:
        return np.zeros((), _np_dtype(spec.dtype))
    array = np.asarray(_to_numpy(value))
    if array.shape != ():
        raise ValueError(
            "Invalid `padding_values`. `padding_values` values should be scalars, "
            f"but got {array.shape}."
        )
    if array.dtype != _np_dtype(spec.dtype):
        raise TypeError(
            "Invalid `padding_values`. `padding_values` values type "
            f"{_dtype_name(array.dtype)} does not match type {spec.dtype!r} of the "
            "corresponding input component."
        )
    return array


def _dtype_name(dtype) -> str:
    from jaxtape._src.core import dtypes

    return repr(dtypes.as_dtype(dtype))


def padded_batch(ds, batch_size, padded_shapes, padding_values, drop_remainder):
    size = _int(batch_size)
    _check_positive(size, "Batch size")
    spec = _static_spec(ds)
    for leaf in _leaves(spec):
        if isinstance(leaf, DatasetSpec):
            raise TypeError("`padded_batch` is not supported for datasets of datasets")
        if not isinstance(leaf, TensorSpec):
            raise TypeError(
                "`padded_batch` is only supported for datasets that produce tensor "
                "elements but type spec of elements in the input dataset is not a "
                f"subclass of TensorSpec: `{leaf!r}`."
            )
    if padded_shapes is None:  # pad each dimension to the longest in the batch
        padded_shapes = _map_structure(lambda s: list(s.shape), spec)
    shapes = _up_to(spec, padded_shapes, _padded_shape)
    if padding_values is None:
        pads = _map_structure(lambda s: _padding_value(s, None), spec)
    else:
        pads = _up_to(spec, padding_values, _padding_value)
    flat_shapes = _leaves_up_to(spec, shapes)
    flat_pads = _leaves_up_to(spec, pads)
    source = ds._make

    def make():
        it = source()
        while True:
            chunk = list(itertools.islice(it, size))
            if not chunk or (drop_remainder and len(chunk) < size):
                return
            columns = zip(*[_leaves(e) for e in chunk])
            out = [
                _pad_and_stack([np.asarray(x) for x in col], shape, pad)
                for col, shape, pad in zip(columns, flat_shapes, flat_pads)
            ]
            yield _pack(chunk[0], out)

    card = ds._cardinality
    if card >= 0:
        card = card // size if drop_remainder else -(-card // size)
    lead = size if drop_remainder else None
    out_spec = _pack(
        spec,
        [
            TensorSpec([lead, *shape], s.dtype)
            for s, shape in zip(_leaves(spec), flat_shapes)
        ],
    )
    return ds._derive(make, card, out_spec)


def _static_spec(ds: Dataset):
    """The element spec as far as it is known without running the pipeline: after
    `map` (whose spec jaxtape reads off the first element) only ranks and dtypes
    are taken, every dimension unknown, since other elements may differ."""
    known = ds._known_spec()
    if known is not None:
        return known
    return _map_structure(
        lambda s: (
            TensorSpec([None] * s.shape.rank, s.dtype)
            if isinstance(s, TensorSpec)
            else s
        ),
        ds.element_spec,
    )


def _leaves_up_to(spec, value) -> list:
    out = []
    _up_to(spec, value, lambda s, v: out.append(v))
    return out


def _pack(structure, flat: list):
    it = iter(flat)
    return _map_structure(lambda _: next(it), structure)


def _pad_and_stack(parts: list, shape: TensorShape, pad) -> np.ndarray:
    ranks = {p.ndim for p in parts}
    if ranks != {len(shape)}:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"All elements in a padded batch must have rank {len(shape)}, got ranks "
            f"{sorted(ranks)}.",
        )
    target = [
        max(p.shape[i] for p in parts) if d is None else d for i, d in enumerate(shape)
    ]
    out = np.full((len(parts), *target), pad, dtype=parts[0].dtype)
    for i, p in enumerate(parts):
        if any(a > b for a, b in zip(p.shape, target)):
            raise errors.DataLossError(
                None, None, "Attempted to pad to a smaller size than the input element."
            )
        out[(i, *[slice(0, n) for n in p.shape])] = p
    return out


# -- rebatch -------------------------------------------------------------------------
def rebatch(ds, batch_size, drop_remainder) -> Dataset:
    sizes = np.atleast_1d(np.asarray(_to_numpy(batch_size))).astype(int).tolist()
    if not sizes or any(s < 1 for s in sizes):
        raise ValueError(f"Invalid `batch_size`: every size must be >= 1, got {sizes}.")
    spec = ds.element_spec
    leads = set()
    for leaf in _leaves(spec):
        if leaf.shape.rank == 0:
            raise ValueError(
                "Invalid `batch_sizes`. Expected dataset with rank of >= 1 but found a "
                "dataset with scalar elements. Fix the issue by adding the `batch` "
                "transformation to the dataset."
            )
        leads.add(leaf.shape[0])
    static = None
    if len(set(sizes)) == 1:
        (b,) = set(sizes)
        (lead,) = leads if len(leads) == 1 else (None,)
        if drop_remainder or (lead is not None and lead % b == 0):
            static = b
    source = ds._make

    def make():
        rows = (
            _map_structure(lambda a, i=i: np.asarray(a)[i], element)
            for element in source()
            for i in range(np.shape(_leaves(element)[0])[0])
        )
        for size in itertools.cycle(sizes):
            chunk = list(itertools.islice(rows, size))
            if not chunk or (drop_remainder and len(chunk) < size):
                return
            yield _zip_structures(lambda parts: np.stack(parts), chunk)

    out_spec = _map_structure(
        lambda s: TensorSpec([static, *s.shape[1:]], s.dtype), spec
    )
    return ds._derive(make, UNKNOWN_CARDINALITY, out_spec)


# -- group_by_window / bucket_by_sequence_length ------------------------------------
def group_by_window(ds, key_func, reduce_func, window_size, window_size_func):
    if window_size is not None and window_size_func is not None:
        raise ValueError(
            "Either the `window_size` argument or the `window_size_func` argument "
            "can be specified but not both."
        )
    if window_size is None and window_size_func is None:
        raise ValueError(
            "Either the `window_size` argument or the `window_size_func` argument "
            "must be specified."
        )
    key_call = _UserFunction(key_func, "group_by_window")
    reduce_call = _UserFunction(reduce_func, "group_by_window")
    size_call = None if window_size_func is None else _UserFunction(
        window_size_func, "group_by_window"
    )  # fmt: skip
    fixed = None if window_size is None else _int(window_size)
    source = ds._make

    def key_of(element, i) -> int:
        key = np.asarray(key_call(element, i))
        if key.shape != () or key.dtype != np.int64:
            raise TypeError(
                f"`key_func` {key_call.where} must return a single tf.int64 scalar "
                f"tensor, got dtype {key.dtype} and shape {key.shape}."
            )
        return int(key)

    def flush(key, group):
        key_tensor = np.asarray(key, np.int64)
        window = Dataset(lambda g=list(group): iter(g), len(group))
        yield from _reduced(reduce_call((key_tensor, window), 0))._make()

    def make():
        groups: dict[int, list] = {}
        sizes: dict[int, int] = {}
        for i, element in enumerate(source()):
            key = key_of(element, i)
            if key not in groups:
                groups[key] = []
                if fixed is not None:
                    sizes[key] = fixed
                else:
                    assert size_call is not None  # noqa: S101
                    sizes[key] = int(
                        np.asarray(size_call(np.asarray(key, np.int64), i))
                    )
                    _check_positive(sizes[key], "Window size")
            groups[key].append(element)
            if len(groups[key]) == sizes[key]:
                yield from flush(key, groups.pop(key))
        for key in sorted(groups):  # TF flushes what is left by ascending key
            yield from flush(key, groups[key])

    return ds._derive(make, UNKNOWN_CARDINALITY)


def _reduced(value) -> Dataset:
    if not isinstance(value, Dataset):
        raise TypeError(
            "`reduce_func` of group_by_window must return a Dataset, got "
            f"{type(value).__name__}."
        )
    return value


def bucket_by_sequence_length(
    ds,
    element_length_func,
    bucket_boundaries,
    bucket_batch_sizes,
    padded_shapes,
    padding_values,
    pad_to_bucket_boundary,
    no_padding,
    drop_remainder,
):
    boundaries = [int(b) for b in bucket_boundaries]
    batch_sizes = [int(b) for b in bucket_batch_sizes]
    if len(batch_sizes) != len(boundaries) + 1:
        raise ValueError(
            "`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` but "
            f"`len(bucket_batch_sizes)={len(batch_sizes)}` and "
            f"`len(bucket_boundaries)={len(boundaries)}`."
        )
    if not callable(element_length_func):
        raise TypeError(
            f"`element_length_func` must be callable, got {element_length_func!r}."
        )
    low = [np.iinfo(np.int32).min, *boundaries]
    high = [*boundaries, np.iinfo(np.int32).max]

    def bucket_of(*element):
        n = int(np.asarray(element_length_func(*element)))
        for i, (a, b) in enumerate(zip(low, high)):
            if a <= n < b:
                return np.asarray(i, np.int64)
        raise errors.InvalidArgumentError(None, None, f"Length {n} fits no bucket.")

    def batch_of(bucket_id, window: Dataset) -> Dataset:
        b = int(bucket_id)
        size = batch_sizes[b]
        if no_padding:
            return window.batch(size, drop_remainder=drop_remainder)
        filler = None
        if pad_to_bucket_boundary:
            if b >= len(batch_sizes) - 1:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    "When pad_to_bucket_boundary=True, elements must have length < "
                    "max(bucket_boundaries).",
                )
            filler = boundaries[b] - 1
        shapes = padded_shapes
        spec = _static_spec(ds)
        if shapes is None:
            shapes = _map_structure(lambda s: list(s.shape), spec)
        shapes = _up_to(
            spec,
            shapes,
            lambda s, v: [filler if d is None else d for d in _shape_list(v)],
        )
        return window.padded_batch(size, shapes, padding_values, drop_remainder)

    return group_by_window(
        ds, bucket_of, batch_of, None, lambda bucket_id: batch_sizes[int(bucket_id)]
    )
