"""The one dispatcher: every public op is a pure jnp body behind `op(...)`.

`op` turns a pure function of `jax.Array`s into a public op with the same
signature. A call unwraps inputs (Tensor -> value, Variable -> a read, Python
and NumPy values converted by TF's rules), runs the body, wraps the outputs in
Tensors, and hands the call to each recording tape, which appends a node when
one of the inputs is tracked on it. Op authors never touch the tape.

Layer L0: imports only `core`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, Protocol, TypeVar, overload

import jax
import jax.core
import numpy as np

from jaxtape._src.core import checks, context, deferred, device, dtypes, errors
from jaxtape._src.core.compile_cache import guard as _guard
from jaxtape._src.core.deferred import Pending
from jaxtape._src.core.tensor import Tensor, TensorShape

_state = context.state
_hooks = context.hooks
_PY_SCALARS = (float, int, bool, complex)
_BOOL = np.dtype(np.bool_)


class OpInfo:
    """What the dispatcher knows about one op (fixed at definition time)."""

    __slots__ = (
        "fn",
        "eager",
        "name",
        "same_dtype",
        "differentiable",
        "deferrable",
        "check",
        "compiled",
    )

    def __init__(
        self,
        fn,
        name,
        same_dtype,
        differentiable,
        eager=None,
        deferrable=False,
        check=None,
    ):
        if not differentiable:  # (never recorded: `fn` only ever runs traced)
            fn, eager = _NoGradient(fn), _NoGradient(eager) if eager else None
        self.fn = fn  # the primitive recorded on tapes: fn(*input_values, *params)
        self.eager = eager or fn  # what computes the op eagerly (maybe jitted)
        self.name = name
        self.same_dtype = same_dtype
        self.differentiable = differentiable
        # A pure body that a recording tape may run lazily (`deferred`).
        self.deferrable = deferrable
        # `check(xp, *input_values, *params)`: TF's run-time argument checks
        # (`core/checks`), run before the op; None for most ops.
        self.check = check
        # The eager call as one compiled dispatch (`_run_compiled`): None
        # until first used, False for ops that cannot be (or already are).
        self.compiled: Any = None if deferrable and eager is None else False


class _NoGradient:
    """The body of an op with no gradient (`stop_gradient`, `round`, `argmax`,
    `lu`...), its traced outputs cut from JAX's autodiff. Tapes never record
    such ops, but a `jaxtape.function` or a loop body that an outer tape
    differentiates is differentiated by JAX as a whole, which would see
    through them: `stop_gradient(x) * x` would get 2x, not TF's x."""

    __slots__ = ("fn", "__name__")

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "op")

    def __eq__(self, other):
        return type(other) is _NoGradient and other.fn == self.fn

    def __hash__(self):
        return hash(self.fn)

    def __call__(self, *args):
        out = self.fn(*args)
        if isinstance(out, jax.core.Tracer):
            return jax.lax.stop_gradient(out)
        if type(out) is tuple or type(out) is list or hasattr(out, "_fields"):
            return jax.tree.map(_cut_traced, out)
        return out  # concrete values (eager execution): nothing to cut


def _cut_traced(v):
    return jax.lax.stop_gradient(v) if isinstance(v, jax.core.Tracer) else v


# -- composite inputs (RaggedTensor) ------------------------------------------------
# TF's dispatch: an op given a RaggedTensor runs its ragged version. The check
# sits where non-Tensor inputs are converted (never on the Tensor fast path):
# a composite raises `CompositeInput` there, and the op's wrapper (`op`) hands
# the whole call to the handler its type registered.
_composites: dict[type, Callable[[OpInfo, tuple, tuple], Any]] = {}


class CompositeInput(ValueError):
    """A composite value (RaggedTensor) where an op converts a Tensor.

    Caught by the op's wrapper, which calls the registered handler; anywhere
    else (`convert_to_tensor(rt)`) it is TF's conversion error.
    """

    def __init__(self, value):
        super().__init__(
            f"Attempt to convert a value ({_short(value)}) with an unsupported type "
            f"({type(value)}) to a Tensor. Convert it first (`to_tensor()`), or "
            "apply the op to its values (`jaxtape.ragged.map_flat_values`)."
        )


def register_composite(cls: type, handler: Callable[[OpInfo, tuple, tuple], Any]):
    """Ops given a `cls` input call `handler(info, inputs, params)` instead."""
    _composites[cls] = handler


# -- strings (StringTensor) ----------------------------------------------------------
# Strings are host values (`structured/strings`), registered like a composite:
# a string input (a StringTensor, `str`/`bytes`, a list of them, a NumPy string
# array) raises `StringInput` where inputs are converted, and the op's wrapper
# hands the call to the strings handler. `convert(value, dtype)` makes one.
class StringInput(CompositeInput):
    """A string value where an op converts a (numeric) Tensor."""


