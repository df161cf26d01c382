"""kg validate: a graph checked against the shipped SHACL shapes, through the command line."""

from __future__ import annotations

import re

import pytest
from fixture_graph import fixture_graph

from kg.rdf.statements import to_rdf
from kg.rdf.write import serialize


def test_a_conforming_graph_passes(tmp_path, run_cli):
    (tmp_path / "graph.ttl").write_text(serialize(to_rdf(fixture_graph()), "turtle"), encoding="utf-8")
    result = run_cli("validate", "--graph", str(tmp_path))
    assert result.code == 0, result.err
    assert result.out.startswith(f"{tmp_path / 'graph.ttl'}: ") and "triples conform to kg's SHACL shapes" in result.out


def test_a_broken_graph_fails_with_the_violations(tmp_path, run_cli):
    from rdflib.namespace import SKOS

    g = to_rdf(fixture_graph())
    concept = next(g.subjects(SKOS.prefLabel, None))
    g.remove((concept, SKOS.prefLabel, None))  # a concept without its preferred label
    (tmp_path / "graph.nt").write_text(serialize(g, "nt"), encoding="utf-8")
    result = run_cli("validate", "--graph", str(tmp_path / "graph.nt"))
    assert result.code == 6
    found = int(re.search(r"^Results \((\d+)\):$", result.err, re.M).group(1))
    assert found >= 1 and result.err.rstrip().endswith(
        f"error: {tmp_path / 'graph.nt'}: {found} violation{'s' * (found > 1)} of kg's SHACL shapes (the report above)")
    assert "Constraint Violation" in result.err and "prefLabel" in result.err


def test_what_is_not_a_graph_is_one_line(tmp_path, run_cli):
    (tmp_path / "graph.ttl").write_text("this is not turtle <", encoding="utf-8")
    result = run_cli("validate", "--graph", str(tmp_path))
    assert result.code == 2 and result.err.count("\n") == 1 and "cannot be read as RDF" in result.err
    assert run_cli("validate", "--graph", str(tmp_path / "nothing")).code == 2


def test_kg_validate_reads_the_turtle_kg_writes_for_hostile_labels(tmp_path, run_cli, hash_embedder, nlp):
    """kg validate parses graph.ttl with rdflib: a build of labels whose prefixed names Oxigraph
    would escape (a word ending in '.') conforms instead of failing to parse."""
    import json

    import kg

    f = tmp_path / "a.jsonl"
    f.write_text(json.dumps({"abstract": "We study a.b. and x... graphs and the c. and F* methods for molecules.",
                             "title": "Words like c. and 100%"}) + "\n")
    kg.build([f], tmp_path / "out", embedder=hash_embedder, nlp=nlp, store=False)
    result = run_cli("validate", "--graph", str(tmp_path / "out"))
    assert result.code == 0, result.err


@pytest.mark.parametrize("data", [b"<http://x/s> <http://x/p> \xff\xfe .\n", b"x:s x:p x:o .\n",
                                  b"<http://x/s> <http://x/p> \"open\n", b"\x00" * 64])
def test_a_file_rudof_cannot_read_is_one_line(tmp_path, run_cli, data):
    """Bytes that are not UTF-8, an undeclared prefix, an open string, NULs: one line, exit 2."""
    (tmp_path / "graph.ttl").write_bytes(data)
    result = run_cli("validate", "--graph", str(tmp_path))
    assert result.code == 2 and result.err.count("\n") == 1, result.err
    assert result.err.startswith(f"error: {tmp_path / 'graph.ttl'}: cannot be read as RDF (")


def test_shapes_that_are_not_shacl_are_a_clear_error(tmp_path):
    from kg.errors import InputError
    from kg.rdf.validate import validate_graph

    (tmp_path / "graph.nt").write_text("<http://x/s> <http://x/p> <http://x/o> .\n", encoding="utf-8")
    (tmp_path / "bad.ttl").write_text("@prefix sh: <http://www.w3.org/ns/shacl#> .\n"
                                      "<http://x/S> a sh:NodeShape ; sh:targetNode <http://x/s> ; sh:minCount \"many\" .\n"
                                      "<http://x/T> a sh:NodeShape ; sh:property [ sh:path \"not a path\" ; sh:minCount 1 ] .\n",
                                      encoding="utf-8")
    with pytest.raises(InputError, match="bad.ttl: not SHACL shapes rudof can use"):
        validate_graph(tmp_path / "graph.nt", shapes=tmp_path / "bad.ttl")


def test_a_graph_too_big_for_the_memory_checks_the_sparql_rules_and_says_so(tmp_path, run_cli, monkeypatch):
    """rudof's core check needs about 11 GiB a million triples: where that is more than the machine
    has free, kg validate runs the SPARQL rules only and its last line says what it left out."""
    from kg.rdf import validate

    assert validate.core_memory(3_001_840) > 30 * 2**30 and validate.available_memory() > 2**30
    (tmp_path / "graph.ttl").write_text(serialize(to_rdf(fixture_graph()), "turtle"), encoding="utf-8")
    monkeypatch.setattr(validate, "available_memory", lambda: 2**20)
    monkeypatch.setattr(validate, "_core_results", lambda *a: pytest.fail("the core check ran"))
    result = run_cli("validate", "--graph", str(tmp_path))
    assert result.code == 0, result.err
    assert "conform to kg's SHACL SPARQL rules (core constraints not checked: rudof would need about 1 GiB" in result.out
