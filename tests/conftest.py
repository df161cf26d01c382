"""Shared fixtures: the real packaged model (loaded once), a fast deterministic embedder,
one real build of the seeds, and a CLI runner that goes through `kg.cli.main`."""

from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from support import ROOT, SEEDS, HashEmbedder  # noqa: F401 (support: what tests import; a conftest name is not unique)


@pytest.fixture(scope="session")
def real_embedder():
    """The packaged all-MiniLM-L6-v2, checked against its sha256 and loaded once."""
    from kg.extract.embed import load_embedder

    return load_embedder()


@pytest.fixture(scope="session")
def default_embedder():
    """The packaged model in the precision kg build runs by default (int8), loaded once."""
    from kg.extract.embed import load_embedder
    from kg.extract.keyphrases import Settings

    return load_embedder(Settings().precision)


@pytest.fixture(scope="session")
def nlp():
    from kg.extract.keyphrases import load_nlp

    return load_nlp()


@pytest.fixture(scope="session")
def hash_embedder():
    return HashEmbedder()


@pytest.fixture(scope="session")
def seeds_build(tmp_path_factory, default_embedder, nlp):
    """One real build of the two seed files (real model, real spaCy), shared by the suite."""
    import kg

    out = tmp_path_factory.mktemp("seeds-build")
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        result = kg.build(["seeds"], out, embedder=default_embedder, nlp=nlp)
    finally:
        os.chdir(cwd)
    return result


@dataclass
class Run:
    code: int
    out: str
    err: str


@pytest.fixture
def run_cli(monkeypatch):
    """Run ``kg ARGS`` in-process through `kg.cli.main`: exit code, stdout, stderr."""

    def run(*args: str, cwd: Path | None = None) -> Run:
        from kg.cli import main

        if cwd is not None:
            monkeypatch.chdir(cwd)
        out, err = io.StringIO(), io.StringIO()
        code = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(list(args))
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        return Run(code, out.getvalue(), err.getvalue())

    return run


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A scratch folder as the working directory (kg finds its queries wherever it runs)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


_MODEL_FIXTURES = {"real_embedder", "default_embedder", "nlp", "seeds_build"}


def pytest_collection_modifyitems(items):
    """Mark `model` every test that loads the packaged model or spaCy pipeline through a fixture
    (`pytest -m "not model"` runs the fast rest); tests that load them otherwise are marked by hand."""
    for item in items:
        if _MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.model)