_strings: dict[str, Any] = {"cls": None, "handler": None, "convert": None}
_string_cls: type | None = None  # (`_strings["cls"]`, read where speed matters)


def register_strings(cls: type, handler: Callable, convert: Callable) -> None:
    """String inputs to ops call `handler(info, inputs, params)`; `convert(value,
    dtype)` is `constant`'s conversion of a string value to a `cls`."""
    global _string_cls
    _composites[cls] = handler
    _strings.update(cls=cls, handler=handler, convert=convert)
    _string_cls = cls


def string_tensor(value: Any, dtype: Any = None) -> Any:
    """`value` (strings, or any value with dtype string) as a StringTensor."""
    convert = _strings["convert"]
    if convert is None:
        raise _no_strings(value)
    return convert(value, dtype)


def _string_input(x) -> Exception:
    return _no_strings(x) if _strings["cls"] is None else StringInput(x)


def _check_composite(a) -> None:
    t = type(a)
    if t in _composites:
        raise StringInput(a) if t is _string_cls else CompositeInput(a)
    if isinstance(a, (str, bytes)) or (t is np.ndarray and a.dtype.kind in "OSU"):
        raise _string_input(a)


def _composite_call(info: OpInfo, ins: tuple, params: tuple, error: CompositeInput):
    """The op's call handed to its composite input's handler (or `error`
    re-raised when none of this op's own inputs is a composite)."""
    for a in ins:
        handler = _composites.get(type(a))
        if handler is not None:
            return handler(info, ins, params)
    if type(error) is StringInput:
        return _strings["handler"](info, ins, params)
    raise error


# -- conversion ------------------------------------------------------------------
# Conversions users register (TF's `register_tensor_conversion_function`):
# (priority, order, base types, fn), lowest priority first. Read only on the
# slow path (a value that is no Tensor, number, list or array).
_conversions: list[tuple[int, int, tuple, Callable]] = []


def register_conversion(base_types: tuple, fn: Callable, priority: int) -> None:
    _conversions.append((priority, len(_conversions), base_types, fn))
    _conversions.sort(key=lambda c: c[:2])


def registered_conversion(x, dtype):
    """`x` converted by the first registered function that takes it, or None."""
    tf_dtype = None if dtype is None else dtypes.as_dtype(dtype)
    for _, _, types, fn in _conversions:
        if isinstance(x, types):
            out = fn(x, dtype=tf_dtype, name=None, as_ref=False)
            if out is NotImplemented:
                continue
            if tf_dtype is not None and getattr(out, "dtype", tf_dtype) != tf_dtype:
                raise RuntimeError(
                    f"Conversion function {fn!r} for type {type(x)} returned "
                    f"incompatible dtype: requested = {tf_dtype.name}, actual = "
                    f"{out.dtype.name}"
                )
            return out
    return None


def to_value(x: Any, dtype: Any = None) -> Any:
    """A `jax.Array`/NumPy value for any tensor-like, by TF's conversion rules.

    Python floats become float32, ints int32 (int64 when too large), NumPy
    arrays keep their dtype; `dtype` (a NumPy dtype or scalar type) overrides.
    """
    if dtype is not None:
        dtype = np.dtype(dtype)
    t = type(x)
    if t is Tensor:
        v = x._value
        if dtype is not None and v.dtype != dtype:
            raise ValueError(
                f"Tensor conversion requested dtype {_tf_name(dtype)} for Tensor "
                f"with dtype {_tf_name(v.dtype)}: {x!r}. Use `jaxtape.cast` to "
                "convert it."
            )
        return v
    if _hooks.variable_type is not None and isinstance(x, _hooks.variable_type):
        return to_value(x.read_value(), dtype)
    if t is _string_cls:  # a StringTensor: its host array of bytes
        if dtype is not None and dtype.kind != "O":
            raise StringInput(x)  # (an op's strings handler raises TF's error)
        return x._v
    if dtype is not None and dtype.kind == "O":  # `jaxtape.string`
        raise _string_input(x)
    if isinstance(x, jax.Array):
        return x if dtype is None else x.astype(dtype)
    if isinstance(x, _NP_VALUES):
        if x.dtype.kind not in "OSU":  # NumPy values are cast, as TF casts them
            return x if dtype is None or x.dtype == dtype else np.asarray(x, dtype)
        if x.dtype.kind == "O":  # an object array: convert its items as Python
            return to_value(x.tolist(), dtype)
        return _asarray(x, dtype)  # strings: refused, or parsed for a given dtype
    kind = _PY_KIND.get(t)
    if kind is None:  # a (nested) list or tuple; anything else is refused
        if _conversions and t is not list and t is not tuple:
            out = registered_conversion(x, dtype)
            if out is not None:
                return to_value(out, dtype)
        if t is TensorShape and None in x:
            raise ValueError(
                f"Cannot convert a partially known TensorShape {x} to a Tensor. "
                "Use `jaxtape.shape(x)` for the run-time shape of a tensor."
            )
        kind = _sequence_kind(x)
    elif dtype is not None:
        _check_python_scalar(x, dtype)
    elif kind == "f" and _F32_MAX < abs(x) < _INF:
        raise _float_out_of_range(x)
    if kind == "o":  # Tensors or NumPy values inside a list
        return _pack(x, dtype)
    given = dtype is not None
    if not given:
        dtype = _PY_KIND_DTYPE[kind]
    elif kind in _REFUSED.get(dtype.kind, ""):
        raise _cannot_convert(x, dtype)
    if kind == "i":
        return _int_array(x, dtype, given)
    if (kind == "f" or kind == "c") and (
        t is not float or (given and not abs(x) <= _F16_MAX)
    ):
        # TF: a float beyond float32 is an error by default, inf when asked for.
        # (A scalar float was checked above, or fits every float dtype.)
        with np.errstate(over="ignore" if given else "raise"):
            try:
                return _asarray(x, dtype)
            except FloatingPointError:
                raise _float_out_of_range(x) from None
    return _asarray(x, dtype)


