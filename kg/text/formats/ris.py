"""RIS (``.ris``: Zotero, Scopus, EndNote, Mendeley exports) and Web of Science's tagged
export (``savedrecs.txt``), read with rispy.

Each record runs from its ``TY`` (Web of Science: ``PT``) line to its ``ER`` line. rispy
drops a record that has no ``ER`` (the file's last one, cut short, or one run into the next
record): kg finds those first and closes them, with a warning naming the record's line, so
they are read too. In RIS the abstract is ``AB`` (or ``N2``), the title ``TI`` (or ``T1``),
the authors ``AU`` (or ``A1``), the year ``PY`` (or ``Y1``, ``DA``), the venue ``T2`` (or
``JO``, ``JF``, ``JA``, ``J2``), the DOI ``DO``, the record's ``ID`` its ``source_id`` and
its ``KW`` lines its keywords (one a line, or separated by ``;``); in Web of Science's ``AB``,
``TI``, ``AF`` (or ``AU``), ``PY``, ``SO``, ``DI``, ``UT`` and ``DE`` (the authors' keywords,
separated by ``;``; not ``ID``, Keywords Plus, which Web of Science makes from the references).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kg.errors import InputError
from kg.text.clean import normalize_space
from kg.text.files import split_lines
from kg.text.formats.identify import identifiers
from kg.text.records import (
    Author,
    Notes,
    Record,
    Source,
    keywords_of,
    shown,
    split_at_semicolons,
    year_in,
)

__all__ = ["read_ris", "read_wos"]

_TAG = re.compile(r"^([A-Z][A-Z0-9])  -")  # a tag line, as rispy tells one


@dataclass(frozen=True)
class _Flavour:
    """What rispy's parser of one flavour reads as a record's start and its tags, and the names
    it gives the tags kg reads (each tuple in the order looked for)."""

    start: str
    close: str  # the line that ends a record
    abstract: tuple[str, ...]
    title: tuple[str, ...]
    authors: tuple[str, ...]
    year: tuple[str, ...]
    venue: tuple[str, ...]
    doi: tuple[str, ...]
    id: tuple[str, ...]
    keywords: str  # the authors' keywords (RIS: a list, one a line; Web of Science: one text, ;-separated)

    def tag(self, line: str) -> str | None:
        if self.start == "TY":
            found = _TAG.match(line)
            return found.group(1) if found else None
        return line[:2] if line[:2] != "  " else None  # Web of Science: continuation lines are indented


RIS = _Flavour("TY", "ER  - ", ("abstract", "notes_abstract"), ("title", "primary_title"), ("authors", "first_authors"),
               ("year", "publication_year", "date"),
               ("secondary_title", "journal_name", "alternate_title3", "alternate_title2", "alternate_title1"), ("doi",), ("id",), "keywords")
WOS = _Flavour("PT", "ER", ("abstract",), ("document_title",), ("author_full_name", "authors"), ("publication_year",),
               ("publication_name",), ("doi",), ("accession_number",), "author_keywords")  # DE; not ID (Keywords Plus, machine-made)


def is_wos(lines: list[str]) -> bool:
    """Whether the first non-blank lines of a file are Web of Science's tagged export's: ``FN``,
    then ``VR`` or a record (``PT``) within five lines (an export of no records has no ``PT``)."""
    return (bool(lines) and lines[0].startswith("FN ")
            and (lines[1:2] != [] and lines[1].startswith("VR ") or any(line.startswith("PT ") for line in lines[:5])))


_NO_RECORDS = {  # a file of this format with no record in it
    "TY": "{name}: an RIS file with no records (no 'TY  - ' line); export RIS records with their AB (abstract) fields into it",
    "PT": "{name}: a Web of Science export with no records (no 'PT' line between its 'FN' and 'EF' lines); export the "
          "records again (Full Record, Plain Text file) and rebuild",
}


def read_ris(name: str, text: str):
    """The records of the RIS file *name* (its decoded *text*), the warnings, what was skipped."""
    return _read(name, text, RIS)


def read_wos(name: str, text: str):
    """The records of a Web of Science tagged export *name* (its decoded *text*)."""
    return _read(name, text, WOS)


def _read(name: str, text: str, flavour: _Flavour):
    import rispy

    notes = Notes(name)
    parser = (rispy.RisParser if flavour is RIS else rispy.WokParser)()
    text, starts = _closed(text.lstrip("\ufeff"), flavour, parser, notes)
    if not starts:
        raise InputError(_NO_RECORDS[flavour.start].format(name=name))
    try:
        entries = parser.parse(text)
    except Exception as e:  # rispy's own errors have no common base
        raise InputError(f"{name}: rispy could not read this file ({type(e).__name__}: {e}); check that it is RIS "
                         f"({flavour.start} … ER records) and rebuild") from e
    if len(entries) != len(starts):  # kg and rispy disagree on where records start: name none wrongly
        raise InputError(f"{name}: {len(starts)} records start with {flavour.start} but rispy read {len(entries)}; check "
                         f"that each record runs from a '{flavour.start}' line to an 'ER' line")
    records = [r for entry, line in zip(entries, starts) if (r := _record(entry, Source(name, line=line), flavour, notes))]
    return records, notes.warnings, notes.skipped


def _joined(tag: str | None, flavour: _Flavour, parser) -> bool:
    """Whether the continuation lines of a *tag* line are joined to it, as rispy joins them (one
    space between): a tag of one value (not a list of values, not split at a delimiter, not
    ignored). kg joins them itself, once: rispy copies the text so far for each line (a record
    of 300,000 lines took minutes)."""
    return (tag is not None and tag in parser.mapping and tag not in parser.list_tags and tag not in parser.delimiter_map
            and tag not in parser.ignore and tag not in (flavour.start, "ER"))


def _closed(text: str, flavour: _Flavour, parser, notes: Notes) -> tuple[str, list[int]]:
    """*text* with an ``ER`` line added to each record that lacks one (before the next record,
    or at the end), a warning for each, and the line (1-based, in the file) where each record
    starts, as rispy reads them. Lines are split at line ends only (`split_lines`), and the
    continuation lines of a tag of one value are joined to its line (`_joined`)."""
    out, starts, open_at = [], [], None
    group: list[str] = []  # a tag line of one value and its continuation lines, stripped
    for number, line in enumerate(split_lines(text), start=1):
        if open_at is None:
            if line.startswith(flavour.start):  # rispy starts a record at any such line
                open_at = number
                starts.append(number)
        else:
            tag = flavour.tag(line)
            if tag is None and group:
                group.append(line.strip())
                continue
            if len(group) > 1:
                out[-1] = " ".join(group)
            group = [line] if _joined(tag, flavour, parser) else []
            if tag == flavour.start:  # rispy would read it as another tag of the open record
                _unclosed(open_at, f"the next record starts at line {number}", notes)
                out.append(flavour.close)
                open_at = number
                starts.append(number)
            elif tag == "ER":
                open_at = None
        out.append(line)
    if len(group) > 1:
        out[-1] = " ".join(group)
    if open_at is not None:
        _unclosed(open_at, "the file ends", notes)
        out.append(flavour.close)
    return "\n".join(out), starts


def _unclosed(line: int, until: str, notes: Notes) -> None:
    notes.warn(f"record at line {line}", f"no 'ER' line before {until}; read up to there (end each record with an 'ER' line)",
               "record_without_end")


def _first(entry: dict, keys: tuple[str, ...]) -> object:
    return next((entry[k] for k in keys if entry.get(k) not in (None, "", [])), None)


def _record(entry: dict, source: Source, flavour: _Flavour, notes: Notes) -> Record | None:
    where = f"record at line {source.line}"
    given_id = _first(entry, flavour.id)
    given_id = notes.field(where, "id", normalize_space(given_id) or None if isinstance(given_id, str) else None)
    if given_id:
        where = f"record {given_id} (line {source.line})"
    abstract = _first(entry, flavour.abstract)
    if not isinstance(abstract, str) or not abstract.strip():
        notes.skip(where, f"no abstract (no {' or '.join(repr(t) for t in (('AB', 'N2') if flavour is RIS else ('AB',)))} line); "
                   "record skipped", "row_without_abstract")
        return None
    given, abstract = abstract, notes.abstract(where, abstract, unit="record")
    if abstract is None:
        return None
    year = None
    given_year = _first(entry, flavour.year)
    if given_year is not None:
        year = year_in(given_year)
        if year is None:
            notes.warn(where, f"year {shown(given_year)} is not a year; the paper is kept with year unknown", "bad_year")
    urls = entry.get("urls") if isinstance(entry.get("urls"), list) else []
    found = identifiers(doi=_first(entry, flavour.doi), urls=urls, where=where, notes=notes)
    title, venue = _first(entry, flavour.title), _first(entry, flavour.venue)
    return Record(
        abstract,
        source,
        title=notes.field(where, "title", normalize_space(title) or None if isinstance(title, str) else None),
        venue=notes.field(where, "venue", normalize_space(venue) or None if isinstance(venue, str) else None),
        year=year,
        source_id=given_id,
        doi=found.doi,
        arxiv=found.arxiv,
        authors=_authors(_first(entry, flavour.authors), where, notes),
        given=given,
        keywords=keywords_of(entry.get(flavour.keywords), where, notes, split=split_at_semicolons,
                             split_items=split_at_semicolons),
    )


def _authors(names: object, where: str, notes: Notes) -> tuple[Author, ...]:
    """RIS names ("Last, First, Suffix") as "First Last Suffix", in order."""
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list):
        return ()
    authors = []
    for name in names:
        if not isinstance(name, str):
            continue
        parts = [normalize_space(p) for p in name.split(",")]
        full = " ".join(p for p in (parts[1:2] + parts[:1] + parts[2:]) if p) if len(parts) > 1 else parts[0]
        if notes.field(where, "author's name", full):
            authors.append(Author(full))
    return tuple(authors)
