"""The parameters each canned query declares in its header (``?name  [type, ...] meaning``):
read by the catalogue, checked before a query runs, and shown by ``kg query NAME --help``.
Every test here goes over the whole catalogue, from the declarations, not query by query."""

from __future__ import annotations

import re
import shlex

import pytest

import kg
from kg.errors import QueryError
from kg.sparql.bindings import query_variables
from kg.sparql.catalogue import (
    PAGE_VARIABLES,
    catalogue,
    check_bindings,
    example_lines,
    named_query,
    query_help,
)

CATALOGUE = catalogue()
NEEDING = [q for q in CATALOGUE.values() if q.groups()]
SAMPLE = {"text": "x", "IRI": "<https://example.org/kg/concept/x>", "integer": "3", "year": "2024", "boolean": "true"}
WRONG = {"integer": ["x", "1.5", "<https://example.org/x>"], "year": ["24", "twenty", "2024-01"], "boolean": ["yes", "1"],
         "IRI": ["stochastic gradient descent", "concept/x"]}


def test_the_catalogue_declares_parameters():
    assert len(NEEDING) >= 10  # most queries need a concept, a paper or a person
    assert all(q.declared for q in CATALOGUE.values())


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_binding_line_is_a_declaration(name):
    """Each ``?name`` line of the Bindings section has its ``[type, ...]``, and each declared
    parameter is a variable of the query (or the page of a paged one)."""
    q = CATALOGUE[name]
    header = q.description.split("\nReturns")[0]
    bindings = header[header.index("Bindings"):] if "Bindings" in header else ""
    lines = re.findall(r"^ {1,4}\?(\w+)\s+(\S.*)$", bindings, re.MULTILINE)
    assert all(text.startswith("[") for _, text in lines), f"{name}: a ?name line without [type, ...]"
    for p in q.parameters:
        assert p.name in PAGE_VARIABLES or p.name in query_variables(q.text), (name, p.name)
        assert p.meaning, (name, p.name)
        assert all(n in {x.name for x in q.parameters} for n in p.one_of), (name, p.one_of)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_example_passes_the_check(name):
    q = CATALOGUE[name]
    assert example_lines(q)
    for line in example_lines(q):
        words = shlex.split(line)
        check_bindings(q, words[4::2])


@pytest.mark.parametrize("q", NEEDING, ids=lambda q: q.name)
def test_a_required_parameter_left_out_is_an_error(q, tmp_path):
    """Without any of a group it needs, the query is not run: one error naming the group and
    what the query takes (before the graph is even read)."""
    optional = [f"{p.name}={SAMPLE[p.type]}" for p in q.parameters if not p.needed and p.name not in PAGE_VARIABLES]
    for group in q.groups():
        given = [f"{p.name}={SAMPLE[p.type]}" for g in q.groups() if g != group for p in q.parameters if p.name == g[0]]
        with pytest.raises(QueryError) as e:
            kg.query(q.name, graph=tmp_path / "none.ttl", bind=given + optional)
        message = str(e.value)
        assert f"query {q.name!r} needs" in message and f"kg query {q.name} --help" in message
        assert all(f"?{n}" in message for n in group)
        assert e.value.exit_code == 4
    # Given one of each group, the check passes (the graph is then missing: an input error).
    complete = [f"{g[-1]}={SAMPLE[q.parameter(g[-1]).type]}" for g in q.groups()]
    with pytest.raises(kg.InputError):
        kg.query(q.name, graph=tmp_path / "none.ttl", bind=complete)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_an_unknown_name_says_which_it_takes(name):
    q = CATALOGUE[name]
    with pytest.raises(QueryError, match=rf"takes no \?nosuchthing .*kg query {name} --help"):
        check_bindings(q, ["nosuchthing=1"])
    for p in q.parameters:
        if len(p.name) >= 4 and p.name not in PAGE_VARIABLES:
            typo = p.name[:-1] + ("x" if p.name[-1] != "x" else "y")
            with pytest.raises(QueryError, match=rf"did you mean \?{p.name}\b"):
                check_bindings(q, [f"{typo}=1"])


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_a_value_of_the_wrong_type_is_an_error(name):
    q = CATALOGUE[name]
    for p in q.parameters:
        if p.name in PAGE_VARIABLES:
            continue
        others = [f"{g[0]}={SAMPLE[q.parameter(g[0]).type]}" for g in q.groups() if p.name not in g]
        assert check_bindings(q, [*others, f"{p.name}={SAMPLE[p.type]}"])
        for bad in WRONG.get(p.type, []):
            with pytest.raises(QueryError, match=rf"--bind {p.name}=.*\?{p.name} of query {name!r} is"):
                check_bindings(q, [*others, f"{p.name}={bad}"])


def test_a_bare_http_iri_is_taken_as_an_iri():
    q = named_query("papers-of-concept")
    assert check_bindings(q, ["concept=https://example.org/kg/concept/x"]) == ["concept=<https://example.org/kg/concept/x>"]


def test_a_misspelled_query_name_gets_did_you_mean():
    with pytest.raises(QueryError, match=r"did you mean papers-of-concept\b"):
        named_query("paper-of-concept")
    with pytest.raises(QueryError, match="known queries: "):
        named_query("zzzzzz")


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_help_shows_parameters_and_examples(name):
    q = CATALOGUE[name]
    text = query_help(q)
    assert text.startswith(f"{name}: {q.summary}")
    for p in q.parameters:
        assert f"?{p.name}  {p.type}, {p.usage()}" in text
    assert "Examples:" in text and f"kg query {name}" in text
    for line in text.splitlines():
        if line.strip().startswith("kg query"):
            assert shlex.split(line)[2] == name


@pytest.mark.parametrize("value", ["a" * 1_000_000, 'x"y\'z\n', "\udcff", "x\ud800y", "١٢", " 5 "])
def test_hostile_values_are_an_answer_or_one_error(value, tmp_path):
    """Quotes, line breaks, 1 MB, bytes that are not UTF-8, lone surrogates, other digits: a
    `QueryError` or a checked value, never another exception."""
    for q in CATALOGUE.values():
        for p in q.parameters:
            others = [f"{g[0]}={SAMPLE[q.parameter(g[0]).type]}" for g in q.groups() if p.name not in g]
            try:
                checked = check_bindings(q, [*others, f"{p.name}={value}"])
            except QueryError:
                continue
            if p.type in ("integer", "year") and p.name not in PAGE_VARIABLES:
                assert checked[-1] == f"{p.name}=5"
