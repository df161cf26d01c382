"""Reading abstracts: abstract-list text files, JSON Lines and CSV, into `Paper` records.

A text file starts with a header line naming the venue and year in any language
(``ICML 2026 Papers``, ``ICLR 2026 论文列表``); each following paragraph is one abstract
(a paragraph whose every line is long enough to be an abstract is one abstract per line).
JSON Lines and CSV rows carry an ``abstract`` field and optional ``id``, ``title``,
``venue`` and ``year``. BibTeX, RIS, OpenAlex works and arXiv metadata are read by
`kg.text.formats`, found by suffix and content (`read_format`); every reader makes
`kg.text.records.Record` s, merged here into papers. A folder is read for its files with one
of `FOLDER_SUFFIXES`; a file named on its own is read whatever its name.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import hashlib
import io
import os
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from kg.common.folders import is_build_folder
from kg.errors import InputError
from kg.text.clean import clean_text, find_urls, normalize_space
from kg.text.files import (
    LongNumber,
    Warnings,
    decode,
    file_kind,
    input_names,
    json_rows,
    printable,
    read_input,
    split_lines,
)
from kg.text.formats import BIBTEX_SUFFIXES, CSV_SUFFIXES, FOLDER_SUFFIXES, JSONL_SUFFIXES, RIS_SUFFIXES
from kg.text.formats.identify import identifiers, orcid
from kg.text.records import Author, Diagnostic, Notes, Source, shown
from kg.text.records import Record as _Record
from kg.text.records import where as _where

__all__ = [
    "Conflict",
    "Diagnostic",
    "Paper",
    "ReadReport",
    "Source",
    "paper_id",
    "parse_header",
    "read_papers",
]

# A CSV field (Python's default): the csv module stops at it while reading, whatever another
# library in the process set (scipy's ARFF reader sets no limit at all).
MAX_CSV_FIELD_CHARS = 131_072
MAX_HEADER_WORDS = 12
MAX_HEADER_CHARS = 1000  # a longer first line is no header, whatever its words (it is not looked at)
# A paragraph of two or more lines that each have this many words is one abstract per line:
# an abstract has 100-300 words, a hard-wrapped line 10-15.
ONE_PER_LINE_MIN_WORDS = 30
# How many skipped files of a folder its warning names.
MAX_NAMED_SKIPS = 5


@dataclass(frozen=True, slots=True)
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
    doi: str | None = None  # checked, lowercase (kg.text.identifiers)
    arxiv: str | None = None
    authors: tuple[Author, ...] = ()  # in byline order
    journal_ref: str | None = None  # an arXiv record's journal reference

    @property
    def document(self) -> str:
        """The text keyphrases come from: the title (when given) and the cleaned abstract."""
        if self.title:
            title = clean_text(self.title)
            return f"{title}. {self.text}" if not title.endswith((".", "?", "!")) else f"{title} {self.text}"
        return self.text


@dataclass(frozen=True)
class ReadReport:
    """What reading produced: the papers (deduplicated, in input order) and every warning; the
    files read (by the names they are recorded by) and the SHA-256 of the bytes read of each."""

    papers: tuple[Paper, ...]
    warnings: tuple[Diagnostic, ...] = ()
    files: tuple[str, ...] = ()
    digests: tuple[str, ...] = ()
    records_read: int = 0
    duplicates_merged: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    # every warning by kind (reason), counted: *warnings* keeps at most MAX_KEPT_WARNINGS of a kind
    warning_counts: dict[str, int] = field(default_factory=dict)
    conflicts: tuple[Conflict, ...] = ()  # DOIs and arXiv ids given to different abstracts


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
            records.append(_Record(abstract, source, venue=venue, year=year, text=cleaned))
    return records, notes, skipped


def _record_from_mapping(name: str, row: int, data: object, warnings: list[Diagnostic], skipped: dict[str, int]) -> _Record | None:
    """The record of one of kg's rows (a JSON object, or a CSV row as a mapping of its columns)."""
    notes = Notes(name, warnings, skipped)
    where = f"row {row}"
    if not isinstance(data, dict):
        notes.skip(where, "not a JSON object with an 'abstract' field; row skipped, fix it and rebuild", "malformed_row")
        return None
    lowered = {str(k).strip().lower(): v for k, v in data.items()}
    abstract = lowered.get("abstract")
    abstract = notes.abstract_field(where, abstract, unit="row")
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
        title=text_field("title"),
        venue=text_field("venue"),
        year=parsed_year,
        source_id=text_field("id"),
        doi=found.doi,
        arxiv=found.arxiv,
        authors=_row_authors(lowered.get("authors"), where, notes),
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


