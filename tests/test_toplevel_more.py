"""The remaining top-level `tf.*` names (issue 17), against real TensorFlow."""

import numpy as np
import pytest

import jaxtape

_R = np.random.default_rng(0)
_X5 = _R.normal(size=(2, 4, 5, 6, 3)).astype("float32")
_IMG = _R.normal(size=(2, 7, 6, 3)).astype("float32")
_FILT = _R.normal(size=(3, 2, 3, 4)).astype("float32")
_ROWS = _R.normal(size=(4, 3)).astype("float32")


def _np(x):
    if isinstance(x, dict):
        return [_np(x[k]) for k in sorted(x)]
    return [_np(v) for v in x] if isinstance(x, (list, tuple)) else np.asarray(x)


def _close(a, b, tol=1e-5):
    a, b = _np(a), _np(b)
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, tol)
        return
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _conv_pad(p):
    return [[0, 0], [1, 2], [2, 0], [0, 0]] if p == "EXPLICIT" else p


def _backprop_input(m, p):
    ep = [0, 0, 1, 2, 2, 0, 0, 0] if p == "EXPLICIT" else []
    g = np.ones(m.nn.conv2d(_IMG, _FILT, [1, 2, 1, 1], _conv_pad(p)).shape, "float32")
    if m is jaxtape:
        return m.conv2d_backprop_input_v2(
            _IMG, _FILT, g, [1, 2, 1, 1], p, explicit_paddings=ep
        )
    # TF registers no kernel for the V2 op: its V1 op is the oracle.
    return m.compat.v1.nn.conv2d_backprop_input(
        _IMG.shape, _FILT, g, [1, 2, 1, 1], _conv_pad(p)
    )


def _backprop_filter(m, p):
    ep = [0, 0, 1, 2, 2, 0, 0, 0] if p == "EXPLICIT" else []
    out = m.nn.conv2d(_IMG, _FILT, [1, 1, 2, 1], _conv_pad(p))
    g = np.random.default_rng(1).normal(size=out.shape)
    g = g.astype("float32")
    if m is jaxtape:
        return m.conv2d_backprop_filter_v2(
            _IMG, _FILT, g, [1, 1, 2, 1], p, explicit_paddings=ep
        )
    return m.compat.v1.nn.conv2d_backprop_filter(
        _IMG, _FILT.shape, g, [1, 1, 2, 1], _conv_pad(p)
    )


def _edit(m, normalize):
    h = m.SparseTensor(
        [[0, 0, 0], [0, 0, 1], [1, 0, 0], [1, 1, 0]], ["a", "b", "c", "d"], [2, 2, 2]
    )
    t = m.SparseTensor(
        [[0, 0, 0], [0, 1, 0], [1, 0, 0], [1, 0, 1]], ["a", "x", "c", "z"], [2, 3, 2]
    )
    return m.edit_distance(h, t, normalize=normalize)


def _edit_ints(m):
    h = m.SparseTensor([[0, 0], [0, 1], [0, 2], [2, 0]], [1, 2, 3, 4], [3, 3])
    t = m.SparseTensor([[0, 0], [0, 1], [1, 0]], [1, 3, 5], [2, 2])
    return m.edit_distance(h, t)


