"""`compile`/`fit`/`evaluate`/`predict` for Keras models, as tape steps. Layer L5.

A training step is exactly the seeds' loop: forward under a GradientTape,
`tape.gradient`, `optimizer.apply_gradients`; `fit` runs it as one
`jaxtape.function` (so the whole step is one XLA call) unless the model was
compiled with `run_eagerly=True`. The semantics are Keras 3's (tf.keras in TF
2.21): `compile` builds a `CompileLoss` and a `CompileMetrics`
(`compile_utils.py`), `model.metrics` is `[loss tracker, compile_metrics,
...]`, logs are flattened and sorted as Keras's `pythonify_logs` does, and
`get_compile_config`/`compile_from_config` round-trip through `.keras` files.
TF 2.x's `self.compiled_loss(...)` / `self.compiled_metrics.update_state(...)`
work in a custom `train_step` too.
"""

from __future__ import annotations

import inspect
import itertools
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from jaxtape._src.autodiff.gradient_tape import GradientTape
from jaxtape._src.core import checks, context, distribution, registry
from jaxtape._src.core.tensor import Tensor, tree_flatten, tree_map, tree_unflatten_like
from jaxtape._src.function.function import function
from jaxtape._src.keras import callbacks as callbacks_module
from jaxtape._src.keras import compile_utils, data_adapter
from jaxtape._src.keras import config as keras_config
from jaxtape._src.keras.keras_tensor import flatten
from jaxtape._src.losses import losses as losses_module
from jaxtape._src.metrics import metrics as metrics_module
from jaxtape._src.ops import array_ops, math_ops
from jaxtape._src.optimizers import optimizers as optimizers_module
from jaxtape._src.optimizers.loss_scale_optimizer import LossScaleOptimizer

pack = data_adapter.pack_x_y_sample_weight
unpack_x_y_sample_weight = data_adapter.unpack_x_y_sample_weight
pythonify_logs = callbacks_module.pythonify_logs


def _numpy(value):
    return np.asarray(value._value) if type(value) is Tensor else np.asarray(value)


# -- the compile configuration, serialized as Keras 3 serializes it ------------------
_KINDS = (
    (optimizers_module.Optimizer, optimizers_module.OPTIMIZERS),
    (losses_module.Loss, losses_module.LOSSES),
    (metrics_module.Metric, metrics_module.METRICS),
)


def _serialize(obj):
    """Keras's `serialize_keras_object` for what `compile` takes: optimizers,
    losses and metrics as their registry kind serializes them, functions by
    their (registered) name."""
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if isinstance(obj, (list, tuple)):
        return [_serialize(o) for o in obj]
    if isinstance(obj, dict):
        return {k: _serialize(v) for k, v in obj.items()}
    for cls, kind in _KINDS:
        if isinstance(obj, cls):
            return kind.serialize(obj)
    if callable(obj):  # a loss or metric function
        return losses_module.LOSSES.serialize(obj)
    raise ValueError(f"Cannot serialize {obj!r} in the compile configuration.")


def _deserialize(cfg, kind, custom_objects=None):
    """An optimizer, loss or metric from its serialized form (or a name)."""
    if cfg is None or isinstance(cfg, (str, int, float, bool)):
        return cfg
    if isinstance(cfg, list):
        return [_deserialize(c, kind, custom_objects) for c in cfg]
    if isinstance(cfg, dict) and "class_name" not in cfg:
        return {k: _deserialize(v, kind, custom_objects) for k, v in cfg.items()}
    if cfg["class_name"] == "function":  # a user's function, else a built-in's name
        found = registry.get_registered_object(cfg["config"], custom_objects)
        return cfg["config"] if found is None else found
    kinds = {"optimizer": optimizers_module.OPTIMIZERS, "loss": losses_module.LOSSES}
    return kinds.get(kind, metrics_module.METRICS).deserialize(cfg, custom_objects)