def _read_jsonl(name: str, text: str) -> tuple[list[_Record], list[Diagnostic], dict[str, int]]:
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


def _scan(paths: Sequence[str | Path], *, follow_links: bool = False) -> tuple[list[tuple[Path, Path]], list[Diagnostic]]:
    """The files *paths* name, each once (by resolved path; the first mention keeps its place),
    each with the path given that named it (the file, or its folder), and a warning per folder
    with files it skipped (links apart, unless *follow_links*: `_folder_inputs`) and per file
    named more than once."""
    files: dict[Path, tuple[Path, Path]] = {}
    mentions: dict[Path, int] = {}
    notes = Warnings()
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise InputError(_missing(path))
        if path.is_dir():
            if is_build_folder(path):
                raise InputError(f"{printable(str(path))}: a folder kg build wrote its outputs in, not abstract lists;"
                                 " give the folder of the abstract lists")
            found, skipped = _folder_inputs(path, follow_links=follow_links)
            links = [s for s in skipped if s.endswith(_LINK)]
            skipped = [s for s in skipped if not s.endswith(_LINK)]
            if not found:
                left = f"; it has {_named(skipped + links)}" if skipped or links else ""
                advice = f" ({_FOLLOW_ADVICE})" if links else ""
                raise InputError(f"{printable(str(path))}: folder has no readable input ({_suffixes('or')} files){left}{advice}")
            if links:
                notes.append(_skipped_links(path, links))
            if skipped:
                kinds = "files" if all(not s.endswith(("/", ")")) for s in skipped) else "files and folders"
                notes.append(
                    Diagnostic(
                        input_names([(path, path)])[0],
                        None,
                        f"skipped {len(skipped)} {kinds} that are not abstract lists: {_named(skipped)}"
                        f" (a folder is read for its {_suffixes('and')} files; name a file to read it whatever its name)",
                        "skipped_files",
                    )
                )
        else:
            found = [path]
        for file in found:
            key = file.resolve()
            files.setdefault(key, (file, path))
            mentions[key] = mentions.get(key, 0) + 1
    for key, n in mentions.items():
        if n > 1:
            notes.append(Diagnostic(input_names([files[key]])[0], None, f"given {n} times (by name or in a folder); read once",
                                    "file_given_twice"))
    return list(files.values()), notes


def _missing(path: Path) -> str:
    """Why *path*, which does not exist as far as `Path.exists` sees, cannot be read."""
    try:
        path.resolve(strict=True)
    except RuntimeError:  # Python < 3.13 reports a symbolic link loop so
        return f"{path}: a symbolic link loop; make it point at an abstract-list file or folder"
    except OSError as e:
        if e.errno == errno.ELOOP:
            return f"{path}: a symbolic link loop; make it point at an abstract-list file or folder"
        if e.errno == errno.EACCES:
            return f"{path}: cannot be reached (permission denied); check the permissions of its folders"
        if path.is_symlink():
            return f"{path}: a symbolic link to {os.readlink(path)}, which does not exist; give abstract-list files or folders of them"
    return f"{path}: no such file or folder; give abstract-list files or folders of them"


_LINK = "(a link)"  # how `_folder_inputs` names a link it does not follow
_FOLLOW_ADVICE = ("links are not followed, so that nothing outside the folders given is read;"
                  " pass --follow-links to read what they point at")


