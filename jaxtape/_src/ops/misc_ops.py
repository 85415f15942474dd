"""TF utilities: print, debugging asserts. Layer L1 (py_function: script_ops)."""

from __future__ import annotations

import sys

import jax
import jax.core
import jax.numpy as jnp
import numpy as np

from jaxtape._src.core import checks, context, dispatch, dtypes, errors
from jaxtape._src.core.dispatch import to_value
from jaxtape._src.core.tensor import Tensor, TensorShape
from jaxtape._src.ops import array_ops, math_extra_ops, nest

newaxis = None


def _host(x):
    return np.asarray(to_value(x))


def print(
    *inputs,
    output_stream=None,
    sep=" ",
    end="\n",
    summarize=3,  # noqa: A001
    name=None,
):
    """Prints tensors and Python values (TF's `tf.print`): to stderr by default.

    Args:
      *inputs: Tensors, Variables, Python values, and (nested) lists, tuples
        and dicts of them. A string prints as itself, any other Python value
        as `pprint.pformat` writes it (dicts in sorted key order).
      output_stream: `sys.stderr` (default), `sys.stdout`, a `logging` level or
        function (`logging.info`, `logging.WARNING`), a path `"file://..."` to
        append to, or (jaxtape extension) any object with a `write` method.
      sep: The string between inputs.
      end: The string after the last input.
      summarize: How many entries at each end of every dimension a tensor
        shows; `...` stands for the rest. None means 3, -1 all of them.
      name: Accepted for TensorFlow compatibility; ignored.

    A tensor prints as TF's C++ `SummarizeValue` writes it: brackets and spaces
    without commas, floats in the fewest of 6 or 9 digits (15 or 17 for
    float64) that read back to the same value (`0.1`, `0.333333343`), bools as
    `1`/`0`. Inside `jaxtape.function` it prints each time the compiled
    program runs, as `tf.print` does inside `tf.function`.

    >>> import sys
    >>> jaxtape.print("loss:", jaxtape.constant([0.1, 1 / 3]), output_stream=sys.stdout)
    loss: [0.1 0.333333343]

    Differences from TensorFlow: complex tensors print their values (TF prints
    `?`); an OrderedDict's tensors print against their own keys (TF pairs them
    in sorted key order); TF's C++ writes to the process's stderr/stdout file
    descriptors, jaxtape to Python's `sys.stderr`/`sys.stdout`.
    """
    del name  # accepted for TF compatibility
    template, placeholder, tensors = _print_template(inputs, sep)
    values = [to_value(t) for t in tensors]  # (a Variable: its current value)
    # Strings (object arrays of bytes) are host values, known while tracing:
    # kept here, not passed through the run-time callback.
    strings = {
        i: v
        for i, v in enumerate(values)
        if isinstance(v, np.ndarray) and v.dtype.kind == "O"
    }
    values = [v for i, v in enumerate(values) if i not in strings]
    limit = 3 if summarize is None else int(summarize)
    _print_stream(output_stream)  # TF's error for an unknown stream, at the call

    def emit(*arrays):
        pieces = template.split(placeholder)
        given = iter(arrays)
        arrays = [
            strings[i] if i in strings else next(given)
            for i in range(len(arrays) + len(strings))
        ]
        texts = [_summarize_value(np.asarray(a), limit) for a in arrays]
        line = pieces[0] + "".join(t + p for t, p in zip(texts, pieces[1:]))
        _write(_print_stream(output_stream), line + end)

    # Inside a function it prints when the program runs (each executed loop
    # iteration or branch, in order), even with no tensor to print, as TF.
    if context.state.function_depth or any(
        isinstance(v, jax.core.Tracer) for v in values
    ):
        jax.debug.callback(emit, *values, ordered=True)  # at run time
    else:
        emit(*values)


def _is_printed_tensor(x) -> bool:
    # (a Tensor, a StringTensor or a Variable)
    return isinstance(x, Tensor) or hasattr(x, "_read_raw")


