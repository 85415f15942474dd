"""`lax`'s element-wise functions behind `jax.jit(inline=True)`, for op bodies. L1.

Op bodies call `lax` where `jax.numpy` would quietly promote an input that
TF's kernel refuses (`jnp.sin` of an int32 is a float; `lax.sin` raises
TypeError, which the body turns into TF's error). Called eagerly, a bare
`lax.sin(x)` binds its primitive through JAX's Python dispatch (~2x the cost
of `jnp.sin`); jitted, it takes jit's C++ fast path as `jnp.sin` does, and
`inline=True` leaves enclosing traces (tapes' programs, `jaxtape.function`)
exactly as with the bare call. A refused dtype still raises TypeError.
"""

from __future__ import annotations

import functools

import jax
from jax import lax

_jit = functools.partial(jax.jit, inline=True)

neg = _jit(lax.neg)
abs = _jit(lax.abs)  # noqa: A001 - lax's name
sign = _jit(lax.sign)
square = _jit(lax.square)
rsqrt = _jit(lax.rsqrt)
exp = _jit(lax.exp)
expm1 = _jit(lax.expm1)
log = _jit(lax.log)
log1p = _jit(lax.log1p)
sin = _jit(lax.sin)
cos = _jit(lax.cos)
tan = _jit(lax.tan)
asin = _jit(lax.asin)
acos = _jit(lax.acos)
atan = _jit(lax.atan)
sinh = _jit(lax.sinh)
cosh = _jit(lax.cosh)
tanh = _jit(lax.tanh)
logistic = _jit(lax.logistic)
erf = _jit(lax.erf)
lgamma = _jit(lax.lgamma)
