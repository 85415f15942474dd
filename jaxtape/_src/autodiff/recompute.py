"""`recompute_grad` and `grad_pass_through`: gradients reshaped around a
function with `custom_gradient`. Layer L3 (imports `core`, `state`, and its
peers in `autodiff`). Keras's `remat` is `recompute_grad`.
"""

from __future__ import annotations

import functools

from jaxtape._src.autodiff.custom_gradient import custom_gradient
from jaxtape._src.autodiff.gradient_tape import GradientTape
from jaxtape._src.core.tensor import nest_flatten


def recompute_grad(f):
    """`f`'s values and gradients, without keeping its intermediate results for
    the backward pass (TF's `tf.recompute_grad`, Keras's `remat`): they are
    recomputed from the inputs when gradients are taken.

    Variables `f` reads get their gradients too, as in TF. Keyword arguments
    are passed to `f` and not differentiated.

    >>> layer = jaxtape.keras.layers.Dense(3)
    >>> y = jaxtape.recompute_grad(layer)(jaxtape.ones((2, 4)))
    """

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        @custom_gradient
        def recomputed(*xs):
            # The outer tapes see one op; this tape's record of `f` lives only
            # as long as `grad` (dropped after the forward, remade by the
            # backward pass, which reruns this body).
            with GradientTape() as tape:
                for x in xs:
                    tape.watch(x)
                out = f(*xs, **kwargs)

            def grad(*dys, variables=None):
                sources = list(xs) + list(variables or [])
                grads = tape.gradient(
                    nest_flatten(out), sources, output_gradients=list(dys)
                )
                n = len(xs)
                return (grads[:n], grads[n:]) if variables else grads[:n]

            return out, grad

        return recomputed(*args)

    return wrapped


def grad_pass_through(f):
    """`f`'s value with the gradient of the identity (TF's
    `tf.grad_pass_through`): the incoming gradient passes to `f`'s inputs
    unchanged, so `f` may be non-differentiable (an assignment, a rounding).
    Variables `f` reads get no gradient, as in TF.

    Differences from TensorFlow: a Variable read only inside `f` gets a zero
    gradient where TF gives None (`custom_gradient` fills it).

    >>> x = jaxtape.constant(2.0)
    >>> with jaxtape.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = jaxtape.grad_pass_through(jaxtape.round)(x * 1.5)
    >>> tape.gradient(y, x)
    <jaxtape.Tensor: shape=(), dtype=float32, numpy=1.5>
    """

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        @custom_gradient
        def passed(*xs):
            def grad(*dys, variables=None):
                if variables is not None:
                    return list(dys), [None] * len(variables)
                return list(dys)

            return f(*xs, **kwargs), grad

        return passed(*args)

    return wrapped
