"""The arXiv metadata snapshot (``arxiv-metadata-oai-snapshot.json``: JSON Lines, one record a line).

A record's ``abstract`` is kept as given and cleaned as every abstract (LaTeX accents
decoded first); the year is that of its first version (``versions[0].created``); its venue
is its primary category (the first of ``categories``: ``cs.LG``), its journal reference
(``journal-ref``) is kept beside it; ``doi`` is its DOI, ``id`` its arXiv id (and
``source_id``), ``authors_parsed`` its authors in order. A record whose abstract says the
paper is withdrawn is skipped with a warning: the text is arXiv's notice, not an abstract.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kg.text.clean import clean_text, normalize_space
from kg.text.files import Lines, json_rows
from kg.text.formats.identify import identifiers
from kg.text.formats.latex import decode_accents, latex_field
from kg.text.records import Author, Notes, Record, Source, records_of, shown, year_in

__all__ = ["is_arxiv", "is_withdrawn", "read_arxiv_items", "read_arxiv_lines"]

# arXiv's notice in place of a withdrawn paper's abstract ("This paper has been withdrawn by
# the author due to a crucial error", "This submission has been withdrawn by arXiv
# administrators", "Withdrawn."): it opens the abstract.
_WITHDRAWN = re.compile(r"^\W*(?:(?:this|the)\s+(?:paper|article|submission|manuscript|preprint|version|work)\s+(?:has\s+been|is|was)\s+"
                        r"withdrawn|withdrawn\b|paper\s+withdrawn)", re.IGNORECASE)


def is_arxiv(data: dict) -> bool:
    """Whether a JSON object is an arXiv metadata record: an ``id``, ``categories`` and ``versions``."""
    return "id" in data and "categories" in data and "versions" in data


def is_withdrawn(abstract: str) -> bool:
    """Whether *abstract* is arXiv's notice that the paper is withdrawn."""
    return bool(_WITHDRAWN.match(abstract))


def read_arxiv_lines(name: str, text: str | Lines):
    """The records of the snapshot's JSON Lines (the row of each is its line)."""
    return records_of(name, lambda notes: json_rows(name, text, notes.warnings, notes.skipped), _record)


def read_arxiv_items(name: str, items: Iterable[object]):
    """The records of a JSON list of arXiv records (the row of each is its place, from 1)."""
    return records_of(name, lambda notes: enumerate(items, start=1), _record)


def _record(item: object, source: Source, notes: Notes) -> Record | None:
    where = f"row {source.row}"
    if not isinstance(item, dict):
        notes.skip(where, f"not a JSON object (an arXiv record) but {shown(item)}; row skipped", "malformed_row")
        return None
    given_id = notes.field(where, "id", item.get("id") if isinstance(item.get("id"), str) else None)
    if given_id:
        where += f" (arXiv {given_id})"
    given = item.get("abstract")
    abstract = notes.abstract_field(where, given, unit="row")
    if abstract is None:
        return None
    if is_withdrawn(abstract):
        notes.skip(where, f"withdrawn: its abstract is arXiv's notice ({shown(abstract, 60)}); row skipped", "withdrawn")
        return None
    found = identifiers(doi=item.get("doi"), arxiv=given_id, where=where, notes=notes)
    categories = item.get("categories").split() if isinstance(item.get("categories"), str) else []
    title = notes.field(where, "title", item.get("title") if isinstance(item.get("title"), str) else None)
    journal_ref = notes.field(where, "journal reference", item.get("journal-ref") if isinstance(item.get("journal-ref"), str) else None)
    return Record(
        abstract,
        source,
        title=latex_field(title) or None if title else None,
        venue=notes.field(where, "venue", categories[0]) if categories else None,
        year=_first_version_year(item),
        source_id=given_id,
        text=clean_text(decode_accents(abstract)),
        doi=found.doi,
        arxiv=found.arxiv,
        authors=_authors(item, where, notes),
        journal_ref=normalize_space(journal_ref) or None if journal_ref else None,
        given=given,
    )


def _first_version_year(item: dict) -> int | None:
    """The year of the record's first version (v1's ``created``), else of its id (``0704.0002``:
    2007), else None."""
    versions = item.get("versions")
    if isinstance(versions, list) and versions and isinstance(versions[0], dict):
        year = year_in(versions[0].get("created"))
        if year is not None:
            return year
    match = re.fullmatch(r"(\d\d)(\d\d)\.\d{4,5}(?:v\d+)?", str(item.get("id", "")))
    return 2000 + int(match.group(1)) if match and 1 <= int(match.group(2)) <= 12 else None


def _authors(item: dict, where: str, notes: Notes) -> tuple[Author, ...]:
    """``authors_parsed`` ([last, first, suffix, affiliations...] each) as "First Last Suffix",
    else the ``authors`` text split at commas and "and" (affiliations in parentheses dropped)."""
    parsed = item.get("authors_parsed")
    names = []
    if isinstance(parsed, list) and parsed:
        for parts in parsed:
            if isinstance(parts, list) and parts and all(isinstance(p, str) for p in parts):
                last, first, suffix = (parts + ["", ""])[:3]
                names.append(" ".join(x for x in (first, last, suffix) if x.strip()))
    elif isinstance(item.get("authors"), str):
        text = normalize_space(re.sub(r"\([^()]*\)", " ", item["authors"]))  # single spaces: \s+and\s+ is quadratic in a run
        names = re.split(r",\s*|\s+and\s+", text)
    names = [notes.field(where, "author's name", n) for n in names]
    return tuple(Author(n) for n in (latex_field(n) for n in names if n) if n)