def _print_template(inputs, sep):
    """TF's `print_v2` template: each input formatted with a placeholder for
    every tensor in it; returns (template, placeholder, tensors in its order)."""
    import pprint
    import random

    def leaves(x):
        flat, treedef = jax.tree_util.tree_flatten(
            x, is_leaf=lambda v: v is None or _is_printed_tensor(v)
        )
        return flat, treedef

    def tensor_free(x):
        flat, treedef = leaves(x)
        return jax.tree_util.tree_unflatten(
            treedef, ["" if _is_printed_tensor(v) else v for v in flat]
        )

    free = " ".join(
        x if isinstance(x, str) else pprint.pformat(tensor_free(x)) for x in inputs
    )
    placeholder, rng = "{}", random.Random(5)  # TF's: absent from the text
    while placeholder in free:
        placeholder += str(rng.randint(0, 9))
    templates, tensors = [], []
    for x in inputs:
        if isinstance(x, str):
            templates.append(x)
            continue
        flat, _ = leaves(x)
        tensors.extend(v for v in flat if _is_printed_tensor(v))
        marked = jax.tree_util.tree_unflatten(
            leaves(x)[1],
            [placeholder if _is_printed_tensor(v) else v for v in flat],
        )
        templates.append(pprint.pformat(_in_key_order(x, marked)))
    template = sep.join(templates).replace(f"'{placeholder}'", placeholder)
    return template, placeholder, tensors


def _in_key_order(structure, rebuilt):
    """`rebuilt` with the dict key order of `structure` (JAX's trees sort it)."""
    from jaxtape._src.core.tensor import in_key_order, key_order

    return in_key_order(rebuilt, key_order(structure))


def _print_stream(output_stream):
    """Where `print` writes: an object with `write`, or a function of the line."""
    import logging

    if output_stream is None or output_stream is sys.stderr:
        return sys.stderr
    if output_stream is sys.stdout:
        return sys.stdout
    if isinstance(output_stream, str):
        if output_stream.startswith("file://"):
            return _AppendToFile(output_stream[len("file://") :])
    elif hasattr(output_stream, "write"):
        return output_stream
    levels: dict[object, int] = {
        logging.info: logging.INFO,
        logging.warning: logging.WARNING,
        logging.warn: logging.WARNING,
        logging.error: logging.ERROR,
    }
    level = levels.get(output_stream, output_stream)
    if level in (logging.INFO, logging.WARNING, logging.ERROR):
        return _LogTo(level)
    raise ValueError(
        f"Unsupported output stream, logging level, or file.{output_stream}. "
        "Supported streams are sys.stdout, sys.stderr, logging.info, "
        "logging.warning, logging.error. File needs to be in the form of "
        "'file://<filepath>'."
    )


class _AppendToFile:
    def __init__(self, path):
        self.path = path

    def write(self, text):
        with open(self.path, "a") as f:
            f.write(text)


class _LogTo:
    def __init__(self, level):
        self.level = level

    def write(self, text):
        import logging

        logging.getLogger("jaxtape").log(self.level, text.rstrip("\n"))


def _write(stream, text):
    stream.write(text)
    if hasattr(stream, "flush"):
        stream.flush()


def _summarize_value(arr, summarize):
    """TF's `Tensor::SummarizeValue(summarize, print_v2=True)` for one array."""
    n = arr.size
    limit = n if summarize < 0 else min(summarize, n)
    element = _element_text(arr.dtype)
    flat = arr.reshape(-1)
    if arr.ndim == 0:
        return element(flat[0]) if limit else "..."
    out: list[str] = []
    _print_dim(0, arr.shape, limit, flat, 0, element, out)
    return "".join(out)


def _print_dim(dim, shape, ends, flat, start, element, out):
    """TF's `PrintOneDimV2`: `ends` entries at each end of every dimension."""
    if dim == len(shape):
        out.append(element(flat[start]))
        return
    out.append("[")
    count = shape[dim]
    stride = int(np.prod(shape[dim + 1 :], dtype=np.int64))
    spacing = (
        " "
        if dim == len(shape) - 1
        else "\n" * (len(shape) - dim - 1) + " " * (dim + 1)
    )
    for i in range(min(ends, count)):
        if i:
            out.append(spacing)
        _print_dim(dim + 1, shape, ends, flat, start + stride * i, element, out)
    if count > 2 * ends:
        out.append(spacing + "...")
    for i in range(max(ends, count - ends), count):
        out.append(spacing)
        _print_dim(dim + 1, shape, ends, flat, start + stride * i, element, out)
    out.append("]")


