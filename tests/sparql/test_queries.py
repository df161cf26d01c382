"""The named SPARQL queries in queries/, run with Oxigraph on the fixture graph's RDF.

Each case runs one query with some ``--bind`` values (as `kg query` passes them, through
`parse_binding` and SEP-0007 substitutions) and compares the CSV result with a golden file in
tests/data/golden/: ``<query>.csv`` for the first case of a query, ``<query>.<case>.csv`` for
the others. The goldens were checked by hand against tests/fixture_graph.py (its docstring has
the table of papers, concepts, scores and ranks). To rewrite them after a deliberate change, run
``KG_UPDATE_GOLDEN=1 pytest tests/test_queries.py`` and review the diff line by line.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shlex
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from fixture_graph import ADA, GRACE, P1, P2, P4, P6, fixture_graph

from kg.errors import QueryError
from kg.rdf.statements import to_rdf
from kg.rdf.vocabulary import DEFAULT_BASE, VENUE_RANKS
from kg.rdf.write import serialize
from kg.sparql.bindings import parse_binding
from kg.sparql.catalogue import PAGE_VARIABLES, list_queries, paged_text, read_query, split_page
from kg.sparql.engine import QueryResult, format_result, load_store, run_query
from kg.sparql.limits import MAX_CHAIN, MAX_DEPTH, MAX_QUERY_CHARS, QueryTooComplex, check_query, query_shape

ROOT = Path(__file__).resolve().parents[2]
QUERIES = ROOT / "queries"
GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
UPDATE = os.environ.get("KG_UPDATE_GOLDEN") == "1"


def concept(slug: str) -> str:
    return f"concept=<{DEFAULT_BASE}concept/{slug}>"


def paper(pid: str) -> str:
    return f"paper=<{DEFAULT_BASE}paper/{pid}>"


# query -> [(case, --bind values)]; the first case's golden is <query>.csv, the others' <query>.<case>.csv
CASES: dict[str, list[tuple[str, list[str]]]] = {
    "top-concepts": [("default", []), ("all", ["all=true"])],     # all: the generic concept memory too
    "papers-of-concept": [
        ("label", ["label=optimization"]),                       # two levels of narrower concepts, a negative score
        ("iri", [concept("optimization")]),                      # the same rows, found by IRI
        ("altlabel", ["label=sgd"]),                             # altLabel, any case; a paper with no venue or year
        ("narrower-only", ["label=Language Model"]),             # a broader concept with no paper of its own
        ("both", ["label=optimization", concept("federated-learning")]),  # ?concept wins
        ("unknown", ["label=no such concept"]),
        ("none", []),                                            # nothing asked: no rows, not every paper
        ("page", ["label=optimization", "limit=2", "offset=1"]),  # the 2nd and 3rd rows: a direct link, then one below
    ],
    "concepts-of-paper": [
        ("id", [f"id={P1}"]),                                    # rank 4 joined no concept: a gap
        ("iri", [paper(P2)]),                                    # rank 4 joined the rank-3 concept and was dropped
        ("mismatch", [f"id={P1}", paper(P2)]),
        ("none", []),
    ],
    "related-papers": [
        ("id", [f"id={P1}"]),
        ("iri", [paper(P4)]),
        ("no-venue", [f"id={P6}"]),
        ("none", []),
    ],
    "cooccurring-concepts": [
        ("label", ["label=LLM"]),
        ("iri", [concept("federated-learning")]),
        ("narrower-only", ["label=language model"]),             # no paper of its own: nothing co-occurs
        ("none", []),
        ("top", ["label=LLM", "top=3"]),                         # cut among the concepts sharing one paper
        ("all", [concept("stochastic-gradient-descent"), "top=0"]),  # 0: every co-occurring concept
    ],
    "shared-venue-concepts": [
        ("default", []),                                         # the concepts with the most papers (all, here)
        ("label", ["label=llm"]),                                # altLabel, any case
        ("iri", [concept("stochastic-gradient-descent")]),       # P6 has no venue: not counted
        ("one-venue", ["label=optimization"]),                   # P3 and P5 are both at ICLR: no rows
    ],
    "top-concepts-per-venue": [
        ("default", []),
        ("venue-top", ["venue=ICLR", "top=2"]),
        ("top1", ["top=1"]),
    ],
    "papers-with-code": [("default", [])],
    "broader-concepts": [
        ("default", []),                                         # every link (fewer than 100)
        ("label", ["label=zo OPTIMIZATION"]),                    # altLabel, any case: its one narrower concept
        ("iri", ["broader" + concept("optimization")[7:]]),      # only the links to it, not the ones below
        ("no-narrower", ["label=fine-tuning"]),                  # nothing is narrower: no rows
    ],
    "search": [
        ("altlabel", ["text=LLM"]),
        ("mixed", ["text=IC"]),                                  # concepts, papers and venues
        ("empty", ["text="]),
        ("none", []),
    ],
    "venues": [("default", [])],
    "phrases-of-concept": [
        ("label", ["label=SGD"]),
        ("iri", [concept("fine-tuning")]),
        ("none", []),
    ],
    "provenance": [("default", [])],
    "concepts-by-year": [
        ("default", []),                                         # the 10 highest paper counts: every concept with papers here
        ("label", ["label=LLM"]),                                # 2 of 2 papers in 2024, 1 of 3 in 2025
        ("iri", [concept("optimization")]),                      # P3 and P5, both 2025; not its narrower concepts' papers
        ("page", ["limit=3", "offset=2"]),
    ],
    "rising-concepts": [
        ("default", []),                                         # 2025 against 2024, 2 papers or more in 2025
        ("min1", ["min=1"]),
        ("since", ["since=2024", "min=1"]),                      # no earlier period: every share against none
        ("from", ["since=2025", "from=2025", "min=1"]),          # an earlier period of no year
    ],
    "venue-new-concepts": [
        ("default", []),                                         # each venue's latest year, 2025
        ("venue-year", ["venue=ICLR", "year=2025"]),             # LLM and fine-tuning were there in 2024
        ("first-year", ["venue=ICML", "year=2024"]),             # a venue's first year: all new
        ("none", ["venue=NeurIPS"]),
    ],
    "author-concepts": [
        ("name", ["author=ada LOVELACE"]),                       # any case; P3's "ada lovelace" is hers (one ORCID so named)
        ("orcid", [f"orcid={ADA}"]),
        ("iri", [f"person=<{DEFAULT_BASE}person/orcid-{GRACE}>"]),
        ("initials", ["author=A. Turing"]),                      # not Alan Turing
        ("none", []),
    ],
    "coauthors-by-concepts": [
        ("orcid", [f"orcid={ADA}"]),                             # co-authors (together 1) and others (0)
        ("name", ["author=katherine johnson"]),
        ("none", []),
    ],
    "clusters": [("default", [])],
    "cluster-of": [
        ("label", ["label=LLM"]),                                # altLabel, any case: cluster 1, its five members
        ("iri", [concept("fine-tuning"), "top=2"]),              # cluster 1, its two most characteristic
        ("id", [f"id={P2}"]),                                    # cluster 2
        ("paper", [paper(P1)]),
        ("off-map", ["label=language model"]),                   # no paper of its own: on no cluster
        ("none", []),
    ],
    "related-concepts": [
        ("label", ["label=LLM"]),                                # altLabel; one related concept
        ("iri", [concept("fine-tuning")]),                       # three, by association
        ("none-related", ["label=optimization"]),                # co-occurs only once with each: no rows
        ("none", []),
    ],
    # typed concepts and relations (fixture_graph's _VOTES and _RELATIONS)
    "methods-for-task": [
        ("label", ["label=Fine-Tuning"]),                        # zeroth-order optimization, 2 papers (P1, P4)
        ("untyped-task", [concept("optimization")]),             # SGD; optimization's tie elects no type
        ("min2", ["label=federated learning", "minSupport=2"]),  # its one method has 1 paper: no rows
        ("none", []),
    ],
    "tasks-of-method": [
        ("label", ["label=SGD"]),                                # optimization (0.83, no type), then LLM (0.67)
        ("min2", ["label=zo optimization", "minSupport=2"]),     # fine-tuning, 2 papers
        ("none", []),
    ],
    "datasets-of": [
        ("task", ["label=fine-tuning"]),                         # memory efficiency directly, and via ZO optimization
        ("method", [concept("zeroth-order-optimization")]),      # directly only
        ("min2", ["label=fine-tuning", "minSupport=2"]),         # no evaluation has 2 papers
        ("none", []),
    ],
    "compared-with": [
        ("head", ["label=SGD"]),                                 # the statement's rdf:subject
        ("tail", [concept("stochastic-zeroth-order-optimization")]),  # its rdf:object: the same statement
        ("none", ["label=fine-tuning"]),
    ],
    "typed-concepts": [
        ("default", []),                                         # every typed concept, by type
        ("task", ["type=task"]),                                 # any case
        ("min2", ["type=Method", "minSupport=2"]),
        ("dataset", ["type=Dataset"]),                           # none in the fixture
    ],
    "tasks-per-venue-year": [
        ("default", []),
        ("venue", ["venue=ICLR"]),
        ("min2", ["minSupport=2"]),                              # no task has 2 papers at one venue and year
    ],
}

INJECTION = 'x" } ; DROP ALL ; SELECT * WHERE { ?s ?p ?o } #'


def golden_name(query: str, case: str, index: int) -> str:
    return f"{query}.csv" if index == 0 else f"{query}.{case}.csv"


def all_cases():
    for query, cases in CASES.items():
        for index, (case, binds) in enumerate(cases):
            yield pytest.param(query, golden_name(query, case, index), binds, id=f"{query}-{case}")


@pytest.fixture(scope="module")
def graph():
    return fixture_graph()


@pytest.fixture(scope="module")
def turtle(graph) -> str:
    return serialize(to_rdf(graph), "turtle")


@pytest.fixture(scope="module")
def store(turtle, tmp_path_factory):
    """The fixture's graph.ttl, loaded as `kg query` loads it."""
    path = tmp_path_factory.mktemp("kg") / "graph.ttl"
    path.write_text(turtle, encoding="utf-8")
    return load_store(path)


