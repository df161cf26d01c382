"""BibTeX (``.bib``: Zotero, Google Scholar, JabRef exports), read with bibtexparser 2.

bibtexparser splits the file into blocks and fields and names every block it could not
parse; kg reads the field values itself (``@string`` macros, ``#`` concatenation, braces and
quotes), so that an undefined macro or a broken entry is a warning naming the entry and its
line, and every other entry is read. An entry is a record when it has an ``abstract``; its
key is the record's ``source_id``, its ``keywords`` field (separated by ``;``, else ``,``)
its authors' keywords. Macros are expanded within kg's limits (`_Macros`), and ``crossref``
is not followed.
"""

from __future__ import annotations

import contextlib
import logging
import re

from kg.errors import InputError
from kg.text import files
from kg.text.clean import clean_text, normalize_space
from kg.text.formats.identify import identifiers
from kg.text.formats.latex import decode_accents, latex_field
from kg.text.records import Author, Notes, Record, Source, keywords_of, shown, year_in

__all__ = ["read_bibtex"]

# Where a venue's name is, in the order looked at (BibTeX, then biblatex's names).
VENUE_FIELDS = ("journal", "journaltitle", "booktitle", "eventtitle", "series")
# The fields kg reads (the others are not expanded: their macros cost nothing).
READ_FIELDS = frozenset(("abstract", "title", "author", "year", "date", "doi", "url", "eprint", "eprinttype", "archiveprefix",
                         "keywords", *VENUE_FIELDS))
