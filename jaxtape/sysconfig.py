"""`jaxtape.sysconfig` (TF's `tf.sysconfig`): re-exports only."""

from jaxtape._src.core.sysconfig import (  # noqa: F401
    CXX11_ABI_FLAG,
    CXX_VERSION,
    MONOLITHIC_BUILD,
    get_build_info,
    get_compile_flags,
    get_include,
    get_lib,
    get_link_flags,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
