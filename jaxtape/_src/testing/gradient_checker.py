"""TF's `tf.test.compute_gradient`: theoretical and numeric Jacobians. Layer L4.

The theoretical Jacobian is built row by row from `GradientTape` gradients
with a one-hot output gradient (TF's `backprop.gradients_function`), the
numeric one column by column from central differences, exactly as TF's
`gradient_checker_v2` does, so the two pairs agree with TF's.
"""

from __future__ import annotations

import numpy as np

from jaxtape._src.autodiff.gradient_tape import GradientTape
from jaxtape._src.ops.creation_ops import convert_to_tensor

_DIFFERENTIABLE = (
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)


def compute_gradient(f, x, delta=None):
    """The theoretical and numeric Jacobians of `y = f(*x)` (TF's
    `tf.test.compute_gradient`).

    Args:
      f: A function of Tensors returning one Tensor.
      x: A list or tuple of values convertible to Tensors: `f`'s arguments.
      delta: The perturbation of the central differences (TF's 1/1024 by
        default).

    Returns:
      `(theoretical, numeric)`: two tuples with one 2-D NumPy array per
      argument, of shape `[y_size, x_size]` (complex values count twice: real
      and imaginary parts).

    >>> t, n = jaxtape.test.compute_gradient(lambda v: v * v, [3.0])
    >>> float(t[0][0, 0]), round(float(n[0][0, 0]), 2)
    (6.0, 6.0)
    """
    if not isinstance(x, (list, tuple)):
        raise ValueError(
            "`x` must be a list or tuple of values convertible to a Tensor "
            f"(arguments to `f`), not a {type(x)}"
        )
    delta = 1.0 / 1024 if delta is None else delta
    xs = [convert_to_tensor(v) for v in x]
    y = convert_to_tensor(f(*xs))
    pairs = [
        _compute_gradient(f, tuple(y.shape), y.dtype, xs, i, delta)
        for i in range(len(xs))
    ]
    return tuple(zip(*pairs))


def _check_dtype(dtype, what) -> None:
    if dtype.name not in _DIFFERENTIABLE:
        raise TypeError(
            f"Cannot compute gradient for unsupported type {dtype.name} of {what}"
        )


def _compute_gradient(f, y_shape, y_dtype, xs, param, delta):
    _check_dtype(xs[param].dtype, f"argument {param}")
    _check_dtype(y_dtype, "y")
    y_size = int(np.prod(y_shape, dtype=np.int64))
    return (
        _theoretical(f, y_shape, y_dtype, xs, param),
        _numeric(f, y_size, y_dtype, xs, param, delta),
    )


def _real_np(dtype) -> np.dtype:
    return np.dtype(dtype.real_dtype.as_numpy_dtype)


def _theoretical(f, y_shape, y_dtype, xs, param):
    x = xs[param]
    x_size = int(np.prod(x.shape, dtype=np.int64)) * (2 if x.dtype.is_complex else 1)
    y_size = int(np.prod(y_shape, dtype=np.int64)) * (2 if y_dtype.is_complex else 1)
    jacobian = np.zeros((y_size, x_size), dtype=_real_np(x.dtype))
    dy = np.zeros(y_shape, dtype=np.dtype(y_dtype.as_numpy_dtype))
    dy_flat = dy.ravel().view(_real_np(y_dtype))
    for row in range(y_size):
        dy_flat[row] = 1
        grad = _gradient(f, xs, param, dy)
        if grad is not None:
            jacobian[row, :] = np.asarray(grad).ravel().view(jacobian.dtype)
        dy_flat[row] = 0
    if y_size == 0:
        grad = _gradient(f, xs, param, dy)
        if grad is not None and np.any(grad):
            raise ValueError("Empty tensor with nonzero gradients")
    return jacobian


def _gradient(f, xs, param, dy):
    with GradientTape() as tape:
        tape.watch(xs[param])
        y = f(*xs)
    grad = tape.gradient(y, xs[param], output_gradients=convert_to_tensor(dy))
    return None if grad is None else np.asarray(grad)


def _numeric(f, y_size, y_dtype, xs, param, delta):
    x_dtype = xs[param].dtype
    x_real, y_real = _real_np(x_dtype), _real_np(y_dtype)
    values = [np.asarray(v).copy() for v in xs]  # (writable copies)
    x = values[param]
    x_size = x.size * (2 if x_dtype.is_complex else 1)
    y_size = y_size * (2 if y_dtype.is_complex else 1)
    scale = np.asarray(2 * delta, dtype=y_real)[()]
    jacobian = np.zeros((y_size, x_size), dtype=x_real)
    flat = x.reshape(-1).view(x_real)
    for col in range(x_size):
        original = flat[col]
        flat[col] += delta
        y_pos = _value(f, values)
        flat[col] = original
        flat[col] -= delta
        y_neg = _value(f, values)
        flat[col] = original
        jacobian[:, col] = ((y_pos - y_neg) / scale).ravel().view(y_real)
    return jacobian


def _value(f, values):
    return np.asarray(f(*[convert_to_tensor(v) for v in values]))
