"""The figures by year (kg.rdf.trends) that rising-concepts and venue-new-concepts read: on the
fixture's RDF, each one equals what a scan of the links and their papers' years gives."""

from __future__ import annotations

from collections import Counter

import pytest
from fixture_graph import fixture_graph
from rdflib import RDF, Graph, Namespace
from rdflib.namespace import DCTERMS

from kg.rdf.statements import to_rdf
from kg.rdf.trends import year_figures
from kg.rdf.vocabulary import KGV

SDO = Namespace("https://schema.org/")


@pytest.fixture(scope="module")
def rdf() -> Graph:
    return to_rdf(fixture_graph())


def _scanned(g: Graph) -> dict[str, Counter]:
    """The figures as a scan of every link gives them: papers by year, (concept, year), (venue,
    year), and (venue, concept, first year there) -> papers there that year."""
    year = {p: int(str(d)) for p, d in g.subject_objects(SDO.datePublished)}
    venue = dict(g.subject_objects(SDO.isPartOf))
    links = [(p, c) for p, c in g.subject_objects(DCTERMS.subject) if p in year]
    at_venue = Counter((venue[p], c, year[p]) for p, c in links if p in venue)
    first = {}
    for (v, c, y), n in sorted(at_venue.items(), key=lambda item: item[0][2], reverse=True):
        first[v, c] = (y, n)
    return {"years": Counter(year.values()), "concepts": Counter((c, year[p]) for p, c in links),
            "venues": Counter((venue[p], year[p]) for p in year if p in venue),
            "new": Counter({(v, c, y): n for (v, c), (y, n) in first.items()})}


def _stated(g: Graph) -> dict[str, Counter]:
    """The figures as the RDF states them (kgv:Year, kgv:YearConcepts, kgv:VenueYear, kgv:VenueNewConcepts)."""
    def one(s, p):
        (o,) = g.objects(s, p)
        return int(o) if p != KGV.yearOfVenue else o

    found: dict[str, Counter] = {"years": Counter(), "concepts": Counter(), "venues": Counter(), "new": Counter()}
    for s in g.subjects(RDF.type, KGV.Year):
        found["years"][one(s, KGV.year)] += one(s, KGV.yearPaperCount)
    for s in g.subjects(RDF.type, KGV.YearConcepts):
        for c in g.objects(s, KGV.countedConcept):
            found["concepts"][c, one(s, KGV.year)] += one(s, KGV.yearPaperCount)
    for s in g.subjects(RDF.type, KGV.VenueYear):
        found["venues"][one(s, KGV.yearOfVenue), one(s, KGV.year)] += one(s, KGV.yearPaperCount)
    for s in g.subjects(RDF.type, KGV.VenueNewConcepts):
        (vy,) = g.objects(s, KGV.venueYear)
        for c in g.objects(s, KGV.newConcept):
            found["new"][one(vy, KGV.yearOfVenue), c, one(vy, KGV.year)] += one(s, KGV.yearPaperCount)
    return found


def test_figures_equal_a_scan_of_the_links(rdf):
    scanned, stated = _scanned(rdf), _stated(rdf)
    assert scanned == stated
    # the fixture's own figures (tests/fixture_graph.py): P6 has no year and counts nowhere
    assert scanned["years"] == {2024: 2, 2025: 3}
    assert len(scanned["concepts"]) == 12 and len(scanned["new"]) == 14


def test_year_figures_by_hand():
    """Concepts grouped by their papers in a year; a venue's new concepts in their first year
    there only, with that year's papers; a paper without a year nowhere."""
    figures = year_figures([
        (2020, ["venue:a"], ["concept:x", "concept:y"]),
        (2021, ["venue:a"], ["concept:x", "concept:z"]),
        (2021, ["venue:a"], ["concept:z"]),
        (2021, [], ["concept:x"]),
        (None, ["venue:a"], ["concept:w"]),
    ])
    assert figures.papers == {2020: 1, 2021: 3}
    assert figures.concepts == {(2020, 1): ["concept:x", "concept:y"], (2021, 2): ["concept:x", "concept:z"]}
    assert figures.venue_papers == {("venue:a", 2020): 1, ("venue:a", 2021): 2}
    assert figures.new == {("venue:a", 2020, 1): ["concept:x", "concept:y"], ("venue:a", 2021, 2): ["concept:z"]}
