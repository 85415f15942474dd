"""Learning-rate schedules (`keras.optimizers.schedules`). Layer L4.

A schedule is called with the optimizer's step (its `iterations` before the
update) and gives the learning rate. `_at(step)` is the pure jnp form used
inside the compiled optimizer update; `__call__` returns a Tensor.
"""

from __future__ import annotations

import math

import jax.numpy as jnp

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
        self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None
    ):
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

    def __init__(self, boundaries, values, name=None):
        if len(values) != len(boundaries) + 1:
            raise ValueError(
                "PiecewiseConstantDecay: the number of values must be one more than "
                f"the number of boundaries; got {len(values)} values and "
                f"{len(boundaries)} boundaries."
            )
        self.boundaries, self.values, self.name = list(boundaries), list(values), name

    def _at(self, step):
        idx = jnp.searchsorted(jnp.asarray(self.boundaries), step, side="left")
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
        name=None,
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
