"""TF's function types for `jaxtape.function`: trace keys, `input_signature`
binding, shape generalization (`reduce_retracing`) and printed signatures.

Layer L3 (function/). A call's key is `(treedef, leaf keys)`; an array
leaf's key is `("array", shape, dtype)`, where a generalized key (an
`input_signature`, a `TensorSpec` given to `get_concrete_function`, or a
shape relaxed by `reduce_retracing`) has `None` for unknown dimensions. As
in TF, a call runs the most specific trace whose key accepts it.
"""

from __future__ import annotations

import inspect
from typing import Any

import jax
import numpy as np

from jaxtape._src.core import dtypes
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor, TensorShape, TensorSpec
from jaxtape._src.state.variable import Variable
from jaxtape._src.structured import strings
from jaxtape._src.structured.ragged import RaggedTensor, RaggedTensorSpec
from jaxtape._src.structured.strings import StringTensor


def is_array(x) -> bool:
    return type(x) is Tensor or isinstance(x, (jax.Array, np.ndarray, np.generic))


def leaf_key(x):
    """The static part of an argument leaf (its value, unless it is an array)."""
    if is_array(x):
        v = x._value if type(x) is Tensor else x
        return ("array", tuple(np.shape(v)), v.dtype)
    if type(x) is TensorSpec:  # get_concrete_function(TensorSpec(...))
        if x.shape.rank is None:
            raise NotImplementedError(
                f"get_concrete_function({x!r}): a concrete function for an "
                "unknown rank cannot be compiled (XLA needs ranks). Give the "
                "rank, e.g. TensorSpec([None, None]); calling the function "
                "with an unknown-rank input_signature traces each rank it meets."
            )
        return ("array", tuple(x.shape), np.dtype(x.dtype.as_numpy_dtype))
    if isinstance(x, Variable):
        return ("variable", id(x))
    if isinstance(x, StringTensor):  # host strings: static, one trace per value
        return ("string", x._v.shape, tuple(x._v.ravel().tolist()))
    try:
        hash(x)
    except TypeError:
        return ("object", id(x))
    return ("value", type(x).__name__, x)


def is_general(key) -> bool:
    """Whether a key has unknown (`None`) dimensions."""
    return any(k[0] == "array" and None in k[1] for k in key[1])


def unknown_sizes(general, leaves) -> list[int]:
    """The sizes a call gives to the unknown dimensions of `general`, in order."""
    out = []
    arrays = [k for k in general[1] if k[0] == "array"]
    for k, leaf in zip(arrays, leaves):
        shape = np.shape(leaf)
        out.extend(n for d, n in zip(k[1], shape) if d is None)
    return out


def accepts(general, key) -> bool:
    """Whether a trace with key `general` can run a call with key `key`."""
    if general[0] != key[0] or len(general[1]) != len(key[1]):
        return False
    for g, k in zip(general[1], key[1]):
        if g == k:
            continue
        if g[0] != "array" or k[0] != "array" or g[2] != k[2] or len(g[1]) != len(k[1]):
            return False
        if any(a is not None and a != b for a, b in zip(g[1], k[1])):
            return False
    return True


def pattern_accepts(traced, call) -> bool:
    """Whether a trace that shares symbols as `traced` (`dims_pattern`) can
    run a call with pattern `call`: the trace assumes no equality the call
    breaks, and sizes 0 (concrete in the trace) match."""
    seen: dict[int, int] = {}
    for p, q in zip(traced, call):
        if (p < 0) != (q < 0):
            return False
        if p >= 0 and seen.setdefault(p, q) != q:
            return False
    return True


def unknowns(key) -> int:
    """How general a key is (TF's most specific trace has the fewest)."""
    return sum(k[1].count(None) for k in key[1] if k[0] == "array")


def generalize(key, others):
    """TF's `reduce_retracing`: `key` relaxed against every earlier trace's
    key it shares a structure with (TF's `try_generalizing_function_type`):
    dimensions that differ become `None`.

    Differences from TensorFlow: shapes of different ranks stay apart (TF
    relaxes them to an unknown rank, which XLA cannot compile), so each rank
    gets its own relaxed trace.
    """
    relaxed = key
    for other in others:
        common = _common(relaxed, other)
        if common is not None:
            relaxed = common
    return relaxed


def _common(a, b):
    if a[0] != b[0] or len(a[1]) != len(b[1]):
        return None
    leaves = []
    for x, y in zip(a[1], b[1]):
        if x == y:
            leaves.append(x)
        elif x[0] == "array" == y[0] and x[2] == y[2] and len(x[1]) == len(y[1]):
            shape = tuple(p if p == q else None for p, q in zip(x[1], y[1]))
            leaves.append(("array", shape, x[2]))
        else:
            return None
    return (a[0], tuple(leaves))


