"""Keyphrase quality against gold keyphrases: P/R/F1@k, micro- and macro-averaged.

The protocol is the one of the published unsupervised keyphrase-extraction scores
(SIFRank, MDERank and PromptRank for the micro average; pke / Boudin and Gallina for
the macro average):

- a phrase is compared by its stem: lowercased, split on whitespace, each token
  Porter-stemmed (NLTK), joined by one space (`stem_phrase`);
- predictions are deduplicated after stemming (first occurrence kept) *before* the
  cut at k, so a repeated variant never takes a slot;
- a prediction in the top k is correct when its stem is the stem of a gold keyphrase;
- every gold keyphrase counts in recall, absent ones included, and gold is not
  deduplicated (two gold variants with one stem count twice in the denominator);
- micro: P = sum(correct) / sum(min(k, #predictions)), R = sum(correct) / sum(#gold),
  F1 = 2PR / (P + R); macro: P, R and F1 per document, then their mean
  (P of a document without predictions is 0).

Extractors compared (`EXTRACTORS`): ``kg`` (kg's own extractor with its defaults),
``keybert`` (plain KeyBERT with its defaults on the same packaged model) and ``yake``.
Each is a factory ``(top_n) -> (docs) -> ranked phrases``; every extractor gets the same
text, the document kg itself reads (cleaned title and abstract, as `kg.text.sources.Paper.document`).

Heavy libraries (torch, spaCy, KeyBERT, YAKE, NLTK) load only when used.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import click

from kg.errors import InputError

__all__ = [
    "BASELINES",
    "EXTRACTORS",
    "Extractor",
    "GoldDoc",
    "document_text",
    "eval_command",
    "evaluate",
    "format_table",
    "keybert_extractor",
    "kg_extractor",
    "read_gold",
    "run_eval",
    "stem_phrase",
    "yake_extractor",
]

DEFAULT_KS = (5, 10, 15)
KEYPHRASE_FIELDS = ("keyphrases", "keywords")  # bench-data gold sets; ML abstracts' author keywords
Extractor = Callable[[Sequence["GoldDoc"]], list[list[str]]]


@dataclass(frozen=True)
class GoldDoc:
    """One gold document: its text (title and abstract, either may be empty) and gold keyphrases."""

    id: str
    title: str
    abstract: str
    keyphrases: tuple[str, ...]

    @property
    def document(self) -> str:
        """The text every extractor reads: cleaned title and abstract, as kg reads a paper."""
        return document_text(self.title, self.abstract)


def document_text(title: str, abstract: str) -> str:
    """Title and abstract joined exactly as `kg.text.sources.Paper.document` joins them (both cleaned)."""
    from kg.text.clean import clean_text
    from kg.text.sources import Paper

    return Paper(id="", abstract=abstract, text=clean_text(abstract), title=title or None).document.strip()


# --- reading gold data -------------------------------------------------------------------------


def _text_field(row: dict, name: str, where: str) -> str:
    value = row.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(f"{where}: '{name}' must be a string or null, not {type(value).__name__}")
    return " ".join(_no_surrogate(value, name, where).split())


def _no_surrogate(value: str, name: str, where: str) -> str:
    """*value*, unless it holds an unpaired surrogate (a JSON escape such as ``\\ud800``, no character)."""
    from kg.text.files import replace_surrogates

    if replace_surrogates(value)[1]:
        raise InputError(f"{where}: '{name}' holds an escaped unpaired surrogate (such as \\ud800), which is no character")
    return value


def _keyphrases(value: Any, name: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):  # the original Hulth / SemEval key files: "a; b; c"
        items: list[Any] = re.split(r";\s+|;$|\n", value)
    elif isinstance(value, list):
        items = value
    else:
        raise InputError(f"{where}: '{name}' must be a list of strings or a '; '-separated string, not {type(value).__name__}")
    out: list[str] = []
    for i, item in enumerate(items, start=1):
        if not isinstance(item, str):
            raise InputError(f"{where}: '{name}' item {i} is {type(item).__name__}, not a string")
        phrase = " ".join(_no_surrogate(item, name, where).split())
        if phrase:
            out.append(phrase)
    return tuple(out)


def read_gold(path: str | Path, field: str | None = None) -> list[GoldDoc]:
    """The documents of a bench-data JSONL file, in file order.

    Each line is an object with ``id``, ``title``, ``abstract`` (either may be null or empty)
    and the gold keyphrases in *field* (default: ``keyphrases``, else ``keywords``), a list
    of strings or one ``'; '``-separated string. Blank lines are skipped. Raises `InputError`
    naming the file and row (1-based line number) of anything else.
    """
    from kg.text.files import read_input, split_lines

    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a folder; give a .jsonl file of gold documents")
    raw = read_input(path, str(path), expected="a .jsonl file of gold documents")  # a regular file, once
    try:
        lines = split_lines(raw.data.decode("utf-8-sig"))  # at line ends only, not at a U+2028 in a string
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from e
    docs: list[GoldDoc] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}, row {number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{where}: not valid JSON ({e.msg} at column {e.colno})") from e
        except RecursionError as e:
            raise InputError(f"{where}: JSON nested too deep to read") from e
        except ValueError as e:  # a number too long for Python to make
            raise InputError(f"{where}: not valid JSON ({e})") from e
        if not isinstance(row, dict):
            raise InputError(f"{where}: expected a JSON object, got {type(row).__name__}")
        name = field or next((f for f in KEYPHRASE_FIELDS if f in row), None)
        if name is None or name not in row:
            wanted = f"'{field}'" if field else " or ".join(f"'{f}'" for f in KEYPHRASE_FIELDS)
            raise InputError(f"{where}: no {wanted} field (the gold keyphrases)")
        raw_id = row.get("id", number)
        if not isinstance(raw_id, (str, int)) or isinstance(raw_id, bool):
            raise InputError(f"{where}: 'id' must be a string or an integer, not {type(raw_id).__name__}")
        docs.append(
            GoldDoc(
                id=str(raw_id),
                title=_text_field(row, "title", where),
                abstract=_text_field(row, "abstract", where),
                keyphrases=_keyphrases(row[name], name, where),
            )
        )
    if not docs:
        raise InputError(f"{path}: no documents (the file is empty)")
    return docs


# --- scoring -----------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem import PorterStemmer

    return PorterStemmer()  # NLTK's default mode, as the published evaluation scripts use


@lru_cache(maxsize=65536)
def _stem_token(token: str) -> str:
    return _stemmer().stem(token)


def stem_phrase(phrase: str) -> str:
    """The comparison key of a phrase: lowercased, whitespace tokens Porter-stemmed, one space apart.

    >>> stem_phrase("Neural  Networks")
    'neural network'
    """
    return " ".join(_stem_token(t) for t in phrase.lower().split())


def _unique_stems(phrases: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for p in phrases:
        s = stem_phrase(p)
        if s:
            seen.setdefault(s, None)
    return list(seen)


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def evaluate(predictions: Sequence[Sequence[str]], gold: Sequence[Sequence[str]], ks: Sequence[int] = DEFAULT_KS) -> dict:
    """P, R and F1 at each k, micro- and macro-averaged (fractions in [0, 1]).

    *predictions* holds each document's phrases best first; *gold* its gold keyphrases
    (non-empty). Returns ``{"documents", "gold", "micro": {k: {"precision", "recall", "f1"}},
    "macro": {k: {...}}}``.
    """
    if len(predictions) != len(gold):
        raise ValueError(f"{len(predictions)} prediction lists for {len(gold)} gold documents")
    ks = tuple(ks)
    if not ks or any(not isinstance(k, int) or isinstance(k, bool) or k < 1 for k in ks):
        raise ValueError(f"ks must be positive integers, got {ks!r}")
    empty = [i for i, g in enumerate(gold) if not _unique_stems(g)]
    if empty:
        raise ValueError(f"gold document(s) {empty[:10]} have no keyphrases; leave them out before evaluating")
    correct = {k: 0 for k in ks}
    predicted = {k: 0 for k in ks}
    macro = {k: {"precision": 0.0, "recall": 0.0, "f1": 0.0} for k in ks}
    total_gold = 0
    for preds, keys in zip(predictions, gold):
        stems = _unique_stems(preds)
        gold_stems = [stem_phrase(g) for g in keys if stem_phrase(g)]
        wanted = set(gold_stems)
        total_gold += len(gold_stems)
        for k in ks:
            top = stems[:k]
            hits = sum(1 for s in top if s in wanted)
            correct[k] += hits
            predicted[k] += len(top)
            p = hits / len(top) if top else 0.0
            r = hits / len(gold_stems)
            macro[k]["precision"] += p
            macro[k]["recall"] += r
            macro[k]["f1"] += _f1(p, r)
    n = len(gold)
    micro = {}
    for k in ks:
        p = correct[k] / predicted[k] if predicted[k] else 0.0
        r = correct[k] / total_gold if total_gold else 0.0
        micro[k] = {"precision": p, "recall": r, "f1": _f1(p, r)}
    return {
        "documents": n,
        "gold": total_gold,
        "micro": micro,
        "macro": {k: {m: (v / n if n else 0.0) for m, v in scores.items()} for k, scores in macro.items()},
    }


# --- extractors --------------------------------------------------------------------------------


def kg_extractor(top_n: int = 15, *, embedder=None, nlp=None, settings=None, entities: bool = True) -> Extractor:
    """kg's own extractor with its default settings (``top_n`` keyphrases per document). With *entities* (as
    ``kg build`` by default), the learned ranking reads the typed-entity mentions of each abstract too."""
    from dataclasses import replace

    from kg.extract.embed import load_embedder
    from kg.extract.keyphrases import Settings, extract_keyphrases, load_nlp

    settings = replace(settings or Settings(), top_n=top_n)
    embedder = embedder or load_embedder(settings.precision)
    nlp = nlp or load_nlp()

    def extract(docs: Sequence[GoldDoc]) -> list[list[str]]:
        items = [(str(i), d.document) for i, d in enumerate(docs)]
        if entities and settings.ranking == "learned":
            from kg.extract.entities import find_entities

            typed = find_entities([d.abstract for d in docs])
            items = [(i, text, found.mentions) for (i, text), found in zip(items, typed)]
        found = extract_keyphrases(items, embedder, settings=settings, nlp=nlp)
        return [[k.phrase for k in paper.keyphrases] for paper in found]

    return extract


def keybert_extractor(top_n: int = 15, *, embedder=None, batch_size: int = 256) -> Extractor:
    """Plain KeyBERT with its defaults (1-3-grams, English stop words, no MMR) on the packaged model."""
    from keybert import KeyBERT

    from kg.extract.embed import load_embedder

    model = KeyBERT(model=(embedder or load_embedder()).model)

    def extract(docs: Sequence[GoldDoc]) -> list[list[str]]:
        out: list[list[str]] = []
        for start in range(0, len(docs), batch_size):
            texts = [d.document for d in docs[start : start + batch_size]]
            found = model.extract_keywords(texts, keyphrase_ngram_range=(1, 3), stop_words="english", top_n=top_n)
            if len(texts) == 1 and (not found or isinstance(found[0], tuple)):
                found = [found]  # KeyBERT returns a flat list for one document
            if not found:  # no document of the batch has a single candidate
                found = [[] for _ in texts]
            out.extend([phrase for phrase, _ in kws] for kws in found)
        return out

    return extract


def yake_extractor(top_n: int = 15) -> Extractor:
    """YAKE with 1-3-grams (its other parameters at their defaults)."""
    import yake

    model = yake.KeywordExtractor(lan="en", n=3, top=top_n)

    def extract(docs: Sequence[GoldDoc]) -> list[list[str]]:
        out = []
        for d in docs:
            text = d.document
            out.append([kw for kw, _ in model.extract_keywords(text)] if text.strip() else [])
        return out

    return extract


EXTRACTORS: dict[str, Callable[..., Extractor]] = {"kg": kg_extractor, "keybert": keybert_extractor, "yake": yake_extractor}
BASELINES = ("keybert", "yake")


def run_eval(docs: Sequence[GoldDoc], extractors: dict[str, Extractor], ks: Sequence[int] = DEFAULT_KS,
             on_done: Callable[[dict], None] | None = None) -> list[dict]:
    """Run each extractor over *docs* (timed: extraction only) and score it; one row per extractor.

    Each row: ``extractor``, ``documents``, ``seconds`` (wall), ``cpu_seconds`` (this process, all
    threads: steadier than wall time on a shared machine), ``docs_per_s``, ``micro`` and ``macro``
    (as `evaluate`), and ``predictions`` (the ranked phrases per document).
    """
    gold = [d.keyphrases for d in docs]
    rows = []
    for name, extract in extractors.items():
        start, cpu = time.perf_counter(), time.process_time()
        predictions = extract(docs)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        if len(predictions) != len(docs):
            raise RuntimeError(f"extractor {name} returned {len(predictions)} lists for {len(docs)} documents")
        scores = evaluate(predictions, gold, ks)
        row = {
            "extractor": name,
            "documents": len(docs),
            "seconds": seconds,
            "cpu_seconds": cpu,
            "docs_per_s": len(docs) / seconds if seconds > 0 else float("inf"),
            "micro": scores["micro"],
            "macro": scores["macro"],
            "predictions": predictions,
        }
        rows.append(row)
        if on_done:
            on_done(row)
    return rows


def format_table(rows: Sequence[dict], ks: Sequence[int] = DEFAULT_KS, *, averages: Sequence[str] = ("micro", "macro"),
                 metrics: Sequence[str] = ("precision", "recall", "f1")) -> str:
    """A plain-text table: one row per extractor, scores in percent."""
    short = {"precision": "P", "recall": "R", "f1": "F1"}
    header = ["extractor", "docs", "docs/s"]
    for avg in averages:
        header += [f"{avg} {short[m]}@{k}" for k in ks for m in metrics]
    table = [header]
    for row in rows:
        cells = [row["extractor"], str(row["documents"]), f"{row['docs_per_s']:.1f}"]
        for avg in averages:
            cells += [f"{100 * row[avg][k][m]:.2f}" for k in ks for m in metrics]
        table.append(cells)
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines = []
    for j, r in enumerate(table):
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def _json_rows(rows: Sequence[dict]) -> list[dict]:
    def scores(s):
        return {str(k): {m: round(100 * v, 2) for m, v in d.items()} for k, d in s.items()}

    return [
        {"extractor": r["extractor"], "documents": r["documents"], "seconds": round(r["seconds"], 3),
         "cpu_seconds": round(r["cpu_seconds"], 3), "docs_per_s": round(r["docs_per_s"], 2),
         "micro": scores(r["micro"]), "macro": scores(r["macro"])}
        for r in rows
    ]


# --- command line ------------------------------------------------------------------------------


class _ValuesAfterFlag(click.Command):
    """A command whose options in `GREEDY` also take several values after one flag: ``--k 5 10
    15`` is read as ``--k 5 --k 10 --k 15`` (each is a ``multiple=True`` option).

    Following arguments are taken while the option's test says they are its values, so ``--k 5
    10 data.jsonl`` still leaves the file to the argument. The arguments are rewritten before
    click parses them (`click.Command.parse_args`), as click has no public hook for this."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value = {opt for p in self.params if isinstance(p, click.Option) and not p.is_flag for opt in p.opts}
        return super().parse_args(ctx, _spread_values(args, takes_value))


