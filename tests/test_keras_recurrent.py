"""Keras's recurrent layers (issue 16): SimpleRNN, LSTM, GRU, their cells,
RNN with a custom cell, StackedRNNCells and Bidirectional, against tf.keras.

The parity table builds each configuration in tf.keras and in jaxtape
(`make(module)`), copies tf.keras's weights across and compares every output
(a tuple with `return_state`) and the gradients of `sum(sin(output))` with
respect to the float inputs and every trainable weight.
"""

import numpy as np
import pytest
from layer_checks import check_layer, check_layer_parity

import jaxtape as jt

L = jt.keras.layers


def _outputs(y):
    """The output tensors, flat (stacked cells' states are nested lists)."""
    if isinstance(y, (list, tuple)):
        return [t for item in y for t in _outputs(item)]
    return [y]


def _parity(tf, make, xs, *, rtol=1e-4, atol=1e-5):
    """`make(m)` builds the same layer or model from `m` (tf or jaxtape) and
    returns a callable of the inputs `xs` (a list of arrays). One call each,
    under a tape: outputs, and gradients of `sum(sin(outputs))` with respect
    to the float inputs and the trainable weights."""
    theirs, ours = make(tf), make(jt)
    theirs(*xs)
    if isinstance(ours.layer, jt.keras.Model):
        ours(*xs)
    else:  # (built without a first call: one compile less per row)
        ours.layer.build(xs[0].shape)
    rng = np.random.default_rng(7)
    weights = [
        (0.5 * rng.normal(size=w.shape)).astype(np.float32)
        for w in theirs.layer.get_weights()
    ]
    theirs.layer.set_weights(weights)
    ours.layer.set_weights(weights)
    assert [v.name for v in ours.layer.weights] == [
        v.name for v in theirs.layer.weights
    ]
    floats = [i for i, x in enumerate(xs) if x.dtype.kind == "f"]
    xt = [tf.constant(x) for x in xs]
    xj = [jt.constant(x) for x in xs]
    with tf.GradientTape() as tape:
        tape.watch([xt[i] for i in floats])
        out_t = _outputs(theirs(*xt))
        yt = sum(tf.reduce_sum(tf.sin(o)) for o in out_t)
    gt = tape.gradient(yt, [xt[i] for i in floats] + theirs.layer.trainable_weights)
    with jt.GradientTape() as tape:
        for i in floats:
            tape.watch(xj[i])
        out_j = _outputs(ours(*xj))
        yj = sum(jt.reduce_sum(jt.sin(o)) for o in out_j)
    gj = tape.gradient(yj, [xj[i] for i in floats] + ours.layer.trainable_weights)
    for a, b in zip(out_j, out_t, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol)
    assert len(gj) == len(gt)
    for a, b in zip(gj, gt):
        assert (a is None) == (b is None)
        assert isinstance(a, jt.IndexedSlices) == isinstance(b, tf.IndexedSlices)
        if a is not None:
            a = jt.convert_to_tensor(a)  # (an Embedding's IndexedSlices, in both)
            b = np.asarray(tf.convert_to_tensor(b))
            np.testing.assert_allclose(a.numpy(), b, rtol=rtol * 10, atol=atol * 10)


class _Run:
    """A layer (or model) and how it is called on the test's inputs."""

    def __init__(self, layer, call=None):
        self.layer = layer
        self.call = call or (lambda layer, *xs: layer(*xs))

    def __call__(self, *xs):
        return self.call(self.layer, *xs)


def _named(make, name, kwargs):
    args = ",".join(f"{k}={v}" for k, v in kwargs.items())
    make.desc = f"{name}({args})"
    return make


def layer(name, **kwargs):
    return _named(lambda m: _Run(getattr(m.keras.layers, name)(**kwargs)), name, kwargs)


def with_initial_state(name, n_states, **kwargs):
    """The layer called on `(x, [s0, ...])`: gradients reach the states too."""

    def make(m):
        return _Run(
            getattr(m.keras.layers, name)(**kwargs),
            lambda lay, x, *s: lay(x, initial_state=list(s[:n_states])),
        )

    return _named(make, f"{name}_initial_state", kwargs)


def masked(name, via="embedding", **kwargs):
    """The layer after `Embedding(mask_zero=True)` (or `Masking`), in a
    Sequential model: the mask reaches the recurrent layer."""

    def make(m):
        first = (
            m.keras.layers.Embedding(10, 3, mask_zero=True)
            if via == "embedding"
            else m.keras.layers.Masking(0.0)
        )
        if name == "Bidirectional":  # of a GRU, with the mask for both ways
            rnn = m.keras.layers.Bidirectional(
                m.keras.layers.GRU(3, return_sequences=True), **kwargs
            )
        else:
            rnn = getattr(m.keras.layers, name)(**kwargs)
        return _Run(m.keras.Sequential([first, rnn]))

    return _named(make, f"{via}_mask_{name}", kwargs)


