"""Reading abstracts: abstract-list text files, JSON Lines and CSV, into `Paper` records.

A text file starts with a header line naming the venue and year in any language
(``ICML 2026 Papers``, ``ICLR 2026 论文列表``); each following paragraph is one abstract
(a paragraph whose every line is long enough to be an abstract is one abstract per line).
JSON Lines and CSV rows carry an ``abstract`` field and optional ``id``, ``title``,
``venue``, ``year``, ``authors`` and ``keywords`` (`KEYWORD_FIELDS`). BibTeX, RIS, OpenAlex
works and arXiv metadata are read by `kg.text.formats`, found by suffix and content (`read_format`); every reader makes
`kg.text.records.Record` s, merged here into papers. A folder is read for its files with one
of `FOLDER_SUFFIXES`; a file named on its own is read whatever its name.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path

from kg.errors import InputError
from kg.text import files as text_files
from kg.text.clean import clean_text, normalize_space
from kg.text.files import (
    Lines,
    LongNumber,
    Warnings,
    decode,
    input_names,
    json_rows,
    read_input,
    split_lines,
)
from kg.text.formats import BIBTEX_SUFFIXES, CSV_SUFFIXES, JSONL_SUFFIXES, RIS_SUFFIXES
from kg.text.formats.identify import identifiers, orcid
from kg.text.inputs import find_inputs
from kg.text.papers import (
    Conflict,
    Paper,
    Prepared,
    ReadReport,
    merge_prepared,
    paper_id,
    prepare,
)
from kg.text.readcache import ParsedFile, ReadCache, environment
from kg.text.records import Author, Diagnostic, Notes, Source, keywords_of, shown
from kg.text.records import Record as _Record
from kg.text.records import where as _where

__all__ = ["Conflict", "Diagnostic", "Paper", "ReadReport", "Source", "paper_id", "parse_header", "read_papers"]

# A CSV field (Python's default): the csv module stops at it while reading, whatever another
# library in the process set (scipy's ARFF reader sets no limit at all).
MAX_CSV_FIELD_CHARS = 131_072


MAX_HEADER_WORDS = 12


MAX_HEADER_CHARS = 1000  # a longer first line is no header, whatever its words (it is not looked at)


# A paragraph of two or more lines that each have this many words is one abstract per line:
# an abstract has 100-300 words, a hard-wrapped line 10-15.
ONE_PER_LINE_MIN_WORDS = 30


_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")


# The names a row's authors' keywords go by, case aside, in the order looked for: kg's, then
# other tools' (Scopus's CSV column, bibliometrix's DE); the first given is read.
KEYWORD_FIELDS = ("keywords", "keyword", "author_keywords", "authorkeywords", "author keywords", "de")


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9&+\-]*")


_GENERIC_HEADER_WORDS = frozenset(
    """papers paper accepted list lists proceedings of the conference on in and main track
    workshop abstracts abstract orals oral posters poster spotlight spotlights selected
    international annual edition volume vol""".split()
)


_SENTENCE_END = (".", "?", "!", "。", "？", "！")


# Words of a sentence, not of a header: a short first line holding one is an abstract.
_SENTENCE_WORDS = frozenset(
    """we our us is are was were be been has have had can could will would may might should must
    does do did this these those it its how why what when which whether that than""".split()
)


def parse_header(line: str) -> tuple[str | None, int | None]:
    """Venue and year named by a header line, in any language.

    >>> parse_header("ICML 2026 Papers")
    ('ICML', 2026)
    >>> parse_header("ICLR 2026 论文列表")
    ('ICLR', 2026)
    >>> parse_header("Proceedings of NeurIPS 2025")
    ('NeurIPS', 2025)

    The venue is the first acronym-like word (two capitals or more: ICML, NeurIPS); without
    one, the only word left besides generic ones (``Interspeech 2024``) or the only
    capitalised one (``Papers from Interspeech``); else it is unknown.

    >>> parse_header("Some Papers I Liked")
    (None, None)
    """
    line = normalize_space(line)
    years = _YEAR.findall(line)
    year = int(years[0]) if years else None
    words = [w for w in _WORD.findall(_YEAR.sub(" ", line)) if w.lower() not in _GENERIC_HEADER_WORDS]
    acronyms = [w for w in words if sum(c.isupper() for c in w) >= 2]
    names = words if len(words) == 1 else [w for w in words if w[0].isupper()]
    venue = acronyms[0] if acronyms else (names[0] if len(names) == 1 else None)
    return venue, year


def _paragraphs(text: str) -> Iterator[tuple[int, int, str]]:
    """(paragraph number, first line number, text) of each blank-line separated paragraph."""
    number = 0
    start = 0
    lines: list[str] = []
    for lineno, line in enumerate(split_lines(text), start=1):
        if line.strip():
            if not lines:
                start = lineno
            lines.append(line)
        elif lines:
            number += 1
            yield number, start, "\n".join(lines)
            lines = []
    if lines:
        number += 1
        yield number, start, "\n".join(lines)


def _is_header(paragraph: str) -> bool:
    """Whether the first line of the file's first *paragraph* is a header (venue and year).

    It has text and at most `MAX_HEADER_WORDS` words. With a year, it is a header unless it
    is a paragraph of its own that ends with a full stop. Without one, it is not a header
    when it reads like a sentence (ends with . ? !, or holds a word such as "we", "is",
    "can") or runs on into the next line (which starts in lower case).
    """
    lines = paragraph.split("\n")
    if len(lines[0]) > MAX_HEADER_CHARS:
        return False
    first = normalize_space(lines[0])
    if not is_text(first) or len(first.split()) > MAX_HEADER_WORDS:
        return False
    if _YEAR.search(first):
        return len(lines) > 1 or not first.endswith(".")
    if first.endswith(_SENTENCE_END) or any(w.lower() in _SENTENCE_WORDS for w in _WORD.findall(first)):
        return False
    return not (len(lines) > 1 and lines[1].strip()[:1].islower())


def _one_per_line(lines: Sequence[str]) -> bool:
    """Whether a paragraph of *lines* is one abstract per line: 2+ lines, each long enough to be one."""
    return len(lines) > 1 and all(len(line.split()) >= ONE_PER_LINE_MIN_WORDS for line in lines)


def _read_text(name: str, text: str) -> tuple[list[_Record], list[Diagnostic], dict[str, int]]:
    notes = Warnings()
    skipped: dict[str, int] = {}
    paragraphs = list(_paragraphs(text))
    if not paragraphs:
        raise InputError(f"{name}: empty file; put a header line (venue and year) and one abstract per paragraph in it")
    venue = year = None
    first_no, _, first = paragraphs[0]
    body = paragraphs
    if _is_header(first):
        header, _, rest = first.partition("\n")
        venue, year = parse_header(header)
        body = paragraphs[1:]
        if rest.strip():  # header line directly followed by the first abstract, no blank line
            body = [(first_no, paragraphs[0][1] + 1, rest)] + body
        if venue is None or year is None:
            missing = " and ".join(x for x, v in (("venue", venue), ("year", year)) if v is None)
            notes.append(
                Diagnostic(
                    name,
                    "line 1",
                    f"header {normalize_space(header)!r} names no {missing}; its papers are kept with {missing} unknown"
                    " (write a header such as 'ICML 2026 Papers')",
                    "header_without_venue_or_year",
                )
            )
    else:
        notes.append(
            Diagnostic(
                name,
                "line 1",
                "no header line; its papers are kept with venue and year unknown (start the file with a line such as 'ICML 2026 Papers')",
                "no_header",
            )
        )
    if not body:
        raise InputError(f"{name}: a header and no abstracts; add one abstract per paragraph below the header line")
    records = []
    for no, line, paragraph in body:
        lines = paragraph.split("\n")
        pieces = [(line, paragraph)]
        if _one_per_line(lines):
            pieces = [(line + i, part) for i, part in enumerate(lines)]
            notes.append(
                Diagnostic(
                    name,
                    _where(Source(name, paragraph=no, line=line)),
                    f"{len(lines)} lines of {ONE_PER_LINE_MIN_WORDS} words or more and no blank line between them;"
                    f" read as {len(lines)} abstracts, one per line (put a blank line between abstracts to be sure)",
                    "one_abstract_per_line",
                )
            )
        for lineno, piece in pieces:
            source = Source(name, paragraph=no, line=lineno)
            abstract = Notes(name, notes, skipped).abstract(_where(source), piece, unit="paragraph", what="paragraph",
                                                            fix="put a blank line between abstracts, or check that it is an abstract")
            if abstract is None:
                continue
            cleaned = clean_text(abstract)
            if not is_text(cleaned):
                notes.append(
                    Diagnostic(name, _where(source), f"no text left after cleaning ({shown(piece.strip())}); paragraph skipped", "paragraph_without_text")
                )
                skipped["paragraph_without_text"] = skipped.get("paragraph_without_text", 0) + 1
                continue
            records.append(_Record(abstract, source, venue=venue, year=year, text=cleaned, given=piece))
    return records, notes, skipped


def _record_from_mapping(name: str, row: int, data: object, warnings: list[Diagnostic], skipped: dict[str, int]) -> _Record | None:
    """The record of one of kg's rows (a JSON object, or a CSV row as a mapping of its columns)."""
    notes = Notes(name, warnings, skipped)
    where = f"row {row}"
    if not isinstance(data, dict):
        notes.skip(where, "not a JSON object with an 'abstract' field; row skipped, fix it and rebuild", "malformed_row")
        return None
    lowered = {str(k).strip().lower(): v for k, v in data.items()}
    given = lowered.get("abstract")
    abstract = notes.abstract_field(where, given, unit="row")
    if abstract is None:
        return None
    year = lowered.get("year")
    parsed_year: int | None = None
    if year not in (None, ""):
        match = _YEAR.search(str(year))
        if match:
            parsed_year = int(match.group(1))
        else:
            notes.warn(where, f"year {shown(year)} is not a year; the paper is kept with year unknown", "bad_year")

    def text_field(key: str) -> str | None:
        value = lowered.get(key)
        if value is None or value == "":
            return None
        if isinstance(value, bool) or not isinstance(value, (str, int, float, LongNumber)):  # a number is text enough (an id 42)
            notes.warn(where, f"{key} {shown(value)} is not text; the paper is kept without it", "bad_field")
            return None
        return notes.field(where, key, normalize_space(str(value))) or None

    found = identifiers(doi=text_field("doi"), arxiv=text_field("arxiv"), where=where, notes=notes)
    return _Record(
        abstract,
        Source(name, row=row),
        given=given,
        title=text_field("title"),
        venue=text_field("venue"),
        year=parsed_year,
        source_id=text_field("id"),
        doi=found.doi,
        arxiv=found.arxiv,
        authors=_row_authors(lowered.get("authors"), where, notes),
        keywords=keywords_of(next((v for k in KEYWORD_FIELDS if (v := lowered.get(k)) not in (None, "", [])), None),
                             where, notes),
    )


