"""Saves under faults: killed writers, full disks, umask, corrupt files (against TF).

A killed save is a real SIGKILL of a child process stopped at a fixed point
of its save (it blocks at a chosen rename or dataset write and says so); the
next save from another process must delete what it left and the previous
save must still load.
"""

import errno
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
import zipfile

import h5py
import numpy as np
import pytest

import jaxtape as jt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEFTOVER = re.compile(r"\.(partial|old|deleting)-")


def _leftovers(directory):
    return sorted(n for n in os.listdir(directory) if LEFTOVER.search(n))


# -- a child that saves, then stops at a fixed point of its next save ----------------
_CHILD = textwrap.dedent(
    """
    import os, re, sys, time
    import numpy as np
    import h5py
    import jaxtape as tf

    scenario, hook, pattern, nth, after, target = sys.argv[1:7]
    nth, after, hits = int(nth), after == "1", [0]

    def stop():
        print("BLOCKED", flush=True)
        time.sleep(600)

    def hooked(real):
        def call(src, *args, **kwargs):
            if not re.search(pattern, os.fspath(src)):
                return real(src, *args, **kwargs)
            hits[0] += 1
            if hits[0] != nth:
                return real(src, *args, **kwargs)
            if after:
                real(src, *args, **kwargs)
            stop()
        return call

    if hook == "rename":
        os.rename, os.replace = hooked(os.rename), hooked(os.replace)
    else:  # the nth dataset written to an HDF5 file: a kill mid-write
        real_create = h5py.Group.create_dataset
        def create(self, name, *args, **kwargs):
            hits[0] += 1
            if hits[0] == nth:
                stop()
            return real_create(self, name, *args, **kwargs)
        h5py.Group.create_dataset = create

    def model(value):
        m = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
        m.set_weights([np.full(w.shape, value, np.float32) for w in m.get_weights()])
        return m

    v = tf.Variable(np.zeros(1000, np.float32))
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(v=v), target, max_to_keep=2)
    for i in (1, 2, 3):
        v.assign(np.full(1000, i, np.float32))
        if scenario == "manager":
            manager.save()
        elif scenario == "write":
            tf.train.Checkpoint(v=v).write(target)
        elif scenario == "weights":
            model(i).save_weights(target)
        elif scenario == "keras":
            model(i).save(target)
    print("FINISHED", flush=True)
    """
)


