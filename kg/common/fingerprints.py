"""What a result kg keeps depends on besides its inputs: the digest of a folder of kg's own files and
the versions of the libraries that made it (the build's key, `kg.pipeline.manifest`; the read cache's,
`kg.text.readcache`), and the digest of what kg writes, taken as it is written (`HashingFile`: the
manifest's outputs, the read cache's entries)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = ["HashingFile", "folder_digest", "library_versions"]


def folder_digest(folder: Path, suffixes: tuple[str, ...] | None = None) -> str:
    """SHA-256 of the files under *folder* (those ending in one of *suffixes*, when given), each
    one's path within it and its bytes, in path order; compiled Python left out."""
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo"):
            continue
        if suffixes is not None and path.suffix not in suffixes:
            continue
        h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def library_versions(names: Iterable[str]) -> dict[str, str]:
    """The installed version of each library of *names*, or ``missing``."""
    found = {}
    for name in names:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "missing"
    return found


class HashingFile:
    """A binary file *f* written through, keeping the SHA-256 of what was written to it (`sha256`):
    a digest of what is written without holding it."""

    def __init__(self, f) -> None:
        self._f = f
        self.sha256 = hashlib.sha256()

    def write(self, data) -> int:
        self.sha256.update(data)
        return self._f.write(data)

    def flush(self) -> None:
        self._f.flush()
