"""The rest of TF's top level against real TF: error codes, the quantized and
handle dtypes, DeviceSpec, tf.audio, tf.conv, CriticalSection, tf.sysconfig,
tf.types, traceback filtering and device-placement logging."""

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
