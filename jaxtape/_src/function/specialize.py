"""Shape-polymorphic traces: the Python function traced once for every size.

Layer L3 (function/): imports jax only. `jaxtape.function` with an
`input_signature` holding `None` dimensions (or with `reduce_retracing=True`
once two shapes were seen) traces its Python function ONCE, as TF does, with
JAX's symbolic dimensions (`jax.export.symbolic_shape`) standing for the
unknown sizes. XLA still needs one program per concrete shape: `evaluate`
replays the symbolic jaxpr with the symbols bound to the call's sizes, so
each new shape costs a replay of the jaxpr and a compile, never a second run
of the Python function (its side effects happen once).

Why a replay and not `jax.export` (which traces symbolically and compiles per
shape too): exported modules cannot hold host callbacks, so a function with
`jaxtape.print` or `py_function` could not be traced once; the replay keeps
every primitive, callbacks, custom gradients and effects included.

Where symbolic tracing cannot work, `jaxtape.function` traces per shape
instead (the caller falls back when `make_avals`' trace or `evaluate`
raises): Python code that needs a concrete size (`int(x.shape[0])`,
`range(tf.shape(x)[0])`, `tf.zeros(tf.shape(x))`, a comparison of an unknown
size with a number), shapes JAX cannot prove compatible (two independent
`None` sizes added together; see `dims_pattern`), and params this module does
not know how to substitute.
"""

from __future__ import annotations

import types
from typing import Any

import jax
import numpy as np
from jax import export
from jax._src import core as _core
from jax._src import linear_util as _lu
from jax._src.interpreters import partial_eval as _pe

_DimExpr = type(export.symbolic_shape("a")[0])


def is_symbolic(d: Any) -> bool:
    """Whether `d` is a symbolic dimension (an unknown size while tracing)."""
    return type(d) is _DimExpr


def dims_pattern(sizes: list[int]) -> tuple[int, ...]:
    """Which unknown dimensions share a symbol, from one call's sizes.

    Unknown (`None`) dimensions of equal size in the call share one symbol
    (so `x + y` with both batch sizes unknown traces: JAX must know that the
    two sizes are equal); a size 0 stays a concrete 0 (JAX's symbols are at
    least 1). The pattern is part of the trace's key: a later call whose
    equal sizes differ traces once more (TF traces once; say so).
    """
    first: dict[int, int] = {}
    out = []
    for n in sizes:
        if n == 0:
            out.append(-1)
        else:
            out.append(first.setdefault(n, len(first)))
    return tuple(out)


def make_avals(shapes, dtypes, pattern):
    """Symbolic `ShapeDtypeStruct`s for array leaves.

    `shapes`: per leaf a tuple of ints and Nones; `pattern` (`dims_pattern`)
    gives each None, in order, its symbol (or -1: size 0). Returns the avals
    and `dims`: `(leaf, axis, symbol)` for each symbolic dimension.
    """
    scope = export.SymbolicScope()
    it = iter(pattern)
    avals, dims = [], []
    for leaf, (shape, dtype) in enumerate(zip(shapes, dtypes)):
        parts = []
        for axis, d in enumerate(shape):
            if d is not None:
                parts.append(str(d))
                continue
            k = next(it)
            if k < 0:
                parts.append("0")
            else:
                parts.append(f"d{k}")
                dims.append((leaf, axis, f"d{k}"))
        sym = export.symbolic_shape(", ".join(parts), scope=scope) if parts else ()
        avals.append(jax.ShapeDtypeStruct(sym, dtype))
    return avals, dims


def environment(dims, leaves) -> dict[str, Any]:
    """The symbols' sizes in one call (`dims` from `make_avals`): ints, or
    the symbols themselves for symbolic leaves (a program printed as traced)."""
    return {name: np.shape(leaves[leaf])[axis] for leaf, axis, name in dims}


def evaluate(closed, args, env: dict[str, int]) -> list:
    """Evaluates a symbolic ClosedJaxpr on concrete `args` (sizes in `env`)."""
    return _eval(closed.jaxpr, closed.consts, args, env, {})


def _eval(jaxpr, consts, args, env, memo) -> list:
    vals: dict = {}

    def read(v):
        return v.val if type(v) is _core.Literal else vals[v]

    for v, x in zip(jaxpr.constvars, consts):
        vals[v] = x
    for v, x in zip(jaxpr.invars, args):
        vals[v] = x
    for eqn in jaxpr.eqns:
        params = _subst(eqn.params, env, memo) if eqn.params else eqn.params
        if eqn.primitive.name == "dim_as_value" and type(params["dim"]) is int:
            vals[eqn.outvars[0]] = np.asarray(params["dim"], eqn.outvars[0].aval.dtype)
            continue  # (a size as a value)
        bind = eqn.primitive.get_bind_params(dict(params))
        with eqn.ctx.manager:
            ans = eqn.primitive.bind(*map(read, eqn.invars), **bind)
        if eqn.primitive.multiple_results:
            for v, x in zip(eqn.outvars, ans):
                vals[v] = x
        else:
            vals[eqn.outvars[0]] = ans
    return [read(v) for v in jaxpr.outvars]


