"""The on-disk Oxigraph store of a build folder: loaded from ``graph.nt``, updated by diff, locked.

``DIR/store/data`` holds the Oxigraph data and ``DIR/store/source.json`` what it was loaded
from; the folder is ``flock``-ed, shared while serving, exclusive while reloading.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kg.common.folders import STORE, STORE_SOURCE
from kg.common.locks import FolderLock
from kg.common.logs import Log, quiet
from kg.common.processes import dies_with_parent
from kg.errors import InputError, KGError, OutputError
from kg.scale.executor import same_kg_env
from kg.sparql.loading import (
    load_in_process,
    load_with_program,
    same_library,
    store_command,
)

# --------------------------------------------------------------------------------------------
# The store


@dataclass(frozen=True)
class StoreInfo:
    """The Oxigraph store of a build folder: where its data is, how many triples, reloaded or not."""

    location: Path
    triples: int
    reloaded: bool


def oxigraph_binary() -> str:
    """The ``oxigraph`` program of the PyPI package ``oxigraph``: beside this Python, where that
    package installed it, else on PATH."""
    beside = Path(sys.executable).with_name("oxigraph")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        installed = [Path(f.locate()) for f in distribution("oxigraph").files or () if f.name == "oxigraph"]
    except PackageNotFoundError:
        installed = []
    for path in installed:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path.resolve())
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


def _graph_source(nt: Path, version: str) -> dict:
    st = nt.stat()
    return {"file": nt.name, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "oxigraph": version}


def _fresh(store: Path, source: dict) -> int | None:
    """The triple count of *store* if it was loaded from *source*, else None."""
    from kg.text.files import read_json

    recorded = read_json(store / STORE_SOURCE)
    if not isinstance(recorded, dict) or not (store / "data" / "CURRENT").is_file() or any(recorded.get(k) != v for k, v in source.items()):
        return None
    triples = recorded.get("triples")
    return triples if isinstance(triples, int) else None


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
        (tmp / STORE_SOURCE).write_text(json.dumps(source | {"triples": triples}, indent=1) + "\n", encoding="utf-8")
        old = None
        if store.exists() or store.is_symlink():
            old = folder / f".store-old-{os.getpid()}-{time.monotonic_ns()}"
            os.rename(store, old)
        os.rename(tmp, store)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as e:
        raise OutputError(f"{store}: cannot write the store ({e.strerror or e})") from e


def _exclusive(lock: FolderLock, folder: Path) -> None:
    if not lock.try_exclusive():
        raise OutputError(f"{folder}: another `kg serve` is serving its store and graph.nt has changed since; "
                          "stop that server first")


def prepare_store(graph_dir: str | os.PathLike = "outputs", *, oxigraph: str | None = None, log: Log = quiet,
                  _lock: FolderLock | None = None) -> StoreInfo:
    """The on-disk Oxigraph store of the build in *graph_dir*, (re)loaded from its ``graph.nt`` if needed.

    A new store is loaded into a temporary folder, checked, and renamed to ``graph_dir/store``
    only when whole. Raises `InputError` when the folder holds no build and `OutputError`
    when the store cannot be written. *_lock* is the folder's lock when the caller has one: a
    server's (shared, made exclusive for the reload) or a build's (exclusive, left so).
    """
    folder = Path(graph_dir)
    nt = folder / "graph.nt"
    if not nt.is_file():
        raise InputError(f"{nt}: no such file; run `kg build --out {folder}` first, or pass --graph")
    exe = oxigraph or oxigraph_binary()
    version = _oxigraph_version(exe)
    source = _graph_source(nt, version)
    store = folder / STORE
    lock = _lock or FolderLock(folder)
    held = lock.mode == "exclusive"  # a build's lock: kept as it is
    try:
        if not held:
            if not lock.try_shared():
                log(f"waiting for the kg build writing into {folder}/ to end")
                lock.shared()
        triples = _fresh(store, source)
        if triples is not None:
            return StoreInfo(store / "data", triples, False)
        if not held:
            _exclusive(lock, folder)
        try:
            triples = _fresh(store, source)  # someone may have reloaded it meanwhile
            if triples is not None:
                return StoreInfo(store / "data", triples, False)
            log(f"loading {nt} into {store}/")
            _remove_stale(folder)
            tmp, fd = _new_store_folder(folder)
            try:
                triples = load_in_process(tmp, nt=nt) if same_library(version) else load_with_program(exe, nt, tmp)
                _install(folder, tmp, source, triples)
            finally:
                os.close(fd)
                if tmp.exists():
                    shutil.rmtree(tmp, ignore_errors=True)
            return StoreInfo(store / "data", triples, True)
        finally:
            if not held:
                lock.shared()  # back to shared: serving
    finally:
        if _lock is None:
            lock.close()


class StoreLoad:
    """The store of a build being made while the build writes its other outputs: `kg build`
    starts it as soon as it opens the N-Triples file *nt* (``follow=True``: the store is made
    from each piece as it is written, and `written` says when the file is whole) or from the
    whole file (*nt* must stay in place until `wait` returns), into a temporary folder, in a
    new Python process (`_store_main`): its
    memory is not the build's, and it has its own interpreter lock and none of RocksDB's
    threads (a forked copy of a process that has opened a store would wait forever for them).
    When the folder's current store is up to date with its current ``graph.nt`` (the previous
    build's), the new store is that one updated with the lines that differ between the two
    files (`_update_in_process`, `_update_following`); otherwise it is loaded whole. Where no
    process can be started it is loaded in a thread of this one, once the file is whole
    (pyoxigraph's bulk loader runs outside the GIL).
    `finish`, once ``graph.nt`` is written, records that file's size and mtime (the freshness
    marker `prepare_store` and `kg.sparql.persistent_store` check) and renames the store into
    place, as `prepare_store` would. `discard` drops it (a failed build). When pyoxigraph is
    not the ``oxigraph`` program's version, `finish` falls back to `prepare_store`.
    """

    def __init__(self, graph_dir: str | os.PathLike, nt: str | os.PathLike, *, oxigraph: str | None = None,
                 follow: bool = False) -> None:
        self.folder = Path(graph_dir)
        self._follow = follow  # *nt* is still being written: `written` says when it is whole
        self._load_later: Callable[[], None] | None = None
        self.exe = oxigraph or oxigraph_binary()
        self.version = _oxigraph_version(self.exe)
        self.how: str | None = None  # "updated" or "loaded", once made
        self._tmp: Path | None = None
        self._fd: int | None = None
        self._result: list = []
        self._thread: threading.Thread | None = None
        self._process: subprocess.Popen | None = None
        if not same_library(self.version):
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
            command = store_command(tmp, nt=nt, previous=previous / "data", previous_nt=previous_nt, follow=follow)
        else:
            command = store_command(tmp, nt=nt, follow=follow)
        if sys.executable:
            try:
                self._process = subprocess.Popen(command, stdin=subprocess.PIPE if follow else subprocess.DEVNULL,
                                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                                 env=same_kg_env(), preexec_fn=dies_with_parent())  # a killed build leaves no loader
                return
            except OSError:  # no process left: loaded whole in this one, below
                pass

        def run() -> None:
            try:
                self._result.append(load_in_process(tmp, nt=nt))
            except BaseException as e:  # handed to finish()
                self._result.append(e)

        self._thread = threading.Thread(target=run, name="kg-store-load", daemon=True)
        if follow:
            self._load_later = self._thread.start  # once the file is whole
        else:
            self._thread.start()

    def written(self) -> None:
        """Say that the N-Triples file being followed (``follow=True``) is whole: the process making
        the store reads it to its end and makes the store (in this process's thread: starts it)."""
        if self._load_later is not None:
            start, self._load_later = self._load_later, None
            start()
        elif self._follow and self._process is not None and self._process.stdin is not None:
            with contextlib.suppress(OSError):  # a process that stopped already: `wait` says why
                self._process.stdin.write("done\n")
                self._process.stdin.close()
            self._process.stdin = None

    @property
    def _started(self) -> bool:
        return self._thread is not None or self._process is not None

    def wait(self) -> None:
        """Wait until the N-Triples are read (the store is made)."""
        if self._load_later is not None or (self._follow and self._process is not None and self._process.stdin is not None):
            raise RuntimeError("StoreLoad.wait before written(): the file followed is not whole")
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

    def finish(self, *, lock: FolderLock | None = None) -> StoreInfo:
        """Put the store in place; *lock* is the folder's, when the caller holds it (a build)."""
        if not self._started:
            return prepare_store(self.folder, oxigraph=self.exe, _lock=lock)
        try:
            self.ready()
            triples = self._result[0]
            nt = self.folder / "graph.nt"
            source = _graph_source(nt, self.version)
            own = lock is None or lock.mode != "exclusive"
            if own:
                lock = FolderLock(self.folder)
            try:
                if own:
                    lock.shared()
                    _exclusive(lock, self.folder)
                _install(self.folder, self._tmp, source, triples)
            finally:
                if own:
                    lock.close()
            return StoreInfo(self.folder / STORE / "data", triples, True)
        finally:
            self._cleanup()

    def discard(self) -> None:
        if self._load_later is not None:  # a thread never started: nothing to wait for
            self._load_later = self._thread = None
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
        if self._process is not None and self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
            self._process.stdin = None
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