def _spread_values(args: Sequence[str], takes_value: set[str]) -> list[str]:
    """*args* with every run of values after a `GREEDY` option given one flag each; *takes_value*:
    the options whose next argument is their value (whatever it looks like)."""
    out, rest = [], list(args)
    while rest:
        token = rest.pop(0)
        out.append(token)
        if token == "--":
            break
        name, equals, _ = token.partition("=")
        if name in takes_value and not equals and rest:
            out.append(rest.pop(0))  # its value
        accepts = GREEDY.get(name)
        while accepts is not None and rest and accepts(rest[0]):
            out += [name, rest.pop(0)]
    return out + rest


def _is_k(token: str) -> bool:
    return token.isdigit()


def _is_baseline(token: str) -> bool:
    return token in BASELINES


GREEDY = {"--k": _is_k, "--baseline": _is_baseline}  # the options of `kg eval` that take values after one flag


@click.command("eval", cls=_ValuesAfterFlag)
@click.argument("dataset", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--k", "ks", multiple=True, type=click.IntRange(1, 1000), metavar="K ...",
              help="Cut-offs (default 5 10 15).")
@click.option("--baseline", "baselines", multiple=True, type=click.Choice(BASELINES),
              metavar="NAME ...", help="Also run these extractors beside kg: keybert, yake.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the first N documents with gold keyphrases.")
