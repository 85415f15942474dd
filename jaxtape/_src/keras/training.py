"""`compile`/`fit`/`evaluate`/`predict` for Keras models, as eager tape steps. Layer L5.

A training step is exactly the seeds' loop: forward under a GradientTape,
`tape.gradient`, `optimizer.apply_gradients`. The compiled-backward cache
makes the backward one XLA call from the second step on.
"""

from __future__ import annotations

import numpy as np

from jaxtape._src.autodiff.gradient_tape import GradientTape
from jaxtape._src.core import context
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.data.dataset import Dataset
from jaxtape._src.function.function import function
from jaxtape._src.keras import callbacks as callbacks_module
from jaxtape._src.keras import data_adapter
from jaxtape._src.losses import losses as losses_module
from jaxtape._src.metrics import metrics as metrics_module
from jaxtape._src.ops import math_ops
from jaxtape._src.optimizers import optimizers as optimizers_module


def _resolve_accuracy(name, loss):
    """Keras picks the accuracy flavour from the loss."""
    if name not in ("accuracy", "acc"):
        try:
            return metrics_module.get(name)
        except ValueError:  # a loss name used as a metric ("mse" etc.)
            return metrics_module.MeanMetricWrapper(losses_module.get(name), name=name)
    loss_name = getattr(loss, "name", None) or getattr(loss, "__name__", "")
    if "sparse_categorical" in loss_name:
        cls = metrics_module.SparseCategoricalAccuracy
    elif "categorical" in loss_name:
        cls = metrics_module.CategoricalAccuracy
    elif "binary" in loss_name:
        cls = metrics_module.BinaryAccuracy
    else:
        cls = metrics_module.Accuracy
    return cls(name=name)


pack = data_adapter.pack_x_y_sample_weight
unpack_x_y_sample_weight = data_adapter.unpack_x_y_sample_weight


def _to_python(value):
    """A log value as Keras hands it to callbacks: a Python number (or array)."""
    array = np.asarray(value._value if type(value) is Tensor else value)
    return array.item() if array.ndim == 0 else array


def _logs_result(logs: dict, return_dict: bool):
    """Keras's return value: the dict, or the values (one value alone)."""
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values