def _row_authors(value: object, where: str, notes: Notes) -> tuple[Author, ...]:
    """The authors of one of kg's rows, in order: a list of names or of ``{"name", "orcid"}``
    objects (JSON), or names separated by ``;`` (a CSV column)."""
    if value is None or value == "" or value == []:
        return ()
    if isinstance(value, str):
        value = value.split(";")
    if not isinstance(value, list):
        notes.warn(where, f"authors {shown(value)} are not a list of names; the paper is kept without them", "bad_field")
        return ()
    authors = []
    for given in value:
        person, given_orcid = given, None
        if isinstance(given, dict):
            lowered = {str(k).strip().lower(): v for k, v in given.items()}
            person, given_orcid = lowered.get("name"), lowered.get("orcid")
        if not isinstance(person, str):
            notes.warn(where, f"author {shown(given)} is not a name (text, or an object with a 'name'); the paper is kept"
                       " without this author", "bad_field")
            continue
        name = notes.field(where, "author's name", normalize_space(person))
        if name:
            authors.append(Author(name, orcid(given_orcid, who=name, where=where, notes=notes)))
    return tuple(authors)


def _read_jsonl(name: str, text: str | Lines) -> tuple[list[_Record], list[Diagnostic], dict[str, int]]:
    notes = Warnings()
    skipped: dict[str, int] = {}
    records = []
    for row, data in json_rows(name, text, notes, skipped):
        record = _record_from_mapping(name, row, data, notes, skipped)
        if record:
            records.append(record)
    return records, notes, skipped


