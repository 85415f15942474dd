"""More of `tf.math` (special functions, segment reductions, counting ops) as
pure jnp bodies behind `dispatch.op`. Layer L1: imports `core` and `ops` only.

Ops whose output size depends on values (`segment_sum`'s number of segments,
`bincount`'s length) read those values on the host in the public function and
pass the size to the body as a static param, as TF's kernels size their
outputs; inside `jaxtape.function` give the size (`num_segments`,
`minlength` = `maxlength`).

Differences from TensorFlow (all ops here): where TF's gradient is None for
one input of a multi-input op (the order `a` of `polygamma`, `a`/`b` of
`betainc`, `x` of `zeta`), jaxtape's is zeros.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np
from jax import lax

from jaxtape._src.core import checks, errors
from jaxtape._src.core.dispatch import _tf_name, op, to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops.math_ops import (
    K_FLOAT,
    K_INEXACT,
    K_NUMBER,
    K_REAL,
    _axis,
    _check,
    _reduction_axes,
    _scan_axis,
    _shift_in,
    add_n,
    kernels,
    multiply,
)

_FLOAT = K_FLOAT.text
K_F32_64 = kernels("float, double")


def _unary(
    name,
    fn,
    allowed=K_FLOAT,
    differentiable=True,
    doc=None,
    half=True,
    python=False,
    py_name=None,
):
    """A public element-wise op `fn(x)` with TF's dtype check: `half=False`
    where TF has no float16 CPU kernel (`NotFoundError`); `python=True` where
    TF's Python wrapper converts a float constant to the input's dtype first
    (a `TypeError` for integer and bool inputs)."""

    def body(x, name=None):
        if python and np.dtype(x.dtype).kind in "biu":
            raise TypeError(
                f"Cannot convert 0.5 to EagerTensor of dtype {np.dtype(x.dtype).name}:"
                f" {name_} takes a float input; cast it first."
            )
        if not half and x.dtype == np.float16:
            raise _no_half(name_)
        _check(name_, allowed, x)
        return fn(x)

    name_ = name
    body.__name__ = body.__qualname__ = py_name or _py_name(name)
    body.__doc__ = doc
    return op(name, differentiable=differentiable)(body)


def _no_half(op_name):
    return errors.NotFoundError(
        None,
        op_name,
        f"Could not find device for node: {op_name}[T=half]: TensorFlow has no "
        "float16 CPU kernel for it. Cast to float32 first.",
    )


def _py_name(tf_name):
    out = ""
    for i, c in enumerate(tf_name):
        if c.isupper() and i:
            out += "_"
        out += c.lower()
    return out


def _erfcinv(x):
    return -jss.ndtri(x / 2) / np.sqrt(2).astype(x.dtype)


def _log_sigmoid(x):
    return -jax.nn.softplus(-x)


# -- element-wise functions ---------------------------------------------------------
acosh = _unary(
    "Acosh", jnp.arccosh, K_INEXACT, doc="Returns `arccosh(x)` element-wise."
)
asinh = _unary(
    "Asinh", jnp.arcsinh, K_INEXACT, doc="Returns `arcsinh(x)` element-wise."
)
atanh = _unary(
    "Atanh", jnp.arctanh, K_INEXACT, doc="Returns `arctanh(x)` element-wise."
)
erfc = _unary("Erfc", lax.erfc, doc="Returns `1 - erf(x)` element-wise, accurately.")
erfinv = _unary(
    "Erfinv", lax.erf_inv, doc="Returns the inverse of `erf` element-wise.", half=False
)
ndtri = _unary(
    "Ndtri", jss.ndtri, doc="Returns the inverse of the normal CDF.", half=False
)
erfcinv = _unary(
    "Ndtri",  # (TF's erfcinv is ndtri of x / 2: its errors name Ndtri)
    _erfcinv,
    doc="Returns the inverse of `erfc`.",
    half=False,
    python=True,
    py_name="erfcinv",
)
digamma = _unary("Digamma", jss.digamma, doc="Returns `d/dx log(gamma(x))`.")
log_sigmoid = _unary(
    "LogSigmoid", _log_sigmoid, doc="Returns `log(sigmoid(x))` = `-softplus(-x)`."
)
bessel_i0 = _unary("BesselI0", jss.i0, doc="Modified Bessel function I0.")
bessel_i0e = _unary("BesselI0e", jss.i0e, doc="Exponentially scaled I0.")
bessel_i1 = _unary("BesselI1", jss.i1, doc="Modified Bessel function I1.")
bessel_i1e = _unary("BesselI1e", jss.i1e, doc="Exponentially scaled I1.")
dawsn = _unary("Dawsn", jss.dawsn, doc="Dawson's integral.")
expint = _unary("Expint", jss.expi, doc="The exponential integral Ei(x).")
spence = _unary("Spence", jss.spence, doc="Spence's function (the dilogarithm).")


def _fresnel_sin(x):
    return jss.fresnel(x)[0]


def _fresnel_cos(x):
    return jss.fresnel(x)[1]


fresnel_sin = _unary("FresnelSin", _fresnel_sin, doc="Fresnel's sine integral S(x).")
fresnel_cos = _unary("FresnelCos", _fresnel_cos, doc="Fresnel's cosine integral C(x).")


def _bessel_k(nu, scaled):
    """`K_nu(x)` (times `e^x` when `scaled`) as the trapezoid rule on
    `int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt` (an even integrand decaying
    double-exponentially: the rule is exact to rounding), `t` scaled by
    `min(1, 2 / sqrt(x))` to follow the peak's width."""

    def k(x):
        dt = x.dtype
        xs = jnp.where(x > 0, x, 1)[..., None]
        s = jnp.minimum(1.0, 2 / jnp.sqrt(xs)).astype(dt)
        u = jnp.arange(0.0, 30.0, 0.125, dtype=dt)
        w = jnp.where(u == 0, 0.5, 1.0).astype(dt) * 0.125
        t = s * u
        f = jnp.exp(-xs * (2 * jnp.sinh(t / 2) ** 2)) * jnp.cosh(nu * t)
        out = jnp.sum(f * w, -1) * s[..., 0]
        if not scaled:
            out = out * jnp.exp(-xs[..., 0])
        out = jnp.where(x == 0, jnp.inf, out)
        return jnp.where(x < 0, jnp.nan, out)

    return k