def run(store, query: str, binds=()) -> QueryResult:
    """*query* with *binds* as kg query runs it: a paged query answers its page (its first page, 100
    rows or its header's number, unless *binds* say limit=N, offset=N), written into its text by kg's catalogue."""
    canned = read_query(QUERIES / f"{query}.rq")
    page, rest = split_page(canned, list(binds))
    return run_query(store, paged_text(canned, page), rest)


def rows(result: QueryResult) -> list[dict[str, str | None]]:
    return [dict(zip(result.variables, row)) for row in result.rows]


# --------------------------------------------------------------------------- goldens


@pytest.mark.parametrize("query,golden,binds", list(all_cases()))
def test_query_matches_golden(store, query, golden, binds):
    got = format_result(run(store, query, binds), "csv")
    path = GOLDEN / golden
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
    assert path.is_file(), f"no golden file {path.relative_to(ROOT)}; write it (KG_UPDATE_GOLDEN=1) and check it by hand"
    assert got == path.read_text(encoding="utf-8")


def test_every_query_has_cases_and_goldens():
    names = sorted(p.stem for p in QUERIES.glob("*.rq"))
    assert len(names) >= 8
    assert names == sorted(CASES), "every queries/*.rq needs cases in CASES (and goldens), and every case a query"
    expected = {golden_name(q, case, i) for q, cases in CASES.items() for i, (case, _) in enumerate(cases)}
    present = {p.name for p in GOLDEN.glob("*.csv")}
    assert expected <= present, f"missing goldens: {sorted(expected - present)}"
    assert present <= expected, f"goldens of no case: {sorted(present - expected)}"


# --------------------------------------------------------------------------- pages

PAGES = [(1, 0), (2, 0), (2, 1), (3, 2), (1, 4), (2, 7), (100, 3), (1, 1000)]


