"""Keras optimizers on optax (`keras.optimizers`), numerically Keras's. Layer L4.

Each optimizer is an optax `GradientTransformation` (optax's own pieces where
they compute Keras's rule; a small transform here where Keras differs, e.g.
Adam's epsilon-hat form) run per variable. The whole update of one
`apply_gradients` call (clipping, weight decay, every variable) is one
jit-compiled function, and all state (slots, step counter, learning rate)
lives in Variables, so `jaxtape.function` can lift it like any other state.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
import optax

from jaxtape._src.autodiff.gradient_tape import GradientTape
from jaxtape._src.core import context, distribution, errors, registry
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.ops import math_ops
from jaxtape._src.ops.misc_ops import IndexedSlices
from jaxtape._src.optimizers import schedules
from jaxtape._src.optimizers.schedules import LearningRateSchedule
from jaxtape._src.state import trackable
from jaxtape._src.state.module import _camel_to_snake, name_scope
from jaxtape._src.state.scope import creating_state
from jaxtape._src.state.variable import Variable, store_computed

if TYPE_CHECKING:
    from jaxtape._src.core.typing import LearningRateLike, OptimizerLike, TensorLike


# -- transforms where Keras's rule is not optax's stock one -------------------------
class _AdamState(NamedTuple):
    # `count`, as optax's states name it (`_set_count` finds it by name); it
    # shadows tuple.count, as in optax.
    count: jax.Array  # pyright: ignore[reportIncompatibleMethodOverride]
    mu: optax.Updates
    nu: optax.Updates
    nu_max: optax.Updates


def scale_by_keras_adam(b1=0.9, b2=0.999, eps=1e-7, amsgrad=False):
    """Keras's Adam direction: `sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps)`.

    Stock `optax.scale_by_adam` adds eps to the bias-corrected sqrt(v), which
    moves parameters with small gradients several times further.
    """

    def init(params):
        def zeros():  # distinct buffers per slot (safe to donate)
            return jax.tree.map(jnp.zeros_like, params)

        nu_max = zeros() if amsgrad else ()  # no dead state without AMSGrad
        return _AdamState(jnp.zeros([], jnp.int32), zeros(), zeros(), nu_max)

    def update(updates, state, params=None, **extra_args):
        count = state.count + 1
        squares = _squares(updates, extra_args)
        mu = jax.tree.map(lambda m, g: m + (g - m) * (1 - b1), state.mu, updates)
        nu = jax.tree.map(lambda v, g2: v + (g2 - v) * (1 - b2), state.nu, squares)
        nu_max = jax.tree.map(jnp.maximum, state.nu_max, nu) if amsgrad else ()
        t = count.astype(jnp.float32)
        scale = jnp.sqrt(1 - jnp.power(b2, t)) / (1 - jnp.power(b1, t))
        denom = nu_max if amsgrad else nu
        out = jax.tree.map(
            lambda m, v: scale.astype(m.dtype) * m / (jnp.sqrt(v) + eps), mu, denom
        )
        return out, _AdamState(count, mu, nu, nu_max)

    return optax.GradientTransformationExtraArgs(init, update)


def _squares(updates, extra_args):
    """Keras's square of the gradient: per slice for an `IndexedSlices` one,
    summed into rows (`squares`, given by the step), else `g * g`."""
    squares = extra_args.get("squares")
    return jax.tree.map(lambda g: g * g, updates) if squares is None else squares


_uids: dict[str, int] = {}


def _auto_name(base: str) -> str:
    """Keras's automatic optimizer names: `adam`, then `adam_1`, `adam_2`, ..."""
    n = _uids.get(base, 0)
    _uids[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


def reset_uids() -> None:
    """Forgets the numbered names given so far (`keras.backend.clear_session`)."""
    _uids.clear()


class _NadamState(NamedTuple):
    count: jax.Array  # pyright: ignore[reportIncompatibleMethodOverride]  # (as above)
    u_product: jax.Array
    mu: optax.Updates
    nu: optax.Updates


def scale_by_keras_nadam(b1=0.9, b2=0.999, eps=1e-7):
    """Keras's Nadam (Dozat's momentum schedule `b1 * (1 - 0.5 * 0.96^t)`)."""

    def init(params):
        return _NadamState(
            jnp.zeros([], jnp.int32),
            jnp.ones([], jnp.float32),
            jax.tree.map(jnp.zeros_like, params),
            jax.tree.map(jnp.zeros_like, params),
        )

    def update(updates, state, params=None, **extra_args):
        count = state.count + 1
        t = count.astype(jnp.float32)
        u_t = b1 * (1.0 - 0.5 * jnp.power(0.96, t))
        u_t1 = b1 * (1.0 - 0.5 * jnp.power(0.96, t + 1))
        u_prod = state.u_product * u_t
        u_prod1 = u_prod * u_t1
        mu = jax.tree.map(lambda m, g: m + (g - m) * (1 - b1), state.mu, updates)
        squares = _squares(updates, extra_args)
        nu = jax.tree.map(lambda v, g2: v + (g2 - v) * (1 - b2), state.nu, squares)
        b2_pow = jnp.power(b2, t)

        def direction(m, v, g):
            m_hat = u_t1 * m / (1 - u_prod1) + (1 - u_t) * g / (1 - u_prod)
            return (m_hat / (jnp.sqrt(v / (1 - b2_pow)) + eps)).astype(g.dtype)

        out = jax.tree.map(direction, mu, nu, updates)
        return out, _NadamState(count, u_prod, mu, nu)

    return optax.GradientTransformationExtraArgs(init, update)


def scale_by_keras_rmsprop(rho=0.9, momentum=0.0, eps=1e-7, centered=False):
    """Keras 3's RMSprop, with the learning rate inside (its momentum slot holds
    `momentum * m + lr * g / sqrt(...)`, so the state matches tf.keras's, and
    a changing learning rate enters as Keras applies it). Returns the delta.
    """

    def init(params):
        def zeros():
            return jax.tree.map(jnp.zeros_like, params)

        return _RMSpropState(
            zeros(), zeros() if momentum > 0 else (), zeros() if centered else ()
        )

    def update(updates, state, params=None, **extra_args):
        learning_rate = extra_args["learning_rate"]  # (optax's extra-args protocol)
        g = updates
        velocity = rho * state.velocity + (1 - rho) * _squares(g, extra_args)
        average = state.average_gradient
        if centered:
            average = rho * average + (1 - rho) * g
            denominator = velocity - average * average + eps
        else:
            denominator = velocity + eps
        increment = learning_rate * g / jnp.sqrt(denominator)
        moment = state.momentum
        if momentum > 0:
            moment = momentum * moment + increment
            increment = moment
        return -increment, _RMSpropState(velocity, moment, average)

    return optax.GradientTransformationExtraArgs(init, update)


class _RMSpropState(NamedTuple):
    velocity: optax.Updates
    momentum: optax.Updates
    average_gradient: optax.Updates


class _LionState(NamedTuple):
    momentum: optax.Updates


def scale_by_keras_lion(b1=0.9, b2=0.99):
    """Keras's Lion direction `sign(b1 * m + (1 - b1) * g)`, then
    `m = b2 * m + (1 - b2) * g` (Chen et al., 2023)."""

    def init(params):
        return _LionState(jax.tree.map(jnp.zeros_like, params))

    def update(updates, state, params=None):
        def direction(m, g):
            return jnp.sign(m * b1 + g * (1.0 - b1))

        out = jax.tree.map(direction, state.momentum, updates)
        m = jax.tree.map(lambda m, g: m * b2 + g * (1.0 - b2), state.momentum, updates)
        return out, _LionState(m)

    return optax.GradientTransformation(init, update)


class _LambState(NamedTuple):
    count: jax.Array  # pyright: ignore[reportIncompatibleMethodOverride]  # (as Adam)
    mu: optax.Updates
    nu: optax.Updates


def scale_by_keras_lamb(b1=0.9, b2=0.999, eps=1e-7):
    """Keras's Lamb direction: Adam's bias-corrected `m / (sqrt(v) + eps)`
    times the trust ratio `||var|| / ||direction||` (1 where either is 0)."""

    def init(params):
        zeros = jax.tree.map(jnp.zeros_like, params)
        return _LambState(
            jnp.zeros([], jnp.int32), zeros, jax.tree.map(jnp.copy, zeros)
        )

    def update(updates, state, params=None, **extra_args):
        count = state.count + 1
        squares = _squares(updates, extra_args)
        mu = jax.tree.map(lambda m, g: m + (g - m) * (1 - b1), state.mu, updates)
        nu = jax.tree.map(lambda v, g2: v + (g2 - v) * (1 - b2), state.nu, squares)

        def direction(m, v, p):
            t = count.astype(p.dtype)
            m_hat = m / (1.0 - jnp.power(jnp.asarray(b1, p.dtype), t))
            v_hat = v / (1.0 - jnp.power(jnp.asarray(b2, p.dtype), t))
            step = m_hat / (jnp.sqrt(v_hat) + eps)
            w_norm = jnp.sqrt(jnp.sum(p * p))
            g_norm = jnp.sqrt(jnp.sum(step * step))
            ratio = jnp.where((w_norm > 0) & (g_norm > 0), w_norm / g_norm, 1.0)
            return ratio * step

        out = jax.tree.map(direction, mu, nu, params)
        return out, _LambState(count, mu, nu)

    return optax.GradientTransformationExtraArgs(init, update)


class _FtrlState(NamedTuple):
    accumulator: optax.Updates
    linear: optax.Updates


def keras_ftrl(
    learning_rate_power=-0.5,
    initial_accumulator_value=0.1,
    l1=0.0,
    l2=0.0,
    l2_shrinkage=0.0,
    beta=0.0,
):
    """Keras's FTRL-Proximal (McMahan et al., 2013) with the learning rate as an
    extra argument; returns the delta that moves each variable to its new value.
    """

    def init(params):
        return _FtrlState(
            jax.tree.map(lambda p: jnp.full_like(p, initial_accumulator_value), params),
            jax.tree.map(jnp.zeros_like, params),
        )

    def update(updates, state, params=None, **extra_args):
        lr = extra_args["learning_rate"]
        power = -learning_rate_power

        def one(g, g2, p, accum, linear):
            l2_reg = l2 + beta / (2.0 * lr)
            new_accum = accum + g2
            linear = linear + (
                g
                + 2 * l2_shrinkage * p
                - (jnp.power(new_accum, power) - jnp.power(accum, power)) / lr * p
            )
            quadratic = jnp.power(new_accum, power) / lr + 2 * l2_reg
            new_p = (jnp.clip(linear, -l1, l1) - linear) / quadratic
            return new_p - p, new_accum, linear

        squares = _squares(updates, extra_args)
        out = jax.tree.map(
            one, updates, squares, params, state.accumulator, state.linear
        )
        delta, accum, linear = (
            jax.tree.map(
                lambda t, i=i: t[i], out, is_leaf=lambda t: isinstance(t, tuple)
            )
            for i in range(3)
        )
        return delta, _FtrlState(accum, linear)

    return optax.GradientTransformationExtraArgs(init, update)


class _AdafactorState(NamedTuple):
    count: jax.Array  # pyright: ignore[reportIncompatibleMethodOverride]  # (as Adam)
    r: optax.Updates
    c: optax.Updates
    v: optax.Updates


def keras_adafactor(
    beta_2_decay=-0.8, epsilon_1=1e-30, epsilon_2=1e-3, clip_threshold=1.0
):
    """Keras 3's Adafactor (Shazeer & Stern, 2018): the last two dimensions of a
    variable of rank >= 2 factored into row and column statistics `r`, `c`;
    lower ranks keep a full `v` (and int32 scalar placeholders for `r`, `c`,
    as Keras). Takes the learning rate as an extra argument, gives the delta.
    """

    def init(params):
        def r(p):
            return jnp.zeros(p.shape[:-1], p.dtype) if p.ndim >= 2 else _int0()

        def c(p):
            if p.ndim >= 2:
                return jnp.zeros(p.shape[:-2] + p.shape[-1:], p.dtype)
            return _int0()

        return _AdafactorState(
            jnp.zeros([], jnp.int32),
            jax.tree.map(r, params),
            jax.tree.map(c, params),
            jax.tree.map(jnp.zeros_like, params),
        )

    def update(updates, state, params=None, **extra_args):
        lr = extra_args["learning_rate"]
        count = state.count + 1

        squares = extra_args.get("squares")  # (an IndexedSlices gradient's)

        def one(g, p, r, c, v, sq):
            step = count.astype(p.dtype)
            rho = jnp.minimum(lr, 1 / jnp.sqrt(step))
            alpha = jnp.maximum(epsilon_2, _rms(p)) * rho
            g2 = (g * g if squares is None else sq) + epsilon_1
            beta_2 = 1 - jnp.power(step, beta_2_decay)
            if p.ndim >= 2:
                r = beta_2 * r + (1 - beta_2) * jnp.mean(g2, axis=-1)
                c = beta_2 * c + (1 - beta_2) * jnp.mean(g2, axis=-2)
                v = jnp.expand_dims(
                    r / jnp.mean(r, axis=-1, keepdims=True), -1
                ) * jnp.expand_dims(c, -2)
            else:
                v = beta_2 * v + (1 - beta_2) * g2
            u = g / jnp.sqrt(v)
            # Keras's rms of an IndexedSlices `u` squares it slice by slice.
            rms = _rms(u) if squares is None else jnp.sqrt(jnp.mean(sq / v))
            u = u / jnp.maximum(1.0, rms / clip_threshold)
            return -alpha * u, r, c, v

        sq = updates if squares is None else squares
        out = jax.tree.map(one, updates, params, state.r, state.c, state.v, sq)
        parts = [
            jax.tree.map(
                lambda t, i=i: t[i], out, is_leaf=lambda t: isinstance(t, tuple)
            )
            for i in range(4)
        ]
        return parts[0], _AdafactorState(count, *parts[1:])

    return optax.GradientTransformationExtraArgs(init, update)


def _int0():
    return jnp.zeros([], jnp.int32)


def _rms(x):
    return jnp.sqrt(jnp.mean(x * x))


class _AdagradState(NamedTuple):
    accumulator: optax.Updates


def scale_by_keras_adagrad(initial_accumulator_value=0.1, eps=1e-7):
    """Keras's Adagrad direction `g / sqrt(acc + eps)` after `acc += g^2`
    (squared slice by slice for an `IndexedSlices` gradient, as Keras)."""

    def init(params):
        fill = initial_accumulator_value
        return _AdagradState(jax.tree.map(lambda p: jnp.full_like(p, fill), params))

    def update(updates, state, params=None, **extra_args):
        acc = jax.tree.map(jnp.add, state.accumulator, _squares(updates, extra_args))
        out = jax.tree.map(lambda g, a: g / jnp.sqrt(a + eps), updates, acc)
        return out, _AdagradState(acc)

    return optax.GradientTransformationExtraArgs(init, update)


class _AdadeltaState(NamedTuple):
    accumulated_grad: optax.Updates
    accumulated_delta_var: optax.Updates


def scale_by_keras_adadelta(rho=0.95, eps=1e-7):
    """Keras's Adadelta direction `sqrt(E[dx^2] + eps) / sqrt(E[g^2] + eps) * g`.

    For an `IndexedSlices` gradient Keras squares the gradient and the step
    slice by slice (`squares`): both running averages see the summed squares.
    """

    def init(params):
        return _AdadeltaState(
            jax.tree.map(jnp.zeros_like, params), jax.tree.map(jnp.zeros_like, params)
        )

    def update(updates, state, params=None, **extra_args):
        squares = extra_args.get("squares")
        sq = updates if squares is None else squares

        def one(g, g2, e_g, e_x):
            e_g = rho * e_g + (1 - rho) * (g * g if squares is None else g2)
            ratio = jnp.sqrt(e_x + eps) / jnp.sqrt(e_g + eps)
            delta = ratio * g
            delta2 = delta * delta if squares is None else ratio * ratio * g2
            return delta, e_g, rho * e_x + (1 - rho) * delta2

        out = jax.tree.map(
            one, updates, sq, state.accumulated_grad, state.accumulated_delta_var
        )
        parts = [
            jax.tree.map(
                lambda t, i=i: t[i], out, is_leaf=lambda t: isinstance(t, tuple)
            )
            for i in range(3)
        ]
        return parts[0], _AdadeltaState(parts[1], parts[2])

    return optax.GradientTransformationExtraArgs(init, update)


class _AdamaxState(NamedTuple):
    count: jax.Array  # pyright: ignore[reportIncompatibleMethodOverride]  # (as Adam)
    mu: optax.Updates
    nu: optax.Updates


def scale_by_keras_adamax(b1=0.9, b2=0.999, eps=1e-7):
    """Keras's Adamax direction `m / ((1 - b1^t) * (u + eps))`, `u = max(b2 *
    u, |g|)` (for an `IndexedSlices` gradient, Keras's `|g|` is the sum of
    its slices' absolute values, `abs_sums`)."""

    def init(params):
        return _AdamaxState(
            jnp.zeros([], jnp.int32),
            jax.tree.map(jnp.zeros_like, params),
            jax.tree.map(jnp.zeros_like, params),
        )

    def update(updates, state, params=None, **extra_args):
        count = state.count + 1
        abs_sums = extra_args.get("abs_sums")
        if abs_sums is None:
            abs_sums = jax.tree.map(jnp.abs, updates)
        mu = jax.tree.map(lambda m, g: m + (g - m) * (1 - b1), state.mu, updates)
        nu = jax.tree.map(lambda u, a: jnp.maximum(b2 * u, a), state.nu, abs_sums)

        def direction(m, u):
            power = jnp.power(jnp.asarray(b1, m.dtype), count.astype(m.dtype))
            return m / ((1 - power) * (u + eps))

        return jax.tree.map(direction, mu, nu), _AdamaxState(count, mu, nu)

    return optax.GradientTransformationExtraArgs(init, update)


# -- the optimizer base -----------------------------------------------------------
class Optimizer:
    """Base class of the Keras optimizers (Keras 3 semantics on optax).

    Subclasses give `_transform()` (an optax transform producing the update
    direction); the base class scales by the learning rate, clips, applies
    weight decay, accumulates gradients and keeps the state in Variables.

    Args (Keras 3's):
      learning_rate: A float, a Variable or a `LearningRateSchedule`.
      weight_decay: Decoupled weight decay (`var -= var * wd * lr` first).
      clipnorm, clipvalue, global_clipnorm: Gradient clipping (one of them).
      use_ema, ema_momentum, ema_overwrite_frequency: Keras's moving average
        of the weights: after each update `average = m * average + (1 - m) *
        var` (m is 0 at the first step, so it starts at the weights), for every
        variable the optimizer was built on; every `ema_overwrite_frequency`
        updates the weights are overwritten with their averages, and
        `finalize_variable_values` (called at the end of `fit`) does it once.
      loss_scale_factor: `fit` multiplies the loss by it (`scale_loss`) and
        every update divides the gradients by it, as Keras 3 does.
      gradient_accumulation_steps: N >= 2 accumulates the gradients of N
        `apply_gradients` calls and applies their mean on every Nth call (the
        variables do not move in between); `iterations` counts applied
        updates (the raw call count // N), as Keras 3.
      name: The optimizer's name (the scope of its variables).

    An `IndexedSlices` gradient (a gathered or embedded Variable's) enters
    the compiled step as its rows and indices, and gives Keras-on-TF's numbers,
    which differ from the equal dense gradient's when an index repeats: Keras
    squares (Adamax: takes `abs` of) the gradient slice by slice and sums the
    results into rows; `clipnorm`/`clipvalue` clip the values (the norm counts
    repeated rows apart); `global_clipnorm` counts the values and densifies;
    gradient accumulation densifies; `loss_scale_factor` refuses it with
    Keras's TypeError. A row index out of range raises InvalidArgumentError
    eagerly (inside `jaxtape.function` JAX's scatter drops it).
    """

    _LR_MODE = "outside"  # "inside": the transform gets `-lr * grad`, gives the
    # delta; "arg": it gets the grad and `learning_rate=`, gives the delta.
    # Keras 3's slot names per optax state leaf, and the groups of leaves that
    # Keras creates together (variables are saved group by group, in this order).
    _KERAS_SLOTS: tuple = ()
    _OTHER_SLOT_NAMES: dict = {}  # names of leaves Keras does not keep per variable

    def __init__(
        self,
        learning_rate: LearningRateLike = 0.001,
        weight_decay: float | None = None,
        clipnorm: float | None = None,
        clipvalue: float | None = None,
        global_clipnorm: float | None = None,
        use_ema: bool = False,
        ema_momentum: float = 0.99,
        ema_overwrite_frequency: int | None = None,
        loss_scale_factor: float | None = None,
        gradient_accumulation_steps: int | None = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        if kwargs.pop("decay", None) is not None:
            warnings.warn(
                "Argument `decay` is no longer supported and will be ignored.",
                stacklevel=2,
            )
        if kwargs:
            raise ValueError(
                f"Argument(s) not recognized: {kwargs}. Keras 3 optimizers take "
                "learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm, "
                "use_ema, ema_momentum, ema_overwrite_frequency, loss_scale_factor, "
                "gradient_accumulation_steps, name and their own hyperparameters."
            )
        if sum(x is not None for x in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(
                "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be "
                f"set. Received: clipnorm={clipnorm}, clipvalue={clipvalue}, "
                f"global_clipnorm={global_clipnorm}"
            )
        if gradient_accumulation_steps and not gradient_accumulation_steps >= 2:
            raise ValueError(
                "`gradient_accumulation_steps` must be an integer >= 2. Received: "
                f"gradient_accumulation_steps={gradient_accumulation_steps}"
            )
        if use_ema:
            if ema_momentum > 1 or ema_momentum < 0:
                raise ValueError(
                    "`ema_momentum` must be in the range [0, 1]. Received: "
                    f"ema_momentum={ema_momentum}"
                )
        if ema_overwrite_frequency is not None and (
            not isinstance(ema_overwrite_frequency, int) or ema_overwrite_frequency < 1
        ):
            raise ValueError(
                "`ema_overwrite_frequency` must be an integer >= 1 or None. "
                f"Received: ema_overwrite_frequency={ema_overwrite_frequency}"
            )
        self.name = name or _auto_name(_camel_to_snake(type(self).__name__))
        self.weight_decay = weight_decay
        self.clipnorm, self.clipvalue = clipnorm, clipvalue
        self.global_clipnorm = global_clipnorm
        self.use_ema = bool(use_ema)
        self.ema_momentum = ema_momentum
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self.loss_scale_factor = loss_scale_factor
        self.gradient_accumulation_steps = gradient_accumulation_steps or None
        self._exclude_ids: set[int] = set()
        self._exclude_pattern = None
        with context.paused_tapes(), name_scope(self.name):
            self._iterations = Variable(
                np.int64(0), trainable=False, name="iteration", dtype="int64"
            )
            self._schedule = None
            if isinstance(learning_rate, LearningRateSchedule):
                self._schedule = learning_rate
                learning_rate = 0.0
            elif callable(learning_rate) and not isinstance(learning_rate, Variable):
                raise TypeError(
                    "learning_rate must be a float, a Variable or a "
                    "keras.optimizers.schedules.LearningRateSchedule; got "
                    f"{learning_rate!r}."
                )
            self._learning_rate = Variable(
                float(to_value(learning_rate)),
                trainable=False,
                name="learning_rate",
                dtype="float32",
            )
        self._slots: dict[int, tuple] = {}  # id(var) -> (var, treedef, [Variables])
        self._accumulators: dict[int, Variable] = {}  # id(var) -> accumulator
        self._averages: dict[int, Variable] = {}  # id(var) -> EMA (use_ema)
        self._ema_fn = None
        self._built = False
        self._step_fn = None

    # -- configuration -------------------------------------------------------
    def _transform(self) -> optax.GradientTransformation:
        raise NotImplementedError

    def _clipping(self) -> tuple[str, float] | None:
        """Keras's clipping option: `(kind, limit)`, or None."""
        if self.clipnorm is not None:
            return ("norm", float(self.clipnorm))
        if self.global_clipnorm is not None:
            return ("global_norm", float(self.global_clipnorm))
        if self.clipvalue is not None:
            return ("value", float(self.clipvalue))
        return None

    @property
    def iterations(self):
        """The number of updates applied: the step-counter Variable, or (with
        `gradient_accumulation_steps` N) that count // N, as Keras 3."""
        if self.gradient_accumulation_steps:
            return math_ops.floordiv(
                self._iterations.read_value(),
                np.int64(self.gradient_accumulation_steps),
            )
        return self._iterations

    @property
    def learning_rate(self):
        """The Variable holding the rate, or the current value of a schedule."""
        if self._schedule is not None:
            return self._schedule(self._iterations.numpy())
        return self._learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        if isinstance(value, LearningRateSchedule):
            self._schedule = value
            self._step_fn = None
        else:
            if self._schedule is not None:
                self._schedule = None
                self._step_fn = None
            self._learning_rate.assign(float(to_value(value)))

    lr = learning_rate

    def scale_loss(self, loss):
        """The loss times `loss_scale_factor` (unchanged without one), as Keras
        3's `train_step` scales it before taking gradients; every update
        divides the gradients by the same factor."""
        if self.loss_scale_factor is not None:
            return loss * self.loss_scale_factor
        return loss

    # -- variables, in Keras 3's order -----------------------------------------
    def _keras_groups(self) -> list:
        """Keras's creation order of the slots: groups of (leaf index, name)."""
        return [list(group) for group in self._KERAS_SLOTS]

    def _ordered_slots(self, var_list) -> list:
        """`(slot Variable, Keras name)` for `var_list`, in Keras 3's order."""
        out = []
        for group in self._keras_groups():
            for var in var_list:
                _, _, slot_vars = self._slots[id(var)]
                out.extend((slot_vars[i], name) for i, name in group)
        return out

    def _built_vars(self) -> list:
        return [var for var, _, _ in self._slots.values()]

    @property
    def variables(self) -> list:
        """Keras 3's order: the step counter, the learning rate (none for a
        schedule), the gradient accumulators, then the slots, each kind for
        every variable in turn (e.g. Adam: each variable's momentum and
        velocity)."""
        out = [self._iterations]
        if self._schedule is None:
            out.append(self._learning_rate)
        built = self._built_vars()
        out += [self._averages[id(v)] for v in built if id(v) in self._averages]
        out += [self._accumulators[id(v)] for v in built if id(v) in self._accumulators]
        out += [slot for slot, _ in self._ordered_slots(built)]
        listed = {id(v) for v in out}
        for _, _, slot_vars in self._slots.values():  # slots Keras keeps once
            out += [s for s in slot_vars if id(s) not in listed]
        return out

    def _keras_variables(self) -> list:
        """The Variables saved in Keras 3's `.weights.h5` order."""
        return self.variables

    def _keras_extra(self) -> list:
        """Arrays Keras keeps once for all variables (after the slots)."""
        return []

    def _load_extra(self, values) -> None:
        del values  # none, but Nadam's

    def save_own_variables(self, store) -> None:
        """Writes the state as Keras 3 does: `store["0"]`, `store["1"]`, ..."""
        arrays = [np.asarray(v.numpy()) for v in self._keras_variables()]
        for i, value in enumerate(arrays + self._keras_extra()):
            store[str(i)] = value

    def load_own_variables(self, store) -> None:
        """Reads a state written by `save_own_variables` (jaxtape's or tf.keras's).

        A store with another number of variables is skipped with Keras's
        warning (e.g. the optimizer has not been built on the model yet).
        """
        own = self._keras_variables()
        n_extra = len(self._keras_extra())
        if len(store.keys()) != len(own) + n_extra:
            message = (
                f"Skipping variable loading for optimizer '{self.name}', because "
                f"it has {len(own) + n_extra} variables whereas the saved "
                f"optimizer has {len(store.keys())} variables. "
            )
            if not self._slots:
                message += (
                    "This is likely because the optimizer has not been called/"
                    "built yet."
                )
            warnings.warn(message, stacklevel=2)
            return
        values = [np.asarray(store[str(i)]) for i in range(len(own) + n_extra)]
        for var, value in zip(own, values):
            if tuple(value.shape) != tuple(var.shape):
                raise ValueError(
                    f"Optimizer variable {var.name!r} has shape {tuple(var.shape)} "
                    f"not compatible with provided weight shape {value.shape}."
                )
        for var, value in zip(own, values):
            var.assign(value.astype(var.dtype.as_numpy_dtype))
        self._load_extra(values[len(own) :])

    # -- checkpoints (state/trackable.py) -----------------------------------------
    def _trackable_children(self) -> dict:
        return {"iterations": self._iterations, "learning_rate": self._learning_rate}

    def _slot_variables(self) -> list:
        out = [
            (var, f"slot{i}", slot)
            for var, _, slot_vars in self._slots.values()
            for i, slot in enumerate(slot_vars)
        ]
        out += [
            (var, "gradient_accumulator", self._accumulators[id(var)])
            for var, _, _ in self._slots.values()
            if id(var) in self._accumulators
        ]
        out += [
            (var, "average", self._averages[id(var)])
            for var, _, _ in self._slots.values()
            if id(var) in self._averages
        ]
        return out

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Variables (or regular expressions searched in their names, as Keras
        3's `re.search(pattern, variable.name)`) that weight decay leaves alone.
        Must be called before the optimizer is built, as in Keras."""
        if self._built:
            raise ValueError(
                "`exclude_from_weight_decay()` can only be configured before the "
                "optimizer is built."
            )
        self._exclude_ids = {id(v) for v in var_list or ()}
        names = sorted(set(var_names or ()))
        self._exclude_pattern = re.compile("|".join(names)) if names else None
        self._step_fn = None

    # -- state ---------------------------------------------------------------
    def build(self, var_list) -> None:
        """Creates the slot variables of `var_list` (done on first apply)."""
        tx = self._transform()
        names = {i: n for group in self._keras_groups() for i, n in group}
        names.update(self._OTHER_SLOT_NAMES)
        made = []
        with context.paused_tapes(), name_scope(self.name):
            for var in var_list:
                if id(var) in self._slots:
                    continue
                with creating_state():  # concrete while jaxtape.function traces
                    zeros = jnp.zeros(var.shape, var.dtype.as_numpy_dtype)
                    state = _set_count(tx.init(zeros), None)
                leaves, treedef = jax.tree.flatten(state)
                base = getattr(var, "path", var.name.split(":")[0]).replace("/", "_")
                slot_vars = [
                    Variable(leaf, trainable=False, name=f"{base}_{names.get(i, i)}")
                    for i, leaf in enumerate(leaves)
                ]
                self._slots[id(var)] = (var, treedef, slot_vars)
                slots = [(f"slot{i}", v) for i, v in enumerate(slot_vars)]
                if self.gradient_accumulation_steps:
                    with creating_state():
                        acc = Variable(
                            jnp.zeros(var.shape, var.dtype.as_numpy_dtype),
                            trainable=False,
                            name=f"{base}_gradient_accumulator",
                        )
                    self._accumulators[id(var)] = acc
                    slots.append(("gradient_accumulator", acc))
                if self.use_ema:
                    with creating_state():
                        average = Variable(
                            jnp.zeros(var.shape, var.dtype.as_numpy_dtype),
                            trainable=False,
                            name=f"{base}_average",
                        )
                    self._averages[id(var)] = average
                    slots.append(("average", average))
                made.append((var, slots))
        trackable.take_deferred_slots(self, made)  # values a restore left waiting
        self._built = True

    def _decays(self, var) -> bool | float:
        if self.weight_decay is None or id(var) in self._exclude_ids:
            return False
        pattern = self._exclude_pattern
        return pattern is None or pattern.search(var.name) is None

    def _make_step(self):
        # Every transform takes extra arguments: `learning_rate=` in the "arg"
        # mode, and `squares=`/`abs_sums=` for an IndexedSlices gradient.
        tx = optax.with_extra_args_support(self._transform())
        tx_update: Callable[..., tuple[Any, Any]] = tx.update
        clip = self._clipping()
        schedule = self._schedule
        wd = self.weight_decay
        lr_mode = self._LR_MODE
        scale = self.loss_scale_factor
        accumulate = self.gradient_accumulation_steps

        def update(params, grads, states, treedefs, decays, lr, count):
            """Clipping, weight decay and the transform: new params and states."""
            if clip is not None:
                grads = _clip_gradients(grads, [p.shape for p in params], *clip)
            new_params, new_states = [], []
            for p, g, leaves, treedef, decay in zip(
                params, grads, states, treedefs, decays
            ):
                extra = {}
                if isinstance(g, _Slices):  # Keras's per-slice squares, |g|
                    extra["squares"] = _summed(g.values * g.values, g.indices, p)
                    extra["abs_sums"] = _summed(jnp.abs(g.values), g.indices, p)
                    g = _summed(g.values, g.indices, p)
                lr_p = jnp.asarray(lr, p.dtype)
                if decay:  # (True: `weight_decay`; a float: this variable's own)
                    rate = wd if decay is True else decay
                    p = p - p * jnp.asarray(rate, p.dtype) * lr_p
                state = _set_count(jax.tree.unflatten(treedef, leaves), count)
                if lr_mode == "inside":
                    delta, state = tx_update(-lr_p * g, state, p, **extra)
                elif lr_mode == "arg":
                    delta, state = tx_update(g, state, p, learning_rate=lr_p, **extra)
                else:
                    direction, state = tx_update(g, state, p, **extra)
                    delta = -lr_p * direction
                new_params.append((p + delta).astype(p.dtype))
                new_states.append(jax.tree.leaves(_set_count(state, None)))
            return new_params, new_states

        def step(params, grads, states, accs, treedefs, decays, lr_value, iteration):
            # Keras's schedules see the raw step counter, its bias corrections
            # the number of applied updates: one shared counter (no
            # per-variable slot) stands in for each optax state's `count`.
            lr = schedule._at(iteration) if schedule is not None else lr_value
            grads = [_cast(g, p.dtype) for p, g in zip(params, grads)]
            if scale is not None:  # (IndexedSlices refused in `_apply`, as Keras)
                grads = [_unscaled(g, scale) for g in grads]
            if accumulate:  # Keras adds IndexedSlices to its dense accumulators
                grads = [_dense(g, p) for p, g in zip(params, grads)]
            if not accumulate:
                count = iteration.astype(jnp.int32)
                new_params, new_states = update(
                    params, grads, states, treedefs, decays, lr, count
                )
                return new_params, new_states, accs

            def apply_mean(_):
                mean = [(g + a) / accumulate for g, a in zip(grads, accs)]
                count = (iteration // accumulate).astype(jnp.int32)
                new_params, new_states = update(
                    params, mean, states, treedefs, decays, lr, count
                )
                return new_params, new_states, [jnp.zeros_like(a) for a in accs]

            def add_up(_):
                return params, states, [a + g for g, a in zip(grads, accs)]

            is_update = (iteration + 1) % accumulate == 0
            return jax.lax.cond(is_update, apply_mean, add_up, None)

        def step_and_count(*args):  # (+ the next `iterations`, stored last)
            return (*step(*args), args[-1] + 1)

        return jax.jit(step_and_count, static_argnums=(4, 5))

    # -- applying ------------------------------------------------------------
    def apply_gradients(
        self,
        grads_and_vars: Iterable[tuple[TensorLike | None, Variable]],
        name: str | None = None,
    ) -> Variable:
        """Applies one update (Keras/TF semantics: None gradients are skipped).

        `name` is accepted for TF 2 compatibility and unused (the name scope of
        TF 2's update ops; eager TF names no ops). Returns the step-counter
        Variable after the increment, as Keras 3 does.
        """
        pairs = list(grads_and_vars)
        for _, v in pairs:
            if not isinstance(v, Variable):
                raise TypeError(
                    f"apply_gradients expects (gradient, Variable) pairs; got a "
                    f"{type(v).__name__} in place of a Variable. Pass "
                    "`zip(grads, model.trainable_variables)`."
                )
        kept = [(g, v) for g, v in pairs if g is not None]
        if not kept:
            names = [v.name for _, v in pairs]
            raise ValueError(
                f"No gradients provided for any variable: {names}. Check that the "
                "loss was computed from the variables inside the GradientTape."
            )
        if len(kept) < len(pairs):
            missing = [v.name for g, v in pairs if g is None]
            warnings.warn(
                f"Gradients do not exist for variables {missing} when minimizing the "
                "loss. If using `model.compile()`, did you forget to provide a "
                "`loss` argument?",
                UserWarning,
                stacklevel=2,
            )
        with context.paused_tapes():  # (inside strategy.run: gradients summed)
            distribution.apply_with_summed_gradients(self._apply, kept)
        return self._iterations

    def _apply(self, kept) -> None:
        variables = [v for _, v in kept]
        if any(id(v) not in self._slots for v in variables):
            self.build(variables)
        if self._step_fn is None:
            self._step_fn = self._make_step()
        params = [v._read_raw() for v in variables]
        grads = [_grad_value(g) for g, _ in kept]
        for (given, v), p, g in zip(kept, params, grads):
            shape = _grad_shape(given, g, p)
            if shape != p.shape:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Cannot update variable {v.name!r} with shape {list(p.shape)} "
                    f"using a gradient with shape {list(shape)}, shapes must be "
                    "equal. Check that each gradient is paired with its own "
                    "variable: `zip(grads, model.trainable_variables)`.",
                )
            if isinstance(g, _Slices):
                _check_rows(g.indices, p.shape[0])
                if self.loss_scale_factor is not None:  # Keras's `g / scale`
                    raise TypeError(
                        "unsupported operand type(s) for /: 'IndexedSlices' and 'float'"
                    )
        slots = [self._slots[id(v)] for v in variables]
        states = [[s._read_raw() for s in slot_vars] for _, _, slot_vars in slots]
        accs = [self._accumulators[id(v)] for v in variables if self._accumulators]
        treedefs = tuple(treedef for _, treedef, _ in slots)
        decays = tuple(self._decays(v) for v in variables)
        new_params, new_states, new_accs, next_iteration = self._step_fn(
            params,
            grads,
            states,
            [a._read_raw() for a in accs],
            treedefs,
            decays,
            self._learning_rate._read_raw(),
            self._iterations._read_raw(),
        )
        updates = [*zip(variables, new_params), *zip(accs, new_accs)]
        for (_, _, slot_vars), leaves in zip(slots, new_states):
            updates.extend(zip(slot_vars, leaves))
        if not store_computed(updates):  # (traced, or a replica's: assign)
            for v, value in updates:
                v.assign(value)
        if self.use_ema:
            self._update_moving_averages()
        # As Keras: a Variable's constraint projects it after the update (and
        # the moving averages), and only then: `assign`/`set_weights` store
        # values as given.
        for v in variables:
            if v.constraint is not None:
                v.assign(v.constraint(v.read_value()))
        if not store_computed([(self._iterations, next_iteration)]):
            self._iterations.assign_add(np.int64(1))

    def _update_moving_averages(self) -> None:
        """Keras's EMA of every built variable, after the update and before the
        step counter moves; every `ema_overwrite_frequency` updates the
        variables take their averages."""
        built = self._built_vars()
        averages = [self._averages[id(v)] for v in built]
        if self._ema_fn is None:
            self._ema_fn = _make_ema_step(
                float(self.ema_momentum),
                self.ema_overwrite_frequency,
                self.gradient_accumulation_steps,
            )
        new_averages, new_params = self._ema_fn(
            [v._read_raw() for v in built],
            [a._read_raw() for a in averages],
            self._iterations._read_raw(),
        )
        for a, value in zip(averages, new_averages):
            a.assign(value)
        if self.ema_overwrite_frequency:
            for v, value in zip(built, new_params):
                v.assign(value)

    def finalize_variable_values(self, var_list) -> None:
        """With `use_ema`, sets `var_list` to their moving averages (Keras's
        end of `fit`); otherwise does nothing."""
        if not self.use_ema:
            return
        var_list = list(var_list)
        averages = [self._averages[id(v)] for v in self._built_vars()]
        if len(var_list) != len(averages):
            raise ValueError(
                f"The length of model variables ({len(var_list)}) to override "
                "does not match the length of model variables stored in the "
                f"optimizer ({len(averages)}). Please check if the optimizer was "
                "called on your model."
            )
        for var, average in zip(var_list, averages):
            var.assign(average.read_value())

    def minimize(
        self,
        loss: Tensor | Callable[[], Tensor],
        var_list: Sequence[Variable] | Callable[[], Sequence[Variable]],
        tape: GradientTape | None = None,
    ) -> Variable:
        """Computes the gradients of `loss` with `tape` and applies them.

        `loss` is a Tensor (then `tape` is required) or a zero-argument callable.
        """
        variables = list(var_list() if callable(var_list) else var_list)
        if callable(loss):
            tape = GradientTape() if tape is None else tape
            with tape:
                tape.watch(variables)
                loss = loss()
        elif tape is None:
            raise ValueError(
                "`tape` is required when a `Tensor` loss is passed to minimize(); "
                "pass the GradientTape that recorded it, or pass a callable loss."
            )
        grads = tape.gradient(loss, variables)
        return self.apply_gradients(zip(grads, variables))

    def get_config(self) -> dict:
        lr = (
            schedules.serialize(self._schedule)
            if self._schedule is not None
            else float(self._learning_rate.numpy())
        )
        return {
            "name": self.name,
            "learning_rate": lr,
            "weight_decay": self.weight_decay,
            "clipnorm": self.clipnorm,
            "global_clipnorm": self.global_clipnorm,
            "clipvalue": self.clipvalue,
            "use_ema": self.use_ema,
            "ema_momentum": self.ema_momentum,
            "ema_overwrite_frequency": self.ema_overwrite_frequency,
            "loss_scale_factor": self.loss_scale_factor,
            "gradient_accumulation_steps": self.gradient_accumulation_steps,
            **self._hyper(),
        }

    def _hyper(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, cfg, custom_objects=None):
        """An optimizer from `get_config()`'s dict (jaxtape's or tf.keras's).

        `custom_objects` maps the class names of custom learning-rate
        schedules to their classes."""
        cfg = dict(cfg)
        lr = cfg.get("learning_rate")
        if isinstance(lr, dict):  # (Keras's error for an unknown class)
            cfg["learning_rate"] = schedules.deserialize(lr, custom_objects)
        return cls(**cfg)


def _make_ema_step(momentum, overwrite_frequency, accumulate):
    """The jitted EMA update: `(params, averages, raw iteration)` to the new
    averages and the params (the averages on an overwrite step)."""

    def step(params, averages, iteration):
        iterations = iteration // accumulate if accumulate else iteration
        new_averages = []
        for p, a in zip(params, averages):
            m = (iterations != 0).astype(p.dtype) * momentum
            new_averages.append(m * a + (1 - m) * p)
        if not overwrite_frequency:
            return new_averages, params
        overwrite = (iterations + 1) % overwrite_frequency == 0
        new_params = [jnp.where(overwrite, a, p) for p, a in zip(params, new_averages)]
        return new_averages, new_params

    return jax.jit(step)


def _set_count(state, count):
    """An optax state with its step `count` replaced (None: left out). Keras
    keeps no per-variable counter; the shared `iterations` stands in for it."""
    if "count" in getattr(state, "_fields", ()):
        return state._replace(count=count)
    return state


class _Slices(NamedTuple):
    """An `IndexedSlices` gradient in the jitted step: its rows and their
    indices (the dense shape is the variable's)."""

    values: jax.Array
    indices: jax.Array


def _grad_value(g):
    """A gradient as the step takes it: an array, or `_Slices`."""
    if type(g) is Tensor:
        return g._value
    if isinstance(g, Variable):
        return g._read_raw()
    if isinstance(g, _Slices):
        return g
    if isinstance(g, IndexedSlices):
        indices = to_value(g.indices)
        if indices.dtype != np.int32:
            indices = indices.astype(np.int32)
        return _Slices(to_value(g.values), indices)
    return jnp.asarray(to_value(g))


def _grad_shape(given, g, p) -> tuple:
    """The dense shape of gradient `g` (`given`: as the caller passed it)."""
    if not isinstance(g, _Slices):
        return tuple(g.shape)
    static = getattr(given, "_static", None)
    if static is not None:
        return tuple(static)
    return (p.shape[0], *g.values.shape[1:])


def _check_rows(indices, rows) -> None:
    """TF's error for an IndexedSlices row out of range (eagerly; inside
    `jaxtape.function` such rows are dropped, as JAX's scatter drops them)."""
    if isinstance(indices, jax.core.Tracer):
        return
    host = np.asarray(indices)
    bad = np.flatnonzero((host < 0) | (host >= rows))
    if bad.size:
        i = int(bad[0])
        raise errors.InvalidArgumentError(
            None, None, f"indices[{i}] = {host[i]} is not in [0, {rows})"
        )


def _unscaled(g, scale):
    return g / jnp.asarray(scale, g.dtype)


def _cast(g, dtype):
    if isinstance(g, _Slices):
        return _Slices(g.values.astype(dtype), g.indices)
    return g.astype(dtype)


def _summed(values, indices, p):
    """Rows summed into a zero tensor shaped like `p` (TF's densifying)."""
    return jnp.zeros(p.shape, values.dtype).at[indices].add(values)


def _dense(g, p):
    return _summed(g.values, g.indices, p) if isinstance(g, _Slices) else g


def _clip_gradients(grads, shapes, kind, limit):
    """Keras's `clipnorm` / `global_clipnorm` / `clipvalue`, with its TF
    backend's IndexedSlices rules: `clipnorm` and `clipvalue` clip the values
    (the norm counts repeated rows apart) and keep the slices;
    `global_clipnorm` counts the values in the norm and densifies them."""

    def clip(x):
        if kind == "value":
            return jnp.clip(x, -limit, limit)
        n = jnp.sqrt(jnp.sum(x * x))
        return x * (limit / jnp.maximum(n, limit)).astype(x.dtype)

    if kind == "global_norm":
        parts = [g.values if isinstance(g, _Slices) else g for g in grads]
        wide = any(x.dtype == jnp.float64 for x in parts)  # (no mixed promotion)
        dtype = jnp.float64 if wide else jnp.float32
        norm = jnp.sqrt(
            jnp.sum(jnp.stack([jnp.sum(x * x).astype(dtype) for x in parts]))
        )
        scale = limit * jnp.minimum(1.0 / norm, 1.0 / limit) + (norm - norm)
        out = []
        for g, shape in zip(grads, shapes):
            if isinstance(g, _Slices):
                g = jnp.zeros(shape, g.values.dtype).at[g.indices].add(g.values)
            out.append(g * scale.astype(g.dtype))
        return out
    return [
        _Slices(clip(g.values), g.indices) if isinstance(g, _Slices) else clip(g)
        for g in grads
    ]


# -- the optimizers -----------------------------------------------------------------
class SGD(Optimizer):
    """Gradient descent with optional (Nesterov) momentum, Keras's form:
    `m = momentum * m - lr * g; var += m` (Nesterov: `var += momentum * m - lr * g`)."""

    _LR_MODE = "inside"

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, **kwargs):
        if not 0 <= momentum <= 1:
            raise ValueError("`momentum` must be a float between [0, 1].")
        self.momentum, self.nesterov = float(momentum), bool(nesterov)
        super().__init__(learning_rate=learning_rate, **kwargs)

    def _keras_groups(self):
        return [[(0, "momentum")]] if self.momentum != 0 else []

    def _transform(self):
        if self.momentum == 0:
            return optax.identity()
        return optax.trace(decay=self.momentum, nesterov=self.nesterov)

    def _hyper(self):
        return {"momentum": self.momentum, "nesterov": self.nesterov}


class Adam(Optimizer):
    """Adam with Keras's epsilon-hat update and defaults (lr 1e-3, eps 1e-7)."""

    def __init__(
        self,
        learning_rate=0.001,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        amsgrad=False,
        **kwargs,
    ):
        self.beta_1, self.beta_2 = beta_1, beta_2
        self.epsilon, self.amsgrad = epsilon, amsgrad
        super().__init__(learning_rate=learning_rate, **kwargs)

    _KERAS_SLOTS = (((0, "momentum"), (1, "velocity")),)

    def _keras_groups(self):
        groups = super()._keras_groups()
        return groups + [[(2, "velocity_hat")]] if self.amsgrad else groups

    def _transform(self):
        return scale_by_keras_adam(self.beta_1, self.beta_2, self.epsilon, self.amsgrad)

    def _hyper(self):
        return {
            "beta_1": self.beta_1,
            "beta_2": self.beta_2,
            "epsilon": self.epsilon,
            "amsgrad": self.amsgrad,
        }


class AdamW(Adam):
    """Adam with decoupled weight decay (`var -= var * weight_decay * lr` first)."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, **kwargs):
        if weight_decay is None:
            raise ValueError("AdamW: weight_decay must be a float, not None.")
        super().__init__(
            learning_rate=learning_rate, weight_decay=weight_decay, **kwargs
        )


class RMSprop(Optimizer):
    """RMSprop, Keras 3's form (eps inside the square root; optional centering)."""

    def __init__(
        self,
        learning_rate=0.001,
        rho=0.9,
        momentum=0.0,
        epsilon=1e-7,
        centered=False,
        **kwargs,
    ):
        self.rho, self.momentum = rho, momentum
        self.epsilon, self.centered = epsilon, centered
        super().__init__(learning_rate=learning_rate, **kwargs)

    _LR_MODE = "arg"

    def _keras_groups(self):
        groups = [[(0, "velocity")]]
        if self.momentum > 0:
            groups.append([(1, "momentum")])
        if self.centered:
            groups.append([(len(groups), "average_gradient")])
        return groups

    def _transform(self):
        return scale_by_keras_rmsprop(
            self.rho, self.momentum, self.epsilon, self.centered
        )

    def _hyper(self):
        return {
            "rho": self.rho,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "centered": self.centered,
        }


class Adagrad(Optimizer):
    """Adagrad (`g / sqrt(sum of g^2 + eps)`, accumulator starting at 0.1)."""

    def __init__(
        self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, **kw
    ):
        self.initial_accumulator_value, self.epsilon = (
            initial_accumulator_value,
            epsilon,
        )
        super().__init__(learning_rate=learning_rate, **kw)

    _KERAS_SLOTS = (((0, "accumulator"),),)

    def _transform(self):
        return scale_by_keras_adagrad(self.initial_accumulator_value, self.epsilon)

    def _hyper(self):
        return {
            "initial_accumulator_value": self.initial_accumulator_value,
            "epsilon": self.epsilon,
        }


class Adadelta(Optimizer):
    """Adadelta (Keras's defaults: lr 1e-3, rho 0.95, eps 1e-7)."""

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, **kwargs):
        self.rho, self.epsilon = rho, epsilon
        super().__init__(learning_rate=learning_rate, **kwargs)

    _KERAS_SLOTS = (((0, "accumulated_grad"), (1, "accumulated_delta_var")),)

    def _transform(self):
        return scale_by_keras_adadelta(self.rho, self.epsilon)

    def _hyper(self):
        return {"rho": self.rho, "epsilon": self.epsilon}


class _BetaOptimizer(Optimizer):
    """Adamax and Nadam: the same hyperparameters, Keras's defaults."""

    def __init__(
        self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kw
    ):
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        super().__init__(learning_rate=learning_rate, **kw)

    def _hyper(self):
        return {"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}


class Adamax(_BetaOptimizer):
    """Adamax (infinity-norm Adam; Keras's eps 1e-7)."""

    _KERAS_SLOTS = (((0, "momentum"), (1, "norm")),)

    def _transform(self):
        return scale_by_keras_adamax(self.beta_1, self.beta_2, self.epsilon)


class Nadam(_BetaOptimizer):
    """Nadam with Keras's momentum schedule.

    Keras keeps one `u_product` for all variables; here each variable's state
    holds it (equal while every variable gets a gradient at every step). The
    `.weights.h5` layout stores one, as Keras: the first variable's.
    """

    _KERAS_SLOTS = (((1, "momentum"), (2, "velocity")),)
    _OTHER_SLOT_NAMES = {0: "u_product"}

    def _keras_variables(self) -> list:
        u_products = {id(slot_vars[0]) for _, _, slot_vars in self._slots.values()}
        return [v for v in self.variables if id(v) not in u_products]

    def _keras_extra(self) -> list:
        built = self._built_vars()
        return [np.asarray(self._slots[id(built[0])][2][0].numpy())] if built else []

    def _load_extra(self, values) -> None:
        for _, _, slot_vars in self._slots.values():
            slot_vars[0].assign(np.asarray(values[0]).astype(np.float32))

    def _transform(self):
        return scale_by_keras_nadam(self.beta_1, self.beta_2, self.epsilon)


class Lion(Optimizer):
    """Lion (sign of an interpolated momentum), Keras 3's defaults and rule."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, **kwargs):
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError(
                "Argument `beta_1` must be in the [0, 1] range. Otherwise, the "
                f"optimizer degenerates to SignSGD. Received: beta_1={beta_1}."
            )
        self.beta_1, self.beta_2 = beta_1, beta_2
        super().__init__(learning_rate=learning_rate, **kwargs)

    _KERAS_SLOTS = (((0, "momentum"),),)

    def _transform(self):
        return scale_by_keras_lion(self.beta_1, self.beta_2)

    def _hyper(self):
        return {"beta_1": self.beta_1, "beta_2": self.beta_2}


class Lamb(_BetaOptimizer):
    """Lamb (Adam scaled by the layer-wise trust ratio), Keras 3's rule."""

    _KERAS_SLOTS = (((0, "momentum"), (1, "velocity")),)

    def _transform(self):
        return scale_by_keras_lamb(self.beta_1, self.beta_2, self.epsilon)


class Ftrl(Optimizer):
    """FTRL-Proximal with Keras 3's arguments, defaults and rule (the
    accumulator starts at `initial_accumulator_value`; `beta` adds
    `beta / (2 * lr)` to the L2 strength)."""

    _LR_MODE = "arg"
    _KERAS_SLOTS = (((0, "accumulator"), (1, "linear")),)

    def __init__(
        self,
        learning_rate=0.001,
        learning_rate_power=-0.5,
        initial_accumulator_value=0.1,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        l2_shrinkage_regularization_strength=0.0,
        beta=0.0,
        **kwargs,
    ):
        for arg, value, sign in (
            ("initial_accumulator_value", initial_accumulator_value, "positive"),
            ("learning_rate_power", learning_rate_power, "negative"),
            ("l1_regularization_strength", l1_regularization_strength, "positive"),
            ("l2_regularization_strength", l2_regularization_strength, "positive"),
            (
                "l2_shrinkage_regularization_strength",
                l2_shrinkage_regularization_strength,
                "positive",
            ),
        ):
            if (value > 0.0) if sign == "negative" else (value < 0.0):
                raise ValueError(
                    f"`{arg}` needs to be {sign} or zero. Received: {arg}={value}."
                )
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta
        super().__init__(learning_rate=learning_rate, **kwargs)

    def _transform(self):
        return keras_ftrl(
            self.learning_rate_power,
            self.initial_accumulator_value,
            self.l1_regularization_strength,
            self.l2_regularization_strength,
            self.l2_shrinkage_regularization_strength,
            self.beta,
        )

    def _hyper(self):
        return {
            "learning_rate_power": self.learning_rate_power,
            "initial_accumulator_value": self.initial_accumulator_value,
            "l1_regularization_strength": self.l1_regularization_strength,
            "l2_regularization_strength": self.l2_regularization_strength,
            "l2_shrinkage_regularization_strength": (
                self.l2_shrinkage_regularization_strength
            ),
            "beta": self.beta,
        }


class Adafactor(Optimizer):
    """Adafactor with Keras 3's rule and defaults. The step size is
    `min(lr, 1 / sqrt(t)) * max(epsilon_2, rms(var))`; `relative_step` is kept
    in the config (Keras's update takes that minimum either way)."""

    _LR_MODE = "arg"
    # Keras creates r, c and the velocity per variable, variable by variable
    # (r and c are int32 scalar placeholders for variables of rank < 2).
    _KERAS_SLOTS = (((0, "r"), (1, "c"), (2, "velocity")),)

    def __init__(
        self,
        learning_rate=0.001,
        beta_2_decay=-0.8,
        epsilon_1=1e-30,
        epsilon_2=1e-3,
        clip_threshold=1.0,
        relative_step=True,
        **kwargs,
    ):
        self.beta_2_decay, self.epsilon_1 = beta_2_decay, epsilon_1
        self.epsilon_2, self.clip_threshold = epsilon_2, clip_threshold
        self.relative_step = relative_step
        super().__init__(learning_rate=learning_rate, **kwargs)

    def _transform(self):
        return keras_adafactor(
            self.beta_2_decay, self.epsilon_1, self.epsilon_2, self.clip_threshold
        )

    def _hyper(self):
        return {
            "beta_2_decay": self.beta_2_decay,
            "epsilon_1": self.epsilon_1,
            "epsilon_2": self.epsilon_2,
            "clip_threshold": self.clip_threshold,
            "relative_step": self.relative_step,
        }


OPTIMIZERS = registry.Kind(
    "optimizer",
    "keras.optimizers",
    lowercase=True,  # Keras: 'adam', 'Adam' and 'ADAM' are all Adam
    snake_case_classes=False,
    instantiate=False,
    accept=lambda obj: isinstance(obj, Optimizer),
)
for _cls in (
    SGD,
    Adam,
    AdamW,
    RMSprop,
    Adagrad,
    Adadelta,
    Adamax,
    Nadam,
    Lion,
    Lamb,
    Ftrl,
    Adafactor,
):
    OPTIMIZERS.add(_cls)


def get(identifier: OptimizerLike | None) -> Optimizer | None:
    """An optimizer from a name (`'adam'`, any case), a serialized config or an
    instance, as Keras's `optimizers.get`."""
    return OPTIMIZERS.get(identifier)


def serialize(optimizer):
    """Keras's `{'module', 'class_name', 'config', 'registered_name'}` dict."""
    return OPTIMIZERS.serialize(optimizer)


def deserialize(config, custom_objects=None):
    """The optimizer of `serialize`'s output."""
    return OPTIMIZERS.deserialize(config, custom_objects)
