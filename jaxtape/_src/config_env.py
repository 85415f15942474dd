"""Process-level JAX settings made before JAX starts. Imported first by `jaxtape`.

- x64: TF's float64/int64 need JAX's x64 mode; on by default, off with
  `JAXTAPE_ENABLE_X64=0` (then float64 values are stored as float32).
- GPU memory grows on demand (XLA preallocation off) unless the user has set
  any of XLA's memory variables.
- The objects alive once jaxtape is imported are frozen out of the cyclic
  garbage collector (`freeze_imported_objects`), off with `JAXTAPE_GC_FREEZE=0`.
"""

from __future__ import annotations

import gc
import os

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
