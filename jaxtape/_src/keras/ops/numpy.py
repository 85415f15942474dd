"""Keras 3's `keras.ops.numpy` (also `keras.ops.*`): NumPy-style ops.

Mirrors Keras's TensorFlow backend (what `tf.keras.ops` runs on): Keras's
dtype promotion (`add(int32, 1.5)` is float32; float functions of integers
give `floatx()`), argument names (`x1`, `x2`, `axis`, `keepdims`) and result
dtypes (`argmax` int32, `sum` of int8 int32). Bodies are pure jnp functions
registered through the dispatcher (`_base.body`).

Layer L5 (keras); imports `core` and this package.
"""

from __future__ import annotations

import builtins
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import config
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.keras.ops import dtypes as kd
from jaxtape._src.keras.ops._base import (
    body,
    dtype_arg,
    float_of,
    name_public,
    shape_arg,
    static,
    sum_dtype,
    tensor,
)
from jaxtape._src.ops import kinks

_DOC = (
    "Keras 3's `keras.ops.{name}`: NumPy's `{np_name}` with Keras's dtype rules "
    "({rule})."
)


def _dt(x: Any) -> Any:
    return kd.dtype_of(x)


def _name(x: Any) -> str:
    d = kd.dtype_of(x)
    return kd.result_type(d) if d in (int, float) else d


# -- element-wise, one input ----------------------------------------------------
def _same(d: str) -> str:
    return d


def _same_or_int32(d: str) -> str:
    return "int32" if d == "bool" else d


def _unary(name: str, fn: Any, rule: Any = float_of, differentiable: bool = True):
    @body(name, differentiable)
    def _op(x, *, dtype):
        return fn(x.astype(dtype))

    _op.__name__ = f"_{name}"

    def public(x):
        d = rule(_name(x))
        return _op(tensor(x, d), dtype=d)

    rule_doc = {
        float_of: "an integer input gives `floatx()`",
        _same: "the dtype is kept",
        _same_or_int32: "the dtype is kept; bool gives int32",
    }.get(rule, "bool result")
    np_name = getattr(fn, "__name__", name)
    return name_public(
        public, name, _DOC.format(name=name, np_name=np_name, rule=rule_doc)
    )


def _bool(d: str) -> str:
    return d


def _sinc(x):
    return jnp.sinc(x)


def _i0(x):
    return jnp.i0(x)


def _erfinv(x):
    return jax.scipy.special.erfinv(x)


sin = _unary("sin", jnp.sin)
cos = _unary("cos", jnp.cos)
tan = _unary("tan", jnp.tan)
arcsin = _unary("arcsin", jnp.arcsin)
arccos = _unary("arccos", jnp.arccos)
arctan = _unary("arctan", jnp.arctan)
arcsinh = _unary("arcsinh", jnp.arcsinh)
arccosh = _unary("arccosh", jnp.arccosh)
arctanh = _unary("arctanh", jnp.arctanh)
sinh = _unary("sinh", jnp.sinh)
cosh = _unary("cosh", jnp.cosh)
tanh = _unary("tanh", jnp.tanh)
exp = _unary("exp", jnp.exp)
exp2 = _unary("exp2", jnp.exp2)
expm1 = _unary("expm1", jnp.expm1)
log = _unary("log", jnp.log)
log10 = _unary("log10", jnp.log10)
log1p = _unary("log1p", jnp.log1p)
log2 = _unary("log2", jnp.log2)
sqrt = _unary("sqrt", jnp.sqrt)
cbrt = _unary("cbrt", jnp.cbrt)
deg2rad = _unary("deg2rad", jnp.deg2rad)
rad2deg = _unary("rad2deg", jnp.rad2deg)
sinc = _unary("sinc", _sinc)
i0 = _unary("i0", _i0)
reciprocal = _unary("reciprocal", jnp.reciprocal)
ceil = _unary("ceil", jnp.ceil, differentiable=False)
floor = _unary("floor", jnp.floor, differentiable=False)
abs = _unary("abs", kinks.abs, _same)  # noqa: A001 - Keras's public name
absolute = abs
fabs = _unary("fabs", jnp.abs)
negative = _unary("negative", jnp.negative, _same)
square = _unary("square", jnp.square, _same_or_int32)
sign = _unary("sign", jnp.sign, _same_or_int32, differentiable=False)
trunc = _unary("trunc", jnp.trunc, _same, differentiable=False)
conj = _unary("conj", jnp.conj, _same)
conjugate = conj
real = _unary("real", jnp.real, _same)
imag = _unary("imag", jnp.imag, _same)
angle = _unary("angle", jnp.angle)
isnan = _unary("isnan", jnp.isnan, _bool, differentiable=False)
isinf = _unary("isinf", jnp.isinf, _bool, differentiable=False)
isfinite = _unary("isfinite", jnp.isfinite, _bool, differentiable=False)
isneginf = _unary("isneginf", jnp.isneginf, _bool, differentiable=False)
isposinf = _unary("isposinf", jnp.isposinf, _bool, differentiable=False)
isreal = _unary("isreal", jnp.isreal, _bool, differentiable=False)
signbit = _unary("signbit", jnp.signbit, _bool, differentiable=False)
logical_not = _unary(
    "logical_not", jnp.logical_not, lambda d: "bool", differentiable=False
)
bitwise_invert = _unary("bitwise_invert", jnp.invert, _same, differentiable=False)
bitwise_not = bitwise_invert


@body("round", differentiable=False)
def _round(x, *, decimals):
    return jnp.round(x, decimals)


def round(x, decimals=0):  # noqa: A001 - Keras's public name
    """Keras 3's `keras.ops.round`: rounds half to even, keeping the dtype."""
    return _round(tensor(x), decimals=int(decimals))


# -- element-wise, two inputs --------------------------------------------------
def _binary(name: str, fn: Any, rule: Any = _same, differentiable: bool = True):
    @body(name, differentiable)
    def _op(x1, x2, *, dtype):
        return fn(x1.astype(dtype), x2.astype(dtype))

    _op.__name__ = f"_{name}"

    def public(x1, x2):
        d = rule(kd.result_type(_dt(x1), _dt(x2)))
        return _op(tensor(x1, d), tensor(x2, d), dtype=d)

    rule_doc = {
        _same: "inputs are promoted to a common dtype",
        _to_float: "inputs are promoted; integers give `floatx()`",
    }.get(rule, "inputs are promoted to a common dtype")
    np_name = getattr(fn, "__name__", name)
    return name_public(
        public, name, _DOC.format(name=name, np_name=np_name, rule=rule_doc)
    )


def _to_float(d: str) -> str:
    return kd.result_type(d, float)


def _int32_if_bool(d: str) -> str:
    return "int32" if d == "bool" else d


