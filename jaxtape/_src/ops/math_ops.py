"""Element-wise math, reductions and products (TF's `math_ops`), as pure jnp bodies.

Layer L1: imports `core` only. Each public op is a pure function of `jax.Array`s
behind `dispatch.op`; non-differentiable ones live in `nondiff.py`. A body checks
its input's dtype against TF's kernels (`Kernels`, `_check`) where jnp would
accept more than TF does, and raises TF's error.

Differences from TensorFlow (all ops here):
  Complex functions of non-finite complex values (a NaN or infinite part) and
  complex division by zero follow XLA's rules rather than Eigen's: both give
  NaN/inf garbage, not the same garbage (`expm1(inf+0j)` is inf+0j here, NaN
  in TF; `1 / (0+0j)` is inf+nanj here, nan+nanj in TF).
  A division by a constant or broadcast divisor can differ from TF's in the
  last bit: XLA's CPU compiler multiplies by the divisor's reciprocal.
  `floordiv` of floats divides exactly, as TF.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, SupportsFloat, overload

import jax
import jax.core
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.core import checks, dtypes, errors
from jaxtape._src.core.dispatch import _mismatch, _tf_name, op
from jaxtape._src.ops import fast_lax, kinks

if TYPE_CHECKING:
    from jaxtape._src.core.tensor import Tensor
    from jaxtape._src.core.typing import AxisLike, DTypeLike, TensorLike
    from jaxtape._src.ops.misc_ops import IndexedSlices


@overload
def _axis(axis: None) -> None: ...
@overload
def _axis(axis: AxisLike | float) -> int | tuple[int, ...]: ...
@overload
def _axis(axis: AxisLike | float | None) -> int | tuple[int, ...] | None: ...
def _axis(axis: AxisLike | float | None) -> int | tuple[int, ...] | None:
    """A static axis argument (int, list, tuple, array or None) as int/tuple/None.

    As in TF, an axis is an integer: a Python float (even 1.0) is a TypeError,
    a list or tensor of floats or strings an `InvalidArgumentError`.
    """
    if axis is None or type(axis) is int:
        return axis
    if isinstance(axis, int):  # a bool: TF reads True as axis 1
        return int(axis)
    if type(axis) is float:
        raise TypeError(
            f"Cannot convert {axis!r} to EagerTensor of dtype int32: an axis is an "
            f"integer. Received: axis={axis!r}"
        )
    arr = np.asarray(axis)
    if arr.dtype.kind not in "iu" and arr.size:
        raise errors.invalid_argument(
            f"Value for attr 'Tidx' of {_tf_name(arr.dtype)} is not in the list of "
            f"allowed values: int32, int64. An axis is an integer; received: "
            f"axis={axis!r}"
        )
    return int(arr) if arr.ndim == 0 else tuple(int(a) for a in arr.reshape(-1))


def _reduction_axes(x, axis, op_name):
    """A reduction's `axis` for `x`, checked as TF checks it (in range, no repeats)."""
    axis = _axis(axis)
    if axis is None:
        return None
    nd = np.ndim(x)
    axes = (axis,) if isinstance(axis, int) else axis  # (a bool is an int, as TF's)
    for a in axes:
        if not -nd <= a < nd:
            raise errors.invalid_argument(
                f"Invalid reduction dimension ({a} for input with {nd} dimension(s)). "
                f"An axis must be in [-{nd}, {nd}).",
                op_name,
            )
    if len({a % nd for a in axes}) < len(axes):
        raise errors.invalid_argument(
            "Invalid reduction arguments: Axes contains duplicate dimension: "
            f"{axes}. Name each axis once.",
            op_name,
        )
    return axis


_FLOAT = "bfloat16, half, float, double"
_INEXACT = _FLOAT + ", complex64, complex128"
_REAL = "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half"
_NUMERIC = _REAL + ", complex64, complex128"
_SIGNED_INTS = "int8, int16, int32, int64"
_INTS = _SIGNED_INTS + ", uint8, uint16, uint32, uint64"


class Kernels(NamedTuple):
    """The dtypes TF registers an op's kernels for (its `T` list), in TF's words.

    A body checks its input against them (`_check`) where jnp would accept
    more than TF does (bools in arithmetic, unsigned ints in `negative`...).
    """

    text: str
    dtypes: frozenset


_NP_NAMES = {"half": "float16", "float": "float32", "double": "float64"}


def kernels(text: str) -> Kernels:
    """`Kernels` from TF's list of dtype names (`"half, float, int32"`)."""
    names = [_NP_NAMES.get(n, n) for n in text.split(", ")]
    return Kernels(
        text,
        frozenset(np.dtype(jnp.bfloat16 if n == "bfloat16" else n) for n in names),
    )


K_FLOAT = kernels(_FLOAT)
K_INEXACT = kernels(_INEXACT)
K_SIGNED = kernels(f"{_FLOAT}, {_SIGNED_INTS}, complex64, complex128")  # Neg, Sign
K_REAL = kernels(f"{_FLOAT}, {_INTS}")  # Maximum, Less, Relu
K_NUMBER = kernels(f"{_FLOAT}, {_INTS}, complex64, complex128")  # all but bool
K_INTS = kernels(_INTS)  # bitwise ops


def _check(op_name, allowed: Kernels, x, y=None):
    """TF's `InvalidArgumentError` unless the input's dtype is in `allowed`.

    `x` may be a (weakly typed) Python scalar next to a typed `y`.
    """
    dtype = _typed_dtype(x, y)
    if dtype not in allowed.dtypes:
        raise _unsupported_dtype(op_name, dtype, allowed.text)


def _typed_dtype(x, y=None):
    """The dtype of the first typed operand: a Python number next to a tensor
    is weakly typed (also as a tracer inside a jitted body, where it has a
    dtype but its aval says weak), and takes the tensor's dtype."""
    dtype = getattr(x, "dtype", None)
    if y is None or (dtype is not None and not _is_weak(x)):
        return dtype
    other = getattr(y, "dtype", None)
    return dtype if other is None else other


def _is_weak(v) -> bool:
    aval = getattr(v, "aval", None)
    return aval is not None and aval.weak_type


def _unsupported_dtype(op_name, x, allowed):
    """TF's error for an op given a dtype its kernel does not accept (`x`: the
    input or its dtype)."""
    dtype = np.dtype(x if isinstance(x, np.dtype) else jnp.result_type(x))
    fix = (
        "Cast the input to a float dtype first, e.g. `jaxtape.cast(x, "
        "jaxtape.float32)`."
        if dtype.kind in "biu"
        else "Cast the input to a supported dtype first with `jaxtape.cast`."
    )
    return errors.invalid_argument(
        f"Value for attr 'T' of {_tf_name(dtype)} is not in the list of allowed "
        f"values: {allowed}. {fix}",
        op_name,
    )


def _shape_error(op_name, x, y, error):
    """TF's `Incompatible shapes` error for operands that do not broadcast, or
    `error` (JAX's) when their shapes are not the problem."""
    sx, sy = np.shape(x), np.shape(y)
    try:
        np.broadcast_shapes(sx, sy)
    except TypeError:  # symbolic sizes (an export's None batch): JAX's error
        return error
    except ValueError:
        return errors.invalid_argument(
            f"Incompatible shapes: {list(sx)} vs. {list(sy)}. Shapes broadcast when, "
            "from the last dimension, each pair of sizes is equal or one is 1; "
            "reshape one operand (`jaxtape.reshape`, `jaxtape.expand_dims`).",
            op_name,
        )
    return error


# -- binary arithmetic (TF's dtype rule: both sides must agree) ---------------------
_PY_SCALARS = (bool, int, float, complex)
_PY_DTYPES = {
    bool: np.dtype(np.bool_),
    int: np.dtype(np.int32),
    float: np.dtype(np.float32),
    complex: np.dtype(np.complex128),
}


