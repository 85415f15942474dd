"""Shared fixtures: the TF parity oracle, a NumPy RNG (device setup: ../conftest.py)."""

import numpy as np
import pytest


@pytest.fixture(scope="session")
def tf():
    """Real TensorFlow, the test-only oracle (the `parity` extra)."""
    return pytest.importorskip("tensorflow")


@pytest.fixture
def rng():
    return np.random.default_rng(0)
