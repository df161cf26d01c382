"""The output folder a build writes into: checked before any work (not a URL, not an input, writable), and
locked for the build's whole run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from kg.errors import OutputError

__all__ = ["check_not_url", "check_output_folder", "lock_output_folder"]

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def check_not_url(out) -> None:
    """Stop before any work when *out* is a URL (``s3://bucket/kg``, ``file:///tmp/kg``): kg
    writes into a local folder, and as a path the URL would quietly become one (``s3:/bucket/kg``)."""
    if isinstance(out, str) and _URL.match(out):
        raise OutputError(f"{out}: a URL; kg build writes its outputs into a local folder (writing them to "
                          "object storage is not supported): build into a folder, then copy it there")


def check_output_folder(out: Path, paths: Sequence[str | os.PathLike] = ()) -> None:
    """Stop at once, before any work, when *out* cannot be the output folder: a file, one of the
    input folders *paths* (its outputs would be read as input next time), or a folder that cannot
    be created or written (nothing is created here: a build that stops on its input leaves no
    folder behind)."""
    try:
        str(out.absolute()).encode("utf-8")
    except UnicodeEncodeError:  # Oxigraph's store (and most tools) need a UTF-8 path
        from kg.text.files import printable

        raise OutputError(f"{printable(str(out))}: the folder's path is not valid UTF-8; give --out a folder whose path is") from None
    if out.exists():
        if not out.is_dir():
            raise OutputError(f"{out}: a file, not a folder; --out names the folder the outputs go to")
        if any(Path(p).is_dir() and os.path.samefile(p, out) for p in paths):
            raise OutputError(f"{out}: the folder of the inputs; give another --out (a folder of its own, such as outputs/)")
        target = out
    else:
        target = next(p for p in out.absolute().parents if p.exists() or p == p.parent)
        if not target.is_dir():
            raise OutputError(f"{out}: cannot create the output folder ({target} is a file)")
    if not os.access(target, os.W_OK | os.X_OK):
        doing = "write to" if target is out else "create"
        raise OutputError(f"{out}: cannot {doing} the output folder ({target}: permission denied)")


def lock_output_folder(out: Path):
    """The output folder's lock (`kg.common.locks.FolderLock`), held exclusively for the whole
    build, and whether the folder was made for it: a second build into the folder, or one into a
    folder `kg serve` is serving, stops at once with one line instead of deleting the first one's
    temporary files or replacing the files a server reads. The kernel drops the lock when the
    build ends, however it ends."""
    from kg.common.locks import FolderLock

    made = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        lock = FolderLock(out)
    except OSError as e:
        raise OutputError(f"{out}: cannot create the output folder ({e.strerror or e})") from e
    if lock.try_exclusive():
        return lock, made
    served = lock.try_shared()  # only servers hold it shared: a build holds it alone
    lock.close()
    if served:
        raise OutputError(f"{out}: kg serve is serving it; stop the server first, or build into another --out")
    raise OutputError(f"{out}: another kg build is writing into it; wait for it to end, or build into another --out")