# -- input_signature -----------------------------------------------------------------
def check_input_signature(input_signature) -> list | None:
    """The signature as a list (TF's checks: a sequence of TensorSpecs)."""
    if input_signature is None:
        return None
    if not isinstance(input_signature, (list, tuple)):
        raise TypeError(
            "input_signature must be either a tuple or a list, got "
            f"{type(input_signature)}. Pass e.g. "
            "`input_signature=[jaxtape.TensorSpec([None], jaxtape.float32)]`."
        )
    for spec in jax.tree_util.tree_leaves(list(input_signature)):
        if not isinstance(spec, (TensorSpec, RaggedTensorSpec)):
            raise TypeError(
                "input_signature must be a possibly nested sequence of TensorSpec "
                f"objects, got invalid args {spec!r} with type {type(spec)}."
            )
    return list(input_signature)


def bind(python_function, specs: list, args: tuple, kwargs: dict):
    """Binds a call to an `input_signature`, as TF does.

    Returns the canonical positional arguments (Tensors of the specs' dtypes:
    Python numbers, lists and NumPy arrays are converted, as TF converts
    them) and whether any argument was converted. A call that does not match
    raises TF's `TypeError` ("Binding inputs to tf.function failed due to
    ..."), naming the received arguments and the expected signature.
    """
    params = _parameters(python_function, len(specs))
    try:
        values = _bind_names(params, args, kwargs)
        out, converted = [], False
        for value, spec in zip(values, specs):
            bound, changed = _bind_value(value, spec)
            out.append(bound)
            converted = converted or changed
    except _BindError as e:
        shown = ", ".join(f"{p.name}: {s!r}" for p, s in zip(params, specs))
        raise TypeError(
            f"Binding inputs to tf.function failed due to `{e}`. Received args: "
            f"{args!r} and kwargs: {kwargs!r} for signature: ({shown}). Pass "
            "arguments that match the input_signature (a `None` dimension takes "
            "any size), or remove the input_signature."
        ) from None
    return tuple(out), converted


class _BindError(Exception):
    pass