def _bessel_j(n):
    """`J_n(x)` (n = 0, 1): Bessel's integral `(1/pi) int_0^pi cos(n t - x sin t) dt`
    by the trapezoid rule (a periodic even integrand: exact to rounding) for
    |x| <= 25, Hankel's asymptotic expansion beyond."""

    def j(x):
        dt = x.dtype
        ax = jnp.abs(x)
        xs = jnp.where(ax <= 25, ax, 1)[..., None]
        th = jnp.linspace(0.0, np.pi, 97, dtype=dt)
        w = jnp.where((th == 0) | (th == th[-1]), 0.5, 1.0).astype(dt) / 96
        small = jnp.sum(jnp.cos(n * th - xs * jnp.sin(th)) * w, -1)
        big = _hankel(n, jnp.where(ax > 25, ax, 30), first_kind=True)
        out = jnp.where(ax > 25, big, small)
        return out * jnp.sign(x) if n % 2 else out

    return j


def _hankel(n, x, first_kind):
    """Hankel's expansion of `J_n` or `Y_n` at large `x` (13 terms)."""
    mu = 4.0 * n * n
    z = 8.0 * x
    p, q, term = 1.0, 0.0, 1.0
    for k in range(1, 14):
        term = term * (mu - (2 * k - 1) ** 2) / (k * z)
        sign = (-1) ** (k // 2)
        if k % 2:
            q = q + sign * term
        else:
            p = p + sign * term
    chi = x - (n / 2 + 0.25) * np.pi
    if first_kind:
        return jnp.sqrt(2 / (np.pi * x)) * (p * jnp.cos(chi) - q * jnp.sin(chi))
    return jnp.sqrt(2 / (np.pi * x)) * (p * jnp.sin(chi) + q * jnp.cos(chi))


bessel_k0 = _unary("BesselK0", _bessel_k(0, False), doc="Modified Bessel K0.")
bessel_k0e = _unary("BesselK0e", _bessel_k(0, True), doc="Exponentially scaled K0.")
bessel_k1 = _unary("BesselK1", _bessel_k(1, False), doc="Modified Bessel K1.")
bessel_k1e = _unary("BesselK1e", _bessel_k(1, True), doc="Exponentially scaled K1.")
bessel_j0 = _unary(
    "BesselJ0", _bessel_j(0), doc="Bessel function of the first kind J0."
)
bessel_j1 = _unary(
    "BesselJ1", _bessel_j(1), doc="Bessel function of the first kind J1."
)


@op("Rint", differentiable=False)
def rint(x, name=None):
    """Rounds to the nearest integer, halves to even (no gradient)."""
    if x.dtype == np.float16:
        raise _no_half("Rint")
    _check("Rint", K_FLOAT, x)
    return jnp.round(x)


@op("ReciprocalNoNan", jit=True)
def reciprocal_no_nan(x, name=None):
    """Returns `1 / x`, or 0 where `x` is 0."""
    if np.dtype(x.dtype) == np.bool_:  # (TF's wrapper converts a 1 first)
        raise TypeError(
            "Cannot convert 1 to EagerTensor of dtype bool: reciprocal_no_nan "
            "takes a float or complex input; cast it first."
        )
    _check("ReciprocalNoNan", K_INEXACT, x)
    zero = x == 0
    return jnp.where(zero, jnp.zeros_like(x), 1 / jnp.where(zero, jnp.ones_like(x), x))


@jax.custom_jvp
def _mul_no_nan(x, y):
    prod = jnp.multiply(x, y)
    return jnp.where(jnp.broadcast_to(y == 0, prod.shape), jnp.zeros_like(prod), prod)


@_mul_no_nan.defjvp
def _mul_no_nan_jvp(primals, tangents):
    # TF's gradient: mul_no_nan(grad, y) for x, x * grad for y (inf * grad at
    # y == 0 stays inf).
    x, y = primals
    tx, ty = tangents
    return _mul_no_nan(x, y), _mul_no_nan(tx, y) + x * ty


@op("MulNoNan", same_dtype=True, jit=True)
def multiply_no_nan(x, y, name=None):
    """Returns `x * y`, or 0 where `y` is 0 (even where `x` is NaN or inf)."""
    _check("MulNoNan", K_INEXACT, x, y)
    x, y = jnp.asarray(x), jnp.asarray(y)
    return _mul_no_nan(x, y)


@op("Xlog1py", same_dtype=True, jit=True)
def xlog1py(x, y, name=None):
    """Returns 0 where `x == 0`, else `x * log1p(y)`."""
    _check("Xlog1py", K_INEXACT, x, y)
    zero = jnp.broadcast_arrays(x == 0, y)[0]
    safe = jnp.where(zero, 0, y)
    return jnp.where(zero, jnp.zeros_like(x * safe), x * jnp.log1p(safe))


@op("NextAfter", same_dtype=True)
def nextafter(x1, x2, name=None):
    """The next representable value after `x1` towards `x2`; as TF's gradient,
    the incoming gradient passes to `x1` unchanged and `x2` gets zeros."""
    _check("NextAfter", K_F32_64, x1, x2)
    return _nextafter(x1, x2)


@jax.custom_jvp
def _nextafter(x1, x2):
    return jnp.nextafter(x1, x2)


@_nextafter.defjvp
def _nextafter_jvp(primals, tangents):
    x1, x2 = primals
    out = jnp.nextafter(x1, x2)
    return out, jnp.broadcast_to(tangents[0], out.shape).astype(out.dtype)


@op("Zeta", same_dtype=True)
def zeta(x, q, name=None):
    """The Hurwitz zeta function `sum_n (n + q) ** -x`."""
    _check("Zeta", K_F32_64, x, q)
    return jss.zeta(lax.stop_gradient(x), q)


@op("Polygamma", same_dtype=True)
def polygamma(a, x, name=None):
    """The polygamma function of order `a` (a float holding an integer)."""
    _check("Polygamma", K_F32_64, a, x)
    a, x = jnp.broadcast_arrays(lax.stop_gradient(a), x)
    ok = (a == jnp.floor(a)) & (a >= 0)
    n = jnp.where(a >= 1, a, 1)
    # psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1
    sign = jnp.where(jnp.mod(n, 2) == 0, -1, 1).astype(x.dtype)
    higher = sign * jnp.exp(lax.lgamma(n + 1)) * jss.zeta(n + 1, x)
    out = jnp.where(a == 0, jss.digamma(x), higher)
    # NaN where `a` is no order, with a NaN gradient there, as TF's
    bad = jnp.where(ok, jnp.zeros_like(x), jnp.full_like(x, jnp.nan))
    return out + bad * (x - lax.stop_gradient(x)) + bad


@op("Igamma", same_dtype=True)
def igamma(a, x, name=None):
    """The regularized lower incomplete gamma function `P(a, x)`."""
    _check("Igamma", K_F32_64, a, x)
    return jss.gammainc(a, x)


@op("Igammac", same_dtype=True)
def igammac(a, x, name=None):
    """The regularized upper incomplete gamma function `Q(a, x)`."""
    _check("Igammac", K_F32_64, a, x)
    return jss.gammaincc(a, x)


@op("Betainc", same_dtype=True)
def betainc(a, b, x, name=None):
    """The regularized incomplete beta function `I_x(a, b)` (gradient for `x`)."""
    _check("Betainc", K_F32_64, a, x)
    _check("Betainc", K_F32_64, b, x)
    a, b = lax.stop_gradient(a), lax.stop_gradient(b)
    return jss.betainc(a, b, x)


@op("Lbeta")
def lbeta(x, name=None):
    """`log(|Beta(x)|)` over the last dimension: `sum(lgamma(x)) - lgamma(sum(x))`."""
    _check("Lbeta", K_FLOAT, x)
    if x.ndim == 0:
        raise ValueError(
            "lbeta needs an input of rank >= 1 (the last axis is reduced)."
        )
    return jnp.sum(lax.lgamma(x), -1) - lax.lgamma(jnp.sum(x, -1))


@op("Angle")
def angle(input, name=None):  # noqa: A002
    """The argument of complex numbers; for reals `pi` where negative, else 0."""
    if jnp.iscomplexobj(input):
        return jnp.angle(input)
    _check("Angle", K_FLOAT, input)
    return jnp.where(input < 0, jnp.asarray(np.pi, input.dtype), jnp.zeros_like(input))


# -- reductions and scans -----------------------------------------------------------
@op("CountNonzero", inputs=("x",), differentiable=False)
def _count_nonzero(x, axis, keepdims, dtype):
    return jnp.sum(x != 0, axis=axis, keepdims=keepdims).astype(dtype)


def count_nonzero(input, axis=None, keepdims=None, dtype=np.int64, name=None):  # noqa: A002
    """Counts the non-zero elements over `axis` (as `dtype`, int64 by default)."""
    from jaxtape._src.core import dtypes

    x = to_value(input)
    axis = _reduction_axes(x, axis, "CountNonzero")
    return _count_nonzero(
        input, axis, bool(keepdims), np.dtype(dtypes.np_dtype(dtypes.as_dtype(dtype)))
    )


@op("EuclideanNorm", inputs=("x",))
def _euclidean_norm(x, axis, keepdims):
    _check("EuclideanNorm", K_NUMBER, x)
    if np.dtype(x.dtype).kind in "iu":
        s = jnp.sum(x.astype(np.float64) ** 2, axis=axis, keepdims=keepdims)
        return jnp.sqrt(s).astype(x.dtype)
    sq = x * jnp.conj(x) if jnp.iscomplexobj(x) else x * x
    return jnp.sqrt(jnp.sum(sq, axis=axis, keepdims=keepdims))


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """`sqrt(sum(x * conj(x)))` over `axis`."""
    x = to_value(input_tensor)
    axis = _reduction_axes(x, axis, "EuclideanNorm")
    return _euclidean_norm(input_tensor, axis, bool(keepdims))


@op("CumulativeLogsumexp")
def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """`log(cumsum(exp(x)))` along `axis`, stably, with `exclusive`/`reverse`."""
    _check("CumulativeLogsumexp", K_FLOAT, x)
    axis = _scan_axis(x, _axis(axis), "CumulativeLogsumexp")
    if reverse:
        x = jnp.flip(x, axis)
    if exclusive:
        x = _shift_in(x, axis, -jnp.inf)
    out = lax.cumlogsumexp(x, axis=axis % x.ndim)
    return jnp.flip(out, axis) if reverse else out


def scalar_mul(scalar, x, name=None):
    """Multiplies the tensor `x` by a scalar (TF's `scalar_mul`)."""
    if np.ndim(to_value(scalar)) != 0:
        raise ValueError(
            f"Only scalar multiply works, got shape {list(np.shape(to_value(scalar)))}."
        )
    return multiply(scalar, x)


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """Sums a list of tensors of one shape and dtype (TF's `add_n`)."""
    return add_n(inputs)


@op("InvertPermutation", differentiable=False, check=None)
def invert_permutation(x, name=None):
    """The inverse of the permutation `x` (a vector of int32/int64)."""
    if np.dtype(x.dtype) not in (np.int32, np.int64):
        raise errors.invalid_argument(
            f"Value for attr 'T' of {_tf_name(x.dtype)} is not in the list of "
            "allowed values: int32, int64.",
            "InvertPermutation",
        )
    if x.ndim != 1:
        raise errors.invalid_argument(
            f"invert_permutation expects a 1D vector; got shape {list(x.shape)}.",
            "InvertPermutation",
        )
    return jnp.zeros_like(x).at[x].set(jnp.arange(x.shape[0], dtype=x.dtype))


@op("IsNonDecreasing", differentiable=False)
def is_non_decreasing(x, name=None):
    """True when every element is >= the one before it (flattened)."""
    _check("IsNonDecreasing", K_REAL, x)
    x = jnp.ravel(x)
    return jnp.all(x[1:] >= x[:-1])


@op("IsStrictlyIncreasing", differentiable=False)
def is_strictly_increasing(x, name=None):
    """True when every element is > the one before it (flattened)."""
    _check("IsStrictlyIncreasing", K_REAL, x)
    x = jnp.ravel(x)
    return jnp.all(x[1:] > x[:-1])


@op("ZeroFraction", differentiable=False)
def zero_fraction(value, name=None):
    """The fraction of zeros in `value`, as a float32 scalar."""
    return jnp.mean((value == 0).astype(np.float32)).astype(np.float32)


def polyval(coeffs, x, name=None):
    """`coeffs[0] * x**(n-1) + ... + coeffs[n-1]` by Horner's rule."""
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError(
            f"Argument coeffs must be list type found {type(coeffs)}. Pass the "
            "coefficients as a Python list of tensors."
        )
    if not coeffs:
        from jaxtape._src.ops.nondiff import zeros_like

        return zeros_like(x)
    out = coeffs[0]
    for c in coeffs[1:]:
        out = multiply(out, x) + c
    return out if isinstance(out, Tensor) else multiply(out, 1)


@op("InTopKV2", inputs=("predictions", "targets"), differentiable=False)
def _in_top_k(predictions, targets, k):
    targets = targets.astype(np.int64)
    target = jnp.take_along_axis(
        predictions, jnp.clip(targets, 0, predictions.shape[1] - 1)[:, None], 1
    )
    larger = jnp.sum(predictions > target, axis=1)
    # TF's kernel cannot say for a row with a non-finite prediction: False
    finite = jnp.all(jnp.isfinite(predictions), axis=1) & (targets >= 0)
    finite &= targets < predictions.shape[1]
    return (larger < k) & finite


def in_top_k(targets, predictions, k, name=None):
    """Whether each `targets[i]` is among the top `k` of `predictions[i]`
    (ties at the boundary count as in, as TF)."""
    p, t = to_value(predictions), to_value(targets)
    if np.ndim(p) != 2 or np.ndim(t) != 1:
        raise errors.invalid_argument(
            f"predictions must be 2-dimensional and targets 1-dimensional; got "
            f"shapes {list(np.shape(p))} and {list(np.shape(t))}.",
            "InTopKV2",
        )
    if np.shape(p)[0] != np.shape(t)[0]:
        raise errors.invalid_argument(
            "First dimension of predictions "
            f"{np.shape(p)[0]} must match length of targets {np.shape(t)[0]}",
            "InTopKV2",
        )
    return _in_top_k(predictions, targets, int(to_value(k)))


# -- counting ---------------------------------------------------------------------
def _host(x, op_name, what):
    """A value on the host for an output size; inside a trace, TF's size needs
    a static argument."""
    try:
        return checks.host(to_value(x))
    except jax.errors.ConcretizationTypeError:
        raise NotImplementedError(
            f"{op_name}: {what} decides the output's shape; inside "
            "jaxtape.function give the size as a static argument."
        ) from None
    except jax.errors.TracerArrayConversionError:
        raise NotImplementedError(
            f"{op_name}: {what} decides the output's shape; inside "
            "jaxtape.function give the size as a static argument."
        ) from None


@op("DenseBincount", inputs=("arr", "weights"), differentiable=False)
def _bincount(arr, weights, length, dtype, binary_output, axis):
    if axis == -1 and arr.ndim == 2:
        rows = jnp.arange(arr.shape[0])[:, None]
        shape = (arr.shape[0], length)
        ok = (arr >= 0) & (arr < length)
        idx = jnp.where(ok, arr, length)
        if binary_output:
            out = jnp.zeros(shape, dtype).at[rows, idx].set(1, mode="drop")
            return out
        w = jnp.ones(arr.shape, dtype) if weights is None else weights.astype(dtype)
        return jnp.zeros(shape, dtype).at[rows, idx].add(w, mode="drop")
    flat = jnp.ravel(arr)
    ok = (flat >= 0) & (flat < length)
    idx = jnp.where(ok, flat, length)
    if binary_output:
        return jnp.zeros((length,), dtype).at[idx].set(1, mode="drop")
    w = (
        jnp.ones(flat.shape, dtype)
        if weights is None
        else jnp.ravel(weights).astype(dtype)
    )
    return jnp.zeros((length,), dtype).at[idx].add(w, mode="drop")


def bincount(
    arr,
    weights=None,
    minlength=None,
    maxlength=None,
    dtype=np.int32,
    name=None,
    axis=None,
    binary_output=False,
):
    """Counts the occurrences of each value in the int array `arr`.

    The output's length is `max(arr) + 1` (at least `minlength`, at most
    `maxlength`); values outside it are ignored. With `weights`, sums them
    instead of counting (the output takes their dtype). `axis=-1` counts each
    row of a 2-D `arr`.
    """
    from jaxtape._src.core import dtypes

    a = to_value(arr)
    if np.dtype(a.dtype).kind not in "iu":
        raise errors.invalid_argument(
            f"bincount's arr must be an integer tensor; got {_tf_name(a.dtype)}.",
            "DenseBincount",
        )
    if axis not in (None, 0, -1):
        raise errors.invalid_argument(
            f"Unsupported axis value {axis}: bincount takes axis=None, 0 or -1.",
            "DenseBincount",
        )
    if axis == -1 and np.ndim(a) != 2:
        raise errors.invalid_argument(
            "bincount with axis=-1 needs a 2-D `arr`.", "DenseBincount"
        )
    if weights is not None:
        w = to_value(weights)
        if np.shape(w) != np.shape(a):
            raise errors.invalid_argument(
                f"`weights` must be the same shape as `arr`: {list(np.shape(w))} vs. "
                f"{list(np.shape(a))}.",
                "DenseBincount",
            )
        out_dtype = np.dtype(w.dtype)
    else:
        out_dtype = np.dtype(dtypes.np_dtype(dtypes.as_dtype(dtype)))
    if (
        minlength is not None
        and maxlength is not None
        and int(minlength) == int(maxlength)
    ):
        length = int(minlength)
    else:
        host = _host(a, "bincount", "the largest value of `arr`")
        if host.size and host.min() < 0:
            raise errors.invalid_argument(
                f"Input arr must be non-negative! Got {host.min()}.", "DenseBincount"
            )
        length = int(host.max()) + 1 if host.size else 0
        if minlength is not None:
            length = max(length, int(minlength))
        if maxlength is not None:
            length = min(length, int(maxlength))
    return _bincount(
        arr,
        weights,
        length,
        out_dtype,
        bool(binary_output),
        -1 if axis == -1 else None,
    )


@op(
    "ConfusionMatrix", inputs=("labels", "predictions", "weights"), differentiable=False
)
def _confusion_matrix(labels, predictions, weights, num_classes, dtype):
    w = jnp.ones(labels.shape, dtype) if weights is None else weights.astype(dtype)
    return (
        jnp.zeros((num_classes, num_classes), dtype)
        .at[labels.astype(np.int64), predictions.astype(np.int64)]
        .add(w, mode="drop")
    )


def confusion_matrix(
    labels, predictions, num_classes=None, weights=None, dtype=np.int32, name=None
):
    """The `[num_classes, num_classes]` matrix counting (label, prediction) pairs
    (rows are labels), weighted by `weights`."""
    from jaxtape._src.core import dtypes

    lab, pred = to_value(labels), to_value(predictions)
    if np.shape(lab) != np.shape(pred):
        raise ValueError(
            f"labels and predictions must have the same shape; got "
            f"{list(np.shape(lab))} and {list(np.shape(pred))}."
        )
    host_l = _host(lab, "confusion_matrix", "labels")
    host_p = _host(pred, "confusion_matrix", "predictions")
    if (host_l.size and host_l.min() < 0) or (host_p.size and host_p.min() < 0):
        raise errors.invalid_argument(
            "`labels` and `predictions` must be non-negative.", "ConfusionMatrix"
        )
    if num_classes is None:
        num_classes = int(max(host_l.max(initial=-1), host_p.max(initial=-1))) + 1
    else:
        num_classes = int(to_value(num_classes))
        if (host_l.size and host_l.max() >= num_classes) or (
            host_p.size and host_p.max() >= num_classes
        ):
            raise errors.invalid_argument(
                f"`labels` and `predictions` must be less than num_classes "
                f"({num_classes}).",
                "ConfusionMatrix",
            )
    out_dtype = np.dtype(dtypes.np_dtype(dtypes.as_dtype(dtype)))
    return _confusion_matrix(labels, predictions, weights, num_classes, out_dtype)


# -- segment reductions -------------------------------------------------------------
_SEGMENT_KINDS = ("sum", "mean", "max", "min", "prod", "sqrt_n")


def _segment_body(kind, data, ids, num, sorted_):
    """The segment reduction `kind` of `data` over `ids` into `num` segments.

    Empty segments: 0 for sum/mean/sqrt_n, 1 for prod, and for max/min 0
    (the sorted ops) or the dtype's lowest/highest value (the unsorted ones),
    as TF. Negative ids (unsorted ops) drop their rows. Max/min gradients go
    to the tied entries, split equally, as TF's.
    """
    ids = ids.astype(np.int32) if ids.dtype != np.int64 else ids
    extra = data.ndim - ids.ndim
    flat_ids = ids.reshape(-1)
    flat = data.reshape((-1,) + data.shape[ids.ndim :])
    valid = (flat_ids >= 0) & (flat_ids < num)
    seg = jnp.where(valid, flat_ids, num)  # num: dropped
    shape = (num,) + flat.shape[1:]
    bshape = (-1,) + (1,) * extra
    if kind in ("sum", "mean", "sqrt_n"):
        total = jnp.zeros(shape, data.dtype).at[seg].add(flat, mode="drop")
        if kind == "sum":
            return total
        count = jnp.zeros((num,), data.dtype).at[seg].add(1, mode="drop")
        count = count.reshape(bshape)
        denom = count if kind == "mean" else jnp.sqrt(count)
        if np.dtype(data.dtype).kind in "iu":  # C's division, as TF's kernel
            return lax.div(total, jnp.broadcast_to(jnp.maximum(denom, 1), total.shape))
        return total / jnp.where(count == 0, 1, denom)
    if kind == "prod":  # (a dense [num, rows] product: scatter-multiply has no
        # gradient for repeated ids in JAX)
        hit = seg[None, :] == jnp.arange(num, dtype=seg.dtype)[:, None]
        hit = hit.reshape(hit.shape + (1,) * extra)
        return jnp.prod(
            jnp.where(hit, flat[None], jnp.ones_like(flat[None])),
            axis=1,
            dtype=data.dtype,
        )
    big = kind == "max"
    init = _lowest(data.dtype) if big else _highest(data.dtype)
    start = jnp.full(shape, init, data.dtype)
    stopped = lax.stop_gradient(flat)
    best = (start.at[seg].max if big else start.at[seg].min)(stopped, mode="drop")
    if np.dtype(data.dtype).kind in "fc" or data.dtype == jnp.bfloat16:
        picked = jnp.take(best, jnp.minimum(seg, num - 1), axis=0) if num else flat
        tie = (flat == picked) & valid.reshape(bshape)
        ties = (
            jnp.zeros(shape, data.dtype)
            .at[seg]
            .add(tie.astype(data.dtype), mode="drop")
        )
        share = tie.astype(data.dtype) / jnp.take(
            jnp.maximum(ties, 1), jnp.minimum(seg, num - 1), axis=0
        )
        delta = (
            jnp.zeros(shape, data.dtype)
            .at[seg]
            .add((flat - stopped) * lax.stop_gradient(share), mode="drop")
        )
        best = best + delta
    if sorted_:
        count = jnp.zeros((num,), np.int32).at[seg].add(1, mode="drop").reshape(bshape)
        best = jnp.where(count == 0, jnp.zeros_like(best), best)
    return best


def _lowest(dtype):
    """TF's empty-segment max: the lowest finite value of the dtype."""
    dt = np.dtype(dtype)
    return np.iinfo(dt).min if dt.kind in "iu" else jnp.finfo(dt).min


def _highest(dtype):
    dt = np.dtype(dtype)
    return np.iinfo(dt).max if dt.kind in "iu" else jnp.finfo(dt).max


def _check_segment_ids(xp, data, segment_ids, kind, num, sorted_):
    """TF's check of unsorted segment ids: each below `num_segments` (negative
    ids are dropped; sorted ones decide the number of segments)."""
    if sorted_:
        return
    ids = checks.host(segment_ids) if xp is np else segment_ids
    # mean and sqrt_n are TF sums underneath: its message names that op.
    tf_kind = kind if kind in ("max", "min", "prod") else "sum"
    checks.require(
        xp,
        ids >= num,
        "UnsortedSegment" + tf_kind.capitalize(),
        f"segment_ids{checks.index_text(ids.ndim)} = {{}} is out of range [0, {num})",
        *checks.position(ids.shape),
        lambda xp, p: xp.reshape(ids, (-1,))[p],
    )


@op("Segment", inputs=("data", "segment_ids"), check=_check_segment_ids)
def _segment(data, segment_ids, kind, num, sorted_):
    return _segment_body(kind, data, segment_ids, num, sorted_)


_SEG_DTYPES = {
    "sum": K_NUMBER,
    "mean": K_NUMBER,
    "prod": K_NUMBER,
    "sqrt_n": K_INEXACT,
    "max": K_REAL,
    "min": K_REAL,
}


def _segment_args(data, segment_ids, op_name, kind, need_rank1):
    d, ids = to_value(data), to_value(segment_ids)
    if np.dtype(ids.dtype) not in (np.int32, np.int64, np.int16):
        raise errors.invalid_argument(
            f"Value for attr 'Tindices' of {_tf_name(ids.dtype)} is not in the list "
            "of allowed values: int32, int64. Segment ids are integers.",
            op_name,
        )
    _check(op_name, _SEG_DTYPES[kind], d)
    if need_rank1 and np.ndim(ids) != 1:
        raise errors.invalid_argument(
            f"segment_ids should be a vector; got shape {list(np.shape(ids))}.",
            op_name,
        )
    if np.shape(d)[: np.ndim(ids)] != np.shape(ids):
        raise errors.invalid_argument(
            f"data.shape = {list(np.shape(d))} does not start with segment_ids.shape "
            f"= {list(np.shape(ids))}.",
            op_name,
        )
    return d, ids


def _sorted_segment(kind):
    op_name = "Segment" + "".join(p.capitalize() for p in kind.split("_"))

    def segment(data, segment_ids, name=None):
        d, ids = _segment_args(data, segment_ids, op_name, kind, True)
        host = _host(ids, f"segment_{kind}", "segment_ids")
        if host.size and (host.min() < 0):
            raise errors.invalid_argument(
                f"segment ids must be >= 0; got {host.min()}.", op_name
            )
        if host.size > 1 and np.any(np.diff(host) < 0):
            raise errors.invalid_argument(
                "segment ids are not increasing: sort them, or use "
                f"`unsorted_segment_{kind}`.",
                op_name,
            )
        num = int(host.max()) + 1 if host.size else 0
        return _segment(data, segment_ids, kind, num, True)

    segment.__name__ = segment.__qualname__ = f"segment_{kind}"
    segment.__doc__ = (
        f"The {kind} of each segment of `data`'s rows; `segment_ids` sorted, "
        "its largest value + 1 segments (empty ones are 0, as TF)."
    )
    return segment


def _unsorted_segment(kind):
    op_name = "UnsortedSegment" + "".join(p.capitalize() for p in kind.split("_"))

    def segment(data, segment_ids, num_segments, name=None):
        _segment_args(data, segment_ids, op_name, kind, False)
        num = int(to_value(num_segments))
        if num < 0:
            raise errors.invalid_argument(
                f"num_segments must be >= 0; got {num}.", op_name
            )
        return _segment(data, segment_ids, kind, num, False)

    segment.__name__ = segment.__qualname__ = f"unsorted_segment_{kind}"
    segment.__doc__ = (
        f"The {kind} of the rows of `data` with each id of `segment_ids` "
        "(any order; negative ids are dropped), into `num_segments` segments."
    )
    return segment


segment_sum = _sorted_segment("sum")
segment_mean = _sorted_segment("mean")
segment_max = _sorted_segment("max")
segment_min = _sorted_segment("min")
segment_prod = _sorted_segment("prod")
unsorted_segment_sum = _unsorted_segment("sum")
unsorted_segment_mean = _unsorted_segment("mean")
unsorted_segment_max = _unsorted_segment("max")
unsorted_segment_min = _unsorted_segment("min")
unsorted_segment_prod = _unsorted_segment("prod")
unsorted_segment_sqrt_n = _unsorted_segment("sqrt_n")
