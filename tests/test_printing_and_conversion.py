"""TF 2.21 parity for printing tensors, converting shapes, and Python numbers.

Every row runs the same expression under real TensorFlow and under jaxtape
(`m` is the module) and compares the results: printed text (with `jaxtape.`
where TF writes `tf.`), dtypes and values, or the exception type.
"""

import collections
import io
import sys

import numpy as np
import pytest

import jaxtape

# -- str / repr / format -------------------------------------------------------
TENSORS = {
    "float_scalar_1": lambda m: m.constant(1.0),
    "float_scalar_0.1": lambda m: m.constant(0.1),
    "float_scalar_0.1+0.2": lambda m: m.constant(0.1) + m.constant(0.2),
    "float_scalar_third": lambda m: m.constant(1.0) / 3.0,
    "float_scalar_big": lambda m: m.constant(123456789.0),
    "float_scalar_1e10": lambda m: m.constant(1e10),
    "float_scalar_tiny": lambda m: m.constant(1e-8),
    "float_scalar_nan": lambda m: m.constant(float("nan")),
    # (NumPy's -0.0: TF caches Python scalar constants by value, so its
    # `constant(-0.0)` is 0.0 once some test has made a 0.0.)
    "float_scalar_neg_zero": lambda m: m.constant(np.float32(-0.0)),
    "float64_scalar": lambda m: m.constant(0.1, m.float64) + 0.2,
    "float16_scalar": lambda m: m.constant(np.float16(0.1)),
    "bfloat16_vector": lambda m: m.constant([0.1, 0.2], m.bfloat16),
    "int_scalar": lambda m: m.constant(3),
    "int64_scalar": lambda m: m.constant(2**40, m.int64),
    "uint8_scalar": lambda m: m.constant(np.uint8(5)),
    "bool_scalar": lambda m: m.constant(True),
    "complex_scalar": lambda m: m.constant(1 + 2j),
    "float_vector": lambda m: m.constant([1.0, 2.0]),
    "float_vector_mixed_scale": lambda m: m.constant([0.1, 1e-8, 1e8]),
    "float_matrix": lambda m: m.constant([[1.0, 2.0], [3.0, 4.0]]),
    "int_vector": lambda m: m.constant([1, 2, 3]),
    "int_cube": lambda m: m.reshape(m.range(8), [2, 2, 2]),
    "bool_vector": lambda m: m.constant([True, False]),
    "empty": lambda m: m.zeros([0]),
    "empty_rows": lambda m: m.zeros([2, 0]),
    "large_vector": lambda m: m.range(2000),  # summarized with `...`
    "large_matrix": lambda m: m.reshape(m.range(2000.0), [40, 50]),
    "sigmoid": lambda m: 1 / (1 + m.exp(-m.constant([0.5, 1.5]))),
}


def _as_jaxtape(text: str) -> str:
    """TF's text with jaxtape's type name (`<tf.Tensor: ...>`, `tf.Tensor(...)`)."""
    return text.replace("tf.Tensor", "jaxtape.Tensor")


def _texts(t):
    out = {
        "repr": repr(t),
        "str": str(t),
        "format": format(t),
        "str.format": "{}".format(t),  # noqa: UP032 - str.format is the case
        "f-string": f"{t}",
        "list": str([t, t]),
        "repr(list)": repr([t]),
    }
    if t.shape == ():
        for spec in (".3f", ">12", "08.2f", "e", ".10g"):
            try:
                out[f"f-string:{spec}"] = f"{t:{spec}}"
            except (TypeError, ValueError) as e:
                out[f"f-string:{spec}"] = type(e).__name__
    else:
        try:
            out["f-string:.3f"] = f"{t:.3f}"
        except TypeError as e:  # NumPy's: arrays take no format spec
            out["f-string:.3f"] = type(e).__name__
    return out


@pytest.mark.parametrize("name", sorted(TENSORS))
def test_tensor_text_matches_tensorflow(name, tf):
    fn = TENSORS[name]
    want = {k: _as_jaxtape(v) for k, v in _texts(fn(tf)).items()}
    got = _texts(fn(jaxtape))
    for kind in want:
        assert got[kind] == want[kind], kind


