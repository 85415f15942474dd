"""The rest of Keras's optimizers and schedules against real tf.keras (issue 18).

Each row applies the same gradients for a few steps to the same variables in
tf.keras and jaxtape and compares the variables and the optimizer's own
variables (slots, in Keras's order); schedules are compared step by step.
"""

import numpy as np
import pytest

import jaxtape as jt

SCHEDULE_CASES = [
    ("PolynomialDecay", (0.1, 4), {}),
    (
        "PolynomialDecay",
        (0.1, 3),
        {"end_learning_rate": 0.01, "power": 0.5, "cycle": True},
    ),
    ("CosineDecayRestarts", (0.1, 3), {}),
    ("CosineDecayRestarts", (0.1, 2), {"t_mul": 1.0, "m_mul": 0.5, "alpha": 0.1}),
    ("CosineDecayRestarts", (0.1, 2), {"t_mul": 1.5, "m_mul": 0.8}),
    ("CosineDecay", (0.0, 5), {"warmup_target": 0.1, "warmup_steps": 3, "alpha": 0.2}),
    ("ExponentialDecay", (0.1, 3, 0.5), {"staircase": True}),
    ("InverseTimeDecay", (0.1, 3, 0.5), {}),
    ("PiecewiseConstantDecay", ([2, 5], [0.1, 0.01, 0.001]), {}),
]


@pytest.mark.parametrize("name,args,kwargs", SCHEDULE_CASES)
def test_schedule_values_and_config_match_tf_keras(tf, name, args, kwargs):
    theirs = getattr(tf.keras.optimizers.schedules, name)(*args, **kwargs)
    ours = getattr(jt.keras.optimizers.schedules, name)(*args, **kwargs)
    steps = range(16)
    np.testing.assert_allclose(
        [float(ours(s)) for s in steps],
        [float(theirs(s)) for s in steps],
        rtol=1e-6,
        atol=1e-9,
    )
    assert ours.get_config() == theirs.get_config()
    config = tf.keras.optimizers.schedules.serialize(theirs)
    assert jt.keras.optimizers.schedules.serialize(ours) == config
    back = jt.keras.optimizers.schedules.deserialize(config)
    assert type(back) is type(ours) and back.get_config() == config["config"]


def test_schedule_deserialize_unknown_class_and_custom_objects():
    schedules = jt.keras.optimizers.schedules

    class Halving(schedules.LearningRateSchedule):
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, step):
            return self.rate / 2

        def get_config(self):
            return {"rate": self.rate}

    config = {"class_name": "Halving", "config": {"rate": 0.5}}
    with pytest.raises(TypeError, match="Could not locate class 'Halving'"):
        schedules.deserialize(config)
    back = schedules.deserialize(config, custom_objects={"Halving": Halving})
    assert isinstance(back, Halving) and back.rate == 0.5
    with pytest.raises(ValueError, match="first_decay_steps"):
        schedules.CosineDecayRestarts(0.1, 0)


OPTIMIZER_CASES = [
    ("Lion", {}),
    ("Lion", {"learning_rate": 0.01, "beta_1": 0.5, "weight_decay": 0.1}),
    ("Lamb", {"learning_rate": 0.01}),
    ("Lamb", {"beta_1": 0.5, "epsilon": 1e-3, "clipnorm": 0.1}),
    ("Ftrl", {"learning_rate": 0.1}),
    (
        "Ftrl",
        {
            "learning_rate": 0.5,
            "learning_rate_power": -0.3,
            "l1_regularization_strength": 0.01,
            "l2_regularization_strength": 0.02,
            "l2_shrinkage_regularization_strength": 0.03,
            "beta": 0.1,
        },
    ),
    ("Adafactor", {}),
    ("Adafactor", {"learning_rate": 0.5, "clip_threshold": 0.5, "epsilon_2": 0.1}),
    ("Adam", {"learning_rate": 0.1, "use_ema": True}),
    (
        "SGD",
        {
            "learning_rate": 0.1,
            "momentum": 0.5,
            "use_ema": True,
            "ema_momentum": 0.9,
            "ema_overwrite_frequency": 2,
        },
    ),
    ("Lion", {"use_ema": True, "gradient_accumulation_steps": 2}),
]


