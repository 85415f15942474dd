"""Keras 3's core ops (`keras.ops.cast`, `cond`, `while_loop`, `scatter`, ...).

Conversion follows Keras's TensorFlow backend (Python ints become int32,
floats `floatx()`); control flow reuses jaxtape's `cond`/`while_loop`/
`switch_case`, so it runs eagerly as Python and compiles inside
`jaxtape.function` as TF's does.

Layer L5 (keras); imports `core`, `ops`, `autodiff`, `function` and this package.
"""

from __future__ import annotations

import re

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtape._src.autodiff.custom_gradient import custom_gradient as _tf_custom_gradient
from jaxtape._src.autodiff.forward import ForwardAccumulator
from jaxtape._src.autodiff.gradient_tape import UnconnectedGradients
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.function import control_flow
from jaxtape._src.keras.ops import dtypes as kd
from jaxtape._src.keras.ops import numpy as knp
from jaxtape._src.keras.ops._base import body, dtype_arg, shape_arg, tensor
from jaxtape._src.ops import nest, nondiff

cast = knp.cast
convert_to_tensor = knp.convert_to_tensor
shape = knp.shape


def convert_to_numpy(x):
    """Keras 3's `keras.ops.convert_to_numpy`: a NumPy array of `x`."""
    return np.array(tensor(x))


def is_tensor(x):
    """Keras 3's `keras.ops.is_tensor`: whether `x` is a jaxtape Tensor or
    Variable (as `tf.is_tensor` on Keras's TensorFlow backend)."""
    return type(x) is Tensor or hasattr(x, "read_value")


def dtype(x):
    """Keras 3's `keras.ops.dtype`: the Keras dtype name of `x` (`"float32"`)."""
    d = kd.dtype_of(x)
    return kd.result_type(d) if d in (int, float) else d


def stop_gradient(variable):
    """Keras 3's `keras.ops.stop_gradient`: `variable` with no gradient."""
    return nondiff.stop_gradient(variable)


def custom_gradient(f):
    """Keras 3's `keras.ops.custom_gradient` (TF backend: `tf.custom_gradient`).

    `f(*args)` returns `(output, grad_fn)`; `grad_fn(*upstream)` (or
    `grad_fn(*args, upstream=...)` written for Keras's other backends, which
    is accepted too) returns the gradients of the inputs.
    """

    def wrapped(*args, **kwargs):
        out, grad_fn = f(*args, **kwargs)

        def grad(*upstream, variables=None):
            if variables:
                return grad_fn(*upstream, variables=variables)
            try:
                return grad_fn(*upstream)
            except TypeError:
                return grad_fn(*args, upstream=upstream[0])

        return out, grad

    return _tf_custom_gradient(wrapped)


def _limits(d: str) -> tuple:
    if d == "bool":
        return 0, 1
    np_d = np.dtype(kd.jnp_dtype(d))
    info = np.iinfo(np_d) if np_d.kind in "iu" else jnp.finfo(np_d)
    return info.min, info.max


def saturate_cast(x, dtype):
    """Keras 3's `keras.ops.saturate_cast`: `cast`, clipping to `dtype`'s range
    first (limits nudged into the input dtype, as Keras's)."""
    d = dtype_arg(dtype)
    x = tensor(x)
    src = kd.dtype_of(x)
    in_dt = kd.jnp_dtype(src)
    (in_min, in_max), (out_min, out_max) = _limits(src), _limits(d)
    lo = np.asarray(np.maximum(in_min, out_min)).astype(in_dt)
    if lo < out_min:
        lo = np.nextafter(lo, np.asarray(0, in_dt))
    hi = np.asarray(np.minimum(in_max, out_max)).astype(in_dt)
    if hi > out_max:
        hi = np.nextafter(hi, np.asarray(0, in_dt))
    return knp.cast(knp.clip(x, lo, hi), d)


builtin_max, builtin_min = max, min


# -- slicing and scattering --
@body("slice")
def _slice(x, start, *, shape):
    return lax.dynamic_slice(x, [start[i] for i in range(len(shape))], shape)


def slice(inputs, start_indices, shape):  # noqa: A001 - Keras's public name
    """Keras 3's `keras.ops.slice`: `shape` elements from `start_indices`."""
    return _slice(
        tensor(inputs), tensor(start_indices, "int32"), shape=shape_arg(shape)
    )


@body("slice_update")
def _slice_update(x, start, updates):
    idx = [start[i] for i in range(x.ndim)]
    return lax.dynamic_update_slice(x, updates.astype(x.dtype), idx)


def slice_update(inputs, start_indices, updates):
    """Keras 3's `keras.ops.slice_update`: `updates` written at `start_indices`."""
    return _slice_update(
        tensor(inputs), tensor(start_indices, "int32"), tensor(updates)
    )


@body("scatter")
def _scatter(indices, values, *, shape):
    idx = tuple(jnp.moveaxis(jnp.asarray(indices), -1, 0))
    return jnp.zeros(shape, values.dtype).at[idx].add(values)