@pytest.mark.parametrize("query", [q for q in CASES if read_query(QUERIES / f"{q}.rq").paged])
def test_every_page_is_the_slice_of_every_row(store, query):
    """A paged query's page (limit, offset) is that slice of its whole answer (limit=0), for
    each case's bindings: the stored ranks and the cuts it makes before the end give the rows a
    plain LIMIT would."""
    checked = 0
    for _, binds in CASES[query]:
        binds = [b for b in binds if b.partition("=")[0] not in PAGE_VARIABLES]
        every = run(store, query, [*binds, "limit=0"])
        assert every.rows == run(store, query, [*binds, "limit=1000"]).rows
        for limit, offset in PAGES:
            page = run(store, query, [*binds, f"limit={limit}", f"offset={offset}"])
            assert page.rows == every.rows[offset:offset + limit], (binds, limit, offset)
            checked += bool(page.rows)
    assert checked  # some pages have rows: the slices compared are not all empty


def test_pages_of_a_concept_read_its_link_blocks_in_order(store, graph, tmp_path, monkeypatch):
    """papers-of-concept's pages read a concept's kgv:LinkBlocks: with blocks of 2 links (so a
    concept's links span several, and those below it start mid-block), every page is still the
    slice of the whole answer, and the whole answer is that of the store with blocks of 100."""
    import kg.rdf.statements as statements

    monkeypatch.setattr(statements, "LINK_BLOCK", 2)
    path = tmp_path / "graph.ttl"
    path.write_text(serialize(to_rdf(graph), "turtle"), encoding="utf-8")
    small = load_store(path)
    blocks = run_query(small, "PREFIX kgv: <https://example.org/kg/vocab#> "
                              "SELECT (COUNT(*) AS ?n) WHERE { ?b kgv:blockOf <https://example.org/kg/concept/optimization> }")
    assert int(blocks.rows[0][0]) >= 3  # its links span three blocks or more
    for binds in (["label=optimization"], ["label=Language Model"], [concept("federated-learning")]):
        every = run(small, "papers-of-concept", [*binds, "limit=0"])
        assert every.rows == run(store, "papers-of-concept", [*binds, "limit=0"]).rows
        assert len(every.rows) >= 2, binds  # more than one block of 2 to read, or a whole one
        for limit, offset in [*PAGES, (1, 2), (2, 2), (3, 1)]:
            page = run(small, "papers-of-concept", [*binds, f"limit={limit}", f"offset={offset}"])
            assert page.rows == every.rows[offset:offset + limit], (binds, limit, offset)


def test_the_default_page_is_100_rows_and_a_bad_page_is_an_error(store):
    canned = read_query(QUERIES / "papers-of-concept.rq")
    assert canned.paged and paged_text(canned, split_page(canned, [])[0]).endswith("\nLIMIT 100\n")
    assert paged_text(canned, split_page(canned, ["limit=0", "offset=5"])[0]).endswith("?paper ?via\nOFFSET 5\n")
    assert set(PAGE_VARIABLES) <= {k for k, _ in canned.variables}
    for bad in ("limit=-1", "limit=x", "offset=1.5", "limit=10000000000"):
        with pytest.raises(QueryError, match="give a whole number >= 0"):
            run(store, "papers-of-concept", ["label=optimization", bad])
    with pytest.raises(QueryError, match="'concepts-of-paper' is not paged"):
        run(store, "concepts-of-paper", [f"id={P1}", "limit=5"])


def test_a_query_may_say_its_own_page_size(store):
    """top-concepts' header says "Paged: 25 rows a page": its first page is 25 rows (what it always
    answered), its --help says so, and a limit still gives any page."""
    canned = read_query(QUERIES / "top-concepts.rq")
    assert canned.paged and canned.page_rows == 25 and canned.parameter("limit").default == "25"
    assert "default 25" in canned.parameter("limit").meaning
    assert paged_text(canned, split_page(canned, [])[0]).endswith("\nLIMIT 25\n")
    assert paged_text(canned, split_page(canned, ["limit=3"])[0]).endswith("\nLIMIT 3\n")
    assert read_query(QUERIES / "search.rq").page_rows == 100  # "Paged: 100 rows a page", the shared default


# --------------------------------------------------------------------------- the header comments

HEADER = re.compile(r"\A(?:#[^\n]*\n)+")


@pytest.mark.parametrize("path", sorted(QUERIES.glob("*.rq")), ids=lambda p: p.stem)
def test_query_header(path):
    text = path.read_text(encoding="utf-8")
    header = HEADER.match(text)
    assert header, f"{path.name} must open with # comment lines"
    lines = [line.lstrip("#").strip() for line in header.group(0).splitlines()]
    summary = lines[0]
    assert summary.endswith(("?", ".")) and len(summary) > 20, f"{path.name}: the first line is a one-sentence summary"
    assert list_queries()[path.stem] == summary
    body = "\n".join(lines[1:])
    assert re.search(r"^Bindings", body, re.M), f"{path.name}: say which --bind variables it takes (or none)"
    assert re.search(r"^Returns", body, re.M), f"{path.name}: say which variables it returns"
    examples = [line for line in lines if line.startswith("kg query ")]
    assert examples, f"{path.name}: give an example `kg query {path.stem} ...` line"
    assert re.search(r"^PREFIX ", text, re.M)
    # Every variable the header offers as a --bind input is projected (Oxigraph substitutes
    # only projected variables) and documented.
    query = text[header.end():]
    projection = query[query.index("SELECT"): query.index("WHERE")]
    paged = read_query(path).paged
    for example in examples:
        words = shlex.split(example)
        assert words[2] == path.stem
        for name, _ in (parse_binding(v) for v in words[4::2]):
            if paged and name in PAGE_VARIABLES:  # the catalogue writes them into the text
                continue
            assert f"?{name}" in projection, f"{path.name}: --bind {name} is not in the SELECT projection"
            assert f"?{name}" in body


@pytest.mark.parametrize("path", sorted(QUERIES.glob("*.rq")), ids=lambda p: p.stem)
def test_header_examples_run(store, path):
    """The example command lines of each header run (on the fixture, where most find nothing)."""
    header = HEADER.match(path.read_text(encoding="utf-8")).group(0)
    for line in header.splitlines():
        line = line.lstrip("#").strip()
        if line.startswith("kg query "):
            words = shlex.split(line)
            assert words[3::2] == ["--bind"] * len(words[3::2])
            run(store, words[2], words[4::2])


# --------------------------------------------------------------------------- bindings


