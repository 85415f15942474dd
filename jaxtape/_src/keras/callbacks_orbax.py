"""Keras's `OrbaxCheckpoint` callback, and reading its checkpoints back. Layer L5.

The checkpoints are Keras 3.15's, written with the same library calls
(orbax-checkpoint's v1 `training.Checkpointer`), so tf.keras and jaxtape
read each other's: `directory/<step>/` holds the checkpointable `pytree`
(the model's state tree, Keras's `Model.get_state_tree()`: the sections
`trainable_variables`, `non_trainable_variables`, `optimizer_variables` and
`metrics_variables`, each nested by variable path, e.g.
`{"sequential": {"dense": {"kernel": ...}}}`) and, unless
`save_weights_only`, `model_config` (`{"config": <the model's JSON>}`, with
the compile configuration).

Atomicity is orbax's: a step is written under `<step>.orbax-checkpoint-tmp`
and renamed to `<step>` when complete (with a `commit_success.txt` where
renames are not atomic), and readers list only finished steps, so a save
killed halfway leaves the earlier checkpoints loadable.
"""

from __future__ import annotations

import json
import os
import typing
import warnings

import numpy as np

from jaxtape._src.keras import saving
from jaxtape._src.keras.callbacks import _MonitorCallback

_SECTIONS = (
    "trainable_variables",
    "non_trainable_variables",
    "optimizer_variables",
    "metrics_variables",
)


def _ocp():
    from orbax.checkpoint import v1  # lazy: orbax-checkpoint costs 2 s at import

    return v1


# -- the state tree (Keras's `Model.get_state_tree` / `set_state_tree`) ----------------
def _path(variable) -> str:
    """Keras's `Variable.path` (`sequential/dense/kernel`, `adam/iteration`)."""
    path = getattr(variable, "path", None)
    if path:
        return path
    name = variable.name
    return name.rsplit(":", 1)[0] if ":" in name else name


def _section_variables(model) -> dict:
    """Each state-tree section's variables, in Keras's order."""
    optimizer = getattr(model, "optimizer", None)
    metrics = [v for m in getattr(model, "metrics", None) or () for v in m.variables]
    return {
        "trainable_variables": list(model.trainable_variables),
        "non_trainable_variables": list(model.non_trainable_variables),
        "optimizer_variables": [] if optimizer is None else list(optimizer.variables),
        "metrics_variables": metrics,
    }


def _nested(variables) -> dict:
    """Keras's `_create_nested_dict`: values (NumPy copies) nested by path."""
    out: dict = {}
    seen = set()
    for v in variables:
        path = _path(v)
        if path in seen:
            raise ValueError(
                "The following variable path is found twice in the model: "
                f"'{path}'. `get_state_tree()` can only be called when all variable "
                "paths are unique. Make sure to give unique names to your layers "
                "(and other objects)."
            )
        seen.add(path)
        *parents, leaf = path.split("/")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = np.array(v.numpy())  # a copy: an async save reads it later
    return out


def state_tree(model) -> dict:
    """The model's state as Keras's `get_state_tree(value_format="numpy_array")`."""
    return {k: _nested(vs) for k, vs in _section_variables(model).items()}


def _flat(tree: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}/"))
        else:
            out[prefix + key] = value
    return out


def _renamed_optimizer(saved: dict, variables) -> dict:
    """The saved optimizer's state under the live optimizer's name (`adam` was
    saved, a new optimizer is `adam_1`); Keras restores nothing then."""
    roots = {_path(v).split("/", 1)[0] for v in variables}
    if len(saved) == 1 and len(roots) == 1:
        return {roots.pop(): next(iter(saved.values()))}
    return saved


