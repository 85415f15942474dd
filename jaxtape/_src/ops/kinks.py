"""TF's derivatives at kinks and ties, for op bodies. Layer L1 (pure jnp).

JAX and TF agree on derivatives away from these points and differ on them:
JAX splits a tie of `maximum`/`minimum` evenly (half to each input) and gives
`abs` the derivative 1 at 0; TF gives a tie to the first input (`x >= y` for
Maximum, `x <= y` for Minimum), `abs` the derivative `sign(x)` (0 at 0), and
ReLU6 0 at both 0 and 6. Inputs exactly at these points are common (zero
padding with zero biases, clipped probabilities, an L1 penalty on weights
that start at zero), so op bodies through which gradients flow use these
instead of `jnp.maximum`/`jnp.minimum`/`jnp.clip`/`jnp.abs`. Values are
jnp's; integer inputs take jnp's functions as they are (no derivative).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


def _inexact(*xs: Any) -> bool:
    return any(jnp.issubdtype(jnp.result_type(x), jnp.inexact) for x in xs)


def _tangent(t, shape, dtype):
    return jnp.broadcast_to(t, shape).astype(dtype)


@jax.custom_jvp
def _sign(x):
    return jnp.sign(x)


@_sign.defjvp
def _sign_jvp(primals, tangents):
    # TF's Sign has a gradient, zero: a zero the tangent still reaches, so that
    # an input joined to an output only through `sign` counts as connected.
    return jnp.sign(primals[0]), jnp.where(
        True, jnp.zeros_like(tangents[0]), tangents[0]
    )


def sign(x):
    """`jnp.sign` whose derivative is a connected zero (TF's), not JAX's
    symbolic zero, which marks the input unconnected."""
    return _sign(x) if _inexact(x) else jnp.sign(x)


@jax.custom_jvp
def _maximum(x, y):
    return jnp.maximum(x, y)


@_maximum.defjvp
def _maximum_jvp(primals, tangents):
    x, y = primals
    out = jnp.maximum(x, y)
    t = jnp.where(x >= y, tangents[0], tangents[1])  # a tie goes to `x`
    return out, _tangent(t, out.shape, out.dtype)


@jax.custom_jvp
def _minimum(x, y):
    return jnp.minimum(x, y)


@_minimum.defjvp
def _minimum_jvp(primals, tangents):
    x, y = primals
    out = jnp.minimum(x, y)
    t = jnp.where(x <= y, tangents[0], tangents[1])
    return out, _tangent(t, out.shape, out.dtype)


def maximum(x, y):
    """`jnp.maximum`, with TF's Maximum gradient (a tie goes to `x`)."""
    if not _inexact(x, y) or jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        return jnp.maximum(x, y)
    x, y = _promoted(x, y)
    return _maximum(x, y)


def minimum(x, y):
    """`jnp.minimum`, with TF's Minimum gradient (a tie goes to `x`)."""
    if not _inexact(x, y) or jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        return jnp.minimum(x, y)
    x, y = _promoted(x, y)
    return _minimum(x, y)


def _promoted(x, y):
    # jnp's promotion (a Python scalar stays weak) before the custom rule,
    # whose inputs must be arrays.
    dtype = jnp.result_type(x, y)
    return jnp.asarray(x, dtype), jnp.asarray(y, dtype)


def clip(x, lo, hi):
    """TF's `clip_by_value`: `maximum(minimum(x, hi), lo)` with TF's tie rules,
    so the gradient reaches `x` at the bounds too."""
    return maximum(minimum(x, hi), lo)


@jax.custom_jvp
def _abs(x):
    return jnp.abs(x)


@_abs.defjvp
def _abs_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return jnp.abs(x), jnp.sign(x) * t  # 0 at 0, as TF's Abs


def abs(x):  # noqa: A001 - the name of what it mirrors
    """`jnp.abs`, with TF's derivative `sign(x)` (0 at 0) for real inputs."""
    if not _inexact(x) or jnp.iscomplexobj(x):
        return jnp.abs(x)
    return _abs(jnp.asarray(x))


fast_abs = jax.jit(abs, inline=True)  # (one dispatch when called eagerly)


@jax.custom_jvp
def relu6(x):
    """`min(max(x, 0), 6)` with TF's Relu6 gradient: 0 at 0 and at 6."""
    return jnp.clip(x, 0, 6)


@relu6.defjvp
def _relu6_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    inside = (x > 0) & (x < 6)
    return jnp.clip(x, 0, 6), jnp.where(inside, t, jnp.zeros_like(t))


@jax.custom_jvp
def _norm_rsqrt(x):
    return jax.lax.rsqrt(x)


@_norm_rsqrt.defjvp
def _norm_rsqrt_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = jax.lax.rsqrt(x)
    slope = -0.5 * y * y * y
    # At x == 0 the slope is infinite; `l2_normalize` then takes the 1/eps
    # side, so the rsqrt's incoming gradient is 0, and TF's RsqrtGrad gives 0
    # for that (JAX: 0 * inf = NaN).
    return y, jnp.where(jnp.isfinite(slope), slope, 0) * t


def l2_normalize(x, axis, epsilon):
    """Keras 3's `ops.normalize(x, axis, order=2, epsilon)`:
    `x * min(rsqrt(sum(x**2)), 1/epsilon)`, with TF's gradients (finite for a
    zero vector, as TF's)."""
    inv = _norm_rsqrt(jnp.sum(jnp.square(x), axis=axis, keepdims=True))
    return x * minimum(inv, jnp.asarray(1.0 / epsilon, inv.dtype))


def selu(x):
    """SELU with TF's derivative at 0 (`scale`, the linear side's)."""
    alpha = np.asarray(1.6732632423543772848170429916717, x.dtype)
    scale = np.asarray(1.0507009873554804934193349852946, x.dtype)
    negative = alpha * jnp.expm1(jnp.minimum(x, 0))
    return scale * jnp.where(x >= 0, x, negative)


def leaky_relu(x, alpha):
    """`x` where `x > 0`, else `alpha * x`: TF's LeakyRelu (slope `alpha` at 0)."""
    return jnp.where(x > 0, x, alpha * x).astype(x.dtype)