@contextlib.contextmanager
def _csv_field_limit():
    """`MAX_CSV_FIELD_CHARS` as the csv module's field limit while kg reads a CSV file (the limit
    is the process's: the one found is put back after)."""
    before = csv.field_size_limit(MAX_CSV_FIELD_CHARS)
    try:
        yield
    finally:
        csv.field_size_limit(before)


def _read_csv(name: str, text: str, delimiter: str) -> tuple[list[_Record], list[Diagnostic], dict[str, int]]:
    with _csv_field_limit():
        return _read_csv_rows(name, text, delimiter)


def _read_csv_rows(name: str, text: str, delimiter: str) -> tuple[list[_Record], list[Diagnostic], dict[str, int]]:
    notes = Warnings()
    skipped: dict[str, int] = {}
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        return [], notes, skipped
    except csv.Error as e:
        raise InputError(f"{name}, row 1: malformed CSV header ({e}); fix it and rebuild") from e
    columns = [h.strip().lower() for h in header]
    if "abstract" not in columns:
        raise InputError(f"{name}, row 1: CSV header has no 'abstract' column (found: {', '.join(columns) or 'nothing'}); name the abstract column 'abstract'")
    records = []
    row = 1
    while True:
        try:
            values = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            row = reader.line_num
            notes.append(Diagnostic(name, f"row {row}", f"malformed CSV ({e}); row skipped, fix it and rebuild", "malformed_row"))
            skipped["malformed_row"] = skipped.get("malformed_row", 0) + 1
            continue
        row = reader.line_num
        if not any(v.strip() for v in values):
            continue
        if len(values) != len(columns):
            notes.append(
                Diagnostic(name, f"row {row}", f"{len(values)} fields where the header has {len(columns)}; row skipped, fix it and rebuild", "malformed_row")
            )
            skipped["malformed_row"] = skipped.get("malformed_row", 0) + 1
            continue
        record = _record_from_mapping(name, row, dict(zip(columns, values)), notes, skipped)
        if record:
            records.append(record)
    return records, notes, skipped