def set_state_tree(model, tree: dict, source: str, stacklevel: int = 2) -> None:
    """Assigns `tree` (a state tree) to the model's variables by path.

    Every shape is checked before anything is assigned. The model's weights
    must all be in the checkpoint (Keras silently skips those that are not,
    e.g. after its layers were renamed `dense_1`); optimizer and metric
    variables without a saved value keep theirs, with a warning (the saved
    optimizer's name need not be the live one's).
    """
    unknown = set(tree) - set(_SECTIONS)
    if unknown:
        raise ValueError(f"Unknown variable name: {sorted(unknown)[0]}")
    optimizer = getattr(model, "optimizer", None)
    sections = _section_variables(model)
    if optimizer is not None and "optimizer_variables" in tree:
        saved = _flat(
            _renamed_optimizer(
                tree["optimizer_variables"], sections["optimizer_variables"]
            )
        )
        if set(saved) - {_path(v) for v in sections["optimizer_variables"]}:
            optimizer.build(model.trainable_variables)  # slots were saved: make them
            sections = _section_variables(model)
    weight_values = {}  # a layer frozen (or unfrozen) since: its weights moved
    for section in _SECTIONS[:2]:
        weight_values.update(_flat(tree.get(section, {})))
    staged, unmatched = [], []
    for section, saved in tree.items():
        if section == "optimizer_variables":
            saved = _renamed_optimizer(saved, sections[section])
        values = weight_values if section in _SECTIONS[:2] else _flat(saved)
        for variable in sections[section]:
            path = _path(variable)
            if path not in values:
                unmatched.append((section, path))
                continue
            value = np.asarray(values[path])
            if tuple(value.shape) != tuple(variable.shape):
                raise ValueError(
                    f"Cannot load {source}: the saved value of {path!r} has shape "
                    f"{value.shape}, the model's variable {tuple(variable.shape)}. "
                    "Build the model as it was when the checkpoint was saved."
                )
            staged.append((variable, value.astype(variable.dtype.as_numpy_dtype)))
    weights = [p for s, p in unmatched if s in _SECTIONS[:2]]
    if weights:
        saved = sorted(weight_values)
        raise ValueError(
            f"Cannot load {source}: it has no value for the model's variables "
            f"{weights[:5]} (saved: {saved[:5]}{' ...' if len(saved) > 5 else ''}). "
            "Weights are matched by path: give the layers (and the model) the names "
            "they had when saved, or rebuild the model with "
            "`keras.saving.load_model(directory)`."
        )
    # An optimizer saved before its first step has no slots: none are missing.
    saved_slots = any(
        not p.endswith(("/iteration", "/learning_rate"))
        for p in _flat(tree.get("optimizer_variables", {}))
    )
    others = [
        p
        for s, p in unmatched
        if s in tree and (saved_slots or s != "optimizer_variables")
    ]
    if others:
        warnings.warn(
            f"{source} has no value for {others}; they keep their values.",
            stacklevel=stacklevel + 1,
        )
    for variable, value in staged:
        variable.assign(value)


# -- reading checkpoints back (`model.load_weights`, `keras.saving.load_model`) -------
def is_orbax_checkpoint(filepath) -> bool:
    """Keras's test: a directory holding orbax files or numbered step
    directories; a step directory (`_CHECKPOINT_METADATA`) too, which Keras's
    test misses."""
    try:
        contents = os.listdir(filepath)
    except OSError:
        return False
    markers = {
        "orbax.checkpoint",
        "pytree.orbax-checkpoint",
        "checkpoint_metadata",
        "_CHECKPOINT_METADATA",
    }
    if not markers.isdisjoint(contents):
        return True
    return any(
        ".orbax-checkpoint-tmp" in item
        or (item.isdigit() and os.path.isdir(os.path.join(filepath, item)))
        for item in contents
    )


def _not_supported(filepath) -> ValueError:
    return ValueError(
        f"File format not supported: filepath={filepath}. Keras 3 only supports V3 "
        "`.keras` files, `.weights.h5` files, legacy H5 format files (`.h5` "
        "extension), or Orbax checkpoints."
    )


def _latest_step(directory: str) -> int:
    latest = _ocp().training.Checkpointer(directory=directory).latest
    if latest is None:
        raise ValueError(f"No valid checkpoints found in {directory}")
    return latest.step


def _step_path(filepath: str) -> str:
    """A step directory: `filepath` itself, or the latest step under it."""
    has_steps = any(
        item.isdigit() and os.path.isdir(os.path.join(filepath, item))
        for item in os.listdir(filepath)
    )
    if has_steps:
        return os.path.join(filepath, str(_latest_step(filepath)))
    return filepath


