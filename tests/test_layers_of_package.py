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
    "autodiff": 3,
    "function": 3,
    "losses": 4,
    "metrics": 4,
    "optimizers": 4,
    "initializers": 4,
    "summary": 4,
    "data": 4,
    "checkpoint": 4,
    "keras": 5,
    "distribute": 5,
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
