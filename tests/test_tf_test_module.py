"""`jaxtape.test` against TF's `tf.test`: compute_gradient's Jacobians, TestCase's
assertions (pass/fail and messages), the platform queries, Benchmark, main."""

import logging
import sys

import numpy as np
import pytest

import jaxtape

GRADIENT_ROWS = {
    "square": (lambda m, x: x * x, [np.float32(3.0)]),
    "matmul": (
        lambda m, a, b: m.matmul(a, b),
        [np.arange(6, dtype=np.float32).reshape(2, 3) / 5, np.ones((3, 2), np.float32)],
    ),
    "tanh_sum_float64": (
        lambda m, x: m.reduce_sum(m.tanh(x), axis=0),
        [np.linspace(-1, 1, 6).reshape(3, 2)],
    ),
    "complex_square": (lambda m, z: z * z, [np.array([1 + 2j, -0.5j], np.complex64)]),
    "compiled": (
        lambda m, x: m.function(lambda v: m.sin(v) * v)(x),
        [np.float32([0.5, 1.0])],
    ),
}


@pytest.mark.parametrize("name", list(GRADIENT_ROWS))
def test_compute_gradient_matches_tensorflow(name, tf):
    fn, args = GRADIENT_ROWS[name]
    theirs = tf.test.compute_gradient(lambda *a: fn(tf, *a), args)
    ours = jaxtape.test.compute_gradient(lambda *a: fn(jaxtape, *a), args)
    assert isinstance(ours, tuple) and len(ours) == 2
    for our_list, their_list in zip(ours, theirs):
        assert len(our_list) == len(their_list) == len(args)
        for o, t in zip(our_list, their_list):
            assert o.shape == t.shape and o.dtype == t.dtype
            np.testing.assert_allclose(o, t, rtol=1e-3, atol=1e-3)


def test_compute_gradient_refuses_a_non_list_as_tensorflow(tf):
    with pytest.raises(ValueError, match="must be a list or tuple"):
        tf.test.compute_gradient(lambda x: x, 1.0)
    with pytest.raises(ValueError, match="must be a list or tuple"):
        jaxtape.test.compute_gradient(lambda x: x, 1.0)


# -- TestCase: the same assertion calls through TF's class and jaxtape's -------
ASSERTION_ROWS = {
    "all_close_pass": ("assertAllClose", ([1.0, 2.0], [1.0, 2.0000001])),
    "all_close_fail": ("assertAllClose", ([1.0, 2.0], [1.0, 2.1])),
    "all_close_nested_dict": (
        "assertAllClose",
        ({"a": [1.0], "b": (2.0, 3.0)}, {"a": [1.0], "b": (2.0, 3.0)}),
    ),
    "all_close_dict_vs_list": ("assertAllClose", ({"a": 1.0}, [1.0])),
    "all_close_shape_mismatch": ("assertAllClose", ([1.0, 2.0], [[1.0, 2.0]])),
    "all_close_nan_equal": ("assertAllClose", ([np.nan], [np.nan])),
    "all_close_float16_by_type": (
        "assertAllCloseAccordingToType",
        (np.float16([1.0]), np.float16([1.0005])),
    ),
    "not_all_close": ("assertNotAllClose", ([1.0], [1.0])),
    "all_equal_pass": ("assertAllEqual", ([[1, 2]], np.array([[1, 2]]))),
    "all_equal_fail": ("assertAllEqual", ([1, 2], [1, 3])),
    "all_equal_strings": ("assertAllEqual", ([b"a", b"b"], [b"a", b"b"])),
    "not_all_equal": ("assertNotAllEqual", ([1, 2], [1, 3])),
    "all_greater": ("assertAllGreater", ([2.0, 3.0], 2.0)),
    "all_less_equal": ("assertAllLessEqual", ([2.0, 3.0], 3.0)),
    "in_range": ("assertAllInRange", ([0.0, 0.5, 1.0], 0.0, 1.0)),
    "in_open_range_fail": ("assertAllInRange", ([0.0, 0.5, 1.0], 0.0, 1.0, True, True)),
    "in_range_nan": ("assertAllInRange", ([0.0, np.nan], 0.0, 1.0)),
    "in_set_fail": ("assertAllInSet", ([1, 2, 5], {1, 2})),
    "dtype_equal": ("assertDTypeEqual", (np.float32([1.0]), np.float32)),
    "dtype_not_equal": ("assertDTypeEqual", (np.float32([1.0]), np.float64)),
    "shape_equal_fail": ("assertShapeEqual", (np.zeros((2, 3)), np.zeros((3, 2)))),
    "near": ("assertNear", (1.0, 1.05, 0.1)),
    "near_fail": ("assertNear", (1.0, 1.5, 0.1)),
    "array_near": ("assertArrayNear", ([1.0, 2.0], [1.01, 2.0], 0.1)),
    "ndarray_near_fail": ("assertNDArrayNear", (np.ones(3), np.zeros(3), 0.5)),
    "device_equal": ("assertDeviceEqual", ("/cpu:0", "/device:CPU:0")),
}


def _outcome(case, method, args):
    try:
        getattr(case, method)(*args)
    except Exception as e:  # noqa: BLE001 - the type and text are compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("name", list(ASSERTION_ROWS))
