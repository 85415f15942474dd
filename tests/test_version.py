"""Version checks written for TensorFlow take the branch they take on TF 2.21.

`jaxtape.__version__` is the TF API version jaxtape mirrors (jaxtape/version.py
says why); jaxtape's own release is `__jaxtape_version__`. The oracle for the
checks is real TensorFlow running the same snippet.
"""

import importlib.metadata
import pathlib
import re

import packaging.version
import pytest

import jaxtape
from jaxtape._src import tf_api_names
from jaxtape._src.missing import NotImplementedInJaxtapeError

ROOT = pathlib.Path(__file__).resolve().parents[1]

# Checks found in TF 2.x code: (id, check of a module imported as `tf`).
VERSION_CHECKS = {
    "string_compare": lambda tf: tf.__version__ >= "2.",
    "packaging_major": lambda tf: packaging.version.parse(tf.__version__).major == 2,
    "int_split": lambda tf: int(tf.__version__.split(".")[0]) >= 2,
    "keras3_era": lambda tf: (
        packaging.version.parse(tf.__version__) >= packaging.version.parse("2.16")
    ),
    "tuple_of_ints": lambda tf: (
        tuple(map(int, tf.__version__.split(".")[:3])) >= (2, 4, 0)
    ),
    "startswith": lambda tf: tf.__version__.startswith("2."),
    "version_module": lambda tf: tf.version.VERSION == tf.__version__,
    "not_tf1": lambda tf: not tf.__version__.startswith("1."),
}


@pytest.mark.parametrize("check", VERSION_CHECKS.values(), ids=VERSION_CHECKS)
def test_version_check_passes_as_on_tensorflow(check, tf):
    assert check(jaxtape) is True
    if tf.__version__ == tf_api_names.TF_VERSION:
        assert check(jaxtape) == check(tf)


def test_version_is_the_tf_api_jaxtape_mirrors():
    assert jaxtape.__version__ == jaxtape.version.VERSION == tf_api_names.TF_VERSION
    assert packaging.version.parse(jaxtape.__version__).release[:2] == (2, 21)


def test_version_strings_have_tfs_types(tf):
    for name in ["VERSION", "GIT_VERSION", "COMPILER_VERSION"]:
        assert type(getattr(jaxtape.version, name)) is type(getattr(tf.version, name))
    for name in ["__version__", "__git_version__", "__compiler_version__"]:
        assert type(getattr(jaxtape, name)) is type(getattr(tf, name))
    assert jaxtape.__git_version__ == jaxtape.version.GIT_VERSION
    assert jaxtape.__compiler_version__ == jaxtape.version.COMPILER_VERSION


def test_jaxtape_version_is_the_package_version():
    pyproject = (ROOT / "pyproject.toml").read_text()
    [project_version] = re.findall(r'^version = "(.*)"$', pyproject, re.MULTILINE)
    assert jaxtape.__jaxtape_version__ == project_version
    assert jaxtape.version.JAXTAPE_VERSION == jaxtape.__jaxtape_version__
    assert jaxtape.__jaxtape_version__ in jaxtape.version.GIT_VERSION
    # The README's test command installs the package (`pip install -e`), so its
    # metadata must be there and agree.
    installed = importlib.metadata.version("jaxtape")
    assert installed == jaxtape.__jaxtape_version__


def test_graph_def_versions_say_not_implemented(tf):
    assert isinstance(tf.version.GRAPH_DEF_VERSION, int)  # TF has it ...
    with pytest.raises(NotImplementedInJaxtapeError, match="GRAPH_DEF_VERSION`"):
        _ = jaxtape.version.GRAPH_DEF_VERSION  # ... jaxtape writes none
