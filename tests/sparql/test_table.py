"""``kg query --format table``: a table for people (labels first, short or hidden IRIs, bound
values said once, no empty or duplicate columns, fitting the width), while CSV, TSV and JSON
keep every column with full IRIs."""

from __future__ import annotations

import re
import shlex

import pytest
from fixture_graph import fixture_graph

import kg
from kg.rdf.statements import to_rdf
from kg.rdf.vocabulary import DEFAULT_BASE
from kg.rdf.write import serialize
from kg.sparql.catalogue import catalogue, example_lines
from kg.sparql.engine import format_result
from kg.sparql.results import QueryResult, display_width, fit, table_view

CATALOGUE = catalogue()


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("kg") / "graph.ttl"
    path.write_text(serialize(to_rdf(fixture_graph()), "turtle"), encoding="utf-8")
    return path


def _result(variables, rows, bound=(), iris=()):
    terms = tuple({v: {"type": "uri" if v in iris else "literal", "value": x} for v, x in zip(variables, row) if x is not None}
                  for row in rows)
    return QueryResult(variables=tuple(variables), rows=tuple(map(tuple, rows)), terms=terms, bound=tuple(bound))


@pytest.mark.parametrize("name", sorted(CATALOGUE))
@pytest.mark.parametrize("width", [120, 80])
def test_every_query_fits_the_width(graph_file, name, width):
    """Every canned query, with each of its header's examples, prints lines of at most *width*
    columns; its CSV keeps every column."""
    for line in example_lines(CATALOGUE[name]) or [f"kg query {name}"]:
        result = kg.query(name, graph=graph_file, bind=shlex.split(line)[4::2])
        table = format_result(result, "table", width=width)
        assert max(map(display_width, table.splitlines())) <= width, (line, table)
        lines = table.rstrip().splitlines()
        count = max(i for i, x in enumerate(lines) if re.fullmatch(r"\(\d+ rows?\)", x))
        assert bool(result.ties) == (count < len(lines) - 1)  # only a cut inside a tie is said under the rows
        assert format_result(result, "csv").splitlines()[0] == ",".join(result.variables)


def test_bound_empty_and_duplicate_columns_are_said_once():
    c = f"{DEFAULT_BASE}concept/"
    result = _result(("concept", "conceptLabel", "other", "otherLabel", "papers", "paperCount", "generic", "label"),
                     [(c + "sgd", "stochastic gradient descent", c + "adam", "adam", "3", "3", None, "SGD"),
                      (c + "sgd", "stochastic gradient descent", c + "fine-tuning", "fine-tuning", "1", "1", None, "SGD")],
                     bound=[("label", "SGD")], iris={"concept", "other"})
    notes, columns, cells = table_view(result)
    assert columns == ["otherLabel", "papers"]
    assert cells == [["adam", "3"], ["fine-tuning", "1"]]
    text = "\n".join(notes)
    assert "label = SGD" in text and "conceptLabel = stochastic gradient descent" in text
    assert "generic (empty)" in text and "paperCount = papers" in text and "IRIs of other hidden" in text
    # For programs, every column and full IRIs.
    csv = format_result(result, "csv")
    assert csv.splitlines()[0] == "concept,conceptLabel,other,otherLabel,papers,paperCount,generic,label"
    assert c + "adam" in csv and c + "adam" in format_result(result, "tsv") and c + "adam" in format_result(result, "json")


def test_iris_without_a_label_are_shortened_after_the_base():
    c = f"{DEFAULT_BASE}concept/"
    result = _result(("concept", "papers"), [(c + "stochastic-gradient-descent", "2"), (c + "adam", "1")], iris={"concept"})
    notes, columns, cells = table_view(result)
    assert columns == ["concept", "papers"]
    assert notes == [] and cells == [["concept/stochastic-gradient-descent", "2"], ["concept/adam", "1"]]


def test_a_label_naming_two_iris_does_not_hide_them():
    p = f"{DEFAULT_BASE}paper/"
    result = _result(("paper", "name"), [(p + "a", "Same title"), (p + "b", "Same title")], iris={"paper"})
    _, columns, cells = table_view(result)
    assert columns == ["name", "paper"] and cells[0] == ["Same title", "paper/a"]


def test_long_cells_are_cut_with_an_ellipsis():
    result = _result(("a", "b"), [("x" * 300, "y" * 300)])
    lines = format_result(result, "table", width=60).splitlines()
    assert max(map(len, lines)) <= 60 and lines[2].count("…") == 2
    assert fit("漢字漢字", 5) == "漢字…" and display_width(fit("漢字漢字", 5)) <= 5


def test_bound_values_are_printed_escaped():
    result = _result(("label", "n"), [("red \x1b[31m", "1"), ("red \x1b[31m", "2")], bound=[("label", "red \x1b[31m")])
    table = format_result(result, "table")
    assert "\x1b" not in table and "label = red \\x1b[31m" in table