_NP_VALUES = (np.ndarray, np.generic)
_F32 = np.dtype(np.float32)
_F32_MAX = float(np.finfo(np.float32).max)
_INF = float("inf")
_F16_MAX = 65504.0  # the smallest float dtype maximum
_PY_KIND = {bool: "b", int: "i", float: "f", complex: "c"}
_PY_KIND_DTYPE = {
    "b": np.dtype(np.bool_),
    "i": np.dtype(np.int32),
    "f": _F32,
    "c": np.dtype(np.complex128),  # (TF's default for Python complex numbers)
}
# Python kinds that TF refuses to convert to a dtype kind ("Cannot convert 1.0 to
# EagerTensor of dtype int32"): floats never become integers, even 1.0.
_REFUSED = {"i": "fc", "u": "fc", "b": "ifc", "f": "c", "V": "c", "c": "b"}
_MIXED = "Can't convert Python sequence with mixed types to Tensor."


def _sequence_kind(x) -> str:
    """The kind of a nested list's numbers: 'b', 'i', 'f', 'c', or 'o' (arrays).

    Raises TF's errors for what TF cannot convert: None, strings, dicts and
    other objects, and bools mixed with numbers.
    """
    if not isinstance(x, (list, tuple)):
        if x is None or isinstance(x, (dict, set, frozenset)):
            raise _unsupported(x)
        if isinstance(x, (str, bytes)):
            raise _string_input(x)
        _check_composite(x)
        if hasattr(x, "__array__") or isinstance(x, _var_type()):
            return "o"  # array-likes: NumPy converts them
        raise _unsupported(x)
    kinds: set = set()
    _collect_kinds(x, kinds)
    if len(kinds) == 1:
        (kind,) = kinds
    elif not kinds:
        return "f"  # an empty list: float32, as in TF
    elif "o" in kinds:
        return "o"
    elif "b" in kinds or "n" in kinds or "s" in kinds:
        raise ValueError(f"{_MIXED} Received: {_short(x)}")
    else:
        kind = "c" if "c" in kinds else "f"  # ints and floats: floats
    if kind == "n":
        raise _unsupported(None)
    if kind == "s":
        raise _string_input(x)
    return kind


def _collect_kinds(seq, kinds: set) -> None:
    for t in set(map(type, seq)):
        kind = _PY_KIND.get(t)
        if kind is not None:
            kinds.add(kind)
        elif issubclass(t, (list, tuple)):
            for v in seq:
                if type(v) is t:
                    _collect_kinds(v, kinds)
        elif t is type(None):
            kinds.add("n")
        elif issubclass(t, (str, bytes)) or t is _strings["cls"]:
            kinds.add("s")
        elif issubclass(t, (dict, set, frozenset)):
            raise _unsupported(next(v for v in seq if type(v) is t))
        else:  # Tensors, NumPy values, ...: NumPy converts them
            kinds.add("o")


def _pack(x, dtype):
    """TF's auto-packing: a (nested) list holding Tensors, as one array.

    `[n, 1]` with `n` a scalar int32 Tensor is int32: the Tensors inside give
    the dtype (the first one's) and must all have it (TF's `Pack` error), or
    are cast to a given `dtype`; Python numbers convert to it by TF's rule.
    A list of NumPy values and numbers only is NumPy's to convert.
    """
    tensors: list = []
    numbers: list = []
    _collect_packed(x, tensors, numbers)
    if not tensors:
        return _asarray(x, dtype)
    target = tensors[0][1] if dtype is None else dtype
    for i, (_, d) in enumerate(tensors):
        if d != target and dtype is None:  # (a given dtype casts them, as TF)
            raise errors.invalid_argument(
                f"cannot compute Pack as input #{i}(zero-based) was expected to be "
                f"a {_tf_name(target)} tensor but is a {_tf_name(d)} tensor. Cast "
                "the tensors in the list to one dtype with `jaxtape.cast`.",
                "Pack",
            )
    for n in numbers:
        _check_python_scalar(n, target)
    if any(isinstance(_raw(t), jax.core.Tracer) for t, _ in tensors):
        # Inside jaxtape.function: stacked in the program (NumPy cannot).
        return jax.numpy.asarray(_packed_values(x), target)
    return _asarray(x, target)


