"""Keras callbacks against tf.keras on the same small fits: learning-rate
histories, stopping, CSV files, and BackupAndRestore resuming a killed fit."""

import csv
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jaxtape as jt

RNG = np.random.default_rng(0)
X = RNG.normal(size=(32, 3)).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
W0 = [RNG.normal(size=(3, 1)).astype(np.float32), np.zeros(1, np.float32)]


def _fit(mod, callbacks, epochs=6, lr=0.05, x=X, y=Y, weights=W0, **kw):
    model = mod.keras.Sequential([mod.keras.Input((3,)), mod.keras.layers.Dense(1)])
    model.set_weights(weights)
    model.compile(mod.keras.optimizers.SGD(lr), "mse")
    history = model.fit(
        x, y, batch_size=8, epochs=epochs, shuffle=False, verbose=0,
        callbacks=callbacks(mod), **kw,
    )  # fmt: skip
    return model, history.history


def test_reduce_lr_on_plateau_gives_tf_keras_learning_rates(tf):
    # A model at its optimum: the loss never improves, so the rate is cut
    # every `patience` epochs, with cooldowns, down to min_lr.
    zero = [np.zeros((3, 1), np.float32), np.zeros(1, np.float32)]

    def cbs(mod):
        return [
            mod.keras.callbacks.ReduceLROnPlateau(
                "loss", factor=0.5, patience=2, cooldown=1, min_lr=0.02
            )
        ]

    runs = [_fit(m, cbs, 10, 0.1, y=np.zeros_like(Y), weights=zero) for m in (jt, tf)]
    (_, ours), (_, theirs) = runs
    np.testing.assert_allclose(ours["learning_rate"], theirs["learning_rate"])
    assert ours["learning_rate"][-1] == pytest.approx(0.02)


def test_learning_rate_scheduler_gives_tf_keras_training(tf, capsys):
    def cbs(mod):
        def schedule(epoch, lr):
            return lr if epoch < 2 else lr * 0.5

        return [mod.keras.callbacks.LearningRateScheduler(schedule, verbose=1)]

    (m1, ours), printed = _fit(jt, cbs), capsys.readouterr().out
    m2, theirs = _fit(tf, cbs)
    assert printed == capsys.readouterr().out  # the same messages
    np.testing.assert_allclose(ours["learning_rate"], theirs["learning_rate"])
    np.testing.assert_allclose(ours["loss"], theirs["loss"], rtol=1e-4)
    for a, b in zip(m1.get_weights(), m2.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_learning_rate_scheduler_errors_as_tf_keras(tf):
    def cbs(mod):
        return [mod.keras.callbacks.LearningRateScheduler(lambda epoch, lr: "fast")]

    with pytest.raises(ValueError, match="should be a float") as theirs:
        _fit(tf, cbs)
    with pytest.raises(ValueError, match="should be a float") as ours:
        _fit(jt, cbs)
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="factor >= 1.0"):
        jt.keras.callbacks.ReduceLROnPlateau(factor=2.0)
    with pytest.raises(ValueError, match="factor >= 1.0"):
        tf.keras.callbacks.ReduceLROnPlateau(factor=2.0)


def test_terminate_on_nan_stops_where_tf_keras_stops(tf, capsys):
    y = Y.copy()
    y[13] = np.nan  # the second batch

    def cbs(mod):
        return [mod.keras.callbacks.TerminateOnNaN()]

    _, ours = _fit(jt, cbs, y=y)
    printed = capsys.readouterr().out
    _, theirs = _fit(tf, cbs, y=y)
    assert (
        printed
        == capsys.readouterr().out
        == ("Batch 1: Invalid loss, terminating training\n")
    )
    assert len(ours["loss"]) == len(theirs["loss"]) == 1

    def raising(mod):
        return [mod.keras.callbacks.TerminateOnNaN(raise_error=True)]

    for mod in (jt, tf):
        with pytest.raises(
            RuntimeError, match="NaN or Inf loss encountered at batch 1"
        ):
            _fit(mod, raising, y=y)


