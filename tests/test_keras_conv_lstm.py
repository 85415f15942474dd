"""Keras's ConvLSTM1D/2D/3D and AdaptiveAverage/MaxPooling1D/2D/3D (issue 16)
against tf.keras.

The parity table builds each configuration in tf.keras and in jaxtape, copies
random weights into both (`set_weights`, after checking the weights' names
and shapes), and compares every output (a tuple with `return_state`) and the
gradients of `sum(sin(outputs))` with respect to the float inputs and every
trainable weight. tf.keras cannot run channels_first convolutions on CPU, so
those rows run jaxtape's channels_first layer between transposes against
tf.keras's channels_last one. `compiled` rows take jaxtape's gradients
inside `jaxtape.function`.
"""

import numpy as np
import pytest

import jaxtape as jt

L = jt.keras.layers


def _outputs(y):
    return list(y) if isinstance(y, (list, tuple)) else [y]


class _Run:
    """A layer and how it is called on the row's inputs (all channels_last)."""

    def __init__(self, layer, call=None, build_shape=None):
        self.layer = layer
        self.call = call or (lambda layer, *xs: layer(*xs))
        self.build_shape = build_shape or (lambda shape: shape)

    def __call__(self, *xs):
        return _outputs(self.call(self.layer, *xs))


def _named(make, desc):
    make.desc = desc
    return make


def layer(name, **kwargs):
    args = ",".join(f"{k}={v}" for k, v in kwargs.items())
    return _named(
        lambda m: _Run(getattr(m.keras.layers, name)(**kwargs)), f"{name}({args})"
    )


def with_initial_state(name, **kwargs):
    """Called on `(x, h0, c0)`: the gradients reach the initial states too."""

    def make(m):
        return _Run(
            getattr(m.keras.layers, name)(**kwargs),
            lambda lay, x, h, c: lay(x, initial_state=[h, c]),
        )

    return _named(make, f"{name}_initial_state")


def masked(name, **kwargs):
    """Called with an explicit `(batch, time)` mask (a bool input)."""

    def make(m):
        return _Run(
            getattr(m.keras.layers, name)(**kwargs),
            lambda lay, x, mask: lay(x, mask=mask),
        )

    return _named(make, f"{name}_masked_{'_'.join(kwargs)}")


def channels_first(name, rank, time_axis, **kwargs):
    """jaxtape's `channels_first` layer between transposes, against tf.keras's
    channels_last layer on the same (channels_last) input."""
    lead = 2 if time_axis else 1  # (batch[, time]) axes before the spatial ones
    to_first = (*range(lead), lead + rank, *range(lead, lead + rank))

    def make(m):
        if m is not jt:
            return _Run(getattr(m.keras.layers, name)(**kwargs))
        lay = getattr(L, name)(data_format="channels_first", **kwargs)

        def call(lay, x):
            ys = _outputs(lay(jt.transpose(x, to_first)))
            # (ConvLSTM states have no time axis: one axis fewer)
            out_lead = lead if kwargs.get("return_sequences") or not time_axis else 1
            perms = [(*range(out_lead), *range(out_lead + 1, out_lead + rank + 1),
                      out_lead)]  # fmt: skip
            perms += [(0, *range(2, rank + 2), 1)] * (len(ys) - 1)
            return [jt.transpose(y, p) for y, p in zip(ys, perms)]

        return _Run(lay, call, lambda shape: tuple(shape[i] for i in to_first))

    return _named(make, f"{name}_channels_first")


# (weights are set before any use: zeros build fast, random ones compile per shape)
FAST = {"kernel_initializer": "zeros", "recurrent_initializer": "zeros"}
SEQ1 = (2, 4, 7, 3)  # (batch, time, steps, channels)
SEQ2 = (2, 3, 5, 6, 2)
SEQ3 = (2, 3, 4, 3, 4, 2)
MASK = "mask"
ALL_WAYS = {"return_sequences": True, "return_state": True, "go_backwards": True}

