"""keras.callbacks.OrbaxCheckpoint against tf.keras's (Keras 3.15 on TF): the
same saved steps and best values for each option combination on the same logs,
the same checkpoint layout (each reads the other's checkpoints), restored
weights equal to the live model's at that epoch, and a killed save leaving the
earlier checkpoints loadable."""

import os
import signal
import subprocess
import sys
import warnings

import numpy as np
import pytest

import jaxtape as jt

EPOCHS, BATCHES = 3, 4
RNG = np.random.default_rng(0)
BATCH_LOSS = np.round(RNG.uniform(size=EPOCHS * BATCHES), 3).tolist()
EPOCH_LOGS = [
    {"loss": 0.9, "val_loss": 1.0, "val_acc": 0.5},
    {"loss": 0.7, "val_loss": 0.8, "val_acc": 0.7},
    {"loss": 0.6, "val_loss": 0.8, "val_acc": 0.6},
]


def _model(mod):
    keras = mod.keras
    model = keras.Sequential(
        [
            keras.Input((3,)),
            keras.layers.Dense(2, name="d"),
            keras.layers.BatchNormalization(name="bn"),
        ],
        name="net",
    )
    model.compile(keras.optimizers.Adam(0.01, name="adam"), "mse", metrics=["mae"])
    return model


def _steps(directory) -> list:
    if not os.path.isdir(directory):
        return []
    return sorted(int(n) for n in os.listdir(directory) if n.isdigit())