def _raw(t):
    return t._value if type(t) is Tensor else t._read_raw()


def _packed_values(seq: Any) -> Any:
    t = type(seq)
    if t is list or t is tuple:
        return [_packed_values(v) for v in seq]
    return _raw(seq) if t is Tensor or isinstance(seq, _var_type()) else seq


def _collect_packed(seq, tensors: list, numbers: list) -> None:
    """The Tensors/Variables (with their dtypes) and Python numbers in a list."""
    var_type = _var_type()
    for v in seq:
        t = type(v)
        if t is Tensor:
            tensors.append((v, v._v.dtype))
        elif t in _PY_SCALARS:
            numbers.append(v)
        elif t is list or t is tuple:
            _collect_packed(v, tensors, numbers)
        elif isinstance(v, var_type):
            tensors.append((v, np.dtype(v.dtype.as_numpy_dtype)))


def _asarray(x, dtype):
    try:
        out = np.asarray(x, dtype=dtype)
    except ValueError as e:
        if "inhomogeneous" in str(e) or "sequence" in str(e):
            raise ValueError(
                "Can't convert non-rectangular Python sequence to Tensor. Every "
                "row of a nested list needs the same length; pad the rows, or use "
                f"`jaxtape.ragged.constant` for ragged data. Received: {_short(x)}"
            ) from None
        raise
    if out.dtype.kind in "OSU":  # e.g. a list of Tensors and None
        if out.dtype.kind != "O":
            raise _string_input(x)
        raise ValueError(f"{_MIXED} Received: {_short(x)}")
    return out


def _int_array(x, dtype, given):
    """Python ints as `dtype` (by default int32, or int64 when that is too narrow).

    With an explicit integer dtype, values beyond it wrap around as in TF
    (`constant(300, dtype=uint8)` is 44); beyond int64 is an error.
    """
    try:
        return _asarray(x, dtype)
    except OverflowError:
        pass
    wide = np.dtype(np.uint64 if dtype == np.uint64 else np.int64)
    try:
        big = np.asarray(x, dtype=wide)
    except OverflowError:
        raise ValueError(
            "Can't convert Python sequence with out-of-range integer to Tensor: "
            f"{_short(x)} does not fit in {wide.name}. Pass a float (`2.0**70`) "
            "for a float tensor."
        ) from None
    return big.astype(dtype) if given else big  # (astype wraps, as TF's C cast)


def _check_python_scalar(x, dtype):
    """TF's rule for a Python number next to (or converted to) a `dtype` tensor.

    A float never converts to an integer or bool tensor (not even 1.0), a
    complex only to a complex one. Free for floats next to float tensors.
    """
    t = type(x)
    if t is float:
        if dtype.kind in "iub":
            raise _cannot_convert(x, dtype)
    elif t is int:
        if dtype.kind == "b":
            raise _cannot_convert(x, dtype)
    elif t is complex and dtype.kind != "c":
        raise _cannot_convert(x, dtype)


def _cannot_convert(x, dtype):
    why = {
        "b": "a bool is not a complex number",
        "i": "a Python int is not a bool",
        "f": "a Python float is not an integer (not even 1.0, as in TensorFlow)",
        "c": "a complex number converts to complex dtypes only",
    }
    kind = _PY_KIND.get(type(x)) or _sequence_kind(x)
    return TypeError(
        f"Cannot convert {_short(x)} to EagerTensor of dtype {_tf_name(dtype)}: "
        f"{why.get(kind, 'the kinds differ')}. Cast the tensor with `jaxtape.cast`, "
        "or pass a value of its kind."
    )


def _unsupported(x):
    return ValueError(
        f"Attempt to convert a value ({_short(x)}) with an unsupported type "
        f"({type(x)}) to a Tensor. Pass a number, a (nested) list of numbers, a "
        "NumPy array or a Tensor."
    )


def _no_strings(x):
    # Before `structured/strings` registers StringTensor (never, once jaxtape
    # is imported): a missing feature, so NotImplementedError.
    return NotImplementedError(
        f"jaxtape's string tensors are not loaded: cannot convert {_short(x)}. "
        "Import jaxtape (it registers `jaxtape.string`)."
    )


def _float_out_of_range(x):
    return ValueError(
        "Can't convert Python sequence with a value out of range for a "
        f"double-precision float: {_short(x)} overflows float32, the default. "
        "Pass `dtype=jaxtape.float64` (or a NumPy float64 array) to keep it."
    )


def _short(x) -> str:
    text = repr(x)
    return text if len(text) < 60 else text[:57] + "..."