def _divide_no_nan(x1, x2):
    safe = jnp.where(x2 == 0, jnp.ones_like(x2), x2)
    return jnp.where(x2 == 0, jnp.zeros_like(x1), x1 / safe)


add = _binary("add", jnp.add)
subtract = _binary("subtract", jnp.subtract)
multiply = _binary("multiply", jnp.multiply)
divide = _binary("divide", jnp.true_divide, _to_float)
true_divide = divide
divide_no_nan = _binary("divide_no_nan", _divide_no_nan, _to_float)
floor_divide = _binary(
    "floor_divide", jnp.floor_divide, _int32_if_bool, differentiable=False
)
mod = _binary("mod", jnp.mod, _int32_if_bool)
fmod = _binary("fmod", jnp.fmod, _int32_if_bool)
power = _binary("power", jnp.power)
maximum = _binary("maximum", kinks.maximum)  # (TF's gradient at ties)
minimum = _binary("minimum", kinks.minimum)
fmax = _binary("fmax", jnp.fmax)
fmin = _binary("fmin", jnp.fmin)
arctan2 = _binary("arctan2", jnp.arctan2, _to_float)
hypot = _binary("hypot", jnp.hypot, _to_float)
logaddexp = _binary("logaddexp", jnp.logaddexp, _to_float)
logaddexp2 = _binary("logaddexp2", jnp.logaddexp2, _to_float)
nextafter = _binary("nextafter", jnp.nextafter, _to_float, differentiable=False)
heaviside = _binary("heaviside", jnp.heaviside, _int32_if_bool, differentiable=False)
gcd = _binary("gcd", jnp.gcd, differentiable=False)
lcm = _binary("lcm", jnp.lcm, differentiable=False)
equal = _binary("equal", jnp.equal, differentiable=False)
not_equal = _binary("not_equal", jnp.not_equal, differentiable=False)
less = _binary("less", jnp.less, differentiable=False)
less_equal = _binary("less_equal", jnp.less_equal, differentiable=False)
greater = _binary("greater", jnp.greater, differentiable=False)
greater_equal = _binary("greater_equal", jnp.greater_equal, differentiable=False)
logical_and = _binary(
    "logical_and", jnp.logical_and, lambda d: "bool", differentiable=False
)
logical_or = _binary(
    "logical_or", jnp.logical_or, lambda d: "bool", differentiable=False
)
logical_xor = _binary(
    "logical_xor", jnp.logical_xor, lambda d: "bool", differentiable=False
)


def _xy(fn):
    """`fn(x1, x2)` as Keras's bitwise ops name their arguments: `(x, y)`."""

    def public(x, y):
        return fn(x, y)

    return name_public(public, fn.__name__, fn.__doc__ or "")


bitwise_and = _xy(_binary("bitwise_and", jnp.bitwise_and, differentiable=False))
bitwise_or = _xy(_binary("bitwise_or", jnp.bitwise_or, differentiable=False))
bitwise_xor = _xy(_binary("bitwise_xor", jnp.bitwise_xor, differentiable=False))


@body("shift", differentiable=False)
def _shift(x, y, *, left):
    return jnp.left_shift(x, y) if left else jnp.right_shift(x, y)


def bitwise_left_shift(x, y):
    """Keras 3's `keras.ops.bitwise_left_shift`: `x << y` on promoted integers."""
    d = kd.result_type(_dt(x), _dt(y))
    return _shift(tensor(x, d), tensor(y, d), left=True)


def bitwise_right_shift(x, y):
    """Keras 3's `keras.ops.bitwise_right_shift`: `x >> y` on promoted integers."""
    d = kd.result_type(_dt(x), _dt(y))
    return _shift(tensor(x, d), tensor(y, d), left=False)


left_shift = bitwise_left_shift
right_shift = bitwise_right_shift


@body("ldexp")
def _ldexp(x1, x2, *, dtype):
    return x1.astype(dtype) * jnp.exp2(x2.astype(dtype))


def ldexp(x1, x2):
    """Keras 3's `keras.ops.ldexp`: `x1 * 2**x2` (`x2` an integer tensor)."""
    d = float_of(_name(x1))
    return _ldexp(tensor(x1, d), tensor(x2), dtype=d)


@body("isclose", differentiable=False)
def _isclose(x1, x2, *, dtype, rtol, atol, equal_nan):
    return jnp.isclose(
        x1.astype(dtype), x2.astype(dtype), rtol=rtol, atol=atol, equal_nan=equal_nan
    )


def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """Keras 3's `keras.ops.isclose`: element-wise `|x1 - x2| <= atol + rtol|x2|`."""
    d = kd.result_type(_dt(x1), _dt(x2))
    return _isclose(
        tensor(x1, d),
        tensor(x2, d),
        dtype=d,
        rtol=float(rtol),
        atol=float(atol),
        equal_nan=bool(equal_nan),
    )


def allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """Keras 3's `keras.ops.allclose`: whether `isclose` holds everywhere."""
    return all(isclose(x1, x2, rtol, atol, equal_nan))


@body("clip")
def _clip(x, lo, hi, *, dtype):
    return kinks.clip(x.astype(dtype), lo.astype(dtype), hi.astype(dtype))


def clip(x, x_min, x_max):
    """Keras 3's `keras.ops.clip`: clips to `[x_min, x_max]` (bool gives int32)."""
    d = _int32_if_bool(_name(x))
    return _clip(tensor(x, d), tensor(x_min, d), tensor(x_max, d), dtype=d)


@body("nan_to_num")
def _nan_to_num(x, *, nan, posinf, neginf):
    return jnp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """Keras 3's `keras.ops.nan_to_num`: replaces NaN and infinities."""
    return _nan_to_num(tensor(x), nan=nan, posinf=posinf, neginf=neginf)


# -- reductions --
def _axis(axis):
    return static(axis)


@body("sum")
def _sum(x, *, axis, keepdims, dtype):
    return jnp.sum(x.astype(dtype), axis=axis, keepdims=keepdims, dtype=dtype)


def sum(x, axis=None, keepdims=False):  # noqa: A001 - Keras's public name
    """Keras 3's `keras.ops.sum`; bool and small ints sum in (u)int32."""
    x = tensor(x)
    return _sum(x, axis=_axis(axis), keepdims=keepdims, dtype=sum_dtype(_name(x)))


@body("prod")
def _prod(x, *, axis, keepdims, dtype):
    return jnp.prod(x.astype(dtype), axis=axis, keepdims=keepdims, dtype=dtype)


def prod(x, axis=None, keepdims=False, dtype=None):
    """Keras 3's `keras.ops.prod`; bool and small ints multiply in (u)int32."""
    x = tensor(x)
    d = sum_dtype(_name(x)) if dtype is None else dtype_arg(dtype)
    return _prod(x, axis=_axis(axis), keepdims=keepdims, dtype=d)


