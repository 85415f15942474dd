"""The rest of TF's top level against real TF: error codes, the quantized and
handle dtypes, DeviceSpec, tf.audio, tf.conv, CriticalSection, tf.sysconfig,
tf.types, traceback filtering and device-placement logging."""

import numpy as np
import pytest

import jaxtape

ERROR_CODES = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
]
ERROR_CLASSES = [
    "OpError",
    "CancelledError",
    "UnknownError",
    "InvalidArgumentError",
    "DeadlineExceededError",
    "NotFoundError",
    "AlreadyExistsError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "FailedPreconditionError",
    "AbortedError",
    "OutOfRangeError",
    "UnimplementedError",
    "InternalError",
    "UnavailableError",
    "DataLossError",
    "UnauthenticatedError",
]


@pytest.mark.parametrize("name", ERROR_CODES)
def test_error_code_constants_match_tensorflow(name, tf):
    assert getattr(jaxtape.errors, name) == getattr(tf.errors, name)


@pytest.mark.parametrize("name", ERROR_CLASSES)
def test_error_classes_carry_tensorflows_error_code(name, tf):
    extra = (jaxtape.errors.ABORTED,) if name == "OpError" else ()  # (TF's base)
    ours = getattr(jaxtape.errors, name)(None, None, "message", *extra)
    theirs = getattr(tf.errors, name)(None, None, "message", *extra)
    assert ours.error_code == theirs.error_code


def test_bool_of_a_traced_tensor_is_operator_not_allowed_in_graph(tf):
    assert issubclass(tf.errors.OperatorNotAllowedInGraphError, TypeError)
    assert issubclass(jaxtape.errors.OperatorNotAllowedInGraphError, TypeError)

    def body(m):
        def f(x):
            return x if x > 0 else -x

        return m.function(f, autograph=False)

    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        body(tf)(tf.constant(1.0))
    with pytest.raises(jaxtape.errors.OperatorNotAllowedInGraphError):
        body(jaxtape)(jaxtape.constant(1.0))


OPAQUE_DTYPES = [
    "qint8",
    "quint8",
    "qint16",
    "quint16",
    "qint32",
    "resource",
    "variant",
]
DTYPE_ATTRS = [
    "name",
    "size",
    "is_quantized",
    "is_integer",
    "is_floating",
    "is_unsigned",
    "is_bool",
    "is_complex",
    "is_numpy_compatible",
    "as_datatype_enum",
]


def _attr(dtype, attr):
    try:
        return getattr(dtype, attr)
    except Exception as e:  # noqa: BLE001 - the exception type is compared
        return type(e).__name__


@pytest.mark.parametrize("name", OPAQUE_DTYPES + ["float32", "int8", "string", "bool"])
def test_dtype_attributes_match_tensorflow(name, tf):
    ours, theirs = getattr(jaxtape, name), getattr(tf, name)
    assert ours is getattr(jaxtape.dtypes, name)
    assert str(ours) == str(theirs)
    for attr in DTYPE_ATTRS + ["min", "max"]:
        assert _attr(ours, attr) == _attr(theirs, attr), attr
    if theirs.is_numpy_compatible:
        assert ours.as_numpy_dtype == theirs.as_numpy_dtype
        assert jaxtape.as_dtype(theirs.as_numpy_dtype) is ours
    assert jaxtape.as_dtype(theirs.as_datatype_enum) is ours
    assert jaxtape.as_dtype(name) is ours
    assert (ours == jaxtape.int8) == (theirs == tf.int8)
    assert (jaxtape.float32 == ours) == (tf.float32 == theirs)


def test_quantized_dtypes_set_matches_tensorflow(tf):
    theirs = {d.name for d in tf.dtypes.QUANTIZED_DTYPES if not d.name.endswith("_ref")}
    assert {d.name for d in jaxtape.dtypes.QUANTIZED_DTYPES} == theirs