def scatter(indices, values, shape):
    """Keras 3's `keras.ops.scatter`: zeros of `shape` with `values` added at
    `indices` (duplicates sum, as TF's `scatter_nd`)."""
    return _scatter(tensor(indices), tensor(values), shape=shape_arg(shape))


@body("scatter_update")
def _scatter_update(x, indices, updates, *, reduction):
    idx = tuple(jnp.moveaxis(jnp.asarray(indices), -1, 0))
    at = jnp.asarray(x).at[idx]
    u = updates.astype(x.dtype)
    if reduction is None:
        return at.set(u)
    return {"add": at.add, "max": at.max, "min": at.min, "mul": at.multiply}[reduction](
        u
    )


def scatter_update(inputs, indices, updates, reduction=None):
    """Keras 3's `keras.ops.scatter_update`: `inputs` with `updates` at
    `indices` (`reduction` None replaces; "add", "max", "min", "mul" combine)."""
    if reduction not in (None, "add", "max", "min", "mul"):
        raise ValueError(
            "Unsupported reduction. Expected one of None, 'add', 'max', 'min', "
            f"'mul'. Received: reduction={reduction}"
        )
    return _scatter_update(
        tensor(inputs), tensor(indices), tensor(updates), reduction=reduction
    )


@body("unstack")
def _unstack(x, *, axis):
    return [jnp.take(x, i, axis=axis) for i in range(x.shape[axis])]


def unstack(x, num=None, axis=0):
    """Keras 3's `keras.ops.unstack`: a list of the slices along `axis`."""
    x = tensor(x)
    n = np.shape(x)[axis]
    if num is not None and num != n:
        raise ValueError(f"Cannot unstack axis {axis} of size {n} into {num} tensors.")
    return _unstack(x, axis=int(axis))


# -- control flow --
def cond(pred, true_fn, false_fn):
    """Keras 3's `keras.ops.cond`: `true_fn()` if `pred` else `false_fn()`.

    Traced inside `jaxtape.function`, both branches compile (`lax.cond`).
    """
    return control_flow.cond(pred, true_fn, false_fn)


def switch(index, branches, *operands):
    """Keras 3's `keras.ops.switch`: `branches[index](*operands)`.

    An index out of range is clamped to the nearest branch, as Keras's.
    """
    n = len(branches)
    idx = index
    if not isinstance(index, (int, np.integer)):
        idx = knp.clip(knp.cast(index, "int32"), 0, n - 1)
    else:
        idx = builtin_max(0, builtin_min(int(index), n - 1))
    fns = [lambda b=b: b(*operands) for b in branches]
    return control_flow.switch_case(idx, fns)


def while_loop(cond, body, loop_vars, maximum_iterations=None):
    """Keras 3's `keras.ops.while_loop`: `loop_vars = body(*loop_vars)` while
    `cond(*loop_vars)`; a single (non-tuple) `loop_vars` stays single.

    Differences from Keras: inside `jaxtape.function`, a loop without
    `maximum_iterations` cannot be differentiated in reverse mode (JAX's
    `while_loop`); with it, it can.
    """
    is_tuple = isinstance(loop_vars, (tuple, list))
    lv = tuple(loop_vars) if is_tuple else (loop_vars,)
    lv = nest.map_structure(_as_tensor, lv)

    def _body(*args):
        out = body(*args)
        return tuple(out) if is_tuple else (out,)

    out = control_flow.while_loop(
        cond, _body, lv, maximum_iterations=maximum_iterations
    )
    return tuple(out) if is_tuple else out[0]


def fori_loop(lower, upper, body_fun, init_val):
    """Keras 3's `keras.ops.fori_loop`: `val = body_fun(i, val)` for i in
    `[lower, upper)`."""
    i0 = convert_to_tensor(lower, "int32")

    def _cond(i, _):
        return knp.less(i, upper)

    def _body(i, val):
        return knp.add(i, 1), body_fun(i, val)

    return while_loop(_cond, _body, (i0, init_val))[1]


def _as_tensor(v):
    return v if hasattr(v, "read_value") else convert_to_tensor(v)


