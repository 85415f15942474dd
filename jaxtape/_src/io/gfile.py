"""`tf.io.gfile` on the local filesystem, with TF's semantics and errors.

TF's local filesystem is what is mirrored: `GFile` opens its file lazily (a
`'w'` file is created, and truncated, on the first write; a missing file
raises on the first read), writes are buffered until `flush`/`close` and not
atomic, and OS errors become TF's `NotFoundError`, `AlreadyExistsError`,
`FailedPreconditionError`... Paths may be `str`, `bytes` or `os.PathLike`,
optionally `file://`; other schemes (`gs://`, `s3://`, `hdfs://`...) raise
`UnimplementedError` naming the scheme, as TF does for schemes it lacks.

Layer L4 (`io`): imports only `core`.
"""

from __future__ import annotations

import errno
import glob as _glob
import os
import shutil
from typing import NamedTuple

from jaxtape._src.core import errors

_SCHEMES = ["file", ""]


def _local(path) -> str:
    """The local path of `path` (str/bytes/PathLike, maybe `file://`); other
    schemes raise TF's `UnimplementedError`."""
    text = os.fsdecode(os.fspath(path)) if not isinstance(path, str) else path
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text
    if scheme == "file":
        return rest
    raise errors.UnimplementedError(
        None,
        None,
        f"File system scheme '{scheme}' not implemented (file: '{text}'). "
        "jaxtape's gfile reads and writes local paths only.",
    )


def _os_error(e: OSError, path: str) -> errors.OpError:
    """TF's error class for an OS error on `path` (TF's `IOError` mapping)."""
    kind = {
        errno.ENOENT: errors.NotFoundError,
        errno.EEXIST: errors.AlreadyExistsError,
        errno.EISDIR: errors.FailedPreconditionError,
        errno.ENOTDIR: errors.FailedPreconditionError,
        errno.ENOTEMPTY: errors.FailedPreconditionError,
        errno.EACCES: errors.PermissionDeniedError,
        errno.EPERM: errors.PermissionDeniedError,
    }.get(e.errno or 0, errors.UnknownError)
    return kind(None, None, f"{path}; {e.strerror}")


def _missing(path: str) -> errors.NotFoundError:
    return errors.NotFoundError(None, None, f"{path}; No such file or directory")


