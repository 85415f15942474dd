"""`SparseTensor` (TF's `tf.sparse.SparseTensor`) and the ops that change only
its values or order: conversion to and from dense, reorder, transpose, the
element-wise operators. Layer L2 (`structured/`): imports `core` and `ops`.

A SparseTensor holds `indices` (int64 `[N, rank]`) and `values` (`[N]`) as
Tensors and its `dense_shape` as static Python ints: JAX needs static shapes
to build `to_dense`'s output, so the dense shape is part of the structure (the
pytree's aux data), not a traced input, and a new dense shape retraces a
`jaxtape.function`, as a new `SparseTensorSpec` does in TF. Values pass
through dispatched ops, so gradients with respect to them record on a
`GradientTape` and come back dense, as TF's do.

Ops whose number of output entries depends on the data (`from_dense`, `add`,
`retain`, `slice`, ...) read it on the host: inside `jaxtape.function` they
need concrete indices (see `sparse_ops`).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import checks, errors
from jaxtape._src.core.dispatch import op, to_value
from jaxtape._src.core.tensor import Tensor, TensorShape
from jaxtape._src.ops.array_ops import gather_nd
from jaxtape._src.ops.creation_ops import convert_to_tensor

_INT64 = np.dtype(np.int64)


class SparseTensor:
    """A sparse tensor: `values[i]` sits at `indices[i]` of a `dense_shape` tensor.

    Args:
      indices: int64 `[N, rank]`, the positions of the values.
      values: `[N]`, any dtype.
      dense_shape: int64 `[rank]`, the shape of the dense tensor (must be known:
        a list, NumPy array, or concrete Tensor).

    >>> sp = jaxtape.SparseTensor([[0, 1], [2, 0]], [1.0, 2.0], [3, 4])
    >>> sp.shape
    TensorShape([3, 4])

    Differences from TensorFlow:
      `dense_shape` is static (part of the structure under `jaxtape.function`).
      TF1 graph attributes (`op`, `graph`, `eval`, `consumers`) are absent.
    """

    __slots__ = ("_indices", "_values", "_shape")

    def __init__(self, indices, values, dense_shape):
        shape = _static_shape(dense_shape)
        idx = convert_to_tensor(indices, dtype=_INT64)
        vals = convert_to_tensor(values)
        if len(idx.shape) != 2:
            raise ValueError(f"Shape {tuple(idx.shape)} must have rank 2")
        if len(vals.shape) != 1:
            raise ValueError(f"Shape {tuple(vals.shape)} must have rank 1")
        if idx.shape[0] != vals.shape[0]:
            raise ValueError(
                f"Dimensions {idx.shape[0]} and {vals.shape[0]} are not compatible: "
                "`indices` and `values` need one row per value."
            )
        if idx.shape[1] != len(shape):
            raise ValueError(
                f"Dimensions {idx.shape[1]} and {len(shape)} are not compatible: "
                "each row of `indices` has one entry per dimension of `dense_shape`."
            )
        self._indices = idx
        self._values = vals
        self._shape = shape

    @classmethod
    def from_value(cls, sparse_tensor_value) -> SparseTensor:
        """A SparseTensor from a SparseTensor (or anything with its three fields)."""
        if isinstance(sparse_tensor_value, SparseTensor):
            return sparse_tensor_value
        v = sparse_tensor_value
        return cls(v.indices, v.values, v.dense_shape)

    @property
    def indices(self) -> Tensor:
        """The int64 `[N, rank]` positions of the values."""
        return self._indices

    @property
    def values(self) -> Tensor:
        """The `[N]` values."""
        return self._values

    @property
    def dense_shape(self) -> Tensor:
        """The dense shape, an int64 `[rank]` Tensor."""
        return convert_to_tensor(np.asarray(self._shape, _INT64))

    @property
    def dtype(self):
        """The dtype of the values."""
        return self._values.dtype

    @property
    def shape(self) -> TensorShape:
        """The dense shape as a `TensorShape`."""
        return TensorShape(self._shape)

    def get_shape(self) -> TensorShape:
        return self.shape

    def set_shape(self, shape) -> None:
        """Checks that `shape` is compatible (the shape is always fully known)."""
        want = TensorShape(shape)
        if len(want) != len(self._shape) or any(
            w is not None and w != d for w, d in zip(want, self._shape)
        ):
            raise ValueError(
                f"Shapes {self.shape} and {want} are not compatible: a "
                "SparseTensor's dense shape is fixed; use `jaxtape.sparse.reset_shape`."
            )

    def with_values(self, new_values) -> SparseTensor:
        """The same indices and dense shape with `new_values` (`[N]`)."""
        return SparseTensor(self._indices, new_values, self._shape)

    def __mul__(self, other):
        return _dense_binary(self, other, "mul")

    def __rmul__(self, other):
        # `dense * sparse` (a Tensor or Variable): TF's operator dispatches it
        # to the sparse product; a number or list on the left raises TypeError.
        if isinstance(other, (int, float, complex, list, tuple, np.generic)):
            return NotImplemented
        return _dense_binary(self, other, "mul")

    def __truediv__(self, other):
        return _dense_binary(self, other, "truediv")

    def __div__(self, other):
        return _dense_binary(self, other, "div")

    def __repr__(self) -> str:
        return (
            f"SparseTensor(indices={self._indices!s}, values={self._values!s}, "
            f"dense_shape={self.dense_shape!s})"
        )

    __str__ = __repr__


def _rebuild(shape, children) -> SparseTensor:
    """From pytree children (any leaves JAX hands back: no checks)."""
    sp = object.__new__(SparseTensor)
    sp._indices, sp._values = children
    sp._shape = shape
    return sp


jax.tree_util.register_pytree_node(
    SparseTensor, lambda sp: ((sp._indices, sp._values), sp._shape), _rebuild
)


def _static_shape(dense_shape) -> tuple[int, ...]:
    """`dense_shape` as Python ints (it must be known, also while tracing)."""
    if isinstance(dense_shape, (tuple, list, TensorShape)) and all(
        isinstance(d, (int, np.integer)) for d in dense_shape
    ):
        dims = tuple(int(d) for d in dense_shape)
    else:
        try:
            host = checks.host(to_value(dense_shape))
        except (
            jax.errors.ConcretizationTypeError,
            jax.errors.TracerArrayConversionError,
        ):
            raise NotImplementedError(
                "SparseTensor: `dense_shape` must be known while jaxtape.function "
                "traces (jaxtape keeps it static). Compute it from static shapes "
                "(`x.shape`) or pass the SparseTensor in as an argument."
            ) from None
        if host.ndim != 1:
            raise ValueError(f"Shape {host.shape} must have rank 1")
        if host.dtype.kind not in "iu":
            raise TypeError(
                f"dense_shape must be integers; got {host.dtype.name}. Received: "
                f"dense_shape={dense_shape!r}"
            )
        dims = tuple(int(d) for d in host)
    if any(d < 0 for d in dims):
        raise ValueError(
            f"dense_shape must be non-negative; got {list(dims)}. jaxtape's "
            "SparseTensor needs a fully known dense shape."
        )
    return dims


def is_sparse(x) -> bool:
    return isinstance(x, SparseTensor)


def sparse_arg(x, what: str = "Input") -> SparseTensor:
    """`x` as a SparseTensor, or TF's TypeError."""
    if isinstance(x, SparseTensor):
        return x
    raise TypeError(
        f"{what} must be a SparseTensor. Received: {type(x).__name__}. Build one "
        "with `jaxtape.sparse.from_dense` or `jaxtape.SparseTensor(indices, values, "
        "dense_shape)`."
    )