def _stack_tree(items):
    return nest.map_structure(lambda *xs: knp.stack(list(xs)), *items)


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Keras 3's `keras.ops.scan`: `carry, y = f(carry, x)` over `xs` (axis 0);
    returns `(final_carry, stacked_ys)`.

    Differences from Keras: the loop is a Python loop (unrolled inside
    `jaxtape.function`); `unroll` is accepted and has no further effect.
    """
    del unroll
    leaves = [] if xs is None else nest.flatten(xs)
    n = length
    if leaves:
        n = np.shape(tensor(leaves[0]))[0]
    if n is None:
        raise ValueError("`length` must be given when `xs` is None.")
    order = range(n - 1, -1, -1) if reverse else range(n)
    carry, ys = init, []
    for i in order:
        x = (
            None
            if xs is None
            else nest.map_structure(lambda v, i=i: knp.get_item(v, i), xs)
        )
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    if not ys or all(y is None for y in ys):
        return carry, None
    return carry, _stack_tree(ys)


def map(f, xs):  # noqa: A001 - Keras's public name
    """Keras 3's `keras.ops.map`: `f` applied to each slice of `xs` along axis 0.

    Differences from Keras: a Python loop (unrolled inside `jaxtape.function`).
    """
    return scan(lambda c, x: (c, f(x)), None, xs)[1]


def vectorized_map(function, elements):
    """Keras 3's `keras.ops.vectorized_map`: `function` over axis 0, stacked.

    Differences from Keras: a Python loop, not a vectorized trace.
    """
    return map(function, elements)


def associative_scan(f, elems, reverse=False, axis=0):
    """Keras 3's `keras.ops.associative_scan` (a sequential scan here)."""
    leaves = nest.flatten(elems)
    n = np.shape(tensor(leaves[0]))[axis]
    parts = [knp.split(tensor(v), n, axis=axis) for v in leaves]
    order = list(range(n - 1, -1, -1)) if reverse else list(range(n))
    acc, outs = None, [None] * n
    for i in order:
        cur = nest.pack_sequence_as(elems, [p[i] for p in parts])
        acc = cur if acc is None else (f(acc, cur) if not reverse else f(cur, acc))
        outs[i] = acc
    flat = [nest.flatten(o) for o in outs]
    return nest.pack_sequence_as(
        elems,
        [
            knp.concatenate([f_[j] for f_ in flat], axis=axis)
            for j in range(len(leaves))
        ],
    )


def jvp(fun, primals, tangents, has_aux=False):
    """Keras 3's `keras.ops.jvp`: `(fun(*primals), J @ tangents)` (forward mode),
    plus `aux` when `has_aux` (`fun` then returns `(output, aux)`)."""
    primals = [convert_to_tensor(p) for p in primals]
    tangents = [convert_to_tensor(t) for t in tangents]
    with ForwardAccumulator(primals, tangents) as acc:
        out = fun(*primals)
    aux = None
    if has_aux:
        out, aux = out
    tangent_out = nest.map_structure(
        lambda o: acc.jvp(o, unconnected_gradients=UnconnectedGradients.ZERO), out
    )
    return (out, tangent_out, aux) if has_aux else (out, tangent_out)


def vectorize(pyfunc, *, excluded=None, signature=None):
    """Keras 3's `keras.ops.vectorize`: `pyfunc` applied element by element
    over its broadcast tensor arguments.

    Differences from Keras: a Python loop over the elements (fine for small
    tensors); `signature` raises `NotImplementedError`.
    """
    if signature is not None:
        raise NotImplementedError("vectorize: `signature` is not supported.")
    excluded = set(excluded or ())

    def wrapped(*args, **kwargs):
        pos = [i for i in range(len(args)) if i not in excluded]
        xs = [convert_to_tensor(args[i]) for i in pos]
        shape = np.broadcast_shapes(*[np.shape(x) for x in xs])
        flat = [knp.reshape(knp.broadcast_to(x, shape), (-1,)) for x in xs]
        outs = []
        for j in range(int(np.prod(shape))):
            call = list(args)
            for i, f in zip(pos, flat):
                call[i] = knp.get_item(f, j)
            outs.append(pyfunc(*call, **kwargs))
        if not outs:
            return knp.zeros(shape)
        return knp.reshape(knp.stack(outs), shape)

    return wrapped


_AXIS_TOKEN = re.compile(r"\w+|\(.*?\)")


def _groups(side: str) -> list[list[str]]:
    return [
        tok[1:-1].split() if tok.startswith("(") else [tok]
        for tok in _AXIS_TOKEN.findall(side)
    ]


def rearrange(tensor, pattern, **axes_lengths):
    """Keras 3's `keras.ops.rearrange`: einops-style axis rearrangement
    (`"b h w c -> b (h w) c"`; `axes_lengths` sizes decomposed axes).

    >>> jaxtape.keras.ops.rearrange(jaxtape.zeros((2, 3, 4)), "b h w -> b (h w)").shape
    TensorShape([2, 12])
    """
    x = convert_to_tensor(tensor)
    left, right = re.split(r"\s*->\s*", pattern)
    ins, outs = _groups(left), _groups(right)
    sizes = dict(axes_lengths)
    for group, dim in zip(ins, np.shape(x)):
        unknown = [a for a in group if a not in sizes]
        known = int(np.prod([sizes[a] for a in group if a in sizes]))
        if len(group) == 1 and not unknown:
            continue
        if unknown:
            sizes[unknown[0]] = dim // known
        if len(group) == 1:
            sizes[group[0]] = dim
    flat_in = [a for g in ins for a in g]
    flat_out = [a for g in outs for a in g]
    x = knp.reshape(x, [sizes[a] for a in flat_in])
    x = knp.transpose(x, [flat_in.index(a) for a in flat_out])
    return knp.reshape(x, [int(np.prod([sizes[a] for a in g])) for g in outs])
