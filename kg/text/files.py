"""Reading input files, whatever their format: regular files only, within kg's limits, decoded,
split into lines, and named without absolute paths.

The generic half of reading abstracts: `kg.text.sources` (and any other format's reader) opens
a file with `read_input`, decodes it with `decode` (JSON Lines as `Lines`, decoded a row at a
time), splits it with `split_lines`, and checks each record against `too_long`. The limits are
per file (`MAX_FILE_BYTES`), per line or record (`MAX_RECORD_CHARS`), per abstract
(`MAX_ABSTRACT_CHARS`) and per other field (`MAX_FIELD_CHARS`); docs/input.md documents them.
"""

from __future__ import annotations

import codecs
import errno
import functools
import hashlib
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kg.errors import InputError
from kg.text.chars import replace_surrogates

__all__ = [
    "MAX_ABSTRACT_CHARS",
    "MAX_FIELD_CHARS",
    "MAX_FILE_BYTES",
    "MAX_RECORD_CHARS",
    "Diagnostic",
    "Lines",
    "LongNumber",
    "RawFile",
    "Warnings",
    "decode",
    "escapes_surrogates",
    "input_names",
    "json_rows",
    "load_json",
    "parse_json",
    "printable",
    "read_input",
    "read_json",
    "replace_surrogates",
    "split_lines",
    "surrogate_warning",
    "too_long",
    "without_surrogates",
]

# A file kg reads whole into memory: 2 GiB is about 1.3 million abstracts of JSON Lines (a
# real export of 100,000 is ~150 MB); past it, a file is more likely a log or a disk image.
MAX_FILE_BYTES = 2 << 30
# A JSON Lines row or a CSV record: OpenAlex's largest works (thousands of authors) are a few MB.
MAX_RECORD_CHARS = 16 << 20
# An abstract (a paragraph, or a row's abstract): 100-300 words are ~2,000 characters; 100,000
# is a long paper's full text, and costs ~10 s of extraction (1,000,000: 68 s and 3 GB).
MAX_ABSTRACT_CHARS = 100_000
# A title, venue or id.
MAX_FIELD_CHARS = 10_000
# Bytes looked at to tell text from binary data and UTF-16 without a byte-order mark.
SAMPLE_BYTES = 8192
# UTF-16 without a byte-order mark: at least this share of the bytes on one side (odd or
# even offsets) are NUL and none on the other, as in mostly-ASCII text.
UTF16_NUL_SHARE = 0.5


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


# Warnings of one kind (reason) kept in memory and reported; more are counted, not kept: a file of
# 3,000,000 rows without an abstract held 3,000,000 warnings (1.2 GB) to print ten of them.
MAX_KEPT_WARNINGS = 1000


class Warnings(list):
    """A list of `Diagnostic` that keeps at most `MAX_KEPT_WARNINGS` of each kind (reason), in
    order, and counts every one (`counts`, by reason), for stats.json and the CLI's summary."""

    def __init__(self, items=()) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}
        self.extend(items)

    def append(self, diagnostic: Diagnostic) -> None:
        n = self.counts[diagnostic.reason] = self.counts.get(diagnostic.reason, 0) + 1
        if n <= MAX_KEPT_WARNINGS:
            super().append(diagnostic)

    @classmethod
    def restored(cls, kept, counts: dict[str, int]) -> Warnings:
        """The `Warnings` that kept *kept* and counted *counts*, as another one did (what a
        cache of them holds: `kg.text.readcache`)."""
        warnings = cls()
        list.extend(warnings, kept)
        warnings.counts = dict(counts)
        return warnings

    def extend(self, items) -> None:
        if not isinstance(items, Warnings):
            for diagnostic in items:
                self.append(diagnostic)
            return
        kept: dict[str, int] = {}
        for diagnostic in items:
            kept[diagnostic.reason] = kept.get(diagnostic.reason, 0) + 1
            self.append(diagnostic)
        for reason, n in items.counts.items():  # those *items* counted and did not keep
            self.counts[reason] = self.counts.get(reason, 0) + n - kept.get(reason, 0)


@dataclass(frozen=True)
class RawFile:
    """The bytes of an input file as read, their SHA-256 (what the build manifest keys it by:
    the bytes kg read, not the file as it is later) and warnings about reading it."""

    data: bytes
    sha256: str
    notes: tuple[Diagnostic, ...] = ()