_TF_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _tf_name(np_dtype: Any) -> str:
    name: str = np.dtype(np_dtype).name
    return _TF_NAMES.get(name, name)


def _dtype_of(x):
    t = type(x)
    if t is Tensor:
        return x._v.dtype
    if t in _PY_SCALARS or t is list or t is tuple:
        return None
    _check_composite(x)
    return getattr(x, "dtype", None)


def _unify(info: OpInfo, args: Sequence[Any]) -> Sequence[Any]:
    """TF's binary-op rule: non-tensors take the tensors' dtype; tensors must agree.

    `info.same_dtype` is True (all inputs) or a tuple of the positions to unify.
    Python scalars next to a typed input stay Python scalars: jnp treats them
    as weakly typed, which keeps the tensor's dtype without a host-to-device
    copy per op. Every other non-tensor is converted here, so after `_unify`
    a Python scalar among the inputs always means "weak, pass it through".
    """
    if len(args) == 2 and info.same_dtype is True:  # the common binary case
        a, b = args
        if type(a) is Tensor:
            tb = type(b)
            if tb is Tensor:
                if a._v.dtype == b._v.dtype:
                    return args
            elif tb in _PY_SCALARS:
                _check_python_scalar(b, a._v.dtype)
                if tb is bool and a._v.dtype != _BOOL:
                    return (a, int(b))  # (JAX has no weakly typed bool)
                return args
        elif type(b) is Tensor and type(a) in _PY_SCALARS:
            _check_python_scalar(a, b._v.dtype)
            if type(a) is bool and b._v.dtype != _BOOL:
                return (int(a), b)
            return args
    positions = range(len(args)) if info.same_dtype is True else info.same_dtype
    picked = [args[i] for i in positions]
    target = None
    for a in picked:
        if type(a) is Tensor:
            target = a._v.dtype
            break
        if isinstance(a, _var_type()):
            target = np.dtype(a.dtype.as_numpy_dtype)
            break
    weak_ok = True
    if target is None:
        for a in picked:
            d = _dtype_of(a)
            if d is not None:
                target = np.dtype(d)
                break
    if target is None:  # only Python values: the first one decides, as in TF
        target = to_value(picked[0]).dtype
        weak_ok = False
    out = list(args)
    for i, a in enumerate(args):
        t = type(a)
        if t is Tensor or isinstance(a, _var_type()):
            if i in positions:
                got = a._v.dtype if t is Tensor else np.dtype(a.dtype.as_numpy_dtype)
                if got != target:
                    raise _mismatch(info, i, target, got)
        elif i not in positions:
            if t in _PY_SCALARS or t is list or t is tuple:
                out[i] = to_value(a)
        elif t in _PY_SCALARS and weak_ok:
            _check_python_scalar(a, target)
            if t is bool and target != _BOOL:
                # TF converts a Python bool to the tensor's dtype (True is 1);
                # JAX has no weakly typed bool, so it goes on as a weak int.
                out[i] = int(a)
        else:
            out[i] = to_value(a, target)
    return out


def _mismatch(info, i, want, got):
    return errors.invalid_argument(
        f"cannot compute {info.name} as input #{i}(zero-based) was expected to be a "
        f"{_tf_name(want)} tensor but is a {_tf_name(got)} tensor. Cast one side with "
        f"`jaxtape.cast(x, jaxtape.{np.dtype(want).name})`; jaxtape, like TensorFlow, "
        "does not promote dtypes in binary ops.",
        info.name,
    )


def _var_type():
    return _hooks.variable_type or ()


# -- the dispatcher ---------------------------------------------------------------
# `check(op_name, input_values, output)`, run on every op's outputs, or None:
# `jaxtape.debugging.enable_check_numerics` installs one (`set_output_check`).
_output_check: Callable[[str, list, Any], None] | None = None


def set_output_check(check: Callable[[str, list, Any], None] | None) -> None:
    """Installs (or, with None, removes) the check run on every op's outputs."""
    global _output_check
    _output_check = check