def _skipped_links(folder: Path, links: Sequence[str]) -> Diagnostic:
    """The warning for the *links* in *folder* that were not followed: a link may point
    anywhere (``leak.txt -> /etc/passwd``), and what kg reads ends up in the graph."""
    what = "link" if len(links) == 1 else "links"
    return Diagnostic(input_names([(folder, folder)])[0], None,
                      f"skipped {len(links)} {what}: {_named(links)} ({_FOLLOW_ADVICE})", "skipped_links")


def _folder_inputs(folder: Path, *, follow_links: bool = False) -> tuple[list[Path], list[str]]:
    """The files under *folder* with one of `FOLDER_SUFFIXES`, sorted, and the names (relative to
    *folder*, sorted) of what is skipped: other files, kg output folders, whatever cannot be
    listed, and symbolic links (to files or folders, wherever they point: named with `_LINK`),
    unless *follow_links*. Then links are followed, each folder entered once (a link loop ends
    there). Skipped folders are not entered; hidden files and folders are passed over unnamed."""
    found: list[Path] = []
    skipped: list[str] = []
    pending = [folder]
    entered = {folder.resolve()}
    while pending:
        current = pending.pop()
        try:
            entries = list(current.iterdir())
        except OSError as e:
            skipped.append(f"{current.relative_to(folder).as_posix()}/ (cannot be listed: {e.strerror})")
            continue
        for entry in entries:
            name = printable(entry.relative_to(folder).as_posix())
            is_dir = entry.is_dir()
            is_link = entry.is_symlink()
            if entry.name.startswith("."):  # hidden (.git/, .DS_Store): left alone, as every tool does
                continue
            if is_link and not follow_links and (is_dir or file_kind(entry) is None):
                skipped.append(f"{name}/ {_LINK}" if is_dir else f"{name} {_LINK}")
            elif is_dir and entry.resolve() in entered:  # a link back to a folder already read
                continue
            elif is_dir and is_build_folder(entry):
                skipped.append(f"{name}/ (kg outputs)")
            elif is_dir:
                entered.add(entry.resolve())
                pending.append(entry)
            elif (kind := file_kind(entry)) is not None:  # a FIFO, a socket, a device, a broken link or a loop
                skipped.append(f"{name} ({kind})")
            elif entry.suffix.lower() in FOLDER_SUFFIXES:
                found.append(entry)
            else:
                skipped.append(name)
    return sorted(found), sorted(skipped)


def _named(names: Sequence[str]) -> str:
    """The first `MAX_NAMED_SKIPS` of *names*, and how many more."""
    more = f" and {len(names) - MAX_NAMED_SKIPS} more" if len(names) > MAX_NAMED_SKIPS else ""
    return ", ".join(names[:MAX_NAMED_SKIPS]) + more


def _suffixes(conjunction: str) -> str:
    """`FOLDER_SUFFIXES` as a list in words: '.txt, .jsonl, … or .tsv'."""
    return f"{', '.join(FOLDER_SUFFIXES[:-1])} {conjunction} {FOLDER_SUFFIXES[-1]}"


_EMPTY_ADVICE = {  # what an empty file of each kind should hold (docs/input.md)
    ".txt": "put a header line (venue and year) and one abstract per paragraph in it",
    **dict.fromkeys(JSONL_SUFFIXES, "put one JSON object a line in it, each with an abstract field"),
    ".json": "put a JSON list of objects with an abstract field, or OpenAlex or arXiv records, in it",
    **dict.fromkeys(CSV_SUFFIXES, "put a header row with an abstract column, then one row a paper, in it"),
    **dict.fromkeys(BIBTEX_SUFFIXES, "export BibTeX entries with their abstract fields into it"),
    **dict.fromkeys(RIS_SUFFIXES, "export RIS records with their AB (abstract) fields into it"),
}