def _kill_midway(tmp_path, scenario, target, hook, pattern, nth, after=False):
    """Runs the child until it blocks at the hook, SIGKILLs it; returns its pid."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, scenario, hook, pattern, str(nth)]
        + ["1" if after else "0", str(target)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    try:
        line = proc.stdout.readline().strip()
        assert line == "BLOCKED", f"the child did not stop at the hook: {line!r}"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    return proc.pid


def _checkpoint_value(path):
    v = jt.Variable(np.zeros(1000, np.float32))
    jt.train.Checkpoint(v=v).restore(path).assert_consumed()
    values = np.unique(v.numpy())
    assert len(values) == 1
    return float(values[0])


def _model():
    return jt.keras.Sequential([jt.keras.Input((3,)), jt.keras.layers.Dense(2)])


def _weights_value(path):
    if str(path).endswith(".keras"):
        model = jt.keras.models.load_model(path)
    else:
        model = _model()
        model.load_weights(path)
    values = np.unique(np.concatenate([w.ravel() for w in model.get_weights()]))
    assert len(values) == 1
    return float(values[0])


# One row per kill point: (id, scenario, target name, hook, pattern, nth hit,
# act after the rename, value the last good save holds).
KILL_POINTS = [
    ("orbax-staging", "manager", "ckpts", "rename",
     r"ckpt-3\.partial-.*orbax-checkpoint-tmp/manifest", 1, False, 2.0),
    ("staged-not-renamed", "manager", "ckpts", "rename",
     r"ckpt-3\.partial-[^/]*$", 2, False, 2.0),
    ("state-file-not-replaced", "manager", "ckpts", "rename",
     r"/checkpoint\.partial-", 3, False, 2.0),
    ("old-checkpoint-half-deleted", "manager", "ckpts", "rename",
     r"/ckpt-1$", 1, True, 3.0),
    ("overwrite-between-renames", "write", "w", "rename", r"/w$", 1, True, 1.0),
    ("weights-mid-write", "weights", "m.weights.h5", "h5", "", 3, False, 1.0),
    ("weights-written-not-renamed", "weights", "m.weights.h5", "rename",
     r"m\.weights\.h5\.partial-", 2, False, 1.0),
    ("keras-written-not-renamed", "keras", "m.keras", "rename",
     r"m\.keras\.partial-", 2, False, 1.0),
]  # fmt: skip


@pytest.mark.parametrize(
    "scenario,name,hook,pattern,nth,after,good",
    [pytest.param(*row[1:], id=row[0]) for row in KILL_POINTS],
)
def test_a_killed_save_leaves_the_last_good_save_and_the_next_save_cleans_up(
    tmp_path, scenario, name, hook, pattern, nth, after, good
):
    target = tmp_path / name
    _kill_midway(tmp_path, scenario, target, hook, pattern, nth, after)
    directory = target if scenario == "manager" else tmp_path
    assert _leftovers(directory), "the kill point left no temporary file"

    if scenario == "manager":
        assert _checkpoint_value(jt.train.latest_checkpoint(str(target))) == good
        v = jt.Variable(np.zeros(1000, np.float32))
        manager = jt.train.CheckpointManager(
            jt.train.Checkpoint(v=v), str(target), max_to_keep=2
        )
        manager.restore_or_initialize()
        assert float(v[0]) == good
        v.assign(np.full(1000, 7.0, np.float32))
        saved = manager.save()
        assert _checkpoint_value(saved) == 7.0
        assert _checkpoint_value(manager.checkpoints[0]) == good
    elif scenario == "write":
        assert _checkpoint_value(str(target)) == good  # found again after the kill
        v = jt.Variable(np.full(1000, 7.0, np.float32))
        jt.train.Checkpoint(v=v).write(str(target))
        assert _checkpoint_value(str(target)) == 7.0
    else:
        assert _weights_value(target) == good
        model = _model()
        model.set_weights([np.full(w.shape, 7.0, np.float32) for w in model.weights])
        model.save(target) if scenario == "keras" else model.save_weights(target)
        assert _weights_value(target) == 7.0
    assert _leftovers(directory) == []


def test_cleanup_spares_live_writers_and_other_hosts(tmp_path):
    from jaxtape._src.checkpoint import storage

    host, own_pid, _ = re.search(
        r"\.partial-(\w+)-(\d+)-(\w+)$", storage.temp_name("x")
    ).groups()
    assert int(own_pid) == os.getpid()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(0.5)  # leftovers made now are younger than `live`
        long_ago = time.time() - 30 * 86400  # before this test run began
        rows = {  # name -> (writer pid, host, made long ago?, kept?)
            "dead": (dead.pid, host, False, False),
            "live": (live.pid, host, False, True),
            "live-pid-reused": (live.pid, host, True, False),
            "own": (os.getpid(), host, False, True),
            "own-pid-reused": (os.getpid(), host, True, False),
            "other-host": (dead.pid, "abcdef" if host != "abcdef" else "fedcba",
                           True, True),
        }  # fmt: skip
        for case, (pid, tag, old, _) in rows.items():
            path = tmp_path / f"m.weights.h5.partial-{tag}-{pid}-0123abcd.{case}"
            path.mkdir() if case == "dead" else path.write_bytes(b"half")
            if old:
                os.utime(path, (long_ago, long_ago))
        other = f"n.weights.h5.partial-{host}-{dead.pid}-0123abcd.other-target"
        (tmp_path / other).write_bytes(b"another file's leftover: not this save's")
        _model().save_weights(tmp_path / "m.weights.h5")
        left = {n.rsplit(".", 1)[1] for n in os.listdir(tmp_path) if ".partial-" in n}
        assert left == {c for c, row in rows.items() if row[3]} | {"other-target"}
    finally:
        live.kill()
        live.wait()


# -- a full disk ----------------------------------------------------------------------
def _fail_with_enospc(monkeypatch, cls, method, after_calls=0):
    """Makes `cls.method` write `after_calls` times, then fail as a full disk does."""
    real, calls = getattr(cls, method), [0]

    def failing(*args, **kwargs):
        calls[0] += 1
        if calls[0] > after_calls:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(cls, method, failing)


def test_a_full_disk_during_a_checkpoint_save_is_resource_exhausted(
    tmp_path, monkeypatch
):
    import orbax.checkpoint as ocp

    v = jt.Variable(np.full(1000, 1.0, np.float32))
    manager = jt.train.CheckpointManager(
        jt.train.Checkpoint(v=v), str(tmp_path), max_to_keep=3
    )
    first = manager.save()
    v.assign(np.full(1000, 2.0, np.float32))
    real_save = ocp.Checkpointer.save

    def half_then_full(self, directory, *args, **kwargs):
        real_save(self, directory, *args, **kwargs)  # written, then the disk "fills"
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ocp.Checkpointer, "save", half_then_full)
    with pytest.raises(jt.errors.ResourceExhaustedError, match="No space left") as e:
        manager.save()
    assert str(tmp_path / "ckpt-2") in str(e.value) and "free some disk" in str(e.value)
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-1"]
    assert jt.train.latest_checkpoint(str(tmp_path)) == first
    assert _checkpoint_value(first) == 1.0


@pytest.mark.parametrize("kind", ["weights.h5", "keras"])
def test_a_full_disk_during_a_keras_save_is_oserror_enospc(tmp_path, monkeypatch, kind):
    path = tmp_path / f"m.{kind}"
    model = _model()
    model.set_weights([np.full(w.shape, 1.0, np.float32) for w in model.weights])
    model.save(path) if kind == "keras" else model.save_weights(path)
    model.set_weights([np.full(w.shape, 2.0, np.float32) for w in model.weights])
    if kind == "keras":
        _fail_with_enospc(monkeypatch, zipfile.ZipFile, "writestr", after_calls=1)
    else:
        _fail_with_enospc(monkeypatch, h5py.Group, "create_dataset", after_calls=1)
    with pytest.raises(OSError, match="No space left on device") as e:
        model.save(path) if kind == "keras" else model.save_weights(path)
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(path)
    assert "free some disk space" in str(e.value)
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == [path.name]
    assert _weights_value(path) == 1.0


_FULL_DISK = textwrap.dedent(
    """
    import json, os, sys
    import numpy as np
    import tensorflow as tf
    import jaxtape as jt

    def error_of(fn):
        try:
            fn()
        except Exception as e:
            return [type(e).__name__, getattr(e, "errno", None), str(e)]
        return None

    out = {}
    for mod, name in ((tf, "tf"), (jt, "jt")):
        ck = os.path.join(sys.argv[1], name, "ck")  # two tiny file systems per side
        files = os.path.join(sys.argv[1], name, "files")
        rng = np.random.default_rng(0)
        small = mod.Variable(np.ones(10, np.float32))
        big = mod.Variable(rng.random((500, 500)).astype(np.float32))
        mod.train.CheckpointManager(
            mod.train.Checkpoint(v=small), ck, max_to_keep=3).save()
        manager = mod.train.CheckpointManager(
            mod.train.Checkpoint(v=small, big=big), ck, max_to_keep=3)
        out[name + "-manager"] = error_of(manager.save)
        model = mod.keras.Sequential(
            [mod.keras.Input((3,)), mod.keras.layers.Dense(2)])
        model.save_weights(files + "/m.weights.h5")
        model.save(files + "/m.keras")
        wide = mod.keras.Sequential(
            [mod.keras.Input((500,)), mod.keras.layers.Dense(500)])
        wide.set_weights([rng.random(w.shape).astype(np.float32)
                          for w in wide.get_weights()])
        out[name + "-weights"] = error_of(
            lambda: wide.save_weights(files + "/m.weights.h5"))
        out[name + "-keras"] = error_of(lambda: wide.save(files + "/m.keras"))
        if name == "jt":
            out["jt-files"] = sorted(os.listdir(ck)) + sorted(os.listdir(files))
            small.assign(np.zeros(10, np.float32))
            jt.train.Checkpoint(v=small).restore(
                jt.train.latest_checkpoint(ck)).assert_consumed()
            out["jt-restored"] = float(small.numpy().sum())
            model.load_weights(files + "/m.weights.h5")
            jt.keras.models.load_model(files + "/m.keras")
    print("RESULT " + json.dumps(out), flush=True)
    """
)


def _unshare_works():
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-r", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
        capture_output=True,
    )
    return probe.returncode == 0


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or not _unshare_works(),
    reason="needs `unshare -r -m` (a user namespace) to mount a tiny tmpfs",
)
def test_a_really_full_disk_matches_tf_and_keeps_the_previous_saves(tf, tmp_path):
    del tf  # imported by the child, on the full disk
    sides = [tmp_path / side / fs for side in ("tf", "jt") for fs in ("ck", "files")]
    for d in sides:
        d.mkdir(parents=True)
    mounts = " && ".join(f"mount -t tmpfs -o size=700k tmpfs {d}" for d in sides)
    run = subprocess.run(
        ["unshare", "-r", "-m", "sh", "-c", f'{mounts} && exec "$@"', "sh"]
        + [sys.executable, "-c", _FULL_DISK, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    found = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert found, run.stderr[-3000:]
    out = json.loads(found[0][len("RESULT ") :])
    assert out["tf-manager"][0] == "ResourceExhaustedError"
    assert out["jt-manager"][0] == out["tf-manager"][0]
    # A fresh Checkpoint counts from 0 again: both overwrite ckpt-1, and fail.
    assert str(tmp_path / "jt" / "ck" / "ckpt-1") in out["jt-manager"][2]
    for kind in ("weights", "keras"):
        assert out[f"tf-{kind}"][:2] == ["OSError", errno.ENOSPC]
        assert out[f"jt-{kind}"][:2] == out[f"tf-{kind}"][:2]
        name = "m.weights.h5" if kind == "weights" else "m.keras"
        assert str(tmp_path / "jt" / "files" / name) in out[f"jt-{kind}"][2]
    # Nothing torn, nothing left over: only the earlier, complete saves.
    assert out["jt-files"] == ["checkpoint", "ckpt-1", "m.keras", "m.weights.h5"]
    assert out["jt-restored"] == 10.0


# -- permissions ----------------------------------------------------------------------
def _modes(root):
    """`{'file': {modes of regular files}, 'dir': mode of root}` under `root`."""
    files = {
        stat.S_IMODE(os.stat(os.path.join(r, n)).st_mode)
        for r, _, names in os.walk(root)
        for n in names
    }
    return {"file": files, "dir": stat.S_IMODE(os.stat(root).st_mode)}


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_saved_files_get_the_umask_as_tf_gives_them(tf, tmp_path, umask):
    def save_all(mod, directory):
        v = mod.Variable(np.ones(3, np.float32))
        mod.train.CheckpointManager(
            mod.train.Checkpoint(v=v), str(directory / "ck"), max_to_keep=2
        ).save()
        model = mod.keras.Sequential([mod.keras.Input((3,)), mod.keras.layers.Dense(2)])
        model.save_weights(directory / "w" / "m.weights.h5")
        model.save(directory / "k" / "m.keras")

    for name in ("tf", "jt"):
        for sub in ("w", "k"):
            (tmp_path / name / sub).mkdir(parents=True)
    previous = os.umask(umask)
    try:
        save_all(tf, tmp_path / "tf")
        save_all(jt, tmp_path / "jt")
    finally:
        os.umask(previous)
    for sub in ("ck", "w", "k"):
        theirs, ours = _modes(tmp_path / "tf" / sub), _modes(tmp_path / "jt" / sub)
        assert theirs["file"] == {0o666 & ~umask}, sub
        assert ours["file"] == theirs["file"], sub
    assert (
        _modes(tmp_path / "jt" / "ck")["dir"] == _modes(tmp_path / "tf" / "ck")["dir"]
    )


def test_rewriting_a_file_keeps_its_mode_as_tf_does(tf, tmp_path):
    for mod, name in ((tf, "tf"), (jt, "jt")):
        model = mod.keras.Sequential([mod.keras.Input((3,)), mod.keras.layers.Dense(2)])
        for suffix in ("weights.h5", "keras"):
            path = tmp_path / f"{name}.{suffix}"
            path.write_bytes(b"")
            path.chmod(0o640)
            model.save(path) if suffix == "keras" else model.save_weights(path)
    for suffix in ("weights.h5", "keras"):
        theirs = stat.S_IMODE(os.stat(tmp_path / f"tf.{suffix}").st_mode)
        ours = stat.S_IMODE(os.stat(tmp_path / f"jt.{suffix}").st_mode)
        assert ours == theirs == 0o640


# -- unreadable files: TF's exception type, our message names the path and the fix ----
def _truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _garbage(path):
    path.write_bytes(b"this is not what it claims to be " * 8)


def _empty(path):
    path.write_bytes(b"")


def _flip_middle(path):
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 2, len(data) // 2 + 16):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def _load_weights(mod, path):
    model = mod.keras.Sequential([mod.keras.Input((3,)), mod.keras.layers.Dense(2)])
    model.load_weights(path)


def _load_model(mod, path):
    mod.keras.models.load_model(path)


# (id, file saved with, damage, load) -- one row per case.
UNREADABLE = [
    ("weights-truncated", "m.weights.h5", _truncate, _load_weights),
    ("weights-garbage", "m.weights.h5", _garbage, _load_weights),
    ("weights-empty", "m.weights.h5", _empty, _load_weights),
    ("h5-garbage", "m.h5", _garbage, _load_weights),
    ("keras-truncated-load-weights", "m.keras", _truncate, _load_weights),
    ("keras-garbage-load-weights", "m.keras", _garbage, _load_weights),
    ("keras-bit-flip-load-weights", "m.keras", _flip_middle, _load_weights),
    ("keras-truncated-load-model", "m.keras", _truncate, _load_model),
    ("keras-garbage-load-model", "m.keras", _garbage, _load_model),
    ("keras-empty-load-model", "m.keras", _empty, _load_model),
    ("h5-garbage-load-model", "m.h5", _garbage, _load_model),
    ("weights-truncated-load-model", "m.weights.h5", _truncate, _load_model),
]


def _save_good(mod, path):
    model = mod.keras.Sequential([mod.keras.Input((3,)), mod.keras.layers.Dense(2)])
    if path.name.endswith(".keras"):
        model.save(path)
    else:
        model.save_weights(path.with_name("good.weights.h5"))
        shutil.copy(path.with_name("good.weights.h5"), path)


@pytest.mark.parametrize(
    "name,damage,load", [pytest.param(*r[1:], id=r[0]) for r in UNREADABLE]
)
def test_an_unreadable_keras_file_raises_tfs_type_naming_the_path(
    tf, tmp_path, name, damage, load
):
    raised = {}
    for mod, side in ((tf, "tf"), (jt, "jt")):
        path = tmp_path / side / name
        path.parent.mkdir()
        _save_good(mod, path)
        damage(path)
        with pytest.raises(Exception) as e:
            load(mod, path)
        raised[side] = e.value
    assert type(raised["jt"]) is type(raised["tf"]), (raised["tf"], raised["jt"])
    message = str(raised["jt"])
    assert str(tmp_path / "jt" / name) in message
    assert re.search(r"again|earlier file", message), message


def test_a_weights_file_in_keras_2s_layout_is_not_implemented(tf, tmp_path):
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    model.save(tmp_path / "legacy.h5")  # Keras 2's HDF5 model file
    with pytest.raises(NotImplementedError, match="Keras 2's legacy HDF5 layout"):
        _load_weights(jt, tmp_path / "legacy.h5")
    with pytest.raises(NotImplementedError, match="legacy Keras HDF5 model"):
        jt.keras.models.load_model(tmp_path / "legacy.h5")


# -- checkpoint paths: TF's exception types ------------------------------------------
def _file_in_the_way(mod, tmp_path):
    (tmp_path / "afile").write_text("x")
    v = mod.Variable(1.0)
    manager = mod.train.CheckpointManager(
        mod.train.Checkpoint(v=v), str(tmp_path / "afile"), max_to_keep=2
    )  # as in TF, the manager itself does not touch the path
    return manager.save


def _save_under_a_file(mod, tmp_path):
    (tmp_path / "afile").write_text("x")
    return lambda: mod.train.Checkpoint(v=mod.Variable(1.0)).save(
        str(tmp_path / "afile" / "ckpt")
    )


def _restore_missing(mod, tmp_path):
    return lambda: mod.train.Checkpoint(v=mod.Variable(1.0)).restore(
        str(tmp_path / "nope" / "ckpt-1")
    )


def _restore_a_plain_file(mod, tmp_path):
    (tmp_path / "afile").write_text("x" * 100)
    return lambda: mod.train.Checkpoint(v=mod.Variable(1.0)).restore(
        str(tmp_path / "afile")
    )


def _restore_the_directory(mod, tmp_path):
    ckpt = mod.train.Checkpoint(v=mod.Variable(1.0))
    mod.train.CheckpointManager(ckpt, str(tmp_path / "d"), max_to_keep=1).save()
    return lambda: ckpt.restore(str(tmp_path / "d"))


# (id, make the call, the text of our message that says what to do)
CHECKPOINT_PATHS = [
    ("manager-on-a-file", _file_in_the_way, "is not a directory.*remove or rename"),
    ("save-under-a-file", _save_under_a_file, "is not a directory.*remove or rename"),
    ("restore-missing", _restore_missing, "Failed to find any matching files"),
    ("restore-a-plain-file", _restore_a_plain_file, "not a jaxtape checkpoint"),
    ("restore-the-directory", _restore_the_directory, "latest_checkpoint"),
]


@pytest.mark.parametrize(
    "make,fix", [pytest.param(*r[1:], id=r[0]) for r in CHECKPOINT_PATHS]
)
def test_bad_checkpoint_paths_raise_tfs_type_naming_the_path(tf, tmp_path, make, fix):
    raised = {}
    for mod, side in ((tf, "tf"), (jt, "jt")):
        (tmp_path / side).mkdir()
        with pytest.raises(Exception) as e:
            make(mod, tmp_path / side)()
        raised[side] = e.value
    assert type(raised["jt"]).__name__ == type(raised["tf"]).__name__
    assert isinstance(raised["jt"], jt.errors.OpError)
    assert str(tmp_path / "jt") in str(raised["jt"])
    assert re.search(fix, str(raised["jt"]), re.S), str(raised["jt"])


def _delete(path):
    path.unlink()


@pytest.mark.parametrize("damage", [_truncate, _garbage, _empty, _delete])
def test_any_damaged_checkpoint_file_is_data_loss_or_harmless(tmp_path, damage):
    expected = np.arange(4096, dtype=np.float32)
    path = jt.train.Checkpoint(v=jt.Variable(expected)).write(str(tmp_path / "c"))
    files = sorted(
        os.path.relpath(os.path.join(r, n), path)
        for r, _, names in os.walk(path)
        for n in names
    )
    assert len(files) > 3
    for i, name in enumerate(files):  # one damaged copy per file of the checkpoint
        copy = tmp_path / f"c{i}"
        shutil.copytree(path, copy)
        damage(copy / name)
        v = jt.Variable(np.zeros(4096, np.float32))
        try:
            jt.train.Checkpoint(v=v).restore(str(copy)).assert_consumed()
        except jt.errors.DataLossError as e:
            assert str(copy) in str(e)
            continue
        # A file the read does not need: the values must still be exactly right.
        np.testing.assert_array_equal(v.numpy(), expected)


def test_a_tensorflow_checkpoint_restores_its_values(tf, tmp_path):
    path = tf.train.Checkpoint(v=tf.Variable(1.0)).save(str(tmp_path / "tf"))
    v = jt.Variable(0.0)
    jt.train.Checkpoint(v=v).restore(path).assert_consumed()
    assert v.numpy() == 1.0
