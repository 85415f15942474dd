"""`jaxtape.data.Dataset`: TF's input pipelines as lazy Python iterators.

Layer L4. A Dataset is a recipe: `_make()` starts a fresh iterator over
elements, each a nested structure (tuple, dict, or one value) of NumPy
arrays. Transformations wrap the recipe; nothing runs until iteration.
Iterating yields jaxtape Tensors (string data stays NumPy); `prefetch` runs
the pipeline in a background thread and puts each element on the device
ahead of time. `map` and `filter` call the user's function eagerly, element
by element (TF traces it into a graph once; side effects here run per element).
"""

from __future__ import annotations

import itertools
import os
import pickle
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from jaxtape._src.core import context, errors
from jaxtape._src.core.tensor import Tensor, TensorSpec
from jaxtape._src.core.type_spec import TypeSpec
from jaxtape._src.data import optional, ragged_elements, traced_next
from jaxtape._src.data.iterators import (
    AUTOTUNE,
    _FilterIterator,
    _MapIterator,
    _ParallelMapIterator,
    _Prefetcher,
    _UserFunction,
    _workers,
)
from jaxtape._src.data.structure import (
    _checked_state,
    _common_spec,
    _conform,
    _DatasetBase,
    _dtype,
    _from_user,
    _host_or_device_tensor,
    _leaves,
    _map_structure,
    _np_dtype,
    _numpy_leaf,
    _spec_of,
    _to_numpy,
    _TypeOnly,
    _zip_structures,
)
from jaxtape._src.data.type_specs import SparseTensorSpec
from jaxtape._src.state import random_ops

if TYPE_CHECKING:
    from jaxtape._src.core.typing import Nested, TensorLike

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


class _WouldRun(Exception):
    """Raised by `element_spec` under `_known_spec` instead of running a pipeline."""


_no_run = threading.local()