@body("mean")
def _mean(x, *, axis, keepdims, dtype):
    compute = jnp.float32 if dtype in ("float16", "bfloat16") else dtype
    m = jnp.mean(x.astype(compute), axis=axis, keepdims=keepdims)
    return m.astype(dtype)


def mean(x, axis=None, keepdims=False):
    """Keras 3's `keras.ops.mean`: integers average to `floatx()`."""
    x = tensor(x)
    d = _name(x)
    if "int" in d or d == "bool":
        d = config.floatx()
    return _mean(x, axis=_axis(axis), keepdims=keepdims, dtype=d)


def _reduction(name, fn, rule=_same, differentiable=True, doc=""):
    @body(name, differentiable)
    def _op(x, *, axis, keepdims, dtype):
        return fn(x.astype(dtype), axis=axis, keepdims=keepdims)

    _op.__name__ = f"_{name}"

    def public(x, axis=None, keepdims=False):
        x = tensor(x)
        return _op(x, axis=_axis(axis), keepdims=keepdims, dtype=rule(_name(x)))

    return name_public(public, name, f"Keras 3's `keras.ops.{name}`{doc}.")


def _var_dtype(d: str) -> str:
    return config.floatx() if d in ("int64", "bool") or "int" in d else d


amax = _reduction("amax", jnp.max)
amin = _reduction("amin", jnp.min)
all = _reduction(  # noqa: A001 - Keras's public name
    "all", jnp.all, lambda d: "bool", differentiable=False
)
any = _reduction(  # noqa: A001 - Keras's public name
    "any", jnp.any, lambda d: "bool", differentiable=False
)
std = _reduction("std", jnp.std, _var_dtype, doc=": the population deviation")
var = _reduction("var", jnp.var, _var_dtype, doc=": the population variance")
logsumexp = _reduction(
    "logsumexp", jax.scipy.special.logsumexp, float_of, doc=": `log(sum(exp(x)))`"
)
nanmax = _reduction("nanmax", jnp.nanmax)
nanmin = _reduction("nanmin", jnp.nanmin)
nanmean = _reduction("nanmean", jnp.nanmean, _var_dtype)
nanstd = _reduction("nanstd", jnp.nanstd, _var_dtype)
nanvar = _reduction("nanvar", jnp.nanvar, _var_dtype)
nansum = _reduction("nansum", jnp.nansum, sum_dtype)
nanprod = _reduction("nanprod", jnp.nanprod, sum_dtype)
median = _reduction("median", jnp.median, _var_dtype)
nanmedian = _reduction("nanmedian", jnp.nanmedian, _var_dtype)
ptp = _reduction("ptp", jnp.ptp)


@body("max")
def _max(x, *, axis, keepdims, initial):
    return jnp.max(x, axis=axis, keepdims=keepdims, initial=initial)


