"""Every argument of the Keras training API does what tf.keras does with it.

Each implemented argument is run side by side with real tf.keras (the `tf`
fixture): same data, same initial weights, then the losses, metrics and
weights are compared. A signature sweep fails when a public parameter of the
training API modules is never used in its body, unless it is on the
allow-list below with the reason TF/Keras itself leaves it unused.
"""

import ast
import builtins
import inspect
import pathlib
import textwrap
import warnings

import numpy as np
import pytest

import jaxtape as jt

RNG = np.random.default_rng(0)
X = RNG.random((24, 4)).astype(np.float32)
LABELS = RNG.integers(0, 3, 24)
ONEHOT = np.eye(3, dtype=np.float32)[LABELS]
Y2 = RNG.random((24, 2)).astype(np.float32)
SW = RNG.random(24).astype(np.float32)


@pytest.fixture(autouse=True)
def _fresh_names(tf):
    """Automatic names (`dense_3`, `auc_1`) counted from zero on both sides."""
    tf.keras.backend.clear_session()
    jt.keras.backend.clear_session()


def _dense_model(mod, units=3, activation="softmax"):
    model = mod.keras.Sequential(
        [
            mod.keras.Input((4,)),
            mod.keras.layers.Dense(5, activation="tanh"),
            mod.keras.layers.Dense(units, activation=activation),
        ]
    )
    return model


def _pair(tf, build, **compile_kwargs):
    """The same model in tf.keras and jaxtape, with tf.keras's initial weights.

    Compile arguments may be factories `mod -> object` (also inside lists)."""
    theirs, ours = build(tf), build(jt)
    ours.set_weights(theirs.get_weights())
    for mod, model in ((tf, theirs), (jt, ours)):
        model.compile(**_for_module(mod, compile_kwargs))
    return theirs, ours


def _for_module(mod, kwargs):
    def resolve(value):
        if isinstance(value, list):
            return [resolve(v) for v in value]
        return value(mod) if callable(value) else value

    return {key: resolve(value) for key, value in kwargs.items()}


def _metric(name):
    return lambda mod: getattr(mod.keras.metrics, name)()


def _sgd(lr=0.1):
    return lambda mod: mod.keras.optimizers.SGD(lr)


def _assert_history_close(ours, theirs, rtol=1e-5, atol=1e-6):
    assert list(ours) == list(theirs), (list(ours), list(theirs))
    for key in theirs:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=rtol, atol=atol)


