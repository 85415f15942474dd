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
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from jaxtape._src.core import context, errors
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor, TensorSpec
from jaxtape._src.state import random_ops
from jaxtape._src.state.variable import Variable

if TYPE_CHECKING:
    from jaxtape._src.core.typing import Nested, TensorLike

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


# -- nested structures ----------------------------------------------------------------
# As in tf.data, tuples and dicts are structure; a list is one value (an array).
def _map_structure(fn, s):
    if isinstance(s, tuple) and hasattr(s, "_fields"):
        return type(s)(*[_map_structure(fn, v) for v in s])
    if isinstance(s, tuple):
        return tuple(_map_structure(fn, v) for v in s)
    if isinstance(s, dict):
        return {k: _map_structure(fn, v) for k, v in s.items()}
    return fn(s)


def _leaves(s) -> list:
    out = []
    _map_structure(out.append, s)
    return out


def _zip_structures(fn, structures):
    first = structures[0]
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return type(first)(
            *[
                _zip_structures(fn, [s[i] for s in structures])
                for i in range(len(first))
            ]
        )
    if isinstance(first, tuple):
        return tuple(
            _zip_structures(fn, [s[i] for s in structures]) for i in range(len(first))
        )
    if isinstance(first, dict):
        return {k: _zip_structures(fn, [s[k] for s in structures]) for k in first}
    return fn(structures)


def _to_numpy(x) -> np.ndarray:
    """A host array by TF's conversion rules (Python float -> float32, ...)."""
    if type(x) is Tensor:
        return np.asarray(x._value)
    if isinstance(x, Variable):
        return np.asarray(x.read_value()._value)
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, (str, bytes)) or (
        isinstance(x, list) and isinstance(_first_leaf(x), (str, bytes))
    ):
        return _string_array(x)
    return np.asarray(to_value(x))


def _first_leaf(x):
    while isinstance(x, (list, tuple)) and x:
        x = x[0]
    return x


def _string_array(x) -> np.ndarray:
    """Strings (kept as NumPy, jaxtape has no string tensors) by TF's rules:
    rectangular, and not mixed with numbers."""
    try:
        out = np.asarray(x)
    except ValueError:
        raise ValueError(
            "Can't convert non-rectangular Python sequence to Tensor. Every row of "
            "a nested list needs the same length; pad the rows first."
        ) from None
    if out.dtype.kind not in "SU" or not all(
        isinstance(v, (str, bytes)) for v in np.ravel(np.asarray(x, dtype=object))
    ):
        raise ValueError(
            "Can't convert Python sequence with mixed types to Tensor: strings and "
            f"other values in {x!r:.60}. Keep strings and numbers in separate "
            "components (a tuple or dict)."
        )
    return out


def _to_tensor(x):
    if isinstance(x, np.ndarray) and x.dtype.kind in "USO":
        return x  # strings have no jax dtype: they stay NumPy
    return Tensor(jax.numpy.asarray(x))


def _from_user(value):
    """User data as a structure of host arrays (by TF's conversion rules)."""
    return _map_structure(_to_numpy, value)


def _kept(x):
    # A map function's results stay where they are (no copy back to the host).
    if type(x) is Tensor:
        return x._value
    if isinstance(x, Variable):
        return x.read_value()._value
    return x if isinstance(x, jax.Array) else _to_numpy(x)


def _spec_of(element):
    def spec(a):
        a = np.asarray(a)
        dtype = _dtype(a)
        return TensorSpec(a.shape, dtype)

    return _map_structure(spec, element)


