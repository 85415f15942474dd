"""`jaxtape.math.special` (TF's `tf.math.special`): re-exports only."""

from jaxtape._src.ops.math_extra_ops import (  # noqa: F401
    bessel_i0,
    bessel_i0e,
    bessel_i1,
    bessel_i1e,
    bessel_j0,
    bessel_j1,
    bessel_k0,
    bessel_k0e,
    bessel_k1,
    bessel_k1e,
    dawsn,
    expint,
    fresnel_cos,
    fresnel_sin,
    spence,
)
from jaxtape._src import missing as _missing

__getattr__ = _missing.module_getattr(__name__)  # TF names jaxtape lacks say so
