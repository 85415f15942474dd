"""Keras activations (`keras.activations`), each a recorded op. Layer L5.

Every built-in activation is a jaxtape op whose pure body layers can fuse
into their own op (Dense and Conv run `activation(x @ kernel + bias)` as one
recorded node).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxtape._src.core import errors, registry
from jaxtape._src.core.dispatch import op
from jaxtape._src.keras.ops import nn as _knn
from jaxtape._src.ops import kinks


@op("Relu", jit=True)
def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """Keras's `relu`: `max(x, 0)`, with optional slope, cap and threshold,
    composed as Keras's `ReLU.static_call` (so its gradients at the kinks are
    TF's: 0 at 0 and at the threshold, 1 at the cap, the slope at 0)."""
    dtype = x.dtype
    negative_part = None
    if negative_slope != 0.0:
        if max_value is None and threshold == 0:
            return kinks.leaky_relu(x, negative_slope)
        negative_part = jax.nn.relu(-x + threshold if threshold != 0 else -x)
    clip_max = max_value is not None
    if threshold != 0:
        out = jnp.where(x > threshold, x, jnp.zeros((), dtype))
    elif max_value == 6:
        out, clip_max = kinks.relu6(x), False
    else:
        out = jax.nn.relu(x)
    if clip_max:
        out = kinks.clip(out, jnp.zeros((), dtype), jnp.asarray(max_value, dtype))
    if negative_part is not None:
        out = out - negative_slope * negative_part
    return out.astype(dtype)


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


@op("Selu", jit=True)
def selu(x):
    return kinks.selu(x)


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


@op("LeakyRelu", jit=True)
def leaky_relu(x, negative_slope=0.2):
    return kinks.leaky_relu(x, negative_slope)


@op("Relu6", jit=True)
def relu6(x):
    return kinks.relu6(x).astype(x.dtype)


@op("HardSigmoid", jit=True)
def hard_sigmoid(x):
    """Keras's `relu6(x + 3) / 6`."""
    return (kinks.relu6(x + 3.0) / 6.0).astype(x.dtype)


@op("HardSilu", jit=True)
def hard_silu(x):
    """Keras's `x * hard_sigmoid(x)`."""
    return (x * (kinks.relu6(x + 3.0) / 6.0)).astype(x.dtype)


hard_swish = hard_silu


@op("Exp")
def exponential(x):
    return jnp.exp(x)


def linear(x):
    """The identity."""
    return x


@op("Mish", jit=True)
def mish(x):
    """Keras's `mish`: `x * tanh(softplus(x))` (no `keras.ops` twin in Keras).

    As on TF, an integer or complex input is TF's Softplus error
    (`InvalidArgumentError`), not cast.
    """
    if jnp.dtype(x.dtype).kind in "biuc":
        raise errors.invalid_argument(
            f"Value for attr 'T' of {jnp.dtype(x.dtype).name} is not in the list of "
            "allowed values: half, bfloat16, float, double. Cast the input to a "
            "float dtype first, e.g. `jaxtape.cast(x, jaxtape.float32)`.",
            "Softplus",
        )
    return x * jnp.tanh(jax.nn.softplus(x))


# Keras's activations that are its `keras.ops.nn` functions (same names,
# arguments and defaults): the same objects here, so one implementation (and
# one set of TF kink gradients) serves both namespaces.
celu = _knn.celu
glu = _knn.glu
hard_shrink = _knn.hard_shrink
hard_tanh = _knn.hard_tanh
log_sigmoid = _knn.log_sigmoid
soft_shrink = _knn.soft_shrink
sparse_plus = _knn.sparse_plus
sparse_sigmoid = _knn.sparse_sigmoid
sparsemax = _knn.sparsemax
squareplus = _knn.squareplus
tanh_shrink = _knn.tanh_shrink
threshold = _knn.threshold


ACTIVATIONS = registry.Kind(
    "activation function", "keras.activations", none=linear, locate_errors=True
)
for _fn in (
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
    hard_silu,
    exponential,
    linear,
    mish,
    celu,
    glu,
    hard_shrink,
    hard_tanh,
    log_sigmoid,
    soft_shrink,
    sparse_plus,
    sparse_sigmoid,
    sparsemax,
    squareplus,
    tanh_shrink,
    threshold,
):
    ACTIVATIONS.add(_fn)
ACTIVATIONS.add(silu, "swish")
ACTIVATIONS.add(hard_silu, "hard_swish")


def get(identifier):
    """An activation from a name (`'relu'`), a serialized config, a function,
    or None (linear), as Keras's `activations.get`."""
    return ACTIVATIONS.get(identifier)


def serialize(activation):
    """A built-in's name (`'relu'`); Keras's dict for any other function (its
    `config` the registered name, `'my_package>my_act'`) or object."""
    if ACTIVATIONS.is_builtin(activation):
        return activation.__name__
    return ACTIVATIONS.serialize(activation)


def deserialize(config, custom_objects=None):
    """The activation of `serialize`'s output (a name or a config)."""
    return ACTIVATIONS.deserialize(config, custom_objects)


def fusable_body(fn):
    """The pure jnp body of a built-in activation (for fused layer ops), or None."""
    if fn is linear:
        return None
    if getattr(fn, "_jaxtape_op", None) is not None and ACTIVATIONS.is_builtin(fn):
        return fn.__wrapped__
    return None
