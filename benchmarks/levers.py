"""Ranking levers on four gold sets at once, each a check of the others (issue 21).

    .venv/bin/python -m benchmarks.levers [--vary NAME=V1,V2,... ...] [--ml-sample 1000] [--work DIR]

Every document of Inspec (test), SemEval-2010 (test, and train as the dev split: the one set a weight
is chosen on), NUS (test) and the ML author-keyword sample (`benchmarks.quality.sample_ml`) is tagged
and embedded once by kg's own extraction, with every answer of the model recorded (kept in
``DIR/levers-<key>.pickle``, keyed by kg's extraction fingerprint and the sample); then each variant of `kg.extract.keyphrases.Settings` named by
``--vary`` (ranking fields only: ``position_weight``, ``definition_weight``, ``frequency_weight``,
``diversity``, ``use_mmr``, ``shortlist``) ranks them again with kg's `rank_tagged` and the recorded
answers, so a variant takes seconds and is exactly what a build with that setting would extract.
Printed per set: micro F1@5/10/15 (top 15, as `kg eval` and `benchmarks.quality` score) of the defaults and of each variant, and a paired bootstrap
(1,000 resamples of the documents) 95 % interval of each variant's change in micro F1@5.
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
import sys
import time
from dataclasses import fields, replace
from pathlib import Path

import numpy as np

from benchmarks.quality import DATASETS, data_dir, revision, sample_ml
from kg.evaluation.keyphrases import evaluate, read_gold, stem_phrase

SETS = {**{name: DATASETS[name] for name in ("inspec", "semeval2010", "nus")}, "dev": "semeval2010/train.jsonl"}
RANKING = ("position_weight", "definition_weight", "frequency_weight", "diversity", "use_mmr", "shortlist")
KS = (5, 10, 15)


class Recorded:
    """An embedder that records every answer of *inner* (or, without one, replays those recorded):
    a variant of the ranking then runs without the model and gets the very same vectors."""

    def __init__(self, inner=None, *, max_tokens: int = 256, vectors=None, tokens=None) -> None:
        self.inner = inner
        self.max_tokens = inner.max_tokens if inner is not None else max_tokens
        self.vectors = {} if vectors is None else vectors
        self.tokens = {} if tokens is None else tokens

    def count_tokens(self, texts):
        if self.inner is not None:
            self.tokens.update(zip(texts, self.inner.count_tokens(list(texts))))
        return [self.tokens[t] for t in texts]

    def embed(self, texts):
        if self.inner is not None:
            new = [t for t in texts if t not in self.vectors]
            if new:
                self.vectors.update(zip(new, self.inner.embed(new)))
        return np.vstack([self.vectors[t] for t in texts])


def load_sets(ml_sample: int) -> dict[str, list]:
    folder = data_dir()
    sets = {name: [d for d in read_gold(folder / path) if d.keyphrases] for name, path in SETS.items()}
    sets["ml"] = sample_ml(folder, ml_sample)[0]
    return sets


def record(sets: dict[str, list]) -> dict:
    """Each set's documents tagged (`tag_documents`) and every model answer their ranking needs."""
    from kg.extract.embed import load_embedder
    from kg.extract.keyphrases import Settings, load_nlp, rank_tagged, tag_documents

    settings, nlp = Settings(ranking="similarity"), load_nlp()
    model = Recorded(load_embedder(settings.precision))
    tagged = {}
    for name, docs in sets.items():
        tagged[name] = tag_documents([(str(i), d.document) for i, d in enumerate(docs)], nlp, settings)
        rank_tagged(tagged[name], model, settings, {})  # records the documents' and candidates' vectors
    return {"tagged": tagged, "vectors": model.vectors, "tokens": model.tokens, "max_tokens": model.max_tokens}


def rank(recorded: dict, name: str, settings) -> list[list[str]]:
    from kg.extract.keyphrases import BATCH_SIZE, rank_tagged

    model = Recorded(max_tokens=recorded["max_tokens"], vectors=recorded["vectors"], tokens=recorded["tokens"])
    docs = recorded["tagged"][name]
    found = []
    for start in range(0, len(docs), BATCH_SIZE):  # as a build ranks them: a batch at a time
        found.extend(rank_tagged(docs[start:start + BATCH_SIZE], model, settings, recorded["vectors"]))
    return [[k.phrase for k in paper.keyphrases] for paper in found]


def per_document(predictions, gold) -> np.ndarray:
    """Rows (hits at each k, predictions at each k, gold) per document, as `evaluate` counts them."""
    rows = []
    for preds, keys in zip(predictions, gold):
        stems = list(dict.fromkeys(s for s in map(stem_phrase, preds) if s))
        wanted = [stem_phrase(g) for g in keys if stem_phrase(g)]
        rows.append([*(sum(s in set(wanted) for s in stems[:k]) for k in KS), *(len(stems[:k]) for k in KS), len(wanted)])
    return np.array(rows, dtype=np.float64)


