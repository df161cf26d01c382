"""The build, stage by stage: read -> extract (with its cache) -> merge -> graph and map -> RDF, the views and the
store, all renamed into place together (`kg.pipeline.outputs`), or nothing when nothing changed.
"""

from __future__ import annotations

import gc
import os
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import networkx as nx

from kg.common.folders import CACHE
from kg.common.rounds import LocalRounds
from kg.concepts.merge import merge_concepts
from kg.concepts.specificity import score_specificity
from kg.extract.keyphrases import PaperKeyphrases, Settings
from kg.graph.build import add_cooccurrence, build_graph
from kg.graph.clusters import add_clusters
from kg.graph.cooccurrence import concept_map
from kg.graph.layout import add_layout, map_positions, put_positions
from kg.graph.stats import graph_stats
from kg.pipeline.extraction import (
    DASK_LOCAL_MIN_DOCUMENTS,
    entities_with_cache,
    extract_with_cache,
    label_embedder,
)
from kg.pipeline.folder import check_not_url, check_output_folder, lock_output_folder
from kg.pipeline.fork import Forked
from kg.pipeline.manifest import (
    build_key,
    forget_manifest,
    outputs_intact,
    read_manifest,
    write_manifest,
)
from kg.pipeline.outputs import (
    MAP_FILES,
    VIEW_FILES,
    Staging,
    emit_map_files,
    emit_views,
    entity_rows,
    entity_stats,
    keyphrase_rows,
    output_files,
    signals_held,
    write_records,
)
from kg.pipeline.timeline import VIEWS, Timeline
from kg.text.labels import paper_label
from kg.text.phrases import clear_caches
from kg.text.readcache import ReadCache
from kg.text.sources import Diagnostic, Paper, ReadReport, read_papers

__all__ = ["BuildResult", "DASK_LOCAL_MIN_DOCUMENTS", "build"]

# The views writer's niceness: it runs on what CPU the RDF writer and the store's loader leave, and
# finishes while the store is updated (which leaves a core idle), rather than slowing the RDF down.
VIEWS_NICE = 10
MAX_CONFLICTS_LISTED = 100  # DOIs and arXiv ids on different abstracts that stats.json names (all are counted)


@dataclass(frozen=True)
class BuildResult:
    """What `build` made: the graph, its figures (``stats.json``), the warnings, where the files
    are, how many abstracts were extracted and how many came from the cache
    (``extraction = {"computed": N, "from_cache": M}``), and whether nothing had changed
    (``unchanged``: every output was already up to date and none was rewritten), and the wall time of
    each stage (``timings``: (name, seconds) in the order they ended, the whole build last as
    ``total``; the ``views: `` ones ran in the forked views writer, beside ``rdf``): not in
    ``stats.json``, which stays the same from build to build; and ``peaks``: each of those stages
    with its process's peak resident memory at its end, in bytes (None where the platform keeps
    none; the views writer's counts what it shares with the build process, from which it forked).

    ``graph`` is the networkx graph (docs/model.md); after an unchanged rebuild it is read
    from ``graph.json`` the first time it is asked for: above `kg.graph.io.FULL_GRAPH_MAX_PAPERS`
    papers, the map's projection that graph.json then holds (``graph["projection"]``).
    """

    stats: dict
    warnings: tuple[Diagnostic, ...]
    out: Path
    files: tuple[Path, ...] = field(default_factory=tuple)
    extraction: dict = field(default_factory=dict)
    unchanged: bool = False
    timings: tuple[tuple[str, float], ...] = ()
    peaks: tuple[tuple[str, int | None], ...] = ()
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
    entities: bool = True
    entity_progress: Callable[[int], None] | None = None


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
    typed: Sequence[tuple[str, object]] | None = None  # (paper id, PaperEntities) in paper order; None: --no-entities
    types: object = None  # the concepts' types and typed relations (kg.concepts.entities.ConceptTypes)

    def release(self) -> None:
        """Drop the papers, their keyphrases and entities, the report and the index (once
        keyphrases.jsonl and entities.jsonl are written): the map and the RDF writer that run
        next reuse their memory."""
        self.report = self.papers = self.found = self.index = self.typed = None


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
    entities: bool = True,
    entity_progress: Callable[[int], None] | None = None,
) -> BuildResult:
    """Build the knowledge graph of the abstracts under *paths* into the folder *out*.

    Reads every abstract, extracts keyphrases with KeyBERT over the packaged model,
    merges them into concepts, builds the graph and its map (clusters and positions) and writes
    ``graph.ttl``, ``graph.nt``, ``graph.jsonld``, ``graph.html``, ``keyphrases.jsonl``,
    ``graph.json``, ``stats.json``, ``graph.gexf`` and ``map.json``. *progress* is called with
    the number of abstracts done after each batch; *on_start* with the read report before
    extraction starts (not at all when the outputs are up to date: the input files' bytes are
    compared with the last build's before anything is parsed, and the result's warnings are
    those that build recorded). With *cache*,
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
    With *entities* (the default), the typed entities and relations of each abstract
    (`kg.extract.entities`, on the same executor, cached the same way) go into ``entities.jsonl``
    and type the concepts (`kg.concepts.entities`); *entity_progress* is called as *progress* is.
    """
    # The cyclic garbage collector is off while the build runs: a 10,000-paper build makes
    # millions of objects that live to its end, and each full collection walks them all
    # (measured: RDF statements 6.3 s with it, 2.3 s without). Restored at the end.
    was_enabled = gc.isenabled()
    timeline = Timeline()
    try:
        result = _build(paths, out, _Options(base, settings, embedder, nlp, progress, on_start, cache, store, executor,
                                                follow_links, entities, entity_progress), timeline)
        timings = timeline.done()
        return replace(result, timings=timings, peaks=timeline.peaks())
    finally:
        if was_enabled:
            gc.enable()


