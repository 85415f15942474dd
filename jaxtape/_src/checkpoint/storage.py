"""Checkpoint files: a flat `{path: array}` map stored with orbax-checkpoint.

Layer L4. Orbax writes a checkpoint into a temporary directory and renames
it into place when complete, so a save that dies halfway leaves no
half-written checkpoint under the final name. Beside the arrays goes a JSON
manifest with each array's shape, dtype and SHA-256, checked on every read:
a damaged file is reported as `DataLossError`, never restored silently.
The directory's `checkpoint` state file (TF's text format) is replaced
atomically after each completed save.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import uuid

import numpy as np

from jaxtape._src.core import errors

FORMAT = "jaxtape-checkpoint-1"
STATE_FILE = "checkpoint"


def _checksum(value: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()


def _nest(flat: dict) -> dict:
    tree: dict = {}
    for path, value in flat.items():
        node = tree
        *parents, leaf = path.split("/")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return tree


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
    """Saves `{path: np.ndarray}` as a checkpoint directory at `path` (replacing it)."""
    path = os.path.abspath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    manifest = {
        "format": FORMAT,
        "values": {
            k: {"shape": list(v.shape), "dtype": v.dtype.str, "sha256": _checksum(v)}
            for k, v in flat.items()
        },
    }
    ocp, checkpointer = _checkpointer()
    staging = f"{path}.partial-{uuid.uuid4().hex[:8]}"
    items = {"manifest": ocp.args.JsonSave(manifest)}
    stored = {k: v for k, v in flat.items() if v.size}  # orbax refuses empty arrays
    if stored:
        items["state"] = ocp.args.PyTreeSave(_nest(stored))
    checkpointer.save(staging, args=ocp.args.Composite(**items))
    if os.path.exists(path):  # `write` to an existing prefix: swap, then drop the old
        old = f"{path}.old-{uuid.uuid4().hex[:8]}"
        os.rename(path, old)
        os.rename(staging, path)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(staging, path)
    return path


def read(path: str) -> dict:
    """The `{path: np.ndarray}` map saved at `path`, its checksums verified."""
    path = os.path.abspath(os.fspath(path))
    if not os.path.isdir(path):
        raise errors.NotFoundError(
            None,
            None,
            f"No checkpoint at {path!r}. Pass a path returned by save()/write() or "
            "by jaxtape.train.latest_checkpoint(directory).",
        )
    ocp, checkpointer = _checkpointer()
    try:
        manifest = checkpointer.restore(
            path, args=ocp.args.Composite(manifest=ocp.args.JsonRestore())
        )["manifest"]
        flat = {}
        if any(np.prod(v["shape"]) for v in manifest["values"].values()):
            state = checkpointer.restore(
                path, args=ocp.args.Composite(state=ocp.args.PyTreeRestore())
            )["state"]
            flat = _flatten(state)
    except Exception as e:
        raise errors.DataLossError(
            None,
            None,
            f"The checkpoint at {path!r} is corrupt or incomplete and cannot be "
            f"read ({type(e).__name__}: {e}). Restore an earlier checkpoint.",
        ) from e
    if manifest.get("format") != FORMAT:
        raise errors.DataLossError(
            None, None, f"{path!r} is not a jaxtape checkpoint (no manifest)."
        )
    for key, info in manifest["values"].items():
        if not np.prod(info["shape"]):
            flat[key] = np.zeros(info["shape"], np.dtype(info["dtype"]))
        value = flat.get(key)
        if (
            value is None
            or _checksum(value.astype(np.dtype(info["dtype"]))) != info["sha256"]
        ):
            raise errors.DataLossError(
                None,
                None,
                f"The checkpoint at {path!r} is corrupt: the value of {key!r} does "
                "not match its checksum. Restore an earlier checkpoint.",
            )
        flat[key] = value.astype(np.dtype(info["dtype"])).reshape(info["shape"])
    return flat


# -- the directory's state file (TF's text format) ------------------------------------
def write_state(directory: str, latest: str, all_paths: list) -> None:
    """Atomically records the latest checkpoint (and the kept ones) in `directory`."""
    lines = [f'model_checkpoint_path: "{os.path.relpath(latest, directory)}"']
    lines += [
        f'all_model_checkpoint_paths: "{os.path.relpath(p, directory)}"'
        for p in all_paths
    ]
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".checkpoint-")
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(lines) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(directory, STATE_FILE))


def read_state(directory: str) -> tuple[str | None, list]:
    """`(latest, all kept)` absolute paths from `directory`'s state file."""
    try:
        with open(os.path.join(directory, STATE_FILE)) as f:
            text = f.read()
    except OSError:
        return None, []

    def absolute(p):
        return p if os.path.isabs(p) else os.path.join(directory, p)

    latest = re.search(r'^model_checkpoint_path: "(.*)"$', text, re.M)
    kept = re.findall(r'^all_model_checkpoint_paths: "(.*)"$', text, re.M)
    return (absolute(latest.group(1)) if latest else None), [absolute(p) for p in kept]


def latest_checkpoint(checkpoint_dir, latest_filename=None) -> str | None:
    """The newest complete checkpoint in `checkpoint_dir`, or None (TF's function)."""
    latest, _ = read_state(os.fspath(checkpoint_dir))
    return latest if latest is not None and os.path.isdir(latest) else None