def host_array(x: Any, op_name: str, what: str) -> np.ndarray:
    """A concrete value on the host; inside a trace, TF's output size is unknown."""
    try:
        return checks.host(to_value(x))
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError):
        raise NotImplementedError(
            f"{op_name}: {what} decides how many entries the result has, and "
            "jaxtape needs that size while jaxtape.function traces. Call it "
            "outside the function, or pass its result in as an argument."
        ) from None


def strides(shape) -> np.ndarray:
    """Row-major strides of `shape` (int64), to turn indices into one key."""
    out = np.ones(len(shape), _INT64)
    for k in range(len(shape) - 2, -1, -1):
        out[k] = out[k + 1] * max(shape[k + 1], 1)
    return out


def linear(indices, shape):
    """Each row of `indices` as one row-major key (NumPy or jnp)."""
    xp = np if isinstance(indices, np.ndarray) else jnp
    if not len(shape):
        return xp.zeros(indices.shape[:1], _INT64)
    return (indices.astype(_INT64) * xp.asarray(strides(shape))).sum(axis=1)


def unlinear(keys, shape):
    """Row-major keys back to `[N, rank]` int64 indices (NumPy or jnp)."""
    xp = np if isinstance(keys, np.ndarray) else jnp
    cols = [(keys // int(s)) % max(int(d), 1) for s, d in zip(strides(shape), shape)]
    if not cols:
        return xp.zeros(keys.shape + (0,), _INT64)
    return xp.stack(cols, axis=1).astype(_INT64)


# -- to_dense ------------------------------------------------------------------------
def _check_to_dense(xp, indices, values, default_value, shape, validate):
    if not validate or not indices.shape[0] or not len(shape):
        return
    row = [lambda xp, p, k=k: indices[p // len(shape), k] for k in range(len(shape))]
    text = "indices[{}] = [" + ",".join(["{}"] * len(shape)) + "]"
    bounds = "[" + ",".join(str(d) for d in shape) + "]"
    out = (indices < 0) | (indices >= xp.asarray(shape, _INT64))
    at = [lambda xp, p: p // len(shape)]
    checks.require(
        xp,
        out,
        "SparseToDense",
        text + f" is out of bounds: need 0 <= index < {bounds}",
        *at,
        *row,
    )
    keys = linear(indices, shape)
    nxt = [lambda xp, p, k=k: indices[p + 1, k] for k in range(len(shape))]
    at1 = [lambda xp, p: p + 1]
    checks.require(
        xp,
        keys[1:] < keys[:-1],
        "SparseToDense",
        text + " is out of order. Many sparse ops require sorted indices.\n"
        "    Use `jaxtape.sparse.reorder` to create a correctly ordered copy.\n\n",
        *at1,
        *nxt,
    )
    checks.require(
        xp, keys[1:] == keys[:-1], "SparseToDense", text + " is repeated", *at1, *nxt
    )


@op(
    "SparseToDense",
    inputs=("indices", "values", "default_value"),
    check=_check_to_dense,
)
def _to_dense(indices, values, default_value, shape, validate):
    del validate  # (the check's)
    out = jnp.full(shape, default_value, values.dtype)
    cols = tuple(indices[:, k] for k in range(len(shape)))
    if not cols:
        return out if values.shape[0] == 0 else jnp.asarray(values[-1])
    return out.at[cols].set(values, mode="drop")


def _values_dtype_scalar(sp: SparseTensor, value, what: str):
    """`value` (a scalar) as an input of the values' dtype."""
    dt = np.dtype(sp._values._value.dtype)
    v = convert_to_tensor(value) if type(value) is Tensor else to_value(value, dt)
    if np.ndim(v) != 0:
        raise errors.invalid_argument(
            f"{what} must be a scalar; got shape {np.shape(v)}"
        )
    if type(v) is Tensor and np.dtype(v._value.dtype) != dt:
        to_value(v, dt)  # TF's conversion error
    return v


def to_dense(sp_input, default_value=None, validate_indices=True, name=None) -> Tensor:
    """The dense tensor of `sp_input`, `default_value` (0) where no value is given.

    With `validate_indices`, indices out of bounds, out of order or repeated
    raise `InvalidArgumentError`, as TF's `SparseToDense`. Differentiable with
    respect to the values and `default_value`.

    Differences from TensorFlow:
      With `validate_indices=False` and repeated indices, the last value wins.
    """
    del name
    sp = sparse_arg(sp_input)
    default = _values_dtype_scalar(
        sp, 0 if default_value is None else default_value, "default_value"
    )
    return _to_dense(
        sp._indices, sp._values, default, sp._shape, bool(validate_indices)
    )


def from_dense(tensor, name=None) -> SparseTensor:
    """A SparseTensor of the nonzero entries of `tensor`, in row-major order.

    Gradients of the values flow to `tensor` (a gather), as in TF.
    Inside `jaxtape.function` the tensor must be concrete (the number of
    nonzeros sizes the result).
    """
    del name
    t = convert_to_tensor(tensor)
    host = host_array(t, "from_dense", "the number of nonzero entries")
    idx = np.argwhere(host != 0).astype(_INT64)
    values = gather_nd(t, idx) if host.ndim else _scalar_values(t, idx)
    return SparseTensor(idx, values, host.shape)


def _scalar_values(t, idx):
    from jaxtape._src.ops.array_ops import reshape

    flat = reshape(t, [1])
    return flat[: idx.shape[0]]


# -- order -----------------------------------------------------------------------------
@op("SparseReorder", inputs=("indices", "values"))
def _reorder(indices, values, shape, perm):
    if perm is not None:
        indices = indices[:, list(perm)]
    order = jnp.argsort(linear(jnp.asarray(indices), shape), stable=True)
    return indices[order], values[order]


def reorder(sp_input, name=None) -> SparseTensor:
    """The same SparseTensor with its entries in row-major (lexicographic) order."""
    del name
    sp = sparse_arg(sp_input)
    idx, vals = _reorder(sp._indices, sp._values, sp._shape, None)
    return SparseTensor(idx, vals, sp._shape)


def transpose(sp_input, perm=None, name=None) -> SparseTensor:
    """Permutes the dimensions (`perm`, default reversed); entries reordered."""
    del name
    sp = sparse_arg(sp_input)
    rank = len(sp._shape)
    if perm is None:
        p = tuple(range(rank - 1, -1, -1))
    else:
        p = tuple(int(d) for d in np.asarray(host_array(perm, "transpose", "perm")))
    if sorted(d % rank if rank else d for d in p) != list(range(rank)):
        raise errors.invalid_argument(
            f"perm {list(p)} is not a permutation of [0, {rank})."
        )
    p = tuple(d % rank for d in p)
    shape = tuple(sp._shape[d] for d in p)
    idx, vals = _reorder(sp._indices, sp._values, shape, p)
    return SparseTensor(idx, vals, shape)


# -- element-wise with a dense tensor --------------------------------------------------
def _check_broadcast(sp_shape, dense_shape, op_name):
    nd = len(dense_shape)
    ok = nd <= len(sp_shape) and all(
        d in (1, s) for d, s in zip(dense_shape, sp_shape[len(sp_shape) - nd :])
    )
    if not ok:
        raise errors.invalid_argument(
            "SparseDenseBinaryOpShared broadcasts dense to sparse only; got "
            f"incompatible shapes: [{','.join(map(str, sp_shape))}] vs. "
            f"[{','.join(map(str, dense_shape))}]",
            op_name,
        )


_CWISE = {
    "mul": ("SparseDenseCwiseMul", jnp.multiply),
    "truediv": ("SparseDenseCwiseDiv", jnp.true_divide),
    "div": ("SparseDenseCwiseDiv", jnp.divide),
    "add": ("SparseDenseCwiseAdd", jnp.add),
}


@op("SparseDenseCwise", inputs=("indices", "values", "dense"))
def _cwise(indices, values, dense, shape, kind):
    full = jnp.broadcast_to(dense, shape)
    at = full[tuple(indices[:, k] for k in range(len(shape)))]
    if kind == "div" and np.dtype(values.dtype).kind in "iu":
        return jnp.floor_divide(values, at)
    return _CWISE[kind][1](values, at)


def _dense_binary(sp: SparseTensor, other, kind: str):
    """TF's `SparseTensor * dense` (and `/`): dense broadcast to the sparse shape.

    Like TF, `/` of an integer SparseTensor by a number goes to float64
    (`truediv`'s rule); the result keeps the sparse tensor's indices.
    """
    vdt = np.dtype(sp._values._value.dtype)
    dense = convert_to_tensor(other, dtype=vdt)  # (TF's ValueError for another dtype)
    if kind == "truediv" and vdt.kind in "iu" and dense._value.dtype == vdt:
        from jaxtape._src.ops.math_ops import cast

        vdt = np.dtype(np.float32 if vdt.itemsize <= 2 else np.float64)
        sp = sp.with_values(cast(sp._values, vdt))
        dense = cast(dense, vdt)
    _check_broadcast(sp._shape, tuple(dense.shape), _CWISE[kind][0])
    values = _cwise(sp._indices, sp._values, dense, sp._shape, kind)
    return SparseTensor(sp._indices, values, sp._shape)