class _CompiledMetricsShim:
    """TF 2.x's `model.compiled_metrics`: `update_state(y, y_pred, sw)`."""

    def __init__(self, model):
        self._model = model

    def update_state(self, y_true, y_pred, sample_weight=None):
        compiled = self._model._compile_metrics
        if compiled is not None:
            compiled.update_state(y_true, y_pred, sample_weight)

    def reset_state(self):
        compiled = self._model._compile_metrics
        if compiled is not None:
            compiled.reset_state()

    @property
    def metrics(self) -> list:
        compiled = self._model._compile_metrics
        return [] if compiled is None else compiled.metrics


if TYPE_CHECKING:  # the mixin's host: keras.Model is TrainingMixin + Layer
    from jaxtape._src.core.typing import (
        LossLike,
        MetricLike,
        Nested,
        OptimizerLike,
    )
    from jaxtape._src.keras.layers.base import Layer as _Host
else:
    _Host = object


_Callbacks: TypeAlias = (
    "Sequence[callbacks_module.Callback] | callbacks_module.CallbackList"
)


class TrainingMixin(_Host):
    """The training API of `keras.Model` (Keras 3's `Trainer`)."""

    def _init_training(self) -> None:
        self.optimizer: optimizers_module.Optimizer | None = None
        self._compile_loss: compile_utils.CompileLoss | None = None
        self._compile_metrics: compile_utils.CompileMetrics | None = None
        self._loss_tracker: metrics_module.Mean | None = None  # set by compile
        self.__dict__["loss"] = None  # (not tracked: checkpoints leave it out)
        self.__dict__["_compile_config"] = None
        self.stop_training = False
        self._initial_epoch: int | None = None  # set by BackupAndRestore
        self.stop_evaluating = False
        self.stop_predicting = False
        self.history: callbacks_module.History | None = None
        self.compiled = False
        self.run_eagerly = False
        self.jit_compile = None
        self.steps_per_execution = 1

    def compile(
        self,
        optimizer: OptimizerLike = "rmsprop",
        loss: Nested[LossLike | None] = None,
        loss_weights: float | Sequence[float] | Mapping[str, float] | None = None,
        metrics: Nested[MetricLike | None] = None,
        weighted_metrics: Nested[MetricLike | None] = None,
        run_eagerly: bool = False,
        steps_per_execution: int = 1,
        jit_compile: bool | str = "auto",
        auto_scale_loss: bool = True,
    ) -> None:
        """Configures the model for training (Keras 3's `compile`).

        Args:
          optimizer: A name (`'adam'`), a config dict or an optimizer.
          loss: A name, a function, a `Loss`, or for several outputs a list or
            a dict of them keyed by output name (None for an output skips it).
          loss_weights: A float (one output) or a list/dict of floats: the
            total loss is the weighted sum of the per-output losses.
          metrics: Metrics updated without sample weights (names, functions or
            `Metric`s; per output a list or dict, as Keras 3).
          weighted_metrics: Metrics updated with the sample (and class) weights.
          run_eagerly: Run `train_step` & co. eagerly instead of compiled.
          steps_per_execution: N runs N batches per compiled call (Keras's
            unrolled loop); callbacks then see every Nth batch.
          jit_compile: Recorded as Keras records it; jaxtape compiles a step
            with XLA in every case (JAX has no graph mode without XLA), unless
            `run_eagerly`.
          auto_scale_loss: Under the `mixed_float16` dtype policy, wrap the
            optimizer in a `LossScaleOptimizer` (as Keras 3 does).

        Note: the positional order is Keras 3's (`loss_weights` before
        `metrics`), as tf.keras in TF 2.21.
        """
        if not isinstance(steps_per_execution, int) or steps_per_execution < 1:
            raise ValueError(
                "`steps_per_execution` must be a positive integer. Received: "
                f"steps_per_execution={steps_per_execution}"
            )
        self.optimizer = optimizers_module.get(optimizer)
        policy = getattr(self, "dtype_policy", None)
        if (
            auto_scale_loss
            and policy is not None
            and policy.name == "mixed_float16"
            and self.optimizer is not None
            and not isinstance(self.optimizer, LossScaleOptimizer)
        ):
            self.optimizer = LossScaleOptimizer(
                self.optimizer, name="loss_scale_optimizer"
            )
        output_names = self._output_names()
        self._compile_loss = None
        if loss is not None:
            self._compile_loss = compile_utils.CompileLoss(
                loss, loss_weights, output_names=output_names
            )
        self.__dict__["loss"] = loss
        self._compile_metrics = None
        if metrics is not None or weighted_metrics is not None:
            self._compile_metrics = compile_utils.CompileMetrics(
                metrics, weighted_metrics, output_names=output_names
            )
        if jit_compile == "auto":
            jit_compile = not run_eagerly
        if jit_compile and run_eagerly:
            jit_compile = False
            warnings.warn(
                "If `run_eagerly` is True, then `jit_compile` cannot also be True. "
                "Disabling `jit_compile`.",
                stacklevel=2,
            )
        self.jit_compile = bool(jit_compile)
        self.run_eagerly = bool(run_eagerly)
        self.steps_per_execution = steps_per_execution
        self.stop_training = False
        self.__dict__.pop("_compiled_steps", None)
        with context.paused_tapes():
            self._loss_tracker = metrics_module.Mean(name="loss")
        self.compiled = True
        # (the strategy whose scope compiled it runs fit/evaluate/predict)
        self.__dict__["_distribute_strategy"] = distribution.current_strategy()
        self.__dict__["_compile_config"] = {
            "optimizer": self.optimizer,
            "loss": loss,
            "loss_weights": loss_weights,
            "metrics": metrics,
            "weighted_metrics": weighted_metrics,
            "run_eagerly": run_eagerly,
            "steps_per_execution": steps_per_execution,
            "jit_compile": jit_compile,
        }

    def _output_names(self):
        graph = getattr(self, "_graph", None)
        if graph is not None:
            outputs = graph[1]
            if isinstance(outputs, dict):
                return list(outputs)
            return [t.name for t in flatten(outputs)]
        return None

    # -- the compile configuration (saved in .keras files) ---------------------------
    def get_compile_config(self) -> dict:
        """The arguments of `compile`, serialized as Keras 3 writes them."""
        config = self.__dict__.get("_compile_config")
        if not self.compiled or config is None:
            return {}
        return {k: _serialize(v) for k, v in config.items()}

    def compile_from_config(self, config, custom_objects=None) -> None:
        """Compiles the model from `get_compile_config()`'s dict (Keras 3's),
        then builds the optimizer's slots on the model's trainable variables."""
        config = dict(config)
        if type(self).compile is not TrainingMixin.compile:
            warnings.warn(
                "`compile()` was not called as part of model loading because the "
                "model's `compile()` method is custom. All subclassed Models that "
                "have `compile()` overridden should also override "
                "`get_compile_config()` and `compile_from_config(config)`. "
                "Alternatively, you can call `compile()` manually after loading.",
                stacklevel=2,
            )
            return
        kinds = {"optimizer": "optimizer", "loss": "loss"}
        for key in ("optimizer", "loss", "metrics", "weighted_metrics"):
            if key in config:
                config[key] = _deserialize(
                    config[key], kinds.get(key, "metric"), custom_objects
                )
        self.compile(**config)
        if self.optimizer is not None and self.built:
            self.optimizer.build(self.trainable_variables)

    # -- metrics -----------------------------------------------------------------
    @property
    def metrics(self) -> list:
        """Keras 3's order: the loss tracker, `compile_metrics`, the per-output
        loss trackers, then the metrics held as attributes (this model's, then
        its layers')."""
        out = []
        if self.compiled:
            if self._loss_tracker is not None:
                out.append(self._loss_tracker)
            if self._compile_metrics is not None:
                out.append(self._compile_metrics)
            if self._compile_loss is not None:
                out.extend(self._compile_loss.metrics)
        out.extend(self.__dict__.get("_metrics", ()))
        for layer in self._flatten_layers(include_self=False):
            if not isinstance(layer, TrainingMixin):
                out.extend(layer.__dict__.get("_metrics", ()))
        seen, unique = set(), []
        for m in out:
            if id(m) not in seen:
                seen.add(id(m))
                unique.append(m)
        return unique

    @property
    def metrics_names(self) -> list:
        return [m.name for m in self.metrics]

    @property
    def loss_tracker(self):
        """The `Mean` of the loss that `fit` reports (Keras's `_loss_tracker`);
        an attribute of this name that a subclass sets is its own metric."""
        return self.__dict__.get("_user_loss_tracker", self._loss_tracker)

    @loss_tracker.setter
    def loss_tracker(self, value):
        self._user_loss_tracker = value

    def reset_metrics(self) -> None:
        for m in self.metrics:
            m.reset_state()

    _reset_metrics = reset_metrics

    def get_metrics_result(self) -> dict:
        """Every metric's result by name (a dict result is merged in)."""
        out = {}
        for metric in self.metrics:
            result = metric.result()
            if isinstance(result, dict):
                out.update(result)
            else:
                out[metric.name] = result
        return out

    def _get_metrics_result_or_logs(self, logs) -> dict:
        metric_logs = self.get_metrics_result()
        if isinstance(logs, dict) and set(logs) == set(metric_logs):
            return metric_logs
        return logs

    def _flatten_metrics_in_order(self, logs):
        names = []
        for metric in self.metrics:
            if isinstance(metric, compile_utils.CompileMetrics):
                names += [m.name for m in metric.metrics]
            else:
                names.append(metric.name)
        results = [logs[name] for name in names if name in logs]
        results += [logs[key] for key in sorted(logs) if key not in names]
        return results[0] if len(results) == 1 else results

    def _assert_compile_called(self, method_name: str) -> None:
        if not self.compiled:
            raise self._not_compiled(method_name)

    def _not_compiled(self, method_name: str) -> ValueError:
        return ValueError(
            f"You must call `compile()` before using the model (`{method_name}` "
            f"on model {self.name!r}): `model.compile(optimizer=..., "
            "loss=...)`."
        )

    # -- the loss -------------------------------------------------------------------
    def compute_loss(
        self, x=None, y=None, y_pred=None, sample_weight=None, training=True
    ):
        """The compiled loss of `(y, y_pred)` plus the model's `losses`.

        `x` and `training` are unused by this default, as in Keras; override
        it to compute a custom loss.
        """
        del x, training  # (Keras's default uses neither)
        losses = []
        if self._compile_loss is not None:
            loss = self._compile_loss(y, y_pred, sample_weight)
            if loss is not None:
                losses.append(loss)
        for extra in self.losses:  # add_loss terms and regularizers
            if not getattr(getattr(extra, "dtype", None), "is_floating", True):
                extra = math_ops.cast(extra, "float32")
            losses.append(math_ops.reduce_sum(extra))
        if not losses:
            raise ValueError(
                "No loss to compute. Provide a `loss` argument in `compile()`."
            )
        return losses[0] if len(losses) == 1 else math_ops.add_n(losses)

    def _compute_loss(self, x, y, y_pred, sample_weight, training):
        """`compute_loss`, for overrides written before Keras 3.3's `training`."""
        if "training" in inspect.signature(self.compute_loss).parameters:
            return self.compute_loss(x, y, y_pred, sample_weight, training=training)
        return self.compute_loss(x, y, y_pred, sample_weight)

    def compute_metrics(self, x, y, y_pred, sample_weight=None) -> dict:
        """Updates the compiled metrics and returns every metric's result.

        `x` is unused by this default, as in Keras; overrides may use it."""
        del x  # (Keras's default does not use it)
        if self._compile_metrics is not None:
            self._compile_metrics.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    # TF 2.x's names, still used by tutorials' custom train_steps.
    def compiled_loss(self, y, y_pred, sample_weight=None, regularization_losses=None):
        """TF 2.x's `self.compiled_loss(y, y_pred, regularization_losses=...)`.

        Returns `compute_loss(y=y, y_pred=y_pred, sample_weight=...)`, which
        already adds `model.losses` (so `regularization_losses` is unused, as
        in TF 2.21's shim), and, as TF 2.x did, adds it to the `loss` metric.

        Differences from TF 2.21: its shim of `compiled_metrics.update_state`
        also feeds `y_pred` to the loss tracker (whose `loss` log is then the
        mean prediction); here the loss tracker averages this loss, as in TF
        2.x.
        """
        del regularization_losses  # compute_loss adds model.losses itself
        loss = self.compute_loss(
            x=None, y=y, y_pred=y_pred, sample_weight=sample_weight
        )
        if self._loss_tracker is not None:
            with context.paused_tapes():
                batch = flatten(y_pred)[0].shape[0]
                self._loss_tracker.update_state(loss, sample_weight=batch)
        return loss

    @property
    def compiled_metrics(self):
        """TF 2.x's `self.compiled_metrics.update_state(y, y_pred)`: updates
        the metrics (and weighted metrics) given to `compile`."""
        return _CompiledMetricsShim(self)

    # -- steps --------------------------------------------------------------------
    def train_step(self, data):
        """One training step on a batch `data = (x, y[, sample_weight])`.

        Override it to customize `fit` (Keras's "customizing what happens in
        fit"); it is compiled with `jaxtape.function` unless the model was
        compiled with `run_eagerly=True`. Returns the metrics' results.
        """
        tracker, optimizer = self._loss_tracker, self.optimizer
        if tracker is None:
            raise self._not_compiled("train_step")
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self._compute_loss(x, y, y_pred, sample_weight, training=True)
            scaled = optimizer.scale_loss(loss) if optimizer else loss
        with context.paused_tapes():
            tracker.update_state(loss, sample_weight=data_adapter.num_samples(x))
        variables = self.trainable_weights
        if variables:
            if optimizer is None:
                raise ValueError(
                    f"Model {self.name!r} was compiled without an optimizer, so "
                    "`fit`/`train_step` cannot update its weights. Compile it with "
                    "one: `model.compile(optimizer='adam', loss=...)`."
                )
            grads = tape.gradient(scaled, variables)
            optimizer.apply_gradients(zip(grads, variables))
        else:
            warnings.warn(
                "The model does not have any trainable weights.", stacklevel=2
            )
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def test_step(self, data):
        """One evaluation step on `data = (x, y[, sample_weight])`."""
        tracker = self._loss_tracker
        if tracker is None:
            raise self._not_compiled("test_step")
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        y_pred = self(x, training=False)
        loss = self._compute_loss(x, y, y_pred, sample_weight, training=False)
        with context.paused_tapes():
            tracker.update_state(loss, sample_weight=data_adapter.num_samples(x))
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def predict_step(self, data):
        x, _, _ = unpack_x_y_sample_weight(data)
        return self(x, training=False)

    def _step_function(self, kind, per_call=1):
        """`train_step`/`test_step`/`predict_step`, compiled unless run eagerly;
        with `per_call` > 1 it runs a tuple of that many batches (Keras's
        unrolled `steps_per_execution` loop)."""
        step = getattr(self, f"{kind}_step")
        if per_call > 1:
            step = _unrolled(step, kind)
        strategy = self.__dict__.get("_distribute_strategy")
        if self.run_eagerly or any(
            layer._RUNS_ON_HOST for layer in self._flatten_layers()
        ):  # (host layers, string lookups, cannot be compiled: run eagerly)
            return distribution.on_replicas(strategy, step)
        cache = self.__dict__.setdefault("_compiled_steps", {})
        key = (kind, per_call > 1)
        if key not in cache:
            # Keras 3 (TF 2.21) runs steps unconverted (`do_not_convert`).
            compiled = function(step, autograph=False)
            cache[key] = distribution.on_replicas(strategy, compiled)
        return cache[key]

    def _callback_list(self, callbacks, verbose, epochs, steps, add_history=False):
        if isinstance(callbacks, callbacks_module.CallbackList):
            return callbacks
        return callbacks_module.CallbackList(
            callbacks,
            add_history=add_history,
            add_progbar=verbose != 0,
            model=self,
            verbose=verbose,
            epochs=epochs,
            steps=steps,
        )

    # -- fit / evaluate / predict ----------------------------------------------------
    def fit(
        self,
        x: Any = None,
        y: Any = None,
        batch_size: int | None = None,
        epochs: int = 1,
        verbose: int | str = "auto",
        callbacks: _Callbacks | None = None,
        validation_split: float = 0.0,
        validation_data: Any = None,
        shuffle: bool = True,
        class_weight: Mapping[int, float] | None = None,
        sample_weight: Any = None,
        initial_epoch: int = 0,
        steps_per_epoch: int | None = None,
        validation_steps: int | None = None,
        validation_batch_size: int | None = None,
        validation_freq: int | Sequence[int] = 1,
    ) -> callbacks_module.History | None:
        """Trains on arrays, Tensors, a Dataset or a Python generator (Keras 3's).

        `class_weight` ({class index: weight}) weights each sample by the class
        of its label (the argmax of one-hot labels), as Keras; a generator
        yields `(x, y[, sample_weight])` batches, for `steps_per_epoch` steps
        (or until it runs out). Returns the History.
        """
        self._assert_compile_called("fit")
        epochs = keras_config.capped_epochs(epochs)  # keras.config.set_max_epochs
        if validation_split and validation_data is None:
            (x, y, sample_weight), validation_data = (
                data_adapter.train_validation_split(
                    (x, y, sample_weight), validation_split
                )
            )
        batches = data_adapter.adapter(
            "fit",
            x,
            y,
            sample_weight,
            batch_size,
            shuffle,
            keras_config.capped_steps(steps_per_epoch),
            class_weight=class_weight,
        )
        val = None
        if validation_data is not None:
            val = unpack_x_y_sample_weight(validation_data)
        verbose = 1 if verbose == "auto" else verbose
        cb = self._callback_list(
            callbacks, verbose, epochs, batches.steps, add_history=True
        )
        self.stop_training = False
        per_call = self.steps_per_execution
        train = self._step_function("train", per_call)
        cb.on_train_begin()
        initial_epoch = self._initial_epoch or initial_epoch  # (a restored backup)
        logs, training_logs = {}, None
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            cb.on_epoch_begin(epoch)
            with checks.deferred_failures():  # no wait per step for the checks
                for begin, end, data in _executions(batches.epoch(), per_call):
                    cb.on_train_batch_begin(begin)
                    logs = train(data)
                    cb.on_train_batch_end(end, logs)
                    if self.stop_training:
                        break
            epoch_logs = pythonify_logs(self._get_metrics_result_or_logs(logs))
            if val is not None and _should_eval(epoch, validation_freq):
                val_x, val_y, val_sw = val
                val_logs = self.evaluate(
                    val_x,
                    val_y,
                    sample_weight=val_sw,
                    batch_size=validation_batch_size or batch_size,
                    steps=validation_steps,
                    callbacks=cb,
                    return_dict=True,
                )
                epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
            cb.on_epoch_end(epoch, epoch_logs)
            training_logs = epoch_logs
            if self.stop_training:
                break
        if self.optimizer is not None and epochs > 0:  # (use_ema: the averages)
            self.optimizer.finalize_variable_values(self.trainable_weights)
        cb.on_train_end(logs=training_logs)
        # (its History, also when no epoch ran: Keras returns it empty)
        self.history = next(
            c for c in cb.callbacks if isinstance(c, callbacks_module.History)
        )
        return self.history

    def evaluate(
        self,
        x: Any = None,
        y: Any = None,
        batch_size: int | None = None,
        verbose: int | str = "auto",
        sample_weight: Any = None,
        steps: int | None = None,
        callbacks: _Callbacks | None = None,
        return_dict: bool = False,
    ) -> Any:
        """The loss and metrics over the data: a scalar, a list in the order of
        `metrics_names`, or (`return_dict=True`) a dict, as Keras 3."""
        self._assert_compile_called("evaluate")
        steps = keras_config.capped_steps(steps)  # keras.config's debugging cap
        batches = data_adapter.adapter(
            "evaluate", x, y, sample_weight, batch_size, steps=steps
        )
        verbose = 1 if verbose == "auto" else verbose
        cb = self._callback_list(callbacks, verbose, 1, batches.steps)
        per_call = self.steps_per_execution
        test = self._step_function("test", per_call)
        self.stop_evaluating = False
        cb.on_test_begin()
        logs = {}
        self.reset_metrics()
        with context.paused_tapes(), checks.deferred_failures():
            for begin, end, data in _executions(batches.epoch(), per_call):
                cb.on_test_batch_begin(begin)
                logs = test(data)
                cb.on_test_batch_end(end, logs)
                if self.stop_evaluating:
                    break
        logs = pythonify_logs(self._get_metrics_result_or_logs(logs))
        cb.on_test_end(logs)
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def predict(
        self,
        x: Any,
        batch_size: int | None = None,
        verbose: int | str = "auto",
        steps: int | None = None,
        callbacks: _Callbacks | None = None,
    ) -> Any:
        """Model outputs for `x` (arrays, a Dataset or a generator), batch by
        batch, as NumPy arrays in the structure of the model's outputs."""
        steps = keras_config.capped_steps(steps)  # keras.config's debugging cap
        batches = data_adapter.adapter("predict", x, batch_size=batch_size, steps=steps)
        verbose = 1 if verbose == "auto" else verbose
        cb = self._callback_list(callbacks, verbose, 1, batches.steps)
        per_call = self.steps_per_execution
        predict = self._step_function("predict", per_call)
        self.stop_predicting = False
        cb.on_predict_begin()
        outs = []
        with context.paused_tapes(), checks.deferred_failures():
            for begin, end, data in _executions(batches.epoch(), per_call):
                cb.on_predict_batch_begin(begin)
                data = tuple(d[:1] for d in data) if per_call > 1 else data[:1]
                out = predict(data)
                outs.append(tree_map(_numpy, out))
                cb.on_predict_batch_end(end, {"outputs": out})
                if self.stop_predicting:
                    break
        cb.on_predict_end()
        if not outs:
            return outs
        return _concat_batches(outs, np.concatenate)

    def train_on_batch(
        self, x, y=None, sample_weight=None, class_weight=None, return_dict=False
    ):
        """One training step on one batch; the metrics after it (Keras 3's)."""
        self._assert_compile_called("train_on_batch")
        if class_weight is not None:
            if sample_weight is not None:
                raise ValueError(
                    "Arguments `sample_weight` and `class_weight` cannot be "
                    f"specified at the same time. Received: sample_weight="
                    f"{sample_weight}, class_weight={class_weight}"
                )
            sample_weight = data_adapter.class_weight_to_sample_weights(
                data_adapter.to_numpy(y), class_weight
            )
        self.reset_metrics()
        logs = self._step_function("train")(pack(x, y, sample_weight))
        logs = pythonify_logs(logs)
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        self._assert_compile_called("test_on_batch")
        self.reset_metrics()
        with context.paused_tapes():
            logs = self._step_function("test")(pack(x, y, sample_weight))
        logs = pythonify_logs(logs)
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def predict_on_batch(self, x):
        with context.paused_tapes():
            out = self._step_function("predict")(pack(x))
        return tree_map(_numpy, out)