@pytest.mark.parametrize("name", ["float_scalar_0.1+0.2", "float_matrix", "sigmoid"])
def test_print_writes_tensorflows_text(name, tf, capsys):
    fn = TENSORS[name]
    print(fn(tf))
    print([fn(tf)])
    want = _as_jaxtape(capsys.readouterr().out)
    print(fn(jaxtape))
    print([fn(jaxtape)])
    assert capsys.readouterr().out == want


def test_printing_a_none_gradient_matches_tensorflow(tf, capsys):
    def none_gradient(m):
        x, y = m.constant(1.0), m.constant(2.0)
        with m.GradientTape() as tape:
            tape.watch(x)
            z = y * 2.0
        grad = tape.gradient(z, x)
        print(grad)
        print([grad, None])
        return grad

    assert none_gradient(tf) is None
    want = capsys.readouterr().out
    assert none_gradient(jaxtape) is None
    assert capsys.readouterr().out == want == "None\n[None, None]\n"


def test_printing_under_a_tape_does_not_warn(tf):
    # Formatting the loss inside the tape is common; TF prints it silently (and
    # pytest turns jaxtape's NumpyEscapeWarning into an error here).
    def run(m):
        x = m.Variable([0.5, 1.5])
        with m.GradientTape() as tape:
            loss = m.reduce_sum(x * x)
            text = f"{loss:.3f} {loss} {x.read_value()!s} {[loss]}"
            m.print(loss, output_stream=sys.stderr)
        assert tape.gradient(loss, x) is not None
        return text

    assert run(jaxtape) == _as_jaxtape(run(tf))


def test_format_spec_on_a_traced_tensor_raises_a_type_error():
    @jaxtape.function
    def f(x):
        return f"{x:.3f}"

    with pytest.raises(TypeError, match="jaxtape.print"):
        f(jaxtape.constant(1.0))


# -- jaxtape.print ----------------------------------------------------------------
PRINTS = {
    "float_scalar": (lambda m: [m.constant(0.1) + m.constant(0.2)], {}),
    "floats_fewest_digits": (
        lambda m: [m.constant([1.0, 0.1, 1 / 3, 1e-5, 1e6, 123456789.0, -1.5])],
        {},
    ),
    "float_specials": (lambda m: [m.constant([np.inf, -np.inf, np.nan, -0.0])], {}),
    "float64": (lambda m: [m.constant([1 / 3, 0.1, 1e16], m.float64)], {}),
    "float16": (lambda m: [m.constant(np.array([0.1, 1 / 3], np.float16))], {}),
    "bfloat16": (lambda m: [m.constant([0.1, 1 / 3], m.bfloat16)], {}),
    "ints_and_bools": (
        lambda m: [m.constant([-3, 4], m.int8), m.constant([True, False])],
        {},
    ),
    "int_matrix": (lambda m: [m.reshape(m.range(30), [5, 6])], {}),
    "summarized": (lambda m: [m.range(10)], {}),
    "summarize_1": (lambda m: [m.reshape(m.range(24), [2, 3, 4])], {"summarize": 1}),
    "summarize_2": (lambda m: [m.reshape(m.range(200), [10, 20])], {"summarize": 2}),
    "summarize_0": (lambda m: [m.constant(5.0), m.range(4)], {"summarize": 0}),
    "summarize_all": (lambda m: [m.reshape(m.range(200), [10, 20])], {"summarize": -1}),
    "summarize_none": (lambda m: [m.range(10)], {"summarize": None}),
    "empty": (lambda m: [m.zeros([0]), m.zeros([0, 2]), m.zeros([3, 0])], {}),
    "empty_3d": (lambda m: [m.zeros([1, 0, 2])], {}),
    "python_values": (lambda m: ["a", None, 1.5, 1 / 3, b"b", True, [1, 2]], {}),
    "structures": (
        lambda m: [
            {"b": m.constant(1), "a": 2},
            [m.constant(1.0), 2],
            (m.constant(1),),
            {"k": [m.constant([1.5, 2.0]), None, "s"]},
        ],
        {},
    ),
    "long_list_wraps": (lambda m: [[m.constant(1.0)] * 30, list(range(40))], {}),
    "ordered_dict_in_order": (
        lambda m: [collections.OrderedDict([("a", m.constant(1)), ("b", 2)])],
        {},
    ),
    "placeholder_in_text": (lambda m: ["x {} y", m.constant(1.0)], {}),
    "numpy_value": (lambda m: [np.array([1.5, 2.0])], {}),
    "variable": (lambda m: [m.Variable([1.0, 2.0])], {}),
    "sep_and_end": (
        lambda m: ["loss:", m.constant(2.5), 3],
        {"sep": "|", "end": "#\n"},
    ),
    "no_inputs": (lambda m: [], {}),
}


