"""Keras callbacks (`keras.callbacks`) and the rich progress display. Layer L5."""

from __future__ import annotations

import time

import numpy as np

from jaxtape._src.summary import ops as summary
from jaxtape._src.summary import writer as _summary_writer


class Callback:
    """Base class: override the `on_*` hooks you need."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None): ...
    def on_train_end(self, logs=None): ...
    def on_epoch_begin(self, epoch, logs=None): ...
    def on_epoch_end(self, epoch, logs=None): ...
    def on_train_batch_begin(self, batch, logs=None): ...
    def on_train_batch_end(self, batch, logs=None): ...
    def on_test_begin(self, logs=None): ...
    def on_test_end(self, logs=None): ...
    def on_test_batch_begin(self, batch, logs=None): ...
    def on_test_batch_end(self, batch, logs=None): ...
    def on_predict_begin(self, logs=None): ...
    def on_predict_end(self, logs=None): ...
    def on_predict_batch_begin(self, batch, logs=None): ...
    def on_predict_batch_end(self, batch, logs=None): ...


class CallbackList:
    def __init__(self, callbacks, model, params):
        self.callbacks = list(callbacks)
        for cb in self.callbacks:
            cb.set_model(model)
            cb.set_params(params)

    def __getattr__(self, hook):
        """`on_*` calls that hook on every callback that overrides it (built
        once per hook: batch hooks nobody overrides cost nothing per step)."""
        if not hook.startswith("on_"):
            raise AttributeError(hook)
        base = getattr(Callback, hook, None)
        methods = [getattr(cb, hook) for cb in self.callbacks]
        methods = [m for m in methods if getattr(m, "__func__", None) is not base]

        def call(*args, **kwargs):
            for method in methods:
                method(*args, **kwargs)

        self.__dict__[hook] = call
        return call


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
            if not name.startswith("on_"):
                raise ValueError(f"LambdaCallback: unknown hook {name!r}.")
            setattr(self, name, fn)


class EarlyStopping(Callback):
    """Stops training when `monitor` stops improving for `patience` epochs."""

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
        super().__init__()
        self.monitor, self.min_delta, self.patience = monitor, abs(min_delta), patience
        self.baseline, self.restore_best_weights = baseline, restore_best_weights
        self.start_from_epoch = start_from_epoch
        if mode == "auto":
            mode = "max" if "acc" in monitor or "auc" in monitor else "min"
        if mode not in ("min", "max"):
            raise ValueError(f"EarlyStopping: mode must be auto/min/max; got {mode!r}.")
        self.mode = mode
        self.stopped_epoch = 0

    def _better(self, a, b):
        if self.mode == "min":
            return a < b - self.min_delta
        return a > b + self.min_delta

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch = 0, 0
        self.best = (
            self.baseline
            if self.baseline is not None
            else (np.inf if self.mode == "min" else -np.inf)
        )
        self.best_weights = None

    def on_epoch_end(self, epoch, logs=None):
        current = (logs or {}).get(self.monitor)
        if current is None or epoch < self.start_from_epoch:
            return
        if self._better(current, self.best):
            self.best, self.wait = current, 0
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            return
        self.wait += 1
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                self.model.set_weights(self.best_weights)


class ModelCheckpoint(Callback):
    """Saves the model (or its weights) after epochs, optionally only the best."""

    def __init__(
        self,
        filepath,
        monitor="val_loss",
        verbose=0,
        save_best_only=False,
        save_weights_only=False,
        mode="auto",
        save_freq="epoch",
    ):
        super().__init__()
        self.filepath, self.monitor = str(filepath), monitor
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        if mode == "auto":
            mode = "max" if "acc" in monitor or "auc" in monitor else "min"
        self.mode = mode
        self.best = np.inf if mode == "min" else -np.inf

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                return
            better = current < self.best if self.mode == "min" else current > self.best
            if not better:
                return
            self.best = current
        path = self.filepath.format(epoch=epoch + 1, **logs)
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)


class ProgbarLogger(Callback):
    """Keras's progress display (`Epoch 1/5`, a bar, steps, time/step, metrics)."""

    def __init__(self, verbose=1):
        super().__init__()
        self.verbose = verbose
        self._progress = None

    def on_epoch_begin(self, epoch, logs=None):
        if self.verbose:
            from rich.console import Console

            self._console = Console(highlight=False)
            self._console.print(f"Epoch {epoch + 1}/{self.params.get('epochs', 1)}")
        self._start = time.perf_counter()
        self._last_render = 0.0
        if self.verbose == 1:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
            )

            self._progress = Progress(
                MofNCompleteColumn(),
                BarColumn(bar_width=20),
                TextColumn("{task.fields[info]}"),
                console=self._console,
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
        steps = self.params.get("steps") or 1
        if self._progress is not None:
            self._progress.update(
                self._task, completed=steps, info=self._info(logs, steps)
            )
            self._progress.stop()
            self._progress = None
        elif self.verbose == 2:
            self._console.print(f"{steps}/{steps} - {self._info(logs, steps)}")


class TensorBoard(Callback):
    """Writes losses and metrics for TensorBoard (Keras's `callbacks.TensorBoard`).

    Epoch values go to `log_dir/train` and `log_dir/validation` as
    `epoch_loss`, `epoch_<metric>` at step = epoch. With `update_freq='batch'`
    or an int N, `batch_<name>` values are written to `train` every N batches
    at step = the global batch count. With `histogram_freq=N`, every Nth epoch
    writes a histogram of each weight, tagged with its path.
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
        self.log_dir = str(log_dir)
        self.histogram_freq = int(histogram_freq)
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self._writers: dict = {}
        self._train_step = 0

    def _writer(self, run: str):
        if run not in self._writers:
            import os

            self._writers[run] = _summary_writer.create_file_writer(
                os.path.join(self.log_dir, run)
            )
        return self._writers[run]

    def _write(self, run, prefix, logs, step):
        with self._writer(run).as_default(step=step):
            for name, value in (logs or {}).items():
                summary.scalar(prefix + name, float(value))

    def on_train_begin(self, logs=None):
        self._train_step = 0

    def on_train_batch_end(self, batch, logs=None):
        self._train_step += 1
        freq = self.update_freq
        if freq != "epoch" and self._train_step % freq == 0:
            self._write("train", "batch_", logs, self._train_step)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        train = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        self._write("train", "epoch_", train, epoch)
        if val:
            self._write("validation", "epoch_", val, epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            with self._writer("train").as_default(step=epoch):
                for weight in self.model.weights:
                    summary.histogram(weight.name.split(":")[0], weight.numpy())

    def on_train_end(self, logs=None):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}
