"""`tf.bitwise`'s shifts as pure lax bodies behind `dispatch.op` (the AND/OR/XOR
and invert ops live in `nondiff.py`). Layer L1.

As TF's kernels, a shift amount outside `[0, bits - 1]` is clamped into it
(`left_shift(int8 3, 9)` shifts by 7), right shifts of signed integers are
arithmetic and of unsigned ones logical. No gradients (integers).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.core.dispatch import op
from jaxtape._src.ops.math_ops import K_INTS, _check, _typed_dtype


def _shift_args(x, y):
    dtype = _typed_dtype(x, y)  # (a Python number takes the tensor's dtype)
    x, y = jnp.asarray(x, dtype), jnp.asarray(y, dtype)
    x, y = jnp.broadcast_arrays(x, y)
    bits = np.dtype(x.dtype).itemsize * 8
    return x, jnp.clip(y, 0, bits - 1).astype(x.dtype)


@op("LeftShift", same_dtype=True, differentiable=False)
def left_shift(x, y, name=None):
    """`x << y` element-wise (the shift clamped to the dtype's bits)."""
    _check("LeftShift", K_INTS, x, y)
    return lax.shift_left(*_shift_args(x, y))


@op("RightShift", same_dtype=True, differentiable=False)
def right_shift(x, y, name=None):
    """`x >> y` element-wise: arithmetic for signed, logical for unsigned."""
    _check("RightShift", K_INTS, x, y)
    x, y = _shift_args(x, y)
    if np.dtype(x.dtype).kind == "u":
        return lax.shift_right_logical(x, y)
    return lax.shift_right_arithmetic(x, y)
