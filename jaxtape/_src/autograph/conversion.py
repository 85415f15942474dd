"""AutoGraph: converts Python control flow on tensors for `jaxtape.function`. L5.

`jaxtape.function(autograph=True)` (the default, as TF's) traces the Python
function converted: `if`/`elif`/`else`, `while`, `for`, `break`, `continue`,
`return` inside them, `and`/`or`/`not`, `x if c else y` and `assert` become
calls of `operators.py`, which stage them as `control_flow.cond`/`while_loop`
when they depend on a traced Tensor and run them as Python otherwise.
Functions called from converted code are converted too, when they are user
code (TF's `converted_call`): jaxtape, JAX, NumPy and the other libraries
(`_LIBRARIES`) are called as they are.

Why diastatic-malt (the converter) and not a converter of our own: malt is
TF's own AutoGraph converter (`tensorflow/python/autograph`), kept as a
standalone package by Xanadu for Catalyst, with the TF operators stripped
out, so that each framework supplies its own. Using it gives TF's
conversion itself: the same static analysis (which variables a branch or a
loop changes, which are undefined, liveness), the same canonicalization of
`break`/`continue`/`return`, TF's generated code (`to_code` prints what
`tf.autograph.to_code` prints), its error rewriting ("in user code: ...")
and its limitations, which are TF's documented ones. A converter of our own
would reimplement ~13k lines of analysis and transforms and drift from TF;
the part that is jaxtape's is the operators (lowering, TF's error texts),
which stay ours either way. Coverage: the TF `tf.function` guide's AutoGraph
examples (while on a reduction, fizzbuzz, continue, a dynamic RNN writing a
TensorArray, break, nested functions, `range(len(x))`) give TF's values.
Cost (benchmarks/autograph.py, a 47-line function, loaded 2-core CPU):
converting takes ~0.33 s, TF's converter ~0.53 s for the same function
(tracing the converted code costs what tracing the original does); the first
call with AutoGraph is 1.8x the first call without (XLA's compile
dominates; TF's tf.function: 8x). Conversion is cached per function, so
retraces and later calls pay nothing. Maintenance: one dependency
(`diastatic-malt`, pure Python, plus `termcolor`), imported only when a
function is first converted; jaxtape subclasses its transpiler in one place
(`_transpiler`: the operators, in-memory loading, a lazy source map).

Differences from TensorFlow: `assert` on a Tensor is always converted to a
run-time check (TF needs `Feature.ASSERT_STATEMENTS`, else it raises); the
`LISTS` feature (list append/pop staged as TensorArrays) is not implemented.
"""

from __future__ import annotations

import ast
import collections.abc
import functools
import inspect
import linecache
import logging
import os
import types
from typing import Any

from jaxtape._src.core import errors
from jaxtape._src.function import function as _function

# Packages whose functions converted code calls as they are (TF: its
# `DoNotConvert` rules for tensorflow, numpy, keras, ...).
_LIBRARIES = frozenset(
    {
        "jaxtape",
        "jax",
        "jaxlib",
        "numpy",
        "optax",
        "flax",
        "orbax",
        "chex",
        "malt",
        "tensorflow",
        "keras",
        "tf_keras",
        "scipy",
        "pandas",
        "matplotlib",
        "PIL",
        "h5py",
        "tensorboardX",
        "absl",
        "collections",
        "copy",
        "inspect",
        "re",
        "threading",
        "pathlib",
        "functools",
        "itertools",
        "logging",
        "typing",
        "abc",
        "enum",
        "dataclasses",
        "builtins",
    }
)

_logger = logging.getLogger("jaxtape")


# -- options ----------------------------------------------------------------------
def _features(experimental_autograph_options):
    """TF's `experimental_autograph_options` as malt's optional features.

    `Feature.ASSERT_STATEMENTS`, `BUILTIN_FUNCTIONS` (always on here),
    `AUTO_CONTROL_DEPS` (programs run in order already) and `NAME_SCOPES`
    (compiled ops have no names) are accepted; `EQUALITY_OPERATORS` is
    implemented; `LISTS` raises NotImplementedError.
    """
    from malt.core.converter import Feature

    options = experimental_autograph_options
    if options is None:
        return ()
    if not isinstance(options, (list, tuple, set, frozenset)):
        options = (options,)
    out = []
    for f in options:
        if not isinstance(f, Feature):
            f = Feature(getattr(f, "value", f))  # TF's own enum, or its string
        if f is Feature.ALL:
            f, more = None, Feature.all()
        else:
            more = (f,)
        for g in more:
            if g is Feature.LISTS:
                raise NotImplementedError(
                    "experimental_autograph_options: Feature.LISTS (list append/pop "
                    "staged as TensorArrays) is not implemented in jaxtape; use "
                    "`jaxtape.TensorArray` explicitly."
                )
            if g is Feature.EQUALITY_OPERATORS:
                out.append(g)
    return tuple(out)