# -- the Dataset --------------------------------------------------------------------
class Dataset:
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
            lambda a: TensorSpec(a.shape[1:], _dtype(a)), data
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
    def range(*args, output_type=None, name=None) -> Dataset:  # noqa: A003
        """`range(stop)`, `range(start, stop[, step])` as int64 scalars (TF's rule)."""
        r = range(*[int(_to_numpy(a)) for a in args])
        dtype = np.dtype("int64") if output_type is None else _np_dtype(output_type)
        spec = TensorSpec([], dtype)
        return Dataset(lambda: (np.asarray(i, dtype) for i in r), len(r), spec)

    @staticmethod
    def zip(*datasets, name=None) -> Dataset:
        """Elements of several datasets side by side, as a tuple (or dict)."""
        if len(datasets) == 1 and isinstance(datasets[0], (tuple, list, dict)):
            datasets = datasets[0]
        items = list(datasets.values()) if isinstance(datasets, dict) else datasets
        for d in items:
            if not isinstance(d, Dataset):
                raise TypeError(
                    f"Dataset.zip expects Datasets, got {type(d).__name__}."
                )
        keys = list(datasets) if isinstance(datasets, dict) else None

        def make():
            for parts in zip(*[d._make() for d in items]):
                yield dict(zip(keys, parts)) if keys else tuple(parts)

        known = [d._cardinality for d in items if d._cardinality >= 0]
        if known:
            card = min(known)
        elif all(d._cardinality == INFINITE_CARDINALITY for d in items):
            card = INFINITE_CARDINALITY
        else:
            card = UNKNOWN_CARDINALITY
        specs = lambda: [d.element_spec for d in items]
        spec = (lambda: dict(zip(keys, specs()))) if keys else (lambda: tuple(specs()))
        return Dataset(make, card, spec)

    @staticmethod
    def from_generator(
        generator: Callable[..., Iterable[Any]], output_types=None, output_shapes=None,
        args=None, output_signature=None, name=None,
    ) -> Dataset:  # fmt: skip
        """Elements produced by calling `generator(*args)` afresh on each iteration."""
        if not callable(generator):
            raise TypeError(
                "from_generator expects a callable that returns an iterator."
            )
        call_args = tuple(args or ())

        def make():
            for value in generator(*call_args):
                yield _from_user(value)

        return Dataset(make, UNKNOWN_CARDINALITY)

    # -- transformations -------------------------------------------------------
    def batch(self, batch_size: int | TensorLike, drop_remainder: bool = False,
              num_parallel_calls: int | None = None, deterministic: bool | None = None,
              name: str | None = None) -> Dataset:  # fmt: skip
        """Stacks `batch_size` consecutive elements (the last batch may be smaller)."""
        size = int(_to_numpy(batch_size))
        if size < 1:
            raise ValueError(f"batch_size must be >= 1, got {size}.")
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
                yield _zip_structures(lambda parts: np.stack(parts), chunk)

        card = self._cardinality
        if card >= 0:
            card = card // size if drop_remainder else -(-card // size)
        lead = size if drop_remainder else None
        spec = self._derived_spec(lambda s: TensorSpec([lead, *s.shape], s.dtype))
        return Dataset(make, card, spec)

    def unbatch(self, name=None) -> Dataset:
        """Splits each element along its first axis (the inverse of `batch`)."""
        source = self._make

        def make():
            for element in source():
                leaves = _leaves(element)
                for i in range(leaves[0].shape[0] if leaves else 0):
                    yield _map_structure(lambda a: a[i], element)

        spec = self._derived_spec(lambda s: TensorSpec(s.shape[1:], s.dtype))
        return Dataset(make, UNKNOWN_CARDINALITY, spec)

    def map(self, map_func: Callable[..., Any], num_parallel_calls: int | None = None,
            deterministic: bool | None = None, name: str | None = None,
            ) -> Dataset:  # fmt: skip
        """Applies `map_func` to each element (tuple elements are spread as arguments).

        With `num_parallel_calls`, up to that many elements (or the CPU count
        for `AUTOTUNE`) are mapped at once on threads; order is kept.
        """
        source = self._make
        call = _UserFunction(map_func, "map")
        workers = _workers(num_parallel_calls)

        def make():
            if workers <= 1:
                for i, element in enumerate(source()):
                    yield call(element, i)
                return
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(workers) as pool:
                pending = []
                for i, element in enumerate(source()):
                    pending.append(pool.submit(call, element, i))
                    if len(pending) >= 2 * workers:
                        yield pending.pop(0).result()
                for future in pending:
                    yield future.result()

        return Dataset(make, self._cardinality)

    def filter(self, predicate: Callable[..., Any], name: str | None = None) -> Dataset:
        """Keeps the elements for which `predicate` returns True."""
        source = self._make
        call = _UserFunction(predicate, "filter")

        def make():
            for i, element in enumerate(source()):
                keep = call(element, i)
                if np.shape(keep) != ():
                    raise ValueError(
                        f"Dataset.filter predicate {call.where} must return a scalar "
                        f"bool, got shape {np.shape(keep)}."
                    )
                if bool(keep):
                    yield element

        return Dataset(make, UNKNOWN_CARDINALITY, self._same_spec())

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

        return Dataset(make, self._cardinality, self._same_spec())

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
        return Dataset(make, card, self._same_spec())

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
        return Dataset(make, card, self._same_spec())

    def skip(self, count: int | TensorLike, name: str | None = None) -> Dataset:
        """All but the first `count` elements (none when -1)."""
        n = int(_to_numpy(count))
        source = self._make
        if n < 0:
            return Dataset(lambda: iter(()), 0, self._same_spec())
        card = self._cardinality
        if card >= 0:
            card = max(card - n, 0)
        return Dataset(
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
        return Dataset(make, self._cardinality, spec)

    def cache(self, filename="", name=None) -> Dataset:
        """Keeps the elements of the first complete pass in memory for later passes.

        Caching to a file is not implemented: `filename` must be empty.
        """
        if filename:
            raise NotImplementedError(
                "Dataset.cache(filename) is not supported; use cache() to keep the "
                "elements in memory."
            )
        source = self._make
        store: dict = {}

        def make():
            if "elements" in store:
                yield from store["elements"]
                return
            seen = []
            for element in source():
                seen.append(element)
                yield element
            store["elements"] = seen

        return Dataset(make, self._cardinality, self._same_spec())

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

        return Dataset(make, self._cardinality, self._same_spec())

    # -- consumption -----------------------------------------------------------
    def __iter__(self) -> Iterator[Any]:
        for element in self._make():
            yield _map_structure(_host_or_device_tensor, element)

    def as_numpy_iterator(self) -> Iterator[Any]:
        """The elements as NumPy arrays (TF's `as_numpy_iterator`)."""
        for element in self._make():
            yield _map_structure(np.asarray, element)

    def _same_spec(self):
        return lambda: self.element_spec

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
        if self._spec is None:
            for element in self._make():
                self._spec = _spec_of(element)
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
        spec = (
            self._spec if isinstance(self._spec, (TensorSpec, tuple, dict)) else "..."
        )
        return f"<jaxtape.data.Dataset element_spec={spec}>"


def _dtype(a: np.ndarray):
    if a.dtype.kind in "USO":
        raise NotImplementedError(
            "element_spec of string components is not supported: jaxtape has no "
            "string dtype yet (the elements themselves work, as NumPy arrays)."
        )
    return a.dtype


def _np_dtype(dtype):
    from jaxtape._src.core import dtypes

    return dtypes.np_dtype(dtype)


def _host_or_device_tensor(x):
    if isinstance(x, jax.Array):
        return Tensor(x)
    return _to_tensor(x)


def _workers(num_parallel_calls) -> int:
    if num_parallel_calls is None:
        return 1
    n = int(num_parallel_calls)
    if n == AUTOTUNE:
        import os

        return max(os.cpu_count() or 1, 1)
    return max(n, 1)


class _UserFunction:
    """Calls a user's `map`/`filter` function on Tensors; its errors name it."""

    def __init__(self, fn, method: str):
        if not callable(fn):
            raise TypeError(f"Dataset.{method} expects a callable, got {fn!r}.")
        self.fn = fn
        self.method = method
        code = getattr(fn, "__code__", None)
        name = getattr(fn, "__qualname__", repr(fn))
        self.where = (
            f"{name} ({code.co_filename}:{code.co_firstlineno})" if code else name
        )

    def __call__(self, element, index: int) -> Any:
        args = _map_structure(_to_tensor, element)
        try:
            if isinstance(args, tuple) and not hasattr(args, "_fields"):
                out = self.fn(*args)
            else:
                out = self.fn(args)
        except Exception as e:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Dataset.{self.method} function {self.where} raised "
                f"{type(e).__name__}: {e} (on element {index}). Fix the function or "
                "the data; the original error is chained below.",
            ) from e
        return _map_structure(_kept, out)


class _Prefetcher:
    """An iterator filled by a background thread, elements already on the device."""

    _DONE = object()

    def __init__(self, source: Iterator, size: int):
        self._queue: queue.Queue = queue.Queue(maxsize=size)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._fill, args=(source,), daemon=True)
        self._thread.start()

    def _fill(self, source):
        try:
            for element in source:
                if not self._put(_map_structure(_device_put, element)):
                    return
            self._put(self._DONE)
        except BaseException as e:  # handed to the consumer, raised there
            self._put(e)

    def _put(self, item) -> bool:
        """Waits for room unless the consumer has gone; False if it has."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self):
        return self

    def __next__(self):
        item = self._queue.get()
        if item is self._DONE:
            self._stop.set()
            raise StopIteration
        if isinstance(item, BaseException):
            self._stop.set()
            raise item
        return item

    def __del__(self):
        self._stop.set()


def _device_put(x):
    if isinstance(x, np.ndarray) and x.dtype.kind in "USO":
        return x
    return jax.device_put(x)
