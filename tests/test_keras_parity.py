"""Keras losses, metrics, optimizers and layers against real tf.keras (the oracle)."""

import numpy as np
import pytest
from layer_checks import check_layer_parity

import jaxtape as jt

RNG = np.random.default_rng(0)
LOGITS = RNG.normal(size=(8, 5)).astype(np.float32)
PROBS = np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
ONEHOT = np.eye(5, dtype=np.float32)[RNG.integers(0, 5, 8)]
LABELS = ONEHOT.argmax(-1)
YB = (RNG.random((8, 3)) > 0.5).astype(np.float32)
PB = RNG.random((8, 3)).astype(np.float32)
SW = RNG.random(8).astype(np.float32)

LOSS_CASES = [
    ("CategoricalCrossentropy", {"from_logits": True}, ONEHOT, LOGITS),
    ("CategoricalCrossentropy", {"label_smoothing": 0.1}, ONEHOT, PROBS),
    ("SparseCategoricalCrossentropy", {"from_logits": True}, LABELS, LOGITS),
    ("SparseCategoricalCrossentropy", {}, LABELS[:, None], PROBS),
    ("BinaryCrossentropy", {}, YB, PB),
    (
        "BinaryCrossentropy",
        {"from_logits": True, "label_smoothing": 0.2},
        YB,
        LOGITS[:, :3],
    ),
    ("MeanSquaredError", {}, YB, PB),
    ("MeanAbsoluteError", {}, YB, PB),
    ("Huber", {"delta": 0.3}, YB, PB * 3),
    ("KLDivergence", {}, PROBS[::-1].copy(), PROBS),
]


@pytest.mark.parametrize("name,kwargs,y_true,y_pred", LOSS_CASES)
@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_losses_match_tf_keras(tf, name, kwargs, y_true, y_pred, reduction, weighted):
    sw = SW if weighted else None
    theirs = getattr(tf.keras.losses, name)(reduction=reduction, **kwargs)(
        y_true, y_pred, sample_weight=sw
    )
    ours = getattr(jt.keras.losses, name)(reduction=reduction, **kwargs)(
        y_true, y_pred, sample_weight=sw
    )
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


METRIC_CASES = [
    ("Mean", (PB[:, 0],)),
    ("Sum", (PB[:, 0],)),
    ("Accuracy", (LABELS, PROBS.argmax(-1))),
    ("CategoricalAccuracy", (ONEHOT, PROBS)),
    ("SparseCategoricalAccuracy", (LABELS, PROBS)),
    ("SparseCategoricalAccuracy", (LABELS[:, None], PROBS)),
    ("BinaryAccuracy", (YB, PB)),
    ("MeanSquaredError", (ONEHOT, PROBS)),
    ("MeanAbsoluteError", (ONEHOT, PROBS)),
    ("Precision", (YB, PB)),
    ("Recall", (YB, PB)),
    ("AUC", (YB, PB)),
]


@pytest.mark.parametrize("name,args", METRIC_CASES)
@pytest.mark.parametrize("weighted", [False, True])
def test_metrics_match_tf_keras(tf, name, args, weighted):
    sw = SW if weighted else None
    theirs, ours = getattr(tf.keras.metrics, name)(), getattr(jt.keras.metrics, name)()
    for _ in range(2):  # accumulation across batches
        theirs.update_state(*args, sample_weight=sw)
        ours.update_state(*args, sample_weight=sw)
    np.testing.assert_allclose(
        ours.result().numpy(), theirs.result().numpy(), rtol=1e-5, atol=1e-6
    )
    ours.reset_state()
    assert float(ours.result().numpy()) == 0.0


@pytest.mark.parametrize(
    "kwargs", [{"curve": "PR"}, {"summation_method": "minoring"}, {"num_thresholds": 7}]
)
def test_auc_variants_match_tf_keras(tf, kwargs):
    theirs, ours = tf.keras.metrics.AUC(**kwargs), jt.keras.metrics.AUC(**kwargs)
    theirs.update_state(YB, PB)
    ours.update_state(YB, PB)
    np.testing.assert_allclose(
        ours.result().numpy(), theirs.result().numpy(), rtol=1e-5
    )


OPTIMIZER_CASES = [
    ("SGD", {}),
    ("SGD", {"momentum": 0.9}),
    ("SGD", {"momentum": 0.9, "nesterov": True}),
    ("Adam", {}),
    ("Adam", {"amsgrad": True}),
    ("AdamW", {}),
    ("RMSprop", {}),
    ("RMSprop", {"centered": True, "momentum": 0.5}),
    ("Adagrad", {}),
    ("Adadelta", {"learning_rate": 1.0}),
    ("Adamax", {}),
    ("Nadam", {}),
    ("Adam", {"clipnorm": 0.1}),
    ("Adam", {"global_clipnorm": 0.1}),
    ("SGD", {"clipvalue": 0.01}),
]


