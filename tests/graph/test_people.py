"""Authors and identifiers on the graph: the paper nodes' ``authors``, ``doi`` and ``arxiv``, the
persons they make (kg.graph.people) and their RDF."""

from __future__ import annotations

import networkx as nx
import pyoxigraph as ox
from fixture_graph import ADA, GRACE, P1, P3, P5, P6, fixture_graph

from kg.graph.io import graph_to_json, load_graph
from kg.graph.people import people, person_slug
from kg.rdf.statements import to_rdf
from kg.rdf.write import serialize


def test_paper_nodes_carry_authors_in_order_and_identifiers():
    G = fixture_graph()
    p1 = G.nodes[f"paper:{P1}"]
    assert p1["authors"] == [{"name": "Ada Lovelace", "orcid": ADA}, {"name": "Alan Turing", "orcid": None}]
    assert (p1["doi"], p1["arxiv"]) == ("10.5555/zo-llm.2024", None)
    assert G.nodes[f"paper:{P3}"]["arxiv"] == "2501.00001"
    assert G.nodes[f"paper:{P6}"]["authors"] == [] and G.nodes[f"paper:{P6}"]["doi"] is None


def test_authors_round_trip_through_graph_json(tmp_path):
    G = fixture_graph()
    path = tmp_path / "graph.json"
    path.write_text(graph_to_json(G), encoding="utf-8")
    back = load_graph(path)
    assert {n: d["authors"] for n, d in back.nodes(data=True) if d["kind"] == "paper"} == \
           {n: d["authors"] for n, d in G.nodes(data=True) if d["kind"] == "paper"}


def test_persons_merge_on_orcid_or_the_exact_normalized_name():
    persons, authors_of = people(fixture_graph())
    named = {p.name: (p.orcid, [n.partition(":")[2] for n in p.papers]) for p in persons.values()}
    assert named == {
        "Ada Lovelace": (ADA, [P1, P3]),  # "ada lovelace" on P3 has no ORCID: the one Ada Lovelace with one
        "Alan Turing": (None, [P1, "p200000000000000", "p400000000000000"]),  # "Alan  Turing" on P4 too
        "Grace Hopper": (GRACE, ["p200000000000000", P3]),
        "Katherine Johnson": (None, ["p400000000000000", P5]),
        "A. Turing": (None, [P5]),  # initials are not matched to first names
    }
    assert authors_of[f"paper:{P5}"] == ["person:" + person_slug(name="Katherine Johnson"), "person:" + person_slug(name="A. Turing")]


def _paper(G, pid, authors):
    G.add_node(f"paper:{pid}", kind="paper", authors=authors)


def test_a_name_shared_by_two_orcids_is_not_guessed():
    G = nx.Graph()
    _paper(G, "a", [{"name": "Li Wei", "orcid": ADA}])
    _paper(G, "b", [{"name": "Li Wei", "orcid": GRACE}])
    _paper(G, "c", [{"name": "li wei", "orcid": None}])
    persons, authors_of = people(G)
    assert len(persons) == 3 and authors_of["paper:c"] == ["person:" + person_slug(name="Li Wei")]
    assert person_slug(name="J. Doe") != person_slug(name="J Doe")  # punctuation is part of the name


def test_rdf_has_each_author_in_order_with_their_person():
    store = ox.Store()
    store.load(serialize(to_rdf(fixture_graph()), "nt").encode(), format=ox.RdfFormat.N_TRIPLES)
    rows = store.query("""
        PREFIX schema: <https://schema.org/> PREFIX kgv: <https://example.org/kg/vocab#>
        SELECT ?paper ?position ?asWritten ?name ?orcid WHERE {
          ?a kgv:work ?paper ; kgv:position ?position ; schema:name ?asWritten ; kgv:person ?person .
          ?paper schema:author ?person . ?person schema:name ?name .
          OPTIONAL { ?person schema:sameAs ?orcid }
        } ORDER BY ?paper ?position""")
    got = [(r["paper"].value.rpartition("/")[2], int(r["position"].value), r["asWritten"].value, r["name"].value,
            r["orcid"].value if r["orcid"] else None) for r in rows]
    assert got[:6] == [
        (P1, 1, "Ada Lovelace", "Ada Lovelace", f"https://orcid.org/{ADA}"), (P1, 2, "Alan Turing", "Alan Turing", None),
        ("p200000000000000", 1, "Alan Turing", "Alan Turing", None), ("p200000000000000", 2, "Grace Hopper", "Grace Hopper", f"https://orcid.org/{GRACE}"),
        (P3, 1, "ada lovelace", "Ada Lovelace", f"https://orcid.org/{ADA}"), (P3, 2, "Grace Hopper", "Grace Hopper", f"https://orcid.org/{GRACE}"),
    ]
    assert len(got) == 10
    same = {(r["p"].value.rpartition("/")[2], r["s"].value) for r in store.query(
        "SELECT ?p ?s WHERE { ?p a <https://schema.org/ScholarlyArticle> ; <https://schema.org/sameAs> ?s }")}
    assert same == {(P1, "https://doi.org/10.5555/zo-llm.2024"), (P3, "https://arxiv.org/abs/2501.00001"),
                    ("p400000000000000", "https://doi.org/10.5555/fedft.2024")}
