"""The whole pipeline: read -> extract -> merge -> graph -> RDF, HTML, JSON outputs.

Every output is written to a temporary file in the output folder and renamed into place
only when all of them are ready, so a failed or interrupted build leaves the previous
outputs whole.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import networkx as nx

from kg.concepts.merge import merge_concepts
from kg.concepts.specificity import score_specificity
from kg.errors import OutputError, OutputsWritten
from kg.extract.keyphrases import PaperKeyphrases, Settings
from kg.graph.build import build_graph, concept_node, paper_node
from kg.graph.io import write_graph_json
from kg.graph.layout import add_map
from kg.graph.stats import graph_stats
from kg.manifest import (
    build_key,
    forget_manifest,
    outputs_intact,
    read_manifest,
    write_manifest,
)
from kg.text.chars import utf8
from kg.text.labels import paper_label
from kg.text.sources import Diagnostic, Paper, ReadReport, read_papers

__all__ = ["BuildResult", "build", "OUTPUT_FILES", "keyphrase_records", "render_outputs", "write_outputs"]

MAX_CONFLICTS_LISTED = 100  # DOIs and arXiv ids on different abstracts that stats.json names (all are counted)
OUTPUT_FILES = ("graph.ttl", "graph.nt", "graph.jsonld", "graph.html", "keyphrases.jsonl", "graph.json", "stats.json",
                "graph.gexf", "map.json")


@dataclass(frozen=True)
class BuildResult:
    """What `build` made: the graph, its figures (``stats.json``), the warnings, where the files
    are, how many abstracts were extracted and how many came from the cache
    (``extraction = {"computed": N, "from_cache": M}``), and whether nothing had changed
    (``unchanged``: every output was already up to date and none was rewritten).

    ``graph`` is the networkx graph (docs/model.md); after an unchanged rebuild it is read
    from ``graph.json`` the first time it is asked for.
    """

    stats: dict
    warnings: tuple[Diagnostic, ...]
    out: Path
    files: tuple[Path, ...] = field(default_factory=tuple)
    extraction: dict = field(default_factory=dict)
    unchanged: bool = False
    _graph: nx.Graph | None = field(default=None, repr=False, compare=False)

    @property
    def graph(self) -> nx.Graph:
        if self._graph is None:
            from kg.graph.io import load_graph

            object.__setattr__(self, "_graph", load_graph(self.out / "graph.json"))
        return self._graph


def _kg_version() -> str:
    try:
        return version("kg")
    except PackageNotFoundError:
        return "0+unknown"


def keyphrase_records(G: nx.Graph, papers: Sequence[Paper], found: Sequence[PaperKeyphrases], assignment) -> list[dict]:
    """One record per paper for ``keyphrases.jsonl``, in input order."""
    return list(_keyphrase_records(G, papers, found, assignment))


def _keyphrase_records(G: nx.Graph, papers: Sequence[Paper], found: Sequence[PaperKeyphrases], assignment) -> Iterator[dict]:
    by_id = {k.paper_id: k for k in found}
    for p in papers:
        node = G.nodes[paper_node(p.id)]
        keyphrases = [
            {"phrase": k.phrase, "concept": concept_node(assignment[(p.id, k.phrase)]) if (p.id, k.phrase) in assignment else None,
             "score": k.score, "rank": k.rank}
            for k in by_id[p.id].keyphrases
        ]
        sources = [{"file": s.file, "paragraph": s.paragraph} if s.paragraph is not None else
                   {"file": s.file, "row": s.row} if s.row is not None else {"file": s.file, "line": s.line} for s in p.sources]
        yield {
            "id": p.id, "source_id": p.source_id, "label": node["label"], "venue": p.venue, "year": p.year,
            "sources": sources, "keyphrases": keyphrases,
        }


def _write_records(f, records: Iterable[dict]) -> None:
    for r in records:
        f.write(utf8(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n"))  # a lone surrogate as U+FFFD


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class _Hashing:
    """A binary file that keeps the SHA-256 of what is written to it (for the manifest)."""

    def __init__(self, f) -> None:
        self._f = f
        self.sha256 = hashlib.sha256()

    def write(self, data) -> int:
        self.sha256.update(data)
        return self._f.write(data)

    def flush(self) -> None:
        self._f.flush()


class _Staging:
    """The output files of a build, each written to a temporary name in *out* as soon as it is
    made (so that no two are held in memory at once), then renamed into place together by
    `commit`; `discard` removes what was written. A failed build leaves the previous outputs whole."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"{self.out}: cannot create the output folder ({e.strerror})") from e
        self._staged: dict[str, Path] = {}
        self.sha256: dict[str, str] = {}  # name -> hex digest of each file written
        self.discard_stale(OUTPUT_FILES)  # temporary files a killed build left behind

    @contextmanager
    def open(self, name: str):
        """A binary file to write the output *name* to; it is synced to disk when the block ends."""
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=self.out)
            self._staged[name] = Path(tmp)
            with os.fdopen(fd, "wb", buffering=1 << 20) as raw:
                f = _Hashing(raw)
                yield f
                raw.flush()
                os.fsync(raw.fileno())
            os.chmod(tmp, 0o666 & ~_umask())
        except OSError as e:
            raise OutputError(f"{self.out}: cannot write the outputs ({e.strerror or e}); the previous outputs are unchanged") from e
        self.sha256[name] = f.sha256.hexdigest()

    def path(self, name: str) -> Path:
        """Where the output *name* was written, until `commit`."""
        return self._staged[name]

    def written(self) -> dict[str, tuple[str, str]]:
        """Each file written so far: name -> (temporary path, SHA-256), for `adopt`."""
        return {name: (str(tmp), self.sha256[name]) for name, tmp in self._staged.items() if name in self.sha256}

    def adopt(self, written: dict[str, tuple[str, str]]) -> None:
        """Take over files another process wrote into this folder (its `written`)."""
        for name, (tmp, digest) in written.items():
            self._staged[name] = Path(tmp)
            self.sha256[name] = digest

    def discard_stale(self, names: Sequence[str]) -> None:
        """Remove the temporary files of *names* that a stopped writer left (not adopted)."""
        for name in names:
            for stale in self.out.glob(f".{name}.*.tmp"):
                if stale != self._staged.get(name):
                    stale.unlink(missing_ok=True)

    def commit(self) -> list[Path]:
        """Rename every written file into place; their final paths, in `OUTPUT_FILES` order."""
        names = [name for name in OUTPUT_FILES if name in self._staged]
        in_the_way = [name for name in names if (self.out / name).is_dir()]  # a rename onto it would fail halfway
        if in_the_way:
            self.discard()
            raise OutputError(f"{self.out / in_the_way[0]}: a folder where kg writes a file; move it away and build again"
                              " (the previous outputs are unchanged)")
        try:
            for name in names:
                os.replace(self._staged[name], self.out / name)
        except OSError as e:
            raise OutputError(f"{self.out}: cannot write the outputs ({e.strerror or e}); the previous outputs are unchanged") from e
        finally:
            self.discard()
        return [self.out / name for name in names]

    def discard(self) -> None:
        for tmp in self._staged.values():
            tmp.unlink(missing_ok=True)
        self._staged.clear()


