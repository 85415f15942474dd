"""TF's `tf.test.TestCase` and the test helpers TF 2 test code uses. Layer L4.

`TestCase` is a `unittest.TestCase` with TF's assertions (`assertAllClose`,
`assertAllEqual`, `assertAllInRange`, `assertRaisesOpError`...) and
`evaluate`, which turns (nested) Tensors into NumPy values. The assertion
bodies follow TF's `test_util.TensorFlowTestCase` (same tolerances, same
messages), so a TF test class runs unchanged with `import jaxtape as tf`.
"""

from __future__ import annotations

import contextlib
import functools
import math
import random
import re
import shutil
import tempfile
import unittest
from collections.abc import Mapping
from typing import Any

import numpy as np

from jaxtape._src.core import dtypes, errors
from jaxtape._src.core.tensor import Tensor
from jaxtape._src.state import random_ops
from jaxtape._src.structured.ragged import RaggedTensor
from jaxtape._src.structured.sparse import SparseTensor

_DEFAULT_SEED = 87654321  # TF's random_seed.DEFAULT_GRAPH_SEED


class _EagerSession:
    """What `cached_session()` yields: `run(fetches)` evaluates (TF 2 eager)."""

    def __init__(self, case: TestCase):
        self._case = case

    def run(self, fetches, feed_dict=None):
        if feed_dict:
            raise NotImplementedError(
                "jaxtape has no graphs to feed: feed_dict is not implemented; "
                "call the function with the values instead."
            )
        return self._case.evaluate(fetches)