@click.option("--field", default=None, help="Gold keyphrase field (default: keyphrases, else keywords).")
@click.option("--format", "fmt", type=click.Choice(("table", "json")), default="table", show_default=True)
@click.option("--precision", type=click.Choice(("int8", "fp32")), default="int8", show_default=True,
              help="kg's model quantized to int8 (kg build's default), or as published (as kg build --precision).")
@click.option("--ranking", type=click.Choice(("learned", "similarity")), default="learned", show_default=True,
              help="kg's keyphrases ranked by its trained ranker or by similarity (as kg build --ranking).")
@click.option("--no-entities", "no_entities", is_flag=True,
              help="The learned ranking without the abstracts' typed-entity mentions (as kg build --no-entities).")
def eval_command(dataset: Path, ks: tuple[int, ...], baselines: tuple[str, ...], limit: int | None, field: str | None,
                 fmt: str, precision: str = "int8", ranking: str = "learned", no_entities: bool = False) -> None:
    """Score kg's keyphrases (and baselines) against the gold keyphrases of DATASET.jsonl.

    Micro- and macro-averaged P/R/F1@k on stemmed phrases, every gold keyphrase counted in
    recall; docs/s is the wall time of extraction alone.
    """
    ks = tuple(sorted(set(ks))) or DEFAULT_KS
    docs = read_gold(dataset, field)
    usable = [d for d in docs if d.keyphrases]
    if len(usable) < len(docs):
        click.echo(f"note: {len(docs) - len(usable)} of {len(docs)} documents have no gold keyphrases and are left out", err=True)
    if limit:
        usable = usable[:limit]
    if not usable:
        raise InputError(f"{dataset}: no document has gold keyphrases")
    names = ["kg"] + [b for b in dict.fromkeys(baselines) if b != "kg"]
    from kg.extract.keyphrases import Settings

    kg_options = {"settings": Settings(precision=precision, ranking=ranking), "entities": not no_entities}
    extractors = {name: EXTRACTORS[name](max(ks), **(kg_options if name == "kg" else {})) for name in names}

    def done(row):
        click.echo(f"{row['extractor']}: {row['documents']} documents in {row['seconds']:.1f} s", err=True)

    rows = run_eval(usable, extractors, ks, on_done=done)
    if fmt == "json":
        click.echo(json.dumps({"dataset": str(dataset), "documents": len(usable), "ks": list(ks), "results": _json_rows(rows)}, indent=2))
    else:
        click.echo(f"{dataset}: {len(usable)} documents, scores in %")
        click.echo(format_table(rows, ks), nl=False)


if __name__ == "__main__":  # pragma: no cover
    eval_command(sys.argv[1:])