def _read_file(path: Path, name: str, *, follow: bool = True) -> tuple[list[_Record], list[Diagnostic], dict[str, int], str]:
    """The records of the file *path* (reported as *name*), the warnings, what was skipped, and
    the SHA-256 of the bytes read; without *follow*, *path* is not opened if it is a link."""
    raw = read_input(path, name, follow=follow)
    suffix = path.suffix.lower()
    if not raw.data.strip():
        raise InputError(f"{name}: empty file; {_EMPTY_ADVICE.get(suffix, _EMPTY_ADVICE['.txt'])}")
    text, notes = decode(raw.data, name)
    from kg.text.formats import read_format  # BibTeX, RIS, OpenAlex, arXiv and JSON: their readers

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
    notes = Warnings([*raw.notes, *notes])
    notes.extend(more)
    if not records and not skipped:
        raise InputError(f"{name}: no abstracts found")
    return records, notes, skipped, raw.sha256


@dataclass(frozen=True)
class Conflict:
    """One DOI or arXiv id given to records whose abstracts differ: kept as separate papers, reported."""

    identifier: str  # "doi:10.…" or "arxiv:…"
    papers: tuple[str, ...]  # the paper ids, in input order
    sources: tuple[str, ...]  # where each record was read

    def as_dict(self) -> dict[str, object]:
        return {"identifier": self.identifier, "papers": list(self.papers), "sources": list(self.sources)}


# What two copies of one abstract share whatever the export: its letters and digits, case folded
# (BibTeX braces, RIS line breaks, HTML entities decoded or not, punctuation and spaces differ).
_NOT_WORD = re.compile(r"[\W_]+")


def _text_key(text: str) -> bytes:
    """A digest of *text*'s letters and digits, case folded: equal for two exports of one abstract."""
    return hashlib.blake2b(_NOT_WORD.sub("", text.casefold()).encode("utf-8"), digest_size=16).digest()


def _identities(record: _Record) -> list[str]:
    """The identifiers that make *record* the same paper as another: its DOI and arXiv id."""
    return [f"doi:{record.doi}"] * bool(record.doi) + [f"arxiv:{record.arxiv}"] * bool(record.arxiv)


class _Papers:
    """Records joined into papers: one paper per abstract (by content id, or by its letters and
    digits) and per DOI or arXiv id when the abstracts agree; one identifier on two different
    abstracts is a `Conflict`, reported, never resolved by dropping either."""

    def __init__(self) -> None:
        self.papers: dict[str, Paper] = {}
        self.more: dict[str, list[Source]] = {}  # the sources after the first of each paper
        self.by_text: dict[bytes, str] = {}
        self.by_identity: dict[str, str] = {}
        self.conflicts: dict[str, list[tuple[str, Source]]] = {}
        self.merged = 0
        self.notes = Warnings()

    def add(self, record: _Record) -> None:
        text = record.text if record.text is not None else clean_text(record.abstract)
        pid, key = paper_id(record.abstract), _text_key(text)
        if pid in self.papers:
            self._join(pid, record, "same abstract")
        elif (known := self.by_text.get(key)) is not None:
            self._join(known, record, "same abstract (up to case, punctuation and markup)")
        else:
            for identity in _identities(record):
                if (other := self.by_identity.get(identity)) is not None:
                    self._conflict(identity, other, pid, record)
            self._new(pid, key, text, record)

    def _new(self, pid: str, key: bytes, text: str, record: _Record) -> None:
        self.papers[pid] = Paper(
            id=pid,
            abstract=record.abstract,
            text=record.abstract if text == record.abstract else text,  # one string when cleaning changed nothing
            title=record.title,
            venue=record.venue,
            year=record.year,
            source_id=record.source_id,
            urls=find_urls(record.abstract),
            sources=(record.source,),
            doi=record.doi,
            arxiv=record.arxiv,
            authors=record.authors,
            journal_ref=record.journal_ref,
        )
        self.by_text.setdefault(key, pid)
        for identity in _identities(record):
            self.by_identity.setdefault(identity, pid)

    def _join(self, pid: str, record: _Record, same: str) -> None:
        known = self.papers[pid]
        self.merged += 1
        self.notes.append(Diagnostic(
            record.source.file, _where(record.source),
            f"{same} as {known.sources[0]}; kept once as paper {pid} with both sources{_dropped(known, record)}",
            "duplicate_merged"))
        self.more.setdefault(pid, []).append(record.source)  # joined once at the end: a tuple grown per copy is quadratic
        fields = ("title", "venue", "year", "source_id", "doi", "arxiv", "authors", "journal_ref")
        if not all(getattr(known, f) for f in fields):
            self.papers[pid] = replace(known, **{f: getattr(known, f) or getattr(record, f) for f in fields})
        for identity in _identities(record):
            self.by_identity.setdefault(identity, pid)

    def _conflict(self, identity: str, other: str, pid: str, record: _Record) -> None:
        first = self.papers[other]
        kind, _, value = identity.partition(":")
        name = "DOI" if kind == "doi" else "arXiv id"
        self.notes.append(Diagnostic(
            record.source.file, _where(record.source),
            f"{name} {value} is also that of {first.sources[0]} (paper {other}), whose abstract differs; both are kept "
            f"as separate papers with this {name}: check which record it belongs to and fix the other",
            "identifier_conflict"))
        found = self.conflicts.setdefault(identity, [(other, first.sources[0])])
        found.append((pid, record.source))

    def result(self) -> tuple[list[Paper], int, list[Diagnostic], tuple[Conflict, ...]]:
        for pid, sources in self.more.items():
            self.papers[pid] = replace(self.papers[pid], sources=self.papers[pid].sources + tuple(sources))
        conflicts = tuple(Conflict(identity, tuple(p for p, _ in found), tuple(str(s) for _, s in found))
                          for identity, found in self.conflicts.items())
        return list(self.papers.values()), self.merged, self.notes, conflicts