def bidirectional(name, inner_kwargs, **kwargs):
    def make(m):
        inner = getattr(m.keras.layers, name)(**inner_kwargs)
        return _Run(m.keras.layers.Bidirectional(inner, **kwargs))

    return _named(make, f"Bidirectional_{name}", {**inner_kwargs, **kwargs})


def _minimal_cell(m):
    """Keras's documented custom cell, written against `m`'s own ops."""

    class MinimalRNNCell(m.keras.layers.Layer):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.state_size = units

        def build(self, input_shape):
            self.kernel = self.add_weight(
                shape=(input_shape[-1], self.units), name="kernel"
            )
            self.recurrent_kernel = self.add_weight(
                shape=(self.units, self.units), name="recurrent_kernel"
            )

        def call(self, inputs, states):
            prev = states[0]
            h = m.matmul(inputs, self.kernel)
            output = m.tanh(h + m.matmul(prev, self.recurrent_kernel))
            return output, [output]

    return MinimalRNNCell


def custom_cell(**kwargs):
    return _named(
        lambda m: _Run(m.keras.layers.RNN(_minimal_cell(m)(4), **kwargs)),
        "RNN_custom_cell",
        kwargs,
    )


def stacked(**kwargs):
    def make(m):
        cells = [
            m.keras.layers.LSTMCell(4),
            m.keras.layers.GRUCell(3),
            _minimal_cell(m)(2),
        ]
        return _Run(m.keras.layers.RNN(m.keras.layers.StackedRNNCells(cells), **kwargs))

    return _named(make, "RNN_StackedRNNCells", kwargs)


SEQ = (3, 5, 4)
IDS = "ids"  # zero-padded integer sequences (right, left and inner padding)

ALL_WAYS = {"return_sequences": True, "return_state": True, "go_backwards": True}

PARITY = [
    (
        with_initial_state(
            "SimpleRNN", 1, units=3, use_bias=False, unroll=True, **ALL_WAYS
        ),
        [SEQ, (3, 3)],
    ),
    (
        with_initial_state(
            "LSTM",
            2,
            units=3,
            unit_forget_bias=False,
            recurrent_activation="hard_sigmoid",
            **ALL_WAYS,
        ),
        [SEQ, (3, 3), (3, 3)],
    ),
    (with_initial_state("GRU", 1, units=3, use_bias=False, **ALL_WAYS), [SEQ, (3, 3)]),
    (layer("GRU", units=3, reset_after=False, return_sequences=True), [SEQ]),
    (masked("LSTM", units=4), [IDS]),
    (masked("GRU", units=3, go_backwards=True, return_state=True), [IDS]),
    (masked("LSTM", via="masking", units=3, return_sequences=True), ["padded"]),
    (masked("Bidirectional", merge_mode="concat"), [IDS]),
    (
        bidirectional("GRU", {"units": 3, "return_sequences": True}, merge_mode="sum"),
        [SEQ],
    ),
    (
        bidirectional("GRU", {"units": 3, "return_sequences": True}, merge_mode="ave"),
        [SEQ],
    ),
    (
        bidirectional(
            "SimpleRNN", {"units": 3, "activation": "relu"}, merge_mode="mul"
        ),
        [SEQ],
    ),
    (bidirectional("LSTM", {"units": 2, "return_state": True}, merge_mode=None), [SEQ]),
    (custom_cell(return_sequences=True, go_backwards=True), [SEQ]),
    (stacked(return_sequences=True, return_state=True), [SEQ]),
]


def _make_input(spec, rng):
    if spec == IDS:
        ids = rng.integers(1, 10, (4, 6)).astype(np.int32)
        ids[0, 4:] = 0  # right padding
        ids[1, 1:] = 0  # one step
        ids[2, :3] = 0  # left padding
        ids[3, 2] = 0  # a hole
        return ids
    if spec == "padded":
        x = rng.normal(size=(3, 5, 2)).astype(np.float32)
        x[0, 3:] = 0.0
        x[1, :2] = 0.0
        return x
    return rng.normal(size=spec).astype(np.float32)


@pytest.mark.parametrize("make, specs", PARITY, ids=[m.desc for m, _ in PARITY])
def test_matches_tf_keras(tf, make, specs):
    rng = np.random.default_rng(3)
    _parity(tf, make, [_make_input(s, rng) for s in specs])


