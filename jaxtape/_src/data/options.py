"""`jaxtape.data.Options`: TF's dataset options, recorded and merged.

Layer L4. The options are kept with a dataset (`with_options`, `options()`)
and merged as TF merges them; jaxtape's pipelines read none of them (their
order is always the deterministic one, their threads are sized by
`num_parallel_calls`), so setting one never changes results.
"""

from __future__ import annotations

import enum


class AutoShardPolicy(enum.IntEnum):
    """How a distributed dataset is sharded (TF's enum; recorded only)."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class ExternalStatePolicy(enum.Enum):
    """What to do with external state when serializing (TF's enum)."""

    WARN = 0
    IGNORE = 1
    FAIL = 2


class AutotuneAlgorithm(enum.Enum):
    """TF's autotuning algorithms (recorded only)."""

    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


class _OptionsBase:
    """A fixed set of attributes, None until set; unknown names raise as TF."""

    _fields: dict = {}

    def __init__(self):
        for key, default in self._fields.items():
            object.__setattr__(self, key, default() if callable(default) else default)

    def __setattr__(self, key, value):
        if key not in self._fields:
            raise AttributeError(
                f"Cannot set the property {key} on {type(self).__name__}."
            )
        object.__setattr__(self, key, value)

    def __eq__(self, other):
        return type(self) is type(other) and all(
            getattr(self, k) == getattr(other, k) for k in self._fields
        )

    __hash__ = None  # type: ignore[assignment]

    def _merged(self, other):
        out = type(self)()
        for key in self._fields:
            mine, theirs = getattr(self, key), getattr(other, key)
            if isinstance(mine, _OptionsBase):
                value = mine._merged(theirs)
            else:
                value = mine if theirs is None else theirs
            object.__setattr__(out, key, value)
        return out

    def __repr__(self):
        set_ = {k: getattr(self, k) for k in self._fields}
        return f"{type(self).__name__}({set_})"


class ThreadingOptions(_OptionsBase):
    """TF's `tf.data.ThreadingOptions`."""

    _fields = {"max_intra_op_parallelism": None, "private_threadpool_size": None}


class OptimizationOptions(_OptionsBase):
    """TF's `tf.data.experimental.OptimizationOptions` (graph rewrites: none here)."""

    _fields = dict.fromkeys(
        (
            "apply_default_optimizations filter_fusion filter_parallelization "
            "inject_prefetch map_and_batch_fusion map_and_filter_fusion map_fusion "
            "map_parallelization noop_elimination parallel_batch "
            "seq_interleave_prefetch shuffle_and_repeat_fusion"
        ).split()
    )


class AutotuneOptions(_OptionsBase):
    """TF's `tf.data.experimental.AutotuneOptions`."""

    _fields = dict.fromkeys(
        "autotune_algorithm cpu_budget enabled initial_parallelism min_parallelism "
        "ram_budget".split()
    )


class DistributeOptions(_OptionsBase):
    """TF's `tf.data.experimental.DistributeOptions`."""

    _fields = {"auto_shard_policy": AutoShardPolicy.AUTO, "num_devices": None}


class Options(_OptionsBase):
    """Options of a dataset (TF's `tf.data.Options`), set with `with_options`.

    >>> options = jaxtape.data.Options()
    >>> options.deterministic = False
    >>> jaxtape.data.Dataset.range(3).with_options(options).options().deterministic
    False

    Differences from TensorFlow: the options are recorded and merged but do
    not change how jaxtape runs a pipeline (always in TF's deterministic order).
    """

    _fields = {
        "autotune": AutotuneOptions,
        "dataset_name": None,
        "deterministic": None,
        "experimental_distribute": DistributeOptions,
        "experimental_external_state_policy": None,
        "experimental_optimization": OptimizationOptions,
        "experimental_slack": None,
        "experimental_symbolic_checkpoint": None,
        "experimental_warm_start": None,
        "framework_type": None,
        "threading": ThreadingOptions,
    }

    # TF's older names for two of them.
    experimental_deterministic = property(
        lambda self: self.deterministic,
        lambda self, v: setattr(self, "deterministic", v),
    )
    experimental_threading = property(
        lambda self: self.threading, lambda self, v: setattr(self, "threading", v)
    )

    def __setattr__(self, key, value):
        if key in ("experimental_deterministic", "experimental_threading"):
            object.__setattr__(self, key, value)  # the property's setter
            return
        super().__setattr__(key, value)

    def merge(self, options: Options) -> Options:
        """A new Options: `options`' set values over this one's (TF's rule)."""
        if not isinstance(options, Options):
            raise TypeError(f"Options.merge expects Options, got {options!r}.")
        return self._merged(options)
