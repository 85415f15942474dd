"""Keras activations (`keras.activations`), each a recorded op. Layer L5.

Every built-in activation is a jaxtape op whose pure body layers can fuse
into their own op (Dense and Conv run `activation(x @ kernel + bias)` as one
recorded node).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxtape._src.core.dispatch import op


@op("Relu")
def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """Keras's `relu`: `max(x, 0)`, with optional slope, cap and threshold."""
    if negative_slope == 0.0 and max_value is None and threshold == 0.0:
        return jnp.maximum(x, 0).astype(x.dtype)
    out = jnp.where(x >= threshold, x, negative_slope * (x - threshold))
    if max_value is not None:
        out = jnp.minimum(out, max_value)
    return out.astype(x.dtype)


@op("Sigmoid")
def sigmoid(x):
    return jax.nn.sigmoid(x)


@op("Tanh")
def tanh(x):
    return jnp.tanh(x)


@op("Softmax")
def softmax(x, axis=-1):
    return jax.nn.softmax(x, axis=axis)


@op("LogSoftmax")
def log_softmax(x, axis=-1):
    return jax.nn.log_softmax(x, axis=axis)


@op("Elu")
def elu(x, alpha=1.0):
    return jax.nn.elu(x, alpha)


@op("Selu")
def selu(x):
    return jax.nn.selu(x)


@op("Gelu")
def gelu(x, approximate=False):
    """Keras 3's default is the exact (erf) form."""
    return jax.nn.gelu(x, approximate=approximate)


@op("Softplus")
def softplus(x):
    return jax.nn.softplus(x)


@op("Softsign")
def softsign(x):
    return x / (1 + jnp.abs(x))


@op("Silu")
def silu(x):
    return jax.nn.silu(x)


swish = silu


@op("LeakyRelu")
def leaky_relu(x, negative_slope=0.2):
    return jnp.where(x >= 0, x, negative_slope * x).astype(x.dtype)


@op("Relu6")
def relu6(x):
    return jnp.clip(x, 0, 6).astype(x.dtype)


@op("HardSigmoid")
def hard_sigmoid(x):
    return jnp.clip(x / 6.0 + 0.5, 0.0, 1.0).astype(x.dtype)


@op("Exp")
def exponential(x):
    return jnp.exp(x)


def linear(x):
    """The identity."""
    return x


_BY_NAME = {
    f.__name__: f
    for f in (
        relu,
        sigmoid,
        tanh,
        softmax,
        log_softmax,
        elu,
        selu,
        gelu,
        softplus,
        softsign,
        silu,
        leaky_relu,
        relu6,
        hard_sigmoid,
        exponential,
        linear,
    )
}
_BY_NAME["swish"] = silu


def get(identifier):
    """An activation function from a name, a function, or None (linear)."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        fn = _BY_NAME.get(identifier)
        if fn is None:
            raise ValueError(
                f"Unknown activation function: {identifier!r}. Known names: "
                f"{', '.join(sorted(_BY_NAME))}."
            )
        return fn
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret activation identifier: {identifier!r}.")


def serialize(fn) -> str:
    name = getattr(fn, "__name__", None)
    if _BY_NAME.get(name) is fn:
        return name
    raise ValueError(
        f"Cannot serialize the custom activation {fn!r}; pass it as a custom object."
    )


def fusable_body(fn):
    """The pure jnp body of a built-in activation (for fused layer ops), or None."""
    if fn is linear:
        return None
    if getattr(fn, "_jaxtape_op", None) is not None and _BY_NAME.get(fn.__name__) is fn:
        return fn.__wrapped__
    return None
