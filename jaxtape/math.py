"""`jaxtape.math` (TF's `tf.math`): re-exports only."""

from jaxtape._src.ops.math_ops import (  # noqa: F401
    abs, acos, add, add_n, asin, atan, atan2, conj, cos, cosh, cumprod, cumsum,
    divide, divide_no_nan, erf, exp, expm1, floordiv, floormod, imag, lgamma, log,
    log1p, maximum, minimum, mod, multiply, negative, pow, real, reciprocal,
    reduce_logsumexp, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_std,
    reduce_sum, reduce_variance, rsqrt, sigmoid, sign, sin, sinh, softplus, sqrt,
    square, squared_difference, subtract, tan, tanh, truediv, xdivy, xlogy,
    l2_normalize,
)
from jaxtape._src.ops.nondiff import (  # noqa: F401
    argmax, argmin, bitwise_and, bitwise_or, bitwise_xor, ceil, equal, floor, greater,
    greater_equal, invert, is_finite, is_inf, is_nan, less, less_equal, logical_and,
    logical_not, logical_or, logical_xor, not_equal, reduce_all, reduce_any, round,
)
from jaxtape._src.ops.array_ops import top_k  # noqa: F401
from jaxtape._src.ops.nn_ops import softmax, log_softmax  # noqa: F401
