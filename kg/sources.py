"""Reading abstracts: abstract-list text files, JSON Lines and CSV, into `Paper` records.

A text file starts with a header line naming the venue and year in any language
(``ICML 2026 Papers``, ``ICLR 2026 论文列表``); each following paragraph is one abstract.
JSON Lines and CSV rows carry an ``abstract`` field and optional ``id``, ``title``,
``venue`` and ``year``.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from kg.clean import clean_text, find_urls, normalize_space
from kg.errors import InputError

__all__ = [
    "Diagnostic",
    "Paper",
    "ReadReport",
    "Source",
    "paper_id",
    "parse_header",
    "read_papers",
]

TEXT_SUFFIXES = (".txt", ".md", ".text", "")
JSONL_SUFFIXES = (".jsonl", ".ndjson")
CSV_SUFFIXES = (".csv", ".tsv")
MAX_HEADER_WORDS = 12


@dataclass(frozen=True, order=True)
class Source:
    """Where a paper was read: a file and its paragraph (text) or row (JSONL/CSV), 1-based."""

    file: str
    paragraph: int | None = None
    row: int | None = None
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}, {_where(self)}"


@dataclass(frozen=True)
class Paper:
    """One paper: the abstract as given, its cleaned text, and what the input said of it."""

    id: str
    abstract: str
    text: str
    title: str | None = None
    venue: str | None = None
    year: int | None = None
    source_id: str | None = None
    urls: tuple[str, ...] = ()
    sources: tuple[Source, ...] = ()

    @property
    def document(self) -> str:
        """The text keyphrases come from: the title (when given) and the cleaned abstract."""
        if self.title:
            title = clean_text(self.title)
            return f"{title}. {self.text}" if not title.endswith((".", "?", "!")) else f"{title} {self.text}"
        return self.text


@dataclass(frozen=True)
class Diagnostic:
    """A warning about the input: which file, where, what is wrong and what to do."""

    file: str
    where: str | None
    message: str
    reason: str  # a short machine-readable key, counted in stats.json

    def __str__(self) -> str:
        place = f"{self.file}, {self.where}" if self.where else self.file
        return f"{place}: {self.message}"


@dataclass(frozen=True)
class ReadReport:
    """What reading produced: the papers (deduplicated, in input order) and every warning."""

    papers: tuple[Paper, ...]
    warnings: tuple[Diagnostic, ...] = ()
    files: tuple[str, ...] = ()
    records_read: int = 0
    duplicates_merged: int = 0
    skipped: dict[str, int] = field(default_factory=dict)


def paper_id(abstract: str) -> str:
    """A stable id from the abstract's content: the same text gives the same id anywhere.

    White space and Unicode composition do not change it.

    >>> paper_id("Deep  learning.") == paper_id("Deep learning.")
    True
    """
    digest = hashlib.sha256(normalize_space(abstract).encode("utf-8")).hexdigest()
    return "p" + digest[:15]


_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9&+\-]*")
_GENERIC_HEADER_WORDS = frozenset(
    """papers paper accepted list lists proceedings of the conference on in and main track
    workshop abstracts abstract orals oral posters poster spotlight spotlights selected
    international annual edition volume vol""".split()
)


def parse_header(line: str) -> tuple[str | None, int | None]:
    """Venue and year named by a header line, in any language.

    >>> parse_header("ICML 2026 Papers")
    ('ICML', 2026)
    >>> parse_header("ICLR 2026 论文列表")
    ('ICLR', 2026)
    >>> parse_header("Proceedings of NeurIPS 2025")
    ('NeurIPS', 2025)
    """
    line = normalize_space(line)
    years = _YEAR.findall(line)
    year = int(years[0]) if years else None
    words = [w for w in _WORD.findall(_YEAR.sub(" ", line)) if w.lower() not in _GENERIC_HEADER_WORDS]
    acronyms = [w for w in words if sum(c.isupper() for c in w) >= 2]
    venue = acronyms[0] if acronyms else (words[0] if words else None)
    return venue, year


def _decode(raw: bytes, name: str) -> tuple[str, list[Diagnostic]]:
    """Text from bytes: BOMs honoured, UTF-8 expected, Latin-1 accepted with a warning."""
    notes: list[Diagnostic] = []
    if raw.startswith(codecs.BOM_UTF8):
        return raw[len(codecs.BOM_UTF8):].decode("utf-8", errors="strict"), notes
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return raw.decode("utf-16"), notes
        except UnicodeDecodeError as e:
            raise InputError(f"{name}: not valid UTF-16 despite its byte-order mark ({e.reason}); re-save it as UTF-8") from e
    if b"\x00" in raw[:8192] or _looks_binary(raw[:8192]):
        raise InputError(f"{name}: binary file, not text; give kg UTF-8 text, JSON Lines or CSV")
    try:
        return raw.decode("utf-8"), notes
    except UnicodeDecodeError as e:
        notes.append(
            Diagnostic(
                name,
                None,
                f"not UTF-8 (byte {e.start}); read as Windows-1252/Latin-1, re-save it as UTF-8 to be sure",
                "decoded_as_latin1",
            )
        )
        try:
            return raw.decode("cp1252"), notes
        except UnicodeDecodeError:
            return raw.decode("latin-1"), notes


def _looks_binary(sample: bytes) -> bool:
    if not sample:
        return False
    control = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13))
    return control / len(sample) > 0.05


def _paragraphs(text: str) -> Iterator[tuple[int, int, str]]:
    """(paragraph number, first line number, text) of each blank-line separated paragraph."""
    number = 0
    start = 0
    lines: list[str] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
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
    lines = paragraph.splitlines()
    first = normalize_space(lines[0])
    return len(first.split()) <= MAX_HEADER_WORDS and not first.endswith(".") or bool(
        len(lines) > 1 and len(first.split()) <= MAX_HEADER_WORDS and _YEAR.search(first)
    )


@dataclass(frozen=True)
class _Record:
    abstract: str
    source: Source
    title: str | None = None
    venue: str | None = None
    year: int | None = None
    source_id: str | None = None


def _read_text(name: str, text: str) -> tuple[list[_Record], list[Diagnostic]]:
    notes: list[Diagnostic] = []
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
    records = [_Record(normalize_space(p), Source(name, paragraph=no, line=line), venue=venue, year=year) for no, line, p in body]
    return records, notes


_FIELDS = ("abstract", "id", "title", "venue", "year")


def _record_from_mapping(name: str, row: int, data: object, notes: list[Diagnostic], skipped: dict[str, int]) -> _Record | None:
    if not isinstance(data, dict):
        notes.append(Diagnostic(name, f"row {row}", "not a JSON object with an 'abstract' field; row skipped, fix it and rebuild", "malformed_row"))
        skipped["malformed_row"] = skipped.get("malformed_row", 0) + 1
        return None
    lowered = {str(k).strip().lower(): v for k, v in data.items()}
    abstract = lowered.get("abstract")
    if not isinstance(abstract, str) or not abstract.strip():
        notes.append(Diagnostic(name, f"row {row}", "no abstract (the 'abstract' field is missing or empty); row skipped", "row_without_abstract"))
        skipped["row_without_abstract"] = skipped.get("row_without_abstract", 0) + 1
        return None
    year = lowered.get("year")
    parsed_year: int | None = None
    if year not in (None, ""):
        match = _YEAR.search(str(year))
        if match:
            parsed_year = int(match.group(1))
        else:
            notes.append(Diagnostic(name, f"row {row}", f"year {year!r} is not a year; the paper is kept with year unknown", "bad_year"))

    def text_field(key: str) -> str | None:
        value = lowered.get(key)
        if value is None or value == "":
            return None
        return normalize_space(str(value)) or None

    return _Record(
        normalize_space(abstract),
        Source(name, row=row),
        title=text_field("title"),
        venue=text_field("venue"),
        year=parsed_year,
        source_id=text_field("id"),
    )


def _read_jsonl(name: str, text: str) -> tuple[list[_Record], list[Diagnostic], dict[str, int]]:
    notes: list[Diagnostic] = []
    skipped: dict[str, int] = {}
    records = []
    for row, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as e:
            notes.append(Diagnostic(name, f"row {row}", f"malformed JSON ({e.msg}, column {e.colno}); row skipped, fix it and rebuild", "malformed_row"))
            skipped["malformed_row"] = skipped.get("malformed_row", 0) + 1
            continue
        record = _record_from_mapping(name, row, data, notes, skipped)
        if record:
            records.append(record)
    return records, notes, skipped


def _read_csv(name: str, text: str, delimiter: str) -> tuple[list[_Record], list[Diagnostic], dict[str, int]]:
    notes: list[Diagnostic] = []
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


def _expand(paths: Sequence[str | Path]) -> list[Path]:
    files: list[Path] = []
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise InputError(f"{path}: no such file or folder; give abstract-list files or folders of them")
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*")
                if p.is_file() and not p.name.startswith(".") and p.name.lower() != "readme.md"
                and p.suffix.lower() in TEXT_SUFFIXES + JSONL_SUFFIXES + CSV_SUFFIXES
            )
            if not found:
                raise InputError(f"{path}: folder has no readable input (.txt, .jsonl or .csv files)")
            files.extend(found)
        else:
            files.append(path)
    return files


def _display_name(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _read_file(path: Path) -> tuple[list[_Record], list[Diagnostic], dict[str, int]]:
    name = _display_name(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InputError(f"{name}: cannot be read ({e.strerror}); check its permissions") from e
    if not raw.strip():
        raise InputError(f"{name}: empty file; put a header line (venue and year) and one abstract per paragraph in it")
    text, notes = _decode(raw, name)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        records, more, skipped = _read_jsonl(name, text)
    elif suffix in CSV_SUFFIXES:
        records, more, skipped = _read_csv(name, text, "\t" if suffix == ".tsv" else ",")
    else:
        records, more = _read_text(name, text)
        skipped = {}
    if not records and not skipped:
        raise InputError(f"{name}: no abstracts found")
    return records, notes + more, skipped


def _merge(records: Iterable[_Record]) -> tuple[list[Paper], int, list[Diagnostic]]:
    """One paper per distinct abstract (by content id), every source kept, input order."""
    papers: dict[str, Paper] = {}
    merged = 0
    notes: list[Diagnostic] = []
    for record in records:
        pid = paper_id(record.abstract)
        known = papers.get(pid)
        if known is None:
            papers[pid] = Paper(
                id=pid,
                abstract=record.abstract,
                text=clean_text(record.abstract),
                title=record.title,
                venue=record.venue,
                year=record.year,
                source_id=record.source_id,
                urls=find_urls(record.abstract),
                sources=(record.source,),
            )
            continue
        merged += 1
        notes.append(
            Diagnostic(record.source.file, _where(record.source), f"same abstract as {known.sources[0]}; kept once as paper {pid} with both sources", "duplicate_merged")
        )
        papers[pid] = replace(
            known,
            sources=known.sources + (record.source,),
            title=known.title or record.title,
            venue=known.venue or record.venue,
            year=known.year or record.year,
            source_id=known.source_id or record.source_id,
        )
    return list(papers.values()), merged, notes


def _where(source: Source) -> str:
    if source.paragraph is None:
        return f"row {source.row}"
    return f"paragraph {source.paragraph} (line {source.line})" if source.line else f"paragraph {source.paragraph}"


def read_papers(paths: Sequence[str | Path]) -> ReadReport:
    """Read every abstract under *paths* (files, or folders of .txt/.jsonl/.csv files).

    Raises `InputError` for a path or file kg cannot use; returns warnings for what it
    could read with a caveat. Nothing is dropped without a warning that says so.
    """
    if not paths:
        raise InputError("no input given; name abstract-list files or folders")
    files = _expand(paths)
    records: list[_Record] = []
    warnings: list[Diagnostic] = []
    skipped: dict[str, int] = {}
    for path in files:
        got, notes, skips = _read_file(path)
        records.extend(got)
        warnings.extend(notes)
        for key, n in skips.items():
            skipped[key] = skipped.get(key, 0) + n
    papers, merged, notes = _merge(records)
    warnings.extend(notes)
    if not papers:
        raise InputError(f"no abstracts found in {', '.join(_display_name(f) for f in files)}")
    return ReadReport(
        papers=tuple(papers),
        warnings=tuple(warnings),
        files=tuple(_display_name(f) for f in files),
        records_read=len(records),
        duplicates_merged=merged,
        skipped=skipped,
    )


def is_text(value: str) -> bool:
    """True when *value* holds at least one letter or digit in any script."""
    return any(unicodedata.category(c)[0] in "LN" for c in value)
