"""Differential fuzz: every op jaxtape shares with TensorFlow, on edge-case inputs.

Each row names an op (`"math.sin"` is `m.math.sin` for `m` in (tf, jaxtape))
and builds its cases: the op applied to inputs drawn from a fixed seed and
from an edge-case pool per dtype (NaN, +-inf, -0.0, integer extremes,
unsigned integers, bool, float16/float64/complex, empty tensors, rank 0,
shape-1 broadcasting, negative axes). Every case runs under real TensorFlow
and under jaxtape; where TF returns, jaxtape must return the same dtype,
shape and values (exact for integers and bools, close for floats with NaN in
the same places); where TF raises, jaxtape must raise the same type (TF's
`errors.*` classes map to `jaxtape.errors.*`).

Where jaxtape deliberately differs from TF, the row says so in `differs`
(the case ids that are compared for shape and dtype only) with the reason in
a comment; the op's docstring documents it under "Differences from
TensorFlow".

Speed: every jaxtape case with a new dtype or shape is an XLA compile (10-30
ms on a CPU), so the dtype axis has two tiers. The common dtypes (`DTYPES`:
float16/32/64, int32, int64, uint8, bool, complex64, float32 and complex64
NaN/inf) are compared in full; the others (`REFUSALS`: int8, int16, uint16,
uint32, uint64, complex128, float16/float64 NaN/inf) are checked for TF's
refusals only: where TF raises, jaxtape must raise the same type (no compile
needed); where TF returns, the case is skipped. `JAXTAPE_FUZZ_FULL=1`
compares every dtype in full (a few minutes).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pytest

import jaxtape

_RNG = np.random.default_rng(1234)


def _floats(dtype):
    edge = [-0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-30, 6e4, -6e4]
    return np.asarray(edge + list(_RNG.normal(size=6) * 3), np.float64).astype(dtype)


def _ints(dtype):
    info = np.iinfo(dtype)
    vals = [0, 1, -1, 2, -7, 100, 5, -3, info.max, info.min]
    vals += list(_RNG.integers(-50, 50, size=6))
    return np.asarray(vals, np.int64).astype(dtype)


def _uints(dtype):
    info = np.iinfo(dtype)
    vals = [0, 1, 2, 7, 100, 5, 3, info.max] + list(_RNG.integers(0, 60, size=8))
    return np.asarray(vals, np.uint64).astype(dtype)


def _complex(dtype):
    vals = [1 + 2j, -0.5j, 0.5, 3 - 4j, -2.0, 1e-3 + 1j]
    vals += list(_RNG.normal(size=10) + 1j * _RNG.normal(size=10))
    return np.asarray(vals, np.complex128).astype(dtype)


# One edge-case vector per dtype (the `dtype` axis of the fuzz), 16 values each.
POOL = {
    "float16": _floats(np.float16),
    "float32": _floats(np.float32),
    "float64": _floats(np.float64),
    "int8": _ints(np.int8),
    "int16": _ints(np.int16),
    "int32": _ints(np.int32),
    "int64": _ints(np.int64),
    "uint8": _uints(np.uint8),
    "uint16": _uints(np.uint16),
    "uint32": _uints(np.uint32),
    "uint64": _uints(np.uint64),
    "bool": np.asarray([True, False, True, True, False, False, True, False] * 2),
    "complex64": _complex(np.complex64),
    "complex128": _complex(np.complex128),
}
FLOATS = ("float16", "float32", "float64")
SINTS = ("int8", "int16", "int32", "int64")
UINTS = ("uint8", "uint16", "uint32", "uint64")
# Non-finite values and zeros (kept apart: where TF's kernels and XLA give
# different garbage for them, a row marks these case ids alone).
_NONFINITE = [np.nan, np.inf, -np.inf, 1.0, -0.0, 0.0, -1.5, 2.0]
NONFINITE = {
    "float32_nonfinite": np.asarray(_NONFINITE, np.float32),
    "float64_nonfinite": np.asarray(_NONFINITE, np.float64),
    "float16_nonfinite": np.asarray(_NONFINITE, np.float16),
    "complex64_nonfinite": np.asarray(
        [complex(np.nan, 1), complex(np.inf, 0), 0, 1 + 1j, complex(0, np.inf)] * 2,
        np.complex64,
    ),
}
POOL.update(NONFINITE)
REFUSALS = (
    ()
    if os.environ.get("JAXTAPE_FUZZ_FULL", "0") not in ("", "0")
    else (
        "int8", "int16", "uint16", "uint32", "uint64", "complex128",
        "float16_nonfinite", "float64_nonfinite",
    )
)  # fmt: skip
DTYPES = tuple(d for d in POOL if d not in REFUSALS)  # compared in full
ALL = DTYPES + REFUSALS

# Structural shapes (float32 and int32): rank 0, empty, a matrix.
MAT = _RNG.normal(size=(2, 3)).astype(np.float32)
IMAT = _RNG.integers(-9, 9, size=(2, 3)).astype(np.int32)
SHAPES = {"rank0": np.float32(-1.5), "int_rank0": np.int32(-3)}
EMPTIES = {
    "rank0": np.float32(-1.5),
    "empty": np.zeros((0,), np.float32),
    "empty2d": np.zeros((2, 0), np.float32),
}


class Row(NamedTuple):
    cases: Callable[[], dict]  # case id -> fn(m) -> result
    differs: tuple = ()  # case ids compared for shape and dtype only (see comment)
    rtol: float | None = None
    post: Callable | None = None  # applied to each output array before comparing
    values: bool = True  # False: shapes and dtypes only (random ops)


class D(NamedTuple):
    """A dtype argument, resolved in each module (`D("int32")` is `m.int32`)."""

    name: str

    def _get(self, m):
        return getattr(m, self.name)


def _kw(m, kwargs):
    return {k: getattr(m, v.name) if type(v) is D else v for k, v in kwargs.items()}


def _op(path):
    """`path` is where both modules have the op, or `(tf_path, jaxtape_path)`."""

    def get(m):
        obj = m
        where = path if isinstance(path, str) else path[m is jaxtape]
        for part in where.split("."):
            obj = getattr(obj, part)
        return obj

    return get


def C(m, value):  # noqa: N802 - reads as a constructor in the rows
    return m.constant(value)


# -- case builders ----------------------------------------------------------------
def _pools(dtypes, apart=()):
    """The dtype cases: id -> values. A NaN/inf pool joins its dtype's pool
    (one case, one compile) unless its id is `apart` (a row that differs on
    it marks it) or its dtype is not among `dtypes`."""
    out = {}
    for dt in dtypes:
        base = dt.removesuffix("_nonfinite")
        if dt != base and dt not in apart and base in dtypes and base not in REFUSALS:
            continue
        x = POOL[dt]
        more = f"{dt}_nonfinite"
        if more in dtypes and more not in apart and more not in REFUSALS:
            x = np.concatenate([x, POOL[more]])
        out[dt] = x
    return out


# Unary rows whose rank-0 handling is their own (other element-wise ops run
# one jnp function, rank-blind; rank 0 costs a compile per row).
RANK0_OPS = {
    "math.abs", "math.negative", "math.sign", "math.sqrt", "math.round", "nn.relu",
    "zeros_like", "ones_like", "shape", "size", "rank", "identity", "nn.l2_loss",
}  # fmt: skip


def unary(path, dtypes=ALL, shapes=None, apart=(), **kwargs):
    f = _op(path)

    def cases():
        out = {}
        for dt, x in _pools(dtypes, apart).items():
            out[dt] = lambda m, x=x: f(m)(C(m, x), **_kw(m, kwargs))
        if shapes if shapes is not None else path in RANK0_OPS:
            for sid, x in SHAPES.items():
                out[sid] = lambda m, x=x: f(m)(C(m, x), **_kw(m, kwargs))
        return out

    return cases


def _pairs(dt, nonzero=False, x=None):
    """`x` (a column) and `y` (a row) of the dtype's pool: every pair by broadcast."""
    x = POOL[dt] if x is None else x
    y = x
    if nonzero:  # (TF's CPU kernels trap on INT_MIN // -1; division by 0 apart)
        keep = (y != 0) & (y != -1 if dt in SINTS else True)
        y = y[keep]
        if dt in SINTS:
            x = x[x != np.iinfo(dt).min]
    return x[:, None], y[None, :]


# Python numbers next to a tensor: (tensor dtype, number, number first?).
SCALARS = (
    ("float32", 2, False), ("float32", 2, True), ("float32", 2.5, False),
    ("int32", 2.5, False), ("int32", 2.5, True), ("float32", True, False),
    ("bool", True, False), ("bool", 2, False),
)  # fmt: skip


BITWISE_SCALARS = (
    ("int32", 2, False), ("int32", 2, True), ("float32", 2, False),
    ("int32", True, False), ("bool", True, False),
)  # fmt: skip


def binary(path, dtypes=ALL, nonzero=False, scalars=SCALARS, apart=(), **kwargs):
    f = _op(path)

    def cases():
        out = {}
        for dt, values in _pools(dtypes, apart).items():
            x, y = _pairs(dt.removesuffix("_nonfinite"), nonzero, values)
            out[dt] = lambda m, x=x, y=y: f(m)(C(m, x), C(m, y), **_kw(m, kwargs))
        for dt, s, first in scalars:
            x = _pairs(dt, nonzero)[1][0]
            if first:
                out[f"py{s!r}_{dt}"] = lambda m, x=x, s=s: f(m)(
                    s, C(m, x), **_kw(m, kwargs)
                )
            else:
                out[f"{dt}_py{s!r}"] = lambda m, x=x, s=s: f(m)(
                    C(m, x), s, **_kw(m, kwargs)
                )
        x, y = MAT, MAT[:1] + 1
        out["broadcast_row"] = lambda m: f(m)(C(m, x), C(m, y), **_kw(m, kwargs))
        out["empty_vs_1"] = lambda m: f(m)(
            C(m, np.zeros((0, 3), np.float32)), C(m, np.ones((1, 3), np.float32))
        )
        out["no_broadcast"] = lambda m: f(m)(
            C(m, np.ones((2,), np.float32)), C(m, np.ones((3,), np.float32))
        )
        out["mixed_f32_f64"] = lambda m: f(m)(
            C(m, np.ones(2, np.float32)), C(m, np.ones(2, np.float64))
        )
        out["mixed_i32_f32"] = lambda m: f(m)(
            C(m, np.ones(2, np.int32)), C(m, np.ones(2, np.float32))
        )
        return out

    return cases


AXES = (None, 0, -1, [0, 1], [-1], 2, -3, [0, 0])
INT_AXES = (-1,)  # (on the int matrix; the int pools reduce with axis=None)


def _tame(x):
    """A pool for sums and products: float values beyond 100 divided by 1e4.

    (A float32 sum of +-6e4 and small values cancels to a result whose last
    bits depend on the order of the additions, which XLA and Eigen choose
    differently; a float16 product of them overflows in one order only.)
    """
    if x.dtype.kind != "f":
        return x
    return np.where(np.abs(x) > 100, x / 1e4, x).astype(x.dtype)


def reduction(path, dtypes=ALL, axes=AXES, keepdims=True, apart=(), **kwargs):
    """Cases of a reduction (or scan): each dtype's pool as a (2, n) matrix, then
    every axis of `axes` on a float and an int matrix (bool matrices for the
    bool reductions), keepdims, empty tensors and a float axis."""
    f = _op(path)
    boolean = path.endswith(("reduce_all", "reduce_any"))
    mats = {"": BOOLS, "int_": BOOLS[::-1]} if boolean else {"": MAT, "int_": IMAT}

    def cases():
        out = {}
        kw = kwargs
        for dt, x in _pools(dtypes, apart).items():
            x = _tame(x).reshape(2, -1)  # (2, n)
            out[dt] = lambda m, x=x: f(m)(C(m, x), **_kw(m, kw))
        for prefix, mat in mats.items():
            for ax in axes if not prefix else [a for a in axes if a in INT_AXES]:
                out[f"{prefix}axis{ax}"] = lambda m, ax=ax, x=mat: f(m)(
                    C(m, x), axis=ax, **_kw(m, kw)
                )
        mat = mats[""]
        if keepdims:
            out["keepdims"] = lambda m: f(m)(C(m, mat), axis=1, keepdims=True)
            out["keepdims_all"] = lambda m: f(m)(C(m, mat), keepdims=True)
        empties = dict(EMPTIES)
        if boolean:
            empties = {k: v.astype(bool) for k, v in empties.items()}
        for sid, x in empties.items():
            out[sid] = lambda m, x=x: f(m)(C(m, x), **_kw(m, kw))
        e2 = empties["empty2d"]
        out["empty2d_axis0"] = lambda m: f(m)(C(m, e2), axis=0, **_kw(m, kw))
        out["empty2d_axis1"] = lambda m: f(m)(C(m, e2), axis=1, **_kw(m, kw))
        out["float_axis"] = lambda m: f(m)(C(m, mat), axis=1.0, **_kw(m, kw))
        return out

    return cases