@contextmanager
def _signals_held(done: str):
    """SIGINT and SIGTERM held while the block runs (the outputs are renamed into place, a few
    milliseconds), so that the folder ends with every output of one build, never some of each.

    A SIGINT that came meanwhile is `OutputsWritten` (saying *done*) once the block is done; a SIGTERM is
    delivered again, as it came, with its handler back. Outside the main thread (where Python
    cannot set handlers) the block runs as it is."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    held = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    held = {sig: handler for sig, handler in held.items() if handler is not signal.SIG_IGN}  # ignored stays ignored
    for sig in held:
        signal.signal(sig, lambda number, frame: came.append(number))
    try:
        yield
    finally:
        for sig, handler in held.items():
            signal.signal(sig, handler)
    if signal.SIGTERM in came:
        os.kill(os.getpid(), signal.SIGTERM)
    if signal.SIGINT in came:
        raise OutputsWritten(done)


def _emit_outputs(G: nx.Graph, open_output, *, records: list[dict], stats: dict, base: str, title: str = "kg") -> None:
    """Write every output file of a build, one at a time, each to the binary file that
    ``open_output(name)`` (a context manager) gives."""
    from kg.rdf.write import write_rdf

    write_rdf(G, open_output, base=base)
    _emit_views(G, open_output, records=records, stats=stats, title=title)


VIEW_FILES = ("graph.html", "keyphrases.jsonl", "graph.json", "stats.json", "graph.gexf", "map.json")  # the outputs that are not RDF


def _emit_views(G: nx.Graph, open_output, *, records: Iterable[dict] | None, stats: dict, title: str = "kg") -> None:
    """Write the `VIEW_FILES` of a build, as `_emit_outputs` does (``keyphrases.jsonl`` only with
    *records*: a build writes it before the map, `_write`)."""
    from kg.view.page import render_html

    with open_output("graph.html") as f:
        f.write(render_html(G, title=title).encode("utf-8"))
    if records is not None:
        with open_output("keyphrases.jsonl") as f:
            _write_records(f, records)
    with open_output("graph.json") as f:
        write_graph_json(G, f)
    with open_output("stats.json") as f:
        f.write(utf8(json.dumps(stats, ensure_ascii=False, indent=2, sort_keys=True) + "\n"))
    from kg.graph.mapfiles import write_gexf, write_vosviewer_json

    with open_output("graph.gexf") as f:
        write_gexf(G, f)
    with open_output("map.json") as f:
        write_vosviewer_json(G, f, title=title)


def render_outputs(G: nx.Graph, *, records: list[dict], stats: dict, base: str, title: str = "kg") -> dict[str, bytes]:
    """The bytes of every output file of a build, by file name (`OUTPUT_FILES`)."""
    from kg.rdf.write import in_memory

    contents = in_memory(lambda open_output: _emit_outputs(G, open_output, records=records, stats=stats, base=base, title=title))
    return {name: contents[name] for name in OUTPUT_FILES}


def write_outputs(G: nx.Graph, out: Path, *, records: list[dict], stats: dict, base: str, title: str = "kg") -> list[Path]:
    """Every output file of a build, written atomically into *out*, one file in memory at a time."""
    staging = _Staging(Path(out))
    try:
        _emit_outputs(G, staging.open, records=records, stats=stats, base=base, title=title)
        return staging.commit()
    finally:
        staging.discard()


class _Forked:
    """``fn()`` run in a forked copy of this process (it sees everything this one holds, without
    copying), whose result `result` gives, or whose exception it raises. Where the platform
    cannot fork (or a fork fails), ``fn()`` runs at once, in this process."""

    def __init__(self, fn: Callable[[], object]) -> None:
        import multiprocessing

        self._proc = None
        if "fork" in multiprocessing.get_all_start_methods():
            ctx = multiprocessing.get_context("fork")
            self._recv, send = ctx.Pipe(duplex=False)
            from kg.scale.executor import dies_with_parent

            try:
                proc = ctx.Process(target=_send_outcome, args=(fn, send, dies_with_parent()), daemon=True)
                proc.start()
                self._proc = proc
            except OSError:  # no memory or process left for a fork
                self._recv.close()
            finally:
                send.close()
        if self._proc is None:
            self._now = _outcome(fn)

    def result(self):
        if self._proc is None:
            kind, value = self._now
        else:
            try:
                kind, value = self._recv.recv()
            except EOFError:
                self._proc.join()
                raise OutputError(f"the process writing the outputs stopped (exit code {self._proc.exitcode}); "
                                  "the previous outputs are unchanged") from None
            finally:
                self._recv.close()
            self._proc.join()
        if kind == "error":
            raise value
        return value

    def stop(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._proc.terminate()
            self._proc.join()


def _outcome(fn):
    try:
        return "ok", fn()
    except BaseException as e:  # given to the caller of result()
        return "error", e


def _send_outcome(fn, send, setup: Callable[[], None]) -> None:
    import pickle

    setup()  # a killed build leaves no writer behind
    kind, value = _outcome(fn)
    try:
        message = pickle.dumps((kind, value))
    except Exception:  # an exception that does not pickle
        message = pickle.dumps(("error", OutputError(f"writing the outputs failed: {value!r}")))
    send.send_bytes(message)
    send.close()


# Under ``dask-local``, fewer documents than this to extract are extracted in the model process
# (`kg.scale.executor.ModelProcess`) instead (`_runner`): the cluster's workers each load torch, spaCy
# and the model before their first partition. Measured from cold, int8, on 2 cores: 256 documents
# took 24.9 s in the model process and 43.4 s on dask-local:2; 512, 45.8 and 47.5 s; 1,024,
# 74.3 and 72.5 s (the model process tags with spaCy here while it ranks there: two cores too).
DASK_LOCAL_MIN_DOCUMENTS = 512


@dataclass(frozen=True)
class _Options:
    """What a build is asked for: `build`'s keyword arguments, *base* checked."""

    base: str | None
    settings: Settings
    embedder: object
    nlp: object
    progress: Callable[[int], None] | None
    on_start: Callable[[ReadReport], None] | None
    cache: bool
    store: bool
    executor: object
    follow_links: bool = False


