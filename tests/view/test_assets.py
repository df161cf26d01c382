"""The page's own files: in kg/view/templates and kg/view/static, shipped in the wheel, counted by
the build key, and never able to end their element in the page."""

from __future__ import annotations

import ast
import fnmatch
import shutil
import tomllib
from pathlib import Path

import pytest

import kg.view
from kg.pipeline.manifest import code_digest
from kg.view import page

VIEW = Path(kg.view.__file__).resolve().parent
ROOT = VIEW.parent.parent


def test_the_page_is_made_of_files_that_the_wheel_ships() -> None:
    files = [VIEW / "templates" / "map.html", *(VIEW / "static" / n for n in (*page.SCRIPTS, *page.STYLES))]
    assert all(f.is_file() for f in files)
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    for folder in ("static", "templates"):
        assert f"kg.view.{folder}" in setuptools["packages"]
        shipped = setuptools["package-data"][f"kg.view.{folder}"]
        for f in (VIEW / folder).iterdir():
            assert any(fnmatch.fnmatch(f.name, pattern) for pattern in shipped), f
    # No JavaScript, CSS or HTML left in Python strings of kg.view: no string but a docstring is long.
    for module in VIEW.glob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
                      and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        long = [n.value[:60] for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                and id(n) not in docstrings and len(n.value) > 200]
        assert long == [], module


def test_a_changed_script_changes_the_build_key(tmp_path: Path) -> None:
    copy = Path(shutil.copytree(VIEW, tmp_path / "view", ignore=shutil.ignore_patterns("__pycache__")))
    before = code_digest(copy)
    assert code_digest(copy) == before
    (copy / "static" / "map.js").write_text((copy / "static" / "map.js").read_text() + "\n// changed\n")
    after_js = code_digest(copy)
    (copy / "static" / "map.css").write_text((copy / "static" / "map.css").read_text() + "\n/* changed */\n")
    after_css = code_digest(copy)
    (copy / "templates" / "map.html").write_text((copy / "templates" / "map.html").read_text() + "\n")
    assert len({before, after_js, after_css, code_digest(copy)}) == 4


def test_the_build_key_digests_the_whole_kg_package_the_page_included() -> None:
    # (after kg/manifest.py moved into kg/pipeline/, its default was that folder alone: a changed map.js kept the key)
    import kg
    from kg.common.fingerprints import folder_digest

    package = Path(kg.__file__).resolve().parent
    assert (package / "view" / "static" / "map.js").is_file()
    assert code_digest() == code_digest(package) == folder_digest(package)
    assert code_digest() != code_digest(package / "pipeline")


def test_a_script_that_would_end_its_element_is_refused() -> None:
    with pytest.raises(RuntimeError, match="would end its element"):
        page._inline_text("var a = '</script>';", "map.js", "</script")
    assert page._inline_text("x('</SCRIPT')", "vis-network.min.js", "</script") == "x('<\\/SCRIPT')"
