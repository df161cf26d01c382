"""What every reader of abstracts makes: records, where each was read, its authors, warnings.

`kg.text.sources` reads kg's own formats (abstract lists, JSON Lines, CSV) and
`kg.text.formats` the others (BibTeX, RIS, OpenAlex, arXiv); both make `Record`s, which
`kg.text.sources.read_papers` merges into papers.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kg.text import files
from kg.text.clean import normalize_space
from kg.text.files import Diagnostic, Warnings, too_long

__all__ = ["Author", "Diagnostic", "Notes", "Record", "Source", "keywords_of", "name_key", "records_of", "shown",
           "split_at_semicolons", "split_keywords", "unique_keywords", "year_in"]


@dataclass(frozen=True, order=True, slots=True)
class Source:
    """Where a paper was read: a file and its paragraph (text), row (JSON Lines, CSV, the Nth
    work of a JSON file) or line (where a BibTeX entry or RIS record starts), 1-based."""

    file: str
    paragraph: int | None = None
    row: int | None = None
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}, {where(self)}"


def where(source: Source) -> str:
    """The place of *source* in its file, as warnings name it: 'paragraph 2 (line 5)', 'row 3', 'line 12'."""
    if source.paragraph is not None:
        return f"paragraph {source.paragraph} (line {source.line})" if source.line else f"paragraph {source.paragraph}"
    if source.row is not None:
        return f"row {source.row}"
    return f"line {source.line}"


@dataclass(frozen=True, slots=True)
class Author:
    """An author as the input names them, in byline order: a name, and an ORCID iD when given
    (checked: `kg.text.identifiers.check_orcid`)."""

    name: str
    orcid: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        """The author as the graph holds them: ``{"name": ..., "orcid": ...}``."""
        return {"name": self.name, "orcid": self.orcid}


def name_key(name: str) -> str:
    """The form under which two authors' names are the same person's within a corpus (when
    neither has an ORCID iD): Unicode NFKC, case folded, white space single; nothing else (no
    initials matched to first names, no accents dropped).

    >>> name_key("Jane  DOE") == name_key("jane doe")
    True
    """
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


@dataclass(frozen=True)
class Record:
    """One record read from a file, before records with the same abstract become one paper."""

    abstract: str
    source: Source
    title: str | None = None
    venue: str | None = None
    year: int | None = None
    source_id: str | None = None
    text: str | None = None  # the cleaned abstract, when reading made it already
    doi: str | None = None
    arxiv: str | None = None
    authors: tuple[Author, ...] = ()
    journal_ref: str | None = None
    given: str | None = None  # the abstract as the file gives it, before white space is made single
    keywords: tuple[str, ...] = ()  # the authors' keywords, in input order (`keywords_of`)


@dataclass
class Notes:
    """The warnings a reader gives about one file (named *file*), and how many records of each
    reason it skipped (the reasons `ReadReport.skipped` counts)."""

    file: str
    warnings: list[Diagnostic] = field(default_factory=Warnings)  # at most 1,000 kept of a kind
    skipped: dict[str, int] = field(default_factory=dict)

    def warn(self, where: str | None, message: str, reason: str) -> None:
        self.warnings.append(Diagnostic(self.file, where, message, reason))

    def skip(self, where: str | None, message: str, reason: str) -> None:
        """A warning for a record that is not read, counted under *reason*."""
        self.warn(where, message, reason)
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def abstract(self, where: str | None, value: str, *, unit: str, what: str = "abstract",
                 fix: str = "check that it is an abstract") -> str | None:
        """*value* single-spaced, or None when it is over `MAX_ABSTRACT_CHARS`: then its *unit*
        (row, entry, record, work, paragraph) is skipped with a warning, counted as ``too_long``.
        Checked before the abstract is cleaned: cleaning a wrong file's 30 MB would take minutes."""
        abstract = normalize_space(value)
        why = too_long(what, abstract, files.MAX_ABSTRACT_CHARS)
        if why is None:
            return abstract
        self.skip(where, f"{why}; {unit} skipped ({fix})", "too_long")
        return None

    def abstract_field(self, where: str | None, value: object, *, unit: str) -> str | None:
        """The record's 'abstract' field *value* as `abstract` gives it, or None when it is missing,
        empty or not text: then its *unit* is skipped with a warning, counted as ``row_without_abstract``."""
        if not isinstance(value, str) or not value.strip():
            why = "missing" if value is None else "empty" if isinstance(value, str) else f"not text: {shown(value)}"
            self.skip(where, f"no abstract (the 'abstract' field is {why}); {unit} skipped", "row_without_abstract")
            return None
        return self.abstract(where, value, unit=unit)

    def field(self, where: str | None, what: str, value: str | None) -> str | None:
        """*value* (a title, venue, id, an author's name: *what*), or None with a warning when it
        is over `MAX_FIELD_CHARS` (the paper is kept without it). Checked as given, before any
        LaTeX in it is made text."""
        if value is None:
            return None
        why = too_long(what, value, files.MAX_FIELD_CHARS)
        if why is None:
            return value
        self.warn(where, f"{why}; the paper is kept without it", "bad_field")
        return None


