"""A learned keyphrase ranking (issue 47): its training data, its training and its check on held-out sets.

    .venv/bin/python -m benchmarks.ranker --train        # fit the trees, write kg/extract/data/ranker.json
    .venv/bin/python -m benchmarks.ranker [--baselines]  # held-out micro F1@5/10/15: similarity vs learned (vs KeyBERT, YAKE)
    .venv/bin/python -m benchmarks.ranker --speed 500    # extraction time per abstract with each ranking, in turns

Training: scikit-learn's `HistGradientBoostingClassifier` (`TREES`, seed `SEED`) on the `kg.extract.ranking.FEATURES`
of every candidate kg ranks, labelled by whether its stem is a gold keyphrase's (`kg eval`'s protocol); each training
set weighs the same in all. The scale that turns the trees' probability into MMR's relevance is chosen by `FOLDS`-fold
cross-validation on the training sets alone (mean micro F1@5/10/15), never on a held-out set. Shipped as JSON arrays
that `kg.extract.ranking.read_ranker` walks with NumPy (no pickle, no scikit-learn version tied to the file).

Two sets of trees are trained the same way: ``ranker.json`` over the text's evidence (`FEATURES`), for builds without
typed entities, and ``ranker-entities.json`` over that and the mentions the shipped entity model marks in each abstract
(`ENTITY_FEATURES`), for builds with them (the default). SciERC train's mentions are left out (its rows have them
missing): the entity model was trained on that split and finds its terms nearly all, so trees fitted on them would
trust a mention more than it deserves on text the model never saw.

The documents, all read as a build reads them (`kg.extract.keyphrases.tag_documents`, the model's answers recorded
once in ``DIR/ranker-<key>.pickle``, as `benchmarks.levers` does):

- training: the author keywords of ML papers from the venue-years in `TRAIN_YEARS`, SemEval-2010's train split (author
  and reader keyphrases of the abstract) and SciERC's train split (its entity mentions but the Generic ones: the
  terms of an abstract as annotators mark them, the unit Inspec's and SemEval-2017's annotators use);
- held out: ML papers of other venue-years (`TEST_YEARS`: never a venue-year trained on), Inspec and NUS (other
  fields, never trained on), SemEval-2010's test split and SciERC's dev split.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sys
import time
from dataclasses import replace

import numpy as np
from pathlib import Path

from benchmarks.quality import DATASETS, ML_DIR, data_dir
from kg.evaluation.keyphrases import GoldDoc, read_gold

# Venue-years whose author keywords train the ranking, and the ones it is checked on (no venue-year in both).
TRAIN_YEARS = frozenset({("ICLR", 2017), ("ICLR", 2018), ("ICLR", 2020), ("ICLR", 2021), ("ICLR", 2022), ("NeurIPS", 2022),
                         ("NeurIPS Datasets and Benchmarks", 2021), ("ALT", 2026)})
TEST_YEARS = frozenset({("ICLR", 2023), ("COLM", 2024), ("COLM", 2025), ("CoRL", 2021), ("CoRL", 2022), ("CoRL", 2023),
                        ("CoRL", 2024), ("CoRL", 2025)})
ML_TRAIN = 10000  # all of them (9,839)
ML_TEST = 1000


def ml_papers(folder: Path, years: frozenset, n: int) -> list[GoldDoc]:
    """The *n* papers with author keywords from *years* whose sha256(id) is smallest."""
    docs: dict[str, GoldDoc] = {}
    for path in sorted((folder / ML_DIR).glob("*.jsonl")):
        with path.open(encoding="utf-8") as lines:
            rows = {json.loads(line)["id"]: json.loads(line) for line in lines if line.strip()}
        for doc in read_gold(path, field="keywords"):
            row = rows[doc.id]
            if doc.keyphrases and (row.get("venue"), row.get("year")) in years and doc.id not in docs:
                docs[doc.id] = doc
    return sorted(docs.values(), key=lambda d: hashlib.sha256(d.id.encode()).hexdigest())[:n]


def scierc_papers(path: Path) -> list[GoldDoc]:
    """SciERC's abstracts with their distinct non-Generic entity mentions as the gold keyphrases."""
    from kg.extract.entities.scierc import read_scierc, word_text

    out = []
    for doc in read_scierc(path):
        words = [word_text(w) for w in doc.words]
        terms = dict.fromkeys(" ".join(words[s:e + 1]) for s, e, t in sorted(doc.entities) if t != "Generic")
        sentences = [" ".join(word_text(w) for w in sentence) for sentence in doc.sentences]
        out.append(GoldDoc(doc.key, "", " ".join(sentences), tuple(terms)))
    return out


