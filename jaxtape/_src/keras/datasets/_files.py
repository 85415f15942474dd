"""The files behind `keras.datasets`: Keras's cache, hash checks, atomic downloads
and safe reading of the pickled payloads. Layer L5 (imports no jaxtape layer).

A dataset file lives where Keras 3's `get_file` puts it, so a cache filled by
Keras is reused: `$KERAS_HOME` (else `~/.keras`; `<tmp>/.keras` when that is not
writable) / `cache_subdir` / `fname`. A cached file whose hash differs from
Keras's is fetched again, as Keras does. Downloads go to a temporary file in
the same folder and are renamed into place only once their hash matches, so a
cut connection never leaves a half file under the real name.

Pickles (IMDB/Reuters ragged sequences, CIFAR batches) are read with Keras's
restricted unpickler rule: only NumPy array reconstruction, never arbitrary
callables, so a tampered file cannot run code.
"""

from __future__ import annotations

import hashlib
import io
import os
import pathlib
import pickle
import tempfile
import urllib.error
import urllib.request
import uuid
import zipfile
from typing import IO

import numpy as np

ORIGIN_FOLDER = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def cache_folder(cache_subdir: str = "datasets") -> pathlib.Path:
    """Keras's `get_file` folder: `$KERAS_HOME` or `~/.keras`, then the subdir."""
    base = pathlib.Path(os.environ.get("KERAS_HOME", "~/.keras")).expanduser()
    if not os.access(base if base.exists() else base.parent, os.W_OK):
        base = pathlib.Path(tempfile.gettempdir()) / ".keras"  # Keras's fallback
    return base / cache_subdir


def file_hash(path: str | os.PathLike, algorithm: str = "sha256") -> str:
    """The hex digest of a file (`"sha256"` or `"md5"`), read in chunks."""
    hasher = hashlib.sha256() if algorithm == "sha256" else hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def _algorithm(expected: str) -> str:
    return "sha256" if len(expected) == 64 else "md5"  # Keras's "auto"


def fetch(
    fname: str,
    origin: str,
    expected_hash: str | None = None,
    cache_subdir: str = "datasets",
    hint: str = "",
) -> pathlib.Path:
    """The cached path of `fname`, downloading it from `origin` if it is missing
    or its hash is not `expected_hash` (sha256 or md5, told apart by length).

    `hint` is added to the error raised when the download fails (e.g. an
    environment variable that points at a local copy).
    """
    fname = os.fspath(fname)
    if os.sep in fname:
        raise ValueError(
            "Paths are no longer accepted as the `fname` argument. To specify the "
            "file's parent directory, use the `cache_dir` argument. Received: "
            f"fname={fname}"
        )
    target = cache_folder(cache_subdir) / fname
    stale = ""
    if target.is_file():
        if expected_hash is None:
            return target
        algorithm = _algorithm(expected_hash)
        digest = file_hash(target, algorithm)
        if digest == expected_hash:
            return target
        stale = (
            f"(The cached copy has {algorithm} {digest}, not Keras's "
            f"{expected_hash}, so it had to be fetched again.) "
        )
        print(
            "A local file was found, but it seems to be incomplete or outdated "
            f"because the {algorithm} file hash does not match the original "
            f"value of {expected_hash} so we will re-download the data."
        )
    _download(origin, target, expected_hash, stale + hint)
    return target


def _download(origin: str, target: pathlib.Path, expected_hash, hint: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    # A fresh name beside the target (not mkstemp: its 0600 mode would stay on
    # the cached file); urlretrieve creates it with the user's umask.
    tmp = target.parent / f".{target.name}-{uuid.uuid4().hex}.part"
    try:
        print(f"Downloading data from {origin}")
        try:
            urllib.request.urlretrieve(origin, tmp)
        except (urllib.error.URLError, OSError) as e:
            code = getattr(e, "code", None) or getattr(e, "errno", None)
            reason = getattr(e, "reason", None) or e
            raise OSError(
                f"URL fetch failure on {origin}: {code} -- {reason}. Could not "
                f"download it to {target}. Without internet, copy the file there "
                f"(from {origin}). {hint}".rstrip()
            ) from None
        if expected_hash is not None:
            algorithm = _algorithm(expected_hash)
            digest = file_hash(tmp, algorithm)
            if digest != expected_hash:
                name = "SHA-256" if algorithm == "sha256" else "MD5"
                raise ValueError(
                    f"Incomplete or corrupted file detected: the download of "
                    f"{origin} has {name} {digest}, expected {expected_hash}. "
                    f"Nothing was written to {target}; try again, or put a good "
                    "copy of the file there."
                )
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


# Keras's `npz_utils`: the globals a NumPy object array's pickle needs, only.
_ALLOWED_GLOBALS = frozenset(
    {
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
    }
)


class _RestrictedUnpickler(pickle.Unpickler):
    """Unpickles NumPy arrays (and plain containers) and refuses anything else."""

    def find_class(self, module, name):
        if (module, name) in _ALLOWED_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"Refusing to deserialize `{module}.{name}` while loading a Keras "
            "dataset. The file may be corrupted or malicious."
        )


def unpickle(f: IO[bytes], encoding: str = "ASCII"):
    """`pickle.load` that only rebuilds NumPy arrays (Keras's rule)."""
    return _RestrictedUnpickler(f, encoding=encoding).load()


def _read_npy(f: IO[bytes]) -> np.ndarray:
    try:
        return np.lib.format.read_array(f, allow_pickle=False)
    except ValueError:  # an object array: its payload is a pickle
        f.seek(0)
        version = np.lib.format.read_magic(f)
        if version[0] == 1:
            np.lib.format.read_array_header_1_0(f)
        elif version[0] in (2, 3):  # 3.0 differs from 2.0 only in the encoding
            np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f"Unsupported `.npy` file version: {version}.") from None
        return unpickle(f)


def load_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """The arrays of an `.npz`, object arrays included, without unsafe pickles."""
    arrays = {}
    with zipfile.ZipFile(path) as archive:
        for member in archive.namelist():
            if member.endswith(".npy"):
                with archive.open(member) as raw:
                    arrays[member[: -len(".npy")]] = _read_npy(io.BytesIO(raw.read()))
    return arrays


def load_arrays(path, keys, name: str, objects: bool = False) -> list[np.ndarray]:
    """`keys` of the `.npz` at `path` (`objects`: ragged object arrays allowed,
    read safely); a ValueError naming the file when it is not such an `.npz`."""
    try:
        if objects:
            arrays = load_npz(path)
        else:
            with np.load(path, allow_pickle=False) as f:
                arrays = {k: f[k] for k in f.files}
        return [arrays[k] for k in keys]
    except (KeyError, ValueError, OSError, zipfile.BadZipFile) as e:
        raise ValueError(
            f"{path} is not a valid {name} (expected arrays "
            f"{', '.join(keys)}): {e!r}. Delete it so that it is downloaded again."
        ) from None