class TestCase(unittest.TestCase):
    """TF's `tf.test.TestCase` for eager (TF 2) tests.

    `setUp` seeds Python's, NumPy's and jaxtape's global random generators
    with TF's default seed (87654321), as TF's does.

    Differences from TensorFlow:
      The base is `unittest.TestCase` (TF's is absl's `absltest.TestCase`:
      its extra assertions such as `assertLen`, `assertEmpty` and
      `assertSameStructure` are not here). Graph-mode helpers
      (`assertProtoEquals`, `checkedThread`, `test_session`) are left out;
      `session()`/`cached_session()` yield an object whose `run` evaluates.
    """

    def setUp(self):
        super().setUp()
        random.seed(_DEFAULT_SEED)
        np.random.seed(_DEFAULT_SEED)
        random_ops.set_seed(_DEFAULT_SEED)

    # -- evaluation -----------------------------------------------------------
    def evaluate(self, tensors):
        """The NumPy values of a Tensor or a nested structure of Tensors
        (SparseTensors and RaggedTensors keep their structure with NumPy
        components; a callable is called first)."""
        return _map_structure(self._eval_tensor, tensors)

    def _eval_tensor(self, tensor):
        if tensor is None:
            return None
        if callable(tensor) and not isinstance(tensor, Tensor):
            return self.evaluate(tensor())
        if isinstance(tensor, SparseTensor):
            return SparseTensor(
                np.asarray(tensor.indices),
                np.asarray(tensor.values),
                np.asarray(tensor.dense_shape),
            )
        if isinstance(tensor, RaggedTensor):
            return tensor.to_list()
        numpy = getattr(tensor, "numpy", None)
        if callable(numpy):
            return numpy()
        return tensor

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """TF 2 eager: a context whose `run(fetches)` evaluates."""
        if graph is not None or config is not None or force_gpu:
            raise NotImplementedError(
                "jaxtape's TestCase.session takes no graph, config or force_gpu."
            )
        yield _EagerSession(self)

    cached_session = session

    def get_temp_dir(self) -> str:
        """A temporary directory for this test, removed when it ends."""
        path = getattr(self, "_jaxtape_temp_dir", None)
        if path is None:
            path = tempfile.mkdtemp(prefix=f"{type(self).__name__}-")
            self._jaxtape_temp_dir = path
            self.addCleanup(shutil.rmtree, path, True)
        return path

    # -- closeness ----------------------------------------------------------------
    def _GetNdArray(self, a):
        if isinstance(a, Tensor) or hasattr(a, "numpy"):
            a = self.evaluate(a)
        if not isinstance(a, np.ndarray):
            try:
                return np.array(a)
            except ValueError as e:
                if "inhomogeneous shape" in str(e):
                    return np.array(a, dtype=object)
                raise
        return a

    def _assertArrayLikeAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        a, b = self._GetNdArray(a), self._GetNdArray(b)
        if a.shape != b.shape and (b.ndim <= 3 or b.size < 500):
            mismatch = (
                f"Shape mismatch: expected {a.shape}, got {b.shape} with contents {b}."
            )
        else:
            mismatch = f"Shape mismatch: expected {a.shape}, got {b.shape}."
        self.assertEqual(a.shape, b.shape, mismatch)
        msgs = [msg]
        a_dtype = a.dtype
        a, b = _as_float32_if_custom(a), _as_float32_if_custom(b)
        if not np.allclose(a, b, rtol=rtol, atol=atol):
            cond = np.logical_or(
                np.abs(a - b) > atol + rtol * np.abs(b), np.isnan(a) != np.isnan(b)
            )
            if a.ndim:
                x, y = a[np.where(cond)], b[np.where(cond)]
                msgs.append(f"not close where = {np.where(cond)}")
            else:
                x, y = a, b
            msgs.append(f"not close lhs = {x}")
            msgs.append(f"not close rhs = {y}")
            msgs.append(f"not close dif = {np.abs(x - y)}")
            msgs.append(f"not close tol = {atol + rtol * np.abs(y)}")
            msgs.append(f"dtype = {a_dtype}, shape = {a.shape}")
            np.testing.assert_allclose(
                a,
                b,
                rtol=rtol,
                atol=atol,
                err_msg="\n".join(map(str, msgs)),
                equal_nan=True,
            )

    def _assertAllCloseRecursive(self, a, b, rtol=1e-6, atol=1e-6, path=None, msg=None):
        path = path or []
        path_str = ("[" + "][".join(str(p) for p in path) + "]") if path else ""
        msg = msg if msg else ""
        if hasattr(a, "_asdict"):
            a = a._asdict()
        if hasattr(b, "_asdict"):
            b = b._asdict()
        a_is_dict = isinstance(a, Mapping)
        if a_is_dict != isinstance(b, Mapping):
            raise ValueError(
                f"Can't compare dict to non-dict, a{path_str} vs b{path_str}. {msg}"
            )
        if a_is_dict:
            self.assertCountEqual(
                a.keys(),
                b.keys(),
                msg=f"mismatched keys: a{path_str} has keys {a.keys()}, but "
                f"b{path_str} has keys {b.keys()}. {msg}",
            )
            for k in a:
                self._assertAllCloseRecursive(a[k], b[k], rtol, atol, path + [k], msg)
            return
        text = f"Mismatched value: a{path_str} is different from b{path_str}. {msg}"
        if isinstance(a, (list, tuple)):
            try:
                self._assertArrayLikeAllClose(a, b, rtol=rtol, atol=atol, msg=text)
            except (ValueError, TypeError, NotImplementedError):
                if len(a) != len(b):
                    raise ValueError(
                        f"Mismatched length: a{path_str} has {len(a)} items, but "
                        f"b{path_str} has {len(b)} items. {msg}"
                    ) from None
                for i, (x, y) in enumerate(zip(a, b)):
                    self._assertAllCloseRecursive(
                        x, y, rtol, atol, path + [str(i)], msg
                    )
            return
        try:
            self._assertArrayLikeAllClose(a, b, rtol=rtol, atol=atol, msg=text)
        except TypeError as e:
            detail = (
                f"Error: a{path_str} has {type(a)}, but b{path_str} has {type(b)}. "
                + msg
            )
            e.args = (e.args[0] + " : " + detail,) + e.args[1:]
            raise

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        """Asserts that two structures of arrays or Tensors are close (TF's)."""
        self._assertAllCloseRecursive(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertAllCloseAccordingToType(
        self,
        a,
        b,
        rtol=1e-6,
        atol=1e-6,
        float_rtol=1e-6,
        float_atol=1e-6,
        half_rtol=1e-3,
        half_atol=1e-3,
        bfloat16_rtol=1e-2,
        bfloat16_atol=1e-2,
        msg=None,
    ):
        """`assertAllClose` with the tolerance widened by the dtype (TF's)."""
        a, b = self._GetNdArray(a), self._GetNdArray(b)
        kinds = {a.dtype, b.dtype}
        if kinds & {np.dtype(np.float32), np.dtype(np.complex64)}:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if np.dtype(np.float16) in kinds:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        if np.dtype(dtypes.bfloat16.as_numpy_dtype) in kinds:
            rtol, atol = max(rtol, bfloat16_rtol), max(atol, bfloat16_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)
        except AssertionError:
            return
        raise AssertionError(f"The two values are close at all elements. {msg or ''}")

    def assertNear(self, f1, f2, err, msg=None):
        f1, f2 = np.squeeze(f1), np.squeeze(f2)
        if f1 != f2:
            diff = math.fabs(f1 - f2)
            self.assertTrue(
                diff <= err,
                f"{f1:f} != {f2:f} +/- {err:f} (difference: {diff:g})"
                + (f" ({msg})" if msg is not None else ""),
            )

    def assertArrayNear(self, farray1, farray2, err, msg=None):
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg=msg)

    def assertNDArrayNear(self, ndarray1, ndarray2, err, msg=None):
        self.assertTrue(np.linalg.norm(ndarray1 - ndarray2) < err, msg=msg)

    # -- equality and ranges ------------------------------------------------------
    def assertAllEqual(self, a, b, msg=None):
        """Asserts that two arrays or Tensors have the same shape and values
        (NaNs equal), TF's."""
        msg = msg if msg else ""
        a, b = self._GetNdArray(a), self._GetNdArray(b)
        if b.ndim <= 3 or b.size < 500:
            text = (
                f"Shape mismatch: expected {a.shape}, got {b.shape}. "
                f"Contents: {b!r}. \n{msg}."
            )
        else:
            text = f"Shape mismatch: expected {a.shape}, got {b.shape}. {msg}"
        self.assertEqual(a.shape, b.shape, text)
        same = a == b
        if a.dtype.kind == "f" or a.dtype == dtypes.bfloat16.as_numpy_dtype:
            same = np.logical_or(same, np.logical_and(np.isnan(a), np.isnan(b)))
        if not np.all(same):
            msgs = [msg]
            diff = np.logical_not(same)
            if a.ndim:
                x, y = a[np.where(diff)], b[np.where(diff)]
                msgs.append(f"not equal where = {np.where(diff)}")
            else:
                x, y = a, b
            msgs.append(f"not equal lhs = {x!r}")
            msgs.append(f"not equal rhs = {y!r}")
            if a.dtype.kind != b.dtype.kind and {a.dtype.kind, b.dtype.kind} <= set(
                "USO"
            ):
                a, b = _as_bytes(a), _as_bytes(b)
            np.testing.assert_array_equal(a, b, err_msg="\n".join(msgs))

    def assertNotAllEqual(self, a, b, msg=None):
        try:
            self.assertAllEqual(a, b)
        except AssertionError:
            return
        raise AssertionError(f"The two values are equal at all elements. {msg or ''}")

    def assertAllGreater(self, a, comparison_target):
        self.assertGreater(np.min(self._GetNdArray(a)), comparison_target)

    def assertAllLess(self, a, comparison_target):
        self.assertLess(np.max(self._GetNdArray(a)), comparison_target)

    def assertAllGreaterEqual(self, a, comparison_target):
        self.assertGreaterEqual(np.min(self._GetNdArray(a)), comparison_target)

    def assertAllLessEqual(self, a, comparison_target):
        self.assertLessEqual(np.max(self._GetNdArray(a)), comparison_target)

    def assertAllInRange(
        self,
        target,
        lower_bound,
        upper_bound,
        open_lower_bound=False,
        open_upper_bound=False,
    ):
        """Asserts every element is in the range (TF's messages)."""
        target = self._GetNdArray(target)
        if not (
            np.issubdtype(target.dtype, np.floating)
            or np.issubdtype(target.dtype, np.integer)
        ):
            raise AssertionError(
                f"The value of {target} does not have an ordered numeric type, "
                f"instead it has type: {target.dtype}"
            )
        nans = np.where(np.isnan(target))
        if np.size(nans):
            raise AssertionError(
                f"{len(nans[0])} of the {np.size(target)} element(s) are NaN. "
                "Subscripts(s) and value(s) of the NaN element(s):\n"
                + "\n".join(_format_subscripts(nans, target))
            )
        range_str = (
            ("(" if open_lower_bound else "[")
            + f"{lower_bound}, {upper_bound}"
            + (")" if open_upper_bound else "]")
        )
        low = target <= lower_bound if open_lower_bound else target < lower_bound
        high = target >= upper_bound if open_upper_bound else target > upper_bound
        where = np.where(np.logical_or(low, high))
        if np.size(where):
            raise AssertionError(
                f"{len(where[0])} of the {np.size(target)} element(s) are outside "
                f"the range {range_str}. Subscript(s) and value(s) of the offending "
                "elements:\n" + "\n".join(_format_subscripts(where, target))
            )

    def assertAllInSet(self, target, expected_set):
        target = self._GetNdArray(target)
        diff = np.setdiff1d(target.flatten(), list(expected_set))
        if np.size(diff):
            raise AssertionError(
                f"{np.size(diff)} unique element(s) are not in the set "
                f"{expected_set}: {diff}"
            )

    def assertDTypeEqual(self, target, expected_dtype):
        """Asserts the NumPy dtype of `target`'s values is `expected_dtype`."""
        self.assertEqual(self._GetNdArray(target).dtype, expected_dtype)

    def assertShapeEqual(self, input_a, input_b, msg=None):
        """Asserts two arrays or Tensors have the same shape."""
        for name, value in (("input_a", input_a), ("input_b", input_b)):
            if not isinstance(value, (np.ndarray, np.generic, Tensor)):
                raise TypeError(
                    f"{name} must be a Numpy ndarray, Numpy scalar, or a Tensor."
                    f"Instead received {type(value)}"
                )
        shape_a = list(input_a.shape)
        shape_b = list(input_b.shape)
        self.assertAllEqual(shape_a, shape_b, msg=msg)

    def assertDeviceEqual(self, device1, device2, msg=None):
        """Asserts two device strings name the same device (TF's canonical form)."""
        from jaxtape._src.core.device_spec import DeviceSpec

        d1 = DeviceSpec.from_string(_device_text(device1)).to_string()
        d2 = DeviceSpec.from_string(_device_text(device2)).to_string()
        self.assertEqual(d1, d2, f"Devices {d1} and {d2} are not equal. {msg or ''}")

    # -- errors -------------------------------------------------------------------
    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(
        self, exception_type, expected_err_re_or_predicate
    ):
        """A context that expects `exception_type` whose message matches the
        regex (or for which the predicate holds), TF's."""

        def matches(e) -> bool:
            if callable(expected_err_re_or_predicate):
                return bool(expected_err_re_or_predicate(e))
            text = e.message if isinstance(e, errors.OpError) else str(e)
            return re.search(expected_err_re_or_predicate, text) is not None

        try:
            yield
            self.fail(exception_type.__name__ + " not raised")
        except Exception as e:  # (TF's: any other error is a failure)
            if not isinstance(e, exception_type) or not matches(e):
                raise AssertionError(f"Exception of type {type(e)}: {e}") from e

    def assertRaisesOpError(self, expected_err_re_or_predicate):
        return self.assertRaisesWithPredicateMatch(
            errors.OpError, expected_err_re_or_predicate
        )

    def assertRaisesIncompatibleShapesError(
        self, exception_type=errors.InvalidArgumentError
    ):
        return self.assertRaisesWithPredicateMatch(
            exception_type,
            r"Incompatible shapes|Dimensions must be equal|"
            r"required broadcastable shapes",
        )


