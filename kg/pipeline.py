"""The whole pipeline: read -> extract -> merge -> graph -> RDF, HTML, JSON outputs.

Every output is written to a temporary file in the output folder and renamed into place
only when all of them are ready, so a failed or interrupted build leaves the previous
outputs whole.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import networkx as nx

from kg.concepts import merge_concepts
from kg.errors import OutputError
from kg.extract import PaperKeyphrases, Settings, extract_keyphrases
from kg.graph import build_graph, concept_node, graph_stats, graph_to_json, paper_node
from kg.labels import paper_label
from kg.sources import Diagnostic, Paper, ReadReport, read_papers

__all__ = ["BuildResult", "build", "OUTPUT_FILES", "keyphrase_records", "write_outputs"]

OUTPUT_FILES = ("graph.ttl", "graph.nt", "graph.jsonld", "graph.html", "keyphrases.jsonl", "graph.json", "stats.json")


@dataclass(frozen=True)
class BuildResult:
    """What `build` made: the graph, its figures, the warnings and where the files are."""

    graph: nx.Graph
    stats: dict
    warnings: tuple[Diagnostic, ...]
    out: Path
    files: tuple[Path, ...] = field(default_factory=tuple)


def _kg_version() -> str:
    try:
        return version("kg")
    except PackageNotFoundError:
        return "0+unknown"


def keyphrase_records(G: nx.Graph, papers: Sequence[Paper], found: Sequence[PaperKeyphrases], assignment) -> list[dict]:
    """One record per paper for ``keyphrases.jsonl``, in input order."""
    by_id = {k.paper_id: k for k in found}
    records = []
    for p in papers:
        node = G.nodes[paper_node(p.id)]
        keyphrases = [
            {"phrase": k.phrase, "concept": concept_node(assignment[(p.id, k.phrase)]) if (p.id, k.phrase) in assignment else None,
             "score": k.score, "rank": k.rank}
            for k in by_id[p.id].keyphrases
        ]
        sources = [{"file": s.file, "paragraph": s.paragraph} if s.paragraph is not None else {"file": s.file, "row": s.row} for s in p.sources]
        records.append({
            "id": p.id, "source_id": p.source_id, "label": node["label"], "venue": p.venue, "year": p.year,
            "sources": sources, "keyphrases": keyphrases,
        })
    return records


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _atomic_write_all(out: Path, contents: dict[str, str]) -> list[Path]:
    """Write every file to a temporary name, then rename them all into place."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"{out}: cannot create the output folder ({e.strerror})") from e
    for name in contents:  # temporary files a killed build left behind
        for stale in out.glob(f".{name}.*.tmp"):
            stale.unlink(missing_ok=True)
    staged: list[tuple[Path, Path]] = []
    try:
        for name, text in contents.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=out)
            staged.append((Path(tmp), out / name))
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o666 & ~_umask())
        for tmp, final in staged:
            os.replace(tmp, final)
    except OSError as e:
        raise OutputError(f"{out}: cannot write the outputs ({e.strerror or e}); the previous outputs are unchanged") from e
    finally:
        for tmp, _ in staged:
            if tmp.exists():
                tmp.unlink()
    return [final for _, final in staged]


