"""Shared test setup: 4 virtual CPU devices, MNIST path, the TF parity oracle."""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import jaxtape  # noqa: E402, F401


@pytest.fixture(scope="session")
def tf():
    """Real TensorFlow, the test-only oracle (the `parity` extra)."""
    return pytest.importorskip("tensorflow")


@pytest.fixture
def rng():
    return np.random.default_rng(0)