class TrainingMixin:
    """The training API of `keras.Model`."""

    def _init_training(self):
        self.optimizer = None
        self.compiled_loss = None
        self.compiled_metrics = []
        self.loss_tracker = None
        self.stop_training = False
        self.history = None
        self._is_compiled = False
        self.run_eagerly = False

    def compile(
        self,
        optimizer="rmsprop",
        loss=None,
        metrics=None,
        loss_weights=None,
        weighted_metrics=None,
        run_eagerly=None,
        steps_per_execution=1,
        jit_compile="auto",
        **kwargs,
    ):
        """Configures the model for training (Keras's `compile`)."""
        self.run_eagerly = bool(run_eagerly)
        self.__dict__.pop("_compiled_steps", None)
        self.optimizer = optimizers_module.get(optimizer)
        self.compiled_loss = losses_module.get(loss)
        self.compiled_metrics = [
            _resolve_accuracy(m, self.compiled_loss)
            if isinstance(m, str)
            else metrics_module.get(m)
            for m in (metrics or [])
        ]
        with context.paused_tapes():
            self.loss_tracker = metrics_module.Mean(name="loss")
        self._is_compiled = True

    @property
    def metrics(self) -> list:
        return ([self.loss_tracker] if self.loss_tracker is not None else []) + list(
            self.compiled_metrics
        )

    @property
    def metrics_names(self) -> list:
        return [m.name for m in self.metrics]

    def _check_compiled(self, what):
        if not self._is_compiled or self.compiled_loss is None:
            raise RuntimeError(
                f"You must call `compile()` with a loss before `{what}()` on model "
                f"{self.name!r}."
            )

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
        loss_fn = self.compiled_loss
        if isinstance(loss_fn, losses_module.Loss):
            loss = loss_fn(y, y_pred, sample_weight=sample_weight)
        else:
            loss = math_ops.reduce_mean(loss_fn(y, y_pred))
        extra = self.losses
        if extra:
            loss = math_ops.add_n([loss, *extra])
        return loss

    def _logs(self) -> dict:
        return {m.name: float(m.result().numpy()) for m in self.metrics}

    def _epoch_logs(self, step_logs) -> dict:
        """Keras's end-of-epoch logs: the metrics' results, or the last step's
        logs when the step returned other keys (a custom `train_step`)."""
        if not isinstance(step_logs, dict) or set(step_logs) == {
            m.name for m in self.metrics
        }:
            return self._logs()
        return {k: _to_python(v) for k, v in step_logs.items()}

    def _update_metrics(self, loss, y, y_pred, sample_weight, batch):
        with context.paused_tapes():
            self.loss_tracker.update_state(loss, sample_weight=batch)
            for m in self.compiled_metrics:
                m.update_state(y, y_pred, sample_weight=sample_weight)

    def train_step(self, data):
        """One training step on a batch `data = (x, y[, sample_weight])`.

        Override it to customize `fit` (Keras's "customizing what happens in
        fit"); it is compiled with `jaxtape.function` unless the model was
        compiled with `run_eagerly=True`. Returns the metrics' results.
        """
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight)
        variables = self.trainable_variables
        grads = tape.gradient(loss, variables)
        self.optimizer.apply_gradients(zip(grads, variables))
        self._update_metrics(
            loss, y, y_pred, sample_weight, data_adapter.num_samples(x)
        )
        return {m.name: m.result() for m in self.metrics}

    def test_step(self, data):
        """One evaluation step on `data = (x, y[, sample_weight])`."""
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        y_pred = self(x, training=False)
        loss = self.compute_loss(x, y, y_pred, sample_weight)
        self._update_metrics(
            loss, y, y_pred, sample_weight, data_adapter.num_samples(x)
        )
        return {m.name: m.result() for m in self.metrics}

    def predict_step(self, data):
        x, _, _ = unpack_x_y_sample_weight(data)
        return self(x, training=False)

    def _step_function(self, kind):
        """`train_step`/`test_step`/`predict_step`, compiled unless run eagerly."""
        step = getattr(self, f"{kind}_step")
        if self.run_eagerly:
            return step
        cache = self.__dict__.setdefault("_compiled_steps", {})
        if kind not in cache:
            cache[kind] = function(step)
        return cache[kind]

    def _reset_metrics(self):
        for m in self.metrics:
            m.reset_state()

    reset_metrics = _reset_metrics

    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        epochs=1,
        verbose="auto",
        callbacks=None,
        validation_split=0.0,
        validation_data=None,
        shuffle=True,
        class_weight=None,
        sample_weight=None,
        initial_epoch=0,
        steps_per_epoch=None,
        validation_steps=None,
        validation_batch_size=None,
        validation_freq=1,
    ):
        """Trains on arrays, Tensors or a Dataset for `epochs`; returns History."""
        self._check_compiled("fit")
        batches = data_adapter.adapter(
            "fit", x, y, sample_weight, batch_size, shuffle, steps_per_epoch
        )
        if validation_data is None and validation_split:
            if isinstance(batches, data_adapter.DatasetBatches):
                raise ValueError(
                    "fit: validation_split is not supported when x is a Dataset; "
                    "pass validation_data instead."
                )
            validation_data = batches.split(validation_split)
        verbose = 1 if verbose == "auto" else verbose
        history = callbacks_module.History()
        cbs = list(callbacks or [])
        if verbose:
            cbs.append(callbacks_module.ProgbarLogger(verbose))
        cbs.append(history)
        cb = callbacks_module.CallbackList(
            cbs, self, {"epochs": epochs, "steps": batches.steps, "verbose": verbose}
        )
        self.stop_training = False
        train = self._step_function("train")
        cb.on_train_begin()
        for epoch in range(initial_epoch, epochs):
            self._reset_metrics()
            cb.on_epoch_begin(epoch)
            step_logs = None
            for step, data in enumerate(batches.epoch()):
                cb.on_train_batch_begin(step)
                step_logs = train(data)
                # Tensors, as Keras 3 passes them: reading one syncs, so a
                # callback that does not look costs nothing.
                cb.on_train_batch_end(step, step_logs)
            logs = self._epoch_logs(step_logs)
            if validation_data is not None and (epoch + 1) % validation_freq == 0:
                val_batch = validation_batch_size or batch_size
                if isinstance(validation_data, Dataset):
                    val = self.evaluate(
                        validation_data, steps=validation_steps, verbose=0,
                        return_dict=True,
                    )  # fmt: skip
                else:
                    val = self.evaluate(
                        *validation_data, batch_size=val_batch, verbose=0,
                        return_dict=True,
                    )  # fmt: skip
                logs.update({f"val_{k}": v for k, v in val.items()})
            cb.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        cb.on_train_end()
        return history

    def evaluate(
        self,
        x=None,
        y=None,
        batch_size=None,
        verbose="auto",
        sample_weight=None,
        steps=None,
        callbacks=None,
        return_dict=False,
    ):
        """The loss and metrics over the data (a scalar, a list, or a dict)."""
        self._check_compiled("evaluate")
        batches = data_adapter.adapter(
            "evaluate", x, y, sample_weight, batch_size, steps=steps
        )
        self._reset_metrics()
        test = self._step_function("test")
        step_logs = None
        with context.paused_tapes():
            for data in batches.epoch():
                step_logs = test(data)
        logs = self._epoch_logs(step_logs)
        if verbose:  # "auto" or 1 or 2
            print(" - ".join(f"{k}: {v:.4f}" for k, v in logs.items()))
        return _logs_result(logs, return_dict)

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """Model outputs for `x` (arrays or a Dataset), batch by batch, as NumPy."""
        batches = data_adapter.adapter("predict", x, batch_size=batch_size, steps=steps)
        outs = []
        predict = self._step_function("predict")
        with context.paused_tapes():
            for data in batches.epoch():
                out = predict(data[:1])
                outs.append(np.asarray(out._value) if type(out) is Tensor else out)
        if outs and isinstance(outs[0], np.ndarray):
            return np.concatenate(outs, axis=0)
        return outs

    def train_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        self._check_compiled("train_on_batch")
        self._reset_metrics()
        self._step_function("train")(pack(x, y, sample_weight))
        return _logs_result(self._logs(), return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        self._check_compiled("test_on_batch")
        self._reset_metrics()
        with context.paused_tapes():
            self._step_function("test")(pack(x, y, sample_weight))
        return _logs_result(self._logs(), return_dict)

    def predict_on_batch(self, x):
        with context.paused_tapes():
            return np.asarray(self(data_adapter.to_numpy(x), training=False)._value)