@dataclass
class _Merged:
    """What extraction and the merge made, for `_write`: the read *report* and its *papers*, their
    keyphrases (*found*, *cached* of them from the cache), the concept *index*, the manifest *key*
    (None without the cache), the model's name and the settings' *fingerprint*. `_write` drops
    the per-paper parts (`release`) once the graph and the views no longer need them."""

    report: ReadReport
    papers: Sequence[Paper]
    found: Sequence[PaperKeyphrases]
    cached: int
    index: object
    key: str | None
    model_name: str
    fingerprint: str

    def release(self) -> None:
        """Drop the papers, their keyphrases, the report and the index (once keyphrases.jsonl is
        written): the map and the RDF writer that run next reuse their memory."""
        self.report = self.papers = self.found = self.index = None


def _runner(executor, models, todo: int):
    """What extracts *todo* documents: the model process *models* (when there is one) for the
    ``local`` executor, and for ``dask-local`` when *todo* is under `DASK_LOCAL_MIN_DOCUMENTS`;
    else *executor*. The outputs are the same either way."""
    from kg.scale.executor import parse_executor

    if models is None or hasattr(executor, "map_partitions"):
        return executor
    kind = parse_executor(executor).kind
    if kind == "local" or (kind == "dask-local" and todo < DASK_LOCAL_MIN_DOCUMENTS):
        return models
    return executor


