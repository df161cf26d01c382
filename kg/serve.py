"""``kg serve``: the built graph over HTTP, with Oxigraph's own SPARQL server doing the SPARQL.

What runs::

    browser / SPARQL client --HTTP--> kg front (127.0.0.1:7878)  --HTTP, loopback--> oxigraph serve-read-only
                                      /            explorer page                       (127.0.0.1:<free port>,
                                      /sparql      SPARQL 1.1 Protocol (proxied)         a child process)
                                      /queries     the canned queries
                                      /api/...     explorer data, named queries

* The store. ``graph.nt`` of the build folder is loaded with ``oxigraph load`` into an on-disk
  store under ``DIR/store/`` (the Oxigraph data in ``DIR/store/data``, what it was loaded from
  in ``DIR/store/source.json``). It is reloaded when ``graph.nt`` changed (size or mtime) or
  the ``oxigraph`` version did: into a temporary folder beside it, checked (triple count),
  then renamed into place. (`kg build` makes it while it writes the other outputs, from a copy
  of the previous store when that one is up to date: see `StoreLoad`.) The folder ``DIR``
  itself is ``flock``-ed, shared while serving and exclusive while reloading, so two servers
  of one folder can run together but never reload the store under each other; the kernel
  drops the lock with the process, so none is ever left behind.
* The SPARQL server is ``oxigraph serve-read-only`` over that store, on a free loopback port:
  Oxigraph parses and answers every query (SPARQL 1.1 Protocol: GET and POST, content
  negotiation, its parser's 400 messages); updates are refused by it (read-only: 403).
* The timeout is kg's. Oxigraph's ``--timeout-s`` cancels queries cooperatively: measured with
  oxigraph 0.5.13, a cancelled SELECT still answers ``200 OK`` with the error text written into
  the results, cancellation of a cross join took 9 s past a 1 s timeout, and an ``ORDER BY``
  over a cross join was not stopped at all (it grew past 11 GB). So kg does not use it: the
  front gives every query a deadline; a query that has not answered in full by then gets
  ``503`` and the Oxigraph process, which may still be computing it, is killed (SIGKILL, its
  whole process group) and started again over the same read-only store (well under a second:
  opening a read-only store is quick). Other queries that were running in the killed worker
  are sent again to the new one (queries have no side effects) within their own deadlines.
  Answers are read whole into a spool (8 MiB in memory, then a temporary file) and checked
  before anything is sent, so that a stopped or failed query never produces a ``200`` with
  half a result, and the worker's slot is free again before a slow client reads the answer
  (each 64 KiB within 30 s, or the client is dropped).
* Federated queries are refused (``SERVICE`` would make the worker send requests wherever a
  client says), unless the operator allows endpoints with ``--allow-service``. The worker's
  heap is capped (``RLIMIT_DATA``, ``--max-memory``, default a quarter of the machine's
  memory): a query past it makes Oxigraph abort, and its client gets ``503``.
* At most as many queries as there are CPU cores (at least 2) run in the worker at once; the
  others wait their turn in the front (up to ``max(60 s, 6 x timeout)``). A query's clock
  starts when it is sent to the worker, so the timeout measures its own run, not the queue:
  without this, on a busy 2-core machine, queries that were merely sharing the CPU with
  seven others went past the deadline.
* Shutdown. SIGINT, SIGTERM and SIGHUP stop the front, then the worker (SIGTERM, then SIGKILL);
  the worker is also started with ``PR_SET_PDEATHSIG`` so that it dies with kg even when kg
  is killed outright.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import http.client
import io
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import click

from kg.errors import InputError, KGError, OutputError, QueryError
from kg.executor import kg_program, same_kg_env

__all__ = [
    "DEFAULT_HOST", "DEFAULT_PORT", "DEFAULT_TIMEOUT", "Server", "StoreInfo", "canned_queries", "main",
    "StoreLoad", "oxigraph_binary", "prepare_store", "serve_command", "start_server", "substitute",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7878
DEFAULT_TIMEOUT = 10.0
STORE = "store"
_SOURCE = "source.json"
_MAX_BUFFER = 8 * 1024 * 1024  # an answer is spooled in memory up to this size, then in a temporary file
_WRITE_TIMEOUT = 30.0  # seconds a client may take to read each 64 KiB of an answer
_MAX_REQUEST = 16 * 1024 * 1024
_WORKER_START = 30.0  # seconds Oxigraph may take to open the store
_LOOPBACK = {"127.0.0.1", "::1", "localhost"}
_QUERY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")

Log = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


# --------------------------------------------------------------------------------------------
# The store


@dataclass(frozen=True)
class StoreInfo:
    """The Oxigraph store of a build folder: where its data is, how many triples, reloaded or not."""

    location: Path
    triples: int
    reloaded: bool


def oxigraph_binary() -> str:
    """The ``oxigraph`` program of the PyPI package ``oxigraph`` (beside this Python, else on PATH)."""
    beside = Path(sys.executable).with_name("oxigraph")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("oxigraph")
    if found:
        return found
    raise KGError("the `oxigraph` program is missing; install the PyPI package `oxigraph` (pip install oxigraph)")


def _oxigraph_version(exe: str) -> str:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise KGError(f"{exe} --version failed ({e}); reinstall the PyPI package `oxigraph`") from e
    return out.strip()


class _FolderLock:
    """``flock`` on the build folder itself: shared while serving, exclusive while reloading the store."""

    def __init__(self, folder: Path) -> None:
        import fcntl

        self._fcntl = fcntl
        self.fd: int | None = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def shared(self) -> None:
        self._fcntl.flock(self.fd, self._fcntl.LOCK_SH)

    def try_exclusive(self) -> bool:
        try:
            self._fcntl.flock(self.fd, self._fcntl.LOCK_EX | self._fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # drops the lock
            self.fd = None


def _graph_source(nt: Path, version: str) -> dict:
    st = nt.stat()
    return {"file": nt.name, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "oxigraph": version}


def _fresh(store: Path, source: dict) -> int | None:
    """The triple count of *store* if it was loaded from *source*, else None."""
    try:
        recorded = json.loads((store / _SOURCE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (store / "data" / "CURRENT").is_file() or any(recorded.get(k) != v for k, v in source.items()):
        return None
    triples = recorded.get("triples")
    return triples if isinstance(triples, int) else None


def _count_statements(nt: Path) -> int:
    n = 0
    with nt.open("rb") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith(b"#"):
                n += 1
    return n


def _load(exe: str, nt: Path, folder: Path) -> int:
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
    expected = _count_statements(nt)
    if triples != expected:
        raise OutputError(f"{nt}: {expected} triples, but the store holds {triples}; the store was not replaced")
    return triples


def _same_library(version: str) -> bool:
    """Whether pyoxigraph in this process is the Oxigraph of the ``oxigraph`` program (*version*,
    as ``oxigraph --version`` says it), so that a store it writes is the one the program reads."""
    import pyoxigraph as ox

    return version.split()[-1:] == [ox.__version__]


def _load_in_process(folder: Path, *, nt: Path) -> int:
    """Load the N-Triples file *nt* (one triple a line) into a new store at *folder*/data with
    pyoxigraph's bulk loader, then compact it (`Store.optimize`); the triple count.

    The bulk loader runs outside the GIL, so other threads go on meanwhile."""
    import pyoxigraph as ox

    try:
        store = ox.Store(str(folder / "data"))
        store.bulk_load(path=str(nt), format=ox.RdfFormat.N_TRIPLES)
        store.flush()
        store.optimize()  # compacts what the bulk loader wrote: queries 10-70 % faster at 10,000 papers
        triples = len(store)
        del store  # closes it
    except (OSError, SyntaxError, ValueError) as e:
        raise OutputError(f"{nt}: oxigraph could not load it ({e})") from e
    expected = _count_statements(nt)
    if triples != expected:
        raise OutputError(f"{nt}: {expected} triples, but the store holds {triples}; the store was not replaced")
    return triples


_MAX_CHANGED = 0.25  # beyond this share of changed triples a new store is loaded whole (and compacted)


def _changed_lines(old: Path, new: Path) -> tuple[list[bytes], list[bytes], int]:
    """The lines of the N-Triples file *old* that *new* lacks, the lines of *new* that *old*
    lacks, and the number of lines of *new*.

    Lines are compared by their 64-bit hashes (Python's: keyed at random for each process),
    kept for the unchanged ones, not their text: ~140 MB at 1.8 million lines instead of
    ~700 MB. A changed line would be taken for an unchanged one only if its hash equalled one of
    the other file's; the triple count check after the update catches that unless, as well, a
    removed line's hash equals an added one's (odds about added x removed / 2^64, 2e-11 when
    40 abstracts join 10,000)."""
    from itertools import compress

    def hashes(path: Path) -> list[int]:
        with path.open("rb", buffering=1 << 20) as f:  # 1 MiB reads: a third less time than 8 KiB ones
            return list(map(hash, f))

    def lines(path: Path, hashes: list[int], wanted: set[int]) -> list[bytes]:
        if not wanted:
            return []
        with path.open("rb", buffering=1 << 20) as f:
            return list(compress(f, map(wanted.__contains__, hashes)))

    old_hashes, new_hashes = hashes(old), hashes(new)
    old_set, new_set = set(old_hashes), set(new_hashes)  # set - set: each side hashed into a table once
    removed, added = old_set - new_set, new_set - old_set
    del old_set, new_set
    return lines(old, old_hashes, removed), lines(new, new_hashes, added), len(new_hashes)


def _update_in_process(folder: Path, *, nt: Path, previous: Path, previous_nt: Path) -> int | None:
    """A new store at *folder*/data holding the N-Triples file *nt*: a copy of the store
    *previous* (loaded from *previous_nt*) with the triples of the lines that changed between
    the two files removed and added; the triple count. None, and nothing left in *folder*,
    when more than `_MAX_CHANGED` of the lines changed (a store loaded whole is then the better
    one), or when the previous store cannot be read or does not hold what *previous_nt* says
    (it was changed or damaged since): the caller loads *nt* whole instead.

    The copy is Oxigraph's backup, which hard-links the previous store's immutable files, and
    the previous store is only read. At 10,000 papers, 40 more abstracts change ~37,000 of
    1.8 million lines; the update takes ~5 s of one core where a load takes 12.8 s of CPU."""
    import pyoxigraph as ox

    removed, added, expected = _changed_lines(previous_nt, nt)
    if len(removed) + len(added) > _MAX_CHANGED * expected:
        return None
    data = folder / "data"
    try:
        ox.Store.read_only(str(previous)).backup(str(data))
        store = ox.Store(str(data))
        before = len(store)
        for quad in ox.parse(b"".join(removed), format=ox.RdfFormat.N_TRIPLES):
            store.remove(quad)
        store.extend(ox.parse(b"".join(added), format=ox.RdfFormat.N_TRIPLES))
        store.flush()
        store.optimize()  # without it, queries at 10,000 papers took up to 1.7x as long (1.6 s)
        triples = len(store)
        del store  # closes it
    except (OSError, RuntimeError, SyntaxError, ValueError):  # RuntimeError: RocksDB's "Corruption: ..."
        triples = before = None
    if before != expected - len(added) + len(removed) or triples != expected:
        shutil.rmtree(data, ignore_errors=True)
        return None
    return triples


def _store_command(folder: Path, *, nt: Path, previous: Path | None = None, previous_nt: Path | None = None) -> list[str]:
    """The command that makes a store at *folder*/data from *nt* in a new Python process (`_store_main`)."""
    paths = (folder, nt) if previous is None or previous_nt is None else (folder, nt, previous, previous_nt)
    return kg_program("kg.serve:_store_main", *(str(Path(p).absolute()) for p in paths))


def _store_main(argv: Sequence[str]) -> int:
    """A store made as a program (FOLDER NT [PREVIOUS PREVIOUS_NT]): `_update_in_process` when
    a previous store is given, else (or when too much changed) `_load_in_process`. Writes
    ``updated N`` or ``loaded N`` (N triples) to stdout; an `OutputError` is its message on
    stderr and its exit code."""
    folder, nt, *previous = map(Path, argv)
    try:
        triples, how = None, "updated"
        if previous:
            triples = _update_in_process(folder, nt=nt, previous=previous[0], previous_nt=previous[1])
        if triples is None:
            triples, how = _load_in_process(folder, nt=nt), "loaded"
    except OutputError as e:
        sys.stderr.write(f"{e}\n")
        return e.exit_code
    sys.stdout.write(f"{how} {triples}\n")
    return 0


def _new_store_folder(folder: Path) -> tuple[Path, int]:
    """A temporary folder for a new store beside ``store/``, and a descriptor holding an exclusive
    ``flock`` on it (so that `_remove_stale` leaves a folder that is being loaded alone)."""
    import fcntl

    try:
        tmp = Path(tempfile.mkdtemp(prefix=".store-", suffix=".tmp", dir=folder))
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o777 & ~mask)
        fd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError as e:
        raise OutputError(f"{folder}: cannot write the store ({e.strerror or e})") from e
    return tmp, fd


def _remove_stale(folder: Path) -> None:
    """Remove the temporary store folders an interrupted reload left behind (not one being loaded)."""
    import fcntl

    for stale in folder.glob(".store-*"):
        try:
            fd = os.open(stale, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # another process is loading it
        finally:
            os.close(fd)
        shutil.rmtree(stale, ignore_errors=True)


def _install(folder: Path, tmp: Path, source: dict, triples: int) -> None:
    """Record what the new store at *tmp* was loaded from and rename it to ``folder/store``."""
    store = folder / STORE
    try:
        (tmp / _SOURCE).write_text(json.dumps(source | {"triples": triples}, indent=1) + "\n", encoding="utf-8")
        old = None
        if store.exists() or store.is_symlink():
            old = folder / f".store-old-{os.getpid()}-{time.monotonic_ns()}"
            os.rename(store, old)
        os.rename(tmp, store)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as e:
        raise OutputError(f"{store}: cannot write the store ({e.strerror or e})") from e


def _exclusive(lock: _FolderLock, folder: Path) -> None:
    if not lock.try_exclusive():
        raise OutputError(f"{folder}: another `kg serve` is serving its store and graph.nt has changed since; "
                          "stop that server first")


def prepare_store(graph_dir: str | os.PathLike = "outputs", *, oxigraph: str | None = None, log: Log = _quiet,
                  _lock: _FolderLock | None = None) -> StoreInfo:
    """The on-disk Oxigraph store of the build in *graph_dir*, (re)loaded from its ``graph.nt`` if needed.

    A new store is loaded into a temporary folder, checked, and renamed to ``graph_dir/store``
    only when whole. Raises `InputError` when the folder holds no build and `OutputError`
    when the store cannot be written.
    """
    folder = Path(graph_dir)
    nt = folder / "graph.nt"
    if not nt.is_file():
        raise InputError(f"{nt}: no such file; run `kg build --out {folder}` first, or pass --graph")
    exe = oxigraph or oxigraph_binary()
    version = _oxigraph_version(exe)
    source = _graph_source(nt, version)
    store = folder / STORE
    lock = _lock or _FolderLock(folder)
    try:
        lock.shared()
        triples = _fresh(store, source)
        if triples is not None:
            return StoreInfo(store / "data", triples, False)
        _exclusive(lock, folder)
        try:
            triples = _fresh(store, source)  # someone may have reloaded it meanwhile
            if triples is not None:
                return StoreInfo(store / "data", triples, False)
            log(f"loading {nt} into {store}/")
            _remove_stale(folder)
            tmp, fd = _new_store_folder(folder)
            try:
                triples = _load_in_process(tmp, nt=nt) if _same_library(version) else _load(exe, nt, tmp)
                _install(folder, tmp, source, triples)
            finally:
                os.close(fd)
                if tmp.exists():
                    shutil.rmtree(tmp, ignore_errors=True)
            return StoreInfo(store / "data", triples, True)
        finally:
            lock.shared()  # back to shared: serving
    finally:
        if _lock is None:
            lock.close()


class StoreLoad:
    """The store of a build being made while the build writes its other outputs: `kg build`
    starts it from the N-Triples file it has just written (*nt*, which must stay in place until
    `wait` returns), into a temporary folder, in a new Python process (`_store_main`): its
    memory is not the build's, and it has its own interpreter lock and none of RocksDB's
    threads (a forked copy of a process that has opened a store would wait forever for them).
    When the folder's current store is up to date with its current ``graph.nt`` (the previous
    build's), the new store is that one updated with the lines that differ between the two
    files (`_update_in_process`); otherwise it is loaded whole. Where no process can be started
    it is loaded in a thread of this one (pyoxigraph's bulk loader runs outside the GIL).
    `finish`, once ``graph.nt`` is written, records that file's size and mtime (the freshness
    marker `prepare_store` and `kg.sparql.persistent_store` check) and renames the store into
    place, as `prepare_store` would. `discard` drops it (a failed build). When pyoxigraph is
    not the ``oxigraph`` program's version, `finish` falls back to `prepare_store`.
    """

    def __init__(self, graph_dir: str | os.PathLike, nt: str | os.PathLike, *, oxigraph: str | None = None) -> None:
        self.folder = Path(graph_dir)
        self.exe = oxigraph or oxigraph_binary()
        self.version = _oxigraph_version(self.exe)
        self.how: str | None = None  # "updated" or "loaded", once made
        self._tmp: Path | None = None
        self._fd: int | None = None
        self._result: list = []
        self._thread: threading.Thread | None = None
        self._process: subprocess.Popen | None = None
        if not _same_library(self.version):
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"{self.folder}: cannot create the output folder ({e.strerror})") from e
        _remove_stale(self.folder)  # what an interrupted build left (not a store another build is making)
        self._tmp, self._fd = _new_store_folder(self.folder)
        tmp, nt = self._tmp, Path(nt)
        previous, previous_nt = self.folder / STORE, self.folder / "graph.nt"
        if previous_nt.is_file() and _fresh(previous, _graph_source(previous_nt, self.version)) is not None:
            command = _store_command(tmp, nt=nt, previous=previous / "data", previous_nt=previous_nt)
        else:
            command = _store_command(tmp, nt=nt)
        if sys.executable:
            try:
                self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                                 stderr=subprocess.PIPE, text=True, env=same_kg_env())
                return
            except OSError:  # no process left: loaded whole in this one, below
                pass

        def run() -> None:
            try:
                self._result.append(_load_in_process(tmp, nt=nt))
            except BaseException as e:  # handed to finish()
                self._result.append(e)

        self._thread = threading.Thread(target=run, name="kg-store-load", daemon=True)
        self._thread.start()

    @property
    def _started(self) -> bool:
        return self._thread is not None or self._process is not None

    def wait(self) -> None:
        """Wait until the N-Triples are read (the store is made)."""
        if self._thread is not None:
            self._thread.join()
            self.how = "loaded"
        elif self._process is not None and not self._result:
            out, err = self._process.communicate()
            code, said = self._process.returncode, err.strip().splitlines()[-1:]
            if code == 0:
                self.how, triples = out.split()
                self._result.append(int(triples))
            elif code == OutputError.exit_code and said:
                self._result.append(OutputError(said[0]))
            else:
                detail = f": {said[0]}" if said else ""
                self._result.append(OutputError(f"the process making the store stopped (exit code {code}{detail}); "
                                                "the previous outputs are unchanged"))

    def ready(self) -> None:
        """Wait until the store is made (`wait`); raise the error that stopped it, if one did."""
        self.wait()
        if self._result and isinstance(self._result[0], BaseException):
            raise self._result[0]

    def finish(self) -> StoreInfo:
        if not self._started:
            return prepare_store(self.folder, oxigraph=self.exe)
        try:
            self.ready()
            triples = self._result[0]
            nt = self.folder / "graph.nt"
            source = _graph_source(nt, self.version)
            lock = _FolderLock(self.folder)
            try:
                lock.shared()
                _exclusive(lock, self.folder)
                _install(self.folder, self._tmp, source, triples)
            finally:
                lock.close()
            return StoreInfo(self.folder / STORE / "data", triples, True)
        finally:
            self._cleanup()

    def discard(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
        if self._started:
            self.wait()
            self._cleanup()

    def _cleanup(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._tmp is not None and self._tmp.exists():
            shutil.rmtree(self._tmp, ignore_errors=True)
        self._thread = self._process = None


# --------------------------------------------------------------------------------------------
# Bindings as query text (SEP-0007 substitution), for the named queries of the explorer


_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n\r]*)
  | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
  | (?P<string>'''(?:(?:'|'')?(?:[^'\\]|\\.))*'''|\"\"\"(?:(?:"|"")?(?:[^"\\]|\\.))*\"\"\"
              |'(?:[^'\\\n\r]|\\.)*'|"(?:[^"\\\n\r]|\\.)*")
  | (?P<var>[?$][A-Za-z0-9_\u00B7\u00C0-\U000EFFFF]+)
  | (?P<lang>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)
  | (?P<word>(?:[A-Za-z_\u00C0-\U000EFFFF][\w.\-\u00B7]*)?:(?:[\w.\-:%\u00B7\u00C0-\U000EFFFF]|\\.)*
             |[A-Za-z_\u00C0-\U000EFFFF][\w\-\u00B7]*|\d[\w.]*)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)

_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
_ECHAR = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_check_store = None


def _term_text(term) -> str:
    """A pyoxigraph IRI or literal as SPARQL text, checked to read back as the same term."""
    global _check_store
    import pyoxigraph as ox

    if isinstance(term, ox.NamedNode):
        if re.search(r'[<>"{}|^`\\\x00-\x20]', term.value):
            raise QueryError(f"<{term.value}> cannot be written as a SPARQL IRI")
        return f"<{term.value}>"
    if not isinstance(term, ox.Literal):
        raise QueryError(f"{term} cannot be bound: give an IRI or a literal")
    text = '"' + "".join(_ECHAR.get(c, c) for c in term.value) + '"'
    if term.language:
        text += "@" + term.language
    elif term.datatype.value != _XSD_STRING:
        text += f"^^{_term_text(term.datatype)}"
    if _check_store is None:
        _check_store = ox.Store()
    back = next(iter(_check_store.query(f"SELECT ({text} AS ?x) WHERE {{}}")))["x"]
    if back != term:
        raise QueryError(f"{term} cannot be written as a SPARQL literal")
    return text


def query_variables(query: str) -> set[str]:
    """The names of the variables *query* mentions (comments and strings skipped)."""
    return {m.group()[1:] for m in _TOKEN.finditer(query) if m.lastgroup == "var"}


_UNICODE_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def service_endpoints(query: str) -> list[str | None]:
    """The endpoints of the ``SERVICE`` clauses of *query*: an IRI as written, ``None`` for one named
    by a variable or a prefixed name (which cannot be checked against an allow-list).

    Comments, strings and IRIs are skipped as the SPARQL grammar reads them; the text is read
    both as written and with its ``\\u`` escapes decoded (SPARQL 1.1, 19.2), so an escaped
    keyword is found too.
    """
    def decode(m: re.Match) -> str:
        code = int(m.group(1) or m.group(2), 16)
        return chr(code) if code <= 0x10FFFF else m.group()

    found: list[str | None] = []
    for text in dict.fromkeys((query, _UNICODE_ESCAPE.sub(decode, query))):
        tokens = [m for m in _TOKEN.finditer(text) if m.lastgroup not in ("ws", "comment")]
        for i, m in enumerate(tokens):
            if m.lastgroup != "word" or m.group().upper() != "SERVICE":
                continue
            rest = tokens[i + 1:i + 3]
            if rest and rest[0].lastgroup == "word" and rest[0].group().upper() == "SILENT":
                rest = rest[1:]
            target = rest[0] if rest else None
            found.append(target.group()[1:-1] if target is not None and target.lastgroup == "iri" else None)
    return found


def check_federation(query: str, allowed: Collection[str] = ()) -> None:
    """Refuse a *query* with a ``SERVICE`` clause whose endpoint is not in *allowed* (`QueryError`).

    A served query must not make the server send requests to addresses its client picks
    (server-side request forgery): federated queries are off unless the operator lists the
    endpoints (``kg serve --allow-service IRI``).
    """
    for endpoint in service_endpoints(query):
        if endpoint is not None and endpoint in allowed:
            continue
        if not allowed:
            raise QueryError("federated queries (SERVICE) are disabled on this server; its operator can allow "
                             "endpoints with kg serve --allow-service IRI")
        if endpoint is None:
            raise QueryError("a SERVICE endpoint must be written as a full IRI (<http://...>) on this server")
        raise QueryError(f"SERVICE <{endpoint}> is not allowed on this server; allowed: "
                         + ", ".join(f"<{a}>" for a in sorted(allowed)))


def substitute(query: str, bindings: Mapping[str, object]) -> str:
    """*query* with each variable of *bindings* (name -> pyoxigraph IRI or literal) replaced by its value.

    The same substitution pyoxigraph applies for ``Store.query(substitutions=...)`` (SEP-0007),
    written out as query text so that the bound query can be sent over the SPARQL protocol:
    every use of the variable becomes the term; in the top SELECT clause ``?v`` becomes
    ``(term AS ?v)``, in the SELECT clause of a subquery it is dropped (the term is used
    everywhere, there is nothing left to join on), in GROUP BY and ORDER BY it becomes
    ``(term)``. A variable the query assigns itself (``AS ?v``, ``VALUES``) cannot be bound
    (`QueryError`). Values are written by `_term_text`, which checks that each reads back
    as the same term, so no value can change the structure of the query.
    """
    terms = {name.lstrip("?$"): _term_text(term) for name, term in bindings.items()}
    if not terms:
        return query
    out: list[str] = []
    brace = paren = 0
    mode: str | None = None  # "select", "group", "order", "values"
    clause = {}  # state of the open clause
    prev = ""  # previous significant token, upper case
    pending_by: str | None = None
    for m in _TOKEN.finditer(query):
        kind, tok = m.lastgroup, m.group()
        if kind in ("ws", "comment"):
            out.append(tok)
            continue
        upper = tok.upper() if kind == "word" else tok
        if mode == "select" and paren == clause["paren"] and (upper in ("WHERE", "FROM") or tok == "{"):
            if not clause["top"] and clause["kept"] == 0 and not clause["star"]:
                out.insert(clause["at"], f" (0 AS ?_kg_unused{len(out)})")
            mode = None
        if mode in ("group", "order") and ((kind == "word" and upper in ("HAVING", "ORDER", "LIMIT", "OFFSET", "VALUES"))
                                           or (tok == "}" and brace == clause["brace"])):
            mode = None
        if mode == "values" and tok == "{":
            mode = None
        if kind == "word":
            if upper == "SELECT":
                mode, clause = "select", {"paren": paren, "top": brace == 0, "kept": 0, "star": False, "at": len(out) + 1}
            elif upper in ("DISTINCT", "REDUCED") and mode == "select" and prev == "SELECT":
                clause["at"] = len(out) + 1
            elif upper in ("GROUP", "ORDER"):
                pending_by = upper
            elif upper == "BY" and pending_by:
                mode, clause = ("group" if pending_by == "GROUP" else "order"), {"paren": paren, "brace": brace}
            elif upper == "VALUES":
                mode = "values"
            if upper != "BY":
                pending_by = pending_by if upper in ("GROUP", "ORDER") else None
            out.append(tok)
        elif kind == "var":
            name = tok[1:]
            if name not in terms:
                if mode == "select" and paren == clause["paren"]:
                    clause["kept"] += 1
                out.append(tok)
            elif prev == "AS":
                raise QueryError(f"?{name} is assigned by the query (AS ?{name}) and cannot be bound")
            elif mode == "values":
                raise QueryError(f"?{name} is given by a VALUES block of the query and cannot be bound")
            elif mode == "select" and paren == clause["paren"]:
                if clause["top"]:
                    out.append(f"({terms[name]} AS {tok})")
                    clause["kept"] += 1
                # in a subquery: dropped from its SELECT clause
            elif mode in ("group", "order") and paren == clause["paren"]:
                out.append(f"({terms[name]})")
            else:
                out.append(terms[name])
        else:
            if tok == "{":
                brace += 1
            elif tok == "}":
                brace -= 1
            elif tok == "(":
                paren += 1
            elif tok == ")":
                paren -= 1
                if mode == "select" and paren == clause["paren"]:
                    clause["kept"] += 1  # an (expression AS ?x)
            elif tok == "*" and mode == "select" and paren == clause["paren"]:
                clause["star"] = True
            out.append(tok)
        prev = upper if kind == "word" else tok
    return "".join(out)


# --------------------------------------------------------------------------------------------
# The canned queries


def canned_queries() -> list[dict]:
    """Every ``.rq`` file of ``queries/``: name, summary, header comment, variables, examples, text."""
    from kg.sparql import queries_dir

    out = []
    for path in sorted(queries_dir().glob("*.rq")):
        text = path.read_text(encoding="utf-8")
        header = []
        for line in text.splitlines():
            if not line.startswith("#"):
                break
            header.append(line[1:].removeprefix(" "))
        variables: dict[str, str] = {}
        examples = []
        in_bindings = False
        for line in header:
            if not line[:1].isspace():  # a section starts: only "Bindings ..." lists variables
                in_bindings = line.startswith("Bindings")
            var = re.match(r"\s+\?([A-Za-z_][A-Za-z0-9_]*)\s+(\S.*)$", line) if in_bindings else None
            if var and var.group(1) not in variables:
                variables[var.group(1)] = var.group(2).strip()
            if "--bind" in line:
                try:
                    words = shlex.split(line)
                except ValueError:
                    continue
                example = {}
                for flag, value in zip(words, words[1:]):
                    if flag == "--bind" and "=" in value:
                        k, _, v = value.partition("=")
                        example[k] = v
                if example:
                    examples.append(example)
        out.append({
            "name": path.stem,
            "summary": header[0].strip() if header else "",
            "description": "\n".join(header),
            "variables": [{"name": k, "description": v} for k, v in variables.items()],
            "examples": examples,
            "text": text,
        })
    return out


def _named_query(name: str) -> tuple[str, Path]:
    from kg.sparql import queries_dir

    path = queries_dir() / f"{name}.rq"
    if not _QUERY_NAME.fullmatch(name or "") or not path.is_file():
        known = ", ".join(p.stem for p in sorted(queries_dir().glob("*.rq"))) or "none"
        raise QueryError(f"no query named {name!r}; known queries: {known}")
    return path.read_text(encoding="utf-8"), path


def bound_query(name: str, bindings: Mapping[str, str] | list[str]) -> str:
    """The text of the named query *name* with *bindings* (``NAME=VALUE`` strings, as ``kg query --bind``,
    or a name -> value mapping) substituted."""
    from kg.sparql import parse_binding

    text, _ = _named_query(name)
    pairs = [f"{k}={v}" for k, v in bindings.items()] if isinstance(bindings, Mapping) else list(bindings)
    terms = dict(parse_binding(p) for p in pairs)
    unknown = sorted(set(terms) - query_variables(text))
    if unknown:
        raise QueryError(f"query {name!r} has no variable {', '.join('?' + u for u in unknown)}")
    return substitute(text, terms)


# --------------------------------------------------------------------------------------------
# The Oxigraph worker


class _Unavailable(Exception):
    pass


def _free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


_PR_SET_PDEATHSIG = 1
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None
except (OSError, AttributeError):
    _prctl = None


def _child_setup(parent: int, max_memory: int | None = None) -> Callable[[], None]:
    """What runs in the worker between fork and exec: die with kg (``PR_SET_PDEATHSIG``), and
    a cap on its heap (``RLIMIT_DATA``: an allocation past it fails, and Oxigraph aborts)."""
    import resource

    def setup() -> None:  # nothing that takes a lock
        if _prctl is not None:
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl
            os._exit(1)
        if max_memory:
            resource.setrlimit(resource.RLIMIT_DATA, (max_memory, max_memory))
    return setup


_OUT_OF_MEMORY = re.compile(r"memory allocation of \d+ bytes failed")


def default_max_memory() -> int:
    """The default cap on the SPARQL worker's memory: a quarter of this machine's, at least 1 GiB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 << 30
    return max(1 << 30, total // 4)


def parse_size(text: str) -> int:
    """``4G``, ``512M``, ``1.5GiB``, ``2000000000`` as bytes (``0``: no limit); `InputError` otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text or "", re.IGNORECASE)
    if not m:
        raise InputError(f"--max-memory {text!r}: give a size such as 4G, 512M or 0 (no limit)")
    scale = 1024 ** " KMGT".index((m.group(2) or " ").upper())
    return int(float(m.group(1)) * scale)


def format_size(n: int) -> str:
    return "no limit" if not n else f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n >> 20} MiB"


class _Worker:
    """``oxigraph serve-read-only`` over the store, on a free loopback port, restarted on demand.

    One supervisor thread owns the process (``PR_SET_PDEATHSIG`` fires when the thread that
    forked ends, so it must be a long-lived one): it starts it, waits until it answers, and
    kills and restarts it when asked (a query past its deadline) or when it dies.
    """

    def __init__(self, exe: str, location: Path, *, log: Log = _quiet, max_memory: int | None = None) -> None:
        self.exe, self.location, self.log, self.max_memory = exe, location, log, max_memory
        self.generation = 0
        self._out_of_memory: set[int] = set()  # generations that died of the memory cap
        self._drained: set[int] = set()  # generations whose stderr has ended
        self.restarts = 0
        self._cond = threading.Condition()
        self._proc: subprocess.Popen | None = None
        self._port = 0
        self._ready = False
        self._restart = False
        self._stopping = False
        self._failure: str | None = None
        self._stderr: deque[str] = deque(maxlen=20)
        self._dying: list[subprocess.Popen] = []
        self._thread = threading.Thread(target=self._supervise, name="kg-serve-oxigraph", daemon=True)

    # -- public
    def start(self) -> None:
        self._thread.start()
        with self._cond:
            while not self._ready and self._failure is None:
                self._cond.wait(0.1)
            if self._failure is not None:
                raise KGError(f"the SPARQL server did not start: {self._failure}")

    def acquire(self, deadline: float) -> tuple[int, int]:
        """(generation, port) of a running worker; waits for one until *deadline*."""
        with self._cond:
            while not self._ready:
                if self._stopping:
                    raise _Unavailable("the server is shutting down")
                if self._failure is not None and not self._thread.is_alive():
                    raise _Unavailable(f"the SPARQL server failed: {self._failure}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise _Unavailable("the SPARQL server is restarting; try again")
                self._cond.wait(min(remaining, 0.5))
            return self.generation, self._port

    def restart(self, generation: int, reason: str) -> None:
        """Kill and restart the worker of *generation* (if it is still the current one)."""
        with self._cond:
            if generation == self.generation and self._ready and not self._stopping:
                self.log(f"restarting the SPARQL worker: {reason}")
                self._ready = False
                self._restart = True
                self.restarts += 1
                self._cond.notify_all()

    def out_of_memory(self, generation: int, wait: float = 2.0) -> bool:
        """Whether the worker of *generation* died of the memory cap. Its connections break as it
        dies, a moment before it is gone: this waits for that (0.2 s), then for its last words."""
        if not self.max_memory:
            return False
        with self._cond:
            proc = self._proc if generation == self.generation else None
        if proc is not None:
            end = time.monotonic() + 0.2
            while proc.poll() is None and time.monotonic() < end:
                time.sleep(0.01)
            if proc.poll() is None:
                return False  # alive: the connection broke for another reason
        end = time.monotonic() + wait
        with self._cond:
            while generation not in self._drained and time.monotonic() < end:
                self._cond.wait(0.05)
            return generation in self._out_of_memory

    def current(self, generation: int) -> bool:
        """Whether *generation* is the running worker (not restarted, nor asked to restart)."""
        with self._cond:
            return generation == self.generation and self._ready

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def stop(self, wait: float = 10.0) -> None:
        with self._cond:
            self._stopping = True
            self._ready = False
            self._cond.notify_all()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(wait)
        self._kill(self._proc, gentle=True)
        for proc in self._dying:  # killed workers: make sure they are gone, not left as zombies
            self._kill(proc, gentle=False)

    # -- the supervisor thread
    def _supervise(self) -> None:
        crashes: deque[float] = deque(maxlen=5)
        try:
            while True:
                with self._cond:
                    if self._stopping:
                        return
                try:
                    proc, port = self._spawn()
                except KGError as e:
                    with self._cond:
                        self._failure = str(e)
                        self._cond.notify_all()
                    return
                with self._cond:
                    self._proc, self._port = proc, port
                    self.generation += 1
                    self._ready = not self._stopping
                    self._failure = None
                    self._cond.notify_all()
                    while not self._stopping and not self._restart and proc.poll() is None:
                        self._cond.wait(0.25)
                    asked, self._restart, self._ready = self._restart, False, False
                    self._cond.notify_all()
                if self._stopping:
                    return
                if asked:  # SIGKILL now; reaped in the background while the next one starts
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    self._dying.append(proc)
                    threading.Thread(target=proc.wait, name="kg-serve-reaper", daemon=True).start()
                    continue
                self._kill(proc, gentle=False)
                crashes.append(time.monotonic())
                detail = " / ".join(list(self._stderr)[-3:]) or f"exit code {proc.returncode}"
                self.log(f"the SPARQL worker stopped unexpectedly ({detail}); starting it again")
                if len(crashes) == crashes.maxlen and crashes[-1] - crashes[0] < 60:
                    with self._cond:
                        self._failure = f"it stopped {crashes.maxlen} times within a minute ({detail})"
                        self._cond.notify_all()
                    return
                time.sleep(0.2)
        finally:
            with self._cond:
                self._ready = False
                self._cond.notify_all()
            self._kill(self._proc, gentle=True)

    def _spawn(self) -> tuple[subprocess.Popen, int]:
        last = ""
        for _ in range(5):
            port = _free_port()
            cmd = [self.exe, "serve-read-only", "--location", str(self.location), "--bind", f"127.0.0.1:{port}"]
            try:
                proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        start_new_session=True, close_fds=True,
                                        preexec_fn=_child_setup(os.getpid(), self.max_memory))
            except OSError as e:
                raise KGError(f"cannot run {self.exe} ({e.strerror or e})") from e
            self._stderr.clear()
            threading.Thread(target=self._drain, args=(proc, self.generation + 1), name="kg-serve-oxigraph-stderr",
                             daemon=True).start()
            deadline = time.monotonic() + _WORKER_START
            while time.monotonic() < deadline and proc.poll() is None and not self._stopping:
                if self._answers(port):
                    return proc, port
                time.sleep(0.02)
            self._kill(proc, gentle=False)
            last = " / ".join(self._stderr) or f"exit code {proc.returncode}"
            if self._stopping:
                raise KGError("stopped while starting")
            if "in use" not in last.lower():
                break
        raise KGError(last or "oxigraph did not answer")

    @staticmethod
    def _answers(port: int) -> bool:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            conn.request("GET", "/query?query=ASK%7B%7D", headers={"Accept": "application/sparql-results+json"})
            return conn.getresponse().status == 200
        except (OSError, http.client.HTTPException):
            return False
        finally:
            conn.close()

    def _drain(self, proc: subprocess.Popen, generation: int) -> None:
        """Keep the worker's last lines of stderr, and note when it ran out of memory."""
        assert proc.stderr is not None
        for raw in proc.stderr:
            line = raw.decode("utf-8", "replace").strip()
            if line and not line.startswith("Listening for requests"):
                self._stderr.append(line)
            if _OUT_OF_MEMORY.search(line):
                with self._cond:
                    self._out_of_memory.add(generation)
        proc.stderr.close()
        with self._cond:
            self._drained.add(generation)
            self._cond.notify_all()

    @staticmethod
    def _kill(proc: subprocess.Popen | None, *, gentle: bool) -> None:
        """Stop *proc* and its process group (SIGTERM then SIGKILL, or SIGKILL) and reap it."""
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM if gentle else signal.SIGKILL)
        try:
            proc.wait(3 if gentle else 30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


class _Pool:
    """Keep-alive connections to the current worker."""

    def __init__(self, worker: _Worker) -> None:
        self.worker = worker
        self._idle: list[tuple[int, http.client.HTTPConnection]] = []
        self._lock = threading.Lock()

    def get(self, deadline: float) -> tuple[int, http.client.HTTPConnection, bool]:
        generation, port = self.worker.acquire(deadline)
        with self._lock:
            while self._idle:
                gen, conn = self._idle.pop()
                if gen == generation:
                    return gen, conn, True
                conn.close()
        return generation, http.client.HTTPConnection("127.0.0.1", port, timeout=max(0.05, deadline - time.monotonic())), False

    def put(self, generation: int, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if generation == self.worker.generation and len(self._idle) < 64:
                self._idle.append((generation, conn))
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            for _, conn in self._idle:
                conn.close()
            self._idle.clear()


# --------------------------------------------------------------------------------------------
# The front


_JSON_REQUEST = 'the body must be a JSON object: {"name": "QUERY", "bindings": {"VARIABLE": "value", ...}}'


def _json_request(body: bytes) -> tuple[str, dict[str, str]]:
    """The query name and bindings of a JSON ``/api/query`` body; `ValueError` with the reason."""
    try:
        data = json.loads(body or b"{}")
    except (ValueError, RecursionError) as e:
        raise ValueError(f"{_JSON_REQUEST}; it is not JSON ({e.__class__.__name__})") from e
    if not isinstance(data, dict):
        raise ValueError(_JSON_REQUEST)
    name, bindings = data.get("name", ""), data.get("bindings") or {}
    if not isinstance(name, str):
        raise ValueError(f'"name" must be a string (a query of /queries), not {json.dumps(name)[:80]}')
    if not isinstance(bindings, dict):
        raise ValueError('"bindings" must be an object of variable names and values')
    out = {}
    for k, v in bindings.items():
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise ValueError(f'binding {k!r} must be a string or a number, not {json.dumps(v)[:80]}')
        if str(v) != "":
            out[k] = str(v)
    return name, out


class _Front(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address, handler, app: Server) -> None:
        self.app = app
        self.connections: set[socket.socket] = set()
        self._conn_lock = threading.Lock()
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, handler)

    def server_bind(self) -> None:  # without HTTPServer's reverse DNS lookup of the address
        import socketserver

        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]

    def process_request(self, request, client_address):
        with self._conn_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        with self._conn_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._conn_lock:
            for conn in list(self.connections):
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request, client_address):  # a client that went away is not an error
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError, socket.timeout)):
            return
        super().handle_error(request, client_address)