def printable(text: str) -> str:
    """*text* with what would break a one-line message escaped as Python writes it: line and
    paragraph separators, other control characters, and bytes of a file name that are not
    UTF-8 (decoded by Python as lone surrogates).

    >>> printable("bad\\udcff\\nname.txt")
    'bad\\\\xff\\\\nname.txt'
    """
    if text.isprintable():
        return text
    out = []
    for c in text:
        if "\udc80" <= c <= "\udcff":  # a byte os.fsdecode could not decode
            out.append(f"\\x{ord(c) - 0xDC00:02x}")
        elif c.isprintable() or c == " ":
            out.append(c)
        else:
            out.append(repr(c)[1:-1])
    return "".join(out)


def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "not a regular file"


def file_kind(path: Path) -> str | None:
    """Why *path* is not a file kg reads ('a named pipe (FIFO)', 'a symbolic link loop', …), or
    None when it is a regular file (or a link to one)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "a symbolic link loop"
        if e.errno == errno.ENOENT and os.path.islink(path):
            return "a broken symbolic link"
        return f"cannot be read ({e.strerror})"
    return None if stat.S_ISREG(mode) else _kind(mode)


def read_input(path: Path, name: str, *, expected: str = "files of abstracts", text: bool = True, follow: bool = True) -> RawFile:
    """The bytes of the regular file *path* (reported as *name*), read once.

    FIFOs, sockets and devices (or links to them) are refused before they are opened, so
    that nothing blocks or reads without end; so is a file over `MAX_FILE_BYTES`, and (with
    *text*) a binary file at its first bytes. A file that grows while it is read is read as it
    was when opened, with a warning. *expected* says, in the messages, what kg wants instead
    (any file kg reads goes through here: inputs, graph.json, gold sets, query files). Without
    *follow*, a file that became a symbolic link since its folder was listed is refused, not
    followed (``O_NOFOLLOW``)."""
    why = file_kind(path)
    if why is not None:
        if why.startswith("cannot be read"):
            raise InputError(_unreadable(path, name, why))
        raise InputError(f"{name}: {why}, not a regular file; give kg {expected}")
    try:
        nofollow = 0 if follow else getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0) | nofollow)
    except OSError as e:
        if nofollow and e.errno == errno.ELOOP:
            raise InputError(f"{name}: became a symbolic link while kg read its folder; build again"
                             " (pass --follow-links to read what links point at)") from e
        raise InputError(_unreadable(path, name, f"cannot be read ({e.strerror})")) from e
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):  # replaced between the check and the open
            raise InputError(f"{name}: {_kind(st.st_mode)}, not a regular file; give kg {expected}")
        if st.st_size > MAX_FILE_BYTES:
            split = "; split it into several files" if expected == "files of abstracts" else f"; give kg {expected}"
            raise InputError(f"{name}: {st.st_size:,} bytes, over kg's limit of {MAX_FILE_BYTES:,} per file{split}")
        try:
            sample = f.read(min(SAMPLE_BYTES, st.st_size))
            if text:
                _refuse_binary(sample, name)
            data = sample + f.read(st.st_size - len(sample))
            grew = bool(f.read(1))
        except OSError as e:
            raise InputError(f"{name}: cannot be read ({e.strerror or e}); check the file and its disk") from e
    notes = ()
    if grew:
        notes = (Diagnostic(name, None, f"grew while kg read it; its first {len(data):,} bytes (its size when opened) were read,"
                            " build again once it is complete", "file_grew"),)
    return RawFile(data, hashlib.sha256(data).hexdigest(), notes)


def _unreadable(path: Path, name: str, why: str) -> str:
    if not os.path.lexists(path):
        return f"{name}: no longer there (removed or renamed while kg read its folder?); build again"
    if why.endswith("(Permission denied)"):
        return f"{name}: cannot be read (permission denied); check its permissions"
    return f"{name}: {why}; check the file"


def _refuse_binary(sample: bytes, name: str) -> None:
    """Refuse, at its first bytes, a file that is binary data rather than text in any encoding kg reads."""
    if sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF8)) or _utf16_without_bom(sample):
        return
    if _looks_binary(sample):
        raise InputError(f"{name}: binary file, not text; give kg UTF-8 text, JSON Lines or CSV")


def decode(raw: bytes, name: str, *, lines: bool = False) -> tuple[str | Lines, list[Diagnostic]]:
    """Text from bytes: BOMs honoured, UTF-8 expected, UTF-16 without a BOM and Latin-1
    accepted with a warning, binary data and NUL bytes refused. With *lines*, UTF-8 text comes
    as `Lines`, decoded a line at a time as it is read (JSON Lines: `json_rows` reads either)."""
    notes: list[Diagnostic] = []
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return raw.decode("utf-16"), notes
        except UnicodeDecodeError as e:
            raise InputError(f"{name}: not valid UTF-16 despite its byte-order mark ({e.reason}); re-save it as UTF-8") from e
    bom = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    body = raw[bom:]
    encoding = None if bom else _utf16_without_bom(body[:SAMPLE_BYTES])
    if encoding:
        try:
            text = body.decode(encoding)
        except UnicodeDecodeError as e:
            raise InputError(f"{name}: looks like UTF-16 without a byte-order mark but is not valid {encoding.upper()} ({e.reason});"
                             " save it as UTF-8") from e
        if _looks_binary(text[:SAMPLE_BYTES].encode("utf-8", errors="replace")):
            raise InputError(f"{name}: binary file, not text; give kg UTF-8 text, JSON Lines or CSV")
        notes.append(Diagnostic(name, None, f"UTF-16 without a byte-order mark; read as {encoding.upper()}, re-save it as UTF-8 to be sure",
                                "decoded_as_utf16"))
        return text, notes
    if _looks_binary(body[:SAMPLE_BYTES]):
        raise InputError(f"{name}: binary file, not text; give kg UTF-8 text, JSON Lines or CSV")
    nul = body.find(b"\x00")
    if nul >= 0:
        raise InputError(f"{name}: contains NUL bytes (the first at byte {bom + nul}: binary data?); give kg UTF-8 text, JSON Lines or CSV")
    if lines and _is_utf8(body):
        return Lines(body), notes
    try:
        return body.decode("utf-8"), notes
    except UnicodeDecodeError as e:
        despite = " despite its UTF-8 byte-order mark" if bom else ""
        notes.append(
            Diagnostic(
                name,
                None,
                f"not UTF-8 (byte {bom + e.start}){despite}; read as Windows-1252/Latin-1, re-save it as UTF-8 to be sure",
                "decoded_as_latin1",
            )
        )
        try:
            return body.decode("cp1252"), notes
        except UnicodeDecodeError:
            return body.decode("latin-1"), notes


def _is_utf8(body: bytes, *, chunk: int = 1 << 20) -> bool:
    """Whether *body* is UTF-8, decoded a chunk at a time (no text of the whole kept)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for start in range(0, len(body), chunk):
            decoder.decode(body[start:start + chunk])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


