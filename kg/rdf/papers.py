"""A paper's statements, made from what a `PaperRow` holds and nothing else of the graph, so that a partition's papers
can be stated apart from the rest, where the partition is held (issue 48; `kg.rdf.statements.Statements.paper_chunks`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kg.rdf.terms import Group, group
from kg.rdf.vocabulary import is_code_link, link_iri
from kg.text.identifiers import arxiv_iri, doi_iri

__all__ = ["PaperRow", "paper_groups"]


@dataclass(frozen=True)
class PaperRow:
    """What one paper's statements say (`paper_groups`): its node id and attributes (docs/model.md), the venue nodes
    it is part of, its links by rank as (rank, concept node, score, phrase), its authors' person ids in byline order
    and its place in label order. Each is the paper's own or read from a corpus-wide table (the people, the label
    order), so a paper's statements need nothing else of the graph."""

    node: str
    data: dict
    venues: tuple[str, ...]
    links: tuple[tuple[int, str, float, str], ...]
    authors: tuple[str, ...]
    place: int


def paper_groups(v, row: PaperRow, activity: str) -> list[Group]:
    """A paper's statements (*v*: the vocabulary of `kg.rdf.statements.Statements`), then those of its keyphrase
    assignments (by rank, each made by *activity*) and authorships."""
    node, d, s, sdo, kgv, text, integer = row.node, row.data, v.iri_of(row.node), v.sdo, v.kgv, v.text, v.integer
    pid = node.partition(":")[2]
    about = [(v.rdf_type, sdo["ScholarlyArticle"]), (sdo["identifier"], text(pid)), (sdo["name"], text(d["label"]))]
    if d.get("title"):
        about.append((sdo["headline"], text(d["title"])))
    about += [(sdo["abstract"], text(d["abstract"])), (kgv["cleanAbstract"], text(d["text"]))]
    if d.get("year") is not None:
        about.append((sdo["datePublished"], v.typed(f"{int(d['year']):04d}", v.xsd["gYear"])))
    if d.get("source_id"):
        about.append((kgv["sourceId"], text(d["source_id"])))
    about += _identified(d, v.N, text, sdo["sameAs"], kgv["journalRef"])
    about += [(sdo["keywords"], text(k)) for k in d.get("keywords", ())] + v.order("keywordOrder", d.get("keywords", ()))
    about += [(sdo["author"], v.iri_of(person)) for person in dict.fromkeys(row.authors)]
    about += [(kgv["source"], text(ref)) for ref in d.get("sources", [])] + v.order("sourceOrder", d.get("sources", []))
    urls = [(url, link_iri(url)) for url in d.get("urls", [])]
    for url, term in urls:
        iri = v.terms.add(term)
        about.append((sdo["url"], iri))
        if is_code_link(url):
            about.append((sdo["codeRepository"], iri))
    about += v.order("urlOrder", [term.value for _, term in urls])
    about += [(sdo["isPartOf"], v.iri_of(venue)) for venue in row.venues]
    about += [(v.subject, v.iri_of(c)) for _, c, _, _ in row.links]
    if d.get("cluster") is not None:
        about.append((kgv["cluster"], v.cluster_iri(d["cluster"])))
    about += v.words(d["label"], d.get("title"), *d.get("keywords", ()))
    about.append((kgv["labelOrder"], integer(row.place)))
    groups = [group(s, dict.fromkeys(about))]
    assignment, entity = kgv["KeyphraseAssignment"], v.prov["Entity"]
    for rank, c, score, phrase in row.links:
        groups.append((v.assignment_iri(node, rank), v.about_assignment, (
            assignment, entity, s, v.iri_of(c), text(phrase), v.decimal(score), integer(rank), activity, s)))
    for position, (person, author) in enumerate(zip(row.authors, d.get("authors") or ()), start=1):
        groups.append((v.N(f"{v.base}authorship/{pid}/{position}"), v.about_authorship, (
            kgv["Authorship"], s, v.iri_of(person), integer(position), text(" ".join(author["name"].split())))))
    return groups


def _identified(d: dict, N, text, same_as: str, journal_ref: str) -> list[tuple[str, str]]:
    """A paper's DOI and arXiv id as ``schema:sameAs`` their https://doi.org/ and
    https://arxiv.org/abs/ IRIs, and its journal reference (an arXiv record's)."""
    about = []
    if d.get("doi"):
        about.append((same_as, N(doi_iri(d["doi"]))))
    if d.get("arxiv"):
        about.append((same_as, N(arxiv_iri(d["arxiv"]))))
    if d.get("journal_ref"):
        about.append((journal_ref, text(d["journal_ref"])))
    return about