@op("AddV2", same_dtype=True)
def _add(x, y):
    _check("AddV2", K_NUMBER, x, y)
    try:
        return jnp.add(x, y)
    except TypeError as e:
        raise _shape_error("AddV2", x, y, e) from None


def add(x: TensorLike, y: TensorLike, name: str | None = None) -> Tensor:
    """Returns `x + y` element-wise, with broadcasting.

    As TF's `tf.add` (its `AddV2` kernel), a Python number of another kind
    than the tensor (`add(int_tensor, 1.5)`) raises `InvalidArgumentError`,
    and so does a Python number as `x` whose own dtype (int32 for ints,
    float32 for floats) is not `y`'s: `add(2, float_tensor)` raises, while
    `2 + float_tensor` converts the 2, as in TF.
    """
    if type(x) in _PY_SCALARS and (y_dtype := getattr(y, "dtype", None)) is not None:
        want = np.dtype(dtypes.np_dtype(y_dtype))
        if _PY_DTYPES[type(x)] != want:
            raise _scalar_mismatch(_add, 1, _PY_DTYPES[type(x)], want)
    try:
        return _add(x, y)
    except errors.EscapedTensorError:
        raise
    except TypeError:
        error = add_number_error(x, y)
        if error is None:
            raise
        raise error from None


def add_number_error(x: TensorLike, y: TensorLike) -> Exception | None:
    """TF's AddV2 error for `x + y` with a Python number `y` of another kind
    than the tensor `x` (where `_add`'s conversion raised TypeError), or None."""
    x_dtype = getattr(x, "dtype", None)
    if type(y) not in _PY_SCALARS or x_dtype is None:
        return None
    have = np.dtype(dtypes.np_dtype(x_dtype))
    return _scalar_mismatch(_add, 1, have, _python_dtype(y, have))


def _python_dtype(v, other):
    """The dtype TF gives a Python number `v` that cannot take `other`'s."""
    if type(v) is float and other.kind == "c":
        return other
    return _PY_DTYPES[type(v)]


def _scalar_mismatch(public_op, i, want, got):
    return _mismatch(public_op._jaxtape_op, i, want, got)


@op("Sub", same_dtype=True)
def subtract(x, y, name: str | None = None):
    """Returns `x - y` element-wise."""
    _check("Sub", K_NUMBER, x, y)
    try:
        return jnp.subtract(x, y)
    except TypeError as e:
        raise _shape_error("Sub", x, y, e) from None


@op("Mul", same_dtype=True)
def multiply(x, y, name: str | None = None):
    """Returns `x * y` element-wise.

    Bool tensors are refused, as by TF's `Mul` kernel (TF's `*` operator on
    a bool tensor is a logical AND; jaxtape's is too).
    """
    _check("Mul", K_NUMBER, x, y)
    try:
        return jnp.multiply(x, y)
    except TypeError as e:
        raise _shape_error("Mul", x, y, e) from None


def _truediv_dtype(dt):
    dt = np.dtype(dt)
    if dt.kind in "iu":
        return np.float64 if dt.itemsize >= 4 else np.float32
    return None


@op("RealDiv", same_dtype=True)
def _truediv(x, y):
    # The dtype is the typed operand's (a Python number next to it is weak).
    dt = _typed_dtype(x, y)
    if dt == np.bool_:
        raise TypeError(
            "Invalid dtype tf.bool in __truediv__: booleans do not divide. Cast "
            "them first, e.g. `jaxtape.cast(x, jaxtape.float32)`."
        )
    target = _truediv_dtype(dt)
    if target is not None:
        x, y = jnp.asarray(x, target), jnp.asarray(y, target)
    try:
        return jnp.true_divide(x, y)
    except TypeError as e:
        raise _shape_error("RealDiv", x, y, e) from None


def divide(x: TensorLike, y: TensorLike, name: str | None = None) -> Tensor:
    """Returns `x / y` (Python's `/`); integers are divided as floats (int8 and
    int16 as float32, wider ones as float64), as in TF.

    A Python number takes the tensor's dtype; tensors of two dtypes raise
    TF's `TypeError`.
    """
    try:
        return _truediv(x, y)
    except errors.InvalidArgumentError:
        error = _division_dtypes(x, y)
        if error is None:
            raise
        raise error from None


def truediv(x: TensorLike, y: TensorLike, name: str | None = None) -> Tensor:
    """Returns `x / y` as `divide`, with TF's conversion of `tf.math.truediv`:
    a Python number as `x` has its own dtype (int32 for ints, float32 for
    floats), which must be `y`'s (`truediv(2, float_tensor)` is a TypeError).
    """
    if type(x) in _PY_SCALARS and (y_dtype := getattr(y, "dtype", None)) is not None:
        want = np.dtype(dtypes.np_dtype(y_dtype))
        if _PY_DTYPES[type(x)] != want:
            raise _same_dtype_error(_PY_DTYPES[type(x)], want)
    return divide(x, y)


def _division_dtypes(x, y):
    """TF's TypeError for dividing tensors of two dtypes, or None."""
    dx, dy = getattr(x, "dtype", None), getattr(y, "dtype", None)
    if dx is None or dy is None or dx == dy:
        return None
    return _same_dtype_error(dtypes.np_dtype(dx), dtypes.np_dtype(dy))


def _same_dtype_error(dx, dy):
    return TypeError(
        f"`x` and `y` must have the same dtype, got tf.{np.dtype(dx).name} != "
        f"tf.{np.dtype(dy).name}. Cast one side first, e.g. "
        f"`jaxtape.cast(x, jaxtape.{np.dtype(dy).name})`."
    )


def _check_divisor(op_name):
    """TF's integer-division check: `InvalidArgumentError` for a zero divisor."""

    def check(xp, x, y):
        dtype = _typed_dtype(x, y)
        if dtype is None or np.dtype(dtype).kind not in "iu":
            return  # floats divide by zero to inf/nan, as in TF
        divisor = checks.host(y) if xp is np else y
        checks.require(xp, divisor == 0, op_name, "Integer division by zero")

    return check


K_FLOORDIV = kernels(f"{_FLOAT}, {_INTS}")


@op(
    "FloorDiv",
    same_dtype=True,
    differentiable=False,
    check=_check_divisor("FloorDiv"),
    jit=True,
)
def floordiv(x, y, name: str | None = None):
    """Returns `floor(x / y)` element-wise (Python's `//`).

    Floats give `floor(x / y)` exactly as TF (so `inf // 2.0` is inf); an
    integer division by zero raises TF's `InvalidArgumentError`. No gradient
    flows through it (None), as through TF's `FloorDiv`.
    """
    _check_no_complex("FloorDiv", x, y, errors.NotFoundError)
    _check("FloorDiv", K_FLOORDIV, x, y)
    dtype = _typed_dtype(x, y)
    try:
        if np.dtype(dtype).kind == "f" or dtype == jnp.bfloat16:
            return jnp.floor(_exact_divide(x, y))
        return jnp.floor_divide(x, y)
    except (TypeError, ValueError) as e:
        raise _shape_error("FloorDiv", x, y, e) from None


def _exact_divide(x, y):
    """`x / y` rounded once, as IEEE division (and TF) does.

    XLA's CPU compiler turns a division by a broadcast or constant divisor
    into a multiplication by its reciprocal, one more rounding: `x / x` can
    give 0.9999999999999999, and `floor` of that is 0. The divisor, broadcast
    and put behind an optimization barrier, stays a divisor.
    """
    shape = jnp.broadcast_shapes(jnp.shape(x), jnp.shape(y))
    dtype = jnp.result_type(x, y)
    y = lax.optimization_barrier(jnp.broadcast_to(jnp.asarray(y, dtype), shape))
    return lax.div(jnp.broadcast_to(jnp.asarray(x, dtype), shape), y)


def _check_no_complex(op_name, x, y, error):
    dtype = _typed_dtype(x, y)
    if np.dtype(dtype).kind == "c":
        raise error(
            None,
            op_name,
            f"Could not find device for node: {op_name}[T={_tf_name(dtype)}]: "
            f"TensorFlow has no complex {op_name} kernel. Use real parts "
            "(`jaxtape.math.real`) or a float dtype.",
        )