def dispatch(info: OpInfo, args: Sequence[Any], params: tuple) -> Any:
    """Runs one op: unwrap `args`, call `info.fn(*values, *params)`, wrap, record."""
    if _guard.pending:  # JAX's compile caches are due a clear: between ops
        _guard.release_if_safe(args)
    if info.same_dtype:
        args = _unify(info, args)
    tapes = _state.tapes
    if tapes:  # variables are read through the tapes (each read a leaf)
        if len(args) == 1 and type(args[0]) is Tensor:  # the common unary case
            objs, vals = list(args), [args[0]._v]
        else:
            # (Loops, not comprehensions: a 3.11 comprehension is a function
            # call, which costs more than the loop for one or two inputs.)
            weak = info.same_dtype  # (after `_unify`: Python scalars stay weak)
            objs, vals = [], []
            for a in args:
                t = type(a)
                if t is Tensor:
                    v = a._v
                elif weak and t in _PY_SCALARS:
                    v = a
                else:
                    a = _weak_input(a) if weak else _slow_input(a)
                    v = a._v if type(a) is Tensor else a
                objs.append(a)
                vals.append(v)
        if info.check is not None:
            checks.run(info.check, vals, params)
        if (
            info.deferrable
            and deferred.enabled
            and _state.device is None
            and not _state.function_depth
        ):
            aval = deferred.out_aval(info, vals, params)
            if aval is not None:
                # A node of the tapes that track an input, computed when asked
                # (the first of them owns it); computed at once when no tape
                # records it (nothing to differentiate, no reason to wait).
                pending = Pending(aval)
                out = Tensor(pending)
                for tape in tapes:
                    tape._record(info, params, objs, out)
                if pending.owner is not None:
                    return out
        vals = [o._value if type(o) is Tensor else o for o in objs]
    else:
        objs = args  # (not recorded: no tape)
        value_of = _weak_value if info.same_dtype else _slow_value
        vals = [a._value if type(a) is Tensor else value_of(a) for a in args]
        if info.check is not None:
            checks.run(info.check, vals, params)
    if _state.device is not None:
        vals = [_placed(v) for v in vals]
    if _state.function_depth:
        if _state.static and _foldable(vals):
            out = _folded(info, vals, params)
        else:
            out = device.run(info.eager, vals, params)
    elif info.compiled is not False:
        out = _run_compiled(info, vals, params)
    else:
        out = device.run(info.eager, vals, params)
    if _output_check is not None:  # `enable_check_numerics` (one global read)
        _output_check(info.name, vals, out)
    if not tapes:
        if type(out) is tuple or type(out) is list or hasattr(out, "_fields"):
            return _wrap(out)
        return Tensor(out)
    out = Tensor(out) if hasattr(out, "dtype") else _wrap(out)
    for tape in tapes:
        tape._record(info, params, objs, out)
    return out


# -- eager ops as compiled calls --------------------------------------------------
# JAX runs an eager `jnp` call through its Python dispatch (35-55 us for a
# reshape or a multiply here); the same body under `jax.jit` is one call into
# its C++ fast path (~11 us) and compiles once per shape, as the primitive
# would. Only deferrable ops: their bodies are the ones a recording tape
# already runs traced, so tracing them changes nothing they compute.
def _run_compiled(info: OpInfo, vals, params):
    compiled = info.compiled
    if compiled is None:
        compiled = info.compiled = jax.jit(_call_body(info.fn), static_argnums=1)
    try:
        return compiled(vals, _Params(params) if params else ())
    except Exception:  # value-dependent, unhashable params, bad input...
        out = device.run(info.eager, vals, params)  # (raises what eager raises)
    info.compiled = False  # it runs eagerly but not compiled: eagerly from now on
    return out


def _call_body(fn):
    def body(vals, params):
        return fn(*vals, *(params.params if params else ()))

    return body


class _Params:
    """An op's parameters as `jax.jit`'s static argument, told apart by type
    too: `2` and `2.0` (or `1` and `True`) are equal keys to `jit`, where
    TF's op may accept one and refuse the other."""

    __slots__ = ("params", "_key")

    def __init__(self, params: tuple):
        self.params = params
        self._key = _typed(params)

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other) -> bool:
        return type(other) is _Params and self._key == other._key


def _typed(p):
    if type(p) is tuple:
        return tuple([_typed(x) for x in p])
    return (type(p), p)


# -- trace-time constant folding ------------------------------------------------
# While jaxtape.function traces, sizes are static (JAX's shapes are), so
# `shape(x)` is a known value there; a small op on such values with no traced
# input is computed at once (and is one too), as TF's graph optimizer folds
# constants: `range(shape(x)[-1])`, `zeros([shape(x)[0], n])` and
# `reshape(y, [shape(x)[0], -1])` work as under TF. Values from `constant`
# are not folded, so `while i < n` over them stays a staged loop.
_FOLD_MAX = 64  # elements, of each input and of the output


def _foldable(vals) -> bool:
    static = _state.static
    derived = False
    for v in vals:
        if isinstance(v, jax.core.Tracer) or getattr(v, "size", 1) > _FOLD_MAX:
            return False
        derived = derived or id(v) in static
    return derived


def _folded(info: OpInfo, vals, params):
    with jax.ensure_compile_time_eval():
        out = device.run(info.eager, vals, params)
    leaves = jax.tree.leaves(out)
    if all(getattr(o, "size", _FOLD_MAX + 1) <= _FOLD_MAX for o in leaves):
        for o in leaves:
            context.mark_static(o)
        return out
    # A large result (`zeros(shape)`) stays in the program, not a constant.
    return device.run(info.eager, vals, params)