def _options(experimental_autograph_options=None, recursive=True, user_requested=True):
    from malt.core.converter import ConversionOptions

    features: Any = _features(experimental_autograph_options)
    return ConversionOptions(
        recursive=recursive, user_requested=user_requested, optional_features=features
    )


# -- the transpiler ---------------------------------------------------------------
_state = {"transpiler": None, "files": 0}


def _transpiler():
    """malt's transpiler with jaxtape's operators as the generated code's `ag__`."""
    if _state["transpiler"] is not None:
        return _state["transpiler"]
    from malt.converters import (
        asserts,
        break_statements,
        call_trees,
        conditional_expressions,
        continue_statements,
        control_flow,
        directives,
        functions,
        logical_expressions,
        return_statements,
        variables,
    )
    from malt.core import converter, unsupported_features_checker
    from malt.impl import api
    from malt.pyct import loader, origin_info, parser, transpiler
    from malt.pyct.static_analysis import activity
    from malt.utils import ag_logging

    class _Factory(transpiler._PythonFnFactory):
        """malt's function factory, loading the generated module without a
        temporary file (linecache holds its text, for `to_code` and
        tracebacks) and with a lazy source map: together ~25% of a
        conversion."""

        def create(self, nodes, namer, inner_factory_name="inner_factory",
                   outer_factory_name="outer_factory", future_features=()):  # fmt: skip
            inner = namer.new_symbol(inner_factory_name, ())
            outer = namer.new_symbol(outer_factory_name, ())
            nodes = transpiler._wrap_into_factory(
                nodes, self._name, inner, outer, self._freevars,
                self._extra_locals.keys(), future_features,
            )  # fmt: skip
            nodes = nodes if isinstance(nodes, (list, tuple)) else (nodes,)
            source = parser.unparse(nodes, indentation="  ")
            _state["files"] += 1
            name = f"__autograph_generated_{self._name}_{_state['files']}"
            filename = f"<{name}>"
            lines = [str(line) for line in source.splitlines(True)]
            linecache.cache[filename] = (len(source), None, lines, filename)
            module = types.ModuleType(name)
            module.__file__ = filename
            exec(compile(source, filename, "exec"), module.__dict__)
            self._unbound_factory = getattr(module, outer)()
            self.module = module
            self.source_map = _LazySourceMap(
                lambda: origin_info.create_source_map(nodes, source, filename)
            )

    del loader

    from jaxtape._src.autograph import operators

    class Transpiler(api.PyToPy):
        def get_transformed_name(self, node):
            # TF's generated names (`tf__f`), so that to_code prints TF's code.
            return "tf__" + super(api.PyToPy, self).get_transformed_name(node)

        def get_extra_locals(self):
            if self._extra_locals is None:
                ag = types.ModuleType("jaxtape_autograph_operators")
                ag.__dict__.update(super().get_extra_locals()["ag__"].__dict__)
                ag.__dict__.update(_operator_table(operators))
                self._extra_locals = {"ag__": ag}
            return self._extra_locals

        def transform_function(self, fn, user_context):
            # malt's, with the generated code compiled in memory and its source
            # map (for error messages) built when first read (`_Factory`).
            key = self.get_caching_key(user_context)
            with self._cache_lock:
                if self._cache.has(fn, key):
                    factory = self._cache[fn][key]
                else:
                    nodes, ctx = transpiler.GenericTranspiler.transform_function(
                        self, fn, user_context
                    )
                    if isinstance(nodes, ast.Lambda):
                        target = ast.Name(ctx.info.name, ctx=ast.Store())
                        nodes = ast.Assign(targets=[target], value=nodes)
                    else:
                        nodes.name = ctx.info.name
                    if ag_logging.has_verbosity(2):
                        ag_logging.log(
                            2, "Transformed %s:\n\n%s\n", fn, parser.unparse(nodes)
                        )
                    factory = _Factory(
                        ctx.info.name, fn.__code__.co_freevars, self.get_extra_locals()
                    )
                    factory.create(
                        nodes, ctx.namer, future_features=ctx.info.future_features
                    )
                    self._cache[fn][key] = factory
            converted = factory.instantiate(
                globals_=fn.__globals__,
                closure=fn.__closure__ or (),
                defaults=fn.__defaults__,
                kwdefaults=getattr(fn, "__kwdefaults__", None),
            )
            return converted, factory.module, factory.source_map

        def transform_ast(self, node, ctx):
            # malt's (TF's) pipeline; `assert` is always converted, lists never.
            # A pass is skipped when the code it would rewrite is not there
            # (looked for just before it: earlier passes make some, as break
            # canonicalization makes `continue`s and `not`s); it would leave
            # the code as it is, after re-running its analyses.
            unsupported_features_checker.verify(node)
            node = self.initial_analysis(node, ctx)
            node = functions.transform(node, ctx)
            node = directives.transform(node, ctx)
            if _contains(node, ast.Break):
                node = break_statements.transform(node, ctx)
            if _contains(node, ast.Assert):
                node = asserts.transform(node, ctx)
            if _contains(node, ast.Continue):
                node = continue_statements.transform(node, ctx)
            node = return_statements.transform(node, ctx)
            node = call_trees.transform(node, ctx)
            node = control_flow.transform(node, ctx)
            if _contains(node, ast.IfExp):
                node = conditional_expressions.transform(node, ctx)
            if _contains(node, ast.BoolOp, ast.UnaryOp, ast.Compare):
                node = logical_expressions.transform(node, ctx)
            node = variables.transform(node, ctx)
            return node

    del converter
    # malt's scopes map parameters to their function nodes in weak-value
    # dictionaries, copied for every statement analysed (an eighth of a
    # conversion); the nodes live as long as the conversion, so plain
    # dictionaries give the same analysis.
    activity.weakref = types.SimpleNamespace(WeakValueDictionary=dict)
    _state["transpiler"] = Transpiler()
    return _state["transpiler"]