@pytest.mark.parametrize("name", ["qint8", "quint16", "resource", "variant"])
def test_tensors_of_opaque_dtypes_say_jaxtape_lacks_them(name):
    dtype = getattr(jaxtape, name)
    for make in (
        lambda: jaxtape.constant([1, 2], dtype=dtype),
        lambda: jaxtape.zeros([2], dtype=dtype),
        lambda: jaxtape.cast(jaxtape.constant([1, 2]), dtype),
    ):
        with pytest.raises(NotImplementedError, match=f"dtype {name}"):
            make()
    # TF's eager `constant` of a handle dtype raises TypeError: so does this.
    with pytest.raises(TypeError):
        jaxtape.constant([1, 2], dtype=dtype)


def test_traceback_filtering_switches_match_tensorflow(tf):
    for m in (tf, jaxtape):
        assert m.debugging.is_traceback_filtering_enabled()
        try:
            m.debugging.disable_traceback_filtering()
            assert not m.debugging.is_traceback_filtering_enabled()
        finally:
            m.debugging.enable_traceback_filtering()
        assert m.debugging.is_traceback_filtering_enabled()


def test_log_device_placement_prints_tensorflows_line_per_op(capsys):
    assert not jaxtape.debugging.get_log_device_placement()
    x = jaxtape.constant([1.0])
    jaxtape.debugging.set_log_device_placement(True)
    try:
        assert jaxtape.debugging.get_log_device_placement()
        y = jaxtape.math.log(x + 1.0)
        jaxtape.function(lambda a: a * 2.0)(y)
    finally:
        jaxtape.debugging.set_log_device_placement(False)
    jaxtape.math.log(x)
    lines = capsys.readouterr().err.splitlines()
    where = y.device
    assert lines == [
        f"Executing op AddV2 in device {where}",
        f"Executing op Log in device {where}",
        f"Mul: (Mul): {where}",
    ]


# -- DeviceSpec -------------------------------------------------------------------
DEVICE_STRINGS = [
    "/job:ps/replica:1/task:2/device:GPU:3",
    "/cpu:0",
    "/GPU:*",
    "gpu",
    "/job:worker/task:0",
    "/device:CPU:1",
    "",
]


def _spec_fields(spec):
    return (
        spec.job,
        spec.replica,
        spec.task,
        spec.device_type,
        spec.device_index,
        spec.to_string(),
        repr(spec),
    )


@pytest.mark.parametrize("text", DEVICE_STRINGS)
def test_device_spec_parses_as_tensorflow(text, tf):
    ours, theirs = jaxtape.DeviceSpec.from_string(text), tf.DeviceSpec.from_string(text)
    assert _spec_fields(ours) == _spec_fields(theirs)
    merged = (
        jaxtape.DeviceSpec(job="a", device_type="cpu", device_index=1),
        tf.DeviceSpec(job="a", device_type="cpu", device_index=1),
    )
    assert _spec_fields(merged[0].make_merged_spec(ours)) == _spec_fields(
        merged[1].make_merged_spec(theirs)
    )
    assert _spec_fields(ours.replace(task=7, device_type="gpu")) == _spec_fields(
        theirs.replace(task=7, device_type="gpu")
    )
    assert ours == jaxtape.DeviceSpec.from_string(ours.to_string())
    assert hash(ours) == hash(jaxtape.DeviceSpec.from_string(ours.to_string()))


@pytest.mark.parametrize("text", ["/cpu:0/gpu:1", "/foo:1", "/job:a/device:CPU:0/tpu"])
def test_device_spec_refuses_what_tensorflow_refuses(text, tf):
    with pytest.raises(ValueError) as theirs:
        tf.DeviceSpec.from_string(text)
    with pytest.raises(ValueError) as ours:
        jaxtape.DeviceSpec.from_string(text)
    assert str(ours.value) == str(theirs.value)