# name -> fn(m) giving the same values through TF and jaxtape
VALUES = {
    "matrix_square_root": lambda m: m.matrix_square_root(
        np.array([[4.0, 1.0], [1.0, 3.0]], "float64")
    ),
    "extract_volume_patches_valid": lambda m: m.extract_volume_patches(
        _X5, [1, 2, 2, 3, 1], [1, 1, 2, 2, 1], "VALID"
    ),
    "extract_volume_patches_same": lambda m: m.extract_volume_patches(
        _X5, [1, 2, 3, 2, 1], [1, 2, 1, 3, 1], "SAME"
    ),
    "extract_volume_patches_int": lambda m: m.extract_volume_patches(
        np.arange(54, dtype="int32").reshape(1, 3, 3, 3, 2),
        [1, 2, 2, 2, 1],
        [1, 1, 1, 1, 1],
        "SAME",
    ),
    "conv2d_backprop_input_v2_same": lambda m: _backprop_input(m, "SAME"),
    "conv2d_backprop_input_v2_explicit": lambda m: _backprop_input(m, "EXPLICIT"),
    "conv2d_backprop_filter_v2_valid": lambda m: _backprop_filter(m, "VALID"),
    "conv2d_backprop_filter_v2_explicit": lambda m: _backprop_filter(m, "EXPLICIT"),
    "fingerprint_int32": lambda m: m.fingerprint(
        np.arange(12, dtype="int32").reshape(3, 4)
    ),
    "fingerprint_float64_3d": lambda m: m.fingerprint(np.ones((2, 3, 2), "float64")),
    "fingerprint_bool": lambda m: m.fingerprint(np.array([True, False])),
    "fingerprint_strings": lambda m: m.fingerprint([b"a", b"hello world, long" * 5]),
    "fingerprint_string_rows": lambda m: m.fingerprint([["ab", "c"], ["d", "eee"]]),
    "edit_distance_normalized": lambda m: _edit(m, True),
    "edit_distance_raw": lambda m: _edit(m, False),
    "edit_distance_ints": _edit_ints,
    "ragged_fill_empty_rows": lambda m: m.ragged_fill_empty_rows(
        np.array([1, 1, 3], "int64"), np.array([1.0, 2.0, 3.0], "float32"), 5, 9.0
    ),
    "ragged_fill_empty_rows_grad": lambda m: m.ragged_fill_empty_rows_grad(
        np.array([1, 2, 4], "int64"), np.arange(7, dtype="float32")
    ),
    "vectorized_map": lambda m: m.vectorized_map(
        lambda r: (m.reduce_sum(m.sin(r)), {"a": r * r}), m.constant(_ROWS)
    ),
    "vectorized_map_tuple_elems": lambda m: m.vectorized_map(
        lambda e: m.tensordot(e[0], e[1], 1), (_ROWS, _ROWS[::-1])
    ),
    "recompute_grad": lambda m: m.recompute_grad(lambda x: m.tanh(x) * x)(_ROWS),
    "grad_pass_through": lambda m: m.grad_pass_through(m.round)(_ROWS * 3),
}


@pytest.mark.parametrize("name", list(VALUES))
def test_values_match_tensorflow(name, tf):
    _close(VALUES[name](jaxtape), VALUES[name](tf))


# name -> fn(m, x, v): a scalar of x (a watched Tensor) and v (a Variable)
GRADS = {
    "vectorized_map": lambda m, x, v: m.reduce_sum(
        m.vectorized_map(lambda r: m.reduce_sum(m.sin(r) * v), x)
    ),
    "recompute_grad": lambda m, x, v: m.reduce_sum(
        m.recompute_grad(lambda a: m.tanh(a) * v)(x)
    ),
    "grad_pass_through": lambda m, x, v: m.reduce_sum(
        m.grad_pass_through(lambda a: m.round(a))(x * 3.0) * 2.0
    ),
    "extract_volume_patches": lambda m, x, v: m.reduce_sum(
        m.extract_volume_patches(
            m.reshape(x, [1, 2, 2, 3, 1]), [1, 2, 1, 2, 1], [1, 1, 1, 1, 1], "SAME"
        )
        ** 2
    ),
    "ragged_fill_empty_rows": lambda m, x, v: m.reduce_sum(
        m.ragged_fill_empty_rows(
            np.array([0, 0, 2, 2, 2, 4], "int64"),
            m.reshape(x[:2], [-1]) * v[0],
            6,
            v[1],
        )[1]
        ** 2
    ),
}


def _grads(m, fn, compiled):
    v = m.Variable([1.0, 2.0, 3.0])

    def run(x):
        with m.GradientTape() as tape:
            tape.watch(x)
            y = fn(m, x, v)
        return [y] + tape.gradient(y, [x, v], unconnected_gradients="zero")

    return (m.function(run) if compiled else run)(m.constant(_ROWS))


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("name", list(GRADS))
def test_gradients_match_tensorflow(name, compiled, tf):
    _close(_grads(jaxtape, GRADS[name], compiled), _grads(tf, GRADS[name], False))


@pytest.mark.parametrize(
    "fn",
    [
        lambda m, x: m.vectorized_map(lambda r: r * 2.0 + 1.0, x),
        lambda m, x: m.extract_volume_patches(
            m.reshape(x, [1, 2, 2, 3, 1]), [1, 1, 2, 2, 1], [1, 1, 1, 1, 1], "VALID"
        ),
        lambda m, x: m.fingerprint(x),
        lambda m, x: m.recompute_grad(m.exp)(x),
    ],
    ids=["vectorized_map", "extract_volume_patches", "fingerprint", "recompute_grad"],
)
def test_inside_function_matches_tensorflow(fn, tf):
    got = jaxtape.function(lambda x: fn(jaxtape, x))(jaxtape.constant(_ROWS))
    _close(got, fn(tf, tf.constant(_ROWS)))