def _build(paths, out, options: _Options, timeline: Timeline) -> BuildResult:
    gc.disable()
    from kg.rdf.vocabulary import DEFAULT_BASE, check_base
    from kg.scale.executor import parse_executor

    options = replace(options, base=check_base(options.base or DEFAULT_BASE))
    settings, executor = options.settings, options.executor
    given = getattr(options.embedder, "precision", settings.precision)
    if given != settings.precision:  # its vectors would be cached under the other precision's key
        raise ValueError(f"the embedder given runs the model in {given}, the settings ask for {settings.precision}")
    spec = None if hasattr(executor, "map_partitions") else parse_executor(executor)  # a bad spec fails first
    check_not_url(out)
    out = Path(out)
    check_output_folder(out, paths)
    lock, made = lock_output_folder(out)
    try:
        return _locked_build(paths, out, lock, options, spec=spec, timeline=timeline)
    except BaseException:
        if made:
            with suppress(OSError):
                out.rmdir()  # a folder made for a build that wrote nothing (only when empty)
        raise
    finally:
        lock.close()


def _locked_build(paths, out, lock, options: _Options, *, spec, timeline: Timeline) -> BuildResult:
    from kg.extract.embed import MODEL_NAME
    from kg.scale.executor import ExecutorSpec, ModelProcess, SharedExecutor

    settings, embedder, progress = options.settings, options.embedder, options.progress

    entity_fingerprint = models = None
    with timeline.stage("setup"):  # missing or damaged entity weights fail here, before anything is read or extracted
        if options.entities:
            from kg.extract.entities import entity_fingerprint as fingerprint_of

            entity_fingerprint = fingerprint_of()
    model_name = getattr(embedder, "name", MODEL_NAME) if embedder is not None else MODEL_NAME
    # The learned ranking reads the typed-entity mentions when the build finds them: their extractor is part of the key.
    fingerprint = settings.fingerprint(model_name, entity_fingerprint)
    if options.cache:  # nothing changed: the files' bytes say so before any is parsed or a model loaded
        with timeline.stage("up-to-date check"):
            done = _up_to_date(Path(out), paths, options, fingerprint, entity_fingerprint)
        if done is not None:
            if progress:
                progress(done.extraction["from_cache"])
            if options.store:
                from kg.sparql.store import prepare_store

                with timeline.stage("store check"):
                    prepare_store(out, _lock=lock)  # cheap when the store is already loaded from this graph.nt
            return done
    # The packaged model is loaded in a process of its own, started once the outputs are known to
    # be out of date, so that its loading overlaps the reading and the cache lookup; it extracts
    # (under dask-local, only a few documents: `runner_for`), embeds the labels the merge compares,
    # and is stopped once the concepts are merged.
    with timeline.stage("start model process"):
        if spec is not None and spec.kind in ("local", "dask-local") and embedder is None and options.nlp is None:
            models = ModelProcess.start(settings.precision, ExecutorSpec("local", partition_size=spec.partition_size))
    shared = None
    if spec is not None and spec.kind != "local":  # a cluster the entities or the keyphrases start serves the other (and the rounds, `_rounds`)
        shared = SharedExecutor(spec)
        options = replace(options, executor=shared)
    try:
        with timeline.stage("read"):
            read_cache = ReadCache(Path(out) / CACHE) if options.cache else None  # files read before: not parsed again
            report = read_papers([Path(p) for p in paths], follow_links=options.follow_links, cache=read_cache)
        if options.on_start:
            options.on_start(report)
        papers = report.papers
        key = _build_key(report.files, report.digests, fingerprint, options.base, entity_fingerprint) if options.cache else None
        typed = mentions = None
        if entity_fingerprint is not None:  # first: the learned ranking of the keyphrases reads the mentions
            typed = entities_with_cache(papers, options, fingerprint=entity_fingerprint, out=Path(out), timeline=timeline,
                                         models=models)
            if settings.ranking == "learned":
                mentions = {pid: found.mentions for pid, found in typed}
        found, cached = extract_with_cache(papers, options, fingerprint=fingerprint, out=Path(out), timeline=timeline,
                                            models=models, mentions=mentions)
        gc.disable()  # loading spaCy turns it back on
        rounds = _rounds(options.executor)  # here, the merge and specificity read the papers whole (and fork)
        if isinstance(rounds, LocalRounds) and shared is not None and shared.opened is not None:
            with timeline.stage("stop executor"):  # a cluster kg started, idle from here: its workers and its
                shared.close()  # scheduler's state (in this process) gone before the merge
        size = None if isinstance(rounds, LocalRounds) else _partition_size(spec, executor=options.executor)
        with timeline.stage("merge"):
            index = merge_concepts([(k.paper_id, [x.phrase for x in k.keyphrases], k.definitions) for k in found],
                                   embed=label_embedder(models or embedder, settings.precision,
                                                      cache=Path(out) / ".cache" if options.cache else None,
                                                      fingerprint=fingerprint),
                                   texts={p.id: p.document for p in papers},
                                   beside=lambda fn: Forked(fn, doing="reading the abstracts for named instances"),
                                   partition_size=size, rounds=rounds)
        with timeline.stage("specificity"):
            index = score_specificity(index, {p.id: p.document for p in papers}, {p.id: p.keywords for p in papers if p.keywords},
                                      partition_size=size, beside=lambda fn: Forked(fn, doing="measuring the concepts' cohesion"),
                                      rounds=rounds)
    finally:
        if models is not None:
            with timeline.stage("stop model process"):
                models.close()
        if shared is not None and shared.opened is not None:
            with timeline.stage("stop executor"):
                shared.close()
    types = None
    if typed is not None:
        from kg.concepts.entities import type_concepts

        with timeline.stage("concept types"):
            types = type_concepts(index, typed)
    clear_caches()  # the phrase keys' memos: no stage from here on reads them
    merged = _Merged(report, papers, found, cached, index, key, model_name, fingerprint, typed, types)
    del report, papers, found, index, typed  # held by *merged* alone, which `_write` releases
    return _write(out, options, merged, lock=lock, timeline=timeline)