_EMPTY_ADVICE = {  # what an empty file of each kind should hold (docs/input.md)
    ".txt": "put a header line (venue and year) and one abstract per paragraph in it",
    **dict.fromkeys(JSONL_SUFFIXES, "put one JSON object a line in it, each with an abstract field"),
    ".json": "put a JSON list of objects with an abstract field, or OpenAlex or arXiv records, in it",
    **dict.fromkeys(CSV_SUFFIXES, "put a header row with an abstract column, then one row a paper, in it"),
    **dict.fromkeys(BIBTEX_SUFFIXES, "export BibTeX entries with their abstract fields into it"),
    **dict.fromkeys(RIS_SUFFIXES, "export RIS records with their AB (abstract) fields into it"),
}


# The version of what reading a file gives: its records, warnings and skips, the cleaned text, paper
# ids and text keys of its records (kg.text.papers.prepare). Bump it whenever any of them changes for
# the same bytes: the read cache (kg.text.readcache) keys each file's entry by it, so that a rebuild
# never takes an older reading of an unchanged file. (The key holds the SHA-256 of kg.text's modules
# too, so an edit without a bump is not missed; the bump also covers a change from elsewhere.)
READ_VERSION = 1


def _entry_key(digest: str, name: str, suffix: str, follow: bool) -> str:
    """The read cache's key of a file whose bytes have the SHA-256 *digest*, reported as *name*
    (warnings and sources name it), read by its *suffix*, opened with *follow* or not: with
    `READ_VERSION`, what else reading depends on, and the limits (tests lower them)."""
    limits = [text_files.MAX_RECORD_CHARS, text_files.MAX_ABSTRACT_CHARS, text_files.MAX_FIELD_CHARS,
              text_files.MAX_KEPT_WARNINGS]
    return json.dumps({"read": READ_VERSION, "environment": environment(), "limits": limits,
                       "file": [digest, name, suffix, follow]}, sort_keys=True)


def _read_file(path: Path, name: str, *, follow: bool = True,
               cache: ReadCache | None = None) -> tuple[tuple[Prepared, ...], list[Diagnostic], dict[str, int], str]:
    """The records of the file *path* (reported as *name*), prepared for the merge, the warnings,
    what was skipped, and the SHA-256 of the bytes read; without *follow*, *path* is not opened if
    it is a link. With *cache*, a file read before with the same bytes is not parsed again."""
    raw = read_input(path, name, follow=follow)
    parsed = _parsed(raw.data, raw.sha256, name, path.suffix.lower(), follow, cache)
    notes = Warnings(raw.notes)  # reading's own (a file that grew as it was read): not the bytes', never cached
    notes.extend(Warnings.restored(parsed.warnings, parsed.counts))
    return parsed.items, notes, dict(parsed.skipped), raw.sha256


def _parsed(data: bytes, digest: str, name: str, suffix: str, follow: bool, cache: ReadCache | None) -> ParsedFile:
    """`_parse` of *data* (whose SHA-256 is *digest*), from *cache* when it holds it (else put there)."""
    if cache is None:
        return _parse(data, name, suffix)
    key = _entry_key(digest, name, suffix, follow)
    parsed = cache.get(key)
    if parsed is None:
        parsed = _parse(data, name, suffix)
        cache.put(key, parsed)
    return parsed