def test_lstm_through_the_shared_layer_checks(tf, tmp_path):
    """The harness every layer goes through (training step, config and
    weights-file round trips) and the shared single-output parity check."""
    check_layer_parity(tf, "LSTM", {"units": 4}, SEQ)
    check_layer(tmp_path, lambda: L.GRU(3, return_sequences=True), (2, 4, 3), 3)


def test_the_recurrence_is_one_recorded_op():
    lstm = L.LSTM(4, return_sequences=True)
    x = jt.constant(np.random.default_rng(0).normal(size=(2, 7, 3)).astype("float32"))
    lstm(x)
    with jt.GradientTape() as tape:
        tape.watch(x)
        y = lstm(x)
    names = [node[0].name for node in tape._rec.nodes]
    assert names.count("RNN") == 1
    assert len(names) <= 2  # the RNN op (and the states' cast, none here)
    assert tape.gradient(y, x).shape == x.shape


def test_stateful_carries_states_across_calls(tf):
    rng = np.random.default_rng(1)
    x1, x2 = (rng.normal(size=(2, 4, 3)).astype("float32") for _ in range(2))
    theirs = tf.keras.layers.GRU(3, stateful=True, return_state=True)
    ours = L.GRU(3, stateful=True, return_state=True)
    theirs(x1)
    ours(x1)
    ours.set_weights(theirs.get_weights())
    theirs.reset_states()
    ours.reset_states()
    assert len(ours.weights) == 3  # the states are not weights, as Keras 3
    for x in (x1, x2):  # the second call starts from the first call's states
        for a, b in zip(ours(x), theirs(x), strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    carried = ours(x2)[0].numpy()  # a third call: from the second's states
    ours.reset_states()
    theirs.reset_states()
    restarted = ours(x2)[0].numpy()
    np.testing.assert_allclose(restarted, theirs(x2)[0].numpy(), rtol=1e-5, atol=1e-6)
    assert not np.allclose(restarted, carried)


def test_stateful_needs_a_static_batch_size(tf):
    for m in (tf, jt):
        model = m.keras.Sequential([m.keras.layers.LSTM(2, stateful=True)])
        with pytest.raises(ValueError, match="batch size"):
            model.build((None, 3, 2))


def test_bad_merge_mode_raises_as_keras(tf):
    for m in (tf, jt):
        with pytest.raises(ValueError, match="Invalid merge mode"):
            m.keras.layers.Bidirectional(m.keras.layers.LSTM(2), merge_mode="max")


def test_dropout_in_training_only():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 6, 5)).astype("float32")
    # (recurrent_dropout: Keras's implementation 1, one mask per gate)
    layer = L.LSTM(8, dropout=0.5, recurrent_dropout=0.5, seed=3)
    infer = layer(x).numpy()
    np.testing.assert_array_equal(layer(x, training=False).numpy(), infer)
    a, b = layer(x, training=True).numpy(), layer(x, training=True).numpy()
    assert not np.allclose(a, infer) and not np.allclose(a, b)
    with jt.GradientTape() as tape:
        loss = jt.reduce_sum(layer(x, training=True))
    grads = tape.gradient(loss, layer.trainable_weights)
    assert all(g is not None and np.isfinite(g.numpy()).all() for g in grads)


def test_dropout_mask_is_the_same_at_every_step():
    """Keras draws one input mask per call: with an identity-like cell, the
    dropped input features are the same at every time step."""
    cell = L.SimpleRNNCell(6, activation=None, use_bias=False, dropout=0.5)
    layer = L.RNN(cell, return_sequences=True)
    # (8 x 6 mask entries: none dropped has probability 2**-48; with a batch of
    # 3 it was 2**-18, under five standard deviations' 6e-7)
    x = np.ones((8, 5, 6), np.float32)
    layer(x)
    layer.set_weights([np.eye(6, dtype=np.float32), np.zeros((6, 6), np.float32)])
    y = layer(x, training=True).numpy()
    assert ((y == 0) == (y[:, :1] == 0)).all()
    assert set(np.unique(y)) <= {0.0, 2.0} and (y == 0).any()


def _train_model():
    model = jt.keras.Sequential([L.LSTM(8), L.Dense(1)])
    model(np.zeros((4, 6, 3), np.float32))
    return model