def max(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    """Keras 3's `keras.ops.max`: the largest element (at least `initial`)."""
    return _max(tensor(x), axis=_axis(axis), keepdims=keepdims, initial=initial)


@body("min")
def _min(x, *, axis, keepdims, initial):
    return jnp.min(x, axis=axis, keepdims=keepdims, initial=initial)


def min(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    """Keras 3's `keras.ops.min`: the smallest element (at most `initial`)."""
    return _min(tensor(x), axis=_axis(axis), keepdims=keepdims, initial=initial)


@body("argmax", differentiable=False)
def _argmax(x, *, axis, keepdims, nan):
    f = jnp.nanargmax if nan else jnp.argmax
    return f(x, axis=axis, keepdims=keepdims).astype(jnp.int32)


def argmax(x, axis=None, keepdims=False):
    """Keras 3's `keras.ops.argmax`: int32 indices (flattened when `axis=None`)."""
    return _argmax(tensor(x), axis=_axis(axis), keepdims=keepdims, nan=False)


def nanargmax(x, axis=None, keepdims=False):
    """Keras 3's `keras.ops.nanargmax`: `argmax` ignoring NaNs."""
    return _argmax(tensor(x), axis=_axis(axis), keepdims=keepdims, nan=True)


@body("argmin", differentiable=False)
def _argmin(x, *, axis, keepdims, nan):
    f = jnp.nanargmin if nan else jnp.argmin
    return f(x, axis=axis, keepdims=keepdims).astype(jnp.int32)


def argmin(x, axis=None, keepdims=False):
    """Keras 3's `keras.ops.argmin`: int32 indices (flattened when `axis=None`)."""
    return _argmin(tensor(x), axis=_axis(axis), keepdims=keepdims, nan=False)


def nanargmin(x, axis=None, keepdims=False):
    """Keras 3's `keras.ops.nanargmin`: `argmin` ignoring NaNs."""
    return _argmin(tensor(x), axis=_axis(axis), keepdims=keepdims, nan=True)


@body("count_nonzero", differentiable=False)
def _count_nonzero(x, *, axis):
    return jnp.count_nonzero(x, axis=axis).astype(jnp.int32)


def count_nonzero(x, axis=None):
    """Keras 3's `keras.ops.count_nonzero`: an int32 count."""
    return _count_nonzero(tensor(x), axis=_axis(axis))


@body("cumsum")
def _cumsum(x, *, axis, dtype, nan, product):
    x = x.astype(dtype)
    if nan:
        x = jnp.where(jnp.isnan(x), 1 if product else 0, x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    f = jnp.cumprod if product else jnp.cumsum
    return f(x, axis=axis, dtype=dtype)


def _cum(x, axis, dtype, nan, product):
    x = tensor(x)
    d = _int32_if_bool(_name(x)) if dtype is None else dtype_arg(dtype)
    return _cumsum(x, axis=_axis(axis), dtype=d, nan=nan, product=product)


def cumsum(x, axis=None, dtype=None):
    """Keras 3's `keras.ops.cumsum` (flattened when `axis=None`)."""
    return _cum(x, axis, dtype, False, False)


def cumprod(x, axis=None, dtype=None):
    """Keras 3's `keras.ops.cumprod` (flattened when `axis=None`)."""
    return _cum(x, axis, dtype, False, True)


def nancumsum(x, axis=None, dtype=None):
    """Keras 3's `keras.ops.nancumsum`: `cumsum` treating NaN as 0."""
    return _cum(x, axis, dtype, True, False)


def nancumprod(x, axis=None, dtype=None):
    """Keras 3's `keras.ops.nancumprod`: `cumprod` treating NaN as 1."""
    return _cum(x, axis, dtype, True, True)


@body("quantile")
def _quantile(x, q, *, axis, method, keepdims, nan, dtype):
    f = jnp.nanquantile if nan else jnp.quantile
    return f(
        x.astype(dtype), q.astype(dtype), axis=axis, method=method, keepdims=keepdims
    )


def _quant(x, q, axis, method, keepdims, nan, scale):
    x = tensor(x)
    d = _var_dtype(_name(x))
    q = np.asarray(static(q) if type(q) is not Tensor else q.numpy(), d) / scale
    return _quantile(
        x, q, axis=_axis(axis), method=method, keepdims=keepdims, nan=nan, dtype=d
    )


def quantile(x, q, axis=None, method="linear", keepdims=False):
    """Keras 3's `keras.ops.quantile` (`q` in [0, 1])."""
    return _quant(x, q, axis, method, keepdims, False, 1.0)


def nanquantile(x, q, axis=None, method="linear", keepdims=False):
    """Keras 3's `keras.ops.nanquantile`: `quantile` ignoring NaNs."""
    return _quant(x, q, axis, method, keepdims, True, 1.0)


def percentile(x, q, axis=None, method="linear", keepdims=False):
    """Keras 3's `keras.ops.percentile` (`q` in [0, 100])."""
    return _quant(x, q, axis, method, keepdims, False, 100.0)


def nanpercentile(x, q, axis=None, method="linear", keepdims=False):
    """Keras 3's `keras.ops.nanpercentile`: `percentile` ignoring NaNs."""
    return _quant(x, q, axis, method, keepdims, True, 100.0)


@body("average")
def _average(x, w, *, axis, dtype):
    return jnp.average(x.astype(dtype), axis=axis, weights=w.astype(dtype))


def average(x, axis=None, weights=None):
    """Keras 3's `keras.ops.average`: the (weighted) mean along `axis`."""
    dts = [_dt(x)] + ([] if weights is None else [_dt(weights)])
    d = kd.result_type(*dts, float)
    if weights is None:
        return mean(cast(x, d), axis=axis)
    return _average(tensor(x, d), tensor(weights, d), axis=_axis(axis), dtype=d)


# -- creation --
@body("full", differentiable=False)
def _full_like(x, v, *, dtype):
    return jnp.full(x.shape, v, dtype)


def _fill(shape, value, dtype):
    arr = np.broadcast_to(np.asarray(value, kd.jnp_dtype(dtype)), shape_arg(shape))
    return Tensor(jnp.asarray(arr))


def zeros(shape, dtype=None):
    """Keras 3's `keras.ops.zeros` (`floatx()` by default)."""
    return _fill(shape, 0, dtype_arg(dtype))


def ones(shape, dtype=None):
    """Keras 3's `keras.ops.ones` (`floatx()` by default)."""
    return _fill(shape, 1, dtype_arg(dtype))


def empty(shape, dtype=None):
    """Keras 3's `keras.ops.empty`: zeros here (`floatx()` by default)."""
    return _fill(shape, 0, dtype_arg(dtype))


def full(shape, fill_value, dtype=None):
    """Keras 3's `keras.ops.full` (`floatx()` unless `dtype`)."""
    d = dtype_arg(dtype)
    if type(fill_value) is Tensor:
        return broadcast_to(cast(fill_value, d), shape)
    return _fill(shape, static(fill_value), d)


def _like(x, value, dtype):
    x = tensor(x)
    d = _name(x) if dtype is None else dtype_arg(dtype)
    return _full_like(x, np.asarray(value, kd.jnp_dtype(d)), dtype=d)


def zeros_like(x, dtype=None):
    """Keras 3's `keras.ops.zeros_like`."""
    return _like(x, 0, dtype)


def ones_like(x, dtype=None):
    """Keras 3's `keras.ops.ones_like`."""
    return _like(x, 1, dtype)


def empty_like(x, dtype=None):
    """Keras 3's `keras.ops.empty_like`: zeros here."""
    return _like(x, 0, dtype)


def full_like(x, fill_value, dtype=None):
    """Keras 3's `keras.ops.full_like`: the dtype of `x` unless `dtype`."""
    x = tensor(x)
    d = _name(x) if dtype is None else dtype_arg(dtype)
    return _full_like(x, tensor(fill_value, d), dtype=d)


def arange(start, stop=None, step=None, dtype=None):
    """Keras 3's `keras.ops.arange`: the promoted dtype of its bounds (int32)."""
    if dtype is None:
        parts = [_dt(v) for v in (start, stop, step) if v is not None]
        dtype = kd.result_type(*parts)
    if stop is None:
        start, stop = 0, start
    d = dtype_arg(dtype)
    args = [static(v) for v in (start, stop, 1 if step is None else step)]
    return Tensor(jnp.arange(*args, dtype=kd.jnp_dtype(d)))


def eye(N, M=None, k=0, dtype=None):
    """Keras 3's `keras.ops.eye` (`floatx()` by default)."""
    return Tensor(
        jnp.eye(static(N), static(M), static(k), kd.jnp_dtype(dtype_arg(dtype)))
    )


def identity(n, dtype=None):
    """Keras 3's `keras.ops.identity`: the `n` x `n` identity matrix."""
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    """Keras 3's `keras.ops.tri`: ones at and below diagonal `k`."""
    return Tensor(
        jnp.tri(static(N), static(M), static(k), kd.jnp_dtype(dtype_arg(dtype)))
    )


@body("linspace")
def _linspace(start, stop, *, num, endpoint, dtype, axis, space, base):
    if space == "lin":
        return jnp.linspace(start, stop, num, endpoint=endpoint, dtype=dtype, axis=axis)
    if space == "log":
        return jnp.logspace(
            start, stop, num, endpoint=endpoint, base=base, dtype=dtype, axis=axis
        )
    return jnp.geomspace(start, stop, num, endpoint=endpoint, dtype=dtype, axis=axis)


def _space(start, stop, num, endpoint, dtype, axis, space, base=10.0):
    if dtype is None:
        dtype = kd.result_type(_dt(start), _dt(stop), float)
    d = dtype_arg(dtype)
    compute = kd.result_type(d, float) if "int" in d else d
    out = _linspace(
        tensor(start, compute),
        tensor(stop, compute),
        num=int(num),
        endpoint=bool(endpoint),
        dtype=compute,
        axis=int(axis),
        space=space,
        base=float(base),
    )
    return out if compute == d else cast(out, d)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """Keras 3's `keras.ops.linspace` (`floatx()` unless the bounds say more)."""
    out = _space(start, stop, num, endpoint, dtype, axis, "lin")
    if retstep:
        n = num - 1 if endpoint else num
        return out, divide(subtract(stop, start), n)
    return out


def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    """Keras 3's `keras.ops.logspace`: `base ** linspace(start, stop)`."""
    return _space(start, stop, num, endpoint, dtype, axis, "log", base)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Keras 3's `keras.ops.geomspace`: a geometric progression."""
    return _space(start, stop, num, endpoint, dtype, axis, "geom")


def _window(fn):
    def public(x):
        return Tensor(jnp.asarray(fn(static(x)), kd.jnp_dtype(config.floatx())))

    return public


bartlett = name_public(
    _window(np.bartlett), "bartlett", "Keras 3's `keras.ops.bartlett` window (floatx)."
)
blackman = name_public(
    _window(np.blackman), "blackman", "Keras 3's `keras.ops.blackman` window (floatx)."
)
hamming = name_public(
    _window(np.hamming), "hamming", "Keras 3's `keras.ops.hamming` window (floatx)."
)
hanning = name_public(
    _window(np.hanning), "hanning", "Keras 3's `keras.ops.hanning` window (floatx)."
)


def kaiser(x, beta):
    """Keras 3's `keras.ops.kaiser` window (floatx)."""
    return Tensor(
        jnp.asarray(np.kaiser(static(x), static(beta)), kd.jnp_dtype(config.floatx()))
    )


# -- conversion --
@body("cast")
def _cast(x, *, dtype):
    return x.astype(dtype)


def cast(x, dtype):
    """Keras 3's `keras.ops.cast`: `x` converted to `dtype`."""
    d = dtype_arg(dtype)
    x = tensor(x)
    if type(x) is Tensor and x._v.dtype.name == d:
        return x
    return _cast(x, dtype=kd.jnp_dtype(d))


def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    """Keras 3's `keras.ops.convert_to_tensor`: a jaxtape Tensor of `x`.

    Python ints become int32 and floats `floatx()`; tensors and NumPy arrays
    keep their dtype unless `dtype` is given (then they are cast, as in Keras).
    """
    if sparse:
        raise NotImplementedError("convert_to_tensor: `sparse=True` is not supported.")
    if ragged:
        raise NotImplementedError("convert_to_tensor: `ragged=True` is not supported.")
    if dtype is not None:
        d = dtype_arg(dtype)
        if type(x) is Tensor or hasattr(x, "read_value"):
            return cast(x, d)
        return Tensor(jnp.asarray(tensor(x, d)))
    if type(x) is Tensor:
        return x
    if hasattr(x, "read_value"):
        return x.read_value()
    if type(x) is float or (
        isinstance(x, (list, tuple)) and kd.dtype_of(x) == "float32"
    ):
        return Tensor(jnp.asarray(tensor(x, config.floatx())))
    return Tensor(jnp.asarray(tensor(x)))


def array(x, dtype=None):
    """Keras 3's `keras.ops.array`: a tensor of `x`."""
    return convert_to_tensor(x, dtype)


@body("copy")
def _copy(x):
    return jnp.array(x, copy=True)


def copy(x):
    """Keras 3's `keras.ops.copy`."""
    return _copy(tensor(x))


# -- shapes --
@body("reshape")
def _reshape(x, *, shape):
    return jnp.reshape(x, shape)


def reshape(x, newshape):
    """Keras 3's `keras.ops.reshape` (`-1` infers one dimension)."""
    return _reshape(tensor(x), shape=shape_arg(newshape))


@body("transpose")
def _transpose(x, *, axes):
    return jnp.transpose(x, axes)


def transpose(x, axes=None):
    """Keras 3's `keras.ops.transpose` (reverses the axes by default)."""
    return _transpose(tensor(x), axes=static(axes))


@body("expand_dims")
def _expand_dims(x, *, axis):
    return jnp.expand_dims(x, axis)


def expand_dims(x, axis):
    """Keras 3's `keras.ops.expand_dims` (`axis` an int or a tuple)."""
    return _expand_dims(tensor(x), axis=static(axis))


@body("squeeze")
def _squeeze(x, *, axis):
    return jnp.squeeze(x, axis)


def squeeze(x, axis=None):
    """Keras 3's `keras.ops.squeeze`: drops size-1 axes."""
    x = tensor(x)
    axis = static(axis)
    if axis is not None:
        shape = np.shape(x)
        for a in (axis,) if isinstance(axis, int) else axis:
            if shape[a] != 1:
                raise ValueError(
                    f"Cannot squeeze axis {a}, because the dimension is not 1. "
                    f"Received: x.shape={tuple(shape)}, axis={axis}"
                )
    return _squeeze(x, axis=axis)


def _promote_all(xs):
    d = kd.result_type(*[_dt(x) for x in xs])
    return [tensor(x, d) for x in xs], d


@body("concatenate")
def _concatenate(*xs, axis, dtype):
    if axis is None:
        return jnp.concatenate([x.astype(dtype).reshape(-1) for x in xs])
    return jnp.concatenate([x.astype(dtype) for x in xs], axis=axis)


def concatenate(xs, axis: int | None = 0):
    """Keras 3's `keras.ops.concatenate`: inputs promoted to a common dtype."""
    xs, d = _promote_all(xs)
    return _concatenate(*xs, axis=static(axis), dtype=d)


@body("stack")
def _stack(*xs, axis, dtype, kind):
    xs = [x.astype(dtype) for x in xs]
    return {
        "stack": jnp.stack,
        "hstack": jnp.hstack,
        "vstack": jnp.vstack,
        "dstack": jnp.dstack,
    }[kind](xs, **({"axis": axis} if kind == "stack" else {}))


def stack(x, axis=0):
    """Keras 3's `keras.ops.stack`: inputs promoted to a common dtype."""
    xs, d = _promote_all(x)
    return _stack(*xs, axis=static(axis), dtype=d, kind="stack")


def hstack(xs):
    """Keras 3's `keras.ops.hstack`."""
    xs, d = _promote_all(xs)
    return _stack(*xs, axis=None, dtype=d, kind="hstack")


def vstack(xs):
    """Keras 3's `keras.ops.vstack`."""
    xs, d = _promote_all(xs)
    return _stack(*xs, axis=None, dtype=d, kind="vstack")


def dstack(xs):
    """Keras 3's `keras.ops.dstack`."""
    xs, d = _promote_all(xs)
    return _stack(*xs, axis=None, dtype=d, kind="dstack")


def append(x1, x2, axis=None):
    """Keras 3's `keras.ops.append`: `x2` after `x1` (flattened if `axis=None`)."""
    return concatenate([x1, x2], axis=axis)


@body("split")
def _split(x, *, indices_or_sections, axis, kind):
    f = {"split": jnp.split, "array_split": jnp.array_split}[kind]
    return list(f(x, indices_or_sections, axis=axis))


def split(x, indices_or_sections, axis=0):
    """Keras 3's `keras.ops.split`: a list of tensors."""
    return _split(
        tensor(x),
        indices_or_sections=static(indices_or_sections),
        axis=static(axis),
        kind="split",
    )


def array_split(x, indices_or_sections, axis=0):
    """Keras 3's `keras.ops.array_split`: like `split`, allowing uneven parts."""
    return _split(
        tensor(x),
        indices_or_sections=static(indices_or_sections),
        axis=static(axis),
        kind="array_split",
    )


def hsplit(x, indices_or_sections):
    """Keras 3's `keras.ops.hsplit`: `split` along axis 1 (0 for vectors)."""
    x = tensor(x)
    return split(x, indices_or_sections, axis=1 if np.ndim(x) > 1 else 0)


def vsplit(x, indices_or_sections):
    """Keras 3's `keras.ops.vsplit`: `split` along axis 0."""
    return split(x, indices_or_sections, axis=0)


def dsplit(x, indices_or_sections):
    """Keras 3's `keras.ops.dsplit`: `split` along axis 2."""
    return split(x, indices_or_sections, axis=2)


@body("take")
def _take(x, indices, *, axis):
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    n = x.shape[axis]
    indices = jnp.where(indices < 0, indices + n, indices)
    return jnp.take(x, indices, axis=axis, mode="clip")


def take(x, indices, axis=None):
    """Keras 3's `keras.ops.take`: elements at `indices` (negative ones wrap)."""
    return _take(tensor(x), _int_indices(indices), axis=static(axis))


def _int_indices(indices):
    ind = tensor(indices)
    if _name(ind) not in ("int32", "int64"):
        ind = cast(ind, "int32")
    return ind


@body("take_along_axis")
def _take_along_axis(x, indices, *, axis):
    if axis is None:
        x, axis = x.reshape(-1), 0
    n = x.shape[axis]
    indices = jnp.where(indices < 0, indices + n, indices)
    return jnp.take_along_axis(x, indices, axis=axis, mode="clip")


def take_along_axis(x, indices, axis=None):
    """Keras 3's `keras.ops.take_along_axis`."""
    return _take_along_axis(tensor(x), _int_indices(indices), axis=static(axis))


@body("where")
def _where(c, x1, x2, *, dtype):
    return jnp.where(c.astype(bool), x1.astype(dtype), x2.astype(dtype))


def where(condition, x1=None, x2=None):
    """Keras 3's `keras.ops.where`: `x1` where `condition`, else `x2`.

    With neither `x1` nor `x2`, the indices of the true elements (`nonzero`).
    """
    if x1 is None and x2 is None:
        return nonzero(condition)
    if x1 is None or x2 is None:
        raise ValueError(
            "`x1` and `x2` either both should be `None` or both should have "
            f"non-None value. Received: x1={x1}, x2={x2}"
        )
    d = kd.result_type(_dt(x1), _dt(x2))
    return _where(tensor(condition), tensor(x1, d), tensor(x2, d), dtype=d)


def nonzero(x):
    """Keras 3's `keras.ops.nonzero`: a tuple of int32 index tensors (eager only)."""
    arr = np.asarray(tensor(x))
    return tuple(Tensor(jnp.asarray(i, jnp.int32)) for i in np.nonzero(arr))


@body("tile")
def _tile(x, *, repeats):
    return jnp.tile(x, repeats)


def tile(x, repeats):
    """Keras 3's `keras.ops.tile`."""
    return _tile(tensor(x), repeats=static(repeats))


@body("repeat")
def _repeat(x, *, repeats, axis):
    return jnp.repeat(x, repeats, axis=axis)


def repeat(x, repeats, axis=None):
    """Keras 3's `keras.ops.repeat` (flattened when `axis=None`)."""
    return _repeat(tensor(x), repeats=static(repeats), axis=static(axis))


@body("broadcast_to")
def _broadcast_to(x, *, shape):
    return jnp.broadcast_to(x, shape)


def broadcast_to(x, shape):
    """Keras 3's `keras.ops.broadcast_to`."""
    return _broadcast_to(tensor(x), shape=shape_arg(shape))


@body("flip")
def _flip(x, *, axis):
    return jnp.flip(x, axis)


def flip(x, axis=None):
    """Keras 3's `keras.ops.flip` (all axes by default)."""
    return _flip(tensor(x), axis=static(axis))


def fliplr(x):
    """Keras 3's `keras.ops.fliplr`: flips axis 1."""
    return flip(x, 1)


def flipud(x):
    """Keras 3's `keras.ops.flipud`: flips axis 0."""
    return flip(x, 0)


@body("roll")
def _roll(x, *, shift, axis):
    return jnp.roll(x, shift, axis)


def roll(x, shift, axis=None):
    """Keras 3's `keras.ops.roll` (flattened when `axis=None`)."""
    return _roll(tensor(x), shift=static(shift), axis=static(axis))


@body("rot90")
def _rot90(x, *, k, axes):
    return jnp.rot90(x, k, axes)


def rot90(array, k=1, axes=(0, 1)):
    """Keras 3's `keras.ops.rot90`: rotates by 90 degrees `k` times."""
    return _rot90(tensor(array), k=int(k), axes=static(axes))


@body("moveaxis")
def _moveaxis(x, *, source, destination):
    return jnp.moveaxis(x, source, destination)


def moveaxis(x, source, destination):
    """Keras 3's `keras.ops.moveaxis`."""
    return _moveaxis(tensor(x), source=static(source), destination=static(destination))


@body("swapaxes")
def _swapaxes(x, *, axis1, axis2):
    return jnp.swapaxes(x, axis1, axis2)


def swapaxes(x, axis1, axis2):
    """Keras 3's `keras.ops.swapaxes`."""
    return _swapaxes(tensor(x), axis1=int(axis1), axis2=int(axis2))


def ravel(x):
    """Keras 3's `keras.ops.ravel`: `x` flattened."""
    return reshape(x, (-1,))


@body("pad")
def _pad(x, c, *, pad_width, mode):
    if mode == "constant":
        return jnp.pad(x, pad_width, mode, constant_values=c)
    return jnp.pad(x, pad_width, mode)


def pad(x, pad_width, mode="constant", constant_values=None):
    """Keras 3's `keras.ops.pad` (constant, reflect, symmetric, edge ...)."""
    x = tensor(x)
    if constant_values is not None and mode != "constant":
        raise ValueError(
            "Argument `constant_values` can only be provided when `mode == "
            f"'constant'`. Received: mode={mode}"
        )
    width = static(pad_width)
    if isinstance(width, int):
        width = ((width, width),) * np.ndim(x)
    c = tensor(0 if constant_values is None else constant_values, _name(x))
    return _pad(x, c, pad_width=width, mode=mode)


def _tri_body(name, fn):
    @body(name)
    def _op(x, *, k):
        return fn(x, k)

    def public(x, k=0):
        return _op(tensor(x), k=int(static(k)))

    return name_public(public, name, f"Keras 3's `keras.ops.{name}`.")


tril = _tri_body("tril", jnp.tril)
triu = _tri_body("triu", jnp.triu)
diag = _tri_body("diag", jnp.diag)
diagflat = _tri_body("diagflat", jnp.diagflat)


@body("diagonal")
def _diagonal(x, *, offset, axis1, axis2, trace):
    if trace:
        return jnp.trace(x, offset, axis1, axis2)
    return jnp.diagonal(x, offset, axis1, axis2)


def diagonal(x, offset=0, axis1=0, axis2=1):
    """Keras 3's `keras.ops.diagonal`."""
    return _diagonal(
        tensor(x), offset=int(offset), axis1=int(axis1), axis2=int(axis2), trace=False
    )


def trace(x, offset=0, axis1=0, axis2=1):
    """Keras 3's `keras.ops.trace`: the sum along a diagonal."""
    x = tensor(x)
    d = sum_dtype(_name(x))
    return _diagonal(
        cast(x, d), offset=int(offset), axis1=int(axis1), axis2=int(axis2), trace=True
    )


@body("diff")
def _diff(x, *, n, axis):
    return jnp.diff(x, n, axis)


def diff(a, n=1, axis=-1):
    """Keras 3's `keras.ops.diff`: the `n`-th discrete difference."""
    return _diff(tensor(a), n=int(n), axis=int(axis))


def meshgrid(*x, indexing="xy"):
    """Keras 3's `keras.ops.meshgrid`: coordinate tensors."""
    outs = _meshgrid(*[tensor(v) for v in x], indexing=indexing)
    return outs


@body("meshgrid")
def _meshgrid(*xs, indexing):
    return list(jnp.meshgrid(*xs, indexing=indexing))


def shape(x):
    """Keras 3's `keras.ops.shape`: the static shape as a tuple of ints."""
    return tuple(np.shape(tensor(x)))


def ndim(x):
    """Keras 3's `keras.ops.ndim`: the number of dimensions."""
    return len(shape(x))


def size(x):
    """Keras 3's `keras.ops.size`: the number of elements (an int32 tensor)."""
    return Tensor(jnp.asarray(int(np.prod(shape(x))), jnp.int32))


def get_item(x, key):
    """Keras 3's `keras.ops.get_item`: `x[key]`."""
    return convert_to_tensor(x)[key]


# -- sorting and searching --
@body("sort", differentiable=True)
def _sort(x, *, axis):
    return jnp.sort(x, axis=axis)


def sort(x, axis=-1):
    """Keras 3's `keras.ops.sort` (ascending)."""
    return _sort(tensor(x), axis=static(axis))


@body("argsort", differentiable=False)
def _argsort(x, *, axis):
    if axis is None:
        x, axis = x.reshape(-1), -1
    return jnp.argsort(x, axis=axis, stable=True).astype(jnp.int32)


def argsort(x, axis=-1):
    """Keras 3's `keras.ops.argsort`: int32 indices of a stable ascending sort."""
    return _argsort(tensor(x), axis=static(axis))


@body("argpartition", differentiable=False)
def _argpartition(x, *, kth, axis):
    return jnp.argpartition(x, kth, axis=axis).astype(jnp.int32)


def argpartition(x, kth, axis=-1):
    """Keras 3's `keras.ops.argpartition`: int32 indices partitioning at `kth`.

    Differences from Keras: the order within each side may differ.
    """
    return _argpartition(tensor(x), kth=int(kth), axis=int(axis))


@body("searchsorted", differentiable=False)
def _searchsorted(a, v, *, side):
    return jnp.searchsorted(a, v, side=side).astype(jnp.int32)


def searchsorted(sorted_sequence, values, side="left"):
    """Keras 3's `keras.ops.searchsorted`: int32 insertion indices (1-D)."""
    a = tensor(sorted_sequence)
    if np.ndim(a) != 1:
        raise ValueError(
            "`searchsorted` only supports 1-D sorted sequences. You can use "
            "`keras.ops.vectorized_map` to extend it to N-D sequences. Received: "
            f"sorted_sequence.shape={np.shape(a)}"
        )
    d = kd.result_type(_dt(a), _dt(values))
    return _searchsorted(cast(a, d), tensor(values, d), side=side)


@body("digitize", differentiable=False)
def _digitize(x, bins):
    return jnp.digitize(x, bins).astype(jnp.int32)


def digitize(x, bins):
    """Keras 3's `keras.ops.digitize`: int32 bin indices."""
    d = kd.result_type(_dt(x), _dt(bins))
    return _digitize(tensor(x, d), tensor(bins, d))


@body("isin", differentiable=False)
def _isin(x1, x2, *, invert):
    return jnp.isin(x1, x2, invert=invert)


def isin(x1, x2, assume_unique=False, invert=False):
    """Keras 3's `keras.ops.isin`: whether each element of `x1` is in `x2`."""
    del assume_unique  # a hint only; the result is the same
    d = kd.result_type(_dt(x1), _dt(x2))
    return _isin(tensor(x1, d), tensor(x2, d), invert=bool(invert))


def bincount(x, weights=None, minlength=0, sparse=False):
    """Keras 3's `keras.ops.bincount` of non-negative ints (last axis if 2-D)."""
    if sparse:
        raise NotImplementedError("bincount: `sparse=True` is not supported.")
    xs = np.asarray(tensor(x))
    length = builtins.max(int(minlength), int(xs.max()) + 1 if xs.size else 0)
    if weights is None:
        d = "int32"
        w = np.ones(xs.shape, np.int32)
    else:
        w = tensor(weights)
        d = _name(w)
        if d in ("int8", "int16", "int32", "uint8", "uint16", "uint32", "bool"):
            d = d if d in ("int32",) else "int32"
    return _bincount(tensor(x), tensor(w, d), length=length, dtype=d)


@body("bincount")
def _bincount(x, w, *, length, dtype):
    w = w.astype(dtype)
    if x.ndim == 1:
        return jnp.bincount(x, w, length=length)
    return jax.vmap(lambda a, b: jnp.bincount(a, b, length=length))(x, w)


def histogram(x, bins=10, range=None):  # noqa: A002 - Keras's argument name
    """Keras 3's `keras.ops.histogram`: `(counts, bin_edges)` of a 1-D tensor."""
    arr = np.asarray(tensor(x))
    if arr.ndim != 1:
        raise ValueError(
            f"Input tensor must be 1-dimensional. Received: input.shape={arr.shape}"
        )
    counts, edges = np.histogram(arr, bins=bins, range=range)
    return (
        Tensor(jnp.asarray(counts, arr.dtype)),
        Tensor(jnp.asarray(edges, arr.dtype)),
    )


def unique(
    x,
    sorted=True,
    return_index=False,
    return_inverse=False,  # noqa: A002
    return_counts=False,
    axis=None,
    size=None,
    fill_value=None,
):
    """Keras 3's `keras.ops.unique` (eager only: its size depends on values)."""
    if not sorted:
        raise NotImplementedError("unique: `sorted=False` is not supported.")
    if size is not None or fill_value is not None:
        raise NotImplementedError("unique: `size`/`fill_value` are not supported.")
    arr = np.asarray(tensor(x))
    res = np.unique(
        arr,
        return_index=return_index,
        return_inverse=return_inverse,
        return_counts=return_counts,
        axis=axis,
    )
    if not isinstance(res, tuple):
        return Tensor(jnp.asarray(res))
    first, *rest = res
    return (
        Tensor(jnp.asarray(first)),
        *[
            Tensor(jnp.asarray(r.reshape(-1) if axis is None else r, jnp.int32))
            for r in rest
        ],
    )


# -- products --
def _product(name, fn):
    @body(name)
    def _op(x1, x2, *, dtype, out):
        return fn(x1.astype(dtype), x2.astype(dtype)).astype(out)

    _op.__name__ = f"_{name}"

    def public(x1, x2):
        d = kd.result_type(_dt(x1), _dt(x2))
        out = "int32" if d in ("int8", "uint8", "int16", "bool") else d
        compute = out if d == "bool" else d
        return _op(tensor(x1, compute), tensor(x2, compute), dtype=compute, out=out)

    return name_public(
        public,
        name,
        f"Keras 3's `keras.ops.{name}` (NumPy's, promoted dtypes; "
        "int8 and bool give int32).",
    )


matmul = _product("matmul", jnp.matmul)
dot = _product("dot", jnp.dot)
inner = _product("inner", jnp.inner)
outer = _product("outer", jnp.outer)
vdot = _product("vdot", jnp.vdot)
kron = _product("kron", jnp.kron)


@body("tensordot")
def _tensordot(x1, x2, *, axes, dtype):
    return jnp.tensordot(x1.astype(dtype), x2.astype(dtype), axes)


def tensordot(x1, x2, axes=2):
    """Keras 3's `keras.ops.tensordot`."""
    d = kd.result_type(_dt(x1), _dt(x2))
    return _tensordot(tensor(x1, d), tensor(x2, d), axes=static(axes), dtype=d)


@body("einsum")
def _einsum(*xs, subscripts, dtype):
    return jnp.einsum(subscripts, *[x.astype(dtype) for x in xs])


def einsum(subscripts, *operands, **kwargs):
    """Keras 3's `keras.ops.einsum`: operands promoted to a common dtype."""
    if kwargs:
        raise NotImplementedError(
            f"einsum: arguments {sorted(kwargs)} are not supported."
        )
    xs, d = _promote_all(operands)
    out = _einsum(*xs, subscripts=subscripts, dtype=d)
    return out


@body("cross")
def _cross(x1, x2, *, axisa, axisb, axisc, axis, dtype):
    return jnp.cross(
        x1.astype(dtype),
        x2.astype(dtype),
        axisa=axisa,
        axisb=axisb,
        axisc=axisc,
        axis=axis,
    )


def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Keras 3's `keras.ops.cross`: the cross product of 3-vectors."""
    d = kd.result_type(_dt(x1), _dt(x2))
    return _cross(
        tensor(x1, d),
        tensor(x2, d),
        axisa=axisa,
        axisb=axisb,
        axisc=axisc,
        axis=axis,
        dtype=d,
    )


@body("correlate")
def _correlate(x1, x2, *, mode, dtype):
    return jnp.correlate(x1.astype(dtype), x2.astype(dtype), mode=mode)


def correlate(x1, x2, mode="valid"):
    """Keras 3's `keras.ops.correlate` of two 1-D tensors."""
    d = kd.result_type(_dt(x1), _dt(x2))
    d = config.floatx() if d == "int64" else kd.result_type(d, float)
    return _correlate(tensor(x1, d), tensor(x2, d), mode=mode, dtype=d)


@body("vander")
def _vander(x, *, N, increasing):
    return jnp.vander(x, N, increasing)


def vander(x, N=None, increasing=False):
    """Keras 3's `keras.ops.vander`: a Vandermonde matrix."""
    return _vander(tensor(x), N=static(N), increasing=bool(increasing))


@body("trapezoid")
def _trapezoid(y, *, dx, axis, dtype):
    return jnp.trapezoid(y.astype(dtype), dx=dx, axis=axis)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Keras 3's `keras.ops.trapezoid` integration rule.

    Differences from Keras: sample points `x` are not supported.
    """
    if x is not None:
        raise NotImplementedError("trapezoid: `x` is not supported; pass `dx`.")
    y = tensor(y)
    return _trapezoid(y, dx=float(dx), axis=int(axis), dtype=float_of(_name(y)))


@body("corrcoef")
def _corrcoef(x, *, dtype):
    return jnp.corrcoef(x.astype(dtype))


def corrcoef(x):
    """Keras 3's `keras.ops.corrcoef`: Pearson correlation coefficients."""
    x = tensor(x)
    return _corrcoef(x, dtype=float_of(_name(x)))


@body("select")
def _select(*xs, n, dtype):
    conds, choices, default = xs[:n], xs[n : 2 * n], xs[2 * n]
    return jnp.select(
        [c.astype(bool) for c in conds],
        [c.astype(dtype) for c in choices],
        default.astype(dtype),
    )


def select(condlist, choicelist, default=0):
    """Keras 3's `keras.ops.select`: the first matching choice per element."""
    d = kd.result_type(*[_dt(c) for c in choicelist], _dt(default))
    return _select(
        *[tensor(c) for c in condlist],
        *[tensor(c, d) for c in choicelist],
        tensor(default, d),
        n=len(condlist),
        dtype=d,
    )


@body("unravel_index", differentiable=False)
def _unravel_index(indices, *, shape):
    return list(jnp.unravel_index(indices, shape))


def unravel_index(indices, shape):
    """Keras 3's `keras.ops.unravel_index`: a tuple of index tensors."""
    return tuple(_unravel_index(tensor(indices), shape=shape_arg(shape)))


@body("view", differentiable=False)
def _view(x, *, dtype):
    return (
        jax.lax.bitcast_convert_type(x, dtype)
        if x.dtype.itemsize == jnp.dtype(dtype).itemsize
        else x.view(dtype)
    )


def view(x, dtype=None):
    """Keras 3's `keras.ops.view`: the same bytes read as `dtype`."""
    x = tensor(x)
    if dtype is None:
        return x
    return _view(x, dtype=kd.jnp_dtype(dtype_arg(dtype)))