def _extract_with_cache(papers: Sequence[Paper], options: _Options, *, fingerprint: str, out: Path,
                        models=None) -> tuple[list[PaperKeyphrases], int]:
    """Extraction results in paper order, and how many came from the cache (with ``options.cache``).

    The documents not in the cache are cut into partitions that ``options.executor`` runs (or the
    model process *models*: `_runner`); each finished partition goes into the cache at once, so an
    interrupted build resumes with the partitions it had not finished."""
    from contextlib import closing

    from kg.extract.cache import ExtractionCache, document_key
    from kg.scale.executor import parse_executor, run_partitions

    executor, progress = options.executor, options.progress
    if not hasattr(executor, "map_partitions"):
        parse_executor(executor)  # a bad spec fails even when everything is cached
    keys = [document_key(fingerprint, p.document) for p in papers]
    store = ExtractionCache(out / ".cache") if options.cache else None
    fresh: dict[str, PaperKeyphrases] = {}
    try:
        known = store.get_many(keys) if store else {}
        todo = [(p.id, p.document) for p, k in zip(papers, keys) if k not in known]
        if progress and len(todo) < len(papers):
            progress(len(papers) - len(todo))
        key_of = {p.id: k for p, k in zip(papers, keys)}
        runner = _runner(executor, models, len(todo))
        with closing(run_partitions(todo, runner, settings=options.settings, embedder=options.embedder,
                                    nlp=options.nlp)) as partitions:
            for done in partitions:  # as each finishes: cached at once, so a rerun resumes after it
                if store:
                    store.put_many((key_of[r.paper_id], r) for r in done)
                fresh.update((r.paper_id, r) for r in done)
                if progress:
                    progress(len(done))
    finally:
        if store:
            store.close()
    found = []
    for p, k in zip(papers, keys):
        if p.id in fresh:
            found.append(fresh[p.id])
        else:
            keyphrases, definitions = known[k]
            found.append(PaperKeyphrases(p.id, keyphrases, definitions))
    return found, len(papers) - len(todo)