def test_device_scope_takes_a_device_spec():
    with jaxtape.device(jaxtape.DeviceSpec(device_type="CPU", device_index=0)):
        x = jaxtape.constant(1.0)
    assert x.device.endswith("device:CPU:0")


# -- tf.conv, tf.approx_top_k ---------------------------------------------------------
CONV_ROWS = {
    "2d_same": ((2, 5, 6, 4), (3, 3, 4, 6), dict(strides=[1, 1, 1, 1], padding="SAME")),
    "2d_strided": (
        (2, 9, 8, 3),
        (3, 2, 3, 5),
        dict(strides=[1, 2, 3, 1], padding="VALID"),
    ),
    "2d_dilated": (
        (2, 9, 8, 3),
        (3, 2, 3, 5),
        dict(strides=[1, 1, 1, 1], padding="VALID", dilations=[1, 1, 2, 1]),
    ),
    "2d_explicit": (
        (1, 5, 6, 4),
        (3, 3, 4, 2),
        dict(
            strides=[1, 1, 2, 1],
            padding="EXPLICIT",
            explicit_paddings=[0, 0, 1, 2, 0, 1, 0, 0],
        ),
    ),
    "2d_two_batch_dims": (
        (3, 2, 5, 6, 4),
        (3, 3, 4, 6),
        dict(strides=[1, 1, 1, 1], padding="VALID", batch_dims=2),
    ),
    "3d": (
        (1, 4, 5, 6, 2),
        (2, 2, 2, 2, 3),
        dict(strides=[1, 1, 2, 1, 1], padding="SAME"),
    ),
}


def _tf_conv_reference(tf, x, w, kwargs):
    """tf.conv through tf.nn's conv2d/conv3d, which have gradients (TF registers
    none for its `Conv` op)."""
    nd = w.ndim - 2
    batch = x.shape[: kwargs.get("batch_dims", 1)]
    x = tf.reshape(x, (-1,) + tuple(x.shape[len(batch) :]))
    padding = kwargs["padding"]
    if padding == "EXPLICIT":
        p = kwargs["explicit_paddings"]
        padding = [[p[2 * i], p[2 * i + 1]] for i in range(nd + 2)]
    conv = tf.nn.conv2d if nd == 2 else tf.nn.conv3d
    dilations = kwargs.get("dilations", [1] * (nd + 2))
    y = conv(x, w, kwargs["strides"], padding, dilations=dilations)
    return tf.reshape(y, tuple(batch) + tuple(y.shape[1:]))


@pytest.mark.parametrize("name", list(CONV_ROWS))
def test_conv_matches_tensorflow(name, tf, rng):
    x_shape, w_shape, kwargs = CONV_ROWS[name]
    x = rng.normal(size=x_shape).astype("float32")
    w = rng.normal(size=w_shape).astype("float32")
    np.testing.assert_allclose(
        tf.conv(x, w, **kwargs), _tf_conv_reference(tf, x, w, kwargs), atol=1e-4
    )
    results = []
    for m, fn in (
        (tf, lambda a, b: _tf_conv_reference(tf, a, b, kwargs)),
        (jaxtape, None),
    ):
        fn = fn or (lambda a, b: jaxtape.conv(a, b, **kwargs))
        xt, wt = m.constant(x), m.constant(w)
        with m.GradientTape() as tape:
            tape.watch([xt, wt])
            y = fn(xt, wt)
            loss = m.reduce_sum(y * y)
        results.append([y.numpy(), *[g.numpy() for g in tape.gradient(loss, [xt, wt])]])
    for ours, theirs in zip(results[1], results[0]):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=2e-4, atol=2e-3)
    compiled = jaxtape.function(lambda a, b: jaxtape.conv(a, b, **kwargs))
    np.testing.assert_allclose(compiled(x, w), results[0][0], rtol=2e-4, atol=2e-3)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(strides=[1, 1], padding="SAME"),
        dict(strides=[2, 1, 1, 1], padding="SAME"),
    ],
    ids=["short_strides", "batch_stride"],
)
def test_conv_argument_errors_match_tensorflow(kwargs, tf, rng):
    x = rng.normal(size=(2, 5, 6, 4)).astype("float32")
    w = rng.normal(size=(3, 3, 4, 6)).astype("float32")
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        tf.conv(x, w, **kwargs)
    with pytest.raises(jaxtape.errors.InvalidArgumentError) as ours:
        jaxtape.conv(x, w, **kwargs)
    assert str(ours.value).endswith(
        str(theirs.value).split("}} ")[-1].removesuffix(" name: ")
    )