@op("FloorMod", same_dtype=True, check=_check_divisor("FloorMod"))
def floormod(x, y, name: str | None = None):
    """Returns the remainder of floor division (Python's `%`).

    An integer division by zero raises TF's `InvalidArgumentError`.
    """
    _check("FloorMod", K_FLOORDIV, x, y)
    try:
        return jnp.mod(x, y)
    except TypeError as e:
        raise _shape_error("FloorMod", x, y, e) from None


mod = floormod


def _check_exponent(xp, x, y):
    """TF's Pow check: an integer base takes no negative integer exponent."""
    dtype = _typed_dtype(x, y)
    if dtype is None or np.dtype(dtype).kind != "i":
        return
    exponent = checks.host(y) if xp is np else y
    checks.require(
        xp,
        exponent < 0,
        "Pow",
        "Integers to negative integer powers are not allowed. Cast the base to a "
        "float dtype first, e.g. `jaxtape.cast(x, jaxtape.float32)`.",
    )


@op("Pow", same_dtype=True, check=_check_exponent)
def _pow(x, y):
    _check("Pow", K_SIGNED, x, y)
    try:
        return jnp.power(x, y)
    except TypeError as e:
        if "negative powers" in str(e):
            raise errors.invalid_argument(
                "Integers to negative integer powers are not allowed. Cast the base "
                "to a float dtype first, e.g. `jaxtape.cast(x, jaxtape.float32)`.",
                "Pow",
            ) from None
        raise _shape_error("Pow", x, y, e) from None


@op("IntegerPow", inputs=("x",), jit=True)
def _integer_pow(x, n):
    return lax.integer_pow(x, n)


def pow(x: TensorLike, y: TensorLike, name: str | None = None) -> Tensor:  # noqa: A001 - TF's public name
    """Returns `x ** y` element-wise.

    A Python int exponent of a float tensor (`x ** 3`) is a static part of the
    op, as `lax.integer_pow`: one multiply chain, exact at 0, and compiled
    backward passes do not see it as a traced value.
    """
    if type(y) is int and -64 <= y <= 64:
        dt = getattr(x, "dtype", None)
        if dt is not None and (dt.is_floating or dt.is_complex):
            return _integer_pow(x, y)
    return _pow(x, y)


@op("Maximum", same_dtype=True, jit=True)
def maximum(x, y, name: str | None = None):
    """Returns the element-wise maximum of `x` and `y` (NaN if either is NaN);
    a tie's gradient goes to `x`, as TF's."""
    _check("Maximum", K_REAL, x, y)
    try:
        return kinks.maximum(x, y)
    except TypeError as e:
        raise _shape_error("Maximum", x, y, e) from None


@op("Minimum", same_dtype=True, jit=True)
def minimum(x, y, name: str | None = None):
    """Returns the element-wise minimum of `x` and `y` (NaN if either is NaN);
    a tie's gradient goes to `x`, as TF's."""
    _check("Minimum", K_REAL, x, y)
    try:
        return kinks.minimum(x, y)
    except TypeError as e:
        raise _shape_error("Minimum", x, y, e) from None


K_SQUARED_DIFFERENCE = kernels(f"{_FLOAT}, int32, int64, complex64, complex128")


@op("SquaredDifference", same_dtype=True, jit=True)
def squared_difference(x, y, name: str | None = None):
    """Returns `(x - y) * conj(x - y)` element-wise."""
    _check("SquaredDifference", K_SQUARED_DIFFERENCE, x, y)
    try:
        d = jnp.subtract(x, y)
    except TypeError as e:
        raise _shape_error("SquaredDifference", x, y, e) from None
    return d * jnp.conj(d) if jnp.iscomplexobj(d) else d * d


@op("DivNoNan", same_dtype=True, jit=True)
def _divide_no_nan(x, y):
    dt = _typed_dtype(x, y)
    if dt == np.bool_:
        raise TypeError(
            "Invalid dtype tf.bool in tf.math.divide_no_nan: booleans do not "
            "divide. Cast them first, e.g. `jaxtape.cast(x, jaxtape.float32)`."
        )
    target = _truediv_dtype(dt)
    if target is not None:
        x, y = jnp.asarray(x, target), jnp.asarray(y, target)
    try:
        zero = y == 0
    except TypeError as e:
        raise _shape_error("DivNoNan", x, y, e) from None
    safe = jnp.where(zero, jnp.ones_like(y), y)
    try:
        quotient = jnp.true_divide(x, safe)
    except TypeError as e:
        raise _shape_error("DivNoNan", x, y, e) from None
    return jnp.where(zero, jnp.zeros_like(quotient), quotient)


def divide_no_nan(x: TensorLike, y: TensorLike, name: str | None = None):
    """Returns `x / y`, or 0 where `y` is 0 (integers divide as floats, as TF).

    Tensors of two dtypes raise TF's `TypeError`.
    """
    try:
        return _divide_no_nan(x, y)
    except errors.InvalidArgumentError:
        error = _division_dtypes(x, y)
        if error is None:
            raise
        raise error from None


@op("Atan2", same_dtype=True)
def atan2(y, x, name: str | None = None):
    """Returns `atan(y / x)` with the quadrant taken from the signs."""
    _check("Atan2", K_FLOAT, y, x)
    try:
        return jnp.arctan2(y, x)
    except TypeError as e:
        raise _shape_error("Atan2", y, x, e) from None


@op("Xdivy", same_dtype=True, jit=True)
def xdivy(x, y, name: str | None = None):
    """Returns 0 where `x == 0`, else `x / y`."""
    _check("Xdivy", K_INEXACT, x, y)
    try:
        zero = jnp.broadcast_arrays(x == 0, y)[0]
    except ValueError as e:
        raise _shape_error("Xdivy", x, y, TypeError(str(e))) from None
    return jnp.where(zero, jnp.zeros_like(x), x / jnp.where(zero, 1, y))


@op("Xlogy", same_dtype=True, jit=True)
def xlogy(x, y, name: str | None = None):
    """Returns 0 where `x == 0` (even where `y` is NaN, as TF), else `x * log(y)`."""
    _check("Xlogy", K_INEXACT, x, y)
    try:
        zero = jnp.broadcast_arrays(x == 0, y)[0]
    except ValueError as e:
        raise _shape_error("Xlogy", x, y, TypeError(str(e))) from None
    safe = jnp.where(zero, 1, y)
    return jnp.where(zero, jnp.zeros_like(x * safe), x * jnp.log(safe))


# -- unary element-wise -------------------------------------------------------------
@op("Neg")
def negative(x, name: str | None = None):
    """Returns `-x` element-wise (signed, float and complex dtypes, as TF)."""
    _check("Neg", K_SIGNED, x)
    try:
        return fast_lax.neg(x)
    except TypeError:
        raise _unsupported_dtype("Neg", x, _NUMERIC) from None


@op("Abs")
def abs(x, name: str | None = None):  # noqa: A001 - TF's public name
    """Returns `|x|` element-wise (the magnitude, as a real dtype, for complex);
    its derivative is `sign(x)`, 0 at 0, as TF's."""
    if np.dtype(x.dtype).kind == "f" or x.dtype == jnp.bfloat16:
        return kinks.fast_abs(x)
    try:
        return fast_lax.abs(x)
    except TypeError:
        raise _unsupported_dtype("Abs", x, _REAL) from None


@op("Sign")
def sign(x, name: str | None = None):
    """Returns -1, 0 or 1 element-wise; its gradient is zero, as in TF."""
    _check("Sign", K_SIGNED, x)
    if isinstance(x, jax.core.Tracer):  # traced: a zero gradient, connected
        return kinks.sign(x)
    try:
        return fast_lax.sign(x)
    except TypeError:
        raise _unsupported_dtype("Sign", x, _NUMERIC) from None


