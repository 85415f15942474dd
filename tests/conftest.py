"""Shared fixtures: the TF parity oracle, a NumPy RNG, local MNIST (device
setup and strict JAX settings: ../conftest.py)."""

import os
import pathlib

import numpy as np
import pytest

_REPO = pathlib.Path(__file__).resolve().parent.parent

# TF picks its CPU kernels by the machine: oneDNN's where the CPU has AVX-512,
# Eigen's elsewhere, and their errors differ (a scalar softmax is AbortedError
# in one, InvalidArgumentError in the other). The oracle uses oneDNN's on
# every machine, so that a parity test means the same thing everywhere.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

# Scripts the tests run in child processes (not test modules: importing one
# runs it, which `--doctest-modules` would do).
collect_ignore = ["distribute_child.py"]


@pytest.fixture(scope="session")
def tf():
    """Real TensorFlow, the test-only oracle (the `parity` extra)."""
    return pytest.importorskip("tensorflow")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def local_mnist() -> pathlib.Path | None:
    """A local mnist.npz, found without the network, or None.

    Where `keras.datasets.mnist.load_data()` looks first: `$JAXTAPE_MNIST_PATH`,
    then Keras's cache; also the shared data folder next to the checkout.
    """
    given = os.environ.get("JAXTAPE_MNIST_PATH")
    candidates = [pathlib.Path(given).expanduser()] if given else []
    candidates += [
        pathlib.Path.home() / ".keras" / "datasets" / "mnist.npz",
        _REPO.parent / "shared" / "data" / "mnist.npz",
    ]
    return next((p for p in candidates if p.is_file()), None)


@pytest.fixture
def mnist_path(monkeypatch) -> pathlib.Path:
    """The path of a local mnist.npz, also set as `$JAXTAPE_MNIST_PATH` for the
    test (and the subprocesses it starts); skips when there is none offline."""
    path = local_mnist()
    if path is None:
        pytest.skip(
            "needs MNIST, and no local copy was found: set JAXTAPE_MNIST_PATH to "
            "a copy of Keras's mnist.npz (https://storage.googleapis.com/"
            "tensorflow/tf-keras-datasets/mnist.npz) or put it in "
            "~/.keras/datasets/mnist.npz"
        )
    monkeypatch.setenv("JAXTAPE_MNIST_PATH", str(path))
    return path


def pytest_collection_modifyitems(config, items):
    """Test ids must not hold memory addresses (`<object at 0x...>`): the test
    runs split across worker processes (pytest-xdist), which must collect the
    same ids. Name such parameters with `ids=`."""
    unstable = [item.nodeid for item in items if " at 0x" in item.nodeid]
    if unstable:
        raise pytest.UsageError(
            "test ids with memory addresses (give these parameters ids=): "
            + ", ".join(unstable[:5])
        )


@pytest.fixture(autouse=True)
def _global_seed_does_not_leak():
    """A test that sets jaxtape's global seed (`set_seed`,
    `keras.utils.set_random_seed`) leaves it unset for the next one, so no
    test runs seeded or unseeded by the order xdist gives the files. (The
    reset runs only after such a test: it costs ~16 ms.)"""
    yield
    from jaxtape._src.state import random_ops  # (imported by the tests anyway)

    if random_ops._seeds.global_seed is not None:
        random_ops.set_seed(None)
