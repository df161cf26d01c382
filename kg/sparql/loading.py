"""Making a build's Oxigraph store: loaded whole from ``graph.nt``, or the previous store updated
with the lines that changed, from a finished file or one still being written (`_follow`), in
this process or as a program of its own (`_store_main`, which `kg.sparql.store.StoreLoad` runs).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from kg.errors import OutputError
from kg.scale.executor import kg_program

__all__ = ["count_statements", "load_in_process", "load_with_program", "same_library", "store_command"]


def count_statements(nt: Path) -> int:
    n = 0
    with nt.open("rb") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith(b"#"):
                n += 1
    return n


def load_with_program(exe: str, nt: Path, folder: Path) -> int:
    """Load *nt* into a new store at *folder*/data with ``oxigraph load``, then compact it
    (``oxigraph optimize``); the triple count."""
    data = folder / "data"
    run = subprocess.run([exe, "load", "--location", str(data), "--file", str(nt), "--format", "nt"],
                         capture_output=True, text=True)
    # Lines that report an error (not any line that merely holds the word, as a path may);
    # the triple count below is the real check.
    errors = [l for l in run.stderr.splitlines() if re.match(r"\s*(error|Error|ERROR)\b", l) and "--lenient" not in l]
    if run.returncode != 0 or errors:
        raise OutputError(f"{nt}: oxigraph could not load it ({'; '.join(errors) or run.stderr.strip() or run.returncode})")
    optimized = subprocess.run([exe, "optimize", "--location", str(data)], capture_output=True, text=True)
    if optimized.returncode != 0:
        raise OutputError(f"{data}: oxigraph could not optimize the new store ({optimized.stderr.strip() or optimized.returncode})")
    query = subprocess.run([exe, "query", "--location", str(data), "--query", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }",
                            "--results-format", "tsv"], capture_output=True, text=True)
    lines = query.stdout.split()
    if query.returncode != 0 or len(lines) < 2:
        raise OutputError(f"{data}: the new store cannot be read ({query.stderr.strip()})")
    triples = int(lines[1].split("^^")[0].strip('"'))
    expected = count_statements(nt)
    if triples != expected:
        raise OutputError(f"{nt}: {expected} triples, but the store holds {triples}; the store was not replaced")
    return triples


def same_library(version: str) -> bool:
    """Whether pyoxigraph in this process is the Oxigraph of the ``oxigraph`` program (*version*,
    as ``oxigraph --version`` says it), so that a store it writes is the one the program reads."""
    import pyoxigraph as ox

    return version.split()[-1:] == [ox.__version__]


_PIECE_BYTES = 16 << 20  # graph.nt is bulk-loaded this many bytes (of whole lines) at a time


def _whole(timeout: float) -> bool:
    """`_follow`'s *finished* for a file already whole."""
    return True


def load_in_process(folder: Path, *, nt: Path, finished: Callable[[float], bool] = _whole) -> int:
    """Load the N-Triples file *nt* (one triple a line) into a new store at *folder*/data with
    pyoxigraph's bulk loader, then compact it (`Store.optimize`); the triple count.

    The file is loaded in pieces of about `_PIECE_BYTES` of whole lines (`_follow`: with
    *finished*, as a writer still appends them), so that the loader's memory follows the piece,
    not the file (benchmarks/README.md, scaling). A piece holding a blank node stops that: the
    loader gives each load its own blank nodes, so a file that has them is loaded whole once it
    is (kg writes none). The bulk loader runs outside the GIL, so other threads go on meanwhile."""
    import pyoxigraph as ox

    from kg.sparql.remote import has_blank_node

    expected, whole = 0, False
    try:
        store = ox.Store(str(folder / "data"))
        for piece in _follow(nt, finished):
            expected += _statement_lines(piece)
            if not whole and b"_:" in piece and has_blank_node(piece.splitlines(keepends=True)):
                whole = True
            if not whole:
                store.bulk_load(input=piece, format=ox.RdfFormat.N_TRIPLES)
        if whole:
            del store
            shutil.rmtree(folder / "data")
            store = ox.Store(str(folder / "data"))
            store.bulk_load(path=str(nt), format=ox.RdfFormat.N_TRIPLES)
        store.flush()
        store.optimize()  # compacts what the bulk loader wrote: queries 10-70 % faster at 10,000 papers
        triples = len(store)
        del store  # closes it
    except (OSError, SyntaxError, ValueError) as e:
        raise OutputError(f"{nt}: oxigraph could not load it ({e})") from e
    if triples != expected:
        raise OutputError(f"{nt}: {expected} triples, but the store holds {triples}; the store was not replaced")
    return triples