def _label_embed(embedder, precision: str):
    """Concept labels are embedded by the model that ranked the keyphrases (the packaged one
    unless *embedder* is given), loaded only if some near-duplicate labels need it."""

    def embed(texts):
        if embedder is not None:
            return embedder.embed(texts)
        from kg.extract.embed import load_embedder

        return load_embedder(precision).embed(texts)

    return embed


def build(
    paths: Sequence[str | os.PathLike] = ("seeds",),
    out: str | os.PathLike = "outputs",
    *,
    base: str | None = None,
    settings: Settings = Settings(),
    embedder=None,
    nlp=None,
    progress: Callable[[int], None] | None = None,
    on_start: Callable[[ReadReport], None] | None = None,
    cache: bool = True,
    store: bool = True,
    executor="local",
    follow_links: bool = False,
) -> BuildResult:
    """Build the knowledge graph of the abstracts under *paths* into the folder *out*.

    Reads every abstract, extracts keyphrases with KeyBERT over the packaged model,
    merges them into concepts, builds the graph and its map (clusters and positions) and writes
    ``graph.ttl``, ``graph.nt``, ``graph.jsonld``, ``graph.html``, ``keyphrases.jsonl``,
    ``graph.json``, ``stats.json``, ``graph.gexf`` and ``map.json``. *progress* is called with
    the number of abstracts done after each batch; *on_start* with the read report before
    extraction starts. With *cache*,
    extraction results are kept in ``<out>/.cache/`` keyed by content, model and settings,
    and a rebuild computes only what changed. With *store*, the graph is also loaded into an
    on-disk Oxigraph store in ``<out>/store/`` that `kg query` and `kg serve` read directly.
    *executor* says where extraction runs, in partitions: ``"local"`` (one after the other, in a
    `kg.scale.executor.ModelProcess` started before the abstracts are read, or in this process when an
    *embedder* or *nlp* is given),
    ``"dask-local[:N]"`` (N worker processes kg starts and stops), ``"dask://HOST:PORT"`` (a
    Dask scheduler), a `kg.scale.executor.ExecutorSpec`, or an executor opened with
    `kg.scale.executor.open_executor`; the outputs are the same whichever runs it, and each
    finished partition is cached at once (with *cache*). Symbolic links inside the folders
    of *paths* are skipped with a warning unless *follow_links* (`kg.text.sources.read_papers`).
    """
    # The cyclic garbage collector is off while the build runs: a 10,000-paper build makes
    # millions of objects that live to its end, and each full collection walks them all
    # (measured: RDF statements 6.3 s with it, 2.3 s without). Restored at the end.
    was_enabled = gc.isenabled()
    try:
        return _build(paths, out, _Options(base, settings, embedder, nlp, progress, on_start, cache, store, executor,
                                              follow_links))
    finally:
        if was_enabled:
            gc.enable()


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def _check_not_url(out) -> None:
    """Stop before any work when *out* is a URL (``s3://bucket/kg``, ``file:///tmp/kg``): kg
    writes into a local folder, and as a path the URL would quietly become one (``s3:/bucket/kg``)."""
    if isinstance(out, str) and _URL.match(out):
        raise OutputError(f"{out}: a URL; kg build writes its outputs into a local folder (writing them to "
                          "object storage is not supported): build into a folder, then copy it there")