@op("Square")
def square(x, name: str | None = None):
    """Returns `x * x` element-wise."""
    try:
        return fast_lax.square(x)
    except TypeError:
        raise _unsupported_dtype("Square", x, _NUMERIC + ", uint32, uint64") from None


@jax.custom_vjp
def _sqrt_tf(x):
    return lax.sqrt(x)


def _sqrt_fwd(x):
    y = lax.sqrt(x)
    return y, y


def _sqrt_bwd(y, g):
    # TF's SqrtGrad: a zero upstream gradient stays zero even where y == 0, so
    # `where(x > 0, sqrt(x), 0.)` at 0 has gradient 0, not NaN.
    safe = jnp.where(g == 0, jnp.ones_like(y), y)
    return (jnp.where(g == 0, jnp.zeros_like(g), g * 0.5 / jnp.conj(safe)),)


_sqrt_tf.defvjp(_sqrt_fwd, _sqrt_bwd)


@op("Sqrt")
def sqrt(x, name: str | None = None):
    """Returns the square root of `x` element-wise.

    Differences from JAX: the gradient is 0 wherever the incoming gradient is 0
    (TF's rule), so `jaxtape.where(x > 0, jaxtape.sqrt(x), 0.)` is NaN-free at 0.
    """
    try:
        return _sqrt_tf(x)
    except TypeError:
        raise _unsupported_dtype("Sqrt", x, _INEXACT) from None


# jvp replay (ForwardAccumulator): a function attribute autodiff/program.py reads
sqrt.__wrapped__.forward_mode = jnp.sqrt  # pyright: ignore[reportFunctionMemberAccess]


@op("Rsqrt")
def rsqrt(x, name: str | None = None):
    """Returns `1 / sqrt(x)` element-wise."""
    try:
        return fast_lax.rsqrt(x)
    except TypeError:
        raise _unsupported_dtype("Rsqrt", x, _INEXACT) from None


@op("Exp")
def exp(x, name: str | None = None):
    """Returns `e ** x` element-wise."""
    try:
        return fast_lax.exp(x)
    except TypeError:
        raise _unsupported_dtype("Exp", x, _INEXACT) from None


@op("Expm1")
def expm1(x, name: str | None = None):
    """Returns `exp(x) - 1` element-wise."""
    try:
        return fast_lax.expm1(x)
    except TypeError:
        raise _unsupported_dtype("Expm1", x, _INEXACT) from None


@op("Log")
def log(x, name: str | None = None):
    """Returns the natural logarithm of `x` element-wise."""
    try:
        return fast_lax.log(x)
    except TypeError:
        raise _unsupported_dtype("Log", x, _INEXACT) from None


@op("Log1p")
def log1p(x, name: str | None = None):
    """Returns `log(1 + x)` element-wise."""
    try:
        return fast_lax.log1p(x)
    except TypeError:
        raise _unsupported_dtype("Log1p", x, _INEXACT) from None


@op("Sin")
def sin(x, name: str | None = None):
    """Returns `sin(x)` element-wise."""
    try:
        return fast_lax.sin(x)
    except TypeError:
        raise _unsupported_dtype("Sin", x, _INEXACT) from None


@op("Cos")
def cos(x, name: str | None = None):
    """Returns `cos(x)` element-wise."""
    try:
        return fast_lax.cos(x)
    except TypeError:
        raise _unsupported_dtype("Cos", x, _INEXACT) from None


@op("Tan")
def tan(x, name: str | None = None):
    """Returns `tan(x)` element-wise."""
    try:
        return fast_lax.tan(x)
    except TypeError:
        raise _unsupported_dtype("Tan", x, _INEXACT) from None


@op("Asin")
def asin(x, name: str | None = None):
    """Returns `arcsin(x)` element-wise."""
    try:
        return fast_lax.asin(x)
    except TypeError:
        raise _unsupported_dtype("Asin", x, _INEXACT) from None


@op("Acos")
def acos(x, name: str | None = None):
    """Returns `arccos(x)` element-wise."""
    try:
        return fast_lax.acos(x)
    except TypeError:
        raise _unsupported_dtype("Acos", x, _INEXACT) from None


@op("Atan")
def atan(x, name: str | None = None):
    """Returns `arctan(x)` element-wise."""
    try:
        return fast_lax.atan(x)
    except TypeError:
        raise _unsupported_dtype("Atan", x, _INEXACT) from None


@op("Sinh")
def sinh(x, name: str | None = None):
    """Returns `sinh(x)` element-wise."""
    try:
        return fast_lax.sinh(x)
    except TypeError:
        raise _unsupported_dtype("Sinh", x, _INEXACT) from None


@op("Cosh")
def cosh(x, name: str | None = None):
    """Returns `cosh(x)` element-wise."""
    try:
        return fast_lax.cosh(x)
    except TypeError:
        raise _unsupported_dtype("Cosh", x, _INEXACT) from None


@op("Tanh")
def tanh(x, name: str | None = None):
    """Returns `tanh(x)` element-wise."""
    try:
        return fast_lax.tanh(x)
    except TypeError:
        raise _unsupported_dtype("Tanh", x, _INEXACT) from None


@op("Sigmoid")
def sigmoid(x, name: str | None = None):
    """Returns `1 / (1 + exp(-x))` element-wise."""
    try:
        return fast_lax.logistic(x)
    except TypeError:
        raise _unsupported_dtype("Sigmoid", x, _INEXACT) from None


@op("Reciprocal")
def reciprocal(x, name: str | None = None):
    """Returns `1 / x` element-wise (floats and complex; TF has no integer kernel)."""
    kind = np.dtype(x.dtype).kind
    if kind in "bu":
        raise _unsupported_dtype("Reciprocal", x, K_SIGNED.text)
    if kind == "i":
        raise errors.NotFoundError(
            None,
            "Reciprocal",
            f"Could not find device for node: Reciprocal[T={_tf_name(x.dtype)}]: "
            "TensorFlow has no integer reciprocal kernel. Cast to a float first, "
            "e.g. `jaxtape.cast(x, jaxtape.float32)`.",
        )
    return jnp.reciprocal(x)


@op("Erf")
def erf(x, name: str | None = None):
    """Returns the Gauss error function of `x` element-wise.

    Differences from TensorFlow:
      `erf(+-inf)` is +-1 in every float dtype; TF's float64 kernel gives NaN.
    """
    try:
        return fast_lax.erf(x)
    except TypeError:
        raise _unsupported_dtype("Erf", x, _FLOAT) from None


@op("Lgamma")
def lgamma(x, name: str | None = None):
    """Returns `log(|gamma(x)|)` element-wise."""
    try:
        return fast_lax.lgamma(x)
    except TypeError:
        raise _unsupported_dtype("Lgamma", x, _FLOAT) from None


@op("Softplus")
def softplus(features, name: str | None = None):
    """Computes `log(exp(features) + 1)` element-wise."""
    if np.dtype(features.dtype).kind in "biuc":
        raise _unsupported_dtype("Softplus", features, _FLOAT)
    return jax.nn.softplus(features)


@op("Conj")
def conj(x, name: str | None = None):
    """Returns the complex conjugate of `x` (`x` itself for real numbers)."""
    _refuse_bool("conj", x)
    return jnp.conj(x)


def _refuse_bool(what, x):
    if x.dtype == np.bool_:
        raise TypeError(
            f"Expected numeric or variant tensor, got dtype tf.bool: `{what}` of a "
            "bool tensor. Cast it first, e.g. `jaxtape.cast(x, jaxtape.float32)`."
        )


@op("Real")
def real(input, name: str | None = None):  # noqa: A002 - TF's argument name
    """Returns the real part of a complex tensor (`input` itself for real ones)."""
    _refuse_bool("real", input)
    return jnp.real(input)


@op("Imag")
def imag(input, name: str | None = None):  # noqa: A002
    """Returns the imaginary part of a complex tensor."""
    return jnp.imag(input)


