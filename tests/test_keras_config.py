"""`jaxtape.keras.config` against tf.keras's `keras.config` (Keras 3.15)."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

import jaxtape
from jaxtape._src.keras import config as _config_state
from jaxtape._src.keras import mixed_precision as _mixed_precision
from jaxtape.keras import config

TF_NAMES = """backend disable_flash_attention disable_interactive_logging
disable_traceback_filtering dtype_policy enable_flash_attention
enable_interactive_logging enable_traceback_filtering enable_unsafe_deserialization
epsilon floatx image_data_format is_flash_attention_enabled
is_interactive_logging_enabled is_nnx_enabled is_traceback_filtering_enabled
max_epochs max_steps_per_epoch set_backend set_dtype_policy set_epsilon set_floatx
set_image_data_format set_max_epochs set_max_steps_per_epoch""".split()


def _snapshot(k):
    return (
        k.floatx(),
        k.epsilon(),
        k.image_data_format(),
        k.max_epochs(),
        k.max_steps_per_epoch(),
        k.is_interactive_logging_enabled(),
        k.is_traceback_filtering_enabled(),
        k.is_flash_attention_enabled(),
    )


def _restore(k, state):
    floatx, eps, fmt, epochs, steps, interactive, tb, flash = state
    k.set_floatx(floatx)
    k.set_epsilon(eps)
    k.set_image_data_format(fmt)
    k.set_max_epochs(epochs)
    k.set_max_steps_per_epoch(steps)
    (k.enable_interactive_logging if interactive else k.disable_interactive_logging)()
    (k.enable_traceback_filtering if tb else k.disable_traceback_filtering)()
    (k.disable_flash_attention if flash is False else k.enable_flash_attention)()


@pytest.fixture
def both(tf):
    """(tf.keras.config, jaxtape.keras.config), every global switch restored."""
    from keras.src.backend.common import global_state

    k = tf.keras.config
    saved = [(m, _snapshot(m)) for m in (k, config)]
    tf_policy = global_state.get_global_attribute("dtype_policy")
    jt_policy = _mixed_precision._global["policy"]
    tf_safe = global_state.get_global_attribute("safe_mode_saving")
    jt_safe = _config_state._STATE["safe_mode_saving"]
    try:
        yield k, config
    finally:
        for m, state in saved:
            _restore(m, state)
        global_state.set_global_attribute("dtype_policy", tf_policy)
        _mixed_precision._global["policy"] = jt_policy
        global_state.set_global_attribute("safe_mode_saving", tf_safe)
        _config_state._STATE["safe_mode_saving"] = jt_safe


def test_every_tf_keras_config_name_is_there(tf):
    tf_names = {n for n in dir(tf.keras.config) if not n.startswith("_")}
    assert set(TF_NAMES) == tf_names
    missing = [n for n in TF_NAMES if not callable(getattr(config, n, None))]
    assert not missing
    # one source of truth: the same objects as in their other homes
    assert config.floatx is jaxtape.keras.backend.floatx
    assert config.set_image_data_format is jaxtape.keras.backend.set_image_data_format
    assert config.dtype_policy is jaxtape.keras.mixed_precision.dtype_policy
    assert config.disable_interactive_logging is (
        jaxtape.keras.utils.disable_interactive_logging
    )


# (setter, value, getter): set in both, read back in both, compare.
ROUND_TRIPS = [
    ("set_floatx", "float16", "floatx"),
    ("set_floatx", "float64", "floatx"),
    ("set_epsilon", 1e-5, "epsilon"),
    ("set_image_data_format", "channels_first", "image_data_format"),
    ("set_max_epochs", 3, "max_epochs"),
    ("set_max_epochs", None, "max_epochs"),
    ("set_max_steps_per_epoch", 7, "max_steps_per_epoch"),
    ("set_max_steps_per_epoch", None, "max_steps_per_epoch"),
    ("set_dtype_policy", "mixed_float16", "dtype_policy"),
    ("set_dtype_policy", "mixed_bfloat16", "dtype_policy"),
    ("disable_interactive_logging", None, "is_interactive_logging_enabled"),
    ("enable_interactive_logging", None, "is_interactive_logging_enabled"),
    ("disable_traceback_filtering", None, "is_traceback_filtering_enabled"),
    ("enable_traceback_filtering", None, "is_traceback_filtering_enabled"),
    ("disable_flash_attention", None, "is_flash_attention_enabled"),
    ("enable_flash_attention", None, "is_flash_attention_enabled"),
    (None, None, "is_flash_attention_enabled"),  # the defaults
    (None, None, "is_traceback_filtering_enabled"),
    (None, None, "is_interactive_logging_enabled"),
    (None, None, "is_nnx_enabled"),
    (None, None, "backend"),
    (None, None, "max_epochs"),
    (None, None, "dtype_policy"),
]


@pytest.mark.parametrize(
    "setter, value, getter",
    ROUND_TRIPS,
    ids=[f"{s}({v!r})->{g}" if s else g for s, v, g in ROUND_TRIPS],
)
def test_round_trip_matches_tf_keras(both, setter, value, getter):
    results = []
    for m in both:
        if setter is not None:
            fn = getattr(m, setter)
            fn() if value is None and setter.startswith(("enable", "disable")) else fn(
                value
            )
        got = getattr(m, getter)()
        results.append(got.name if getter == "dtype_policy" else got)
    assert results[1] == results[0]
    assert type(results[1]) is type(results[0])


BAD_VALUES = [
    ("set_floatx", "int8"),
    ("set_floatx", "float8"),
    ("set_image_data_format", "nchw"),
    ("set_dtype_policy", "bogus"),
    ("set_dtype_policy", 3),
]


@pytest.mark.parametrize("setter, value", BAD_VALUES, ids=lambda v: repr(v))
def test_bad_values_raise_keras_exception_types(both, setter, value):
    types = []
    for m in both:
        with pytest.raises(Exception) as got:
            getattr(m, setter)(value)
        types.append(got.type)
    assert types[1] is types[0]


def test_set_backend():
    config.set_backend("tensorflow")  # the backend jaxtape is: nothing to do
    with pytest.raises(NotImplementedError, match="set_backend"):
        config.set_backend("jax")
    with pytest.raises(ValueError, match="Available backends"):  # Keras's check
        config.set_backend("caffe")


def _fit_counts(m, batch_size=4):
    """Builds a small model in `m` (tf or jaxtape), fits 5 epochs of 10
    batches; the history, batches per epoch, predict/evaluate rows, warnings."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3)).astype("float32")
    y = rng.normal(size=(40, 1)).astype("float32")
    model = m.keras.Sequential([m.keras.Input((3,)), m.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    batches = []
    cb = m.keras.callbacks.LambdaCallback(
        on_epoch_begin=lambda epoch, logs: batches.append(0),
        on_train_batch_end=lambda batch, logs: batches.__setitem__(-1, batches[-1] + 1),
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hist = model.fit(
            x,
            y,
            batch_size=batch_size,
            epochs=5,
            verbose=0,
            callbacks=[cb],
            validation_data=(x, y),
        )
        rows = len(model.predict(x, batch_size=batch_size, verbose=0))
    messages = sorted({str(w.message) for w in caught if "Limiting" in str(w.message)})
    return len(hist.history["loss"]), sorted(hist.history), batches, rows, messages


# (caps that divide the 10 batches: with steps_per_epoch=3, tf.keras continues
# the array iterator across epochs, [3, 3, 3, 1, 3], jaxtape restarts it)
@pytest.mark.parametrize("cap_epochs, cap_steps", [(2, None), (None, 2), (3, 5)])
def test_max_epochs_and_steps_cap_fit_as_tf_keras(both, tf, cap_epochs, cap_steps):
    results = []
    for k, m in zip(both, (tf, jaxtape)):
        k.set_max_epochs(cap_epochs)
        k.set_max_steps_per_epoch(cap_steps)
        results.append(_fit_counts(m))
    assert results[1] == results[0]
    epochs, _, batches, rows, _ = results[1]
    assert epochs == (cap_epochs or 5)
    assert batches == [cap_steps or 10] * epochs
    assert rows == 4 * (cap_steps or 10)


def test_interactive_logging_off_logs_fit_progress(both, tf, capsys, caplog):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(8, 3)).astype("f"), rng.normal(size=(8, 1)).astype("f")
    records = []
    for k, m in zip(both, (tf, jaxtape)):
        k.disable_interactive_logging()
        model = m.keras.Sequential([m.keras.Input((3,)), m.keras.layers.Dense(1)])
        model.compile("sgd", "mse")
        caplog.clear()
        # (tf.keras logs through absl's logger, whose level TF's own
        # SavedModel export leaves at WARNING: set for this test too.)
        with caplog.at_level(logging.INFO), caplog.at_level(logging.INFO, "absl"):
            model.fit(x, y, batch_size=4, epochs=2, verbose=1)
            model.evaluate(x, y, verbose=1)
        assert capsys.readouterr().out == ""  # nothing on stdout
        records.append([r.getMessage() for r in caplog.records])
    for messages in records:
        assert any(msg.startswith("Epoch 2/2") for msg in messages), messages
        assert sum("loss:" in msg for msg in messages) >= 3  # 2 epochs, evaluate
    assert all(r.name == "jaxtape" for r in caplog.records)


def test_interactive_logging_on_prints_fit_progress(capsys, caplog):
    model = jaxtape.keras.Sequential(
        [jaxtape.keras.Input((3,)), jaxtape.keras.layers.Dense(1)]
    )
    model.compile("sgd", "mse")
    with caplog.at_level(logging.INFO):
        model.fit(np.ones((8, 3), "f"), np.ones((8, 1), "f"), epochs=2, verbose=2)
    out = capsys.readouterr().out
    assert "Epoch 2/2" in out and "loss:" in out
    assert not [r for r in caplog.records if r.levelno == logging.INFO]


def test_unsafe_deserialization_loads_tf_keras_lambda(both, tf, tmp_path):
    path = str(tmp_path / "lambda.keras")
    tf_model = tf.keras.Sequential(
        [
            tf.keras.Input((3,)),
            tf.keras.layers.Lambda(lambda x: x * 2.0 + 1.0),
            tf.keras.layers.Dense(2),
        ]
    )
    tf_model.save(path)
    loaders = (tf.keras.models.load_model, jaxtape.keras.models.load_model)
    messages = []
    for load in loaders:  # safe mode (the default) refuses the lambda
        with pytest.raises(ValueError) as got:
            load(path)
        messages.append(str(got.value))
    assert messages[1] == messages[0]
    x = np.random.default_rng(0).normal(size=(4, 3)).astype("float32")
    explicit = jaxtape.keras.models.load_model(path, safe_mode=False)
    outs = []
    for k, load in zip(both, loaders):
        k.enable_unsafe_deserialization()  # overrides load_model's safe_mode=True
        outs.append(load(path).predict(x, verbose=0))
    # (an atol: tf.keras's unseeded Dense can give an output near 0, where
    # float32 rounding that differs between TF and XLA is a large relative
    # error; rtol alone failed for 9 of 200 TF initializations)
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(
        explicit.predict(x, verbose=0), outs[0], rtol=1e-6, atol=1e-5
    )


def test_setters_take_keras_argument_names(tf):
    # Keywords port: `set_image_data_format(data_format=...)` as in Keras.
    import inspect

    for name in dir(tf.keras.config):
        theirs = getattr(tf.keras.config, name)
        if name.startswith("_") or not callable(theirs):
            continue
        ours = getattr(jaxtape.keras.config, name)
        assert list(inspect.signature(ours).parameters) == list(
            inspect.signature(theirs).parameters
        ), name