def _subst(v: Any, env, memo) -> Any:
    """`v` (an eqn's params, or part of them) with every symbol made concrete."""
    t = type(v)
    if t is _DimExpr:
        out = v._evaluate(env)
        return out if type(out) is _DimExpr else int(out)
    if t is dict:
        return {k: _subst(x, env, memo) for k, x in v.items()}
    if t is _core.ShapedArray:
        shape = _subst(v.shape, env, memo)
        return v if shape is v.shape else v.update(shape=shape)
    if t is tuple or t is list or (isinstance(v, tuple) and hasattr(t, "_fields")):
        new = [_subst(x, env, memo) for x in v]
        if all(a is b for a, b in zip(new, v)):
            return v
        return t(*new) if hasattr(t, "_fields") else t(new)
    if t is _core.ClosedJaxpr:
        return _closed(v, env, memo)
    if t is _core.Jaxpr:
        return _open(v, env, memo)
    if t is _lu.WrappedFun:
        return _wrapped(v, env, memo)
    return v


def _aval(a, env):
    if type(a) is not _core.ShapedArray:
        raise NotImplementedError(f"symbolic shapes: cannot specialize {a}")
    shape = tuple(_subst(tuple(a.shape), env, {}))
    return jax.ShapeDtypeStruct(shape, a.dtype, weak_type=a.weak_type)


def _closed(cj, env, memo):
    hit = memo.get(id(cj))
    if hit is not None and hit[0] is cj:
        return hit[1]
    avals = [_aval(v.aval, env) for v in cj.jaxpr.invars]
    out = jax.make_jaxpr(lambda *a: _eval(cj.jaxpr, cj.consts, a, env, memo))(*avals)
    memo[id(cj)] = (cj, out)
    return out


def _open(jaxpr, env, memo):
    n = len(jaxpr.constvars)
    avals = [_aval(v.aval, env) for v in (*jaxpr.constvars, *jaxpr.invars)]
    closed = jax.make_jaxpr(lambda *a: _eval(jaxpr, a[:n], a[n:], env, memo))(*avals)
    if closed.consts:
        raise NotImplementedError("symbolic shapes: an open jaxpr gained constants")
    return _pe.convert_invars_to_constvars(closed.jaxpr, n) if n else closed.jaxpr


def _wrapped(fun, env, memo):
    """A `WrappedFun` (custom_vjp's fwd/bwd, custom_jvp's jvp) rebuilt with
    its transformations' static arguments (avals captured while tracing)
    specialized, its function's closure too (checkify wraps custom_vjp's bwd
    in a closure), and its results (jaxprs traced with those avals)."""
    inner, params = _closure(fun.f, env, memo), dict(fun.params)

    def core(*args, **kwargs):
        return _subst(inner(*args, **kwargs), env, memo)

    new = _lu.wrap_init(core, params, debug_info=fun.debug_info)
    for (gen, static), store in reversed(list(zip(fun.transforms, fun.stores))):
        static = tuple(_results(x, env, memo) for x in _subst(static, env, memo))
        new = new.wrap(gen, static, store)
    return new


def _results(x, env, memo):
    """A callable static argument (custom_vjp's `maybe_out_type` thunk)
    wrapped so that what it returns (avals) is specialized too."""
    if not callable(x) or isinstance(x, type) or type(x) is _lu.WrappedFun:
        return x

    def call(*args, **kwargs):
        return _subst(x(*args, **kwargs), env, memo)

    return call


_CELL_TYPES = (
    _DimExpr,
    tuple,
    list,
    _core.ShapedArray,
    _core.ClosedJaxpr,
    _core.Jaxpr,
    _lu.WrappedFun,
)


def _closure(f, env, memo, depth: int = 2):
    """A plain function whose closure holds symbolic avals or WrappedFuns,
    rebuilt with them specialized (`f` itself when nothing changes)."""
    if type(f) is not types.FunctionType or not f.__closure__ or depth < 0:
        return f
    cells = []
    changed = False
    for cell in f.__closure__:
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            cells.append(cell)
            continue
        if type(value) is types.FunctionType:
            new = _closure(value, env, memo, depth - 1)
        elif type(value) in _CELL_TYPES:  # (never a cache dict a thunk fills)
            new = _subst(value, env, memo)
        else:
            new = value
        changed = changed or new is not value
        cells.append(types.CellType(new) if new is not value else cell)
    if not changed:
        return f
    # A rebuilt function is another function: a memo cache in its closure
    # (JAX's `_memoize` of a thunk) starts empty.
    cells = [types.CellType({}) if type(_contents(c)) is dict else c for c in cells]
    out = types.FunctionType(
        f.__code__, f.__globals__, f.__name__, f.__defaults__, tuple(cells)
    )
    out.__kwdefaults__ = f.__kwdefaults__
    return out


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None
