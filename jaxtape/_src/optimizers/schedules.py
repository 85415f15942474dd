"""Learning-rate schedules (`keras.optimizers.schedules`). Layer L4.

A schedule is called with the optimizer's step (its `iterations` before the
update) and gives the learning rate. `_at(step)` is the pure jnp form used
inside the compiled optimizer update; `__call__` returns a Tensor.
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from jaxtape._src.core import registry
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor


class LearningRateSchedule:
    """Base class: subclasses implement `_at(step)` on jnp values."""

    def _at(self, step):
        raise NotImplementedError

    def __call__(self, step):
        return Tensor(jnp.asarray(self._at(jnp.asarray(to_value(step))), jnp.float32))

    def get_config(self) -> dict:
        raise NotImplementedError

    @classmethod
    def from_config(cls, cfg):
        return cls(**cfg)


class _TimeDecay(LearningRateSchedule):
    """Shared by the decays of `step / decay_steps` (floored when `staircase`)."""

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        decay_rate,
        staircase=False,
        name=None,
    ):
        name = type(self).__name__ if name is None else name  # Keras's default
        if decay_steps <= 0:
            raise ValueError(
                f"{type(self).__name__}: decay_steps must be > 0; got {decay_steps}."
            )
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps, self.decay_rate = decay_steps, decay_rate
        self.staircase, self.name = staircase, name

    def _progress(self, step):
        p = jnp.asarray(step, jnp.float32) / self.decay_steps
        return jnp.floor(p) if self.staircase else p

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "decay_rate": self.decay_rate,
            "staircase": self.staircase,
            "name": self.name,
        }


class ExponentialDecay(_TimeDecay):
    """`initial * decay_rate ** (step / decay_steps)` (floored when `staircase`)."""

    def _at(self, step):
        p = self._progress(step)
        return self.initial_learning_rate * jnp.power(jnp.float32(self.decay_rate), p)


class PiecewiseConstantDecay(LearningRateSchedule):
    """`values[i]` for `boundaries[i-1] < step <= boundaries[i]`."""

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(values) != len(boundaries) + 1:
            raise ValueError(
                "PiecewiseConstantDecay: the number of values must be one more than "
                f"the number of boundaries; got {len(values)} values and "
                f"{len(boundaries)} boundaries."
            )
        self.boundaries, self.values, self.name = list(boundaries), list(values), name

    def _at(self, step):
        step = jnp.asarray(step)
        boundaries = jnp.asarray(self.boundaries).astype(step.dtype)  # (as Keras)
        idx = jnp.searchsorted(boundaries, step, side="left")
        return jnp.asarray(self.values, jnp.float32)[idx]

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class CosineDecay(LearningRateSchedule):
    """Cosine decay to `alpha * initial`, after an optional linear warmup."""

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        alpha=0.0,
        name="CosineDecay",
        warmup_target=None,
        warmup_steps=0,
    ):
        if decay_steps <= 0:
            raise ValueError(
                f"CosineDecay: decay_steps must be > 0; got {decay_steps}."
            )
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps, self.alpha, self.name = decay_steps, alpha, name
        self.warmup_target, self.warmup_steps = warmup_target, warmup_steps

    def _at(self, step):
        step = jnp.asarray(step, jnp.float32)
        init = jnp.float32(self.initial_learning_rate)
        target = init if self.warmup_target is None else jnp.float32(self.warmup_target)
        s = jnp.minimum(step - self.warmup_steps, self.decay_steps) / self.decay_steps
        cosine = 0.5 * (1.0 + jnp.cos(math.pi * jnp.maximum(s, 0.0)))
        decayed = target * ((1 - self.alpha) * cosine + self.alpha)
        if self.warmup_target is None or self.warmup_steps <= 0:
            return decayed
        warm = init + (target - init) * step / self.warmup_steps
        return jnp.where(step < self.warmup_steps, warm, decayed)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "alpha": self.alpha,
            "name": self.name,
            "warmup_target": self.warmup_target,
            "warmup_steps": self.warmup_steps,
        }


class InverseTimeDecay(_TimeDecay):
    """`initial / (1 + decay_rate * step / decay_steps)` (floored when `staircase`)."""

    def _at(self, step):
        return self.initial_learning_rate / (
            1.0 + self.decay_rate * self._progress(step)
        )


class PolynomialDecay(LearningRateSchedule):
    """`(initial - end) * (1 - step / decay_steps) ** power + end`, Keras's rule.

    With `cycle=True` the decay restarts: `decay_steps` is multiplied by
    `ceil(step / decay_steps)` (by 1 at step 0); else the step stops at
    `decay_steps`.
    """

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        end_learning_rate=0.0001,
        power=1.0,
        cycle=False,
        name="PolynomialDecay",
    ):
        if decay_steps <= 0:
            raise ValueError(
                "Argument `decay_steps` must be > 0. "
                f"Received: decay_steps={decay_steps}"
            )
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps, self.end_learning_rate = decay_steps, end_learning_rate
        self.power, self.cycle, self.name = power, cycle, name

    def _at(self, step):
        step = jnp.asarray(step, jnp.float32)
        init = jnp.float32(self.initial_learning_rate)
        end = jnp.float32(self.end_learning_rate)
        steps = jnp.float32(self.decay_steps)
        if self.cycle:
            steps = steps * jnp.where(step == 0, 1.0, jnp.ceil(step / steps))
        else:
            step = jnp.minimum(step, steps)
        return (init - end) * jnp.power(1 - step / steps, self.power) + end

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "end_learning_rate": self.end_learning_rate,
            "power": self.power,
            "cycle": self.cycle,
            "name": self.name,
        }


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (SGDR, Loshchilov & Hutter), Keras's rule.

    Period `i` lasts `first_decay_steps * t_mul**i` steps and starts from
    `initial_learning_rate * m_mul**i`; each decays to `alpha` times that.
    """

    def __init__(
        self,
        initial_learning_rate,
        first_decay_steps,
        t_mul=2.0,
        m_mul=1.0,
        alpha=0.0,
        name="SGDRDecay",
    ):
        if first_decay_steps <= 0:
            raise ValueError(
                "Argument `first_decay_steps` must be > 0. "
                f"Received: first_decay_steps={first_decay_steps}"
            )
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self._t_mul, self._m_mul = t_mul, m_mul
        self.alpha, self.name = alpha, name

    def _at(self, step):
        fraction = jnp.asarray(step, jnp.float32) / jnp.float32(self.first_decay_steps)
        t_mul = jnp.float32(self._t_mul)
        if self._t_mul == 1.0:
            i_restart = jnp.floor(fraction)
            fraction = fraction - i_restart
        else:
            i_restart = jnp.floor(
                jnp.log(1.0 - fraction * (1.0 - t_mul)) / jnp.log(t_mul)
            )
            sum_r = (1.0 - jnp.power(t_mul, i_restart)) / (1.0 - t_mul)
            fraction = (fraction - sum_r) / jnp.power(t_mul, i_restart)
        m_fac = jnp.power(jnp.float32(self._m_mul), i_restart)
        cosine = 0.5 * m_fac * (1.0 + jnp.cos(jnp.float32(math.pi) * fraction))
        alpha = jnp.float32(self.alpha)
        return jnp.float32(self.initial_learning_rate) * ((1 - alpha) * cosine + alpha)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "first_decay_steps": self.first_decay_steps,
            "t_mul": self._t_mul,
            "m_mul": self._m_mul,
            "alpha": self.alpha,
            "name": self.name,
        }


SCHEDULES = registry.Kind(
    "decay",
    "keras.optimizers.schedules",
    snake_case_classes=False,
    instantiate=False,
    accept=lambda obj: isinstance(obj, LearningRateSchedule),
)
for _cls in (
    ExponentialDecay,
    PiecewiseConstantDecay,
    PolynomialDecay,
    InverseTimeDecay,
    CosineDecay,
    CosineDecayRestarts,
):
    SCHEDULES.add(_cls)


def serialize(learning_rate_schedule):
    """Keras's `{'module', 'class_name', 'config', 'registered_name'}` dict of a
    schedule (`keras.optimizers.schedules.serialize`)."""
    return SCHEDULES.serialize(learning_rate_schedule)


def deserialize(config, custom_objects=None):
    """The schedule of `serialize`'s output (`custom_objects` maps the class
    names of custom schedules to their classes)."""
    return SCHEDULES.deserialize(config, custom_objects)