def _assert_weights_close(ours, theirs, rtol=1e-5, atol=1e-6):
    for a, b in zip(ours.get_weights(), theirs.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _fit_both(theirs, ours, *args, **kwargs):
    kwargs.setdefault("verbose", 0)
    kwargs.setdefault("shuffle", False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        h_theirs = theirs.fit(*args, **kwargs).history
        h_ours = ours.fit(*args, **kwargs).history
    return h_ours, h_theirs


# -- fit(class_weight) ---------------------------------------------------------------
@pytest.mark.parametrize(
    "labels,loss",
    [
        (LABELS, "sparse_categorical_crossentropy"),
        (LABELS[:, None], "sparse_categorical_crossentropy"),
        (ONEHOT, "categorical_crossentropy"),
    ],
    ids=["sparse", "sparse_column", "one_hot"],
)
def test_class_weight_matches_tf_keras(tf, labels, loss):
    theirs, ours = _pair(
        tf,
        _dense_model,
        optimizer=_sgd(),
        loss=loss,
        metrics=["accuracy"],
        weighted_metrics=["accuracy"],
    )
    class_weight = {0: 0.2, 1: 3.0}  # class 2 unlisted: weight 1
    h_ours, h_theirs = _fit_both(
        theirs, ours, X, labels, batch_size=8, epochs=2, class_weight=class_weight
    )
    _assert_history_close(h_ours, h_theirs)
    _assert_weights_close(ours, theirs)


def test_class_weight_with_a_dataset_matches_tf_keras(tf):
    theirs, ours = _pair(
        tf, _dense_model, optimizer=_sgd(), loss="sparse_categorical_crossentropy"
    )
    class_weight = {0: 0.5, 1: 2.0, 2: 1.5}
    histories = []
    for mod, model in ((jt, ours), (tf, theirs)):
        data = mod.data.Dataset.from_tensor_slices((X, LABELS)).batch(8)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            h = model.fit(data, epochs=2, verbose=0, class_weight=class_weight)
        histories.append(h.history)
    _assert_history_close(*histories)
    _assert_weights_close(ours, theirs)


def test_class_weight_refusals_match_tf_keras(tf):
    for mod in (tf, jt):
        model = _dense_model(mod)
        model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
        with pytest.raises(ValueError, match="`class_weight` and `sample_weight`"):
            model.fit(X, LABELS, class_weight={0: 1.0}, sample_weight=SW, verbose=0)

        def gen(mod=mod):
            while True:
                yield X[:8], LABELS[:8]

        with pytest.raises(ValueError, match="not supported for Python generator"):
            model.fit(gen(), steps_per_epoch=2, class_weight={0: 1.0}, verbose=0)


def test_train_on_batch_class_weight_matches_tf_keras(tf):
    theirs, ours = _pair(
        tf, _dense_model, optimizer=_sgd(), loss="sparse_categorical_crossentropy"
    )
    cw = {0: 3.0, 2: 0.1}
    got = ours.train_on_batch(X, LABELS, class_weight=cw, return_dict=True)
    ref = theirs.train_on_batch(X, LABELS, class_weight=cw, return_dict=True)
    np.testing.assert_allclose(got["loss"], ref["loss"], rtol=1e-5)
    _assert_weights_close(ours, theirs)


# -- compile(loss_weights=..., weighted_metrics=...) -----------------------------------
def _two_heads(mod):
    inputs = mod.keras.Input((4,), name="features")
    hidden = mod.keras.layers.Dense(5, activation="relu", name="hidden")(inputs)
    a = mod.keras.layers.Dense(2, name="reg")(hidden)
    b = mod.keras.layers.Dense(3, activation="softmax", name="cls")(hidden)
    return mod.keras.Model(inputs, [a, b])


@pytest.mark.parametrize(
    "loss,loss_weights,metrics",
    [
        (["mse", "sparse_categorical_crossentropy"], [0.3, 2.0], [["mae"], ["acc"]]),
        (
            {"reg": "mae", "cls": "sparse_categorical_crossentropy"},
            {"reg": 5.0, "cls": 0.5},
            {"cls": ["accuracy"]},
        ),
        (["mse", None], None, None),
    ],
    ids=["lists", "dicts", "one_output_skipped"],
)
def test_multi_output_loss_weights_match_tf_keras(tf, loss, loss_weights, metrics):
    theirs, ours = _pair(
        tf,
        _two_heads,
        optimizer=_sgd(0.05),
        loss=loss,
        loss_weights=loss_weights,
        metrics=metrics,
    )
    h_ours, h_theirs = _fit_both(
        theirs, ours, X, [Y2, LABELS], batch_size=8, epochs=2, sample_weight=SW
    )
    _assert_history_close(h_ours, h_theirs)
    _assert_weights_close(ours, theirs)
    got = ours.evaluate(X, [Y2, LABELS], batch_size=8, verbose=0)
    ref = theirs.evaluate(X, [Y2, LABELS], batch_size=8, verbose=0)
    np.testing.assert_allclose(got, ref, rtol=1e-5)


def test_single_output_loss_weight_scales_the_loss_as_tf_keras(tf):
    theirs, ours = _pair(
        tf, _dense_model, optimizer=_sgd(), loss="mse", loss_weights=0.25
    )
    h_ours, h_theirs = _fit_both(theirs, ours, X, ONEHOT, batch_size=6, epochs=2)
    _assert_history_close(h_ours, h_theirs)
    _assert_weights_close(ours, theirs)


def test_weighted_metrics_get_sample_weights_and_metrics_do_not(tf):
    theirs, ours = _pair(
        tf,
        _dense_model,
        optimizer=_sgd(),
        loss="categorical_crossentropy",
        metrics=["mae", "accuracy"],
        weighted_metrics=["mae", _metric("AUC")],
    )
    h_ours, h_theirs = _fit_both(
        theirs, ours, X, ONEHOT, sample_weight=SW, batch_size=8, epochs=2
    )
    assert {"mae", "weighted_mae", "accuracy", "auc", "loss"} <= set(h_ours)
    _assert_history_close(h_ours, h_theirs, rtol=1e-4)
    got = ours.evaluate(X, ONEHOT, sample_weight=SW, verbose=0, return_dict=True)
    ref = theirs.evaluate(X, ONEHOT, sample_weight=SW, verbose=0, return_dict=True)
    assert list(got) == list(ref)
    for k in ref:
        np.testing.assert_allclose(got[k], ref[k], rtol=1e-4)
    # evaluate's list follows metrics_names, as Keras's
    np.testing.assert_allclose(
        ours.evaluate(X, ONEHOT, sample_weight=SW, verbose=0),
        theirs.evaluate(X, ONEHOT, sample_weight=SW, verbose=0),
        rtol=1e-4,
    )


# -- compile(steps_per_execution=...) --------------------------------------------------
def test_steps_per_execution_matches_tf_keras_batches_and_callbacks(tf):
    theirs, ours = _pair(
        tf,
        _dense_model,
        optimizer=_sgd(),
        loss="categorical_crossentropy",
        metrics=["accuracy"],
        steps_per_execution=2,
    )
    seen = {}
    for name, mod, model in (("tf", tf, theirs), ("jt", jt, ours)):
        batches = []
        cb = mod.keras.callbacks.LambdaCallback(
            on_train_batch_begin=lambda b, logs, out=batches: out.append(("begin", b)),
            on_train_batch_end=lambda b, logs, out=batches: out.append(("end", b)),
        )
        history = model.fit(
            X, ONEHOT, batch_size=4, epochs=2, shuffle=False, verbose=0, callbacks=[cb]
        )
        seen[name] = (batches, history.history)
    assert seen["jt"][0] == seen["tf"][0]  # every 2nd batch, Keras's indices
    _assert_history_close(seen["jt"][1], seen["tf"][1])
    _assert_weights_close(ours, theirs)
    np.testing.assert_allclose(
        ours.evaluate(X, ONEHOT, batch_size=5, verbose=0),
        theirs.evaluate(X, ONEHOT, batch_size=5, verbose=0),
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        ours.predict(X, batch_size=5, verbose=0),
        theirs.predict(X, batch_size=5, verbose=0),
        rtol=1e-5,
        atol=1e-6,
    )


def test_steps_per_execution_compiles_one_call_per_group():
    model = _dense_model(jt)
    model.compile(optimizer="sgd", loss="mse", steps_per_execution=3)
    traces = []
    original = model.train_step

    def counting(data):
        traces.append(None)
        return original(data)

    model.train_step = counting
    model.fit(X, ONEHOT, batch_size=4, epochs=2, verbose=0)  # 6 batches: 2 calls
    # Traced once per group size: 3 unrolled steps, (re)traced at most twice.
    assert len(traces) <= 6
    with pytest.raises(ValueError, match="steps_per_execution"):
        model.compile(optimizer="sgd", loss="mse", steps_per_execution=0)


# -- optimizer gradient_accumulation_steps / loss_scale_factor -------------------------
@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop"])
def test_gradient_accumulation_matches_tf_keras(tf, name):
    kwargs = {"momentum": 0.5} if name != "Adam" else {}
    theirs, ours = _pair(
        tf,
        lambda mod: _dense_model(mod, activation=None),
        optimizer=lambda mod: getattr(mod.keras.optimizers, name)(
            0.05, gradient_accumulation_steps=3, **kwargs
        ),
        loss="mse",
    )
    h_ours, h_theirs = _fit_both(theirs, ours, X, ONEHOT, batch_size=4, epochs=2)
    _assert_history_close(h_ours, h_theirs, rtol=1e-4)
    _assert_weights_close(ours, theirs, rtol=1e-4)
    assert int(ours.optimizer.iterations) == int(theirs.optimizer.iterations) == 4
    for mine, ref in zip(ours.optimizer.variables, theirs.optimizer.variables):
        np.testing.assert_allclose(
            np.asarray(mine), np.asarray(ref), rtol=1e-4, atol=1e-6
        )


def test_gradient_accumulation_in_a_custom_loop_matches_tf_keras(tf):
    weights = [RNG.normal(size=(3,)).astype(np.float32)]
    results = []
    for mod in (tf, jt):
        v = mod.Variable(weights[0])
        opt = mod.keras.optimizers.Adam(0.1, gradient_accumulation_steps=2)
        trace = []
        for step in range(5):
            grad = mod.constant(np.float32(step + 1) * weights[0])
            counter = opt.apply_gradients([(grad, v)])
            trace.append((v.numpy().copy(), int(np.asarray(opt.iterations))))
        results.append((trace, int(np.asarray(counter))))
    (ours, counter_ours), (theirs, counter_theirs) = results[1], results[0]
    assert counter_ours == counter_theirs  # apply_gradients returns the raw count
    for (a, ia), (b, ib) in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        assert ia == ib
    with pytest.raises(ValueError, match="must be an integer >= 2"):
        jt.keras.optimizers.SGD(gradient_accumulation_steps=1)


def test_loss_scale_factor_matches_tf_keras(tf):
    theirs, ours = _pair(
        tf,
        _dense_model,
        optimizer=lambda mod: mod.keras.optimizers.Adam(0.01, loss_scale_factor=64.0),
        loss="categorical_crossentropy",
    )
    h_ours, h_theirs = _fit_both(theirs, ours, X, ONEHOT, batch_size=8, epochs=2)
    _assert_history_close(h_ours, h_theirs, rtol=1e-5)  # the unscaled loss
    _assert_weights_close(ours, theirs, rtol=1e-4)
    # In a custom loop the gradients are divided by the factor, as in Keras.
    for mod in (tf, jt):
        v = mod.Variable([1.0, 2.0])
        opt = mod.keras.optimizers.SGD(1.0, loss_scale_factor=4.0)
        opt.apply_gradients([(mod.constant([4.0, 8.0]), v)])
        np.testing.assert_allclose(v.numpy(), [0.0, 0.0])
        assert float(opt.scale_loss(mod.constant(2.0))) == 8.0


# -- save(overwrite), save_weights(overwrite), load_weights(skip_mismatch) -------------
@pytest.mark.parametrize(
    "method,suffix", [("save", ".keras"), ("save_weights", ".weights.h5")]
)
@pytest.mark.parametrize("answer", ["n", "y"])
def test_overwrite_false_asks_as_tf_keras(
    tf, tmp_path, monkeypatch, method, suffix, answer
):
    outcomes = {}
    for name, mod in (("tf", tf), ("jt", jt)):
        path = tmp_path / f"{name}{suffix}"
        model = _dense_model(mod)
        getattr(model, method)(path)
        before = path.read_bytes()
        model.set_weights([w + 1 for w in model.get_weights()])
        prompts = []

        def fake_input(prompt, prompts=prompts):
            prompts.append(prompt)
            return ["maybe", answer][len(prompts) - 1] if len(prompts) <= 2 else answer

        monkeypatch.setattr(builtins, "input", fake_input)
        getattr(model, method)(path, overwrite=False)
        monkeypatch.undo()
        outcomes[name] = (
            [p.replace(str(path), "P") for p in prompts],
            path.read_bytes() != before,
        )
    assert outcomes["jt"] == outcomes["tf"]
    assert outcomes["jt"][1] == (answer == "y")


def test_load_weights_skip_mismatch_matches_tf_keras(tf, tmp_path):
    def build(mod, second=3):
        return mod.keras.Sequential(
            [
                mod.keras.Input((4,)),
                mod.keras.layers.Dense(3, name="a"),
                mod.keras.layers.Dense(second, name="b"),
                mod.keras.layers.Dense(2, name="c"),
            ]
        )

    results = {}
    for name, mod in (("tf", tf), ("jt", jt)):
        source = build(mod)
        source.set_weights(
            [np.full(w.shape, 0.5, np.float32) for w in source.get_weights()]
        )
        path = tmp_path / f"{name}.weights.h5"
        source.save_weights(path)
        target = build(mod, second=4)  # 'b' and 'c' no longer match
        before = target.get_weights()
        with pytest.raises(ValueError):
            target.load_weights(path)
        with pytest.warns(UserWarning, match="could not be loaded"):
            target.load_weights(path, skip_mismatch=True)
        after = target.get_weights()
        results[name] = [bool(np.array_equal(a, b)) for a, b in zip(after, before)]
    assert results["jt"] == results["tf"]
    assert results["jt"] == [False, False, True, True, True, True]


def test_save_and_load_refuse_unsupported_arguments(tmp_path):
    # (paths under tmp_path: a refusal that came after the write would
    # otherwise leave files in the working directory, the repository)
    model = _dense_model(jt)
    weights, keras_file = tmp_path / "x.weights.h5", tmp_path / "x.keras"
    with pytest.raises(NotImplementedError, match="max_shard_size"):
        model.save_weights(weights, max_shard_size=1)
    with pytest.raises(NotImplementedError, match="zipped=False"):
        model.save(keras_file, zipped=False)
    with pytest.raises(NotImplementedError, match="objects_to_skip"):
        model.load_weights(weights, objects_to_skip=[])
    with pytest.raises(ValueError, match="by_name"):
        model.load_weights(weights, by_name=True)


def test_unsupported_options_raise_not_implemented():
    cases = [
        lambda: jt.keras.metrics.AUC(multi_label=True),
        lambda: jt.keras.callbacks.TensorBoard(profile_batch=2),
        lambda: jt.keras.callbacks.TensorBoard(embeddings_freq=1),
        lambda: _dense_model(jt).summary(expand_nested=True),
        lambda: jt.keras.layers.Dense(2).add_weight(
            shape=(1,), overwrite_with_gradient=True
        ),
    ]
    for case in cases:
        with pytest.raises(NotImplementedError):
            case()


def test_auc_label_weights_match_tf_keras(tf):
    y = (RNG.random((16, 3)) > 0.5).astype(np.float32)
    p = RNG.random((16, 3)).astype(np.float32)
    values = []
    for mod in (tf, jt):
        metric = mod.keras.metrics.AUC(label_weights=[0.2, 1.0, 3.0])
        metric.update_state(y, p)
        values.append(float(metric.result()))
    np.testing.assert_allclose(values[1], values[0], rtol=1e-5)


def test_binary_crossentropy_axis_matches_tf_keras(tf):
    y = (RNG.random((4, 3)) > 0.5).astype(np.float32)
    p = RNG.random((4, 3)).astype(np.float32)
    got = jt.keras.losses.binary_crossentropy(y, p, axis=0).numpy()
    ref = tf.keras.losses.binary_crossentropy(y, p, axis=0).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_loss_dtype_casts_as_tf_keras(tf):
    y = RNG.random((4, 3)).astype(np.float32)
    p = RNG.random((4, 3)).astype(np.float32)
    got = jt.keras.losses.MeanSquaredError(dtype="float64")(y, p)
    ref = tf.keras.losses.MeanSquaredError(dtype="float64")(y, p)
    assert got.dtype.name == ref.dtype.name == "float64"
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-12)


def test_early_stopping_and_checkpoint_arguments_match_tf_keras(tf, tmp_path, capsys):
    outcomes = {}
    for name, mod in (("tf", tf), ("jt", jt)):
        model = _dense_model(mod)
        model.set_weights(
            [np.full(w.shape, 0.1, np.float32) for w in model.get_weights()]
        )
        model.compile(optimizer=mod.keras.optimizers.SGD(0.1), loss="mse")
        callbacks = [
            mod.keras.callbacks.EarlyStopping(  # the loss falls: no "max" gain
                monitor="loss",
                mode="max",
                patience=1,
                verbose=1,
                restore_best_weights=True,
            ),
            mod.keras.callbacks.ModelCheckpoint(
                str(tmp_path / (name + "-{epoch}-{batch}.weights.h5")),
                monitor="loss",
                save_weights_only=True,
                save_freq=4,
            ),
        ]
        capsys.readouterr()
        history = model.fit(
            X, ONEHOT, batch_size=4, epochs=6, shuffle=False, verbose=0,
            callbacks=callbacks,
        )  # fmt: skip
        printed = [line.strip() for line in capsys.readouterr().out.splitlines()]
        saved = sorted(p.name[len(name) :] for p in tmp_path.glob(name + "-*"))
        outcomes[name] = (history.history, [t for t in printed if t], saved, model)
    ours, theirs = outcomes["jt"], outcomes["tf"]
    _assert_history_close(ours[0], theirs[0], rtol=1e-4)
    assert ours[1] == theirs[1]  # "Epoch N: early stopping", "Restoring ..."
    assert any("early stopping" in line for line in ours[1])
    assert ours[2] == theirs[2]  # a file every 4 batches, named as Keras names it
    _assert_weights_close(ours[3], theirs[3], rtol=1e-4, atol=1e-5)


# -- the signature sweep ---------------------------------------------------------------
ROOT = pathlib.Path(jt.__file__).parent / "_src"
MODULES = [
    "keras/training.py",
    "keras/models.py",
    "keras/callbacks.py",
    "keras/data_adapter.py",
    "keras/compile_utils.py",
    "keras/layers/base.py",
    "optimizers/optimizers.py",
    "optimizers/schedules.py",
    "losses/losses.py",
    "metrics/metrics.py",
]
# (module, qualified function, parameter): why TF/Keras leaves it unused too.
ALLOWED_UNUSED = {
    ("keras/training.py", "TrainingMixin.compile", "auto_scale_loss"): (
        "Keras wraps the optimizer in a LossScaleOptimizer only under the "
        "mixed_float16 policy, which jaxtape layers do not have"
    ),
    ("keras/training.py", "TrainingMixin.compute_loss", "x"): (
        "Keras's default compute_loss does not use x (overrides may)"
    ),
    ("keras/training.py", "TrainingMixin.compute_loss", "training"): (
        "Keras's default compute_loss does not use training (overrides may)"
    ),
    ("keras/training.py", "TrainingMixin.compute_metrics", "x"): (
        "Keras's default compute_metrics does not use x (overrides may)"
    ),
    ("keras/training.py", "TrainingMixin.compiled_loss", "regularization_losses"): (
        "TF 2.21's shim ignores it: compute_loss already adds model.losses"
    ),
    ("keras/layers/base.py", "Layer.add_weight", "autocast"): (
        "Keras autocasts weights only under mixed precision, which jaxtape "
        "layers do not have"
    ),
    ("keras/saving.py", "load_model", "safe_mode"): (
        "jaxtape never deserializes lambdas, the only thing safe mode refuses"
    ),
    ("optimizers/optimizers.py", "Optimizer.apply_gradients", "name"): (
        "TF 2's name scope of the update ops; eager TF names no ops"
    ),
}
HOOK_PARAMETERS = {"self", "cls"}
# Methods whose parameters are an interface that subclasses implement (the
# callbacks' `on_*` hooks, Layer.build/call, Loss.call): the framework passes
# them, and a default body need not read them (Layer.compute_mask: Keras 3's
# default passes the previous mask on).
HOOK_METHODS = {"build", "call", "compute_mask"}


def _is_hook(name: str) -> bool:
    return name.startswith("on_") or name in HOOK_METHODS


def _public_functions(tree, module):
    """(qualified name, FunctionDef) for public functions and methods (with
    `__init__` and private methods of public classes, whose arguments users
    pass too)."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            out.append((node.name, node))
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and (
                    not item.name.startswith("_")
                    or item.name in ("__init__", "__call__")
                ):
                    out.append((f"{node.name}.{item.name}", item))
    return out


def _unused_parameters(fn: ast.FunctionDef) -> list:
    params = [a.arg for a in fn.args.args + fn.args.kwonlyargs]
    if fn.args.vararg:
        params.append(fn.args.vararg.arg)
    if fn.args.kwarg:
        params.append(fn.args.kwarg.arg)
    used = {
        n.id
        for stmt in fn.body
        for n in ast.walk(stmt)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    body_only_pass = all(
        isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) for s in fn.body
    ) or (
        len(fn.body) == 1
        and isinstance(fn.body[0], ast.Expr)
        and isinstance(fn.body[0].value, ast.Constant)
    )
    if body_only_pass:  # an empty hook (a callback's on_* method): nothing to use
        return []
    # (`del name` is not a use: a Name in a `del` has a Del context)
    return [p for p in params if p not in used and p not in HOOK_PARAMETERS]


def test_every_public_parameter_is_used_or_allow_listed():
    problems = []
    for module in MODULES + ["keras/saving.py"]:
        source = (ROOT / module).read_text()
        tree = ast.parse(source)
        functions = _public_functions(tree, module)
        if module == "keras/saving.py":  # only the entry points users call
            functions = [(n, f) for n, f in functions if n in ("load_model",)]
        for qualname, fn in functions:
            if _is_hook(qualname.rsplit(".", 1)[-1]):
                continue
            for param in _unused_parameters(fn):
                key = (module, qualname, param)
                if key not in ALLOWED_UNUSED:
                    problems.append(f"{module}: {qualname}({param}=...) is never used")
    assert not problems, "\n".join(problems)


def test_allow_listed_parameters_are_documented_where_they_live():
    """Each allow-listed no-op is said so in its function's docstring."""
    for (module, qualname, param), reason in ALLOWED_UNUSED.items():
        assert reason
        tree = ast.parse((ROOT / module).read_text())
        fns = dict(_public_functions(tree, module))
        fn = fns.get(qualname)
        if fn is None:  # a private hook
            continue
        doc = ast.get_docstring(fn) or ""
        assert f"`{param}`" in doc or param in doc, f"{qualname}: document {param}"


def test_the_sweep_catches_an_unused_parameter():
    source = textwrap.dedent(
        '''
        def fit(x, y=None, shuffle=True, name=None):
            """Trains."""
            del name
            return x, y
        '''
    )
    (fn,) = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
    assert _unused_parameters(fn) == ["shuffle", "name"]


def test_signatures_accept_what_tf_keras_accepts(tf):
    """The public entry points take every parameter name tf.keras takes."""
    pairs = [
        (jt.keras.Model.compile, tf.keras.Model.compile),
        (jt.keras.Model.fit, tf.keras.Model.fit),
        (jt.keras.Model.evaluate, tf.keras.Model.evaluate),
        (jt.keras.Model.predict, tf.keras.Model.predict),
        (jt.keras.Model.train_on_batch, tf.keras.Model.train_on_batch),
        (jt.keras.Model.save_weights, tf.keras.Model.save_weights),
        (jt.keras.Model.load_weights, tf.keras.Model.load_weights),
        (jt.keras.Model.save, tf.keras.Model.save),
        (jt.keras.Model.summary, tf.keras.Model.summary),
        (jt.keras.optimizers.Adam.__init__, tf.keras.optimizers.Adam.__init__),
        (
            jt.keras.callbacks.EarlyStopping.__init__,
            tf.keras.callbacks.EarlyStopping.__init__,
        ),
        (
            jt.keras.callbacks.ModelCheckpoint.__init__,
            tf.keras.callbacks.ModelCheckpoint.__init__,
        ),
        (
            jt.keras.callbacks.TensorBoard.__init__,
            tf.keras.callbacks.TensorBoard.__init__,
        ),
        (jt.keras.metrics.AUC.__init__, tf.keras.metrics.AUC.__init__),
    ]
    for ours, theirs in pairs:
        mine = inspect.signature(ours).parameters
        ref = [
            n
            for n, p in inspect.signature(theirs).parameters.items()
            if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
        ]
        missing = [n for n in ref if n not in mine]
        has_kwargs = any(p.kind == p.VAR_KEYWORD for p in mine.values())
        assert not missing or has_kwargs, f"{ours.__qualname__} lacks {missing}"
        # Keras 3's positional order, for the parameters both have.
        common = [n for n in ref if n in mine]
        assert [n for n in mine if n in common] == common, ours.__qualname__


@pytest.mark.parametrize(
    "make",
    [
        lambda mod: mod.keras.metrics.Accuracy(threshold=0.3),
        lambda mod: mod.keras.metrics.MeanSquaredError(from_logits=True),
        lambda mod: mod.keras.losses.MeanSquaredError(delta=1.0),
        lambda mod: mod.keras.optimizers.SGD(0.1, beta_1=0.9),
    ],
)
def test_unknown_keyword_arguments_are_refused_as_tf_keras(tf, make):
    errors = []
    for mod in (tf, jt):
        with pytest.raises((TypeError, ValueError)) as info:
            make(mod)
        errors.append(info.type)
    assert errors[1] is errors[0]
