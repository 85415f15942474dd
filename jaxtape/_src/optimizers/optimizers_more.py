"""Keras 3's newer optimizers: `Muon`, `ScheduleFreeAdamW`, `OptimizerMap`, and
the `keras.optimizers.legacy` names (which raise, as in Keras 3). Layer L4.

Both update rules are small optax transforms of our own rather than
`optax.contrib.muon` / `optax.contrib.schedule_free_adamw`, because Keras's
rules differ from optax's: Keras's Muon normalizes by the Frobenius norm plus
1e-7, scales the orthogonalized update by `sqrt(max(n, m)) * rms_rate`, keeps
`m = momentum * m + g` (optax: an EMA) and runs Adam (Keras's epsilon-hat
form) on the excluded variables; Keras's schedule-free AdamW averages with
uniform weights `1 / t` (optax: weights `lr^2`), starts `z` at the variable and
interpolates `y` without optax's separate `b1` in the weight sum.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxtape._src.core import context, registry
from jaxtape._src.optimizers import optimizers as _base
from jaxtape._src.optimizers.optimizers import OPTIMIZERS, Optimizer, _squares
from jaxtape._src.state.scope import creating_state


# -- Muon -------------------------------------------------------------------------
class _MuonState(NamedTuple):
    momentum: optax.Updates


class _MuonAdamState(NamedTuple):
    count: jax.Array  # pyright: ignore[reportIncompatibleMethodOverride]  # (optax)
    momentum: optax.Updates
    velocity: optax.Updates


def _swap_last(x):
    return jnp.swapaxes(x, -1, -2)


def newton_schulz5(x, steps, a=3.4445, b=-4.7750, c=2.0315):
    """Keras's quintic Newton-Schulz iteration approximating `U V^T` of `x`."""
    tall = x.shape[-2] > x.shape[-1]
    if tall:
        x = _swap_last(x)
    x = x / (jnp.sqrt(jnp.sum(x * x, axis=(-2, -1), keepdims=True)) + 1e-7)
    for _ in range(steps):
        xx = x @ _swap_last(x)
        x = a * x + (b * xx + c * xx @ xx) @ x
    return _swap_last(x) if tall else x


def keras_muon(
    adam,
    beta_1=0.9,
    beta_2=0.999,
    eps=1e-7,
    momentum=0.95,
    nesterov=True,
    ns_steps=5,
    abc=(3.4445, -4.7750, 2.0315),
    adam_lr_ratio=1.0,
    rms_rate=0.2,
):
    """Keras 3's Muon as a transform with the learning rate as an extra argument
    (gives the delta). `adam` picks the state made by `init` (Adam's moments for
    the variables Keras routes to AdamW); `update` follows the state it gets.
    """

    def init(params):
        def zeros():
            return jax.tree.map(jnp.zeros_like, params)

        if adam:
            return _MuonAdamState(jnp.zeros([], jnp.int32), zeros(), zeros())
        return _MuonState(zeros())

    def update(updates, state, params=None, **extra_args):
        lr = extra_args["learning_rate"]
        g = updates
        if isinstance(state, _MuonAdamState):
            t = (state.count + 1).astype(g.dtype)
            alpha = (
                lr
                * adam_lr_ratio
                * jnp.sqrt(1 - jnp.power(jnp.asarray(beta_2, g.dtype), t))
                / (1 - jnp.power(jnp.asarray(beta_1, g.dtype), t))
            )
            m = state.momentum + (g - state.momentum) * (1 - beta_1)
            g2 = _squares(g, extra_args)  # (per slice for IndexedSlices, as Keras)
            v = state.velocity + (g2 - state.velocity) * (1 - beta_2)
            delta = -(m * alpha) / (jnp.sqrt(v) + eps)
            return delta, _MuonAdamState(state.count + 1, m, v)
        m = state.momentum + (g + state.momentum * (momentum - 1))
        direction = g + momentum * m if nesterov else m
        step = lr * newton_schulz5(direction, ns_steps, *abc)
        if rms_rate is not None:
            step = step * jnp.sqrt(float(max(g.shape[0], g.shape[1]))) * rms_rate
        return -step.astype(g.dtype), _MuonState(m)

    return optax.GradientTransformationExtraArgs(init, update)


