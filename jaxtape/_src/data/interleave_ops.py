"""Dataset transformations that merge several datasets: `interleave` (with a
thread pool), `sample_from_datasets`, `choose_from_datasets` (TF's orders).

Layer L4; called by the `Dataset` methods of the same names.
"""

from __future__ import annotations

import collections
import itertools
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from jaxtape._src.core import errors
from jaxtape._src.core.tensor import Tensor, TensorSpec
from jaxtape._src.data.dataset import (
    UNKNOWN_CARDINALITY,
    Dataset,
    _as_dataset,
    _check_positive,
    _common_spec,
    _merged_options,
    _to_numpy,
    _UserFunction,
    _workers,
    _zip_structures,
)
from jaxtape._src.state import random_ops


# -- interleave ---------------------------------------------------------------------
def interleave(ds, map_func, cycle_length, block_length, num_parallel_calls):
    call = _UserFunction(map_func, "interleave")
    cycle = _workers(-1) if cycle_length is None else int(_to_numpy(cycle_length))
    if cycle == -1:
        cycle = _workers(-1)
    block = 1 if block_length is None else int(_to_numpy(block_length))
    _check_positive(cycle, "cycle_length")
    _check_positive(block, "block_length")
    workers = 0 if num_parallel_calls is None else _workers(num_parallel_calls)
    source = ds._make

    def open_inner(element, i):
        return iter(_as_dataset(call(element, i), "interleave")._make())

    def make():
        inputs = enumerate(source())
        if not workers:
            yield from _cycle(inputs, open_inner, cycle, block)
            return
        pool = ThreadPoolExecutor(workers)
        try:

            def open_ahead(element, i):
                return _ReadAhead(open_inner(element, i), pool, block)

            yield from _cycle(inputs, open_ahead, cycle, block)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    return ds._derive(make, UNKNOWN_CARDINALITY)


def _cycle(inputs, open_inner, cycle: int, block: int):
    """TF's InterleaveDataset order: a cycle of open iterators, `block` elements
    from each in turn; an exhausted one is replaced from the input when its
    slot comes round again."""
    slots: list = [None] * cycle
    index = taken = opened = 0
    end_of_input = False
    while not end_of_input or opened:
        it = slots[index]
        if it is not None:
            try:
                element = next(it)
            except StopIteration:
                slots[index] = None
                opened -= 1
                index, taken = (index + 1) % cycle, 0
                continue
            yield element
            taken += 1
            if taken == block:
                index, taken = (index + 1) % cycle, 0
        elif not end_of_input:
            try:
                i, element = next(inputs)
            except StopIteration:
                end_of_input = True
                continue
            slots[index] = open_inner(element, i)
            opened += 1
        else:
            index, taken = (index + 1) % cycle, 0


class _ReadAhead:
    """An inner iterator of a parallel interleave: its next `block` elements are
    always being fetched on the pool, so all open inputs are read at once."""

    def __init__(self, it, pool: ThreadPoolExecutor, block: int):
        self._it, self._pool, self._block = it, pool, block
        self._ready: collections.deque = collections.deque()
        self._future = pool.submit(self._fetch)
        self._done = False

    def _fetch(self) -> list:
        return list(itertools.islice(self._it, self._block))

    def __iter__(self):
        return self

    def __next__(self):
        if not self._ready:
            if self._done or self._future is None:
                raise StopIteration
            chunk = self._future.result()
            self._future = None
            if len(chunk) < self._block:
                self._done = True
            else:
                self._future = self._pool.submit(self._fetch)
            if not chunk:
                raise StopIteration
            self._ready.extend(chunk)
        return self._ready.popleft()


# -- sample / choose ------------------------------------------------------------------
def _check_datasets(datasets) -> list:
    datasets = list(datasets)
    if not datasets:
        raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
    for d in datasets:
        if not isinstance(d, Dataset):
            raise TypeError(
                f"Invalid `datasets`. Expected Datasets, got {type(d).__name__}."
            )
    return datasets