def _merge(records: Iterable[_Record]) -> tuple[list[Paper], int, list[Diagnostic], tuple[Conflict, ...]]:
    """One paper per distinct abstract and per DOI or arXiv id, every source kept, input order;
    the identifiers given to different abstracts."""
    papers = _Papers()
    for record in records:
        papers.add(record)
    return papers.result()


def _dropped(known: Paper, record: _Record) -> str:
    """What of *record*'s venue and year its paper, *known*, does not keep: '' when nothing."""
    pairs = (("venue", known.venue, record.venue), ("year", known.year, record.year), ("DOI", known.doi, record.doi),
             ("arXiv id", known.arxiv, record.arxiv))
    kept = [(what, k, r) for what, k, r in pairs if k is not None and r is not None and k != r]
    if not kept:
        return ""
    what = " and ".join(w for w, _, _ in kept)
    return (f"; the {what} given here ({' '.join(str(r) for _, _, r in kept)}) {'is' if len(kept) == 1 else 'are'} not kept,"
            f" the paper keeps {' '.join(str(k) for _, k, _ in kept)}")


def read_papers(paths: Sequence[str | Path], *, follow_links: bool = False) -> ReadReport:
    """Read every abstract under *paths* (files, or folders of `FOLDER_SUFFIXES` files).

    Raises `InputError` for a path or file kg cannot use; returns warnings for what it
    could read with a caveat. Nothing is dropped without a warning that says so. Symbolic
    links inside a folder are skipped (with a warning) unless *follow_links*: a file or folder
    named in *paths* is read even when it is a link, since the user named it.
    """
    if not paths:
        raise InputError("no input given; name abstract-list files or folders")
    files, found = _scan(paths, follow_links=follow_links)
    warnings = Warnings(found)
    names = input_names(files)
    records: list[_Record] = []
    skipped: dict[str, int] = {}
    digests = []
    for (path, given), name in zip(files, names):
        got, notes, skips, digest = _read_file(path, name, follow=follow_links or path == given)  # found in a folder: not a link
        records.extend(got)
        warnings.extend(notes)
        digests.append(digest)
        for key, n in skips.items():
            skipped[key] = skipped.get(key, 0) + n
    papers, merged, notes, conflicts = _merge(records)
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