def test_gradients_and_hessians_raise_tf_errors(tf):
    for name in ("gradients", "hessians"):
        with pytest.raises(RuntimeError) as want:
            getattr(tf, name)(tf.constant(1.0), tf.constant(2.0))
        with pytest.raises(RuntimeError) as got:
            getattr(jaxtape, name)(jaxtape.constant(1.0), jaxtape.constant(2.0))
        assert str(got.value) == str(want.value)
        f = jaxtape.function(lambda x, n=name: getattr(jaxtape, n)(x * x, x))
        with pytest.raises(NotImplementedError, match="GradientTape"):
            f(jaxtape.constant(1.0))


def test_no_gradient_registers_a_name_once(tf):
    with pytest.raises(TypeError):
        tf.no_gradient(3)
    with pytest.raises(TypeError):
        jaxtape.no_gradient(3)
    jaxtape.no_gradient("JaxtapeTestOnlyOp")
    with pytest.raises(KeyError, match="Registering two gradient"):
        jaxtape.no_gradient("JaxtapeTestOnlyOp")


def test_type_spec_from_value_matches_tensorflow(tf):
    for v in ([1, 2], np.ones((2, 3)), 3.0):
        want, got = tf.type_spec_from_value(v), jaxtape.type_spec_from_value(v)
        assert (got.shape.as_list(), got.dtype.name) == (
            want.shape.as_list(),
            want.dtype.name,
        )
    want = tf.type_spec_from_value(tf.ragged.constant([[1], [2, 3]]))
    got = jaxtape.type_spec_from_value(jaxtape.ragged.constant([[1], [2, 3]]))
    assert repr(got).replace("jaxtape.", "tf.") == repr(want)
    with pytest.raises(TypeError):
        tf.type_spec_from_value(object())
    with pytest.raises(TypeError):
        jaxtape.type_spec_from_value(object())


def test_random_index_shuffle_is_a_permutation(tf):
    seed = np.array([1, 2, 3], "int64")
    shuffle = jaxtape.random_index_shuffle
    out = [int(shuffle(np.int64(i), seed, np.int64(9))) for i in range(10)]
    assert sorted(out) == list(range(10))
    bad = np.array([1, 2, 3, 4], "int64")
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.random_index_shuffle(np.int64(1), bad, np.int64(9))
    with pytest.raises(jaxtape.errors.InvalidArgumentError):
        jaxtape.random_index_shuffle(np.int64(1), bad, np.int64(9))
    with pytest.raises(NotImplementedError, match="rounds"):
        jaxtape.random_index_shuffle(np.int64(1), seed, np.int64(9), rounds=3)


def test_raw_fftnd_family_matches_numpy():
    # TF registers no CPU kernel for the N-D FFT ops: NumPy is the oracle.
    x = (_R.normal(size=(3, 4, 5)) + 1j * _R.normal(size=(3, 4, 5))).astype("complex64")
    r = _R.normal(size=(3, 4, 6)).astype("float32")
    np.testing.assert_allclose(
        jaxtape.fftnd(x, [3, 6], [0, 2]).numpy(),
        np.fft.fftn(x, [3, 6], [0, 2]),
        rtol=1e-4,
        atol=1e-4,
    )
    np.testing.assert_allclose(
        jaxtape.ifftnd(x, [4, 5], [1, 2]).numpy(),
        np.fft.ifftn(x, [4, 5], [1, 2]),
        rtol=1e-4,
        atol=1e-4,
    )
    got = jaxtape.rfftnd(r, [4, 6], [1, 2])
    assert got.dtype == jaxtape.complex64
    np.testing.assert_allclose(
        got.numpy(), np.fft.rfftn(r, [4, 6], [1, 2]), rtol=1e-4, atol=1e-4
    )
    got = jaxtape.irfftnd(x, [4, 8], [1, 2])
    assert got.dtype == jaxtape.float32
    np.testing.assert_allclose(
        got.numpy(), np.fft.irfftn(x, [4, 8], [1, 2]), rtol=1e-4, atol=1e-4
    )
    with pytest.raises(NotImplementedError, match="Treal"):
        jaxtape.irfftnd(x, [4, 8], [1, 2], Treal=jaxtape.float64)


PROTOS = {
    "floats": ([1.0, 2.0], {}),
    "int_scalar": (3, {}),
    "int64_matrix": ([[1, 2], [3, 4]], {"dtype": "int64"}),
    "broadcast_scalar": (1.5, {"shape": [2, 2]}),
    "float64_array": (np.arange(6.0), {}),
    "strings": (["a", "bc"], {}),
    "one_bool": ([True], {}),
    "float16": (np.float16([1, 2]), {}),
    "fewer_values": ([1, 2, 3], {"shape": [5]}),
    "complex128": (np.complex128([1 + 2j, 3]), {}),
    "empty": ([], {}),
}


