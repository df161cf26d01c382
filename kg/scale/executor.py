"""Where extraction runs: in a process of its own, in this one, or on a Dask cluster, partition by partition.

Three executors, named by a spec (``kg build --executor``):

- ``local``: one partition after the other, in this process or in a `ModelProcess` that
  `kg.build` starts before it reads the abstracts (the default);
- ``dask://HOST:PORT``: an existing Dask distributed scheduler and its workers;
- ``dask-local[:N]``: a `distributed.LocalCluster` of N worker processes (one thread each),
  started and stopped by kg.

The documents to extract are cut into partitions of a fixed size, in input order. Every
executor runs the same function, `extract_partition`, on each partition, and a partition is
self-contained (its candidates are embedded within it), so the results do not depend on the
executor, nor on which worker ran which partition or how often. A worker loads the packaged
model and spaCy pipeline once (per process) and keeps them; the model is never sent from the
client. Results come back partition by partition as they finish, so the caller can checkpoint
each one (`kg.pipeline` writes it to the extraction cache at once).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from typing import Any, Protocol
from urllib.parse import urlsplit

from kg.common.processes import dies_with_parent
from kg.errors import ExecutorError, ModelError

__all__ = [
    "DEFAULT_PARTITION_SIZE",
    "Executor",
    "ExecutorSpec",
    "ModelProcess",
    "SharedExecutor",
    "entity_partition",
    "extract_partition",
    "open_executor",
    "parse_executor",
    "partitions",
    "run_partitions",
    "run_tasks",
]

DEFAULT_PARTITION_SIZE = 256
DEFAULT_SCHEDULER_PORT = 8786
CONNECT_TIMEOUT = 10  # seconds to wait for a dask:// scheduler to answer
MAX_LOCAL_WORKERS = 1024  # worker processes kg starts on this machine (each loads the model: ~0.5-1.4 GiB)
SPEC_FORMS = "local, dask-local[:N] or dask://HOST:PORT"


@dataclass(frozen=True)
class ExecutorSpec:
    """A parsed executor spec: its kind, the scheduler address or the number of local
    workers, and how many documents make one partition."""

    kind: str  # "local", "dask" or "dask-local"
    address: str | None = None  # "dask": the scheduler, e.g. tcp://10.0.0.5:8786
    workers: int | None = None  # "dask-local": worker processes
    partition_size: int = DEFAULT_PARTITION_SIZE

    def __post_init__(self) -> None:
        if self.kind not in ("local", "dask", "dask-local"):
            raise ExecutorError(f"executor kind {self.kind!r} is not one of local, dask, dask-local")
        if self.kind == "dask" and not self.address:
            raise ExecutorError("a dask executor needs the address of its scheduler (tcp://HOST:PORT)")
        if self.kind == "dask-local" and (not isinstance(self.workers, int) or self.workers < 1):
            raise ExecutorError(f"a dask-local executor needs a whole number of workers of at least 1, not {self.workers!r}")
        if not isinstance(self.partition_size, int) or self.partition_size < 1:
            raise ExecutorError(f"partition size {self.partition_size!r} is not a whole number of documents of at least 1")

    def __str__(self) -> str:
        if self.kind == "dask":
            return "dask://" + self.address.removeprefix("tcp://") if self.address.startswith("tcp://") else self.address
        if self.kind == "dask-local":
            return f"dask-local:{self.workers}"
        return "local"


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def parse_executor(spec: str | ExecutorSpec, *, partition_size: int | None = None) -> ExecutorSpec:
    """``local``, ``dask-local`` (one worker per core), ``dask-local:N`` or ``dask://HOST:PORT``
    (port 8786 when left out) as an `ExecutorSpec`; anything else is an `ExecutorError`."""
    if isinstance(spec, ExecutorSpec):
        parsed = spec
    else:
        parsed = _parse(str(spec).strip())
    return parsed if partition_size is None else replace(parsed, partition_size=partition_size)


def _parse(text: str) -> ExecutorSpec:
    if text == "local":
        return ExecutorSpec("local")
    if text == "dask-local":
        return ExecutorSpec("dask-local", workers=_cores())
    if text.startswith("dask-local:"):
        n = text.partition(":")[2]
        if not (n.isascii() and n.isdigit()) or not 1 <= int(n) <= MAX_LOCAL_WORKERS:  # not '²', not 10**30
            raise ExecutorError(f"executor {text!r}: the number of workers must be a whole number from 1 to"
                                f" {MAX_LOCAL_WORKERS} (dask-local:2)")
        return ExecutorSpec("dask-local", workers=int(n))
    if text.startswith("dask://"):
        try:
            parts = urlsplit(text)
            host, port = parts.hostname, parts.port or DEFAULT_SCHEDULER_PORT
        except ValueError as e:
            raise ExecutorError(f"executor {text!r}: {e} (expected dask://HOST:PORT)") from None
        if not host or parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
            raise ExecutorError(f"executor {text!r}: expected dask://HOST:PORT, the address of a Dask scheduler")
        return ExecutorSpec("dask", address=f"tcp://[{host}]:{port}" if ":" in host else f"tcp://{host}:{port}")
    raise ExecutorError(f"executor {text!r} is not one of {SPEC_FORMS}")


def partitions(items: Sequence, size: int) -> list[Sequence]:
    """*items* cut into consecutive partitions of *size* (the last one shorter), in order."""
    return [items[start : start + size] for start in range(0, len(items), size)]


class Executor(Protocol):
    """Runs a function over partitions and yields (partition index, result) as each finishes."""

    spec: ExecutorSpec

    def map_partitions(self, fn: Callable, parts: Sequence[Sequence], **kwargs: Any) -> Iterator[tuple[int, Any]]:
        """``fn(part, **kwargs)`` for every part, in the order they finish."""


@dataclass(frozen=True)
class LocalExecutor:
    """In this process, one partition after the other, in order."""

    spec: ExecutorSpec = ExecutorSpec("local")

    def map_partitions(self, fn, parts, **kwargs):
        for i, part in enumerate(parts):
            yield i, fn(part, **kwargs)


@dataclass(frozen=True)
class DaskExecutor:
    """On the workers of a Dask distributed cluster; a dead worker's partitions are rerun
    on the others (Dask's own rescheduling)."""

    spec: ExecutorSpec
    client: Any  # distributed.Client

    def map_partitions(self, fn, parts, **kwargs):
        from distributed import KilledWorker, as_completed

        run = uuid.uuid4().hex[:8]
        futures = {
            self.client.submit(fn, part, **kwargs, key=f"kg-extract-{run}-{i}", pure=False): i for i, part in enumerate(parts)
        }
        try:
            for future in as_completed(futures):
                try:
                    result = future.result()
                except KilledWorker as e:
                    raise ExecutorError(f"Dask workers died running partition {futures[future]} of the extraction, too often to retry ({e})") from e
                yield futures[future], result
        finally:
            self.client.cancel(list(futures))


@contextmanager
def open_executor(spec: str | ExecutorSpec, *, partition_size: int | None = None) -> Iterator[Executor]:
    """The executor of *spec*, ready to use; a cluster kg started is stopped on leaving, every
    worker process with it, and a connection to a scheduler is closed."""
    spec = parse_executor(spec, partition_size=partition_size)
    if spec.kind == "local":
        yield LocalExecutor(spec)
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:  # pragma: no cover - a dependency of kg
        raise ExecutorError(f"executor {spec}: the Python package distributed is not installed ({e})") from e
    with ExitStack() as stack:
        if spec.kind == "dask-local":
            import logging

            import dask

            # Dask starts worker processes with MALLOC_TRIM_THRESHOLD_=65536, so that glibc hands
            # freed memory back at once; a model's activations are then mapped and faulted in afresh
            # at every batch: a third more wall time and four times the system time with it
            # (docs/scaling.md has the figures).
            environ = dask.config.get("distributed.nanny.pre-spawn-environ", {})
            environ = {k: v for k, v in environ.items() if k != "MALLOC_TRIM_THRESHOLD_"}
            stack.enter_context(dask.config.set({"distributed.nanny.pre-spawn-environ": environ}))  # workers Dask restarts too
            cluster = stack.enter_context(LocalCluster(
                n_workers=spec.workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
            ))
            client = Client(cluster)
        else:
            try:
                client = Client(spec.address, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as e:
                raise ExecutorError(f"executor {spec}: no Dask scheduler answers at {spec.address} ({e})") from None
        stack.callback(client.close)  # first, then the cluster kg started, then the configuration
        yield DaskExecutor(spec, client)


class SharedExecutor:
    """The executor of *spec*, opened the first time a stage runs partitions on it (`map_partitions`) and
    kept open for the next stages of the same build (the typed entities, the keyphrases, the rounds
    after extraction), so that a cluster kg starts is started once; `close` stops it."""

    def __init__(self, spec: ExecutorSpec) -> None:
        self.spec, self._stack, self.opened = spec, ExitStack(), None

    def map_partitions(self, fn, parts, **kwargs):
        if self.opened is None:
            self.opened = self._stack.enter_context(open_executor(self.spec))
        return self.opened.map_partitions(fn, parts, **kwargs)

    def close(self) -> None:
        self.opened = None
        self._stack.close()


_load_lock = threading.Lock()


def _packaged_embedder(precision: str):
    """The packaged model, loaded once per process (a worker with several threads too)."""
    from kg.extract.embed import load_embedder

    with _load_lock:
        return load_embedder(precision)


def _packaged_nlp():
    """The packaged spaCy pipeline, loaded once per process."""
    from kg.extract.keyphrases import load_nlp

    with _load_lock:
        return load_nlp()


def extract_partition(items: Sequence[tuple[str, str]], *, settings, embedder=None, nlp=None) -> list:
    """The keyphrases of one partition of (paper id, document): the task every executor runs.

    With no *embedder* (or *nlp*), the packaged one is loaded in this process, once."""
    from kg.extract.keyphrases import extract_keyphrases

    embedder = _packaged_embedder(settings.precision) if embedder is None else embedder
    nlp = _packaged_nlp() if nlp is None else nlp
    return extract_keyphrases(list(items), embedder, settings=settings, nlp=nlp)


def entity_partition(items: Sequence[tuple[str, str]]) -> list:
    """The typed entities of one partition of (paper id, abstract): [(paper id,
    `kg.extract.entities.PaperEntities`)], by the shipped entity model, loaded once per process."""
    from kg.extract.entities import find_entities, load_entity_model

    with _load_lock:
        model = load_entity_model()
    return list(zip([pid for pid, _ in items], find_entities([text for _, text in items], model)))


def run_tasks(items: Sequence, executor: str | ExecutorSpec | Executor, fn: Callable, **kwargs: Any) -> Iterator[list]:
    """``fn(partition, **kwargs)`` for each partition of *items*, in the order they finish, on
    *executor* (a spec, opened and closed here, or an open `Executor` or `ModelProcess`)."""
    if not items:
        return
    if hasattr(executor, "map_partitions"):
        for _, result in executor.map_partitions(fn, partitions(items, executor.spec.partition_size), **kwargs):
            yield result
        return
    with open_executor(executor) as opened:
        yield from run_tasks(items, opened, fn, **kwargs)


def rank_partition(tagged: Sequence, *, settings, embedder=None) -> list:
    """The keyphrases of one partition of tagged documents (`kg.extract.tag_documents`), as
    `extract_partition` gives them for the same documents: the half of it after spaCy."""
    from kg.extract.keyphrases import BATCH_SIZE, rank_tagged

    embedder = _packaged_embedder(settings.precision) if embedder is None else embedder
    vectors: dict = {}  # shared by the batches, as extract_keyphrases does
    return [r for start in range(0, len(tagged), BATCH_SIZE)
            for r in rank_tagged(tagged[start : start + BATCH_SIZE], embedder, settings, vectors)]


def _is_packaged(embedder) -> bool:
    from kg.extract.embed import MODEL_NAME, SentenceEmbedder

    return isinstance(embedder, SentenceEmbedder) and embedder.name == MODEL_NAME


def run_partitions(
    items: Sequence[tuple[str, str]], executor: str | ExecutorSpec | Executor, *, settings, embedder=None, nlp=None
) -> Iterator[list]:
    """Extraction results of *items*, one list per partition, in the order partitions finish.

    *executor* is a spec (opened and closed here) or an open `Executor`. Locally the given
    *embedder* and *nlp* are used. On Dask, workers load the packaged model and spaCy
    pipeline themselves (they are never sent); another embedder is pickled with each task,
    and a given *nlp* is not used.
    """
    if not items:
        return
    if hasattr(executor, "map_partitions"):
        yield from _run(items, executor, settings=settings, embedder=embedder, nlp=nlp)
        return
    with open_executor(executor) as opened:
        yield from _run(items, opened, settings=settings, embedder=embedder, nlp=nlp)


def _run(items, executor: Executor, *, settings, embedder, nlp) -> Iterator[list]:
    parts = partitions(items, executor.spec.partition_size)
    if isinstance(executor, ModelProcess):
        yield from executor.extract(parts, settings=settings, nlp=nlp)
        return
    kwargs: dict[str, Any] = {"settings": settings}
    if executor.spec.kind == "local":
        kwargs |= {"embedder": embedder, "nlp": nlp}
    elif embedder is not None and not _is_packaged(embedder):
        kwargs["embedder"] = embedder
    for _, result in executor.map_partitions(extract_partition, parts, **kwargs):
        yield result


def same_kg_env() -> dict[str, str]:
    """This process's environment, with the folder this ``kg`` package was imported from first on
    ``PYTHONPATH``, so that a new Python process imports the same kg (an installed one, a source
    checkout, or one put on ``sys.path`` by a script)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(sys.modules["kg"].__file__)))
    rest = os.environ.get("PYTHONPATH")
    return os.environ | {"PYTHONPATH": here + (os.pathsep + rest if rest else "")}


def kg_program(function: str, *args: str) -> list[str]:
    """The command that runs kg's *function* (``"kg.module:name"``, called with the *args*; what it
    returns is the exit code) in a new Python process; run it with ``env=same_kg_env()``."""
    module, _, name = function.partition(":")
    return [sys.executable, "-c", f"import sys; from {module} import {name}; sys.exit({name}(sys.argv[1:]))", *args]


def _embed_texts(texts: list[str], *, precision: str):
    return _packaged_embedder(precision).embed(texts)


class ModelProcess:
    """The packaged model in a new Python process, which loads it as soon as it starts: the
    loading (torch, sentence-transformers and the model: ~5 s) overlaps what this process does
    meanwhile (`kg.build` reads the abstracts, looks up the cache, loads spaCy and tags the
    documents to extract).

    It is the ``local`` `Executor`: `extract` tags each partition with spaCy here and ranks its
    candidates with the model there (`rank_partition`) while the next partition is tagged;
    `map_partitions` runs a function there on each partition, and `embed` embeds texts with the
    model. An error raised there is raised here; a process that stops is a `ModelError`. Not a
    fork: a fork copies no thread, and a process that has opened an Oxigraph store (a test
    suite, a notebook) has RocksDB threads. `close` stops it; `start` gives None where no
    process can be started.
    """

    def __init__(self, proc: subprocess.Popen, send, recv, log, spec: ExecutorSpec, precision: str) -> None:
        self._proc, self._send, self._recv, self._log = proc, send, recv, log
        self.spec, self.precision = spec, precision

    @classmethod
    def start(cls, precision: str, spec: ExecutorSpec = ExecutorSpec("local")) -> ModelProcess | None:
        from multiprocessing.connection import Connection

        if os.name != "posix" or not sys.executable:  # the pipes are handed over as file descriptors
            return None
        down, up = os.pipe(), os.pipe()  # (read, write): requests to it, answers from it
        log = tempfile.TemporaryFile()  # its stderr, for the message if it stops
        try:
            proc = subprocess.Popen(
                kg_program("kg.scale.executor:_model_process_main", str(down[0]), str(up[1]), precision),
                pass_fds=(down[0], up[1]), stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=same_kg_env(),
                preexec_fn=dies_with_parent(),  # it holds nothing to save: a killed build leaves no model running
            )
        except OSError:  # no process left: the caller runs the model itself
            for fd in (*down, *up):
                os.close(fd)
            log.close()
            return None
        os.close(down[0])
        os.close(up[1])
        return cls(proc, Connection(down[1], readable=False), Connection(up[0], writable=False), log, spec, precision)

    def call(self, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` run in the process (*fn* and its arguments are pickled)."""
        self._ask(fn, *args, **kwargs)
        return self._answer()

    def _ask(self, fn: Callable, *args: Any, **kwargs: Any) -> None:
        try:
            self._send.send((fn, args, kwargs))
        except OSError:
            self._stopped()

    def _answer(self) -> Any:
        try:
            kind, value = self._recv.recv()
        except (EOFError, OSError):
            self._stopped()
        if kind == "error":
            raise value
        return value

    def _stopped(self):
        code = self._proc.wait()
        raise ModelError(f"the process running the model stopped (exit code {code}{self._last_words()})") from None

    def map_partitions(self, fn, parts, **kwargs):
        for i, part in enumerate(parts):
            yield i, self.call(fn, part, **kwargs)

    def extract(self, parts: Sequence[Sequence[tuple[str, str]]], *, settings, nlp=None) -> Iterator[list]:
        """The keyphrases of each partition of (paper id, document), in order: spaCy tags it in
        this process (*nlp*, else the packaged pipeline, loaded here while the model loads
        there), the model ranks it there (`rank_partition`), while this process tags the next."""
        from kg.extract.keyphrases import load_nlp, tag_documents

        nlp = nlp or load_nlp()
        pending = False
        try:
            for part in parts:
                tagged = tag_documents(part, nlp, settings)
                if pending:
                    yield self._answer()
                self._ask(rank_partition, tagged, settings=settings)
                pending = True
            if pending:
                pending = False
                yield self._answer()
        finally:
            if pending:  # an answer that will not be read: the process cannot take another request
                self.close()

    def embed(self, texts: list[str]):
        """*texts* embedded by the packaged model (unit-length rows), as `SentenceEmbedder.embed`."""
        return self.call(_embed_texts, list(texts), precision=self.precision)

    def _last_words(self) -> str:
        self._log.seek(0)
        lines = [line for line in self._log.read().decode("utf-8", "replace").splitlines() if line.strip()]
        return f": {lines[-1].strip()}" if lines else ""

    def close(self) -> None:
        """Stop the process (at once: it holds nothing to save)."""
        for conn in (self._send, self._recv):
            conn.close()
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()
        self._log.close()

    def __enter__(self) -> ModelProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _model_process_main(argv: Sequence[str]) -> None:
    """The loop of a `ModelProcess`: load the model, then answer each request until the pipe closes."""
    import pickle
    from multiprocessing.connection import Connection

    down, up, precision = argv
    recv, send = Connection(int(down), writable=False), Connection(int(up), readable=False)
    try:  # at once, before any request (spaCy runs in the process that asks); a failure is
        _packaged_embedder(precision)  # raised again by the request that needs the model
    except Exception:  # noqa: BLE001
        pass
    while True:
        try:
            fn, args, kwargs = recv.recv()
        except EOFError:
            return
        try:
            outcome = ("ok", fn(*args, **kwargs))
        except Exception as e:  # noqa: BLE001 - handed to the caller
            outcome = ("error", e)
        try:
            message = pickle.dumps(outcome)
        except Exception:  # noqa: BLE001 - an exception or result that does not pickle
            message = pickle.dumps(("error", ModelError(f"the process running the model failed: {outcome[1]!r}")))
        send.send_bytes(message)