def _rounds(executor):
    """Where the rounds after extraction run (`kg.common.rounds.Rounds`): on the workers of a Dask cluster
    given open, or of the ``dask://`` cluster extraction ran on; else in this process, which on one machine is
    faster than the workers of a cluster kg started on it (docs/design.md: the rounds' data travels to them and
    back, and the build process waits meanwhile)."""
    from kg.scale.executor import SharedExecutor
    from kg.scale.rounds import rounds_on

    if isinstance(executor, SharedExecutor):
        return rounds_on(executor.opened) if executor.spec.kind == "dask" else LocalRounds()
    return rounds_on(executor)


def _partition_size(spec, *, executor) -> int:
    """The papers of a partition: the executor's (`kg.scale.executor.ExecutorSpec`), in which the rounds after
    extraction read them on a cluster's workers (`kg.concepts.merge.merge_rounds`)."""
    from kg.scale.executor import DEFAULT_PARTITION_SIZE

    size = getattr(spec or getattr(executor, "spec", None), "partition_size", None)
    return size if isinstance(size, int) and size > 0 else DEFAULT_PARTITION_SIZE


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
        "extractor": _extractor(options.settings, entities=options.entities),
        "settings": options.settings.__dict__ | {},
        "fingerprint": merged.fingerprint,
        "kg_version": _kg_version(),
    }