def _element_text(dtype):
    """How TF's C++ writes one element of `dtype` (`strings::StrAppend`)."""
    if dtype == np.bool_:
        return lambda v: "1" if v else "0"
    if dtype.kind in "iu":
        return lambda v: str(int(v))
    if dtype == np.float64:
        return lambda v: _float_text(float(v), 15, 17, float)
    if jnp.issubdtype(dtype, np.floating):  # float32; 16-bit ones as float32
        return lambda v: _float_text(float(v), 6, 9, np.float32)
    if dtype.kind == "c":
        part = np.float64 if dtype == np.complex128 else np.float32
        return lambda v: (
            f"({_element_text(np.dtype(part))(v.real)},"
            f"{_element_text(np.dtype(part))(v.imag)})"
        )
    if dtype.kind == "O":  # strings (bytes), quoted as TF's print_v2 does
        return lambda v: '"' + bytes(v).decode("utf-8", "replace") + '"'
    return str


def _float_text(value, digits, max_digits, parse):
    """TF's `FloatToBuffer`/`DoubleToBuffer`: `%.6g` (or `%.15g`) when it reads
    back to the same value, else `%.9g` (`%.17g`); NaN keeps its sign."""
    if value != value:
        return "-nan" if np.signbit(value) else "nan"
    text = f"{value:.{digits}g}"  # (C's `%.*g`)
    if parse(text) != parse(value):
        text = f"{value:.{max_digits}g}"
    return text


def _fail(message, default):
    raise errors.InvalidArgumentError(
        None, None, (message + "\n" if message else "") + default
    )


def _traced(*values) -> bool:
    return any(isinstance(v, jax.core.Tracer) for v in values)


def _check_traced(bad, message, text, *operands):
    """Inside jaxtape.function: a run-time check (`core/checks`), raised after
    the call with the first failing element; elsewhere traced values pass."""
    if not (context.state.function_depth and checks.compiled_checks):
        return
    shape = jnp.shape(bad)
    flat = [jnp.ravel(jnp.broadcast_to(o, shape)) for o in operands]
    where = f" at index {checks.index_text(len(shape))}" if shape else ""
    names = ", ".join(f"{n} = {{}}" for n in "xy"[: len(operands)])
    checks.require(
        jnp,
        bad,
        None,
        (message + "\n" if message else "")
        + text
        + where
        + (": " + names) * bool(names),
        *checks.position(shape),
        *[(lambda xp, p, f=f: f[p]) for f in flat],
    )


def assert_equal(x, y, message=None, summarize=None, name=None):
    """Raises `InvalidArgumentError` unless `x == y` element-wise.

    Inside `jaxtape.function` the check runs with the program and the call
    raises (TF's assert op); eagerly it raises at once.
    """
    a, b = to_value(x), to_value(y)
    try:
        np.broadcast_shapes(np.shape(a), np.shape(b))
    except ValueError:
        _fail(message, f"Shapes {np.shape(a)} and {np.shape(b)} are incompatible")
    if _traced(a, b):
        _check_traced(a != b, message, "Condition x == y did not hold", a, b)
        return
    a, b = np.asarray(a), np.asarray(b)
    if not np.all(a == b):
        _fail(message, f"Condition x == y did not hold element-wise: x = {a}, y = {b}")


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """Raises `InvalidArgumentError` unless `|x - y| <= atol + rtol * |y|`."""
    a, b = to_value(x), to_value(y)
    eps = np.finfo(a.dtype).eps if np.dtype(a.dtype).kind in "fc" else 0
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    text = f"x and y not equal to tolerance rtol = {rtol}, atol = {atol}"
    if _traced(a, b):
        bad = ~(jnp.abs(a - b) <= atol + rtol * jnp.abs(b))
        _check_traced(bad, message, text, a, b)
        return
    a, b = np.asarray(a), np.asarray(b)
    if not np.all(np.abs(a - b) <= atol + rtol * np.abs(b)):
        _fail(message, f"{text}: x = {a}, y = {b}")


