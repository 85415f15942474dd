"""Keras callbacks (`keras.callbacks`) and the rich progress display. Layer L5.

`CallbackList` runs the hooks that callbacks override (hooks nobody
overrides cost nothing per step) and hands them logs as Keras 3 does:
flattened and sorted by name, epoch logs as Python floats. Batch logs keep
their Tensors (reading one syncs with the device; a callback that does not
look costs nothing), where Keras converts them to floats.
"""

from __future__ import annotations

import collections.abc
import contextlib
import csv
import json
import os
import shutil
import time
import typing
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from jaxtape._src.checkpoint import storage
from jaxtape._src.keras import saving
from jaxtape._src.keras.progbar import is_interactive_logging_enabled, print_msg
from jaxtape._src.summary import ops as summary
from jaxtape._src.summary import writer as _summary_writer

if TYPE_CHECKING:
    from jaxtape._src.keras.models import Model


def _flatten_logs(logs) -> dict:
    """Keras's log layout: nested dicts merged in, keys sorted."""
    out = {}
    for key, value in sorted((logs or {}).items()):
        if isinstance(value, dict):
            out.update(_flatten_logs(value))
        else:
            out[key] = value
    return out


def pythonify_logs(logs) -> dict:
    """Keras's `pythonify_logs`: flattened, sorted, numbers as Python floats."""
    out = {}
    for key, value in _flatten_logs(logs).items():
        try:
            value = float(np.asarray(getattr(value, "_value", value)))
        except (TypeError, ValueError):
            pass
        out[key] = value
    return out


class Callback:
    """Base class: override the `on_*` hooks you need."""

    def __init__(self) -> None:
        self.model: Model | None = None  # set by `fit`/`evaluate`/`predict`
        self.params = {}

    def set_model(self, model: Model) -> None:
        self.model = model

    def _attached_model(self) -> Model:
        """`self.model`, which `fit`/`evaluate`/`predict` set before any hook runs."""
        if self.model is None:
            raise RuntimeError(
                f"{type(self).__name__} is not attached to a model: pass it to "
                "`fit`/`evaluate`/`predict` (or call `set_model(model)`) first."
            )
        return self.model

    def set_params(self, params):
        self.params = params

    def on_batch_begin(self, batch, logs=None): ...
    def on_batch_end(self, batch, logs=None): ...
    def on_train_begin(self, logs=None): ...
    def on_train_end(self, logs=None): ...
    def on_epoch_begin(self, epoch, logs=None): ...
    def on_epoch_end(self, epoch, logs=None): ...

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)  # Keras's backwards-compatible alias

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    def on_test_begin(self, logs=None): ...
    def on_test_end(self, logs=None): ...
    def on_test_batch_begin(self, batch, logs=None): ...
    def on_test_batch_end(self, batch, logs=None): ...
    def on_predict_begin(self, logs=None): ...
    def on_predict_end(self, logs=None): ...
    def on_predict_batch_begin(self, batch, logs=None): ...
    def on_predict_batch_end(self, batch, logs=None): ...


_ALIASES = {
    "on_train_batch_begin": "on_batch_begin",
    "on_train_batch_end": "on_batch_end",
}


class CallbackList:
    """Calls a list of callbacks (Keras 3's `CallbackList`).

    Args:
      callbacks: The callbacks (a list; nested lists are flattened).
      add_history: Add a `History` unless one is in `callbacks`.
      add_progbar: Add a `ProgbarLogger` unless one is in `callbacks`.
      model: The model the callbacks are used with.
      **params: Passed to each callback's `set_params` (`verbose`, `epochs`,
        `steps`).
    """

    def __init__(
        self, callbacks=None, add_history=False, add_progbar=False, model=None, **params
    ):
        self.callbacks = _flatten_callbacks(callbacks)
        if add_history and not any(isinstance(c, History) for c in self.callbacks):
            self.callbacks.append(History())
        if add_progbar and not any(
            isinstance(c, ProgbarLogger) for c in self.callbacks
        ):
            self.callbacks.append(ProgbarLogger(params.get("verbose", 1)))
        self.model = model
        self.params = params
        for cb in self.callbacks:
            if model is not None:
                cb.set_model(model)
            if params:
                cb.set_params(params)

    def __getattr__(self, hook: str) -> Callable[..., None]:
        """`on_*` calls that hook on every callback that overrides it (built
        once per hook: batch hooks nobody overrides cost nothing per step)."""
        if not hook.startswith("on_"):
            raise AttributeError(hook)
        base = getattr(Callback, hook, None)
        alias = _ALIASES.get(hook)

        def overrides(cb, name):
            method = getattr(cb, name, None)
            return method is not None and getattr(method, "__func__", None) is not (
                getattr(Callback, name, None)
            )

        methods = [
            getattr(cb, hook)
            for cb in self.callbacks
            if overrides(cb, hook) or (alias and overrides(cb, alias))
        ]
        if base is None:
            raise AttributeError(hook)
        call: Callable[..., None]
        if not methods:

            def call_none(*args, **kwargs) -> None:
                return None

            call = call_none
        elif "batch" in hook:  # Keras: on_*_batch_*(batch, logs=logs)

            def call_batch(batch, logs=None) -> None:
                logs = _flatten_logs(logs)
                for method in methods:
                    method(batch, logs=logs)

            call = call_batch
        elif "epoch" in hook:  # on_epoch_*(epoch, logs)

            def call_epoch(epoch, logs=None) -> None:
                logs = pythonify_logs(logs)
                for method in methods:
                    method(epoch, logs)

            call = call_epoch
        else:  # on_train_begin(logs) & co.

            def call_logs(logs=None) -> None:
                logs = pythonify_logs(logs)
                for method in methods:
                    method(logs)

            call = call_logs

        self.__dict__[hook] = call
        return call