def _contains(node, *kinds) -> bool:
    """Whether the AST `node` has a node of one of these types."""
    return any(isinstance(n, kinds) for n in ast.walk(node))


class _LazySourceMap(collections.abc.Mapping):
    """A converted function's source map (generated line -> user line), built
    on first use: only an error message reads it."""

    def __init__(self, build):
        self._build, self._map = build, None

    def _get(self):
        if self._map is None:
            self._map = self._build()
        return self._map

    def __getitem__(self, key):
        return self._get()[key]

    def __iter__(self):
        return iter(self._get())

    def __len__(self):
        return len(self._get())


def _operator_table(operators):
    names = (
        "if_stmt",
        "if_exp",
        "while_stmt",
        "for_stmt",
        "and_",
        "or_",
        "not_",
        "eq",
        "not_eq",
        "assert_stmt",
    )
    table = {n: getattr(operators, n) for n in names}
    table["converted_call"] = converted_call
    return table


def _convert(entity, options):
    """The converted function of `entity` (cached by malt per code object)."""
    from malt.core import converter

    if not hasattr(entity, "__code__"):
        raise ValueError(
            "Cannot apply autograph to a function that doesn't expose a __code__ "
            "object. If this is a @jaxtape.function, try passing f.python_function "
            "instead."
        )
    program_ctx = converter.ProgramContext(options=options)
    result: Any = _transpiler().transform(entity, program_ctx)
    transformed, module, source_map = result
    transformed.ag_module = module
    transformed.ag_source_map = source_map
    return transformed


# -- converted_call ---------------------------------------------------------------
def _module_root(o) -> str | None:
    module = inspect.getmodule(o)
    name = getattr(module, "__name__", None)
    if name is None:
        name = getattr(o, "__module__", None)
    return name.split(".")[0] if isinstance(name, str) else None


def _is_library(o) -> bool:
    """Whether `o` belongs to a library that converted code calls unconverted."""
    if isinstance(o, functools.partial):
        return False
    root = _module_root(o)
    if root in _LIBRARIES:
        return True
    if inspect.ismethod(o):
        return _module_root(o.__func__) in _LIBRARIES
    return False


def _builtin_overloads():
    from jaxtape._src.autograph import operators
    from jaxtape._src.ops import creation_ops

    return {
        id(range): operators.range_,
        id(creation_ops.range): operators.jaxtape_range,
        id(int): _int,
        id(float): _float,
        id(abs): _abs,
    }


def _int(x=0, base=None):
    from jaxtape._src.autograph import operators
    from jaxtape._src.ops import math_ops

    t = operators._tensor(x)
    if t is not None:
        if base is not None:
            raise NotImplementedError(f"base {base} not supported for int")
        return math_ops.cast(t, "int32")
    return int(x) if base is None else int(str(x), base)