# (make, input specs, compiled)
PARITY = [
    (layer("ConvLSTM1D", filters=3, kernel_size=3, padding="same", **ALL_WAYS),
     [SEQ1], False),
    (with_initial_state("ConvLSTM2D", filters=2, kernel_size=3, strides=2,
                        padding="same", unit_forget_bias=False,
                        recurrent_activation="hard_sigmoid", return_state=True,
                        **FAST),
     [SEQ2, (2, 3, 3, 2), (2, 3, 3, 2)], True),
    (channels_first("ConvLSTM2D", 2, True, filters=2, kernel_size=(2, 3),
                    dilation_rate=2, use_bias=False, activation="relu",
                    return_sequences=True, return_state=True, unroll=True, **FAST),
     [SEQ2], True),
    (layer("ConvLSTM3D", filters=2, kernel_size=2, return_sequences=True, **FAST),
     [SEQ3], True),
    (masked("ConvLSTM1D", filters=2, kernel_size=2, **ALL_WAYS, **FAST),
     [SEQ1, MASK], False),
    (layer("AdaptiveAveragePooling1D", output_size=3), [(2, 7, 3)], False),
    (layer("AdaptiveAveragePooling2D", output_size=(2, 4)), [(2, 5, 7, 3)], False),
    (layer("AdaptiveAveragePooling3D", output_size=2), [(2, 5, 4, 3, 2)], True),
    (layer("AdaptiveMaxPooling1D", output_size=[4]), [(2, 9, 3)], False),
    (layer("AdaptiveMaxPooling2D", output_size=3), [(2, 7, 5, 3)], False),
    (layer("AdaptiveMaxPooling3D", output_size=(2, 3, 2)), [(2, 5, 4, 3, 2)], True),
    (layer("AdaptiveMaxPooling2D", output_size=(3, 2)), [("ties", (2, 7, 5, 3))],
     False),
    (layer("AdaptiveMaxPooling3D", output_size=2), [("ties", (2, 5, 3, 4, 2))],
     False),
    (channels_first("AdaptiveAveragePooling2D", 2, False, output_size=(3, 2)),
     [(2, 7, 5, 3)], False),
    (channels_first("AdaptiveMaxPooling1D", 1, False, output_size=3),
     [(2, 8, 3)], False),
]  # fmt: skip


def _make_input(spec, rng):
    if spec == MASK:
        mask = np.ones((2, 4), bool)
        mask[0, 2:] = False  # right padding
        mask[1, :1] = False  # left padding
        return mask
    if spec[0] == "ties":  # (small integers: tied maxima in most windows)
        return rng.integers(0, 3, spec[1]).astype(np.float32)
    return rng.normal(size=spec).astype(np.float32)


@pytest.mark.parametrize(
    "make, specs, compiled", PARITY, ids=[m.desc for m, _, _ in PARITY]
)
def test_matches_tf_keras(tf, make, specs, compiled):
    rng = np.random.default_rng(3)
    xs = [_make_input(s, rng) for s in specs]
    theirs, ours = make(tf), make(jt)
    theirs(*xs)
    ours.layer.build(ours.build_shape(xs[0].shape))  # (no call: one compile less)
    weights = [
        (0.5 * rng.normal(size=w.shape)).astype(np.float32)
        for w in theirs.layer.get_weights()
    ]
    theirs.layer.set_weights(weights)
    ours.layer.set_weights(weights)
    assert [v.path for v in ours.layer.weights] == [
        v.path for v in theirs.layer.weights
    ]
    floats = [i for i, x in enumerate(xs) if x.dtype.kind == "f"]
    xt = [tf.constant(x) for x in xs]
    with tf.GradientTape() as tape:
        tape.watch([xt[i] for i in floats])
        out_t = theirs(*xt)
        yt = sum(tf.reduce_sum(tf.sin(o)) for o in out_t)
    gt = tape.gradient(yt, [xt[i] for i in floats] + theirs.layer.trainable_weights)

    def ours_with_gradients(*xj):
        with jt.GradientTape() as tape:
            for i in floats:
                tape.watch(xj[i])
            out_j = ours(*xj)
            yj = sum(jt.reduce_sum(jt.sin(o)) for o in out_j)
        grads = [xj[i] for i in floats] + ours.layer.trainable_weights
        return out_j, tape.gradient(yj, grads)

    if compiled:
        ours_with_gradients = jt.function(ours_with_gradients)
    out_j, gj = ours_with_gradients(*[jt.constant(x) for x in xs])
    for a, b in zip(out_j, out_t, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)
    for a, b in zip(gj, gt, strict=True):
        b = np.asarray(tf.convert_to_tensor(b))
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-3, atol=1e-4)