def _concat_batches(batches, concat):
    """The per-batch outputs (one structure each) joined along the batch axis."""
    flats = [tree_flatten(b)[0] for b in batches]
    joined = [concat(list(parts), axis=0) for parts in zip(*flats)]
    return tree_unflatten_like(batches[0], joined)


def _unrolled(step, kind):
    """Runs `step` on each batch of a tuple (Keras's unrolled multi-step)."""

    def multi_step(batches):
        outputs = [step(data) for data in batches]
        if kind == "predict":
            return _concat_batches(outputs, array_ops.concat)
        return outputs[-1]

    return multi_step


def _executions(batches, per_call):
    """`(first step, last step, data)` per call: one batch, or a tuple of
    `per_call` batches (fewer at the end), as Keras's epoch iterator."""
    if per_call == 1:
        for step, data in enumerate(batches):
            yield step, step, data
        return
    batches = iter(batches)
    for step in itertools.count(0, per_call):
        group = tuple(itertools.islice(batches, per_call))
        if not group:
            return
        yield step, step + per_call - 1, group


def _should_eval(epoch, validation_freq) -> bool:
    epoch += 1  # one-indexed, as the user counts
    if isinstance(validation_freq, int):
        return epoch % validation_freq == 0
    if isinstance(validation_freq, list):
        return epoch in validation_freq
    raise ValueError(
        "Expected `validation_freq` to be a list or int. Received: "
        f"validation_freq={validation_freq} of the type {type(validation_freq)}."
    )