def micro_f1(rows: np.ndarray, i: int = 0) -> np.ndarray:
    """Micro F1 at KS[i] (in %) of *rows* summed over the last-but-one axis."""
    hits, predicted, gold = rows[..., i], rows[..., len(KS) + i], rows[..., -1]
    p, r = hits.sum(-1) / predicted.sum(-1), hits.sum(-1) / gold.sum(-1)
    return 100 * np.where(p + r > 0, 2 * p * r / np.maximum(p + r, 1e-12), 0.0)


def bootstrap(base: np.ndarray, variant: np.ndarray, *, i: int = 0, resamples: int = 1000, seed: int = 20261204) -> tuple[float, float]:
    """95 % interval of the change in micro F1 at KS[i] (@5 by default) from *base* to *variant*, documents resampled in pairs."""
    picks = np.random.default_rng(seed).integers(0, len(base), size=(resamples, len(base)))
    change = np.sort(micro_f1(variant[picks], i) - micro_f1(base[picks], i))
    return float(change[int(0.025 * resamples)]), float(change[int(0.975 * resamples) - 1])


def parse_vary(items: list[str]) -> list[tuple[str, object]]:
    from kg.extract.keyphrases import Settings

    kinds = {f.name: f.type for f in fields(Settings)}
    out = []
    for item in items:
        name, _, values = item.partition("=")
        if name not in RANKING or not values:
            raise SystemExit(f"--vary {item!r}: give NAME=V1,V2 with NAME one of {', '.join(RANKING)}")
        cast = {"bool": lambda v: v.lower() in ("1", "true", "yes"), "int": int}.get(str(kinds[name]), float)
        out.extend((name, cast(v)) for v in values.split(","))
    return out


def main(argv: list[str] | None = None) -> int:
    from kg.extract.keyphrases import Settings

    parser = argparse.ArgumentParser(prog="python -m benchmarks.levers", description=__doc__.split("\n\n")[0])
    parser.add_argument("--vary", nargs="*", default=["frequency_weight=0,0.04,0.08,0.12"], help="NAME=V1,V2 ...")
    parser.add_argument("--ml-sample", type=int, default=1000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/kg-bench"), help="where the recorded model answers are kept")
    args = parser.parse_args(argv)
    variants = parse_vary(args.vary)

    sets = load_sets(args.ml_sample)
    args.work.mkdir(parents=True, exist_ok=True)
    from kg.extract.embed import MODEL_NAME

    key = hashlib.sha256(f"{Settings(ranking='similarity').fingerprint(MODEL_NAME)} {args.ml_sample}".encode()).hexdigest()[:12]
    cache = args.work / f"levers-{key}.pickle"
    started = time.perf_counter()
    if cache.exists():
        recorded = pickle.loads(cache.read_bytes())
    else:
        recorded = record(sets)
        cache.write_bytes(pickle.dumps(recorded))
    print(f"kg revision: {revision()}; {', '.join(f'{n} {len(d)}' for n, d in sets.items())} documents; "
          f"tagged and embedded in {time.perf_counter() - started:.0f} s (recorded in {cache})\n", flush=True)

    base = replace(Settings(ranking="similarity"), top_n=max(KS))  # as kg eval and benchmarks.quality rank: 15 per document
    rows = {name: per_document(rank(recorded, name, base), [d.keyphrases for d in docs]) for name, docs in sets.items()}
    for name, docs in sets.items():  # the counts reproduce kg's evaluator
        check = evaluate(rank(recorded, name, base), [d.keyphrases for d in docs], ks=KS)["micro"][KS[0]]["f1"]
        assert abs(100 * check - micro_f1(rows[name])) < 1e-9, name
    header = f"{'variant':28s}" + "".join(f"{name + ' F1@5/10/15 (F1@5 change, 95 %)':>46s}" for name in sets)
    print(header)

    def line(label, settings):
        cells = []
        for name, docs in sets.items():
            r = rows[name] if settings == base else per_document(rank(recorded, name, settings), [d.keyphrases for d in docs])
            f1 = "/".join(f"{micro_f1(r, i):.2f}" for i in range(len(KS)))
            if settings != base:
                low, high = bootstrap(rows[name], r)
                f1 += f" ({micro_f1(r) - micro_f1(rows[name]):+.2f}, {low:+.2f}..{high:+.2f})"
            cells.append(f"{f1:>46s}")
        print(f"{label:28s}" + "".join(cells), flush=True)

    line("defaults", base)
    for name, value in variants:
        line(f"{name}={value}", replace(base, **{name: value}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
