"""`keras.utils.get_file` (download once into a cache, check a hash,
extract) and the model plots jaxtape does not draw. Layer L5."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import uuid
import warnings


def _hash_file(path, algorithm, chunk_size=65535) -> str:
    hasher = hashlib.sha256() if algorithm == "sha256" else hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def _valid(path, file_hash, algorithm) -> bool:
    if algorithm == "auto":
        algorithm = "sha256" if len(str(file_hash)) == 64 else "md5"
    return _hash_file(path, algorithm) == str(file_hash)


def get_file(
    fname=None, origin=None, untar=False, md5_hash=None, file_hash=None,
    cache_subdir="datasets", hash_algorithm="auto", extract=False,
    archive_format="auto", cache_dir=None, force_download=False,
):  # fmt: skip
    """Keras's `get_file`: `cache_dir/cache_subdir/fname`, downloaded from
    `origin` unless a cached file is there (and matches `file_hash`, md5 or
    sha256 by its length with `hash_algorithm='auto'`). With `extract` (or
    `untar`) the archive is unpacked beside it and that folder is returned.

    Differences from Keras: none intended; without a network the download
    fails with Keras's "URL fetch failure" Exception, naming the path where a
    copy of the file can be put instead.
    """
    if origin is None:
        raise ValueError(
            'Please specify the "origin" argument (URL of the file to download).'
        )
    if cache_dir is None:
        cache_dir = os.environ.get("KERAS_HOME", os.path.join("~", ".keras"))
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    base = os.path.expanduser(cache_dir)
    if not os.access(base, os.W_OK):
        base = os.path.join(tempfile.gettempdir(), ".keras")
    datadir = os.path.join(base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    provided = fname
    fname = os.fspath(fname) if fname else fname
    if not fname:
        fname = os.path.basename(urllib.parse.urlsplit(origin).path)
        if not fname:
            raise ValueError(
                "Can't parse the file name from the origin provided: "
                f"'{origin}'.Please specify the `fname` argument."
            )
    elif os.sep in fname:
        raise ValueError(
            "Paths are no longer accepted as the `fname` argument. To specify the "
            "file's parent directory, use the `cache_dir` argument. Received: "
            f"fname={fname}"
        )
    extraction_dir = None
    if extract or untar:
        if provided and "." in fname:
            target = os.path.join(datadir, fname)
            extraction_dir = os.path.join(
                datadir, f"{fname[: fname.find('.')]}_extracted"
            )
        else:
            extraction_dir = os.path.join(datadir, fname)
            target = os.path.join(datadir, f"{fname}_archive")
    else:
        target = os.path.join(datadir, fname)

    download = force_download or not os.path.exists(target)
    if not download and file_hash is not None:
        if not _valid(target, file_hash, hash_algorithm):
            print(
                "A local file was found, but it seems to be incomplete or outdated "
                f"because the {hash_algorithm} file hash does not match the "
                f"original value of {file_hash} so we will re-download the data."
            )
            os.remove(target)  # (a known-bad copy is not kept, as Keras)
            download = True
    if download:
        _download(origin, target, file_hash, hash_algorithm)
    if extraction_dir is None:
        return target
    formats = {"auto": None, "tar": "tar", "zip": "zip"}
    if archive_format not in formats and archive_format is not None:
        raise ValueError(
            "get_file: `archive_format` must be 'auto', 'tar' or 'zip'. "
            f"Received: archive_format={archive_format!r}"
        )
    try:
        if os.path.exists(extraction_dir) and not force_download and not download:
            return extraction_dir
        shutil.unpack_archive(
            target, extraction_dir, "tar" if untar else formats.get(archive_format)
        )
    except (shutil.ReadError, ValueError):
        warnings.warn("Could not extract archive.", stacklevel=2)
    return extraction_dir


def model_to_dot(model, *args, **kwargs):
    """Not supported: Keras draws models with pydot and graphviz."""
    raise NotImplementedError(
        "keras.utils.model_to_dot is not supported by jaxtape (Keras draws with "
        "pydot and graphviz). Use `model.summary()` for the layer graph."
    )


def plot_model(model, *args, **kwargs):
    """Not supported: Keras draws models with pydot and graphviz."""
    raise NotImplementedError(
        "keras.utils.plot_model is not supported by jaxtape (Keras draws with "
        "pydot and graphviz). Use `model.summary()` for the layer graph."
    )


def _download(origin, target, file_hash, hash_algorithm) -> None:
    """Fetches `origin` into a temporary file beside `target`, checks its
    hash, then renames it into place: an interrupted or corrupt download
    never leaves a file under the target's name (nor replaces a good one)."""
    print(f"Downloading data from {origin}")
    tmp = os.path.join(
        os.path.dirname(target), f".{os.path.basename(target)}-{uuid.uuid4().hex}.part"
    )
    try:
        try:
            urllib.request.urlretrieve(origin, tmp)
        except (urllib.error.URLError, OSError) as e:
            code = getattr(e, "code", getattr(e, "errno", None))
            reason = getattr(e, "msg", None) or getattr(e, "reason", e)
            raise Exception(  # noqa: TRY002 - Keras raises a bare Exception
                f"URL fetch failure on {origin}: {code} -- {reason} (no network? "
                f"put a copy of the file at {target})"
            ) from e
        if file_hash is not None and not _valid(tmp, file_hash, hash_algorithm):
            raise ValueError(
                "Incomplete or corrupted file detected. The "
                f"{hash_algorithm} file hash does not match the provided value "
                f"of {file_hash}."
            )
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
