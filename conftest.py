"""Root pytest setup: 4 virtual CPU devices before JAX starts; doctest names."""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import jaxtape  # noqa: E402


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace):
    """Docstring examples use `jaxtape`, `jnp` and `np` as the docs do."""
    doctest_namespace.update(jaxtape=jaxtape, jnp=jnp, np=np)