def _check_output_folder(out: Path, paths: Sequence[str | os.PathLike] = ()) -> None:
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


def _lock_output_folder(out: Path):
    """The output folder's lock (`kg.sparql.store._FolderLock`), held exclusively for the whole
    build, and whether the folder was made for it: a second build into the folder, or one into a
    folder `kg serve` is serving, stops at once with one line instead of deleting the first one's
    temporary files or replacing the files a server reads. The kernel drops the lock when the
    build ends, however it ends."""
    from kg.sparql.store import _FolderLock

    made = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        lock = _FolderLock(out)
    except OSError as e:
        raise OutputError(f"{out}: cannot create the output folder ({e.strerror or e})") from e
    if lock.try_exclusive():
        return lock, made
    served = lock.try_shared()  # only servers hold it shared: a build holds it alone
    lock.close()
    if served:
        raise OutputError(f"{out}: kg serve is serving it; stop the server first, or build into another --out")
    raise OutputError(f"{out}: another kg build is writing into it; wait for it to end, or build into another --out")


def _build(paths, out, options: _Options) -> BuildResult:
    gc.disable()
    from dataclasses import replace

    from kg.rdf.vocabulary import DEFAULT_BASE, check_base
    from kg.scale.executor import parse_executor

    options = replace(options, base=check_base(options.base or DEFAULT_BASE))
    settings, executor = options.settings, options.executor
    given = getattr(options.embedder, "precision", settings.precision)
    if given != settings.precision:  # its vectors would be cached under the other precision's key
        raise ValueError(f"the embedder given runs the model in {given}, the settings ask for {settings.precision}")
    spec = None if hasattr(executor, "map_partitions") else parse_executor(executor)  # a bad spec fails first
    _check_not_url(out)
    out = Path(out)
    _check_output_folder(out, paths)
    lock, made = _lock_output_folder(out)
    try:
        return _locked_build(paths, out, lock, options, spec=spec)
    except BaseException:
        if made:
            with suppress(OSError):
                out.rmdir()  # a folder made for a build that wrote nothing (only when empty)
        raise
    finally:
        lock.close()


def _locked_build(paths, out, lock, options: _Options, *, spec) -> BuildResult:
    from kg.extract.embed import MODEL_NAME
    from kg.scale.executor import ExecutorSpec, ModelProcess

    settings, embedder, progress = options.settings, options.embedder, options.progress

    # The packaged model is loaded in a process of its own, started now, so that its loading
    # overlaps the reading and the cache lookup; it extracts (under dask-local, only a few
    # documents: `_runner`), embeds the labels the merge compares, and is stopped once the
    # concepts are merged.
    models = None
    if spec is not None and spec.kind in ("local", "dask-local") and embedder is None and options.nlp is None:
        models = ModelProcess.start(settings.precision, ExecutorSpec("local", partition_size=spec.partition_size))
    try:
        report = read_papers([Path(p) for p in paths], follow_links=options.follow_links)
        if options.on_start:
            options.on_start(report)
        papers = report.papers
        model_name = getattr(embedder, "name", MODEL_NAME) if embedder is not None else MODEL_NAME
        fingerprint = settings.fingerprint(model_name)
        key = _build_key(report, fingerprint, options.base) if options.cache else None
        if key is not None:
            done = _up_to_date(Path(out), key, report)
            if done is not None:
                if models is not None:
                    models.close()
                    models = None
                if progress:
                    progress(len(papers))
                if options.store:
                    from kg.sparql.store import prepare_store

                    prepare_store(out, _lock=lock)  # cheap when the store is already loaded from this graph.nt
                return done
        found, cached = _extract_with_cache(papers, options, fingerprint=fingerprint, out=Path(out), models=models)
        gc.disable()  # loading spaCy turns it back on
        index = merge_concepts([(k.paper_id, [x.phrase for x in k.keyphrases], k.definitions) for k in found],
                               embed=_label_embed(models or embedder, settings.precision),
                               texts={p.id: p.document for p in papers})
        index = score_specificity(index, {p.id: p.document for p in papers})
    finally:
        if models is not None:
            models.close()
    merged = _Merged(report, papers, found, cached, index, key, model_name, fingerprint)
    del report, papers, found, index  # held by *merged* alone, which `_write` releases
    return _write(out, options, merged, lock=lock)