def _drive(mod, directory, kwargs):
    """Runs the callback's hooks over the fixed logs: saved steps, best, warnings."""
    model = _model(mod)
    callback = mod.keras.callbacks.OrbaxCheckpoint(str(directory), **kwargs)
    callback.set_model(model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        callback.on_train_begin({})
        for epoch in range(EPOCHS):
            callback.on_epoch_begin(epoch, {})
            for batch in range(BATCHES):
                callback.on_train_batch_begin(batch, {})
                loss = BATCH_LOSS[epoch * BATCHES + batch]
                callback.on_train_batch_end(batch, {"loss": loss})
            callback.on_epoch_end(epoch, dict(EPOCH_LOGS[epoch]))
        callback.on_train_end({})
    said = [str(w.message) for w in caught if "Can save best" in str(w.message)]
    return model, _steps(directory), callback.best, said


def _layout(step_dir) -> tuple:
    """A step's checkpointables and its state tree's paths, shapes and dtypes."""
    from orbax.checkpoint import v1 as ocp

    names = sorted(n for n in os.listdir(step_dir) if os.path.isdir(f"{step_dir}/{n}"))
    tree = ocp.load_checkpointables(step_dir, {"pytree": None})["pytree"]

    def flat(node, prefix=""):
        for key, value in node.items():
            if isinstance(value, dict):
                yield from flat(value, f"{prefix}{key}/")
            else:
                value = np.asarray(value)
                # (Keras on TF stores scalars as Python numbers: float64, int64)
                dtype = value.dtype.kind if value.ndim == 0 else value.dtype.str
                yield prefix + key, (value.shape, dtype)

    return names, dict(flat(tree))


ROWS = {
    "defaults": {},
    "keep_2_in_foreground": dict(max_to_keep=2, save_on_background=False),
    "every_3_batches": dict(save_freq=3, max_to_keep=None),
    "every_5_batches_keep_2_weights_only": dict(
        save_freq=5, max_to_keep=2, save_weights_only=True
    ),
    "best_val_loss_keep_all_verbose": dict(
        save_best_only=True, max_to_keep=None, verbose=1
    ),
    "best_val_acc_max": dict(
        save_best_only=True, monitor="val_acc", mode="max", max_to_keep=None
    ),
    "best_below_threshold": dict(
        save_best_only=True, initial_value_threshold=0.9, max_to_keep=None
    ),
    "best_loss_every_3_batches": dict(
        save_best_only=True, monitor="loss", save_freq=3, max_to_keep=None
    ),
    "best_of_a_missing_monitor": dict(
        save_best_only=True, monitor="val_missing", mode="min"
    ),
}


@pytest.fixture
def frameworks(tf):
    """jaxtape and tf.keras, each with the name of its checkpoint directory."""
    return [("jt", jt), ("tf", tf)]


@pytest.mark.parametrize("kwargs", ROWS.values(), ids=ROWS.keys())
def test_saves_the_steps_tf_keras_saves(kwargs, tf, tmp_path, capsys):
    ours, our_steps, our_best, our_said = _drive(jt, tmp_path / "jt", kwargs)
    printed = capsys.readouterr().out
    theirs, their_steps, their_best, their_said = _drive(tf, tmp_path / "tf", kwargs)
    assert printed == capsys.readouterr().out == ""  # Keras's callback prints nothing
    assert our_steps == their_steps
    assert our_best == their_best
    assert our_said == their_said
    if not our_steps:
        return
    last = our_steps[-1]
    ours_dir, theirs_dir = f"{tmp_path}/jt/{last}", f"{tmp_path}/tf/{last}"
    assert _layout(ours_dir) == _layout(theirs_dir)
    # Each reads the other's checkpoint: tf.keras ours, jaxtape tf.keras's.
    reader = _model(tf)
    reader.load_weights(str(tmp_path / "jt"))
    for a, b in zip(reader.get_weights(), ours.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    reader = _model(jt)
    reader.load_weights(str(tmp_path / "tf"))
    for a, b in zip(reader.get_weights(), theirs.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)


X = RNG.normal(size=(16, 3)).astype(np.float32)
Y = (X[:, :2] * 2.0 + 0.5).astype(np.float32)


def test_restores_the_weights_of_each_epoch_and_resumes_the_numbering(tmp_path):
    directory = str(tmp_path / "ckpt")
    model = _model(jt)
    seen = {}
    record = jt.keras.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: seen.update({epoch: model.get_weights()})
    )
    checkpoint = jt.keras.callbacks.OrbaxCheckpoint(directory, max_to_keep=None)
    model.fit(X, Y, batch_size=4, epochs=3, verbose=0, callbacks=[checkpoint, record])
    assert _steps(directory) == [0, 1, 2]
    for epoch, weights in seen.items():  # a step directory: that epoch's weights
        restored = _model(jt)
        restored.load_weights(f"{directory}/{epoch}")
        for a, b in zip(restored.get_weights(), weights, strict=True):
            np.testing.assert_array_equal(a, b)
    loaded = jt.keras.saving.load_model(directory)  # the latest step, compiled
    for a, b in zip(loaded.get_weights(), model.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(loaded.optimizer.variables, model.optimizer.variables, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert int(loaded.optimizer.iterations) == 12
    # Training on continues the batch count: saves at 14 and 16.
    more = str(tmp_path / "more")
    checkpoint = jt.keras.callbacks.OrbaxCheckpoint(more, save_freq=2, max_to_keep=2)
    loaded.fit(X, Y, batch_size=4, epochs=1, verbose=0, callbacks=[checkpoint])
    assert _steps(more) == [14, 16]
    # Epoch 0 again into a directory at step 2: orbax skips it (Keras silently).
    again = jt.keras.callbacks.OrbaxCheckpoint(directory)
    with pytest.warns(UserWarning, match="did not save step 0"):
        loaded.fit(X, Y, batch_size=16, epochs=1, verbose=0, callbacks=[again])
    assert _steps(directory) == [0, 1, 2]


KILLED_SAVE = """
import os, signal, sys
import numpy as np
import jaxtape as jt
from orbax.checkpoint._src.path import atomicity

keras = jt.keras
model = keras.Sequential(
    [keras.Input((3,)), keras.layers.Dense(2, name="d")], name="net"
)
model.compile("sgd", "mse")
callback = keras.callbacks.OrbaxCheckpoint(sys.argv[1], save_on_background=False)
callback.set_model(model)
callback.on_epoch_end(0, {})
np.savez(sys.argv[2], *model.get_weights())
model.set_weights([w + 1.0 for w in model.get_weights()])

async def die(*args, **kwargs):  # SIGKILL once step 1 is written, before its rename
    os.kill(os.getpid(), signal.SIGKILL)

atomicity.AtomicRenameTemporaryPath.finalize = die
callback.on_epoch_end(1, {})
"""


def test_a_killed_save_leaves_the_previous_checkpoint_loadable(tmp_path):
    directory, saved = str(tmp_path / "ckpt"), str(tmp_path / "w0.npz")
    run = subprocess.run(
        [sys.executable, "-c", KILLED_SAVE, directory, saved],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == -signal.SIGKILL, run.stderr[-2000:]
    assert "1.orbax-checkpoint-tmp" in os.listdir(directory)  # killed mid-save
    assert _steps(directory) == [0]  # step 0 kept: max_to_keep=1 never ran
    model = jt.keras.Sequential(  # (named: weights are matched by path)
        [jt.keras.Input((3,)), jt.keras.layers.Dense(2, name="d")], name="net"
    )
    model.compile("sgd", "mse")
    model.load_weights(directory)
    with np.load(saved) as weights:
        for a, b in zip(model.get_weights(), weights.values(), strict=True):
            np.testing.assert_array_equal(a, b)


def test_each_loads_the_others_checkpoint_as_a_compiled_model(frameworks, tmp_path):
    saved = {name: _drive(mod, tmp_path / name, {})[0] for name, mod in frameworks}
    for (name, _), (_, reader) in zip(frameworks, frameworks[::-1], strict=True):
        model = reader.keras.models.load_model(str(tmp_path / name))
        assert model.name == "net" and model.optimizer.name == "adam"
        for a, b in zip(model.get_weights(), saved[name].get_weights(), strict=True):
            np.testing.assert_array_equal(a, b)
        assert float(model.optimizer.learning_rate) == pytest.approx(0.01)


def test_weights_only_checkpoint_cannot_be_loaded_as_a_model(tf, tmp_path):
    for mod, name in ((jt, "jt"), (tf, "tf")):
        _drive(mod, tmp_path / name, dict(save_weights_only=True))
    with pytest.raises(ValueError) as ours:
        jt.keras.saving.load_model(str(tmp_path / "jt"))
    with pytest.raises(ValueError) as theirs:
        tf.keras.models.load_model(str(tmp_path / "tf"))
    assert str(ours.value) == str(theirs.value)


def test_weights_are_matched_by_path_only(tmp_path):
    saved = _drive(jt, tmp_path, {})[0]
    frozen = _model(jt)  # BatchNormalization's gamma and beta became non-trainable
    frozen.get_layer("bn").trainable = False
    frozen.load_weights(str(tmp_path))
    for a, b in zip(frozen.get_weights(), saved.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    keras = jt.keras
    other = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="x")])
    before = other.get_weights()
    with pytest.raises(ValueError, match="matched by path"):
        other.load_weights(str(tmp_path))
    for a, b in zip(other.get_weights(), before, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "kwargs",
    [dict(save_freq="batch"), dict(save_freq=2.0)],
    ids=["save_freq_batch", "save_freq_float"],
)
def test_bad_arguments_raise_what_tf_keras_raises(kwargs, tf, tmp_path):
    with pytest.raises(ValueError) as ours:
        jt.keras.callbacks.OrbaxCheckpoint(str(tmp_path), **kwargs)
    with pytest.raises(ValueError) as theirs:
        tf.keras.callbacks.OrbaxCheckpoint(str(tmp_path), **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_unknown_mode_and_undecidable_monitor_match_tf_keras(tf, tmp_path):
    said = []
    for mod in (jt, tf):
        with pytest.warns(UserWarning) as caught:
            callback = mod.keras.callbacks.OrbaxCheckpoint(str(tmp_path), mode="up")
        said.append(str(caught[0].message))
        callback = mod.keras.callbacks.OrbaxCheckpoint(str(tmp_path), monitor="val_f")
        callback.set_model(_model(mod))
        with pytest.raises(ValueError) as error:
            callback.on_epoch_end(0, {"val_f": 1.0})
        said.append(str(error.value))
    assert said[:2] == said[2:]
