"""Ranked answers: each ranked canned query's ORDER BY follows its "Ranked by:" declaration, and a
cut that falls inside a tie is found (from the query asked for one row more) and said under the
table, while CSV stays data."""

from __future__ import annotations

import pytest
from fixture_graph import fixture_graph

import kg
from kg.errors import QueryError
from kg.rdf.statements import to_rdf
from kg.rdf.write import serialize
from kg.sparql.catalogue import catalogue, probe_query, ranked_cut, read_query
from kg.sparql.engine import format_result
from kg.sparql.ranking import (
    Key,
    Ranking,
    cut_ties,
    order_keys,
    parse_ranking,
    tie_note,
)

CATALOGUE = catalogue()
RANKED = sorted(name for name, q in CATALOGUE.items() if q.ranking is not None)


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("kg") / "graph.ttl"
    path.write_text(serialize(to_rdf(fixture_graph()), "turtle"), encoding="utf-8")
    return path


def test_the_ranked_queries():
    """The queries that answer their first N rows declare it; cluster-of ranks by a stored rank
    with no measure in its answer, and the paged queries' pages are no cut (the next page goes on):
    top-concepts declares its order and no cut, since its 25 rows became its first page."""
    assert RANKED == ["cooccurring-concepts", "top-concepts", "top-concepts-per-venue"]


@pytest.mark.parametrize("name", RANKED)
def test_order_by_follows_the_declaration(name):
    """The ORDER BY sorts by the group first (when ranked per group), then by the declared measure
    and tie keys, in that order and direction, and by nothing after them; the cut is a declared
    integer parameter or the query's last LIMIT."""
    query = CATALOGUE[name]
    ranking, order = query.ranking, order_keys(query.text)
    declared = ranking.order()
    assert order[-len(declared):] == declared, (order, declared)
    prefix = [v for v, _ in order[:-len(declared)]]
    assert (ranking.group in prefix) if ranking.group else prefix == [], prefix
    if isinstance(ranking.top, str):
        assert query.parameter(ranking.top).type == "integer"
    elif ranking.top:
        probe_query(query, [], ranking.top)  # its last LIMIT is the cut: written one higher
    else:
        assert query.paged and ranked_cut(query, []) is None  # no cut: its pages go on (top-concepts)


def test_order_keys_and_declarations_are_read():
    text = 'SELECT * WHERE { { SELECT ?x WHERE {} ORDER BY ?y LIMIT 3 } }\nORDER BY ?g DESC(?n) LCASE(STR(?l)) STR(?l) CONCAT(?i, "?z")\nLIMIT 9'
    assert order_keys(text) == [("g", False), ("n", True), ("l", False), ("i", False)]
    r = parse_ranking(" ?n desc, ?m; ties by ?l (lowercase, then exact), then ?i; per ?g; the first ?top")
    assert r == Ranking((Key("n", True), Key("m")), (Key("l", note="lowercase, then exact"), Key("i")), "g", "top")
    assert parse_ranking("?n desc; the first 25").top == 25
    with pytest.raises(QueryError, match="cannot read"):
        parse_ranking("?n desc; ties after ?l")


def test_cut_ties_compares_row_n_and_n_plus_1():
    """A tie at the cut is rows N and N+1 of a group equal on the measure; the tie keys do not count."""
    ranking = Ranking((Key("papers", True),), (Key("label"),), "concept", "top")
    rows = [("c1", "C one", "a", "3"), ("c1", "C one", "b", "2"), ("c1", "C one", "c", "2"),
            ("c2", "C two", "a", "3"), ("c2", "C two", "b", "2"), ("c2", "C two", "c", "1")]
    ties = cut_ties(ranking, 2, ("concept", "conceptLabel", "label", "papers"), rows)
    assert [(t.group, t.values, t.shown) for t in ties] == [("C one", (("papers", "2"),), 1)]
    assert cut_ties(ranking, 2, ("concept", "conceptLabel", "label", "papers"), rows, {"c2"}) == []
    assert cut_ties(ranking, 3, ("concept", "conceptLabel", "label", "papers"), rows) == []  # no row 4: no cut
    note = tie_note(ranking, ties[0])
    assert note.startswith("for concept C one: the cut at top = 2 falls inside a tie: the last row shown has papers = 2")
    assert "ties are ordered by label" in note


def test_a_cut_inside_a_tie_is_said_under_the_table(graph_file):
    """cooccurring-concepts --bind label=LLM --bind top=3 cuts among the concepts sharing one paper
    with it (the golden case "top"): the table says so, CSV does not; all rows (top=0) or a cut
    between different counts say nothing."""
    result = kg.query("cooccurring-concepts", graph=graph_file, bind=["label=LLM", "top=3"])
    assert len(result.rows) == 3 and len(result.ties) == 1, result.ties
    assert "the cut at top = 3 falls inside a tie" in result.ties[0] and "papers = 1" in result.ties[0]
    table = format_result(result, "table", width=100)
    assert "falls inside a tie" in table.split("(3 rows)")[1]
    assert "tie" not in format_result(result, "csv")
    assert kg.query("cooccurring-concepts", graph=graph_file, bind=["label=LLM", "top=0"]).ties == ()
    everything = kg.query("cooccurring-concepts", graph=graph_file, bind=["label=LLM", "top=0"]).rows
    papers = [int(r[4]) for r in everything]
    clean = next(k for k in range(1, len(papers)) if papers[k - 1] != papers[k])  # a cut between two counts
    assert kg.query("cooccurring-concepts", graph=graph_file, bind=["label=LLM", f"top={clean}"]).ties == ()
    assert kg.query("cooccurring-concepts", graph=graph_file, bind=["label=LLM", "top=3"], ties=False).ties == ()


def test_a_tie_is_found_for_each_ranked_query(graph_file):
    """Each ranked query with a cut, cut at 1 where its first two rows tie (per group), says so; the
    probe it runs is the same query asked for one row more. top-concepts has no cut: no probe."""
    binds = {"cooccurring-concepts": ["label=LLM"], "top-concepts": [], "top-concepts-per-venue": []}
    seen = 0
    for name in RANKED:
        query = read_query(CATALOGUE[name].path)
        assert ranked_cut(query, binds[name]) == (query.ranking.top or None if isinstance(query.ranking.top, int)
                                                 else int(query.parameter(query.ranking.top).default))
        if isinstance(query.ranking.top, str):
            result = kg.query(name, graph=graph_file, bind=binds[name] + [f"{query.ranking.top}=1"])
            full = kg.query(name, graph=graph_file, bind=binds[name] + [f"{query.ranking.top}=2"])
            g = full.variables.index(query.ranking.group)
            m = full.variables.index(query.ranking.measure[0].name)
            groups: dict = {}
            for row in full.rows:
                groups.setdefault(row[g], []).append(row[m])
            tied = sum(1 for v in groups.values() if len(v) == 2 and v[0] == v[1])
            assert len(result.ties) == tied, (name, result.ties, groups)
            seen += tied
    assert seen  # the fixture graph has such ties: the test can fail
