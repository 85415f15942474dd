"""What `Model.compile` builds: the compiled loss and metrics (Keras 3's). Layer L5.

`CompileLoss` applies one loss per model output (a single loss applies to
every output), weights each by `loss_weights` and sums them; with more than
one loss it keeps a `<output>_loss` Mean of each. `CompileMetrics` holds the
`metrics` (updated without sample weights, as in Keras 3) and the
`weighted_metrics` (updated with them), resolves `'accuracy'` to the binary,
sparse or categorical flavour from the shapes of the labels and predictions,
and reports every result under Keras's name (`<output>_<metric>` for several
outputs, `weighted_<metric>` for a weighted twin of a metric). Both are built
on the first batch they see, as in Keras.
"""

from __future__ import annotations

import numpy as np

from jaxtape._src.core import context
from jaxtape._src.keras.keras_tensor import flatten
from jaxtape._src.losses import losses as losses_module
from jaxtape._src.metrics import metrics as metrics_module


def _shape(x) -> tuple:
    return tuple(x.shape) if hasattr(x, "shape") else tuple(np.shape(x))


def _is_nested(x) -> bool:
    return isinstance(x, (list, tuple, dict))


def _flat_outputs(y, names):
    """The leaves of `y`, a dict in `names` order when its keys are those names."""
    if isinstance(y, dict):
        keys = names if names and set(names) == set(y) else list(y)
        return [y[k] for k in keys]
    if isinstance(y, (list, tuple)):
        return list(flatten(list(y)))
    return [y]


def _kind(y_true, y_pred) -> str:
    """Keras's pick between binary, sparse categorical and categorical."""
    t, p = _shape(y_true), _shape(y_pred)
    if p and p[-1] == 1:
        return "binary"
    if len(t) < len(p) or (t and t[-1] == 1 and p and p[-1] > 1):
        return "sparse"
    return "categorical"


def get_loss(identifier, y_true, y_pred):
    """A `Loss` for one output (Keras's `get_loss`, with `'crossentropy'`)."""
    if identifier is None:
        return None
    if str(identifier).lower() in ("crossentropy", "ce"):
        loss = {
            "binary": losses_module.binary_crossentropy,
            "sparse": losses_module.sparse_categorical_crossentropy,
            "categorical": losses_module.categorical_crossentropy,
        }[_kind(y_true, y_pred)]
    else:
        loss = losses_module.get(identifier)
    if not isinstance(loss, losses_module.Loss):
        name = identifier if isinstance(identifier, str) else loss.__name__
        loss = losses_module.LossFunctionWrapper(loss, name=name)
    return loss


def get_metric(identifier, y_true, y_pred):
    """A Metric for one output (Keras's `get_metric`, with `'accuracy'`)."""
    if identifier is None:
        raise ValueError("Expected metric, received `None`")
    if str(identifier).lower() in ("accuracy", "acc"):
        cls = {
            "binary": metrics_module.BinaryAccuracy,
            "sparse": metrics_module.SparseCategoricalAccuracy,
            "categorical": metrics_module.CategoricalAccuracy,
        }[_kind(y_true, y_pred)]
        metric = cls(name=str(identifier))
    elif isinstance(identifier, str):
        try:
            metric = metrics_module.get(identifier)
        except ValueError:  # a loss's name used as a metric ("mse", ...)
            fn = losses_module.get(identifier)
            metric = metrics_module.MeanMetricWrapper(fn, name=identifier)
    else:
        metric = metrics_module.get(identifier)
    if isinstance(identifier, str):
        metric.name = identifier
    return metric