def _print_to_file(m, inputs, kwargs, path):
    m.print(*inputs, output_stream=f"file://{path}", **kwargs)
    with open(path) as f:
        return f.read()


@pytest.mark.parametrize("name", sorted(PRINTS))
def test_print_matches_tensorflow(name, tf, tmp_path):
    fn, kwargs = PRINTS[name]
    want = _print_to_file(tf, fn(tf), kwargs, tmp_path / "tf.txt")
    got = _print_to_file(jaxtape, fn(jaxtape), kwargs, tmp_path / "jaxtape.txt")
    assert got == want


def test_print_goes_to_stderr_by_default_like_tensorflow(tf, capfd):
    # TF writes from C++ to the process's stderr; capfd sees both.
    t = [0.1, 1 / 3, 2.0]
    tf.print(tf.constant(1.0))  # (TF's first op logs to stderr)
    capfd.readouterr()
    tf.print("v:", tf.constant(t), {"k": tf.constant(3)})
    want = capfd.readouterr()
    jaxtape.print("v:", jaxtape.constant(t), {"k": jaxtape.constant(3)})
    got = capfd.readouterr()
    assert want.err.startswith("v: ") and not want.out
    assert (got.out, got.err) == (want.out, want.err)


def test_print_inside_a_function_prints_every_call_like_tensorflow(tf, tmp_path):
    def run(m, path):
        v = m.Variable([1.0, 2.0])

        @m.function
        def step(x):
            m.print(
                "x:",
                x,
                {"v": v, "a": [x * 2, 3]},
                summarize=1,
                output_stream=f"file://{path}",
            )
            v.assign_add([1.0, 1.0])
            return x + 1

        step(m.constant([0.5, 0.25, 0.125]))
        step(m.constant([1.5, 2.25, 3.125]))
        with open(path) as f:
            return f.read()

    assert run(jaxtape, tmp_path / "j.txt") == run(tf, tmp_path / "t.txt")


@pytest.mark.parametrize(
    "stream",
    [3, "stdout", "out.txt", object()],
    ids=["3", "stdout", "out.txt", "object"],
)
def test_print_refuses_an_unknown_stream_like_tensorflow(stream, tf):
    with pytest.raises(ValueError, match="Unsupported output stream") as want:
        tf.print(1, output_stream=stream)
    with pytest.raises(ValueError, match="Unsupported output stream") as got:
        jaxtape.print(1, output_stream=stream)
    assert str(got.value).split(".")[0] == str(want.value).split(".")[0]


def test_print_accepts_any_writable_stream():
    # A jaxtape extension: TF's C++ print cannot write to Python objects.
    out = io.StringIO()
    jaxtape.print("a", jaxtape.constant([1, 2]), output_stream=out)
    assert out.getvalue() == "a [1 2]\n"


# -- TensorShape and lists of scalar tensors as tensors ---------------------------
def _ctx(m):
    x = m.ones([2, 3])
    layer = m.keras.layers.Dense(4)
    layer.build((None, 3))
    n = m.reduce_prod(layer.kernel.shape)
    return x, layer, n