def shown(value: object, limit: int = 40) -> str:
    """*value* as Python writes it (escapes show invisible characters), at most about *limit* characters."""
    if isinstance(value, str) and len(value) > limit:
        value = value[:limit]
    try:
        text = repr(value)
    except (RecursionError, ValueError):  # nested too deep, an int too long to write
        text = f"<a {type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def split_keywords(text: str) -> list[str]:
    """The keywords of one text as authors list them: split at ``;``, or at ``,`` when it has no ``;``.

    >>> split_keywords("graph neural networks; message passing, GNN")
    ['graph neural networks', 'message passing, GNN']
    >>> split_keywords("graphs, message passing")
    ['graphs', 'message passing']
    """
    return [part.strip() for part in text.split(";" if ";" in text else ",")]


def split_at_semicolons(text: str) -> list[str]:
    """The keywords of a text that separates them with ``;`` only (Web of Science's ``DE``, an RIS ``KW`` line)."""
    return [part.strip() for part in text.split(";")]


def unique_keywords(keywords: Iterable[str]) -> tuple[str, ...]:
    """*keywords* each single-spaced (`normalize_space`), in order, the empty ones and the
    repeats of one before (up to case) left out.

    >>> unique_keywords([" Deep  learning", "GNN", "deep learning", ""])
    ('Deep learning', 'GNN')
    """
    seen: set[str] = set()
    kept = []
    for keyword in keywords:
        keyword = normalize_space(keyword)
        if keyword and (key := keyword.casefold()) not in seen:
            seen.add(key)
            kept.append(keyword)
    return tuple(kept)


def _one(text: str) -> list[str]:
    return [text]


def keywords_of(value: object, where: str | None, notes: Notes, *, split: Callable[[str], list[str]] = split_keywords,
                split_items: Callable[[str], list[str]] = _one) -> tuple[str, ...]:
    """The authors' keywords a record's field *value* gives: one text of them (*split*: at ``;``,
    else at ``,``) or a list of them, each text (*split_items*: kept whole unless told) or an
    object with a ``display_name``, each kept as `unique_keywords` keeps them. A
    value of another type (a number, an object) is a warning, and the paper is kept without
    keywords; an item of the list that is not text, a warning, and the paper is kept without
    it; a keyword over `files.MAX_FIELD_CHARS`, as any field over it (`Notes.field`)."""
    if value is None or value == "" or value == []:
        return ()
    if isinstance(value, str):
        parts = split(value)
    elif isinstance(value, list):
        parts = []
        for given in value:
            keyword = given.get("display_name") if isinstance(given, dict) else given
            if isinstance(keyword, str):
                parts.extend(split_items(keyword))
            else:
                notes.warn(where, f"keyword {shown(given)} is not text; the paper is kept without it", "bad_field")
    else:
        notes.warn(where, f"keywords {shown(value)} are not a list of keywords or a text of them; the paper is kept"
                   " without them", "bad_field")
        return ()
    return unique_keywords(k for part in parts if (k := notes.field(where, "keyword", normalize_space(part))))


_YEAR = re.compile(r"(?<!\d)((?:1[5-9]|20)\d\d)(?!\d)")


def year_in(value: object) -> int | None:
    """The first year (1500-2099) written in *value* (``2021``, ``"2021-05"``, ``"Mon, 2 Apr
    2007 19:18:42 GMT"``, ``"1948/07//"``), or None."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    match = _YEAR.search(str(value))
    return int(match.group(1)) if match else None


def records_of(name: str, items: Callable[[Notes], Iterable[tuple[int, object]]],
               make: Callable[[object, Source, Notes], Record | None]) -> tuple[list[Record], list[Diagnostic], dict[str, int]]:
    """The records *make* gives for each (row, item) of ``items(notes)`` in the file *name*, with
    the warnings and skipped counts of its `Notes`: one loop for every reader of rows."""
    notes = Notes(name)
    records = [r for row, item in items(notes) if (r := make(item, Source(name, row=row), notes)) is not None]
    return records, notes.warnings, notes.skipped