def _paper_labels(papers: Sequence[Paper], found: Sequence[PaperKeyphrases], index) -> dict[str, str]:
    """Each paper's label (`kg.text.labels.paper_label`), with its leading concept: the
    best-ranked one that is its own (a concept several papers share would give them all one
    label), else its best-ranked one."""
    concepts = index.by_id()
    labels = {}
    for p, k in zip(papers, found):
        own = [concepts[index.assignment[(p.id, x.phrase)]] for x in k.keyphrases if (p.id, x.phrase) in index.assignment]
        own = [c for c in own if not c.generic] or own  # a generic concept is no subject of it
        leading = next((c.label for c in own if len(c.papers) == 1), own[0].label if own else None)
        labels[p.id] = paper_label(p.abstract, p.text, title=p.title, leading_concept=leading)
    return labels


def _metadata(options: _Options, merged: _Merged) -> dict[str, object]:
    """The graph's metadata (``G.graph``): the base IRI, the model, the extractor and its settings."""
    from kg.extract.embed import MODEL_NAME, MODEL_SHA256

    return {
        "base_iri": options.base,
        "model": merged.model_name,
        "model_sha256": MODEL_SHA256 if merged.model_name == MODEL_NAME else None,
        "extractor": "KeyBERT (noun-phrase candidates, MMR)",
        "settings": options.settings.__dict__ | {},
        "fingerprint": merged.fingerprint,
        "kg_version": _kg_version(),
    }


def _stats_input(merged: _Merged, warnings: Sequence[Diagnostic], settings: dict) -> dict[str, object]:
    """The part of ``stats.json`` about the input, the model and the settings; *warnings*: those
    the build added to the report's."""
    report = merged.report
    return {
        "input": {
            "files": list(report.files),
            "records_read": report.records_read,
            "papers": len(merged.papers),
            "duplicates_merged": report.duplicates_merged,
            "identifier_conflicts": [c.as_dict() for c in report.conflicts[:MAX_CONFLICTS_LISTED]],
            "identifier_conflicts_count": len(report.conflicts),
            "skipped": dict(sorted(report.skipped.items())),
            "warnings": dict(sorted(_warning_counts(report, warnings).items())),
        },
        "model": merged.model_name,
        "settings": settings,
    }