def _grads(steps=5):
    rng = np.random.default_rng(1)
    return [
        (
            rng.normal(size=(2, 4, 3)).astype(np.float32) * 10 ** rng.uniform(-3, 0),
            rng.normal(size=(3,)).astype(np.float32) * 1e-2,
        )
        for _ in range(steps)
    ]


def _start():
    rng = np.random.default_rng(2)
    return rng.normal(size=(2, 4, 3)).astype(np.float32), rng.normal(size=3).astype(
        np.float32
    )


def _run(tf_mod, opt, grads):
    w0, b0 = _start()
    w, b = tf_mod.Variable(w0, name="w"), tf_mod.Variable(b0, name="b")
    for gw, gb in grads:
        opt.apply_gradients([(tf_mod.constant(gw), w), (tf_mod.constant(gb), b)])
    return [w.numpy(), b.numpy()], [np.asarray(v.numpy()) for v in opt.variables]


@pytest.mark.parametrize("name,kwargs", OPTIMIZER_CASES)
def test_optimizer_steps_slots_and_config_match_tf_keras(tf, name, kwargs):
    kwargs = {"name": "opt", **kwargs}  # (Keras makes default names unique)
    theirs_opt = getattr(tf.keras.optimizers, name)(**kwargs)
    ours_opt = getattr(jt.keras.optimizers, name)(**kwargs)
    theirs, their_slots = _run(tf, theirs_opt, _grads())
    ours, our_slots = _run(jt, ours_opt, _grads())
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    assert not np.allclose(ours[0], _start()[0])  # the steps really moved it
    assert [(s.shape, s.dtype) for s in our_slots] == [
        (s.shape, s.dtype) for s in their_slots
    ]
    for a, b in zip(our_slots, their_slots):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    config = theirs_opt.get_config()
    _assert_same_config(ours_opt.get_config(), config)
    _assert_same_config(type(ours_opt).from_config(config).get_config(), config)
    assert jt.keras.optimizers.get(name.lower()).__class__ is type(ours_opt)


def _assert_same_config(ours, theirs):
    assert sorted(ours) == sorted(theirs)
    for key, value in theirs.items():
        if isinstance(value, float):
            assert ours[key] == pytest.approx(value, rel=1e-6), key
        else:
            assert ours[key] == value, key


def test_optimizer_argument_errors_match_tf_keras(tf):
    for name, kwargs in [
        ("Lion", {"beta_1": 0.0}),
        ("Ftrl", {"learning_rate_power": 0.5}),
        ("Ftrl", {"l1_regularization_strength": -1.0}),
    ]:
        with pytest.raises(ValueError) as theirs:
            getattr(tf.keras.optimizers, name)(**kwargs)
        with pytest.raises(ValueError) as ours:
            getattr(jt.keras.optimizers, name)(**kwargs)
        assert str(ours.value).split(".")[0] == str(theirs.value).split(".")[0]


LOSS_SCALE_GRADS = [
    [1.0, 2.0, 3.0],
    [1.0, np.inf, 3.0],  # skipped, scale halved
    [1.0, 1.0, 1.0],
    [1.0, 1.0, 1.0],  # the 2nd finite step in a row: scale doubled
    [np.nan, 1.0, 1.0],
    [2.0, 2.0, 2.0],
]


@pytest.mark.parametrize("inner", ["SGD", "Adam"])
def test_loss_scale_optimizer_skips_non_finite_steps_as_tf_keras(tf, inner):
    def run(m):
        opt = m.keras.optimizers.LossScaleOptimizer(
            getattr(m.keras.optimizers, inner)(0.1),
            initial_scale=8.0,
            dynamic_growth_steps=2,
        )
        w = m.Variable(np.ones((2, 3), np.float32), name="w")
        b = m.Variable(np.ones(3, np.float32), name="b")
        scaled = [float(opt.scale_loss(m.constant(1.0)))]
        rows = []
        for g in LOSS_SCALE_GRADS:
            g = np.array(g, np.float32)
            opt.apply_gradients([(m.constant(np.stack([g, -g])), w), (g, b)])
            rows.append(
                [w.numpy(), b.numpy(), int(opt.iterations.numpy())]
                + [np.asarray(v.numpy()) for v in opt.variables]
            )
            scaled.append(float(opt.scale_loss(m.constant(1.0))))
        return rows, scaled, opt.get_config()

    theirs, their_scaled, their_config = run(tf)
    ours, our_scaled, our_config = run(jt)
    assert our_scaled == their_scaled  # 8, 8, 4, 4, 8, 4, 4
    for our_row, their_row in zip(ours, theirs):
        assert len(our_row) == len(their_row)
        for a, b in zip(our_row, their_row):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
            assert np.asarray(a).dtype == np.asarray(b).dtype
    their_config["inner_optimizer"]["config"]["name"] = inner.lower()
    assert our_config["inner_optimizer"]["class_name"] == inner
    back = jt.keras.optimizers.LossScaleOptimizer.from_config(their_config)
    assert isinstance(back.inner_optimizer, getattr(jt.keras.optimizers, inner))
    assert back.dynamic_growth_steps == 2 and back.initial_scale == 8.0