def _grads():
    rng = np.random.default_rng(1)
    # Magnitudes from 1e-4 to 1: where Keras's Adam and optax's stock Adam differ.
    return [
        (
            rng.normal(size=(4, 3)).astype(np.float32) * 10 ** rng.uniform(-4, 0),
            rng.normal(size=(3,)).astype(np.float32) * 1e-3,
        )
        for _ in range(6)
    ]


def _run(tf_mod, opt, grads, w0, b0):
    w, b = tf_mod.Variable(w0), tf_mod.Variable(b0)
    for gw, gb in grads:
        opt.apply_gradients([(tf_mod.constant(gw), w), (tf_mod.constant(gb), b)])
    return w.numpy(), b.numpy()


@pytest.mark.parametrize("name,kwargs", OPTIMIZER_CASES)
def test_optimizers_match_tf_keras(tf, name, kwargs):
    rng = np.random.default_rng(2)
    w0, b0 = (
        rng.normal(size=(4, 3)).astype(np.float32),
        rng.normal(size=3).astype(np.float32),
    )
    grads = _grads()
    theirs = _run(tf, getattr(tf.keras.optimizers, name)(**kwargs), grads, w0, b0)
    ours = _run(jt, getattr(jt.keras.optimizers, name)(**kwargs), grads, w0, b0)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    assert not np.allclose(ours[0], w0)  # the step really moved the weights


@pytest.mark.parametrize(
    "schedule,args",
    [
        ("ExponentialDecay", (0.01, 2, 0.5)),
        ("PiecewiseConstantDecay", ([2, 4], [0.1, 0.01, 0.001])),
        ("CosineDecay", (0.1, 5)),
    ],
)
def test_schedules_match_tf_keras(tf, schedule, args):
    rng = np.random.default_rng(3)
    w0, b0 = (
        rng.normal(size=(4, 3)).astype(np.float32),
        rng.normal(size=3).astype(np.float32),
    )
    theirs = _run(
        tf,
        tf.keras.optimizers.SGD(
            getattr(tf.keras.optimizers.schedules, schedule)(*args)
        ),
        _grads(),
        w0,
        b0,
    )
    ours = _run(
        jt,
        jt.keras.optimizers.SGD(
            getattr(jt.keras.optimizers.schedules, schedule)(*args)
        ),
        _grads(),
        w0,
        b0,
    )
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def _layer_pairs():
    return [
        ("Dense", dict(units=4, activation="relu"), (3, 5)),
        ("Dense", dict(units=4, activation="gelu", use_bias=False), (3, 5)),
        (
            "Conv2D",
            dict(filters=4, kernel_size=3, padding="same", activation="relu"),
            (2, 6, 6, 3),
        ),
        ("Conv2D", dict(filters=2, kernel_size=(2, 3), strides=2), (2, 7, 7, 3)),
        ("Conv1D", dict(filters=3, kernel_size=2), (2, 6, 4)),
        ("MaxPooling2D", dict(pool_size=2), (2, 6, 6, 3)),
        ("AveragePooling2D", dict(pool_size=3, strides=2), (2, 7, 7, 3)),
        ("GlobalAveragePooling2D", {}, (2, 4, 4, 3)),
        ("LayerNormalization", {}, (3, 6)),
        ("BatchNormalization", {}, (4, 6)),
        ("Flatten", {}, (2, 3, 4)),
        ("Softmax", {}, (2, 5)),
        ("Embedding", dict(input_dim=10, output_dim=3), None),
    ]


def _positive_variance(name, weights):
    if name == "BatchNormalization":
        weights[3] = np.abs(weights[3]) + 0.5  # a variance
    return weights


@pytest.mark.parametrize("name,kwargs,shape", _layer_pairs())
def test_layer_outputs_match_tf_keras_with_the_same_weights(tf, name, kwargs, shape):
    dtype = np.int32 if shape is None else np.float32
    check_layer_parity(
        tf, name, kwargs, shape or (2, 5), dtype=dtype, fix_weights=_positive_variance
    )


def test_n_training_steps_match_tf_keras(tf):
    """The seed model trained 5 steps from the same weights ends at TF's weights."""
    rng = np.random.default_rng(5)
    x = rng.random((64, 32)).astype(np.float32)
    y = rng.random((64, 10)).astype(np.float32)

    def build(mod):
        model = mod.keras.Sequential(
            [mod.keras.layers.Dense(32, activation="relu"), mod.keras.layers.Dense(10)]
        )
        model(x[:1])
        return model

    theirs, ours = build(tf), build(jt)
    ours.set_weights(theirs.get_weights())
    for mod, model in ((tf, theirs), (jt, ours)):
        loss_fn = mod.keras.losses.CategoricalCrossentropy(from_logits=True)
        opt = mod.keras.optimizers.Adam(0.01)
        for _ in range(5):
            with mod.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["Precision", "Recall"])