SHAPES = {
    "reduce_prod_kernel_shape": lambda m, x, layer, n: m.reduce_prod(
        layer.kernel.shape
    ),
    "reduce_sum_shape": lambda m, x, layer, n: m.reduce_sum(x.shape),
    "add_shape": lambda m, x, layer, n: m.add(x.shape, 1),
    "cast_shape": lambda m, x, layer, n: m.cast(x.shape, m.float32),
    "zeros_shape": lambda m, x, layer, n: m.zeros(x.shape),
    "ones_shape": lambda m, x, layer, n: m.ones(x.shape),
    "fill_shape": lambda m, x, layer, n: m.fill(x.shape, 2.0),
    "broadcast_to_shape": lambda m, x, layer, n: m.broadcast_to(1.0, x.shape),
    "constant_shape": lambda m, x, layer, n: m.constant(x.shape),
    "constant_shape_int64": lambda m, x, layer, n: m.constant(x.shape, m.int64),
    "constant_shape_float": lambda m, x, layer, n: m.constant(x.shape, m.float32),
    "convert_shape": lambda m, x, layer, n: m.convert_to_tensor(x.shape),
    "constant_scalar_shape": lambda m, x, layer, n: m.constant(m.TensorShape([])),
    "reshape_to_shape": lambda m, x, layer, n: m.reshape(m.ones([6]), x.shape),
    "reshape_reversed_shape": lambda m, x, layer, n: m.reshape(x, x.shape[::-1]),
    "reshape_to_tensor_shape": lambda m, x, layer, n: m.reshape(
        x, m.TensorShape([3, 2])
    ),
    "reshape_n_params_1": lambda m, x, layer, n: m.reshape(
        m.ones(layer.kernel.shape), [n, 1]
    ),
    "reshape_tuple_n": lambda m, x, layer, n: m.reshape(m.ones([12]), (n,)),
    "reshape_int64_tensor": lambda m, x, layer, n: m.reshape(
        m.ones([12]), [m.constant(3, m.int64), 4]
    ),
    "reshape_numpy_int": lambda m, x, layer, n: m.reshape(x, [np.int64(3), 2]),
    "reshape_shape_entry": lambda m, x, layer, n: m.reshape(x, [m.shape(x)[0] * 3]),
    "zeros_n": lambda m, x, layer, n: m.zeros([n, 2]),
    "zeros_tensor_dim_int64": lambda m, x, layer, n: m.zeros(
        [2, m.constant(3)], m.int64
    ),
    "ones_tuple_tensor": lambda m, x, layer, n: m.ones((m.constant(2), 3)),
    "zeros_numpy_and_tensor": lambda m, x, layer, n: m.zeros(
        [np.int32(3), m.constant(2)]
    ),
    "zeros_tf_shape": lambda m, x, layer, n: m.zeros(m.shape(x)),
    "tile_tf_shape": lambda m, x, layer, n: m.tile(m.ones([1, 1]), m.shape(x)),
    "stack_n": lambda m, x, layer, n: m.stack([n, 1]),
    "convert_list_n": lambda m, x, layer, n: m.convert_to_tensor([n, 1]),
    "convert_list_int64": lambda m, x, layer, n: m.convert_to_tensor(
        [m.constant(3, m.int64), 4]
    ),
    "convert_list_float": lambda m, x, layer, n: m.convert_to_tensor(
        [m.constant(1.5), 2]
    ),
    "convert_list_float_to_int": lambda m, x, layer, n: m.convert_to_tensor(
        [m.constant(3), 2.5]
    ),
    "convert_list_mixed_tensors": lambda m, x, layer, n: m.convert_to_tensor(
        [m.constant(3, m.int64), m.constant(4)]
    ),
    "convert_list_other_dtype": lambda m, x, layer, n: m.convert_to_tensor(
        [m.constant(3), 4], dtype=m.float32
    ),
    # Unknown dimensions: TF's ValueError.
    "constant_unknown_dim": lambda m, x, layer, n: m.constant(m.TensorShape([2, None])),
    "convert_unknown_dim": lambda m, x, layer, n: m.convert_to_tensor(
        m.TensorShape([None])
    ),
    "zeros_unknown_dim": lambda m, x, layer, n: m.zeros(m.TensorShape([2, None])),
    "reduce_prod_unknown_dim": lambda m, x, layer, n: m.reduce_prod(
        m.TensorShape([2, None])
    ),
    "reshape_unknown_dim": lambda m, x, layer, n: m.reshape(
        x, m.TensorShape([3, None])
    ),
}