MONTHS = {m: m.capitalize() for m in ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")}


class _QuietSplitter(logging.Filter):
    """Drops bibtexparser's log lines about a block it could not parse: kg names each such
    block in a warning of its own (its errors and other lines pass)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno <= logging.WARNING and str(record.msg).startswith(("Parsing of `", "We will try to continue")))


@contextlib.contextmanager
def _quiet_splitter():
    logger, quiet = logging.getLogger("bibtexparser.splitter"), _QuietSplitter()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


def read_bibtex(name: str, text: str) -> tuple[list[Record], list, dict[str, int]]:
    """The records of the BibTeX file *name* (its decoded *text*), the warnings, what was skipped."""
    import bibtexparser
    from bibtexparser import model

    with _quiet_splitter():
        try:
            library = bibtexparser.parse_string(text, parse_stack=[])  # field values as written
        except Exception as e:  # bibtexparser stops on a state it calls its own bug
            raise InputError(f"{name}: bibtexparser could not read this file ({type(e).__name__}: {e}); "
                             "check it with a BibTeX tool (biber --tool) and rebuild") from e
    notes = Notes(name)
    macros = _Macros(library.strings, notes)
    first_line: dict[str, int] = {}
    records = []
    for block in library.blocks:
        line = block.start_line + 1  # bibtexparser counts from 0
        entry = None
        if isinstance(block, model.Entry):
            entry = block
        elif isinstance(block, model.DuplicateBlockKeyBlock):
            entry = block.ignore_error_block
            notes.warn(f"entry {entry.key} (line {line})", f"the key {entry.key!r} is also the key of the entry at line "
                       f"{first_line.get(entry.key.lower(), '?')}; read as another record (give each entry its own key)", "duplicate_key")
        elif isinstance(block, model.DuplicateFieldKeyBlock):
            entry = block.ignore_error_block
            for key in sorted(block.duplicate_keys):
                values = [f.value for f in entry.fields if f.key == key]
                notes.warn(f"entry {entry.key} (line {line})", f"field {key!r} given {len(values)} times "
                           f"({', '.join(shown(v, 30) for v in values)}); the first is kept", "duplicate_field")
        elif isinstance(block, model.ParsingFailedBlock):
            notes.skip(f"line {line}", f"{_failure(block, text)}; entry skipped, fix it and rebuild", "malformed_row")
        elif isinstance(block, model.ImplicitComment) and _looks_like_entry(block.comment):
            notes.warn(f"line {line}", f"text between entries that looks like an entry without its @ "
                       f"({shown(normalize_space(block.comment), 50)}); not read, write @type{{key, ...}} to read it", "not_an_entry")
        if entry is not None:
            first_line.setdefault(entry.key.lower(), line)
            record = _record(entry, Source(name, line=line), macros, notes)
            if record is not None:
                records.append(record)
    return records, notes.warnings, notes.skipped


def _failure(block, text: str) -> str:
    """What went wrong in a block bibtexparser could not parse, with the line where it gave up."""
    error = block.error
    reason = normalize_space(getattr(error, "abort_reason", "") or str(error)).rstrip(". ") or "a syntax error"
    end = getattr(error, "end_index", None)
    at = f", at line {text.count(chr(10), 0, end) + 1}" if isinstance(end, int) else ""
    kind = normalize_space(block.raw.partition("{")[0].partition("(")[0]) or "@entry"
    return f"{kind} does not parse ({reason[:1].lower() + reason[1:]}{at}): an unbalanced brace or quote?"


# The start of an entry without its @ at a line's start (``article{key,``); no `\\s*` may run across
# lines before it, and the ``=`` of a field is looked for after it with str.find: a pattern ending
# ``,.*=`` scanned the rest of the text from each such line (quadratic: 160 KB of such lines took 4.2 s, 2 MB ~11 minutes).
_ENTRY_LIKE = re.compile(r"^[ \t]*[A-Za-z]+[ \t]*\{\s*[^,\s{}]+\s*,", re.MULTILINE)


def _looks_like_entry(comment: str) -> bool:
    """Whether text outside any block reads like an entry that lost its @ (``article{key, title = ...``)."""
    start = _ENTRY_LIKE.search(comment)
    return start is not None and comment.find("=", start.end()) >= 0


def _record(entry, source: Source, macros: _Macros, notes: Notes) -> Record | None:
    """The record of one entry, or None (with a warning) when it has no abstract."""
    key = notes.field(f"entry at line {source.line}", "key", entry.key)
    where = f"entry {key} (line {source.line})" if key else f"entry at line {source.line}"
    fields: dict[str, str] = {}
    for f in entry.fields:  # the first of a repeated field (warned about above); only those kg reads are expanded
        name = f.key.strip().lower()
        if name in fields or name not in READ_FIELDS:
            continue
        value = macros.field(f.value, name, where)
        if value is not None:
            fields[name] = value
    abstract = notes.abstract_field(where, fields.get("abstract"), unit="entry")
    if abstract is None:
        return None
    year = None
    for name in ("year", "date"):
        if fields.get(name):
            year = year_in(fields[name])
            if year is None:
                notes.warn(where, f"{name} {shown(fields[name])} is not a year; the paper is kept with year unknown", "bad_year")
            break
    venue = notes.field(where, "venue", next((fields[k] for k in VENUE_FIELDS if fields.get(k, "").strip()), None))
    title = notes.field(where, "title", fields.get("title") or None)
    found = identifiers(doi=fields.get("doi"), arxiv=_arxiv_field(fields), urls=[fields.get("url")], where=where, notes=notes)
    return Record(
        abstract,
        source,
        title=latex_field(title) or None if title else None,
        venue=latex_field(venue) or None if venue else None,
        year=year,
        source_id=key,
        text=clean_text(decode_accents(abstract)),
        doi=found.doi,
        arxiv=found.arxiv,
        authors=_authors(fields.get("author", ""), where, notes),
        given=fields.get("abstract"),
        keywords=_keywords(fields.get("keywords", ""), where, notes),
    )


def _arxiv_field(fields: dict[str, str]) -> str | None:
    """An arXiv id in biblatex's ``eprint`` (with ``eprinttype`` or ``archiveprefix`` arXiv)."""
    kind = (fields.get("eprinttype") or fields.get("archiveprefix") or "").strip().lower()
    return fields.get("eprint") if kind == "arxiv" else None


def _keywords(value: str, where: str, notes: Notes) -> tuple[str, ...]:
    """The ``keywords`` field's keywords (separated by ``;``, else by ``,``), its LaTeX made text
    first (as a title's), the field checked against kg's limit before that (`Notes.field`)."""
    value = notes.field(where, "keywords", value) if value.strip() else None
    return keywords_of(latex_field(value), where, notes) if value else ()


def _authors(value: str, where: str, notes: Notes) -> tuple[Author, ...]:
    """The persons of an ``author`` field (``Doe, Jane and John Smith``), "others" left out,
    each as First von Last, Jr; LaTeX decoded."""
    if not value.strip():
        return ()
    from bibtexparser.middlewares.names import parse_single_name_into_parts, split_multiple_persons_names

    authors = []
    for person in split_multiple_persons_names(normalize_space(value)):
        if person.strip().lower() == "others" or not notes.field(where, "author's name", person):
            continue
        try:
            parts = parse_single_name_into_parts(person)
            words = [*parts.first, *parts.von, *parts.last]
            name = " ".join(words) + (", " + " ".join(parts.jr) if parts.jr else "")
        except Exception:  # a name bibtexparser cannot split: as written
            name = person
        name = latex_field(name)
        if name:
            authors.append(Author(name))
    return tuple(authors)


_NUMBER = re.compile(r"\d+")
_NAME = re.compile(r"[^\s\"#%'(),={}]+")


class _Macros:
    """The file's ``@string`` macros, read in file order as BibTeX reads them (a macro may use
    those defined before it), and the field values that use them. The limit applies while
    expanding: a macro or field is not built when it would pass `files.MAX_ABSTRACT_CHARS` (kg's
    largest field limit), nor once the file's macros have given `files.MAX_RECORD_CHARS` in all;
    each macro not defined (so) is a warning naming its @string and line, and so is each field
    that uses it (the paper is kept without the field)."""

    def __init__(self, strings, notes: Notes):
        self.notes, self.text, self.why = notes, dict(MONTHS), {}  # why: the macros not defined, and why not
        self.budget = files.MAX_RECORD_CHARS
        lines: dict[str, int] = {}
        for string in strings:
            lines.setdefault(string.key.lower(), string.start_line + 1)
        for string in strings:
            self._define(string, lines)

    def _define(self, string, lines: dict[str, int]) -> None:
        """Defines one ``@string``, or warns why it is not defined."""
        key, line = string.key.lower(), string.start_line + 1
        where = f"@string {string.key} (line {line})"
        value, undefined = self._value(string.value)
        why, reason = None, "undefined_macro"
        if value is None:
            why, reason = f"expands past {self._limit()} (macros that repeat each other?)", "macro_too_long"
        elif undefined:
            u = undefined[0]
            low = u.lower()
            why = ("uses itself" if low == key else
                   f"uses {shown(u)} before its @string at line {lines[low]}" if lines.get(low, 0) > line else
                   f"uses {shown(u)}, which is not defined ({self.why[low]})" if low in self.why else
                   f"uses {shown(u)}, which no @string defines")
        cause = self.why.get(undefined[0].lower()) if value is not None and undefined else None
        self.text.pop(key, None)
        self.why.pop(key, None)
        if why is None:
            self.text[key] = value
            return
        self.why[key] = cause or f"{where} {why}"  # the first cause only: a chain of macros names one, not each
        self.notes.warn(where, f"{why}; {shown(string.key)} is not defined, and fields that use it are left out", reason)

    def field(self, raw: str, name: str, where: str) -> str | None:
        """The text of the field *name* as written (*raw*), or None with a warning when a macro
        it uses is not defined or it expands past the limit."""
        value, undefined = self._value(raw)
        if value is None:
            self.notes.warn(where, f"{name}: its @string macros expand past {self._limit()}; not built, "
                            "the paper is kept without this field (macros that repeat each other?)", "macro_too_long")
            return None
        if undefined:
            told = [f"{shown(u)} ({self.why[u.lower()]})" if u.lower() in self.why else shown(u) for u in undefined[:5]]
            more = f" and {len(undefined) - 5:,} more" if len(undefined) > 5 else ""
            self.notes.warn(where, f"{name}: @string macro {', '.join(told)}{more} is not defined; "
                            "the paper is kept without this field (define it with @string)", "undefined_macro")
            return None
        return value

    def _left(self) -> int:
        return min(files.MAX_ABSTRACT_CHARS, self.budget)

    def _limit(self) -> str:
        """The limit a value's macros would pass, in words."""
        if self.budget < files.MAX_ABSTRACT_CHARS:
            return f"what kg builds from macros in one file ({files.MAX_RECORD_CHARS:,} characters in all)"
        return f"kg's limit of {files.MAX_ABSTRACT_CHARS:,} characters"

    def _value(self, raw: str) -> tuple[str | None, list[str]]:
        """A value as written (``{...}``, ``"..."``, a number, a macro, joined by ``#``) as its
        text (None when its macros would take it past the limit: it is not built), and the
        macros it names that are not defined."""
        parts, undefined, size, expanded, limit = [], [], 0, 0, self._left()
        for piece in _pieces(raw):
            piece = piece.strip()
            if piece.startswith("{") and piece.endswith("}") or piece.startswith('"') and piece.endswith('"') and len(piece) > 1:
                text = piece[1:-1]
            elif _NUMBER.fullmatch(piece) or not piece:
                text = piece
            elif _NAME.fullmatch(piece) and piece.lower() in self.text:
                text = self.text[piece.lower()]
                expanded += len(text)
            else:
                undefined.append(piece)
                continue
            size += len(text)
            if expanded and size > limit:  # text as written is bounded by the file; only macros multiply it
                return None, undefined
            parts.append(text)
        self.budget -= expanded
        return "".join(parts), undefined


def _pieces(raw: str) -> list[str]:
    """*raw* split at each ``#`` outside braces and quotes."""
    pieces, depth, quoted, start = [], 0, False, 0
    for i, c in enumerate(raw):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == '"' and depth == 0:
            quoted = not quoted
        elif c == "#" and depth == 0 and not quoted:
            pieces.append(raw[start:i])
            start = i + 1
    pieces.append(raw[start:])
    return pieces
