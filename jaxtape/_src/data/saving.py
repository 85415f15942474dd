"""`save`, `load` and `snapshot` of datasets (TF's `tf.data.experimental.save`
and friends, `Dataset.save/load/snapshot`), in jaxtape's own on-disk format.

Layer L4 (data/). A saved dataset is a directory: `element_spec.json` (the
element structure and each component's kind, shape and dtype) and one
`shard_<k>.npz` per shard, holding the elements' arrays under names
`<element>_<component>_<part>` (a SparseTensor's indices/values/dense shape,
a RaggedTensor's values and row splits, strings as their UTF-8 bytes and
lengths). No pickles: NumPy reads it with `allow_pickle=False`. It is written
into a temporary directory next to `path` and renamed into place at the end.

Differences from TensorFlow: the format is not TF's (TF cannot read it, nor
jaxtape TF's); `compression` "GZIP" and "SNAPPY" both deflate the npz files;
`snapshot` does not fingerprint the input pipeline: a finished snapshot at
`path` is read back whatever pipeline it is applied to.
"""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np

from jaxtape._src.core import dtypes, errors, files
from jaxtape._src.core.tensor import TensorSpec
from jaxtape._src.data.dataset import Dataset, _to_numpy
from jaxtape._src.data.iterators import _UserFunction
from jaxtape._src.data.ragged_elements import HostRagged
from jaxtape._src.data.sparse_elements import HostSparse
from jaxtape._src.data.structure import DatasetSpec, _leaves, _map_structure
from jaxtape._src.data.type_specs import SparseTensorSpec
from jaxtape._src.structured.ragged import RaggedTensorSpec

_SPEC_FILE = "element_spec.json"


# -- the element structure as JSON -----------------------------------------------------
def _spec_to_json(spec):
    if isinstance(spec, tuple) and hasattr(spec, "_fields"):
        raise NotImplementedError("save: namedtuple elements are not supported.")
    if isinstance(spec, tuple):
        return {"tuple": [_spec_to_json(s) for s in spec]}
    if isinstance(spec, dict):
        return {"dict": [[k, _spec_to_json(v)] for k, v in spec.items()]}
    shape = None if spec.shape.rank is None else list(spec.shape)
    if isinstance(spec, TensorSpec):
        return {"tensor": [shape, spec.dtype.name]}
    if isinstance(spec, SparseTensorSpec):
        return {"sparse": [shape, spec.dtype.name]}
    if isinstance(spec, RaggedTensorSpec):
        return {"ragged": [shape, spec.dtype.name, spec.ragged_rank,
                           spec.row_splits_dtype.name]}  # fmt: skip
    raise NotImplementedError(
        f"save: elements of type {type(spec).__name__} are not supported."
    )


def _spec_from_json(j):
    ((kind, body),) = j.items()
    if kind == "tuple":
        return tuple(_spec_from_json(s) for s in body)
    if kind == "dict":
        return {k: _spec_from_json(v) for k, v in body}
    if kind == "tensor":
        return TensorSpec(body[0], body[1])
    if kind == "sparse":
        return SparseTensorSpec(body[0], body[1])
    return RaggedTensorSpec(body[0], body[1], body[2], body[3])


# -- components as arrays --------------------------------------------------------------
def _parts(x) -> list:
    """A component as plain (non-object) arrays."""
    if isinstance(x, HostSparse):
        return [np.asarray(x.indices), *_parts(np.asarray(x.values)),
                np.asarray(x.dense_shape, np.int64)]  # fmt: skip
    if isinstance(x, HostRagged):
        return [*_parts(np.asarray(x.values)), *(np.asarray(s) for s in x.splits)]
    a = np.asarray(x)
    if a.dtype.kind in "SUO":  # strings: UTF-8 bytes, lengths, shape
        items = [v.encode() if isinstance(v, str) else bytes(v) for v in a.reshape(-1)]
        blob = np.frombuffer(b"".join(items), np.uint8)
        lengths = np.asarray([len(v) for v in items], np.int64)
        return [blob, lengths, np.asarray(a.shape, np.int64)]
    return [a]


def _from_parts(spec, parts: list):
    """Inverse of `_parts`: pops the component's arrays off `parts`."""
    if isinstance(spec, SparseTensorSpec):
        indices = parts.pop(0)
        values = _plain_from_parts(spec.dtype, parts)
        return HostSparse(indices, values, tuple(parts.pop(0).tolist()))
    if isinstance(spec, RaggedTensorSpec):
        values = _plain_from_parts(spec.dtype, parts)
        splits = [parts.pop(0) for _ in range(spec.ragged_rank)]
        return HostRagged(values, tuple(splits), dtypes.np_dtype(spec.row_splits_dtype))
    return _plain_from_parts(spec.dtype, parts)


def _plain_from_parts(dtype, parts: list) -> np.ndarray:
    if dtype != dtypes.string:
        return parts.pop(0)
    blob, lengths, shape = parts.pop(0), parts.pop(0), parts.pop(0)
    ends = np.cumsum(lengths)
    data = blob.tobytes()
    items = [data[e - n : e] for e, n in zip(ends.tolist(), lengths.tolist())]
    out = np.empty(len(items), object)
    out[:] = items
    return out.reshape(tuple(shape.tolist()))