def _float(x=0.0):
    from jaxtape._src.autograph import operators
    from jaxtape._src.ops import math_ops

    t = operators._tensor(x)
    return math_ops.cast(t, "float32") if t is not None else float(x)


def _abs(x):
    from jaxtape._src.autograph import operators
    from jaxtape._src.ops import math_ops

    t = operators._tensor(x)
    return math_ops.abs(t) if t is not None else abs(x)


def converted_call(f, args, kwargs, caller_fn_scope=None, options=None):
    """Calls `f` from converted code: converted when it is user code (TF's
    `converted_call`), as it is when it is a library function, a builtin
    (with jaxtape's overloads for Tensors) or marked `do_not_convert`."""
    from malt.core import ag_ctx
    from malt.impl import api, conversion
    from malt.operators import py_builtins
    from malt.pyct import inspect_utils

    if options is None:
        if caller_fn_scope is None:
            raise ValueError("either caller_fn_scope or options must have a value")
        options = caller_fn_scope.callopts
    overload = _overloads().get(id(f))
    if overload is not None:
        return overload(*args, **(kwargs or {}))
    if (
        conversion.is_in_allowlist_cache(f, options)
        or ag_ctx.control_status_ctx().status == ag_ctx.Status.DISABLED
        or api.is_autograph_artifact(f)
    ):
        return _call(f, args, kwargs)
    if isinstance(f, functools.partial):
        merged = dict(f.keywords or {}, **(kwargs or {}))
        return converted_call(
            f.func, f.args + tuple(args), merged, caller_fn_scope, options
        )
    if inspect_utils.isbuiltin(f):
        if f is eval:
            return py_builtins.eval_in_original_context(f, args, caller_fn_scope)
        if f is super:
            return py_builtins.super_in_original_context(f, args, caller_fn_scope)
        if f is globals:
            return py_builtins.globals_in_original_context(caller_fn_scope)
        if f is locals:
            return py_builtins.locals_in_original_context(caller_fn_scope)
        return _call(f, args, kwargs)
    if conversion.is_unsupported(f) or not options.internal_convert_user_code:
        return _call(f, args, kwargs)
    if not options.user_requested and (_is_library(f) or conversion.is_allowlisted(f)):
        conversion.cache_allowlisted(f, options)
        return _call(f, args, kwargs)
    if inspect.ismethod(f) or inspect.isfunction(f):
        target, effective = f, tuple(args)
        owner = getattr(f, "__self__", None)
        if owner is not None:
            effective = (owner, *effective)
    elif callable(f):
        target, effective = type(f).__call__, (f, *args)
    else:
        return _call(f, args, kwargs)
    if (
        not hasattr(target, "__code__")
        or target.__code__.co_filename == "<string>"
        or (not options.user_requested and _is_library(target))
    ):
        return _call(f, args, kwargs)
    try:
        converted = _convert(target, options)
    except Exception as e:  # TF: warn and run it as it is
        from malt.utils import ag_logging

        ag_logging.log(1, "Error transforming entity %s", target, exc_info=True)
        _fall_back_warning(f, e)
        return _call(f, args, kwargs)
    try:
        return converted(*effective, **(kwargs or {}))
    except Exception as e:
        api._attach_error_metadata(e, converted)
        raise


def _call(f, args, kwargs):
    return f(*args, **kwargs) if kwargs else f(*args)


@functools.lru_cache(maxsize=1)
def _overload_table():
    return _builtin_overloads()


def _overloads():
    return _overload_table()


def _fall_back_warning(f, exc) -> None:
    _logger.warning(
        "AutoGraph could not transform %s and will run it as-is.\nCause: %s\n"
        "To silence this warning, decorate the function with "
        "@jaxtape.autograph.experimental.do_not_convert",
        f,
        exc,
    )


# -- entry points -----------------------------------------------------------------
def convert_for_function(python_function, experimental_autograph_options=None):
    """`jaxtape.function`'s hook: the function its traces call.

    Library functions (jaxtape's own, as Keras's train steps) and functions
    marked `do_not_convert` are returned as they are; other functions are
    converted on first call (TF's `tf_convert` with `user_requested=True`).
    Called on the function's first trace (an unsupported option raises then).
    """
    options = _options(experimental_autograph_options)
    if _is_library(python_function) or _is_artifact(python_function):
        return python_function

    @functools.wraps(python_function)
    def converted(*args, **kwargs):
        try:
            return converted_call(python_function, args, kwargs, options=options)
        except Exception as e:
            raise _rewritten(e) from None

    converted.__jaxtape_autograph__ = True  # type: ignore[attr-defined]
    return converted