def dispatch_raw(info: OpInfo, objs: list, params: tuple):
    """Like `dispatch` for already-converted inputs (Tensors or raw values).

    Used by the autodiff layer for ops whose inputs are recorded constants: a
    Python scalar stays a weakly typed Python scalar.
    """
    if _guard.pending:
        _guard.release_if_safe(objs)
    vals = [o._value if type(o) is Tensor else o for o in objs]
    if _state.device is not None:
        vals = [_placed(v) for v in vals]
    out = _wrap(device.run(info.fn, vals, params))
    for tape in _state.tapes:
        tape._record(info, params, objs, out)
    return out


def _placed(v):
    # Under `jaxtape.device`: arrays move to that device (Python scalars stay weak).
    return device.place(v) if isinstance(v, (jax.Array, np.ndarray)) else v


def _slow_value(a):
    t = type(a)
    if t in _PY_SCALARS or t is list or t is tuple or t is TensorShape:
        return to_value(a)
    if isinstance(a, _var_type()):
        return a._read_raw()
    _check_composite(a)
    return a  # NumPy / jax arrays keep their dtype


def _weak_value(a):
    # After `_unify`: Python scalars are weakly typed on purpose.
    if type(a) in _PY_SCALARS:
        return a
    if isinstance(a, _var_type()):
        return a._read_raw()
    _check_composite(a)
    return a


def _slow_input(a):
    if isinstance(a, _var_type()):
        return _hooks.read_variable(a)
    t = type(a)
    if t in _PY_SCALARS or t is list or t is tuple or t is TensorShape:
        return to_value(a)
    _check_composite(a)
    return a


def _weak_input(a):
    if isinstance(a, _var_type()):
        return _hooks.read_variable(a)
    _check_composite(a)
    return a


def _wrap(out):
    if isinstance(out, tuple):
        items = [_wrap(o) for o in out]
        return type(out)(*items) if hasattr(out, "_fields") else tuple(items)
    if isinstance(out, list):
        return [_wrap(o) for o in out]
    return Tensor(out)


# -- op definition ----------------------------------------------------------------
class _ListCall:
    """Primitive for ops whose first input is a list (`concat`, `stack`, `add_n`)."""

    __slots__ = ("body", "n_params", "__name__")

    def __init__(self, body, n_params):
        self.body = body
        self.n_params = n_params
        self.__name__ = body.__name__

    def __call__(self, *args):
        k = len(args) - self.n_params
        return self.body(list(args[:k]), *args[k:])


_P = ParamSpec("_P")
_R = TypeVar("_R", covariant=True)


class Op(Protocol[_P, _R]):
    """A public op, to a type checker: called with its body's parameters."""

    __wrapped__: Callable[_P, Any]  # the pure body (`op.__wrapped__(x)` on arrays)
    _jaxtape_op: OpInfo

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R: ...


class _OpDecorator(Protocol):
    """`op(...)`'s result, to a type checker: the public op has its body's
    parameters and returns Tensors where the body returns arrays (a list of
    Tensors for a list of arrays; a tuple or namedtuple of them, or a body
    that returns either: `Any`)."""

    @overload
    def __call__(self, body: Callable[_P, _ArrayResult]) -> Op[_P, Tensor]: ...
    @overload
    def __call__(self, body: Callable[_P, list[Any]]) -> Op[_P, list[Tensor]]: ...
    @overload
    def __call__(self, body: Callable[_P, Any]) -> Op[_P, Any]: ...


_ArrayResult = jax.Array | np.ndarray | np.generic | bool | int | float | complex


