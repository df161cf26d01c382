"""The layout's rules (docs/design.md, "What may import what"), checked on the code: every import
points down the pipeline, no module imports another's private name, no circle of imports, no
module over 600 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent

# Each package (or top-level module) of kg and its floor: a module imports only floors below its own
# and its own package. Shared code sits at the bottom (common/), the command line at the top.
FLOORS = {
    "errors": 0,
    "common": 1, "resources": 1,
    "text": 2,
    "extract": 3,
    "concepts": 4, "scale": 4,
    "graph": 5,
    "rdf": 6, "view": 6,
    "sparql": 7,
    "serve": 8, "evaluation": 8,
    "pipeline": 9,
    "cli": 10, "__init__": 10, "__main__": 11,
}
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    found = {}
    for path in (ROOT / "kg").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _room(module: str) -> str:
    """The package (or top-level module) of *module*: its floor's key."""
    parts = module.split(".")
    return "__init__" if module == "kg" else parts[1]


def _imports(module: str, path: Path):
    """(imported module, imported name or None) of every kg import in *path*, at any depth."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "kg":
                    yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            if base.split(".")[0] != "kg":
                continue
            for alias in node.names:
                if f"{base}.{alias.name}" in MODULES:
                    yield f"{base}.{alias.name}", None
                else:
                    yield base, alias.name


def _edges():
    for module, path in MODULES.items():
        for target, name in _imports(module, path):
            yield module, target, name


def test_every_module_has_a_floor():
    assert {_room(m) for m in MODULES} - FLOORS.keys() == set()


def test_imports_point_down_the_pipeline():
    upward = sorted(f"{m} -> {t}" for m, t, _ in _edges()
                    if _room(t) != _room(m) and FLOORS[_room(t)] >= FLOORS[_room(m)] and t != "kg")
    assert upward == []


def test_no_private_name_is_imported_from_another_module():
    private = sorted(f"{m} imports {t}.{n}" for m, t, n in _edges() if n and n.startswith("_") and t != m)
    assert private == []


def test_no_circle_of_imports():
    G = nx.DiGraph((m, t) for m, t, _ in _edges() if t != m and t in MODULES)
    assert [c for c in nx.simple_cycles(G)] == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_600_lines(module):
    lines = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{module}: {lines} lines"
