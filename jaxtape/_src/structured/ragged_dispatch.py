"""TF's ragged dispatch for dense ops: `jaxtape.math.abs(rt)`, `jaxtape.add(rt, 1)`,
`jaxtape.reduce_sum(rt, axis=1)`, `jaxtape.concat([rt, rt], 0)`, `jaxtape.shape(rt)`.

Layer L2 (`structured/`): imports `core`, `ops` and the other `structured`
modules. The dispatcher hands an op whose input is a RaggedTensor to
`_dispatch_ragged` (`dispatch.register_composite`, a hook reached only when an
input is not a Tensor), which looks the op's TF name up in `_HANDLERS`:

- element-wise ops run once on the flat values (RaggedTensor operands need
  the same row splits; dense ones broadcast as in `RaggedTensor.__add__`);
- reductions go to `ragged_ops.reduce_*`; `concat`/`stack` to the row
  concatenation of `ragged_ops`; `shape` gives a `DynamicRaggedShape`.

It also registers RaggedTensor and SparseTensor with `jaxtape.nest`, whose
`expand_composites=True` flattens them into their component Tensors.

Any other op raises TF's conversion `ValueError`, naming the way out
(`to_tensor()`, `jaxtape.ragged.map_flat_values`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxtape._src.core import dtypes
from jaxtape._src.core.dispatch import (
    CompositeInput,
    OpInfo,
    dispatch,
    register_composite,
)
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import math_ops, nest, nondiff
from jaxtape._src.ops.creation_ops import convert_to_tensor
from jaxtape._src.structured import ragged_ops
from jaxtape._src.structured.ragged import (
    RaggedTensor,
    _check_same_splits,
    _host_splits,
    _is_traced,
    _nrows,
    _operand,
)
from jaxtape._src.structured.sparse import SparseTensor


# -- element-wise --------------------------------------------------------------------
def _elementwise(info: OpInfo, ins: tuple, params: tuple) -> RaggedTensor:
    """The op on the flat values, in the row structure of its ragged inputs."""
    rts = [a for a in ins if isinstance(a, RaggedTensor)]
    rt = rts[0]
    for other in rts[1:]:
        _check_same_splits(rt, other)
    vals = tuple(
        a.flat_values if isinstance(a, RaggedTensor) else _dense_operand(a, rt)
        for a in ins
    )
    return rt.with_flat_values(dispatch(info, vals, params))


def _dense_operand(a, rt: RaggedTensor):
    if a is None or type(a) is Tensor and not a.shape:
        return a  # (a scalar Tensor applies to every value as it is)
    return _operand(a, rt)


# TF's unary and binary element-wise APIs (`dispatch_for_*_elementwise_apis`),
# by the TF op name jaxtape's op carries.
_ELEMENTWISE = """
    Abs Acos Acosh Angle Asin Asinh Atan Atanh BesselI0 BesselI0e BesselI1
    BesselI1e Cast Ceil ClipByValue Conj Cos Cosh Digamma Elu Erf Erfc Erfinv Exp
    Expm1 Floor Gelu Identity Imag Invert IsFinite IsInf IsNan LeakyRelu Lgamma
    Log Log1p LogSigmoid LogicalNot Ndtri Neg OnesLike Real Reciprocal
    ReciprocalNoNan Relu Relu6 Rint Round Rsqrt Selu Sigmoid Sign Silu Sin Sinh
    Softplus Softsign Sqrt Square StopGradient Tan Tanh ZerosLike
    AddV2 Atan2 BitwiseAnd BitwiseOr BitwiseXor DivNoNan Equal FloorDiv FloorMod
    Greater GreaterEqual Igamma Igammac LeftShift Less LessEqual LogicalAnd
    LogicalOr LogicalXor Maximum Minimum Mul NextAfter NotEqual Polygamma Pow
    RealDiv RightShift SquaredDifference Sub TrueDiv Xdivy Xlog1py Xlogy Zeta
    SelectV2
""".split()


# -- reductions ----------------------------------------------------------------------
_REDUCTIONS = {
    "Sum": ragged_ops.reduce_sum,
    "Mean": ragged_ops.reduce_mean,
    "Max": ragged_ops.reduce_max,
    "Min": ragged_ops.reduce_min,
    "Prod": ragged_ops.reduce_prod,
}


def _reduce(info: OpInfo, ins: tuple, params: tuple):
    (rt,) = ins
    axis, keepdims = params
    return _REDUCTIONS[info.name](rt, axis=axis, keepdims=keepdims)


def _reduce_logical(info: OpInfo, ins: tuple, params: tuple):
    """`reduce_any` (any true value) / `reduce_all` (no false value) per row:
    an empty row gives False / True, as TF's."""
    (rt,) = ins
    axis, keepdims = params
    if info.name == "ReduceAll":
        rt = rt.with_flat_values(nondiff.logical_not(rt.flat_values))
    ones = rt.with_flat_values(math_ops.cast(rt.flat_values, np.int32))
    count = ragged_ops.reduce_sum(ones, axis=axis, keepdims=keepdims)
    return count > 0 if info.name == "ReduceAny" else count == 0


# -- concat and stack ------------------------------------------------------------------
def _stack(info: OpInfo, ins: tuple, params: tuple):
    (axis,) = params
    return ragged_ops.stack(list(ins), axis)