@pytest.mark.parametrize("name", list(PROTOS))
def test_make_tensor_proto_bytes_and_make_ndarray_match_tensorflow(name, tf):
    values, kwargs = PROTOS[name]
    want = tf.make_tensor_proto(values, **kwargs)
    got = jaxtape.make_tensor_proto(values, **kwargs)
    assert got.SerializeToString() == want.SerializeToString()
    expected = tf.make_ndarray(want)
    for array in (jaxtape.make_ndarray(got), jaxtape.make_ndarray(want)):
        assert array.dtype == expected.dtype and array.shape == expected.shape
        np.testing.assert_array_equal(array, expected)


@pytest.mark.parametrize(
    "values, kwargs, error",
    [
        ([1, 2, 3], {"shape": [2]}, ValueError),
        ([1, 2], {"shape": [2, 1], "verify_shape": True}, TypeError),
        ([1, 2], {"shape": [4], "allow_broadcast": True}, TypeError),
        ([1.5], {"dtype": "int32"}, TypeError),
        (object(), {}, TypeError),
    ],
    ids=["too_many", "verify_shape", "allow_broadcast", "float_to_int", "object"],
)
def test_make_tensor_proto_errors_match_tensorflow(values, kwargs, error, tf):
    with pytest.raises(error):
        tf.make_tensor_proto(values, **kwargs)
    with pytest.raises(error):
        jaxtape.make_tensor_proto(values, **kwargs)


def _register_and_use(m):
    class Pair:  # a fresh type per module: registrations are process-wide
        def __init__(self, v):
            self.v = v

    class Wrong:
        pass

    def to_tensor(value, dtype=None, name=None, as_ref=False):
        return m.constant(value.v, dtype=dtype)

    m.register_tensor_conversion_function(Pair, to_tensor)
    m.register_tensor_conversion_function(
        Wrong, lambda value, dtype=None, name=None, as_ref=False: m.constant([1, 2])
    )
    x = m.constant([3.0, 4.0])
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.reduce_sum(m.multiply(Pair([1.0, 2.0]), x))
    out = [
        m.convert_to_tensor(Pair([1.0, 2.0])),
        m.convert_to_tensor(Pair([1.0, 2.0]), dtype=m.float64),
        m.add(Pair([1.0, 2.0]), 1.0),
        y,
        tape.gradient(y, x),
    ]
    errors = []
    for call in (
        lambda: m.register_tensor_conversion_function(int, to_tensor),
        lambda: m.register_tensor_conversion_function(Wrong, 3),
        lambda: m.convert_to_tensor(Wrong(), dtype=m.float32),
    ):
        with pytest.raises(Exception) as e:
            call()
        errors.append(type(e.value).__name__)
    return out, errors


def test_register_tensor_conversion_function_matches_tensorflow(tf):
    got, got_errors = _register_and_use(jaxtape)
    want, want_errors = _register_and_use(tf)
    _close(got, want)
    assert got_errors == want_errors == ["TypeError", "TypeError", "RuntimeError"]


def _creator_log(m):
    log = []

    def outer(next_creator, **kwargs):
        log.append(("outer", sorted(kwargs)))
        kwargs["initial_value"] = 5.0
        return next_creator(**kwargs)

    def inner(next_creator, **kwargs):
        log.append(("inner", float(kwargs["initial_value"]), kwargs["trainable"]))
        return next_creator(**kwargs)

    with m.variable_creator_scope(outer), m.variable_creator_scope(inner):
        v = m.Variable(1.0, False, name="x")
    with m.variable_creator_scope(lambda next_creator, **kwargs: "replaced"):
        replaced = m.Variable(1.0)
    after = m.Variable(2.0)
    return log, float(v.numpy()), v.trainable, v.name, replaced, float(after.numpy())


def test_variable_creator_scope_matches_tensorflow(tf):
    assert _creator_log(jaxtape) == _creator_log(tf)


def test_vectorized_map_falls_back_to_a_loop_for_an_unbatchable_primitive(tf):
    import jax

    @jaxtape.register_op
    def host_square(x):  # a callback without a vmap_method: JAX cannot batch it
        return jax.pure_callback(
            lambda a: np.square(a), jax.ShapeDtypeStruct(x.shape, x.dtype), x
        )

    got = jaxtape.vectorized_map(host_square, _ROWS, warn=False)
    _close(got, tf.vectorized_map(tf.square, _ROWS))
    with pytest.raises(NotImplementedError):
        jaxtape.vectorized_map(host_square, _ROWS, fallback_to_while_loop=False)
    x = np.arange(12, dtype="int32").reshape(4, 3)
    _close(
        jaxtape.vectorized_map(jaxtape.fingerprint, x),
        tf.vectorized_map(tf.fingerprint, x),
    )
