"""The figures by year that the trend queries read (rising-concepts, venue-new-concepts), counted
from the graph's papers while its RDF is written, as the link lists are (docs/model.md).

A concept's papers in each year, and what a venue had first in each year, are stated grouped by
their count: ``kg:year-concepts/<year>/<n>`` lists (``kgv:countedConcept``) every concept with
*n* papers in that year, and ``kg:venue-new-concepts/<venue>/<year>/<k>`` (``kgv:newConcept``)
the concepts a venue first had in that year, a block of up to 100 of one count at a time, in the
query's order (as the link lists' blocks). So a query reads a year's concepts by an index
lookup, one triple each, instead of joining every link with its paper's year (86,824
concept-years and 79,890 venue-concepts at 10,000 abstracts: a node of their own each would have
added ~660,000 triples; grouped, ~170,000).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from kg.rdf.terms import Group
from kg.rdf.vocabulary import LINK_BLOCK

__all__ = ["YearFigures", "year_figures", "year_groups"]


@dataclass(frozen=True)
class YearFigures:
    """The papers of each year (*papers*: year -> papers), the concepts of each year by their
    papers then (*concepts*: (year, n) -> concepts, sorted), the papers of each venue in each
    year (*venue_papers*: (venue, year) -> papers) and the concepts each venue first had in each
    year by their papers there then (*new*: (venue, year, n) -> concepts, sorted). Papers
    without a year count nowhere, as the queries leave them out."""

    papers: dict[int, int]
    concepts: dict[tuple[int, int], list[str]]
    venue_papers: dict[tuple[str, int], int]
    new: dict[tuple[str, int, int], list[str]]


def year_figures(papers: Iterable[tuple[int | None, Iterable[str], Iterable[str]]]) -> YearFigures:
    """The `YearFigures` of *papers*, each given as (year, its venues, its concepts)."""
    years: Counter[int] = Counter()
    concept_years: Counter[tuple[str, int]] = Counter()
    venue_years: Counter[tuple[str, int]] = Counter()
    venue_concept_years: Counter[tuple[str, str, int]] = Counter()
    for year, venues, concepts in papers:
        if year is None:
            continue
        year, concepts = int(year), list(concepts)
        years[year] += 1
        concept_years.update((c, year) for c in concepts)
        for venue in venues:
            venue_years[venue, year] += 1
            venue_concept_years.update((venue, c, year) for c in concepts)
    first: dict[tuple[str, str], tuple[int, int]] = {}  # (venue, concept) -> its first year there, its papers then
    for (venue, c, year), n in venue_concept_years.items():
        if (venue, c) not in first or year < first[venue, c][0]:
            first[venue, c] = (year, n)
    return YearFigures(dict(sorted(years.items())), _grouped(((y, n), c) for (c, y), n in concept_years.items()),
                       dict(sorted(venue_years.items())),
                       _grouped(((venue, y, n), c) for (venue, c), (y, n) in first.items()))


def _grouped(pairs: Iterable[tuple[tuple, str]]) -> dict[tuple, list[str]]:
    """(key, concept) pairs as key -> its concepts, keys and concepts sorted."""
    found: dict[tuple, list[str]] = {}
    for key, c in pairs:
        found.setdefault(key, []).append(c)
    return {key: sorted(found[key]) for key in sorted(found)}


def year_groups(figures: YearFigures, terms: dict) -> list[Group]:
    """The statement groups of *figures*: each year (``kg:year/<year>``, a ``kgv:Year``), the
    concepts of each year by count (``kgv:YearConcepts``), each venue's years
    (``kg:venue-year/<venue>/<year>``, a ``kgv:VenueYear``) and its new concepts of each year by
    count (``kgv:VenueNewConcepts``); each with its ``kgv:year`` or ``kgv:venueYear`` and its
    ``kgv:yearPaperCount``; the new concepts in blocks in the query's order (`_new_blocks`), each
    with the ``kgv:firstPlace`` of its first. *terms*: the IRI makers (``iri``: a text's,
    ``node``: a node's), the ``base`` IRI, ``integer``, ``type``, each concept's ``place`` in
    label order (``kgv:labelOrder``) and kg's predicates and classes (`Statements`)."""
    iri, node, integer, base = terms["iri"], terms["node"], terms["integer"], terms["base"]
    kind, year_, count = terms["type"], terms["year"], terms["yearPaperCount"]
    groups: list[Group] = []
    for year, n in figures.papers.items():
        groups.append((iri(f"{base}year/{year}"), (kind, year_, count), (terms["Year"], integer(year), integer(n))))
    for (year, n), concepts in figures.concepts.items():
        groups.append((iri(f"{base}year-concepts/{year}/{n}"), (kind, year_, count) + (terms["countedConcept"],) * len(concepts),
                       (terms["YearConcepts"], integer(year), integer(n), *map(node, concepts))))
    for (venue, year), n in figures.venue_papers.items():
        groups.append((_venue_year(terms, venue, year), (kind, terms["yearOfVenue"], year_, count),
                       (terms["VenueYear"], node(venue), integer(year), integer(n))))
    for (venue, year), blocks in _new_blocks(figures.new, terms["place"]).items():
        local = venue.partition(":")[2]
        for k, (first, n, concepts) in enumerate(blocks):
            groups.append((iri(f"{base}venue-new-concepts/{local}/{year}/{k}"),
                           (kind, terms["venueYear"], count, terms["firstPlace"]) + (terms["newConcept"],) * len(concepts),
                           (terms["VenueNewConcepts"], _venue_year(terms, venue, year), integer(n), integer(first),
                            *map(node, concepts))))
    return groups


def _new_blocks(new: dict[tuple[str, int, int], list[str]], place: dict[str, int]) -> dict[tuple[str, int], list]:
    """Each venue's new concepts of each year in venue-new-concepts' order (most papers there
    that year first, then by place in label order), cut into blocks of up to `LINK_BLOCK` of one
    count each: (venue, year) -> [(the place of the block's first concept, from 1, the count,
    its concepts)], so that a page of the query reads the blocks that reach it only."""
    found: dict[tuple[str, int], list] = {}
    for venue, year, n in sorted(new, key=lambda key: (key[0], key[1], -key[2])):
        blocks = found.setdefault((venue, year), [])
        concepts = sorted(new[venue, year, n], key=place.__getitem__)
        for start in range(0, len(concepts), LINK_BLOCK):
            first = blocks[-1][0] + len(blocks[-1][2]) if blocks else 1
            blocks.append((first, n, concepts[start:start + LINK_BLOCK]))
    return found


def _venue_year(terms: dict, venue: str, year: int) -> str:
    """The IRI of *venue*'s year *year*: ``kg:venue-year/<venue>/<year>``."""
    return terms["iri"](f"{terms['base']}venue-year/{venue.partition(':')[2]}/{year}")