def test_loss_scale_optimizer_argument_errors_match_tf_keras(tf):
    for kwargs in [{"dynamic": False}, {"clipnorm": 1.0}, {"foo": 1}]:
        with pytest.raises(ValueError) as theirs:
            tf.keras.optimizers.LossScaleOptimizer(tf.keras.optimizers.SGD(), **kwargs)
        with pytest.raises(ValueError) as ours:
            jt.keras.optimizers.LossScaleOptimizer(jt.keras.optimizers.SGD(), **kwargs)
        assert str(ours.value) == str(theirs.value)


def test_loss_scale_optimizer_step_runs_inside_function():
    opt = jt.keras.optimizers.LossScaleOptimizer(
        jt.keras.optimizers.SGD(0.5), initial_scale=4.0, dynamic_growth_steps=3
    )
    w = jt.Variable(np.ones(2, np.float32))

    @jt.function
    def step(g):
        opt.apply_gradients([(g, w)])

    step(jt.constant([4.0, 8.0]))  # unscaled: [1, 2]
    step(jt.constant([np.inf, 8.0]))  # skipped
    np.testing.assert_allclose(w.numpy(), [0.5, 0.0])
    assert float(opt.dynamic_scale.numpy()) == 2.0
    assert int(opt.iterations.numpy()) == 1


def test_use_ema_finalize_variable_values_matches_tf_keras(tf):
    def run(m):
        opt = m.keras.optimizers.Adam(0.1, use_ema=True, ema_momentum=0.5)
        w0, b0 = _start()
        w, b = m.Variable(w0), m.Variable(b0)
        for gw, gb in _grads(3):
            opt.apply_gradients([(m.constant(gw), w), (m.constant(gb), b)])
        before = w.numpy()
        opt.finalize_variable_values([w, b])
        return before, w.numpy(), b.numpy(), opt

    *ours, opt = run(jt)
    *theirs, _ = run(tf)
    # Keras's check (its JAX/NumPy/torch backends; the TF backend zips silently)
    with pytest.raises(ValueError, match="length of model variables"):
        opt.finalize_variable_values([jt.Variable(1.0)])
    assert not np.allclose(ours[0], ours[1])  # the average is not the weights
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_fit_with_use_ema_ends_on_the_averages_as_tf_keras(tf):
    x = np.random.default_rng(4).normal(size=(8, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)

    def fit(m):
        model = m.keras.Sequential([m.keras.Input((3,)), m.keras.layers.Dense(1)])
        model.set_weights([np.full((3, 1), 0.1, np.float32), np.zeros(1, np.float32)])
        opt = m.keras.optimizers.SGD(0.1, use_ema=True, ema_momentum=0.5)
        model.compile(optimizer=opt, loss="mse")
        model.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False)
        return model.get_weights()

    for a, b in zip(fit(jt), fit(tf)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_optimizer_config_with_a_schedule_round_trips_as_tf_keras(tf):
    def config(m):
        schedule = m.keras.optimizers.schedules.CosineDecayRestarts(0.1, 3, t_mul=1.5)
        return m.keras.optimizers.Lion(schedule, name="opt").get_config()

    theirs = config(tf)
    _assert_same_config(config(jt), theirs)
    back = jt.keras.optimizers.Lion.from_config(theirs)
    assert [float(back.learning_rate)] == pytest.approx([0.1])
    _assert_same_config(back.get_config(), theirs)
    theirs["learning_rate"]["class_name"] = "Unknown"
    with pytest.raises(TypeError, match="Could not locate class 'Unknown'"):
        jt.keras.optimizers.Lion.from_config(theirs)