class Muon(Optimizer):
    """Muon (orthogonalized momentum, Jordan et al. 2024) with Keras 3's rule,
    arguments and defaults.

    2-D variables take the Muon step; the others, those whose path contains
    "embedding" (with `exclude_embeddings`) and those whose path matches a
    regular expression of `exclude_layers` take Keras's AdamW step with
    `learning_rate * adam_lr_ratio` and `adam_weight_decay`. Like Keras,
    `adam_weight_decay` applies even when `weight_decay` is None.
    """

    _LR_MODE = "arg"

    def __init__(
        self,
        learning_rate=0.001,
        adam_beta_1=0.9,
        adam_beta_2=0.999,
        adam_weight_decay=0.004,
        epsilon=1e-7,
        weight_decay=0.004,
        exclude_layers=None,
        exclude_embeddings=True,
        muon_a=3.4445,
        muon_b=-4.7750,
        muon_c=2.0315,
        adam_lr_ratio=1,
        momentum=0.95,
        ns_steps=5,
        nesterov=True,
        rms_rate=0.2,
        **kwargs,
    ):
        self.adam_beta_1, self.adam_beta_2 = adam_beta_1, adam_beta_2
        self.epsilon = epsilon
        self.muon_a, self.muon_b, self.muon_c = muon_a, muon_b, muon_c
        self.adam_lr_ratio, self.momentum = adam_lr_ratio, momentum
        self.ns_steps, self.nesterov = ns_steps, nesterov
        self.exclude_embeddings = exclude_embeddings
        self.exclude_layers = exclude_layers or []
        self.adam_weight_decay = adam_weight_decay
        self.rms_rate = rms_rate
        self._adam_init = False
        super().__init__(
            learning_rate=learning_rate, weight_decay=weight_decay, **kwargs
        )

    def _should_use_adamw(self, variable) -> bool:
        """Keras's routing: not 2-D, an embedding, or an excluded layer."""
        if len(variable.shape) != 2:
            return True
        path = getattr(variable, "path", variable.name.split(":")[0])
        if self.exclude_embeddings and "embedding" in path.lower():
            return True
        return any(re.search(keyword, path) for keyword in self.exclude_layers)

    def build(self, var_list) -> None:
        """Slots per variable as Keras creates them: `momentum`, plus `velocity`
        for the variables on the AdamW step."""
        for var in var_list:
            self._adam_init = self._should_use_adamw(var)
            super().build([var])
        self._adam_init = False

    def _ordered_slots(self, var_list) -> list:
        names = ("momentum", "velocity")
        return [
            (slot, names[i])
            for var in var_list
            for i, slot in enumerate(self._slots[id(var)][2])
        ]

    def _decays(self, var):
        """Keras's Muon: `adam_weight_decay` or `weight_decay` by the step the
        variable takes (a float: the base class decays by it)."""
        pattern = self._exclude_pattern
        if id(var) in self._exclude_ids or (
            pattern is not None and pattern.search(var.name) is not None
        ):
            return False
        wd = (
            self.adam_weight_decay if self._should_use_adamw(var) else self.weight_decay
        )
        return float(wd) if wd else False

    def _transform(self):
        return keras_muon(
            self._adam_init,
            self.adam_beta_1,
            self.adam_beta_2,
            self.epsilon,
            self.momentum,
            self.nesterov,
            self.ns_steps,
            (self.muon_a, self.muon_b, self.muon_c),
            self.adam_lr_ratio,
            self.rms_rate,
        )

    def _hyper(self):
        return {
            "adam_beta_1": self.adam_beta_1,
            "adam_beta_2": self.adam_beta_2,
            "epsilon": self.epsilon,
            "exclude_layers": self.exclude_layers,
            "muon_a": self.muon_a,
            "muon_b": self.muon_b,
            "muon_c": self.muon_c,
            "adam_lr_ratio": self.adam_lr_ratio,
            "momentum": self.momentum,
            "ns_steps": self.ns_steps,
            "nesterov": self.nesterov,
            "exclude_embeddings": self.exclude_embeddings,
            "adam_weight_decay": self.adam_weight_decay,
            "rms_rate": self.rms_rate,
        }


# -- schedule-free AdamW ----------------------------------------------------------
class _ScheduleFreeState(NamedTuple):
    count: jax.Array  # pyright: ignore[reportIncompatibleMethodOverride]  # (optax)
    momentum: optax.Updates  # Keras's name for z, which starts at the variable
    velocity: optax.Updates