def _assert_cmp(op, text):
    def check(x, y, message=None, summarize=None, name=None):
        a, b = to_value(x), to_value(y)
        if _traced(a, b):
            bad = ~op(a, b)
            _check_traced(bad, message, f"Condition x {text} y did not hold", a, b)
            return
        a, b = np.asarray(a), np.asarray(b)
        if not np.all(op(a, b)):
            _fail(
                message,
                f"Condition x {text} y did not hold element-wise: x = {a}, y = {b}",
            )

    check.__name__ = f"assert_{op.__name__}"
    check.__doc__ = f"Raises `InvalidArgumentError` unless `x {text} y` element-wise."
    return check


assert_less = _assert_cmp(jnp.less, "<")
assert_less_equal = _assert_cmp(jnp.less_equal, "<=")
assert_greater = _assert_cmp(jnp.greater, ">")
assert_greater_equal = _assert_cmp(jnp.greater_equal, ">=")


def _assert_sign(op, text):
    def check(x, message=None, summarize=None, name=None):
        a = to_value(x)
        zero = np.zeros((), np.dtype(a.dtype))
        if _traced(a):
            bad = ~getattr(jnp, op.__name__)(a, zero)
            _check_traced(bad, message, f"Condition x {text} 0 did not hold", a)
            return None
        a = np.asarray(a)
        if not np.all(op(a, zero)):
            _fail(
                message,
                f"Condition x {text} 0 did not hold element-wise: x = {a}",
            )
        return None

    check.__doc__ = f"Raises `InvalidArgumentError` unless `x {text} 0` element-wise."
    return check


assert_positive = _assert_sign(np.greater, ">")
assert_negative = _assert_sign(np.less, "<")
assert_non_negative = _assert_sign(np.greater_equal, ">=")
assert_non_positive = _assert_sign(np.less_equal, "<=")
for _name, _fn in (
    ("assert_positive", assert_positive),
    ("assert_negative", assert_negative),
    ("assert_non_negative", assert_non_negative),
    ("assert_non_positive", assert_non_positive),
):
    _fn.__name__ = _fn.__qualname__ = _name


def assert_none_equal(x, y, summarize=None, message=None, name=None):
    """Raises `InvalidArgumentError` unless `x != y` element-wise."""
    a, b = to_value(x), to_value(y)
    if _traced(a, b):
        _check_traced(a == b, message, "Condition x != y did not hold", a, b)
        return None
    a, b = np.asarray(a), np.asarray(b)
    if np.any(a == b):
        _fail(message, f"Condition x != y did not hold: x = {a}, y = {b}")
    return None


def assert_all_finite(x, message, name=None):
    """Returns `x` if it has no NaN or Inf, else raises `InvalidArgumentError`
    (TF 2's `tf.debugging.assert_all_finite`, a `check_numerics`)."""
    return check_numerics(x, message)


def _dtype_of(x):
    return dtypes.of_array(np.dtype(to_value(x).dtype))


def assert_integer(x, message=None, name=None):
    """Raises `TypeError` unless `x` has an integer dtype (a static check)."""
    dt = _dtype_of(x)
    if not dt.is_integer:
        raise TypeError(
            (message + " " if message else "")
            + f'Expected "x" to be integer type.  Found: tensor of dtype {dt!r}'
        )


def assert_type(tensor, tf_type, message=None, name=None):
    """Raises `TypeError` unless `tensor`'s dtype is `tf_type` (static)."""
    dt, want = _dtype_of(tensor), dtypes.as_dtype(tf_type)
    if dt != want:
        raise TypeError(
            (message + " " if message else "")
            + f"tensor must be of type {want.name}; got {dt.name}"
        )


def assert_scalar(tensor, message=None, name=None):
    """Raises `ValueError` unless `tensor` is a scalar (static)."""
    shape = np.shape(to_value(tensor))
    if shape != ():
        raise ValueError(
            (message + " " if message else "") + f"Expected scalar shape, saw shape: "
            f"{shape}."
        )