def _parse(data: bytes, name: str, suffix: str) -> ParsedFile:
    """What the bytes *data* of the file *name* hold, by its *suffix* (and content): its records,
    cleaned and prepared for the merge, the warnings and what was skipped."""
    if not data.strip():
        raise InputError(f"{name}: empty file; {_EMPTY_ADVICE.get(suffix, _EMPTY_ADVICE['.txt'])}")
    text, notes = decode(data, name, lines=suffix in JSONL_SUFFIXES)  # JSON Lines a row at a time, without the whole text
    from kg.text.formats import (
        read_format,  # BibTeX, RIS, OpenAlex, arXiv and JSON: their readers
    )

    found = read_format(name, suffix, text, jsonl=_read_jsonl, row=_record_from_mapping)
    if found is not None:
        records, more, skipped = found
    elif suffix in JSONL_SUFFIXES:
        records, more, skipped = _read_jsonl(name, text)
    elif suffix in CSV_SUFFIXES:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        records, more, skipped = _read_csv(name, text, "\t" if suffix == ".tsv" else ",")
    else:
        records, more, skipped = _read_text(name, text)
    notes = Warnings(notes)
    notes.extend(more)
    if not records and not skipped:
        raise InputError(f"{name}: no abstracts found")
    return ParsedFile(tuple(prepare(r) for r in records), tuple(notes), dict(notes.counts), dict(skipped))


def _input_files(paths: Sequence[str | Path], follow_links: bool) -> tuple[list[tuple[Path, str, bool]], list[Diagnostic]]:
    """Each input file under *paths* as (path, name it is reported by, whether to open it when it
    is a link: a file named in *paths* is, one found in a folder only with *follow_links*), and the
    warnings of listing them (`find_inputs`)."""
    if not paths:
        raise InputError("no input given; name abstract-list files or folders")
    files, found = find_inputs(paths, follow_links=follow_links)
    return [(path, name, follow_links or path == given) for (path, given), name in zip(files, input_names(files))], found


def input_digests(paths: Sequence[str | Path], *, follow_links: bool = False) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The names and SHA-256 digests `read_papers` would report for *paths* (``ReadReport.files``
    and ``.digests``), from the files' bytes alone, nothing parsed: what a rebuild compares with
    its manifest before it reads anything. Raises `InputError` as `read_papers` would for a path
    or file kg cannot open."""
    files, _ = _input_files(paths, follow_links)
    return tuple(name for _, name, _ in files), tuple(read_input(path, name, follow=follow).sha256 for path, name, follow in files)


def read_papers(paths: Sequence[str | Path], *, follow_links: bool = False, cache: ReadCache | None = None) -> ReadReport:
    """Read every abstract under *paths* (files, or folders of `FOLDER_SUFFIXES` files).

    Raises `InputError` for a path or file kg cannot use; returns warnings for what it
    could read with a caveat. Nothing is dropped without a warning that says so. Symbolic
    links inside a folder are skipped (with a warning) unless *follow_links*: a file or folder
    named in *paths* is read even when it is a link, since the user named it. With *cache*
    (`kg.text.readcache.ReadCache`, what `kg.build` passes), a file whose bytes were read before
    is not parsed nor cleaned again, and the entries of files not read this time are removed; the
    report is the same as without.
    """
    files, found = _input_files(paths, follow_links)
    warnings = Warnings(found)
    names = [name for _, name, _ in files]
    records: list[Prepared] = []
    skipped: dict[str, int] = {}
    digests = []
    for path, name, follow in files:
        got, notes, skips, digest = _read_file(path, name, follow=follow, cache=cache)
        records.extend(got)
        warnings.extend(notes)
        digests.append(digest)
        for key, n in skips.items():
            skipped[key] = skipped.get(key, 0) + n
    if cache is not None:
        cache.prune()
    papers, merged, notes, conflicts = merge_prepared(records)
    warnings.extend(notes)
    if not papers:
        first = next((w for w in warnings if w.reason in skipped), None)
        why = f" ({sum(skipped.values())} skipped; the first: {first})" if first else ""
        raise InputError(f"no abstracts found in {', '.join(names)}{why}")
    return ReadReport(
        papers=tuple(papers),
        warnings=tuple(warnings),
        warning_counts=dict(warnings.counts),
        files=tuple(names),
        digests=tuple(digests),
        records_read=len(records),
        duplicates_merged=merged,
        skipped=skipped,
        conflicts=conflicts,
    )


def is_text(value: str) -> bool:
    """True when *value* holds at least one letter or digit in any script."""
    return any(unicodedata.category(c)[0] in "LN" for c in value)