# Where each set comes from, under the bench-data folder: what an error about it names.
SOURCES = {
    "ml-train": "ml-abstracts/*.jsonl (the author keywords of the training venue-years)",
    "semeval-train": "semeval2010/train.jsonl",
    "scierc-train": "scierc/train.jsonl",
    "ml-test": "ml-abstracts/*.jsonl (the author keywords of the held-out venue-years)",
    **DATASETS,
    "scierc-dev": "scierc/dev.jsonl",
}


def check_training(name: str, docs: list[GoldDoc], labels: np.ndarray) -> None:
    """A training set with no gold keyphrases, or whose keyphrases are none of kg's candidates, stops the training
    with an error naming its file: never trees fitted on what is left."""
    from kg.errors import InputError

    where = SOURCES.get(name, name)
    if not docs:
        raise InputError(f"{where}: no document with gold keyphrases to train the ranker on")
    if not labels.any():
        raise InputError(f"{where}: none of the gold keyphrases of its {len(docs):,} documents is a phrase kg finds in "
                         "their text; are they the keyphrases of these abstracts?")


def load_sets() -> dict[str, list[GoldDoc]]:
    folder = data_dir()
    return {
        "ml-train": ml_papers(folder, TRAIN_YEARS, ML_TRAIN),
        "semeval-train": [d for d in read_gold(folder / "semeval2010/train.jsonl") if d.keyphrases],
        "scierc-train": scierc_papers(folder / "scierc/train.jsonl"),
        "ml-test": ml_papers(folder, TEST_YEARS, ML_TEST),
        **{name: [d for d in read_gold(folder / path) if d.keyphrases] for name, path in DATASETS.items()},
        "scierc-dev": scierc_papers(folder / "scierc/dev.jsonl"),
    }


def kept(work: Path, name: str, fingerprint: str, sets: dict[str, list[GoldDoc]], make):
    """``make()``, pickled in *work* as ``<name>-<key>.pickle`` (the key: *fingerprint* and the sets' document ids) and
    read back from there while both stay the same; written whole or not at all."""
    ids = hashlib.sha256(json.dumps({k: [d.id for d in v] for k, v in sets.items()}).encode()).hexdigest()
    cache = work / f"{name}-{hashlib.sha256(f'{fingerprint} {ids}'.encode()).hexdigest()[:12]}.pickle"
    if cache.exists():
        return pickle.loads(cache.read_bytes())
    out = make()
    work.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(".part")
    tmp.write_bytes(pickle.dumps(out))
    tmp.replace(cache)
    return out


def recorded(work: Path, sets: dict[str, list[GoldDoc]]) -> dict:
    """Every set tagged and embedded by kg's extraction (`benchmarks.levers.record`), kept in *work*."""
    from benchmarks.levers import record
    from kg.extract.embed import MODEL_NAME
    from kg.extract.keyphrases import Settings

    return kept(work, "ranker", Settings(ranking="similarity").fingerprint(MODEL_NAME), sets, lambda: record(sets))


def recorded_mentions(work: Path, sets: dict[str, list[GoldDoc]]) -> dict[str, list[tuple]]:
    """Every set's typed-entity mentions ((text, type, score) each) as a build finds them in each abstract, kept in
    *work* under the entity extractor's fingerprint."""
    from kg.extract.entities import entity_fingerprint, find_entities

    return kept(work, "ranker-mentions", entity_fingerprint(), sets,
                lambda: {name: [found.mentions for found in find_entities([d.abstract for d in docs])] for name, docs in sets.items()})


UNSEEN_MENTIONS = ("scierc-train",)  # what the entity model was trained on: its mentions are not evidence to learn from