def test_function_training_step_matches_eager():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 6, 3)).astype("float32")
    y = rng.normal(size=(4, 1)).astype("float32")
    eager_model, compiled_model = _train_model(), _train_model()
    compiled_model.set_weights(eager_model.get_weights())
    traces = []

    def step(model, opt):
        with jt.GradientTape() as tape:
            loss = jt.reduce_mean(jt.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    eager_opt = jt.keras.optimizers.SGD(0.1)
    compiled_opt = jt.keras.optimizers.SGD(0.1)

    @jt.function
    def compiled_step():
        traces.append(None)
        return step(compiled_model, compiled_opt)

    first = compiled_step().numpy()
    np.testing.assert_allclose(first, step(eager_model, eager_opt).numpy(), rtol=1e-5)
    for u, v in zip(compiled_model.get_weights(), eager_model.get_weights()):
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)
    n_traces = len(traces)
    assert n_traces <= 2  # (a retrace once the optimizer's slots exist)
    assert compiled_step().numpy() < first  # it trains
    assert len(traces) == n_traces


def test_configs_round_trip():
    layers = [
        L.SimpleRNN(3, activation="relu", go_backwards=True),
        L.LSTM(4, return_sequences=True, dropout=0.1, unit_forget_bias=False),
        L.GRU(2, reset_after=False, return_state=True),
        L.RNN(L.StackedRNNCells([L.LSTMCell(3), L.GRUCell(2)]), stateful=False),
        L.Bidirectional(L.GRU(2, return_sequences=True), merge_mode="ave"),
    ]
    for layer in layers:
        clone = type(layer).from_config(layer.get_config())
        assert clone.get_config() == {**layer.get_config(), "name": clone.name}


def test_config_keys_match_tf_keras(tf):
    for name, kwargs in [
        ("SimpleRNN", {"units": 2}),
        ("LSTM", {"units": 2}),
        ("GRU", {"units": 2}),
        ("LSTMCell", {"units": 2}),
        ("GRUCell", {"units": 2}),
    ]:
        ours = getattr(L, name)(**kwargs).get_config()
        theirs = getattr(tf.keras.layers, name)(**kwargs).get_config()
        assert set(ours) <= set(theirs)
        for key in ("units", "go_backwards", "reset_after", "unit_forget_bias"):
            if key in theirs:
                assert ours[key] == theirs[key]


def test_keras_file_round_trip_with_nested_cells(tmp_path, tf):
    inputs = jt.keras.Input((5, 3))
    h = L.Bidirectional(L.LSTM(4, return_sequences=True))(inputs)
    h = L.RNN(L.StackedRNNCells([L.GRUCell(3), L.SimpleRNNCell(2)]))(h)
    model = jt.keras.Model(inputs, L.Dense(1)(h))
    x = np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")
    expected = model(x).numpy()
    model.save(tmp_path / "m.keras")
    loaded = jt.keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(loaded(x).numpy(), expected, rtol=1e-6)
    # tf.keras reads the same file: same layout, names and weights.
    theirs = tf.keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(theirs(x).numpy(), expected, rtol=1e-5, atol=1e-6)


def test_weights_file_from_tf_keras(tmp_path, tf):
    def build(m):
        model = m.keras.Sequential(
            [
                m.keras.Input((4, 3)),
                m.keras.layers.Bidirectional(m.keras.layers.GRU(2)),
                m.keras.layers.Dense(1),
            ]
        )
        return model

    theirs, ours = build(tf), build(jt)
    theirs.save_weights(tmp_path / "t.weights.h5")
    ours.load_weights(tmp_path / "t.weights.h5")
    x = np.random.default_rng(0).normal(size=(2, 4, 3)).astype("float32")
    # (atol: the unseeded init can put an output near 0, where rounding that
    # differs between TF and XLA is a large relative error)
    np.testing.assert_allclose(ours(x).numpy(), theirs(x).numpy(), rtol=1e-5, atol=1e-6)


def test_custom_cell_must_return_its_states():
    class Bad(L.Layer):
        state_size = [2, 2]

        def call(self, inputs, states):
            return states[0], [states[0]]

    with pytest.raises(ValueError, match="state"):
        L.RNN(Bad())(np.zeros((1, 3, 2), np.float32))


def test_activity_regularizer_loss_matches_tf(tf):
    x = np.random.default_rng(0).normal(size=(3, 4, 2)).astype("float32")
    theirs = tf.keras.layers.LSTM(3, activity_regularizer="l2", return_state=True)
    ours = L.LSTM(3, activity_regularizer="l2", return_state=True)
    theirs(x)
    ours(x)
    ours.set_weights(theirs.get_weights())
    theirs(x)
    ours(x)
    np.testing.assert_allclose(
        sum(float(v) for v in ours.losses),
        sum(float(v) for v in theirs.losses),
        rtol=1e-5,
    )
    assert ours.get_config()["activity_regularizer"]["class_name"] == "L2"