class Lines:
    """The lines of UTF-8 bytes (*body*), as `split_lines` gives them, each decoded when it is
    reached, every time the object is iterated: a big file of JSON Lines is read without its whole
    text beside its bytes (a text of 4 bytes a character once one character is past U+FFFF: 8 GiB
    for a file of 2 GiB, with its lines' copies on top). \\r and \\n bytes are never inside a
    UTF-8 character, so the bytes split where the text would."""

    __slots__ = ("_body",)

    def __init__(self, body: bytes) -> None:
        self._body = body

    def __iter__(self) -> Iterator[str]:
        body, start = self._body, 0
        for end in _LINE_END_BYTES.finditer(body):
            yield body[start:end.start()].decode("utf-8")
            start = end.end()
        if start < len(body):
            yield body[start:].decode("utf-8")


def _looks_binary(sample: bytes) -> bool:
    if not sample:
        return False
    control = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13))
    return control / len(sample) > 0.05


def _utf16_without_bom(sample: bytes) -> str | None:
    """'utf-16-le' or 'utf-16-be' when *sample* looks like UTF-16 text without a byte-order
    mark (NUL bytes at every other offset, none at the others), else None."""
    if len(sample) < 4:
        return None
    even, odd = sample[0::2], sample[1::2]
    if not even.count(0) and odd.count(0) >= UTF16_NUL_SHARE * len(odd):
        return "utf-16-le"
    if not odd.count(0) and even.count(0) >= UTF16_NUL_SHARE * len(even):
        return "utf-16-be"
    return None


_LINE_END = re.compile(r"\r\n|\r|\n")
_LINE_END_BYTES = re.compile(rb"\r\n|\r|\n")