def _extractor(settings, entities: bool = False) -> str:
    """What ranked the keyphrases, as the provenance names it: the learned ranker by its file's digest (the one
    that reads the typed-entity mentions too, with *entities*)."""
    if settings.ranking == "learned":
        from kg.extract.ranking import model_digest, model_path

        if entities:
            return (f"KeyBERT (noun-phrase candidates, learned ranking {model_digest(model_path(entities=True))[:16]}"
                    " with typed-entity mentions, MMR)")
        return f"KeyBERT (noun-phrase candidates, learned ranking {model_digest()[:16]}, MMR)"
    return "KeyBERT (noun-phrase candidates, MMR)"


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


def _write(out, options: _Options, merged: _Merged, *, timeline: Timeline, lock=None) -> BuildResult:
    """Build the graph and its map from *merged* and write every output into *out* (the views in
    a forked process while this one writes the RDF, and loads the store with ``options.store``),
    all renamed into place together; each stage a span of *timeline*."""
    papers, key, typed = merged.papers, merged.key, merged.typed is not None
    metadata = _metadata(options, merged)
    with timeline.stage("paper labels"):
        labels = _paper_labels(papers, merged.found, merged.index)
    with timeline.stage("graph"):
        G = build_graph(papers, merged.found, merged.index, labels, metadata=metadata, types=merged.types, cooccurrence=False)
    built = [Diagnostic(p.sources[0].file, str(p.sources[0]).partition(", ")[2],
                        f"no noun phrase found; paper {p.id} is kept with no concepts", "no_concepts")
             for p, k in zip(papers, merged.found) if not k.keyphrases]
    read_warnings = tuple(merged.report.warnings)
    warnings = [*read_warnings, *built]
    stats_input = _stats_input(merged, built, metadata["settings"])
    n_papers = len(papers)
    staging = Staging(Path(out))

    def views() -> tuple[dict, dict, tuple, tuple]:
        # the map's positions, then the files that are not RDF, with the figures that go into
        # stats.json: in a second process (when the platform can fork) while this one writes the
        # RDF, which needs the clusters but no position (on failure, the except below removes
        # what it wrote); each file's time a span; the positions go back to this process's graph.
        # The map files for Gephi and VOSviewer are written by a third, forked from the second once the
        # map is laid out: once the RDF is written, the files left take both cores rather than one
        spans = Timeline()
        with spans.stage("map layout"):
            add_layout(G, cmap, membership)
        beside = Forked(map_files, doing="writing graph.gexf and map.json")
        try:
            with spans.stage("stats figures"):
                stats = graph_stats(G) | stats_input
            emit_views(G, spans.files(staging.open), records=None, stats=stats, title="kg", map_files=False)
            written, (more, peaks) = beside.result()
        except BaseException:
            beside.stop()
            raise
        staging.adopt(written)
        spans.extend(more, peaks=peaks)
        return stats, staging.written(), (spans.spans(), spans.peaks()), map_positions(G)

    def map_files() -> tuple[dict, tuple]:
        spans = Timeline()
        emit_map_files(G, spans.files(staging.open), title="kg")
        written = staging.written()
        return {name: written[name] for name in MAP_FILES}, (spans.spans(), spans.peaks())

    loading = side = None
    committed = False
    try:
        # keyphrases.jsonl, the one output that needs the papers and their keyphrases, is written
        # first, so that they are dropped before the map is made: every later stage reads G alone
        with timeline.stage("keyphrases.jsonl"), staging.open("keyphrases.jsonl") as f:
            write_records(f, keyphrase_rows(G, papers, merged.found, merged.index.assignment))
        if merged.typed is not None:
            with timeline.stage("entities.jsonl"), staging.open("entities.jsonl") as f:
                write_records(f, entity_rows(merged.papers, merged.typed))
            with timeline.stage("entity figures"):
                stats_input["entities"] = entity_stats(merged.typed, G)
        papers = None
        with timeline.stage("release inputs"):
            merged.release()
        with timeline.stage("graph: co-occurrences"):  # the graph's largest part, in the memory the inputs held
            add_cooccurrence(G)
        with timeline.stage("map: clusters"):
            cmap = concept_map(G)
            membership = add_clusters(G, cmap)  # seen by every output; the positions by the views alone
        with timeline.stage("fork views writer"):
            side = Forked(views, nice=VIEWS_NICE, forks=True)
        cmap = membership = None  # the views writer's alone from here (its fork's copy, or used already): not held while the RDF is written
        from kg.rdf.write import write_rdf

        @contextmanager
        def open_rdf(name: str):
            nonlocal loading
            with staging.open(name) as f:
                if options.store and name == "graph.nt":  # the on-disk Oxigraph store that kg query and kg
                    from kg.sparql.store import (
                        StoreLoad,  # serve read, made from graph.nt as it is written, beside the other files
                    )

                    loading = StoreLoad(out, staging.path("graph.nt"), follow=True)
                yield f

        def rdf_written(name: str) -> None:
            if loading is not None and name == "graph.nt":
                loading.written()

        # The cyclic GC on while the RDF is written (the forked views writer, started first, keeps it
        # off): the writing leaves objects in reference cycles, and collected as they come rather
        # than at the build's end they no longer raise its peak (benchmarks/README.md, scaling).
        gc.enable()
        try:
            with timeline.stage("rdf: graph.nt, graph.ttl, graph.jsonld"):
                write_rdf(G, open_rdf, base=options.base, written=rdf_written)
        finally:
            gc.disable()
        with timeline.stage("wait for views"):
            stats, written, spans, positions = side.result()
        timeline.extend(spans[0], VIEWS, peaks=spans[1])
        put_positions(G, positions)  # (the views writer's copy of G has them: this one is the result's)
        staging.adopt(written)
        cache_dir = Path(out) / ".cache"
        if key is not None:
            forget_manifest(cache_dir)  # a build stopped halfway leaves no manifest to trust
        if loading is not None:
            with timeline.stage("wait for store"):
                loading.ready()  # it reads graph.nt's temporary file; a store that failed fails the build
        with signals_held(f"the new outputs are all in {out}/"):  # all renamed or none: an interrupt waits
            with timeline.stage("rename into place"):
                files = staging.commit()
                committed = True
                if not typed:  # --no-entities: what a build without the stage wrote, and no older entities
                    (Path(out) / "entities.jsonl").unlink(missing_ok=True)
                if key is not None:
                    try:
                        write_manifest(cache_dir, key, Path(out), staging.sha256,
                                       {"warnings": _warning_rows(built), "read_warnings": _warning_rows(read_warnings)})
                    except OSError:  # the outputs are in place; without a manifest the next build just does not skip
                        forget_manifest(cache_dir)
            if loading is not None:
                with timeline.stage("store finish"):
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