def with_mentions(pairs: dict[str, list], mentions: dict[str, list[tuple]]) -> dict[str, list]:
    """*pairs* (`scored_sets`) whose tagged documents carry their mentions, as a build with entities ranks them."""
    return {name: [(replace(t, mentions=m), s) for (t, s), m in zip(pairs[name], mentions[name])] for name in pairs}


TRAIN_SETS = ("ml-train", "semeval-train", "scierc-train")
HELD_OUT = ("ml-test", "inspec", "nus", "semeval2010", "scierc-dev")


def scored_sets(record: dict, names) -> dict[str, list]:
    """Per set, each document's (tagged, scored) pair as a build's ranking sees it, from the recorded answers."""
    from benchmarks.levers import Recorded
    from kg.extract.keyphrases import BATCH_SIZE, Settings, score_tagged

    model = Recorded(max_tokens=record["max_tokens"], vectors=record["vectors"], tokens=record["tokens"])
    out = {}
    for name in names:
        docs = record["tagged"][name]
        pairs = []
        for start in range(0, len(docs), BATCH_SIZE):
            batch = docs[start:start + BATCH_SIZE]
            pairs.extend(zip(batch, score_tagged(batch, model, Settings(), record["vectors"])))
        out[name] = pairs
    return out


def labelled(pairs, docs, *, unseen: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels (the candidate's stem is a gold keyphrase's) and document numbers of a set; with *unseen*,
    its mentions' features missing (NaN: `UNSEEN_MENTIONS`)."""
    from kg.evaluation.keyphrases import stem_phrase
    from kg.extract.ranking import FEATURES, features

    xs, ys, groups = [], [], []
    for i, ((tagged, scored), doc) in enumerate(zip(pairs, docs)):
        gold = {stem_phrase(g) for g in doc.keyphrases}
        x = features(tagged, scored)
        if unseen:
            x[:, len(FEATURES):] = np.nan
        xs.append(x)
        ys.append(np.array([stem_phrase(p) in gold for p in scored.phrases], dtype=np.int8))
        groups.append(np.full(len(scored.phrases), i))
    return np.vstack(xs), np.concatenate(ys), np.concatenate(groups)


def predictions(pairs, relevance_of, settings) -> list[list[str]]:
    from kg.extract.keyphrases import pick

    return [[k.phrase for k in pick(t, s, relevance_of(t, s), settings).keyphrases] for t, s in pairs]


SEED = 47
# Chosen by the cross-validation below among 200/400 trees of 15/31 leaves, 100-300 of 7, 60-100 of 15, with and without
# the monotone similarity: the smaller models tied at the top (mean F1 28.21-28.23 against 27.87-28.11 for the larger).
TREES = dict(max_iter=100, learning_rate=0.05, max_leaf_nodes=15, min_samples_leaf=40, l2_regularization=1.0)
# A phrase more similar to its document never ranks lower for it, other evidence equal: a prior that holds in any field.
MONOTONE = {"cosine": 1, "cosine_gap": -1, "cosine_z": 1, "cosine_rank": -1}
SCALES = (1.5, 3.0, 6.0, 10.0)  # MMR relevance = scale x probability; chosen by cross-validation on the training sets
FOLDS = 3


def fit(parts: list[tuple[np.ndarray, np.ndarray, int]]):
    """Trees fitted on (features, labels, documents) of each training set, every set weighing the same in all."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    x = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    w = np.concatenate([np.full(len(p[1]), 1.0 / p[2]) for p in parts])
    monotone = [MONOTONE.get(name, 0) for name in names_of(x.shape[1])]
    model = HistGradientBoostingClassifier(**TREES, monotonic_cst=monotone, early_stopping=False, random_state=SEED)
    return model.fit(x, y, sample_weight=w / w.mean())


def held_rows(pairs, docs, relevance_of, settings) -> np.ndarray:
    from benchmarks.levers import per_document

    return per_document(predictions(pairs, relevance_of, settings), [d.keyphrases for d in docs])


def ranker_of(model, scale: float, termhood=None):
    """The `kg.extract.ranking.Ranker` of fitted trees (and the *termhood* (direction, offset) they read), as kg reads
    them from the file `train` writes."""
    from kg.extract.ranking import export_trees, ranker_from

    return ranker_from(export_trees(model, scale, {}, names_of(model.n_features_in_), termhood))


def names_of(width: int) -> tuple[str, ...]:
    """The features of trees that read *width* of them: the text's, or the text's, the mentions' and the termhood."""
    from kg.extract.ranking import ENTITY_RANKER_FEATURES, FEATURES

    return FEATURES if width == len(FEATURES) else ENTITY_RANKER_FEATURES


TERMHOOD_C = 1.0  # the logistic model's inverse regularization (scikit-learn's default)


def fit_termhood(parts: list[tuple[np.ndarray, np.ndarray, int]]) -> tuple[np.ndarray, float]:
    """The direction (and offset) in the model's embedding space that best tells keyphrases from other candidates
    over (embeddings, labels, documents) of each training set, each set weighing the same: a logistic model."""
    from sklearn.linear_model import LogisticRegression

    x = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    w = np.concatenate([np.full(len(p[1]), 1.0 / p[2]) for p in parts])
    model = LogisticRegression(C=TERMHOOD_C, max_iter=2000).fit(x, y, sample_weight=w / w.mean())
    return model.coef_[0].astype(np.float32), float(model.intercept_[0])


def with_termhood(sets, pairs, data) -> tuple[dict, tuple[np.ndarray, float]]:
    """*data* with each candidate's termhood as its last feature, from a direction fitted on the other `FOLDS` - 1
    folds of documents (so that the trees learn how much an unseen document's termhood says), and the direction
    fitted on every training document, which the shipped trees read."""
    embeddings = {name: np.vstack([s.embeddings for _, s in pairs[name]]).astype(np.float32) for name in TRAIN_SETS}
    column = {name: np.zeros(len(data[name][1]), dtype=np.float32) for name in TRAIN_SETS}
    for fold in range(FOLDS):
        keep = {name: data[name][2] % FOLDS != fold for name in TRAIN_SETS}
        direction, offset = fit_termhood([(embeddings[n][keep[n]], data[n][1][keep[n]], len(sets[n])) for n in TRAIN_SETS])
        for name in TRAIN_SETS:
            column[name][~keep[name]] = embeddings[name][~keep[name]] @ direction + offset
    whole = fit_termhood([(embeddings[n], data[n][1], len(sets[n])) for n in TRAIN_SETS])
    return {name: (np.hstack([x, column[name][:, None]]), y, g) for name, (x, y, g) in data.items()}, whole


def learned(ranker):
    return lambda tagged, scored: ranker.relevance(ranker.features_of(tagged, scored))


def choose_scale(sets, pairs, data, termhood=None) -> tuple[float, list[str]]:
    """The scale whose mean micro F1@5/10/15 over the training sets, each document ranked by trees that never saw
    it (FOLDS folds by document), is highest."""
    from benchmarks.levers import micro_f1
    from kg.extract.keyphrases import Settings

    settings = replace(Settings(), top_n=15)
    rows = {scale: {name: [] for name in TRAIN_SETS} for scale in SCALES}
    for fold in range(FOLDS):
        parts = []
        for name in TRAIN_SETS:
            x, y, doc = data[name]
            keep = doc % FOLDS != fold
            parts.append((x[keep], y[keep], len(np.unique(doc[keep]))))
        ranker = ranker_of(fit(parts), 1.0, termhood)  # (reads the rows given: never the termhood's direction)
        for name in TRAIN_SETS:
            x, _, doc = data[name]
            held = [i for i in range(len(sets[name])) if i % FOLDS == fold]
            starts = np.concatenate([[0], np.cumsum(np.bincount(doc, minlength=len(sets[name])))])  # a document's rows
            chance = ranker.probability(x)  # once a fold: the scales only multiply it
            of = {id(pairs[name][i][1]): chance[starts[i]:starts[i + 1]] for i in held}
            for scale in SCALES:
                rows[scale][name].append(held_rows([pairs[name][i] for i in held], [sets[name][i] for i in held],
                                                   lambda tagged, scored, scale=scale: scale * of[id(scored)], settings))
    lines, best = [], None
    for scale in SCALES:
        per_set = {name: np.vstack(rows[scale][name]) for name in TRAIN_SETS}
        mean = float(np.mean([micro_f1(r, i) for r in per_set.values() for i in range(3)]))
        lines.append(f"scale {scale}: " + ", ".join(
            f"{name} {'/'.join(f'{micro_f1(r, i):.2f}' for i in range(3))}" for name, r in per_set.items()) + f"; mean {mean:.2f}")
        if best is None or mean > best[1]:
            best = (scale, mean)
    return best[0], lines


def train(work: Path) -> None:
    """Fit the shipped rankers on every training set and write them into the package: the one over the text's
    evidence alone, then the one that reads the entity mentions too."""
    from kg.extract.entities import entity_fingerprint
    from kg.extract.ranking import export_trees, model_path

    started = time.perf_counter()
    every = load_sets()
    record = recorded(work, every)
    sets = {name: every[name] for name in TRAIN_SETS}
    plain = scored_sets(record, TRAIN_SETS)
    mentions = recorded_mentions(work, every)
    for entities, pairs in ((False, plain), (True, with_mentions(plain, mentions))):
        data = {name: labelled(pairs[name], sets[name], unseen=entities and name in UNSEEN_MENTIONS) for name in TRAIN_SETS}
        for name in TRAIN_SETS:
            check_training(name, sets[name], data[name][1])
        termhood = None
        if entities:
            data, termhood = with_termhood(sets, pairs, data)
        scale, lines = choose_scale(sets, pairs, data, termhood)
        for line in lines:
            print(line, flush=True)
        model = fit([(data[n][0], data[n][1], len(sets[n])) for n in TRAIN_SETS])
        about = {
            "command": "python -m benchmarks.ranker --train",
            "seed": SEED,
            "trees": TREES,
            "monotone": MONOTONE,
            "training": {name: {"documents": len(sets[name]), "candidates": int(len(data[name][1])),
                                "keyphrases": int(data[name][1].sum())} for name in TRAIN_SETS},
            "ml_venue_years": sorted(f"{v} {y}" for v, y in TRAIN_YEARS),
            "cross_validation": lines,
        }
        if entities:
            about |= {"entity_extractor": entity_fingerprint(), "mentions_left_out": list(UNSEEN_MENTIONS),
                      "termhood": f"logistic regression, C={TERMHOOD_C}, on the candidates' embeddings; out of fold in training"}
        out = model_path(entities)
        text = json.dumps(export_trees(model, scale, about, names_of(model.n_features_in_), termhood),
                          separators=(",", ":"), sort_keys=True)
        out.write_text(text + "\n", encoding="utf-8")
        print(f"scale {scale}; wrote {out} ({len(text) // 1024} KB) in {time.perf_counter() - started:.0f} s", flush=True)


def evaluate_held_out(work: Path, baselines: bool) -> None:
    """Micro F1@5/10/15 of each held-out set: the similarity ranking, the shipped learned ones (``learned``: the text's
    evidence, as ``kg build --no-entities`` ranks; ``+entities``: with the abstract's entity mentions, as ``kg build``
    ranks), each with the paired bootstrap's 95 % interval of its change from the similarity ranking at each k, and,
    with *baselines*, plain KeyBERT and YAKE on the same documents."""
    from benchmarks.levers import bootstrap, micro_f1, per_document
    from kg.evaluation.keyphrases import keybert_extractor, yake_extractor
    from kg.extract.keyphrases import Settings, hand_relevance
    from kg.extract.ranking import load_ranker

    every = load_sets()
    record = recorded(work, every)
    pairs = scored_sets(record, HELD_OUT)
    mentioned = with_mentions(pairs, recorded_mentions(work, every))
    settings = replace(Settings(), top_n=15)
    plain, entities = load_ranker(), load_ranker(entities=True)
    print(f"{'set':14s}{'docs':>6s}  {'ranking':12s}{'F1@5':>7s}{'F1@10':>7s}{'F1@15':>7s}   change at 5 / 10 / 15 (95 %)")
    for name in HELD_OUT:
        docs = every[name]
        gold = [d.keyphrases for d in docs]
        base = held_rows(pairs[name], docs, lambda t, s: hand_relevance(t, s, settings), settings)
        rows = {"similarity": base, "learned": held_rows(pairs[name], docs, learned(plain), settings),
                "+entities": held_rows(mentioned[name], docs, learned(entities), settings)}
        if baselines:
            rows["keybert"] = per_document(keybert_extractor(15)(docs), gold)
            rows["yake"] = per_document(yake_extractor(15)(docs), gold)
        for label, r in rows.items():
            change = ""
            if label in ("learned", "+entities"):
                intervals = [bootstrap(base, r, i=i) for i in range(3)]
                change = "   " + " / ".join(f"{micro_f1(r, i) - micro_f1(base, i):+.2f} [{lo:+.1f}, {hi:+.1f}]"
                                          for i, (lo, hi) in enumerate(intervals))
            print(f"{name:14s}{len(docs):6d}  {label:12s}" + "".join(f"{micro_f1(r, i):7.2f}" for i in range(3)) + change,
                  flush=True)


def speed(documents: int, turns: int) -> None:
    """Extraction's wall time per abstract with each ranking, on the held-out ML abstracts, run in turns in one
    process (the model loaded once; every turn embeds anew). ``+entities`` is given each abstract's mentions, found
    once before the turns: a build finds them anyway (its typed-entity stage), and the ranking only reads them."""
    from kg.extract.embed import load_embedder
    from kg.extract.entities import find_entities
    from kg.extract.keyphrases import Settings, extract_keyphrases, load_nlp
    from kg.extract.ranking import load_ranker

    docs = ml_papers(data_dir(), TEST_YEARS, documents)
    items = [(d.id, d.document) for d in docs]
    with_entities = [(i, text, found.mentions) for (i, text), found in zip(items, find_entities([d.abstract for d in docs]))]
    nlp, embedder = load_nlp(), load_embedder("int8")
    load_ranker(), load_ranker(entities=True)
    extract_keyphrases(with_entities[:20], embedder, nlp=nlp)  # warm up
    runs = {"similarity": (items, "similarity"), "learned": (items, "learned"), "+entities": (with_entities, "learned")}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(turns):
        for name, (given, ranking) in runs.items():
            started = time.perf_counter()
            extract_keyphrases(given, embedder, nlp=nlp, settings=Settings(ranking=ranking))
            times[name].append(time.perf_counter() - started)
    best = {k: min(v) for k, v in times.items()}
    for name, seconds in times.items():
        print(f"{name:12s} {len(items)} abstracts: " + " / ".join(f"{t:.2f}" for t in seconds)
              + f" s; best {1000 * best[name] / len(items):.2f} ms per abstract", flush=True)
    for name in ("learned", "+entities"):
        print(f"{name} / similarity: {best[name] / best['similarity']:.3f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ranker", description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/kg-bench"), help="where the recorded model answers are kept")
    parser.add_argument("--record-only", action="store_true", help="tag and embed the sets, then stop")
    parser.add_argument("--train", action="store_true", help="fit the ranker and write it into the package")
    parser.add_argument("--baselines", action="store_true", help="also plain KeyBERT and YAKE on the held-out sets")
    parser.add_argument("--speed", type=int, metavar="N", help="time extraction of N held-out ML abstracts with each ranking")
    args = parser.parse_args(argv)
    from kg.errors import KGError
    try:
        if args.speed:
            speed(args.speed, turns=3)
            return 0
        started = time.perf_counter()
        sets = load_sets()
        print(", ".join(f"{n} {len(d)}" for n, d in sets.items()), flush=True)
        recorded(args.work, sets)
        print(f"recorded in {time.perf_counter() - started:.0f} s", flush=True)
        if args.train:
            train(args.work)
        elif not args.record_only:
            evaluate_held_out(args.work, args.baselines)
    except KGError as e:  # a missing or malformed gold file, a training set with nothing to learn from, a bad model file
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0

if __name__ == "__main__":
    sys.exit(main())