@op("Complex", same_dtype=True)
def _complex(real, imag):
    dtype = getattr(real, "dtype", None)
    dtype = imag.dtype if dtype is None else dtype
    if dtype not in (np.float32, np.float64):
        raise _complex_parts_error(dtype, dtype)
    try:
        return lax.complex(real, imag)
    except (TypeError, ValueError) as e:
        raise _shape_error("Complex", real, imag, e) from None


def complex(real: TensorLike, imag: TensorLike, name: str | None = None) -> Tensor:  # noqa: A001
    """Builds a complex tensor from float32 (or float64) real and imaginary parts.

    Each part converts on its own (a Python float is float32), as TF; parts of
    two dtypes, or of another dtype, raise TF's `TypeError`.
    """
    kinds = [_PY_DTYPES.get(type(v)) or getattr(v, "dtype", None) for v in (real, imag)]
    if all(k is not None for k in kinds):
        a, b = (np.dtype(dtypes.np_dtype(k)) for k in kinds)
        if a != b:
            raise _complex_parts_error(a, b)
    return _complex(real, imag)


def _complex_parts_error(a, b):
    return TypeError(
        f"The `real` and `imag` components have incorrect types: "
        f"{np.dtype(a).name} {np.dtype(b).name}. They must be consistent, and one "
        "of [tf.float32, tf.float64]. Cast both with `jaxtape.cast` first."
    )


# -- reductions ------------------------------------------------------------------
@op("Sum")
def reduce_sum(
    input_tensor,
    axis: AxisLike | None = None,
    keepdims: bool = False,
    name: str | None = None,
):
    """Computes the sum of elements across dimensions of a tensor.

    Args:
      input_tensor: The tensor to reduce. Should have numeric type.
      axis: Dimensions to reduce. `None` reduces all dimensions.
      keepdims: If true, keep reduced dimensions with length 1.
      name: Accepted for TensorFlow compatibility; ignored.

    >>> jaxtape.reduce_sum(jaxtape.constant([[1., 2.], [3., 4.]]), axis=0)
    <jaxtape.Tensor: shape=(2,), dtype=float32, numpy=array([4., 6.], dtype=float32)>
    """
    x = input_tensor
    axis = _reduction_axes(x, axis, "Sum")
    if x.dtype == np.bool_:
        raise _unsupported_dtype("Sum", x, _NUMERIC)
    return jnp.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