def test_test_case_assertions_match_tensorflow(name, tf):
    method, args = ASSERTION_ROWS[name]
    theirs = _outcome(tf.test.TestCase("__init__"), method, args)
    ours = _outcome(jaxtape.test.TestCase("__init__"), method, args)
    if theirs is None or ours is None:
        assert ours == theirs
    else:
        assert ours[0] == theirs[0]
        if method in ("assertAllInRange", "assertAllInSet", "assertNear"):
            assert ours[1] == theirs[1]


def test_test_case_assertions_take_tensors_and_evaluate_gives_numpy(tf):
    for m in (tf, jaxtape):
        case = m.test.TestCase("__init__")
        x = m.constant([[1.0, 2.0]])
        case.assertAllClose(
            {"x": x, "y": [x, 2 * x]}, {"x": [[1.0, 2.0]], "y": [[[1, 2]], [[2, 4]]]}
        )
        case.assertShapeEqual(np.zeros((1, 2)), x)
        case.assertDTypeEqual(x, np.float32)
        out = case.evaluate({"a": x, "b": (x + 1, None), "c": lambda: x * 3})
        assert isinstance(out["a"], np.ndarray) and out["b"][1] is None
        np.testing.assert_array_equal(out["c"], [[3.0, 6.0]])
        with case.assertRaisesOpError("cannot compute|expected to be a"):
            m.constant(1.0) + m.constant(1)
        with pytest.raises(AssertionError):
            with case.assertRaisesOpError("no such text"):
                m.constant(1.0) + m.constant(1)
        with case.assertRaisesWithPredicateMatch(
            ValueError, lambda e: "boom" in str(e)
        ):
            raise ValueError("boom")


def test_test_case_set_up_seeds_random_ops_reproducibly():
    case = jaxtape.test.TestCase("__init__")
    case.setUp()
    first = (jaxtape.random.uniform([3]).numpy(), np.random.rand())
    case.setUp()
    second = (jaxtape.random.uniform([3]).numpy(), np.random.rand())
    np.testing.assert_array_equal(first[0], second[0])
    assert first[1] == second[1]
    with case.cached_session() as sess:
        np.testing.assert_array_equal(sess.run(jaxtape.ones([2])), [1.0, 1.0])


def test_platform_queries_match_tensorflow_on_this_machine(tf):
    import platform

    host = "aarch64" if platform.machine().lower() in ("aarch64", "arm64") else "x86_64"
    for name, args in (("is_built_with_xla", ()), ("is_cpu_target_available", (host,))):
        assert getattr(jaxtape.test, name)(*args) == getattr(tf.test, name)(*args)
    with pytest.raises(AssertionError, match="Unknown CPU target"):
        jaxtape.test.is_cpu_target_available("AArch64")
    assert jaxtape.test.is_built_with_gpu_support() == (
        jaxtape.test.is_built_with_cuda() or jaxtape.test.is_built_with_rocm()
    )
    jaxtape.test.experimental.sync_devices()


def test_decorators_match_tensorflow(tf):
    class Case:
        pass

    for m in (tf, jaxtape):
        assert m.test.with_eager_op_as_function(Case) is Case
        assert m.test.with_eager_op_as_function(only_as_function=True)(Case) is Case

    class Skipping(jaxtape.test.TestCase):
        @jaxtape.test.disable_with_predicate(lambda: True, "not here")
        def test_skipped(self):
            raise RuntimeError("ran")

        @jaxtape.test.disable_with_predicate(lambda: False, "not here")
        def test_run(self):
            pass

    import unittest

    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(Skipping).run(result)
    assert result.skipped and result.skipped[0][1] == "not here"
    assert result.testsRun == 2 and not result.errors


def test_benchmark_reports_tensorflows_line(caplog):
    class MyBenchmark(jaxtape.test.Benchmark):
        def benchmark_add(self):
            self.report_benchmark(iters=10, wall_time=0.5, extras={"k": 1})

    assert jaxtape.test.Benchmark.is_abstract() and not MyBenchmark.is_abstract()
    with caplog.at_level(logging.INFO, logger="jaxtape"):
        MyBenchmark().benchmark_add()
    assert caplog.messages == [
        "Benchmark [MyBenchmark.benchmark_add] iters: 10, wall_time: 0.5, "
        "cpu_time: -1,throughput: -1, extras: {'k': 1}, metrics: None"
    ]
    with pytest.raises(NotImplementedError, match="Session"):
        MyBenchmark().run_op_benchmark(None, jaxtape.ones([1]))


def test_main_runs_the_tests_of_the_main_module(monkeypatch, capsys):
    import types

    main = types.ModuleType("__main__")

    class AddTest(jaxtape.test.TestCase):
        def test_add(self):
            self.assertAllEqual(jaxtape.add(1, 2), 3)

    main.AddTest = AddTest
    monkeypatch.setitem(sys.modules, "__main__", main)
    with pytest.raises(SystemExit) as done:  # (unittest.main exits, as TF's)
        jaxtape.test.main(argv=["some_test"])
    assert not done.value.code
    assert "Ran 1 test" in capsys.readouterr().err
