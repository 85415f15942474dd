"""`keras.optimizers.LossScaleOptimizer`: dynamic loss scaling. Layer L4.

Wraps another optimizer as Keras 3 does: the loss is multiplied by a scale,
the gradients divided by it; a step with a non-finite gradient is skipped and
halves the scale, and `dynamic_growth_steps` finite steps in a row double it.
The skip is a select (`jnp.where`) over the inner optimizer's new state, not a
Python branch, so the whole step also runs inside `jaxtape.function`.
"""

from __future__ import annotations

from typing import Any, cast

import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import context
from jaxtape._src.optimizers.optimizers import (
    OPTIMIZERS,
    Optimizer,
    _grad_value,
    _Slices,
)
from jaxtape._src.state.module import name_scope
from jaxtape._src.state.scope import creating_state
from jaxtape._src.state.variable import Variable

_BASE_DEFAULTS = {
    "weight_decay": None,
    "clipnorm": None,
    "global_clipnorm": None,
    "clipvalue": None,
    "use_ema": False,
    "ema_momentum": 0.99,
    "ema_overwrite_frequency": None,
    "loss_scale_factor": None,
    "gradient_accumulation_steps": None,
}


class LossScaleOptimizer(Optimizer):
    """An optimizer that dynamically scales the loss (Keras 3's).

    Args:
      inner_optimizer: The `keras.optimizers.Optimizer` that applies the
        unscaled gradients (its `loss_scale_factor` is reset to None, as Keras).
      initial_scale: The first loss scale (default `2**15`).
      dynamic_growth_steps: The scale doubles after this many steps in a row
        with finite gradients.
      name: The optimizer's name.

    `scale_loss(loss)` multiplies by the current scale (`initial_scale` before
    the first step); `apply_gradients` divides by it. `learning_rate` and
    `iterations` are the inner optimizer's; `variables` are Keras's: this
    optimizer's `iteration`, `learning_rate` (unused, 0), `step_counter`,
    `dynamic_scale`, then the inner optimizer's.

    Differences from TensorFlow:
      Keras 3's class has no TF-2 `get_scaled_loss`/`get_unscaled_gradients`
      (nor `dynamic=False`), and neither does this one.
    """

    def __init__(
        self,
        inner_optimizer: Optimizer,
        initial_scale: float = 2.0**15,
        dynamic_growth_steps: int = 2000,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        if not kwargs.pop("dynamic", True):
            raise ValueError(
                "LossScaleOptimizer no longer supports `dynamic=False`. "
                "Instead, simply set `loss_scale_factor` directly on the "
                "`inner_optimizer`."
            )
        for arg_name, default in _BASE_DEFAULTS.items():
            if arg_name not in kwargs:
                continue
            value = kwargs.pop(arg_name)
            if (default is None and value is not None) or value != default:
                raise ValueError(
                    f"LossScaleOptimizer does not support `{arg_name}`. "
                    f"Instead, set `{arg_name}` on the `inner_optimizer`."
                )
        if kwargs:
            raise ValueError(
                "LossScaleOptimizer does not support arguments: "
                f"`{'`, `'.join(kwargs.keys())}`."
            )
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(
                "LossScaleOptimizer: `inner_optimizer` must be a "
                "keras.optimizers.Optimizer instance, e.g. "
                "`LossScaleOptimizer(keras.optimizers.SGD())`. Received: "
                f"inner_optimizer={inner_optimizer!r}"
            )
        super().__init__(learning_rate=0.0, name=name)
        self.inner_optimizer = inner_optimizer
        self.initial_scale = initial_scale
        self.dynamic_growth_steps = dynamic_growth_steps
        self.inner_optimizer.loss_scale_factor = None
        self.inner_optimizer._step_fn = None  # (it divided by the old factor)
        self.step_counter: Variable | None = None
        self.dynamic_scale: Variable | None = None

    # -- delegated to the inner optimizer -------------------------------------
    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self.inner_optimizer.learning_rate = value

    lr = learning_rate

    @property
    def iterations(self):
        return self.inner_optimizer.iterations

    def scale_loss(self, loss):
        """The loss times the current scale (`initial_scale` before building)."""
        if self.dynamic_scale is None:
            return loss * self.initial_scale
        return loss * self.dynamic_scale

    # -- state -----------------------------------------------------------------
    def build(self, var_list) -> None:
        """Creates `step_counter` and `dynamic_scale`, and builds the inner
        optimizer on `var_list`."""
        if self.dynamic_scale is None:
            with context.paused_tapes(), name_scope(self.name), creating_state():
                self.step_counter = Variable(
                    np.int64(0), trainable=False, name="step_counter", dtype="int64"
                )
                self.dynamic_scale = Variable(
                    np.float32(self.initial_scale),
                    trainable=False,
                    name="dynamic_scale",
                    dtype="float32",
                )
        self.inner_optimizer.build(
            [v for v in var_list if id(v) not in self.inner_optimizer._slots]
        )
        self._built = True

    def _own_variables(self) -> list:
        own = [self._iterations, self._learning_rate]
        if self.dynamic_scale is not None and self.step_counter is not None:
            own += [self.step_counter, self.dynamic_scale]
        return own

    @property
    def variables(self) -> list:
        return self._own_variables() + self.inner_optimizer.variables

    def _trackable_children(self) -> dict:
        children: dict = dict(super()._trackable_children())
        if self.dynamic_scale is not None:
            children["step_counter"] = self.step_counter
            children["dynamic_scale"] = self.dynamic_scale
        children["inner_optimizer"] = self.inner_optimizer
        return children

    def _slot_variables(self) -> list:
        return []  # the inner optimizer, a child, lists its own

    # -- applying ----------------------------------------------------------------
    def _apply(self, kept) -> None:
        variables = [v for _, v in kept]
        self.build(variables)
        step_counter = cast("Variable", self.step_counter)  # (built above)
        dynamic_scale = cast("Variable", self.dynamic_scale)
        grads = [_grad_value(g) for g, _ in kept]
        # Keras: an IndexedSlices gradient is finite when its values are, and
        # unscaling divides its values (it stays IndexedSlices).
        values = [g.values if isinstance(g, _Slices) else g for g in grads]
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(g)) for g in values]))
        scale = dynamic_scale._read_raw()
        unscaled = [
            _Slices(g.values / scale.astype(g.values.dtype), g.indices)
            if isinstance(g, _Slices)
            else g / scale.astype(g.dtype)
            for g in grads
        ]
        # Run the inner step, then keep its results only where all gradients
        # were finite (Keras skips the step: variables, slots and iterations).
        state = variables + self.inner_optimizer.variables
        before = [v._read_raw() for v in state]
        self.inner_optimizer._apply(list(zip(unscaled, variables)))
        for v, old in zip(state, before):
            v.assign(jnp.where(finite, v._read_raw(), old))
        counter = step_counter._read_raw()
        grow = finite & (counter == self.dynamic_growth_steps - 1)
        dynamic_scale.assign(
            jnp.where(finite, jnp.where(grow, scale * 2.0, scale), scale * 0.5)
        )
        step_counter.assign(
            jnp.where(finite & ~grow, counter + 1, jnp.zeros_like(counter))
        )

    def finalize_variable_values(self, var_list) -> None:
        """The inner optimizer's (nothing to do without `use_ema`)."""
        finalize = getattr(self.inner_optimizer, "finalize_variable_values", None)
        if finalize is not None:
            finalize(var_list)

    # -- configuration ------------------------------------------------------------
    def get_config(self) -> dict:
        return {
            "name": self.name,
            "inner_optimizer": OPTIMIZERS.serialize(self.inner_optimizer),
            "initial_scale": self.initial_scale,
            "dynamic_growth_steps": self.dynamic_growth_steps,
        }

    @classmethod
    def from_config(cls, cfg, custom_objects=None):
        cfg = dict(cfg)
        inner = OPTIMIZERS.deserialize(cfg.pop("inner_optimizer"), custom_objects)
        return cls(inner, **cfg)


OPTIMIZERS.add(LossScaleOptimizer)
