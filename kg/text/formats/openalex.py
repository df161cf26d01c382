"""OpenAlex works (the API's JSON, or the snapshot's and exports' JSON Lines).

A work's abstract is an ``abstract_inverted_index`` (each word -> its positions), put back
into text in the order of its positions; ``publication_year`` is the year,
``primary_location.source.display_name`` the venue, ``doi`` the DOI, ``authorships`` the
authors in order (with their ORCID iDs), and the work's ``id`` its ``source_id``. Its
``keywords``, ``concepts`` and ``topics`` are not read: OpenAlex assigns them by a model (each
with a score), and a paper's keywords in kg are its authors' (`kg.concepts.specificity`).
"""

from __future__ import annotations

from collections.abc import Iterable

from kg.text import files
from kg.text.clean import normalize_space
from kg.text.files import Lines, json_rows
from kg.text.formats.identify import identifiers, orcid
from kg.text.records import Author, Notes, Record, Source, records_of, shown, year_in

__all__ = ["abstract_text", "is_openalex", "read_openalex_lines", "read_openalex_works"]

OPENALEX_WORK = "https://openalex.org/W"


def is_openalex(data: dict) -> bool:
    """Whether a JSON object is an OpenAlex work: it has an ``abstract_inverted_index`` (maybe
    null) or an OpenAlex work id."""
    return "abstract_inverted_index" in data or str(data.get("id", "")).startswith(OPENALEX_WORK)


def read_openalex_lines(name: str, text: str | Lines):
    """The records of JSON Lines of works (the row of each is its line)."""
    return records_of(name, lambda notes: json_rows(name, text, notes.warnings, notes.skipped), _record)


def read_openalex_works(name: str, works: Iterable[object]):
    """The records of a JSON document's works (the row of each is its place in the list, from 1)."""
    return records_of(name, lambda notes: enumerate(works, start=1), _record)


def abstract_text(index: object) -> str | None:
    """The text of an ``abstract_inverted_index`` (its words in the order of their positions,
    one space between), or None when it is not a mapping of words to lists of positions.

    >>> abstract_text({"Despite": [0], "growing": [1], "in": [3], "interest": [2]})
    'Despite growing interest in'
    """
    if index_size(index) is None:
        return None
    placed = [(p, word) for word, positions in index.items() for p in positions]
    placed.sort(key=lambda pw: pw[0])
    return " ".join(str(w) for _, w in placed)


def index_size(index: object) -> int | None:
    """The length of the text an ``abstract_inverted_index`` makes (`abstract_text`), counted
    without making it, or None when it is not a mapping of words to lists of positions."""
    if not isinstance(index, dict):
        return None
    size = -1
    for word, positions in index.items():
        if not isinstance(positions, list) or not all(type(p) is int and p >= 0 for p in positions):
            return None
        size += (len(str(word)) + 1) * len(positions)
    return max(size, 0)


def _last_position(index: dict) -> int:
    return max((p for positions in index.values() for p in positions), default=0)


def _abstract(index: object, where: str, notes: Notes) -> str | None:
    """The work's abstract rebuilt from its *index*, or None with a warning (the work skipped).
    Its length and positions are checked before it is rebuilt: a word at position 10^9 or 10^7
    positions (each a tuple while sorting) would cost memory before any limit applied."""
    size = index_size(index)
    if size is None:
        notes.skip(where, f"an 'abstract_inverted_index' that is not words with lists of positions ({shown(index)}); "
                   "work skipped", "malformed_row")
        return None
    if size > files.MAX_ABSTRACT_CHARS:
        notes.skip(where, f"abstract of {size:,} characters, over kg's limit of {files.MAX_ABSTRACT_CHARS:,}; work skipped "
                   "(check that it is an abstract)", "too_long")
        return None
    last = _last_position(index)
    if last > files.MAX_ABSTRACT_CHARS:  # more words than an abstract within the limit can have
        notes.skip(where, f"an 'abstract_inverted_index' with a word at position {last:,}, past any abstract kg reads "
                   f"({files.MAX_ABSTRACT_CHARS:,} characters); work skipped", "malformed_row")
        return None
    abstract = abstract_text(index)
    if not abstract.strip():
        notes.skip(where, "no abstract (the 'abstract_inverted_index' has no words); work skipped", "row_without_abstract")
        return None
    return notes.abstract(where, abstract, unit="work")


def _record(work: object, source: Source, notes: Notes) -> Record | None:
    where = f"row {source.row}"
    if not isinstance(work, dict):
        notes.skip(where, f"not a JSON object (an OpenAlex work) but {shown(work)}; row skipped", "malformed_row")
        return None
    work_id = notes.field(where, "id", work.get("id") if isinstance(work.get("id"), str) else None)
    if work_id:
        where += f" ({work_id.removeprefix('https://openalex.org/')})"
    index = work.get("abstract_inverted_index")
    if index is None or index == {}:
        why = "null: OpenAlex has no abstract of this work" if index is None else "empty"
        notes.skip(where, f"no abstract (the 'abstract_inverted_index' is {why}); work skipped", "row_without_abstract")
        return None
    abstract = _abstract(index, where, notes)
    if abstract is None:
        return None
    year = work.get("publication_year")
    year = year if type(year) is int else year_in(work.get("publication_date"))
    found = identifiers(doi=work.get("doi"), urls=_landing_pages(work), where=where, notes=notes)
    return Record(
        abstract,
        source,
        title=notes.field(where, "title", _text(work.get("title") or work.get("display_name"))),
        venue=notes.field(where, "venue", _venue(work)),
        year=year,
        source_id=work_id,
        doi=found.doi,
        arxiv=found.arxiv,
        authors=_authors(work.get("authorships"), where, notes),
    )


def _text(value: object) -> str | None:
    return normalize_space(value) or None if isinstance(value, str) else None


def _get(data: object, *keys: str) -> object:
    """``data[k1][k2]...``, None where a level is missing or not an object."""
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _venue(work: dict) -> str | None:
    """The name of the work's primary source (journal, conference, repository), else its
    host venue (the API's form before 2023)."""
    return _text(_get(work, "primary_location", "source", "display_name")) or _text(_get(work, "host_venue", "display_name"))


def _landing_pages(work: dict) -> list[object]:
    """The landing pages of the work's locations (an arXiv one gives the arXiv id)."""
    locations = work.get("locations") if isinstance(work.get("locations"), list) else []
    return [_get(work, "primary_location", "landing_page_url"), *(_get(loc, "landing_page_url") for loc in locations)]


def _authors(authorships: object, where: str, notes: Notes) -> tuple[Author, ...]:
    if not isinstance(authorships, list):
        return ()
    authors = []
    for authorship in authorships:
        name = _text(_get(authorship, "author", "display_name")) or _text(_get(authorship, "raw_author_name"))
        name = notes.field(where, "author's name", name)
        if name:
            authors.append(Author(name, orcid(_get(authorship, "author", "orcid"), who=name, where=where, notes=notes)))
    return tuple(authors)
