"""`tf.test`'s build and platform queries, `Benchmark`, `experimental.sync_devices`.
Layer L4. Answers are about jaxtape's runtime: jaxlib and its plugins."""

from __future__ import annotations

import inspect
import logging
import os
import platform

import jax
import jax.numpy as jnp

from jaxtape._src.core import device
from jaxtape._src.testing.test_case import _map_structure

_TARGETS = {"x86": "x86", "x86_64": "x86", "aarch64": "arm", "arm": "arm"}


def is_built_with_rocm() -> bool:
    """True when jaxlib's ROCm plugin is installed (TF's `is_built_with_rocm`)."""
    from jaxtape._src.core.sysconfig import get_build_info

    return bool(get_build_info()["is_rocm_build"])


def is_built_with_gpu_support() -> bool:
    """True when jaxlib has a CUDA or ROCm plugin (TF's `is_built_with_gpu_support`)."""
    return device.is_built_with_cuda() or is_built_with_rocm()


def is_built_with_xla() -> bool:
    """True: every jaxtape computation is compiled by XLA."""
    return True


def is_cpu_target_available(target) -> bool:
    """Whether XLA's CPU backend compiles for `target` (`'x86'`, `'x86_64'`,
    `'aarch64'` or `'arm'`; TF's `is_cpu_target_available`).

    Differences from TensorFlow: True only for this machine's architecture
    family (jaxlib's CPU compiler targets the host); TF answers for the LLVM
    targets linked into its binary.
    """
    family = _TARGETS.get(target)
    if family is None:
        raise AssertionError("Unknown CPU target: " + str(target))
    machine = platform.machine().lower()
    host = "x86" if machine in ("x86_64", "amd64", "i386", "i686") else "arm"
    return family == host


def sync_devices() -> None:
    """Waits until every device has finished the work queued on it (TF's
    `tf.test.experimental.sync_devices`): each device runs a tiny program
    after its queue and the host waits for it."""
    for d in jax.devices():
        jax.block_until_ready(jax.device_put(jnp.zeros(()), d) + 0)
    jax.effects_barrier()


class Benchmark:
    """TF's `tf.test.Benchmark`: a base class whose `benchmark*` methods call
    `report_benchmark`, which logs TF's `Benchmark [Class.method] iters: ...`
    line (INFO, logger `jaxtape`).

    Differences from TensorFlow: `run_op_benchmark` needs a TF 1 session and
    is not implemented; the `TEST_REPORT_FILE_PREFIX` proto report is not
    written (it raises NotImplementedError when that variable is set).
    """

    @classmethod
    def is_abstract(cls) -> bool:
        return cls is Benchmark

    def _get_name(self, overwrite_name=None) -> str:
        name = None
        frame = inspect.currentframe()
        while frame is not None:  # (the outermost Benchmark method, as TF)
            if isinstance(frame.f_locals.get("self"), Benchmark):
                name = frame.f_code.co_name
            frame = frame.f_back
        if name is None:
            raise ValueError("Unable to determine calling Benchmark class.")
        return f"{type(self).__name__}.{overwrite_name or name}"

    def report_benchmark(
        self,
        iters=None,
        cpu_time=None,
        wall_time=None,
        throughput=None,
        extras=None,
        name=None,
        metrics=None,
    ):
        """Logs one benchmark's results (TF's text)."""
        if extras is not None and not isinstance(extras, dict):
            raise TypeError("extras must be a dict")
        if os.environ.get("TEST_REPORT_FILE_PREFIX"):
            raise NotImplementedError(
                "jaxtape's Benchmark does not write TF's BenchmarkEntries proto "
                "files (TEST_REPORT_FILE_PREFIX is set); unset it to log only."
            )
        logging.getLogger("jaxtape").info(
            "Benchmark [%s] iters: %d, wall_time: %g, cpu_time: %g,"
            "throughput: %g, extras: %s, metrics: %s",
            self._get_name(overwrite_name=name),
            iters if iters is not None else -1,
            wall_time if wall_time is not None else -1,
            cpu_time if cpu_time is not None else -1,
            throughput if throughput is not None else -1,
            str(extras) if extras else "None",
            str(metrics) if metrics else "None",
        )

    def run_op_benchmark(self, sess, op_or_tensor, *args, **kwargs):
        raise NotImplementedError(
            "Benchmark.run_op_benchmark needs a TF 1 Session, which jaxtape "
            "does not have: time the call yourself (e.g. with timeit, after "
            "a warm-up and `jax.block_until_ready`) and call report_benchmark."
        )

    def evaluate(self, tensors):
        """The NumPy values of (nested) Tensors."""
        return _map_structure(
            lambda t: t.numpy() if callable(getattr(t, "numpy", None)) else t, tensors
        )
