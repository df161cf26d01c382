"""Extraction inside a build: the keyphrases and typed entities of the papers, from the content
cache or computed in partitions on the build's executor (each partition cached as it finishes),
and the embeddings of the labels the merge compares (cached too). *options* is a build's
(`kg.pipeline.stages.build`'s keyword arguments, checked).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kg.extract.keyphrases import PaperKeyphrases
from kg.pipeline.timeline import Timeline
from kg.text.sources import Paper

__all__ = ["DASK_LOCAL_MIN_DOCUMENTS", "entities_with_cache", "extract_with_cache", "label_embedder", "runner_for"]

# Under ``dask-local``, fewer documents than this to extract are extracted in the model process
# (`kg.scale.executor.ModelProcess`) instead (`runner_for`): the cluster's workers each load torch, spaCy
# and the model before their first partition; below this many the model process is faster
# (docs/scaling.md has the figures).
DASK_LOCAL_MIN_DOCUMENTS = 512



def runner_for(executor, models, todo: int):
    """What extracts *todo* documents: the model process *models* (when there is one) for the
    ``local`` executor, and for ``dask-local`` when *todo* is under `DASK_LOCAL_MIN_DOCUMENTS`;
    else *executor*. The outputs are the same either way."""
    from kg.scale.executor import SharedExecutor, parse_executor

    if models is None or (hasattr(executor, "map_partitions") and not isinstance(executor, SharedExecutor)):
        return executor
    kind = executor.spec.kind if isinstance(executor, SharedExecutor) else parse_executor(executor).kind
    if kind == "local" or (kind == "dask-local" and todo < DASK_LOCAL_MIN_DOCUMENTS):
        return models
    return executor


def extract_with_cache(papers: Sequence[Paper], options, *, fingerprint: str, out: Path, timeline: Timeline,
                        models=None, mentions: dict | None = None) -> tuple[list[PaperKeyphrases], int]:
    """Extraction results in paper order, and how many came from the cache (with ``options.cache``).
    *mentions* (paper id -> its typed-entity mentions, (text, type, score) each) go with each document
    to the learned ranking (`kg.extract.keyphrases.Tagged.mentions`); *fingerprint* must say so.

    The documents not in the cache are cut into partitions that ``options.executor`` runs (or the
    model process *models*: `runner_for`); each finished partition goes into the cache at once, so an
    interrupted build resumes with the partitions it had not finished."""
    from contextlib import closing

    from kg.extract.cache import ExtractionCache, document_key
    from kg.scale.executor import parse_executor, run_partitions

    executor, progress = options.executor, options.progress
    if not hasattr(executor, "map_partitions"):
        parse_executor(executor)  # a bad spec fails even when everything is cached
    store = ExtractionCache(out / ".cache") if options.cache else None
    fresh: dict[str, PaperKeyphrases] = {}
    try:
        with timeline.stage("extract: cache lookup"):
            keys = [document_key(fingerprint, p.document) for p in papers]
            known = store.get_many(keys) if store else {}
        todo = [(p.id, p.document) if mentions is None else (p.id, p.document, mentions[p.id])
                for p, k in zip(papers, keys) if k not in known]
        if progress and len(todo) < len(papers):
            progress(len(papers) - len(todo))
        key_of = {p.id: k for p, k in zip(papers, keys)}
        runner = runner_for(executor, models, len(todo))
        with timeline.stage("extract: computed"), closing(run_partitions(
                todo, runner, settings=options.settings, embedder=options.embedder, nlp=options.nlp)) as partitions:
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


def entities_with_cache(papers: Sequence[Paper], options, *, fingerprint: str, out: Path, timeline: Timeline,
                         models=None) -> list[tuple[str, object]]:
    """Each paper's typed entities and relations (`kg.extract.entities.PaperEntities`), in paper
    order, read from its abstract as given: from the cache (with ``options.cache``) or computed in
    partitions on the executor that extracts the keyphrases (`runner_for`), each partition cached as
    it finishes."""
    from kg.extract.cache import ExtractionCache, document_key
    from kg.scale.executor import entity_partition, run_tasks

    store = ExtractionCache(out / ".cache") if options.cache else None
    progress = options.entity_progress
    try:
        with timeline.stage("entities: cache lookup"):
            texts = {p.id: p.abstract or "" for p in papers}
            keys = {p.id: document_key(fingerprint, texts[p.id]) for p in papers}
            known = store.get_entities(list(keys.values())) if store else {}
        todo = [(p.id, texts[p.id]) for p in papers if keys[p.id] not in known]
        if progress and len(todo) < len(papers):
            progress(len(papers) - len(todo))
        fresh = {}
        with timeline.stage("entities: computed"):
            for done in run_tasks(todo, runner_for(options.executor, models, len(todo)), entity_partition):
                if store:
                    store.put_entities((keys[pid], found) for pid, found in done)
                fresh.update(done)
                if progress:
                    progress(len(done))
    finally:
        if store:
            store.close()
    return [(p.id, fresh[p.id] if p.id in fresh else known[keys[p.id]]) for p in papers]


def label_embedder(embedder, precision: str, *, cache: Path | None = None, fingerprint: str = ""):
    """Concept labels are embedded by the model that ranked the keyphrases (the packaged one
    unless *embedder* is given), loaded only if some near-duplicate labels need it. With a
    *cache* folder, each label's embedding is kept in the extraction cache under the extraction
    *fingerprint* and its text, and only new labels are embedded: the model embeds a text the
    same, to the bit, whatever it is batched with (`kg.extract.embed.SentenceEmbedder.embed`), so
    a rebuild gives what a clean build gives."""

    def model_embed(texts):
        if embedder is not None:
            return embedder.embed(texts)
        from kg.extract.embed import load_embedder

        return load_embedder(precision).embed(texts)

    if cache is None:
        return model_embed

    def embed(texts):
        import numpy as np

        from kg.extract.cache import ExtractionCache, document_key

        texts = list(texts)
        key_of = {t: document_key(fingerprint, "label\x00" + t) for t in texts}
        store = ExtractionCache(cache)
        try:
            held = store.get_vectors(list(key_of.values()))
            found = {t: held[k] for t, k in key_of.items() if k in held}
            if len({len(v) for v in found.values()}) > 1:
                found = {}  # cached rows of two lengths (a damaged cache): all embedded again
            missing = [t for t in key_of if t not in found]
            if missing:
                vectors = np.asarray(model_embed(missing), dtype=np.float32)
                if found and len(next(iter(found.values()))) != vectors.shape[1]:
                    missing = list(key_of)  # cached rows of another length: all embedded again
                    vectors = np.asarray(model_embed(missing), dtype=np.float32)
                found.update(zip(missing, vectors))
                store.put_vectors((key_of[t], v) for t, v in zip(missing, vectors))
        finally:
            store.close()
        return np.vstack([found[t] for t in texts]) if texts else model_embed([])

    return embed
