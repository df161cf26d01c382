"""Where extraction runs: in this process, or on a Dask cluster, partition by partition.

Three executors, named by a spec (``kg build --executor``):

- ``local``: in this process, one partition after the other (the default);
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
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from typing import Any, Protocol
from urllib.parse import urlsplit

from kg.errors import ExecutorError

__all__ = [
    "DEFAULT_PARTITION_SIZE",
    "Executor",
    "ExecutorSpec",
    "extract_partition",
    "open_executor",
    "parse_executor",
    "partitions",
    "run_partitions",
]

DEFAULT_PARTITION_SIZE = 256
DEFAULT_SCHEDULER_PORT = 8786
CONNECT_TIMEOUT = 10  # seconds to wait for a dask:// scheduler to answer
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
        if not n.isdigit() or int(n) < 1:
            raise ExecutorError(f"executor {text!r}: the number of workers must be a whole number of at least 1 (dask-local:2)")
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
        from distributed import as_completed
        from distributed import KilledWorker

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
            # at every batch. Measured on 1,000 abstracts, int8, dask-local:2: 134.6 s wall and 71 s
            # of system time with it, 95.2 s and 18.5 s without (peak per worker 1.08 -> 1.42 GiB).
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


_load_lock = threading.Lock()


def _packaged_embedder(precision: str = "fp32"):
    """The packaged model, loaded once per process (a worker with several threads too)."""
    from kg.embed import load_embedder

    with _load_lock:
        return load_embedder(precision)


def _packaged_nlp():
    """The packaged spaCy pipeline, loaded once per process."""
    from kg.extract import load_nlp

    with _load_lock:
        return load_nlp()


def extract_partition(items: Sequence[tuple[str, str]], *, settings, embedder=None, nlp=None) -> list:
    """The keyphrases of one partition of (paper id, document): the task every executor runs.

    With no *embedder* (or *nlp*), the packaged one is loaded in this process, once."""
    from kg.extract import extract_keyphrases

    embedder = _packaged_embedder(settings.precision) if embedder is None else embedder
    nlp = _packaged_nlp() if nlp is None else nlp
    return extract_keyphrases(list(items), embedder, settings=settings, nlp=nlp)


def _is_packaged(embedder) -> bool:
    from kg.embed import MODEL_NAME, SentenceEmbedder

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
    kwargs: dict[str, Any] = {"settings": settings}
    if executor.spec.kind == "local":
        kwargs |= {"embedder": embedder, "nlp": nlp}
    elif embedder is not None and not _is_packaged(embedder):
        kwargs["embedder"] = embedder
    for _, result in executor.map_partitions(extract_partition, parts, **kwargs):
        yield result