def test_binding_cannot_change_the_query(store):
    """A --bind value full of SPARQL is one literal: it matches nothing and changes nothing."""
    size = len(store)
    for query, name in [("papers-of-concept", "label"), ("cooccurring-concepts", "label"), ("search", "text"),
                        ("concepts-of-paper", "id"), ("related-papers", "id"), ("phrases-of-concept", "label"),
                        ("top-concepts-per-venue", "venue"), ("cluster-of", "label"), ("cluster-of", "id")]:
        plain = run(store, query, [f"{name}=x"])
        hostile = run(store, query, [f"{name}={INJECTION}"])
        assert hostile.kind == "select" and hostile.variables == plain.variables
        assert hostile.rows == (), query
    # As a Python mapping of terms too, and in double quotes as the CLI may pass it.
    assert run_query(store, (QUERIES / "search.rq").read_text(), {"text": ox.Literal(INJECTION)}).rows == ()
    assert run(store, "search", [f'text="{INJECTION}"']).rows == ()
    assert len(store) == size
    # The text still works as a literal: a label that contains it is found.
    store2 = ox.Store()
    store2.load(serialize(to_rdf(_with_label(fixture_graph(), INJECTION)), "turtle"), format=ox.RdfFormat.TURTLE)
    found = rows(run(store2, "search", [f"text={INJECTION}"]))
    assert [(r["kind"], r["label"]) for r in found] == [("concept", INJECTION)]
    assert rows(run(store2, "papers-of-concept", [f"label={INJECTION}"]))[0]["conceptLabel"] == INJECTION


def _with_label(G, label):
    G.nodes["concept:fine-tuning"]["label"] = label
    return G


def test_bad_iri_binding_is_refused(store):
    with pytest.raises(QueryError):
        run(store, "papers-of-concept", ["concept=<https://x> } ; DROP ALL ; SELECT * WHERE { ?s ?p ?o } #>"])


def test_binding_a_variable_the_query_does_not_take_is_an_error(store):
    """Oxigraph refuses to substitute a variable that is not projected (e.g. a typo in --bind)."""
    with pytest.raises(QueryError, match="lable"):
        run(store, "papers-of-concept", ["lable=optimization"])


def test_label_and_iri_modes_agree(store):
    by_label = run(store, "papers-of-concept", ["label=ZO Optimization"])
    by_iri = run(store, "papers-of-concept", [concept("zeroth-order-optimization")])
    label_column = by_label.variables.index("label")
    strip = lambda r: [row[:label_column] + row[label_column + 1:] for row in r.rows]
    assert strip(by_label) == strip(by_iri) and len(by_label.rows) == 3  # P1, P4 direct; P2 through its narrower concept


# --------------------------------------------------------------------------- agreement with the networkx graph


def test_top_concepts_agree_with_the_graph(store, graph):
    got = {(r["concept"], int(r["papers"])) for r in rows(run(store, "top-concepts"))}
    want = {(f"{DEFAULT_BASE}concept/{n.partition(':')[2]}", d["papers"])
            for n, d in graph.nodes(data=True) if d["kind"] == "concept" and d["papers"] > 0}
    assert got == want
    assert all(r["papers"] == r["paperCount"] for r in rows(run(store, "top-concepts")))


BRUTE_TOP = """PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
PREFIX dcterms: <http://purl.org/dc/terms/>
SELECT ?concept ?label (COUNT(DISTINCT ?paper) AS ?papers)
WHERE { ?paper dcterms:subject ?concept . ?concept skos:prefLabel ?label }
GROUP BY ?concept ?label ORDER BY DESC(?papers) LCASE(STR(?label)) STR(?label) ?concept"""


@pytest.mark.parametrize("binds", [[], ["all=true"]], ids=["subjects", "all"])
def test_top_concepts_pages_make_the_whole_ranking(store, binds):
    """Every page size's pages, one after another, are the whole ranking (limit=0); without ?all
    that is a brute-force count of every concept's dcterms:subject links, in the same order; a page
    past the end has no rows; a full page says where the next starts."""
    import kg.sparql.catalogue as catalogue

    every = run(store, "top-concepts", [*binds, "limit=0"]).rows
    assert len(every) == (9 if binds else 8)  # the generic concept memory too with all=true
    if not binds:
        assert [(r[0], r[2]) for r in every] == [(r[0], r[2]) for r in run_query(store, BRUTE_TOP).rows]
    canned = read_query(QUERIES / "top-concepts.rq")
    for limit in (1, 2, 3, 4, 5, 25):
        pages, offset = [], 0
        while True:
            page, rest = split_page(canned, [*binds, f"limit={limit}", f"offset={offset}"])
            result = catalogue.with_next_page(run_query(store, paged_text(canned, page), rest), page)
            pages += result.rows
            if result.next_offset is None:
                assert len(result.rows) < limit
                break
            assert len(result.rows) == limit and result.next_offset == offset + limit
            offset = result.next_offset
        assert pages == list(every), (binds, limit)
    assert run(store, "top-concepts", [*binds, "offset=9"]).rows == ()
    assert run(store, "top-concepts", [*binds, "limit=3", "offset=1000"]).rows == ()


def test_top_concepts_page_cut_inside_a_tie_is_no_cut(graph, tmp_path):
    """A page that ends inside a tie (the fixture's rows 1-3 have 3 papers, rows 4-7 have 2) goes
    on on the next page in the tie order (lowercase label, then IRI), with no tie note: a page is
    no cut, as for the other paged queries (docs/cli.md)."""
    import kg

    path = tmp_path / "graph.ttl"
    path.write_text(serialize(to_rdf(graph), "turtle"), encoding="utf-8")
    every = kg.query("top-concepts", graph=path, bind=["limit=0"])
    papers = [r[2] for r in every.rows]
    assert papers[1] == papers[2] and papers[4] == papers[5]  # cuts after rows 2 and 5 fall inside ties
    for limit, offset in ((2, 0), (2, 2), (1, 4), (3, 2)):
        page = kg.query("top-concepts", graph=path, bind=[f"limit={limit}", f"offset={offset}"])
        assert page.rows == every.rows[offset:offset + limit] and page.ties == ()
        assert page.next_offset == offset + limit
    assert kg.query("top-concepts", graph=path).ties == ()  # nor is the default page of 25