def custom(**cases):
    return lambda: cases


BOOLS = np.asarray([[True, False, True], [False, False, True]])
SPD = np.asarray([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)
SINGULAR = np.asarray([[1.0, 2.0], [2.0, 4.0]], np.float32)
SQ = _RNG.normal(size=(3, 3)).astype(np.float32)
LOWER = np.tril(SQ) + 3 * np.eye(3, dtype=np.float32)
_Z = SQ + 1j * _RNG.normal(size=(3, 3))
HPD = (_Z @ _Z.conj().T + np.eye(3)).astype(np.complex64)


def linalg_square(path, **kwargs):
    f = _op(path)
    return custom(
        spd=lambda m: f(m)(C(m, SPD), **_kw(m, kwargs)),
        general=lambda m: f(m)(C(m, SQ), **_kw(m, kwargs)),
        lower_only=lambda m: f(m)(C(m, SPD + np.triu(SQ, 1)), **_kw(m, kwargs)),
        hermitian=lambda m: f(m)(C(m, HPD), **_kw(m, kwargs)),
        f64=lambda m: f(m)(C(m, SPD.astype(np.float64)), **_kw(m, kwargs)),
        f16=lambda m: f(m)(C(m, SPD.astype(np.float16)), **_kw(m, kwargs)),
        c64=lambda m: f(m)(C(m, SPD.astype(np.complex64)), **_kw(m, kwargs)),
        batch=lambda m: f(m)(C(m, np.stack([SPD, 2 * SPD])), **_kw(m, kwargs)),
        singular=lambda m: f(m)(C(m, SINGULAR), **_kw(m, kwargs)),
        zeros=lambda m: f(m)(C(m, np.zeros((2, 2), np.float32)), **_kw(m, kwargs)),
        nan=lambda m: f(m)(C(m, np.full((2, 2), np.nan, np.float32)), **_kw(m, kwargs)),
        empty=lambda m: f(m)(C(m, np.zeros((0, 0), np.float32)), **_kw(m, kwargs)),
        # (full rank: a rank-1 matrix's singular vectors are not unique)
        not_square=lambda m: f(m)(C(m, SQ[:2]), **_kw(m, kwargs)),
        vector=lambda m: f(m)(C(m, np.ones((3,), np.float32)), **_kw(m, kwargs)),
        int32=lambda m: f(m)(C(m, np.eye(2, dtype=np.int32)), **_kw(m, kwargs)),
    )


# -- the table --------------------------------------------------------------------
ROWS: dict[str, Row] = {}


# jaxtape's complex functions at non-finite complex inputs (NaN or inf parts)
# and complex division by zero follow XLA, not Eigen: both give NaN/inf
# garbage, differently (documented in math_ops' "Differences from TensorFlow").
COMPLEX_EDGES = ("complex64_nonfinite",)
_COMPLEX_EDGE_OPS = {
    "atan", "cos", "cosh", "expm1", "log1p", "reciprocal", "sign", "sin", "sinh",
    "tan", "tanh", "silu", "xdivy", "divide_no_nan", "pow", "truediv", "divide",
    "atanh", "reciprocal_no_nan",
}  # fmt: skip


def _differs(name):
    return COMPLEX_EDGES if name in _COMPLEX_EDGE_OPS else ()


def _marked(builder, path, differs=(), **kwargs):
    """A row whose `differs` cases are built apart (see `_pools`)."""
    return Row(builder(path, apart=differs, **kwargs), differs=differs)


def _unary_rows():
    names = [
        "abs", "acos", "asin", "atan", "ceil", "conj", "cos", "cosh", "erf",
        "exp", "expm1", "floor", "imag", "is_finite", "is_inf", "is_nan",
        "lgamma", "log", "log1p", "logical_not", "negative", "real",
        "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh",
        "softplus", "sqrt", "square", "tan", "tanh",
    ]  # fmt: skip
    for n in names:
        ROWS[f"math.{n}"] = _marked(unary, f"math.{n}", _differs(n))
    # TF's float64 erf gives NaN at +-inf (Eigen's double erf); jaxtape gives
    # +-1, the limit (documented in `erf`).
    ROWS["math.erf"] = _marked(unary, "math.erf", ("float64_nonfinite",))
    for n in ["relu", "relu6", "elu", "selu", "gelu", "leaky_relu", "silu", "softsign"]:
        ROWS[f"nn.{n}"] = _marked(unary, f"nn.{n}", _differs(n))
    # TF's float64 gelu agrees with the exact value to ~1e-8 only (its erf and
    # tanh), jaxtape's to the last bits: float64 compared to 1e-7.
    ROWS["nn.gelu"] = Row(unary("nn.gelu"), rtol=1e-7)
    ROWS["nn.gelu_approximate"] = Row(unary("nn.gelu", approximate=True), rtol=1e-7)
    ROWS["nn.leaky_relu_alpha"] = Row(unary("nn.leaky_relu", alpha=0.5))
    for n in ["identity", "stop_gradient", "zeros_like", "ones_like", "shape", "size"]:
        ROWS[n] = Row(unary(n))
    ROWS["rank"] = Row(unary("rank"))
    ROWS["bitwise.invert"] = Row(unary(("bitwise.invert", "math.invert")))
    # tf.math's special functions and the rest of its element-wise ops
    # (values and gradients also in tests/test_ops_parity.py)
    for n in [
        "acosh", "asinh", "atanh", "erfc", "erfinv", "erfcinv", "ndtri", "digamma",
        "log_sigmoid", "rint", "reciprocal_no_nan", "bessel_i0", "bessel_i0e",
        "bessel_i1", "bessel_i1e",
    ]:  # fmt: skip
        ROWS[f"math.{n}"] = _marked(unary, f"math.{n}", _differs(n))
    for n in ["left_shift", "right_shift"]:
        ROWS[f"bitwise.{n}"] = Row(binary(f"bitwise.{n}", scalars=BITWISE_SCALARS))


def _binary_rows():
    for n in [
        "add", "subtract", "multiply", "maximum", "minimum", "squared_difference",
        "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
        "logical_and", "logical_or", "logical_xor", "atan2", "xdivy", "xlogy",
        "divide_no_nan", "pow",
    ]:  # fmt: skip
        ROWS[f"math.{n}"] = _marked(binary, f"math.{n}", _differs(n))
    for n in ["truediv", "divide", "floordiv", "floormod", "mod"]:
        ROWS[f"math.{n}"] = _marked(binary, f"math.{n}", _differs(n), nonzero=True)
    for n in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
        path = (f"bitwise.{n}", f"math.{n}")  # (jaxtape.math's, an extension)
        ROWS[f"bitwise.{n}"] = Row(binary(path, scalars=BITWISE_SCALARS))
    ROWS["complex"] = Row(binary("complex", dtypes=FLOATS, scalars=()))


def _division_by_zero_rows():
    def by_zero(path):
        f = _op(path)
        return custom(
            **{
                dt: (lambda m, dt=dt: f(m)(C(m, POOL[dt][:3]), C(m, POOL[dt][:3] * 0)))
                for dt in ("float32", "int32", "int64", "uint8", "uint32")
            }
        )

    for n in ["truediv", "floordiv", "floormod", "divide_no_nan"]:
        ROWS[f"math.{n}_by_zero"] = Row(by_zero(f"math.{n}"))


def _reduction_rows():
    for n in [
        "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
        "reduce_logsumexp", "reduce_variance", "reduce_std", "reduce_all",
        "reduce_any",
    ]:  # fmt: skip
        ROWS[f"math.{n}"] = Row(reduction(f"math.{n}"))
    # The mean of complex NaN/inf values: XLA's complex division (see above).
    ROWS["math.reduce_mean"] = _marked(reduction, "math.reduce_mean", COMPLEX_EDGES)
    for n in ["argmax", "argmin"]:
        ROWS[f"math.{n}"] = Row(reduction(f"math.{n}", keepdims=False))
        ROWS[f"math.{n}_output_type"] = _row(
            f"math.{n}",
            int32=lambda m, f: f(C(m, MAT), axis=1, output_type=m.int32),
            int16=lambda m, f: f(C(m, MAT), output_type=m.int16),
            nan=lambda m, f: f(C(m, POOL["float32_nonfinite"]), output_type=m.int32),
        )
    scan_axes = (0, 1, -1, -2, 2, -3)
    for n in ["cumsum", "cumprod"]:
        # (complex NaN/inf products: XLA's complex multiplication, see above)
        edges = COMPLEX_EDGES if n == "cumprod" else ()
        ROWS[f"math.{n}"] = _marked(
            reduction, f"math.{n}", edges, axes=scan_axes, keepdims=False
        )
        ROWS[f"math.{n}_exclusive_reverse"] = _marked(
            reduction,
            f"math.{n}",
            edges,
            dtypes=("float32", "int32", "float32_nonfinite", "complex64_nonfinite"),
            axes=(0, -1),
            keepdims=False,
            exclusive=True,
            reverse=True,
        )
    # Softmax of logits holding NaN or inf: TF's kernel gives 0 where XLA's
    # gives NaN for the finite entries of such a row (both NaN elsewhere);
    # documented in `softmax`.
    for n in ["nn.softmax", "nn.log_softmax"]:
        ROWS[n] = _marked(
            reduction,
            n,
            ("float32_nonfinite", "float16_nonfinite", "float64_nonfinite"),
            axes=(None, 0, 1, -1, -2, 2, -3),
            keepdims=False,
        )
    ROWS["nn.l2_loss"] = Row(unary("nn.l2_loss"))
    ROWS["norm"] = Row(reduction("norm", axes=(None, 0, 1, -1, [0, 1], [-2, -1])))
    ROWS["math.l2_normalize"] = Row(
        reduction("math.l2_normalize", axes=(None, 0, 1, -1, [0, 1]), keepdims=False)
    )


def _row(path, differs=(), **cases):
    """A custom row: `cases` maps ids to `fn(m, f)`, `f` the op in module `m`."""
    f = _op(path)
    fns = {k: (lambda m, g=g: g(m, f(m))) for k, g in cases.items()}
    return Row(custom(**fns), differs=differs)


F32 = np.float32
V6 = np.arange(6, dtype=F32) - 2.5
I6 = np.arange(6, dtype=np.int32) - 2
E0 = np.zeros((0,), F32)


def _array_rows():
    R = ROWS  # noqa: N806
    R["reshape"] = _row(
        "reshape",
        basic=lambda m, f: f(C(m, MAT), [3, 2]),
        infer=lambda m, f: f(C(m, MAT), [-1]),
        infer_2=lambda m, f: f(C(m, MAT), [-1, 2]),
        empty_infer_0=lambda m, f: f(C(m, E0), [-1, 0]),
        empty_0_infer=lambda m, f: f(C(m, np.zeros((2, 0), F32)), [0, -1]),
        empty_infer_5=lambda m, f: f(C(m, E0), [-1, 5]),
        empty_to_0_5=lambda m, f: f(C(m, E0), [0, 5]),
        empty_3_infer_0=lambda m, f: f(C(m, np.zeros((3, 0), F32)), [3, -1, 0]),
        scalar_to_1=lambda m, f: f(C(m, F32(2)), [1, 1]),
        one_to_scalar=lambda m, f: f(C(m, np.ones(1, F32)), []),
        mismatch=lambda m, f: f(C(m, MAT), [4, 2]),
        mismatch_infer=lambda m, f: f(C(m, MAT), [-1, 4]),
        two_infer=lambda m, f: f(C(m, MAT), [-1, -1]),
        negative=lambda m, f: f(C(m, MAT), [-2, -3]),
        shape_tensor=lambda m, f: f(C(m, MAT), C(m, np.asarray([3, 2], np.int64))),
        bool=lambda m, f: f(C(m, BOOLS), [6]),
    )
    R["transpose"] = _row(
        "transpose",
        default=lambda m, f: f(C(m, MAT)),
        perm=lambda m, f: f(C(m, MAT), [1, 0]),
        rank3=lambda m, f: f(C(m, np.arange(24).reshape(2, 3, 4)), [2, 0, 1]),
        neg_perm=lambda m, f: f(C(m, MAT), [-1, 0]),
        bad_perm=lambda m, f: f(C(m, MAT), [0, 0]),
        oor_perm=lambda m, f: f(C(m, MAT), [0, 2]),
        short_perm=lambda m, f: f(C(m, MAT), [0]),
        scalar=lambda m, f: f(C(m, F32(1))),
        conjugate=lambda m, f: f(C(m, POOL["complex64"].reshape(2, 5)), conjugate=True),
        empty=lambda m, f: f(C(m, np.zeros((2, 0), F32))),
    )
    R["squeeze"] = _row(
        "squeeze",
        all=lambda m, f: f(C(m, np.ones((1, 3, 1), F32))),
        axis0=lambda m, f: f(C(m, np.ones((1, 3, 1), F32)), 0),
        axis_neg=lambda m, f: f(C(m, np.ones((1, 3, 1), F32)), -1),
        axes=lambda m, f: f(C(m, np.ones((1, 3, 1), F32)), [0, 2]),
        not_one=lambda m, f: f(C(m, np.ones((1, 3, 1), F32)), 1),
        oor=lambda m, f: f(C(m, np.ones((1, 3, 1), F32)), 3),
        oor_neg=lambda m, f: f(C(m, np.ones((1, 3, 1), F32)), -4),
        scalar=lambda m, f: f(C(m, F32(1))),
        empty=lambda m, f: f(C(m, np.zeros((1, 0), F32))),
    )
    R["expand_dims"] = _row(
        "expand_dims",
        **{
            f"axis{a}": (lambda m, f, a=a: f(C(m, MAT), a))
            for a in (0, 1, 2, -1, -3, 3, -4)
        },
        scalar=lambda m, f: f(C(m, F32(1)), 0),
        scalar_neg=lambda m, f: f(C(m, F32(1)), -1),
        scalar_oor=lambda m, f: f(C(m, F32(1)), 1),
        list_axis=lambda m, f: f(C(m, MAT), [1]),
    )
    R["broadcast_to"] = _row(
        "broadcast_to",
        row=lambda m, f: f(C(m, MAT[0]), [2, 3]),
        one_to_empty=lambda m, f: f(C(m, np.ones(1, F32)), [0]),
        scalar=lambda m, f: f(C(m, F32(2)), [2, 2]),
        to_scalar=lambda m, f: f(C(m, np.ones(1, F32)), []),
        bad=lambda m, f: f(C(m, np.ones(2, F32)), [3]),
        fewer_dims=lambda m, f: f(C(m, MAT), [3]),
        bool=lambda m, f: f(C(m, BOOLS[:, :1]), [2, 4]),
    )
    R["concat"] = _row(
        "concat",
        axis0=lambda m, f: f([C(m, MAT), C(m, MAT)], 0),
        axis1=lambda m, f: f([C(m, MAT), C(m, MAT[:, :1])], 1),
        axis_neg=lambda m, f: f([C(m, MAT), C(m, MAT)], -1),
        axis_neg2=lambda m, f: f([C(m, MAT), C(m, MAT)], -2),
        oor=lambda m, f: f([C(m, MAT), C(m, MAT)], 2),
        oor_neg=lambda m, f: f([C(m, MAT), C(m, MAT)], -3),
        mismatch=lambda m, f: f([C(m, MAT), C(m, MAT[:, :1])], 0),
        ranks=lambda m, f: f([C(m, MAT), C(m, V6)], 0),
        single=lambda m, f: f([C(m, MAT)], 0),
        empty_list=lambda m, f: f([], 0),
        empties=lambda m, f: f([C(m, E0), C(m, E0)], 0),
        empty_and_full=lambda m, f: f([C(m, E0), C(m, V6)], 0),
        ints=lambda m, f: f([C(m, I6), C(m, I6)], 0),
        bools=lambda m, f: f([C(m, BOOLS), C(m, BOOLS)], 1),
        dtypes=lambda m, f: f([C(m, I6), C(m, V6)], 0),
        scalars=lambda m, f: f([C(m, F32(1)), C(m, F32(2))], 0),
        python_lists=lambda m, f: f([[1, 2], [3]], 0),
    )
    R["stack"] = _row(
        "stack",
        axis0=lambda m, f: f([C(m, V6), C(m, V6)]),
        axis1=lambda m, f: f([C(m, V6), C(m, V6)], axis=1),
        axis_neg=lambda m, f: f([C(m, V6), C(m, V6)], axis=-1),
        oor=lambda m, f: f([C(m, V6), C(m, V6)], axis=2),
        oor_neg=lambda m, f: f([C(m, V6), C(m, V6)], axis=-3),
        mismatch=lambda m, f: f([C(m, V6), C(m, V6[:2])]),
        scalars=lambda m, f: f([C(m, F32(1)), C(m, F32(2))]),
        empty_list=lambda m, f: f([]),
        empties=lambda m, f: f([C(m, E0), C(m, E0)], axis=1),
        bools=lambda m, f: f([C(m, BOOLS), C(m, BOOLS)]),
        python=lambda m, f: f([1, 2, 3]),
    )
    R["unstack"] = _row(
        "unstack",
        axis0=lambda m, f: f(C(m, MAT)),
        axis1=lambda m, f: f(C(m, MAT), axis=1),
        axis_neg=lambda m, f: f(C(m, MAT), axis=-1),
        oor=lambda m, f: f(C(m, MAT), axis=2),
        num=lambda m, f: f(C(m, MAT), num=2),
        bad_num=lambda m, f: f(C(m, MAT), num=3),
        empty=lambda m, f: f(C(m, np.zeros((0, 3), F32))),
        empty_axis1=lambda m, f: f(C(m, np.zeros((2, 0), F32)), axis=1),
        scalar=lambda m, f: f(C(m, F32(1))),
    )
    R["split"] = _row(
        "split",
        equal=lambda m, f: f(C(m, V6), 2),
        sizes=lambda m, f: f(C(m, V6), [1, 5]),
        infer=lambda m, f: f(C(m, V6), [2, -1]),
        zero_size=lambda m, f: f(C(m, V6), [0, 6]),
        bad_sum=lambda m, f: f(C(m, V6), [2, 2]),
        uneven=lambda m, f: f(C(m, V6), 4),
        axis_neg=lambda m, f: f(C(m, MAT), 3, axis=-1),
        axis1=lambda m, f: f(C(m, MAT), [1, 2], axis=1),
        oor=lambda m, f: f(C(m, MAT), 2, axis=2),
        zero=lambda m, f: f(C(m, V6), 0),
        empty=lambda m, f: f(C(m, E0), 2),
        two_infer=lambda m, f: f(C(m, V6), [-1, -1]),
        scalar=lambda m, f: f(C(m, F32(1)), 1),
    )
    R["tile"] = _row(
        "tile",
        basic=lambda m, f: f(C(m, MAT), [2, 1]),
        zero=lambda m, f: f(C(m, MAT), [0, 2]),
        wrong_len=lambda m, f: f(C(m, MAT), [2]),
        negative=lambda m, f: f(C(m, MAT), [-1, 1]),
        scalar=lambda m, f: f(C(m, F32(1)), []),
        bool=lambda m, f: f(C(m, BOOLS), [1, 2]),
        tensor=lambda m, f: f(C(m, MAT), C(m, np.asarray([1, 2], np.int32))),
    )
    R["repeat"] = _row(
        "repeat",
        scalar_count=lambda m, f: f(C(m, MAT), 2, axis=0),
        counts=lambda m, f: f(C(m, MAT), [1, 2], axis=0),
        counts_axis1=lambda m, f: f(C(m, MAT), [0, 1, 2], axis=1),
        axis_neg=lambda m, f: f(C(m, MAT), 2, axis=-1),
        flat=lambda m, f: f(C(m, MAT), 2),
        negative=lambda m, f: f(C(m, MAT), -1, axis=0),
        wrong_len=lambda m, f: f(C(m, MAT), [1, 2, 3], axis=0),
        oor=lambda m, f: f(C(m, MAT), 2, axis=2),
        scalar_input=lambda m, f: f(C(m, F32(3)), 2),
    )
    pads = [[1, 0], [0, 2]]
    R["pad"] = _row(
        "pad",
        constant=lambda m, f: f(C(m, MAT), pads),
        value=lambda m, f: f(C(m, MAT), pads, constant_values=1.5),
        int_value=lambda m, f: f(C(m, IMAT), pads, constant_values=7),
        reflect=lambda m, f: f(C(m, MAT), [[1, 1], [2, 2]], mode="REFLECT"),
        reflect_too_wide=lambda m, f: f(C(m, MAT), [[2, 0], [0, 0]], mode="REFLECT"),
        symmetric=lambda m, f: f(C(m, MAT), [[2, 2], [3, 0]], mode="SYMMETRIC"),
        symmetric_wide=lambda m, f: f(C(m, MAT), [[3, 0], [0, 0]], mode="SYMMETRIC"),
        lower_mode=lambda m, f: f(C(m, MAT), pads, mode="reflect"),
        bad_mode=lambda m, f: f(C(m, MAT), pads, mode="WRAP"),
        negative=lambda m, f: f(C(m, MAT), [[-1, 0], [0, 0]]),
        bad_shape=lambda m, f: f(C(m, MAT), [[1, 1]]),
        scalar=lambda m, f: f(C(m, F32(1)), np.zeros((0, 2), np.int32)),
        empty=lambda m, f: f(C(m, np.zeros((0, 2), F32)), [[1, 1], [0, 0]]),
        bool=lambda m, f: f(C(m, BOOLS), pads),
        float_pads=lambda m, f: f(C(m, MAT), [[1.0, 0.0], [0.0, 2.0]]),
    )
    R["reverse"] = _row(
        "reverse",
        axis0=lambda m, f: f(C(m, MAT), [0]),
        axis_neg=lambda m, f: f(C(m, MAT), [-1]),
        both=lambda m, f: f(C(m, MAT), [0, 1]),
        none=lambda m, f: f(C(m, MAT), []),
        oor=lambda m, f: f(C(m, MAT), [2]),
        dup=lambda m, f: f(C(m, MAT), [0, -2]),
        int_axis=lambda m, f: f(C(m, MAT), 0),
        scalar=lambda m, f: f(C(m, F32(1)), []),
    )


def _index_rows():
    R = ROWS  # noqa: N806
    g = {
        "basic": lambda m, f: f(C(m, V6), [2, 0, 5]),
        "scalar_index": lambda m, f: f(C(m, V6), 3),
        "matrix_index": lambda m, f: f(C(m, V6), [[0, 1], [2, 3]]),
        "axis1": lambda m, f: f(C(m, MAT), [2, 0], axis=1),
        "axis_neg": lambda m, f: f(C(m, MAT), [1], axis=-1),
        "axis_oor": lambda m, f: f(C(m, MAT), [1], axis=2),
        "negative": lambda m, f: f(C(m, V6), [-1]),
        "oor": lambda m, f: f(C(m, V6), [6]),
        "int64": lambda m, f: f(C(m, V6), C(m, np.asarray([1, 2], np.int64))),
        "uint8": lambda m, f: f(C(m, V6), C(m, np.asarray([1, 2], np.uint8))),
        "float": lambda m, f: f(C(m, V6), C(m, np.asarray([1.0], F32))),
        "float_list": lambda m, f: f(C(m, V6), [1.0]),
        "bool_index": lambda m, f: f(C(m, V6), C(m, np.asarray([True]))),
        "empty_index": lambda m, f: f(C(m, V6), C(m, np.zeros(0, np.int32))),
        "empty_params": lambda m, f: f(C(m, np.zeros((0, 2), F32)), [0]),
        "bools": lambda m, f: f(C(m, BOOLS), [1]),
        "batch_dims": lambda m, f: f(C(m, MAT), [[0, 2], [1, 1]], axis=1, batch_dims=1),
    }
    R["gather"] = _row("gather", **g)
    R["gather_nd"] = _row(
        "gather_nd",
        pairs=lambda m, f: f(C(m, MAT), [[0, 1], [1, 2]]),
        rows=lambda m, f: f(C(m, MAT), [[1], [0]]),
        scalar_out=lambda m, f: f(C(m, MAT), [1, 2]),
        oor=lambda m, f: f(C(m, MAT), [[0, 3]]),
        negative=lambda m, f: f(C(m, MAT), [[-1, 0]]),
        too_long=lambda m, f: f(C(m, MAT), [[0, 0, 0]]),
        empty=lambda m, f: f(C(m, MAT), np.zeros((0, 2), np.int32)),
        float=lambda m, f: f(C(m, MAT), C(m, np.asarray([[0.0, 1.0]], F32))),
        int64=lambda m, f: f(C(m, MAT), C(m, np.asarray([[0, 1]], np.int64))),
    )
    shape = C
    R["scatter_nd"] = _row(
        "scatter_nd",
        basic=lambda m, f: f([[1], [3]], C(m, V6[:2]), [5]),
        duplicates=lambda m, f: f([[1], [1]], C(m, V6[:2]), [5]),
        rows=lambda m, f: f([[1]], C(m, MAT[:1]), [3, 3]),
        oor=lambda m, f: f([[5]], C(m, V6[:1]), [5]),
        negative=lambda m, f: f([[-1]], C(m, V6[:1]), [5]),
        ints=lambda m, f: f([[0], [0]], C(m, I6[:2]), [2]),
        bools=lambda m, f: f([[0]], C(m, np.asarray([True])), [2]),
        bad_updates=lambda m, f: f([[0], [1]], C(m, V6[:3]), [5]),
        float_index=lambda m, f: f(C(m, np.asarray([[1.0]], F32)), C(m, V6[:1]), [5]),
        shape_tensor=lambda m, f: f([[1]], C(m, V6[:1]), shape(m, [4])),
    )
    for n in ("tensor_scatter_nd_update", "tensor_scatter_nd_add"):
        R[n] = _row(
            n,
            basic=lambda m, f: f(C(m, V6), [[1], [3]], C(m, V6[:2])),
            rows=lambda m, f: f(C(m, MAT), [[1]], C(m, MAT[:1])),
            oor=lambda m, f: f(C(m, V6), [[6]], C(m, V6[:1])),
            negative=lambda m, f: f(C(m, V6), [[-1]], C(m, V6[:1])),
            dtypes=lambda m, f: f(C(m, V6), [[1]], C(m, I6[:1])),
            bad_updates=lambda m, f: f(C(m, V6), [[1], [2]], C(m, V6[:3])),
            ints=lambda m, f: f(C(m, I6), [[0], [5]], C(m, I6[:2])),
            empty=lambda m, f: f(C(m, V6), np.zeros((0, 1), np.int32), C(m, E0)),
        )
    R["where"] = _row(
        "where",
        coords=lambda m, f: f(C(m, BOOLS)),
        coords_vector=lambda m, f: f(C(m, BOOLS[0])),
        coords_scalar=lambda m, f: f(C(m, np.asarray(True))),
        coords_empty=lambda m, f: f(C(m, np.zeros((0, 2), bool))),
        coords_float=lambda m, f: f(C(m, MAT)),
        coords_int=lambda m, f: f(C(m, IMAT)),
        select=lambda m, f: f(C(m, BOOLS), C(m, MAT), C(m, -MAT)),
        broadcast=lambda m, f: f(C(m, BOOLS[:, :1]), C(m, MAT), C(m, F32(0))),
        python_scalars=lambda m, f: f(C(m, BOOLS), C(m, MAT), 0.0),
        not_bool=lambda m, f: f(C(m, MAT), C(m, MAT), C(m, MAT)),
        mismatched=lambda m, f: f(C(m, BOOLS), C(m, MAT), C(m, IMAT)),
        bad_shapes=lambda m, f: f(C(m, BOOLS), C(m, V6), C(m, V6)),
        nan=lambda m, f: f(
            C(m, np.asarray([True, False])), C(m, np.asarray([np.nan, 1], F32)), 2.0
        ),
    )
    R["one_hot"] = _row(
        "one_hot",
        basic=lambda m, f: f([0, 2, 1], 3),
        negative=lambda m, f: f([-1, 1], 3),
        oor=lambda m, f: f([3, 5], 3),
        depth0=lambda m, f: f([0], 0),
        axis0=lambda m, f: f([0, 2], 3, axis=0),
        axis_oor=lambda m, f: f([0, 2], 3, axis=2),
        on_off=lambda m, f: f([0, 2], 3, on_value=5.0, off_value=-1.0),
        int_dtype=lambda m, f: f([0, 2], 3, dtype=m.int32),
        int_values=lambda m, f: f([0, 2], 3, on_value=5, off_value=0),
        bool_dtype=lambda m, f: f([0, 2], 3, dtype=m.bool),
        float_indices=lambda m, f: f(C(m, np.asarray([0.0, 1.0], F32)), 3),
        matrix=lambda m, f: f([[0, 1], [2, 0]], 3),
        scalar=lambda m, f: f(1, 3),
        uint8=lambda m, f: f(C(m, np.asarray([0, 2], np.uint8)), 3),
        int64=lambda m, f: f(C(m, np.asarray([0, 2], np.int64)), 3),
        int16=lambda m, f: f(C(m, np.asarray([0, 2], np.int16)), 3),
    )
    R["boolean_mask"] = _row(
        "boolean_mask",
        vector=lambda m, f: f(C(m, V6), V6 > 0),
        rows=lambda m, f: f(C(m, MAT), [True, False]),
        full=lambda m, f: f(C(m, MAT), BOOLS),
        axis1=lambda m, f: f(C(m, MAT), [True, False, True], axis=1),
        wrong_shape=lambda m, f: f(C(m, MAT), [True]),
        none=lambda m, f: f(C(m, V6), np.zeros(6, bool)),
        tensor_mask=lambda m, f: f(C(m, V6), C(m, V6 > 0)),
        scalar_mask=lambda m, f: f(C(m, V6), True),
        int_mask=lambda m, f: f(C(m, V6), C(m, np.ones(6, np.int32))),
    )


def _creation_rows():
    R = ROWS  # noqa: N806
    R["fill"] = _row(
        "fill",
        float=lambda m, f: f([2, 3], 1.5),
        int=lambda m, f: f([2], 7),
        bool=lambda m, f: f([2], True),
        scalar=lambda m, f: f([], 2.0),
        empty=lambda m, f: f([0, 3], 2.0),
        negative=lambda m, f: f([-1], 2.0),
        tensor_value=lambda m, f: f([2], C(m, np.float64(2.5))),
        vector_value=lambda m, f: f([2], [1.0, 2.0]),
        float_dims=lambda m, f: f([2.0], 1.0),
    )
    for n in ("zeros", "ones"):
        R[n] = _row(
            n,
            basic=lambda m, f: f([2, 3]),
            int=lambda m, f: f([2], m.int32),
            bool=lambda m, f: f([2], m.bool),
            uint8=lambda m, f: f(3, m.uint8),
            complex=lambda m, f: f([1], m.complex64),
            scalar=lambda m, f: f([]),
            empty=lambda m, f: f([0]),
            negative=lambda m, f: f([-1]),
            float_shape=lambda m, f: f([2.0]),
            tensor_shape=lambda m, f: f(C(m, np.asarray([2, 1], np.int64))),
        )
    for n in ("zeros_like", "ones_like"):
        R[n + "_args"] = _row(
            n,
            list=lambda m, f: f([1, 2]),
            float=lambda m, f: f(1.5),
            none=lambda m, f: f(None),
            dtype=lambda m, f: f(C(m, MAT), dtype=m.int32),
            bool_dtype=lambda m, f: f(C(m, MAT), dtype=m.bool),
            numpy=lambda m, f: f(np.ones(2, np.float64)),
            variable=lambda m, f: f(m.Variable([1.0, 2.0])),
        )  # (strings: jaxtape has no string tensors, see test_error_parity)
    R["eye"] = _row(
        "eye",
        square=lambda m, f: f(3),
        rect=lambda m, f: f(2, 3),
        batch=lambda m, f: f(2, batch_shape=[2]),
        int=lambda m, f: f(2, dtype=m.int32),
        bool=lambda m, f: f(2, dtype=m.bool),
        zero=lambda m, f: f(0),
        negative=lambda m, f: f(-1),
        float=lambda m, f: f(2.0),
    )
    R["range"] = _row(
        "range",
        limit=lambda m, f: f(5),
        start_limit=lambda m, f: f(2, 5),
        delta=lambda m, f: f(0, 10, 3),
        negative_delta=lambda m, f: f(5, 0, -2),
        floats=lambda m, f: f(0.0, 1.0, 0.25),
        mixed=lambda m, f: f(0, 2.5),
        empty=lambda m, f: f(3, 3),
        zero_delta=lambda m, f: f(0, 5, 0),
        wrong_way=lambda m, f: f(5, 0),
        dtype=lambda m, f: f(5, dtype=m.float64),
        int64=lambda m, f: f(C(m, np.int64(4))),
        float_inexact=lambda m, f: f(0.0, 0.3, 0.1),
        float_steps=lambda m, f: f(0, 1, 0.1),
        float_down=lambda m, f: f(1.0, 0.0, -0.3),
        float64_steps=lambda m, f: f(C(m, np.float64(0)), 1.0, 0.1),
        dtype_float_to_int=lambda m, f: f(0.5, 3, dtype=m.int32),
    )
    R["linspace"] = _row(
        "linspace",
        basic=lambda m, f: f(0.0, 1.0, 5),
        ints=lambda m, f: f(0, 10, 3),
        one=lambda m, f: f(2.0, 3.0, 1),
        zero=lambda m, f: f(2.0, 3.0, 0),
        negative=lambda m, f: f(2.0, 3.0, -1),
        float64=lambda m, f: f(C(m, np.float64(0)), 1.0, 4),
        vector=lambda m, f: f(C(m, np.asarray([0.0, 1.0], F32)), 2.0, 3),
        vector_axis=lambda m, f: f(C(m, np.asarray([0.0, 1.0], F32)), 2.0, 3, axis=1),
        float_num=lambda m, f: f(0.0, 1.0, 2.5),
    )
    R["constant"] = _row(
        "constant",
        shape_broadcast=lambda m, f: f(1.5, shape=[2, 2]),
        shape_reshape=lambda m, f: f([1, 2, 3, 4], shape=[2, 2]),
        shape_mismatch=lambda m, f: f([1, 2, 3], shape=[2, 2]),
        numpy_f64=lambda m, f: f(np.ones(2)),
        numpy_cast=lambda m, f: f(np.asarray([1.7, -1.7]), dtype=m.int32),
        nan_to_int=lambda m, f: f(np.asarray([np.nan]), dtype=m.int32),
        uint64=lambda m, f: f(np.asarray([2**64 - 1], np.uint64)),
        complex=lambda m, f: f(1 + 2j),
        bool=lambda m, f: f([True, False]),
    )
    R["convert_to_tensor"] = _row(
        "convert_to_tensor",
        list=lambda m, f: f([1, 2]),
        dtype=lambda m, f: f([1, 2], dtype=m.float32),
        hint=lambda m, f: f([1, 2], dtype_hint=m.float32),
        tensor_mismatch=lambda m, f: f(C(m, MAT), dtype=m.float64),
        numpy=lambda m, f: f(np.ones(2, np.int16)),
    )
    for n in ("shape", "size"):
        R[n + "_out_type"] = _row(
            n,
            int64=lambda m, f: f(C(m, MAT), out_type=m.int64),
            float=lambda m, f: f(C(m, MAT), out_type=m.float32),
            list=lambda m, f: f([[1, 2]]),
            scalar=lambda m, f: f(3.0),
        )
    # In-range values compare exactly; out-of-range floats to integers (NaN,
    # +-inf, 6e4 to int8, -1.0 to uint8) are undefined in TF's C++ kernel and
    # saturate in jaxtape (documented in `cast`): shapes and dtypes only.
    out_of_range = []
    casts = {}
    for src in ("float16", "float32", "float64", "int32", "int64", "uint8",
                "bool", "complex64", "float32_nonfinite"):  # fmt: skip
        for dst in ("float16", "float32", "float64", "int8", "int32", "int64",
                    "uint8", "bool", "complex64"):  # fmt: skip
            if dst == src or (src[0] in "iub" and dst in ("float64", "complex64")):
                continue  # (an identity; int -> float64/complex64 as float32)
            x = POOL[src]
            cid = f"{src}_to_{dst}"
            if x.dtype.kind in "fc" and dst[0] in "iu":
                small = (
                    np.abs(x) < 100 if dst[0] == "i" else (x.real >= 0) & (x.real < 100)
                )
                casts[cid + "_in_range"] = (x[small], dst)
                out_of_range.append(cid)
            casts[cid] = (x, dst)
    R["cast"] = Row(
        custom(
            **{
                cid: (lambda m, x=x, dst=dst: m.cast(C(m, x), getattr(m, dst)))
                for cid, (x, dst) in casts.items()
            },
            python=lambda m: m.cast(1.7, m.int32),
            python_list=lambda m: m.cast([1, 2], m.float32),
            none=lambda m: m.cast(C(m, MAT), None),
        ),
        differs=tuple(out_of_range),
    )
    R["saturate_cast"] = _row(
        "saturate_cast",
        **{
            f"{src}_to_{dst}": (
                lambda m, f, src=src, dst=dst: f(C(m, POOL[src]), getattr(m, dst))
            )
            for src in ("float32", "float64", "int32", "int64", "uint8", "complex64")
            for dst in ("float16", "int8", "int32", "uint8", "uint32", "int64")
        },
    )
    R["identity_args"] = _row(
        "identity",
        list=lambda m, f: f([1, 2]),
        variable=lambda m, f: f(m.Variable([1.0])),
        none=lambda m, f: f(None),
    )


def _product_rows():
    R = ROWS  # noqa: N806
    A = _RNG.normal(size=(2, 3)).astype(F32)  # noqa: N806
    B = _RNG.normal(size=(3, 4)).astype(F32)  # noqa: N806
    Z = POOL["complex64"][:6].reshape(2, 3)  # noqa: N806
    R["matmul"] = _row(
        "matmul",
        basic=lambda m, f: f(C(m, A), C(m, B)),
        transpose_a=lambda m, f: f(C(m, A.T), C(m, B), transpose_a=True),
        transpose_b=lambda m, f: f(C(m, A), C(m, B.T), transpose_b=True),
        adjoint=lambda m, f: f(C(m, Z), C(m, Z), adjoint_b=True),
        adjoint_a=lambda m, f: f(C(m, Z), C(m, Z), adjoint_a=True),
        batch=lambda m, f: f(C(m, np.stack([A, A])), C(m, B)),
        batch_broadcast=lambda m, f: f(C(m, A[None]), C(m, np.stack([B, B, B]))),
        batch_mismatch=lambda m, f: f(C(m, np.stack([A, A])), C(m, np.stack([B] * 3))),
        inner_mismatch=lambda m, f: f(C(m, A), C(m, A)),
        vector=lambda m, f: f(C(m, A), C(m, B[:, 0])),
        empty_inner=lambda m, f: f(
            C(m, np.zeros((2, 0), F32)), C(m, np.zeros((0, 3), F32))
        ),
        int32=lambda m, f: f(C(m, IMAT), C(m, IMAT.T)),
        int64=lambda m, f: f(
            C(m, IMAT.astype(np.int64)), C(m, IMAT.T.astype(np.int64))
        ),
        int8=lambda m, f: f(C(m, IMAT.astype(np.int8)), C(m, IMAT.T.astype(np.int8))),
        uint8=lambda m, f: f(
            C(m, np.abs(IMAT).astype(np.uint8)), C(m, np.abs(IMAT.T).astype(np.uint8))
        ),
        bool=lambda m, f: f(C(m, BOOLS), C(m, BOOLS.T)),
        f16=lambda m, f: f(C(m, A.astype(np.float16)), C(m, B.astype(np.float16))),
        f64=lambda m, f: f(C(m, A.astype(np.float64)), C(m, B.astype(np.float64))),
        nan=lambda m, f: f(
            C(m, np.asarray([[np.nan, 1]], F32)), C(m, np.ones((2, 1), F32))
        ),
        dtypes=lambda m, f: f(C(m, A), C(m, B.astype(np.float64))),
        operator=lambda m, f: C(m, A) @ C(m, B),
    )
    R["tensordot"] = _row(
        "tensordot",
        one=lambda m, f: f(C(m, A), C(m, B), 1),
        lists=lambda m, f: f(C(m, A), C(m, B), [[1], [0]]),
        outer=lambda m, f: f(C(m, A), C(m, B), 0),
        two=lambda m, f: f(C(m, A), C(m, A), 2),
        mismatch=lambda m, f: f(C(m, A), C(m, A), 1),
        negative=lambda m, f: f(C(m, A), C(m, B), [[-1], [0]]),
        ints=lambda m, f: f(C(m, IMAT), C(m, IMAT.T), 1),
    )
    R["einsum"] = _row(
        "einsum",
        matmul=lambda m, f: f("ij,jk->ik", C(m, A), C(m, B)),
        diag=lambda m, f: f("ii->i", C(m, SQ)),
        trace=lambda m, f: f("ii", C(m, SQ)),
        sum=lambda m, f: f("ij->", C(m, A)),
        batch=lambda m, f: f("bij,bjk->bik", C(m, A[None]), C(m, B[None])),
        ellipsis=lambda m, f: f("...j,jk->...k", C(m, A), C(m, B)),
        outer=lambda m, f: f("i,j->ij", C(m, V6), C(m, V6)),
        bad=lambda m, f: f("ij,jk->ik", C(m, A), C(m, A)),
        ints=lambda m, f: f("ij,kj->ik", C(m, IMAT), C(m, IMAT)),
        dtypes=lambda m, f: f("ij,jk->ik", C(m, A), C(m, B.astype(np.float64))),
        bools=lambda m, f: f("ij->j", C(m, BOOLS)),
    )
    R["add_n"] = _row(
        "add_n",
        three=lambda m, f: f([C(m, MAT)] * 3),
        one=lambda m, f: f([C(m, MAT)]),
        ints=lambda m, f: f([C(m, IMAT), C(m, IMAT)]),
        bools=lambda m, f: f([C(m, BOOLS), C(m, BOOLS)]),
        mismatch=lambda m, f: f([C(m, MAT), C(m, MAT[:1])]),
        dtypes=lambda m, f: f([C(m, MAT), C(m, IMAT)]),
        empty=lambda m, f: f([]),
        python=lambda m, f: f([1.0, 2.0]),
        uint8=lambda m, f: f([C(m, POOL["uint8"])] * 2),
        complex=lambda m, f: f([C(m, POOL["complex64"])] * 2),
    )
    R["clip_by_value"] = _row(
        "clip_by_value",
        float=lambda m, f: f(C(m, POOL["float32"]), -1.0, 2.0),
        int=lambda m, f: f(C(m, POOL["int32"]), -5, 5),
        int_float_bounds=lambda m, f: f(C(m, POOL["int32"]), -5.0, 5.0),
        min_above_max=lambda m, f: f(C(m, V6), 2.0, -1.0),
        tensors=lambda m, f: f(C(m, MAT), C(m, MAT[:1] * 0), C(m, F32(1))),
        bad_bound_shape=lambda m, f: f(C(m, MAT), C(m, V6), 1.0),
        uint8=lambda m, f: f(C(m, POOL["uint8"]), 2, 200),
        bool=lambda m, f: f(C(m, BOOLS), False, True),
        complex=lambda m, f: f(C(m, POOL["complex64"]), 0, 1),
        f16=lambda m, f: f(C(m, POOL["float16"]), -1.0, 1.0),
        nan_bound=lambda m, f: f(C(m, V6), float("nan"), 1.0),
    )
    R["clip_by_norm"] = _row(
        "clip_by_norm",
        basic=lambda m, f: f(C(m, MAT), 0.5),
        no_clip=lambda m, f: f(C(m, MAT), 100.0),
        axes=lambda m, f: f(C(m, MAT), 0.5, axes=[1]),
        axes_neg=lambda m, f: f(C(m, MAT), 0.5, axes=[-1]),
        zero=lambda m, f: f(C(m, np.zeros(3, F32)), 1.0),
        nan=lambda m, f: f(C(m, np.asarray([np.nan, 1], F32)), 1.0),
        inf=lambda m, f: f(C(m, np.asarray([np.inf, 1], F32)), 1.0),
        int=lambda m, f: f(C(m, IMAT), 1),
        f64=lambda m, f: f(C(m, MAT.astype(np.float64)), 0.5),
        negative_norm=lambda m, f: f(C(m, MAT), -1.0),
        tensor_norm=lambda m, f: f(C(m, MAT), C(m, F32(0.5))),
        complex=lambda m, f: f(C(m, POOL["complex64"]), 1.0),
    )
    R["clip_by_global_norm"] = _row(
        "clip_by_global_norm",
        basic=lambda m, f: f([C(m, MAT), C(m, V6)], 1.0),
        no_clip=lambda m, f: f([C(m, MAT), C(m, V6)], 100.0),
        with_none=lambda m, f: f([C(m, MAT), None], 1.0),
        zeros=lambda m, f: f([C(m, np.zeros(2, F32))], 1.0),
        inf=lambda m, f: f([C(m, np.asarray([np.inf], F32))], 1.0),
        nan=lambda m, f: f([C(m, np.asarray([np.nan], F32))], 1.0),
        use_norm=lambda m, f: f([C(m, MAT)], 1.0, use_norm=C(m, F32(2))),
        f64=lambda m, f: f([C(m, MAT.astype(np.float64))], 1.0),
        mixed=lambda m, f: f([C(m, MAT), C(m, MAT.astype(np.float64))], 1.0),
        ints=lambda m, f: f([C(m, IMAT)], 1.0),
        all_none=lambda m, f: f([None], 1.0),
    )
    R["norm_ords"] = _row(
        "norm",
        **{
            f"ord{o}_axis{a}": (lambda m, f, o=o, a=a: f(C(m, MAT), ord=o, axis=a))
            for o, a in [
                (1, None),
                (2, None),
                (np.inf, None),
                ("fro", None),
                (1, 0),
                (2, 1),
                (np.inf, -1),
                (0.5, 0),
                (3, 1),
                ("fro", [0, 1]),
                (1, [0, 1]),
                (2, [0, 1]),
                (np.inf, [0, 1]),
                ("euclidean", [0, 1]),
                (-1, 0),
                ("nuc", [0, 1]),
                (0, 1),
            ]
        },  # fmt: skip
        keepdims=lambda m, f: f(C(m, MAT), axis=1, keepdims=True),
        keepdims_all=lambda m, f: f(C(m, MAT), keepdims=True),
        rank3=lambda m, f: f(C(m, np.ones((2, 2, 2), F32)), axis=[1, 2]),
        nan=lambda m, f: f(C(m, np.asarray([np.nan, 1], F32))),
        inf=lambda m, f: f(C(m, np.asarray([np.inf, 1], F32))),
        empty=lambda m, f: f(C(m, E0)),
        bad_axis=lambda m, f: f(C(m, MAT), axis=2),
    )


def _linalg_rows():
    R = ROWS  # noqa: N806
    for n in ("inv", "det", "slogdet", "cholesky", "trace", "diag_part", "eigh"):
        R[f"linalg.{n}"] = Row(linalg_square(f"linalg.{n}"))
    # A matrix that is not positive definite: both give NaN lower triangles;
    # TF leaves the upper one uninitialized (whatever memory held), jaxtape 0.
    # The factor is the lower triangle: where the factorization fails (zeros),
    # TF leaves the upper one unwritten (it held 2e+23 in one CI run).
    R["linalg.cholesky"] = Row(
        linalg_square("linalg.cholesky"), differs=("general",), post=np.tril
    )
    # Eigenvectors are defined up to sign: compared by magnitude.
    R["linalg.eigh"] = Row(linalg_square("linalg.eigh"), post=np.abs)
    R["linalg.inv_adjoint"] = Row(linalg_square("linalg.inv", adjoint=True))
    R["linalg.qr"] = Row(linalg_square("linalg.qr"), post=np.abs)
    R["linalg.qr_full"] = Row(
        custom(
            tall=lambda m: m.linalg.qr(C(m, SQ[:, :2]), full_matrices=True),
            wide=lambda m: m.linalg.qr(C(m, SQ[:2]), full_matrices=False),
        ),
        post=np.abs,
    )
    R["linalg.svd"] = Row(linalg_square("linalg.svd"), post=np.abs)
    R["linalg.svd_values"] = Row(linalg_square("linalg.svd", compute_uv=False))
    R["linalg.svd_full"] = Row(
        custom(
            tall=lambda m: m.linalg.svd(C(m, SQ[:, :2]), full_matrices=True),
            wide=lambda m: m.linalg.svd(C(m, SQ[:2])),
        ),
        post=np.abs,
    )
    R["linalg.matrix_transpose"] = Row(linalg_square("linalg.matrix_transpose"))
    rhs = _RNG.normal(size=(3, 2)).astype(F32)
    for n in ("solve", "triangular_solve"):
        R[f"linalg.{n}"] = _row(
            f"linalg.{n}",
            basic=lambda m, f: f(C(m, LOWER), C(m, rhs)),
            adjoint=lambda m, f: f(C(m, LOWER), C(m, rhs), adjoint=True),
            singular=lambda m, f: f(C(m, SINGULAR), C(m, rhs[:2])),
            zero_diag=lambda m, f: f(
                C(m, np.tril(SQ) - np.diag(np.diag(SQ))), C(m, rhs)
            ),
            batch=lambda m, f: f(
                C(m, np.stack([LOWER] * 2)), C(m, np.stack([rhs] * 2))
            ),
            vector_rhs=lambda m, f: f(C(m, LOWER), C(m, rhs[:, 0])),
            rhs_mismatch=lambda m, f: f(C(m, LOWER), C(m, rhs[:2])),
            not_square=lambda m, f: f(C(m, LOWER[:2]), C(m, rhs[:2])),
            f64=lambda m, f: f(
                C(m, LOWER.astype(np.float64)), C(m, rhs.astype(np.float64))
            ),
            dtypes=lambda m, f: f(C(m, LOWER), C(m, rhs.astype(np.float64))),
            ints=lambda m, f: f(
                C(m, np.eye(2, dtype=np.int32)), C(m, np.ones((2, 1), np.int32))
            ),
            empty_rhs=lambda m, f: f(C(m, LOWER), C(m, np.zeros((3, 0), F32))),
            nan=lambda m, f: f(C(m, np.full((2, 2), np.nan, F32)), C(m, rhs[:2])),
        )
    R["linalg.triangular_solve_upper"] = _row(
        "linalg.triangular_solve",
        upper=lambda m, f: f(C(m, LOWER.T), C(m, rhs), lower=False),
        upper_adjoint=lambda m, f: f(
            C(m, LOWER.T), C(m, rhs), lower=False, adjoint=True
        ),
    )
    R["linalg.diag"] = _row(
        "linalg.diag",
        vector=lambda m, f: f(C(m, V6[:3])),
        batch=lambda m, f: f(C(m, MAT)),
        scalar=lambda m, f: f(C(m, F32(1))),
        empty=lambda m, f: f(C(m, E0)),
        ints=lambda m, f: f(C(m, I6)),
        bools=lambda m, f: f(C(m, BOOLS)),
    )
    R["linalg.eye"] = _row("linalg.eye", basic=lambda m, f: f(2, 3, dtype=m.float64))
    R["linalg.einsum"] = _row(
        "linalg.einsum", basic=lambda m, f: f("ij->ji", C(m, MAT))
    )
    R["linalg.matmul"] = _row(
        "linalg.matmul", basic=lambda m, f: f(C(m, MAT), C(m, MAT.T))
    )
    R["linalg.tensordot"] = _row(
        "linalg.tensordot", basic=lambda m, f: f(C(m, MAT), C(m, MAT.T), 1)
    )
    R["linalg.norm"] = _row("linalg.norm", basic=lambda m, f: f(C(m, MAT), axis=0))
    R["linalg.l2_normalize"] = _row(
        "linalg.l2_normalize", basic=lambda m, f: f(C(m, MAT), axis=1)
    )


def _sort_rows():
    R = ROWS  # noqa: N806
    nan = np.asarray([3.0, np.nan, -1.0, np.inf, -np.inf, 0.0, -0.0, 2.0], F32)
    ties = np.asarray([2, 1, 2, 1, 3, 2], np.int32)
    # NaNs: jaxtape sorts them last, as NumPy; TF's order of NaNs comes from
    # its top-k kernel's comparisons and is no order (documented in `sort`,
    # `argsort` and `top_k`).
    for n in ("sort", "argsort"):
        R[n] = _row(
            n,
            differs=("nan", "nan_desc"),
            floats=lambda m, f: f(C(m, V6[::-1].copy())),
            nan=lambda m, f: f(C(m, nan)),
            nan_desc=lambda m, f: f(C(m, nan), direction="DESCENDING"),
            ties=lambda m, f: f(C(m, ties)),
            ties_desc=lambda m, f: f(C(m, ties), direction="DESCENDING"),
            axis0=lambda m, f: f(C(m, MAT), axis=0),
            axis_oor=lambda m, f: f(C(m, MAT), axis=2),
            bad_direction=lambda m, f: f(C(m, MAT), direction="UP"),
            bools=lambda m, f: f(C(m, BOOLS)),
            uint8=lambda m, f: f(C(m, POOL["uint8"])),
            int_extremes=lambda m, f: f(C(m, POOL["int32"])),
            int64=lambda m, f: f(C(m, POOL["int64"]), direction="DESCENDING"),
            f16=lambda m, f: f(C(m, POOL["float16"])),
            scalar=lambda m, f: f(C(m, F32(1))),
            empty=lambda m, f: f(C(m, E0)),
            complex=lambda m, f: f(C(m, POOL["complex64"])),
        )
    R["argsort_stable"] = _row(
        "argsort",
        stable=lambda m, f: f(C(m, ties), stable=True),
        stable_desc=lambda m, f: f(C(m, ties), direction="DESCENDING", stable=True),
    )
    R["math.top_k"] = _row(
        "math.top_k",
        differs=("nan",),
        basic=lambda m, f: f(C(m, V6), 2),
        k0=lambda m, f: f(C(m, V6), 0),
        k_all=lambda m, f: f(C(m, V6), 6),
        k_big=lambda m, f: f(C(m, V6), 7),
        k_neg=lambda m, f: f(C(m, V6), -1),
        nan=lambda m, f: f(C(m, nan), 3),
        ties=lambda m, f: f(C(m, ties), 3),
        matrix=lambda m, f: f(C(m, MAT), 2),
        scalar=lambda m, f: f(C(m, F32(1)), 1),
        bools=lambda m, f: f(C(m, BOOLS), 1),
        uint8=lambda m, f: f(C(m, POOL["uint8"]), 3),
        int_extremes=lambda m, f: f(C(m, POOL["int32"]), 3),
        f16=lambda m, f: f(C(m, POOL["float16"]), 3),
        float_k=lambda m, f: f(C(m, V6), 2.0),
    )
    ROWS["nn.top_k"] = _row("nn.top_k", basic=lambda m, f: f(C(m, V6), 2))


def _nn_rows():
    R = ROWS  # noqa: N806
    logits = _RNG.normal(size=(3, 4)).astype(F32)
    probs = np.abs(_RNG.normal(size=(3, 4))).astype(F32)
    probs /= probs.sum(-1, keepdims=True)
    R["nn.bias_add"] = _row(
        "nn.bias_add",
        basic=lambda m, f: f(C(m, MAT), C(m, V6[:3])),
        nchw=lambda m, f: f(
            C(m, np.ones((1, 3, 2, 2), F32)), C(m, V6[:3]), data_format="NCHW"
        ),
        nhwc=lambda m, f: f(
            C(m, np.ones((1, 2, 2, 3), F32)), C(m, V6[:3]), data_format="NHWC"
        ),
        mismatch=lambda m, f: f(C(m, MAT), C(m, V6[:2])),
        bias_2d=lambda m, f: f(C(m, MAT), C(m, MAT)),
        rank1=lambda m, f: f(C(m, V6[:3]), C(m, V6[:3])),
        ints=lambda m, f: f(C(m, IMAT), C(m, IMAT[0])),
        dtypes=lambda m, f: f(C(m, MAT), C(m, IMAT[0])),
        bools=lambda m, f: f(C(m, BOOLS), C(m, BOOLS[0])),
    )
    R["nn.sigmoid_cross_entropy_with_logits"] = _row(
        "nn.sigmoid_cross_entropy_with_logits",
        basic=lambda m, f: f(labels=C(m, probs), logits=C(m, logits)),
        edges=lambda m, f: f(
            labels=C(m, np.ones(18, F32) * 0.3), logits=C(m, POOL["float32"])
        ),
        f64=lambda m, f: f(
            labels=C(m, probs.astype(np.float64)),
            logits=C(m, logits.astype(np.float64)),
        ),
        mismatch=lambda m, f: f(labels=C(m, probs[:1]), logits=C(m, logits)),
        dtypes=lambda m, f: f(
            labels=C(m, probs.astype(np.float64)), logits=C(m, logits)
        ),
        ints=lambda m, f: f(labels=C(m, IMAT), logits=C(m, IMAT)),
        python_labels=lambda m, f: f(labels=[[1.0, 0.0]], logits=C(m, logits[:1, :2])),
    )
    R["nn.softmax_cross_entropy_with_logits"] = _row(
        "nn.softmax_cross_entropy_with_logits",
        basic=lambda m, f: f(C(m, probs), C(m, logits)),
        axis0=lambda m, f: f(C(m, probs), C(m, logits), axis=0),
        edges=lambda m, f: f(
            C(m, np.ones((1, 18), F32) / 18), C(m, POOL["float32"][None])
        ),
        mismatch=lambda m, f: f(C(m, probs[:, :2]), C(m, logits)),
        broadcast=lambda m, f: f(C(m, probs[:1]), C(m, logits)),
        f16=lambda m, f: f(
            C(m, probs.astype(np.float16)), C(m, logits.astype(np.float16))
        ),
        ints=lambda m, f: f(C(m, IMAT), C(m, IMAT)),
        rank1=lambda m, f: f(C(m, probs[0]), C(m, logits[0])),
        scalar=lambda m, f: f(C(m, F32(1)), C(m, F32(2))),
        empty_classes=lambda m, f: f(
            C(m, np.zeros((2, 0), F32)), C(m, np.zeros((2, 0), F32))
        ),
    )
    R["nn.sparse_softmax_cross_entropy_with_logits"] = _row(
        "nn.sparse_softmax_cross_entropy_with_logits",
        basic=lambda m, f: f(labels=[0, 3, 1], logits=C(m, logits)),
        int64=lambda m, f: f(
            labels=C(m, np.asarray([0, 3, 1], np.int64)), logits=C(m, logits)
        ),
        oor=lambda m, f: f(labels=[0, 4, 1], logits=C(m, logits)),
        negative=lambda m, f: f(labels=[0, -1, 1], logits=C(m, logits)),
        float_labels=lambda m, f: f(
            labels=C(m, np.asarray([0.0, 1.0, 1.0], F32)), logits=C(m, logits)
        ),
        bad_shape=lambda m, f: f(labels=[0, 1], logits=C(m, logits)),
        edges=lambda m, f: f(
            labels=[0, 1, 2], logits=C(m, POOL["float32"][:12].reshape(3, 4))
        ),
        f64=lambda m, f: f(labels=[0, 3, 1], logits=C(m, logits.astype(np.float64))),
        rank1_logits=lambda m, f: f(labels=C(m, np.int32(1)), logits=C(m, logits[0])),
        int_logits=lambda m, f: f(labels=[0, 3], logits=C(m, IMAT[:, :4].repeat(2, 1))),
        uint8_labels=lambda m, f: f(
            labels=C(m, np.asarray([0, 3, 1], np.uint8)), logits=C(m, logits)
        ),
    )
    R["nn.moments"] = _row(
        "nn.moments",
        axis0=lambda m, f: f(C(m, MAT), [0]),
        all=lambda m, f: f(C(m, MAT), [0, 1]),
        neg=lambda m, f: f(C(m, MAT), [-1]),
        keepdims=lambda m, f: f(C(m, MAT), [1], keepdims=True),
        int_axes=lambda m, f: f(C(m, MAT), 0),
        ints=lambda m, f: f(C(m, IMAT), [0]),
        f16=lambda m, f: f(C(m, MAT.astype(np.float16)), [1]),
        empty=lambda m, f: f(C(m, np.zeros((0, 2), F32)), [0]),
        oor=lambda m, f: f(C(m, MAT), [2]),
        edges=lambda m, f: f(C(m, _tame(POOL["float32"])), [0]),
    )
    R["nn.dropout"] = Row(
        custom(
            basic=lambda m: m.nn.dropout(C(m, np.ones((4, 5), F32)), 0.5),
            zero=lambda m: m.nn.dropout(C(m, np.ones((4, 5), F32)), 0.0),
            f64=lambda m: m.nn.dropout(C(m, np.ones((2, 3))), 0.3),
            noise_shape=lambda m: m.nn.dropout(
                C(m, np.ones((4, 5), F32)), 0.5, noise_shape=[4, 1]
            ),
            rate_one=lambda m: m.nn.dropout(C(m, np.ones(3, F32)), 1.0),
            negative=lambda m: m.nn.dropout(C(m, np.ones(3, F32)), -0.1),
            ints=lambda m: m.nn.dropout(C(m, I6), 0.5),
        ),
        values=False,  # random: shapes and dtypes only
    )


def _random_rows():
    r = {
        "uniform": lambda m: m.random.uniform([2, 3]),
        "uniform_f64": lambda m: m.random.uniform([2], dtype=m.float64),
        "uniform_int": lambda m: m.random.uniform([4], 0, 10, dtype=m.int32),
        "uniform_int64": lambda m: m.random.uniform([4], 0, 10, dtype=m.int64),
        "uniform_int_no_max": lambda m: m.random.uniform([4], dtype=m.int32),
        "uniform_empty": lambda m: m.random.uniform([0, 2]),
        "uniform_bool": lambda m: m.random.uniform([2], dtype=m.bool),
        "uniform_tensor_shape": lambda m: m.random.uniform(
            C(m, np.asarray([2, 2], np.int32))
        ),
        "normal": lambda m: m.random.normal([2, 3]),
        "normal_f16": lambda m: m.random.normal([2], dtype=m.float16),
        "normal_f64": lambda m: m.random.normal([2], 1.0, 2.0, dtype=m.float64),
        "normal_int": lambda m: m.random.normal([2], dtype=m.int32),
        "normal_negative_shape": lambda m: m.random.normal([-1]),
        "truncated_normal": lambda m: m.random.truncated_normal([3, 2]),
        "truncated_normal_f64": lambda m: m.random.truncated_normal(
            [3], dtype=m.float64
        ),
        "categorical": lambda m: m.random.categorical(
            C(m, np.log(np.ones((2, 3), F32))), 5
        ),
        "categorical_int32": lambda m: m.random.categorical(
            C(m, np.zeros((2, 3), F32)), 4, dtype=m.int32
        ),
        "categorical_zero": lambda m: m.random.categorical(
            C(m, np.zeros((2, 3), F32)), 0
        ),
        "categorical_rank1": lambda m: m.random.categorical(C(m, np.zeros(3, F32)), 2),
        "shuffle": lambda m: m.random.shuffle(C(m, MAT)),
        "shuffle_scalar": lambda m: m.random.shuffle(C(m, F32(1))),
    }
    ROWS["random"] = Row(custom(**r), values=False)  # random: shapes and dtypes


def _variable_rows():
    """Variable creation and assignment convert values as TF does: NumPy values
    are cast, Tensors and Variables of another dtype refused."""

    def made(**kw):
        return lambda m, value: m.Variable(value(m), **_kw(m, kw)).read_value()

    def assigned(method, start, **kw):
        def fn(m, value):
            v = m.Variable(start, **_kw(m, kw))
            return getattr(v, method)(value(m)).read_value()

        return fn

    values = {
        "f32_tensor": lambda m: C(m, np.asarray([1.5], F32)),
        "i32_tensor": lambda m: C(m, np.asarray([2], np.int32)),
        "f64_tensor": lambda m: C(m, np.asarray([2.5])),
        "f64_variable": lambda m: m.Variable(np.asarray([2.5])),
        "f64_numpy": lambda m: np.asarray([2.7]),
        "negative_f64_numpy": lambda m: np.asarray([-2.7]),
        "i64_numpy": lambda m: np.asarray([2**40 + 2]),
        "bool_numpy": lambda m: np.asarray([True]),
        "f16_numpy": lambda m: np.asarray([2.5], np.float16),
        "huge_numpy": lambda m: np.asarray([1e40]),
        "numpy_scalar": lambda m: np.float64(2.5),
        "float_list": lambda m: [2.5],
        "int_list": lambda m: [2],
        "wrong_shape": lambda m: np.asarray([[2.5]]),
    }  # (NumPy object arrays: jaxtape converts their items as Python numbers)
    cases = {}
    for vid, value in values.items():
        for kind, fn in {
            "init_int32": made(dtype=D("int32")),
            "init_float32": made(dtype=D("float32")),
            "assign_float": assigned("assign", [1.0]),
            "assign_int": assigned("assign", [1]),
            "assign_uint8": assigned("assign", [1], dtype=D("uint8")),
            "assign_add_float": assigned("assign_add", [1.0]),
            "assign_sub_int": assigned("assign_sub", [1]),
        }.items():
            cases[f"{kind}_{vid}"] = lambda m, fn=fn, value=value: fn(m, value)
    ROWS["Variable"] = Row(custom(**cases))


def _operator_rows():
    """Python's operators on tensors: TF's conversions (the reflected forms
    convert the number to the tensor's dtype), its bool `*`/`&`/`|`/`^`, `==`."""
    f, i, b = np.asarray([1.5, -2.0], F32), np.asarray([3, -4], np.int32), BOOLS[0]
    exprs = {
        "int_plus_float": (lambda x: x + 2.5, i),
        "float_plus_int_tensor": (lambda x: 2.5 + x, i),
        "int_times_float": (lambda x: x * 2.5, i),
        "int_plus_true": (lambda x: x + True, i),
        "true_plus_float": (lambda x: True + x, f),
        "int_div_int": (lambda x: x / x, i),
        "two_div_float": (lambda x: 2 / x, f),
        "true_div_int": (lambda x: True / x, i),
        "int_floordiv_float": (lambda x: x // 2.0, i),
        "float_floordiv": (lambda x: x // 0.1, f),
        "float_mod": (lambda x: x % 0.7, f),
        "int_pow_negative": (lambda x: x**-1, i),
        "float_pow": (lambda x: x**3, f),
        "bool_times_float": (lambda x: x * 2.5, b),
        "bool_times_bool": (lambda x: x * x, b),
        "two_times_bool": (lambda x: 2 * x, b),
        "true_times_bool": (lambda x: True * x, b),
        "bool_plus_bool": (lambda x: x + x, b),
        "neg_bool": (lambda x: -x, b),
        "abs_bool": (lambda x: abs(x), b),
        "invert_bool": (lambda x: ~x, b),
        "invert_int": (lambda x: ~x, i),
        "invert_float": (lambda x: ~x, f),
        "int_and_true": (lambda x: x & True, i),
        "int_or_int": (lambda x: x | x, i),
        "int_xor_three": (lambda x: x ^ 3, i),
        "float_and_float": (lambda x: x & x, f),
        "bool_and_one": (lambda x: x & 1, b),
        "bool_or_false": (lambda x: x | False, b),
        "less_than_bool": (lambda x: x < x, b),
        "int_equals_float": (lambda x: x == 2.5, i),
        "equals_list": (lambda x: x == [1.5, 0.0], f),
        "equals_unbroadcastable": (lambda x: x == np.ones(3, F32), f),
        "not_equals_unbroadcastable": (lambda x: x != np.ones(3, F32), f),
        "float_equals_none": (lambda x: x == None, f),  # noqa: E711
        # (`x == "a"`: TF's TypeError; jaxtape's string conversion raises its
        # NotImplementedError for strings first, see test_error_parity)
        "uint_negative": (lambda x: -x, np.asarray([1, 2], np.uint8)),
        "matmul_vectors": (lambda x: x @ x, f),
    }
    ROWS["operators"] = Row(
        custom(**{k: (lambda m, e=e, x=x: e(C(m, x))) for k, (e, x) in exprs.items()})
    )


_array_rows()
_operator_rows()
_variable_rows()
_index_rows()
_creation_rows()
_product_rows()
_linalg_rows()
_sort_rows()
_nn_rows()
_random_rows()


_unary_rows()
_binary_rows()
_division_by_zero_rows()
_reduction_rows()


# -- running and comparing --------------------------------------------------------
def _run(fn, m):
    try:
        return fn(m), None
    except Exception as e:  # noqa: BLE001 - the exception is the result
        return None, e


def _expected_type(tf, exc):
    if isinstance(exc, tf.errors.OpError):
        return getattr(jaxtape.errors, type(exc).__name__)
    return type(exc)


def _leaves(out):
    if isinstance(out, (list, tuple)):
        return [leaf for o in out for leaf in _leaves(o)]
    return [out]


def _dtype_name(x):
    dt = getattr(x, "dtype", None)
    if dt is None:
        return type(x).__name__
    return getattr(dt, "name", str(dt))


_TOL = {"float16": 2e-3, "bfloat16": 2e-2, "float32": 2e-5, "complex64": 2e-5}


def _compare(want, got, rtol, post):
    """The first difference between TF's `want` and jaxtape's `got`, or None."""
    wants, gots = _leaves(want), _leaves(got)
    if len(wants) != len(gots):
        return f"{len(gots)} outputs, TF gives {len(wants)}"
    for i, (w, g) in enumerate(zip(wants, gots)):
        where = f"output {i}: " if len(wants) > 1 else ""
        if _dtype_name(g) != _dtype_name(w):
            return f"{where}dtype {_dtype_name(g)}, TF gives {_dtype_name(w)}"
        wa, ga = np.asarray(w), np.asarray(g)
        if post is not None:
            wa, ga = post(wa), post(ga)
        if ga.shape != wa.shape:
            return f"{where}shape {ga.shape}, TF gives {wa.shape}"
        if wa.dtype.kind in "fc":
            tol = max(rtol or 0, _TOL.get(_dtype_name(w), 1e-10))
            complex_ = wa.dtype.kind == "c"
            for part in (np.real, np.imag) if complex_ else (np.asarray,):
                if not np.array_equal(np.isnan(part(wa)), np.isnan(part(ga))):
                    return f"{where}NaN at other places:\n{ga}\nTF gives\n{wa}"
            a = wa.astype(np.complex128 if complex_ else np.float64)
            b = ga.astype(a.dtype)
            # (complex: |difference| against |value|, as one number)
            nan = np.isnan(a.real) | np.isnan(a.imag) if complex_ else np.isnan(a)
            if not np.allclose(b[~nan], a[~nan], rtol=tol, atol=tol):
                return f"{where}values\n{ga}\nTF gives\n{wa}"
        elif not np.array_equal(ga, wa):
            return f"{where}values\n{ga}\nTF gives\n{wa}"
    return None


def _check_case(tf, fn, row, cid):
    want, tf_error = _run(fn, tf)
    if tf_error is None and cid in REFUSALS:
        return None  # a rarer dtype TF accepts: refusals only (see the top)
    got, error = _run(fn, jaxtape)
    if tf_error is not None:
        expected = _expected_type(tf, tf_error)
        if error is None:
            return f"TF raises {type(tf_error).__name__}, jaxtape returns {got!r}"
        if not isinstance(error, expected):
            return (
                f"TF raises {expected.__name__} ({str(tf_error)[:120]!r}); jaxtape "
                f"raises {type(error).__name__}: {str(error)[:200]}"
            )
        return None
    if error is not None:
        return f"TF returns {want!r}; jaxtape raises {type(error).__name__}: {error}"
    if cid in row.differs or not row.values:  # shape and dtype only
        return _compare(want, got, np.inf, lambda a: np.zeros_like(a, np.int8))
    return _compare(want, got, row.rtol, row.post)


@pytest.mark.parametrize("name", list(ROWS))
def test_op_matches_tensorflow_on_edge_cases(name, tf):
    row = ROWS[name]
    failures = []
    for cid, fn in row.cases().items():
        problem = _check_case(tf, fn, row, cid)
        if problem is not None:
            failures.append(f"[{cid}] {problem}")
    assert not failures, (
        f"{name}: {len(failures)} case(s) differ from TF\n" + "\n".join(failures)
    )


GRADIENT_CASES = {
    "floordiv": lambda m, x, y: m.math.floordiv(x, y),
    "floordiv_operator": lambda m, x, y: x // y,
    "floormod": lambda m, x, y: m.math.floormod(x, y),
    "xdivy": lambda m, x, y: m.math.xdivy(x, y),
    "divide_no_nan": lambda m, x, y: m.math.divide_no_nan(x, y),
    "squared_difference": lambda m, x, y: m.math.squared_difference(x, y),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradient_is_none_or_a_value_as_in_tensorflow(name, tf):
    """The ops whose bodies changed here: None where TF's op has no gradient."""
    fn = GRADIENT_CASES[name]
    x_np, y_np = np.asarray([3.0, -5.0, 0.0], F32), np.asarray([2.0, 2.0, 0.0], F32)
    results = []
    for m in (tf, jaxtape):
        x, y = m.constant(x_np), m.constant(y_np)
        with m.GradientTape(persistent=True) as tape:
            tape.watch(x)
            tape.watch(y)
            out = fn(m, x, y)
        results.append([tape.gradient(out, s) for s in (x, y)])
    for want, got in zip(*results):
        assert (got is None) == (want is None), (want, got)
        if want is not None:
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


COMPILED_CHECKS = {
    "inv_singular": (lambda m, x: m.linalg.inv(x), SINGULAR),
    "solve_singular": (lambda m, x: m.linalg.solve(x, m.ones([2, 1])), SINGULAR),
    "eigh_nan": (lambda m, x: m.linalg.eigh(x)[0], np.full((2, 2), np.nan, F32)),
    "inv_ok": (lambda m, x: m.linalg.inv(x), SPD),
    "pow_negative_int_exponent": (lambda m, x: m.pow(x, -x), np.asarray([1, 2])),
}


@pytest.mark.parametrize("name", sorted(COMPILED_CHECKS))
def test_value_checks_hold_inside_compiled_functions_as_in_tf_function(name, tf):
    """TF's kernels check values inside `tf.function` too (core/checks)."""
    fn, x = COMPILED_CHECKS[name]
    want, tf_error = _run(lambda m: m.function(lambda v: fn(m, v))(C(m, x)), tf)
    got, error = _run(lambda m: m.function(lambda v: fn(m, v))(C(m, x)), jaxtape)
    if tf_error is not None:
        assert isinstance(error, _expected_type(tf, tf_error)), (tf_error, error)
    else:
        assert error is None, error
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)


def test_rows_cover_every_shared_public_op(tf):
    """Every public jaxtape op that TF also has is in the table (or exempted)."""
    # Not ops on tensors: checked by their own tests (test_function*, tapes, ...).
    not_ops = {
        "as_dtype", "cond", "custom_gradient", "device", "executing_eagerly",
        "function", "init_scope", "map_fn", "numpy_function", "print",
        "py_function", "switch_case", "while_loop", "get_global_generator",
        "set_global_generator", "set_seed",
        # Control flow and assertions (tests/test_control_flow.py,
        # tests/test_autograph.py, tests/test_runtime_checks.py):
        "Assert", "case", "foldl", "foldr", "scan",
        # Assertions (tf.debugging's, tests/test_runtime_checks.py) and
        # utilities (against TF in tests/test_ops_parity.py):
        "assert_equal", "assert_greater", "assert_less", "assert_rank",
        "get_logger", "guarantee_const", "inside_function", "is_symbolic_tensor",
    }  # fmt: skip
    # String ops: tests/test_strings.py (a parity table vs TF).
    not_ops |= {"as_string"}
    # The rest of the top level (tests/test_toplevel_more.py, a parity table
    # vs TF with gradients and compiled rows; TF's graph-only and hashing
    # utilities there too):
    not_ops |= {
        "conv2d_backprop_filter_v2", "conv2d_backprop_input_v2", "edit_distance",
        "extract_volume_patches", "fftnd", "fingerprint", "grad_pass_through",
        "gradients", "hessians", "ifftnd", "irfftnd", "make_ndarray",
        "make_tensor_proto", "matrix_square_root", "no_gradient",
        "ragged_fill_empty_rows", "ragged_fill_empty_rows_grad",
        "random_index_shuffle", "recompute_grad",
        "register_tensor_conversion_function", "rfftnd", "type_spec_from_value",
        "variable_creator_scope", "vectorized_map",
    }  # fmt: skip
    # The last top-level ops: tests/test_toplevel_rest.py (parity vs TF).
    not_ops |= {
        "approx_top_k",
        "check_pinned",
        "conv",
        "nondifferentiable_batch_function",
    }
    # Convolution and pooling: tests/test_conv_pool_sweep.py sweeps them.
    not_ops |= {
        "avg_pool", "avg_pool1d", "avg_pool2d", "conv1d", "conv2d", "convolution",
        "max_pool", "max_pool1d", "max_pool2d",
    }  # fmt: skip
    # The rest of the dense-op surface (segment ops, unique, searchsorted,
    # transposed convolutions, tf.linalg's decompositions...): one row per op
    # against TF (values, gradients, error types) in tests/test_ops_parity.py.
    not_ops |= {
        "accumulate_n", "adjoint", "angle", "approx_max_k", "approx_min_k",
        "atrous_conv2d", "atrous_conv2d_transpose", "avg_pool3d", "band_part",
        "batch_norm_with_global_normalization", "batch_normalization", "batch_to_space",
        "betainc", "bincount", "bitcast", "broadcast_dynamic_shape",
        "broadcast_static_shape", "cholesky_solve", "compute_average_loss",
        "confusion_matrix", "conv1d_transpose", "conv2d_transpose", "conv3d",
        "conv3d_transpose", "conv_transpose", "count_nonzero", "crelu", "cross",
        "cumulative_logsumexp", "depth_to_space", "depthwise_conv2d",
        "dynamic_partition", "dynamic_stitch", "eig", "eigvals", "eigvalsh",
        "embedding_lookup", "ensure_shape", "expm", "get_static_value", "global_norm",
        "group", "histogram_fixed_width", "histogram_fixed_width_bins", "identity_n",
        "igamma", "igammac", "in_top_k", "invert_permutation", "is_non_decreasing",
        "is_strictly_increasing", "is_tensor", "lbeta", "local_response_normalization",
        "log_poisson_loss", "logdet", "lrn", "lstsq", "lu", "lu_matrix_inverse",
        "lu_reconstruct", "lu_solve", "matrix_rank", "matvec", "max_pool3d", "meshgrid",
        "multiply_no_nan", "nextafter", "no_op", "normalize", "normalize_moments",
        "parallel_stack", "pinv", "polygamma", "polyval", "pool", "realdiv",
        "reduce_euclidean_norm", "required_space_to_batch_paddings", "reverse_sequence",
        "roll", "scalar_mul", "scale_regularization_loss", "searchsorted",
        "segment_max", "segment_mean", "segment_min", "segment_prod", "segment_sum",
        "separable_conv2d", "sequence_mask", "set_diag", "shape_n", "slice",
        "space_to_batch", "space_to_batch_nd", "space_to_depth", "strided_slice",
        "sufficient_statistics", "tensor_diag", "tensor_diag_part",
        "tensor_scatter_nd_max", "tensor_scatter_nd_min", "tensor_scatter_nd_sub",
        "timestamp", "truncatediv", "truncatemod", "tuple", "unique",
        "unique_with_counts", "unravel_index", "unsorted_segment_max",
        "unsorted_segment_mean", "unsorted_segment_min", "unsorted_segment_prod",
        "unsorted_segment_sqrt_n", "unsorted_segment_sum",
        "weighted_cross_entropy_with_logits", "weighted_moments", "xlog1py",
        "zero_fraction", "zeta",
    }  # fmt: skip
    # tf.random's stateless ops, samplers and seed helpers: tests/test_random_ops.py
    # (properties and TF's errors: jaxtape's streams are not TF's).
    not_ops |= {
        "all_candidate_sampler", "create_rng_state", "fixed_unigram_candidate_sampler",
        "fold_in", "gamma", "learned_unigram_candidate_sampler",
        "log_uniform_candidate_sampler", "poisson", "stateless_binomial",
        "stateless_categorical", "stateless_gamma", "stateless_normal",
        "stateless_parameterized_truncated_normal", "stateless_poisson",
        "stateless_truncated_normal", "stateless_uniform", "uniform_candidate_sampler",
        "split",
    }  # fmt: skip
    # The rest of tf.nn (CTC, argmax/morphological/fractional pooling, sampled
    # losses, sparse lookups): one row per op against TF in tests/test_nn_more_ops.py.
    not_ops |= {
        "collapse_repeated", "compute_accidental_hits", "ctc_beam_search_decoder",
        "ctc_greedy_decoder", "ctc_loss", "ctc_unique_labels",
        "depthwise_conv2d_backprop_filter", "depthwise_conv2d_backprop_input",
        "dilation2d", "embedding_lookup_sparse", "erosion2d", "fractional_avg_pool",
        "fractional_max_pool", "isotonic_regression", "max_pool_with_argmax",
        "nce_loss", "safe_embedding_lookup_sparse", "sampled_softmax_loss",
        "with_space_to_batch",
    }  # fmt: skip
    # tf.linalg's matrix functions and tridiagonal/banded solvers: one row per op
    # against TF in tests/test_linalg_more.py.
    not_ops |= {
        "banded_triangular_solve", "eigh_tridiagonal", "logm", "sqrtm",
        "tridiagonal_matmul", "tridiagonal_solve",
    }  # fmt: skip
    # Not an op: the name scope's path (tests/test_state_and_interop.py).
    not_ops |= {"get_current_name_scope"}
    suffixes = r"_(by_zero|output_type|exclusive_reverse|approximate|alpha)$"
    covered = {re.sub(suffixes, "", k).split(".")[-1] for k in ROWS}
    covered |= {"swish"}  # (nn.silu's other name: the same function)
    covered |= {  # (in the "random" row: shapes and dtypes)
        "categorical", "normal", "shuffle", "truncated_normal", "uniform",
    }  # fmt: skip
    missing = []
    for ns in ("", "math", "nn", "linalg", "random"):
        jm = getattr(jaxtape, ns) if ns else jaxtape
        tm = getattr(tf, ns) if ns else tf
        for n in dir(jm):
            obj = getattr(jm, n)
            if n.startswith("_") or isinstance(obj, type) or not callable(obj):
                continue
            if hasattr(tm, n) and n not in covered and n not in not_ops:
                missing.append(f"{ns}.{n}" if ns else n)
    assert not missing, f"ops without a fuzz row: {sorted(set(missing))}"