def load_weights(model, filepath) -> None:
    """`model.load_weights(directory)`: the latest step's state (or that of a
    step directory `directory/<step>`), as Keras reads it."""
    filepath = os.fspath(filepath)
    if not is_orbax_checkpoint(filepath):
        raise _not_supported(filepath)
    path = _step_path(filepath)
    ocp = _ocp()
    with ocp.Context():
        tree = ocp.load_checkpointables(path, {"pytree": None})["pytree"]
    set_state_tree(model, tree, f"the Orbax checkpoint {path}", stacklevel=4)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):  # noqa: A002
    """`keras.saving.load_model(directory)`: the model rebuilt from the latest
    step's `model_config`, with that step's state, as Keras loads it."""
    filepath = os.fspath(filepath)
    if not is_orbax_checkpoint(filepath):
        raise _not_supported(filepath)
    step = _latest_step(filepath)
    ocp = _ocp()
    checkpointer = ocp.training.Checkpointer(directory=filepath)
    with ocp.Context():
        saved = set(checkpointer.checkpointables_metadata(step).metadata.keys())
        if "model_config" not in saved:
            raise ValueError(
                "Checkpoint does not contain model configuration. This checkpoint "
                "may have been saved with save_weights_only=True."
            )
        if "assets" in saved:
            raise NotImplementedError(
                f"The Orbax checkpoint {filepath}/{step} holds assets (e.g. a "
                "lookup layer's vocabulary file), which jaxtape does not read."
            )
        loaded = checkpointer.load_checkpointables(step, {"model_config": None})
        config = json.loads(loaded["model_config"]["config"])
        model = saving.model_from_config(config, custom_objects, compile, safe_mode)
        tree = checkpointer.load_checkpointables(step, {"pytree": None})["pytree"]
    if not (compile and config.get("compile_config")):
        tree = {k: v for k, v in tree.items() if not k.startswith(("opt", "metr"))}
    set_state_tree(model, tree, f"the Orbax checkpoint {filepath}/{step}", 3)
    return model


# -- the callback ---------------------------------------------------------------------
def _scalar(value) -> float:
    return float(np.asarray(getattr(value, "_value", value)))


