"""The files the paths given to a build name: files as named, folders for their files of the suffixes kg reads
(`kg.text.formats.FOLDER_SUFFIXES`), each once, with a warning for what is skipped (other files, links unless
followed, build folders) and an error for a path that cannot be read.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path

from kg.common.folders import is_build_folder
from kg.errors import InputError
from kg.text.files import (
    Warnings,
    file_kind,
    input_names,
    printable,
)
from kg.text.formats import FOLDER_SUFFIXES
from kg.text.records import Diagnostic

__all__ = ["MAX_NAMED_SKIPS", "find_inputs", "suffixes_in_words"]

# How many skipped files of a folder its warning names.
MAX_NAMED_SKIPS = 5


def find_inputs(paths: Sequence[str | Path], *, follow_links: bool = False) -> tuple[list[tuple[Path, Path]], list[Diagnostic]]:
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
                raise InputError(f"{printable(str(path))}: folder has no readable input ({suffixes_in_words('or')} files){left}{advice}")
            if links:
                notes.append(_skipped_links(path, links))
            if skipped:
                kinds = "files" if all(not s.endswith(("/", ")")) for s in skipped) else "files and folders"
                notes.append(
                    Diagnostic(
                        input_names([(path, path)])[0],
                        None,
                        f"skipped {len(skipped)} {kinds} that are not abstract lists: {_named(skipped)}"
                        f" (a folder is read for its {suffixes_in_words('and')} files; name a file to read it whatever its name)",
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


def suffixes_in_words(conjunction: str) -> str:
    """`FOLDER_SUFFIXES` as a list in words: '.txt, .jsonl, … or .tsv'."""
    return f"{', '.join(FOLDER_SUFFIXES[:-1])} {conjunction} {FOLDER_SUFFIXES[-1]}"