_MAX_CHANGED = 0.25  # beyond this share of changed triples a new store is loaded whole (and compacted)


def _update_in_process(folder: Path, *, nt: Path, previous: Path, previous_nt: Path) -> int | None:
    """A new store at *folder*/data holding the N-Triples file *nt*: a copy of the store
    *previous* (loaded from *previous_nt*) with the triples of the lines that changed between
    the two files removed and added; the triple count. None, and nothing left in *folder*,
    when more than `_MAX_CHANGED` of the lines changed (a store loaded whole is then the better
    one), or when the previous store cannot be read or does not hold what *previous_nt* says
    (it was changed or damaged since): the caller loads *nt* whole instead. `_update_following`
    of a file already whole.

    The copy is Oxigraph's backup, which hard-links the previous store's immutable files, and
    the previous store is only read. At 10,000 papers, 40 more abstracts change ~37,000 of
    1.8 million lines; the update takes ~5 s of one core where a load takes 12.8 s of CPU."""
    return _update_following(folder, nt=nt, previous=previous, previous_nt=previous_nt, finished=_whole)


class _Copy:
    """A copy of a build's previous store, open, being updated into the new one (`_copy_of`):
    `drop` closes it and removes its files (the caller may still hold this object)."""

    def __init__(self, store, data: Path) -> None:
        self.store, self.data, self.triples = store, data, len(store)

    def drop(self) -> None:
        self.store = None  # closes it
        shutil.rmtree(self.data, ignore_errors=True)


def _copy_of(previous: Path, data: Path) -> _Copy | None:
    """The store *previous* copied to *data* (Oxigraph's backup: hard links to its immutable
    files), opened and counted; None (nothing left at *data*) when it cannot be read."""
    import pyoxigraph as ox

    try:
        ox.Store.read_only(str(previous)).backup(str(data))
        return _Copy(ox.Store(str(data)), data)
    except (OSError, RuntimeError, SyntaxError, ValueError):  # RuntimeError: RocksDB's "Corruption: ..."
        shutil.rmtree(data, ignore_errors=True)
        return None


def _apply_changes(folder: Path, *, previous: Path, removed: list[bytes], added: list[bytes],
                   expected: int, copied: _Copy | None = None) -> int | None:
    """The store *previous* copied to *folder*/data (or *copied*, its copy already made by
    `_copy_of`) with the triples of the *removed* lines taken out and those of the *added* ones
    put in, when the copy then holds the *expected* triples; None (and nothing left in
    *folder*) when too much changed or the previous store is not what its file says
    (`_update_in_process`)."""
    import pyoxigraph as ox

    if len(removed) + len(added) > _MAX_CHANGED * expected:
        if copied is not None:
            copied.drop()
        return None
    copied = copied or _copy_of(previous, folder / "data")
    if copied is None:
        return None
    store = copied.store
    try:
        for quad in ox.parse(b"".join(removed), format=ox.RdfFormat.N_TRIPLES):
            store.remove(quad)
        store.extend(ox.parse(b"".join(added), format=ox.RdfFormat.N_TRIPLES))
        store.flush()
        store.optimize()  # without it, queries at 10,000 papers took up to 1.7x as long (1.6 s)
        triples = len(store)
    except (OSError, RuntimeError, SyntaxError, ValueError):
        triples = None
    del store
    if copied.triples != expected - len(added) + len(removed) or triples != expected:
        copied.drop()
        return None
    copied.store = None  # closes it
    return triples


def _follow(path: Path, finished: Callable[[float], bool]) -> Iterator[bytes]:
    """The text of the file *path* while a writer is still appending to it: whole lines, about
    `_PIECE_BYTES` at a time, as they are written; ends once ``finished(timeout)`` (which may
    wait up to *timeout* seconds for the writer's word) has said the file is closed and all of
    it is read. A last line without its line end comes last, alone."""
    rest, done = b"", False
    with path.open("rb") as f:
        while True:
            chunk = f.read(_PIECE_BYTES)
            if chunk:
                data = rest + chunk
                cut = data.rfind(b"\n") + 1
                rest = data[cut:]
                if cut:
                    yield data[:cut]
            elif done:
                break
            else:
                done = finished(0.05)
    if rest:
        yield rest