def _is_artifact(f) -> bool:
    from malt.impl import api

    return api.is_autograph_artifact(f)


def _rewritten(e):
    """TF's error rewriting ("in user code: File ..., line N ..."), keeping
    the exception's type; types that cannot be rebuilt from a message keep
    their own message."""
    metadata = getattr(e, "ag_error_metadata", None)
    if metadata is None:
        return e
    kind = type(e)
    # Only user code in the message, as TF filters its own frames out.
    frames = [f for f in metadata.translated_stack if not _library_file(f.filename)]
    if frames:
        metadata.translated_stack = tuple(frames)
    message = metadata.get_message()
    try:
        if issubclass(kind, errors.OpError):
            new = kind(None, getattr(e, "op", None), message)
        else:
            new = metadata.create_exception(e)
    except Exception:  # a constructor that takes more than a message
        return e
    if new is None or type(new) is not kind:
        return e
    new.__suppress_context__ = True
    return new.with_traceback(e.__traceback__)


@functools.cache
def _library_dirs() -> tuple:
    """The folders of jaxtape, JAX and malt (frames a user needs not see)."""
    import jax
    import malt

    package = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    others = (os.path.dirname(str(m.__file__)) for m in (jax, malt))
    return tuple(d + os.sep for d in (package, *others))


def _library_file(filename: str) -> bool:
    return filename.startswith(_library_dirs())


def to_graph(entity, recursive=True, experimental_optional_features=None):
    """The converted function of `entity` (TF's `tf.autograph.to_graph`).

    Args:
      entity: A Python function or method.
      recursive: Whether functions it calls are converted too.
      experimental_optional_features: `Feature`s, as `experimental_autograph_options`.

    Returns:
      The converted function; it runs eagerly, or traced inside
      `jaxtape.function(autograph=False)`.

    Raises:
      ValueError: `entity` cannot be converted (no source code, not a function).
    """
    from malt.impl import api

    options = _options(experimental_optional_features, recursive=recursive)
    try:
        converted = _convert(entity, options)
    except (ValueError, AttributeError, KeyError, NameError, AssertionError) as e:
        raise api.ConversionError(
            f"converting {entity}: {type(e).__name__}: {e}"
        ) from e
    return api.autograph_artifact(converted)


def to_code(entity, recursive=True, experimental_optional_features=None):
    """The source code that AutoGraph generates for `entity`, as a string
    (TF's `tf.autograph.to_code`).

    >>> def f(x):
    ...     if x > 0:
    ...         x = x * x
    ...     return x
    >>> print(jaxtape.autograph.to_code(f).splitlines()[0])
    def tf__f(x):
    """
    import textwrap

    converted = to_graph(entity, recursive, experimental_optional_features)
    return textwrap.dedent(inspect.getsource(converted))


def do_not_convert(func=None):
    """Marks `func` to run as it is under AutoGraph: neither it nor what it
    calls is converted (TF's `tf.autograph.experimental.do_not_convert`)."""
    from malt.impl import api

    if func is None:
        return do_not_convert
    return api.do_not_convert(func)


def set_verbosity(level, alsologtostdout=False):
    """How much AutoGraph logs (TF's `tf.autograph.set_verbosity`), to Python's
    `logging` (INFO) and, with `alsologtostdout`, to stdout: 0 nothing, from 1
    conversion failures, from 2 each converted function's generated code, from
    3 its source too. The `AUTOGRAPH_VERBOSITY` variable sets the default."""
    from malt.utils import ag_logging

    ag_logging.set_verbosity(int(level), bool(alsologtostdout))


def trace(*args) -> None:
    """Prints `args` while the function is traced (TF's `tf.autograph.trace`,
    a Python `print` that runs at trace time, not in the compiled program)."""
    print(*args)


def experimental_getattr(missing_getattr):
    """`__getattr__` for `jaxtape.autograph.experimental`: malt's `Feature` and
    `set_loop_options` (the converter recognizes that very function), imported
    on first use; other names go to `missing_getattr`."""

    def getattr_(name):
        if name == "Feature":
            from malt.core.converter import Feature

            return Feature
        if name == "set_loop_options":
            from malt.lang import directives

            return getattr(directives, name)
        return missing_getattr(name)

    return getattr_


# jaxtape.function calls the converter through its hook.
_function.install_autograph(convert_for_function)