def _device_text(device) -> str:
    return device if isinstance(device, str) else device.to_string()


def _map_structure(fn, structure):
    if isinstance(structure, Mapping):
        mapping: Any = type(structure)
        return mapping((k, _map_structure(fn, v)) for k, v in structure.items())
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        named: Any = type(structure)
        return named(*(_map_structure(fn, v) for v in structure))
    if isinstance(structure, (list, tuple)):
        return type(structure)(_map_structure(fn, v) for v in structure)
    return fn(structure)


def _as_float32_if_custom(a: np.ndarray) -> np.ndarray:
    """bfloat16 and float8 arrays as float32 (NumPy's allclose lacks them)."""
    if a.dtype.kind == "V" or (
        a.dtype.kind == "f" and a.dtype.type.__module__ == "ml_dtypes"
    ):
        return a.astype(np.float32)
    return a


def _as_bytes(a: np.ndarray) -> np.ndarray:
    return np.array([v.encode("utf-8") if isinstance(v, str) else v for v in a.flat])


def _format_subscripts(subscripts, value, limit=10, indent=2) -> list[str]:
    """TF's listing of offending `[i j] : value` pairs."""
    prefix = " " * indent
    if np.ndim(value) == 0:
        return [prefix + "[0] : " + str(value)]
    rows = np.transpose(subscripts)
    lines = [prefix + str(s) + " : " + str(value[tuple(s)]) for s in rows[:limit]]
    if len(rows) > limit:
        lines.append(prefix + "...")
    return lines


def main(argv=None):
    """Runs the tests of `__main__` (TF's `tf.test.main`, on `unittest.main`)."""
    return unittest.main(module="__main__", argv=argv)


def disable_with_predicate(pred, skip_message):
    """Decorator: skips a test method when `pred()` is true (TF's)."""

    def decorator(func):
        @functools.wraps(func)
        def wrapper(self, *args, **kwargs):
            if pred():
                self.skipTest(skip_message)
            return func(self, *args, **kwargs)

        return wrapper

    return decorator


def with_eager_op_as_function(cls=None, only_as_function=False):
    """Returns the class unchanged (TF 2.21's is a no-op kept for old tests)."""
    del only_as_function

    def decorator(c):
        return c

    return decorator(cls) if cls is not None else decorator