def write_outputs(G: nx.Graph, out: Path, *, records: list[dict], stats: dict, base: str, title: str = "kg") -> list[Path]:
    """Every output file of a build, written atomically into *out*."""
    from kg.rdf import FORMATS, serialize, to_rdf
    from kg.view import render_html

    rdf = to_rdf(G, base=base)
    contents = {name: serialize(rdf, fmt) for name, fmt in FORMATS.items()}
    contents["graph.html"] = render_html(G, title=title)
    contents["keyphrases.jsonl"] = "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in records)
    contents["graph.json"] = graph_to_json(G)
    contents["stats.json"] = json.dumps(stats, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    return _atomic_write_all(Path(out), contents)


def _extract_with_cache(papers, embedder, settings, nlp, progress, fingerprint, use_cache, out):
    """Extraction results in paper order, and how many came from the cache."""
    from kg.cache import ExtractionCache, document_key

    keys = [document_key(fingerprint, p.document) for p in papers]
    store = ExtractionCache(out / ".cache") if use_cache else None
    known = store.get_many(keys) if store else {}
    todo = [(p.id, p.document) for p, k in zip(papers, keys) if k not in known]
    if progress and len(todo) < len(papers):
        progress(len(papers) - len(todo))
    fresh: dict[str, PaperKeyphrases] = {}
    if todo:
        if embedder is None:
            from kg.embed import load_embedder

            embedder = load_embedder()
        for r in extract_keyphrases(todo, embedder, settings=settings, nlp=nlp, progress=progress):
            fresh[r.paper_id] = r
        if store:
            key_of = {p.id: k for p, k in zip(papers, keys)}
            store.put_many((key_of[pid], r) for pid, r in fresh.items())
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
) -> BuildResult:
    """Build the knowledge graph of the abstracts under *paths* into the folder *out*.

    Reads every abstract, extracts keyphrases with KeyBERT over the packaged model,
    merges them into concepts, builds the graph and writes ``graph.ttl``, ``graph.nt``,
    ``graph.jsonld``, ``graph.html``, ``keyphrases.jsonl``, ``graph.json`` and
    ``stats.json``. *progress* is called with the number of abstracts done after each
    batch; *on_start* with the read report before extraction starts. With *cache*,
    extraction results are kept in ``<out>/.cache/`` keyed by content, model and settings,
    and a rebuild computes only what changed. With *store*, the graph is also loaded into an
    on-disk Oxigraph store in ``<out>/store/`` that `kg query` and `kg serve` read directly.
    """
    from kg.embed import MODEL_NAME, MODEL_SHA256
    from kg.rdf import DEFAULT_BASE, check_base

    base = check_base(base or DEFAULT_BASE)
    report = read_papers([Path(p) for p in paths])
    if on_start:
        on_start(report)
    papers = report.papers
    model_name = getattr(embedder, "name", MODEL_NAME) if embedder is not None else MODEL_NAME
    fingerprint = settings.fingerprint(model_name)
    found, cached = _extract_with_cache(papers, embedder, settings, nlp, progress, fingerprint, cache, Path(out))
    index = merge_concepts([(k.paper_id, [x.phrase for x in k.keyphrases], k.definitions) for k in found])
    concepts = index.by_id()
    labels = {}
    for p, k in zip(papers, found):
        # its leading concept: the best-ranked one that is its own (a concept several papers
        # share would give them all one label), else its best-ranked one
        own = [concepts[index.assignment[(p.id, x.phrase)]] for x in k.keyphrases if (p.id, x.phrase) in index.assignment]
        leading = next((c.label for c in own if len(c.papers) == 1), own[0].label if own else None)
        labels[p.id] = paper_label(p.abstract, p.text, title=p.title, leading_concept=leading)
    metadata = {
        "base_iri": base,
        "model": model_name,
        "model_sha256": MODEL_SHA256 if model_name == MODEL_NAME else None,
        "extractor": "KeyBERT (noun-phrase candidates, MMR)",
        "settings": settings.__dict__ | {},
        "fingerprint": fingerprint,
        "kg_version": _kg_version(),
    }
    G = build_graph(papers, found, index, labels, metadata=metadata)
    warnings = list(report.warnings)
    for p, k in zip(papers, found):
        if not k.keyphrases:
            src = p.sources[0]
            warnings.append(Diagnostic(src.file, str(src).partition(", ")[2], f"no noun phrase found; paper {p.id} is kept with no concepts", "no_concepts"))
    stats = graph_stats(G) | {
        "input": {
            "files": list(report.files),
            "records_read": report.records_read,
            "papers": len(papers),
            "duplicates_merged": report.duplicates_merged,
            "skipped": dict(sorted(report.skipped.items())),
            "warnings": dict(sorted(Counter(w.reason for w in warnings).items())),
        },
        "extraction": {"computed": len(papers) - cached, "from_cache": cached},
        "model": model_name,
        "settings": metadata["settings"],
    }
    records = keyphrase_records(G, papers, found, index.assignment)
    files = write_outputs(G, Path(out), records=records, stats=stats, base=base)
    if store:
        from kg.serve import prepare_store

        prepare_store(out)  # the on-disk Oxigraph store that kg query and kg serve read
    return BuildResult(G, stats, tuple(warnings), Path(out), tuple(files))
