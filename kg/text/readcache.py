"""Input files as read, kept by content, so that a rebuild does not parse and clean again a file
that did not change (issue 51: of 10,000 abstracts, ~4 s of every rebuild that adds a file).

`kg.text.sources.read_papers`, given a `ReadCache`, keeps what reading each file gave (a
`ParsedFile`: its records cleaned and prepared for the merge, its warnings and what it skipped)
in ``<out>/.cache/read/``, one entry a file, under a key of the file's bytes (SHA-256), the
name it is reported by, how it was opened and the reader's code (`kg.text.sources` makes the
key). Each entry is a header, the SHA-256 of what follows and a pickle: an entry that is cut
short, damaged or written by other code is a miss (the file is read again and its entry
replaced), never an error nor a wrong result. Entries are written under a temporary name and
renamed; the pickle is written to its entry as it is made and loaded from the file, never held
as bytes (it is about as large as the records). `ReadCache.prune` removes those the last read
did not use. One build at a time uses the folder (`kg.build` holds the output folder's lock).
"""

from __future__ import annotations

import copyreg
import hashlib
import os
import pickle
import sys
import tempfile
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path

from kg.common.fingerprints import HashingFile, folder_digest, library_versions
from kg.errors import OutputError
from kg.text.files import Diagnostic
from kg.text.papers import Prepared
from kg.text.records import Author, Record, Source

__all__ = ["READ_CACHE", "ParsedFile", "ReadCache", "code_digest", "environment"]

READ_CACHE = "read"  # the folder of entries, in the build's cache folder (kg.common.folders.CACHE)
_MAGIC = b"kg read cache 1\n"  # bump the digit when the entries' layout changes
_SUFFIX = ".pickle"


@dataclass(frozen=True)
class ParsedFile:
    """What parsing and cleaning the bytes of one input file gives, the same from run to run:
    its records prepared for the merge (`kg.text.papers.prepare`), the warnings it kept and all
    it counted by reason (`kg.text.files.Warnings`), and the records it skipped by reason."""

    items: tuple[Prepared, ...]
    warnings: tuple[Diagnostic, ...]
    counts: Mapping[str, int]
    skipped: Mapping[str, int]


# The only classes an entry may hold: an entry naming any other is a miss, and nothing else is
# ever imported or called while one is loaded.
_CLASSES = {(c.__module__, c.__qualname__): c for c in (ParsedFile, Prepared, Record, Source, Author, Diagnostic)}


def _by_fields(cls: type):
    """A reducer that pickles an instance of the dataclass *cls* as a call of *cls* with its
    fields: loaded 2-3 times faster than dataclasses' own pickling of a class with slots."""
    names = tuple(f.name for f in fields(cls))
    return lambda obj: (cls, tuple(getattr(obj, name) for name in names))


_REDUCERS = {cls: _by_fields(cls) for cls in (Prepared, Source, Author)}