def test_conv_groups_is_a_grouped_convolution(rng):
    x = rng.normal(size=(2, 5, 6, 4)).astype("float32")
    w = rng.normal(size=(3, 3, 2, 6)).astype("float32")
    y = jaxtape.conv(x, w, strides=[1, 1, 1, 1], padding="SAME", groups=2).numpy()
    halves = [
        jaxtape.nn.conv2d(
            x[..., 2 * g : 2 * g + 2], w[..., 3 * g : 3 * g + 3], 1, "SAME"
        )
        for g in range(2)
    ]
    np.testing.assert_allclose(y, np.concatenate(halves, -1), rtol=1e-5, atol=1e-5)


def test_approx_top_k_matches_tensorflow(tf, rng):
    x = rng.normal(size=(3, 10)).astype("float32")
    theirs = tf.approx_top_k(x, 3)
    ours = jaxtape.approx_top_k(x, 3)
    assert type(ours).__name__ == "ApproxTopK" and ours._fields == theirs._fields
    np.testing.assert_array_equal(ours.values, theirs.values)
    np.testing.assert_array_equal(ours.indices, theirs.indices)
    assert ours.indices.dtype == jaxtape.int32
    low = jaxtape.approx_top_k(x, 2, reduction_dimension=0, is_max_k=False)
    np.testing.assert_array_equal(low.values, np.sort(x, axis=0)[:2])


# -- registries and constants ---------------------------------------------------------
def test_aggregation_method_constants_match_tensorflow(tf):
    for name in ("ADD_N", "DEFAULT", "EXPERIMENTAL_TREE", "EXPERIMENTAL_ACCUMULATE_N"):
        assert getattr(jaxtape.AggregationMethod, name) == getattr(
            tf.AggregationMethod, name
        )


def test_register_gradient_records_and_refuses_a_second_registration():
    from jaxtape._src.ops.toplevel_rest_ops import registered_gradient

    @jaxtape.RegisterGradient("JaxtapeTestOnlyOp")
    def grad(op, g):
        return g

    assert registered_gradient("JaxtapeTestOnlyOp") is grad
    with pytest.raises(KeyError, match="Registering two gradient"):
        jaxtape.RegisterGradient("JaxtapeTestOnlyOp")(grad)
    jaxtape.no_gradient("JaxtapeTestOnlyOp2")
    with pytest.raises(KeyError, match="Registering two gradient"):
        jaxtape.RegisterGradient("JaxtapeTestOnlyOp2")(grad)