def _run(fn, m):
    try:
        return fn(m, *_ctx(m)), None
    except Exception as e:  # noqa: BLE001 - the exception is the result
        return None, e


def _expected_type(tf, exc):
    if isinstance(exc, tf.errors.OpError):
        return getattr(jaxtape.errors, type(exc).__name__)
    return type(exc)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shapes_and_lists_of_tensors_convert_like_tensorflow(name, tf):
    want, tf_error = _run(SHAPES[name], tf)
    got, error = _run(SHAPES[name], jaxtape)
    if tf_error is not None:
        assert isinstance(error, _expected_type(tf, tf_error)), (tf_error, error)
        if "partially known" in str(tf_error):
            assert "partially known TensorShape" in str(error)
        return
    assert error is None, f"TF returned {want!r}; jaxtape raised {error!r}"
    assert got.dtype.name == want.dtype.name
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_lists_of_tensors_pack_inside_a_function_like_tensorflow(tf):
    def run(m):
        v = m.Variable(2.0)

        @m.function
        def f(a):
            v.assign_add(1.0)
            return (
                m.convert_to_tensor([a * 2, 3]),
                m.convert_to_tensor([[v, a], [1.0, 0.5]]),
                m.reduce_sum(m.convert_to_tensor([a, v])),
            )

        return [t.numpy() for t in f(m.constant(1.5))]

    for got, want in zip(run(jaxtape), run(tf), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


SHAPE_METHODS = {
    "eq_list": lambda s, m: s == [2, 3],
    "ne_list": lambda s, m: s != [2, 3],
    "eq_tuple": lambda s, m: s == (2, 3),
    "eq_shape": lambda s, m: s == m.TensorShape([2, 3]),
    "eq_none": lambda s, m: s == None,  # noqa: E711 - the comparison is the test
    "eq_string": lambda s, m: s == "ab",
    "eq_unknown": lambda s, m: m.TensorShape([None, 3]) == [None, 3],
    "add_tuple": lambda s, m: s + (1,),
    "radd_tuple": lambda s, m: (1,) + s,
    "add_list": lambda s, m: s + [4],
    "slice": lambda s, m: s[1:],
    "index": lambda s, m: s[-1],
    "hash": lambda s, m: hash(s) == hash(m.TensorShape([2, 3])),
    "str": lambda s, m: str(s),
    "str_unknown": lambda s, m: str(m.TensorShape([None, 3])),
    "str_rank_1": lambda s, m: str(m.TensorShape([5])),
    "repr": lambda s, m: repr(s),
    "f_string": lambda s, m: f"{s}",
    "numpy_int_dims": lambda s, m: m.TensorShape([np.int64(2), 3]),
    "tensor_dims": lambda s, m: m.TensorShape(m.constant([2, 3])),
    "float_dim": lambda s, m: m.TensorShape([2.5]),
    "merge_with": lambda s, m: m.TensorShape([None, 3]).merge_with([2, None]),
    "merge_with_incompatible": lambda s, m: s.merge_with([2, 4]),
    "merge_with_other_rank": lambda s, m: s.merge_with([2]),
    "with_rank": lambda s, m: s.with_rank(2),
    "with_rank_wrong": lambda s, m: s.with_rank(3),
    "assert_has_rank": lambda s, m: s.assert_has_rank(3),
    "assert_compatible": lambda s, m: s.assert_is_compatible_with([2, None]),
    "assert_incompatible": lambda s, m: s.assert_is_compatible_with([2, 4]),
    "most_specific": lambda s, m: s.most_specific_compatible_shape([2, 4]),
    "num_elements": lambda s, m: s.num_elements(),
    "num_elements_unknown": lambda s, m: m.TensorShape([None, 3]).num_elements(),
    "as_list": lambda s, m: s.as_list(),
}


@pytest.mark.parametrize("name", sorted(SHAPE_METHODS))
def test_tensor_shape_behaves_like_tensorflows(name, tf):
    def run(m):
        try:
            out = SHAPE_METHODS[name](m.ones([2, 3]).shape, m)
        except Exception as e:  # noqa: BLE001 - the exception is the result
            return type(e), str(e)
        return (repr(out) if type(out).__name__ == "TensorShape" else out), None

    want, got = run(tf), run(jaxtape)
    if want[1] is not None:
        assert got[0] is want[0], got
        assert got[1].startswith(want[1].split(":")[0]), (got, want)
    else:
        assert got == want


# -- Python numbers on the left keep the tensor's dtype ---------------------------
EXPRESSIONS = {
    "one_over_one_plus_exp": lambda m, x: 1 / (1 + m.exp(-x)),
    "two_minus": lambda m, x: 2 - x,
    "one_plus": lambda m, x: 1 + x,
    "three_times": lambda m, x: 3 * x,
    "two_pow": lambda m, x: 2**x,
    "one_over": lambda m, x: 1 / x,
    "float_over": lambda m, x: 1.0 / x,
    "true_times": lambda m, x: True * x,
    "numpy_float64_times": lambda m, x: np.float64(2) * x,
    "numpy_float32_minus": lambda m, x: np.float32(2) - x,
    "numpy_int64_times": lambda m, x: np.int64(2) * x,
    "int_pow_on_right": lambda m, x: x**2,
    "mixed_chain": lambda m, x: (1 - x) * (2 + x) / (3 * x + 1) - 2**x,
}

CONTEXTS = ("eager", "tape", "custom_gradient", "custom_gradient_tape", "function")


def _in_context(m, fn, context, x_np, dtype, on_variable):
    x = m.Variable(x_np, dtype=dtype) if on_variable else m.constant(x_np, dtype)
    if context == "eager":
        return fn(m, x), None
    if context == "function":
        return m.function(lambda: fn(m, x))(), None

    @m.custom_gradient
    def custom(v):
        y = fn(m, v)

        def grad(dy):
            # The gradient formula uses the same Python-number operators.
            return dy * (2 - fn(m, v)) * (1 / (1 + v * v))

        return y, grad

    with m.GradientTape() as tape:
        if not on_variable:
            tape.watch(x)
        if context == "tape":
            y = fn(m, x)
        else:
            y = custom(x if not on_variable else x.read_value())
        if context == "custom_gradient":
            return y, None
    return y, tape.gradient(y, x)


@pytest.mark.parametrize("on_variable", [False, True], ids=["tensor", "variable"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_python_numbers_keep_the_tensors_dtype(name, context, dtype, on_variable, tf):
    x_np = np.array([0.5, 1.5], dtype)
    fn = EXPRESSIONS[name]
    y_tf, g_tf = _in_context(tf, fn, context, x_np, getattr(tf, dtype), on_variable)
    y, g = _in_context(jaxtape, fn, context, x_np, getattr(jaxtape, dtype), on_variable)
    tol = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-12}[dtype]
    assert y.dtype.name == y_tf.dtype.name == dtype
    np.testing.assert_allclose(y.numpy(), y_tf.numpy(), rtol=tol)
    assert (g is None) == (g_tf is None)
    if g is not None:
        assert g.dtype.name == g_tf.dtype.name == dtype
        np.testing.assert_allclose(g.numpy(), g_tf.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("make", ["constant", "Variable"])
def test_numpy_arrays_are_writable_as_tensorflows(tf, make):
    """`t.numpy()` and `np.array(t)` give arrays the caller may write to (TF's
    are writable; JAX's view of a buffer is read-only); writing to them
    leaves the tensor as it was."""
    for m in (tf, jaxtape):
        t = getattr(m, make)([1.0, 2.0])
        for out in (t.numpy(), np.array(t), np.array(t, dtype=np.float64)):
            assert out.flags.writeable, (m.__name__, make)
        if m is jaxtape:
            a, b = t.numpy(), np.array(t)
            a[0], b[1] = 5.0, 7.0
            np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])