def test_the_recurrence_is_one_recorded_op():
    layer = L.ConvLSTM1D(3, 3, padding="same", return_sequences=True)
    x = jt.constant(np.random.default_rng(0).normal(size=SEQ1).astype("float32"))
    layer(x)
    with jt.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
    names = [node[0].name for node in tape._rec.nodes]
    assert names.count("RNN") == 1 and len(names) <= 2
    assert tape.gradient(y, x).shape == x.shape


def test_stateful_carries_states_across_calls(tf):
    rng = np.random.default_rng(1)
    x1, x2 = (rng.normal(size=SEQ1).astype("float32") for _ in range(2))
    kwargs = dict(filters=3, kernel_size=3, padding="same", stateful=True)
    theirs = tf.keras.layers.ConvLSTM1D(**kwargs)
    ours = L.ConvLSTM1D(**kwargs, **FAST)
    theirs(x1)
    ours(x1)
    ours.set_weights(theirs.get_weights())
    theirs.reset_states()
    ours.reset_states()
    assert len(ours.weights) == 3  # the states are not weights, as Keras 3
    for x in (x1, x2, x2):  # each call starts from the last call's states
        np.testing.assert_allclose(ours(x).numpy(), theirs(x).numpy(), atol=1e-5)


def test_dropout_in_training_only():
    """Inference ignores the rates (the same outputs as without dropout);
    training calls draw new masks each call; Keras drops only for
    `0 < rate < 1`."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=SEQ1).astype("float32")
    layer = L.ConvLSTM1D(3, 2, dropout=0.5, recurrent_dropout=0.4, seed=3, **FAST)
    layer.build(x.shape)
    weights = [rng.normal(size=w.shape).astype("float32") for w in layer.weights]
    layer.set_weights(weights)
    infer = layer(x).numpy()
    for kwargs, training in (({}, False), ({"dropout": 1.0}, True)):
        same = L.ConvLSTM1D(3, 2, **kwargs, **FAST)
        same.build(x.shape)
        same.set_weights(weights)
        out = same(x, training=training).numpy()
        np.testing.assert_allclose(out, infer, rtol=1e-6)
    a, b = (layer(x, training=True).numpy() for _ in range(2))
    assert not np.allclose(a, infer) and not np.allclose(a, b)


def test_dropout_masks_apply_per_gate_as_keras(tf):
    """The cell's step with the same per-gate masks in both (Keras's
    `DropoutRNNCell` protocol: the cell reads its cached masks)."""
    rng = np.random.default_rng(6)
    x = rng.normal(size=(2, 5, 6, 2)).astype("float32")
    h, c = (rng.normal(size=(2, 5, 6, 3)).astype("float32") for _ in range(2))
    kwargs = dict(filters=3, kernel_size=2, padding="same", dropout=0.3,
                  recurrent_dropout=0.6)  # fmt: skip
    theirs = tf.keras.layers.ConvLSTM2D(**kwargs)
    ours = L.ConvLSTM2D(**kwargs, **FAST)
    theirs.build((2, 1, 5, 6, 2))
    ours.build((2, 1, 5, 6, 2))
    ours.set_weights(theirs.get_weights())
    masks = [(rng.random((4, *a.shape)) > 0.4).astype("float32") * 2 for a in (x, h)]
    for m, cell in ((tf, theirs.cell), (jt, ours.cell)):
        cell._dropout_mask = [m.constant(a) for a in masks[0]]
        cell._recurrent_dropout_mask = [m.constant(a) for a in masks[1]]
    out_t = theirs.cell.call(tf.constant(x), [tf.constant(h), tf.constant(c)], True)
    out_j = ours.cell.call(jt.constant(x), [jt.constant(h), jt.constant(c)], True)
    for a, b in zip([out_j[0], *out_j[1]], [out_t[0], *out_t[1]], strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)


CONFIGS = [
    ("ConvLSTM1D", {"filters": 2, "kernel_size": 3, "dropout": 0.1, "seed": 4}),
    ("ConvLSTM2D", {"filters": 2, "kernel_size": (2, 3), "strides": 2,
                    "padding": "same", "unit_forget_bias": False,
                    "activity_regularizer": "l2", "return_state": True}),
    ("ConvLSTM3D", {"filters": 1, "kernel_size": 2, "dilation_rate": 2,
                    "go_backwards": True, "unroll": True}),
    ("AdaptiveAveragePooling1D", {"output_size": 4}),
    ("AdaptiveMaxPooling2D", {"output_size": (2, 3),
                              "data_format": "channels_first"}),
    ("AdaptiveAveragePooling3D", {"output_size": [1, 2, 3]}),
]  # fmt: skip


def test_configs_round_trip_and_match_tf_keras(tf):
    for name, kwargs in CONFIGS:
        ours = getattr(L, name)(**kwargs)
        cfg = ours.get_config()
        clone = type(ours).from_config(cfg)
        assert clone.get_config() == {**cfg, "name": clone.name}
        theirs = getattr(tf.keras.layers, name)(**kwargs).get_config()
        assert set(cfg) == set(theirs), name
        for key, value in theirs.items():
            if key not in ("name", "dtype") and not isinstance(value, dict):
                assert cfg[key] == value, (name, key)


def test_keras_file_round_trip_read_by_tf_keras(tmp_path, tf):
    inputs = jt.keras.Input(SEQ1[1:])
    h = L.ConvLSTM1D(3, 3, padding="same", return_sequences=True, go_backwards=True,
                     **FAST)(inputs)  # fmt: skip
    h = L.AdaptiveMaxPooling2D((2, 2))(h)
    h = L.AdaptiveAveragePooling2D(1)(h)
    model = jt.keras.Model(inputs, L.Dense(1)(L.Flatten()(h)))
    rng = np.random.default_rng(0)
    model.set_weights([rng.normal(size=w.shape) for w in model.get_weights()])
    x = rng.normal(size=SEQ1).astype("float32")
    expected = model(x).numpy()
    model.save(tmp_path / "m.keras")
    loaded = jt.keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(loaded(x).numpy(), expected, rtol=1e-6)
    theirs = tf.keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(theirs(x).numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "name, kwargs, error",
    [
        ("ConvLSTM2D", {"filters": 2, "kernel_size": 3, "strides": 2,
                        "dilation_rate": 2}, ValueError),
        ("ConvLSTM1D", {"filters": 2, "kernel_size": (2, 2)}, ValueError),
        ("ConvLSTM2D", {"filters": 2, "kernel_size": 3, "padding": "causal"},
         ValueError),
        ("AdaptiveAveragePooling2D", {"output_size": (1, 2, 3)}, TypeError),
        ("AdaptiveMaxPooling1D", {"output_size": (1, 2)}, ValueError),
        ("AdaptiveMaxPooling3D", {"output_size": "2"}, TypeError),
        ("AdaptiveAveragePooling1D", {"output_size": 2, "data_format": "nhwc"},
         ValueError),
    ],
)  # fmt: skip
def test_bad_arguments_raise_as_keras(tf, name, kwargs, error):
    for m in (tf, jt):
        with pytest.raises(error):
            getattr(m.keras.layers, name)(**kwargs)


def test_valid_padding_needs_room(tf):
    x = np.zeros((1, 2, 2, 2, 1), np.float32)
    for m in (tf, jt):
        with pytest.raises(ValueError):
            m.keras.layers.ConvLSTM2D(1, 3)(x)