# -- the Dataset --------------------------------------------------------------------
class Dataset(_DatasetBase):
    """A sequence of elements built from arrays and transformations (TF's `tf.data`).

    >>> ds = jaxtape.data.Dataset.range(6).map(lambda x: x * 2).batch(4)
    >>> [b.numpy().tolist() for b in ds]
    [[0, 2, 4, 6], [8, 10]]
    """

    def __init__(self, make: Callable[[], Iterator], cardinality: int, spec=None):
        self._make = make
        self._cardinality = int(cardinality)
        self._spec = spec
        self._slices = None  # the arrays of a `from_tensor_slices` source
        self._options = None  # set by `with_options`, inherited downstream
        self._inferred = False  # element_spec read off the first element
        # Made while jaxtape.function traces: a `for` over it reads it then.
        self._made_in_function = context.state.function_depth > 0

    # -- sources ---------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(
        tensors: Nested[TensorLike], name: str | None = None
    ) -> Dataset:
        """One element per row of `tensors` (arrays, tuples or dicts of them)."""
        data = _from_user(tensors)
        leaves = _leaves(data)
        if not leaves:
            raise ValueError("from_tensor_slices needs at least one array.")
        if any(leaf.ndim == 0 for leaf in leaves):
            raise ValueError(
                "from_tensor_slices slices along the first axis, so every component "
                "needs rank >= 1; got a scalar. Use Dataset.from_tensors instead."
            )
        sizes = {leaf.shape[0] for leaf in leaves}
        if len(sizes) != 1:
            shapes = [leaf.shape for leaf in leaves]
            raise ValueError(
                "from_tensor_slices: all components must have the same size in the "
                f"first dimension, got shapes {shapes}."
            )
        (n,) = sizes
        # (Lazy: string components have no spec, but iterate fine.)
        spec = lambda: _map_structure(
            lambda a: (
                ragged_elements.slice_spec(a) or TensorSpec(a.shape[1:], _dtype(a))
            ),
            data,
        )
        ds = Dataset(
            lambda: (_map_structure(lambda a: a[i], data) for i in range(n)), n, spec
        )
        ds._slices = data  # lets `batch` cut whole blocks instead of stacking rows
        return ds

    @staticmethod
    def from_tensors(tensors: Nested[TensorLike], name: str | None = None) -> Dataset:
        """A dataset of exactly one element, `tensors`."""
        data = _from_user(tensors)
        return Dataset(lambda: iter([data]), 1, lambda: _spec_of(data))

    @staticmethod
    def range(*args, **kwargs) -> Dataset:  # noqa: A003
        """`range(stop)`, `range(start, stop[, step])` as int64 scalars (TF's rule).

        Keyword arguments: `output_type` (default int64) and `name`.
        """
        unknown = set(kwargs) - {"output_type", "name"}
        if unknown:
            raise TypeError(
                f"Dataset.range got unexpected arguments {sorted(unknown)}."
            )
        if not 1 <= len(args) <= 3:
            raise ValueError(
                "Invalid `args`. The length of `args` should be between 1 and 3 but "
                f"was {len(args)}."
            )
        ints = [int(_to_numpy(a)) for a in args]
        if len(ints) == 3 and ints[2] == 0:
            raise errors.InvalidArgumentError(
                None, None, "step must be a non-zero integer."
            )
        r = range(*ints)
        output_type = kwargs.get("output_type")
        dtype = np.dtype("int64") if output_type is None else _np_dtype(output_type)
        spec = TensorSpec([], dtype)
        return Dataset(lambda: (np.asarray(i, dtype) for i in r), len(r), spec)

    @staticmethod
    def zip(*args, datasets=None, name=None) -> Dataset:
        """Elements of several datasets side by side, in their (nested) structure.

        `zip(a, b)`, `zip((a, b))`, `zip(datasets=(a, (b, c)))` or a dict, as TF.
        """
        if args and datasets is not None:
            raise TypeError("Both `*args` and `datasets` cannot be set.")
        if datasets is None:
            if not args:
                raise TypeError("Must pass at least one dataset to `zip`.")
            datasets = args[0] if len(args) == 1 else args
        structure = datasets

        def check(d):
            if isinstance(d, list):
                raise TypeError(
                    "Invalid input to `zip`. Inputs are expected to be (nested) "
                    "structures of `tf.data.Dataset` objects. Python `list` is not "
                    "supported and you should use `tuple` instead. (Dataset.zip "
                    "expects Datasets, got list.)"
                )
            if not isinstance(d, Dataset):
                raise TypeError(
                    "Invalid input to `zip`. Inputs are expected to be (nested) "
                    "structures of `tf.data.Dataset` objects. (Dataset.zip expects "
                    f"Datasets, got {type(d).__name__}.)"
                )
            return d

        _map_structure(check, structure)
        items = _leaves(structure)
        leaf_ids = {id(d): i for i, d in enumerate(items)}

        def make():
            for parts in zip(*[d._make() for d in items]):
                yield _map_structure(lambda d: parts[leaf_ids[id(d)]], structure)

        card = INFINITE_CARDINALITY
        for d in items:
            n = d._cardinality
            if n == UNKNOWN_CARDINALITY:
                card = UNKNOWN_CARDINALITY
                break
            if n != INFINITE_CARDINALITY and (card == INFINITE_CARDINALITY or n < card):
                card = n
        spec = lambda: _map_structure(lambda d: d.element_spec, structure)
        out = Dataset(make, card, spec)
        out._options = _merged_options(items)
        return out

    @staticmethod
    def from_generator(
        generator: Callable[..., Iterable[Any]], output_types=None, output_shapes=None,
        args=None, output_signature=None, name=None,
    ) -> Dataset:  # fmt: skip
        """Elements produced by calling `generator(*args)` afresh on each iteration.

        With `output_signature` (TensorSpecs) or `output_types`/`output_shapes`
        each yielded value is converted to the declared dtype and its shape
        checked, as TF does (a mismatch raises `InvalidArgumentError` when the
        element is read).

        Differences from TensorFlow: `output_types` without `output_shapes`
        (an unknown rank in TF) takes the shapes of the first element.
        """
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        if output_signature is not None:
            if output_types is not None:
                raise TypeError(
                    "The `output_types` argument can not be used together with the "
                    "`output_signature` argument."
                )
            if output_shapes is not None:
                raise TypeError(
                    "The `output_shapes` argument can not be used together with the "
                    "`output_signature` argument."
                )
            for spec in _leaves(output_signature):
                if not isinstance(spec, (TensorSpec, SparseTensorSpec)):
                    raise TypeError(
                        "`output_signature` must contain objects that are subclass of "
                        f"`tf.TypeSpec` but found {type(spec)} which is not."
                    )
            signature = output_signature
        elif output_types is None:
            raise TypeError(
                "To specify the output signature you need to provide either the "
                "`output_signature` argument or the `output_types` argument."
            )
        elif output_shapes is None:
            signature = _map_structure(_TypeOnly, output_types)
        else:
            signature = _zip_structures(
                lambda ts: TensorSpec(ts[1], ts[0]), [output_types, output_shapes]
            )
        call_args = tuple(_to_numpy(a) for a in (args or ()))

        def convert(value):
            try:
                return _zip_structures(_conform, [signature, value])
            except (TypeError, KeyError, IndexError) as e:
                raise errors.InvalidArgumentError(None, None, f"TypeError: {e}") from e

        def make():
            for value in generator(*call_args):
                yield convert(value)

        typed = all(
            isinstance(s, (TensorSpec, SparseTensorSpec)) for s in _leaves(signature)
        )
        return Dataset(make, UNKNOWN_CARDINALITY, signature if typed else None)

    # -- transformations -------------------------------------------------------
    def batch(self, batch_size: int | TensorLike, drop_remainder: bool = False,
              num_parallel_calls: int | None = None, deterministic: bool | None = None,
              name: str | None = None) -> Dataset:  # fmt: skip
        """Stacks `batch_size` consecutive elements (the last batch may be smaller)."""
        size = int(_to_numpy(batch_size))
        _check_positive(size, "Batch size")
        source = self._make
        slices, n = self._slices, self._cardinality

        def make():
            if slices is not None:  # straight from arrays: one slice per batch
                stop = n - n % size if drop_remainder else n
                for i in range(0, stop, size):
                    yield _map_structure(lambda a: a[i : i + size], slices)
                return
            it = source()
            while True:
                chunk = list(itertools.islice(it, size))
                if not chunk or (drop_remainder and len(chunk) < size):
                    return
                yield _zip_structures(ragged_elements.stack, chunk)

        card = self._cardinality
        if card >= 0:
            card = card // size if drop_remainder else -(-card // size)
        lead = size if drop_remainder else None
        spec = self._derived_spec(lambda s: ragged_elements.batched_spec(s, lead))
        return self._derive(make, card, spec)

    def unbatch(self, name=None) -> Dataset:
        """Splits each element along its first axis (the inverse of `batch`)."""
        source = self._make
        known = self._known_spec()
        if known is not None and any(
            isinstance(s, TensorSpec) and s.shape.rank == 0 for s in _leaves(known)
        ):
            raise ValueError("Cannot unbatch an input with scalar components.")

        def make():
            for element in source():
                leaves = _leaves(element)
                for i in range(leaves[0].shape[0] if leaves else 0):
                    yield _map_structure(lambda a: a[i], element)

        spec = self._derived_spec(ragged_elements.unbatched_spec)
        card = self._cardinality
        if card >= 0:  # TF: known only when the batch dimension is static
            leads = {s.shape[0] for s in _leaves(known)} if known is not None else set()
            card = card * leads.pop() if len(leads) == 1 and None not in leads else -2
        return self._derive(make, card, spec)

    def ragged_batch(self, batch_size, drop_remainder=False, row_splits_dtype=np.int64,
                     name=None) -> Dataset:  # fmt: skip
        """`batch`, where components of varying shape become RaggedTensors (TF's
        rule: ragged up to the last unknown dimension of the element spec).

        Differences from TensorFlow: after `map` the element spec is read off
        a value, so every dimension of a rank >= 1 component counts as unknown.
        """
        return ragged_elements.to_ragged(self, row_splits_dtype).batch(
            batch_size, drop_remainder
        )

    def map(self, map_func: Callable[..., Any], num_parallel_calls: int | None = None,
            deterministic: bool | None = None, name: str | None = None,
            ) -> Dataset:  # fmt: skip
        """Applies `map_func` to each element (tuple elements are spread as arguments).

        With `num_parallel_calls`, up to that many elements (or the CPU count
        for `AUTOTUNE`) are mapped at once on threads; order is kept.
        """
        source = self._make
        call = _UserFunction(map_func, "map", traced=True)
        workers = _workers(num_parallel_calls)

        def make():
            if workers <= 1:
                return _MapIterator(source(), call)
            return _ParallelMapIterator(source(), call, workers)

        return self._derive(make, self._cardinality)

    def filter(self, predicate: Callable[..., Any], name: str | None = None) -> Dataset:
        """Keeps the elements for which `predicate` returns True."""
        source = self._make
        call = _UserFunction(predicate, "filter", traced=True)

        def make():
            return _FilterIterator(source(), call)

        return self._derive(make, UNKNOWN_CARDINALITY, self._same_spec())

    def shuffle(self, buffer_size: int | TensorLike, seed: int | None = None,
                reshuffle_each_iteration: bool = True, name: str | None = None,
                ) -> Dataset:  # fmt: skip
        """TF's buffered shuffle: draws uniformly from a buffer of `buffer_size`.

        With a seed (this op's or `jaxtape.random.set_seed`'s) the order is
        reproducible; each iteration gets a new order unless
        `reshuffle_each_iteration=False`.
        """
        size = int(_to_numpy(buffer_size))
        if size < 1 and size != AUTOTUNE:
            raise ValueError(f"buffer_size must be >= 1, got {size}.")
        source = self._make
        global_seed = random_ops._seeds.global_seed
        base = None
        if seed is not None or global_seed is not None:
            base = [int(global_seed or 0), int(seed or 0)]
        elif not reshuffle_each_iteration:  # one order, drawn once
            base = [int(np.random.SeedSequence().generate_state(1)[0]), 0]
        epochs = itertools.count()

        def make():
            epoch = next(epochs) if reshuffle_each_iteration else 0
            rng = np.random.default_rng(None if base is None else [*base, epoch])
            buffer = []
            for element in source():
                if len(buffer) < size:
                    buffer.append(element)
                    continue
                j = int(rng.integers(len(buffer)))
                yield buffer[j]
                buffer[j] = element
            while buffer:
                yield buffer.pop(int(rng.integers(len(buffer))))

        return self._derive(make, self._cardinality, self._same_spec())

    def repeat(
        self, count: int | TensorLike | None = None, name: str | None = None
    ) -> Dataset:
        """Repeats the dataset `count` times (forever when None or -1)."""
        n = -1 if count is None else int(_to_numpy(count))
        source = self._make

        def make():
            for _ in itertools.count() if n < 0 else range(n):
                yield from source()

        card = self._cardinality
        if n < 0:
            card = INFINITE_CARDINALITY if card != 0 else 0
        elif card >= 0:
            card = card * n
        return self._derive(make, card, self._same_spec())

    def take(self, count: int | TensorLike, name: str | None = None) -> Dataset:
        """The first `count` elements (all when -1)."""
        n = int(_to_numpy(count))
        source = self._make
        make = source if n < 0 else (lambda: itertools.islice(source(), n))
        card = self._cardinality
        if n >= 0:
            card = (
                n
                if card == INFINITE_CARDINALITY
                else (min(n, card) if card >= 0 else card)
            )
        return self._derive(make, card, self._same_spec())

    def skip(self, count: int | TensorLike, name: str | None = None) -> Dataset:
        """All but the first `count` elements (none when -1)."""
        n = int(_to_numpy(count))
        source = self._make
        if n < 0:
            return self._derive(lambda: iter(()), 0, self._same_spec())
        card = self._cardinality
        if card >= 0:
            card = max(card - n, 0)
        return self._derive(
            lambda: itertools.islice(source(), n, None), card, self._same_spec()
        )

    def enumerate(self, start=0, name=None) -> Dataset:
        """`(index, element)` pairs, the index an int64 scalar."""
        source = self._make
        first = int(start)

        def make():
            for i, element in enumerate(source(), first):
                yield (np.asarray(i, np.int64), element)

        spec = lambda: (TensorSpec([], np.int64), self.element_spec)
        return self._derive(make, self._cardinality, spec)

    def cache(self, filename="", name=None) -> Dataset:
        """Keeps the elements of the first complete pass for later passes.

        In memory by default; with `filename`, in that file (written once the
        first pass completes, read by every later pass and by any dataset
        cached to the same name, as TF's file cache).

        Differences from TensorFlow: the file is jaxtape's own format
        (`filename + ".jaxtape_cache"`, NumPy arrays), not TF's tensor bundle.
        """
        source = self._make
        store: dict = {}
        path = f"{os.fspath(filename)}.jaxtape_cache" if filename else None

        def make():
            if path is not None and os.path.exists(path):
                with open(path, "rb") as f:
                    yield from pickle.load(f)
                return
            if "elements" in store:
                yield from store["elements"]
                return
            seen = []
            for element in source():
                seen.append(element)
                yield element
            if path is None:
                store["elements"] = seen
                return
            host = [_map_structure(np.asarray, e) for e in seen]
            tmp = f"{path}.tmp{os.getpid()}"
            with open(tmp, "wb") as f:
                pickle.dump(host, f)
            os.replace(tmp, path)  # readers never see a half-written cache

        return self._derive(make, self._cardinality, self._same_spec())

    def take_while(self, predicate, name=None) -> Dataset:
        """Elements up to (not including) the first where `predicate` is False."""
        source = self._make
        call = _UserFunction(predicate, "take_while")

        def make():
            for i, element in enumerate(source()):
                keep = call(element, i)
                if np.shape(keep) != () or np.asarray(keep).dtype != np.bool_:
                    raise ValueError(
                        "Invalid `predicate`. `predicate` must return a `tf.bool` "
                        f"scalar tensor, but {call.where} returned "
                        f"{_spec_of(keep)}."
                    )
                if not bool(keep):
                    return
                yield element

        return self._derive(make, UNKNOWN_CARDINALITY, self._same_spec())

    def shard(self, num_shards, index, name=None) -> Dataset:
        """Every `num_shards`-th element, starting at `index`."""
        n, i = int(_to_numpy(num_shards)), int(_to_numpy(index))
        _check_positive(n, "Number of shards")
        if not 0 <= i < n:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Index must be between 0 and {n - 1} (currently index = {i}).",
            )
        source = self._make
        card = self._cardinality
        if card >= 0:
            card = card // n + (1 if i < card % n else 0)
        make = lambda: itertools.islice(source(), i, None, n)
        return self._derive(make, card, self._same_spec())

    def concatenate(self, dataset, name=None) -> Dataset:
        """This dataset's elements followed by those of `dataset` (same types)."""
        if not isinstance(dataset, Dataset):
            raise TypeError(
                f"Dataset.concatenate expects a Dataset, got {type(dataset).__name__}."
            )
        first, second = self._known_spec(), dataset._known_spec()
        spec = None
        if first is not None and second is not None:
            try:
                spec = _zip_structures(_common_spec, [first, second])
            except (TypeError, ValueError, KeyError, IndexError):
                raise TypeError(
                    f"Incompatible dataset elements:\n  {first} vs.   {second}"
                ) from None
        a, b = self._make, dataset._make
        cards = (self._cardinality, dataset._cardinality)
        if INFINITE_CARDINALITY in cards:
            card = INFINITE_CARDINALITY
        elif UNKNOWN_CARDINALITY in cards:
            card = UNKNOWN_CARDINALITY
        else:
            card = sum(cards)
        out = Dataset(lambda: itertools.chain(a(), b()), card, spec)
        out._options = _merged_options([self, dataset])
        return out

    def flat_map(self, map_func, name=None) -> Dataset:
        """Maps each element to a Dataset and flattens the results in order."""
        source = self._make
        call = _UserFunction(map_func, "flat_map")

        def make():
            for i, element in enumerate(source()):
                yield from _as_dataset(call(element, i), "flat_map")._make()

        return self._derive(make, UNKNOWN_CARDINALITY)

    def interleave(self, map_func, cycle_length=None, block_length=None,
                   num_parallel_calls=None, deterministic=None, name=None,
                   ) -> Dataset:  # fmt: skip
        """Maps elements to Datasets and interleaves them, TF's cycle order.

        `cycle_length` inputs are open at once (the CPU count by default, as
        TF's AUTOTUNE); `block_length` consecutive elements (default 1) are
        taken from each in turn. With `num_parallel_calls` the open datasets
        are read ahead by a thread pool; the order stays TF's deterministic one.
        """
        from jaxtape._src.data import interleave_ops

        return interleave_ops.interleave(
            self, map_func, cycle_length, block_length, num_parallel_calls
        )

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None,
               ) -> Dataset:  # fmt: skip
        """Windows of `size` elements (every `stride`-th), one every `shift`.

        Each element is a Dataset (a structure of Datasets for tuple or dict
        elements), as in TF; `.flat_map(lambda w: w.batch(size))` makes tensors.
        """
        from jaxtape._src.data import grouping

        return grouping.window(self, size, shift, stride, drop_remainder)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False, name=None) -> Dataset:  # fmt: skip
        """Batches elements of different shapes, padding each to a common shape."""
        from jaxtape._src.data import grouping

        return grouping.padded_batch(
            self, batch_size, padded_shapes, padding_values, drop_remainder
        )

    def rebatch(self, batch_size, drop_remainder=False, name=None) -> Dataset:
        """Re-cuts batched elements into batches of `batch_size` (or a cycle of
        sizes): `unbatch().batch(batch_size)` without the per-row work."""
        from jaxtape._src.data import grouping

        return grouping.rebatch(self, batch_size, drop_remainder)

    def group_by_window(self, key_func, reduce_func, window_size=None,
                        window_size_func=None, name=None) -> Dataset:  # fmt: skip
        """Groups elements by `key_func` into windows, each reduced to a Dataset."""
        from jaxtape._src.data import grouping

        return grouping.group_by_window(
            self, key_func, reduce_func, window_size, window_size_func
        )

    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries,
                                  bucket_batch_sizes, padded_shapes=None,
                                  padding_values=None, pad_to_bucket_boundary=False,
                                  no_padding=False, drop_remainder=False, name=None,
                                  ) -> Dataset:  # fmt: skip
        """Batches elements of similar length together (padded), TF's bucketing."""
        from jaxtape._src.data import grouping

        return grouping.bucket_by_sequence_length(
            self, element_length_func, bucket_boundaries, bucket_batch_sizes,
            padded_shapes, padding_values, pad_to_bucket_boundary, no_padding,
            drop_remainder,
        )  # fmt: skip

    def scan(self, initial_state, scan_func, name=None) -> Dataset:
        """`scan_func(state, element) -> (new_state, output)`; yields the outputs."""
        source = self._make
        call = _UserFunction(scan_func, "scan")
        initial = _from_user(initial_state)

        def make():
            state = initial
            for i, element in enumerate(source()):
                result = call((state, element), i)
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise TypeError(
                        f"The scan function {call.where} must return a pair "
                        "`(new_state, output_element)`."
                    )
                state = _checked_state(initial, result[0], "scan")
                yield result[1]

        return self._derive(make, self._cardinality)

    def reduce(self, initial_state, reduce_func, name=None):
        """Folds the elements with `state = reduce_func(state, element)`."""
        call = _UserFunction(reduce_func, "reduce")
        state = initial = _from_user(initial_state)
        for i, element in enumerate(self._make()):
            state = _checked_state(initial, call((state, element), i), "reduce")
        return _map_structure(_host_or_device_tensor, state)

    def unique(self, name=None) -> Dataset:
        """Each distinct element once, in order of first appearance."""
        spec = self._known_spec()
        if spec is not None:
            for s in _leaves(spec):
                if not isinstance(s, TensorSpec) or s.dtype.name not in (
                    "int32",
                    "int64",
                ):
                    dtype = getattr(s, "dtype", s)
                    raise TypeError(
                        f"`tf.data.Dataset.unique` does not support type {dtype!r} -- "
                        "only `tf.int32`, `tf.int64`, and `tf.string` are supported."
                    )
        source = self._make

        def make():
            seen = set()
            for element in source():
                key = tuple(np.asarray(x).item() for x in _leaves(element))
                if key not in seen:
                    seen.add(key)
                    yield element

        return self._derive(make, UNKNOWN_CARDINALITY, self._same_spec())

    def ignore_errors(self, log_warning=False, name=None) -> Dataset:
        """Drops elements whose computation raised (e.g. in `map`), as TF."""
        source = self._make

        def make():
            it = source()
            while True:
                try:
                    element = next(it)
                except StopIteration:
                    return
                except Exception as e:  # TF drops any failed element
                    if log_warning:
                        warnings.warn(f"Dataset.ignore_errors dropped an element: {e}",
                                      stacklevel=2)  # fmt: skip
                    continue
                yield element

        return self._derive(make, UNKNOWN_CARDINALITY, self._same_spec())

    def apply(self, transformation_func) -> Dataset:
        """`transformation_func(self)`, which must return a Dataset."""
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TypeError(
                "`transformation_func` must return a `tf.data.Dataset` object. "
                f"Got {type(out)}."
            )
        return out

    def get_single_element(self, name=None):
        """The one element of a dataset with exactly one element."""
        it = iter(self)
        try:
            element = next(it)
        except StopIteration:
            raise errors.InvalidArgumentError(
                None, None, "Dataset was empty."
            ) from None
        for _ in it:
            raise errors.InvalidArgumentError(
                None, None, "Dataset had more than one element."
            )
        return element

    def options(self):
        """The `jaxtape.data.Options` set on this dataset or its inputs."""
        from jaxtape._src.data.options import Options

        return self._options if self._options is not None else Options()

    def with_options(self, options, name=None) -> Dataset:
        """The same dataset with `options` merged over its current ones."""
        from jaxtape._src.data.options import Options

        if not isinstance(options, Options):
            raise TypeError(
                f"Dataset.with_options expects a jaxtape.data.Options, got {options!r}."
            )
        out = self._derive(self._make, self._cardinality, self._same_spec())
        out._slices = self._slices
        out._options = self.options().merge(options)
        return out

    @staticmethod
    def counter(start=0, step=1, dtype=np.int64, name=None) -> Dataset:
        """`start, start + step, ...` forever (TF's `Dataset.counter`)."""
        np_dtype = _np_dtype(dtype)
        a, b = int(_to_numpy(start)), int(_to_numpy(step))
        make = lambda: (np.asarray(a + b * i, np_dtype) for i in itertools.count())
        return Dataset(make, INFINITE_CARDINALITY, TensorSpec([], np_dtype))

    @staticmethod
    def random(seed=None, rerandomize_each_iteration=None, name=None) -> Dataset:
        """Random int64 scalars forever (TF's `Dataset.random`; other values).

        With a seed each pass repeats the same values unless
        `rerandomize_each_iteration=True`.
        """
        global_seed = random_ops._seeds.global_seed
        base = None
        if seed is not None or global_seed is not None:
            base = [int(global_seed or 0), int(seed or 0)]
        epochs = itertools.count()

        def make():
            epoch = next(epochs) if rerandomize_each_iteration else 0
            rng = np.random.default_rng(None if base is None else [*base, epoch])
            while True:
                yield np.asarray(rng.integers(-(2**63), 2**63 - 1), np.int64)

        return Dataset(make, INFINITE_CARDINALITY, TensorSpec([], np.int64))

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None,
                             stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None) -> Dataset:  # fmt: skip
        """Draws each element from a dataset picked at random by `weights`."""
        from jaxtape._src.data import interleave_ops

        return interleave_ops.sample_from_datasets(
            datasets, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration
        )

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True,
                             ) -> Dataset:  # fmt: skip
        """The next element of `datasets[i]` for each `i` of `choice_dataset`."""
        from jaxtape._src.data import interleave_ops

        return interleave_ops.choose_from_datasets(
            datasets, choice_dataset, stop_on_empty_dataset
        )

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name=None) -> Dataset:
        """The file names matching a glob pattern (or list of them), as bytes.

        Sorted when `shuffle=False`, shuffled (each pass anew) by default.
        """
        from jaxtape._src.data import readers

        return readers.list_files(file_pattern, shuffle, seed)

    def prefetch(
        self, buffer_size: int | TensorLike, name: str | None = None
    ) -> Dataset:
        """Runs the pipeline on a background thread, `buffer_size` elements ahead.

        Elements are put on the device (`jax.device_put`) before they are
        handed over, so host work and transfers overlap the training step.
        """
        size = int(_to_numpy(buffer_size))
        size = 2 if size == AUTOTUNE else max(size, 1)
        source = self._make

        def make():
            return _Prefetcher(source(), size)

        return self._derive(make, self._cardinality, self._same_spec())

    def sparse_batch(self, batch_size, row_shape, name=None) -> Dataset:
        """Batches elements of varying shape into SparseTensors of dense shape
        `[batch, *row_shape]` (`jaxtape.data.experimental.dense_to_sparse_batch`)."""
        # cycle: dataset -> experimental_more -> dataset
        from jaxtape._src.data import experimental_more

        return experimental_more.dense_to_sparse_batch(batch_size, row_shape)(self)

    def rejection_resample(self, class_func, target_dist, initial_dist=None,
                           seed=None, name=None) -> Dataset:  # fmt: skip
        """`(class, element)` pairs resampled to the class distribution
        `target_dist` (see `jaxtape.data.experimental.rejection_resample`)."""
        # cycle: dataset -> experimental_more -> dataset
        from jaxtape._src.data import experimental_more

        resample = experimental_more.rejection_resample(
            class_func, target_dist, initial_dist, seed
        )
        return resample(self)

    def save(self, path, compression=None, shard_func=None, checkpoint_args=None):
        """Writes the elements to the directory `path` (jaxtape's own format;
        see `jaxtape.data.experimental.save`)."""
        from jaxtape._src.data import saving  # cycle: saving -> dataset -> saving

        saving.save(self, path, compression, shard_func, checkpoint_args)

    @staticmethod
    def load(path, element_spec=None, compression=None, reader_func=None,
             wait=False) -> Dataset:  # fmt: skip
        """A dataset written by `save` (`NotFoundError` if `path` holds none)."""
        from jaxtape._src.data import saving  # cycle: saving -> dataset -> saving

        if wait:
            raise NotImplementedError("Dataset.load: wait=True is not supported.")
        return saving.load(path, element_spec, compression, reader_func)

    def snapshot(self, path, compression="AUTO", reader_func=None, shard_func=None,
                 name=None) -> Dataset:  # fmt: skip
        """Caches the elements at `path`: written on the first full pass, read
        back afterwards (see `jaxtape.data.experimental.snapshot`)."""
        from jaxtape._src.data import saving  # cycle: saving -> dataset -> saving

        return saving.snapshot(path, compression, reader_func, shard_func)(self)

    # -- consumption -----------------------------------------------------------
    def __iter__(self) -> DatasetIterator:
        return DatasetIterator(self)

    def as_numpy_iterator(self) -> NumpyIterator:
        """The elements as NumPy arrays (TF's `as_numpy_iterator`)."""
        return NumpyIterator(self)

    def _same_spec(self):
        return lambda: self.element_spec

    def _derive(self, make, cardinality, spec=None) -> Dataset:
        """A dataset computed from this one: it keeps this one's options."""
        out = Dataset(make, cardinality, spec)
        out._options = self._options
        return out

    def _known_spec(self):
        """The element spec if it is known without running the pipeline, else None."""
        _no_run.depth = getattr(_no_run, "depth", 0) + 1
        try:
            return self.element_spec
        except _WouldRun:
            return None
        finally:
            _no_run.depth -= 1

    def _derived_spec(self, fn):
        return lambda: _map_structure(fn, self.element_spec)

    @property
    def element_spec(self):
        """The structure, shapes and dtypes of one element, as TensorSpecs.

        Known without running the pipeline except after `map`, `from_generator`
        and `zip` of those, where the first element is computed to find it.
        """
        if callable(self._spec):
            self._spec = self._spec()
        if getattr(_no_run, "depth", 0) and (self._spec is None or self._inferred):
            raise _WouldRun
        if self._spec is None:
            for element in self._make():
                self._spec = _spec_of(element)
                self._inferred = True  # from one element: others may differ
                break
            else:
                raise ValueError("element_spec of an empty dataset is unknown.")
        return self._spec

    def cardinality(self) -> Tensor:
        """The number of elements; `INFINITE_CARDINALITY` (-1) or `UNKNOWN` (-2)."""
        return Tensor(jax.numpy.asarray(self._cardinality, np.int64))

    def __len__(self) -> int:
        if self._cardinality == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if self._cardinality == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return self._cardinality

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        spec = self._spec if isinstance(self._spec, (TypeSpec, tuple, dict)) else "..."
        return f"<jaxtape.data.Dataset element_spec={spec}>"