_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data: blob:; "
        "connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kg-serve"
    timeout = 120  # idle keep-alive connections are closed after this
    server: _Front

    def version_string(self) -> str:
        return self.server_version

    # -- plumbing
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        self.server.app.access_log(f"{self.address_string()} {format % args}")

    def _send(self, status: int, body: bytes, ctype: str, headers: Mapping[str, str] = {}) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _text(self, status: int, message: str) -> None:
        self._send(status, (message.rstrip("\n") + "\n").encode("utf-8"), "text/plain; charset=utf-8")

    def _json(self, data, status: int = 200) -> None:
        self._send(status, json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"),
                   "application/json; charset=utf-8")

    def _body(self) -> bytes | None:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self.close_connection = True
            self._text(411, "send the request body with a Content-Length")
            return None
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > _MAX_REQUEST:
            self.close_connection = True
            self._text(413, f"the request body must be at most {_MAX_REQUEST} bytes")
            return None
        return self.rfile.read(length) if length else b""

    def _host_ok(self) -> bool:
        """When bound to loopback, only local host names (a guard against DNS rebinding)."""
        if not self.server.app.loopback:
            return True
        host = (self.headers.get("Host") or "").strip().lower()
        if not host:  # HTTP/1.0 without Host: not a browser, so not a rebinding attack
            return True
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return name.strip("[]") in _LOOPBACK

    # -- methods
    def do_GET(self) -> None:
        self._route("GET")

    def do_HEAD(self) -> None:
        self._route("HEAD")

    def do_POST(self) -> None:
        self._route("POST")

    def _route(self, method: str) -> None:
        app = self.server.app
        if len(self.headers.get_all("Host") or ()) > 1:
            self.close_connection = True
            return self._text(400, "a request must have one Host header, not several")
        if not self._host_ok():
            self.close_connection = True
            return self._text(421, "this server answers only to 127.0.0.1, localhost or [::1]")
        url = urlsplit(self.path)
        path = url.path
        try:
            if path in ("/sparql", "/query", "/update"):
                return self._sparql(method, path, url.query)
            if method == "POST" and path != "/api/query":
                self._body()
                return self._send(405, f"{path} takes GET\n".encode(), "text/plain; charset=utf-8", {"Allow": "GET, HEAD"})
            if path in ("/", "/index.html"):
                return self._send(200, app.explorer_page(), "text/html; charset=utf-8", {"Content-Security-Policy": _CSP})
            if path == "/queries":
                return self._json(canned_queries())
            if path == "/api/status":
                return self._json(app.status())
            if path == "/api/query":
                return self._named_query(method, url.query)
            if path.startswith("/api/"):
                return self._explorer_api(path, parse_qs(url.query))
            if path == "/favicon.ico":
                return self._send(204, b"", "image/x-icon")
            self._text(404, f"no such page: {path}; see / (explorer), /sparql (SPARQL endpoint), /queries")
        except KGError as e:
            self._text(400, str(e))

    def _explorer_api(self, path: str, params: dict[str, list[str]]) -> None:
        explorer = self.server.app.explorer
        first = lambda k, d="": (params.get(k) or [d])[0]
        if path == "/api/search":
            try:
                limit = max(1, min(int(first("limit", "20")), 100))
            except ValueError:
                return self._text(400, "limit must be a whole number")
            return self._json(explorer.search(first("q"), limit=limit))
        if path == "/api/graph":
            try:
                min_papers = max(1, int(first("min_papers", "1") or 1))
            except ValueError:
                return self._text(400, "min_papers must be a whole number")
            return self._json(explorer.graph_data(venue=first("venue") or None, min_papers=min_papers))
        if path in ("/api/node", "/api/neighborhood"):
            node = first("id")
            data = explorer.node(node) if path == "/api/node" else explorer.neighborhood(node)
            if data is None:
                return self._text(404, f"no node {node!r} in the graph")
            return self._json(data)
        self._text(404, f"no such page: {path}")

    def _named_query(self, method: str, qs: str) -> None:
        params = parse_qs(qs, keep_blank_values=True)
        name = (params.get("name") or [""])[0]
        bindings: list[str] | dict = params.get("bind", [])
        if method == "POST":
            body = self._body()
            if body is None:
                return
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if ctype == "application/json":
                try:
                    name, bindings = _json_request(body)
                except ValueError as e:
                    return self._text(400, str(e))
            else:
                form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
                name = (form.get("name") or [name])[0]
                bindings = list(bindings) + form.get("bind", [])
        query = bound_query(name, bindings)
        check_federation(query, self.server.app.allowed_services)
        accept = self.headers.get("Accept") or "application/sparql-results+json"
        if "html" in accept:
            accept = "application/sparql-results+json"
        self._forward("POST", "/query", urlencode({"query": query}).encode("utf-8"),
                      {"Content-Type": "application/x-www-form-urlencoded", "Accept": accept})

    def _sparql(self, method: str, path: str, qs: str) -> None:
        if method == "HEAD":
            method = "GET"
        body = b""
        ctype_full = self.headers.get("Content-Type") or ""
        ctype = ctype_full.split(";")[0].strip().lower()
        target = "/update" if path == "/update" else "/query"
        if method == "POST":
            read = self._body()
            if read is None:
                return
            body = read
            if ctype == "application/sparql-update":
                target = "/update"
            elif ctype == "application/x-www-form-urlencoded":
                form = parse_qs(body.decode("utf-8", "replace"))
                if "update" in form and "query" not in form:
                    target = "/update"
        elif "update" in parse_qs(qs) and "query" not in parse_qs(qs):
            target = "/update"
        texts = [v for k, vs in parse_qs(qs).items() if k in ("query", "update") for v in vs]
        if method == "POST":
            if ctype in ("application/sparql-query", "application/sparql-update"):
                texts.append(body.decode("utf-8", "replace"))
            elif ctype == "application/x-www-form-urlencoded":
                form = parse_qs(body.decode("utf-8", "replace"))
                texts += [v for k, vs in form.items() if k in ("query", "update") for v in vs]
        for text in texts:
            check_federation(text, self.server.app.allowed_services)
        headers = {"Accept": self.headers.get("Accept") or "*/*"}
        if method == "POST":
            headers["Content-Type"] = ctype_full
        self._forward(method, target + (f"?{qs}" if qs else ""), body if method == "POST" else None, headers)

    def _forward(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> None:
        """Send a request to the worker and its answer to the client, within the query deadline.

        At most `Server.concurrency` requests run in the worker at once (others wait their
        turn, up to `Server.queue_wait` seconds): a query's clock starts when it is sent, so
        its timeout measures its own run, not the queue in front of it. The answer is read
        whole into a spool (memory, then a temporary file) and checked before the slot is
        given back and the answer sent, so a client that reads slowly, or not at all, holds
        only its spool and its own thread, never a slot of the worker.
        """
        app = self.server.app
        if not app.slots.acquire(timeout=app.queue_wait):
            return self._text(503, f"the server is busy: {app.concurrency} queries are running and others are "
                                   f"waiting; try again")
        try:
            answer = self._dispatch(app, method, path, body, headers)
        finally:
            app.slots.release()
        if answer is not None:
            with answer:
                self._send_answer(answer)

    def _dispatch(self, app: Server, method: str, path: str, body: bytes | None,
                  headers: dict[str, str]) -> _Answer | None:
        """The worker's whole answer, or None when an error was sent instead."""
        start = time.monotonic()
        deadline = start + app.timeout
        attempt = 0
        while True:
            attempt += 1
            try:
                generation, conn, reused = app.pool.get(deadline)
            except _Unavailable as e:
                return self._text(503, str(e))
            received = False
            spool = tempfile.SpooledTemporaryFile(max_size=_MAX_BUFFER)
            try:
                conn.timeout = max(0.01, deadline - time.monotonic())
                conn.request(method, path, body=body, headers=headers)
                conn.sock.settimeout(max(0.01, deadline - time.monotonic()))
                resp = conn.getresponse()
                received = True
                while True:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise TimeoutError
                    conn.sock.settimeout(remaining)
                    data = resp.read1(1 << 16)
                    if not data:
                        break
                    spool.write(data)
                if resp.will_close:
                    conn.close()
                else:
                    app.pool.put(generation, conn)
                answer = _Answer(resp.status, {k: resp.getheader(k) for k in _ANSWER_HEADERS if resp.getheader(k)}, spool)
                problem = answer.problem() if resp.status == 200 else None
                if problem:
                    answer.close()
                    return self._text(502, f"the SPARQL server failed while writing its answer: {problem}")
                app.answered += 1
                return answer
            except (TimeoutError, socket.timeout):
                spool.close()
                conn.close()
                app.timeouts += 1
                app.worker.restart(generation, f"a query ran past the {app.timeout:g} s timeout")
                return self._text(503, f"the query ran longer than the {app.timeout:g} s timeout and was stopped")
            except (OSError, http.client.HTTPException) as e:
                spool.close()
                conn.close()
                if app.worker.out_of_memory(generation):
                    return self._text(503, f"the SPARQL server ran out of its memory limit ({app.max_memory_text}) "
                                           f"while answering and was restarted; the query was stopped")
                restarted = not app.worker.current(generation)
                if attempt < 3 and time.monotonic() < deadline and (restarted or (reused and not received)):
                    continue  # the worker was restarted under it, or a stale keep-alive connection: send again
                return self._text(502, f"the SPARQL server failed to answer ({e.__class__.__name__}: {e})")

    def _send_answer(self, answer: _Answer) -> None:
        """Send *answer*, a chunk at a time, each within `_WRITE_TIMEOUT`: a client that stops
        reading is dropped, and its spool freed, instead of being waited for."""
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Length", str(answer.size))
        self.end_headers()
        if self.command == "HEAD":
            return
        self.connection.settimeout(_WRITE_TIMEOUT)
        try:
            answer.spool.seek(0)
            while chunk := answer.spool.read(1 << 16):
                self.wfile.write(chunk)
        except (TimeoutError, socket.timeout):
            self.close_connection = True
        finally:
            self.connection.settimeout(self.timeout)


_ANSWER_HEADERS = ("Content-Type", "Content-Location", "Vary")


_CHECKED_WHOLE = 64 * 1024 * 1024  # answers up to this size are parsed whole to check them; bigger ones by their end


class _Answer:
    """A worker's answer, read whole: status, the headers passed on, and the body in a spool."""

    def __init__(self, status: int, headers: dict[str, str], spool) -> None:
        self.status, self.headers, self.spool = status, headers, spool
        self.size = spool.tell()

    def __enter__(self) -> _Answer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.spool.close()

    def _read(self, start: int = 0) -> bytes:
        self.spool.seek(start)
        return self.spool.read()

    def problem(self) -> str | None:
        """Why a ``200`` body is not a complete document, or None. Oxigraph evaluates lazily: an
        error met after the first rows (a failing SERVICE, say) is written as text into the
        results it has begun, with ``200 OK``; that must reach the client as an error."""
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        tail = self._read(max(0, self.size - 4096)).rstrip()
        whole = self.size <= _CHECKED_WHOLE
        if ctype in ("application/sparql-results+json", "application/json", "application/ld+json"):
            if whole:
                try:
                    json.loads(self._read())
                    return None
                except (ValueError, RecursionError):
                    pass
            elif tail.endswith((b"}", b"]")):
                return None
        elif ctype in ("application/sparql-results+xml", "application/rdf+xml", "application/xml"):
            if tail.endswith((b"</sparql>", b"</rdf:RDF>", b"/>")):
                return None
        elif ctype in ("text/csv", "text/tab-separated-values"):
            if not whole or _complete_table(self._read(), "\t" if "tab" in ctype else ","):
                return None
        elif ctype in ("application/n-triples", "application/n-quads", "text/turtle", "application/trig"):
            if not tail or tail.endswith(b"."):
                return None
        else:
            return None
        last = tail.rsplit(b"\n", 1)[-1].decode("utf-8", "replace").strip()
        return last[-300:] or "an incomplete answer"


def _complete_table(body: bytes, delimiter: str) -> bool:
    """Whether the last record of a SPARQL CSV/TSV result has as many fields as its header."""
    import csv

    rows = list(csv.reader(io.StringIO(body.decode("utf-8", "replace"), newline=""), delimiter=delimiter,
                           quoting=csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE))
    rows = [r for r in rows if r]
    return len(rows) < 2 or len(rows[-1]) == len(rows[0])


# --------------------------------------------------------------------------------------------
# The server


_LIVE: weakref.WeakSet[Server] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for server in list(_LIVE):
        with contextlib.suppress(Exception):
            server.stop()


class Server:
    """A running ``kg serve``: the front, the Oxigraph worker and the folder lock. Stop it with
    `stop` (or use it as a context manager)."""

    def __init__(self, graph_dir: Path, host: str, port: int, timeout: float, *, log: Log = _quiet,
                 access_log: Log = _quiet, concurrency: int | None = None, max_memory: int | None = None,
                 allow_service: Collection[str] = ()) -> None:
        from kg.explorer import Explorer
        from kg.graph import load_graph

        if timeout <= 0:
            raise KGError(f"--timeout must be positive, not {timeout}")
        self.graph_dir, self.host, self.timeout = Path(graph_dir), host, float(timeout)
        self.log, self.access_log = log, access_log
        self.loopback = host in _LOOPBACK or host.startswith("127.")
        self.max_memory = default_max_memory() if max_memory is None else int(max_memory)
        self.max_memory_text = format_size(self.max_memory)
        self.allowed_services = frozenset(_check_endpoint(e) for e in allow_service)
        self.answered = self.timeouts = 0
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 2)
        self.concurrency = max(1, concurrency or max(2, cores))  # queries running in the worker at once
        self.slots = threading.BoundedSemaphore(self.concurrency)
        self.queue_wait = max(60.0, 6 * self.timeout)
        self._stopped = False
        self._lock: _FolderLock | None = None
        self.worker: _Worker | None = None
        self._front: _Front | None = None
        self._serving = False
        if self.graph_dir.is_file() and (self.graph_dir.parent / "graph.nt").is_file():  # an output file of a build: its folder
            self.graph_dir = self.graph_dir.parent
        elif self.graph_dir.exists() and not self.graph_dir.is_dir():
            raise InputError(f"{self.graph_dir}: a file, not the output folder of a build; pass --graph FOLDER (the --out of kg build)")
        elif not self.graph_dir.is_dir():
            raise InputError(f"{self.graph_dir}: no such folder; run `kg build --out {self.graph_dir}` first, or pass --graph")
        graph_json = self.graph_dir / "graph.json"
        try:
            try:  # first, so that a busy port fails at once; connections wait in the backlog until it serves
                self._front = _Front((host, port), _Handler, self)
            except OSError as e:
                raise KGError(f"cannot listen on {host}:{port} ({e.strerror or e}); pick another --port or --host") from e
            self._lock = _FolderLock(self.graph_dir)
            exe = oxigraph_binary()
            self.store = prepare_store(self.graph_dir, oxigraph=exe, log=log, _lock=self._lock)
            self.explorer = Explorer(load_graph(graph_json), title=f"kg: {self.graph_dir.resolve().name}")
            self.worker = _Worker(exe, self.store.location, log=log, max_memory=self.max_memory)
            self.pool = _Pool(self.worker)
            self.worker.start()
            _LIVE.add(self)
            self._thread = threading.Thread(target=self._front.serve_forever, kwargs={"poll_interval": 0.2},
                                            name="kg-serve-front", daemon=True)
            self._thread.start()
            self._serving = True
        except BaseException:
            self.stop()
            raise

    @property
    def port(self) -> int:
        return self._front.server_address[1]

    @property
    def url(self) -> str:
        host = self.host if ":" not in self.host else f"[{self.host}]"
        return f"http://{host}:{self.port}/"

    @property
    def sparql_url(self) -> str:
        return self.url + "sparql"

    def explorer_page(self) -> bytes:
        return self.explorer.page()

    def status(self) -> dict:
        return {"graph": str(self.graph_dir), "triples": self.store.triples, "timeout": self.timeout,
                "concurrency": self.concurrency, "max_memory": self.max_memory,
                "allowed_services": sorted(self.allowed_services),
                "worker": {"pid": self.worker.pid, "generation": self.worker.generation, "restarts": self.worker.restarts},
                "answered": self.answered, "timeouts": self.timeouts}

    def stop(self) -> None:
        """Stop answering, stop the worker, release the folder. Safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        if self._front is not None:
            if self._serving:
                self._front.shutdown()
            self._front.server_close()
            self._front.close_connections()
        if self.worker is not None:
            self.worker.stop()
            self.pool.close()
        if self._lock is not None:
            self._lock.close()
        _LIVE.discard(self)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start_server(graph_dir: str | os.PathLike = "outputs", host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                 timeout: float = DEFAULT_TIMEOUT, *, log: Log = _quiet, access_log: Log = _quiet,
                 concurrency: int | None = None, max_memory: int | None = None,
                 allow_service: Collection[str] = ()) -> Server:
    """Serve the build in *graph_dir* (explorer at ``/``, SPARQL at ``/sparql``) until `Server.stop`.

    Loads or reuses the Oxigraph store, starts ``oxigraph serve-read-only`` on a loopback port and
    kg's front on *host*:*port* (``port=0``: any free port, see `Server.url`), in background
    threads. Queries are stopped after *timeout* seconds; at most *concurrency* run at once
    (default: the number of CPU cores, at least 2), the others wait their turn. The worker's
    heap is capped at *max_memory* bytes (default `default_max_memory`; 0: no cap). ``SERVICE``
    clauses are refused unless their endpoint is one of *allow_service*.
    """
    return Server(Path(graph_dir), host, port, timeout, log=log, access_log=access_log, concurrency=concurrency,
                  max_memory=max_memory, allow_service=allow_service)


def _check_endpoint(iri: str) -> str:
    try:
        parts = urlsplit(iri)
    except ValueError:
        parts = urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.netloc or re.search(r'[<>"{}|^`\\\x00-\x20]', iri):
        raise InputError(f"--allow-service {iri!r}: give the endpoint's full http(s) IRI")
    return iri


# --------------------------------------------------------------------------------------------
# The command line


@click.command("serve", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--graph", "graph_dir", default="outputs", show_default=True, type=click.Path(path_type=Path),
              help="Folder of a `kg build` (its graph.nt and graph.json).")
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="Address to listen on; another than 127.0.0.1 only if asked.")
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=click.IntRange(0, 65535), help="Port (0: any free one).")
@click.option("--timeout", default=DEFAULT_TIMEOUT, show_default=True, type=click.FloatRange(min=0.1, max=86400),
              help="Seconds a SPARQL query may run before it is stopped.")
@click.option("--max-memory", "max_memory", default=None, metavar="SIZE",
              help="Memory the SPARQL engine may use (4G, 512M; 0: no limit); a query past it is stopped "
                   "with 503. Default: a quarter of this machine's memory.")
@click.option("--allow-service", "allow_service", multiple=True, metavar="IRI",
              help="A SPARQL endpoint that queries may call with SERVICE (repeatable). Federated queries are "
                   "refused otherwise.")
@click.option("--log", "access", is_flag=True, help="Print a line for every request.")
def serve_command(graph_dir: Path, host: str, port: int, timeout: float, max_memory: str | None,
                  allow_service: tuple[str, ...], access: bool) -> None:
    """Serve the graph built into --graph: the explorer at / and the SPARQL endpoint at /sparql."""
    say = lambda m: click.echo(f"kg serve: {m}", err=True)
    stop = threading.Event()
    received: list[str] = []

    def on_signal(signum, _frame) -> None:
        received.append(signal.Signals(signum).name)
        stop.set()

    handled = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {s: signal.signal(s, on_signal) for s in handled}
    try:
        server = start_server(graph_dir, host, port, timeout, log=say, access_log=say if access else _quiet,
                              max_memory=None if max_memory is None else parse_size(max_memory),
                              allow_service=allow_service)
        try:
            s = server.explorer.summary
            click.echo(f"serving {graph_dir} ({s['papers']} papers, {s['concepts']} concepts, {server.store.triples} triples)")
            click.echo(f"  explorer:        {server.url}")
            click.echo(f"  SPARQL endpoint: {server.sparql_url}  (read-only; queries stop after {timeout:g} s "
                       f"or {server.max_memory_text} of memory)")
            click.echo("Press Ctrl-C to stop.", nl=True)
            sys.stdout.flush()
            while not stop.wait(0.5):
                if server.worker._failure is not None and not server.worker._thread.is_alive():
                    raise KGError(f"the SPARQL server failed: {server.worker._failure}")
        finally:
            server.stop()
        if received:
            say(f"stopped ({received[0]})")
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def main(argv: list[str] | None = None) -> None:
    """``python -m kg.serve [options]``: `serve_command` with kg's error handling."""
    try:
        serve_command.main(args=argv, prog_name="kg serve", standalone_mode=False)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except KGError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(e.exit_code)
    sys.exit(0)


if __name__ == "__main__":
    main()