class CompileLoss:
    """The loss of `compile(loss=..., loss_weights=...)` (Keras 3's CompileLoss).

    `loss`: one loss (for every output), a list (one per output) or a dict
    keyed by output name. `loss_weights`: a float (one output), a list or a
    dict. Calling it returns the weighted sum of the per-output losses.
    """

    def __init__(self, loss, loss_weights=None, output_names=None):
        if loss_weights is not None and not isinstance(
            loss_weights, (list, tuple, dict, float, int)
        ):
            raise ValueError(
                "Expected `loss_weights` argument to be a float (single output "
                "case) or a list, tuple, or dict (multiple output case). Received "
                f"instead: loss_weights={loss_weights} of type {type(loss_weights)}"
            )
        self.name = "compile_loss"
        self._user_loss = loss
        self._user_loss_weights = loss_weights
        self.output_names = output_names
        self.built = False
        self.metrics: list = []  # one Mean per loss when there are several
        self._entries: list = []  # (output index, Loss, weight, name)

    def build(self, y_true, y_pred) -> None:
        names = self.output_names
        if isinstance(y_pred, dict):
            names = names if names and set(names) == set(y_pred) else list(y_pred)
        flat_pred = _flat_outputs(y_pred, names)
        flat_true = self._flat_true(y_true, flat_pred, names)
        n = len(flat_pred)
        if not names or len(names) != n:
            names = [None] * n
        losses = self._per_output(self._user_loss, n, names, "loss")
        weights = self._weights(losses, names)
        for i, (loss, weight) in enumerate(zip(losses, weights)):
            fn = get_loss(loss, flat_true[i], flat_pred[i])
            if fn is not None:
                name = names[i] if names[i] is not None else fn.name
                self._entries.append((i, fn, weight, name))
        if len(self._entries) > 1:
            with context.paused_tapes():
                self.metrics = [
                    metrics_module.Mean(name=f"{name}_loss")
                    for _, _, _, name in self._entries
                ]
        self.built = True

    def _per_output(self, spec, n, names, argument):
        if isinstance(spec, dict):
            unknown = set(spec) - {k for k in names if k is not None}
            if unknown:
                raise ValueError(
                    f"Expected keys {names} in {argument} dict, but found "
                    f"{argument}.keys()={list(spec)}. Key the {argument} by the "
                    "model's output names."
                )
            return [spec.get(name) for name in names]
        if isinstance(spec, (list, tuple)):
            if len(spec) != n:
                raise ValueError(
                    f"`{argument}` has {len(spec)} entries but the model has {n} "
                    f"output(s). Pass one entry per output (None to skip one), or "
                    f"a single {argument} for all outputs. Received: "
                    f"{argument}={spec}"
                )
            return list(spec)
        return [spec] * n

    def _weights(self, losses, names):
        w = self._user_loss_weights
        if w is None:
            return [None] * len(losses)
        if isinstance(w, (dict, list, tuple)):
            return self._per_output(w, len(losses), names, "loss_weights")
        if sum(loss is not None for loss in losses) != 1:
            raise ValueError(
                "`loss_weights` must match the number of losses, got "
                f"{sum(loss is not None for loss in losses)} losses and 1 weight. "
                "Pass a list or dict of weights, one per output."
            )
        return [w if loss is not None else None for loss in losses]

    @staticmethod
    def _flat_true(y_true, flat_pred, names):
        if isinstance(y_true, dict):
            keys = [k for k in names if k in y_true] if names else list(y_true)
            if len(keys) != len(y_true):
                keys = list(y_true)
            flat = [y_true[k] for k in keys]
        elif isinstance(y_true, (list, tuple)) and len(flat_pred) > 1:
            flat = list(y_true)
        else:
            flat = [y_true]
        if len(flat) != len(flat_pred):
            raise ValueError(
                "y_true and y_pred have different structures: "
                f"{len(flat)} label array(s) for {len(flat_pred)} output(s). Pass "
                "one label array per model output."
            )
        return flat

    def __call__(self, y_true, y_pred, sample_weight=None):
        if not self.built:
            self.build(y_true, y_pred)
        names = self.output_names
        if isinstance(y_pred, dict):
            names = names if names and set(names) == set(y_pred) else list(y_pred)
        flat_pred = _flat_outputs(y_pred, names)
        flat_true = self._flat_true(y_true, flat_pred, names)
        weights = sample_weight
        if _is_nested(sample_weight):
            weights = _flat_outputs(sample_weight, names)
            if len(weights) < len(flat_pred):
                weights = [weights[0]] * len(flat_pred)
        total = None
        for k, (i, fn, weight, _) in enumerate(self._entries):
            sw = weights[i] if isinstance(weights, list) else weights
            value = fn(flat_true[i], flat_pred[i], sample_weight=sw)
            if self.metrics:  # the *unweighted* loss of each output
                # Keras weighs it by the batch's static size, which is unknown
                # (None: weight 1) in a tf.function: compiled, each batch counts
                # once; run eagerly, by its size.
                size = 1 if context.state.function_depth else _shape(flat_pred[i])[0]
                with context.paused_tapes():
                    self.metrics[k].update_state(value, sample_weight=size)
            if weight is not None:
                value = value * weight
            total = value if total is None else total + value
        return total