def _dump(parsed: ParsedFile, f) -> None:
    pickler = pickle.Pickler(f, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {**copyreg.dispatch_table, **_REDUCERS}
    pickler.dump(parsed)


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        found = _CLASSES.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not a class of a read cache entry")
        return found


_LIBRARIES = ("bibtexparser", "pylatexenc", "rispy")  # the libraries kg.text.formats reads with


@cache
def code_digest() -> str:
    """SHA-256 of kg.text's own modules (which read, clean and prepare): changed code makes
    new keys, whether or not `kg.text.sources.READ_VERSION` was bumped."""
    return folder_digest(Path(__file__).resolve().parent, suffixes=(".py",))


@cache
def environment() -> dict[str, object]:
    """What reading depends on besides a file and kg's settings, for the key of its entry:
    kg.text's code, Unicode's version (cleaning), Python's and the readers' libraries'."""
    return {"code": code_digest(), "unicode": unicodedata.unidata_version, "python": list(sys.version_info[:2]),
            "libraries": library_versions(_LIBRARIES)}


def _valid(value: object) -> bool:
    """Whether *value* has the shape of a `ParsedFile` (its classes are checked on load)."""
    return (type(value) is ParsedFile and type(value.items) is tuple and type(value.warnings) is tuple
            and all(type(i) is Prepared for i in value.items) and all(type(w) is Diagnostic for w in value.warnings)
            and all(type(m) is dict and all(type(k) is str and type(n) is int for k, n in m.items())
                    for m in (value.counts, value.skipped)))


def _load(f, key: bytes) -> ParsedFile | None:
    """The `ParsedFile` of the entry the binary file *f* holds when it is one `ReadCache.put`
    wrote under *key*, else None. Its body is read twice (its digest, then its pickle), never
    held whole."""
    head = _MAGIC + key + b"\n"
    if f.read(len(head)) != head:
        return None
    digest = f.read(65)
    if len(digest) != 65 or digest[64:] != b"\n":
        return None
    start, sha256 = f.tell(), hashlib.sha256()
    while chunk := f.read(1 << 20):
        sha256.update(chunk)
    if sha256.hexdigest().encode() != digest[:64]:
        return None
    f.seek(start)
    try:
        # Pickle can run code as it loads: kg loads only entries it wrote itself in the build's
        # cache folder (their digest checked above), never an input, and only kg.text's classes.
        value = _Unpickler(f).load()
    except Exception:  # noqa: BLE001 — whatever is wrong with an entry, it is a miss
        return None
    return value if _valid(value) else None


def _reason(e: OSError) -> str:
    return e.strerror or str(e) or type(e).__name__


class ReadCache:
    """`ParsedFile` s by key, in ``<folder>/read/`` (*folder*: the build's cache folder); the entries
    read or written since it was made are the ones `prune` keeps."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder) / READ_CACHE
        self._used: set[str] = set()

    def _path(self, key: bytes) -> Path:
        name = hashlib.sha256(key).hexdigest() + _SUFFIX
        self._used.add(name)
        return self.folder / name

    def get(self, key: str) -> ParsedFile | None:
        """The entry of *key*, or None when there is none or it is not one kg wrote (a miss)."""
        encoded = _encode_key(key)
        try:
            with open(self._path(encoded), "rb") as f:
                return _load(f, encoded)
        except OSError:  # none, or unreadable: read the input again
            return None

    def put(self, key: str, parsed: ParsedFile) -> None:
        """Keep *parsed* under *key*: written under a temporary name, then renamed over the entry."""
        encoded = _encode_key(key)
        path = self._path(encoded)
        tmp = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=self.folder)
            with os.fdopen(fd, "wb") as f:
                head = _MAGIC + encoded + b"\n"
                f.write(head + b"0" * 64 + b"\n")  # the body's digest, written once the body is
                body = HashingFile(f)  # the body goes to its file as it is pickled, not held whole first
                _dump(parsed, body)
                f.seek(len(head))
                f.write(body.sha256.hexdigest().encode())
            os.replace(tmp, path)
        except OSError as e:
            raise OutputError(f"{path}: cannot write the read cache ({_reason(e)})") from e
        finally:
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)

    def prune(self) -> None:
        """Remove every entry (and stray temporary file) but those read or written since this
        cache was made: the files no longer given, or changed since, leave nothing behind."""
        try:
            found = list(self.folder.iterdir())
        except FileNotFoundError:
            return
        except OSError as e:
            raise OutputError(f"{self.folder}: cannot list the read cache ({_reason(e)})") from e
        for path in found:
            if path.name not in self._used and not path.is_dir():
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass
                except OSError as e:
                    raise OutputError(f"{path}: cannot remove this stale read cache entry ({_reason(e)}); remove it by hand") from e


def _encode_key(key: str) -> bytes:
    """*key* as an entry's header holds it (one line: a key is JSON, whose strings escape line breaks)."""
    return key.encode("utf-8", "surrogatepass")