def keras_schedule_free_adamw(b1=0.9, b2=0.999, eps=1e-8, warmup_steps=0):
    """Keras 3's schedule-free AdamW (Defazio et al., 2024) with the learning
    rate as an extra argument; gives the delta from `y` (the variable) to the
    new `y`. `init` starts `z` at zeros: the optimizer copies the variable in.
    """

    def init(params):
        return _ScheduleFreeState(
            jnp.zeros([], jnp.int32),
            jax.tree.map(jnp.zeros_like, params),
            jax.tree.map(jnp.zeros_like, params),
        )

    def update(updates, state, params=None, **extra_args):
        lr = extra_args["learning_rate"]
        g, y, z = updates, params, state.momentum
        beta_1, beta_2 = jnp.asarray(b1, g.dtype), jnp.asarray(b2, g.dtype)
        t = (state.count + 1).astype(g.dtype)
        if warmup_steps > 0:
            lr = lr * jnp.minimum(t / warmup_steps, 1.0)
        g2 = _squares(g, extra_args)  # (per slice for IndexedSlices, as Keras)
        v = state.velocity + (g2 - state.velocity) * (1 - beta_2)
        denom = jnp.sqrt(v / (1 - jnp.power(beta_2, t))) + eps
        z_new = z - lr * g / denom
        weight = 1.0 / t
        # Keras-on-TF reads its `momentum_old` after the in-place update
        # (a TF variable read is not a snapshot): `x_old` uses the new z.
        x_old = (y - (1 - beta_1) * z_new) / beta_1
        x_new = (1 - weight) * x_old + weight * z_new
        y_new = (1 - beta_1) * z_new + beta_1 * x_new
        return y_new - y, _ScheduleFreeState(state.count + 1, z_new, v)

    return optax.GradientTransformationExtraArgs(init, update)


class ScheduleFreeAdamW(Optimizer):
    """Schedule-free AdamW with Keras 3's rule, arguments and defaults (lr
    2.5e-3, eps 1e-8, optional linear `warmup_steps`). The variables hold
    Keras's `y` (the gradient point); the `momentum` slot holds `z`, which
    starts at the variable's value when the optimizer is built."""

    _LR_MODE = "arg"
    _KERAS_SLOTS = (((0, "momentum"), (1, "velocity")),)

    def __init__(
        self,
        learning_rate=0.0025,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        warmup_steps=0,
        weight_decay=None,
        **kwargs,
    ):
        self.beta_1, self.beta_2 = beta_1, beta_2
        self.epsilon, self.warmup_steps = epsilon, warmup_steps
        super().__init__(
            learning_rate=learning_rate, weight_decay=weight_decay, **kwargs
        )

    def build(self, var_list) -> None:
        new = [v for v in var_list if id(v) not in self._slots]
        super().build(var_list)
        # concrete, also while `jaxtape.function` traces (its retrace, which
        # runs with the slots built, must not find z at zeros)
        with context.paused_tapes(), creating_state():
            for var in new:
                self._slots[id(var)][2][0].assign(var.read_value())

    def _transform(self):
        return keras_schedule_free_adamw(
            self.beta_1, self.beta_2, self.epsilon, self.warmup_steps
        )

    def _hyper(self):
        return {
            "beta_1": self.beta_1,
            "beta_2": self.beta_2,
            "epsilon": self.epsilon,
            "warmup_steps": self.warmup_steps,
        }


OPTIMIZERS.add(Muon)
OPTIMIZERS.add(ScheduleFreeAdamW)