class CompileMetrics(metrics_module.Metric):
    """The `metrics` and `weighted_metrics` of `compile` (Keras 3's).

    One entry of `model.metrics`, named `compile_metrics`; its `result()` is a
    dict of the metrics' results under their log names.
    """

    def __init__(self, metrics, weighted_metrics, output_names=None):
        for argument, value in (
            ("metrics", metrics),
            ("weighted_metrics", weighted_metrics),
        ):
            if value and not isinstance(value, (list, tuple, dict)):
                raise ValueError(
                    f"Expected `{argument}` argument to be a list, tuple, or dict. "
                    f"Received instead: {argument}={value} of type {type(value)}"
                )
        super().__init__(name="compile_metrics")
        self._user_metrics = metrics
        self._user_weighted_metrics = weighted_metrics
        self.output_names = output_names
        self.built = False
        self._flat_metrics: list = []
        self._flat_weighted_metrics: list = []
        self._names: list = []

    def _init_state(self):
        return []

    @property
    def metrics(self) -> list:
        """The metrics themselves, unweighted first."""
        out = []
        for group in self._flat_metrics + self._flat_weighted_metrics:
            if group:
                out.extend(group[1])
        return out

    @property
    def variables(self) -> tuple:
        return tuple(v for m in self.metrics for v in m.variables)

    def build(self, y_true, y_pred) -> None:
        names = self.output_names
        if isinstance(y_pred, dict):
            names = names if names and set(names) == set(y_pred) else list(y_pred)
        flat_pred = _flat_outputs(y_pred, names)
        flat_true = CompileLoss._flat_true(y_true, flat_pred, names)
        if not names or len(names) != len(flat_pred):
            names = [None] * len(flat_pred)
        self._names = names
        with context.paused_tapes():
            self._flat_metrics = self._build_set(
                self._user_metrics, flat_true, flat_pred, names, "metrics"
            )
            self._flat_weighted_metrics = self._build_set(
                self._user_weighted_metrics,
                flat_true,
                flat_pred,
                names,
                "weighted_metrics",
            )
        self.built = True

    def _build_set(self, spec, flat_true, flat_pred, names, argument):
        n = len(flat_pred)
        if not spec:
            return [None] * n
        if n == 1:  # every metric applies to the one output
            items = list(spec.values()) if isinstance(spec, dict) else spec
            per_output = [flatten(list(items)) if _is_nested(items) else [items]]
            out_names = [None]
        elif isinstance(spec, dict) and set(spec) <= {k for k in names if k}:
            per_output = [spec.get(name) for name in names]
            out_names = names
        elif isinstance(spec, (list, tuple)) and len(spec) == n:
            per_output = list(spec)
            out_names = names
        else:
            raise ValueError(
                f"Invalid `{argument}`. `{argument}` should contain metrics objects "
                "and either be a dict or a list matching the output names of the "
                f"model {names}, one entry per output. Received: {argument}={spec}"
            )
        out = []
        for metrics, yt, yp, name in zip(per_output, flat_true, flat_pred, out_names):
            if metrics is None:
                out.append(None)
                continue
            items = list(metrics) if isinstance(metrics, (list, tuple)) else [metrics]
            out.append((name, [get_metric(m, yt, yp) for m in items]))
        return out

    def update_state(self, y_true, y_pred, sample_weight=None):
        if not self.built:
            self.build(y_true, y_pred)
        names = self._names
        flat_pred = _flat_outputs(y_pred, names)
        flat_true = CompileLoss._flat_true(y_true, flat_pred, names)
        if sample_weight is not None and _is_nested(sample_weight):
            weights = _flat_outputs(sample_weight, names)
            if len(weights) < len(flat_pred):
                weights = [weights[0]] * len(flat_pred)
        else:
            weights = [sample_weight] * len(flat_pred)
        with context.paused_tapes():
            for group, yt, yp in zip(self._flat_metrics, flat_true, flat_pred):
                for m in group[1] if group else ():
                    m.update_state(yt, yp)
            for group, yt, yp, sw in zip(
                self._flat_weighted_metrics, flat_true, flat_pred, weights
            ):
                for m in group[1] if group else ():
                    m.update_state(yt, yp, sample_weight=sw)

    def reset_state(self) -> None:
        for m in self.metrics:
            m.reset_state()

    def result(self) -> dict:
        if not self.built:
            raise ValueError(
                "Cannot get result() since the metric has not yet been built. "
                "Update the compiled metrics first (`compute_metrics` or a "
                "`train_step`/`test_step`)."
            )
        results: dict = {}
        counts: dict = {}
        for group in self._flat_metrics:
            for m in group[1] if group else ():
                name = f"{group[0]}_{m.name}" if group[0] else m.name
                if name in counts:
                    counts[name] += 1
                    name = f"{name}_{counts[name] - 1}"
                else:
                    counts[name] = 1
                results[name] = m.result()
        for group in self._flat_weighted_metrics:
            for m in group[1] if group else ():
                name = f"{group[0]}_{m.name}" if group[0] else m.name
                if name in counts:
                    name = f"weighted_{m.name}"
                    if group[0]:
                        name = f"{group[0]}_{name}"
                    if name in counts:
                        counts[name] += 1
                        name = f"{name}_{counts[name] - 1}"
                    else:
                        counts[name] = 1
                else:
                    counts[name] = 1
                results[name] = m.result()
        return results

    def get_config(self):
        raise NotImplementedError(
            "CompileMetrics is built by `compile`; serialize the model's compile "
            "configuration (`model.get_compile_config()`) instead."
        )