def op(
    name: str | None = None,
    *,
    inputs: tuple[str, ...] | str | None = None,
    same_dtype: bool | tuple[int, ...] = False,
    differentiable: bool = True,
    jit: bool = False,
    defer: bool = True,
    check: Callable[..., None] | None = None,
) -> _OpDecorator:
    """Decorator: makes a public op of a pure body `body(*inputs, *params)`.

    Args:
      name: the TF op name used in error messages (`"AddV2"`).
      inputs: the tensor-valued parameters, in order; a single string names one
        list-valued input (`"values"` for `concat`). Default: the parameters
        without a default value. All other parameters except `name` are static
        params (hashable: axis, shape, dtype...).
      same_dtype: apply TF's binary-op dtype rule to the inputs (True), or to
        the inputs at these positions (a tuple: `where`'s `x` and `y`).
      differentiable: False for ops whose outputs carry no gradient (argmax,
        comparisons, round); such ops are never recorded, as in TF.
      jit: compile the eager call of a body made of several jnp calls (a
        fused layer, a loss) so that it is one XLA dispatch; tapes still
        record the plain body.
      defer: whether a recording tape may run the op lazily (`deferred`).
      check: TF's run-time argument check, `check(xp, *inputs, *params)` with
        `xp` NumPy (eager) or jnp (compiled), calling `checks.require`.
    """

    def decorate(body: Callable[..., Any]) -> Any:
        sig = inspect.signature(body)
        names = [p for p in sig.parameters]
        listed = isinstance(inputs, str)
        if inputs is None:
            in_names = [
                p
                for p, v in sig.parameters.items()
                if v.default is inspect.Parameter.empty
            ]
        else:
            in_names = [inputs] if listed else list(inputs)
        if not in_names:
            raise TypeError(f"{body.__name__}: no tensor inputs; pass `inputs=`")
        param_names = [p for p in names if p not in in_names and p != "name"]
        if names[: len(in_names)] != in_names:
            raise TypeError(f"{body.__name__}: inputs must be the leading parameters")
        fn = _ListCall(body, len(param_names)) if listed else body
        eager = None
        if jit:  # a body of several jnp calls: one compiled dispatch per call
            n_in = len(in_names)
            static = tuple(range(n_in, n_in + len(param_names)))
            eager = jax.jit(fn, static_argnums=static)
        info = OpInfo(
            fn,
            name or body.__name__,
            same_dtype,
            differentiable,
            eager,
            defer and differentiable,  # a tape defers only what it records
            check,
        )
        env: dict[str, Any] = {"_dispatch": dispatch, "_info": info}
        sig_parts = []
        for p, v in sig.parameters.items():
            if v.default is inspect.Parameter.empty:
                sig_parts.append(p)
            else:
                env[f"_d_{p}"] = v.default
                sig_parts.append(f"{p}=_d_{p}")
        ins = (
            "_ins"  # (a list input is read once: it may be an iterator)
            if listed
            else "(" + "".join(f"{n}, " for n in in_names) + ")"
        )
        ps = "(" + "".join(f"{n}, " for n in param_names) + ")"
        # (A `try` costs nothing in 3.11 until it catches: a composite input.)
        src = (
            f"def {body.__name__}({', '.join(sig_parts)}):\n"
            + (f"    _ins = tuple({in_names[0]})\n" if listed else "")
            + "    try:\n"
            f"        return _dispatch(_info, {ins}, {ps})\n"
            "    except _CompositeInput as e:\n"
            "        _e = e  # (the handler runs outside the `except`: no chaining)\n"
            f"    return _composite(_info, {ins}, {ps}, _e)\n"
        )
        env["_CompositeInput"] = CompositeInput
        env["_composite"] = _composite_call
        exec(compile(src, f"<jaxtape op {body.__name__}>", "exec"), env)
        public = env[body.__name__]
        public.__doc__ = body.__doc__
        public.__module__ = body.__module__
        public.__qualname__ = body.__qualname__
        public.__wrapped__ = body
        public._jaxtape_op = info
        return public

    return decorate


# -- user-registered JAX functions -----------------------------------------------
class _PositionalCall:
    """Primitive for a registered JAX function: static args are params, by position."""

    __slots__ = ("fn", "__name__")

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "jax_function")

    def __eq__(self, other):
        return isinstance(other, _PositionalCall) and other.fn is self.fn

    def __hash__(self):
        return hash(self.fn)

    def __call__(self, *args):
        *vals, layout, statics, kwargs = args
        it_v, it_s = iter(vals), iter(statics)
        full = [next(it_v) if is_input else next(it_s) for is_input in layout]
        return self.fn(*full, **dict(kwargs))


def _is_array_input(a) -> bool:
    return (
        type(a) is Tensor
        or isinstance(a, (jax.Array, np.ndarray, np.generic))
        or isinstance(a, _var_type())
    )


@overload
def register_op(
    fn: Callable[..., Any], *, name: str | None = None, differentiable: bool = True
) -> Callable[..., Any]: ...
@overload
def register_op(
    fn: None = None, *, name: str | None = None, differentiable: bool = True
) -> Callable[[Callable[..., Any]], Callable[..., Any]]: ...
def register_op(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    differentiable: bool = True,
) -> Any:
    """Registers a pure JAX function as a recorded jaxtape op.

    Positional arguments that are Tensors, Variables or arrays become recorded
    inputs; every other argument (Python numbers, tuples, strings, keyword
    arguments) is a static parameter. Works with `jax.custom_vjp` functions:
    the tape differentiates through whatever JAX differentiates.

    >>> @jaxtape.register_op
    ... def smooth_abs(x, eps=1e-3):
    ...     return jnp.sqrt(x * x + eps)
    """

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        prim = _PositionalCall(f)
        info = OpInfo(prim, name or prim.__name__, False, differentiable)

        def public(*args: Any, **kwargs: Any) -> Any:
            layout = tuple(_is_array_input(a) for a in args)
            ins = tuple(a for a, i in zip(args, layout) if i)
            statics = tuple(_freeze(a) for a, i in zip(args, layout) if not i)
            return dispatch(
                info,
                ins,
                (
                    layout,
                    statics,
                    tuple(sorted((k, _freeze(v)) for k, v in kwargs.items())),
                ),
            )

        public.__name__ = prim.__name__
        public.__doc__ = getattr(f, "__doc__", None)
        vars(public).update(__wrapped__=f, _jaxtape_op=info)
        return public

    return decorate(fn) if fn is not None else decorate


def _freeze(v):
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    return v
