"""Writing beside a final name, then renaming into place. Layer L0.

The temporary names writers use (`temp_name`: the final name, a kind, this
host and process, so leftovers of dead writers can be told apart), and the
swap that replaces a file or directory whole (`replace_path`): a process
killed at any point leaves the old one or the new one under the final name,
or the old one moved aside under a `.old-` name that the checkpoint storage's
`remove_leftovers` renames back.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import uuid

HOST = hashlib.sha1(socket.gethostname().encode()).hexdigest()[:6]


def temp_name(path: str, kind: str = "partial") -> str:
    """A name beside `path` for a file this process writes (or drops) there."""
    return f"{path}.{kind}-{HOST}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def remove_path(path: str) -> None:
    """Deletes a file or directory tree, ignoring what is already gone."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.remove(path)
        except OSError:
            pass


def replace_path(staging: str, path: str) -> None:
    """Renames the finished `staging` to `path`; an earlier `path` is moved
    aside first and deleted last."""
    if os.path.lexists(path):
        old = temp_name(path, "old")
        os.rename(path, old)
        os.rename(staging, path)
        remove_path(old)
    else:
        os.rename(staging, path)