def test_csv_logger_writes_tf_keras_columns(tf, tmp_path):
    rows = {}
    for name, mod in (("ours", jt), ("theirs", tf)):
        path = tmp_path / f"{name}.csv"

        def cbs(mod, path=path):
            return [mod.keras.callbacks.CSVLogger(path, separator=";")]

        _fit(mod, cbs, epochs=3, validation_data=(X[:8], Y[:8]))
        _fit(
            mod, lambda m, p=path: [m.keras.callbacks.CSVLogger(p, ";", append=True)], 2
        )
        with open(path) as f:
            rows[name] = list(csv.reader(f, delimiter=";"))
    ours, theirs = rows["ours"], rows["theirs"]
    assert ours[0] == theirs[0] == ["epoch", "loss", "val_loss"]
    assert [r[0] for r in ours] == [r[0] for r in theirs]  # 0 1 2, then 0 1
    got = np.array([[float(v) for v in r] for r in ours[1:4]])
    want = np.array([[float(v) for v in r] for r in theirs[1:4]])
    np.testing.assert_allclose(got, want, rtol=1e-4)
    assert ours[4][2] == theirs[4][2] == "NA"  # no validation in the second fit


_KILLED_FIT = textwrap.dedent(
    """
    import os, signal, sys
    import numpy as np
    import jaxtape as tf

    backup, kill_at, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    model.set_weights([np.full((3, 1), 0.1, np.float32), np.zeros(1, np.float32)])
    model.compile(tf.keras.optimizers.Adam(0.05), "mse")

    class Kill(tf.keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if self.epoch == kill_at and batch == 1:
                os.kill(os.getpid(), signal.SIGKILL)  # mid-epoch, no cleanup

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch

    history = model.fit(
        x, y, batch_size=8, epochs=6, shuffle=False, verbose=0,
        callbacks=[tf.keras.callbacks.BackupAndRestore(backup), Kill()],
    )
    np.save(out, np.concatenate([w.ravel() for w in model.get_weights()]))
    print("epochs", history.epoch)
    """
)


def _run(script, *args):
    return subprocess.run(
        [sys.executable, script, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )


def test_backup_and_restore_resumes_a_killed_fit(tmp_path):
    script = tmp_path / "fit.py"
    script.write_text(_KILLED_FIT)
    backup = tmp_path / "backup"
    # Uninterrupted: the weights after 6 epochs.
    done = _run(script, tmp_path / "unused", -1, tmp_path / "whole.npy")
    assert done.returncode == 0, done.stderr
    # Killed in the middle of epoch 3 (epochs 0-2 backed up), then run again.
    killed = _run(script, backup, 3, tmp_path / "never.npy")
    assert killed.returncode == -9
    assert sorted(os.listdir(backup))[-1] == "training_metadata.json"
    resumed = _run(script, backup, -1, tmp_path / "resumed.npy")
    assert resumed.returncode == 0, resumed.stderr
    assert "epochs [3, 4, 5]" in resumed.stdout
    np.testing.assert_allclose(
        np.load(tmp_path / "resumed.npy"), np.load(tmp_path / "whole.npy"), rtol=1e-5
    )
    assert not backup.exists()  # deleted when training ended normally


def test_backup_and_restore_keeps_the_last_backup_whole_when_a_save_fails(
    tmp_path, monkeypatch
):
    backup = tmp_path / "backup"

    def cbs(mod):
        return [mod.keras.callbacks.BackupAndRestore(backup, delete_checkpoint=False)]

    model, _ = _fit(jt, cbs, epochs=2)
    saved = [w.copy() for w in model.get_weights()]
    from jaxtape._src.checkpoint import storage

    def broken(path, write, **kw):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(storage, "atomic_file", broken)
    with pytest.raises(OSError):  # the epoch-2 backup fails
        _fit(jt, cbs, epochs=4)
    monkeypatch.undo()
    # The backup of epoch 1 is whole: a new fit starts at epoch 2 from it.
    model, history = _fit(jt, cbs, epochs=2)  # nothing left to run
    assert history == {}
    for a, b in zip(model.get_weights(), saved):
        np.testing.assert_array_equal(a, b)
    assert len([n for n in os.listdir(backup) if n.endswith(".h5")]) == 1


def test_backup_and_restore_reads_a_tf_keras_backup(tf, tmp_path):
    backup = tmp_path / "backup"

    def cbs(mod):
        return [mod.keras.callbacks.BackupAndRestore(backup, delete_checkpoint=False)]

    _fit(tf, cbs, epochs=2)
    assert sorted(os.listdir(backup)) == ["latest.weights.h5", "training_metadata.json"]
    shutil.copytree(backup, tmp_path / "copy")
    model, history = _fit(jt, cbs, epochs=4)
    assert "latest.weights.h5" not in os.listdir(backup)  # (not left stale)
    shutil.rmtree(backup)
    shutil.copytree(tmp_path / "copy", backup)
    theirs, _ = _fit(tf, cbs, epochs=4)  # tf.keras resuming its own backup
    assert len(history["loss"]) == 2  # epochs 2 and 3
    for a, b in zip(model.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