def _concat(info: OpInfo, ins: tuple, params: tuple):
    """TF's ragged `concat`: a stack along `axis`, merged with the next axis."""
    (axis,) = params
    if len(ins) == 1:
        return ins[0]
    rank = max(a.ndim for a in ins if isinstance(a, RaggedTensor))
    axis = int(axis) + (rank if axis < 0 else 0)
    stacked: Any = ragged_ops.stack(list(ins), axis)
    return stacked.merge_dims(axis, axis + 1)


# -- shape, size, rank ----------------------------------------------------------------
class DynamicRaggedShape:
    """`jaxtape.shape(rt)`: TF's `DynamicRaggedShape`, the part tutorials use.

    `shape[0]` is the number of rows, `shape[i]` the size of a uniform
    dimension (a ValueError for a ragged one, as TF's); `rank`, `dtype`,
    `num_row_partitions` and `static_lengths()` as TF's.

    Differences from TensorFlow: no slicing, broadcasting or `RowPartition`s.
    """

    __slots__ = ("_rt", "_dtype")

    def __init__(self, rt: RaggedTensor, dtype):
        self._rt = rt
        self._dtype = dtypes.as_dtype(dtype)

    rank = property(lambda self: self._rt.ndim)
    dtype = property(lambda self: self._dtype)
    num_row_partitions = property(lambda self: self._rt.ragged_rank)

    def static_lengths(self) -> list:
        """The static size of each dimension (None for a ragged one)."""
        return list(self._rt.shape)

    def __getitem__(self, index):
        if not isinstance(index, (int, np.integer)):
            raise NotImplementedError(
                "jaxtape's DynamicRaggedShape supports an integer index only; "
                f"received {index!r}. Use `rt.shape` for the static shape."
            )
        rank = self.rank
        i = int(index) + (rank if index < 0 else 0)
        if not 0 <= i < rank:
            raise IndexError(f"Index {index} out of range for rank {rank}.")
        size = self._rt.shape[i]
        if size is None:
            raise ValueError(f"Index {index} is not uniform")
        np_dt = dtypes.np_dtype(self._dtype)
        if i == 0:
            return convert_to_tensor(np.asarray(_nrows(self._rt), np_dt))
        return convert_to_tensor(np.asarray(size, np_dt))

    def __repr__(self) -> str:
        if _is_traced(self._rt):
            return f"<DynamicRaggedShape static_lengths={self.static_lengths()}>"
        lengths: list[Any] = [_nrows(self._rt)]
        rt: Any = self._rt
        while isinstance(rt, RaggedTensor):
            splits = _host_splits(rt, "shape")
            lengths.append(tuple(int(n) for n in np.diff(splits)))
            rt = rt.values
        lengths += [int(d) for d in rt.shape[1:]]
        text = ", ".join(
            "(" + ", ".join(map(str, d)) + ")" if isinstance(d, tuple) else str(d)
            for d in lengths
        )
        return (
            f"<DynamicRaggedShape lengths=[{text}] "
            f"num_row_partitions={self.num_row_partitions}>"
        )


def _shape(info: OpInfo, ins: tuple, params: tuple) -> DynamicRaggedShape:
    (rt,) = ins
    (out_type,) = params
    dt = dtypes.np_dtype(out_type)
    if dt not in (np.int32, np.int64):
        dispatch(info, (rt.flat_values,), params)  # (raises TF's error)
    return DynamicRaggedShape(rt, dt)


def _size(info: OpInfo, ins: tuple, params: tuple) -> Tensor:
    (rt,) = ins
    return dispatch(info, (rt.flat_values,), params)


def _rank(info: OpInfo, ins: tuple, params: tuple) -> Tensor:
    (rt,) = ins
    return convert_to_tensor(np.asarray(rt.ndim, np.int32))


# -- the table -------------------------------------------------------------------------
_HANDLERS: dict[str, Any] = dict.fromkeys(_ELEMENTWISE, _elementwise)
_HANDLERS.update(dict.fromkeys(_REDUCTIONS, _reduce))
_HANDLERS.update(
    ReduceAny=_reduce_logical,
    ReduceAll=_reduce_logical,
    ConcatV2=_concat,
    Pack=_stack,
    Shape=_shape,
    Size=_size,
    Rank=_rank,
)


def _dispatch_ragged(info: OpInfo, ins: tuple, params: tuple):
    handler = _HANDLERS.get(info.name)
    if handler is None:
        rt = next(a for a in ins if isinstance(a, RaggedTensor))
        raise CompositeInput(rt)
    return handler(info, ins, params)


register_composite(RaggedTensor, _dispatch_ragged)


# -- nest: `expand_composites=True` ---------------------------------------------------
def _ragged_components(rt: RaggedTensor) -> list:
    return [rt.flat_values, *rt.nested_row_splits]


def _ragged_rebuild(rt: RaggedTensor, parts: list) -> RaggedTensor:
    out: Any = RaggedTensor.from_nested_row_splits(parts[0], parts[1:], validate=False)
    return out


def _sparse_components(st: SparseTensor) -> list:
    return [st.indices, st.values, st.dense_shape]


def _sparse_rebuild(st: SparseTensor, parts: list) -> SparseTensor:
    return SparseTensor(*parts)


nest.register_composite(RaggedTensor, _ragged_components, _ragged_rebuild)
nest.register_composite(SparseTensor, _sparse_components, _sparse_rebuild)