def assert_rank_at_least(x, rank, message=None, name=None):
    """Raises `ValueError` unless `x`'s rank is at least `rank` (static)."""
    shape = np.shape(to_value(x))
    if len(shape) < int(rank):
        raise ValueError(
            (message + " " if message else "")
            + f"Tensor must have rank at least {int(rank)}.  Received rank "
            f"{len(shape)}, shape {shape}"
        )


def assert_rank_in(x, ranks, message=None, name=None):
    """Raises `ValueError` unless `x`'s rank is one of `ranks` (static)."""
    shape = np.shape(to_value(x))
    ranks = tuple(int(r) for r in ranks)
    if len(shape) not in ranks:
        raise ValueError(
            (message + " " if message else "")
            + f"Tensor must have rank in {ranks}.  Received rank {len(shape)}, "
            f"shape {shape}"
        )


def assert_same_float_dtype(tensors=None, dtype=None):
    """The common float dtype of `tensors` (and `dtype`): `ValueError` if they
    differ or it is not a float type; float32 when there is none."""
    want = None if dtype is None else dtypes.as_dtype(dtype)
    first = None
    for t in tensors or ():
        dt = _dtype_of(t)
        if want is None:
            want, first = dt, t
        elif dt != want:
            raise ValueError(
                f"{t}, type={dt!r}, must be of the same type ({want!r})"
                + (f" as {first}." if first is not None else ".")
            )
    if want is None:
        return dtypes.float32
    if not want.is_floating:
        raise ValueError(f"Expected floating point type, got {want!r}.")
    return want


def assert_proper_iterable(values):
    """Raises `TypeError` if `values` is a tensor, array or string rather than
    an iterable of them (TF's check against accidental iteration)."""
    if isinstance(values, (Tensor, np.ndarray, str, bytes)) or (
        context.hooks.variable_type is not None
        and isinstance(values, context.hooks.variable_type)
    ):
        raise TypeError(
            'Expected argument "values" to be a "proper" iterable.  Found: '
            f"{type(values)}"
        )
    if not hasattr(values, "__iter__"):
        raise TypeError(
            f'Expected argument "values" to be iterable.  Found: {type(values)}'
        )


def is_numeric_tensor(tensor) -> bool:
    """Whether `tensor` is a Tensor of a numeric dtype (TF's list of them)."""
    if type(tensor) is not Tensor:
        return False
    dt = tensor.dtype
    return dt.is_floating or dt.is_integer or dt.is_complex


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TF's name
    """Raises `InvalidArgumentError` with `data` unless `condition` is True
    (TF's `tf.debugging.Assert`).

    Args:
      condition: A scalar boolean Tensor or Python bool.
      data: A list of strings, Python values and Tensors to show on failure.
      summarize: How many entries of each tensor to show (default 3 per end).
      name: Accepted for TensorFlow compatibility; ignored.

    Eagerly it raises at once with TF's eager text ("Expected '...' to be
    true. Summarized data: ..."); inside `jaxtape.function` it is a run-time
    check of the program (the call raises TF's graph text, "assertion failed:
    [...]"). Returns None, as TF 2 does.

    Differences from TensorFlow: inside a function, a tensor in `data` prints
    with NumPy's text (`[1 2]`, as TF's), nested ones on several lines.
    """
    del name  # accepted for TF compatibility
    pred = to_value(condition)
    if np.shape(pred) != ():
        raise ValueError(
            "The truth value of an array with more than one element is ambiguous. "
            "Use a.any() or a.all()"
        )
    if not isinstance(data, (list, tuple)):
        data = [data]
    if _traced(pred):
        if not (context.state.function_depth and checks.compiled_checks):
            return None
        template, fields = [], []
        for item in data:
            if isinstance(item, str):
                template.append(f"[{item}]")
                continue
            value = to_value(item)
            if _traced(value) or type(item) is Tensor:
                template.append("{}" if np.ndim(value) else "[{}]")
                fields.append(lambda xp, p, v=value: v)
            else:
                template.append(f"[{np.asarray(value)}]")
        checks.require(
            jnp,
            ~jnp.asarray(pred, bool),
            None,
            "assertion failed: " + " ".join(template),
            *fields,
        )
        return None
    if bool(np.asarray(pred)):
        return None
    limit = 3 if summarize is None else int(summarize)
    shown = []
    for item in data:
        if isinstance(item, str):
            shown.append(repr(item.encode()))
        elif type(item) is Tensor or hasattr(item, "_read_raw"):
            flat = np.ravel(np.asarray(to_value(item)))
            if limit >= 0 and flat.size > 2 * limit:
                flat = [*flat[:limit], "...", *flat[-limit:]]
            shown.append(", ".join(str(v) for v in flat))
        else:
            shown.append(str(item))
    value = np.asarray(pred)
    text = f"jaxtape.Tensor({value}, shape={value.shape}, dtype={value.dtype.name})"
    raise errors.InvalidArgumentError(
        None,
        "Assert",
        f"Expected '{text}' to be true. Summarized data: " + "\n".join(shown),
    )


