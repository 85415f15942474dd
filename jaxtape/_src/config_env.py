"""Process-level JAX settings made before JAX starts. Imported first by `jaxtape`.

- x64: TF's float64/int64 need JAX's x64 mode; on by default, off with
  `JAXTAPE_ENABLE_X64=0` (then float64 values are stored as float32).
- GPU memory grows on demand (XLA preallocation off) unless the user has set
  any of XLA's memory variables.
- The objects alive once jaxtape is imported are frozen out of the cyclic
  garbage collector (`freeze_imported_objects`), off with `JAXTAPE_GC_FREEZE=0`.
- Compiled XLA programs persist across processes in JAX's compilation cache
  (`compilation_cache_dir`): a script's second run does not compile again.
"""

from __future__ import annotations

import gc
import os
import threading

_XLA_MEMORY_VARS = (
    "XLA_PYTHON_CLIENT_PREALLOCATE",
    "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "XLA_PYTHON_CLIENT_ALLOCATOR",
)

if not any(v in os.environ for v in _XLA_MEMORY_VARS):
    os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"

import jax  # noqa: E402

X64 = os.environ.get("JAXTAPE_ENABLE_X64", "1").lower() not in ("0", "false", "no")
if X64:
    jax.config.update("jax_enable_x64", True)


def freeze_imported_objects() -> None:
    """Moves every object alive after import out of the cyclic collector's way.

    A recording tape keeps each op's Tensor and node alive until the tape is
    done, so a long eager loop promotes many objects and Python then runs full
    collections. Each walks every object in the process, and JAX's own
    objects make that ~90 ms on a 2-core CPU machine: on a 1000-step tape
    chain the mean step cost doubled. The modules' objects live as long as the
    process anyway; `gc.freeze()` (Python's tool for exactly this) limits
    collections to the objects made afterwards.
    """
    if os.environ.get("JAXTAPE_GC_FREEZE", "1").lower() in ("0", "false", "no"):
        return
    gc.collect()  # (garbage from the imports themselves is not kept)
    gc.freeze()


_OFF = ("0", "false", "no", "off", "")
CACHE_MAX_BYTES = 1 << 30  # the cache's default bound: 1 GiB, least recently used go


def compilation_cache_dir(environ=os.environ, jax_dir=None) -> str | None:
    """Where compiled programs persist: `JAXTAPE_COMPILATION_CACHE` names a
    directory, or is `0` (off); by default `$XDG_CACHE_HOME/jaxtape/xla`
    (`~/.cache/jaxtape/xla`). None when off, or when the user set JAX's own
    cache directory (`jax_dir`, `JAX_COMPILATION_CACHE_DIR`: theirs is used as
    it is)."""
    if jax_dir or "JAX_COMPILATION_CACHE_DIR" in environ:
        return None
    setting = environ.get("JAXTAPE_COMPILATION_CACHE", "1").strip()
    if setting.lower() in _OFF:
        return None
    if setting.lower() not in ("1", "true", "yes", "on"):
        return os.path.expanduser(setting)
    base = environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache"
    )
    return os.path.join(base, "jaxtape", "xla")


def trim_compilation_cache(path: str, max_bytes: int) -> int:
    """Deletes the least recently used programs (by access, else write, time)
    until the cache holds at most `max_bytes`; returns the bytes freed.

    JAX's own bound (`jax_compilation_cache_max_size`) lists and stats the
    whole directory on every write: a loop over 500 input sizes was not done
    after 11 minutes (6.6 without the cache; 4.6 with this trim instead). One
    pass per process, off the import's path, keeps the cache about as bounded.
    """
    entries = []
    try:
        with os.scandir(path) as it:
            for entry in it:
                if entry.name.endswith("-cache") and entry.is_file():
                    st = entry.stat()
                    entries.append(
                        (max(st.st_atime, st.st_mtime), st.st_size, entry.path)
                    )
    except OSError:  # (no directory yet, or not readable: nothing to trim)
        return 0
    excess = sum(size for _, size, _ in entries) - max_bytes
    freed = 0
    for _, size, file in sorted(entries):
        if freed >= excess:
            break
        try:
            os.remove(file)
        except OSError:  # (another process removed it first)
            continue
        freed += size
    return freed


def _enable_compilation_cache() -> None:
    """Every program is kept (JAX's default keeps only those that took over a
    second to compile: an eager step's many small programs and a compiled
    step's program each take less), up to `JAXTAPE_COMPILATION_CACHE_MAX_BYTES`
    (1 GiB by default; trimmed once per process, in the background)."""
    path = compilation_cache_dir(
        jax_dir=jax.config.values.get("jax_compilation_cache_dir")
    )
    if path is None:
        return
    raw = os.environ.get("JAXTAPE_COMPILATION_CACHE_MAX_BYTES", str(CACHE_MAX_BYTES))
    try:
        size = int(raw)
    except ValueError:
        raise ValueError(
            "JAXTAPE_COMPILATION_CACHE_MAX_BYTES must be a whole number of bytes "
            f"(-1: no bound); got {raw!r}."
        ) from None
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    if size >= 0:
        threading.Thread(
            target=trim_compilation_cache, args=(path, size), daemon=True
        ).start()


_enable_compilation_cache()