def _write(out, options: _Options, merged: _Merged, *, lock=None) -> BuildResult:
    """Build the graph and its map from *merged* and write every output into *out* (the views in
    a forked process while this one writes the RDF, and loads the store with ``options.store``),
    all renamed into place together."""
    papers, key = merged.papers, merged.key
    metadata = _metadata(options, merged)
    G = build_graph(papers, merged.found, merged.index, _paper_labels(papers, merged.found, merged.index), metadata=metadata)
    built = [Diagnostic(p.sources[0].file, str(p.sources[0]).partition(", ")[2],
                        f"no noun phrase found; paper {p.id} is kept with no concepts", "no_concepts")
             for p, k in zip(papers, merged.found) if not k.keyphrases]
    warnings = [*merged.report.warnings, *built]
    stats_input = _stats_input(merged, built, metadata["settings"])
    n_papers = len(papers)
    staging = _Staging(Path(out))

    def views() -> tuple[dict, dict]:
        # the files that are not RDF, with the figures that go into stats.json: written by a
        # second process (when the platform can fork) while this one writes the RDF
        # (on failure, the except below removes what it wrote)
        stats = graph_stats(G) | stats_input
        _emit_views(G, staging.open, records=None, stats=stats, title="kg")
        return stats, staging.written()

    loading = side = None
    committed = False
    try:
        # keyphrases.jsonl, the one output that needs the papers and their keyphrases, is written
        # first, so that they are dropped before the map is made: every later stage reads G alone
        with staging.open("keyphrases.jsonl") as f:
            _write_records(f, _keyphrase_records(G, papers, merged.found, merged.index.assignment))
        papers = None
        merged.release()
        add_map(G)  # clusters and positions, seen by every output
        side = _Forked(views)
        from kg.rdf.write import write_rdf

        def rdf_written(name: str) -> None:
            nonlocal loading
            if options.store and name == "graph.nt":  # the on-disk Oxigraph store that kg query and kg
                from kg.sparql.store import StoreLoad  # serve read, made while the other files are written

                loading = StoreLoad(out, staging.path("graph.nt"))

        # The cyclic GC on while the RDF is written (the forked views writer, started first, keeps it
        # off): the writing leaves objects in reference cycles, and collected as they come rather
        # than at the build's end they no longer raise its peak (benchmarks/README.md, scaling).
        gc.enable()
        try:
            write_rdf(G, staging.open, base=options.base, written=rdf_written)
        finally:
            gc.disable()
        stats, written = side.result()
        staging.adopt(written)
        cache_dir = Path(out) / ".cache"
        if key is not None:
            forget_manifest(cache_dir)  # a build stopped halfway leaves no manifest to trust
        if loading is not None:
            loading.ready()  # it reads graph.nt's temporary file; a store that failed fails the build
        with _signals_held(f"the new outputs are all in {out}/"):  # all renamed or none: an interrupt waits
            files = staging.commit()
            committed = True
            if key is not None:
                try:
                    write_manifest(cache_dir, key, Path(out), staging.sha256,
                                   {"warnings": [[w.file, w.where, w.message, w.reason] for w in built]})
                except OSError:  # the outputs are in place; without a manifest the next build just does not skip
                    forget_manifest(cache_dir)
            if loading is not None:
                loading.finish(lock=lock)
    except BaseException:
        if side is not None:
            side.stop()
        staging.discard()
        staging.discard_stale(VIEW_FILES)
        if loading is not None and not committed:
            loading.discard()
        raise
    return BuildResult(stats, tuple(warnings), Path(out), tuple(files),
                       extraction={"computed": n_papers - merged.cached, "from_cache": merged.cached}, _graph=G)


def _warning_counts(report: ReadReport, built: Sequence[Diagnostic]) -> Counter:
    """Every warning of a build by kind: those reading counted (it keeps only the first of a
    kind that is very common) and those the build added (*built*)."""
    counts = Counter(report.warning_counts or [w.reason for w in report.warnings])
    counts.update(w.reason for w in built)
    return counts


def _build_key(report: ReadReport, fingerprint: str, base: str) -> str:
    """The manifest key of a build of what *report* read (see kg.manifest): the files' names and
    the digests of the bytes read, so that a file changed since it was read is not taken for built."""
    return build_key(list(zip(report.files, report.digests)), fingerprint=fingerprint, base=base, kg_version=_kg_version(),
                     extra={"outputs": list(OUTPUT_FILES)})


def _up_to_date(out: Path, key: str, report: ReadReport) -> BuildResult | None:
    """The result of the build in *out* when its manifest has *key* and its outputs are intact, else None."""
    manifest = read_manifest(out / ".cache")
    if manifest is None or manifest.get("key") != key or not outputs_intact(manifest, out, OUTPUT_FILES):
        return None
    from kg.text.files import read_json

    stats = read_json(out / "stats.json")
    try:
        built = tuple(Diagnostic(*w) for w in manifest.get("warnings", []))
    except TypeError:
        return None
    if not isinstance(stats, dict):
        return None
    return BuildResult(stats, tuple(report.warnings) + built, out, tuple(out / name for name in OUTPUT_FILES),
                       extraction={"computed": 0, "from_cache": len(report.papers)}, unchanged=True)