def _check_positive(n: int, what: str) -> None:
    if n <= 0:
        raise errors.InvalidArgumentError(
            None, None, f"{what} must be greater than zero."
        )


def _merged_options(datasets):
    merged = None
    for d in datasets:
        if d._options is not None:
            merged = d._options if merged is None else merged.merge(d._options)
    return merged


def _as_dataset(value, method: str) -> Dataset:
    if not isinstance(value, Dataset):
        raise TypeError(
            f"The function passed to Dataset.{method} must return a Dataset, got "
            f"{type(value).__name__}."
        )
    return value


class DatasetIterator:
    """What `iter(dataset)` returns (TF's `tf.data.Iterator`): the elements as
    Tensors, one pass, started when it is made.

    >>> it = iter(jaxtape.data.Dataset.range(2))
    >>> int(it.get_next()), int(next(it))
    (0, 1)
    """

    def __init__(self, dataset: Dataset):
        self._dataset = dataset
        self._it = iter(dataset._make())
        # Made outside jaxtape.function: `next()` while one traces is TF's
        # IteratorGetNext, read anew on every call (`traced_next`).
        self._made_in_function = context.state.function_depth > 0

    def __iter__(self) -> DatasetIterator:
        return self

    def _convert(self, element):
        return _map_structure(_host_or_device_tensor, element)

    def __next__(self):
        if context.state.function_depth and not self._made_in_function:
            return self._convert(traced_next.traced_next(self))
        return self._convert(next(self._it))

    def get_next(self):
        """The next element; `OutOfRangeError` at the end (as TF)."""
        try:
            return next(self)
        except StopIteration:
            raise errors.OutOfRangeError(None, None, "End of sequence") from None

    def get_next_as_optional(self):
        """The next element as a `jaxtape.experimental.Optional`, empty at the end."""
        return optional.get_next_as_optional(self)

    @property
    def element_spec(self):
        """The dataset's element spec."""
        return self._dataset.element_spec


class NumpyIterator(DatasetIterator):
    """What `as_numpy_iterator()` returns (TF's `tf.data.NumpyIterator`)."""

    def _convert(self, element):
        return _map_structure(_numpy_leaf, element)