class GFile:
    """A file on the local filesystem (TF's `tf.io.gfile.GFile`).

    Modes `'r'`, `'w'`, `'a'`, `'r+'`, `'w+'`, `'a+'`, each with an optional
    `'b'`: text modes read `str` (decoded with `encoding`), binary modes
    `bytes`; `write` takes either in any mode. `read(n)` reads `n` bytes,
    `seek`/`tell` count bytes, as TF's. The file is opened on first use: a
    `'w'` file is created or truncated at its first write (as TF's, also for
    `'r+'`/`'w+'`), an `'a'` file appended to; nothing reaches the file until
    `flush()` or `close()`.

    Differences from TensorFlow: none known on local paths.
    """

    def __init__(self, name, mode="r", encoding="utf-8"):
        self._name = name
        self._mode = mode
        self._encoding = encoding
        self._binary = "b" in mode
        plain = mode.replace("b", "")
        if plain not in ("r", "w", "a", "r+", "w+", "a+"):
            raise errors.InvalidArgumentError(
                None, None, "mode is not 'r' or 'w' or 'a' or 'r+' or 'w+' or 'a+'"
            )
        self._readable = plain in ("r", "r+", "a+", "w+")
        self._writable = plain in ("a", "w", "r+", "a+", "w+")
        self._append = "a" in plain
        self._reader = None
        self._writer = None

    @property
    def name(self):
        """The file name, as given."""
        return self._name

    @property
    def mode(self) -> str:
        """The mode the file was opened with."""
        return self._mode

    def _read_file(self):
        if self._reader is None:
            if not self._readable:
                raise errors.PermissionDeniedError(
                    None, None, "File isn't open for reading"
                )
            path = _local(self._name)
            try:
                self._reader = open(path, "rb")  # noqa: SIM115 - closed in close()
            except OSError as e:
                raise _os_error(e, path) from None
            if os.path.isdir(path):
                self._reader.close()
                self._reader = None
                raise errors.FailedPreconditionError(
                    None, None, f"{path}; Is a directory"
                )
        return self._reader

    def _write_file(self):
        if self._writer is None:
            if not self._writable:
                raise errors.PermissionDeniedError(
                    None, None, "File isn't open for writing"
                )
            path = _local(self._name)
            try:
                self._writer = open(path, "ab" if self._append else "wb")  # noqa: SIM115
            except OSError as e:
                raise _os_error(e, path) from None
        return self._writer

    def _value(self, data: bytes):
        return data if self._binary else data.decode(self._encoding)

    def size(self) -> int:
        """The size of the file in bytes."""
        return stat(self._name).length

    def write(self, file_content) -> None:
        """Writes `file_content` (str or bytes) at the end of the file."""
        if isinstance(file_content, str):
            file_content = file_content.encode(self._encoding)
        self._write_file().write(bytes(file_content))

    def read(self, n: int = -1):
        """Reads `n` bytes (all the rest when -1) from the current position."""
        f = self._read_file()
        return self._value(f.read() if n == -1 else f.read(n))

    def seek(self, offset=None, whence=0, position=None) -> None:
        """Moves to byte `offset` from the start (`whence=0`), the current
        position (1) or the end (2). `position` is TF's deprecated alias."""
        f = self._read_file()
        if offset is None and position is None:
            raise TypeError("seek(): offset argument required")
        if offset is not None and position is not None:
            raise TypeError(
                "seek(): offset and position may not be set simultaneously."
            )
        offset = position if offset is None else offset
        if whence not in (0, 1, 2):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Invalid whence argument: {whence}. Valid values are 0, 1, or 2.",
            )
        size = os.fstat(f.fileno()).st_size
        target = int(offset) + {0: 0, 1: f.tell(), 2: size}[whence]  # pyright: ignore
        if target < 0:
            raise errors.InvalidArgumentError(
                None, None, f"Seeking to a negative position: {target}"
            )
        if target > size:  # TF stops at the end
            f.seek(0, 2)
            raise errors.OutOfRangeError(None, None, "reached end of file")
        f.seek(target)

    def readline(self):
        """The next line, with its `\\n`; `''` (or `b''`) at the end."""
        return self._value(self._read_file().readline())

    def readlines(self) -> list:
        """All remaining lines."""
        return self._value_lines(self._read_file().readlines())

    def _value_lines(self, lines):
        return [self._value(line) for line in lines]

    def tell(self) -> int:
        """The current byte position."""
        if self._readable:
            return self._read_file().tell()
        return self._write_file().tell()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration()
        return line

    next = __next__

    def flush(self) -> None:
        """Hands what was written to the OS."""
        if self._writer is not None:
            self._writer.flush()

    def close(self) -> None:
        """Closes the file, writing what is buffered."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def seekable(self) -> bool:
        return True


def exists(path) -> bool:
    """Whether `path` exists, file or directory (TF's `tf.io.gfile.exists`)."""
    return os.path.exists(_local(path))


def isdir(path) -> bool:
    """Whether `path` is a directory (TF's `tf.io.gfile.isdir`)."""
    return os.path.isdir(_local(path))


def glob(pattern) -> list[str]:
    """The paths matching `pattern` or a list of patterns (TF's
    `tf.io.gfile.glob`), in the filesystem's order as TF's; `[]` when none
    match."""
    if isinstance(pattern, bytes):
        raise TypeError(f"Expected binary or unicode string, got {pattern[0]}")
    patterns = [pattern] if isinstance(pattern, str) else list(pattern)
    found: list[str] = []
    for p in patterns:
        found.extend(_glob.glob(_local(p)))
    return found


def listdir(path) -> list[str]:
    """The names in directory `path`, without `.` and `..` (TF's
    `tf.io.gfile.listdir`); `NotFoundError` when it is not a directory."""
    local = _local(path)
    if not os.path.isdir(local):
        raise errors.NotFoundError(None, None, f"Could not find directory {local}")
    return os.listdir(local)


def makedirs(path) -> None:
    """Creates `path` and its missing parents; nothing if it exists (TF's
    `tf.io.gfile.makedirs`). A file on the way raises
    `FailedPreconditionError`."""
    local = _local(path)
    parts = os.path.normpath(local)
    probe = parts
    while probe and not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if probe and not os.path.isdir(probe):
        raise errors.FailedPreconditionError(None, None, f"{probe} is not a directory")
    try:
        os.makedirs(local, exist_ok=True)
    except OSError as e:
        raise _os_error(e, local) from None


def mkdir(path) -> None:
    """Creates directory `path`; its parent must exist (`NotFoundError`).
    An existing path is left as it is, as TF 2.21's `tf.io.gfile.mkdir`."""
    local = _local(path)
    if os.path.exists(local):
        return
    try:
        os.mkdir(local)
    except OSError as e:
        raise _os_error(e, local) from None


def remove(path) -> None:
    """Deletes the file `path` (TF's `tf.io.gfile.remove`); a directory raises
    `FailedPreconditionError`, a missing path `NotFoundError`."""
    local = _local(path)
    if os.path.isdir(local):
        raise errors.FailedPreconditionError(None, None, f"{local}; Is a directory")
    try:
        os.remove(local)
    except OSError as e:
        raise _os_error(e, local) from None


def rmtree(path) -> None:
    """Deletes `path` and everything under it, or the file `path` (TF's
    `tf.io.gfile.rmtree`)."""
    local = _local(path)
    if not os.path.lexists(local):
        raise errors.NotFoundError(None, None, f"{local} not found")
    if os.path.isdir(local) and not os.path.islink(local):
        shutil.rmtree(local)
    else:
        os.remove(local)


def _refuse_overwrite(dst: str, overwrite: bool) -> None:
    if not overwrite and os.path.exists(dst):
        raise errors.AlreadyExistsError(None, None, "file already exists")


def rename(src, dst, overwrite=False) -> None:
    """Renames `src` to `dst` (TF's `tf.io.gfile.rename`): an existing `dst`
    raises `AlreadyExistsError` unless `overwrite`."""
    source, target = _local(src), _local(dst)
    _refuse_overwrite(target, overwrite)
    try:
        os.replace(source, target)
    except OSError as e:
        raise _os_error(e, source) from None


def copy(src, dst, overwrite=False) -> None:
    """Copies file `src` to `dst` (TF's `tf.io.gfile.copy`): an existing `dst`
    raises `AlreadyExistsError` unless `overwrite`."""
    source, target = _local(src), _local(dst)
    _refuse_overwrite(target, overwrite)
    if not os.path.exists(source):
        raise _missing(source)
    try:
        shutil.copyfile(source, target)
    except OSError as e:
        raise _os_error(e, source) from None


class FileStatistics(NamedTuple):
    """What `stat` returns: TF's `FileStatistics` fields."""

    length: int
    mtime_nsec: int
    is_directory: bool


def stat(path) -> FileStatistics:
    """The size, modification time (ns) and kind of `path` (TF's
    `tf.io.gfile.stat`); `NotFoundError` when missing."""
    local = _local(path)
    try:
        st = os.stat(local)
    except OSError as e:
        raise _os_error(e, local) from None
    return FileStatistics(st.st_size, st.st_mtime_ns, os.path.isdir(local))


def walk(top, topdown=True, onerror=None):
    """Yields `(dirname, subdirs, files)` for each directory under `top`
    (TF's `tf.io.gfile.walk`): nothing for a missing `top`; `onerror` gets
    the error of a directory that cannot be listed."""
    top = _local(top)
    try:
        names = listdir(top)
    except errors.NotFoundError as e:
        if onerror:
            onerror(e)
        return
    subdirs, files = [], []
    for name in names:
        (subdirs if os.path.isdir(os.path.join(top, name)) else files).append(name)
    here = (top, subdirs, files)
    if topdown:
        yield here
    for sub in subdirs:
        yield from walk(os.path.join(top, sub), topdown, onerror)
    if not topdown:
        yield here


def join(path, *paths):
    """Joins path components as `os.path.join` does, URLs included (TF's
    `tf.io.gfile.join`)."""
    return os.path.join(path, *paths)


def get_registered_schemes() -> list[str]:
    """The schemes paths may use: local files only (`'file'`, `''`).

    Differences from TensorFlow: TF also lists `'ram'` and `'gs'`."""
    return list(_SCHEMES)
