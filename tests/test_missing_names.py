"""A TF name jaxtape lacks says "not implemented in jaxtape yet"; others keep Python's.

The oracles: the installed TensorFlow (the name list stored in the package must
be what TF reports, and each name jaxtape has must be the kind of object TF's
is) and Python's own AttributeError for a module (a name TF lacks too must
read exactly as Python would put it).
"""

import importlib.util
import pathlib
import subprocess
import sys
import types

import pytest

import jaxtape
from jaxtape._src import missing, tf_api_names
from jaxtape._src.missing import MissingNamespace, NotImplementedInJaxtapeError

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _tool(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _walk(root, dotted):
    obj = root
    for part in dotted.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


@pytest.fixture(scope="module")
def coverage():
    return missing.coverage(jaxtape)


def _lacking_leaf(coverage, namespace):
    """A name of TF's `namespace` that jaxtape lacks and that is not a namespace."""
    api = missing.tf_api()
    for name in coverage[namespace][1]:
        if f"{namespace}.{name}" not in api:
            return name
    pytest.skip(f"jaxtape has every name of {namespace}")


def _missing_namespace(coverage):
    """A TF namespace jaxtape lacks entirely (tf.image while it does)."""
    for namespace in ["tf.image", "tf.strings", "tf.signal", *coverage]:
        parent, _, name = namespace.rpartition(".")
        if parent == "tf" and name in coverage["tf"][1] and namespace in coverage:
            return namespace
    pytest.skip("jaxtape has every TF namespace")


def test_name_list_is_what_the_installed_tensorflow_reports(tf):
    import keras

    # The parity extra pins these versions; another install needs the list
    # regenerated (`python tools/gen_tf_api_names.py`) and the pins moved.
    assert (tf.__version__, keras.__version__) == (
        tf_api_names.TF_VERSION,
        tf_api_names.KERAS_VERSION,
    ), "the installed TF/Keras are not the ones pyproject's `parity` extra pins"
    stored = (ROOT / "jaxtape" / "_src" / "tf_api_names.py").read_text()
    assert _tool("gen_tf_api_names").render(tf) == stored


def test_every_tf_name_is_present_or_raises_not_implemented(coverage):
    api = missing.tf_api()
    assert set(coverage) == set(api)
    for namespace, (present, lacking) in coverage.items():
        assert sorted(present + lacking) == sorted(api[namespace])
        module = _walk(jaxtape, namespace)
        for name in lacking:
            dotted = f"{namespace}.{name}"
            if dotted in api:  # a namespace jaxtape lacks: a module that says so
                assert isinstance(getattr(module, name), MissingNamespace), dotted
                continue
            assert not hasattr(module, name), dotted
            assert getattr(module, name, "default") == "default", dotted
            with pytest.raises(NotImplementedInJaxtapeError) as info:
                getattr(module, name)
            message = str(info.value)
            assert message.startswith(
                f"`{dotted}` is not implemented in jaxtape yet (TensorFlow "
                f"{tf_api_names.TF_VERSION} has it)."
            ), message
            assert "README" in message and "issue" in message
            assert info.value.name == name and info.value.obj is module


def test_names_jaxtape_has_are_the_kind_of_object_tf_has(coverage, tf):
    mismatched = []
    for namespace, (present, _) in coverage.items():
        for name in present:
            dotted = f"{namespace}.{name}"
            ours, theirs = _walk(jaxtape, dotted), _walk(tf, dotted)
            same = (
                isinstance(ours, types.ModuleType)
                == isinstance(theirs, types.ModuleType)
                and callable(ours) == callable(theirs)
                and (isinstance(ours, type) or not isinstance(theirs, type))
                and (callable(theirs) or type(ours).__name__ == type(theirs).__name__)
            )
            if not same:
                mismatched.append(f"{dotted}: {ours!r} where TF has {theirs!r}")
    assert mismatched == []


def test_missing_namespace_is_a_module_whose_names_say_not_implemented(coverage):
    namespace = _missing_namespace(coverage)
    name = namespace.split(".")[1]
    stub = getattr(jaxtape, name)
    assert isinstance(stub, types.ModuleType) and isinstance(stub, MissingNamespace)
    assert getattr(jaxtape, name) is stub
    exec(f"from jaxtape import {name} as imported", namespace_ := {})
    assert namespace_["imported"] is stub
    leaf = _lacking_leaf(coverage, namespace)
    with pytest.raises(AttributeError, match=rf"^`{namespace}\.{leaf}` is not impl"):
        getattr(stub, leaf)


def test_namespaces_nest_below_a_missing_namespace():
    api = missing.tf_api()
    nested = [ns for ns in api if ns.count(".") >= 3]  # tf.keras.applications.x
    dotted = next(f"{ns}.{name}" for ns in sorted(nested) for name in sorted(api[ns]))
    with pytest.raises(NotImplementedInJaxtapeError, match=rf"^`{dotted}` is not"):
        _walk(jaxtape, dotted)


def test_missing_name_is_also_a_not_implemented_error(coverage):
    name = _lacking_leaf(coverage, "tf")
    with pytest.raises(NotImplementedError):
        getattr(jaxtape, name)


@pytest.mark.parametrize(
    "module_name",
    ["jaxtape", "jaxtape.math", "jaxtape.keras.layers", "jaxtape.experimental.numpy"],
)
@pytest.mark.parametrize("name", ["foo_not_in_tf", "_private", "__dunder__"])
def test_name_tf_lacks_too_keeps_pythons_attribute_error(module_name, name):
    module = sys.modules[module_name]
    with pytest.raises(AttributeError) as ours:
        getattr(module, name)
    with pytest.raises(AttributeError) as python:
        getattr(types.ModuleType(module_name), name)
    assert type(ours.value) is AttributeError
    assert str(ours.value) == str(python.value)
    assert (ours.value.name, ours.value.obj) == (name, module)


def test_name_tf_lacks_in_a_missing_namespace_keeps_pythons_message(coverage):
    stub = _walk(jaxtape, _missing_namespace(coverage))
    with pytest.raises(AttributeError) as ours:
        _ = stub.foo_not_in_tf
    assert type(ours.value) is AttributeError
    assert (
        str(ours.value) == f"module {stub.__name__!r} has no attribute 'foo_not_in_tf'"
    )


def test_dir_lists_only_what_jaxtape_has(coverage):
    api = missing.tf_api()
    for namespace, (present, lacking) in coverage.items():
        module = _walk(jaxtape, namespace)  # also creates the stub namespaces
        listed = set(dir(module)) & api[namespace]
        assert listed <= set(present), namespace
        assert not listed & set(lacking), namespace
    stub_names = {ns.split(".")[1] for ns in api if ns.count(".") == 1}
    stub_names -= set(coverage["tf"][0])
    assert stub_names and not stub_names & set(dir(jaxtape))


def test_submodule_its_parent_did_not_import_wins_over_a_stub(monkeypatch):
    # A real namespace file reached through the parent's __getattr__ (here by
    # hiding the attribute its parent set) is imported, never shadowed.
    parent = jaxtape.keras.optimizers
    real = parent.schedules
    monkeypatch.delitem(parent.__dict__, "schedules")
    assert parent.schedules is real and not isinstance(real, MissingNamespace)


def _same_names_and_objects(top, keras):
    """`top` lists `keras`'s public names, bound to the same objects (sub-namespaces:
    modules of their own with, again, the same names)."""
    names = {n for n in dir(keras) if not n.startswith("_")}
    assert {n for n in dir(top) if not n.startswith("_")} == names, top.__name__
    for name in names:
        ours, theirs = getattr(top, name), getattr(keras, name)
        if ours is not theirs:
            assert isinstance(theirs, types.ModuleType), f"{top.__name__}.{name}"
            _same_names_and_objects(ours, theirs)


@pytest.mark.parametrize("name", ["initializers", "losses", "metrics", "optimizers"])
def test_keras_namespaces_tf_mirrors_at_the_top_have_keras_names(name, tf):
    _same_names_and_objects(getattr(tf, name), getattr(tf.keras, name))
    _same_names_and_objects(getattr(jaxtape, name), getattr(jaxtape.keras, name))


def test_import_reads_no_name_list_and_never_tensorflow():
    script = (
        "import sys, jaxtape\n"
        "loaded = lambda: 'jaxtape._src.tf_api_names' in sys.modules\n"
        "jaxtape.math.add, jaxtape.keras.layers.Dense, jaxtape.__version__\n"
        "hasattr(jaxtape, '__wrapped__'), hasattr(jaxtape.nn, '_private')\n"
        "assert not loaded(), 'read at import'\n"
        "assert not hasattr(jaxtape, 'foo_not_in_tf')\n"
        "assert loaded(), 'not read when needed'\n"
        "assert not hasattr(jaxtape.compat.v1, 'placeholder')\n"
        "assert 'tensorflow' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=ROOT)


def test_coverage_tool_counts_what_coverage_finds(coverage, capsys):
    tool = _tool("api_coverage")
    assert tool.main([]) == 0
    last = capsys.readouterr().out.splitlines()[-1].split()
    has = sum(len(present) for present, _ in coverage.values())
    total = sum(len(p) + len(lacking) for p, lacking in coverage.values())
    assert last == ["all", f"{has}/{total}"]
    assert tool.main(["--missing", "tf.math"]) == 0
    listed = capsys.readouterr().out.split()
    assert listed == [f"tf.math.{name}" for name in coverage["tf.math"][1]]
