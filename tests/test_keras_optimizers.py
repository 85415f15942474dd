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
