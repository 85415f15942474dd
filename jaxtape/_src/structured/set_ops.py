"""`jaxtape.sets` (TF's `tf.sets`): set operations along the last dimension.

Layer L2 (`structured/`): imports `core`, `ops` and the other `structured`
modules. Each position of the leading dimensions holds a set (the distinct
values of its last-dimension row). `union`, `intersection` and `difference`
return a `SparseTensor` whose rows hold each result set in ascending order,
in TF's row-major index order, with dense shape `leading dims + [largest
set]`; the number of entries depends on the data, so they run on the host
(inside `jaxtape.function` they need concrete or string inputs). `size`
counts distinct values per set in a pure jnp body, so it also works on traced
values.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import checks, dtypes, errors
from jaxtape._src.core.dispatch import op
from jaxtape._src.ops.creation_ops import convert_to_tensor
from jaxtape._src.structured.sparse import SparseTensor, host_array, linear
from jaxtape._src.structured.strings import StringTensor

_INT64 = np.dtype(np.int64)
_SUPPORTED = ("int8", "int16", "int32", "int64", "uint8", "uint16", "string")


def _check_dtype(x, what: str) -> None:
    if x.dtype.name not in _SUPPORTED:
        names = ", ".join(f"tf.{n}" for n in _SUPPORTED)
        raise TypeError(
            f"'{what}' has invalid dtype `{x.dtype!r}` not in supported dtypes: "
            f"`frozenset({{{names}}})`."
        )


def _input(x, what: str):
    if isinstance(x, SparseTensor):
        return x
    return convert_to_tensor(x)


def _check_order(xp, indices, shape, validate, op_name):
    """TF's check that a SparseTensor's indices are in row-major order."""
    if not validate or not indices.shape[0] or not len(shape):
        return
    keys = linear(indices, shape)
    nxt = [lambda xp, p, k=k: indices[p + 1, k] for k in range(len(shape))]
    text = "indices[{}] = [" + ",".join(["{}"] * len(shape)) + "]"
    at1 = [lambda xp, p: p + 1]
    checks.require(
        xp,
        keys[1:] < keys[:-1],
        op_name,
        text + " is out of order. Many sparse ops require sorted indices.\n"
        "    Use `jaxtape.sparse.reorder` to create a correctly ordered copy.\n\n",
        *at1,
        *nxt,
    )
    checks.require(
        xp, keys[1:] == keys[:-1], op_name, text + " is repeated", *at1, *nxt
    )


def _check_size(xp, indices, values, shape, validate):
    _check_order(xp, indices, shape, validate, "SetSize")


@op("SetSize", inputs=("indices", "values"), differentiable=False, check=_check_size)
def _set_size(indices, values, shape, validate):
    del validate  # (the check's)
    groups = shape[:-1]
    n_groups = int(np.prod(groups, dtype=np.int64)) if groups else 1
    if indices.shape[0] == 0:
        return jnp.zeros(groups, jnp.int32)
    gid = linear(indices[:, :-1], groups) if groups else jnp.zeros_like(indices[:, 0])
    order = jnp.lexsort((values, gid))
    g, v = gid[order], values[order]
    new = jnp.concatenate([jnp.array([True]), (g[1:] != g[:-1]) | (v[1:] != v[:-1])])
    counts = jnp.zeros([n_groups], jnp.int32).at[g].add(new.astype(jnp.int32))
    return counts.reshape(groups)


def size(a, validate_indices=True):
    """The number of distinct values in each set of SparseTensor `a` (int32).

    Args:
      a: a `SparseTensor`; its last dimension holds the set elements.
      validate_indices: check that `a`'s indices are in row-major order
        (TF's InvalidArgumentError otherwise).

    Returns:
      An int32 Tensor of shape `a.dense_shape[:-1]`.
    """
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a!r}.")
    _check_dtype(a, "a")
    shape = tuple(a.shape)
    if len(shape) < 2:
        raise errors.invalid_argument(
            f"Shape {list(shape)} has rank {len(shape)} < 2", "SetSize"
        )
    values = a.values
    if isinstance(values, StringTensor):  # host strings: codes, same order
        _, codes = np.unique(values._v, return_inverse=True)
        values = convert_to_tensor(codes.astype(np.int32).reshape(-1))
    return _set_size(a.indices, values, shape, bool(validate_indices))


# -- union / intersection / difference (host) ------------------------------------------
def _groups(x, which: str, validate: bool, op_name: str) -> tuple[tuple, dict]:
    """(leading shape, {leading index: set of values}) of a set operand."""
    if isinstance(x, SparseTensor):
        shape = tuple(x.shape)
        idx = host_array(x.indices, f"jaxtape.sets ({which})", "the indices")
        vals = _host_values(x.values, which)
        _rank_at_least_2(shape, op_name)
        _check_order(np, idx, shape, validate, op_name)
        out: dict = {}
        for row, v in zip(map(tuple, idx[:, :-1].tolist()), vals.tolist()):
            out.setdefault(row, set()).add(v)
        return shape[:-1], out
    vals = _host_values(x, which)
    _rank_at_least_2(vals.shape, op_name)
    lead = vals.shape[:-1]
    rows = vals.reshape(int(np.prod(lead)), vals.shape[-1]).tolist()
    return lead, dict(zip(np.ndindex(*lead), map(set, rows)))


def _rank_at_least_2(shape, op_name):
    if len(shape) < 2:
        raise errors.invalid_argument(
            f"Shape {list(shape)} has rank {len(shape)} < 2", op_name
        )


def _host_values(x, which: str) -> np.ndarray:
    if isinstance(x, StringTensor):
        return x._v
    return host_array(x, f"jaxtape.sets ({which})", "the set elements")


def _set_op(a, b, kind: str, aminusb: bool, validate_indices: bool):
    a, b = _input(a, "a"), _input(b, "b")
    _check_dtype(a, "a")
    if a.dtype != b.dtype:
        raise TypeError(f"Types don't match, {a.dtype!r} vs {b.dtype!r}.")
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        a, b, aminusb = b, a, not aminusb  # TF's order: dense first
    a_sparse, b_sparse = isinstance(a, SparseTensor), isinstance(b, SparseTensor)
    op_name = (
        ("Sparse" if a_sparse else "Dense")
        + "To"
        + ("Sparse" if b_sparse else "Dense")
        + "SetOperation"
    )
    validate = bool(validate_indices)
    lead_a, sets_a = _groups(a, "a", validate, op_name)
    lead_b, sets_b = _groups(b, "b", validate, op_name)
    if lead_a != lead_b:
        raise errors.invalid_argument(
            f"Mismatched shapes {list(lead_a)} vs {list(lead_b)}", op_name
        )
    indices: list = []
    values: list = []
    width = 0
    for pos in np.ndindex(*lead_a):
        sa, sb = sets_a.get(pos, set()), sets_b.get(pos, set())
        if kind == "union":
            got = sa | sb
        elif kind == "intersection":
            got = sa & sb
        else:
            got = sa - sb if aminusb else sb - sa
        ordered = sorted(got)
        width = max(width, len(ordered))
        indices.extend([*pos, j] for j in range(len(ordered)))
        values.extend(ordered)
    return _result(indices, values, lead_a + (width,), a.dtype)


def _result(indices: list, values: list, shape: tuple, dtype) -> SparseTensor:
    idx = np.asarray(indices, _INT64).reshape(-1, len(shape))
    if dtype == dtypes.string:
        vals: Any = np.empty(len(values), object)
        vals[:] = values
    else:
        vals = np.asarray(values, dtypes.np_dtype(dtype)).reshape(-1)
    return SparseTensor(idx, convert_to_tensor(vals, dtype=dtype), shape)


def union(a, b, validate_indices=True):
    """The union of the sets in the last dimension of `a` and `b`.

    Args:
      a, b: Tensors or `SparseTensor`s of the same dtype (integers or
        strings), rank >= 2, with the same leading dimensions.
      validate_indices: check that SparseTensor indices are in row-major order.

    Returns:
      A `SparseTensor` with each result set, sorted, in its row.

    >>> a, b = jaxtape.constant([[1, 2]]), jaxtape.constant([[3, 1]])
    >>> jaxtape.sets.union(a, b).values.numpy()
    array([1, 2, 3], dtype=int32)
    """
    return _set_op(a, b, "union", True, validate_indices)


def intersection(a, b, validate_indices=True):
    """The intersection of the sets in the last dimension of `a` and `b`.

    Arguments and result as `union`.
    """
    return _set_op(a, b, "intersection", True, validate_indices)


def difference(a, b, aminusb=True, validate_indices=True):
    """`a - b` (or `b - a` when `aminusb` is False) of last-dimension sets.

    Arguments and result as `union`.
    """
    return _set_op(a, b, "difference", aminusb, validate_indices)
