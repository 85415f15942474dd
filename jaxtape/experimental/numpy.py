"""`jaxtape.experimental.numpy` (TF's `tf.experimental.numpy`): recorded jnp ops.

Every `jax.numpy` function is available here, registered through the one
dispatcher (`register_op`), so it accepts Tensors and Variables and is
differentiable on a GradientTape. Constants (`pi`, dtypes) pass through.
"""

from __future__ import annotations

import functools

import jax.numpy as _jnp

from jaxtape._src.core.dispatch import register_op as _register_op


@functools.cache
def _wrapped(name: str):
    return _register_op(getattr(_jnp, name), name=f"numpy.{name}")


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        attr = getattr(_jnp, name)
    except AttributeError:
        raise AttributeError(
            f"jaxtape.experimental.numpy has no attribute {name!r} (jax.numpy has no "
            "such function either)."
        ) from None
    if callable(attr) and not isinstance(attr, type):
        return _wrapped(name)
    return attr