def assert_rank(x, rank, message=None, name=None):
    """Raises `ValueError` unless `x` has the given rank (TF's static check)."""
    if np.ndim(to_value(x)) != int(rank):
        raise ValueError(
            (message or "") + f" Tensor must have rank {int(rank)}; "
            f"received rank {np.ndim(to_value(x))}."
        )


def check_numerics(tensor, message, name=None):
    """Returns `tensor` if it has no NaN or Inf; else raises `InvalidArgumentError`.

    Inside `jaxtape.function` the check runs with the program (the call raises).
    """
    value = to_value(tensor)
    if np.dtype(value.dtype).kind not in "fc":
        return tensor
    if _traced(value):
        _check_traced(~jnp.isfinite(value), None, f"{message} : Tensor had NaN or Inf")
        return tensor
    arr = np.asarray(value)
    if not np.all(np.isfinite(arr)):
        kind = "NaN" if np.any(np.isnan(arr)) else "Inf"
        _fail(None, f"{message} : Tensor had {kind} values")
    return tensor


class IndexedSlices:
    """Rows of a dense tensor: `dense[indices[i], ...] = values[i, ...]`, TF's
    `IndexedSlices` (the gradient of a Variable used only through `gather`).

    `values`, `indices` and `dense_shape` (None, or a 1-D integer Tensor) are
    Tensors. As TF's, it has no arithmetic operators but `-`, no `numpy()`
    (`np.asarray(slices)` is a 0-d object array), and every op converts it to
    its dense Tensor first (`jaxtape.convert_to_tensor(slices)`), summing
    repeated indices (`unsorted_segment_sum`). It is a pytree, so it crosses
    `jaxtape.function` and `jax.jit` boundaries.

    >>> s = jaxtape.IndexedSlices(jaxtape.ones([2, 2]), [1, 1], [3, 2])
    >>> jaxtape.convert_to_tensor(s).numpy()
    array([[0., 0.],
           [2., 2.],
           [0., 0.]], dtype=float32)

    Differences from TensorFlow: the constructor converts NumPy values and
    lists to Tensors (TF keeps them as given); `to_dense()` (jaxtape's) is
    `convert_to_tensor`.
    """

    __slots__ = ("_values", "_indices", "_dense_shape", "_static")

    def __init__(self, values, indices, dense_shape=None):
        self._values = _as_tensor(values)
        self._indices = _as_tensor(indices)
        # (Known from the argument: converted, it is traced inside jaxtape.function.)
        self._static = _known_dims(dense_shape)
        self._dense_shape = None if dense_shape is None else _as_tensor(dense_shape)

    @classmethod
    def _from_parts(cls, values, indices, dense_shape, static=None) -> IndexedSlices:
        """From pytree children (any leaves JAX hands back: no conversion);
        `static`: the dense shape as Python ints, when known."""
        out = object.__new__(cls)
        out._values, out._indices, out._dense_shape = values, indices, dense_shape
        out._static = static
        return out

    values = property(lambda self: self._values, doc="The rows (a Tensor).")
    indices = property(lambda self: self._indices, doc="Their row indices (1-D).")
    dense_shape = property(
        lambda self: self._dense_shape, doc="The dense tensor's shape, or None."
    )

    @property
    def dtype(self):
        """The dtype of `values`."""
        return self._values.dtype

    @property
    def shape(self) -> TensorShape:
        """The dense shape as a `TensorShape` (unknown without `dense_shape`)."""
        if self._dense_shape is None:
            return TensorShape(None)
        if self._static is not None:
            return TensorShape(list(self._static))
        return TensorShape([None] * len(self._static or to_value(self._dense_shape)))

    @property
    def device(self) -> str:
        """The device of `values`."""
        return self._values.device

    @property
    def name(self) -> str:
        """`values.name` (undefined eagerly, as in TF)."""
        return self._values.name

    def to_dense(self) -> Tensor:
        """The dense Tensor (jaxtape's name for `convert_to_tensor(self)`)."""
        return _to_dense(self)

    def __neg__(self) -> IndexedSlices:
        return IndexedSlices._from_parts(
            -self._values, self._indices, self._dense_shape, self._static
        )

    def __str__(self) -> str:
        shape = self._dense_shape
        shape = "" if shape is None else f", dense_shape={shape!s}"
        return (
            f"IndexedSlices(indices={self._indices!s}, values={self._values!s}{shape})"
        )