def split_lines(text: str, *, first: int | None = None) -> list[str]:
    """The lines of *text*, split at line ends only: ``\\n``, ``\\r\\n`` and ``\\r``; with
    *first*, only its first lines (the rest of the text is not looked at).

    Not `str.splitlines`, which also splits at U+2028, U+2029, U+0085 and \\x1c-\\x1e: characters
    a JSON string or an abstract may hold as they are.

    >>> split_lines("a\\u2028b\\r\\nc\\rd\\n")
    ['a\\u2028b', 'c', 'd']
    >>> split_lines("a\\rb\\nc", first=2)
    ['a', 'b']
    """
    if first is not None:
        return _LINE_END.split(text, maxsplit=first)[:first]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


class LongNumber:
    """A whole number of JSON too long for Python to make an int of (past
    `sys.get_int_max_str_digits`): kept as its digits, text enough for an id."""

    __slots__ = ("digits",)

    def __init__(self, digits: str) -> None:
        self.digits = digits

    def __str__(self) -> str:
        return self.digits

    __repr__ = __str__


def _whole_number(digits: str) -> int | LongNumber:
    try:
        return int(digits)
    except ValueError:
        return LongNumber(digits)


@functools.cache
def _decoder():  # one for every row: json.loads(s, parse_int=...) makes one a call
    import json

    return json.JSONDecoder(parse_int=_whole_number)


def parse_json(text: str) -> object:
    """The JSON value of *text*, a whole number of any length read as its digits (`LongNumber`).

    Raises `json.JSONDecodeError` (a `ValueError`) when it is not JSON and `RecursionError` when
    it is nested deeper than Python's recursion limit."""
    return _decoder().decode(text)


def json_rows(name: str, text: str | Lines, notes: list[Diagnostic], skipped: dict[str, int]):
    """(row number, value) of each row of the JSON Lines *text* (of the file *name*; or its
    `Lines`) that kg reads: rows split at line ends only (`split_lines`), a byte-order mark at a
    row's start dropped, blank rows passed over; a row over `MAX_RECORD_CHARS`, not JSON or nested
    too deep is skipped with a warning (counted in *skipped*), and escaped unpaired surrogates are
    U+FFFD with a warning. Every reader of JSON Lines (kg's rows, OpenAlex works, arXiv records)
    reads rows so."""
    for row, line in enumerate(text if isinstance(text, Lines) else split_lines(text), start=1):
        line = line.removeprefix("\ufeff")  # files joined with cat: each may start with its byte-order mark
        if not line.strip():
            continue
        where = f"row {row}"
        why = too_long("row", line, MAX_RECORD_CHARS)
        if why is not None:
            _skip(notes, skipped, Diagnostic(name, where, f"{why}; row skipped (is it one JSON object a line?)", "too_long"))
            continue
        try:
            value = parse_json(line)
        except RecursionError:
            why = "JSON nested too deep to read"
        except ValueError as e:  # malformed, or a number json cannot make
            why = f"malformed JSON ({e.msg}, column {e.colno})" if hasattr(e, "colno") else f"malformed JSON ({e})"
        else:
            value, fields = without_surrogates(value) if escapes_surrogates(line) else (value, ())
            if fields:
                notes.append(surrogate_warning(name, where, fields))
            yield row, value
            continue
        _skip(notes, skipped, Diagnostic(name, where, f"{why}; row skipped, fix it and rebuild", "malformed_row"))


def _skip(notes: list[Diagnostic], skipped: dict[str, int], diagnostic: Diagnostic) -> None:
    notes.append(diagnostic)
    skipped[diagnostic.reason] = skipped.get(diagnostic.reason, 0) + 1


