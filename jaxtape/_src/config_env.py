"""Process-level JAX settings made before JAX starts. Imported first by `jaxtape`.

- x64: TF's float64/int64 need JAX's x64 mode; on by default, off with
  `JAXTAPE_ENABLE_X64=0` (then float64 values are stored as float32).
- GPU memory grows on demand (XLA preallocation off) unless the user has set
  any of XLA's memory variables.
"""

from __future__ import annotations

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