# -- save ------------------------------------------------------------------------------
def save(dataset, path, compression=None, shard_func=None, checkpoint_args=None):
    """Writes `dataset`'s elements to the directory `path` (replacing it).

    `shard_func(element) -> int64` picks each element's shard (default: one
    shard); `load` reads the shards back in order.
    """
    if checkpoint_args is not None:
        raise NotImplementedError("save: checkpoint_args is not supported by jaxtape.")
    path = _text(path)
    spec = dataset.element_spec
    layout = _spec_to_json(spec)
    call = None if shard_func is None else _UserFunction(shard_func, "save")
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    tmp = files.temp_name(path)
    os.makedirs(tmp)
    try:
        shards: dict = {}
        counts: dict = {}
        for i, element in enumerate(dataset._make()):
            k = 0 if call is None else int(np.asarray(call(element, i)))
            arrays = shards.setdefault(k, {})
            n = counts[k] = counts.get(k, -1) + 1
            for c, leaf in enumerate(_leaves(element)):
                for p, part in enumerate(_parts(leaf)):
                    arrays[f"{n}_{c}_{p}"] = part
        write = np.savez if compression in (None, "") else np.savez_compressed
        for k, arrays in shards.items():
            write(os.path.join(tmp, f"shard_{k}.npz"), **arrays)
        with open(os.path.join(tmp, _SPEC_FILE), "w") as f:
            json.dump({"element_spec": layout, "shards": sorted(shards)}, f)
        files.replace_path(tmp, path)  # (a killed save keeps the previous one)
    except BaseException:
        files.remove_path(tmp)
        raise


# -- load ------------------------------------------------------------------------------
def load(path, element_spec=None, compression=None, reader_func=None) -> Dataset:
    """The dataset saved at `path` (`NotFoundError` if there is none, as TF).

    `reader_func(datasets)` gets a dataset of the shards' datasets and returns
    the dataset to read (default: the shards one after another).
    """
    del compression  # (read from the files)
    path = _text(path)
    meta_file = os.path.join(path, _SPEC_FILE)
    if not os.path.isfile(meta_file):
        raise errors.NotFoundError(
            None,
            None,
            f"tf.data snapshot element_spec file not found: {meta_file}. Save a "
            "dataset there first with `jaxtape.data.experimental.save`.",
        )
    with open(meta_file) as f:
        meta = json.load(f)
    spec = _spec_from_json(meta["element_spec"])
    if element_spec is not None and element_spec != spec:
        raise ValueError(
            f"load: the given element_spec {element_spec} differs from the saved "
            f"one, {spec}."
        )
    shard_sets = [_shard(os.path.join(path, f"shard_{k}.npz"), spec)
                  for k in meta["shards"]]  # fmt: skip
    counts = [n for _, n in shard_sets]
    shards = [Dataset(make, n, spec) for make, n in shard_sets]
    if reader_func is None:
        return Dataset(
            lambda: (e for d in shards for e in d._make()), sum(counts), spec
        )
    outer = Dataset(lambda: iter(shards), len(shards), DatasetSpec(spec))
    out = reader_func(outer)
    if not isinstance(out, Dataset):
        raise TypeError(f"reader_func must return a Dataset, got {type(out).__name__}.")
    return out


def _shard(file: str, spec):
    with zipfile.ZipFile(file) as z:
        names = [n[: -len(".npy")] for n in z.namelist()]
    count = len({n.split("_")[0] for n in names})
    n_leaves = len(_leaves(spec))

    def make():
        with np.load(file, allow_pickle=False) as data:
            for i in range(count):
                leaves = []
                flat = iter(_leaves(spec))
                for c in range(n_leaves):
                    keys = sorted(
                        (n for n in names if n.startswith(f"{i}_{c}_")),
                        key=lambda n: int(n.rsplit("_", 1)[1]),
                    )
                    leaves.append(_from_parts(next(flat), [data[k] for k in keys]))
                values = iter(leaves)
                yield _map_structure(lambda _: next(values), spec)

    return make, count


# -- snapshot --------------------------------------------------------------------------
def snapshot(path, compression="AUTO", reader_func=None, shard_func=None):
    """Caches the dataset at `path`: the first full pass writes it (`save`),
    later passes (and later pipelines) read it back (`load`)."""

    def apply(ds: Dataset) -> Dataset:
        where = _text(path)
        source = ds._make

        def make():
            if os.path.isfile(os.path.join(where, _SPEC_FILE)):
                yield from load(where, reader_func=reader_func)._make()
                return
            seen = []
            for element in source():
                seen.append(element)
                yield element
            done = Dataset(lambda: iter(seen), len(seen), ds._known_spec())
            save(done, where, None if compression == "AUTO" else compression,
                 shard_func)  # fmt: skip

        return ds._derive(make, ds._cardinality, ds._same_spec())

    return apply


def _text(path) -> str:
    if isinstance(path, (str, os.PathLike)):
        return os.fspath(path)
    value = np.asarray(_to_numpy(path)).item()
    return value.decode() if isinstance(value, bytes) else str(value)
