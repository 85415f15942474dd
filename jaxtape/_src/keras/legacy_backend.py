"""`tf.keras.backend`: Keras 3's legacy (Keras 1/2) backend functions. Layer L5.

Keras 3.15 keeps these in `keras/src/legacy/backend.py`, each a thin wrapper
over a TensorFlow op; here each is the same wrapper over jaxtape's TF ops, so
arguments, defaults, `data_format` handling and dtypes are Keras's. The
convolution, pooling, recurrence, CTC and loss functions are in
`legacy_backend_nn`.

Differences from TensorFlow: the `random_*` functions, `truncated_normal` and
`dropout` draw from jaxtape's generators (same distributions and dtypes,
different numbers); `softmax` attaches no `_keras_logits` (Keras 2's
loss shortcut, which Keras 3's losses no longer read).
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from jaxtape._src.core import config, dtypes
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.function import control_flow
from jaxtape._src.keras.keras_utils import is_keras_tensor as is_keras_tensor
from jaxtape._src.keras.layers import base as layers_base
from jaxtape._src.keras.ops import dtypes as keras_dtypes
from jaxtape._src.ops import array_ops, creation_ops, math_ops, nondiff
from jaxtape._src.state import random_ops
from jaxtape._src.state.module import name_scope as _tf_name_scope
from jaxtape._src.state.variable import Variable
from jaxtape._src.structured import sparse, sparse_ops
from jaxtape._src.structured.ragged import RaggedTensor

result_type = keras_dtypes.result_type
standardize_dtype = keras_dtypes.standardize_dtype

# -- configuration and dtypes ------------------------------------------------------


def backend():
    """The backend's name; tf.keras reports `"tensorflow"`, and so does jaxtape
    (the API it runs is TensorFlow's)."""
    return "tensorflow"


def get_uid(prefix=""):
    """Keras's per-prefix counter (1, 2, ...), shared with automatic layer names
    and reset by `clear_session`."""
    layers_base._uids[prefix] += 1
    return layers_base._uids[prefix]


def is_float_dtype(dtype):
    """Whether `dtype` (any spelling) is a floating dtype, as Keras's."""
    return standardize_dtype(dtype).startswith(("float", "bfloat"))


def is_int_dtype(dtype):
    """Whether `dtype` (any spelling) is a signed or unsigned integer dtype."""
    return standardize_dtype(dtype).startswith(("int", "uint"))


def dtype(x):
    """The dtype name of `x` (`"float32"`)."""
    return x.dtype.base_dtype.name


def cast(x, dtype):
    return math_ops.cast(x, dtype)


def cast_to_floatx(x):
    """A Tensor/Variable cast to `floatx()`; anything else becomes a NumPy array."""
    if isinstance(x, (Tensor, Variable, sparse.SparseTensor)):
        return math_ops.cast(x, dtype=config.floatx())  # pyright: ignore[reportArgumentType]
    return np.asarray(x, dtype=config.floatx())


def int_shape(x):
    """The static shape of `x` as a tuple of ints (None for unknown dims)."""
    try:
        shape = x.shape
        if not isinstance(shape, tuple):
            shape = tuple(shape.as_list())
        return shape
    except ValueError:
        return None


def ndim(x):
    return x.shape.rank


def count_params(x):
    return math.prod(x.shape.as_list())


def is_sparse(tensor):
    return isinstance(tensor, sparse.SparseTensor)


def to_dense(tensor):
    if is_sparse(tensor):
        return sparse.to_dense(tensor)
    return tensor


# -- variables -------------------------------------------------------------------


def variable(value, dtype=None, name=None, constraint=None):
    """A `Variable` of `dtype` (default `floatx()`); a SciPy sparse matrix gives
    a `SparseTensor`, as Keras's."""
    if dtype is None:
        dtype = config.floatx()
    if hasattr(value, "tocoo"):
        coo = value.tocoo()
        indices = np.stack([coo.row, coo.col], axis=1).astype(np.int64)
        return sparse.SparseTensor(indices, coo.data, coo.shape)
    return Variable(
        value, dtype=dtypes.as_dtype(dtype), name=name, constraint=constraint
    )


def _variable_if_static(v, dtype, name):
    if builtins.all(v.shape.as_list()):
        return variable(v, dtype=dtype, name=name)
    return v


def zeros(shape, dtype=None, name=None):
    """A zero-filled Variable (a Tensor when a dimension is 0), as Keras's."""
    dtype = config.floatx() if dtype is None else dtype
    v = creation_ops.zeros(shape=shape, dtype=dtypes.as_dtype(dtype), name=name)
    return _variable_if_static(v, dtype, name)


def ones(shape, dtype=None, name=None):
    """A one-filled Variable (a Tensor when a dimension is 0), as Keras's."""
    dtype = config.floatx() if dtype is None else dtype
    v = creation_ops.ones(shape=shape, dtype=dtypes.as_dtype(dtype), name=name)
    return _variable_if_static(v, dtype, name)


def eye(size, dtype=None, name=None):
    """An identity-matrix Variable."""
    dtype = config.floatx() if dtype is None else dtype
    return variable(creation_ops.eye(size, dtype=dtypes.as_dtype(dtype)), dtype, name)


def zeros_like(x, dtype=None, name=None):
    return nondiff.zeros_like(x, dtype=dtype, name=name)


def ones_like(x, dtype=None, name=None):
    return nondiff.ones_like(x, dtype=dtype, name=name)


def constant(value, dtype=None, shape=None, name=None):
    """`tf.constant` with Keras's default dtype `floatx()`."""
    if dtype is None:
        dtype = config.floatx()
    return creation_ops.constant(value, dtype=dtype, shape=shape, name=name)


def get_value(x):
    """`x` as a NumPy array (anything that is not a tensor is returned as is)."""
    if not isinstance(x, (Tensor, Variable)):
        return x
    return x.numpy()


def eval(x):
    return get_value(to_dense(x))


def batch_get_value(tensors):
    return [x.numpy() for x in tensors]


def set_value(x, value):
    x.assign(np.asarray(value, dtype=x.dtype.name))


def batch_set_value(tuples):
    for x, value in tuples:
        set_value(x, value)


def update(x, new_x):
    return x.assign(new_x)


def update_add(x, increment):
    return x.assign_add(increment)


def update_sub(x, decrement):
    return x.assign_sub(decrement)


def moving_average_update(x, value, momentum):
    """`x -= (x - value) * (1 - momentum)` (in `x`'s dtype), returning the update."""
    momentum = math_ops.cast(momentum, x.dtype)
    value = math_ops.cast(value, x.dtype)
    return x.assign_sub((x - value) * (1 - momentum))


def name_scope(name):
    return _tf_name_scope(name)


def gradients(loss, variables):
    """TF1's symbolic gradients: like `tf.keras.backend.gradients` in TF 2, this
    raises in eager mode; use `jaxtape.GradientTape`."""
    del loss, variables
    raise RuntimeError(
        "tf.gradients is not supported when eager execution is enabled. "
        "Use tf.GradientTape instead."
    )


# -- elementwise and reductions ----------------------------------------------------


def abs(x):
    return math_ops.abs(x)


def exp(x):
    return math_ops.exp(x)


def log(x):
    return math_ops.log(x)


def cos(x):
    return math_ops.cos(x)


def sin(x):
    return math_ops.sin(x)


def tanh(x):
    return math_ops.tanh(x)


def sign(x):
    return math_ops.sign(x)


def square(x):
    return math_ops.square(x)


def round(x):
    return nondiff.round(x)


def pow(x, a):
    return math_ops.pow(x, a)


def sqrt(x):
    """`sqrt(max(x, 0))`: negative inputs give 0, as Keras's."""
    zero = creation_ops.convert_to_tensor(0.0, x.dtype)
    return math_ops.sqrt(math_ops.maximum(x, zero))


def maximum(x, y):
    return math_ops.maximum(x, y)


def minimum(x, y):
    return math_ops.minimum(x, y)


def equal(x, y):
    return nondiff.equal(x, y)


def not_equal(x, y):
    return nondiff.not_equal(x, y)


def greater(x, y):
    return nondiff.greater(x, y)


def greater_equal(x, y):
    return nondiff.greater_equal(x, y)


def less(x, y):
    return nondiff.less(x, y)


def less_equal(x, y):
    return nondiff.less_equal(x, y)


def clip(x, min_value, max_value):
    """`clip_by_value`; `max_value < min_value` clips at `min_value`, None is
    unbounded."""
    if isinstance(min_value, (int, float)) and isinstance(max_value, (int, float)):
        if max_value < min_value:
            max_value = min_value
    if min_value is None:
        min_value = -np.inf
    if max_value is None:
        max_value = np.inf
    return math_ops.clip_by_value(x, min_value, max_value)


def all(x, axis=None, keepdims=False):
    return nondiff.reduce_all(math_ops.cast(x, dtypes.bool), axis, keepdims)


def any(x, axis=None, keepdims=False):
    return nondiff.reduce_any(math_ops.cast(x, dtypes.bool), axis, keepdims)


def max(x, axis=None, keepdims=False):
    return math_ops.reduce_max(x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    return math_ops.reduce_min(x, axis, keepdims)


def sum(x, axis=None, keepdims=False):
    return math_ops.reduce_sum(x, axis, keepdims)


def prod(x, axis=None, keepdims=False):
    return math_ops.reduce_prod(x, axis, keepdims)


def _bool_to_floatx(x):
    if x.dtype.base_dtype == dtypes.bool:
        return math_ops.cast(x, config.floatx())
    return x


def mean(x, axis=None, keepdims=False):
    """`reduce_mean`; a bool `x` is cast to `floatx()` first."""
    return math_ops.reduce_mean(_bool_to_floatx(x), axis, keepdims)


def std(x, axis=None, keepdims=False):
    return math_ops.reduce_std(_bool_to_floatx(x), axis=axis, keepdims=keepdims)


def var(x, axis=None, keepdims=False):
    return math_ops.reduce_variance(_bool_to_floatx(x), axis=axis, keepdims=keepdims)


def cumsum(x, axis=0):
    return math_ops.cumsum(x, axis=axis)


def cumprod(x, axis=0):
    return math_ops.cumprod(x, axis=axis)


def argmax(x, axis=-1):
    return nondiff.argmax(x, axis)


def argmin(x, axis=-1):
    return nondiff.argmin(x, axis)


def l2_normalize(x, axis=None):
    return math_ops.l2_normalize(x, axis=axis)


def stop_gradient(variables):
    """`stop_gradient`; a list or tuple gives a lazy `map` of them, as Keras's."""
    if isinstance(variables, (list, tuple)):
        return builtins.map(nondiff.stop_gradient, variables)
    return nondiff.stop_gradient(variables)


# -- shapes and arrays -----------------------------------------------------------


def arange(start, stop=None, step=1, dtype="int32"):
    """`range` (a negative `start` with no `stop` is empty), cast to `dtype`."""
    if stop is None and start < 0:
        start = 0
    result = creation_ops.range(start, limit=stop, delta=step, name="arange")
    if dtype != "int32":
        result = math_ops.cast(result, dtype)
    return result


def reshape(x, shape):
    return array_ops.reshape(x, shape)


def flatten(x):
    return array_ops.reshape(x, [-1])


def batch_flatten(x):
    """Reshapes `x` to `(batch, -1)`."""
    return array_ops.reshape(x, [-1, math.prod(x.shape.as_list()[1:])])


def expand_dims(x, axis=-1):
    return array_ops.expand_dims(x, axis)


def squeeze(x, axis):
    return array_ops.squeeze(x, [axis])


def stack(x, axis=0):
    return array_ops.stack(x, axis=axis)


def transpose(x):
    return array_ops.transpose(x)


def permute_dimensions(x, pattern):
    return array_ops.transpose(x, perm=pattern)


def reverse(x, axes):
    if isinstance(axes, int):
        axes = [axes]
    return array_ops.reverse(x, axes)


def tile(x, n):
    if isinstance(n, int):
        n = [n]
    return array_ops.tile(x, n)


def repeat(x, n):
    """Repeats a 2-D `x` `n` times along a new axis 1: `(b, d) -> (b, n, d)`."""
    if ndim(x) != 2:
        raise ValueError(
            f"Expected input `x` to have rank 2. Received: rank(x)={ndim(x)}"
        )
    return array_ops.tile(array_ops.expand_dims(x, 1), [1, n, 1])


def repeat_elements(x, rep, axis):
    """Repeats each slice of `x` along `axis` `rep` times (`np.repeat`)."""
    splits = array_ops.split(x, num_or_size_splits=x.shape.as_list()[axis], axis=axis)
    return concatenate([s for s in splits for _ in range(rep)], axis)


def concatenate(tensors, axis=-1):
    """Concatenates along `axis`; all-sparse inputs give a SparseTensor."""
    if axis < 0:
        rank = ndim(tensors[0])
        axis = axis % rank if rank else 0
    if builtins.all(is_sparse(x) for x in tensors):
        return sparse_ops.concat(axis, tensors)
    if builtins.all(isinstance(x, RaggedTensor) for x in tensors):
        return array_ops.concat(tensors, axis)
    return array_ops.concat([to_dense(x) for x in tensors], axis)


def gather(reference, indices):
    return array_ops.gather(reference, indices)


def one_hot(indices, num_classes):
    return array_ops.one_hot(indices, depth=num_classes, axis=-1)


def shape(x):
    return nondiff.shape(x)


def switch(condition, then_expression, else_expression):
    """A scalar `condition` selects a branch (callables are called, as `cond`);
    a tensor `condition` selects elementwise, broadcast over trailing axes."""
    if condition.dtype != dtypes.bool:
        condition = math_ops.cast(condition, "bool")
    cond_ndim = ndim(condition)
    if not cond_ndim:
        then_fn = (
            then_expression if callable(then_expression) else lambda: then_expression
        )
        else_fn = (
            else_expression if callable(else_expression) else lambda: else_expression
        )
        return control_flow.cond(condition, then_fn, else_fn)
    if callable(then_expression):
        then_expression = then_expression()
    if callable(else_expression):
        else_expression = else_expression()
    expr_ndim = ndim(then_expression)
    if cond_ndim > expr_ndim:
        raise ValueError(
            "Rank of `condition` should be less than or"
            " equal to rank of `then_expression` and "
            "`else_expression`. ndim(condition)="
            f"{cond_ndim}, ndim(then_expression)={expr_ndim}"
        )
    if cond_ndim > 1:
        cond_shape = condition.shape.as_list() + [1] * (expr_ndim - cond_ndim)
        condition = array_ops.reshape(condition, cond_shape)
        expr_shape = then_expression.shape.as_list()  # pyright: ignore[reportAttributeAccessIssue]
        multiples = [e if e - c > 0 else 1 for e, c in zip(expr_shape, cond_shape)]
        condition = array_ops.tile(condition, multiples)
    return array_ops.where(condition, then_expression, else_expression)


def foldl(fn, elems, initializer=None, name=None):
    return control_flow.foldl(fn, elems, initializer=initializer, name=name)


def foldr(fn, elems, initializer=None, name=None):
    return control_flow.foldr(fn, elems, initializer=initializer, name=name)


def map_fn(fn, elems, name=None, dtype=None):
    return control_flow.map_fn(fn, elems, name=name, dtype=dtype)


# -- random ----------------------------------------------------------------------


def _seed(seed, high=10_000_000):
    return np.random.randint(high) if seed is None else seed


def _dtype(dtype):
    return dtypes.as_dtype(config.floatx() if dtype is None else dtype)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    dtype = _dtype(dtype)
    return random_ops.uniform(  # (its `minval: int` annotation is too narrow)
        shape,
        minval=minval,  # pyright: ignore[reportArgumentType]
        maxval=maxval,
        dtype=dtype,
        seed=_seed(seed),
    )


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    dtype = _dtype(dtype)
    return random_ops.normal(
        shape, mean=mean, stddev=stddev, dtype=dtype, seed=_seed(seed)
    )


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    dtype = _dtype(dtype)
    return random_ops.truncated_normal(
        shape, mean, stddev, dtype=dtype, seed=_seed(seed)
    )


def random_bernoulli(shape, p=0.0, dtype=None, seed=None):
    """1 where a uniform draw is `<= p`, else 0, in `dtype` (default floatx)."""
    dtype = _dtype(dtype)
    draw = random_ops.uniform(shape, dtype=dtype, seed=_seed(seed))
    return array_ops.where(
        draw <= p,
        creation_ops.ones(shape, dtype=dtype),
        creation_ops.zeros(shape, dtype=dtype),
    )


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    dtype = _dtype(dtype)
    value = random_ops.normal(
        shape, mean=mean, stddev=scale, dtype=dtype, seed=_seed(seed, 1_000_000_000)
    )
    return variable(value, dtype=dtype, name=name)


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    dtype = _dtype(dtype)
    value = random_ops.uniform(
        shape, minval=low, maxval=high, dtype=dtype, seed=_seed(seed, 1_000_000_000)
    )
    return variable(value, dtype=dtype, name=name)


def dropout(x, level, noise_shape=None, seed=None):
    return random_ops.dropout(x, rate=level, noise_shape=noise_shape, seed=_seed(seed))
