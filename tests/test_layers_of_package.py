"""DESIGN.md's layering: a module under jaxtape/_src imports only from lower layers.

Peers in one layer (autodiff/function, keras/distribute, the L4 packages) do
not import each other either; `core` reaches upward only through hooks.
"""

import ast
import pathlib
import sys

SRC = pathlib.Path(__file__).resolve().parents[1] / "jaxtape" / "_src"

# package -> layer number (DESIGN.md, "Layers of the package")
LAYERS = {
    "core": 0,
    "ops": 1,
    "state": 2,
    # SparseTensor, RaggedTensor: built from ops/ (DESIGN.md puts them at L1)
    "structured": 2,
    "autodiff": 3,
    "function": 3,
    "losses": 4,
    "metrics": 4,
    "optimizers": 4,
    "initializers": 4,
    "summary": 4,
    "data": 4,
    "checkpoint": 4,
    "io": 4,
    "testing": 4,  # tf.test: TestCase, compute_gradient (GradientTape)
    "keras": 5,
    "distribute": 5,
    "saved_model": 6,  # jax.export of function/ traces, checkpoint/; TFSMLayer: keras
    "autograph": 5,  # lowers to function/control_flow, iterates data/ Datasets
    "compat": 6,
}


def _imports(path: pathlib.Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name


def _package_of(module: str):
    parts = module.split(".")
    if parts[:2] != ["jaxtape", "_src"] or len(parts) < 3:
        return None
    return parts[2]


def _violations():
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if len(rel.parts) < 2:  # _src/__init__.py, config_env.py
            continue
        own = rel.parts[0]
        assert own in LAYERS, f"{own}/ is not placed in a layer; add it to LAYERS"
        for line, module in _imports(path):
            if module.startswith("jaxtape") and _package_of(module) is None:
                found.append(f"{rel}:{line} imports the public namespace {module}")
                continue
            other = _package_of(module)
            if other is None or other == own:
                continue
            if other not in LAYERS:
                found.append(f"{rel}:{line} imports unknown package {other}")
            elif LAYERS[other] >= LAYERS[own]:
                found.append(
                    f"{rel}:{line} ({own}, L{LAYERS[own]}) imports "
                    f"{module} (L{LAYERS[other]})"
                )
    return found


def test_every_module_imports_only_lower_layers():
    assert _violations() == []


def test_the_scan_sees_a_violation(tmp_path, monkeypatch):
    # The scan itself must be able to fail: plant an upward import.
    fake = tmp_path / "_src"
    (fake / "core").mkdir(parents=True)
    (fake / "core" / "bad.py").write_text("from jaxtape._src.autodiff import tape\n")
    monkeypatch.setattr(sys.modules[__name__], "SRC", fake)
    assert _violations() == [
        "core/bad.py:1 (core, L0) imports jaxtape._src.autodiff (L3)"
    ]


# -- imports inside functions ----------------------------------------------------------
KERAS = SRC / "keras"


def _deferred_imports(path: pathlib.Path):
    """`(line, module, comment)` for each import inside a function of `path`;
    `comment` is the `# ...` text on the import's line, or the comment line
    just above it."""
    text = path.read_text()
    lines = text.splitlines()
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
            )
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                module = (
                    child.module
                    if isinstance(child, ast.ImportFrom)
                    else child.names[0].name
                ) or ""
                own, above = lines[child.lineno - 1], lines[child.lineno - 2]
                if "#" in own:
                    comment = own.split("#", 1)[1]
                elif above.strip().startswith("#"):
                    comment = above.split("#", 1)[1]
                else:
                    comment = ""
                found.append((child.lineno, module, comment.strip()))
            visit(child, inner)

    visit(ast.parse(text, filename=str(path)), False)
    return found


def _deferred_import_violations(root: pathlib.Path):
    """Imports inside functions under `root` that say no reason to be there.

    Allowed: `# cycle: a -> b -> a`, naming the import cycle a module-level
    import would close (jaxtape modules only); `# lazy: <cost>` for a
    third-party module too slow to import with jaxtape (never a jaxtape one).
    """
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent)
        for line, module, comment in _deferred_imports(path):
            ours = module.startswith("jaxtape")
            if comment.startswith("cycle:") and ours and "->" in comment:
                continue
            if "lazy:" in comment and not ours:
                continue
            found.append(f"{rel}:{line} imports {module} inside a function")
    return found


def test_keras_imports_inside_functions_only_break_cycles():
    assert _deferred_import_violations(KERAS) == []


def test_the_import_scan_sees_a_deferred_import(tmp_path):
    keras = tmp_path / "keras"
    keras.mkdir()
    (keras / "m.py").write_text(
        "def f():\n"
        "    import os\n"
        "    from jaxtape._src.keras import saving  # cycle: m -> saving -> m\n"
        "    from jaxtape._src.keras import models  # cycle: because\n"
        "    import rich  # lazy: 30 ms\n"
        "    from jaxtape._src.keras import layers  # lazy: no\n"
    )
    assert _deferred_import_violations(keras) == [
        "keras/m.py:2 imports os inside a function",
        "keras/m.py:4 imports jaxtape._src.keras inside a function",
        "keras/m.py:6 imports jaxtape._src.keras inside a function",
    ]
