"""``python -m benchmarks.entities``: the typed entity and relation extractor (issue 45) on SciERC dev.

Dev micro F1 per type of the rule baseline and the shipped model (fp32 as trained, and int8 as kg
runs it: the encoder's linear layers quantized a scale per channel and per token), and the time per
abstract of keyphrase extraction and of entity extraction on the same abstracts in the same
process, two torch threads.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

ENTITY_ROWS = ("all", "Task", "Method", "Metric", "Material", "OtherScientificTerm", "Generic")
RELATION_ROWS = ("all", "USED-FOR", "FEATURE-OF", "HYPONYM-OF", "PART-OF", "COMPARE", "CONJUNCTION", "EVALUATE-FOR")


def _table(title: str, rows, systems: dict) -> str:
    lines = [f"| {title} | " + " | ".join(systems) + " |", "|---|" + "---:|" * len(systems)]
    for row in rows:
        lines.append(f"| {row} | " + " | ".join(f"{scores.get(row, (0, 0, 0))[2]:.1f}" for scores in systems.values()) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    import torch

    from kg.extract.embed import load_embedder
    from kg.extract.entities import find_entities
    from kg.extract.entities.model import load_model
    from kg.extract.entities.rules import baseline_predict
    from kg.extract.entities.scierc import data_dir, evaluate, read_scierc, word_text
    from kg.extract.entities.train import model_predict
    from kg.extract.keyphrases import Settings, extract_keyphrases, load_nlp

    parser = argparse.ArgumentParser(prog="python -m benchmarks.entities", description=__doc__.split("\n")[0])
    parser.add_argument("--timed", type=int, default=50, help="abstracts timed")
    parser.add_argument("--repeats", type=int, default=3, help="timed rounds (the best is kept)")
    parser.add_argument("--weights", type=Path, default=None,
                        help="another weights file to measure (e.g. one trained with --layers 3), instead of the shipped one")
    args = parser.parse_args(argv)
    torch.set_num_threads(2)
    docs = read_scierc(data_dir() / "dev.jsonl")
    model, meta = load_model(args.weights, precision="fp32")
    int8, _ = load_model(args.weights)  # what kg runs
    systems = {
        "baseline": evaluate(docs, [baseline_predict(d) for d in docs]),
        "model fp32": evaluate(docs, [model_predict(model, d) for d in docs]),
        "model int8": evaluate(docs, [model_predict(int8, d) for d in docs]),
    }
    print(_table("entities (dev F1)", ENTITY_ROWS, {k: v.entities for k, v in systems.items()}))
    print()
    print(_table("relations (dev F1)", RELATION_ROWS, {k: v.relations for k, v in systems.items()}))
    print()
    print("strict relations:", {k: round(v.strict_relations[2], 1) for k, v in systems.items()})
    texts = [" ".join(word_text(w) for w in d.words) for d in docs][: args.timed]
    embedder, nlp = load_embedder(Settings().precision), load_nlp()
    runs = {
        "keyphrases": lambda: extract_keyphrases([(str(i), t) for i, t in enumerate(texts)], embedder, nlp=nlp),
        "entities fp32": lambda: find_entities(texts, model),
        "entities int8": lambda: find_entities(texts, int8),
    }
    timings = {name: [] for name in runs}
    for _ in range(args.repeats + 1):  # the first round warms up; rounds interleaved, so a busy spell hits all alike
        for name, run in runs.items():
            started = time.perf_counter()
            run()
            timings[name].append(1000 * (time.perf_counter() - started) / len(texts))
    best = {name: min(times[1:]) for name, times in timings.items()}
    print("ms per abstract (best of", args.repeats, "rounds):", {k: round(v, 1) for k, v in best.items()})
    print("entities int8 on top of keyphrases: +%.0f %% (target +40 %%)" % (100 * best["entities int8"] / best["keyphrases"]))
    print("weights:", meta["file"], meta["bytes"], "bytes; best epoch", meta["best_epoch"])


if __name__ == "__main__":
    main()
