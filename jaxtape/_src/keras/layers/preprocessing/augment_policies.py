"""Keras 3's composite augmentations AugMix, RandAugment and RandomColorJitter.
Layer L5.

AugMix and RandAugment hold Keras's eleven sub-layers (RandomShear, RandomTranslation,
RandomRotation, RandomBrightness, RandomColorDegeneration, RandomContrast,
RandomSharpness, RandomPosterization, Solarization, AutoContrast,
Equalization) and pick among them with keys drawn in the graph: every
candidate is computed and the drawn one selected (`_pick`), as Keras's
RandAugment does, so a compiled call picks afresh each time.
RandomColorJitter runs its colour layers in turn.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from jaxtape._src.core.dispatch import op
from jaxtape._src.keras.layers.preprocessing.augment import (
    RandomShear,
    _AugmentLayer,
    _beta,
    _cut,
    _gamma_units,
    _log_gamma,
    _split_keys,
    _value_range_list,
)
from jaxtape._src.keras.layers.preprocessing.image import (
    RandomBrightness,
    RandomContrast,
    RandomRotation,
    RandomTranslation,
    _factor_pair,
)
from jaxtape._src.keras.layers.preprocessing.image_more import (
    AutoContrast,
    Equalization,
    RandomColorDegeneration,
    RandomHue,
    RandomPosterization,
    RandomSaturation,
    RandomSharpness,
    Solarization,
)

__all__ = ["AugMix", "RandAugment", "RandomColorJitter"]


@op("AugmentPick", inputs=("index", "candidate", "current"), jit=True)
def _pick(index, candidate, current, choice):
    """`candidate` where the drawn `index` is `choice`, else `current`."""
    return jnp.where(index == choice, candidate, current)


def _sub_layers(factor, value_range, interpolation, data_format, all_ops=True):
    """Keras's sub-layers of AugMix/RandAugment for a `factor` pair, by name
    (in the order RandAugment indexes them)."""
    df = data_format
    layers = {
        "random_shear": RandomShear(factor, factor, interpolation, data_format=df),
        "random_translation": RandomTranslation(
            factor, factor, interpolation=interpolation, data_format=df
        ),
        "random_rotation": RandomRotation(
            factor, interpolation=interpolation, data_format=df
        ),
        "random_brightness": RandomBrightness(factor, value_range, data_format=df),
        "random_color_degeneration": RandomColorDegeneration(factor, value_range, df),
        "random_contrast": RandomContrast(factor, value_range, data_format=df),
        "random_sharpness": RandomSharpness(factor, value_range, df),
        "random_posterization": RandomPosterization(
            max(1, int(8 * factor[1])), value_range, df
        ),
        "solarization": Solarization(factor, factor, value_range, data_format=df),
        "auto_contrast": AutoContrast(value_range, data_format=df),
        "equalization": Equalization(value_range, data_format=df),
    }
    if not all_ops:
        for name in _COLOR_ONLY:
            del layers[name]
    return layers


_COLOR_ONLY = (
    "random_brightness",
    "random_color_degeneration",
    "random_contrast",
    "random_sharpness",
)


class _PolicyLayer(_AugmentLayer):
    _layers: list

    def _apply_one_of(self, x, index, key):
        """The sub-layer numbered `index` (a drawn scalar) applied to `x`; an
        index past the last is the identity."""
        out = x
        for i, layer in enumerate(self._layers):
            out = _pick(index, layer._augment(x, key), out, i)
        return out

    def _check_interpolation(self, interpolation):
        if interpolation not in ("nearest", "bilinear"):
            raise NotImplementedError(
                f"Unknown `interpolation` {interpolation}. Expected of one "
                "('nearest', 'bilinear')."
            )


# -- RandAugment -----------------------------------------------------------------------
@op("RandAugmentDraws", inputs=("key",), differentiable=False, jit=True)
def _rand_augment_draws(key, num_ops, num_layers):
    """The sub-layer of each step (uniform) and one key per sub-layer."""
    keys = jax.random.split(jax.random.wrap_key_data(key), num_layers + 1)
    u = jax.random.uniform(keys[0], (num_ops,), jnp.float32)
    index = jnp.minimum(jnp.floor(u * num_layers), num_layers - 1).astype(jnp.int32)
    return index, jax.random.key_data(keys[1:])


class RandAugment(_PolicyLayer):
    """RandAugment in training (Keras's `RandAugment`): `num_ops` times, one
    of the eleven sub-layers drawn at random (each with the magnitude
    `factor`, one transformation per sub-layer reused across the steps);
    identity at `training=False`.

    Differences from Keras: the random numbers differ (jax.random).
    """

    def __init__(self, value_range=(0, 255), num_ops=2, factor=0.5,
                 interpolation="bilinear", seed=None, data_format=None,
                 **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.value_range, self.num_ops = value_range, num_ops
        self.factor = _factor_pair(self, factor, (0, 1))
        self._check_interpolation(interpolation)
        self.interpolation = interpolation
        vr = _value_range_list(value_range)
        subs = _sub_layers(self.factor, vr, interpolation, self.data_format)
        self._layers = list(subs.values())

    def _augment_images(self, x, key):
        index, keys = _rand_augment_draws(key, int(self.num_ops), len(self._layers))
        for step in range(int(self.num_ops)):
            out = x
            for i, layer in enumerate(self._layers):
                out = _pick(index[step], layer._augment(x, keys[i]), out, i)
            x = out
        return x

    def get_config(self):
        return {
            **super().get_config(),
            "value_range": self.value_range,
            "num_ops": self.num_ops,
            "factor": self.factor,
            "interpolation": self.interpolation,
        }


# -- AugMix ----------------------------------------------------------------------------
@op("AugMixDraws", inputs=("key",), differentiable=False, jit=True)
def _aug_mix_draws(key, num_chains, chain_depth, num_layers, alpha):
    """Chain weights (Dirichlet(alpha)), the blend weight (Beta(alpha,
    alpha)), the op choices (one past the last: none) and their keys."""
    shape = (num_chains, chain_depth)
    keys = jax.random.split(jax.random.wrap_key_data(key), math.prod(shape) + 1)
    sizes = ((_gamma_units((num_chains,)),), (2 * _gamma_units(()),), shape)
    total = sum(math.prod(s) for s in sizes)
    uw, ub, uc = _cut(jax.random.uniform(keys[0], (total,), jnp.float32), *sizes)
    weights = jax.nn.softmax(_log_gamma(uw, alpha, (num_chains,)))
    blend = _beta(ub, alpha, ())
    choices = jnp.minimum(jnp.floor(uc * (num_layers + 1)), num_layers)
    keys = jax.random.key_data(keys[1:]).reshape(shape + (-1,))
    return weights, blend, choices.astype(jnp.int32), keys


@op("AugMixBlend", inputs=("x", "chains", "weights", "blend"), jit=True)
def _aug_mix_blend(x, chains, weights, blend, value_range):
    w = weights.astype(x.dtype).reshape((-1,) + (1,) * x.ndim)
    mixed = jnp.sum(chains * w, axis=0)
    b = blend.astype(x.dtype)
    return jnp.clip(b * x + (1 - b) * mixed, value_range[0], value_range[1])


class AugMix(_PolicyLayer):
    """AugMix in training (Keras's `AugMix`): `num_chains` chains of up to
    `chain_depth` random sub-layers (each step may be skipped), mixed by
    Dirichlet(`alpha`) weights and blended with the input by a Beta(`alpha`,
    `alpha`) weight, clipped to `value_range`. `all_ops=False` leaves out
    the brightness, colour, contrast and sharpness layers.

    Differences from Keras: the random numbers differ (jax.random); the ops
    are drawn in the graph (Keras draws them with Python's `random`, fixed
    per trace inside `tf.function`).
    """

    def __init__(self, value_range=(0, 255), num_chains=3, chain_depth=3,
                 factor=0.3, alpha=1.0, all_ops=True, interpolation="bilinear",
                 seed=None, data_format=None, **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.value_range = value_range
        self.num_chains, self.chain_depth = num_chains, chain_depth
        self.factor = _factor_pair(self, factor, (0, 1))
        self.alpha, self.all_ops = alpha, all_ops
        self._check_interpolation(interpolation)
        self.interpolation = interpolation
        vr = _value_range_list(value_range)
        subs = _sub_layers(self.factor, vr, interpolation, self.data_format, all_ops)
        self._layers = list(subs.values())

    def _augment_images(self, x, key):
        chains, depth = int(self.num_chains), int(self.chain_depth)
        weights, blend, choices, keys = _aug_mix_draws(
            key, chains, depth, len(self._layers), float(self.alpha)
        )
        outs = []
        for c in range(chains):
            y = x
            for d in range(depth):
                y = self._apply_one_of(y, choices[c, d], keys[c, d])
            outs.append(y)
        stacked = _stack(outs)
        vr = _value_range_list(self.value_range)
        return _aug_mix_blend(x, stacked, weights, blend, vr)

    def get_config(self):
        return {
            **super().get_config(),
            "value_range": self.value_range,
            "num_chains": self.num_chains,
            "chain_depth": self.chain_depth,
            "factor": self.factor,
            "alpha": self.alpha,
            "all_ops": self.all_ops,
            "interpolation": self.interpolation,
        }


@op("AugmentStack", inputs="values")
def _stack(values):
    return jnp.stack(values)


# -- RandomColorJitter -----------------------------------------------------------------
class RandomColorJitter(_AugmentLayer):
    """Random brightness, contrast, saturation and hue in turn, in training
    (Keras's `RandomColorJitter`: each factor None skips its step; each step
    is the layer of that name with the same `value_range`).

    Differences from Keras: the random numbers differ (jax.random); the
    saturation and hue steps follow this layer's `data_format`.
    """

    _GEOMETRIC = False  # boxes and masks pass through, as Keras

    def __init__(self, value_range=(0, 255), brightness_factor=None,
                 contrast_factor=None, saturation_factor=None, hue_factor=None,
                 seed=None, data_format=None, **kwargs):  # fmt: skip
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.value_range = value_range
        self.brightness_factor = brightness_factor
        self.contrast_factor = contrast_factor
        self.saturation_factor = saturation_factor
        self.hue_factor = hue_factor
        df = self.data_format
        steps = (
            (brightness_factor, lambda f: RandomBrightness(f, value_range)),
            (contrast_factor, lambda f: RandomContrast(f, value_range, data_format=df)),
            (saturation_factor, lambda f: RandomSaturation(f, value_range, df)),
            (hue_factor, lambda f: RandomHue(f, value_range, df)),
        )
        self._steps = [make(f) for f, make in steps if f is not None]

    def _augment_images(self, x, key):
        if not self._steps:
            return x
        keys = _split_keys(key, len(self._steps))
        for i, step in enumerate(self._steps):
            x = step._augment(x, keys[i])
        return x

    def get_config(self):
        return {
            **super().get_config(),
            "value_range": self.value_range,
            "brightness_factor": self.brightness_factor,
            "contrast_factor": self.contrast_factor,
            "saturation_factor": self.saturation_factor,
            "hue_factor": self.hue_factor,
        }