def _flatten_callbacks(callbacks) -> list:
    out = []
    for cb in callbacks or ():
        if isinstance(cb, (list, tuple)):
            out.extend(_flatten_callbacks(cb))
        else:
            out.append(cb)
    return out


class History(Callback):
    """Records the logs of every epoch in `history` (returned by `fit`)."""

    def __init__(self):
        super().__init__()
        self.history: dict[str, list] = {}
        self.epoch: list[int] = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)
        if self.model is not None:
            self.model.history = self


class LambdaCallback(Callback):
    """A callback from plain functions (`on_epoch_end=lambda epoch, logs: ...`)."""

    def __init__(self, **hooks):
        super().__init__()
        for name, fn in hooks.items():
            if not name.startswith("on_") or not hasattr(Callback, name):
                raise ValueError(f"LambdaCallback: unknown hook {name!r}.")
            setattr(self, name, fn)


# -- monitoring callbacks ------------------------------------------------------------
class _MonitorCallback(Callback):
    """Keras's MonitorCallback: is `monitor` better than the best so far?"""

    def __init__(
        self, monitor="val_loss", mode="auto", baseline=None, min_delta: float = 0
    ):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(
                f"{type(self).__name__} mode '{mode}' is unknown, fallback to auto "
                "mode.",
                stacklevel=3,
            )
            mode = "auto"
        self.monitor, self.mode = monitor, mode
        self.best = baseline
        self.min_delta = abs(min_delta)
        self._sign = None  # +1: higher is better; -1: lower is better

    def _set_monitor_op(self) -> int:
        """Sets (and returns) the sign of an improvement: +1 max, -1 min."""
        if self.mode != "auto":
            self._sign = 1 if self.mode == "max" else -1
            return self._sign
        name = self.monitor.removeprefix("val_")
        if name == "loss" or name.endswith("_loss"):
            self._sign = -1
        for m in _all_metrics(self.model):
            if m.name == name and getattr(m, "_direction", None):
                self._sign = 1 if m._direction == "up" else -1
        if self._sign is None:
            raise ValueError(
                f"{type(self).__name__} callback received monitor={self.monitor}, "
                "but Keras isn't able to automatically determine whether that "
                "metric should be maximized or minimized. Pass `mode='max'` in "
                "order to monitor based on the highest metric value, or pass "
                "`mode='min'` in order to use the lowest value."
            )
        return self._sign

    def _is_improvement(self, value, reference) -> bool:
        if reference is None:
            return True
        sign = self._sign if self._sign is not None else self._set_monitor_op()
        if sign > 0:
            return value - self.min_delta > reference
        return value + self.min_delta < reference


def _all_metrics(model) -> list:
    out = []
    for m in getattr(model, "metrics", None) or ():
        out.extend(getattr(m, "metrics", ()) or ())
        out.append(m)
    return out


