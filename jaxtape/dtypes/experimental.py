"""`jaxtape.dtypes.experimental` (TF's `tf.dtypes.experimental`): re-exports only."""

from jaxtape._src.core.dtypes import (  # noqa: F401
    float4_e2m1fn,
    float8_e4m3b11fnuz,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    int2,
    int4,
    uint2,
    uint4,
)

from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