@op("Mean")
def reduce_mean(
    input_tensor,
    axis: AxisLike | None = None,
    keepdims: bool = False,
    name: str | None = None,
):
    """The mean across dimensions.

    Integer inputs give an integer mean rounded toward zero, as in TF
    (`reduce_mean([-1, -2])` is -1), and 0 for an empty reduction. As TF,
    integers up to 32 bits are summed in 64 bits (the mean of two uint8 200s
    is 200); int64 and uint64 sums wrap around.
    """
    x = input_tensor
    axis = _reduction_axes(x, axis, "Mean")
    kind = np.dtype(x.dtype).kind
    if kind in "iu":
        acc = x.dtype
        if np.dtype(acc).itemsize < 8:
            acc = np.int64 if kind == "i" else np.uint64
        s = jnp.sum(x, axis=axis, keepdims=keepdims, dtype=acc)
        n = np.size(x) // max(np.size(s), 1)
        if n == 0:
            return jnp.zeros(s.shape, x.dtype)
        return lax.div(s, np.asarray(n).astype(s.dtype)).astype(x.dtype)  # truncates
    if kind == "b":
        raise _unsupported_dtype("Mean", x, _NUMERIC)
    return jnp.mean(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


@op("Max")
def reduce_max(
    input_tensor,
    axis: AxisLike | None = None,
    keepdims: bool = False,
    name: str | None = None,
):
    """Computes the maximum across dimensions (gradient split among ties, as TF).

    An empty reduction gives the dtype's lowest value (-inf for floats), as TF.
    """
    x = input_tensor
    axis = _reduction_axes(x, axis, "Max")
    if np.dtype(x.dtype).kind in "bc":
        raise _unsupported_dtype("Max", x, _REAL)
    if np.size(x) == 0:
        return jnp.max(x, axis=axis, keepdims=keepdims, initial=_extreme(x, -1))
    return jnp.max(x, axis=axis, keepdims=keepdims)


def _extreme(x, sign):
    """The identity of max (`sign=-1`: the lowest value) or min (+1) for `x`."""
    dtype = np.dtype(x.dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if sign < 0 else info.max
    return sign * np.inf


@op("Min")
def reduce_min(
    input_tensor,
    axis: AxisLike | None = None,
    keepdims: bool = False,
    name: str | None = None,
):
    """Computes the minimum across dimensions.

    An empty reduction gives the dtype's highest value (inf for floats), as TF.
    """
    x = input_tensor
    axis = _reduction_axes(x, axis, "Min")
    if np.dtype(x.dtype).kind in "bc":
        raise _unsupported_dtype("Min", x, _REAL)
    if np.size(x) == 0:
        return jnp.min(x, axis=axis, keepdims=keepdims, initial=_extreme(x, 1))
    return jnp.min(x, axis=axis, keepdims=keepdims)


@op("Prod")
def reduce_prod(
    input_tensor,
    axis: AxisLike | None = None,
    keepdims: bool = False,
    name: str | None = None,
):
    """Computes the product across dimensions."""
    x = input_tensor
    axis = _reduction_axes(x, axis, "Prod")
    if x.dtype == np.bool_:
        raise _unsupported_dtype("Prod", x, _NUMERIC)
    return jnp.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


@op("ReduceLogSumExp", inputs=("input_tensor",), jit=True)
def _reduce_logsumexp(input_tensor, axis, keepdims):
    x = input_tensor
    axis = _reduction_axes(x, axis, "ReduceLogSumExp")
    if np.dtype(x.dtype).kind in "biuc":
        raise _unsupported_dtype("ReduceLogSumExp", x, _FLOAT)
    return jax.nn.logsumexp(x, axis=axis, keepdims=keepdims)


def reduce_logsumexp(
    input_tensor: TensorLike,
    axis: AxisLike | None = None,
    keepdims: bool = False,
    name: str | None = None,
) -> Tensor:
    """Computes `log(sum(exp(x)))` across dimensions, stably."""
    return _reduce_logsumexp(input_tensor, _axis(axis), bool(keepdims))


@op("ReduceVariance")
def reduce_variance(
    input_tensor,
    axis: AxisLike | None = None,
    keepdims: bool = False,
    name: str | None = None,
):
    """Computes the (population) variance across dimensions."""
    x = input_tensor
    axis = _reduction_axes(x, axis, "ReduceVariance")
    _check_real_or_complex(x, "ReduceVariance")
    return jnp.var(x, axis=axis, keepdims=keepdims)


def _check_real_or_complex(x, op_name):
    kind = np.dtype(x.dtype).kind
    if kind in "iu":
        raise TypeError(
            "Input must be either real or complex. Received integer type "
            f"{np.dtype(x.dtype).name}. Cast it first, e.g. `jaxtape.cast(x, "
            "jaxtape.float32)`."
        )
    if kind == "b":
        raise _unsupported_dtype(op_name, x, _INEXACT)


@op("ReduceStd")
def reduce_std(
    input_tensor,
    axis: AxisLike | None = None,
    keepdims: bool = False,
    name: str | None = None,
):
    """Computes the (population) standard deviation across dimensions."""
    x = input_tensor
    axis = _reduction_axes(x, axis, "ReduceStd")
    _check_real_or_complex(x, "ReduceStd")
    return jnp.std(x, axis=axis, keepdims=keepdims)


def _scan_axis(x, axis, op_name):
    axis = _axis(axis)
    nd = np.ndim(x)
    if type(axis) is not int or not -nd <= axis < nd:
        raise errors.invalid_argument(
            f"ScanOp: Expected scan axis in the range [{-nd}, {nd}), but got {axis}",
            op_name,
        )
    if x.dtype == np.bool_:
        raise _unsupported_dtype(op_name, x, _NUMERIC)
    return axis


@op("Cumsum")
def cumsum(
    x,
    axis: int = 0,
    exclusive: bool = False,
    reverse: bool = False,
    name: str | None = None,
):
    """Cumulative sum along `axis`, with TF's `exclusive` and `reverse` flags."""
    axis = _scan_axis(x, axis, "Cumsum")
    if reverse:
        x = jnp.flip(x, axis)
    if exclusive:  # shifted by one, a 0 first (not `cumsum - x`: inf - inf)
        x = _shift_in(x, axis, 0)
    out = jnp.cumsum(x, axis=axis, dtype=x.dtype)
    return jnp.flip(out, axis) if reverse else out


def _shift_in(x, axis, fill):
    """`x` shifted one step along `axis`, `fill` first and the last entry gone."""
    pad = [(0, 0)] * x.ndim
    pad[axis] = (1, 0)
    x = jnp.pad(x, pad, constant_values=fill)
    return lax.slice_in_dim(x, 0, x.shape[axis] - 1, axis=axis)


@op("Cumprod")
def cumprod(
    x,
    axis: int = 0,
    exclusive: bool = False,
    reverse: bool = False,
    name: str | None = None,
):
    """Cumulative product along `axis`."""
    axis = _scan_axis(x, axis, "Cumprod")
    if reverse:
        x = jnp.flip(x, axis)
    if exclusive:
        x = _shift_in(x, axis, 1)
    out = jnp.cumprod(x, axis=axis, dtype=x.dtype)
    return jnp.flip(out, axis) if reverse else out


@op("AddN", inputs="inputs", same_dtype=True)
def _add_n(inputs):
    _check("AddN", K_NUMBER, inputs[0])
    first = np.shape(inputs[0])
    for i, x in enumerate(inputs[1:], 1):
        if np.shape(x) != first:
            raise errors.invalid_argument(
                "Inputs to operation AddN of type AddN must have the same size and "
                f"shape.  Input 0: {list(first)} != input {i}: {list(np.shape(x))}. "
                "AddN does not broadcast; use `jaxtape.add` for that.",
                "AddN",
            )
    out = inputs[0]
    for x in inputs[1:]:
        out = out + x
    return out


def add_n(inputs: Sequence[TensorLike], name: str | None = None) -> Tensor:
    """Adds all input tensors element-wise (same dtype and shape, as TF's AddN)."""
    inputs = list(inputs)
    if not inputs:
        raise ValueError(
            "Inputs must be an iterable of at least one Tensor/IndexedSlices with "
            "the same dtype and shape. Received: inputs=[]"
        )
    return _add_n(inputs)


# -- products --------------------------------------------------------------------
K_MATMUL = kernels(f"{_FLOAT}, int32, int64, complex64, complex128")


def _check_matmul_dtype(op_name, a, unsigned_error=errors.NotFoundError):
    """TF's MatMul kernels: no int8/int16/bool (`InvalidArgumentError`), and
    unsigned ints are declared but have no CPU kernel (`NotFoundError`)."""
    dtype = np.dtype(a.dtype)
    if dtype in K_MATMUL.dtypes:
        return
    if dtype.kind == "u":
        raise unsigned_error(
            None,
            op_name,
            f"Could not find device for node: {op_name}[T={_tf_name(dtype)}]: "
            f"TensorFlow has no {dtype.name} {op_name} kernel. Cast to int32 or a "
            "float dtype first.",
        )
    raise _unsupported_dtype(op_name, dtype, K_MATMUL.text)


@op("MatMul", same_dtype=True, jit=True)
def matmul(
    a,
    b,
    transpose_a: bool = False,
    transpose_b: bool = False,
    adjoint_a: bool = False,
    adjoint_b: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    output_type: DTypeLike | None = None,
    name: str | None = None,
):
    """Multiplies matrix `a` by matrix `b` (batched over leading dimensions).

    Shape errors raise TF's `InvalidArgumentError`.
    """
    if a.ndim < 2 or b.ndim < 2:
        raise errors.invalid_argument(
            f"In[{0 if a.ndim < 2 else 1}] ndims must be >= 2: got shapes "
            f"{list(a.shape)} and {list(b.shape)}. Use `jaxtape.tensordot`, or "
            "reshape a vector to a matrix (`jaxtape.expand_dims(v, 0)`).",
            "MatMul",
        )
    _check_matmul_dtype("MatMul", a)
    if transpose_a or adjoint_a:
        a = jnp.swapaxes(a, -1, -2)
        a = jnp.conj(a) if adjoint_a else a
    if transpose_b or adjoint_b:
        b = jnp.swapaxes(b, -1, -2)
        b = jnp.conj(b) if adjoint_b else b
    if a.shape[-1] != b.shape[-2]:
        raise errors.invalid_argument(
            f"Matrix size-incompatible: In[0]: {list(a.shape)}, In[1]: {list(b.shape)}."
            " The inner dimensions must agree (transpose_a/transpose_b may help).",
            "MatMul",
        )
    try:
        return jnp.matmul(a, b)
    except (TypeError, ValueError):
        raise errors.invalid_argument(
            "In[0] and In[1] must have compatible batch dimensions: "
            f"{list(a.shape)} vs. {list(b.shape)}. Leading dimensions broadcast "
            "when equal or 1.",
            "BatchMatMulV2",
        ) from None


@op("TensorDot", inputs=("a", "b"), same_dtype=True)
def tensordot(a, b, axes: int | Sequence[AxisLike], name: str | None = None):
    """Tensor contraction of `a` and `b` over `axes` (an int or a pair of lists)."""
    pairs: int | tuple  # (each of the pair as an int or a tuple of ints)
    if isinstance(axes, int):
        pairs = axes
    else:
        pairs = tuple(_axis(ax) if not isinstance(ax, int) else ax for ax in axes)
    _check_matmul_dtype("MatMul", a)
    try:
        return jnp.tensordot(a, b, axes=pairs)
    except TypeError:
        raise errors.invalid_argument(
            f"Matrix size-incompatible: tensordot of shapes {list(a.shape)} and "
            f"{list(b.shape)} over axes {pairs}: the contracted dimensions must have "
            "the same sizes.",
            "MatMul",
        ) from None


@op("Einsum", inputs="inputs", same_dtype=True)
def _einsum(inputs, equation):
    if inputs and np.dtype(inputs[0].dtype) not in K_MATMUL.dtypes:
        dtype = np.dtype(inputs[0].dtype)
        raise errors.NotFoundError(
            None,
            "Einsum",
            f"Could not find device for node: Einsum[T={_tf_name(dtype)}]: "
            f"TensorFlow has no {dtype.name} einsum kernel. Cast to int32 or a "
            "float dtype first.",
        )
    try:
        return jnp.einsum(equation, *inputs)
    except ValueError as e:
        shapes = ", ".join(str(list(np.shape(x))) for x in inputs)
        raise errors.invalid_argument(
            f"einsum {equation!r} does not fit the input shapes {shapes}: {e}",
            "Einsum",
        ) from None


def einsum(equation: str, *inputs: TensorLike, **kwargs: Any) -> Tensor:
    """Tensor contraction over specified indices (TF's `einsum(equation, *inputs)`)."""
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"einsum got unexpected keyword arguments {sorted(kwargs)}.")
    return _einsum(inputs, equation)


@op("Cross", same_dtype=True)
def cross(a, b, name: str | None = None):
    """Pairwise cross product of vectors in the last dimension."""
    return jnp.cross(a, b)


# -- clipping and norms -----------------------------------------------------------
@op("ClipByValue", same_dtype=True, jit=True)
def clip_by_value(t, clip_value_min, clip_value_max, name: str | None = None):
    """Clips `t` to `[clip_value_min, clip_value_max]` (TF's order: the minimum
    with `clip_value_max` first, so a min above the max gives the min)."""
    _check("Maximum", K_REAL, t, clip_value_min)
    try:
        return kinks.clip(t, clip_value_min, clip_value_max)
    except (TypeError, ValueError):
        raise errors.invalid_argument(
            f"Incompatible shapes: {list(np.shape(t))} vs. "
            f"{list(np.shape(clip_value_min))} vs. {list(np.shape(clip_value_max))}: "
            "the clip values must broadcast to the shape of `t`.",
            "ClipByValue",
        ) from None


@op("ClipByNorm", inputs=("t", "clip_norm"), jit=True)
def _clip_by_norm(t, clip_norm, axes):
    _check("ClipByNorm", K_FLOAT, t)
    l2sum = jnp.sum(t * t, axis=axes, keepdims=True)
    pred = l2sum > 0
    l2sum_safe = jnp.where(pred, l2sum, jnp.ones_like(l2sum))
    l2norm = jnp.where(pred, jnp.sqrt(l2sum_safe), l2sum)
    clip = jnp.maximum(jnp.asarray(clip_norm, t.dtype), 0)  # negative: zero, as TF
    return t * clip / kinks.maximum(l2norm, clip)


def clip_by_norm(
    t: TensorLike,
    clip_norm: TensorLike,
    axes: AxisLike | None = None,
    name: str | None = None,
) -> Tensor | IndexedSlices:
    """Rescales `t` so that its L2 norm (over `axes`) is at most `clip_norm`.

    A negative `clip_norm` counts as 0, as in TF. An `IndexedSlices` is
    clipped by the norm of its values (repeated indices counted apart, as TF),
    and stays an `IndexedSlices`.
    """
    slices = _indexed_slices_type()
    if isinstance(t, slices):
        values = _clip_by_norm(t.values, clip_norm, _axis(axes))
        return slices._from_parts(values, t.indices, t.dense_shape, t._static)
    return _clip_by_norm(t, clip_norm, _axis(axes))


def _indexed_slices_type() -> type[IndexedSlices]:
    # cycle: math_ops -> misc_ops -> math_extra_ops -> math_ops
    from jaxtape._src.ops import misc_ops

    return misc_ops.IndexedSlices


def _values_of_slices(t_list) -> list:
    """`t_list` with each `IndexedSlices` replaced by its values (TF's norms)."""
    slices = _indexed_slices_type()
    return [t.values if isinstance(t, slices) else t for t in t_list]


@op("GlobalNorm", inputs="t_list")
def _global_norm(t_list):
    return _sum_of_squares_root(t_list)


def _sum_of_squares_root(t_list):
    """TF's `global_norm`: sqrt of the sum of squares, all of one float dtype."""
    first = np.dtype(t_list[0].dtype)
    for t in t_list:
        _check("L2Loss", K_FLOAT, t)
        if np.dtype(t.dtype) != first:
            raise errors.invalid_argument(
                f"cannot compute Pack as input #1(zero-based) was expected to be a "
                f"{_tf_name(first)} tensor but is a {_tf_name(t.dtype)} tensor: the "
                "tensors of a global norm must share one dtype. Cast them first.",
                "Pack",
            )
    return jnp.sqrt(sum(jnp.sum(jnp.square(t)) for t in t_list))


def global_norm(t_list: Sequence[TensorLike | None], name: str | None = None) -> Tensor:
    """Returns `sqrt(sum(||t||^2 for t in t_list))`; None entries are ignored.

    An `IndexedSlices` counts its values (repeated indices apart), as TF.
    """
    return _global_norm(_values_of_slices([t for t in t_list if t is not None]))


@op("ClipByGlobalNorm", inputs="t_list")
def _clip_by_global_norm(t_list, clip_norm, norm_given):
    if norm_given:  # the last entry is the caller's `use_norm`
        *t_list, norm = t_list
    else:
        norm = _sum_of_squares_root(t_list)
    clip = jnp.asarray(clip_norm, norm.dtype)
    # TF's rule: a non-finite norm makes the scale NaN (`+ (norm - norm)`).
    scale = clip * kinks.minimum(1.0 / norm, 1.0 / clip) + (norm - norm)
    return (tuple(t * scale.astype(t.dtype) for t in t_list), norm)


def clip_by_global_norm(
    t_list: Sequence[TensorLike | None],
    clip_norm: SupportsFloat,
    use_norm: TensorLike | None = None,
    name: str | None = None,
) -> tuple[list[Tensor | IndexedSlices | None], Tensor]:
    """Scales a list of tensors so that their global norm is at most `clip_norm`.

    Returns `(list_clipped, global_norm)` as TF does; None entries stay None.
    With `use_norm`, that value is the global norm (neither computed nor
    differentiated through the tensors). A non-finite norm gives NaNs, as TF.
    An `IndexedSlices` counts its values in the norm and comes back an
    `IndexedSlices` of scaled values, as in TF.
    """
    present = [i for i, t in enumerate(t_list) if t is not None]
    if not present and use_norm is None:  # TF: the norm of nothing is 0
        return [None] * len(t_list), _global_norm_of_nothing()
    slices = _indexed_slices_type()
    given = _values_of_slices([t_list[i] for i in present])
    if use_norm is not None:
        given.append(use_norm)
    clipped, norm = _clip_by_global_norm(given, float(clip_norm), use_norm is not None)
    out: list[Tensor | IndexedSlices | None] = [None] * len(t_list)
    for i, c in zip(present, clipped):
        t = t_list[i]
        if isinstance(t, slices):
            c = slices._from_parts(c, t.indices, t.dense_shape, t._static)
        out[i] = c
    return out, norm


def _global_norm_of_nothing():
    from jaxtape._src.core.tensor import Tensor

    return Tensor(jnp.zeros((), np.float32))


_VECTOR_ORDS = ("euclidean", 1, 2, np.inf)
_MATRIX_ORDS = ("euclidean", "fro", 1, 2, np.inf)


def _ord_is(ord, *values):  # noqa: A002
    """`ord in values`, with strings and numbers compared apart (TF's `in`)."""
    return any(
        type(ord) is type(v)
        and ord == v
        or (not isinstance(ord, str) and not isinstance(v, str) and ord == v)
        for v in values
    )


@op("Norm", inputs=("tensor",), jit=True)
def _norm(
    tensor,
    ord: str | float,  # noqa: A002
    axis: tuple[int, ...] | None,
    matrix: tuple[int, int] | None,
    keepdims: bool,
):
    # `axis`: None (all elements, one vector) or a tuple (one vector axis, or
    # the two axes of a matrix norm, which `matrix` repeats; None: a vector norm).
    if axis is not None:
        _reduction_axes(tensor, axis, "Norm")
    x = tensor
    if _ord_is(ord, "fro", "euclidean", 2):
        if matrix is not None and _ord_is(ord, 2):
            out = _matrix_2_norm(x, matrix)
        else:
            if x.dtype == np.bool_:
                raise TypeError(
                    "Expected numeric or variant tensor, got dtype tf.bool: the norm "
                    "of a bool tensor. Cast it first, e.g. `jaxtape.cast(x, "
                    "jaxtape.float32)`."
                )
            _check("Sqrt", K_INEXACT, x)
            out = jnp.sqrt(jnp.sum(x * jnp.conj(x), axis=axis, keepdims=True))
    else:
        if np.dtype(x.dtype).kind in "bu":
            raise _unsupported_dtype("Abs", x, K_SIGNED.text)
        a = kinks.abs(x)
        if _ord_is(ord, 1):
            out = jnp.sum(a, axis=None if axis is None else axis[0], keepdims=True)
            if matrix is not None:
                out = jnp.max(out, axis=matrix[1], keepdims=True)
        elif _ord_is(ord, np.inf):
            if matrix is not None:
                a = jnp.sum(a, axis=matrix[1], keepdims=True)
            out = jnp.max(a, axis=None if axis is None else axis[0], keepdims=True)
        else:
            if np.dtype(a.dtype).kind in "iu":
                raise TypeError(
                    f"Cannot convert {ord!r} to EagerTensor of dtype "
                    f"{_tf_name(a.dtype)}: a p-norm of integers. Cast to a float "
                    "dtype first."
                )
            p = np.asarray(ord, a.dtype)
            out = jnp.sum(a**p, axis=axis, keepdims=True) ** (1 / p)
    if keepdims:
        return out
    if axis is None:
        return jnp.reshape(out, ())
    return jnp.squeeze(out, axis)


def _matrix_2_norm(x, axis):
    """The largest singular value over the two `axis` dimensions (kept as 1s)."""
    nd = x.ndim
    a, b = (d % nd for d in axis)
    moved = jnp.moveaxis(x, (a, b), (-2, -1))
    top = jnp.max(jnp.linalg.svd(moved, compute_uv=False), axis=-1)
    return jnp.expand_dims(top, (a, b) if a < b else (b, a))


def norm(
    tensor: TensorLike,
    ord: str | float = "euclidean",
    axis: AxisLike | None = None,
    keepdims: bool | None = None,
    name: str | None = None,
) -> Tensor:  # noqa: A002
    """Vector or matrix norm (TF's `norm`: euclidean by default over all elements).

    As TF: `axis=None` treats the tensor as one flat vector for every `ord`
    (`ord=1` is the sum of all magnitudes, not a matrix norm); a 2-element
    `axis` asks for a matrix norm ('euclidean', 'fro', 1, 2 or inf); the
    euclidean norm of a complex tensor keeps its complex dtype; an `ord` or
    `axis` TF does not support raises TF's `ValueError`.
    """
    axes: tuple | None  # None, one axis, or a matrix norm's two
    if isinstance(axis, (tuple, list)) and len(axis) == 2:
        axes = tuple(axis)
        if not all(type(a) is int for a in axes) or axes[0] == axes[1]:
            raise ValueError(
                "'axis' must be None, an integer, or a tuple of 2 unique integers, "
                f"got {axes}"
            )
        if not _ord_is(ord, *_MATRIX_ORDS):
            raise ValueError(
                f"'ord' must be a supported matrix norm in {list(_MATRIX_ORDS)}, "
                f"got {ord}"
            )
    else:
        if not (axis is None or type(axis) is int):
            raise ValueError(
                "'axis' must be None, an integer, or a tuple of 2 unique integers, "
                f"got {axis}"
            )
        if (isinstance(ord, str) or not np.isreal(ord) or ord <= 0) and not _ord_is(
            ord, *_VECTOR_ORDS
        ):
            raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
        axes = None if axis is None else (axis,)
    matrix = axes if axes is not None and len(axes) == 2 else None
    return _norm(tensor, ord, axes, matrix, bool(keepdims))


@op("L2Normalize", inputs=("x",), jit=True)
def _l2_normalize(x, axis, epsilon):
    kind = np.dtype(x.dtype).kind
    if kind in "iu":
        raise TypeError(
            f"Cannot convert {epsilon!r} to EagerTensor of dtype "
            f"{_tf_name(x.dtype)}: l2_normalize needs a float input; cast it first, "
            "e.g. `jaxtape.cast(x, jaxtape.float32)`."
        )
    _check("Square", K_INEXACT, x)
    if kind == "c":  # |x|^2 from the real and imaginary parts, as TF
        re, im = jnp.real(x), jnp.imag(x)
        sq = jnp.sum(re * re + im * im, axis=axis, keepdims=True)
        inv = lax.rsqrt(kinks.maximum(sq, epsilon))
        return lax.complex(re * inv, im * inv)
    sq = jnp.sum(jnp.square(x), axis=axis, keepdims=True)
    return x * lax.rsqrt(kinks.maximum(sq, epsilon))


def l2_normalize(
    x: TensorLike,
    axis: AxisLike | None = None,
    epsilon: float = 1e-12,
    name: str | None = None,
    dim: AxisLike | None = None,
) -> Tensor:
    """Normalizes `x` along `axis` by its L2 norm (`|x|` for complex entries)."""
    return _l2_normalize(x, _axis(axis if dim is None else dim), float(epsilon))


# -- casting ----------------------------------------------------------------------
@op("Cast", inputs=("x",))
def _cast(x, dtype):
    if jnp.iscomplexobj(x) and not jnp.issubdtype(dtype, jnp.complexfloating):
        x = jnp.real(x)
    return x.astype(dtype) if hasattr(x, "astype") else jnp.asarray(x, dtype)


def cast(x: TensorLike, dtype: DTypeLike, name: str | None = None) -> Tensor:
    """Casts `x` to `dtype`; casts to or from integers carry no gradient, as in TF.

    A complex value cast to a real dtype keeps its real part.

    Differences from TensorFlow:
      A float outside the integer dtype's range (NaN, +-inf, 3e9 to int32)
      saturates, as XLA converts (NaN gives 0, inf the largest integer, 300.0
      to uint8 gives 255). TF's CPU kernel leaves this to C++, where it is
      undefined: on x86 it gives the lowest integer (INT_MIN for int32), and
      for 8- and 16-bit integers the low bits of that 32-bit conversion
      (300.0 to uint8 gives 44). Use `jaxtape.saturate_cast` for a defined
      result in both.
    """
    if dtype is None:
        raise TypeError(
            "Cannot convert the argument `type_value`: None to a jaxtape DType. "
            "Pass the dtype to cast to, e.g. `jaxtape.float32`."
        )
    return _cast(x, dtypes.np_dtype(dtype))


def saturate_cast(
    value: TensorLike, dtype: DTypeLike, name: str | None = None
) -> Tensor:
    """Casts `value` to `dtype`, clipping first to the range both dtypes hold.

    TF's algorithm: the limits are the narrower of the two dtypes' ranges,
    nudged toward 0 where the input dtype cannot represent the output's
    limit (float32 to int32 clips to 2147483520, the largest float32 below
    2**31); a complex value cast to a real dtype keeps its real part.
    """
    from jaxtape._src.ops.creation_ops import convert_to_tensor

    value = convert_to_tensor(value)
    out = dtypes.np_dtype(dtype)
    src = np.dtype(value.dtype.as_numpy_dtype)
    if src.kind == "c":
        if out.kind == "c":
            if _range(src)[1] > _range(out)[1]:  # complex128 -> complex64
                lo, hi = (src.type(v) for v in _range(out))
                re = clip_by_value(real(value), lo.real, hi.real)
                im = clip_by_value(imag(value), lo.real, hi.real)
                value = _complex(re, im)
            return cast(value, out)
        value = real(value)
        src = np.dtype(value.dtype.as_numpy_dtype)
    out_real = np.dtype(np.finfo(out).dtype) if out.kind == "c" else out
    lo, hi = _saturation_limits(src, out_real)
    return cast(clip_by_value(value, lo, hi), out)


def _range(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return False, True
    info = np.iinfo(dtype) if dtype.kind in "iu" else np.finfo(dtype)
    return info.min, info.max


def _saturation_limits(src, out):
    """TF's clamp limits (in `src`'s dtype) for a saturating cast to `out`."""
    (src_min, src_max), (out_min, out_max) = _range(src), _range(out)
    try:
        promoted = np.promote_types(src, out)
    except TypeError:  # bfloat16
        promoted = np.dtype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        lo = src.type(np.maximum(src_min, out_min))
        if np.array([lo, out_min], promoted)[0] < np.array([lo, out_min], promoted)[1]:
            lo = np.nextafter(lo, src.type(0), dtype=src)
        hi = src.type(np.minimum(float(src_max), float(out_max)))
        if np.array([hi, out_max], promoted)[0] > np.array([hi, out_max], promoted)[1]:
            hi = np.nextafter(hi, src.type(0), dtype=src)
    return lo, hi


@op("Identity")
def identity(input, name: str | None = None):  # noqa: A002
    """Returns a tensor with the same value as `input` (recorded on tapes)."""
    return jnp.asarray(input)