class EarlyStopping(_MonitorCallback):
    """Stops training when `monitor` stops improving (Keras 3's rules).

    `patience` epochs without an improvement of more than `min_delta` stop
    training; `baseline` must be beaten too before the wait restarts;
    `restore_best_weights` sets the best epoch's weights back at the end of
    training; `start_from_epoch` skips the first epochs; `verbose` > 0 prints
    when it stops and restores.
    """

    def __init__(
        self,
        monitor="val_loss",
        min_delta=0,
        patience=0,
        verbose=0,
        mode="auto",
        baseline=None,
        restore_best_weights=False,
        start_from_epoch=0,
    ):
        super().__init__(monitor, mode, min_delta=min_delta)
        self.patience, self.verbose = patience, verbose
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best_weights = None

    def on_train_begin(self, logs=None):
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best = None
        self.best_weights = None

    def on_epoch_end(self, epoch, logs=None):
        if self._sign is None:
            self._set_monitor_op()
        current = (logs or {}).get(self.monitor)
        if current is None:
            warnings.warn(
                f"Early stopping conditioned on metric `{self.monitor}` which is not "
                f"available. Available metrics are: {','.join(logs or {})}",
                stacklevel=2,
            )
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self._attached_model().get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = self._attached_model().get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self._attached_model().stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print_msg(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print_msg(
                    "Restoring model weights from the end of the best epoch: "
                    f"{self.best_epoch + 1}."
                )
            self._attached_model().set_weights(self.best_weights)


class ModelCheckpoint(_MonitorCallback):
    """Saves the model (or its weights) every epoch or every `save_freq`
    batches, optionally only when `monitor` improved (Keras 3's rules).

    `filepath` may hold `{epoch}`, `{batch}` (with `save_freq` batches) and log
    names (`{val_loss:.2f}`); it must end in `.keras`, or `.weights.h5` with
    `save_weights_only`. `initial_value_threshold` is the value to beat first;
    `verbose` > 0 prints each decision.
    """

    def __init__(
        self,
        filepath,
        monitor="val_loss",
        verbose=0,
        save_best_only=False,
        save_weights_only=False,
        mode="auto",
        save_freq="epoch",
        initial_value_threshold=None,
    ):
        super().__init__(monitor, mode, initial_value_threshold)
        self.verbose = verbose
        self.filepath = os.fspath(filepath)
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(
                f"Unrecognized save_freq: {save_freq}. Expected save_freq are "
                "'epoch' or integer values"
            )
        self.save_freq = save_freq
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = None
        self._current_epoch = 0
        if save_weights_only and not self.filepath.endswith(".weights.h5"):
            raise ValueError(
                "When using `save_weights_only=True` in `ModelCheckpoint`, the "
                "filepath provided must end in `.weights.h5` (Keras weights "
                f"format). Received: filepath={self.filepath}"
            )
        if not save_weights_only and not self.filepath.endswith(".keras"):
            raise ValueError(
                "The filepath provided must end in `.keras` (Keras model format). "
                f"Received: filepath={self.filepath}"
            )

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self._should_save_on_batch(batch):
            self._save_model(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self._sign is None:
            self._set_monitor_op()
        if self.save_freq == "epoch":
            self._save_model(epoch, None, logs)

    def _should_save_on_batch(self, batch) -> bool:
        if self.save_freq == "epoch":
            return False
        if self._last_batch_seen is None or batch <= self._last_batch_seen:
            added = batch + 1
        else:
            added = batch - self._last_batch_seen
        self._batches_seen_since_last_saving += added
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            return True
        return False

    def _should_save(self, epoch, logs, filepath) -> bool:
        if not self.save_best_only:
            if self.verbose > 0:
                print_msg(f"\nEpoch {epoch + 1}: saving model to {filepath}")
            return True
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(
                f"Can save best model only with {self.monitor} available.",
                stacklevel=3,
            )
            return True
        if self._sign is None:
            self._set_monitor_op()
        best = "None" if self.best is None else f"{self.best:.5f}"
        if self._is_improvement(float(current), self.best):
            if self.verbose > 0:
                print_msg(
                    f"\nEpoch {epoch + 1}: {self.monitor} improved from {best} to "
                    f"{float(current):.5f}, saving model to {filepath}"
                )
            self.best = float(current)
            return True
        if self.verbose > 0:
            print_msg(
                f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best}"
            )
        return False

    def _save_model(self, epoch, batch, logs) -> None:
        logs = dict(logs or {})
        try:
            if batch is None or "batch" in logs:
                filepath = self.filepath.format(epoch=epoch + 1, **logs)
            else:
                filepath = self.filepath.format(
                    epoch=epoch + 1, batch=batch + 1, **logs
                )
        except KeyError as e:
            raise KeyError(
                f'Failed to format this callback filepath: "{self.filepath}". '
                f"Reason: {e}"
            ) from None
        if not self._should_save(epoch, logs, filepath):
            return
        directory = os.path.dirname(filepath)
        if directory:
            os.makedirs(directory, exist_ok=True)
        model = self._attached_model()
        if self.save_weights_only:
            model.save_weights(filepath, overwrite=True)
        else:
            model.save(filepath, overwrite=True)
        if self.verbose > 0:
            print_msg(f"\nEpoch {epoch + 1}: finished saving model to {filepath}")


def _optimizer(callback):
    optimizer = callback._attached_model().optimizer
    if optimizer is None:
        raise ValueError(
            f"{type(callback).__name__} needs the model's optimizer: compile the "
            "model (`model.compile(optimizer=...)`) before `fit`."
        )
    return optimizer


def _learning_rate(optimizer) -> float:
    if not hasattr(optimizer, "learning_rate"):
        raise ValueError('Optimizer must have a "learning_rate" attribute.')
    return float(np.asarray(optimizer.learning_rate.numpy()))


class LearningRateScheduler(Callback):
    """Sets the optimizer's learning rate at the start of each epoch to
    `schedule(epoch, lr)` (or `schedule(epoch)`), and logs it as
    `learning_rate` (Keras 3's callback)."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = _optimizer(self)
        try:  # Keras's new API, then its old one
            learning_rate = self.schedule(epoch, _learning_rate(optimizer))
        except TypeError:
            learning_rate = self.schedule(epoch)
        if not isinstance(learning_rate, (float, np.floating)):
            raise ValueError(
                "The output of the `schedule` function should be a float. "
                f"Got: {learning_rate}"
            )
        optimizer.learning_rate = learning_rate
        if self.verbose > 0:
            print_msg(
                f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate "
                f"to {learning_rate}."
            )

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = _learning_rate(_optimizer(self))


class ReduceLROnPlateau(_MonitorCallback):
    """Multiplies the learning rate by `factor` when `monitor` has not improved
    by `min_delta` for `patience` epochs, then waits `cooldown` epochs; never
    below `min_lr` (Keras 3's callback, which logs `learning_rate`)."""

    def __init__(
        self,
        monitor="val_loss",
        factor=0.1,
        patience=10,
        verbose=0,
        mode="auto",
        min_delta=1e-4,
        cooldown=0,
        min_lr=0.0,
        **kwargs,
    ):
        super().__init__(monitor, mode, min_delta=min_delta)
        if kwargs:
            raise NotImplementedError(
                f"ReduceLROnPlateau: arguments {sorted(kwargs)} are not supported "
                "by jaxtape (Keras 3 ignores them too, with a warning)."
            )
        if factor >= 1.0:
            raise ValueError(
                "ReduceLROnPlateau does not support a factor >= 1.0. "
                f"Received factor={factor}"
            )
        self.factor, self.min_lr = factor, min_lr
        self.patience, self.verbose, self.cooldown = patience, verbose, cooldown
        self.cooldown_counter = self.wait = 0

    def on_train_begin(self, logs=None):
        self.best, self.cooldown_counter, self.wait = None, 0, 0

    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def on_epoch_end(self, epoch, logs=None):
        if self._sign is None:
            self._set_monitor_op()
        logs = logs if logs is not None else {}
        optimizer = _optimizer(self)
        logs["learning_rate"] = _learning_rate(optimizer)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(
                "Learning rate reduction is conditioned on metric "
                f"`{self.monitor}` which is not available. Available metrics are: "
                f"{','.join(logs)}.",
                stacklevel=2,
            )
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current, self.best):
            self.best, self.wait = current, 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = _learning_rate(optimizer)
                if old_lr > np.float32(self.min_lr):
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    optimizer.learning_rate = new_lr
                    if self.verbose > 0:
                        print_msg(
                            f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing "
                            f"learning rate to {new_lr}."
                        )
                    self.cooldown_counter, self.wait = self.cooldown, 0


class TerminateOnNaN(Callback):
    """Stops training at the first batch whose loss is NaN or infinite
    (`raise_error=True`: raises RuntimeError instead), as Keras 3."""

    def __init__(self, raise_error: bool = False):
        super().__init__()
        self.raise_error = raise_error

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None:
            return
        loss = float(np.asarray(getattr(loss, "_value", loss)))
        if np.isnan(loss) or np.isinf(loss):
            if self.raise_error:
                raise RuntimeError(
                    f"NaN or Inf loss encountered at batch {batch}. Loss value: "
                    f"{loss}. Terminating training immediately."
                )
            print_msg(f"Batch {batch}: Invalid loss, terminating training")
            self._attached_model().stop_training = True


class CSVLogger(Callback):
    """Streams each epoch's logs to a CSV file (Keras 3's columns: `epoch`,
    then the sorted log keys; `append=True` continues a file)."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.sep, self.filename, self.append = separator, os.fspath(filename), append
        self.writer = self.keys = self.csv_file = None
        self.append_header = True

    def on_train_begin(self, logs=None):
        mode = "w"
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as f:
                    self.append_header = not bool(len(f.readline()))
            mode = "a"
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, mode, newline="")  # noqa: SIM115
        self.writer = self.keys = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}

        def handle_value(k):
            if isinstance(k, str):
                return k
            if isinstance(k, collections.abc.Iterable) and not (
                isinstance(k, np.ndarray) and k.ndim == 0
            ):
                return f'"[{", ".join(map(str, k))}]"'
            return k

        if self.keys is None:
            self.keys = sorted(logs)
            if self.keys and not any(k.startswith("val_") for k in self.keys):
                self.keys.extend([f"val_{k}" for k in self.keys])
        if self.csv_file is None or self.csv_file.closed:
            self.on_train_begin()
        csv_file = typing.cast("typing.TextIO", self.csv_file)  # (opened above)
        if not self.writer:
            sep = self.sep

            class _Dialect(csv.excel):
                delimiter = sep

            self.writer = csv.DictWriter(
                csv_file, fieldnames=["epoch", *self.keys], dialect=_Dialect
            )
            if self.append_header:
                self.writer.writeheader()
        row = {"epoch": epoch}
        row.update((key, handle_value(logs.get(key, "NA"))) for key in self.keys)
        self.writer.writerow(row)
        csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None


class BackupAndRestore(Callback):
    """Backs `fit` up to `backup_dir` (the weights with the optimizer's state,
    and the epoch reached) every epoch or every `save_freq` batches; a `fit`
    started again after an interruption restores them and continues from the
    epoch after the last backup (Keras 3's callback).

    Each backup is written atomically: the weights go to a new file, then the
    small metadata file naming it replaces the old one (a temporary file,
    then a rename), so a kill at any point leaves the previous backup whole.
    Backups of tf.keras (`latest.weights.h5`) are restored too; jaxtape's
    name their weights file in the metadata, which tf.keras does not read.
    `delete_checkpoint`: remove the backup when training ends normally.
    """

    def __init__(
        self,
        backup_dir,
        save_freq="epoch",
        double_checkpoint=False,
        delete_checkpoint=True,
    ):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(
                "Invalid value for argument `save_freq`. Received: "
                f"save_freq={save_freq}. Expected either 'epoch' or an integer value."
            )
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq = save_freq
        # Every backup is kept whole until the next one is complete, which is
        # what Keras's `double_checkpoint` asks for.
        self.double_checkpoint = double_checkpoint
        self.delete_checkpoint = delete_checkpoint
        self._metadata_path = os.path.join(self.backup_dir, "training_metadata.json")
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = 0
        self._current_epoch = 0

    def on_train_begin(self, logs=None):
        model = self._attached_model()
        if not model.built:
            raise ValueError(
                "To use the BackupAndRestore callback, you model must be built "
                f"before you call `fit()`. Model {model} is unbuilt. You can build "
                "it beforehand by calling it on a batch of data."
            )
        if not os.path.exists(self._metadata_path):
            keras_weights = os.path.join(self.backup_dir, "latest.weights.h5")
            if os.path.exists(keras_weights):  # tf.keras's, without its epoch
                if model.optimizer is not None:
                    model.optimizer.build(model.trainable_variables)
                model.load_weights(keras_weights)
            return
        with open(self._metadata_path) as f:
            metadata = json.load(f)
        weights = metadata.get("weights", "latest.weights.h5")
        if model.optimizer is not None:  # its state is in the file too
            model.optimizer.build(model.trainable_variables)
        model.load_weights(os.path.join(self.backup_dir, weights))
        model._initial_epoch = metadata["epoch"]

    def on_epoch_end(self, epoch, logs=None):
        self._current_epoch = epoch + 1
        self._last_batch_seen = 0
        if self.save_freq == "epoch":
            self._save_model()

    def on_train_batch_end(self, batch, logs=None):
        if self._should_save_on_batch(batch):
            self._save_model()

    def _should_save_on_batch(self, batch) -> bool:
        if self.save_freq == "epoch":
            return False
        if batch <= self._last_batch_seen:
            add_batches = batch + 1
        else:
            add_batches = batch - self._last_batch_seen
        self._batches_seen_since_last_saving += add_batches
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            return True
        return False

    def _save_model(self) -> None:
        os.makedirs(self.backup_dir, exist_ok=True)
        old = None
        if os.path.exists(self._metadata_path):
            with open(self._metadata_path) as f:
                old = json.load(f).get("weights")
        name = f"backup-{time.time_ns()}.weights.h5"  # a new file every time
        self._attached_model().save_weights(os.path.join(self.backup_dir, name))
        metadata = {
            "epoch": self._current_epoch,
            "batch": self._last_batch_seen,
            "weights": name,
        }
        storage.atomic_file(
            self._metadata_path, lambda f: f.write(json.dumps(metadata).encode())
        )
        # The previous backup's weights; a tf.keras backup's too, which tf.keras
        # would otherwise pair with this backup's epoch.
        for stale in {old or "latest.weights.h5", "latest.weights.h5"} - {name}:
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(self.backup_dir, stale))

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and os.path.exists(self.backup_dir):
            shutil.rmtree(self.backup_dir)


class SwapEMAWeights(Callback):
    """Keras's SwapEMAWeights: the model is evaluated (and, with
    `swap_on_epoch`, seen by the callbacks after this one at each epoch's
    end) with the optimizer's moving averages of its weights (`use_ema=True`),
    its own weights restored afterwards. As Keras on TF, the values are
    swapped in place by addition and subtraction (`a += b; b = a - b;
    a -= b`), and `predict` leaves the averages in the model (Keras's
    `on_predict_end` swaps back only when they are not in it).
    """

    def __init__(self, swap_on_epoch=False):
        super().__init__()
        self.swap_on_epoch = swap_on_epoch
        self._ema_weights_in_model = False

    def _ema_optimizers(self) -> list:
        optimizer: typing.Any = getattr(self.model, "optimizer", None)
        optimizer = getattr(optimizer, "inner_optimizer", optimizer)  # loss scale
        inner = getattr(optimizer, "optimizers", None)
        if inner is not None:
            if not any(getattr(opt, "use_ema", False) for opt in inner):
                raise ValueError(
                    "SwapEMAWeights must be used when at least one inner "
                    "optimizer has `use_ema=True` set. Received a "
                    "MultiOptimizer with all inner optimizers having "
                    "`use_ema=False`."
                )
            chosen = [opt for opt in inner if getattr(opt, "use_ema", False)]
        else:
            chosen = [optimizer]
        for opt in chosen:  # (Keras's averages exist once it is built with EMA)
            if not (getattr(opt, "use_ema", False) and opt._built):
                raise ValueError(
                    "SwapEMAWeights must be used when `use_ema=True` is set on "
                    f"the optimizer. Received: use_ema={opt.use_ema}"
                )
        return chosen

    @staticmethod
    def _pairs(opt) -> list:
        return [
            (var, opt._averages[id(var)])
            for var, _, _ in opt._slots.values()
            if id(var) in opt._averages
        ]

    def _swap_variables(self):
        for opt in self._ema_optimizers():
            for var, average in self._pairs(opt):
                var.assign_add(average)
                average.assign(var - average)
                var.assign(var - average)

    def _finalize_ema_values(self):
        for opt in self._ema_optimizers():
            for var, average in self._pairs(opt):
                average.assign(var)

    def on_epoch_begin(self, epoch, logs=None):
        if self.swap_on_epoch and self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_epoch_end(self, epoch, logs=None):
        if self.swap_on_epoch and not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True
            # `fit` ends with `finalize_variable_values`, which sets the
            # averages into the model: after the last epoch they hold the
            # model's (now averaged) values, as Keras.
            if epoch == self.params["epochs"] - 1:
                self._finalize_ema_values()

    def on_test_begin(self, logs=None):
        if not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True

    def on_test_end(self, logs=None):
        if self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_predict_begin(self, logs=None):
        if not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True

    def on_predict_end(self, logs=None):
        if not self._ema_weights_in_model:  # (Keras's condition, as it is)
            self._swap_variables()
            self._ema_weights_in_model = False


class ProgbarLogger(Callback):
    """Keras's progress display (`Epoch 1/5`, a bar, steps, time/step, metrics).

    `verbose`: 1 shows a bar per epoch, 2 one line per epoch (Keras's
    `verbose` of `fit`). In `evaluate` and `predict` (outside `fit`) it prints
    one line at the end.
    """

    def __init__(self, verbose=1):
        super().__init__()
        self.verbose = verbose
        self._progress = None
        self._in_fit = False
        self._console = None

    def set_params(self, params):
        super().set_params(params)
        verbose = params.get("verbose", self.verbose)
        self.verbose = 1 if verbose == "auto" else verbose

    def _get_console(self):
        if self._console is None:
            from rich.console import Console  # lazy: rich costs 30 ms at import

            self._console = Console(highlight=False)
        return self._console

    def on_train_begin(self, logs=None):
        self._in_fit = True

    def on_train_end(self, logs=None):
        self._in_fit = False

    def on_epoch_begin(self, epoch, logs=None):
        if self.verbose and self.params.get("epochs", 1) > 1:
            print_msg(
                f"Epoch {epoch + 1}/{self.params.get('epochs', 1)}", self._get_console()
            )
        self._start = time.perf_counter()
        self._last_render = 0.0
        if self.verbose == 1 and is_interactive_logging_enabled():  # a live bar
            from rich.progress import (  # lazy: rich costs 30 ms at import
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
            )

            self._progress = Progress(
                MofNCompleteColumn(),
                BarColumn(bar_width=20),
                TextColumn("{task.fields[info]}"),
                console=self._get_console(),
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task(
                "train", total=self.params.get("steps"), info=""
            )

    def _info(self, logs, steps_done):
        elapsed = time.perf_counter() - self._start
        per_step = elapsed / max(steps_done, 1)
        unit = (
            f"{per_step * 1e3:.0f}ms/step"
            if per_step >= 1e-3
            else (f"{per_step * 1e6:.0f}us/step")
        )
        parts = [f"{elapsed:.0f}s {unit}"]
        parts += [f"{k}: {float(v):.4f}" for k, v in (logs or {}).items()]
        return " - ".join(parts)

    def on_train_batch_end(self, batch, logs=None):
        self._seen = batch + 1
        if self._progress is None:
            return
        now = time.perf_counter()
        last = batch + 1 == self.params.get("steps")
        if last or now - self._last_render >= 0.1:  # reading logs syncs: throttle
            self._last_render = now
            self._progress.update(
                self._task, completed=batch + 1, info=self._info(logs, batch + 1)
            )

    def on_epoch_end(self, epoch, logs=None):
        steps = self.params.get("steps") or getattr(self, "_seen", 1)
        if self._progress is not None:
            self._progress.update(
                self._task, completed=steps, info=self._info(logs, steps)
            )
            self._progress.stop()
            self._progress = None
        elif self.verbose:  # verbose=2, or 1 without interactive logging
            print_msg(
                f"{steps}/{steps} - {self._info(logs, steps)}", self._get_console()
            )

    # evaluate / predict outside fit: one line at the end
    def on_test_begin(self, logs=None):
        self._start, self._seen = time.perf_counter(), 0

    on_predict_begin = on_test_begin

    def on_test_batch_end(self, batch, logs=None):
        self._seen = batch + 1

    def on_predict_batch_end(self, batch, logs=None):
        self._seen = batch + 1

    def on_test_end(self, logs=None):
        if not self._in_fit and self.verbose:
            steps = self.params.get("steps") or self._seen
            print_msg(
                f"{steps}/{steps} - {self._info(logs, steps)}", self._get_console()
            )

    def on_predict_end(self, logs=None):
        self.on_test_end(None)


class TensorBoard(Callback):
    """Writes losses and metrics for TensorBoard (Keras's `callbacks.TensorBoard`).

    Epoch values go to `log_dir/train` and `log_dir/validation` as
    `epoch_loss`, `epoch_<metric>` (and `epoch_learning_rate`) at step =
    epoch. With `update_freq='batch'` or an int N, `batch_<name>` values are
    written to `train` every N batches at step = the global batch count. With
    `histogram_freq=N`, every Nth epoch writes a histogram of each weight,
    tagged `<path>/histogram` (and, with `write_images`, an image
    `<path>/image`). `write_graph` writes the model's config for
    TensorBoard's graph tab (Sequential and functional models, as Keras);
    `write_steps_per_second` logs `steps_per_second` (and
    `batch_steps_per_second`).

    Differences from Keras: `profile_batch` and `embeddings_freq` (with
    `embeddings_metadata`) raise NotImplementedError when set.
    """

    def __init__(
        self,
        log_dir="logs",
        histogram_freq=0,
        write_graph=True,
        write_images=False,
        write_steps_per_second=False,
        update_freq="epoch",
        profile_batch=0,
        embeddings_freq=0,
        embeddings_metadata=None,
    ):
        super().__init__()
        if update_freq not in ("epoch", "batch") and not isinstance(update_freq, int):
            raise ValueError(
                f"TensorBoard update_freq must be 'epoch', 'batch' or an int, got "
                f"{update_freq!r}."
            )
        for arg, value in (
            ("profile_batch", profile_batch),
            ("embeddings_freq", embeddings_freq),
            ("embeddings_metadata", embeddings_metadata),
        ):
            if value:
                raise NotImplementedError(
                    f"TensorBoard({arg}=...) is not supported by jaxtape; profile "
                    "with `jax.profiler`, and log embeddings yourself."
                )
        self.log_dir = str(log_dir)
        self.histogram_freq = int(histogram_freq)
        self.write_graph = bool(write_graph)
        self.write_images = bool(write_images)
        self.write_steps_per_second = bool(write_steps_per_second)
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self._writers: dict = {}
        self._train_step = 0

    def set_model(self, model):
        super().set_model(model)
        self._writers = {}
        if self.write_graph:
            self._write_model_config()

    def _writer(self, run: str):
        if run not in self._writers:
            self._writers[run] = _summary_writer.create_file_writer(
                os.path.join(self.log_dir, run)
            )
        return self._writers[run]

    def _write(self, run, prefix, logs, step):
        with self._writer(run).as_default(step=step):
            for name, value in (logs or {}).items():
                summary.scalar(prefix + name, float(value))

    def _write_model_config(self) -> None:
        """Keras's `keras_model_summary`: the config JSON, for the graph tab."""
        try:
            config = saving.model_config(self.model)
        except NotImplementedError:  # a subclassed model: Keras writes none
            return
        data = json.dumps(config)

        def build(tag, _):
            # lazy: tensorboardX costs 120 ms at import (summary/ops.py defers it too)
            from tensorboardX.proto import summary_pb2, tensor_pb2  # lazy: as above

            # (protobuf builds the message classes at import: no names for pyright)
            Summary = summary_pb2.Summary  # pyright: ignore[reportAttributeAccessIssue]
            Metadata = summary_pb2.SummaryMetadata  # pyright: ignore[reportAttributeAccessIssue]
            TensorProto = tensor_pb2.TensorProto  # pyright: ignore[reportAttributeAccessIssue]

            meta = Metadata(
                plugin_data=Metadata.PluginData(
                    plugin_name="graph_keras_model", content=b"1"
                )
            )
            tensor = TensorProto(dtype=7, string_val=[data.encode("utf-8")])
            return Summary(value=[Summary.Value(tag=tag, metadata=meta, tensor=tensor)])

        with self._writer("train").as_default(step=0):
            summary._emit("keras", data, 0, build, static_data=True)

    def on_train_begin(self, logs=None):
        self._train_step = 0

    def on_epoch_begin(self, epoch, logs=None):
        if self.write_steps_per_second:
            self._epoch_start = time.perf_counter()
            optimizer = self._attached_model().optimizer
            if optimizer is not None:
                self._epoch_iterations = int(np.asarray(optimizer.iterations))

    def on_train_batch_begin(self, batch, logs=None):
        if self.write_steps_per_second:
            self._batch_start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self._train_step += 1
        freq = self.update_freq
        if isinstance(freq, int) and self._train_step % freq == 0:  # (not "epoch")
            logs = dict(logs or {})
            if self.write_steps_per_second:
                elapsed = time.perf_counter() - self._batch_start
                logs["steps_per_second"] = 1.0 / max(elapsed, 1e-9)
            self._write("train", "batch_", logs, self._train_step)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        train = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None:
            train["learning_rate"] = float(np.asarray(optimizer.learning_rate))
        if self.write_steps_per_second and optimizer is not None:
            steps = int(np.asarray(optimizer.iterations)) - self._epoch_iterations
            train["steps_per_second"] = steps / (
                time.perf_counter() - self._epoch_start
            )
        self._write("train", "epoch_", train, epoch)
        if val:
            self._write("validation", "epoch_", val, epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            with self._writer("train").as_default(step=epoch):
                for layer in self._attached_model().layers:
                    for weight in layer.weights:
                        name = getattr(weight, "path", weight.name).replace(":", "_")
                        summary.histogram(f"{name}/histogram", weight.numpy())
                        if self.write_images:
                            _weight_image(f"{name}/image", weight.numpy())

    def on_train_end(self, logs=None):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}


def _weight_image(tag, w) -> None:
    """Keras's `_log_weight_as_image`: a weight as a grayscale image."""
    w = np.squeeze(w)
    if w.ndim == 1:  # a bias
        w = w.reshape(1, w.shape[0], 1, 1)
    elif w.ndim == 2:  # a dense kernel
        if w.shape[0] > w.shape[1]:
            w = w.T
        w = w.reshape(1, w.shape[0], w.shape[1], 1)
    elif w.ndim == 3:  # a conv kernel, channels last: one image per kernel
        w = np.transpose(w, (2, 0, 1))
        w = w.reshape(w.shape[0], w.shape[1], w.shape[2], 1)
    if w.ndim == 4 and w.shape[-1] in (1, 3, 4):
        summary.image(tag, w)