def _as_tensor(x):
    if isinstance(x, Tensor) or isinstance(x, context.hooks.variable_type or ()):
        return x
    return Tensor(jnp.asarray(to_value(x)))


def _known_dims(dense_shape) -> tuple | None:
    """`dense_shape` as Python ints, or None (absent or traced)."""
    if dense_shape is None:
        return None
    value = to_value(dense_shape)
    if isinstance(value, jax.core.Tracer):
        return None
    return tuple(int(d) for d in np.asarray(value))


def _to_dense(value: IndexedSlices, dtype=None) -> Tensor:
    """TF's conversion: the rows summed into a zero tensor of `dense_shape`."""
    if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
        raise ValueError(
            f"Incompatible tensor conversion requested to `dtype` "
            f"{dtypes.as_dtype(dtype).name} for IndexedSlices ({value}) with dtype "
            f"{value.dtype.name}"
        )
    if value.dense_shape is None:
        raise ValueError(
            "Tensor conversion requested for IndexedSlices for argument `value` "
            f"without dense_shape: {value!s}"
        )
    rows = value._static[0] if value._static else array_ops.gather(value.dense_shape, 0)
    return math_extra_ops.unsorted_segment_sum(value.values, value.indices, rows)


def _convert_indexed_slices(value, dtype=None, name=None, as_ref=False):
    del name, as_ref  # (TF's conversion-function signature)
    return _to_dense(value, dtype)


def _dense_call(info, ins, params):
    """An op given IndexedSlices inputs runs on their dense Tensors, as TF's."""
    ins = tuple(_to_dense(a) if type(a) is IndexedSlices else a for a in ins)
    return dispatch.dispatch(info, ins, params)


dispatch.register_conversion((IndexedSlices,), _convert_indexed_slices, 100)
dispatch.register_composite(IndexedSlices, _dense_call)


def _flatten_slices(s: IndexedSlices):
    """Pytree children `(values, indices)`; a known `dense_shape` is static (so
    a traced IndexedSlices still converts to a dense Tensor), else a child."""
    shape = s._dense_shape
    if s._static is None or shape is None:
        return (s._values, s._indices, shape), None
    return (s._values, s._indices), (s._static, shape.dtype)


def _unflatten_slices(static, parts) -> IndexedSlices:
    if static is None:
        return IndexedSlices._from_parts(*parts)
    dims, dtype = static
    shape = Tensor(jnp.asarray(np.asarray(dims, dtype.as_numpy_dtype)))
    return IndexedSlices._from_parts(parts[0], parts[1], shape, dims)


jax.tree_util.register_pytree_node(IndexedSlices, _flatten_slices, _unflatten_slices)
nest.register_composite(
    IndexedSlices,
    lambda s: (
        [s.values, s.indices] + ([] if s.dense_shape is None else [s.dense_shape])
    ),
    lambda s, parts: IndexedSlices._from_parts(
        parts[0], parts[1], parts[2] if len(parts) > 2 else None, s._static
    ),
)
