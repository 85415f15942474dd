"""Keras 3's process-wide switches of `keras.config` that live nowhere else. Layer L5.

`keras.config` also re-exports floatx/epsilon/image_data_format (`core.config`),
the dtype policy (`keras.mixed_precision`) and interactive logging
(`keras.progbar`); this module holds the rest: the backend name, the `fit`
caps (`max_epochs`, `max_steps_per_epoch`, read by `keras.training`), the
safe-mode switch of `.keras` loading (read by `keras.saving`), and the
traceback filtering, flash attention and NNX flags. Imports nothing from
jaxtape.
"""

from __future__ import annotations

import os
import warnings

_BACKENDS = ("tensorflow", "jax", "torch", "numpy", "openvino")


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    return None if value is None else int(value)


# Keras reads the caps from the environment once, at import.
_STATE: dict = {
    "max_epochs": _env_int("KERAS_MAX_EPOCHS"),
    "max_steps_per_epoch": _env_int("KERAS_MAX_STEPS_PER_EPOCH"),
    "safe_mode_saving": None,  # None: each load's `safe_mode`; False: unsafe
    "traceback_filtering": True,
    "flash_attention": None,  # Keras's values: None (auto) or False
}


def backend() -> str:
    """The backend name user code sees: `'tensorflow'`, as under tf.keras.

    jaxtape runs on JAX, but it is a TensorFlow: code that branches on
    `keras.config.backend() == "tensorflow"` calls `tf` ops, which jaxtape
    provides, while its `"jax"` branches would expect Keras's JAX backend
    (stateless layers, `jax.Array` values).
    """
    return "tensorflow"


def set_backend(backend: str) -> None:
    """Keras's `set_backend`: `'tensorflow'` is the backend jaxtape is (nothing
    to do); another of Keras's backends raises NotImplementedError, an
    unknown name ValueError (Keras's message).

    Differences from Keras: Keras reloads its modules under the new backend;
    jaxtape cannot become another framework.
    """
    if backend not in _BACKENDS:
        raise ValueError(
            "Available backends are ('tensorflow', 'jax', 'torch', 'numpy' and "
            f"'openvino'). Received: backend={backend}"
        )
    if backend != "tensorflow":
        raise NotImplementedError(
            f"keras.config.set_backend({backend!r}): jaxtape is a TensorFlow "
            "(`keras.config.backend()` is 'tensorflow') and cannot switch to "
            f"Keras's {backend!r} backend. Use Keras itself for that backend."
        )


def max_epochs() -> int | None:
    """The cap on `fit`'s epochs (`set_max_epochs`, `$KERAS_MAX_EPOCHS`), or None."""
    return _STATE["max_epochs"]


def set_max_epochs(max_epochs: int | None) -> None:
    """Caps the epochs of every `fit` (for debugging), as Keras: `fit` warns
    `Limiting epochs to N` and stops after epoch N. None removes the cap."""
    _STATE["max_epochs"] = max_epochs


def max_steps_per_epoch() -> int | None:
    """The cap on the steps of an epoch of fit/evaluate/predict, or None."""
    return _STATE["max_steps_per_epoch"]


def set_max_steps_per_epoch(max_steps_per_epoch: int | None) -> None:
    """Caps the steps of each epoch of `fit`, `evaluate` and `predict` (for
    debugging), as Keras: each warns `Limiting steps_per_epoch to N`."""
    _STATE["max_steps_per_epoch"] = max_steps_per_epoch


def capped_epochs(epochs: int) -> int:
    """`epochs` under `max_epochs()`, with Keras's warning when it cuts."""
    cap = _STATE["max_epochs"]
    if cap and cap < epochs:
        warnings.warn(f"Limiting epochs to {cap}", stacklevel=3)
        return cap
    return epochs


def capped_steps(steps: int | None) -> int | None:
    """`steps` (None: the whole data) under `max_steps_per_epoch()`, with
    Keras's warning when it cuts."""
    cap = _STATE["max_steps_per_epoch"]
    if cap and (not steps or cap < steps):
        warnings.warn(f"Limiting steps_per_epoch to {cap}", stacklevel=3)
        return cap
    return steps


def enable_unsafe_deserialization() -> None:
    """Lets `.keras` loading rebuild Python lambdas (`Lambda` layers), even
    with `safe_mode=True`, as Keras: only for files you trust."""
    _STATE["safe_mode_saving"] = False


def in_safe_mode() -> bool | None:
    """Keras's `in_safe_mode()`: False after `enable_unsafe_deserialization`,
    else None (each load's own `safe_mode` decides)."""
    return _STATE["safe_mode_saving"]


def enable_traceback_filtering() -> None:
    """Keras's switch (on by default). jaxtape filters no traceback frames:
    the switch is kept for code that sets or reads it."""
    _STATE["traceback_filtering"] = True


def disable_traceback_filtering() -> None:
    """Keras's switch; jaxtape's tracebacks are never filtered."""
    _STATE["traceback_filtering"] = False


def is_traceback_filtering_enabled() -> bool:
    """The switch's state (True by default, as Keras); jaxtape filters nothing."""
    return _STATE["traceback_filtering"]


def enable_flash_attention() -> None:
    """Keras's switch: attention layers may use flash attention when the
    inputs allow (the default). Sets None, as Keras ("attempt")."""
    _STATE["flash_attention"] = None


def disable_flash_attention() -> None:
    """Keras's switch: attention layers never use flash attention."""
    _STATE["flash_attention"] = False


def is_flash_attention_enabled() -> bool | None:
    """Keras's value: None (the default: used where supported) or False.

    jaxtape's attention never runs a flash kernel, so either value gives the
    same results; `MultiHeadAttention(flash_attention=True)` raises
    NotImplementedError on its own.
    """
    return _STATE["flash_attention"]


def is_nnx_enabled() -> bool:
    """False: Keras's Flax NNX integration belongs to its JAX backend."""
    return False