def _merged_spec(datasets):
    specs = [d._known_spec() for d in datasets]
    if any(s is None for s in specs):
        return None
    spec = specs[0]
    for other in specs[1:]:
        try:
            spec = _zip_structures(_common_spec, [spec, other])
        except (TypeError, ValueError, KeyError, IndexError):
            raise TypeError(
                "Invalid `datasets`. `datasets` must have compatible element specs.\n"
                f" {spec} vs. {other}"
            ) from None
    return spec


def _from_choices(datasets, choices, stop_on_empty: bool):
    its = [iter(d._make()) for d in datasets]
    live = [True] * len(its)
    for i in choices:
        if i < 0 or i >= len(its):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Selector index out of range: {i} (there are {len(its)} datasets).",
            )
        if not live[i]:
            if not any(live):
                return
            continue
        try:
            yield next(its[i])
        except StopIteration:
            live[i] = False
            if stop_on_empty or not any(live):
                return


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset):
    datasets = _check_datasets(datasets)
    if not isinstance(choice_dataset, Dataset):
        raise TypeError(
            "Invalid `choice_dataset`. `choice_dataset` must be a Dataset, got "
            f"{type(choice_dataset).__name__}."
        )
    spec = choice_dataset._known_spec()
    if spec is not None and not (
        isinstance(spec, TensorSpec) and spec.shape == () and spec.dtype.name == "int64"
    ):
        raise TypeError(
            "Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar of "
            f"`tf.int64` dtype, but found {spec}."
        )

    def make():
        choices = (int(np.asarray(c)) for c in choice_dataset._make())
        return _from_choices(datasets, choices, stop_on_empty_dataset)

    out = Dataset(make, UNKNOWN_CARDINALITY, lambda: _merged_spec(datasets))
    out._options = _merged_options(datasets)
    return out


def sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset, rerandomize):
    datasets = _check_datasets(datasets)
    n = len(datasets)
    if isinstance(weights, Dataset):
        raise NotImplementedError(
            "sample_from_datasets with `weights` given as a Dataset is not supported "
            "in jaxtape; pass a list of floats."
        )
    if weights is None:
        p = np.full(n, 1.0 / n)
    else:
        p = np.asarray(_to_numpy(weights))
        if p.shape != (n,):
            raise ValueError(
                "Invalid `weights`. `weights` should have the same length as "
                f"`datasets` but got `len(weights)={len(p)}` vs. "
                f"`len(datasets)={n}`."
            )
        if p.dtype not in (np.float32, np.float64):
            raise TypeError(
                "Invalid `weights`. `weights` type must be either `tf.float32` or "
                f"`tf.float64` but is {p.dtype}."
            )
        if not isinstance(weights, Tensor):  # TF drops the zero weights up front
            kept = [(d, w) for d, w in zip(datasets, p) if w > 0]
            datasets = [d for d, _ in kept] or [datasets[0].take(0)]
            p = np.asarray([w for _, w in kept] or [1.0])
            n = len(datasets)
    if n == 1:
        return datasets[0]
    p = p.astype(np.float64)
    global_seed = random_ops._seeds.global_seed
    base = None
    if seed is not None or global_seed is not None:
        base = [int(global_seed or 0), int(seed or 0)]
    epochs = itertools.count()

    def make():
        epoch = next(epochs) if rerandomize else 0
        rng = np.random.default_rng(None if base is None else [*base, epoch])
        its = [iter(d._make()) for d in datasets]
        live = p > 0
        while live.any():
            q = np.where(live, p, 0.0)
            i = int(rng.choice(n, p=q / q.sum()))
            try:
                yield next(its[i])
            except StopIteration:
                if stop_on_empty_dataset:
                    return
                live[i] = False

    out = Dataset(make, UNKNOWN_CARDINALITY, lambda: _merged_spec(datasets))
    out._options = _merged_options(datasets)
    return out