def test_top_concepts_counts_papers_for_the_page_only(graph):
    """Papers are counted for the concepts whose stored kgv:paperCount is among the offset + limit
    highest, not for every concept: a concept whose stored count is wrongly low is missed by a
    page it could only reach by its links, and found when every row is asked for (limit=0)."""
    store = ox.Store()
    store.load(serialize(to_rdf(graph), "turtle"), format=ox.RdfFormat.TURTLE)
    kgv, xsd_int = "https://example.org/kg/vocab#", ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")
    sgd = ox.NamedNode(f"{DEFAULT_BASE}concept/stochastic-gradient-descent")  # 3 papers, the third row
    count = ox.NamedNode(kgv + "paperCount")
    store.remove(ox.Quad(sgd, count, ox.Literal("3", datatype=xsd_int), ox.DefaultGraph()))
    store.add(ox.Quad(sgd, count, ox.Literal("0", datatype=xsd_int), ox.DefaultGraph()))
    first = [r[0] for r in run(store, "top-concepts", ["limit=3"]).rows]
    assert sgd.value not in first and len(first) == 3  # its count of 0 is not among the 3 highest
    every = rows(run(store, "top-concepts", ["limit=0"]))
    assert [r["concept"] for r in every][2] == sgd.value and every[2]["papers"] == "3" and every[2]["paperCount"] == "0"


def test_venue_ranks_agree_with_the_graph(graph):
    """top-concepts-per-venue reads the kgv:VenueConcept ranks kg build states: they rank each
    venue's concepts by papers there, then lowercase label, then IRI, and stop at VENUE_RANKS
    (here lowered to 3, so that the fixture's venues, with 7 concepts each, are cut)."""
    from collections import Counter

    import kg.rdf.statements

    want = {}
    for venue, d in graph.nodes(data=True):
        if d["kind"] == "venue":
            counts = Counter(c for p in graph[venue] if graph.nodes[p]["kind"] == "paper"
                             for c in graph[p] if graph.nodes[c]["kind"] == "concept")
            ranked = sorted(counts, key=lambda c: (-counts[c], graph.nodes[c]["label"].lower(), c))
            want[d["label"]] = [(f"{DEFAULT_BASE}concept/{c.partition(':')[2]}", str(counts[c])) for c in ranked]
    for limit in (VENUE_RANKS, 3):
        original, kg.rdf.statements.VENUE_RANKS = kg.rdf.statements.VENUE_RANKS, limit
        try:
            cut = ox.Store()
            cut.load(serialize(to_rdf(graph), "nt").encode(), format=ox.RdfFormat.N_TRIPLES)
        finally:
            kg.rdf.statements.VENUE_RANKS = original
        got = {}
        for r in rows(run(cut, "top-concepts-per-venue", ["top=1000"])):
            got.setdefault(r["venue"], []).append((r["concept"], r["papers"]))
            assert int(r["rank"]) == len(got[r["venue"]])
        assert got == {v: ranked[:limit] for v, ranked in want.items()}
    assert all(len(ranked) == 7 for ranked in want.values())


def test_top_above_ten_ranks_every_concept_it_asks_for():
    """A venue whose 13 concepts have 13, 12, ..., 1 papers: ?top=12 gives the first 12 (the
    query that counted pairs once gave 10, the default, whenever ?top was above it)."""
    from kg.concepts.merge import merge_concepts
    from kg.extract.keyphrases import Keyphrase, PaperKeyphrases
    from kg.graph.build import build_graph
    from kg.text.sources import Paper

    phrases = ["graph coarsening", "spectral clustering", "kernel regression", "policy gradient", "contrastive pretraining",
               "diffusion sampler", "sparse attention", "bandit feedback", "causal discovery", "weight decay",
               "label noise", "token pruning", "mirror descent"]
    papers, keyphrases, extractions = [], [], []
    for j in range(len(phrases)):  # paper j names phrases j.. (so phrase k is in k + 1 papers)
        pid = f"p{j:015x}"
        mine = phrases[j:]
        papers.append(Paper(pid, ". ".join(mine), ". ".join(mine), venue="V", year=2026))
        keyphrases.append(PaperKeyphrases(pid, tuple(Keyphrase(x, 0.5, r) for r, x in enumerate(mine, 1))))
        extractions.append((pid, mine, ()))
    G = build_graph(papers, keyphrases, merge_concepts(extractions), {p.id: p.id for p in papers})
    venue = ox.Store()
    venue.load(serialize(to_rdf(G), "nt").encode(), format=ox.RdfFormat.N_TRIPLES)
    got = [(r["rank"], r["label"], r["papers"]) for r in rows(run(venue, "top-concepts-per-venue", ["top=12"]))]
    want = [(str(i), x, str(len(phrases) - i + 1)) for i, x in enumerate(reversed(phrases), 1)][:12]
    assert got == want


def test_cooccurrence_agrees_with_the_graph(store, graph):
    """cooccurring-concepts finds exactly the `cooccurs` edges of the graph, with their counts."""
    got = set()
    for node, d in graph.nodes(data=True):
        if d["kind"] == "concept":
            for r in rows(run(store, "cooccurring-concepts", [concept(node.partition(":")[2])])):
                pair = tuple(sorted(f"concept:{iri.rsplit('/', 1)[1]}" for iri in (r["concept"], r["other"])))
                got.add((pair, int(r["papers"])))
    want = {((u, v) if u < v else (v, u), d["count"]) for u, v, d in graph.edges(data=True) if d["kind"] == "cooccurs"}
    assert got == want


def test_cooccurring_top_is_a_prefix_of_all(store, graph):
    """cooccurring-concepts with ?top=k gives the first k rows of the full answer (top=0), for
    every concept of the fixture and every k, ties at the cut included."""
    for node, d in graph.nodes(data=True):
        if d["kind"] != "concept":
            continue
        asked = concept(node.partition(":")[2])
        strip = lambda r: [row[:-1] for row in r.rows]  # all but ?top
        everything = strip(run(store, "cooccurring-concepts", [asked, "top=0"]))
        assert strip(run(store, "cooccurring-concepts", [asked])) == everything  # default 100: all, here
        for k in range(1, len(everything) + 2):
            assert strip(run(store, "cooccurring-concepts", [asked, f"top={k}"])) == everything[:k], (node, k)