class OrbaxCheckpoint(_MonitorCallback):
    """Saves the model's state with Orbax every epoch or every `save_freq`
    batches, optionally only when `monitor` improved (Keras 3.15's callback).

    Each save is the step directory `directory/<step>`: the epoch index
    (0-based) with `save_freq='epoch'`, otherwise the number of batches
    trained so far (counted on from `model.optimizer.iterations`, so a
    reloaded model continues the numbering). It holds the model's weights,
    and unless `save_weights_only` its optimizer state, metric state and
    config; `max_to_keep` (None: all) recent steps are kept. With
    `save_on_background` the saves run asynchronously; `on_train_end` waits
    for them. Read a checkpoint back with `model.load_weights(directory)` (the
    latest step, or pass `directory/<step>`) or
    `keras.saving.load_model(directory)`; tf.keras reads them too.

    >>> import tempfile
    >>> keras = jaxtape.keras
    >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    >>> model.compile("sgd", "mse")
    >>> directory = tempfile.mkdtemp()
    >>> checkpoint = keras.callbacks.OrbaxCheckpoint(directory, max_to_keep=None)
    >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0,
    ...               callbacks=[checkpoint])
    >>> sorted(os.listdir(directory))
    ['0', '1']
    >>> model.load_weights(directory)

    Args:
      directory: Where the step directories go.
      monitor: The log entry `save_best_only` compares (`'val_loss'`).
      verbose: Accepted as Keras accepts it; Keras's callback prints nothing.
      save_best_only: Save only when `monitor` improved on the best so far.
      mode: `'auto'`, `'min'` or `'max'`: whether lower or higher is better.
      save_freq: `'epoch'` or an integer number of batches.
      initial_value_threshold: The value `monitor` must beat first.
      max_to_keep: How many recent checkpoints to keep (None: all).
      save_on_background: Save asynchronously.
      save_weights_only: Save the weights only (no optimizer, metrics or config).

    Differences from Keras: an error of a background save is raised at
    `on_train_end` (Keras drops it); a step orbax's policy skips (one not
    after the directory's latest step) warns (Keras is silent);
    `save_best_only` with a batch `save_freq` works before the first epoch
    ends (Keras raises TypeError there); assets (lookup-layer vocabularies)
    are not saved; single host only. Reading back: a step directory loads
    (Keras refuses it as an unsupported format); a model whose weights are not
    all in the checkpoint (other layer names) raises ValueError where Keras
    silently restores nothing; the optimizer state loads into an optimizer of
    another name (`adam_1`), which Keras skips.
    """

    def __init__(
        self,
        directory,
        monitor="val_loss",
        verbose=0,
        save_best_only=False,
        mode="auto",
        save_freq="epoch",
        initial_value_threshold=None,
        max_to_keep=1,
        save_on_background=True,
        save_weights_only=False,
    ):
        super().__init__(monitor, mode, initial_value_threshold)
        self.directory = directory
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_freq = save_freq
        self.max_to_keep = max_to_keep
        self.save_on_background = save_on_background
        self.save_weights_only = save_weights_only
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = None
        self._total_batches_seen = 0
        self._async_futures = []
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(
                f"Unrecognized save_freq: {save_freq}. Expected save_freq are "
                "'epoch' or integer values"
            )
        ocp = _ocp()
        training = ocp.training
        # Keras's policies: keep the latest `max_to_keep`, save at every step
        # asked for. (Any: orbax's policy classes miss its own protocols' types.)
        keep: typing.Any = None
        if max_to_keep is not None:
            keep = training.preservation_policies.LatestN(max_to_keep)
        every: typing.Any = training.save_decision_policies.FixedIntervalPolicy(1)
        self.checkpointer = training.Checkpointer(
            directory=directory, preservation_policy=keep, save_decision_policy=every
        )

    def set_model(self, model):
        super().set_model(model)
        optimizer = getattr(model, "optimizer", None)
        if optimizer is not None:  # a reloaded model continues the numbering
            self._total_batches_seen = int(np.asarray(optimizer.iterations))

    def is_multihost_enabled(self) -> bool:
        """Keras's multi-host check: jaxtape saves from a single host."""
        return False

    def is_primary_host(self) -> bool:
        return True

    def _should_save_on_batch(self, batch) -> bool:
        if self.save_freq == "epoch":
            return False
        if self._last_batch_seen is None or batch <= self._last_batch_seen:
            added = batch + 1  # a new epoch
        else:
            added = batch - self._last_batch_seen
        self._batches_seen_since_last_saving += added
        self._last_batch_seen = batch
        self._total_batches_seen += added
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            return True
        return False

    def _improved(self, logs, where: str) -> bool:
        """`save_best_only`: whether `monitor` beat the best (then it is the best)."""
        if not self.save_best_only:
            return True
        current = (logs or {}).get(self.monitor)
        if current is None:
            warnings.warn(
                f"Can save best model only with {self.monitor} available, skipping "
                f"save at {where}.",
                stacklevel=3,
            )
            return False
        current = _scalar(current)
        if not self._is_improvement(current, self.best):
            return False
        self.best = current
        return True

    def _save_checkpoint(self, step: int) -> None:
        if not self.checkpointer.should_save(step):  # Keras skips these silently
            latest = self.checkpointer.latest
            warnings.warn(
                f"OrbaxCheckpoint did not save step {step}: orbax saves only steps "
                f"after the latest one in {self.directory} "
                f"({None if latest is None else latest.step}). Save to a new "
                "directory, or delete the old checkpoints first.",
                stacklevel=3,
            )
            return
        model = self._attached_model()
        tree = state_tree(model)
        if self.save_weights_only:
            tree = {k: tree[k] for k in _SECTIONS[:2]}
        payload: dict = {"pytree": tree}
        if not self.save_weights_only:
            try:
                config = saving.model_config(model)
            except NotImplementedError as e:
                raise NotImplementedError(
                    f"OrbaxCheckpoint cannot save the config of {model.name!r} ({e}); "
                    "pass `save_weights_only=True` and rebuild the model in code "
                    "before `load_weights`."
                ) from None
            compile_config = getattr(model, "get_compile_config", dict)()
            if compile_config:
                config["compile_config"] = compile_config
            payload["model_config"] = {"config": json.dumps(config)}
        ocp = _ocp()
        with ocp.Context():
            if self.save_on_background:
                future = self.checkpointer.save_checkpointables_async(step, payload)
                self._async_futures.append(future)
            else:
                self.checkpointer.save_checkpointables(step, payload)

    def on_train_batch_end(self, batch, logs=None):
        if self._should_save_on_batch(batch) and self._improved(logs, f"batch {batch}"):
            self._save_checkpoint(self._total_batches_seen)

    def on_epoch_end(self, epoch, logs=None):
        if self._sign is None:
            self._set_monitor_op()
        if self.save_freq == "epoch" and self._improved(logs, f"epoch {epoch}"):
            self._save_checkpoint(epoch)

    def on_train_end(self, logs=None):
        """Waits for the background saves (raising the first error) and closes."""
        try:
            self.wait_until_finished()
        finally:
            self.checkpointer.close()

    def wait_until_finished(self) -> None:
        """Blocks until every background save has completed."""
        futures, self._async_futures = self._async_futures, []
        for future in futures:
            future.result()
        self.checkpointer.wait()