def _statement_lines(text: bytes) -> int:
    """How many lines of N-Triples *text* hold a statement (not empty, not a comment), as `count_statements` counts."""
    return sum(1 for line in text.split(b"\n") if (kept := line.strip()) and not kept.startswith(b"#"))


def _update_following(folder: Path, *, nt: Path, previous: Path, previous_nt: Path,
                      finished: Callable[[float], bool]) -> int | None:
    """`_update_in_process` of an N-Triples file still being written: the previous file's lines
    are hashed and the previous store copied first, then each new line hashed as it is written
    (`_follow`), so that once the file is closed only the changes are left to make. None when
    too much changed (the file is then read to its end first, for the caller to load whole).

    Lines are compared by their 64-bit hashes (Python's: keyed at random for each process), the
    previous file's kept, not their text: ~140 MB at 1.8 million lines instead of ~700 MB. A
    changed line would be taken for an unchanged one only if its hash equalled one of the other
    file's; the triple count check after the update catches that unless, as well, a removed
    line's hash equals an added one's (odds about added x removed / 2^64, 2e-11 when 40
    abstracts join 10,000)."""
    from itertools import compress

    with previous_nt.open("rb", buffering=1 << 20) as f:
        old_hashes = list(map(hash, f))
    old = set(old_hashes)
    copied = _copy_of(previous, folder / "data")  # made and counted while the file is still being written
    new: set[int] = set()
    added: list[bytes] = []
    lines = 0
    limit = _MAX_CHANGED * max(len(old_hashes), 1)
    for piece in _follow(nt, finished):
        got = piece.splitlines(keepends=True)
        lines += len(got)
        if copied is None or len(added) > limit:
            continue  # loaded whole: the rest is only waited for
        hashes = list(map(hash, got))
        new.update(hashes)
        added += compress(got, [h not in old for h in hashes])
    if copied is None or len(added) > limit:
        if copied is not None:
            copied.drop()
        return None
    removed = old - new
    del new
    with previous_nt.open("rb", buffering=1 << 20) as f:
        gone = list(compress(f, map(removed.__contains__, old_hashes))) if removed else []
    return _apply_changes(folder, previous=previous, removed=gone, added=added, expected=lines, copied=copied)


def store_command(folder: Path, *, nt: Path, previous: Path | None = None, previous_nt: Path | None = None,
                   follow: bool = False) -> list[str]:
    """The command that makes a store at *folder*/data from *nt* in a new Python process
    (`_store_main`); with *follow*, from *nt* as it is being written, until the line ``done``
    on the process's standard input says it is whole."""
    paths = (folder, nt) if previous is None or previous_nt is None else (folder, nt, previous, previous_nt)
    return kg_program("kg.sparql.loading:_store_main", *(["--follow"] if follow else []),
                      *(str(Path(p).absolute()) for p in paths))


def _writer_done(timeout: float) -> bool:
    """Whether the build said on this process's standard input that the file followed is whole
    (the line ``done``), waiting up to *timeout* seconds for it. A build that closed the pipe
    without saying so stopped: `OutputError`."""
    import select

    if not select.select([0], [], [], timeout)[0]:
        return False
    said = os.read(0, 64)
    if said.strip() == b"done":
        return True
    raise OutputError("the build stopped before graph.nt was whole; the store was not made")


def _store_main(argv: Sequence[str]) -> int:
    """A store made as a program ([--follow] FOLDER NT [PREVIOUS PREVIOUS_NT]): `_update_in_process` when
    a previous store is given, else (or when too much changed) `load_in_process`; with
    ``--follow``, their kinds that read NT as it is written (`_update_following`,
    `load_in_process` with *finished*; `_writer_done`). Writes ``updated N`` or ``loaded N`` (N triples) to
    stdout; an `OutputError` is its message on stderr and its exit code."""
    follow = bool(argv) and argv[0] == "--follow"
    folder, nt, *previous = map(Path, argv[1:] if follow else argv)
    finished = _writer_done if follow else _whole
    try:
        triples, how = None, "updated"
        if previous and follow:
            triples = _update_following(folder, nt=nt, previous=previous[0], previous_nt=previous[1], finished=finished)
            finished = _whole  # (an update that gave way read the file to its end)
        elif previous:
            triples = _update_in_process(folder, nt=nt, previous=previous[0], previous_nt=previous[1])
        if triples is None:
            triples, how = load_in_process(folder, nt=nt, finished=finished), "loaded"
    except OutputError as e:
        sys.stderr.write(f"{e}\n")
        return e.exit_code
    sys.stdout.write(f"{how} {triples}\n")
    return 0