def test_cooccurring_default_is_the_first_100():
    """A concept co-occurring with 130 others (40 in two papers, 90 in one): by default the 100
    with the most shared papers, ties by label (the 40, then the first 60 of the 90); ?top=0 all
    130, a page of 100 at a time. The query before ?top returned all 130 and took no ?top."""
    from kg.concepts.merge import merge_concepts
    from kg.extract.keyphrases import Keyphrase, PaperKeyphrases
    from kg.graph.build import build_graph
    from kg.text.sources import Paper

    hub = "graph coarsening"
    others = [f"method {chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(130)]
    shared = {x: 2 if i % 13 < 4 else 1 for i, x in enumerate(others)}  # 40 with two papers
    papers, keyphrases, extractions = [], [], []
    for x in others:
        for _ in range(shared[x]):
            pid = f"p{len(papers):015x}"
            mine = [hub, x]
            papers.append(Paper(pid, f"{hub} with {x} ({pid})", ". ".join(mine), venue="V", year=2026))
            keyphrases.append(PaperKeyphrases(pid, tuple(Keyphrase(k, 0.5, r) for r, k in enumerate(mine, 1))))
            extractions.append((pid, mine, ()))
    G = build_graph(papers, keyphrases, merge_concepts(extractions), {p.id: p.id for p in papers})
    big = ox.Store()
    big.load(serialize(to_rdf(G), "nt").encode(), format=ox.RdfFormat.N_TRIPLES)
    hub_node = next(n for n, d in G.nodes(data=True) if d["kind"] == "concept" and d["label"] == hub)
    label = lambda n: G.nodes[n]["label"]
    iri = lambda n: f"{DEFAULT_BASE}concept/{n.partition(':')[2]}"
    edges = [(v if u == hub_node else u, d["count"]) for u, v, d in G.edges(hub_node, data=True) if d["kind"] == "cooccurs"]
    want = [(iri(n), label(n), str(c)) for n, c in sorted(edges, key=lambda e: (-e[1], label(e[0]).lower(), iri(e[0])))]
    assert len(want) == 130 and [c for _, _, c in want].count("2") == 40
    got = lambda binds: [(r["other"], r["otherLabel"], r["papers"]) for r in rows(run(big, "cooccurring-concepts", binds))]
    assert got([f"label={hub}"]) == want[:100]
    assert got([f"label={hub}", "top=0"]) == want[:100]  # the first page
    assert got([f"label={hub}", "top=0", "offset=100"]) == want[100:]  # the second, cut at ?pageEnd 200
    assert got([f"label={hub}", "top=0", "limit=0"]) == want
    assert got([f"label={hub}", "top=45"]) == want[:45]
    assert got([f"label={hub}", "top=45", "limit=10", "offset=40"]) == want[40:45]
    assert got([concept(hub_node.partition(":")[2]), "top=131", "limit=0"]) == want


# The rows search.rq must give, by a plain scan of every label (what it answered before kg wrote
# its word index), in its order.
SEARCH_BY_SCAN = """
PREFIX schema: <https://schema.org/>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
PREFIX dcterms: <http://purl.org/dc/terms/>
SELECT ?kind ?item ?label ?field ?matched ?links ?text WHERE {
  { SELECT ?kind ?item ?label ?field ?matched (COUNT(DISTINCT ?x) AS ?links) ?text ?order WHERE {
      BIND(LCASE(STR(?text)) AS ?lower)
      FILTER(STRLEN(?lower) > 0)
      { ?item a skos:Concept ; skos:prefLabel ?label . ?item skos:prefLabel|skos:altLabel ?matched .
        ?item ?p ?matched . FILTER(?p IN (skos:prefLabel, skos:altLabel))
        BIND(IF(sameTerm(?p, skos:prefLabel), "prefLabel", "altLabel") AS ?field)
        OPTIONAL { ?x dcterms:subject ?item } BIND("concept" AS ?kind) BIND(1 AS ?order) }
      UNION
      { ?item a schema:ScholarlyArticle ; schema:name ?label . ?item ?p ?matched .
        FILTER(?p IN (schema:name, schema:headline, schema:keywords))
        BIND(IF(sameTerm(?p, schema:name), "name", IF(sameTerm(?p, schema:headline), "headline", "keywords")) AS ?field)
        OPTIONAL { ?item dcterms:subject ?x } BIND("paper" AS ?kind) BIND(2 AS ?order) }
      UNION
      { ?item a schema:CreativeWorkSeries ; schema:name ?label . BIND(?label AS ?matched) BIND("name" AS ?field)
        OPTIONAL { ?x schema:isPartOf ?item } BIND("venue" AS ?kind) BIND(3 AS ?order) }
      FILTER(CONTAINS(LCASE(STR(?matched)), ?lower))
    } GROUP BY ?kind ?item ?label ?field ?matched ?text ?order }
}
ORDER BY ?order LCASE(STR(?label)) ?item ?field LCASE(STR(?matched)) ?matched
"""


def _search_texts(G) -> list[str]:
    """Texts to search for: every piece of every label of *G* cut at a few places (so pieces that
    start or end inside a word, across spaces and within one word), in three cases, and texts
    that take the other paths: short pieces, spaces, a long piece, none."""
    labels = sorted({t for _, d in G.nodes(data=True) for t in [d.get("label"), d.get("title"), *d.get("alt_labels", ())] if t})
    texts = {"x", "a", "a b", " ", "   ", "-", "d a", "o", "ic", "IC", "zz", "ord", "er-or", "n f", "s g", " of ",
             "gradient descent at", "DESCENT AT SCALE", "stochastic zeroth-order optimization", "stochasticzeroth",
             "zeroth-order fine-tuning of llms", "llms ", " llm", "éa", "naïve"}
    for label in labels:
        for i in range(0, len(label), 3):
            for j in (i + 2, i + 5, i + 11, len(label)):
                piece = label[i:j]
                texts.update({piece, piece.upper(), piece.title()})
    return sorted(texts)


def test_search_agrees_with_a_scan_of_every_label(store, graph):
    """search.rq finds its candidates through kg's word index (kgv:word): for every text, it
    gives the rows of a plain scan of every label, in the same order."""
    texts = _search_texts(graph)
    assert len(texts) > 500
    found = 0
    for text in texts:
        want = run_query(store, SEARCH_BY_SCAN, [f"text={text}"]).rows
        assert run(store, "search", [f"text={text}"]).rows == want, text
        found += bool(want)
    assert found > 400  # most texts find something: the comparison is not of empty answers


@pytest.mark.parametrize("label", ["İstanbul ΟΔΟΣ Straße ǅemal", "tab\tseparated\u00a0no-break  two  spaces ", "(ZO) c++ 50% [x] a.b $1 \\w"])
def test_search_agrees_with_a_scan_on_unusual_labels(label):
    """Capitals that lowercase to two characters, final sigma, other spaces than U+0020 (which
    do not split words, here or in the query), doubled spaces, characters that mean something in
    IRIs and regular expressions: the word index still finds what the scan finds."""
    G = _with_label(fixture_graph(), label)
    unusual = ox.Store()
    unusual.load(serialize(to_rdf(G), "nt").encode(), format=ox.RdfFormat.N_TRIPLES)
    lower = label.lower()
    texts = {label, lower, label.upper(), *label.split(" "), *lower.split(" "), *label.split(), "  two  ", "no-break  two",
             "ul οδ", "ΔΟΣ", "οδος", "strasse", "i̇stanbul", "dž", "c++ 50", "% [x", "a.b $1", "\\w", "$1 \\"}
    texts.update(label[i:i + n] for n in (2, 4, 7) for i in range(len(label) - n + 1))
    found = 0
    for text in sorted(texts):
        want = run_query(unusual, SEARCH_BY_SCAN, [f"text={text}"]).rows
        assert run(unusual, "search", [f"text={text}"]).rows == want, repr(text)
        found += any(r[3] == "prefLabel" and r[1].endswith("/concept/fine-tuning") for r in want)
    assert found >= len(label) // 2  # the relabelled concept is found by most of them


def test_search_finds_papers_by_their_authors_keywords():
    """A paper's authors' keywords (schema:keywords) are searched as its labels are, through the word
    index: the same rows as the scan, ?field "keywords"; a keyword in no label finds its paper."""
    keywords = {P1: ("Memory-efficient training", "LLMs"), P2: ("privacy; clients", "Zeroth-order optimisation")}
    G = fixture_graph(keywords=keywords)
    with_keywords = ox.Store()
    with_keywords.load(serialize(to_rdf(G), "nt").encode(), format=ox.RdfFormat.N_TRIPLES)
    hits = [(r["kind"], r["item"].rpartition("/")[2], r["field"], r["matched"])
            for r in rows(run(with_keywords, "search", ["text=efficient TRAINING"]))]
    assert hits == [("paper", P1, "keywords", "Memory-efficient training")]
    assert ("paper", P2, "keywords", "privacy; clients") in [
        (r["kind"], r["item"].rpartition("/")[2], r["field"], r["matched"]) for r in rows(run(with_keywords, "search", ["text=CLIENTS"]))]
    for text in ("memory", "efficient train", "llms", "optimis", "vacy; cl", "zeroth", "x", "s c"):
        assert run(with_keywords, "search", [f"text={text}"]).rows == run_query(with_keywords, SEARCH_BY_SCAN, [f"text={text}"]).rows, text


def test_search_without_the_word_index_finds_nothing(store, graph):
    """The word index is what search.rq reads for any text with a piece of 2 characters or more:
    a store without the kgv:word links finds nothing there (so the agreement above is not that of
    a scan), while one-character texts are still found by the scan."""
    bare = ox.Store()
    kgv_word = ox.NamedNode("https://example.org/kg/vocab#word")
    bare.extend([q for q in store if q.predicate != kgv_word])
    assert len(bare) < len(store)
    assert run(store, "search", ["text=gradient"]).rows and not run(bare, "search", ["text=gradient"]).rows
    assert run(bare, "search", ["text=Z"]).rows == run(store, "search", ["text=Z"]).rows != ()


@pytest.mark.parametrize("fmt", ["nt", "json-ld"])
def test_same_results_from_every_rdf_format(graph, store, tmp_path, fmt):
    """graph.nt and graph.jsonld answer every query as graph.ttl does."""
    name = {"nt": "graph.nt", "json-ld": "graph.jsonld"}[fmt]
    path = tmp_path / name
    path.write_text(serialize(to_rdf(graph), fmt), encoding="utf-8")
    other = load_store(path)
    assert len(other) == len(store)
    for query, cases in CASES.items():
        for _, binds in cases:
            assert run(other, query, binds) == run(store, query, binds), (query, binds)


def test_golden_files_are_valid_csv():
    for path in GOLDEN.glob("*.csv"):
        table = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
        assert table and all(len(row) == len(table[0]) for row in table), path.name


def test_result_terms_follow_the_sparql_json_results_format():
    st = ox.Store()
    ex = "http://example.org/"
    st.add(ox.Quad(ox.NamedNode(ex + "a"), ox.NamedNode(ex + "p"), ox.Literal("Grüße \"x\"\n", language="de")))
    st.add(ox.Quad(ox.NamedNode(ex + "a"), ox.NamedNode(ex + "p"), ox.Literal("0.5", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#double"))))
    st.add(ox.Quad(ox.NamedNode(ex + "a"), ox.NamedNode(ex + "p"), ox.Literal("plain")))
    st.add(ox.Quad(ox.NamedNode(ex + "a"), ox.NamedNode(ex + "p"), ox.NamedNode(ex + "b")))
    st.add(ox.Quad(ox.NamedNode(ex + "a"), ox.NamedNode(ex + "p"), ox.BlankNode("n1")))
    result = run_query(st, "SELECT ?o ?missing ?s WHERE { ?s ?p ?o OPTIONAL { ?o ?q ?missing } } ORDER BY STR(?o)")
    assert result.variables == ("o", "missing", "s")
    assert sorted(result.terms, key=lambda t: t["o"]["value"]) == [
        {"o": {"type": "literal", "value": "0.5", "datatype": "http://www.w3.org/2001/XMLSchema#double"}, "s": {"type": "uri", "value": ex + "a"}},
        {"o": {"type": "literal", "value": "Grüße \"x\"\n", "xml:lang": "de"}, "s": {"type": "uri", "value": ex + "a"}},
        {"o": {"type": "uri", "value": ex + "b"}, "s": {"type": "uri", "value": ex + "a"}},
        {"o": {"type": "bnode", "value": "n1"}, "s": {"type": "uri", "value": ex + "a"}},
        {"o": {"type": "literal", "value": "plain"}, "s": {"type": "uri", "value": ex + "a"}},
    ]
    assert sorted(result.rows) == sorted((t["o"]["value"], None, ex + "a") for t in result.terms)
    assert format_result(result, "csv").splitlines()[0] == "o,missing,s"


# ---------------------------------------------------------------------------- bounds on a query's text

_BRACKETS = st.text(alphabet="(){}[]<>+-/|!=&^ ", max_size=40)


def _nested(depth: int, inner: str = "1") -> str:
    return "SELECT * WHERE { FILTER(" + "(" * depth + inner + ")" * depth + ") }"


@given(depth=st.integers(0, 60), junk=_BRACKETS, where=st.sampled_from(["string", "long", "comment", "escape"]))
@settings(max_examples=200, deadline=None)
def test_brackets_in_strings_and_comments_do_not_count(depth, junk, where):
    """The depth is that of the brackets an engine reads: none in a string literal ('...', "...",
    '''...''', \"\"\"...\"\"\"), a # comment or a prefixed name's escaped character."""
    hidden = {"string": "'" + junk.replace("'", "") + "'" + ' "' + junk.replace('"', "") + '"',
              "long": "'''" + junk.replace("'", "") + "'''" + ' """' + junk.replace('"', "") + '"""',
              "comment": "# " + junk + "\n", "escape": "ex:a" + "".join("\\" + c for c in junk if c != " ")}[where]
    assert query_shape(_nested(depth, hidden)) == query_shape(_nested(depth))


@given(depth=st.integers(0, 60), path=st.text(alphabet="()[]abc", max_size=12))
@settings(max_examples=200, deadline=None)
def test_an_iri_with_brackets_does_not_change_the_depth_after_it(depth, path):
    """An IRI's brackets (balanced or not) count at most as a nested part of its level (Oxigraph
    can read ``?a <((1))> ?b`` as a comparison), never for what follows it."""
    iri = f"<http://example.org/{path}>"
    plain = query_shape(_nested(depth) + " # " + path)
    with_iri = query_shape(_nested(depth).replace("1", f"?a = {iri}") + f" {iri}")
    assert plain[0] <= with_iri[0] <= plain[0] + path.count("(") + path.count("[")
    assert query_shape(f"{iri} {_nested(depth)}")[0] == max(plain[0], path.count("(") + path.count("["))


@given(depth=st.integers(0, 300), kind=st.sampled_from(["(", "{", "["]))
@settings(max_examples=100, deadline=None)
def test_the_depth_is_the_nesting_of_brackets(depth, kind):
    close = {"(": ")", "{": "}", "[": "]"}[kind]
    assert query_shape(kind * depth + close * depth)[0] == depth
    assert query_shape(kind * depth)[0] == depth  # left open: as deep


@pytest.mark.parametrize("text, refused", [
    (_nested(MAX_DEPTH - 3), False),
    (_nested(8000), True),  # issue 43: 8,000 parentheses crash Oxigraph
    ("SELECT * WHERE { " + "OPTIONAL { " * 5000 + "}" * 5000 + " }", True),
    ("SELECT * WHERE { FILTER(" + "STR(" * 960 + "1" + ")" * 960 + ") }", True),
    ("SELECT * WHERE { FILTER(1" + "+1" * 4096 + ") }", True),  # a chain, no nesting
    ("SELECT * WHERE { FILTER(1" + "+1" * 500 + ") }", False),
    ("SELECT * WHERE { {}" + " MINUS {}" * 1024 + " }", True),
    ("SELECT * WHERE { {}" + " UNION {}" * 6528 + " }", True),
    ("SELECT * WHERE { " + "".join(f"BIND(1 AS ?v{i}) " for i in range(2048)) + "}", True),
    ("SELECT * WHERE { ?s <p>" + "/<p>" * 6000 + " ?o }", True),
    ("SELECT * WHERE { FILTER(?a <" + "(" * 5000 + "1" + ")" * 5000 + "> ?b) }", True),  # an "IRI" read as a comparison
    ("SELECT * WHERE { VALUES ?x {" + " <http://example.org/a-b/c>" * 20000 + " } }", False),
    ("SELECT * WHERE { ?s ?p '" + "(" * 10000 + "' }", False),
    ("ASK {}" + " " * MAX_QUERY_CHARS, True),
])
def test_queries_past_the_bounds_are_refused_before_the_engine(text, refused):
    if refused:
        with pytest.raises(QueryTooComplex, match="the limit"):
            check_query(text)
    else:
        check_query(text)


def test_the_canned_queries_are_far_within_the_bounds():
    for path in QUERIES.glob("*.rq"):
        depth, chain = query_shape(path.read_text(encoding="utf-8"))
        assert depth <= MAX_DEPTH // 4 and chain <= MAX_CHAIN // 16, path


def test_a_deeply_nested_query_file_is_a_query_error_not_a_crash(store, tmp_path):
    """pyoxigraph parses in this process: 8,000 parentheses would abort it (a stack overflow)."""
    path = tmp_path / "deep.rq"
    path.write_text(_nested(8000), encoding="utf-8")
    with pytest.raises(QueryError, match="nests brackets"):
        run_query(store, path.read_text(encoding="utf-8"))


def test_a_bind_value_that_is_not_utf8_is_a_query_error():
    """``kg query --bind text=$'\\xff'``: Python keeps the byte as a lone surrogate."""
    with pytest.raises(QueryError, match="byte 0xff, which is not UTF-8"):
        parse_binding("text=\udcff")
    with pytest.raises(QueryError, match="lone surrogate"):
        parse_binding("text=a\ud800")