# -- CriticalSection, nondifferentiable_batch_function --------------------------------
def test_critical_section_serialises_read_modify_write():
    import threading

    cs = jaxtape.CriticalSection()
    v = jaxtape.Variable(0)

    def bump():
        value = v.read_value().numpy()
        v.assign(value + 1)  # (a lost update without the lock)
        return v.read_value()

    threads = [
        threading.Thread(target=lambda: [cs.execute(bump) for _ in range(20)])
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert int(v.numpy()) == 80
    assert int(jaxtape.function(lambda: cs.execute(lambda: v.assign_add(1)))()) == 81
    with pytest.raises(ValueError, match="already running"):
        cs.execute(lambda: cs.execute(bump))


def test_critical_section_execute_matches_tensorflow(tf):
    for m in (tf, jaxtape):
        v = m.Variable(1.0)
        cs = m.CriticalSection()
        out = cs.execute(lambda v=v: v.assign_add(2.0), exclusive_resource_access=False)
        assert float(out) == 3.0 and float(v.numpy()) == 3.0


def test_nondifferentiable_batch_function_matches_tensorflow(tf):
    x = np.array([[1.0], [2.0]], np.float32)
    outs = []
    for m in (tf, jaxtape):

        @m.nondifferentiable_batch_function(1, 4, 10)
        def double(a, m=m):
            return a * 2.0 + m.reduce_sum(a)

        xt = m.constant(x)
        with m.GradientTape() as tape:
            tape.watch(xt)
            y = double(xt)
        outs.append(y.numpy())
        if m is jaxtape:  # (TF's tape raises LookupError: no BatchFunction gradient)
            assert tape.gradient(y, xt) is None
    np.testing.assert_allclose(outs[1], outs[0])


# -- tf.audio ------------------------------------------------------------------------
def _wav_rows(rng):
    ramp = np.linspace(-1.2, 1.2, 50, dtype=np.float32)
    ties = np.array([1, -1, 3, -3, 2, 0], np.float32) / 65536  # x * 32768 = +-0.5...
    return {
        "mono": rng.uniform(-1, 1, size=(100, 1)).astype(np.float32),
        "stereo": rng.uniform(-1, 1, size=(64, 2)).astype(np.float32),
        "clipped_ramp": ramp[:, None],
        "rounding_ties": ties[:, None],
        "extremes": np.array([[1.0, -1.0], [0.0, np.nan]], np.float32),
        "empty": np.zeros((0, 3), np.float32),
    }


@pytest.mark.parametrize(
    "name", ["mono", "stereo", "clipped_ramp", "rounding_ties", "extremes", "empty"]
)
def test_encode_wav_bytes_and_decode_match_tensorflow(name, tf):
    audio = _wav_rows(np.random.default_rng(1))[name]
    theirs = tf.audio.encode_wav(audio, 16000).numpy()
    ours = jaxtape.audio.encode_wav(audio, 16000).numpy()
    assert ours == theirs
    for channels, samples in ((-1, -1), (1, 3), (4, 200)):
        t = tf.audio.decode_wav(
            theirs, desired_channels=channels, desired_samples=samples
        )
        o = jaxtape.audio.decode_wav(
            ours, desired_channels=channels, desired_samples=samples
        )
        assert o._fields == t._fields
        assert o.audio.dtype == jaxtape.float32 and o.sample_rate.dtype == jaxtape.int32
        np.testing.assert_array_equal(o.audio.numpy(), t.audio.numpy())
        assert int(o.sample_rate) == int(t.sample_rate)


def _eight_bit_wav():
    import io
    import wave

    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as f:
        f.setnchannels(1)
        f.setsampwidth(1)
        f.setframerate(8000)
        f.writeframes(b"\x00\x80\xff")
    return buffer.getvalue()


@pytest.mark.parametrize(
    "contents",
    [b"RIFF", b"hello world, not a wav", b"RIFF\x00\x00\x00\x00WAVEfmt ", None],
    ids=["short", "not_riff", "truncated", "eight_bit"],
)
def test_decode_wav_errors_match_tensorflow(contents, tf):
    contents = contents if contents is not None else _eight_bit_wav()
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        tf.audio.decode_wav(contents)
    with pytest.raises(jaxtape.errors.InvalidArgumentError) as ours:
        jaxtape.audio.decode_wav(contents)
    tail = str(theirs.value).split("}} ")[-1].removesuffix(" name: ")
    assert str(ours.value) == tail


def test_encode_wav_refuses_a_rank_one_input_as_tensorflow(tf):
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        tf.audio.encode_wav(np.zeros(3, np.float32), 8000)
    with pytest.raises(jaxtape.errors.InvalidArgumentError) as ours:
        jaxtape.audio.encode_wav(np.zeros(3, np.float32), 8000)
    assert str(ours.value) == str(theirs.value).split("}} ")[-1].removesuffix(" name: ")


# -- tf.sysconfig, tf.types ------------------------------------------------------------
def test_sysconfig_gives_jaxlibs_truthful_values():
    import os

    info = jaxtape.sysconfig.get_build_info()
    assert {"is_cuda_build", "is_rocm_build", "is_tensorrt_build"} <= set(info)
    assert os.path.isdir(jaxtape.sysconfig.get_include())
    assert os.path.isdir(os.path.join(jaxtape.sysconfig.get_include(), "xla", "ffi"))
    assert os.path.isdir(jaxtape.sysconfig.get_lib())
    assert (
        f"-I{jaxtape.sysconfig.get_include()}" in jaxtape.sysconfig.get_compile_flags()
    )
    assert jaxtape.sysconfig.get_link_flags() == []


def test_types_experimental_classify_functions_as_tensorflows_do(tf):
    for m in (tf, jaxtape):
        types = m.types.experimental
        f = m.function(lambda x: x + 1)
        concrete = f.get_concrete_function(m.constant(1.0))
        assert isinstance(f, types.PolymorphicFunction)
        assert isinstance(f, types.GenericFunction) and isinstance(f, types.Callable)
        assert isinstance(concrete, types.ConcreteFunction)
        assert not isinstance(concrete, types.GenericFunction)
        assert not isinstance(lambda: 0, types.Callable)


# -- tf.debugging.assert_shapes --------------------------------------------------------
SHAPE_ROWS = {
    "symbols_agree": [("x", ("N", "Q")), ("y", ("N", "D"))],
    "symbol_disagrees": [("x", ("N", "Q")), ("y", ("Q", 4))],
    "rank_differs": [("x", (2, 3, 4))],
    "scalar_as_rank_0": [("s", ())],
    "scalar_as_size_1": [("s", (1,))],
    "leading_ellipsis": [("x", ("...", "Q")), ("y", (3,))],
    "leading_star": [("x", ["*", 3])],
    "star_not_first": [("x", (2, "*"))],
    "not_iterable": [("x", 3)],
    "none_is_no_constraint": [("x", None)],
    "dot_is_any_size": [("x", (".", 3))],
    "ellipsis_size_differs": [("x", (Ellipsis, 4))],
    "string_as_symbols": [("x", "NQ")],
    "vector_of_one_as_scalar": [("one", ())],
    "vector_of_two_as_scalar": [("two", ())],
    "matrix_as_scalar": [("x", ())],
    "ellipsis_rank_too_low": [("two", ("...", 2, 3))],
}


def _shapes_outcome(m, rows, message):
    values = {
        "x": m.zeros([2, 3]),
        "y": m.zeros([2, 4]),
        "s": m.constant(1.0),
        "one": m.zeros([1]),
        "two": m.zeros([2]),
    }
    try:
        m.debugging.assert_shapes([(values[k], s) for k, s in rows], message=message)
    except ValueError as e:
        return str(e)
    return None


@pytest.mark.parametrize("message", [None, "Shapes differ"])
@pytest.mark.parametrize("name", list(SHAPE_ROWS))
def test_assert_shapes_matches_tensorflow(name, message, tf):
    rows = SHAPE_ROWS[name]
    assert _shapes_outcome(jaxtape, rows, message) == _shapes_outcome(tf, rows, message)


def test_assert_shapes_checks_while_tracing():
    @jaxtape.function
    def f(x, y):
        jaxtape.debugging.assert_shapes([(x, ("N", 3)), (y, ("N",))])
        return x

    f(jaxtape.zeros([2, 3]), jaxtape.zeros([2]))
    with pytest.raises(ValueError, match="must have size 2"):
        f(jaxtape.zeros([2, 3]), jaxtape.zeros([5]))


def test_check_pinned_matches_tensorflow_without_cuda(tf):
    if jaxtape.test.is_built_with_cuda() or tf.test.is_built_with_cuda():
        pytest.skip("compares the CPU-only builds' error; a CUDA build pins instead")
    with pytest.raises(tf.errors.FailedPreconditionError) as theirs:
        tf.check_pinned(tf.constant([1.0]))
    with pytest.raises(jaxtape.errors.FailedPreconditionError) as ours:
        jaxtape.check_pinned(jaxtape.constant([1.0]))
    assert str(ours.value) == str(theirs.value).split("}} ")[-1].removesuffix(" name: ")


def test_check_pinned_on_a_gpu_build():
    if not jaxtape.test.is_built_with_cuda() or not jaxtape.test.is_gpu_available():
        pytest.skip("needs jaxlib's CUDA plugin and a GPU")
    import jax

    x = jaxtape.constant([1.0, 2.0])
    with pytest.raises(jaxtape.errors.InvalidArgumentError, match="not in pinned"):
        jaxtape.check_pinned(x)
    sharding = jax.sharding.SingleDeviceSharding(jax.devices("gpu")[0])
    pinned = jax.device_put(np.float32([1.0]), sharding.with_memory_kind("pinned_host"))
    assert jaxtape.check_pinned(pinned).numpy().tolist() == [1.0]


EXPERIMENTAL_DTYPES = [
    "float8_e5m2",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e4m3b11fnuz",
    "float8_e5m2fnuz",
    "int4",
    "uint4",
    "int2",
    "uint2",
    "float4_e2m1fn",
]


@pytest.mark.parametrize("name", EXPERIMENTAL_DTYPES)
def test_experimental_dtypes_match_tensorflow(name, tf):
    ours = getattr(jaxtape.dtypes.experimental, name)
    theirs = getattr(tf.dtypes.experimental, name)
    assert str(ours) == str(theirs)
    for attr in DTYPE_ATTRS:
        assert _attr(ours, attr) == _attr(theirs, attr), attr
    assert float(ours.min) == float(theirs.min) and float(ours.max) == float(theirs.max)
    assert ours.as_numpy_dtype is theirs.as_numpy_dtype
    assert jaxtape.as_dtype(theirs.as_datatype_enum) is ours
    values = np.array([0.3, 1.0, 1.6, 3.0, -2.0], np.float32)
    if ours.is_integer:  # (out-of-range float -> int casts differ by backend)
        values = np.clip(values, float(theirs.min), float(theirs.max))
    x = jaxtape.cast(jaxtape.constant(values), ours)
    assert x.dtype == ours
    try:  # (TF's CPU kernels cast to float8_e5m2 and float8_e4m3fn only)
        expected = tf.cast(tf.constant(values), theirs).numpy()
    except tf.errors.UnimplementedError:
        expected = values.astype(theirs.as_numpy_dtype)  # ml_dtypes' rounding
    np.testing.assert_array_equal(
        x.numpy().astype(np.float32), expected.astype(np.float32)
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(allowed_batch_sizes=[4, 2]),
        dict(allowed_batch_sizes=[2, 3], enable_large_batch_splitting=False),
    ],
    ids=["not_increasing", "last_is_not_max"],
)
def test_batch_function_checks_batch_sizes_when_called_as_tensorflow(kwargs, tf):
    texts = []
    for m in (tf, jaxtape):

        @m.nondifferentiable_batch_function(1, 4, 10, **kwargs)
        def double(a):
            return a * 2.0

        with pytest.raises(m.errors.InvalidArgumentError) as info:
            double(m.constant([[1.0]]))
        texts.append(str(info.value).split("}} ")[-1].removesuffix(" name: "))
    assert texts[1] == texts[0]