def load_json(path: Path, *, expected: str) -> object:
    """The JSON value of the file *path* (read as `read_input` reads a file); an `InputError`
    naming it as not *expected* when it is no UTF-8 JSON (or nested too deep)."""
    import json

    raw = read_input(path, str(path), expected=expected, text=False)
    try:
        return json.loads(raw.data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:  # not JSON, a number too long, nested too deep
        raise InputError(f"{path}: not {expected} ({str(e) or type(e).__name__})") from e


def read_json(path: Path) -> object:
    """The JSON value of the file *path*, or None when there is none kg can read: a file kg
    wrote for itself (the build manifest, a store's source.json, stats.json) that is missing,
    not a regular file, damaged, or nested too deep. Whoever reads it then does as if it were
    missing (rebuilds, reloads), never fails."""
    try:
        return load_json(path, expected="JSON")
    except InputError:
        return None


# The escape of a surrogate (\\ud800-\\udfff) in JSON text: a row without one cannot hold one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def escapes_surrogates(text: str) -> bool:
    """Whether the JSON *text* may escape a surrogate (so that its value may hold an unpaired
    one): when not, `without_surrogates` has nothing to do."""
    return _SURROGATE_ESCAPE.search(text) is not None


def without_surrogates(value: object) -> tuple[object, tuple[str, ...]]:
    """*value* (parsed JSON) with each unpaired surrogate in its strings (keys too) replaced by
    U+FFFD, and the fields (keys of an object; "row" otherwise) that held one, in order.

    Raises `RecursionError` for a value nested too deep to walk."""

    def fixed(v: object) -> tuple[object, int]:
        if isinstance(v, str):
            return replace_surrogates(v)
        if isinstance(v, list):
            pairs = [fixed(x) for x in v]
            return [x for x, _ in pairs], sum(n for _, n in pairs)
        if isinstance(v, dict):
            out, total = {}, 0
            for k, x in v.items():
                (k, n), (x, m) = replace_surrogates(k), fixed(x)
                out[k] = x
                total += n + m
            return out, total
        return v, 0

    if not isinstance(value, dict):
        value, n = fixed(value)
        return value, ("row",) if n else ()
    out, found = {}, []
    for key, x in value.items():
        (fixed_key, n), (x, m) = replace_surrogates(key), fixed(x)
        out[fixed_key] = x
        if n + m:
            found.append(fixed_key)
    return out, tuple(found)


def surrogate_warning(name: str, where: str | None, fields: tuple[str, ...]) -> Diagnostic:
    """The warning that *fields* of a record held escaped unpaired surrogates, read as U+FFFD."""
    named = ", ".join(fields[:-1]) + " and " + fields[-1] if len(fields) > 1 else fields[0]
    verb = "hold" if len(fields) > 1 else "holds"
    return Diagnostic(name, where, f"the {named} {verb} an escaped unpaired surrogate (such as \\ud800), which is no character;"
                      " read as U+FFFD", "unpaired_surrogate")


def too_long(what: str, value: str, limit: int) -> str | None:
    """Why *value* (the *what* of a record: 'abstract', 'title', 'row'…) is over *limit*
    characters, for a warning; None when it is not."""
    if len(value) <= limit:
        return None
    return f"{what} of {len(value):,} characters, over kg's limit of {limit:,}"


def input_names(files: list[tuple[Path, Path]]) -> list[str]:
    """The name each input file is reported and recorded by (``kgv:source``, keyphrases.jsonl,
    stats.json, warnings), for (file, path given on the command line) pairs: its path relative
    to the working directory when it is under it, else its path from the folder given (that
    folder's name first) or its own name when named alone, with as many of the folders above
    as make it differ from the other files' names. Never an absolute path: the graph is
    published, the folders above the inputs are the user's business. Paths are taken as
    written (links are not followed), so a link is named where it is, not where it points.

    A name that is not valid UTF-8 text (bytes Python decoded as lone surrogates) is refused."""
    cwd = os.getcwd()
    names: list[str] = []
    taken: set[str] = set()
    for file, given in files:
        absolute = os.path.normpath(os.path.abspath(file))
        relative = _under(absolute, cwd)
        if relative is None:
            root = os.path.dirname(os.path.normpath(os.path.abspath(given)))
            relative = os.path.relpath(absolute, root) if root != absolute else os.path.basename(absolute)
            while relative in taken and root != os.path.dirname(root):
                root = os.path.dirname(root)
                relative = os.path.relpath(absolute, root)
        name = Path(relative).as_posix()
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"{printable(name)}: the file name is not valid UTF-8; rename the file"
                             " (kg records the names of its inputs in the graph, as text)") from None
        names.append(name)
        taken.add(name)
    return names


def _under(path: str, folder: str) -> str | None:
    """*path* relative to *folder* when it is under it (lexically), else None."""
    if path == folder:
        return os.path.basename(path)
    prefix = folder.rstrip(os.sep) + os.sep
    return path[len(prefix):] if path.startswith(prefix) else None