def _parameters(python_function, n: int) -> list:
    try:
        params = list(inspect.signature(python_function).parameters.values())
    except (TypeError, ValueError):  # a builtin: positional names
        params = []
    named = [
        p
        for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    if len(named) < n:  # *args: TF names them args_0, args_1, ...
        named += [
            inspect.Parameter(f"args_{i}", inspect.Parameter.POSITIONAL_ONLY)
            for i in range(n - len(named))
        ]
    return named[:n]


def _bind_names(params, args, kwargs) -> list:
    if len(args) > len(params):
        raise _BindError("too many positional arguments")
    values: list[Any] = list(args) + [_MISSING] * (len(params) - len(args))
    for name, value in kwargs.items():
        index = next((i for i, p in enumerate(params) if p.name == name), None)
        if index is None:
            raise _BindError(f"got an unexpected keyword argument '{name}'")
        if values[index] is not _MISSING:
            raise _BindError(f"multiple values for argument '{name}'")
        values[index] = value
    for p, value in zip(params, values):
        if value is _MISSING:
            raise _BindError(f"missing a required argument: '{p.name}'")
    return values


_MISSING = object()


def _bind_value(value, spec):
    """One argument against its (possibly nested) spec."""
    if isinstance(spec, TensorSpec):
        return _bind_tensor(value, spec)
    if isinstance(spec, RaggedTensorSpec):
        return _bind_ragged(value, spec)
    spec_leaves, spec_tree = jax.tree_util.tree_flatten(spec)
    leaves, tree = jax.tree_util.tree_flatten(
        value,
        is_leaf=lambda x: type(x) is Tensor or isinstance(x, (Variable, RaggedTensor)),
    )
    if tree != spec_tree:
        raise _BindError(
            f"The two structures don't have the same nested structure: {value!r} "
            f"and {spec!r}"
        )
    bound = [_bind_value(v, s) for v, s in zip(leaves, spec_leaves)]
    return (
        jax.tree_util.tree_unflatten(tree, [b for b, _ in bound]),
        any(c for _, c in bound),
    )


def _bind_tensor(value, spec: TensorSpec):
    want = np.dtype(spec.dtype.as_numpy_dtype)
    if want.kind == "O":  # strings: a static StringTensor (one trace per value)
        return _bind_strings(value, spec)
    if type(value) is Tensor:
        tensor, converted = value, False
    elif isinstance(value, Variable):
        tensor, converted = value.read_value(), True
    else:
        try:
            tensor = Tensor(jax.numpy.asarray(to_value(value, want)))
        except (TypeError, ValueError, NotImplementedError) as e:
            raise _BindError(str(e).split(":")[0]) from None
        converted = True
    got = TensorSpec(tensor.shape, tensor.dtype)
    if tensor._value.dtype != want or not spec.shape.is_compatible_with(tensor.shape):
        raise _BindError(
            f"Can not cast {got!r} to {TensorSpec(spec.shape, spec.dtype)!r}"
        )
    return tensor, converted


def _bind_strings(value, spec: TensorSpec):
    try:
        tensor = strings.convert(value)
    except (TypeError, ValueError) as e:
        raise _BindError(str(e).split(":")[0]) from None
    if not spec.shape.is_compatible_with(tensor.shape):
        got = TensorSpec(tensor.shape, tensor.dtype)
        raise _BindError(f"Can not cast {got!r} to {spec!r}")
    return tensor, tensor is not value


def _bind_ragged(value, spec: RaggedTensorSpec):
    """A RaggedTensor against a `RaggedTensorSpec`: dtype, ragged_rank, row
    splits dtype and shape must fit (nothing is converted)."""
    if not isinstance(value, RaggedTensor):
        raise _BindError(f"Can not cast {value!r:.60} to {spec!r}")
    if not spec.is_compatible_with(value):
        raise _BindError(
            f"Can not cast {RaggedTensorSpec.from_value(value)!r} to {spec!r}"
        )
    return value, False


def component_specs(input_signature) -> list:
    """The signature's spec for each array leaf of a call: a TensorSpec, or
    None for a component of a RaggedTensor (its sizes stay the call's own:
    the ragged ops need static lengths, so a new length retraces)."""
    out: list = []
    for spec in jax.tree_util.tree_leaves(input_signature):
        if isinstance(spec, RaggedTensorSpec):
            out += [None] * (1 + spec.ragged_rank)
        else:
            out.append(spec)
    return out


# -- printed signatures (TF's `pretty_printed_signature`) -----------------------------
def spec_of(x, name=None):
    """A leaf as TF's ConcreteFunction shows it: a TensorSpec for a tensor."""
    if type(x) is TensorSpec:
        return TensorSpec(x.shape, x.dtype, x.name if x.name is not None else name)
    if is_array(x):
        v = x._value if type(x) is Tensor else x
        return TensorSpec(
            TensorShape(v.shape), dtypes.as_dtype(np.dtype(v.dtype)), name=name
        )
    return x


def canonical(python_function, args, kwargs):
    """`(args, kwargs)` as TF's FunctionType binds them: defaults filled in,
    positional parameters in `args`, keyword-only ones in `kwargs`."""
    try:
        sig = inspect.signature(python_function)
        bound = sig.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return args, kwargs
    bound.apply_defaults()
    out_args: list = []
    out_kwargs: dict = {}
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if kind in (kind.POSITIONAL_ONLY, kind.POSITIONAL_OR_KEYWORD):
            out_args.append(value)
        elif kind is kind.VAR_POSITIONAL:
            out_args.extend(value)
        elif kind is kind.KEYWORD_ONLY:
            out_kwargs[name] = value
        else:
            out_kwargs.update(value)
    return tuple(out_args), out_kwargs


def structured_input_signature(python_function, args, kwargs):
    """TF's `structured_input_signature`: `(args, kwargs)` with every tensor a
    TensorSpec named after its parameter (`x`, `pair_0`, `d_k`, `args_1`)."""
    params = _parameters(python_function, len(args))
    names = [p.name for p in params]
    out_args = tuple(_named(a, n) for a, n in zip(args, names))
    out_kwargs = {k: _named(v, k) for k, v in kwargs.items()}
    return out_args, out_kwargs


def _named(x, name):
    if type(x) in (list, tuple):
        return type(x)(_named(v, f"{name}_{i}") for i, v in enumerate(x))
    if type(x) is dict:
        return {k: _named(v, f"{name}_{k}") for k, v in x.items()}
    return spec_of(x, name)


def type_text(x) -> str:
    """A value's type as TF prints it (`TensorSpec(...)`, `Literal[3.0]`,
    `List[...]`, `Tuple[...]`, `Dict[['k', ...]]`)."""
    if type(x) is TensorSpec:
        return repr(TensorSpec(x.shape, x.dtype, x.name))
    if type(x) is list:
        return f"List[{', '.join(type_text(v) for v in x)}]"
    if type(x) is tuple:
        return f"Tuple[{', '.join(type_text(v) for v in x)}]"
    if isinstance(x, dict):
        items = ", ".join(f"[{k!r}, {type_text(x[k])}]" for k in sorted(x))
        return f"Dict[{items}]"
    return f"Literal[{x!r}]"


def unnamed(x):
    """`x` with every TensorSpec's name dropped (TF prints parameters so)."""
    return jax.tree_util.tree_map(
        lambda s: TensorSpec(s.shape, s.dtype) if type(s) is TensorSpec else s, x
    )


def pretty_signature(python_function, args, kwargs, outputs, captures) -> str:
    """TF's `ConcreteFunction.pretty_printed_signature()` text."""
    params = _parameters(python_function, len(args))
    lines = ["Input Parameters:"]
    for p, a in zip(params, args):
        lines.append(f"  {p.name} ({p.kind.name}): {type_text(_kept_names(a))}")
    for k, v in kwargs.items():
        lines.append(f"  {k} (KEYWORD_ONLY): {type_text(_kept_names(v))}")
    lines += ["Output Type:", f"  {type_text(unnamed(outputs))}", "Captures:"]
    lines += [f"  {line}" for line in captures] or ["  None"]
    return "\n".join(lines)


def _kept_names(x):
    """TF keeps a name given in a TensorSpec, and shows None for the rest."""
    return jax.tree_util.tree_map(
        lambda s: spec_of(s) if is_array(s) else s,
        x,
        is_leaf=lambda s: type(s) is Tensor,
    )
