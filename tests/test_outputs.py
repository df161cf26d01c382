"""Outputs are written atomically and survive a failed build (fast: the test embedder)."""

import pytest

import kg
import kg.view
from kg.errors import OutputError


def abstracts(tmp_path, n=3):
    f = tmp_path / "in.txt"
    f.write_text("ICML 2026 Papers\n\n" + "\n\n".join(
        f"Paper {i} studies graph neural networks and message passing for molecule property prediction number {i}." for i in range(n)))
    return f


def test_a_failed_build_leaves_the_previous_outputs_whole(tmp_path, hash_embedder, nlp, monkeypatch):
    out = tmp_path / "out"
    first = kg.build([abstracts(tmp_path)], out, embedder=hash_embedder, nlp=nlp)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(before) == {p.name for p in first.files}

    def broken(*args, **kwargs):
        raise KeyboardInterrupt  # as if Ctrl-C hit while the HTML was rendered

    monkeypatch.setattr(kg.view, "render_html", broken)
    with pytest.raises(KeyboardInterrupt):
        kg.build([abstracts(tmp_path, 5)], out, embedder=hash_embedder, nlp=nlp)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_write_error_is_an_output_error_and_leaves_no_temporary_file(tmp_path, hash_embedder, nlp, monkeypatch):
    out = tmp_path / "out"
    kg.build([abstracts(tmp_path)], out, embedder=hash_embedder, nlp=nlp)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    import os

    real_replace = os.replace
    calls = []

    def failing_replace(src, dst):
        calls.append(dst)
        if len(calls) == 1:
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OutputError, match="cannot write the outputs \\(No space left on device\\); the previous outputs are unchanged"):
        kg.build([abstracts(tmp_path, 4)], out, embedder=hash_embedder, nlp=nlp)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_rebuild_with_the_test_embedder_is_byte_identical(tmp_path, hash_embedder, nlp):
    a = kg.build([abstracts(tmp_path)], tmp_path / "a", embedder=hash_embedder, nlp=nlp)
    b = kg.build([abstracts(tmp_path)], tmp_path / "b", embedder=hash_embedder, nlp=nlp)
    for name in ("graph.nt", "graph.ttl", "keyphrases.jsonl"):
        assert (a.out / name).read_bytes() == (b.out / name).read_bytes()
