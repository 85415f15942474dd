"""Checkpoint files: a flat `{path: array}` map stored with orbax-checkpoint.

Layer L4. A save is written under a temporary name beside its target and
renamed into place when complete, so a save that dies halfway leaves no
half-written checkpoint under the final name. Beside the arrays goes a JSON
manifest with each array's path, shape, dtype and SHA-256, checked on every
read: a damaged file is reported as `DataLossError`, never restored silently.
The directory's `checkpoint` state file (TF's text format) is replaced
atomically after each completed save.

Temporary names carry the writer's host and process id
(`<target>.partial-<host>-<pid>-<random>`), so the next save to the same
target can delete what a killed writer left behind without touching a file
that a live process is still writing. Saved files get the user's umask, as
TF's do. OS errors become TF's exception classes (a full disk is
`ResourceExhaustedError`), and a failed save deletes its temporary files.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat

import numpy as np

from jaxtape._src.core import errors
from jaxtape._src.core.files import HOST as _HOST
from jaxtape._src.core.files import remove_path as _remove
from jaxtape._src.core.files import replace_path, temp_name

FORMAT = "jaxtape-checkpoint-2"
_FORMAT_1 = "jaxtape-checkpoint-1"  # arrays nested by path (read only)
STATE_FILE = "checkpoint"


# -- temporary names and what killed writers leave behind -----------------------------
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_LEFTOVER = re.compile(
    r"(?P<target>.+)\.(?P<kind>partial|old|deleting)-(?P<host>[0-9a-f]{6})-"
    r"(?P<pid>\d+)-[0-9a-f]{8}(?:\..*)?"
)


def _process_start(pid: int) -> float | None:
    """When the live process `pid` started (epoch seconds); None if there is none.

    A zombie (killed, not yet reaped) counts as gone. A live process whose
    start is unknown (no /proc, or hidden there) is taken to have started at
    the epoch, so no file counts as older than it.
    """
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open("/proc/stat") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime"))
        return None if fields[0] == "Z" else boot + int(fields[19]) / _CLOCK_TICKS
    except FileNotFoundError:
        pass  # no such process, or no /proc: ask the kernel
    except (OSError, ValueError, IndexError, StopIteration):
        return 0.0
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except OSError:
        pass
    return 0.0


def _abandoned(match: re.Match, path: str) -> bool:
    """Whether the writer of temporary file `path` is gone (never a live one's)."""
    if match["host"] != _HOST:
        return False  # another machine's writer (a shared file system): unknown
    try:
        modified = os.lstat(path).st_mtime
    except OSError:
        return False
    started = _process_start(int(match["pid"]))
    # Older than the process now holding that pid: written by an earlier one.
    return started is None or modified < started - 1.0


def remove_leftovers(directory: str, target: str) -> None:
    """Deletes the temporary files of dead writers to names matching `target`.

    `target` is a regular expression for the final file names. A checkpoint
    moved aside by an interrupted overwrite (`.old-`) is renamed back when
    nothing took its place.
    """
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        match = _LEFTOVER.fullmatch(name)
        if match is None or not re.fullmatch(target, match["target"]):
            continue
        path = os.path.join(directory, name)
        if not _abandoned(match, path):
            continue
        final = os.path.join(directory, match["target"])
        if match["kind"] == "old" and not os.path.lexists(final):
            try:
                os.rename(path, final)
            except OSError:
                pass
            continue
        _remove(path)


def _recover(path: str) -> None:
    """Puts back the checkpoint at `path` if a killed overwrite moved it aside."""
    directory, name = os.path.split(path)
    remove_leftovers(directory, re.escape(name))


def _discard(temp: str) -> None:
    """Deletes `temp` and anything named after it (orbax's own staging)."""
    directory, name = os.path.split(temp)
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for other in names:
        if other == name or other.startswith(name + "."):
            _remove(os.path.join(directory, other))


def atomic_file(path: str, write, *, keep_mode: bool = False, sync: bool = False):
    """Writes a file through `write(f)` to a temporary name, then renames it.

    The file gets the user's umask (`keep_mode`: an existing file's mode, as
    when a file is rewritten in place). On any error the temporary file is
    deleted and the file at `path`, if any, is left as it was.
    """
    directory, name = os.path.split(os.path.abspath(path))
    remove_leftovers(directory, re.escape(name))
    temp = temp_name(os.path.join(directory, name))
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        if keep_mode:
            try:
                os.chmod(temp, stat.S_IMODE(os.stat(path).st_mode))
            except FileNotFoundError:
                pass
        os.replace(temp, path)
    except BaseException:
        _remove(temp)
        raise


# -- OS errors as TF's exception classes ---------------------------------------------
_ERRNO = {  # TF's errno -> status mapping, for the errors a save can meet
    errno.ENOSPC: errors.ResourceExhaustedError,
    errno.EDQUOT: errors.ResourceExhaustedError,
    errno.EACCES: errors.PermissionDeniedError,
    errno.EPERM: errors.PermissionDeniedError,
    errno.EROFS: errors.PermissionDeniedError,
    errno.ENOENT: errors.NotFoundError,
    errno.ENOTDIR: errors.FailedPreconditionError,
    errno.EISDIR: errors.FailedPreconditionError,
}
_FIX = {
    errors.ResourceExhaustedError: "free some disk space (or save to another "
    "directory) and save again",
    errors.PermissionDeniedError: "check that the directory is writable by you",
}


def _os_errno(e: BaseException) -> int | None:
    """The errno of an OSError, or the one tensorstore reports inside orbax's error."""
    if isinstance(e, OSError) and e.errno is not None:
        return e.errno
    found = re.search(r"os_error_code='(\d+)'", str(e))
    if found:
        return int(found.group(1))
    return errno.ENOSPC if "No space left on device" in str(e) else None


def save_error(e: BaseException, path: str) -> errors.OpError | None:
    """`e`, raised while saving to `path`, as TF's error class (None: keep `e`)."""
    code = _os_errno(e)
    cls = None if code is None else _ERRNO.get(code)
    if code is None or cls is None:
        return None
    fix = _FIX.get(cls, "fix the path and save again")
    return cls(
        None,
        None,
        f"Could not save to {path!r}: {os.strerror(code)}. Nothing was written "
        f"under that name and earlier saves are unchanged; {fix}. ({e})",
    )


def make_directory(directory: str) -> None:
    """Creates `directory` (and parents); a file in the way is TF's error.

    The new directory gets TF's mode, 0o755 less the umask.
    """
    try:
        os.makedirs(directory, mode=0o755, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = directory
        parent = os.path.dirname(blocker)
        while parent != blocker and not os.path.isfile(blocker):
            blocker, parent = parent, os.path.dirname(parent)
        raise errors.FailedPreconditionError(
            None,
            None,
            f"{blocker} is not a directory. Checkpoints are saved into a "
            f"directory: remove or rename that file, or choose another path than "
            f"{directory!r}.",
        ) from None
    except OSError as e:
        error = save_error(e, directory)
        if error is None:
            raise
        raise error from e


# -- checkpoints ----------------------------------------------------------------------
def _checksum(value: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()


def _flatten(tree: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}/"))
        else:
            out[prefix + key] = np.asarray(value)
    return out


def _checkpointer():
    import orbax.checkpoint as ocp

    return ocp, ocp.Checkpointer(ocp.CompositeCheckpointHandler())


def write(path: str, flat: dict) -> str:
    """Saves `{path: np.ndarray}` as a checkpoint directory at `path` (replacing it).

    The arrays are stored under their position (`v0`, `v1`, ...), the paths in
    the manifest, in order: no key is ever reinterpreted (orbax joins nested
    keys with dots) or reordered.
    """
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    make_directory(directory)
    remove_leftovers(directory, re.escape(os.path.basename(path)))
    entries, stored = [], {}
    for i, (key, value) in enumerate(flat.items()):
        entries.append(
            {
                "path": key,
                "key": f"v{i}",
                "shape": list(value.shape),
                "dtype": value.dtype.str,
                "sha256": _checksum(value),
            }
        )
        if value.size:  # orbax refuses empty arrays
            stored[f"v{i}"] = value
    ocp, checkpointer = _checkpointer()
    items = {"manifest": ocp.args.JsonSave({"format": FORMAT, "values": entries})}
    if stored:
        items["state"] = ocp.args.PyTreeSave(stored)
    staging = temp_name(path)
    try:
        checkpointer.save(staging, args=ocp.args.Composite(**items))
    except Exception as e:
        _discard(staging)
        error = save_error(e, path)
        if error is None:
            raise
        raise error from e
    replace_path(staging, path)  # (an existing prefix: swapped, the old dropped)
    return path


def remove_checkpoint(path: str) -> None:
    """Deletes a checkpoint: renamed first, so a killed delete leaves a leftover."""
    doomed = temp_name(path, "deleting")
    try:
        os.rename(path, doomed)
    except OSError:
        return
    _remove(doomed)


def _missing(path: str) -> BaseException:
    if os.path.exists(path + ".index"):
        return NotImplementedError(
            f"{path!r} is a TensorFlow checkpoint ({path}.index); jaxtape reads only "
            "its own checkpoints. Restore it with TensorFlow and save the values "
            "with jaxtape.train.Checkpoint."
        )
    directory, name = os.path.split(path)
    try:
        numbered = sorted(
            n for n in os.listdir(directory or ".") if n.startswith(name + "-")
        )
    except OSError:
        numbered = []
    hint = (
        " You may be missing the checkpoint suffix (e.g. the '-1' in "
        f"'path/to/ckpt-1'); found {numbered[:3]}."
        if numbered
        else ""
    )
    return errors.NotFoundError(
        None,
        None,
        f"Failed to find any matching files for {path}.{hint} Pass a path returned "
        "by save()/write() or by jaxtape.train.latest_checkpoint(directory).",
    )


def _not_a_checkpoint(path: str) -> BaseException | None:
    if not os.path.isdir(path):
        return errors.DataLossError(
            None,
            None,
            f"Unable to read {path!r}: it is a file, not a jaxtape checkpoint (a "
            "directory written by Checkpoint.save/write). Pass the path that save() "
            "returned.",
        )
    if os.path.isdir(os.path.join(path, "manifest")):
        return None
    if os.path.isfile(os.path.join(path, STATE_FILE)):
        return errors.DataLossError(
            None,
            None,
            f"{path!r} is a directory of checkpoints, not a checkpoint. Restore "
            "jaxtape.train.latest_checkpoint(directory) (or one of "
            "CheckpointManager.checkpoints).",
        )
    return errors.DataLossError(
        None,
        None,
        f"{path!r} is not a jaxtape checkpoint (it has no manifest), or it is "
        "incomplete. Pass a path returned by save()/write().",
    )


def read(path: str) -> dict:
    """The `{path: np.ndarray}` map saved at `path`, in saved order, verified."""
    path = os.path.abspath(os.fspath(path))
    if not os.path.lexists(path):
        _recover(path)  # an overwrite killed between its two renames
        if not os.path.lexists(path):
            raise _missing(path)
    problem = _not_a_checkpoint(path)
    if problem is not None:
        raise problem
    ocp, checkpointer = _checkpointer()
    try:
        manifest = checkpointer.restore(
            path, args=ocp.args.Composite(manifest=ocp.args.JsonRestore())
        )["manifest"]
        entries = manifest["values"]
        if manifest.get("format") == _FORMAT_1:  # {path: info}, arrays nested by path
            entries = [{"path": k, "key": k, **v} for k, v in entries.items()]
        state = {}
        if any(np.prod(e["shape"]) for e in entries):
            state = checkpointer.restore(
                path, args=ocp.args.Composite(state=ocp.args.PyTreeRestore())
            )["state"]
            state = _flatten(state)
    except Exception as e:
        raise errors.DataLossError(
            None,
            None,
            f"The checkpoint at {path!r} is corrupt or incomplete and cannot be "
            f"read ({type(e).__name__}: {e}). Restore an earlier checkpoint.",
        ) from e
    if manifest.get("format") not in (FORMAT, _FORMAT_1):
        raise errors.DataLossError(
            None, None, f"{path!r} is not a jaxtape checkpoint (no manifest)."
        )
    flat = {}
    for entry in entries:
        dtype = np.dtype(entry["dtype"])
        if np.prod(entry["shape"]):
            value = state.get(entry["key"])
        else:
            value = np.zeros(entry["shape"], dtype)
        if value is None or _checksum(value.astype(dtype)) != entry["sha256"]:
            raise errors.DataLossError(
                None,
                None,
                f"The checkpoint at {path!r} is corrupt: the value of "
                f"{entry['path']!r} does not match its checksum. Restore an earlier "
                "checkpoint.",
            )
        flat[entry["path"]] = value.astype(dtype).reshape(entry["shape"])
    return flat


# -- the directory's state file (TF's text format) ------------------------------------
def write_state(directory: str, latest: str, all_paths: list) -> None:
    """Atomically records the latest checkpoint (and the kept ones) in `directory`."""
    lines = [f'model_checkpoint_path: "{os.path.relpath(latest, directory)}"']
    lines += [
        f'all_model_checkpoint_paths: "{os.path.relpath(p, directory)}"'
        for p in all_paths
    ]
    text = ("\n".join(lines) + "\n").encode()
    path = os.path.join(directory, STATE_FILE)
    try:
        atomic_file(path, lambda f: f.write(text), sync=True)
    except OSError as e:
        error = save_error(e, path)
        if error is None:
            raise
        raise error from e


def read_state(directory: str, filename=None) -> tuple[str | None, list]:
    """`(latest, all kept)` absolute paths from `directory`'s state file."""
    try:
        with open(os.path.join(directory, filename or STATE_FILE)) as f:
            text = f.read()
    except OSError:
        return None, []

    def absolute(p):
        return p if os.path.isabs(p) else os.path.join(directory, p)

    latest = re.search(r'^model_checkpoint_path: "(.*)"$', text, re.M)
    kept = re.findall(r'^all_model_checkpoint_paths: "(.*)"$', text, re.M)
    return (absolute(latest.group(1)) if latest else None), [absolute(p) for p in kept]


def latest_checkpoint(checkpoint_dir, latest_filename=None) -> str | None:
    """The newest complete checkpoint in `checkpoint_dir`, or None (TF's function).

    `latest_filename` names the state file (TF's argument; default `checkpoint`).
    """
    latest, _ = read_state(os.fspath(checkpoint_dir), latest_filename)
    if latest is not None and not os.path.lexists(latest):
        _recover(latest)
    if latest is not None and os.path.isfile(latest + ".index"):  # (TF's own)
        return latest
    return latest if latest is not None and os.path.isdir(latest) else None