@pytest.mark.parametrize(
    "kwargs", [{"top_k": 2}, {"class_id": 1}, {"thresholds": [0.3, 0.6]}]
)
def test_precision_recall_options_match_tf_keras(tf, name, kwargs):
    y_true = (RNG.random((8, 4)) > 0.5).astype(np.float32)
    y_pred = RNG.random((8, 4)).astype(np.float32)
    theirs = getattr(tf.keras.metrics, name)(**kwargs)
    ours = getattr(jt.keras.metrics, name)(**kwargs)
    theirs.update_state(y_true, y_pred)
    ours.update_state(y_true, y_pred)
    np.testing.assert_allclose(
        ours.result().numpy(), theirs.result().numpy(), rtol=1e-6
    )


def _history_of(mod, custom, x, y, weights):
    base = mod.keras.Model if custom else mod.keras.Sequential

    class Net(base):
        def __init__(self):
            super().__init__()
            self.dense = mod.keras.layers.Dense(1)

        def call(self, x):
            return self.dense(x)

        def train_step(self, data):  # other keys than the metrics': Keras keeps them
            x, y = data
            with mod.GradientTape() as tape:
                loss = mod.reduce_mean(mod.square(self(x) - y))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {"my_loss": loss, "two": mod.constant(2.0)}

    model = Net() if custom else mod.keras.Sequential([mod.keras.layers.Dense(1)])
    model(x[:1])
    model.set_weights(weights)
    metrics = None if custom else ["mae"]  # (Keras refuses unbuilt compiled metrics)
    model.compile(optimizer=mod.keras.optimizers.SGD(0.1), loss="mse", metrics=metrics)
    history = model.fit(x, y, batch_size=8, epochs=3, verbose=0, shuffle=False)
    if custom:  # (Keras's own test_step would read the compiled metrics, unbuilt)
        return history.history, {}
    evaluated = model.evaluate(x, y, batch_size=8, verbose=0, return_dict=True)
    return history.history, evaluated


@pytest.mark.parametrize("custom", [False, True])
def test_fit_history_and_evaluate_logs_match_tf_keras(tf, custom):
    """Epoch logs: the metrics' results, or a custom train_step's last logs."""
    rng = np.random.default_rng(6)
    x = rng.random((32, 2)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0]], np.float32) + 0.5
    weights = [np.array([[0.3], [0.1]], np.float32), np.zeros(1, np.float32)]
    theirs = _history_of(tf, custom, x, y, weights)
    ours = _history_of(jt, custom, x, y, weights)
    for mine, ref in zip(ours, theirs):
        assert sorted(mine) == sorted(ref)
        for key in ref:
            np.testing.assert_allclose(mine[key], ref[key], rtol=1e-5, atol=1e-6)


def _two_output_history(m, run_eagerly, sample_weight):
    keras, rng = m.keras, np.random.default_rng(3)
    x = rng.normal(size=(40, 6)).astype(np.float32)
    y = {"cls": (x[:, 0] > 0).astype(np.int32), "reg": x[:, 2:3]}
    inp = keras.Input((6,))
    h = keras.layers.Dense(8, activation="tanh")(inp)
    model = keras.Model(
        inp,
        {
            "cls": keras.layers.Dense(2, name="cls")(h),
            "reg": keras.layers.Dense(1, name="reg")(h),
        },
    )
    model.set_weights(
        [rng.normal(size=w.shape).astype(np.float32) for w in model.get_weights()]
    )
    model.compile(
        optimizer=keras.optimizers.SGD(0.1),
        loss={
            "cls": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            "reg": "mse",
        },
        loss_weights={"cls": 1.0, "reg": 0.5},
        run_eagerly=run_eagerly,
    )
    sw = rng.uniform(0.5, 2.0, 40).astype(np.float32) if sample_weight else None
    history = model.fit(
        x,
        y,
        batch_size=16,
        epochs=2,
        shuffle=False,
        verbose=0,
        sample_weight=None if sw is None else {"cls": sw, "reg": sw},
    ).history
    return {k: np.asarray(v) for k, v in history.items()}


@pytest.mark.parametrize("sample_weight", [False, True])
@pytest.mark.parametrize("run_eagerly", [False, True])
def test_per_output_losses_average_batches_as_tf_keras(tf, run_eagerly, sample_weight):
    """`<output>_loss` in a multi-output fit: Keras-on-TF weighs each batch by
    its static size, unknown in a tf.function, so a compiled fit averages the
    batches (a short last batch counts fully) and an eager one weighs them."""
    expected = _two_output_history(tf, run_eagerly, sample_weight)
    got = _two_output_history(jt, run_eagerly, sample_weight)
    assert sorted(got) == sorted(expected)
    for k in expected:
        np.testing.assert_allclose(got[k], expected[k], rtol=2e-5, err_msg=k)