def _warning_rows(warnings: Sequence[Diagnostic]) -> list[list[str]]:
    """*warnings* as the manifest keeps them (`_up_to_date` reads them back)."""
    return [[w.file, w.where, w.message, w.reason] for w in warnings]


def _warning_counts(report: ReadReport, built: Sequence[Diagnostic]) -> Counter:
    """Every warning of a build by kind: those reading counted (it keeps only the first of a
    kind that is very common) and those the build added (*built*)."""
    counts = Counter(report.warning_counts or [w.reason for w in report.warnings])
    counts.update(w.reason for w in built)
    return counts


def _build_key(files: Sequence[str], digests: Sequence[str], fingerprint: str, base: str, entities: str | None) -> str:
    """The manifest key of a build of the input *files* (their names as reported) whose bytes have
    the SHA-256 *digests* (see kg.pipeline.manifest), so that a file changed since it was read is
    not taken for built; *entities*: the entity model's fingerprint (None without the stage)."""
    return build_key(list(zip(files, digests)), fingerprint=fingerprint, base=base, kg_version=_kg_version(),
                     extra={"outputs": list(output_files(entities is not None)), "entities": entities})


def _up_to_date(out: Path, paths, options: _Options, fingerprint: str, entities: str | None) -> BuildResult | None:
    """The result of the build in *out* when its manifest has the key of the input files under
    *paths* as they are now (their bytes hashed, nothing parsed) and its outputs are intact, else
    None. Its warnings are those the build recorded (reading's and its own)."""
    from kg.text.files import read_json
    from kg.text.sources import input_digests

    manifest = read_manifest(out / ".cache")
    names = output_files(options.entities)
    if manifest is None or not outputs_intact(manifest, out, names):
        return None
    files, digests = input_digests([Path(p) for p in paths], follow_links=options.follow_links)
    if manifest.get("key") != _build_key(files, digests, fingerprint, options.base, entities):
        return None
    stats = read_json(out / "stats.json")
    try:
        warnings = tuple(Diagnostic(*w) for w in [*manifest.get("read_warnings", []), *manifest.get("warnings", [])])
    except TypeError:
        return None
    if not isinstance(stats, dict) or not isinstance(stats.get("papers"), int):
        return None
    return BuildResult(stats, warnings, out, tuple(out / name for name in names),
                       extraction={"computed": 0, "from_cache": stats["papers"]}, unchanged=True)
