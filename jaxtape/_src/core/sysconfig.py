"""TF's `tf.sysconfig` with jaxtape's own, truthful values. Layer L0.

TF's answers describe its C++ library, for building custom ops against it.
jaxtape has no C++ library: its native code is JAX's (jaxlib), and native
extensions are XLA FFI custom calls built against jaxlib's headers
(`jax.ffi.include_dir()`). So the include directory and flags here are
jaxlib's; there is nothing to link (the FFI API is header-only), and the
build info says whether jaxlib's CUDA or ROCm plugin is installed.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os

import jax

CXX11_ABI_FLAG = 1  # jaxlib's wheels are built with the C++11 ABI, as TF's
CXX_VERSION = 201703  # XLA FFI headers need C++17
MONOLITHIC_BUILD = 0


def _plugin(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def get_build_info() -> dict:
    """What this install was built with: jaxlib's GPU plugins and versions
    (TF's keys `is_cuda_build`, `is_rocm_build`, `is_tensorrt_build`, plus
    `jax_version` and `jaxlib_version`)."""
    return {
        "is_cuda_build": _plugin("jax_cuda12_plugin") or _plugin("jax_cuda13_plugin"),
        "is_rocm_build": _plugin("jax_rocm60_plugin") or _plugin("jax_rocm7_plugin"),
        "is_tensorrt_build": False,
        "jax_version": jax.__version__,
        "jaxlib_version": importlib.metadata.version("jaxlib"),
    }


def get_include() -> str:
    """The directory of jaxlib's C++ headers (the XLA FFI API)."""
    return jax.ffi.include_dir()


def get_lib() -> str:
    """The directory of jaxlib's native libraries."""
    spec = importlib.util.find_spec("jaxlib")
    origin = spec.origin if spec is not None else None
    return os.path.dirname(origin) if origin else ""


def get_compile_flags() -> list[str]:
    """Flags to compile an XLA FFI extension against jaxlib's headers."""
    return [
        f"-I{get_include()}",
        f"-D_GLIBCXX_USE_CXX11_ABI={CXX11_ABI_FLAG}",
        "--std=c++17",
    ]


def get_link_flags() -> list[str]:
    """Nothing to link: the XLA FFI API is header-only (an empty list)."""
    return []