# -- OptimizerMap -------------------------------------------------------------------
class OptimizerMap(MutableMapping):
    """Keras 3's mapping from variable paths to optimizers (for
    `MultiOptimizer`): an exact key first, else the one key that `re.fullmatch`es
    the path, else `default_optimizer`. Calling it on a variable looks up
    `variable.path`.
    """

    def __init__(self, default_optimizer, optimizer_map=None):
        if not isinstance(default_optimizer, Optimizer):
            raise TypeError(
                "default_optimizer must be a Keras Optimizer instance. "
                f"Received: {default_optimizer}"
            )
        if optimizer_map is not None and not isinstance(optimizer_map, dict):
            raise TypeError(
                f"optimizer_map must be a dictionary. Received: {optimizer_map}"
            )
        self._default_optimizer = default_optimizer
        self._optimizer_map = optimizer_map or {}

    @property
    def default_optimizer(self):
        return self._default_optimizer

    def __getitem__(self, key):
        if key in self._optimizer_map:
            return self._optimizer_map[key]
        matching = [p for p in self._optimizer_map if re.fullmatch(p, key)]
        if len(matching) > 1:
            raise ValueError(f"Multiple optimizers assigned to variable {key}.")
        if matching:
            return self._optimizer_map[matching[0]]
        return self.default_optimizer

    def __setitem__(self, key, optimizer):
        if key in self._optimizer_map:
            raise ValueError(
                f"'{key}' already exists in the OptimizerMap with value "
                f"{self._optimizer_map[key]}. Please make sure to not use "
                "duplicated keys."
            )
        if not isinstance(key, str):
            raise ValueError(f"key must be a string. Received: {key}")
        if not isinstance(optimizer, Optimizer):
            raise ValueError(
                f"optimizer must be a Keras Optimizer instance. Received: {optimizer}"
            )
        if type(optimizer).__name__ == "LossScaleOptimizer":
            raise ValueError("optimizer cannot be LossScaleOptimizer.")
        if isinstance(optimizer, MultiOptimizer):
            raise ValueError("optimizer cannot be MultiOptimizer.")
        self._optimizer_map[key] = optimizer

    def __delitem__(self, key):
        del self._optimizer_map[key]

    def __len__(self):
        return len(self._optimizer_map)

    def __iter__(self):
        return iter(self._optimizer_map)

    def __call__(self, variable):
        return self[getattr(variable, "path", variable.name.split(":")[0])]

    def get_config(self):
        return {
            "default_optimizer": _base.serialize(self._default_optimizer),
            "optimizer_map": {
                k: _base.serialize(v) for k, v in self._optimizer_map.items()
            },
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        default = _base.deserialize(config["default_optimizer"], custom_objects)
        mapping = {
            k: _base.deserialize(v, custom_objects)
            for k, v in config["optimizer_map"].items()
        }
        return cls(default, mapping)


# -- MultiOptimizer -----------------------------------------------------------------
class MultiOptimizer(Optimizer):
    """Keras 3's `MultiOptimizer`: each variable is updated by the optimizer
    that `optimizer_map` (an `OptimizerMap`, or a callable `variable ->
    optimizer`) gives it, each sub-optimizer with its own state, step counter
    and learning rate. `loss_scale_factor` is passed on to the sub-optimizers
    (each divides its gradients by it); the MultiOptimizer's `iterations`
    counts its own updates. Its `variables` are its own step counter and
    (unused) learning rate, then each sub-optimizer's, as Keras.
    """

    def __init__(self, optimizer_map, loss_scale_factor=None, name=None):
        self._inner: list = []
        super().__init__(
            learning_rate=0.0, loss_scale_factor=loss_scale_factor, name=name
        )
        self._optimizer_map = optimizer_map
        self._var_to_index: dict = {}
        values = getattr(optimizer_map, "values", None)
        for opt in list(values()) if values is not None else []:
            self._adopt(opt)
        default = getattr(optimizer_map, "default_optimizer", None)
        if default is not None:
            self._adopt(default)

    def _adopt(self, opt) -> int:
        if not any(opt is o for o in self._inner):
            opt.loss_scale_factor = self.loss_scale_factor
            self._inner.append(opt)
        return next(i for i, o in enumerate(self._inner) if o is opt)

    @property
    def optimizers(self) -> list:
        return self._inner

    @property
    def loss_scale_factor(self):
        return self.__dict__.get("_loss_scale_factor")

    @loss_scale_factor.setter
    def loss_scale_factor(self, value):
        self.__dict__["_loss_scale_factor"] = value
        for opt in self.__dict__.get("_inner", ()):
            opt.loss_scale_factor = value

    @property
    def learning_rate(self):
        raise AttributeError(
            "Learning rate cannot be accessed on a MultiOptimizer. Access the "
            "learning rate on the individual sub-optimizers instead."
        )

    @learning_rate.setter
    def learning_rate(self, value):
        raise AttributeError(
            "Learning rate cannot be set on a MultiOptimizer. Set the learning "
            "rate on the individual sub-optimizers instead."
        )

    lr = learning_rate

    @property
    def variables(self) -> list:
        out = [self._iterations, self._learning_rate]
        for opt in self._inner:
            out += opt.variables
        return out

    def build(self, var_list) -> None:
        """Routes each variable to its optimizer and builds them (once, as
        Keras: a MultiOptimizer serves one list of variables)."""
        if self._built:
            return
        groups: dict = {}
        for var in var_list:
            opt = self._optimizer_map(var)
            if not isinstance(opt, Optimizer):
                raise ValueError(
                    f"Optimizer for variable {var} is not an Optimizer instance."
                )
            if type(opt).__name__ == "LossScaleOptimizer":
                raise ValueError(
                    "LossScaleOptimizer cannot be used inside an MultiOptimizer."
                )
            if isinstance(opt, MultiOptimizer):
                raise ValueError(
                    "MultiOptimizer cannot be used inside an MultiOptimizer."
                )
            index = self._adopt(opt)
            self._var_to_index[id(var)] = index
            groups.setdefault(index, []).append(var)
        for index, variables in groups.items():
            self._inner[index].build(variables)
        self._built = True

    def _apply(self, kept) -> None:
        variables = [v for _, v in kept]
        if not self._built:
            self.build(variables)
        if any(id(v) not in self._var_to_index for v in variables):
            raise ValueError(
                "Gradients must match trainable variables one-to-one. Received "
                f"{len(variables)} gradients and {len(self._var_to_index)} "
                "variables."
            )
        groups: dict = {}
        for pair in kept:
            groups.setdefault(self._var_to_index[id(pair[1])], []).append(pair)
        for index, opt in enumerate(self._inner):
            if index in groups:
                opt._apply(groups[index])
        self._iterations.assign_add(np.int64(1))

    def finalize_variable_values(self, var_list) -> None:
        groups: dict = {}
        for var in var_list:
            groups.setdefault(self._var_to_index[id(var)], []).append(var)
        for index, variables in groups.items():
            self._inner[index].finalize_variable_values(variables)

    def get_config(self) -> dict:
        mapping = self._optimizer_map
        if isinstance(mapping, OptimizerMap):
            entry = {
                "module": "keras.optimizers",
                "class_name": "OptimizerMap",
                "config": mapping.get_config(),
                "registered_name": None,
            }
        else:  # a function: found again by its registered name, as Keras
            entry = {
                "module": "builtins",
                "class_name": "function",
                "config": registry.get_registered_name(mapping),
                "registered_name": "function",
            }
        return {
            "optimizer_map": entry,
            "loss_scale_factor": self.loss_scale_factor,
            "name": self.name,
        }

    @classmethod
    def from_config(cls, cfg, custom_objects=None):
        cfg = dict(cfg)
        entry = cfg["optimizer_map"]
        if isinstance(entry, dict) and entry.get("class_name") == "OptimizerMap":
            cfg["optimizer_map"] = OptimizerMap.from_config(
                entry["config"], custom_objects
            )
        elif isinstance(entry, dict):
            found = registry.get_registered_object(entry["config"], custom_objects)
            if found is None:
                raise TypeError(
                    f"Could not locate function '{entry['config']}'. Register it "
                    "with `keras.saving.register_keras_serializable()` or pass it "
                    "in `custom_objects`."
                )
            cfg["optimizer_map"] = found
        return cls(**cfg)


OPTIMIZERS.add(MultiOptimizer)


# -- keras.optimizers.legacy --------------------------------------------------------
class LegacyOptimizerWarning:
    """Keras 3's stand-in for every `keras.optimizers.legacy` name: building one
    raises Keras's ImportError (tf.keras 2.21 is Keras 3)."""

    def __init__(self, *args, **kwargs):
        del args, kwargs
        raise ImportError(
            "`keras.optimizers.legacy` is not supported in Keras 3. When using "
            "`tf.keras`, to continue using a `tf.keras.optimizers.legacy` "
            "optimizer, you can install the `tf_keras` package (Keras 2) and "
            "set the environment variable `TF_USE_LEGACY_KERAS=True` to "
            "configure TensorFlow to use `tf_keras` when accessing `tf.keras`."
        )
